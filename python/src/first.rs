//! The loops of `recuo.retry` and `recuo.call` as one object made once per decoration
//! (`_Loop`), and what the asyncio loop needs to make its first attempt before its machine.
//!
//! Most calls succeed at their first attempt (issue 18), so when the core says a success
//! needs no machine (`Operation::success_needs_machine`, asked once, when the loop is made),
//! that attempt is made before the core's machine exists ([`crate::runner::first_attempt`]):
//! the options are checked once, and a call pays for making its attempt current
//! ([`crate::current::as_current`]), one coarse clock reading and the call itself. A failure,
//! or a success whose records the `recuo` logger takes, starts the machine after that attempt
//! (`Operation::start_after_first`), which goes on from there.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

use recuo::{Gate, Operation, Policy, RequestLine};

use crate::args::{opt_callable, seed_arg, type_name};
use crate::machine::{Build, PyAttempt, PyOperation};
use crate::policy::PyPolicy;
use crate::record::request_arg;
use crate::runner::{
    first_frame, gate_arg, run_blocking, scoped_operation, Call, Effects, PoolScope, Shape,
};

/// Whether `value` is a coroutine (`inspect.iscoroutine`: the type cannot be subclassed).
fn is_coroutine(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    static COROUTINE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = value.py();
    let coroutine = COROUTINE.get_or_try_init(py, || {
        py.import("types")?
            .getattr("CoroutineType")
            .map(Bound::unbind)
    })?;
    Ok(value.get_type().is(coroutine.bind(py)))
}

/// Whether `function` is a plain Python function that is not async — what
/// `inspect.iscoroutinefunction` reads of one: no `CO_COROUTINE` flag on its code, no
/// `inspect.markcoroutinefunction` mark. Anything else may be async (the caller asks
/// Python).
fn plainly_sync(function: &Bound<'_, PyAny>) -> PyResult<bool> {
    const CO_COROUTINE: i64 = 0x80;
    static FUNCTION: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = function.py();
    let plain = FUNCTION.get_or_try_init(py, || {
        py.import("types")?
            .getattr("FunctionType")
            .map(Bound::unbind)
    })?;
    if !function.get_type().is(plain.bind(py)) {
        return Ok(false);
    }
    let flags: i64 = function
        .getattr(pyo3::intern!(py, "__code__"))?
        .getattr(pyo3::intern!(py, "co_flags"))?
        .extract()?;
    if flags & CO_COROUTINE != 0 {
        return Ok(false);
    }
    let attributes = function.getattr(pyo3::intern!(py, "__dict__"))?;
    let attributes = attributes.cast::<PyDict>()?;
    Ok(attributes.is_empty() || !attributes.contains(pyo3::intern!(py, "_is_coroutine_marker"))?)
}

/// A blocking loop's options, checked once: ``run(fn, args, kwargs)`` calls
/// ``fn(*args, **kwargs)`` under them. Private: ``recuo.retry`` and ``recuo.call`` make it.
///
/// ``handoff(fn, args, kwargs, coroutine, error)``, when given, is asked about a first
/// attempt that answered a coroutine (``error`` ``None``) or raised (``coroutine`` ``None``):
/// what it answers (not ``None``) is answered instead — the asyncio loop, for an
/// ``async def`` function.
#[pyclass(name = "_Loop", module = "recuo._recuo", frozen)]
pub(crate) struct PyLoop {
    policy: Py<PyPolicy>,
    classify: Option<Py<PyAny>>,
    on_retry: Option<Py<PyAny>>,
    on_give_up: Option<Py<PyAny>>,
    sleep: Option<Py<PyAny>>,
    seed: Option<u64>,
    gate: Option<Gate>,
    request: Option<RequestLine>,
    handoff: Option<Py<PyAny>>,
    /// The core's answer, asked once: a success needs no machine with this gate (no stats),
    /// so the first attempt is made before it.
    first_before: bool,
}

