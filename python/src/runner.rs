//! The blocking retry loop for Python, and what every loop shares per context.
//!
//! [`run_blocking`] is the core's `drive_from` (its one blocking loop over the `Operation`
//! machine) with Python's effects ([`PyDriver`]): calling the operation, the caller's
//! classifier and hooks, the waits at the gate and between attempts (with the GIL released,
//! in slices that answer Ctrl-C), and forwarding the machine's records to the `recuo` logger.
//! Guide A's `com_retry`, the synchronous `recuo.retry` and `recuo.run_batch` all run it.
//! Every decision, count and record is the machine's, and every step of the loop the core's:
//! the gate is passed by the machine's own gate step (`Operation::poll_gate`), which holds
//! the place in flight until the attempt ends.
//!
//! When the core says a success needs no machine (`Operation::success_needs_machine`,
//! decided once per loop), the first attempt of `com_retry`, `recuo.retry` and `recuo.call`
//! is made before the machine ([`first_attempt`]: the attempt made current, one coarse clock
//! reading) and the machine is started after it (`Operation::start_after_first`) on a
//! failure, or when the records need it; its `Attempt` finds its loop's pool (the core's
//! `LoopPool::after_first`) only when a nested loop asks ([`frame_pool`]).
//!
//! Two `contextvars.ContextVar`s hold what a loop shares with the code it runs (SPEC §6,
//! "per context via contextvars"): the attempt pool of the outermost loop, so that nested
//! loops share one limit (which pool a loop draws from is the core's `LoopPool::choose`; the
//! variable only stores it), and the attempt being made, which `recuo.current_attempt()`
//! answers — with a blocking loop's attempts, pushed on their thread instead of set there
//! ([`crate::current`]). The asyncio loop (`recuo/_retry.py`) uses the same two variables
//! through [`operation_in_context`], so sync and async loops nest in each other alike.

use std::cell::OnceCell;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

use recuo::{
    drive_from, monotonic_ms, unix_now_ms, AttemptContext, AttemptPool, CancelToken, Driver, Gate,
    GatePoll, GiveUpReason, Level, LoopPool, Operation, Record, RegulatorError, Report,
    RequestLine, RetryError, Seen, Step, Stopped, Told, Verdict,
};

use crate::args::seed_arg;
use crate::current::{as_current, current};
use crate::limits::PyGate;
use crate::machine::{
    verdict_arg, Build, FramePool, KeyCell, Lazy, PyAttempt, PyOperation, PyReport,
};
use crate::policy::PyPolicy;
use crate::record::{
    carried, log_record, logs_debug, observed, records_level, request_arg, NotesCell,
};
use crate::verdict::PyVerdict;

/// The longest a blocking wait goes without looking for a signal (Ctrl-C).
pub(crate) const SLEEP_SLICE: Duration = Duration::from_millis(50);

/// A `contextvars.ContextVar` and its methods, looked up once: calling a method found
/// anew each time would make (and drop) a bound method per call.
pub(crate) struct Var {
    pub(crate) var: Py<PyAny>,
    pub(crate) get: Py<PyAny>,
    pub(crate) set: Py<PyAny>,
    pub(crate) reset: Py<PyAny>,
}

impl Var {
    fn new(py: Python<'_>, name: &str) -> PyResult<Self> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("default", py.None())?;
        let var = py
            .import("contextvars")?
            .getattr("ContextVar")?
            .call((name,), Some(&kwargs))?;
        Ok(Var {
            get: var.getattr("get")?.unbind(),
            set: var.getattr("set")?.unbind(),
            reset: var.getattr("reset")?.unbind(),
            var: var.unbind(),
        })
    }

    /// The variable's value in this context.
    pub(crate) fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.get.bind(py).call0()
    }

    /// Sets `value` in this context: the token to reset it with.
    pub(crate) fn set<'py>(
        &self,
        py: Python<'py>,
        value: impl IntoPyObject<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.set.bind(py).call1((value,))
    }

    /// Restores the value `token` replaced.
    pub(crate) fn reset<'py>(
        &self,
        py: Python<'py>,
        token: impl IntoPyObject<'py>,
    ) -> PyResult<()> {
        self.reset.bind(py).call1((token,)).map(drop)
    }
}

/// The two variables every loop shares (created with `default=None` at first use):
/// `recuo.attempt_pool` (`_AttemptPool | None`: the pool of the outermost loop running in
/// this context) and `recuo.current_attempt` (`Attempt | None`: the attempt being made).
pub(crate) struct Vars {
    pub(crate) pool: Var,
    pub(crate) attempt: Var,
}

