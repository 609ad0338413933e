//! Python arguments → the core's types, and the core's errors → Python exceptions.
//!
//! Every check a Python argument needs before it reaches the core lives here, so each entry
//! point refuses bad input the same way: `TypeError` for a wrong type (a `bool` where an int
//! is expected included), `recuo.ConfigError` for a value the core refuses, `ValueError` for
//! a value outside every type the core takes.

use std::borrow::Cow;
use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString};

use recuo::{Cause, Named, Outcome, Transport};

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

/// Declares readers for `#[pyo3(from_py_with = ...)]`, which takes a function's path (not a
/// closure): `fn name -> T = read("what", more);` is `fn name(value) -> PyResult<T>`,
/// answering `read(value, "what", more)`; `fn name -> Option<T> = read("what") or None;`
/// answers `None` for `None`, anything else read so.
macro_rules! readers {
    ($($(#[$attr:meta])* $vis:vis fn $name:ident -> $t:ty
        = $read:ident($what:literal $(, $more:expr)*) $(or $none:ident)?;)*) => {$(
        $(#[$attr])*
        $vis fn $name(value: &Bound<'_, PyAny>) -> PyResult<$t> {
            $crate::args::readers!(@read value, $read, ($what $(, $more)*) $(, $none)?)
        }
    )*};
    (@read $value:ident, $read:ident, ($($arg:expr),*)) => {
        $read($value, $($arg),*)
    };
    (@read $value:ident, $read:ident, ($($arg:expr),*), None) => {
        $crate::args::opt($value, |v| $read(v, $($arg),*))
    };
}
pub(crate) use readers;

/// A class's `#[pymethods]`, as `methods!({ impl Class { ... } })`: ordinary methods, which
/// rustfmt formats, after plain getters declared one a line. `/// doc` then
/// `getter!(name(self) -> T = expression);` is the getter `fn name(&self) -> T { expression }`,
/// and `getter!(name(self, py) -> T = ...);` takes `py: Python<'_>` too;
/// `preset!(name = expression);` is the static method `fn name() -> Self { expression }`.
/// Among the getters,
/// `opens!((args) = (signature));`, `/// doc` `fn shared();` and `/// doc`
/// `fn redis(extra args);` declare a limit's three constructors on one argument list:
/// `new(args)`, `shared(path, args)` and `redis(url, key, args, extra args)`, each calling
/// `Self::open(py, at, args)` with where it opens (`At`, `path_arg` and `text_arg` are the
/// calling module's, `crate::limits`; the redis one's extra arguments ride in `At::Redis`).
macro_rules! methods {
    ({ impl $class:ty { $($body:tt)* } }) => {
        $crate::args::methods!(@getters $class [] $($body)*);
    };
    (@getters $class:ty [$($done:tt)*]
        $(#[$($attr:tt)*])* getter!($name:ident($s:ident $(, $py:ident)?) -> $t:ty = $e:expr);
        $($rest:tt)*) => {
        $crate::args::methods!(@getters $class [$($done)*
            $(#[$($attr)*])*
            #[getter]
            fn $name(&$s $(, $py: Python<'_>)?) -> $t {
                $e
            }
        ] $($rest)*);
    };
    (@getters $class:ty [$($done:tt)*]
        $(#[$($attr:tt)*])* preset!($name:ident = $e:expr);
        $($rest:tt)*) => {
        $crate::args::methods!(@getters $class [$($done)*
            $(#[$($attr)*])*
            #[staticmethod]
            fn $name() -> Self {
                $e
            }
        ] $($rest)*);
    };
    (@getters $class:ty [$($done:tt)*]
        opens!(($($(#[$a:meta])* $arg:ident: $t:ty),* $(,)?) = ($($sig:tt)*));
        $(#[$shared:meta])* fn shared();
        $(#[$redis:meta])* fn redis($($(#[$ea:meta])* $extra:ident: $et:ty),* $(,)?);
        $($rest:tt)*) => {
        $crate::args::methods!(@getters $class [$($done)*
            #[new]
            #[pyo3(signature = ($($sig)*))]
            fn new(py: Python<'_>, $($(#[$a])* $arg: $t),*) -> PyResult<Self> {
                Self::open(py, At::Local, $($arg),*)
            }
            $(#[$shared])*
            #[staticmethod]
            #[pyo3(signature = (path, $($sig)*))]
            fn shared(py: Python<'_>, #[pyo3(from_py_with = path_arg)] path: PathBuf,
                $($(#[$a])* $arg: $t),*) -> PyResult<Self> {
                Self::open(py, At::File(path), $($arg),*)
            }
            $(#[$redis])*
            #[staticmethod]
            #[pyo3(signature = (url, key, $($sig)* $(, $extra)*))]
            fn redis(py: Python<'_>, url: &Bound<'_, PyAny>, key: &Bound<'_, PyAny>,
                $($(#[$a])* $arg: $t,)* $($(#[$ea])* $extra: $et),*) -> PyResult<Self> {
                let (url, key) = (text_arg(url, "url")?, text_arg(key, "key")?);
                Self::open(py, At::Redis(url, key, ($($extra),*)), $($arg),*)
            }
        ] $($rest)*);
    };
    (@getters $class:ty [$($done:tt)*] $($rest:tt)*) => {
        #[pymethods]
        impl $class {
            $($done)*
            $($rest)*
        }
    };
}
pub(crate) use methods;

/// `TypeError`: `{what} must be {expected}, not {the type's name of value}`.
pub(crate) fn must_be(value: &Bound<'_, PyAny>, what: &str, expected: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "{what} must be {expected}, not {}",
        type_name(value)
    ))
}

/// `ValueError` for a name none of `names`: `{what} must be one of 'a', 'b' or 'c', not "x"`.
pub(crate) fn not_one_of<'a>(
    what: &str,
    names: impl IntoIterator<Item = &'a str>,
    name: &str,
) -> PyErr {
    let names = recuo::one_of(names, '\'');
    PyValueError::new_err(format!("{what} must be one of {names}, not {name:?}"))
}

/// The core's value named `name` (`what` names the argument); else [`not_one_of`] the core's
/// names.
pub(crate) fn one_named<T: Named>(what: &str, name: &str) -> PyResult<T> {
    T::from_name(name).ok_or_else(|| not_one_of(what, T::ALL.iter().map(|v| v.name()), name))
}

/// The core's value named by the `str` `value` (`what` names the argument); else
/// `ValueError`: `{what} must be 'a', 'b' or 'c', not "x"` (the core's names).
pub(crate) fn named<T: Named>(value: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    let name = require_str(value, what)?;
    T::from_name(&name).ok_or_else(|| {
        PyValueError::new_err(format!("{what} must be {}, not {name:?}", T::one_of('\'')))
    })
}

/// `None` as `None`, anything else read by `read`.
pub(crate) fn opt<'py, T>(
    value: &Bound<'py, PyAny>,
    read: impl FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
) -> PyResult<Option<T>> {
    if value.is_none() {
        Ok(None)
    } else {
        read(value).map(Some)
    }
}

/// Python's `repr` of a bool.
pub(crate) const fn bool_repr(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// Python's `repr` of `value`, `"None"` for none.
pub(crate) fn opt_repr<T>(py: Python<'_>, value: Option<&Py<T>>) -> PyResult<String> {
    match value {
        Some(v) => Ok(v.bind(py).as_any().repr()?.to_string()),
        None => Ok("None".to_owned()),
    }
}

/// Locks `mutex`: a poisoned lock still holds a valid value (no code here panics midway
/// through changing one).
pub(crate) fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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
    value
        .cast::<PyInt>()
        .map_err(|_| must_be(value, what, "an int"))
}

/// A Python `bool` (not an int, not any truthy object).
pub(crate) fn require_bool(value: &Bound<'_, PyAny>, what: &str) -> PyResult<bool> {
    value
        .cast::<PyBool>()
        .map(|b| b.is_true())
        .map_err(|_| must_be(value, what, "a bool"))
}

/// A Python `str`, as text. A `str` that is not valid Unicode (lone surrogates) is read with
/// each surrogate replaced by U+FFFD.
pub(crate) fn require_str<'a>(value: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, str>> {
    value
        .cast::<PyString>()
        .map(|s| s.to_string_lossy())
        .map_err(|_| must_be(value, what, "a str"))
}

/// A Python `str`, as an owned `String` (read by [`require_str`]).
pub(crate) fn string_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    require_str(value, what).map(Cow::into_owned)
}

/// An int argument, as a u64 when it fits, or whether it is negative or too large.
pub(crate) enum Int {
    Fits(u64),
    Negative,
    TooLarge,
}

/// An int in `range` that fits in a `T` (`what` names it); else `ValueError`: `{what} {rule},
/// not {value}`.
pub(crate) fn int_in<T: TryFrom<u64> + PartialOrd>(
    value: &Bound<'_, PyAny>,
    what: &str,
    range: std::ops::RangeInclusive<T>,
    rule: &str,
) -> PyResult<T> {
    match int_arg(value, what)? {
        Int::Fits(n) => T::try_from(n).ok().filter(|n| range.contains(n)),
        _ => None,
    }
    .ok_or_else(|| PyValueError::new_err(format!("{what} {rule}, not {value}")))
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

/// A duration in whole milliseconds: an int from 0 to 2^64 − 1.
pub(crate) fn ms_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    let refused = match int_arg(value, what)? {
        Int::Fits(ms) => return Ok(ms),
        Int::Negative => recuo::ConfigError::NegativeDuration,
        Int::TooLarge => recuo::ConfigError::DurationTooLarge,
    };
    Err(config_error(value.py(), refused))
}

/// A duration in seconds, as the float the core's `units::ms_from_secs_f64` checks: an int or
/// a float (not a bool). An int too large for a float becomes ±infinity, so the core refuses
/// it for what it is (negative, or too large).
pub(crate) fn secs_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    if value.is_instance_of::<PyFloat>() {
        return value.extract::<f64>();
    }
    let int = require_int(value, what)
        .map_err(|_| must_be(value, what, "a number of seconds (int or float)"))?;
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

readers! {
    /// `tentativas`: see [`count_arg`].
    pub(crate) fn tentativas_arg -> u32 = count_arg("tentativas");
    pub(crate) fn base_ms_arg -> u64 = ms_arg("base_ms");
    pub(crate) fn cap_ms_arg -> u64 = ms_arg("cap_ms");
    pub(crate) fn base_arg -> f64 = secs_arg("base");
    pub(crate) fn maximo_arg -> f64 = secs_arg("maximo");
    /// An optional duration in seconds (`None`: absent), as whole milliseconds.
    pub(crate) fn prazo_arg -> Option<u64> = secs_to_ms("prazo") or None;
    pub(crate) fn deadline_arg -> Option<u64> = secs_to_ms("deadline") or None;
    pub(crate) fn latency_arg -> f64 = secs_arg("latency");
    pub(crate) fn elapsed_ms_arg -> u64 = u64_arg("elapsed_ms");
    pub(crate) fn total_ms_arg -> u64 = u64_arg("total_ms");
    pub(crate) fn success_arg -> bool = require_bool("success");
    pub(crate) fn unbounded_arg -> bool = require_bool("unbounded");
    /// A reading of the caller's monotonic clock in milliseconds: an int from 0 to 2^64 − 1.
    pub(crate) fn mono_ms_arg -> u64 = clock_arg("now_ms");
    /// `method`: a str (any method; those recuo does not know are not idempotent).
    pub(crate) fn method_arg -> String = string_arg("method");
    pub(crate) fn header_arg -> String = string_arg("idempotency_header");
    /// `url`: a `str` or `bytes`, read by [`url_text`].
    pub(crate) fn url_arg -> String = url_text("url");
    /// A jitter seed: `None` (seed from the operating system) or an int from 0 to 2^64 − 1.
    pub(crate) fn seed_arg -> Option<u64> = u64_arg("seed") or None;
    pub(crate) fn opt_delay_ms_arg -> Option<u64> = u64_arg("delay_ms") or None;
    pub(crate) fn content_type_arg -> Option<String> = string_arg("expected_content_type") or None;
    /// `send_keys`: `None`, or a bool.
    pub(crate) fn send_keys_arg -> Option<bool> = require_bool("idempotency_keys") or None;
}

/// An int from 0 to 2^64 − 1 (`what` names it); else `ValueError` naming it as `said`.
fn u64_saying(value: &Bound<'_, PyAny>, what: &str, said: impl std::fmt::Display) -> PyResult<u64> {
    match int_arg(value, what)? {
        Int::Fits(n) => Ok(n),
        Int::Negative | Int::TooLarge => Err(PyValueError::new_err(format!(
            "{said} must be between 0 and 2**64 - 1"
        ))),
    }
}

/// An int from 0 to 2^64 − 1 (`what` names it): a count, a seed.
pub(crate) fn u64_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    u64_saying(value, what, what)
}

/// A reading of a monotonic clock (`what` names it): an int from 0 to 2^64 − 1.
pub(crate) fn clock_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    u64_saying(
        value,
        what,
        format_args!("{what} (a monotonic clock reading)"),
    )
}

/// An int that fits in 64 signed bits (`what` names it, `note` says what it counts); else
/// `ValueError`.
pub(crate) fn i64_arg(value: &Bound<'_, PyAny>, what: &str, note: &str) -> PyResult<i64> {
    require_int(value, what)?.extract::<i64>().map_err(|_| {
        PyValueError::new_err(format!("{what} must be between -2**63 and 2**63 - 1{note}"))
    })
}

readers! {
    /// `now_ms`: `None` (the system clock, read here, at the edge) or an int of milliseconds
    /// since the Unix epoch that fits in 64 signed bits.
    pub(crate) fn now_ms_arg -> Option<i64> = i64_arg("now_ms", " (ms since 1970)") or None;
}

/// A callable argument, or `TypeError`.
pub(crate) fn require_callable(value: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    if value.is_callable() {
        Ok(())
    } else {
        Err(must_be(value, what, "callable"))
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

/// Header bytes as text: UTF-8 when they are valid UTF-8, else ISO-8859-1 (one character per
/// byte), as `httpx` decodes headers. Never an error, never a byte lost or left raw; ASCII
/// — everything a rule of the core reads — is the same either way.
pub(crate) fn header_bytes_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        // One character per byte (ISO-8859-1, HTTP's historical header charset): no byte is
        // lost, and non-ASCII bytes stay non-ASCII for the core to refuse.
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// Text given as a `str` (lone surrogates become U+FFFD) or as `bytes` (read by `bytes_text`);
/// `what` names the argument.
fn str_or_bytes(
    value: &Bound<'_, PyAny>,
    what: &str,
    bytes_text: fn(&[u8]) -> String,
) -> PyResult<String> {
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text.to_string_lossy().into_owned());
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(bytes_text(bytes.as_bytes()));
    }
    Err(must_be(value, what, "str or bytes"))
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
    str_or_bytes(value, what, url_bytes_text)
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

/// The transport kind named `name`, or `ValueError` (`TypeError` for a non-str).
pub(crate) fn transport_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Transport> {
    one_named(what, &require_str(value, what)?)
}

/// The cause named `name` (`what` names the argument), `success` among them only when
/// `success` ([`Cause::named`]); else `ValueError` listing them.
pub(crate) fn cause_named(name: &str, what: &str, success: bool) -> PyResult<Cause> {
    Cause::named_by(name, success)
        .ok_or_else(|| not_one_of(what, Cause::named(success).map(Cause::name), name))
}

/// An outcome given as a `status` (read by `status_of`) or as a transport failure `error`
/// (`None`s and absent arguments alike left out): `None` for neither, `TypeError(both)` for
/// both.
pub(crate) fn outcome_arg(
    status: Option<&Bound<'_, PyAny>>,
    error: Option<&Bound<'_, PyAny>>,
    status_of: fn(&Bound<'_, PyAny>) -> PyResult<u16>,
    both: &'static str,
) -> PyResult<Option<Outcome>> {
    match (
        status.filter(|s| !s.is_none()),
        error.filter(|e| !e.is_none()),
    ) {
        (Some(s), None) => Ok(Some(Outcome::Status(status_of(s)?))),
        (None, Some(e)) => Ok(Some(Outcome::Transport(transport_arg(e, "error")?))),
        (None, None) => Ok(None),
        (Some(_), Some(_)) => Err(PyTypeError::new_err(both)),
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
    let wrong = || {
        must_be(
            value,
            "headers",
            "a mapping or an iterable of (name, value) pairs",
        )
    };
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() {
        return Err(wrong());
    }
    let py = value.py();
    let pairs = match value.getattr_opt(pyo3::intern!(py, "items"))? {
        Some(items) if items.is_callable() => items.call0()?,
        _ => value.clone(),
    };
    let iter = pairs.try_iter().map_err(|_| wrong())?;
    let mut headers = Vec::new();
    for pair in iter {
        let pair = pair?;
        let bad_pair = || must_be(&pair, "each header", "a (name, value) pair");
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
            str_or_bytes(name, "a header name", header_bytes_text)?,
            str_or_bytes(value, "a header value", header_bytes_text)?,
        ));
    }
    Ok(headers)
}
