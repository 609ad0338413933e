//! `recuo._recuo`: the Python face of recuo, a thin layer over the `recuo` core.
//!
//! Every function here converts Python arguments to the core's types, calls the core once and
//! converts the answer back; no retry rule lives in this crate. The loop of
//! [`com_retry`] is the core's `ComRetry::run_with`, with the task, the predicate and the
//! sleep supplied as closures over Python callables.
//!
//! Bad input is refused before anything runs: a wrong type raises `TypeError`, a value the
//! core refuses raises `recuo.ConfigError` (a `ValueError` carrying the core's stable `code`
//! and `name`), and a value outside every type the core takes raises `ValueError`.
//!
//! No panic crosses into Python: every `#[pyfunction]` and `#[pymethods]` entry point runs
//! inside pyo3's trampoline, which wraps the call in `std::panic::catch_unwind` and turns a
//! panic into `pyo3_runtime.PanicException`. This crate calls Python, but Python never calls
//! back into a Rust closure of ours, so there is no other trampoline to guard.

#![deny(unsafe_code)]

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString};

use recuo::{units, Backoff, ComRetry, LazyJitterRng, RetryAfter};

pyo3::create_exception!(
    recuo,
    ConfigError,
    PyValueError,
    "A configuration recuo refuses: attempts below 1, a negative or NaN duration, a maximum\n\
     below the base.\n\n\
     A subclass of ValueError. ``code`` is the core's stable number for the error (the same in\n\
     C, Python and PHP) and ``name`` its stable lower-case name (``\"zero_attempts\"``,\n\
     ``\"negative_duration\"``, ``\"not_a_number\"``, ``\"duration_too_large\"``,\n\
     ``\"cap_below_base\"``); the message is for humans."
);

/// The longest the default sleep waits without looking for a signal (Ctrl-C).
const SLEEP_SLICE: Duration = Duration::from_millis(50);

/// `recuo.ConfigError` for a core error, with its `code` and `name` set on the instance.
fn config_error(py: Python<'_>, error: recuo::ConfigError) -> PyErr {
    let err = ConfigError::new_err(error.to_string());
    let value = err.value(py);
    // Setting an attribute on a fresh exception instance cannot fail short of MemoryError;
    // should it, the exception still says what went wrong, only without the attributes.
    let _ = value.setattr(pyo3::intern!(py, "code"), error.code());
    let _ = value.setattr(pyo3::intern!(py, "name"), error.name());
    err
}

/// The type's name of `value`, for error messages.
fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// A Python `int` that is not a `bool` (a bool passed as a count or a duration is almost
/// certainly a mistake, so it is refused rather than read as 0 or 1).
fn require_int<'a, 'py>(
    value: &'a Bound<'py, PyAny>,
    what: &str,
) -> PyResult<&'a Bound<'py, PyInt>> {
    if value.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int, not bool"
        )));
    }
    value.cast::<PyInt>().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be an int, not {}", type_name(value)))
    })
}

/// An int argument, as a u64 when it fits, or whether it is negative or too large.
enum Int {
    Fits(u64),
    Negative,
    TooLarge,
}

fn int_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Int> {
    let int = require_int(value, what)?;
    if let Ok(n) = int.extract::<u64>() {
        return Ok(Int::Fits(n));
    }
    Ok(if int.lt(0)? {
        Int::Negative
    } else {
        Int::TooLarge
    })
}

/// A retry index: an int ≥ 0. Values above `u32::MAX` saturate, which is exact: every window
/// has reached its cap long before (`window(n)` is the same for every `n` ≥ 64).
fn attempt_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    match int_arg(value, "attempt")? {
        Int::Fits(n) => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
        Int::TooLarge => Ok(u32::MAX),
        Int::Negative => Err(PyValueError::new_err("attempt must not be negative")),
    }
}

/// `tentativas`: an int. A negative count is passed on as 0, which the core refuses as
/// `zero_attempts`; a count above `u32::MAX` is a `ValueError`.
fn tentativas_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    match int_arg(value, "tentativas")? {
        Int::Negative => Ok(0),
        Int::Fits(n) => u32::try_from(n).map_err(|_| too_many_attempts()),
        Int::TooLarge => Err(too_many_attempts()),
    }
}

fn too_many_attempts() -> PyErr {
    PyValueError::new_err(format!("tentativas must be at most {}", u32::MAX))
}

