//! Records of attempts and results for Python: the records the core's operation
//! machine makes, forwarded to the `logging` module, and `recuo.AttemptRecord` /
//! `recuo.ResultRecord`, the same records as values.
//!
//! Which record is made when, and at which level, is the machine's (its journal): a loop
//! here only says what an attempt sent and received — what the operation told
//! `recuo.current_attempt().record_request(...)` / `.record_response(...)`, else the status
//! and headers the exception carries (`.status_code` or `.status` and `.headers`, on the
//! exception or on its `.response`, as `requests`, `httpx`, `aiohttp` and `urllib` errors
//! have them) — and logs what it polls. The `logging` record's message is the core's JSON
//! line, and its `extra` field `recuo` is the same line read back by `json.loads`.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyTuple};

use recuo::{
    AttemptReason, AttemptRecord, Cause, FinalRecord, GiveUpReason, Level, Outcome, Record,
    RequestLine, Seen,
};

use crate::args::{
    elapsed_ms_arg, headers_arg, i64_arg, int_in, locked, method_arg, methods, must_be, not_one_of,
    one_named, opt_delay_ms_arg, outcome_arg, readers, require_str, total_ms_arg, u64_arg, url_arg,
    url_text,
};
use crate::values::loads;

/// The logger records go to.
pub(crate) const LOGGER: &str = "recuo";

/// `request=`: `None`, or a `(method, url)` tuple (or list) — the method a `str`, the URL a
/// `str` or `bytes`.
pub(crate) fn request_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<RequestLine>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let wrong = || must_be(value, "request", "a (method, url) tuple");
    let items: Vec<Bound<'_, PyAny>> = if let Ok(t) = value.cast::<PyTuple>() {
        t.iter().collect()
    } else if let Ok(l) = value.cast::<PyList>() {
        l.iter().collect()
    } else {
        return Err(wrong());
    };
    let [method, url] = items.as_slice() else {
        return Err(wrong());
    };
    Ok(Some(RequestLine {
        method: require_str(method, "request's method")?.into_owned(),
        url: url_text(url, "request's url")?,
    }))
}

/// What the operation told its attempt, for the records (`Attempt.record_request`,
/// `Attempt.record_response`).
#[derive(Debug, Default)]
pub(crate) struct Notes {
    pub(crate) request: Option<RequestLine>,
    pub(crate) response: Option<Seen>,
}

/// One attempt's notes, shared by every `Attempt` object of that attempt.
pub(crate) type NotesCell = Arc<Mutex<Notes>>;

/// What the attempt that just ended said it sent and received (its notes, taken): the
/// machine's record shows the attempt's own word first, then the verdict's, then what its
/// exception [`carried`].
pub(crate) fn observed(notes: &NotesCell) -> (Option<RequestLine>, Option<Seen>) {
    let mut notes = locked(notes);
    (notes.request.take(), notes.response.take())
}

readers! {
    /// A status for a record: an int of three digits (RFC 9110 §15), else `ValueError`.
    pub(crate) fn record_status_arg -> u16 =
        int_in("status", recuo::record::STATUSES, "must be between 100 and 999");
}

/// The attribute `name` of `obj` when reading it works and it is not `None`; whatever reading
/// it raised is dropped (a record never fails because an object is odd).
fn attr<'py>(obj: &Bound<'py, PyAny>, name: &str) -> Option<Bound<'py, PyAny>> {
    obj.getattr(name).ok().filter(|v| !v.is_none())
}

/// An HTTP status read off an object: an int (not a bool) of three digits.
fn status_of(obj: &Bound<'_, PyAny>) -> Option<u16> {
    ["status_code", "status"].iter().find_map(|name| {
        let v = attr(obj, name)?;
        if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
            return None;
        }
        v.extract::<u16>()
            .ok()
            .filter(|s| recuo::record::STATUSES.contains(s))
    })
}

/// What `error`, a failed attempt's exception, carries of a response (the record's last
/// resort): its own `.status_code` / `.status` and `.headers`, or those of its `.response`.
/// Headers that cannot be read are left out; the status stays.
pub(crate) fn carried(error: &Bound<'_, PyAny>) -> Option<Seen> {
    let holder = if status_of(error).is_some() {
        error.clone()
    } else {
        attr(error, "response")?
    };
    let status = status_of(&holder)?;
    let headers = attr(&holder, "headers")
        .and_then(|h| headers_arg(Some(&h)).ok())
        .unwrap_or_default();
    Some(Seen::new(Outcome::Status(status), &headers))
}

