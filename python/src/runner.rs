//! The blocking retry loop for Python: [`run_blocking`], which `com_retry`, the
//! synchronous `recuo.retry` and `recuo.call` run. It drives the core's machine with
//! Python's effects ([`crate::driver`]) in this context's attempt pool ([`crate::pool`]).
//!
//! When the core says a success needs no machine (`Operation::success_needs_machine`,
//! decided once per loop), the first attempt is made before the machine
//! ([`crate::first`]) and the machine is started after it (`Operation::start_after_first`)
//! on a failure, or when the records need it.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use recuo::{Operation, Stopped};

use crate::call::{Call, Effects, Env};
use crate::driver::{chain, drive_python, Driven};
use crate::first::{first_attempt, recycle, First};
use crate::machine::Build;
use crate::pool::PoolScope;
use crate::record::logs_debug;
use crate::values::instance;

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
                Some(hook) => instance(py, "Report", &gave_up.report)
                    .and_then(|report| hook.call1((report,)))
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