/// A duration in whole milliseconds: an int from 0 to 2^64 − 1.
fn ms_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    match int_arg(value, what)? {
        Int::Fits(ms) => Ok(ms),
        Int::Negative => Err(config_error(
            value.py(),
            recuo::ConfigError::NegativeDuration,
        )),
        Int::TooLarge => Err(config_error(
            value.py(),
            recuo::ConfigError::DurationTooLarge,
        )),
    }
}

fn base_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    ms_arg(value, "base_ms")
}

fn cap_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    ms_arg(value, "cap_ms")
}

/// A duration in seconds, as the float the core's `units::ms_from_secs_f64` checks: an int or
/// a float (not a bool). An int too large for a float becomes ±infinity, so the core refuses
/// it for what it is (negative, or too large).
fn secs_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    if value.is_instance_of::<PyFloat>() {
        return value.extract::<f64>();
    }
    let int = require_int(value, what).map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a number of seconds (int or float), not {}",
            type_name(value)
        ))
    })?;
    match int.extract::<f64>() {
        Ok(seconds) => Ok(seconds),
        Err(_) if int.lt(0)? => Ok(f64::NEG_INFINITY),
        Err(_) => Ok(f64::INFINITY),
    }
}

fn base_arg(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    secs_arg(value, "base")
}

fn maximo_arg(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    secs_arg(value, "maximo")
}

/// A jitter seed: `None` (seed from the operating system) or an int from 0 to 2^64 − 1.
fn seed_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    if value.is_none() {
        return Ok(None);
    }
    match int_arg(value, "seed")? {
        Int::Fits(seed) => Ok(Some(seed)),
        Int::Negative | Int::TooLarge => Err(PyValueError::new_err(
            "seed must be between 0 and 2**64 - 1",
        )),
    }
}

/// `now_ms`: `None` (the system clock, read here, at the edge) or an int of milliseconds
/// since the Unix epoch that fits in 64 signed bits.
fn now_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if value.is_none() {
        return Ok(None);
    }
    require_int(value, "now_ms")?
        .extract::<i64>()
        .map(Some)
        .map_err(|_| {
            PyValueError::new_err("now_ms must be between -2**63 and 2**63 - 1 (ms since 1970)")
        })
}

/// Milliseconds since the Unix epoch by the system clock (negative before 1970).
fn system_now_ms() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    }
}

/// A callable argument, or `TypeError`.
fn require_callable(value: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    if value.is_callable() {
        Ok(())
    } else {
        Err(PyTypeError::new_err(format!(
            "{what} must be callable, not {}",
            type_name(value)
        )))
    }
}

/// Reads a `Retry-After` value given as `str`, `bytes` or `None` (absent).
///
/// `bytes` go to the core as they are. A `str` goes as UTF-8; one that cannot be encoded
/// (lone surrogates) goes with its surrogates encoded, so the core sees non-ASCII bytes and
/// answers for them as it does for any other.
fn read_retry_after(value: &Bound<'_, PyAny>, now_ms: Option<i64>) -> PyResult<RetryAfter> {
    let now = now_ms.unwrap_or_else(system_now_ms);
    if value.is_none() {
        return Ok(recuo::parse_retry_after("", now));
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(recuo::parse_retry_after(bytes.as_bytes(), now));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(match text.to_cow() {
            Ok(utf8) => recuo::parse_retry_after(utf8.as_bytes(), now),
            Err(_) => {
                let encoded = text.call_method1(
                    pyo3::intern!(value.py(), "encode"),
                    ("utf-8", "surrogatepass"),
                )?;
                recuo::parse_retry_after(encoded.cast::<PyBytes>()?.as_bytes(), now)
            }
        });
    }
    Err(PyTypeError::new_err(format!(
        "retry_after must be str, bytes or None, not {}",
        type_name(value)
    )))
}

