//! `recuo._recuo`: the Python face of recuo, a thin layer over the `recuo` core.
//!
//! Every function here converts Python arguments to the core's types, calls the core and
//! converts the answer back; no retry rule lives in this crate. Every loop is the core's
//! operation machine (`recuo::Operation`): the blocking loops ([`guide::com_retry`], the
//! synchronous `recuo.retry` and each operation of `recuo.run_batch`) drive it with Python
//! callables as their effects ([`driver`]); the asyncio loop (in
//! `recuo/_retry.py`) does the machine's steps itself through `recuo.Operation` ([`machine`]);
//! `run_batch` takes its operations from the core's `BatchQueue` ([`batch`], [`queue`]).
//!
//! The modules, each using only modules listed before it (no import circle):
//!
//! * [`errors`] — `recuo.ConfigError`, `PlanError`, `SharedFileError`, `QueueFullError`,
//!   `InternalError`; [`sleep`] — the blocking waits that answer Ctrl-C; [`context`] — the
//!   two context variables every loop shares; [`call`] — what a blocking loop runs (the
//!   operation, the callables of its effects, where it runs).
//! * [`args`] — Python arguments → core types, core errors → Python exceptions.
//! * [`values`] — the core's `Report`, `Stats`, `Plan` and `WhoAnswered` as the dataclasses
//!   generated from their declarations (`recuo/_values.py`), and back.
//! * [`policy`] — `recuo.Policy`; [`record`] — the machine's records forwarded to the
//!   `logging` module, `recuo.AttemptRecord` and `recuo.ResultRecord`; [`limits`] —
//!   `recuo.Regulator`, `ConcurrencyLimit` and `Permit`, `RetryBudget`, `Gate`,
//!   `monotonic_ns`; [`redact`] — `recuo.redact_url`, `redact_url_detailed`,
//!   `redact_headers`; [`origin`] — `recuo.who_answered`.
//! * [`attempt`] — `recuo.Attempt` and `IdempotencyKey`; [`http`] — the core's rules of one
//!   HTTP request (its plan, how it ends, the give-up's message) for the adapters; [`plan`]
//!   — `recuo.plan`.
//! * [`current`] — the attempt being made (`recuo.current_attempt()`); [`verdict`] —
//!   `recuo.classify` and `recuo.Verdict`.
//! * [`pool`] — the attempt pool a loop draws from, shared by nested loops; [`stats`] —
//!   `recuo.StatsRecorder`.
//! * [`machine`] — `recuo.Operation` and `Step`.
//! * [`queue`] — `recuo.BatchQueue` and `Next`; [`scoped`] — the asyncio loop's and the HTTP
//!   adapters' machine, made in this context's attempt pool.
//! * [`first`] — the first attempt made before the machine, which starts after it on a
//!   failure (most calls succeed at once).
//! * [`driver`] — the core's blocking loop with Python's effects (a `match` on the machine's
//!   steps, the gate passed by the machine's own gate step, waited in slices).
//! * [`runner`] — the blocking loop of `com_retry`, `recuo.retry` and `recuo.call`;
//!   [`batch`] — `recuo.run_batch` and its report.
//! * [`guide`] — the two guides' functions, `com_retry` and `retry_delay_ms`; `parse_retry_after`,
//!   `backoff_window_ms`; [`retry_loop`] — `recuo.retry`'s and `recuo.call`'s loop as an
//!   object made once (`_Loop`).
//!
//! Bad input is refused before anything runs: a wrong type raises `TypeError`, a value the
//! core refuses raises `recuo.ConfigError` (a `ValueError` carrying the core's stable `code`
//! and `name`), and a value outside every type the core takes raises `ValueError`.
//!
//! No panic crosses into Python: every `#[pyfunction]` and `#[pymethods]` entry point runs
//! inside pyo3's trampoline, which wraps the call in `std::panic::catch_unwind` and turns a
//! panic into `pyo3_runtime.PanicException`. This crate calls Python, but Python never calls
//! back into a Rust closure of ours, so there is no other trampoline to guard. pyo3 makes
//! that exception a `BaseException`, which `except Exception` does not catch; at
//! import, [`errors::internal_error`] makes it a subclass of `recuo.InternalError`, an ordinary
//! `Exception`, so a panic reaches Python as recuo's own internal error.