/// The `recuo` logger (`logging.getLogger` always answers the same object: looked up once).
fn logger(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static LOGGER_OBJECT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    LOGGER_OBJECT
        .get_or_try_init(py, || {
            py.import(pyo3::intern!(py, "logging"))?
                .call_method1(pyo3::intern!(py, "getLogger"), (LOGGER,))
                .map(Bound::unbind)
        })
        .map(|l| l.bind(py))
}

/// `logging`'s number for `level`.
pub(crate) const fn logging_level(level: Level) -> i32 {
    match level {
        Level::Debug => 10,
        Level::Info => 20,
        Level::Warning => 30,
    }
}

/// Whether `logger` takes records of `level` (its `isEnabledFor`).
fn enabled(logger: &Bound<'_, PyAny>, level: Level) -> PyResult<bool> {
    let is_enabled_for = pyo3::intern!(logger.py(), "isEnabledFor");
    logger
        .call_method1(is_enabled_for, (logging_level(level),))?
        .is_truthy()
}

/// The lowest level of the records the machine keeps for the `recuo` logger: `debug` or
/// `info` when the logger takes them, else `warning` (the highest a record has; whether the
/// logger takes it is its own `log` call's question, asked only when an operation gave up).
/// One `isEnabledFor` call on the default configuration.
pub(crate) fn records_level(py: Python<'_>) -> PyResult<Level> {
    if telemetry_on() {
        return Ok(Level::Debug);
    }
    let logger = logger(py)?;
    Ok(if !enabled(logger, Level::Info)? {
        Level::Warning
    } else if enabled(logger, Level::Debug)? {
        Level::Debug
    } else {
        Level::Info
    })
}

/// Whether the `recuo` logger takes `DEBUG` records: those of an operation that succeeded at
/// its first attempt (asked after that attempt).
///
/// The answer of `logging.Logger.isEnabledFor(DEBUG)`, read as that method reads it — false
/// when the logger is `disabled`, else its `_cache` entry — from the logger's own attributes
/// when it is a plain `logging.Logger` whose entry is cached; the method itself otherwise (a
/// logger class of the application's, or no entry yet: the method makes it). The instance
/// `__dict__` and the `_cache` dict are looked up once: `logging` empties that dict when
/// levels change (`Manager._clear_cache`), it never replaces it.
pub(crate) fn logs_debug(py: Python<'_>) -> PyResult<bool> {
    /// What the check reads, looked up once: whether the logger is a plain `logging.Logger`,
    /// its attributes and `_cache`, the name `disabled`, and `DEBUG` as the cache's key.
    struct Check {
        plain: bool,
        attributes: Option<Py<PyDict>>,
        cache: Option<Py<PyDict>>,
        disabled: Py<PyAny>,
        debug: Py<PyAny>,
    }
    static CHECK: PyOnceLock<Check> = PyOnceLock::new();
    if telemetry_on() {
        return Ok(true);
    }
    let logger = logger(py)?;
    let debug = logging_level(Level::Debug);
    let check = CHECK.get_or_try_init(py, || -> PyResult<_> {
        let plain = py.import(pyo3::intern!(py, "logging"))?.getattr("Logger")?;
        let attributes = logger
            .getattr(pyo3::intern!(py, "__dict__"))?
            .cast_into::<PyDict>()
            .ok();
        let cache = match &attributes {
            Some(attributes) => attributes
                .get_item(pyo3::intern!(py, "_cache"))?
                .and_then(|cache| cache.cast_into::<PyDict>().ok())
                .map(Bound::unbind),
            None => None,
        };
        Ok(Check {
            plain: logger.get_type().is(&plain),
            attributes: attributes.map(Bound::unbind),
            cache,
            disabled: pyo3::intern!(py, "disabled").clone().into_any().unbind(),
            debug: debug.into_pyobject(py)?.into_any().unbind(),
        })
    })?;
    if let (true, Some(attributes), Some(cache)) = (check.plain, &check.attributes, &check.cache) {
        // As `isEnabledFor` reads them: `disabled` first (true: not enabled; without `_cache`
        // the method would say so too), then the cached entry.
        if let Some(disabled) = attributes.bind(py).get_item(check.disabled.bind(py))? {
            if disabled.is_truthy()? {
                return Ok(false);
            }
            if let Some(enabled) = cache.bind(py).get_item(check.debug.bind(py))? {
                return enabled.is_truthy();
            }
        }
    }
    enabled(logger, Level::Debug)
}

