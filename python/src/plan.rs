//! `recuo.plan` and `recuo.Plan`: the core's planning arithmetic (SPEC §8).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use recuo::{Plan, PlanError};

use crate::args::{int_arg, secs_arg, Int};
use crate::limits::rate_arg;

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

fn requests_arg(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    match int_arg(value, "requests")? {
        Int::Fits(n) => Ok(n),
        Int::Negative | Int::TooLarge => Err(PyValueError::new_err(format!(
            "requests must be between 0 and 2**64 - 1, not {value}"
        ))),
    }
}

fn latency_arg(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    secs_arg(value, "latency")
}

fn fraction_arg(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    secs_arg(value, "retry_fraction").map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "retry_fraction must be a number (int or float), not {}",
            crate::args::type_name(value)
        ))
    })
}

/// What a batch will take: ``interval_ms`` between starts at the target rate,
/// ``duration_s`` at least (retries included), ``retries`` expected, ``in_flight`` on average
/// (Little's law) and ``warnings`` worth reading. Immutable and comparable; made by
/// ``recuo.plan``.
#[pyclass(name = "Plan", module = "recuo", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyPlan(Plan);

#[pymethods]
impl PyPlan {
    /// Milliseconds between two starts at the target rate (rounded).
    #[getter]
    fn interval_ms(&self) -> u64 {
        self.0.interval_ms
    }

    /// The least time the batch can take at the target rate, retries included, in seconds.
    #[getter]
    fn duration_s(&self) -> f64 {
        self.0.duration_s
    }

    /// The expected number of retries: ``requests * f / (1 - f)``.
    #[getter]
    fn retries(&self) -> f64 {
        self.0.retries
    }

    /// The mean number of requests in flight: target rate × latency.
    #[getter]
    fn in_flight(&self) -> f64 {
        self.0.in_flight
    }

    /// Things worth knowing that do not stop the plan (little headroom, many in flight).
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.0.warnings)
    }

    fn __repr__(&self) -> String {
        format!(
            "Plan(interval_ms={}, duration_s={:?}, retries={:?}, in_flight={:?}, warnings={})",
            self.0.interval_ms,
            self.0.duration_s,
            self.0.retries,
            self.0.in_flight,
            match self.0.warnings.len() {
                0 => "()".to_owned(),
                1 => format!("({:?},)", self.0.warnings[0]),
                _ => format!(
                    "({})",
                    self.0
                        .warnings
                        .iter()
                        .map(|w| format!("{w:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        )
    }
}

/// Plans ``requests`` requests sent at ``target`` under an ``allowance``, each
/// answered in ``latency`` seconds, a fraction ``retry_fraction`` (0 to below 1) of all
/// attempts being retries.
///
/// Rates are text (``"120/min"``, ``"2/s"``, ``"5000/h"``, ``"86400/day"``) or numbers per
/// second. Guide B: ``plan(600, "120/min", "90/min", 2)`` is 667 ms between starts, 400 s,
/// 3 in flight. Raises ``recuo.PlanError`` (a ``ValueError``, with ``name``
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
) -> PyResult<PyPlan> {
    let allowance = rate_arg(allowance, "allowance")?;
    let target = rate_arg(target, "target")?;
    recuo::plan(requests, allowance, target, latency, retry_fraction)
        .map(PyPlan)
        .map_err(|e| plan_error(py, &e))
}
