//! The first attempt of a loop, made before its machine exists (issue 18: most calls
//! succeed at once, and that path pays only for itself).
//!
//! When the core says a success needs no machine (`Operation::success_needs_machine`), a
//! loop's first attempt is made with no machine yet ([`first_attempt`]): its `Attempt` made
//! current ([`crate::current::as_current`]), one coarse clock reading and the call. Its
//! `Attempt` finds its loop's pool (the core's `LoopPool::after_first`) only when a nested
//! loop asks ([`crate::pool::frame_pool`]), and one nobody kept is reused by the next first
//! attempt ([`recycle`]). A failure, or a success whose records the `recuo` logger takes,
//! starts the machine after it (`Operation::start_after_first`), which goes on from there.
//! The asyncio loop makes its first attempt the same way (`_first_attempt`,
//! `_operation_after_first`).

use std::sync::{Arc, OnceLock};

use pyo3::prelude::*;

use recuo::http::DEFAULT_IDEMPOTENCY_HEADER;

use crate::args::seed_arg;
use crate::attempt::{FramePool, Lazy, PyAttempt};
use crate::call::Call;
use crate::current::{as_current, set_current};
use crate::machine::{Build, PyOperation};
use crate::policy::PyPolicy;
use crate::pool::PoolScope;
use crate::record::request_arg;
use crate::scoped::scoped_operation;

/// The first attempt of a loop, made before its machine exists (issue 18: most calls succeed
/// at once, and that path pays only for itself): what it answered, its `Attempt` (which
/// `recuo.current_attempt()` gave, with the key if one was asked for and what it noted), and
/// when it started. A failure, or a success that the records need, starts the machine after
/// it: `start_after_first` at `started_ms`, then the outcome.
pub(crate) struct First<'py> {
    pub(crate) result: PyResult<Bound<'py, PyAny>>,
    pub(crate) frame: Bound<'py, PyAttempt>,
    /// On the monotonic clock in ms, taken as cheaply as the host allows (the coarse clock: a
    /// tick behind at most, so the elapsed time may count that much more, never less).
    pub(crate) started_ms: u64,
}

/// The idempotency header `name` (`None`: the default policy's), the default one shared by
/// every first attempt that sends it rather than made for each.
fn header_of(name: Option<&str>) -> Arc<str> {
    static DEFAULT: OnceLock<Arc<str>> = OnceLock::new();
    let default = DEFAULT.get_or_init(|| Arc::from(DEFAULT_IDEMPOTENCY_HEADER));
    match name {
        Some(name) if name != &**default => Arc::from(name),
        _ => Arc::clone(default),
    }
}

thread_local! {
    /// An `Attempt` of a first attempt that nobody kept, for the next first attempt to reuse
    /// (issue 18: making and freeing one took a fifth of what a first attempt that succeeds
    /// costs). At most one per thread (no lock to take): nested loops make their own.
    static SPARE: std::cell::RefCell<Option<Py<PyAttempt>>> = const { std::cell::RefCell::new(None) };
}

/// The `Attempt` of the first attempt of a loop of `max_attempts` made before its machine:
/// number 0, carrying the enclosing loop's pool, or one made only when asked for (by a nested
/// loop, or the machine after a failure). The spare one when it fits.
fn first_frame<'py>(
    py: Python<'py>,
    max_attempts: u32,
    header: Option<&str>,
) -> PyResult<Bound<'py, PyAttempt>> {
    if let Some(frame) = SPARE.with_borrow_mut(Option::take) {
        let fits = match &frame.get().pool {
            FramePool::Unresolved {
                max_attempts: spare_max,
                ..
            } => *spare_max == max_attempts,
            _ => false,
        };
        let name = header.unwrap_or(DEFAULT_IDEMPOTENCY_HEADER);
        if fits && *frame.get().header == *name {
            return Ok(frame.into_bound(py));
        }
    }
    let pool = FramePool::Unresolved {
        found: OnceLock::new(),
        max_attempts,
        below: OnceLock::new(),
    };
    Bound::new(
        py,
        PyAttempt {
            number: 0,
            key: Lazy::new(),
            header: header_of(header),
            notes: Lazy::new(),
            pool,
        },
    )
}