/// The context variables of every loop.
pub(crate) fn vars(py: Python<'_>) -> PyResult<&'static Vars> {
    static VARS: PyOnceLock<Vars> = PyOnceLock::new();
    VARS.get_or_try_init(py, || {
        Ok(Vars {
            pool: Var::new(py, "recuo.attempt_pool")?,
            attempt: Var::new(py, "recuo.current_attempt")?,
        })
    })
}

/// `ContextVar[_AttemptPool | None]`: the pool of the outermost loop running in this context.
pub(crate) fn pool_var(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    Ok(vars(py)?.pool.var.bind(py).clone())
}

/// `ContextVar[Attempt | None]`: the attempt being made in this context.
pub(crate) fn attempt_var(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    Ok(vars(py)?.attempt.var.bind(py).clone())
}

/// The attempts left to the outermost loop of a context, shared by the loops inside it.
/// Private: it travels in `recuo._recuo._attempt_pool`; ``_AttemptPool(n)`` makes one of `n`
/// attempts (for tests).
#[pyclass(name = "_AttemptPool", module = "recuo._recuo", frozen)]
pub(crate) struct PyAttemptPool(AttemptPool);

#[pymethods]
impl PyAttemptPool {
    #[new]
    fn new(remaining: u32) -> Self {
        PyAttemptPool(AttemptPool::new(remaining))
    }

    /// Attempts left.
    #[getter]
    fn remaining(&self) -> u32 {
        self.0.remaining()
    }

    /// Takes one attempt: ``False`` when none is left.
    fn _take(&self) -> bool {
        self.0.try_take()
    }
}

/// The core's rule for the pool a loop draws from (`LoopPool::choose`, or with
/// `after_first` `LoopPool::after_first`): ``(pool, nested, owned)`` for a loop of
/// `max_attempts` starting in a context whose pool is `enclosing` — `pool` is `enclosing`
/// itself (shared) when the loop joins it. Private: the loop vectors' tests use it.
#[pyfunction]
#[pyo3(name = "_loop_pool", signature = (enclosing, max_attempts, batch_operation, after_first, /))]
pub(crate) fn loop_pool(
    enclosing: Option<PyRef<'_, PyAttemptPool>>,
    max_attempts: u32,
    batch_operation: bool,
    after_first: bool,
) -> (PyAttemptPool, bool, bool) {
    let enclosing = enclosing.as_ref().map(|p| &p.0);
    let chosen = if after_first {
        LoopPool::after_first(enclosing, max_attempts, batch_operation)
    } else {
        LoopPool::choose(enclosing, max_attempts, batch_operation)
    };
    (PyAttemptPool(chosen.pool), chosen.nested, chosen.owned)
}

/// The attempt pool of the loop this context is inside, if any: the one the attempt being made
/// carries (the first attempt of an outermost loop makes it only now, at the first ask), else
/// the one an enclosing loop set in the context (a loop run by a classifier or a hook).
pub(crate) fn enclosing_pool(py: Python<'_>) -> PyResult<Option<AttemptPool>> {
    let current = current(py)?;
    below(py, &current)
}

/// The pool of the loops around an attempt that replaced `previous` as the current one:
/// the one `previous` carries, else the one an enclosing loop set in the context.
fn below(py: Python<'_>, previous: &Bound<'_, PyAny>) -> PyResult<Option<AttemptPool>> {
    if let Ok(attempt) = previous.cast::<PyAttempt>() {
        if let Some((pool, _)) = frame_pool(py, attempt.get())? {
            return Ok(Some(pool));
        }
    }
    let current = vars(py)?.pool.get(py)?;
    Ok(current
        .cast::<PyAttemptPool>()
        .ok()
        .map(|enclosing| enclosing.get().0.clone()))
}

/// The pool `frame`'s loop draws from, and whether it is that loop's own (`None` when not
/// known here). A first attempt made before its machine finds it now, at the first ask, by
/// the core's rule (`LoopPool::after_first`).
pub(crate) fn frame_pool(
    py: Python<'_>,
    frame: &PyAttempt,
) -> PyResult<Option<(AttemptPool, bool)>> {
    match &frame.pool {
        FramePool::Unknown => Ok(None),
        FramePool::Known(pool) => Ok(Some((pool.clone(), false))),
        FramePool::Unresolved {
            found,
            max_attempts,
            below: under,
        } => {
            if let Some(found) = found.get() {
                return Ok(Some(found.clone()));
            }
            let previous = under
                .get()
                .map_or_else(|| py.None().into_bound(py), |p| p.bind(py).clone());
            let enclosing = below(py, &previous)?;
            let chosen = LoopPool::after_first(enclosing.as_ref(), *max_attempts, false);
            Ok(Some(
                found.get_or_init(|| (chosen.pool, chosen.owned)).clone(),
            ))
        }
    }
}

/// The pool a loop draws from, as the core chose it; when it is the loop's own, it is the
/// context's pool until [`PoolScope::exit`].
pub(crate) struct PoolScope {
    chosen: LoopPool,
    token: Option<Py<PyAny>>,
}

impl PoolScope {
    /// The pool of a loop of `max_attempts` starting in this context (`batch_operation`: an
    /// operation of a batch), as the core's `LoopPool::choose` says.
    pub(crate) fn enter(
        py: Python<'_>,
        max_attempts: u32,
        batch_operation: bool,
    ) -> PyResult<Self> {
        let enclosing = enclosing_pool(py)?;
        let chosen = LoopPool::choose(enclosing.as_ref(), max_attempts, batch_operation);
        Self::keep(py, chosen)
    }

    /// The scope of a loop whose first attempt was made before its machine ([`First`]): the
    /// pool that attempt drew from (the core's `LoopPool::after_first`, found lazily), set in
    /// the context for the rest of the loop when it is this loop's own.
    pub(crate) fn after_first(py: Python<'_>, frame: &PyAttempt) -> PyResult<Self> {
        let (pool, owned) = frame_pool(py, frame)?.unwrap_or_else(|| (AttemptPool::new(0), false));
        Self::keep(
            py,
            LoopPool {
                pool,
                nested: true,
                owned,
            },
        )
    }

    /// Stores `chosen`: its pool becomes the context's when it is the loop's own.
    fn keep(py: Python<'_>, chosen: LoopPool) -> PyResult<Self> {
        let token = if chosen.owned {
            let pool = PyAttemptPool(chosen.pool.clone());
            Some(vars(py)?.pool.set(py, pool)?.unbind())
        } else {
            None
        };
        Ok(PoolScope { chosen, token })
    }

    /// Where the loop's attempts come from.
    pub(crate) fn loop_pool(&self) -> LoopPool {
        self.chosen.clone()
    }

    /// The pool the loop draws from.
    pub(crate) fn pool(&self) -> AttemptPool {
        self.chosen.pool.clone()
    }

    /// Restores the context as it was before [`enter`](Self::enter).
    fn exit(mut self, py: Python<'_>) -> PyResult<()> {
        match self.token.take() {
            Some(token) => vars(py)?.pool.reset(py, token),
            None => Ok(()),
        }
    }

    /// The token, for a caller that resets the variable itself (the asyncio loop).
    pub(crate) fn into_token(mut self) -> Option<Py<PyAny>> {
        self.token.take()
    }
}

impl Drop for PoolScope {
    /// Should a scope be left without [`exit`](Self::exit) (a panic unwinding through the
    /// loop), the context is still restored: a pool left behind would make every later loop
    /// in this context "nested" in a spent pool.
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            Python::attach(|py| {
                if let Ok(vars) = vars(py) {
                    let _ = vars.pool.reset(py, token);
                }
            });
        }
    }
}