#![deny(unsafe_code)]
// A Python function takes the arguments its Python signature says, one Rust argument each.
#![allow(clippy::too_many_arguments)]

use pyo3::prelude::*;

use errors::{ConfigError, PlanError, QueueFullError, SharedFileError};

mod args;
mod attempt;
mod batch;
mod call;
mod context;
mod current;
mod driver;
mod errors;
mod first;
mod guide;
mod http;
mod limits;
mod machine;
mod origin;
mod plan;
mod policy;
mod pool;
mod queue;
mod record;
mod redact;
mod retry_loop;
mod runner;
mod scoped;
mod sleep;
mod stats;
mod values;
mod verdict;

/// For recuo's own tests only: panics inside Rust, so that a test can see a panic arrive as
/// ``recuo.InternalError``.
#[pyfunction]
fn _force_panic() {
    panic!("recuo._force_panic: a deliberate panic at the boundary, for a test");
}

/// For the bench only (bench/python): calls ``f()`` once and answers its value — the least an
/// extension function can do around a callable, the floor of any loop's cost per call.
#[pyfunction]
#[pyo3(signature = (f, /))]
fn _call_once(f: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    f.call0().map(Bound::unbind)
}

/// Milliseconds on the monotonic clock of ``monotonic_ns``, rounded down: the one reading
/// every loop tells its machine its instants in (the core's ``monotonic_ms``). Private: the
/// asyncio loop and the HTTP adapters read it.
#[pyfunction]
fn _monotonic_ms() -> u64 {
    recuo::monotonic_ms()
}

/// A wait of ``ns`` nanoseconds in whole milliseconds, rounded up (the core's
/// ``wait_ms_from_ns``). Private: the loop vectors' tests use it.
#[pyfunction]
fn _wait_ms_from_ns(ns: u64) -> u64 {
    recuo::wait_ms_from_ns(ns)
}

