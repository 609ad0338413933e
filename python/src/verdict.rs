//! Classification for Python: `recuo.classify` and `recuo.Verdict`.
//!
//! The verdict is the core's `Policy::classify`; this module reads the outcome, the request
//! and the headers from Python values and answers the core's verdict as a `Verdict`. A
//! verdict made by `classify` also keeps what the records need of the response it judged —
//! the outcome, the request id and the wait headers, as the core's record keeps them — so a
//! loop's record of the attempt shows the status without the caller saying it twice.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};

use recuo::{Outcome, Request, ServerWait, Verdict};

use crate::args::{
    cause_named, headers_arg, method_arg, methods, must_be, now_ms_arg, outcome_arg, require_int,
    unbounded_arg,
};
use crate::attempt::PyIdempotencyKey;
use crate::policy::PyPolicy;
use recuo::Seen;

/// What to do about one outcome: ``verdict`` is ``"success"``, ``"retry"`` or
/// ``"give_up"``; ``reason`` names the cause (``"success"``, ``"rate_limited"``,
/// ``"unavailable"``, ``"server_error"``, ``"connect"``, ``"timeout"``, ``"reset"``,
/// ``"other"``, ``"not_idempotent"``, ``"permanent"`` or ``"tls"``); ``wait_ms`` is the
/// server's finite wait for a retry (``None`` when it gave none, or an unbounded one, which
/// ``wait_unbounded`` says). Made by ``recuo.classify`` or by ``Verdict.retry``,
/// ``Verdict.give_up`` and ``Verdict.success``. Immutable, comparable and hashable.
///
/// A verdict made by ``recuo.classify`` also keeps, for the records of a retry loop, the
/// status or transport failure it judged, the request id and the wait headers (nothing else
/// of the headers). Equality and hashing look at the verdict alone.
#[pyclass(name = "Verdict", module = "recuo", frozen, eq, hash)]
#[derive(Clone)]
pub(crate) struct PyVerdict(pub(crate) Verdict, pub(crate) Option<Arc<Seen>>);

impl PyVerdict {
    /// A verdict with nothing seen of a response.
    pub(crate) fn bare(verdict: Verdict) -> Self {
        PyVerdict(verdict, None)
    }
}

