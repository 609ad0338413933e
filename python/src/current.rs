//! Which attempt is being made: what `recuo.current_attempt()` answers and what a nested loop
//! joins.
//!
//! A blocking loop's attempt is current for what it runs on its own thread. It is pushed on
//! this thread's stack of attempts ([`as_current`]) rather than set in the context: a
//! `ContextVar.set` and its `reset` allocate a token and two contexts and cost more than a
//! first attempt may (issue 18). Where contexts can take turns on one thread while the
//! attempt runs — greenlets, or `nest_asyncio` re-entering a running asyncio loop — it is set
//! in the context variable `recuo.current_attempt` instead, as the asyncio loop's attempts
//! always are.
//!
//! [`current`] reads both: the top of the stack while the variable still holds what it held
//! when that attempt was pushed (nothing was set in the context since), else the variable.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use crate::attempt::{FramePool, PyAttempt};
use crate::context::vars;

/// A blocking loop's attempt pushed on its thread's stack, and the context variable's value
/// when it was.
struct Pushed {
    frame: Py<PyAttempt>,
    outer: Py<PyAny>,
}

thread_local! {
    /// This thread's blocking attempts, innermost last (empty outside any).
    static STACK: RefCell<Vec<Pushed>> = const { RefCell::new(Vec::new()) };
}

/// The attempt being made: the innermost of this thread's stack while the context variable
/// holds what it held when that one was pushed (`outer`, the variable's value now), else
/// `outer`.
fn innermost<'py>(py: Python<'py>, outer: Bound<'py, PyAny>) -> Bound<'py, PyAny> {
    let top = STACK.with_borrow(|stack| top_over(stack, &outer).map(|frame| frame.clone_ref(py)));
    match top {
        Some(frame) => frame.into_bound(py).into_any(),
        None => outer,
    }
}

/// The top of `stack` while the context variable still holds `outer`, what it held when that
/// attempt was pushed (nothing was set in the context since).
fn top_over<'a>(stack: &'a [Pushed], outer: &Bound<'_, PyAny>) -> Option<&'a Py<PyAttempt>> {
    stack
        .last()
        .filter(|pushed| pushed.outer.is(outer))
        .map(|pushed| &pushed.frame)
}

/// The attempt being made in this context on this thread (`None` outside any).
pub(crate) fn current(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let outer = vars(py)?.attempt.get(py)?;
    Ok(innermost(py, outer))
}

/// What tells whether contexts may take turns on this thread: `sys.modules`, its length when
/// last looked at (a look again only after an import), and whether a module that switches
/// between contexts was ever loaded.
struct Turns {
    modules: Option<Py<PyDict>>,
    seen: AtomicUsize,
    switching: AtomicBool,
}

/// The modules that run another context on this thread inside a call: greenlets (gevent,
/// eventlet, greenback: a greenlet switches at any call), and `nest_asyncio` (it re-enters a
/// running asyncio loop, which then runs other tasks). Without them, only a call nested in
/// the attempt runs on its thread until it returns: an asyncio loop refuses to be re-entered.
const SWITCHING: [&str; 2] = ["greenlet", "nest_asyncio"];

/// Whether another context may run on this thread while an attempt runs (then always: once
/// loaded, a module stays so).
fn contexts_take_turns(py: Python<'_>) -> PyResult<bool> {
    static TURNS: PyOnceLock<Turns> = PyOnceLock::new();
    let turns = TURNS.get_or_try_init(py, || -> PyResult<_> {
        let modules = py.import("sys")?.getattr("modules")?;
        Ok(Turns {
            modules: modules.cast_into::<PyDict>().ok().map(Bound::unbind),
            seen: AtomicUsize::new(usize::MAX),
            switching: AtomicBool::new(false),
        })
    })?;
    if turns.switching.load(Ordering::Relaxed) {
        return Ok(true);
    }
    // No dict to look at (someone replaced `sys.modules`): assume the worst.
    let Some(modules) = &turns.modules else {
        return Ok(true);
    };
    let modules = modules.bind(py);
    let loaded = modules.len();
    if loaded == turns.seen.load(Ordering::Relaxed) {
        return Ok(false);
    }
    turns.seen.store(loaded, Ordering::Relaxed);
    for name in SWITCHING {
        if modules.contains(name)? {
            turns.switching.store(true, Ordering::Relaxed);
            return Ok(true);
        }
    }
    Ok(false)
}

/// Tells `frame`, a first attempt made before its machine, the attempt it becomes current
/// over (`innermost`): its loop's pool is found from it, when asked.
fn note_below(frame: &Bound<'_, PyAttempt>, innermost: &Bound<'_, PyAny>) {
    if let FramePool::Unresolved { below, .. } = &frame.get().pool {
        if !innermost.is_none() {
            let _ = below.set(innermost.clone().unbind());
        }
    }
}

/// Sets `frame`, the asyncio loop's first attempt, as this context's attempt: the token to
/// reset it with.
pub(crate) fn set_current<'py>(
    py: Python<'py>,
    frame: &Bound<'py, PyAttempt>,
) -> PyResult<Bound<'py, PyAny>> {
    let var = &vars(py)?.attempt;
    note_below(frame, &innermost(py, var.get(py)?));
    var.set(py, frame)
}

/// Pops this thread's innermost attempt when dropped: on every way out of the call.
struct Pop<'py>(Python<'py>);

impl Drop for Pop<'_> {
    fn drop(&mut self) {
        if let Some(Pushed { frame, outer }) = STACK.with_borrow_mut(Vec::pop) {
            // Released as `Bound`s: a `Py` would ask again whether the thread is attached.
            drop((frame.into_bound(self.0), outer.into_bound(self.0)));
        }
    }
}

/// Runs `call` with `frame` as the attempt being made: `call`'s own answer, or the context's
/// reset error after a success.
pub(crate) fn as_current<'py, T>(
    py: Python<'py>,
    frame: &Bound<'py, PyAttempt>,
    call: impl FnOnce() -> PyResult<T>,
) -> PyResult<T> {
    let var = &vars(py)?.attempt;
    let outer = var.get(py)?;
    if contexts_take_turns(py)? {
        note_below(frame, &innermost(py, outer));
        let token = var.set(py, frame)?;
        let result = call();
        let reset = var.reset(py, token);
        return match (result, reset) {
            (Ok(_), Err(reset)) => Err(reset),
            (result, _) => result,
        };
    }
    // One borrow for the innermost and the push: each thread-local access is a call here.
    STACK.with_borrow_mut(|stack| {
        match top_over(stack, &outer) {
            Some(top) => note_below(frame, top.bind(py).as_any()),
            None => note_below(frame, &outer),
        }
        stack.push(Pushed {
            frame: frame.clone().unbind(),
            outer: outer.unbind(),
        })
    });
    let _pop = Pop(py);
    call()
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