/// As Python's own `except` block does: an exception raised while handling `error` (by a
/// classifier or a hook) gets `error` as its `__context__`.
pub(crate) fn chain(py: Python<'_>, raised: &PyErr, error: &PyErr) {
    let value = raised.value(py);
    if value.is(error.value(py)) {
        return; // the same exception re-raised: it cannot be its own context
    }
    if value
        .getattr(pyo3::intern!(py, "__context__"))
        .is_ok_and(|c| c.is_none())
    {
        raised.set_context(py, Some(error.clone_ref(py)));
    }
}

/// The verdict on an exception from a classifier's answer: a `Verdict` as is (with what
/// `recuo.classify` saw of the response), anything else by its truth, as a predicate — the
/// core's `From<bool>`.
fn exception_verdict(answer: &Bound<'_, PyAny>) -> PyResult<(Verdict, Option<Seen>)> {
    if answer.is_instance_of::<PyVerdict>() {
        return verdict_arg(answer);
    }
    Ok((answer.is_truthy()?.into(), None))
}

/// Sleeps `delay` with the GIL released, in slices of at most [`SLEEP_SLICE`], running
/// Python's signal handlers between slices: Ctrl-C raises `KeyboardInterrupt` promptly.
/// With a `cancel` token, cancelling it ends the sleep at once: answers `true` then.
pub(crate) fn interruptible_sleep(
    py: Python<'_>,
    delay: Duration,
    cancel: Option<&CancelToken>,
) -> PyResult<bool> {
    let mut remaining = delay;
    while !remaining.is_zero() {
        let slice = remaining.min(SLEEP_SLICE);
        let started = Instant::now();
        let cancelled = py.detach(|| match cancel {
            Some(token) => token.sleep(slice),
            None => {
                std::thread::sleep(slice);
                false
            }
        });
        if cancelled {
            return Ok(true);
        }
        py.check_signals()?;
        remaining = remaining.saturating_sub(started.elapsed());
    }
    Ok(false)
}