/// Keeps `frame`, the `Attempt` of a first attempt that succeeded before its machine, as
/// the spare for the next first attempt when nothing can tell it was used: nobody else holds
/// it (an `Attempt` takes no weak references), it was made current over no other attempt, and
/// nobody asked for its key, noted anything or asked for its pool. Else it goes as it came.
pub(crate) fn recycle(frame: Bound<'_, PyAttempt>) {
    let FramePool::Unresolved { found, below, .. } = &frame.get().pool else {
        return;
    };
    let attempt = frame.get();
    // The count is exact here: no free-threaded build loads an abi3 module.
    #[allow(deprecated)]
    let alone = frame.get_refcnt() == 1;
    if !alone
        || attempt.key.is_made()
        || attempt.notes.is_made()
        || found.get().is_some()
        || below.get().is_some()
    {
        return;
    }
    SPARE.with_borrow_mut(|spare| {
        if spare.is_none() {
            *spare = Some(frame.unbind());
        }
    });
}

/// Makes the first attempt of a loop of `max_attempts` with no machine yet: the attempt made
/// current ([`as_current`]: it carries the pool for nested loops, the enclosing loop's or one
/// made only if a nested loop asks), one coarse clock reading, the call.
pub(crate) fn first_attempt<'py>(
    py: Python<'py>,
    call: &Call<'_, 'py>,
    max_attempts: u32,
    header: Option<&str>,
) -> PyResult<First<'py>> {
    let frame = first_frame(py, max_attempts, header)?;
    let started_ms = recuo::coarse_monotonic_ms();
    let result = as_current(py, &frame, || call.call());
    Ok(First {
        result,
        frame,
        started_ms,
    })
}

/// For the asyncio loop's first attempt, made before its machine: the attempt (number 0,
/// carrying the pool for nested loops) set as this context's current attempt, and the token
/// to reset it with. Private.
#[pyfunction]
#[pyo3(name = "_first_attempt", signature = (policy, /))]
pub(crate) fn asyncio_first_attempt<'py>(
    py: Python<'py>,
    policy: PyRef<'_, PyPolicy>,
) -> PyResult<(Bound<'py, PyAttempt>, Bound<'py, PyAny>)> {
    let policy = &policy.0;
    let frame = first_frame(py, policy.max_attempts(), Some(policy.idempotency_header()))?;
    let token = set_current(py, &frame)?;
    Ok((frame, token))
}

/// The asyncio loop's machine after a first attempt made before it (`first`, started at
/// `now_ms`, `unix_ms` on the wall clock): started after it (the core's `start_after_first`,
/// drawing from the pool `LoopPool::after_first` chose), at its ``"call"`` for that attempt,
/// with its key and notes; and the token to reset ``_attempt_pool`` with when the loop's own
/// pool was set. Tell it the attempt's outcome next. Private.
#[pyfunction]
#[pyo3(name = "_operation_after_first", signature = (policy, seed, gate, request, first, now_ms, unix_ms, /))]
pub(crate) fn operation_after_first(
    py: Python<'_>,
    policy: PyRef<'_, PyPolicy>,
    #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
    gate: Option<&Bound<'_, PyAny>>,
    request: Option<&Bound<'_, PyAny>>,
    first: PyRef<'_, PyAttempt>,
    now_ms: u64,
    unix_ms: i64,
) -> PyResult<(PyOperation, Option<Py<PyAny>>)> {
    let scope = PoolScope::after_first(py, &first)?;
    let build = Build {
        seed,
        request: request_arg(request)?,
        ..Build::default()
    };
    let mut op = scoped_operation(py, &policy.0, &scope, gate, build)?;
    // The first attempt was made: the step is its "call".
    let _call = op.start_after_first(py, now_ms, Some(unix_ms));
    op.adopt_first(&first);
    Ok((op, scope.into_token()))
}
