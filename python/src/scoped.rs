//! Operations made in this context's attempt pool, for the loops that make the machine's
//! steps themselves: the asyncio loop of `recuo.retry` (`_operation_in_context`) and the
//! HTTP adapters (`_request_operation`, with the core's plan of the request).

use pyo3::prelude::*;

use crate::args::seed_arg;
use crate::attempt::PyIdempotencyKey;
use crate::limits::gate_arg;
use crate::machine::{Build, PyOperation};
use crate::policy::PyPolicy;
use crate::pool::PoolScope;
use crate::record::{records_level, request_arg};

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
    idempotency_key: Option<PyRef<'_, PyIdempotencyKey>>,
) -> PyResult<(PyOperation, Option<Py<PyAny>>)> {
    let scope = PoolScope::enter(py, policy.0.max_attempts(), false)?;
    let build = Build {
        seed,
        request: request_arg(request)?,
        key: idempotency_key.map(|k| k.0),
        ..Build::default()
    };
    let op = scoped_operation(py, &policy.0, &scope, gate, build)?;
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
    let build = Build {
        seed,
        request: Some(recuo::RequestLine {
            method: method.to_owned(),
            url: url.to_owned(),
        }),
        plan: Some(plan),
        unreplayable: !replayable,
        ..Build::default()
    };
    let op = scoped_operation(py, &policy.0, &scope, gate, build)?;
    let key = plan.sends_recuos_key().then(|| op.key_text());
    Ok((op, scope.into_token(), key))
}

/// A new ``Operation`` under `policy` with `build`'s settings in `scope`'s pool, passing
/// `gate` and keeping the records the ``recuo`` logger takes: the asyncio loop's and the HTTP
/// adapters' machine.
pub(crate) fn scoped_operation(
    py: Python<'_>,
    policy: &recuo::Policy,
    scope: &PoolScope,
    gate: Option<&Bound<'_, PyAny>>,
    build: Build,
) -> PyResult<PyOperation> {
    let build = Build {
        records: Some(records_level(py)?),
        gate: gate_arg(gate)?.map(|g| g.get().inner.clone()),
        pool: Some(scope.loop_pool()),
        ..build
    };
    Ok(build.operation(policy).with_pool(Some(scope.pool())))
}