/// The operation a loop calls.
pub(crate) enum Call<'a, 'py> {
    /// Guide A's `tarefa()`: no arguments.
    Tarefa(&'a Bound<'py, PyAny>),
    /// `function(*args, **kwargs)`.
    With {
        function: &'a Bound<'py, PyAny>,
        args: &'a Bound<'py, PyTuple>,
        kwargs: Option<&'a Bound<'py, PyDict>>,
    },
}

impl<'py> Call<'_, 'py> {
    /// Calls the operation once.
    fn call(&self) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Call::Tarefa(f) => f.call0(),
            Call::With {
                function,
                args,
                kwargs,
            } => function.call(*args, *kwargs),
        }
    }
}

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
    let default = DEFAULT.get_or_init(|| Arc::from(recuo::Policy::default().idempotency_header()));
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
pub(crate) fn first_frame<'py>(
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
        let name = header.unwrap_or_else(|| default_header());
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

/// The default policy's idempotency header.
fn default_header() -> &'static str {
    static DEFAULT: OnceLock<String> = OnceLock::new();
    DEFAULT.get_or_init(|| recuo::Policy::default().idempotency_header().to_owned())
}

/// Keeps `frame`, the `Attempt` of a first attempt that succeeded before its machine, as
/// the spare for the next first attempt when nothing can tell it was used: nobody else holds
/// it (an `Attempt` takes no weak references), it was made current over no other attempt, and
/// nobody asked for its key, noted anything or asked for its pool. Else it goes as it came.
fn recycle(frame: Bound<'_, PyAttempt>) {
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

/// The Python callables of a loop (each optional; already checked to be callable).
pub(crate) struct Effects<'a, 'py> {
    /// `classify(exc) -> Verdict | bool` (guide A's `repetir_se`); `None` retries every
    /// `Exception`.
    pub(crate) classify: Option<&'a Bound<'py, PyAny>>,
    /// `on_retry(attempt, exc, delay_seconds)` before each sleep (guide A's `ao_repetir`).
    pub(crate) on_retry: Option<&'a Bound<'py, PyAny>>,
    /// `on_give_up(report)` once, when the loop gives up.
    pub(crate) on_give_up: Option<&'a Bound<'py, PyAny>>,
    /// `sleep(seconds)` instead of the real wait.
    pub(crate) sleep: Option<&'a Bound<'py, PyAny>>,
}

/// Where a loop runs: the token that cancels it, and the batch queue's stop it answers to.
pub(crate) struct Env<'a> {
    /// Cancels the loop (a batch stopped); never cancelled otherwise.
    pub(crate) cancel: CancelToken,
    /// The reason the loop's batch queue stopped on, if it did.
    pub(crate) queue_stopped: Option<&'a (dyn Fn() -> Option<GiveUpReason> + Sync)>,
}

impl Env<'_> {
    /// A loop of its own on the caller's thread.
    pub(crate) fn caller() -> Env<'static> {
        Env {
            cancel: CancelToken::new(),
            queue_stopped: None,
        }
    }
}

/// How a driven loop ended.
pub(crate) struct Driven {
    pub(crate) outcome: Result<Py<PyAny>, Stopped<PyErr>>,
    /// The report of a success.
    pub(crate) done: Option<Report>,
}