fn owned(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Py<PyAny>>> {
    Ok(opt_callable(value, what)?.map(|f| f.clone().unbind()))
}

#[pymethods]
impl PyLoop {
    #[new]
    #[pyo3(signature = (policy, classify, on_retry, on_give_up, seed, sleep, gate, request, handoff = None, /))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        policy: Bound<'_, PyPolicy>,
        classify: Option<&Bound<'_, PyAny>>,
        on_retry: Option<&Bound<'_, PyAny>>,
        on_give_up: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
        sleep: Option<&Bound<'_, PyAny>>,
        gate: Option<&Bound<'_, PyAny>>,
        request: Option<&Bound<'_, PyAny>>,
        handoff: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let gate = gate_arg(gate)?.map(|g| g.get().inner.clone());
        Ok(PyLoop {
            first_before: !Operation::success_needs_machine(gate.as_ref(), false, None),
            policy: policy.unbind(),
            classify: owned(classify, "classify")?,
            on_retry: owned(on_retry, "on_retry")?,
            on_give_up: owned(on_give_up, "on_give_up")?,
            sleep: owned(sleep, "sleep")?,
            seed,
            gate,
            request: request_arg(request)?,
            handoff: owned(handoff, "handoff")?,
        })
    }

    /// ``function(*args, **kwargs)`` under this loop's options; raises ``TypeError`` for a
    /// coroutine that no ``handoff`` took.
    #[pyo3(signature = (function, args, kwargs, /))]
    fn run(
        &self,
        py: Python<'_>,
        function: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        if !function.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "recuo.retry() calls a callable, not {}",
                type_name(function)
            )));
        }
        let effects = Effects {
            classify: self.classify.as_ref().map(|f| f.bind(py)),
            on_retry: self.on_retry.as_ref().map(|f| f.bind(py)),
            on_give_up: self.on_give_up.as_ref().map(|f| f.bind(py)),
            sleep: self.sleep.as_ref().map(|f| f.bind(py)),
        };
        let build = || Build {
            seed: self.seed,
            gate: self.gate.clone(),
            request: self.request.clone(),
            ..Build::default()
        };
        let policy: &Policy = &self.policy.get().0;
        let make = || Operation::new(policy);
        let shape = Shape {
            make: &make,
            max_attempts: policy.max_attempts(),
            header: Some(policy.idempotency_header()),
        };
        let handed_off = std::cell::Cell::new(false);
        let handoff = |first: &PyResult<Bound<'_, PyAny>>| -> PyResult<Option<Py<PyAny>>> {
            let Some(handoff) = &self.handoff else {
                return Ok(None);
            };
            let handed = match first {
                Ok(value) if is_coroutine(value)? => {
                    handoff
                        .bind(py)
                        .call1((function, args, kwargs, value, py.None()))?
                }
                Ok(_) => return Ok(None),
                // A plain function that is not async raised: nothing to hand over.
                Err(_) if plainly_sync(function)? => return Ok(None),
                Err(error) => {
                    handoff
                        .bind(py)
                        .call1((function, args, kwargs, py.None(), error.value(py)))?
                }
            };
            if handed.is_none() {
                return Ok(None);
            }
            handed_off.set(true);
            Ok(Some(handed.unbind()))
        };
        let call = Call::With {
            function,
            args,
            kwargs,
        };
        let value = run_blocking(
            py,
            &shape,
            self.first_before,
            build,
            call,
            &effects,
            &handoff,
        )?;
        let bound = value.bind(py);
        if !handed_off.get() && is_coroutine(bound)? {
            // The blocking loop saw a coroutine as a success: nothing was awaited, so nothing
            // was retried. Say so instead of handing back a coroutine that would run unretried.
            bound.call_method0(pyo3::intern!(py, "close"))?;
            let name = function
                .getattr(pyo3::intern!(py, "__qualname__"))
                .unwrap_or_else(|_| function.clone());
            return Err(PyTypeError::new_err(format!(
                "{} returned a coroutine, but recuo.retry cannot tell it is async: pass the \
                 async def function itself (not a lambda around it)",
                name.repr()?
            )));
        }
        Ok(value)
    }
}

/// For the asyncio loop's first attempt, made before its machine: the attempt (number 0,
/// carrying the pool for nested loops) set as this context's current attempt, and the token
/// to reset it with. Private.
#[pyfunction]
#[pyo3(name = "_first_attempt", signature = (policy, /))]
pub(crate) fn first_attempt<'py>(
    py: Python<'py>,
    policy: PyRef<'_, PyPolicy>,
) -> PyResult<(Bound<'py, PyAttempt>, Bound<'py, PyAny>)> {
    let policy = &policy.0;
    let frame = first_frame(py, policy.max_attempts(), Some(policy.idempotency_header()))?;
    let token = crate::current::set_current(py, &frame)?;
    Ok((frame, token))
}

/// The asyncio loop's machine after a first attempt made before it (`first`, started at
/// `now_ms`, `unix_ms` on the wall clock): started after it (the core's `start_after_first`,
/// drawing from the pool `LoopPool::after_first` chose), at its ``"call"`` for that attempt,
/// with its key and notes; and the token to reset ``_attempt_pool`` with when the loop's own
/// pool was set. Tell it the attempt's outcome next. Private.
#[pyfunction]
#[pyo3(name = "_operation_after_first", signature = (policy, seed, gate, request, first, now_ms, unix_ms, /))]
#[allow(clippy::too_many_arguments)]
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
    let mut op = scoped_operation(py, &policy.0, &scope, seed, gate, request, None)?;
    // The first attempt was made: the step is its "call".
    let _call = op.start_after_first(py, now_ms, Some(unix_ms));
    op.adopt_first(&first);
    Ok((op, scope.into_token()))
}