/// Guide A's retry loop: call ``tarefa()`` up to ``tentativas`` times and return its value.
///
/// When ``tarefa`` raises an ``Exception`` and ``repetir_se(erro)`` is true (``repetir_se=None``
/// retries every ``Exception``), wait a delay drawn uniformly from
/// ``[0, min(maximo, base * 2**i)]`` seconds (full jitter; ``i`` counts retries from 0) and
/// call it again. When the attempts are spent or ``repetir_se`` answers false, the task's
/// exception is re-raised: the very same object, with its traceback.
///
/// A ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``, ``SystemExit``)
/// is never retried: it propagates at once. So does an exception raised by ``repetir_se``
/// or by ``sleep``.
///
/// ``base`` and ``maximo`` are seconds (int or float). ``seed`` (an int) makes the jitter
/// reproducible. ``sleep(seconds)`` replaces the real wait, for tests; a zero delay calls no
/// sleep at all. The real wait releases the GIL and answers Ctrl-C within about 50 ms.
///
/// Raises ``recuo.ConfigError`` (a ``ValueError``) when ``tentativas < 1``, a duration is
/// negative, NaN or infinite, or ``maximo < base``; ``TypeError`` when ``tarefa``,
/// ``repetir_se`` or ``sleep`` is not callable or an argument has the wrong type (a ``bool``
/// is refused where an int is expected).
#[pyfunction]
#[pyo3(
    signature = (tarefa, tentativas = 5, base = 0.2, maximo = 5.0, repetir_se = None, *, seed = None, sleep = None),
    text_signature = "(tarefa, tentativas=5, base=0.2, maximo=5.0, repetir_se=None, *, seed=None, sleep=None)"
)]
#[allow(clippy::too_many_arguments)]
fn com_retry(
    py: Python<'_>,
    tarefa: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = tentativas_arg)] tentativas: u32,
    #[pyo3(from_py_with = base_arg)] base: f64,
    #[pyo3(from_py_with = maximo_arg)] maximo: f64,
    repetir_se: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
    sleep: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    require_callable(tarefa, "tarefa")?;
    let repetir_se = repetir_se.filter(|f| !f.is_none());
    if let Some(f) = repetir_se {
        require_callable(f, "repetir_se")?;
    }
    let sleep = sleep.filter(|f| !f.is_none());
    if let Some(f) = sleep {
        require_callable(f, "sleep")?;
    }
    let base_ms = units::ms_from_secs_f64(base).map_err(|e| config_error(py, e))?;
    let maximo_ms = units::ms_from_secs_f64(maximo).map_err(|e| config_error(py, e))?;
    let policy = ComRetry::new(tentativas, base_ms, maximo_ms).map_err(|e| config_error(py, e))?;

    policy.run_with(
        // Seeded at the first draw only: a first-attempt success reads no entropy.
        &mut LazyJitterRng::new(seed),
        || tarefa.call0().map(Bound::unbind),
        |erro: &PyErr| {
            // Exception, not BaseException: KeyboardInterrupt and SystemExit end the loop.
            if !erro.is_instance_of::<PyException>(py) {
                return Ok(false);
            }
            let Some(f) = repetir_se else {
                return Ok(true);
            };
            f.call1((erro.value(py),))
                .and_then(|answer| answer.is_truthy())
                .inspect_err(|raised| {
                    // As in Python's own `except` block: the predicate's exception
                    // happened while handling the task's.
                    if raised
                        .value(py)
                        .getattr("__context__")
                        .is_ok_and(|c| c.is_none())
                    {
                        raised.set_context(py, Some(erro.clone_ref(py)));
                    }
                })
        },
        |delay: Duration| match sleep {
            Some(f) => f.call1((delay.as_secs_f64(),)).map(drop),
            None => interruptible_sleep(py, delay),
        },
    )
}

/// Sleeps `delay` with the GIL released, in slices of at most [`SLEEP_SLICE`], running
/// Python's signal handlers between slices: Ctrl-C raises `KeyboardInterrupt` promptly.
fn interruptible_sleep(py: Python<'_>, delay: Duration) -> PyResult<()> {
    let mut remaining = delay;
    while !remaining.is_zero() {
        let slice = remaining.min(SLEEP_SLICE);
        let started = Instant::now();
        py.detach(|| std::thread::sleep(slice));
        py.check_signals()?;
        remaining = remaining.saturating_sub(started.elapsed());
    }
    Ok(())
}

