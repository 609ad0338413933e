//! The values the core declares once — `recuo::Report`, `Stats`, `Plan`, `WhoAnswered` — as
//! the frozen dataclasses generated from those declarations (`recuo/_values.py`, `make
//! faces`). A core value becomes an instance through its plain form (serde), and an instance
//! is read back the same way: no field is named here.

use pyo3::exceptions::{
    PyOverflowError, PyRecursionError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{IntoPyDict, PyDict, PyMapping, PyString, PyTuple};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use recuo::{BatchProgress, Plan, Report, RetryAfter, RetryAfterValue, Stats, WhoAnswered};

use crate::args::must_be;

/// The generated class `name` of `recuo._values` (the module imported once).
fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module =
        MODULE.get_or_try_init(py, || Ok::<_, PyErr>(py.import("recuo._values")?.unbind()))?;
    module.bind(py).getattr(name)
}

/// Plain data as a dataclass's fields: null → `None`, an object → a `dict`, an array → a
/// tuple.
fn object<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let items = items.iter().map(|v| object(py, v));
            PyTuple::new(py, items.collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
        Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (name, v) in fields {
                dict.set_item(name, object(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// `value`'s plain form (serde's).
fn plain<T: Serialize>(value: &T) -> PyResult<Value> {
    serde_json::to_value(value).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// `json.loads(text)`: JSON text as Python's plain data, an object's keys in their order.
pub(crate) fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import(pyo3::intern!(py, "json"))?
        .call_method1(pyo3::intern!(py, "loads"), (text,))
}

/// `value`'s plain form as Python's plain data: null → `None`, an array → a `list`, an
/// object → a `dict` (what `to_dict` answers, and JSON writes), read by `json.loads`.
pub(crate) fn plain_object<'py, T: Serialize>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    loads(py, &plain(value)?.to_string())
}

/// `value` as an instance of the generated class `class`, its fields those of its plain form.
pub(crate) fn instance<T: Serialize>(
    py: Python<'_>,
    class_name: &str,
    value: &T,
) -> PyResult<Py<PyAny>> {
    let fields = object(py, &plain(value)?)?;
    let fields = fields.cast::<PyDict>()?;
    Ok(class(py, class_name)?.call((), Some(fields))?.unbind())
}

/// serde's message without its place in the JSON text, which recuo wrote, not the caller.
pub(crate) fn serde_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let place = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&place) {
        Some(message) => message.to_owned(),
        None => text,
    }
}

/// `value`, a mapping, read as a `T`: written as JSON by Python's own `json` (int keys become
/// strings, NaN is refused), then read by serde. `TypeError` unless a mapping; `Ok(Err(why))`
/// when it is not `T`'s plain form.
pub(crate) fn read_plain<T: DeserializeOwned>(
    value: &Bound<'_, PyAny>,
) -> PyResult<Result<T, String>> {
    let py = value.py();
    if value.cast::<PyMapping>().is_err() {
        return Err(must_be(value, "value", "a mapping (a dict)"));
    }
    let plain = py.get_type::<PyDict>().call1((value,))?;
    let options = [("allow_nan", false)].into_py_dict(py)?;
    let json = py.import(pyo3::intern!(py, "json"))?;
    let text = match json.call_method(pyo3::intern!(py, "dumps"), (plain,), Some(&options)) {
        Ok(text) => text.extract::<String>()?,
        // What `json` cannot write (a set, a NaN, a tuple as a key, lists nested past Python's
        // recursion limit) is not plain data.
        Err(e)
            if e.is_instance_of::<PyTypeError>(py)
                || e.is_instance_of::<PyValueError>(py)
                || e.is_instance_of::<PyRecursionError>(py) =>
        {
            return Ok(Err(e.value(py).to_string()));
        }
        Err(e) => return Err(e),
    };
    Ok(serde_json::from_str(&text).map_err(|e| serde_message(&e)))
}

/// `value`, a mapping, read as a `T`, the plain form of a `recuo.{name}`: `TypeError` unless a
/// mapping, `ValueError` (`not a recuo.{name}: ...`) when it is not `T`'s plain form.
pub(crate) fn read_as<T: DeserializeOwned>(value: &Bound<'_, PyAny>, name: &str) -> PyResult<T> {
    read_plain(value)?.map_err(|why| PyValueError::new_err(format!("not a recuo.{name}: {why}")))
}

/// What `__reduce__` answers for an object rebuilt by `recuo._recuo.{rebuild}(*args)`.
pub(crate) fn rebuilt_by<'py>(
    py: Python<'py>,
    rebuild: &str,
    args: impl IntoPyObject<'py>,
) -> PyResult<Bound<'py, PyTuple>> {
    let rebuild = py
        .import(pyo3::intern!(py, "recuo._recuo"))?
        .getattr(rebuild)?;
    PyTuple::new(
        py,
        [rebuild, pyo3::IntoPyObjectExt::into_bound_py_any(args, py)?],
    )
}