/// Whether a telemetry sink is set (`recuo.otel` installed): read before the sink's lock.
static TELEMETRY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Where each record's telemetry goes: a callable taking `{"operation", "span", "points"}`.
static TELEMETRY_SINK: Mutex<Option<Py<PyAny>>> = Mutex::new(None);

/// Sends what every record means to telemetry to `sink` (a callable; `None`: nowhere): the
/// machines then keep every record, whatever the `recuo` logger takes.
#[pyfunction]
#[pyo3(signature = (sink))]
pub(crate) fn _set_telemetry(sink: Option<Py<PyAny>>) {
    let on = sink.is_some();
    *locked(&TELEMETRY_SINK) = sink;
    TELEMETRY.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a telemetry sink takes every record.
pub(crate) fn telemetry_on() -> bool {
    TELEMETRY.load(std::sync::atomic::Ordering::Relaxed)
}

/// The instruments records feed, as the core names them: a list of dicts with `otel_name`,
/// `unit`, `kind` (`counter` or `histogram`), `prometheus` and `description`, and the
/// histograms' bucket bounds in seconds.
#[pyfunction]
pub(crate) fn _instruments(py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let parsed = loads(py, &recuo::telemetry::instruments_json())?;
    Ok((
        parsed.get_item("instruments")?.unbind(),
        parsed.get_item("buckets_s")?.unbind(),
    ))
}

/// What a record, given as its plain form (a dict: `tests/vectors/telemetry.json`'s records),
/// means to telemetry: `{"operation", "span", "points"}`, the core's mapping.
#[pyfunction]
pub(crate) fn _telemetry_of(py: Python<'_>, record: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let text: String = py
        .import(pyo3::intern!(py, "json"))?
        .call_method1(pyo3::intern!(py, "dumps"), (record,))?
        .extract()?;
    let value: recuo::telemetry::RecordValue = serde_json::from_str(&text)
        .map_err(|e| PyValueError::new_err(format!("not a record: {e}")))?;
    let out = value.telemetry_json().map_err(PyValueError::new_err)?;
    Ok(loads(py, &out)?.unbind())
}

/// Logs `record` at `level` to the `recuo` logger: the message is the core's JSON line,
/// `extra={"recuo": json.loads(line)}`; while a telemetry sink is set, hands it what the
/// record means to telemetry first (the core's mapping), and logs only what the logger takes.
pub(crate) fn log_record(py: Python<'_>, level: Level, record: &Record) -> PyResult<()> {
    if telemetry_on() {
        let sink = locked(&TELEMETRY_SINK).as_ref().map(|s| s.clone_ref(py));
        if let Some(sink) = sink {
            let t = recuo::telemetry::telemetry(record).to_json();
            sink.call1(py, (loads(py, &t)?,))?;
        }
        if !enabled(logger(py)?, level)? {
            return Ok(());
        }
    }
    let line = record.to_json_line();
    let fields = loads(py, &line)?;
    let extra = PyDict::new(py);
    extra.set_item(LOGGER, fields)?;
    let kwargs = PyDict::new(py);
    kwargs.set_item(pyo3::intern!(py, "extra"), extra)?;
    logger(py)?
        .call_method(
            pyo3::intern!(py, "log"),
            (logging_level(level), line),
            Some(&kwargs),
        )
        .map(drop)
}

/// A core record as the Python value: an `AttemptRecord` or a `ResultRecord`.
pub(crate) fn record_object(py: Python<'_>, record: Record) -> PyResult<Py<PyAny>> {
    Ok(match record {
        Record::Attempt(a) => Py::new(py, PyAttemptRecord(a))?.into_any(),
        Record::Final(f) => Py::new(py, PyResultRecord(f))?.into_any(),
    })
}

/// A record polled from a machine or a queue as `poll_record` answers it: `(level, record)`
/// (the level's name, the record's Python value), or `None`.
pub(crate) fn polled(
    py: Python<'_>,
    polled: Option<(Level, Record)>,
) -> PyResult<Option<(&'static str, Py<PyAny>)>> {
    polled
        .map(|(level, record)| Ok((level.name(), record_object(py, record)?)))
        .transpose()
}

/// A give-up reason by its name, else `ValueError`.
pub(crate) fn give_up_reason(name: &str) -> PyResult<GiveUpReason> {
    one_named("reason", name)
}

/// A reason an attempt record may give: a verdict's cause or a give-up reason.
fn attempt_reason(name: &str) -> PyResult<AttemptReason> {
    if let Some(reason) = AttemptReason::from_name(name) {
        return Ok(reason);
    }
    let reasons = GiveUpReason::ALL.map(GiveUpReason::name);
    let names = Cause::named(true).map(Cause::name).chain(reasons);
    Err(not_one_of("reason", names, name))
}

readers! {
    /// Milliseconds since the Unix epoch: an int that fits in 64 signed bits.
    fn start_ms_arg -> i64 = i64_arg("start_ms", "");
}

fn attempts_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    let n = u64_arg(value, "attempts")?;
    u32::try_from(n).map_err(|_| PyValueError::new_err("attempts must be at most 4294967295"))
}

