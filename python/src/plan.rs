//! `recuo.plan`: the core's planning arithmetic, answered as a `recuo.Plan`
//! ([`crate::values`]).

use pyo3::prelude::*;

use recuo::PlanError;

use crate::args::{int_in, latency_arg, readers, secs_arg};
use crate::limits::rate_arg;
use crate::values::instance;

/// `recuo.PlanError` for a plan the core refuses, with its stable `name`.
fn plan_error(py: Python<'_>, error: &PlanError) -> PyErr {
    let name = match error {
        PlanError::TargetAboveAllowance { .. } => "target_above_allowance",
        PlanError::BadRetryFraction(_) => "invalid_retry_fraction",
        PlanError::BadLatency(_) => "invalid_latency",
    };
    let err = crate::errors::PlanError::new_err(error.to_string());
    // Setting an attribute on a fresh exception cannot fail short of MemoryError.
    let _ = err.value(py).setattr(pyo3::intern!(py, "name"), name);
    err
}

readers! {
    fn requests_arg -> u64 = int_in("requests", 0..=u64::MAX, "must be between 0 and 2**64 - 1");
}

fn fraction_arg(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    secs_arg(value, "retry_fraction")
        .map_err(|_| crate::args::must_be(value, "retry_fraction", "a number (int or float)"))
}

/// Plans ``requests`` requests sent at ``target`` under an ``allowance``, each
/// answered in ``latency`` seconds, a fraction ``retry_fraction`` (0 to below 1) of all
/// attempts being retries.
///
/// Rates are text (``"120/min"``, ``"2/s"``, ``"5000/h"``, ``"86400/day"``) or numbers per
/// second. The batch of “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”:
/// ``plan(600, "120/min", "90/min", 2)`` is 667 ms between starts, 400 s, 3 in flight. Raises ``recuo.PlanError`` (a ``ValueError``, with ``name``
/// ``"target_above_allowance"``, ``"invalid_retry_fraction"`` or ``"invalid_latency"``) when
/// the plan cannot be made, ``ValueError`` for a bad rate or a negative count, ``TypeError``
/// for a wrong type.
#[pyfunction]
#[pyo3(signature = (requests, allowance, target, latency, retry_fraction = 0.0))]
pub(crate) fn plan(
    py: Python<'_>,
    #[pyo3(from_py_with = requests_arg)] requests: u64,
    allowance: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = latency_arg)] latency: f64,
    #[pyo3(from_py_with = fraction_arg)] retry_fraction: f64,
) -> PyResult<Py<PyAny>> {
    let allowance = rate_arg(allowance, "allowance")?;
    let target = rate_arg(target, "target")?;
    let plan = recuo::plan(requests, allowance, target, latency, retry_fraction)
        .map_err(|e| plan_error(py, &e))?;
    instance(py, "Plan", &plan)
}
