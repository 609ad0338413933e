//! Python arguments → the core's types, and the core's errors → Python exceptions.
//!
//! Every check a Python argument needs before it reaches the core lives here, so each entry
//! point refuses bad input the same way: `TypeError` for a wrong type (a `bool` where an int
//! is expected included), `recuo.ConfigError` for a value the core refuses, `ValueError` for
//! a value outside every type the core takes.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString};

use recuo::Transport;

use crate::errors::ConfigError;

/// `recuo.ConfigError` for a core error, with its `code` and `name` set on the instance.
pub(crate) fn config_error(py: Python<'_>, error: recuo::ConfigError) -> PyErr {
    config_error_saying(py, error, error.to_string())
}

/// `recuo.ConfigError` for a core error, with `message` (the core's, with details added for
/// humans) and the error's `code` and `name`.
pub(crate) fn config_error_saying(
    py: Python<'_>,
    error: recuo::ConfigError,
    message: String,
) -> PyErr {
    let err = ConfigError::new_err(message);
    let value = err.value(py);
    // Setting an attribute on a fresh exception instance cannot fail short of MemoryError;
    // should it, the exception still says what went wrong, only without the attributes.
    let _ = value.setattr(pyo3::intern!(py, "code"), error.code());
    let _ = value.setattr(pyo3::intern!(py, "name"), error.name());
    err
}

/// The type's name of `value`, for error messages.
pub(crate) fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// A Python `int` that is not a `bool` (a bool passed as a count or a duration is almost
/// certainly a mistake, so it is refused rather than read as 0 or 1).
pub(crate) fn require_int<'a, 'py>(
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

/// A Python `bool` (not an int, not any truthy object).
pub(crate) fn require_bool(value: &Bound<'_, PyAny>, what: &str) -> PyResult<bool> {
    value.cast::<PyBool>().map(|b| b.is_true()).map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a bool, not {}", type_name(value)))
    })
}

/// A Python `str`, as text. A `str` that is not valid Unicode (lone surrogates) is read with
/// each surrogate replaced by U+FFFD.
pub(crate) fn require_str<'a>(value: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, str>> {
    value
        .cast::<PyString>()
        .map(|s| s.to_string_lossy())
        .map_err(|_| {
            PyTypeError::new_err(format!("{what} must be a str, not {}", type_name(value)))
        })
}

/// An int argument, as a u64 when it fits, or whether it is negative or too large.
pub(crate) enum Int {
    Fits(u64),
    Negative,
    TooLarge,
}

pub(crate) fn int_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Int> {
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
pub(crate) fn attempt_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    match int_arg(value, "attempt")? {
        Int::Fits(n) => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
        Int::TooLarge => Ok(u32::MAX),
        Int::Negative => Err(PyValueError::new_err("attempt must not be negative")),
    }
}

/// A number of attempts (`what` names the argument): an int. A negative count is passed on
/// as 0, which the core refuses as `zero_attempts`; a count above `u32::MAX` is a
/// `ValueError`.
pub(crate) fn count_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u32> {
    let too_many = || PyValueError::new_err(format!("{what} must be at most {}", u32::MAX));
    match int_arg(value, what)? {
        Int::Negative => Ok(0),
        Int::Fits(n) => u32::try_from(n).map_err(|_| too_many()),
        Int::TooLarge => Err(too_many()),
    }
}

/// `tentativas`: see [`count_arg`].
pub(crate) fn tentativas_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    count_arg(value, "tentativas")
}

/// A duration in whole milliseconds: an int from 0 to 2^64 − 1.
pub(crate) fn ms_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
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

pub(crate) fn base_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    ms_arg(value, "base_ms")
}

pub(crate) fn cap_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    ms_arg(value, "cap_ms")
}

/// A duration in seconds, as the float the core's `units::ms_from_secs_f64` checks: an int or
/// a float (not a bool). An int too large for a float becomes ±infinity, so the core refuses
/// it for what it is (negative, or too large).
pub(crate) fn secs_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
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

/// A duration in seconds, as whole milliseconds checked by the core.
pub(crate) fn secs_to_ms(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    let seconds = secs_arg(value, what)?;
    recuo::units::ms_from_secs_f64(seconds).map_err(|e| config_error(value.py(), e))
}

/// An optional duration in seconds (`None`: absent), as whole milliseconds.
pub(crate) fn opt_secs_to_ms(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<u64>> {
    if value.is_none() {
        Ok(None)
    } else {
        secs_to_ms(value, what).map(Some)
    }
}

pub(crate) fn base_arg(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    secs_arg(value, "base")
}

pub(crate) fn maximo_arg(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    secs_arg(value, "maximo")
}

pub(crate) fn prazo_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    opt_secs_to_ms(value, "prazo")
}

/// A jitter seed: `None` (seed from the operating system) or an int from 0 to 2^64 − 1.
pub(crate) fn seed_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
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
pub(crate) fn now_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
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

/// A reading of the caller's monotonic clock in milliseconds: an int from 0 to 2^64 − 1.
pub(crate) fn mono_ms_arg(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    match int_arg(value, "now_ms")? {
        Int::Fits(ms) => Ok(ms),
        Int::Negative | Int::TooLarge => Err(PyValueError::new_err(
            "now_ms (a monotonic clock reading) must be between 0 and 2**64 - 1",
        )),
    }
}

