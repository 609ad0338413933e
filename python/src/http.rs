//! The core's rules of one HTTP request (`recuo::http`) for the adapters and their tests:
//! the conversions of a last attempt and of a style, the request's plan made with its
//! operation (`_request_operation`), and the pure functions the shared vectors check
//! (`_request_plan`, `_ending`, `_give_up_message`). Nothing here decides: each answer is
//! the core's.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use recuo::http::{give_up_message, Last, RequestPlan, Style};
use recuo::{Policy, Transport};

use crate::args::{must_be, named, readers, send_keys_arg};
use crate::policy::PyPolicy;
use crate::record::give_up_reason;

/// What an HTTP attempt came to, for `ending` and `give_up_message`: `None` (no attempt
/// made), a status, a transport failure's kind, or `"late"` (cut by the deadline).
pub(crate) fn last_arg(value: &Bound<'_, PyAny>) -> PyResult<Last> {
    if value.is_none() {
        return Ok(Last::Nothing);
    }
    if let Ok(s) = value.cast::<PyString>() {
        let name = s.to_str()?;
        if name == "late" {
            return Ok(Last::Late);
        }
        return Transport::from_name(name)
            .map(Last::Transport)
            .ok_or_else(|| {
                let kinds = Transport::ALL.map(|t| format!("'{}'", t.name()));
                PyValueError::new_err(format!(
                    "last must be a status, a transport kind ({}), 'late' or None, not {name:?}",
                    kinds.join(", ")
                ))
            });
    }
    let is_bool = value.is_instance_of::<pyo3::types::PyBool>();
    match value.extract::<u16>() {
        Ok(status) if !is_bool => Ok(Last::Status(status)),
        Err(_) if value.is_instance_of::<pyo3::types::PyInt>() => Err(PyValueError::new_err(
            format!("a status must be from 0 to 65535, not {value}"),
        )),
        _ => Err(must_be(value, "last", "an int, a str or None")),
    }
}

readers! {
    /// `"client"` (a client adapter) or `"guide"` (`buscar_com_retry`).
    pub(crate) fn style_arg -> Style = named("style");
}

/// Whether one of `headers`' names (a mapping or an iterable of names, `str` or `bytes`) is
/// the policy's idempotency header, without regard to ASCII case.
pub(crate) fn carries_key(policy: &Policy, headers: &Bound<'_, PyAny>) -> PyResult<bool> {
    if headers.is_none() {
        return Ok(false);
    }
    let name = policy.idempotency_header();
    for item in headers.try_iter()? {
        let item = item?;
        let found = if let Ok(s) = item.cast::<PyString>() {
            s.to_str()?.eq_ignore_ascii_case(name)
        } else if let Ok(b) = item.cast::<PyBytes>() {
            b.as_bytes().eq_ignore_ascii_case(name.as_bytes())
        } else {
            false
        };
        if found {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The plan of a ``method`` request under ``policy``, as the core makes it: ``(key,
/// idempotent)``, ``key`` being ``"none"``, ``"caller"`` or ``"recuo"``. ``callers_key``:
/// the request carries the caller's own key; ``send_keys``: the caller's choice of recuo's
/// keys (``None``: for methods that are not idempotent). Private: for the tests.
#[pyfunction]
#[pyo3(name = "_request_plan", signature = (policy, method, callers_key, send_keys, /))]
pub(crate) fn request_plan(
    policy: PyRef<'_, PyPolicy>,
    method: &str,
    callers_key: bool,
    #[pyo3(from_py_with = send_keys_arg)] send_keys: Option<bool>,
) -> (&'static str, bool) {
    let plan = RequestPlan::new(&policy.0, method, callers_key, send_keys);
    (plan.key().name(), plan.idempotent())
}

/// How an operation that ended for ``reason`` (``None``: success) surfaces, its last attempt
/// having come to ``last``: ``"response"``, ``"error"`` or ``"give_up"``. Private: for the
/// tests (the adapters ask ``Operation.ending``).
#[pyfunction]
#[pyo3(name = "_ending", signature = (style, reason, last, /))]
pub(crate) fn ending(
    #[pyo3(from_py_with = style_arg)] style: Style,
    reason: Option<&str>,
    #[pyo3(from_py_with = last_arg)] last: Last,
) -> PyResult<&'static str> {
    let reason = reason.map(give_up_reason).transpose()?;
    Ok(recuo::http::ending(style, reason, last).name())
}

/// The give-up's one message. Private: for the tests (the adapters ask
/// ``Operation.give_up_message``).
#[pyfunction]
#[pyo3(name = "_give_up_message", signature = (reason, attempts, last, retry_in_ms, /))]
pub(crate) fn message(
    reason: &str,
    attempts: u32,
    #[pyo3(from_py_with = last_arg)] last: Last,
    retry_in_ms: Option<u64>,
) -> PyResult<String> {
    Ok(give_up_message(
        give_up_reason(reason)?,
        attempts,
        last,
        retry_in_ms,
    ))
}

/// The plan of a request: the caller's key found among `headers`, and `send_keys`.
pub(crate) fn plan_of(
    policy: &Policy,
    method: &str,
    headers: &Bound<'_, PyAny>,
    send_keys: &Bound<'_, PyAny>,
) -> PyResult<RequestPlan> {
    let callers = carries_key(policy, headers)?;
    Ok(RequestPlan::new(
        policy,
        method,
        callers,
        send_keys_arg(send_keys)?,
    ))
}
