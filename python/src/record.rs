//! Records of attempts and results (SPEC §7) for Python: the records `recuo.retry`,
//! `recuo.com_retry` and `recuo.run_batch` hand to the `logging` module, and
//! `recuo.AttemptRecord` / `recuo.ResultRecord` for code that runs its own loop.
//!
//! Every record is the core's: [`recuo::AttemptRecord`] and [`recuo::FinalRecord`] redact the
//! URL and keep only the request id and the wait headers of a response, and
//! [`recuo::Record::to_json_line`] is the one way a record is written. The `logging` record's
//! message is that line, and its `extra` field `recuo` is the same line read back by
//! `json.loads`, so no field is named twice.
//!
//! A loop keeps a [`Journal`] of its operation: when each attempt started, what it sent and
//! received, the verdict on it; the journal makes the records once the loop has decided.
//! What an attempt received is, first found: what the operation told
//! `recuo.current_attempt().record_response(...)`; for a failure, what `recuo.classify`
//! judged (the `Verdict` keeps it); the status and headers the exception carries (`.status_code`
//! or `.status` and `.headers`, on the exception or on its `.response`, as `requests`, `httpx`,
//! `aiohttp` and `urllib` errors have them); else a success, or for a failure the transport
//! kind `other`.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyTuple};

use recuo::{AttemptRecord, Cause, FinalRecord, GiveUpReason, Outcome, Record, Transport, Verdict};

use crate::args::{int_arg, require_str, type_name, url_text, Int};
use crate::machine::PyAttempt;
use crate::verdict::{headers_arg, transport_arg, PyVerdict};

/// `logging.DEBUG`: an attempt that succeeded; the result of an operation done at once.
const DEBUG: i32 = 10;
/// `logging.INFO`: an attempt retried or given up on; the result of an operation that needed
/// retries.
const INFO: i32 = 20;
/// `logging.WARNING`: the result of an operation that gave up.
const WARNING: i32 = 30;

/// The logger records go to.
pub(crate) const LOGGER: &str = "recuo";

/// The decisions an attempt record may hold.
const DECISIONS: [&str; 3] = ["done", "retry", "give_up"];

/// What an attempt received, as its record keeps it: the outcome, the request id and the wait
/// headers — taken from the response's headers by the core's own [`AttemptRecord::new`], so
/// nothing else of them is kept, even in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    outcome: Outcome,
    request_id: Option<String>,
    wait_headers: Vec<(String, String)>,
}

impl Seen {
    /// What the core's record would keep of a response with `outcome` and `headers`.
    pub(crate) fn new<K: AsRef<str>, V: AsRef<str>>(outcome: Outcome, headers: &[(K, V)]) -> Self {
        let kept = AttemptRecord::new(0, 0, "", "", outcome, headers, None, "", "");
        Seen {
            outcome,
            request_id: kept.request_id,
            wait_headers: kept.wait_headers,
        }
    }

    /// The core's attempt record with this response: the URL redacted by the core.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        start_unix_ms: i64,
        elapsed_ms: u64,
        request: &RequestLine,
        delay_ms: Option<u64>,
        decision: &str,
        reason: &str,
    ) -> AttemptRecord {
        let none: [(&str, &str); 0] = [];
        let mut record = AttemptRecord::new(
            start_unix_ms,
            elapsed_ms,
            &request.method,
            &request.url,
            self.outcome,
            &none,
            delay_ms,
            decision,
            reason,
        );
        record.request_id.clone_from(&self.request_id);
        record.wait_headers.clone_from(&self.wait_headers);
        record
    }
}

/// The request an attempt sends, as its record describes it (the URL as given: the core
/// redacts it when it makes the record).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RequestLine {
    /// The HTTP method; empty for a task with no HTTP meaning.
    pub(crate) method: String,
    /// The URL, not yet redacted.
    pub(crate) url: String,
}