/// Python's effects for the core's `drive_from`: calling the operation with its `Attempt`
/// current, the caller's classifier and hooks, the waits (the GIL released, in slices that
/// answer Ctrl-C and the loop's cancel token) and the `recuo` logger. The loop itself — its
/// steps, the gate step, the first attempt's outcome — is the core's.
struct PyDriver<'a, 'py> {
    py: Python<'py>,
    call: Call<'a, 'py>,
    effects: &'a Effects<'a, 'py>,
    env: &'a Env<'a>,
    key: KeyCell,
    header: Arc<str>,
    /// The attempt pool the loop draws from, which its attempts carry.
    pool: AttemptPool,
    /// Whether a look at the gate may ask a Redis server (the GIL is released meanwhile).
    remote_gate: bool,
    /// Whether the records kept include the attempts' (the level is info or debug).
    attempt_records: bool,
    /// What the attempt just made told its `Attempt` (the first attempt's, made before the
    /// machine, until the next attempt).
    notes: NotesCell,
    /// The first exception logging raised: it ends the loop at the next effect that can end
    /// it, or when the core's loop returns.
    log_error: Option<PyErr>,
    /// The report of a success.
    done: Option<Report>,
}

impl PyDriver<'_, '_> {
    /// Logging raised (the records come before every effect): the loop ends with that
    /// exception, chained to the operation's own (`error`) as a hook's would be.
    fn logged(&mut self, error: Option<&PyErr>) -> PyResult<()> {
        match self.log_error.take() {
            None => Ok(()),
            Some(raised) => {
                if let Some(error) = error {
                    chain(self.py, &raised, error);
                }
                Err(raised)
            }
        }
    }

    /// Sleeps `delay` with the GIL released, in slices that answer Ctrl-C; `true` when the
    /// loop's token was cancelled meanwhile.
    fn wait(&mut self, delay: Duration) -> PyResult<bool> {
        self.logged(None)?;
        interruptible_sleep(self.py, delay, Some(&self.env.cancel))
    }
}

impl Driver for PyDriver<'_, '_> {
    type Value = Py<PyAny>;
    type Error = PyErr;

    fn now_ms(&mut self) -> u64 {
        monotonic_ms()
    }

    fn is_cancelled(&mut self) -> bool {
        self.env.cancel.is_cancelled()
    }

    fn queue_stopped(&mut self) -> Option<GiveUpReason> {
        self.env.queue_stopped.and_then(|stopped| stopped())
    }

    fn polls_gate(&self) -> bool {
        true // no waiting at a gate blocked in Rust: Ctrl-C could not reach it
    }

    fn poll_gate(&mut self, op: &mut Operation, now_ms: u64) -> Result<GatePoll, RegulatorError> {
        if self.remote_gate {
            self.py.detach(move || op.poll_gate(now_ms))
        } else {
            op.poll_gate(now_ms)
        }
    }

    fn gate_error(&mut self, error: &RegulatorError) -> Option<PyErr> {
        Some(crate::limits::regulator_use_error(error))
    }

    // A step that may ask Redis (a limit's place given back, the budget counting) runs with
    // the GIL released: other threads go on while it asks.
    fn tell(&mut self, op: &mut Operation, told: Told) -> Step {
        self.py.detach(move || told.to(op))
    }

    fn gate_sleep(&mut self, delay: Duration) -> PyResult<bool> {
        self.wait(delay)
    }

    fn attempt(&mut self, ctx: &AttemptContext<'_>) -> PyResult<Py<PyAny>> {
        let py = self.py;
        self.notes = NotesCell::default();
        let attempt = PyAttempt {
            number: ctx.attempt(),
            key: Arc::clone(&self.key).into(),
            header: Arc::clone(&self.header),
            notes: Arc::clone(&self.notes).into(),
            pool: FramePool::Known(self.pool.clone()),
        };
        let attempt = Bound::new(py, attempt)?;
        let call = &self.call;
        as_current(py, &attempt, || call.call()).map(Bound::unbind)
    }

    fn carried(&mut self, error: &PyErr) -> Option<Seen> {
        // Only an attempt's record (info or debug) shows what it received: below, the
        // exception is not even read.
        if !self.attempt_records {
            return None;
        }
        carried(error.value(self.py))
    }

    fn observed(&mut self, _failed: bool) -> (Option<RequestLine>, Option<Seen>) {
        observed(&self.notes)
    }

