//! Who answered for Python: `recuo.who_answered`, the core's
//! [`recuo::who_answered`], and what it answers (`recuo.WhoAnswered`).

use pyo3::prelude::*;

use crate::args::{content_type_arg, headers_arg};
use crate::values::instance;

/// Who answered, judged from the response's ``headers`` (any shape ``recuo.classify`` takes;
/// names in any case) and, when given, whether its content type is the
/// ``expected_content_type`` the API sends (``"application/json"``): HTML where JSON was
/// expected says the body was made elsewhere. An API's own answer that merely passed through
/// a CDN is still the API's. ``TypeError`` for a wrong shape or type.
#[pyfunction]
#[pyo3(signature = (headers, expected_content_type = None))]
pub(crate) fn who_answered(
    py: Python<'_>,
    headers: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = content_type_arg)] expected_content_type: Option<String>,
) -> PyResult<Py<PyAny>> {
    let pairs = headers_arg(Some(headers))?;
    let answer = recuo::who_answered(&pairs, expected_content_type.as_deref());
    instance(py, "WhoAnswered", &answer)
}