/// `request=`: `None`, or a `(method, url)` tuple (or list) — the method a `str`, the URL a
/// `str` or `bytes`.
pub(crate) fn request_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<RequestLine>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let wrong = || {
        PyTypeError::new_err(format!(
            "request must be a (method, url) tuple, not {}",
            type_name(value)
        ))
    };
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

/// Locks `cell` (a poisoned lock still holds valid notes).
pub(crate) fn notes_of(cell: &NotesCell) -> std::sync::MutexGuard<'_, Notes> {
    cell.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A status for a record: an int of three digits (RFC 9110 §15), else `ValueError`.
pub(crate) fn record_status_arg(value: &Bound<'_, PyAny>) -> PyResult<u16> {
    match int_arg(value, "status")? {
        Int::Fits(n) if (100..=999).contains(&n) => Ok(u16::try_from(n).unwrap_or(999)),
        _ => Err(PyValueError::new_err(format!(
            "status must be between 100 and 999, not {value}"
        ))),
    }
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
        v.extract::<u16>().ok().filter(|s| (100..=999).contains(s))
    })
}

/// What an exception says it received: its own `.status_code` / `.status` and `.headers`, or
/// those of its `.response`. Headers that cannot be read are left out; the status stays.
fn seen_of_exception(error: &Bound<'_, PyAny>) -> Option<Seen> {
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

/// Where records go: the `recuo` logger of the `logging` module.
pub(crate) struct Log {
    logger: Py<PyAny>,
    /// What `isEnabledFor` answered during this loop: the lowest level known enabled and the
    /// highest known disabled (levels are ordered, so each answer settles a range). A loop
    /// asks `logging` at most twice.
    lowest_enabled: AtomicI32,
    highest_disabled: AtomicI32,
}

impl Log {
    /// The `recuo` logger, when it would log any record (`None` when even `WARNING`, the
    /// highest level records use, is off: the loop then keeps no journal at all).
    pub(crate) fn open(py: Python<'_>) -> PyResult<Option<Log>> {
        // `logging.getLogger("recuo")` always answers the same object: look it up once, not
        // on every call of a loop (the import and the call cost more than the loop itself).
        static LOGGER_OBJECT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let logger = LOGGER_OBJECT.get_or_try_init(py, || {
            py.import(pyo3::intern!(py, "logging"))?
                .call_method1(pyo3::intern!(py, "getLogger"), (LOGGER,))
                .map(Bound::unbind)
        })?;
        let log = Log {
            logger: logger.clone_ref(py),
            lowest_enabled: AtomicI32::new(i32::MAX),
            highest_disabled: AtomicI32::new(i32::MIN),
        };
        Ok(if log.enabled(py, WARNING)? {
            Some(log)
        } else {
            None
        })
    }

    fn enabled(&self, py: Python<'_>, level: i32) -> PyResult<bool> {
        if level >= self.lowest_enabled.load(Ordering::Relaxed) {
            return Ok(true);
        }
        if level <= self.highest_disabled.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let on = self
            .logger
            .bind(py)
            .call_method1(pyo3::intern!(py, "isEnabledFor"), (level,))?
            .is_truthy()?;
        if on {
            self.lowest_enabled.fetch_min(level, Ordering::Relaxed);
        } else {
            self.highest_disabled.fetch_max(level, Ordering::Relaxed);
        }
        Ok(on)
    }

    /// Logs `record` at `level` when the logger takes that level: the message is the core's
    /// JSON line, `extra={"recuo": json.loads(line)}`. `make` builds the record only then.
    fn emit(&self, py: Python<'_>, level: i32, make: impl FnOnce() -> Record) -> PyResult<()> {
        if !self.enabled(py, level)? {
            return Ok(());
        }
        let line = make().to_json_line();
        let fields = py
            .import(pyo3::intern!(py, "json"))?
            .call_method1(pyo3::intern!(py, "loads"), (&line,))?;
        let extra = PyDict::new(py);
        extra.set_item(LOGGER, fields)?;
        let kwargs = PyDict::new(py);
        kwargs.set_item(pyo3::intern!(py, "extra"), extra)?;
        self.logger
            .bind(py)
            .call_method(pyo3::intern!(py, "log"), (level, line), Some(&kwargs))
            .map(drop)
    }
}

/// The attempt under way, or the one just made and not yet recorded.
struct Current {
    start_unix_ms: i64,
    started: Instant,
    elapsed_ms: u64,
    failed: bool,
    /// What the operation told the attempt.
    request: Option<RequestLine>,
    response: Option<Seen>,
    /// What `recuo.classify` judged, when the verdict came from it.
    judged: Option<Seen>,
    /// The exception, read for a status and headers only if a record is made.
    error: Option<Py<PyAny>>,
    verdict: Option<Verdict>,
}

/// What the records of one operation need, kept while its loop runs; it makes the records
/// and logs them.
pub(crate) struct Journal {
    log: Log,
    /// The request the loop was given (`request=`).
    request: RequestLine,
    /// When the first attempt started: ms since the Unix epoch, and on the monotonic clock.
    first: Option<(i64, Instant)>,
    /// The request the latest attempt said it sent, for the result record.
    last_request: Option<RequestLine>,
    current: Option<Current>,
}

impl Journal {
    /// The journal of an operation that sends `request`, when the `recuo` logger would log
    /// anything.
    pub(crate) fn open(py: Python<'_>, request: Option<RequestLine>) -> PyResult<Option<Self>> {
        Ok(Log::open(py)?.map(|log| Journal {
            log,
            request: request.unwrap_or_default(),
            first: None,
            last_request: None,
            current: None,
        }))
    }

    /// An attempt starts now.
    pub(crate) fn started(&mut self) {
        let (unix_ms, now) = (recuo::unix_now_ms(), Instant::now());
        self.first.get_or_insert((unix_ms, now));
        self.current = Some(Current {
            start_unix_ms: unix_ms,
            started: now,
            elapsed_ms: 0,
            failed: false,
            request: None,
            response: None,
            judged: None,
            error: None,
            verdict: None,
        });
    }

    /// The attempt ended now: it raised `error`, or succeeded; `notes` hold what it said it
    /// sent and received.
    pub(crate) fn ended(&mut self, notes: &NotesCell, error: Option<&Bound<'_, PyAny>>) {
        let Some(current) = &mut self.current else {
            return;
        };
        current.elapsed_ms =
            u64::try_from(current.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        current.failed = error.is_some();
        current.error = error.map(|e| e.clone().unbind());
        let mut notes = notes_of(notes);
        current.request = notes.request.take();
        current.response = notes.response.take();
        if current.request.is_some() {
            self.last_request.clone_from(&current.request);
        }
    }

    /// The verdict on the failure just recorded, and what `recuo.classify` judged.
    pub(crate) fn judged(&mut self, verdict: Verdict, seen: Option<&Seen>) {
        if let Some(current) = &mut self.current {
            current.verdict = Some(verdict);
            current.judged = seen.cloned();
        }
    }

    /// Logs the record of the attempt just made, decided `decision` for `reason`.
    fn attempt_record(
        &mut self,
        py: Python<'_>,
        level: i32,
        delay_ms: Option<u64>,
        decision: &str,
        reason: &str,
    ) -> PyResult<()> {
        let Some(current) = self.current.take() else {
            return Ok(());
        };
        let request = current.request.as_ref().unwrap_or(&self.request);
        self.log.emit(py, level, || {
            let seen = current
                .response
                .clone()
                .or_else(|| current.judged.clone())
                .or_else(|| {
                    current
                        .error
                        .as_ref()
                        .and_then(|e| seen_of_exception(e.bind(py)))
                })
                .unwrap_or_else(|| {
                    let outcome = if current.failed {
                        // A failure nothing said more about: an error with no HTTP meaning.
                        Outcome::Transport(Transport::Other)
                    } else {
                        Outcome::Success
                    };
                    Seen::new::<&str, &str>(outcome, &[])
                });
            Record::Attempt(seen.record(
                current.start_unix_ms,
                current.elapsed_ms,
                request,
                delay_ms,
                decision,
                reason,
            ))
        })
    }

    /// Logs the result record (`reason`: why it gave up, `None` for a success).
    fn result_record(
        &self,
        py: Python<'_>,
        reason: Option<GiveUpReason>,
        attempts: u32,
    ) -> PyResult<()> {
        let level = match reason {
            Some(_) => WARNING,
            None if attempts > 1 => INFO,
            None => DEBUG,
        };
        let request = self.last_request.as_ref().unwrap_or(&self.request);
        self.log.emit(py, level, || {
            let (start, total_ms) = match self.first {
                Some((unix_ms, started)) => (
                    unix_ms,
                    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                ),
                None => (recuo::unix_now_ms(), 0),
            };
            Record::Final(FinalRecord::new(
                start,
                &request.method,
                &request.url,
                reason.map(GiveUpReason::name),
                attempts,
                total_ms,
            ))
        })
    }

    /// The attempt that failed is retried after `delay_ms`: its record (`INFO`), whose reason
    /// is the verdict's cause.
    pub(crate) fn retry(&mut self, py: Python<'_>, delay_ms: u64) -> PyResult<()> {
        let cause = self
            .current
            .as_ref()
            .and_then(|c| c.verdict)
            .map_or(Cause::ServerError, |v| v.cause());
        self.attempt_record(py, INFO, Some(delay_ms), "retry", cause.name())
    }

    /// The operation succeeded after `attempts`: the last attempt's record (`DEBUG`) and the
    /// result (`DEBUG`, or `INFO` when it needed retries).
    pub(crate) fn done(&mut self, py: Python<'_>, attempts: u32) -> PyResult<()> {
        self.attempt_record(py, DEBUG, None, "done", Cause::Success.name())?;
        self.result_record(py, None, attempts)
    }

    /// The operation gave up for `reason` after `attempts`: the last attempt's record
    /// (`INFO`), when it failed and is not recorded yet, and the result (`WARNING`). The
    /// attempt's reason is the verdict's cause when the verdict gave up (`not_idempotent`,
    /// `permanent`, `tls`: more than the loop's `permanent`), else the loop's reason.
    pub(crate) fn give_up(
        &mut self,
        py: Python<'_>,
        reason: GiveUpReason,
        attempts: u32,
    ) -> PyResult<()> {
        let why = match self.current.as_ref().and_then(|c| c.verdict) {
            Some(Verdict::GiveUp { cause }) if cause != Cause::Success => cause.name(),
            _ => reason.name(),
        };
        if self.current.as_ref().is_some_and(|c| c.failed) {
            self.attempt_record(py, INFO, None, "give_up", why)?;
        } else {
            // Stopped before the attempt could start (or it was recorded): the result alone.
            self.current = None;
        }
        self.result_record(py, Some(reason), attempts)
    }
}

/// Logs the result record of an operation a batch never started (its deadline came first):
/// given up, `cancelled`, with no attempt — as the C and PHP surfaces record it.
pub(crate) fn log_not_started(py: Python<'_>) -> PyResult<()> {
    match Journal::open(py, None)? {
        Some(journal) => journal.result_record(py, Some(GiveUpReason::Cancelled), 0),
        None => Ok(()),
    }
}

/// The journal of the asyncio loop of ``recuo.retry`` (``recuo/_retry.py``), which has no
/// Rust loop to keep it. Private: made by ``_journal``.
#[pyclass(name = "_Journal", module = "recuo._recuo")]
pub(crate) struct PyJournal(Journal);

#[pymethods]
impl PyJournal {
    /// An attempt starts now.
    fn started(&mut self) {
        self.0.started();
    }

    /// The attempt ``attempt`` ended now, raising ``error`` (``None``: it succeeded).
    #[pyo3(signature = (attempt, error, /))]
    fn ended(&mut self, attempt: PyRef<'_, PyAttempt>, error: Option<&Bound<'_, PyAny>>) {
        self.0.ended(&attempt.notes, error.filter(|e| !e.is_none()));
    }

    /// The verdict on the failure just recorded.
    #[pyo3(signature = (verdict, /))]
    fn judged(&mut self, verdict: PyRef<'_, PyVerdict>) {
        self.0.judged(verdict.0, verdict.1.as_deref());
    }

    /// The attempt that failed is retried after ``delay_ms``.
    #[pyo3(signature = (delay_ms, /))]
    fn retry(&mut self, py: Python<'_>, delay_ms: u64) -> PyResult<()> {
        self.0.retry(py, delay_ms)
    }

    /// The operation succeeded after ``attempts``.
    #[pyo3(signature = (attempts, /))]
    fn done(&mut self, py: Python<'_>, attempts: u32) -> PyResult<()> {
        self.0.done(py, attempts)
    }

    /// The operation gave up for ``reason`` after ``attempts``.
    #[pyo3(signature = (reason, attempts, /))]
    fn give_up(&mut self, py: Python<'_>, reason: &str, attempts: u32) -> PyResult<()> {
        let reason = give_up_reason(reason)?;
        self.0.give_up(py, reason, attempts)
    }
}

/// The journal of an operation sending ``request`` (``None`` or ``(method, url)``), or
/// ``None`` when the ``recuo`` logger would log nothing. Private: the asyncio loop of
/// ``recuo.retry`` uses it.
#[pyfunction]
#[pyo3(name = "_journal", signature = (request, /))]
pub(crate) fn journal(
    py: Python<'_>,
    request: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<PyJournal>> {
    let request = request_arg(request)?;
    Ok(Journal::open(py, request)?.map(PyJournal))
}

fn give_up_reason(name: &str) -> PyResult<GiveUpReason> {
    GiveUpReason::ALL
        .into_iter()
        .find(|r| r.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = GiveUpReason::ALL.iter().map(|r| r.name()).collect();
            PyValueError::new_err(format!(
                "reason must be one of {}, not {name:?}",
                crate::verdict::quoted(&names)
            ))
        })
}

/// A reason an attempt record may give: a verdict's cause or a give-up reason.
fn attempt_reason(name: &str) -> PyResult<String> {
    if Cause::from_name(name).is_some() || GiveUpReason::ALL.iter().any(|r| r.name() == name) {
        return Ok(name.to_owned());
    }
    let mut names: Vec<&str> = Cause::ALL
        .iter()
        .filter(|c| **c != Cause::Transport(Transport::Tls))
        .map(|c| c.name())
        .collect();
    names.extend(GiveUpReason::ALL.iter().map(|r| r.name()));
    Err(PyValueError::new_err(format!(
        "reason must be one of {}, not {name:?}",
        crate::verdict::quoted(&names)
    )))
}

/// Milliseconds since the Unix epoch: an int that fits in 64 signed bits.
fn start_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    crate::args::require_int(value, "start_ms")?
        .extract::<i64>()
        .map_err(|_| PyValueError::new_err("start_ms must be between -2**63 and 2**63 - 1"))
}

/// A count (`what` names it): an int from 0 to 2^64 − 1.
fn count_u64(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    match int_arg(value, what)? {
        Int::Fits(n) => Ok(n),
        Int::Negative | Int::TooLarge => Err(PyValueError::new_err(format!(
            "{what} must be between 0 and 2**64 - 1"
        ))),
    }
}

fn elapsed_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    count_u64(value, "elapsed_ms")
}