    fn classify(&mut self, error: &PyErr) -> PyResult<(Verdict, Option<Seen>)> {
        let py = self.py;
        self.logged(Some(error))?;
        // Exception, not BaseException: KeyboardInterrupt, SystemExit and the like end the
        // loop at once, as they are.
        if !error.is_instance_of::<PyException>(py) {
            return Err(error.clone_ref(py));
        }
        let Some(f) = self.effects.classify else {
            return Ok((true.into(), None));
        };
        f.call1((error.value(py),))
            .and_then(|answer| exception_verdict(&answer))
            .inspect_err(|raised| chain(py, raised, error))
    }

    fn on_retry(&mut self, attempt: u32, error: &PyErr, delay: Duration) -> PyResult<()> {
        let py = self.py;
        self.logged(Some(error))?;
        match self.effects.on_retry {
            Some(hook) => hook
                .call1((attempt, error.value(py), delay.as_secs_f64()))
                .map(drop)
                .inspect_err(|raised| chain(py, raised, error)),
            None => Ok(()),
        }
    }

    fn sleep(&mut self, delay: Duration) -> PyResult<bool> {
        match self.effects.sleep {
            // Not woken by a cancellation: the loop looks for one after it.
            Some(f) => f.call1((delay.as_secs_f64(),)).map(|_| false),
            None => self.wait(delay),
        }
    }

    fn on_record(&mut self, level: Level, record: &Record) {
        if self.log_error.is_none() {
            self.log_error = log_record(self.py, level, record).err();
        }
    }

    fn on_done(&mut self, report: &Report) {
        self.done = Some(report.clone());
    }
}

/// Runs `call` as the machine `op` (with `build`'s settings; its attempt pool `scope`'s)
/// says, in `env`, from its start — or from the outcome of its first attempt, made before it
/// (`first`): the core's `drive_from` with Python's effects.
#[allow(clippy::too_many_arguments)]
pub(crate) fn drive_python<'py>(
    py: Python<'py>,
    op: Operation,
    mut build: Build,
    call: Call<'_, 'py>,
    effects: &Effects<'_, 'py>,
    env: &Env<'_>,
    scope: PoolScope,
    first: Option<First<'py>>,
) -> PyResult<Driven> {
    build.pool = Some(scope.loop_pool());
    let level = records_level(py)?;
    build.records = Some(level);
    let remote_gate = build.gate.as_ref().is_some_and(Gate::is_remote);
    let (op, key) = build.apply(op);
    let (key, header, notes, first) = match first {
        Some(First {
            result,
            frame,
            started_ms,
        }) => {
            let frame = frame.get();
            // The wall time at the first attempt's start, on the machine's clock.
            let since = monotonic_ms().saturating_sub(started_ms);
            let unix_ms = unix_now_ms().saturating_sub(i64::try_from(since).unwrap_or(0));
            (
                Arc::clone(frame.key.get()),
                Arc::clone(&frame.header),
                // Made already: its notes are the loop's for its record.
                Arc::clone(frame.notes.get()),
                Some(recuo::First {
                    started_ms,
                    unix_ms,
                    result: result.map(Bound::unbind),
                }),
            )
        }
        None => (
            key,
            Arc::from(op.policy().idempotency_header()),
            NotesCell::default(),
            None,
        ),
    };
    let mut driver = PyDriver {
        py,
        call,
        effects,
        env,
        key,
        header,
        pool: scope.pool(),
        remote_gate,
        attempt_records: level <= Level::Info,
        notes,
        log_error: None,
        done: None,
    };
    // The key the core's loop would make is unused: each `Attempt` carries the loop's.
    let mut outcome = drive_from(op, &OnceCell::new(), &mut driver, first);
    if let Some(raised) = driver.log_error.take() {
        // Logging the last records raised: the loop ends with that exception (chained to
        // the operation's own), as a hook's would end it.
        if let Err(Stopped::GaveUp(RetryError {
            error: Some(error), ..
        })) = &outcome
        {
            chain(py, &raised, error);
        }
        outcome = Err(Stopped::Aborted(raised));
    }
    let exited = scope.exit(py);
    if outcome.is_ok() {
        exited?; // the operation's own exception comes first
    }
    Ok(Driven {
        outcome,
        done: driver.done,
    })
}

/// What a blocking loop's machine is made of, made only when needed: how to make it, its
/// attempts and its idempotency header.
pub(crate) struct Shape<'a> {
    pub(crate) make: &'a dyn Fn() -> Operation,
    pub(crate) max_attempts: u32,
    /// `None`: the default policy's.
    pub(crate) header: Option<&'a str>,
}

