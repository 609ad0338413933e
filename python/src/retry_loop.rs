//! The loops of `recuo.retry` and `recuo.call` as one object made once per decoration
//! (`_Loop`): the options checked once, each call run by the blocking loop
//! ([`crate::runner::run_blocking`]), its first attempt made before the machine when the
//! core says a success needs none ([`crate::first`]); an `async def` function handed to the
//! asyncio loop.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

use recuo::{Gate, Operation, Policy, RequestLine};

use crate::args::{opt_callable, seed_arg, type_name};
use crate::call::{Call, Effects};
use crate::limits::gate_arg;
use crate::machine::Build;
use crate::policy::PyPolicy;
use crate::record::request_arg;
use crate::runner::{run_blocking, Shape};

/// Whether `value`'s type is `types.{name}` (looked up once, in `cell`): not a subclass.
fn of_type(value: &Bound<'_, PyAny>, cell: &PyOnceLock<Py<PyAny>>, name: &str) -> PyResult<bool> {
    let py = value.py();
    let class =
        cell.get_or_try_init(py, || py.import("types")?.getattr(name).map(Bound::unbind))?;
    Ok(value.get_type().is(class.bind(py)))
}

/// Whether `value` is a coroutine (`inspect.iscoroutine`: the type cannot be subclassed).
fn is_coroutine(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    static COROUTINE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    of_type(value, &COROUTINE, "CoroutineType")
}

/// Whether `function` is a plain Python function that is not async — what
/// `inspect.iscoroutinefunction` reads of one: no `CO_COROUTINE` flag on its code, no
/// `inspect.markcoroutinefunction` mark. Anything else may be async (the caller asks
/// Python).
fn plainly_sync(function: &Bound<'_, PyAny>) -> PyResult<bool> {
    const CO_COROUTINE: i64 = 0x80;
    static FUNCTION: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    if !of_type(function, &FUNCTION, "FunctionType")? {
        return Ok(false);
    }
    let py = function.py();
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

/// `value`, checked to be a callable (or `None`), kept past the call that gave it.
fn owned(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Py<PyAny>>> {
    Ok(opt_callable(value, what)?.map(|f| f.clone().unbind()))
}

#[pymethods]
impl PyLoop {
    #[new]
    #[pyo3(signature = (policy, classify, on_retry, on_give_up, seed, sleep, gate, request, handoff = None, /))]
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
