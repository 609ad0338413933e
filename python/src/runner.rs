//! The blocking retry loop for Python, and what every loop shares per context.
//!
//! [`run_blocking`] is the core's `drive` with Python effects: the operation, the caller's
//! classifier and hooks, and a sleep that releases the GIL and answers Ctrl-C. Guide A's
//! `com_retry` and the synchronous `recuo.retry` both run it.
//!
//! Two `contextvars.ContextVar`s hold what a loop shares with the code it runs (SPEC §6,
//! "per context via contextvars"): the attempt pool of the outermost loop, so that nested
//! loops share one limit, and the attempt being made, which `recuo.current_attempt()`
//! answers. The asyncio loop (`recuo/_retry.py`) uses the same two variables through
//! [`attempts_in_context`], so sync and async loops nest in each other alike.
//!
//! Each loop keeps a [`Journal`] of its operation when the `recuo` logger would log anything,
//! and logs the core's records (SPEC §7): one per attempt once its decision is known (a retry
//! before `on_retry`), then one for the result (before `on_give_up`).

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

use recuo::{
    drive, monotonic_ns, unix_now_ms, AttemptContext, AttemptPool, Attempts, CancelToken, Cause,
    Clock, Driver, Gate, LazyJitterRng, Pass, Policy, RetryAllowance, StatsRecorder, Stopped,
    SystemClock, Verdict,
};

use crate::args::{opt_callable, seed_arg};
use crate::limits::PyGate;
use crate::machine::{KeyCell, PyAttempt, PyAttempts, PyDecision, PyReport};
use crate::policy::PyPolicy;
use crate::record::{request_arg, Journal, NotesCell, RequestLine};
use crate::verdict::PyVerdict;

/// The longest a blocking wait goes without looking for a signal (Ctrl-C).
pub(crate) const SLEEP_SLICE: Duration = Duration::from_millis(50);

static ATTEMPT_POOL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CURRENT_ATTEMPT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The `ContextVar` in `cell`, created (with `default=None`) at first use.
fn context_var<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    cell.get_or_try_init(py, || {
        let kwargs = PyDict::new(py);
        kwargs.set_item("default", py.None())?;
        py.import("contextvars")?
            .getattr("ContextVar")?
            .call((name,), Some(&kwargs))
            .map(Bound::unbind)
    })
    .map(|var| var.bind(py).clone())
}

/// `ContextVar[_AttemptPool | None]`: the pool of the outermost loop running in this context.
pub(crate) fn pool_var(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    context_var(py, &ATTEMPT_POOL, "recuo.attempt_pool")
}

/// `ContextVar[Attempt | None]`: the attempt being made in this context.
pub(crate) fn attempt_var(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    context_var(py, &CURRENT_ATTEMPT, "recuo.current_attempt")
}

/// The attempts left to the outermost loop of a context, shared by the loops inside it.
/// Private: it only travels in `recuo._recuo._attempt_pool`.
#[pyclass(name = "_AttemptPool", module = "recuo._recuo", frozen)]
pub(crate) struct PyAttemptPool(AttemptPool);

#[pymethods]
impl PyAttemptPool {
    /// Attempts left.
    #[getter]
    fn remaining(&self) -> u32 {
        self.0.remaining()
    }
}

/// The pool a new loop draws from: the enclosing loop's (`nested`), or a new one it owns and
/// has set in the context until [`PoolScope::exit`].
pub(crate) struct PoolScope {
    pool: AttemptPool,
    nested: bool,
    token: Option<Py<PyAny>>,
}

impl PoolScope {
    /// Joins the pool of the enclosing loop of this context, or starts one of `max_attempts`.
    pub(crate) fn enter(py: Python<'_>, max_attempts: u32) -> PyResult<Self> {
        let var = pool_var(py)?;
        let current = var.call_method0(pyo3::intern!(py, "get"))?;
        if let Ok(enclosing) = current.cast::<PyAttemptPool>() {
            return Ok(PoolScope {
                pool: enclosing.get().0.clone(),
                nested: true,
                token: None,
            });
        }
        let pool = AttemptPool::new(max_attempts);
        let token = var.call_method1(pyo3::intern!(py, "set"), (PyAttemptPool(pool.clone()),))?;
        Ok(PoolScope {
            pool,
            nested: false,
            token: Some(token.unbind()),
        })
    }