fn total_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    count_u64(value, "total_ms")
}

fn opt_delay_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    if value.is_none() {
        return Ok(None);
    }
    count_u64(value, "delay_ms").map(Some)
}

fn attempts_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    let n = count_u64(value, "attempts")?;
    u32::try_from(n).map_err(|_| PyValueError::new_err("attempts must be at most 4294967295"))
}

fn method_arg(value: &Bound<'_, PyAny>) -> PyResult<String> {
    require_str(value, "method").map(|m| m.into_owned())
}

fn url_arg(value: &Bound<'_, PyAny>) -> PyResult<String> {
    url_text(value, "url")
}

/// The record as a `dict`: the core's JSON line read back by `json.loads`.
fn record_dict<'py>(py: Python<'py>, record: &Record) -> PyResult<Bound<'py, PyAny>> {
    py.import(pyo3::intern!(py, "json"))?
        .call_method1(pyo3::intern!(py, "loads"), (record.to_json_line(),))
}

/// One attempt's record, for code that runs its own loop (``recuo.Attempts``, an event
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

#[pymethods]
impl PyAttemptRecord {
    #[new]
    #[pyo3(signature = (start_ms, elapsed_ms, method, url, *, status = None, error = None, headers = None, delay_ms = None, decision, reason))]
    #[allow(clippy::too_many_arguments)]
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
        let outcome = match (
            status.filter(|s| !s.is_none()),
            error.filter(|e| !e.is_none()),
        ) {
            (Some(s), None) => Outcome::Status(record_status_arg(s)?),
            (None, Some(e)) => Outcome::Transport(transport_arg(e, "error")?),
            (None, None) => Outcome::Success,
            (Some(_), Some(_)) => {
                return Err(PyTypeError::new_err(
                    "an attempt record takes a status or an error, not both",
                ))
            }
        };
        let decision = require_str(decision, "decision")?;
        if !DECISIONS.contains(&decision.as_ref()) {
            return Err(PyValueError::new_err(format!(
                "decision must be one of {}, not {decision:?}",
                crate::verdict::quoted(&DECISIONS)
            )));
        }
        let reason = attempt_reason(&require_str(reason, "reason")?)?;
        let headers = headers_arg(headers)?;
        Ok(PyAttemptRecord(AttemptRecord::new(
            start_ms, elapsed_ms, &method, &url, outcome, &headers, delay_ms, &decision, &reason,
        )))
    }

    /// When the attempt started: RFC 3339 in UTC, to the millisecond.
    #[getter]
    fn start(&self) -> String {
        recuo::record::rfc3339(self.0.start_unix_ms)
    }

    /// When the attempt started, in ms since the Unix epoch.
    #[getter]
    fn start_ms(&self) -> i64 {
        self.0.start_unix_ms
    }

    /// How long it took, in ms.
    #[getter]
    fn elapsed_ms(&self) -> u64 {
        self.0.elapsed_ms
    }

    /// The HTTP method (empty for a task with no HTTP meaning).
    #[getter]
    fn method(&self) -> &str {
        &self.0.method
    }

    /// The URL, redacted.
    #[getter]
    fn url(&self) -> &str {
        &self.0.url
    }

    /// Whether the URL was malformed (redacted as far as it could be read).
    #[getter]
    fn url_malformed(&self) -> bool {
        self.0.url_malformed
    }

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

    /// The request id the response carried, or ``None``.
    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.0.request_id.as_deref()
    }

    /// The wait headers seen, as ``(name, value)`` pairs.
    #[getter]
    fn wait_headers(&self) -> Vec<(String, String)> {
        self.0.wait_headers.clone()
    }

    /// The delay chosen before the next attempt, in ms, or ``None``.
    #[getter]
    fn delay_ms(&self) -> Option<u64> {
        self.0.delay_ms
    }

    /// ``"done"``, ``"retry"`` or ``"give_up"``.
    #[getter]
    fn decision(&self) -> &str {
        &self.0.decision
    }

    /// Why: the verdict's reason or the give-up reason.
    #[getter]
    fn reason(&self) -> &str {
        &self.0.reason
    }

    /// The record as one line of JSON (the core's; no newline at the end).
    fn to_json(&self) -> String {
        Record::Attempt(self.0.clone()).to_json_line()
    }

    /// The record as a ``dict``: ``json.loads(self.to_json())``.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        record_dict(py, &Record::Attempt(self.0.clone()))
    }

    fn __repr__(&self) -> String {
        format!("<recuo.AttemptRecord {}>", self.to_json())
    }
}