/// One attempt's record, for code that runs its own loop (``recuo.Operation``, an event
/// loop, a queue worker): the same record, redacted the same way, as the loops log.
///
/// ``start_ms`` is when the attempt started (ms since the Unix epoch, as ``time.time() *
/// 1000``), ``elapsed_ms`` how long it took; ``method`` and ``url`` (redacted here: the
/// record never holds the URL as given); the ``status`` received or the transport ``error``
/// (``"connect"``, ``"tls"``, ``"timeout"``, ``"reset"``, ``"other"``) — neither: a success
/// with no HTTP meaning; the response's ``headers`` (only the request id and the wait headers
/// are kept); the ``delay_ms`` chosen before the next attempt; the ``decision`` (``"done"``,
/// ``"retry"``, ``"give_up"``) and its ``reason`` (a verdict's reason or a give-up reason).
///
/// ``to_json()`` is the core's JSON line, ``to_dict()`` that line as a ``dict``. Immutable
/// and comparable. ``TypeError`` for a wrong type, ``ValueError`` for a value out of range.
#[pyclass(name = "AttemptRecord", module = "recuo", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyAttemptRecord(AttemptRecord);

methods!({
    impl PyAttemptRecord {
        /// When the attempt started: RFC 3339 in UTC, to the millisecond.
        getter!(start(self) -> String = recuo::record::rfc3339(self.0.start_unix_ms));
        /// When the attempt started, in ms since the Unix epoch.
        getter!(start_ms(self) -> i64 = self.0.start_unix_ms);
        /// How long it took, in ms.
        getter!(elapsed_ms(self) -> u64 = self.0.elapsed_ms);
        /// The HTTP method (empty for a task with no HTTP meaning).
        getter!(method(self) -> &str = &self.0.method);
        /// The URL, redacted.
        getter!(url(self) -> &str = &self.0.url);
        /// Whether the URL was malformed (redacted as far as it could be read).
        getter!(url_malformed(self) -> bool = self.0.url_malformed);
        /// The request id the response carried, or ``None``.
        getter!(request_id(self) -> Option<&str> = self.0.request_id.as_deref());
        /// The wait headers seen, as ``(name, value)`` pairs.
        getter!(wait_headers(self) -> Vec<(String, String)> = self.0.wait_headers.clone());
        /// The delay chosen before the next attempt, in ms, or ``None``.
        getter!(delay_ms(self) -> Option<u64> = self.0.delay_ms);
        /// ``"done"``, ``"retry"`` or ``"give_up"``.
        getter!(decision(self) -> &'static str = self.0.decision.name());
        /// Why: the verdict's reason or the give-up reason.
        getter!(reason(self) -> &'static str = self.0.reason.name());
        /// The HTTP status received, or ``None``.
        #[getter]
        fn status(&self) -> Option<u16> {
            match self.0.outcome {
                Outcome::Status(s) => Some(s),
                _ => None,
            }
        }
        /// The transport failure (``"connect"``, ``"tls"``, ``"timeout"``, ``"reset"``,
        /// ``"other"``), or ``None``.
        #[getter]
        fn transport(&self) -> Option<&'static str> {
            match self.0.outcome {
                Outcome::Transport(t) => Some(t.name()),
                _ => None,
            }
        }

        #[new]
        #[pyo3(signature = (start_ms, elapsed_ms, method, url, *, status = None, error = None, headers = None, delay_ms = None, decision, reason))]
        fn new(
            #[pyo3(from_py_with = start_ms_arg)] start_ms: i64,
            #[pyo3(from_py_with = elapsed_ms_arg)] elapsed_ms: u64,
            #[pyo3(from_py_with = method_arg)] method: String,
            #[pyo3(from_py_with = url_arg)] url: String,
            status: Option<&Bound<'_, PyAny>>,
            error: Option<&Bound<'_, PyAny>>,
            headers: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = opt_delay_ms_arg)] delay_ms: Option<u64>,
            decision: &Bound<'_, PyAny>,
            reason: &Bound<'_, PyAny>,
        ) -> PyResult<Self> {
            let outcome = outcome_arg(
                status,
                error,
                record_status_arg,
                "an attempt record takes a status or an error, not both",
            )?
            .unwrap_or(Outcome::Success);
            let decision = one_named("decision", &require_str(decision, "decision")?)?;
            let reason = attempt_reason(&require_str(reason, "reason")?)?;
            let headers = headers_arg(headers)?;
            Ok(PyAttemptRecord(AttemptRecord::new(
                start_ms, elapsed_ms, &method, &url, outcome, &headers, delay_ms, decision, reason,
            )))
        }

        /// The record as one line of JSON (the core's; no newline at the end).
        fn to_json(&self) -> String {
            Record::Attempt(self.0.clone()).to_json_line()
        }

        /// The record as a ``dict``: ``json.loads(self.to_json())``.
        fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            loads(py, &self.to_json())
        }

        fn __repr__(&self) -> String {
            format!("<recuo.AttemptRecord {}>", self.to_json())
        }
    }
});