/// Milliseconds since the Unix epoch by the system clock (negative before 1970).
pub(crate) fn system_now_ms() -> i64 {
    recuo::unix_now_ms()
}

/// A callable argument, or `TypeError`.
pub(crate) fn require_callable(value: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    if value.is_callable() {
        Ok(())
    } else {
        Err(PyTypeError::new_err(format!(
            "{what} must be callable, not {}",
            type_name(value)
        )))
    }
}

/// An optional callable: `None` is absent, anything else must be callable.
pub(crate) fn opt_callable<'a, 'py>(
    value: Option<&'a Bound<'py, PyAny>>,
    what: &str,
) -> PyResult<Option<&'a Bound<'py, PyAny>>> {
    match value.filter(|f| !f.is_none()) {
        Some(f) => require_callable(f, what).map(|()| Some(f)),
        None => Ok(None),
    }
}

/// Bytes as text, one character per byte (ISO-8859-1, HTTP's historical header charset), so
/// that no byte is lost and non-ASCII bytes stay non-ASCII for the core to refuse.
pub(crate) fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// Header bytes as text: UTF-8 when they are valid UTF-8, else ISO-8859-1 (one character per
/// byte), as `httpx` decodes headers. Never an error, never a byte lost or left raw; ASCII
/// — everything a rule of the core reads — is the same either way.
pub(crate) fn header_bytes_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => latin1(bytes),
    }
}

/// Header text: a `str` (lone surrogates become U+FFFD), or `bytes` read by
/// [`header_bytes_text`].
pub(crate) fn header_text(value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text.to_string_lossy().into_owned());
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(header_bytes_text(bytes.as_bytes()));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be str or bytes, not {}",
        type_name(value)
    )))
}

/// URL bytes as text: valid UTF-8 as it is, every other byte percent-encoded (`%FF`), as a
/// URL spells a byte that is not text. Never an error, never a raw byte.
pub(crate) fn url_bytes_text(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                out.push_str(text);
                return out;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                let bad = e.error_len().unwrap_or(after.len()).min(after.len());
                for b in &after[..bad] {
                    let _ = write!(out, "%{b:02X}");
                }
                rest = &after[bad..];
            }
        }
    }
}

/// A URL given as `str` (lone surrogates become U+FFFD) or `bytes` (read by
/// [`url_bytes_text`]); `what` names the argument.
pub(crate) fn url_text(value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text.to_string_lossy().into_owned());
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(url_bytes_text(bytes.as_bytes()));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be str or bytes, not {}",
        type_name(value)
    )))
}

/// Python's `repr` of a header name (an HTTP token: it may hold `'`, never `"` or a backslash).
pub(crate) fn str_repr(s: &str) -> String {
    if s.contains('\'') {
        format!("\"{s}\"")
    } else {
        format!("'{s}'")
    }
}

/// Seconds from milliseconds.
pub(crate) fn ms_to_secs(ms: u64) -> f64 {
    // Exact below 2^53 ms (285,000 years); a float is what Python's time functions take.
    ms as f64 / 1000.0
}

/// The transport kinds, as `error=` names them.
const TRANSPORTS: [&str; 5] = ["connect", "tls", "timeout", "reset", "other"];

/// The transport kind named `name`, or `ValueError` (`TypeError` for a non-str).
pub(crate) fn transport_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Transport> {
    let name = require_str(value, what)?;
    Transport::from_name(&name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{what} must be one of {}, not {name:?}",
            quoted(&TRANSPORTS)
        ))
    })
}

/// `'a', 'b' or 'c'`, for error messages.
pub(crate) fn quoted(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// Response headers: ``None``, a mapping (or anything with ``items()``, such as
/// ``http.client.HTTPMessage``), or an iterable of ``(name, value)`` pairs; names and values
/// are ``str`` or ``bytes`` (UTF-8 when valid, else ISO-8859-1: never an error, never a raw
/// byte).
pub(crate) fn headers_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(format!(
            "headers must be a mapping or an iterable of (name, value) pairs, not {}",
            type_name(value)
        )));
    }
    let py = value.py();
    let pairs = match value.getattr_opt(pyo3::intern!(py, "items"))? {
        Some(items) if items.is_callable() => items.call0()?,
        _ => value.clone(),
    };
    let iter = pairs.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "headers must be a mapping or an iterable of (name, value) pairs, not {}",
            type_name(value)
        ))
    })?;
    let mut headers = Vec::new();
    for pair in iter {
        let pair = pair?;
        let bad_pair = || {
            PyTypeError::new_err(format!(
                "each header must be a (name, value) pair, not {}",
                type_name(&pair)
            ))
        };
        if pair.is_instance_of::<PyString>() || pair.is_instance_of::<PyBytes>() {
            return Err(bad_pair());
        }
        let items: Vec<Bound<'_, PyAny>> = match pair.try_iter() {
            Ok(it) => it.collect::<PyResult<_>>()?,
            Err(_) => return Err(bad_pair()),
        };
        let [name, value] = items.as_slice() else {
            return Err(bad_pair());
        };
        headers.push((
            header_text(name, "a header name")?,
            header_text(value, "a header value")?,
        ));
    }
    Ok(headers)
}