/// An instance of the generated class `class_name` (the argument `what`) read back as the
/// core's value: `TypeError` for anything else, `ValueError` for fields the core refuses.
pub(crate) fn value_of<T: DeserializeOwned>(
    value: &Bound<'_, PyAny>,
    class_name: &str,
    what: &str,
) -> PyResult<T> {
    if !value.is_instance(&class(value.py(), class_name)?)? {
        return Err(must_be(value, what, &format!("a recuo.{class_name}")));
    }
    let plain = value.call_method0(pyo3::intern!(value.py(), "to_dict"))?;
    read_plain(&plain)?.map_err(|why| PyValueError::new_err(format!("{what}: {why}")))
}

/// The value named ``name`` (``"Report"``, ``"Stats"``, ``"Plan"``, ``"WhoAnswered"``,
/// ``"RetryAfter"``, ``"BatchProgress"``) whose
/// plain form is ``value``, read by recuo's core: ``TypeError`` unless a mapping,
/// ``ValueError`` for a missing or unknown field or a value of the wrong type. Private: the
/// classes' ``from_dict``.
#[pyfunction]
#[pyo3(name = "_read_value", signature = (name, value, /))]
pub(crate) fn read_value(
    py: Python<'_>,
    name: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    fn read<T: DeserializeOwned + Serialize>(
        py: Python<'_>,
        name: &str,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        instance(py, name, &read_as::<T>(value, name)?)
    }
    match name {
        "Report" => read::<Report>(py, name, value),
        "Stats" => read::<Stats>(py, name, value),
        "Plan" => read::<Plan>(py, name, value),
        "WhoAnswered" => read::<WhoAnswered>(py, name, value),
        "BatchProgress" => read::<BatchProgress>(py, name, value),
        "RetryAfter" => {
            let read: RetryAfterValue = read_as(value, name)?;
            let checked = RetryAfter::try_from(read).map_err(|e| {
                PyValueError::new_err(format!("not a recuo.{name}: {e} (a kind and its wait)"))
            })?;
            instance(py, name, &RetryAfterValue::from(checked))
        }
        _ => Err(PyValueError::new_err(format!("no value is named {name:?}"))),
    }
}

/// ``(starts, mean_spacing_ns)`` of a ``recuo.Stats``: the core's ``Stats::starts`` and
/// ``Stats::mean_spacing_ns``. Private: ``recuo.Stats``'s properties.
#[pyfunction]
#[pyo3(name = "_stats_derived", signature = (stats, /))]
pub(crate) fn stats_derived(stats: &Bound<'_, PyAny>) -> PyResult<(u64, Option<f64>)> {
    let stats: Stats = value_of(stats, "Stats", "stats")?;
    Ok((stats.starts(), stats.mean_spacing_ns()))
}

/// ``a`` and ``b`` added up (the core's ``Stats::merge``); ``OverflowError`` when a count would
/// pass 2**64 - 1. Private: ``recuo.Stats.merge``.
#[pyfunction]
#[pyo3(name = "_stats_merge", signature = (a, b, /))]
pub(crate) fn stats_merge(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let a: Stats = value_of(a, "Stats", "stats")?;
    let b: Stats = value_of(b, "Stats", "other")?;
    let merged = a.merge(&b).ok_or_else(|| {
        PyOverflowError::new_err("these stats cannot be merged: a count would pass 2**64 - 1")
    })?;
    instance(py, "Stats", &merged)
}