/// One operation's result record, for code that runs its own loop: the same record, redacted
/// the same way, as the loops log.
///
/// ``start_ms`` is when the first attempt started (ms since the Unix epoch); ``method`` and
/// ``url`` (redacted here); ``attempts`` made; ``total_ms`` from the start of the first
/// attempt to the end; the give-up ``reason`` (``"permanent"``, ``"attempts_exhausted"``,
/// ``"wait_exceeds_deadline"``, ``"budget_exhausted"``, ``"cancelled"``), or ``None`` for a
/// success. ``to_json()`` is the core's JSON line, ``to_dict()`` that line as a ``dict``.
/// Immutable and comparable.
#[pyclass(name = "ResultRecord", module = "recuo", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyResultRecord(FinalRecord);

#[pymethods]
impl PyResultRecord {
    #[new]
    #[pyo3(signature = (start_ms, method, url, *, attempts, total_ms, reason = None))]
    fn new(
        #[pyo3(from_py_with = start_ms_arg)] start_ms: i64,
        #[pyo3(from_py_with = method_arg)] method: String,
        #[pyo3(from_py_with = url_arg)] url: String,
        #[pyo3(from_py_with = attempts_arg)] attempts: u32,
        #[pyo3(from_py_with = total_ms_arg)] total_ms: u64,
        reason: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let reason = match reason.filter(|r| !r.is_none()) {
            Some(r) => Some(give_up_reason(&require_str(r, "reason")?)?),
            None => None,
        };
        Ok(PyResultRecord(FinalRecord::new(
            start_ms,
            &method,
            &url,
            reason.map(GiveUpReason::name),
            attempts,
            total_ms,
        )))
    }