/// What to do with the answer of a first attempt made before the machine, before anything
/// else: `Some` answers it instead (`recuo.call` handing an async function to the asyncio
/// loop).
pub(crate) type Handoff<'a, 'py> =
    &'a dyn Fn(&PyResult<Bound<'py, PyAny>>) -> PyResult<Option<Py<PyAny>>>;

/// Runs `call` as the machine `shape` makes says until it succeeds or gives up, in the
/// attempt pool of this context, with the settings `build` makes (called only when the
/// machine is needed).
///
/// `first_before`: the core said a success needs no machine with these settings
/// (`Operation::success_needs_machine`, asked once per loop): the first attempt is then made
/// before the machine ([`first_attempt`]). A success whose records nobody takes (the `recuo`
/// logger is not enabled for `DEBUG`) is answered at once; a failure, or a success the
/// records need, starts the machine after it (`Operation::start_after_first`), which goes on
/// from there — the same steps, counts and records as a machine started first.
///
/// Answers the operation's value, or raises its last exception — the same object. An
/// exception that is not an `Exception`, or one raised by a classifier, a hook or the sleep,
/// ends the loop at once and propagates; so does Ctrl-C while waiting at the gate.
pub(crate) fn run_blocking<'py>(
    py: Python<'py>,
    shape: &Shape<'_>,
    first_before: bool,
    build: impl FnOnce() -> Build,
    call: Call<'_, 'py>,
    effects: &Effects<'_, 'py>,
    handoff: Handoff<'_, 'py>,
) -> PyResult<Py<PyAny>> {
    let first = if first_before {
        let first = first_attempt(py, &call, shape.max_attempts, shape.header)?;
        if let Some(handed) = handoff(&first.result)? {
            return Ok(handed);
        }
        // A success's records are debug records: only a logger that takes them needs the
        // machine (the core's `success_needs_machine` with records of `debug`).
        if first.result.is_ok() && !logs_debug(py)? {
            let First { result, frame, .. } = first;
            recycle(frame);
            return result.map(Bound::unbind);
        }
        Some(first)
    } else {
        None
    };
    let scope = match &first {
        Some(first) => PoolScope::after_first(py, first.frame.get())?,
        None => PoolScope::enter(py, shape.max_attempts, false)?,
    };
    let env = Env::caller();
    let Driven { outcome, .. } = drive_python(
        py,
        (shape.make)(),
        build(),
        call,
        effects,
        &env,
        scope,
        first,
    )?;
    match outcome {
        Ok(value) => Ok(value),
        Err(Stopped::Aborted(error)) => Err(error),
        Err(Stopped::GaveUp(gave_up)) => {
            let hooked = match effects.on_give_up {
                Some(hook) => hook
                    .call1((PyReport {
                        report: gave_up.report,
                    },))
                    .map(drop),
                None => Ok(()),
            };
            match (gave_up.error, hooked) {
                (Some(error), Ok(())) => Err(error),
                (Some(error), Err(raised)) => {
                    chain(py, &raised, &error);
                    Err(raised)
                }
                (None, Err(raised)) => Err(raised),
                // An enclosing loop's attempts ran out before this one's first.
                (None, Ok(())) => Err(PyRuntimeError::new_err(format!(
                    "recuo gave up before the first attempt ({})",
                    gave_up.reason.name()
                ))),
            }
        }
    }
}

/// The gate argument of the loops: `None` or a `recuo.Gate`.
pub(crate) fn gate_arg<'a, 'py>(
    gate: Option<&'a Bound<'py, PyAny>>,
) -> PyResult<Option<&'a Bound<'py, PyGate>>> {
    match gate.filter(|g| !g.is_none()) {
        None => Ok(None),
        Some(g) => g.cast::<PyGate>().map(Some).map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "gate must be a recuo.Gate or None, not {}",
                crate::args::type_name(g)
            ))
        }),
    }
}