/// One operation's result record, for code that runs its own loop: the same record, redacted
/// the same way, as the loops log.
///
/// ``start_ms`` is when the first attempt started (ms since the Unix epoch); ``method`` and
/// ``url`` (redacted here); ``attempts`` made; ``total_ms`` from the start of the first
/// attempt to the end; the give-up ``reason`` (``"permanent"``, ``"attempts_exhausted"``,
/// ``"wait_exceeds_deadline"``, ``"budget_exhausted"``, ``"cancelled"``, ``"queue_stopped"``),
/// or ``None`` for a
/// success; for ``"queue_stopped"``, ``stopped_by``, the reason that stopped the batch's
/// queue. ``to_json()`` is the core's JSON line, ``to_dict()`` that line as a ``dict``.
/// Immutable and comparable.
#[pyclass(name = "ResultRecord", module = "recuo", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyResultRecord(FinalRecord);

methods!({
    impl PyResultRecord {
        /// When the first attempt started: RFC 3339 in UTC, to the millisecond.
        getter!(start(self) -> String = recuo::record::rfc3339(self.0.start_unix_ms));
        /// When the first attempt started, in ms since the Unix epoch.
        getter!(start_ms(self) -> i64 = self.0.start_unix_ms);
        /// The HTTP method.
        getter!(method(self) -> &str = &self.0.method);
        /// The URL, redacted.
        getter!(url(self) -> &str = &self.0.url);
        /// ``"success"`` or ``"gave_up"``.
        getter!(result(self) -> &str = self.0.result());
        /// Attempts made.
        getter!(attempts(self) -> u32 = self.0.attempts);
        /// Why it gave up, or ``None`` for a success.
        getter!(reason(self) -> Option<&'static str> = self.0.reason.map(GiveUpReason::name));
        /// From the start of the first attempt to the end, in ms.
        getter!(total_ms(self) -> u64 = self.0.total_ms);
        /// For ``"queue_stopped"``: the reason that stopped the batch's queue; else ``None``.
        getter!(stopped_by(self) -> Option<&'static str> =
            self.0.stopped_by.map(GiveUpReason::name));

        #[new]
        #[pyo3(signature = (start_ms, method, url, *, attempts, total_ms, reason = None, stopped_by = None))]
        fn new(
            #[pyo3(from_py_with = start_ms_arg)] start_ms: i64,
            #[pyo3(from_py_with = method_arg)] method: String,
            #[pyo3(from_py_with = url_arg)] url: String,
            #[pyo3(from_py_with = attempts_arg)] attempts: u32,
            #[pyo3(from_py_with = total_ms_arg)] total_ms: u64,
            reason: Option<&Bound<'_, PyAny>>,
            stopped_by: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let reason_of = |r: Option<&Bound<'_, PyAny>>, what| match r.filter(|r| !r.is_none()) {
                Some(r) => give_up_reason(&require_str(r, what)?).map(Some),
                None => Ok(None),
            };
            let mut record = FinalRecord::new(
                start_ms,
                &method,
                &url,
                reason_of(reason, "reason")?,
                attempts,
                total_ms,
            );
            record.stopped_by = reason_of(stopped_by, "stopped_by")?;
            Ok(PyResultRecord(record))
        }

        /// The record as one line of JSON (the core's; no newline at the end).
        fn to_json(&self) -> String {
            Record::Final(self.0.clone()).to_json_line()
        }

        /// The record as a ``dict``: ``json.loads(self.to_json())``.
        fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            loads(py, &self.to_json())
        }

        fn __repr__(&self) -> String {
            format!("<recuo.ResultRecord {}>", self.to_json())
        }
    }
});
