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
use pyo3::types::PyList;

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
mod _recuo {
    // Every class and function, the private ones (a `_` first: for tests only, such as
    // `_force_panic` and `_call_once`; what the generated value classes (recuo/_values.py,
    // recuo/_faces.py) call; what unpickling a batch's result or report calls; what
    // `Regulator._reserve` answers; the private names the Python glue (recuo/_retry.py)
    // uses) left out of `__all__` by `init`.
    #[pymodule_export]
    use crate::{
        _call_once, _force_panic, _monotonic_ms, _wait_ms_from_ns,
        attempt::{PyAttempt, PyIdempotencyKey},
        batch::{batch_report, batch_result, run_batch, PyBatchReport, PyBatchResult},
        current::current_attempt,
        errors::{ConfigError, PlanError, QueueFullError, SharedFileError},
        first::{asyncio_first_attempt, operation_after_first},
        guide::{backoff_window_ms, com_retry, parse_retry_after, retry_delay_ms},
        http::{ending, message, request_plan},
        limits::{
            monotonic_ns, PyConcurrencyLimit, PyGate, PyPermit, PyRegulator, PyReservation,
            PyRetryBudget,
        },
        machine::{PyOperation, PyStep},
        origin::who_answered,
        plan::plan,
        policy::PyPolicy,
        pool::{loop_pool, PyAttemptPool},
        queue::{PyBatchQueue, PyNext},
        record::{_instruments, _set_telemetry, _telemetry_of, PyAttemptRecord, PyResultRecord},
        redact::{redact_headers, redact_url, redact_url_detailed, PyRedactedUrl},
        retry_loop::PyLoop,
        scoped::{operation_in_context, request_operation},
        stats::PyStatsRecorder,
        values::{read_value, stats_derived, stats_merge},
        verdict::{classify, PyVerdict},
    };

    use super::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        let py = m.py();
        let exported = m.index()?;
        let public = exported.iter().filter(|n| !n.to_string().starts_with('_'));
        m.setattr("__all__", PyList::new(py, public.collect::<Vec<_>>())?)?;
        m.add("__version__", recuo::VERSION)?;
        let queue_full = py.get_type::<QueueFullError>();
        queue_full.setattr("code", 114)?;
        queue_full.setattr("name", "queue_full")?;
        m.add("InternalError", errors::internal_error(py)?)?;
        // Private values the Python glue (recuo/_retry.py) uses, set out of `__all__`: how
        // often a wait that cannot block looks at a full limit again, ms (the core's);
        m.setattr("_GATE_POLL_MS", recuo::GATE_POLL_MS)?;
        // `ContextVar[_AttemptPool | None]` and `ContextVar[Attempt | None]`.
        m.setattr("_attempt_pool", context::vars(py)?.pool.var.bind(py))?;
        m.setattr("_current_attempt", context::vars(py)?.attempt.var.bind(py))?;
        Ok(())
    }
}