    /// The pool and whether it is an enclosing loop's.
    fn parts(&self) -> (AttemptPool, bool) {
        (self.pool.clone(), self.nested)
    }

    /// Restores the context as it was before [`enter`](Self::enter).
    fn exit(mut self, py: Python<'_>) -> PyResult<()> {
        match self.token.take() {
            Some(token) => pool_var(py)?
                .call_method1(pyo3::intern!(py, "reset"), (token,))
                .map(drop),
            None => Ok(()),
        }
    }

    /// The token, for a caller that resets the variable itself (the asyncio loop).
    fn into_token(mut self) -> Option<Py<PyAny>> {
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
                if let Ok(var) = pool_var(py) {
                    let _ = var.call_method1(pyo3::intern!(py, "reset"), (token,));
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

/// The verdict on an exception from a classifier's answer: a `Verdict` as is (but
/// `"success"`, which cannot describe an exception, gives up as permanent), anything else by
/// its truth, as a predicate; with what `recuo.classify` saw of the response, if it made the
/// verdict.
pub(crate) fn exception_verdict(answer: &Bound<'_, PyAny>) -> PyResult<PyVerdict> {
    if let Ok(v) = answer.cast::<PyVerdict>() {
        let PyVerdict(verdict, seen) = v.get().clone();
        return Ok(PyVerdict(
            match verdict {
                Verdict::Success => Verdict::from_predicate(false),
                other => other,
            },
            seen,
        ));
    }
    Ok(PyVerdict::bare(Verdict::from_predicate(
        answer.is_truthy()?,
    )))
}

/// The verdict on an exception from ``answer``, what a classifier returned: a ``Verdict`` as
/// is (``"success"`` gives up as permanent), anything else by its truth. Private: the asyncio
/// loop of ``recuo.retry`` uses it.
#[pyfunction]
#[pyo3(name = "_exception_verdict", signature = (answer, /))]
pub(crate) fn exception_verdict_py(answer: &Bound<'_, PyAny>) -> PyResult<PyVerdict> {
    exception_verdict(answer)
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

/// Passes `gate` for attempt number `attempt` — the core's `Gate::enter`: a place in flight,
/// then a start slot, and a first attempt recorded by the budget — with the GIL released.
/// `None` when `cancel` was cancelled meanwhile; `ConnectionError` when the gate's Redis
/// regulator cannot reach its server.
///
/// `Gate::enter` blocks without looking at Python's signals, so when the gate may wait (it
/// has a limit or a regulator) and `signals` is set, it runs on a helper thread while this
/// thread runs Python's signal handlers every [`SLEEP_SLICE`]: Ctrl-C cancels the wait and
/// raises `KeyboardInterrupt` promptly. Without `signals` (a batch's worker thread, which
/// Python never signals) it runs here, and `cancel` alone ends it.
pub(crate) fn enter_gate(
    py: Python<'_>,
    gate: &Gate,
    attempt: u32,
    cancel: &CancelToken,
    signals: bool,
) -> PyResult<Option<Pass>> {
    let refused = crate::limits::regulator_use_error;
    if !signals || (gate.limit().is_none() && gate.regulator().is_none()) {
        return py.detach(|| gate.enter(attempt, cancel)).map_err(refused);
    }
    let (sent, received) = mpsc::channel();
    // A Mutex only to make the receiver shareable with `detach`; this thread alone uses it.
    let received = std::sync::Mutex::new(received);
    let recv_timeout = |timeout: Duration| {
        received
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recv_timeout(timeout)
    };
    let (helper_gate, helper_cancel) = (gate.clone(), cancel.clone());
    let helper = std::thread::Builder::new()
        .name("recuo-gate".to_owned())
        .spawn(move || {
            let _ = sent.send(helper_gate.enter(attempt, &helper_cancel));
        })?;
    loop {
        match py.detach(|| recv_timeout(SLEEP_SLICE)) {
            Ok(entered) => {
                let _ = py.detach(|| helper.join());
                return entered.map_err(refused);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(signalled) = py.check_signals() {
                    // Wake the helper, and give back whatever it took meanwhile.
                    cancel.cancel();
                    drop(py.detach(|| recv_timeout(Duration::MAX)));
                    let _ = py.detach(|| helper.join());
                    return Err(signalled);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = py.detach(|| helper.join());
                return Err(PyRuntimeError::new_err(
                    "recuo: the thread waiting at the gate ended without an answer",
                ));
            }
        }
    }
}

/// The operation a loop calls.
pub(crate) enum Operation<'a, 'py> {
    /// Guide A's `tarefa()`: no arguments.
    Tarefa(&'a Bound<'py, PyAny>),
    /// `function(*args, **kwargs)`.
    Call {
        function: &'a Bound<'py, PyAny>,
        args: &'a Bound<'py, PyTuple>,
        kwargs: Option<&'a Bound<'py, PyDict>>,
    },
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

/// Where a loop runs: the gate its attempts pass, the stats it records (a batch's), the
/// token that cancels it, whether Python signals reach its thread, and the request its
/// records describe.
pub(crate) struct Env<'a> {
    /// The gate every attempt passes; its budget is the loop's retry allowance.
    pub(crate) gate: Option<&'a Gate>,
    /// A batch's recorder: each start, end and cause seen.
    pub(crate) stats: Option<&'a StatsRecorder>,
    /// Cancels the loop (a batch's deadline or interruption); never cancelled otherwise.
    pub(crate) cancel: CancelToken,
    /// Whether Python's signal handlers run on this thread (not on a batch's workers).
    pub(crate) signals: bool,
    /// The request the records describe (`request=`); an attempt may say otherwise.
    pub(crate) request: Option<RequestLine>,
}

impl Env<'_> {
    /// A loop of its own on the caller's thread, through `gate` if any, sending `request`.
    pub(crate) fn caller(gate: Option<&Gate>, request: Option<RequestLine>) -> Env<'_> {
        Env {
            gate,
            stats: None,
            cancel: CancelToken::new(),
            signals: true,
            request,
        }
    }
}

/// Python's effects for the core's `drive`.
struct PyDriver<'a, 'py> {
    py: Python<'py>,
    clock: SystemClock,
    op: Operation<'a, 'py>,
    effects: &'a Effects<'a, 'py>,
    key: KeyCell,
    header: Arc<str>,
    current: Bound<'py, PyAny>,
    env: &'a Env<'a>,
    /// The place in flight of the attempt being made.
    pass: Option<Pass>,
    /// Attempts made so far.
    made: u32,
    /// The operation's journal, when the `recuo` logger would log its records.
    journal: Option<Journal>,
}

impl PyDriver<'_, '_> {
    fn regulator(&self) -> Option<&recuo::Regulator> {
        self.env.gate.and_then(Gate::regulator)
    }
}

impl Driver for PyDriver<'_, '_> {
    type Value = Py<PyAny>;
    type Error = PyErr;

    fn now_ms(&mut self) -> u64 {
        self.clock.now_ms()
    }

    fn is_cancelled(&mut self) -> bool {
        self.env.cancel.is_cancelled()
    }

    fn before_attempt(&mut self, attempt: u32) -> PyResult<bool> {
        let Some(gate) = self.env.gate else {
            return Ok(true);
        };
        let entered = enter_gate(self.py, gate, attempt, &self.env.cancel, self.env.signals)?;
        let passed = entered.is_some();
        self.pass = entered;
        Ok(passed)
    }

    fn attempt(&mut self, ctx: &AttemptContext<'_>) -> PyResult<Py<PyAny>> {
        if let Some(stats) = self.env.stats {
            stats.start(ctx.attempt(), monotonic_ns());
        }
        self.made = ctx.attempt().saturating_add(1);
        if let Some(journal) = &mut self.journal {
            journal.started();
        }
        let notes = NotesCell::default();
        let result = self.call(ctx, &notes);
        if let Some(stats) = self.env.stats {
            stats.end();
        }
        if let Some(journal) = &mut self.journal {
            let py = self.py;
            journal.ended(&notes, result.as_ref().err().map(|e| e.value(py).as_any()));
        }
        // The place in flight is given back before anything else, any sleep above all.
        self.pass = None;
        if result.is_ok() {
            if let Some(regulator) = self.regulator() {
                regulator.on_success();
            }
        }
        result
    }

    fn classify(&mut self, error: &PyErr) -> PyResult<Verdict> {
        let PyVerdict(verdict, seen) = self.verdict(error)?;
        if let Some(journal) = &mut self.journal {
            journal.judged(verdict, seen.as_deref());
        }
        let cause = verdict.cause();
        if cause == Cause::RateLimited {
            if let Some(regulator) = self.regulator() {
                regulator.on_throttled();
            }
        }
        if let Some(stats) = self.env.stats {
            stats.saw(cause);
        }
        Ok(verdict)
    }

    fn on_retry(&mut self, attempt: u32, error: &PyErr, delay: Duration) -> PyResult<()> {
        let py = self.py;
        if let Some(journal) = &mut self.journal {
            let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
            journal
                .retry(py, delay_ms)
                .inspect_err(|raised| chain(py, raised, error))?;
        }
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
            Some(f) => f.call1((delay.as_secs_f64(),)).map(|_| false),
            None => interruptible_sleep(self.py, delay, Some(&self.env.cancel)),
        }
    }
}

impl PyDriver<'_, '_> {
    /// Calls the operation, with `recuo.current_attempt()` answering its attempt, whose
    /// notes for the records go to `notes`.
    fn call(&mut self, ctx: &AttemptContext<'_>, notes: &NotesCell) -> PyResult<Py<PyAny>> {
        let py = self.py;
        let attempt = PyAttempt {
            number: ctx.attempt(),
            key: Arc::clone(&self.key),
            header: Arc::clone(&self.header),
            notes: Arc::clone(notes),
        };
        let token = self
            .current
            .call_method1(pyo3::intern!(py, "set"), (attempt,))?;
        let result = match self.op {
            Operation::Tarefa(f) => f.call0(),
            Operation::Call {
                function,
                args,
                kwargs,
            } => function.call(args, kwargs),
        };
        let reset = self
            .current
            .call_method1(pyo3::intern!(py, "reset"), (token,));
        let value = result?;
        reset?;
        Ok(value.unbind())
    }

    /// The caller's verdict on `error`, with what `recuo.classify` saw if it made it.
    fn verdict(&mut self, error: &PyErr) -> PyResult<PyVerdict> {
        let py = self.py;
        // Exception, not BaseException: KeyboardInterrupt, SystemExit and the like end the
        // loop at once, as they are.
        if !error.is_instance_of::<PyException>(py) {
            return Err(error.clone_ref(py));
        }
        let Some(f) = self.effects.classify else {
            return Ok(PyVerdict::bare(Verdict::from_predicate(true)));
        };
        f.call1((error.value(py),))
            .and_then(|answer| exception_verdict(&answer))
            .inspect_err(|raised| chain(py, raised, error))
    }
}

/// The Unix time (seconds) of `retry_at_ms`, an instant on a monotonic clock that reads
/// `now_ms` now.
pub(crate) fn unix_secs_at(retry_at_ms: u64, now_ms: u64) -> f64 {
    let ahead_ms = retry_at_ms as f64 - now_ms as f64;
    (unix_now_ms() as f64 + ahead_ms) / 1000.0
}

/// How a driven loop ended, and the reading of its clock then (for `retry_at`).
pub(crate) struct Driven {
    pub(crate) outcome: Result<Py<PyAny>, Stopped<PyErr>>,
    pub(crate) now_ms: u64,
    /// Attempts made (the number of the last one, plus one).
    pub(crate) attempts: u32,
}

/// Runs `op` under `policy` in the attempt pool of this context, in `env`: the core's `drive`
/// with Python's effects, the gate's budget as its retry allowance.
pub(crate) fn drive_python(
    py: Python<'_>,
    policy: &Policy,
    seed: Option<u64>,
    op: Operation<'_, '_>,
    effects: &Effects<'_, '_>,
    env: &Env<'_>,
) -> PyResult<Driven> {
    let scope = PoolScope::enter(py, policy.max_attempts())?;
    let (pool, nested) = scope.parts();
    let attempts = Attempts::new(policy).with_pool(pool, nested);
    let mut driver = PyDriver {
        py,
        clock: SystemClock::default(),
        op,
        effects,
        key: KeyCell::default(),
        header: Arc::from(policy.idempotency_header()),
        current: attempt_var(py)?,
        env,
        pass: None,
        made: 0,
        journal: Journal::open(py, env.request.clone())?,
    };
    let allowance = env
        .gate
        .and_then(Gate::budget)
        .map(|b| b as &dyn RetryAllowance);
    // Seeded at the first draw only: a first-attempt success reads no entropy.
    let mut outcome = drive(attempts, LazyJitterRng::new(seed), allowance, &mut driver);
    // Should the loop have stopped between the gate and the attempt, the place goes back.
    driver.pass = None;
    if let Some(journal) = driver.journal.take() {
        log_end(py, journal, &mut outcome, driver.made);
    }
    let now_ms = driver.clock.now_ms();
    let exited = scope.exit(py);
    if outcome.is_ok() {
        exited?; // the operation's own exception comes first
    }
    Ok(Driven {
        outcome,
        now_ms,
        attempts: driver.made,
    })
}

/// Logs the last records of a loop that ended with `outcome` after `made` attempts: the
/// last attempt's and the result. A loop ended by one of its effects (`Aborted`) logs
/// nothing more. Should logging raise, the loop ends with that exception (chained to the
/// operation's own, on a give-up), as a hook's would end it.
fn log_end(
    py: Python<'_>,
    mut journal: Journal,
    outcome: &mut Result<Py<PyAny>, Stopped<PyErr>>,
    made: u32,
) {
    let logged = match &*outcome {
        Ok(_) => journal.done(py, made),
        Err(Stopped::GaveUp(gave_up)) => journal
            .give_up(py, gave_up.reason, gave_up.report.attempts)
            .inspect_err(|raised| {
                if let Some(error) = &gave_up.error {
                    chain(py, raised, error);
                }
            }),
        Err(Stopped::Aborted(_)) => Ok(()),
    };
    if let Err(raised) = logged {
        *outcome = Err(Stopped::Aborted(raised));
    }
}

/// Runs `op` under `policy` until it succeeds or the policy gives up, in the attempt pool of
/// this context, every attempt passing `gate`: the core's `drive` with Python's effects.
///
/// Answers the operation's value, or raises its last exception — the same object. An
/// exception that is not an `Exception`, or one raised by a classifier, a hook or the sleep,
/// ends the loop at once and propagates; so does Ctrl-C while waiting at the gate.
pub(crate) fn run_blocking(
    py: Python<'_>,
    policy: &Policy,
    seed: Option<u64>,
    op: Operation<'_, '_>,
    effects: &Effects<'_, '_>,
    gate: Option<&Gate>,
    request: Option<RequestLine>,
) -> PyResult<Py<PyAny>> {
    let env = Env::caller(gate, request);
    let Driven {
        outcome, now_ms, ..
    } = drive_python(py, policy, seed, op, effects, &env)?;
    match outcome {
        Ok(value) => Ok(value),
        Err(Stopped::Aborted(error)) => Err(error),
        Err(Stopped::GaveUp(gave_up)) => {
            let hooked = match effects.on_give_up {
                Some(hook) => {
                    let report = PyReport {
                        report: gave_up.report,
                        retry_at: gave_up.retry_at_ms.map(|at| unix_secs_at(at, now_ms)),
                    };
                    hook.call1((report,)).map(drop)
                }
                None => Ok(()),
            };
            match (gave_up.error, hooked) {
                (Some(error), Ok(())) => Err(error),
                (Some(error), Err(raised)) => {
                    chain(py, &raised, &error);
                    Err(raised)
                }
                (None, Err(raised)) => Err(raised),
                // Not reached: a loop's first attempt is never refused (a nested loop's
                // first attempt is its enclosing attempt, and only a batch cancels a loop).
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

/// The synchronous ``recuo.retry``: ``function(*args, **kwargs)`` under ``policy``. Private:
/// call ``recuo.retry``.
#[pyfunction]
#[pyo3(name = "_run", signature = (function, args, kwargs, policy, classify, on_retry, on_give_up, seed, sleep, gate, request, /))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    py: Python<'_>,
    function: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    policy: PyRef<'_, PyPolicy>,
    classify: Option<&Bound<'_, PyAny>>,
    on_retry: Option<&Bound<'_, PyAny>>,
    on_give_up: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
    sleep: Option<&Bound<'_, PyAny>>,
    gate: Option<&Bound<'_, PyAny>>,
    request: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    crate::args::require_callable(function, "function")?;
    let gate = gate_arg(gate)?;
    let request = request_arg(request)?;
    let effects = Effects {
        classify: opt_callable(classify, "classify")?,
        on_retry: opt_callable(on_retry, "on_retry")?,
        on_give_up: opt_callable(on_give_up, "on_give_up")?,
        sleep: opt_callable(sleep, "sleep")?,
    };
    let op = Operation::Call {
        function,
        args,
        kwargs,
    };
    run_blocking(
        py,
        &policy.0,
        seed,
        op,
        &effects,
        gate.map(|g| &g.get().inner),
        request,
    )
}

/// A fresh ``Attempts`` under ``policy`` drawing from this context's attempt pool, and the
/// token to reset ``_attempt_pool`` with when it started the pool (``None`` when it joined an
/// enclosing loop's). Private: the asyncio loop of ``recuo.retry`` uses it.
#[pyfunction]
#[pyo3(name = "_attempts_in_context", signature = (policy, seed, /))]
pub(crate) fn attempts_in_context(
    py: Python<'_>,
    policy: PyRef<'_, PyPolicy>,
    #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
) -> PyResult<(PyAttempts, Option<Py<PyAny>>)> {
    let scope = PoolScope::enter(py, policy.0.max_attempts())?;
    let attempts = PyAttempts::make(&policy.0, seed, Some(scope.parts()));
    Ok((attempts, scope.into_token()))
}

/// The report of a loop that gave up with ``decision`` at ``now_ms`` (its monotonic clock),
/// with ``retry_at`` as Unix time. Private: the asyncio loop of ``recuo.retry`` uses it.
#[pyfunction]
#[pyo3(name = "_give_up_report", signature = (attempts, decision, now_ms, /))]
pub(crate) fn give_up_report(
    attempts: PyRef<'_, PyAttempts>,
    decision: PyRef<'_, PyDecision>,
    #[pyo3(from_py_with = crate::args::mono_ms_arg)] now_ms: u64,
) -> PyReport {
    let retry_at = match decision.0 {
        recuo::Decision::GiveUp {
            retry_at_ms: Some(at),
            ..
        } => Some(unix_secs_at(at, now_ms)),
        _ => None,
    };
    attempts.report_with(retry_at)
}

/// The attempt being made by the innermost retry loop running in this context: its
/// ``number`` (from 0), the operation's ``idempotency_key`` (the same on every attempt) and
/// the ``idempotency_header`` to send it in.
///
/// Works inside ``recuo.retry`` (sync and async) and ``recuo.com_retry``. Raises
/// ``RuntimeError`` when no retry loop is making an attempt in this context.
#[pyfunction]
pub(crate) fn current_attempt(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let attempt = attempt_var(py)?.call_method0(pyo3::intern!(py, "get"))?;
    if attempt.is_none() {
        return Err(PyRuntimeError::new_err(
            "recuo.current_attempt() is only available inside an attempt of a retry loop",
        ));
    }
    Ok(attempt)
}