/// recuo's native module; import ``recuo`` instead.
#[pymodule]
fn _recuo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", recuo::VERSION)?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("PlanError", py.get_type::<PlanError>())?;
    m.add("SharedFileError", py.get_type::<SharedFileError>())?;
    let queue_full = py.get_type::<QueueFullError>();
    queue_full.setattr("code", 114)?;
    queue_full.setattr("name", "queue_full")?;
    m.add("QueueFullError", queue_full)?;
    m.add("InternalError", errors::internal_error(py)?)?;
    // Set, not added, so that they stay out of `__all__`: for tests only (`_force_panic`,
    // `_call_once`, ...), what the generated value classes (recuo/_values.py,
    // recuo/_faces.py) call, what unpickling a batch's result or report calls, and the
    // private names the Python glue (recuo/_retry.py) uses.
    let private = [
        wrap_pyfunction!(_force_panic, m)?,
        wrap_pyfunction!(_call_once, m)?,
        wrap_pyfunction!(_monotonic_ms, m)?,
        wrap_pyfunction!(record::_set_telemetry, m)?,
        wrap_pyfunction!(record::_telemetry_of, m)?,
        wrap_pyfunction!(record::_instruments, m)?,
        wrap_pyfunction!(_wait_ms_from_ns, m)?,
        wrap_pyfunction!(values::read_value, m)?,
        wrap_pyfunction!(batch::batch_result, m)?,
        wrap_pyfunction!(batch::batch_report, m)?,
        wrap_pyfunction!(values::stats_derived, m)?,
        wrap_pyfunction!(values::stats_merge, m)?,
        wrap_pyfunction!(pool::loop_pool, m)?,
        wrap_pyfunction!(first::asyncio_first_attempt, m)?,
        wrap_pyfunction!(first::operation_after_first, m)?,
        wrap_pyfunction!(scoped::operation_in_context, m)?,
        wrap_pyfunction!(scoped::request_operation, m)?,
        wrap_pyfunction!(http::request_plan, m)?,
        wrap_pyfunction!(http::ending, m)?,
        wrap_pyfunction!(http::message, m)?,
    ];
    for f in private {
        let name = f.getattr(pyo3::intern!(py, "__name__"))?;
        m.setattr(name.cast_into::<pyo3::types::PyString>()?, f)?;
    }
    m.add_class::<policy::PyPolicy>()?;
    m.add_class::<verdict::PyVerdict>()?;
    m.add_class::<attempt::PyAttempt>()?;
    m.add_class::<machine::PyOperation>()?;
    m.add_class::<machine::PyStep>()?;
    m.add_class::<queue::PyBatchQueue>()?;
    m.add_class::<queue::PyNext>()?;
    m.add_class::<attempt::PyIdempotencyKey>()?;
    m.add_class::<limits::PyRegulator>()?;
    // Private, out of `__all__`: what `Regulator._reserve` answers.
    m.setattr("_Reservation", py.get_type::<limits::PyReservation>())?;
    m.add_class::<limits::PyConcurrencyLimit>()?;
    m.add_class::<limits::PyPermit>()?;
    m.add_class::<limits::PyRetryBudget>()?;
    m.add_class::<limits::PyGate>()?;
    m.add_class::<batch::PyBatchReport>()?;
    m.add_class::<batch::PyBatchResult>()?;
    m.add_class::<stats::PyStatsRecorder>()?;
    m.add_class::<record::PyAttemptRecord>()?;
    m.add_class::<record::PyResultRecord>()?;
    m.add_class::<redact::PyRedactedUrl>()?;
    m.add_function(wrap_pyfunction!(guide::com_retry, m)?)?;
    m.add_function(wrap_pyfunction!(guide::retry_delay_ms, m)?)?;
    m.add_function(wrap_pyfunction!(guide::parse_retry_after, m)?)?;
    m.add_function(wrap_pyfunction!(guide::backoff_window_ms, m)?)?;
    m.add_function(wrap_pyfunction!(verdict::classify, m)?)?;
    m.add_function(wrap_pyfunction!(current::current_attempt, m)?)?;
    m.add_function(wrap_pyfunction!(limits::monotonic_ns, m)?)?;
    m.add_function(wrap_pyfunction!(plan::plan, m)?)?;
    m.add_function(wrap_pyfunction!(batch::run_batch, m)?)?;
    m.add_function(wrap_pyfunction!(redact::redact_url, m)?)?;
    m.add_function(wrap_pyfunction!(redact::redact_url_detailed, m)?)?;
    m.add_function(wrap_pyfunction!(redact::redact_headers, m)?)?;
    m.add_function(wrap_pyfunction!(origin::who_answered, m)?)?;
    // The private names the Python glue (recuo/_retry.py) uses: set, not added, so they stay
    // out of `__all__`.
    m.setattr("_AttemptPool", py.get_type::<pool::PyAttemptPool>())?;
    // How often a wait that cannot block looks at a full limit again, ms (the core's).
    m.setattr("_GATE_POLL_MS", recuo::GATE_POLL_MS)?;
    m.setattr("_Loop", py.get_type::<retry_loop::PyLoop>())?;
    // `ContextVar[_AttemptPool | None]` and `ContextVar[Attempt | None]`.
    m.setattr("_attempt_pool", context::vars(py)?.pool.var.bind(py))?;
    m.setattr("_current_attempt", context::vars(py)?.attempt.var.bind(py))?;
    Ok(())
}