impl PartialEq for PyVerdict {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for PyVerdict {}

impl Hash for PyVerdict {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

methods!({
    impl PyVerdict {
        /// ``"success"``, ``"retry"`` or ``"give_up"``.
        getter!(verdict(self) -> &'static str = self.0.name());
        /// The cause's name.
        getter!(reason(self) -> &'static str = self.0.cause().name());
        /// The server's finite wait in milliseconds, or ``None``.
        getter!(wait_ms(self) -> Option<u64> = self.0.server_wait().and_then(ServerWait::ms));
        /// Whether the server asked for a wait too long to count (no retry can honour it).
        getter!(wait_unbounded(self) -> bool = self.0.server_wait() == Some(ServerWait::Unbounded));
        /// Done: nothing to retry.
        preset!(success = PyVerdict::bare(Verdict::Success));

        /// A retry, after at least the server's wait when there is one: ``wait_ms``
        /// milliseconds, or an unbounded wait (``unbounded=True``, which a loop answers by giving
        /// up with ``"wait_exceeds_deadline"``). ``reason`` names the cause.
        #[staticmethod]
        #[pyo3(signature = (wait_ms = None, *, unbounded = false, reason = "server_error"))]
        fn retry(
            wait_ms: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = unbounded_arg)] unbounded: bool,
            reason: &str,
        ) -> PyResult<Self> {
            // A retry or a give-up may name any cause but `success`.
            let cause = cause_named(reason, "reason", false)?;
            let wait = match (wait_ms.filter(|w| !w.is_none()), unbounded) {
                (Some(_), true) => {
                    return Err(PyValueError::new_err(
                        "a wait is either wait_ms or unbounded, not both",
                    ))
                }
                (Some(ms), false) => Some(ServerWait::Ms(crate::args::ms_arg(ms, "wait_ms")?)),
                (None, true) => Some(ServerWait::Unbounded),
                (None, false) => None,
            };
            Ok(PyVerdict::bare(Verdict::Retry {
                cause,
                server_wait: wait,
            }))
        }

        /// Not worth another attempt; ``reason`` names the cause.
        #[staticmethod]
        #[pyo3(signature = (reason = "permanent"))]
        fn give_up(reason: &str) -> PyResult<Self> {
            let cause = cause_named(reason, "reason", false)?;
            Ok(PyVerdict::bare(Verdict::GiveUp { cause }))
        }

        /// The same verdict, reached on a response of ``status`` with ``headers``: what a loop's
        /// record of the attempt shows it received when the attempt itself did not say, as for a
        /// verdict of ``recuo.classify``. Private: the loop vectors' tests use it.
        #[pyo3(signature = (status, headers = None))]
        fn _with_response(
            &self,
            status: &Bound<'_, PyAny>,
            headers: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let status = crate::record::record_status_arg(status)?;
            let headers = headers_arg(headers)?;
            Ok(PyVerdict(
                self.0,
                Some(Arc::new(Seen::new(Outcome::Status(status), &headers))),
            ))
        }

        fn __repr__(&self) -> String {
            format!(
                "Verdict(verdict='{}', reason='{}', wait_ms={}, wait_unbounded={})",
                self.verdict(),
                self.reason(),
                self.wait_ms()
                    .map_or_else(|| "None".to_owned(), |ms| ms.to_string()),
                crate::args::bool_repr(self.wait_unbounded()),
            )
        }
    }
});

/// Whether the request carries an idempotency key: a bool, ``None`` (no), a non-empty str or
/// an ``IdempotencyKey`` (yes).
fn has_key_arg(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    if value.is_none() {
        return Ok(false);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(b.is_true());
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(!s.is_empty()?);
    }
    if value.is_instance_of::<PyIdempotencyKey>() {
        return Ok(true);
    }
    Err(must_be(
        value,
        "idempotency_key",
        "a bool, a str, an IdempotencyKey or None",
    ))
}

/// The status code given: an int. One outside 0–65535 is passed on as 65535, which the
/// core, like any code outside 100–599, treats as 500.
fn status_arg(value: &Bound<'_, PyAny>) -> PyResult<u16> {
    Ok(require_int(value, "status")?
        .extract::<u16>()
        .unwrap_or(u16::MAX))
}

/// The verdict on one outcome: an HTTP ``status`` (an int) or a transport
/// ``error`` (``"connect"``, ``"tls"``, ``"timeout"``, ``"reset"`` or ``"other"``) — exactly
/// one of the two.
///
/// ``method`` and ``idempotency_key`` (whether the request carried one: a bool, or the key
/// itself) decide whether repeating the request is safe. ``headers`` (a mapping or a list of
/// ``(name, value)`` pairs) give the server's wait (Retry-After, RateLimit, RateLimit-Reset,
/// X-RateLimit-Reset) as of ``now_ms`` (ms since the Unix epoch; ``None``: the system
/// clock). ``policy`` supplies the classification sets (default: recuo's table).
///
/// Raises ``TypeError`` when neither or both of ``status`` and ``error`` are given or an
/// argument has the wrong type, ``ValueError`` for an unknown ``error``.
#[pyfunction]
#[pyo3(
    signature = (status = None, *, error = None, method = "GET".to_owned(), idempotency_key = false, headers = None, now_ms = None, policy = None),
    text_signature = "(status=None, *, error=None, method='GET', idempotency_key=False, headers=None, now_ms=None, policy=None)"
)]
pub(crate) fn classify(
    status: Option<&Bound<'_, PyAny>>,
    error: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = method_arg)] method: String,
    #[pyo3(from_py_with = has_key_arg)] idempotency_key: bool,
    headers: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = now_ms_arg)] now_ms: Option<i64>,
    policy: Option<PyRef<'_, PyPolicy>>,
) -> PyResult<PyVerdict> {
    let both = "classify() takes a status or an error, not both";
    let outcome = outcome_arg(status, error, status_arg, both)?.ok_or_else(|| {
        PyTypeError::new_err("classify() needs a status (an int) or an error (a transport kind)")
    })?;
    let headers = headers_arg(headers)?;
    let request = Request {
        method: &method,
        has_idempotency_key: idempotency_key,
    };
    let now = now_ms.unwrap_or_else(recuo::unix_now_ms);
    let guide_a = recuo::Policy::guide_a();
    let policy = policy.as_ref().map_or(&guide_a, |p| &p.0);
    let verdict = policy.classify(outcome, request, &headers, now);
    Ok(PyVerdict(
        verdict,
        Some(Arc::new(Seen::new(outcome, &headers))),
    ))
}
