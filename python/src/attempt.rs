//! The attempt being made, for Python: `recuo.Attempt` (its number, the operation's
//! idempotency key and header, what the attempt told it for the records, and the attempt pool
//! it carries for nested loops) and `recuo.IdempotencyKey`.
//!
//! An `Attempt`'s key and notes are cells shared with its operation and made only when first
//! used ([`Lazy`]); its pool ([`FramePool`]) may be found only when a nested loop asks.

use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;

use recuo::{AttemptPool, IdempotencyKey, Outcome, Seen};

use crate::args::{headers_arg, locked, methods};
use crate::record::{record_status_arg, Notes};

/// One operation's idempotency key, made at its first use and then shared by every attempt.
pub(crate) type KeyCell = Arc<OnceLock<IdempotencyKey>>;

/// The key in `cell`, made now (from the operating system's random source) if this is its
/// first use.
pub(crate) fn key_of(cell: &KeyCell) -> IdempotencyKey {
    *cell.get_or_init(IdempotencyKey::random)
}

/// The attempt being made: its number (from 0), the operation's idempotency key and the
/// header to send it in. ``recuo.current_attempt()`` answers it inside a retry loop;
/// ``Operation.attempt`` answers it for a loop of your own.
///
/// For the records, the operation may say what the attempt sent (``record_request``) and
/// what it received (``record_response``).
#[pyclass(name = "Attempt", module = "recuo", frozen)]
pub(crate) struct PyAttempt {
    pub(crate) number: u32,
    pub(crate) key: Lazy<OnceLock<IdempotencyKey>>,
    pub(crate) header: Arc<str>,
    /// What the operation said about this attempt, shared by every `Attempt` object of it.
    pub(crate) notes: Lazy<Mutex<Notes>>,
    /// The attempt pool of the loop making this attempt, for the loops nested in it.
    pub(crate) pool: FramePool,
}

/// A cell an `Attempt` shares with its operation (its key, its notes), made only when first
/// used: most first attempts, made before their machine, never use either (issue 18), and
/// two allocations per call are a fifth of what such an attempt costs.
pub(crate) enum Lazy<T> {
    /// Made already (an operation's, shared): nothing to wait for.
    Made(Arc<T>),
    /// Made at its first use.
    Later(OnceLock<Arc<T>>),
}

impl<T: Default> Lazy<T> {
    /// A cell made at its first use.
    pub(crate) const fn new() -> Self {
        Lazy::Later(OnceLock::new())
    }

    /// Whether the cell was made (used, or shared with an operation).
    pub(crate) fn is_made(&self) -> bool {
        match self {
            Lazy::Made(_) => true,
            Lazy::Later(cell) => cell.get().is_some(),
        }
    }

    /// The cell, made now if this is its first use.
    pub(crate) fn get(&self) -> &Arc<T> {
        match self {
            Lazy::Made(cell) => cell,
            Lazy::Later(cell) => cell.get_or_init(Arc::default),
        }
    }
}

impl<T> From<Arc<T>> for Lazy<T> {
    /// `cell`, shared.
    fn from(cell: Arc<T>) -> Self {
        Lazy::Made(cell)
    }
}

/// The attempt pool an `Attempt` carries for the loops nested inside it (they draw from the
/// outermost loop's attempts).
pub(crate) enum FramePool {
    /// Not known here (an `Operation` of the caller's own): the context's pool decides.
    Unknown,
    /// The pool of the loop making the attempt.
    Known(AttemptPool),
    /// The first attempt of a loop, made before its machine: which pool it draws from — as
    /// the core's `LoopPool::after_first` says, from the enclosing loop's (found from
    /// `below`, the attempt it became current over, else the context's pool) or from one of
    /// this loop's own — is found only when first asked (by a nested loop, or the machine
    /// after a failure).
    Unresolved {
        /// The pool, and whether it is this loop's own, once found.
        found: OnceLock<(AttemptPool, bool)>,
        /// The loop's `max_attempts`.
        max_attempts: u32,
        /// The attempt this one became current over (unset: none).
        below: OnceLock<Py<PyAny>>,
    },
}

methods!({
    impl PyAttempt {
        /// The attempt's number: 0 for the first attempt, 1 for the first retry, …
        getter!(number(self) -> u32 = self.number);
        /// The operation's idempotency key (UUID v4 text): the same on every attempt of this
        /// operation, never shared with another. Made at its first use.
        getter!(idempotency_key(self) -> String = key_of(self.key.get()).to_string());
        /// The header to send the key in (the policy's, ``"Idempotency-Key"`` by default).
        getter!(idempotency_header(self) -> &str = &self.header);

        /// For the records: this attempt sends ``method`` to ``url`` (a ``str`` or ``bytes``;
        /// redacted in every record). It replaces the loop's ``request=`` for this attempt's
        /// record and the operation's result.
        #[pyo3(signature = (method, url))]
        fn record_request(
            &self,
            method: &Bound<'_, PyAny>,
            url: &Bound<'_, PyAny>,
        ) -> PyResult<()> {
            let line = recuo::RequestLine {
                method: crate::args::require_str(method, "method")?.into_owned(),
                url: crate::args::url_text(url, "url")?,
            };
            locked(self.notes.get()).request = Some(line);
            Ok(())
        }

        /// For the records: this attempt received ``status`` (an int from 100 to 999) with
        /// ``headers`` (any shape ``recuo.classify`` takes; only the request id and the wait
        /// headers are kept). It comes before what ``recuo.classify`` judged or the exception
        /// carries.
        #[pyo3(signature = (status, headers = None))]
        fn record_response(
            &self,
            status: &Bound<'_, PyAny>,
            headers: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<()> {
            let status = record_status_arg(status)?;
            let headers = headers_arg(headers)?;
            locked(self.notes.get()).response = Some(Seen::new(Outcome::Status(status), &headers));
            Ok(())
        }

        fn __repr__(&self) -> String {
            format!(
                "Attempt(number={}, idempotency_header={})",
                self.number,
                crate::args::str_repr(&self.header)
            )
        }
    }
});

/// A new idempotency key: a random UUID v4 from the operating system's random source,
/// different for every instance.
///
/// ``str(key)`` is its text: 36 lower-case characters,
/// ``xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx``. Send it in the ``Idempotency-Key`` header
/// of every attempt of one operation, and never with another. Immutable, comparable and
/// hashable. ``recuo.retry`` makes one per call: ``recuo.current_attempt().idempotency_key``.
#[pyclass(name = "IdempotencyKey", module = "recuo", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PyIdempotencyKey(pub(crate) IdempotencyKey);

#[pymethods]
impl PyIdempotencyKey {
    #[new]
    fn new() -> Self {
        PyIdempotencyKey(IdempotencyKey::random())
    }

    fn __str__(&self) -> &str {
        self.0.as_str()
    }

    fn __repr__(&self) -> String {
        format!("IdempotencyKey('{}')", self.0.as_str())
    }
}