/// A new ``Operation`` under ``policy`` drawing from this context's attempt pool and keeping
/// the records the ``recuo`` logger takes, and the token to reset ``_attempt_pool`` with when
/// it started the pool (``None`` when it joined an enclosing loop's). ``idempotency_key``
/// is the caller's key (it makes the request idempotent). Private: the asyncio loop of
/// ``recuo.retry`` and the HTTP adapters use it.
#[pyfunction]
#[pyo3(name = "_operation_in_context", signature = (policy, seed, gate, request, /, idempotency_key = None))]
pub(crate) fn operation_in_context(
    py: Python<'_>,
    policy: PyRef<'_, PyPolicy>,
    #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
    gate: Option<&Bound<'_, PyAny>>,
    request: Option<&Bound<'_, PyAny>>,
    idempotency_key: Option<PyRef<'_, crate::machine::PyIdempotencyKey>>,
) -> PyResult<(PyOperation, Option<Py<PyAny>>)> {
    let scope = PoolScope::enter(py, policy.0.max_attempts(), false)?;
    let key = idempotency_key.map(|k| k.0);
    let op = scoped_operation(py, &policy.0, &scope, seed, gate, request, key)?;
    Ok((op, scope.into_token()))
}

/// One HTTP request's ``Operation`` under ``policy`` in this context's attempt pool (as
/// ``_operation_in_context``), with the core's plan of the request: the caller's key found
/// among ``headers`` (its names, by the policy's header), ``send_keys`` (the adapter's
/// ``idempotency_keys``), and ``replayable`` (``False``: one attempt). Answers ``(operation,
/// token, key)``: ``key`` is recuo's key to set in the policy's header on every attempt, or
/// ``None`` when the plan sends none. Private: the HTTP adapters use it.
#[pyfunction]
#[pyo3(name = "_request_operation", signature = (policy, seed, gate, method, url, headers, send_keys, replayable, /))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn request_operation(
    py: Python<'_>,
    policy: PyRef<'_, PyPolicy>,
    #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
    gate: Option<&Bound<'_, PyAny>>,
    method: &str,
    url: &str,
    headers: &Bound<'_, PyAny>,
    send_keys: &Bound<'_, PyAny>,
    replayable: bool,
) -> PyResult<(PyOperation, Option<Py<PyAny>>, Option<String>)> {
    let plan = crate::http::plan_of(&policy.0, method, headers, send_keys)?;
    let scope = PoolScope::enter(py, policy.0.max_attempts(), false)?;
    let records = Some(records_level(py)?);
    let gate = gate_arg(gate)?.map(|g| g.get().inner.clone());
    let build = Build {
        seed,
        gate: gate.clone(),
        request: Some(recuo::RequestLine {
            method: method.to_owned(),
            url: url.to_owned(),
        }),
        records,
        pool: Some(scope.loop_pool()),
        plan: Some(plan),
        unreplayable: !replayable,
        ..Build::default()
    };
    let (op, key) = build.operation(&policy.0);
    let op = PyOperation::wrap(op, key, records, gate.as_ref()).with_pool(Some(scope.pool()));
    let key = plan.sends_recuos_key().then(|| op.key_text());
    Ok((op, scope.into_token(), key))
}

/// A new ``Operation`` under `policy` in `scope`'s pool, keeping the records the ``recuo``
/// logger takes: the asyncio loop's and the HTTP adapters' machine.
pub(crate) fn scoped_operation(
    py: Python<'_>,
    policy: &recuo::Policy,
    scope: &PoolScope,
    seed: Option<u64>,
    gate: Option<&Bound<'_, PyAny>>,
    request: Option<&Bound<'_, PyAny>>,
    key: Option<recuo::IdempotencyKey>,
) -> PyResult<PyOperation> {
    let records = Some(records_level(py)?);
    let gate = gate_arg(gate)?.map(|g| g.get().inner.clone());
    let build = Build {
        seed,
        gate: gate.clone(),
        request: request_arg(request)?,
        records,
        pool: Some(scope.loop_pool()),
        key,
        ..Build::default()
    };
    let (op, key) = build.operation(policy);
    Ok(PyOperation::wrap(op, key, records, gate.as_ref()).with_pool(Some(scope.pool())))
}

/// The attempt being made by the innermost retry loop running in this context: its
/// ``number`` (from 0), the operation's ``idempotency_key`` (the same on every attempt) and
/// the ``idempotency_header`` to send it in.
///
/// Works inside ``recuo.retry`` (sync and async) and ``recuo.com_retry``. Raises
/// ``RuntimeError`` when no retry loop is making an attempt in this context.
#[pyfunction]
pub(crate) fn current_attempt(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let attempt = current(py)?;
    if attempt.is_none() {
        return Err(PyRuntimeError::new_err(
            "recuo.current_attempt() is only available inside an attempt of a retry loop",
        ));
    }
    Ok(attempt)
}
