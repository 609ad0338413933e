//! Redaction for Python: `recuo.redact_url`, `recuo.redact_url_detailed` and
//! `recuo.redact_headers`, the core's [`recuo::redact_url`] and [`recuo::redact_headers`].
//!
//! The rules are the core's; this module only reads Python values. Text that is not valid
//! Unicode is never an error and never comes back raw: a `str` with lone surrogates has them
//! replaced by U+FFFD; URL `bytes` that are not UTF-8 are percent-encoded (`%FF`); header
//! `bytes` are read as UTF-8 when valid, else as ISO-8859-1.

use pyo3::prelude::*;

use crate::args::{headers_arg, methods, url_arg};

/// ``url`` (a ``str`` or ``bytes``) with its secrets and personal data replaced: userinfo
/// removed, the values of sensitive query parameters ``[redacted]``, e-mail addresses
/// ``[email]`` and long numbers (CPF, CNPJ, card and phone numbers) ``[number]`` in the path
/// and query values. Never raises for any text; a malformed URL is redacted as far as it can
/// be read (``redact_url_detailed`` says whether it was). ``TypeError`` for a non-text.
#[pyfunction]
#[pyo3(signature = (url, /))]
pub(crate) fn redact_url(#[pyo3(from_py_with = url_arg)] url: String) -> String {
    recuo::redact_url(&url).url
}

/// ``url`` redacted as ``redact_url`` does, and whether it was malformed: a ``RedactedUrl``
/// with ``url`` and ``malformed``.
///
/// A malformed URL (an odd scheme, no host after ``://``, spaces or control characters) is
/// redacted as far as it can be read, never shown as it came. ``TypeError`` for a non-text.
#[pyfunction]
#[pyo3(signature = (url, /))]
pub(crate) fn redact_url_detailed(#[pyo3(from_py_with = url_arg)] url: String) -> PyRedactedUrl {
    PyRedactedUrl(recuo::redact_url(&url))
}

/// A redacted URL (``url``) and whether the URL given was malformed (``malformed``: it was
/// redacted as far as it could be read, never shown as it came). Made by
/// ``recuo.redact_url_detailed``. Immutable, comparable and hashable.
#[pyclass(name = "RedactedUrl", module = "recuo", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct PyRedactedUrl(recuo::RedactedUrl);

impl std::hash::Hash for PyRedactedUrl {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (&self.0.url, self.0.malformed).hash(state);
    }
}

methods!({
    impl PyRedactedUrl {
        /// The URL with secrets and personal data replaced.
        getter!(url(self) -> &str = &self.0.url);
        /// Whether the URL given was not a well-formed absolute or relative URL.
        getter!(malformed(self) -> bool = self.0.malformed);

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            let url = pyo3::types::PyString::new(py, &self.0.url).repr()?;
            Ok(format!(
                "RedactedUrl(url={url}, malformed={})",
                crate::args::bool_repr(self.0.malformed)
            ))
        }
    }
});

/// ``headers`` — a mapping, anything with ``items()`` (``requests``, ``httpx`` or
/// ``aiohttp`` headers, ``http.client.HTTPMessage``) or ``(name, value)`` pairs, as ``str``
/// or ``bytes`` — as a list of ``(name, value)`` pairs of ``str``, in order, names as given:
/// the values of sensitive headers (``Authorization``, ``Cookie``, every name containing
/// ``token``, ``secret``, ``key``, ``auth``, ``session``, ``signature``, …) ``[redacted]``,
/// URLs inside the other values redacted as ``redact_url`` does. ``None`` is no headers.
/// ``TypeError`` for a wrong shape or type; never an error for the text itself.
#[pyfunction]
#[pyo3(signature = (headers, /))]
pub(crate) fn redact_headers(headers: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    Ok(recuo::redact_headers(&headers_arg(Some(headers))?))
}
