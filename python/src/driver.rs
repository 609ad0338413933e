//! The blocking driver: the core's `drive_from` (its one blocking loop over the `Operation`
//! machine) with Python's effects ([`PyDriver`]) — calling the operation with its `Attempt`
//! current, the caller's classifier and hooks, the waits at the gate and between attempts
//! (the GIL released, in slices that answer Ctrl-C), and forwarding the machine's records to
//! the `recuo` logger.
//!
//! Every decision, count and record is the machine's, and every step of the loop the core's:
//! the gate is passed by the machine's own gate step (`Operation::poll_gate`), which holds
//! the place in flight until the attempt ends. [`drive_python`] runs it for every blocking
//! loop ([`crate::runner`], and each operation of `recuo.run_batch`).

use std::cell::OnceCell;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use recuo::{
    drive_from, monotonic_ms, unix_now_ms, AttemptContext, AttemptPool, Driver, Gate, GatePoll,
    GiveUpReason, Level, Operation, Record, RegulatorError, Report, RequestLine, RetryError, Seen,
    Step, Stopped, Told, Verdict,
};

use crate::attempt::{FramePool, KeyCell, PyAttempt};
use crate::call::{Call, Effects, Env};
use crate::current::as_current;
use crate::first::First;
use crate::machine::{verdict_arg, Build};
use crate::pool::PoolScope;
use crate::record::{carried, log_record, observed, records_level, NotesCell};
use crate::sleep::interruptible_sleep;
use crate::verdict::PyVerdict;

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
