//! Batch stats for Python: `recuo.StatsRecorder`, the core's
//! [`recuo::StatsRecorder`] — one timeline recorded from any number of threads — whose
//! snapshots are `recuo.Stats`, the core's [`recuo::Stats`] as its generated dataclass
//! ([`crate::values`]). `recuo.run_batch` answers its stats as a `recuo.Stats`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use recuo::{monotonic_ns, Cause, StatsRecorder};

use crate::args::{cause_named, count_arg, int_arg, must_be, require_str, success_arg, Int};
use crate::limits::opt_now_ns_arg;
use crate::values::instance;
use crate::verdict::PyVerdict;

/// `cause`: a `Verdict` (its cause) or a cause's name, as `Verdict.reason` spells it.
fn cause_arg(value: &Bound<'_, PyAny>) -> PyResult<Cause> {
    if let Ok(v) = value.cast::<PyVerdict>() {
        return Ok(v.get().0.cause());
    }
    let name = require_str(value, "cause")
        .map_err(|_| must_be(value, "cause", "a str or a recuo.Verdict"))?;
    // The cause names ``StatsRecorder.saw`` takes: a ``Verdict``'s reasons.
    cause_named(&name, "cause", true)
}

fn attempt_number_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    if let Int::Negative = int_arg(value, "attempt")? {
        return Err(PyValueError::new_err("attempt must not be negative"));
    }
    count_arg(value, "attempt")
}

/// Records a batch's stats from any number of threads, in one timeline (the core's
/// ``StatsRecorder``, behind a lock). ``start(attempt)`` when an attempt (numbered from 0)
/// starts and ``end()`` when it is over; ``saw(cause)`` for the verdict on a failure (429s
/// and 503s are counted); ``finished(success)`` when an operation ends; ``not_started()`` for
/// one never started; ``snapshot()`` answers the ``Stats`` so far.
///
/// ``start`` reads ``recuo.monotonic_ns()`` unless given ``now_ns`` (a reading of a clock
/// that does not go back, for tests). Thread-safe: share one recorder, or give each thread
/// its own and ``merge`` their snapshots.
#[pyclass(name = "StatsRecorder", module = "recuo", frozen)]
pub(crate) struct PyStatsRecorder(pub(crate) StatsRecorder);

#[pymethods]
impl PyStatsRecorder {
    #[new]
    fn new() -> Self {
        PyStatsRecorder(StatsRecorder::new())
    }

    /// Attempt number ``attempt`` (0: a first attempt; more: a retry) starts now, or at
    /// ``now_ns`` on the monotonic clock (``recuo.monotonic_ns()``).
    ///
    /// Call ``end()`` when it is over: the attempts started and not ended are the ones in
    /// flight. Starts must be recorded on a clock that does not go back.
    #[pyo3(signature = (attempt, now_ns = None))]
    fn start(
        &self,
        #[pyo3(from_py_with = attempt_number_arg)] attempt: u32,
        #[pyo3(from_py_with = opt_now_ns_arg)] now_ns: Option<u64>,
    ) {
        self.0.start(attempt, now_ns.unwrap_or_else(monotonic_ns));
    }

    /// The attempt started last by this caller is over.
    fn end(&self) {
        self.0.end();
    }

    /// A failure was judged ``cause``: a ``Verdict`` or its ``reason``.
    ///
    /// ``"rate_limited"`` (a 429, or a 403 whose quota is spent) counts as ``throttled``,
    /// ``"unavailable"`` (a 503) as ``unavailable``; the other causes count nothing.
    /// ``ValueError`` for an unknown name.
    fn saw(&self, #[pyo3(from_py_with = cause_arg)] cause: Cause) {
        self.0.saw(cause);
    }

    /// An operation ended: it succeeded (``True``) or gave up (``False``).
    fn finished(&self, #[pyo3(from_py_with = success_arg)] success: bool) {
        self.0.finished(success);
    }

    /// An operation was never started.
    fn not_started(&self) {
        self.0.not_started();
    }

    /// The stats so far.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        instance(py, "Stats", &self.0.snapshot())
    }

    fn __repr__(&self) -> String {
        let s = self.0.snapshot();
        format!(
            "<recuo.StatsRecorder: {} starts, {} succeeded, {} gave up>",
            s.starts(),
            s.successes,
            s.failures
        )
    }
}