    /// When the first attempt started: RFC 3339 in UTC, to the millisecond.
    #[getter]
    fn start(&self) -> String {
        recuo::record::rfc3339(self.0.start_unix_ms)
    }

    /// When the first attempt started, in ms since the Unix epoch.
    #[getter]
    fn start_ms(&self) -> i64 {
        self.0.start_unix_ms
    }

    /// The HTTP method.
    #[getter]
    fn method(&self) -> &str {
        &self.0.method
    }

    /// The URL, redacted.
    #[getter]
    fn url(&self) -> &str {
        &self.0.url
    }

    /// ``"success"`` or ``"gave_up"``.
    #[getter]
    fn result(&self) -> &str {
        &self.0.result
    }

    /// Attempts made.
    #[getter]
    fn attempts(&self) -> u32 {
        self.0.attempts
    }

    /// Why it gave up, or ``None`` for a success.
    #[getter]
    fn reason(&self) -> Option<&str> {
        self.0.reason.as_deref()
    }

    /// From the start of the first attempt to the end, in ms.
    #[getter]
    fn total_ms(&self) -> u64 {
        self.0.total_ms
    }

    /// The record as one line of JSON (the core's; no newline at the end).
    fn to_json(&self) -> String {
        Record::Final(self.0.clone()).to_json_line()
    }

    /// The record as a ``dict``: ``json.loads(self.to_json())``.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        record_dict(py, &Record::Final(self.0.clone()))
    }

    fn __repr__(&self) -> String {
        format!("<recuo.ResultRecord {}>", self.to_json())
    }
}
