//! `recuo._recuo`: the Python face of recuo, a thin layer over the `recuo` core.
//!
//! Every function here converts Python arguments to the core's types, calls the core and
//! converts the answer back; no retry rule lives in this crate. Every loop is the core's
//! operation machine (`recuo::Operation`): the blocking loops ([`guide::com_retry`], the
//! synchronous `recuo.retry` and each operation of `recuo.run_batch`) are the core's `drive`
//! with Python callables as its effects ([`runner`]); the asyncio loop (in
//! `recuo/_retry.py`) does the machine's steps itself through `recuo.Operation` ([`machine`]);
//! `run_batch` takes its operations from the core's `BatchQueue` ([`batch`], [`queue`]).
//!
//! * [`args`] — Python arguments → core types, core errors → Python exceptions.
//! * [`guide`] — guide A's `com_retry`, guide B's `retry_delay_ms`, `parse_retry_after`,
//!   `backoff_window_ms`.
//! * [`policy`] — `recuo.Policy`.
//! * [`verdict`] — `recuo.classify` and `recuo.Verdict`.
//! * [`machine`] — `recuo.Operation`, `Step`, `Report`, `Attempt`, `IdempotencyKey`.
//! * [`queue`] — `recuo.BatchQueue` and `Next`.
//! * [`runner`] — the blocking loop, the per-context attempt pool and current attempt, and
//!   the waits at the gate.
//! * [`limits`] — `recuo.Regulator`, `ConcurrencyLimit` and `Permit`, `RetryBudget`, `Gate`,
//!   `monotonic_ns`.
//! * [`plan`] — `recuo.plan` and `recuo.Plan`.
//! * [`batch`] — `recuo.run_batch` and its report.
//! * [`record`] — the machine's records forwarded to the `logging` module, `recuo.AttemptRecord`
//!   and `recuo.ResultRecord`; [`redact`] — `recuo.redact_url`, `redact_url_detailed`,
//!   `redact_headers`; [`origin`] — `recuo.who_answered`; [`stats`] — `recuo.Stats` and
//!   `recuo.StatsRecorder`.
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

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod args;
mod batch;
mod guide;
mod limits;
mod machine;
mod origin;
mod plan;
mod policy;
mod queue;
mod record;
mod redact;
mod runner;
mod stats;
mod verdict;

pyo3::create_exception!(
    recuo,
    ConfigError,
    PyValueError,
    "A configuration recuo refuses: attempts below 1, a negative or NaN duration, a maximum\n\
     below the base, an idempotency header name that is not an HTTP token.\n\n\
     A subclass of ValueError. ``code`` is the core's stable number for the error (the same in\n\
     C, Python and PHP) and ``name`` its stable lower-case name (``\"zero_attempts\"``,\n\
     ``\"negative_duration\"``, ``\"not_a_number\"``, ``\"duration_too_large\"``,\n\
     ``\"cap_below_base\"``, ``\"invalid_header_name\"``); the message is for humans."
);

pyo3::create_exception!(
    recuo,
    PlanError,
    PyValueError,
    "A plan recuo cannot make (``recuo.plan``): the target rate is above the allowance, the\n\
     retry fraction is not in [0, 1), or the latency is negative or not a number.\n\n\
     A subclass of ValueError. ``name`` is its stable lower-case name\n\
     (``\"target_above_allowance\"``, ``\"invalid_retry_fraction\"``, ``\"invalid_latency\"``);\n\
     the message is the core's, for humans."
);

pyo3::create_exception!(
    recuo,
    SharedFileError,
    PyValueError,
    "A shared state file recuo refuses to use: it was set up with other settings (another\n\
     rate or burst, another budget), holds another kind of recuo state, or has the wrong\n\
     size; or a Redis key set up with another rate or burst. Processes sharing it would\n\
     disagree about the allowance, so the second opener is refused with the settings in\n\
     force and its own. A subclass of ValueError; a file that cannot be opened or mapped at\n\
     all raises OSError instead, and a Redis server that cannot be reached ConnectionError."
);

/// recuo's native module; import ``recuo`` instead.
#[pymodule]
fn _recuo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", recuo::VERSION)?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("PlanError", py.get_type::<PlanError>())?;
    m.add("SharedFileError", py.get_type::<SharedFileError>())?;
    m.add_class::<guide::PyRetryAfter>()?;
    m.add_class::<policy::PyPolicy>()?;
    m.add_class::<verdict::PyVerdict>()?;
    m.add_class::<machine::PyAttempt>()?;
    m.add_class::<machine::PyOperation>()?;
    m.add_class::<machine::PyStep>()?;
    m.add_class::<queue::PyBatchQueue>()?;
    m.add_class::<queue::PyNext>()?;
    m.add_class::<machine::PyReport>()?;
    m.add_class::<machine::PyIdempotencyKey>()?;
    m.add_class::<limits::PyRegulator>()?;
    m.add_class::<limits::PyConcurrencyLimit>()?;
    m.add_class::<limits::PyPermit>()?;
    m.add_class::<limits::PyRetryBudget>()?;
    m.add_class::<limits::PyGate>()?;
    m.add_class::<plan::PyPlan>()?;
    m.add_class::<batch::PyBatchReport>()?;
    m.add_class::<batch::PyBatchResult>()?;
    m.add_class::<stats::PyStats>()?;
    m.add_class::<stats::PyStatsRecorder>()?;
    m.add_class::<record::PyAttemptRecord>()?;
    m.add_class::<record::PyResultRecord>()?;
    m.add_class::<redact::PyRedactedUrl>()?;
    m.add_class::<origin::PyWhoAnswered>()?;
    m.add_function(wrap_pyfunction!(guide::com_retry, m)?)?;
    m.add_function(wrap_pyfunction!(guide::retry_delay_ms, m)?)?;
    m.add_function(wrap_pyfunction!(guide::parse_retry_after, m)?)?;
    m.add_function(wrap_pyfunction!(guide::backoff_window_ms, m)?)?;
    m.add_function(wrap_pyfunction!(verdict::classify, m)?)?;
    m.add_function(wrap_pyfunction!(runner::current_attempt, m)?)?;
    m.add_function(wrap_pyfunction!(limits::monotonic_ns, m)?)?;
    m.add_function(wrap_pyfunction!(plan::plan, m)?)?;
    m.add_function(wrap_pyfunction!(batch::run_batch, m)?)?;
    m.add_function(wrap_pyfunction!(redact::redact_url, m)?)?;
    m.add_function(wrap_pyfunction!(redact::redact_url_detailed, m)?)?;
    m.add_function(wrap_pyfunction!(redact::redact_headers, m)?)?;
    m.add_function(wrap_pyfunction!(origin::who_answered, m)?)?;
    // The private names the Python glue (recuo/_retry.py) uses: set, not added, so they stay
    // out of `__all__`.
    m.setattr("_AttemptPool", py.get_type::<runner::PyAttemptPool>())?;
    m.setattr("_run", wrap_pyfunction!(runner::run, m)?)?;
    m.setattr(
        "_operation_in_context",
        wrap_pyfunction!(runner::operation_in_context, m)?,
    )?;
    m.setattr("_attempt_pool", runner::pool_var(py)?)?;
    m.setattr("_current_attempt", runner::attempt_var(py)?)?;
    Ok(())
}
