//! Who answered (SPEC §7) for Python: `recuo.who_answered`, the core's
//! [`recuo::who_answered`], and what it answers (`recuo.WhoAnswered`).

use pyo3::prelude::*;

use recuo::WhoAnswered;

use crate::args::{headers_arg, require_str};

/// Who most likely answered a request: ``origin`` is ``"api"``, ``"proxy"``, ``"cdn"`` or
/// ``"unknown"``; ``evidence`` lists what points there (and what points elsewhere), one line
/// each; ``confidence`` is ``"low"``, ``"medium"`` or ``"high"`` — never high on a brand
/// alone. Made by ``recuo.who_answered``. Immutable and comparable.
#[pyclass(name = "WhoAnswered", module = "recuo", frozen, eq)]
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct PyWhoAnswered(WhoAnswered);

#[pymethods]
impl PyWhoAnswered {
    /// ``"api"``, ``"proxy"``, ``"cdn"`` or ``"unknown"``.
    #[getter]
    fn origin(&self) -> &'static str {
        self.0.origin.name()
    }

    /// What points there (and what points elsewhere), one line each (a new list).
    #[getter]
    fn evidence(&self) -> Vec<String> {
        self.0.evidence.clone()
    }

    /// ``"low"``, ``"medium"`` or ``"high"``.
    #[getter]
    fn confidence(&self) -> &'static str {
        self.0.confidence.name()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let evidence = pyo3::types::PyList::new(py, &self.0.evidence)?.repr()?;
        Ok(format!(
            "WhoAnswered(origin='{}', confidence='{}', evidence={evidence})",
            self.0.origin.name(),
            self.0.confidence.name()
        ))
    }
}

fn content_type_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if value.is_none() {
        return Ok(None);
    }
    require_str(value, "expected_content_type").map(|t| Some(t.into_owned()))
}

/// Who answered, judged from the response's ``headers`` (any shape ``recuo.classify`` takes;
/// names in any case) and, when given, whether its content type is the
/// ``expected_content_type`` the API sends (``"application/json"``): HTML where JSON was
/// expected says the body was made elsewhere. An API's own answer that merely passed through
/// a CDN is still the API's. ``TypeError`` for a wrong shape or type.
#[pyfunction]
#[pyo3(signature = (headers, expected_content_type = None))]
pub(crate) fn who_answered(
    headers: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = content_type_arg)] expected_content_type: Option<String>,
) -> PyResult<PyWhoAnswered> {
    let pairs = headers_arg(Some(headers))?;
    Ok(PyWhoAnswered(recuo::who_answered(
        &pairs,
        expected_content_type.as_deref(),
    )))
}