/// Guide B's delay before retry number ``attempt`` (from 0), in milliseconds, as a float.
///
/// ``retry_after`` is the Retry-After header's value: ``str``, ``bytes`` (passed through as
/// they are) or ``None`` when absent. Seconds (``"12"`` is 12000.0) and HTTP-dates (a past
/// date is 0.0) give the server's wait exactly; a wait beyond 2**53 - 1 ms gives
/// ``math.inf``; a missing or invalid value gives a full-jitter draw from
/// ``[0, min(8000, 1000 * 2**attempt)]``.
///
/// ``now_ms`` is the current time in ms since the Unix epoch (``None``: the system clock;
/// pass the response's Date header to be immune to clock skew). ``seed`` makes the jitter
/// reproducible. Raises ``ValueError`` for a negative ``attempt`` and ``TypeError`` for a
/// wrong type.
#[pyfunction]
#[pyo3(signature = (retry_after, attempt, now_ms = None, *, seed = None))]
fn retry_delay_ms(
    retry_after: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = attempt_arg)] attempt: u32,
    #[pyo3(from_py_with = now_ms_arg)] now_ms: Option<i64>,
    #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
) -> PyResult<f64> {
    // Seeded at the first draw only: a seconds or date value draws nothing.
    let mut rng = LazyJitterRng::new(seed);
    if let Ok(text) = retry_after.cast::<PyString>() {
        if let Ok(utf8) = text.to_cow() {
            let now = now_ms.unwrap_or_else(system_now_ms);
            return Ok(recuo::retry_delay_ms(Some(&utf8), attempt, now, &mut rng));
        }
    }
    Ok(read_retry_after(retry_after, now_ms)?.guide_b_delay_ms(attempt, &mut rng))
}

/// Reads a Retry-After value (``str``, ``bytes`` or ``None``) as of ``now_ms`` (ms since the
/// Unix epoch; ``None``: the system clock) and answers a ``RetryAfter``.
///
/// Spaces and tabs around the value are ignored. ASCII digits are seconds; an HTTP-date in
/// any of RFC 9110's three forms is a date (a past date waits 0); a wait beyond 2**53 - 1 ms
/// is unbounded; anything else is invalid.
#[pyfunction]
#[pyo3(signature = (value, now_ms = None))]
fn parse_retry_after(
    value: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = now_ms_arg)] now_ms: Option<i64>,
) -> PyResult<PyRetryAfter> {
    read_retry_after(value, now_ms).map(PyRetryAfter)
}

/// The backoff window before retry number ``attempt`` (from 0), in whole milliseconds:
/// ``min(cap_ms, base_ms * 2**attempt)``, exact for every int (no overflow).
///
/// Raises ``recuo.ConfigError`` when ``cap_ms < base_ms`` or a duration is negative or above
/// 2**64 - 1, ``ValueError`` for a negative ``attempt``, ``TypeError`` for a non-int.
#[pyfunction]
#[pyo3(signature = (attempt, base_ms = 200, cap_ms = 5000))]
fn backoff_window_ms(
    py: Python<'_>,
    #[pyo3(from_py_with = attempt_arg)] attempt: u32,
    #[pyo3(from_py_with = base_ms_arg)] base_ms: u64,
    #[pyo3(from_py_with = cap_ms_arg)] cap_ms: u64,
) -> PyResult<u64> {
    let backoff = Backoff::new()
        .with_base_ms(base_ms)
        .with_cap_ms(cap_ms)
        .validate()
        .map_err(|e| config_error(py, e))?;
    Ok(backoff.window_ms(attempt))
}

/// What a Retry-After value asks for: ``kind`` is ``"seconds"``, ``"date"``, ``"unbounded"``
/// or ``"invalid"``; ``wait_ms`` is the server's finite wait in ms (``None`` when unbounded or
/// invalid). Immutable, comparable and hashable; made by ``recuo.parse_retry_after``.
#[pyclass(name = "RetryAfter", module = "recuo", frozen, eq, hash)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct PyRetryAfter(RetryAfter);

#[pymethods]
impl PyRetryAfter {
    /// ``"seconds"``, ``"date"``, ``"unbounded"`` or ``"invalid"``.
    #[getter]
    fn kind(&self) -> &'static str {
        self.0.kind()
    }

    /// The server's finite wait in milliseconds, or ``None`` when unbounded or invalid.
    #[getter]
    fn wait_ms(&self) -> Option<u64> {
        self.0.wait_ms()
    }

    fn __repr__(&self) -> String {
        match self.0.wait_ms() {
            Some(ms) => format!("RetryAfter(kind='{}', wait_ms={ms})", self.0.kind()),
            None => format!("RetryAfter(kind='{}', wait_ms=None)", self.0.kind()),
        }
    }
}

/// recuo's native module; import ``recuo`` instead.
#[pymodule]
fn _recuo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", recuo::VERSION)?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add_class::<PyRetryAfter>()?;
    m.add_function(wrap_pyfunction!(com_retry, m)?)?;
    m.add_function(wrap_pyfunction!(retry_delay_ms, m)?)?;
    m.add_function(wrap_pyfunction!(parse_retry_after, m)?)?;
    m.add_function(wrap_pyfunction!(backoff_window_ms, m)?)?;
    Ok(())
}
