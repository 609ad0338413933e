//! The sans-IO state machine for Python: `recuo.Attempts` and what it answers (`Decision`,
//! `Report`), the attempt context (`Attempt`) and idempotency keys (`IdempotencyKey`).
//!
//! Every decision is the core's `recuo::Attempts`; this module converts its arguments and
//! answers, nothing more.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyTuple};

use recuo::{
    AttemptPool, Attempts, Decision, IdempotencyKey, LazyJitterRng, Outcome, Report,
    RetryAllowance, Verdict,
};

use crate::args::{mono_ms_arg, seed_arg, type_name};
use crate::limits::PyRetryBudget;
use crate::policy::PyPolicy;
use crate::record::{notes_of, record_status_arg, NotesCell, RequestLine, Seen};
use crate::verdict::PyVerdict;

/// One operation's idempotency key, made at its first use and then shared by every attempt.
pub(crate) type KeyCell = Arc<OnceLock<IdempotencyKey>>;

/// The key in `cell`, made now if this is its first use.
///
/// The key is drawn from a generator of its own, seeded by the operating system, never from
/// the jitter generator: reading the key (or not) cannot change a seeded run's delays, and a
/// seed meant for tests never makes a key predictable.
pub(crate) fn key_of(cell: &KeyCell) -> IdempotencyKey {
    *cell.get_or_init(IdempotencyKey::random)
}

/// The attempt being made: its number (from 0), the operation's idempotency key and the
/// header to send it in. ``recuo.current_attempt()`` answers it inside a retry loop;
/// ``Attempts.attempt`` answers it for a loop of your own.
///
/// For the records a retry loop logs, the operation may say what the attempt sent
/// (``record_request``) and what it received (``record_response``).
#[pyclass(name = "Attempt", module = "recuo", frozen)]
pub(crate) struct PyAttempt {
    pub(crate) number: u32,
    pub(crate) key: KeyCell,
    pub(crate) header: Arc<str>,
    /// What the operation said about this attempt, shared by every `Attempt` object of it.
    pub(crate) notes: NotesCell,
}

#[pymethods]
impl PyAttempt {
    /// For the records: this attempt sends ``method`` to ``url`` (a ``str`` or ``bytes``;
    /// redacted in every record). It replaces the loop's ``request=`` for this attempt's
    /// record and the operation's result.
    #[pyo3(signature = (method, url))]
    fn record_request(&self, method: &Bound<'_, PyAny>, url: &Bound<'_, PyAny>) -> PyResult<()> {
        let line = RequestLine {
            method: crate::args::require_str(method, "method")?.into_owned(),
            url: crate::args::url_text(url, "url")?,
        };
        notes_of(&self.notes).request = Some(line);
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
        let headers = crate::verdict::headers_arg(headers)?;
        notes_of(&self.notes).response = Some(Seen::new(Outcome::Status(status), &headers));
        Ok(())
    }

    /// The attempt's number: 0 for the first attempt, 1 for the first retry, …
    #[getter]
    fn number(&self) -> u32 {
        self.number
    }

    /// The operation's idempotency key (UUID v4 text): the same on every attempt of this
    /// operation, never shared with another. Made at its first use.
    #[getter]
    fn idempotency_key(&self) -> String {
        key_of(&self.key).to_string()
    }

    /// The header to send the key in (the policy's, ``"Idempotency-Key"`` by default).
    #[getter]
    fn idempotency_header(&self) -> &str {
        &self.header
    }

    fn __repr__(&self) -> String {
        format!(
            "Attempt(number={}, idempotency_header={})",
            self.number,
            crate::args::str_repr(&self.header)
        )
    }
}

/// A new idempotency key: a random UUID v4, different for every instance.
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
        PyIdempotencyKey(key_of(&KeyCell::default()))
    }

    fn __str__(&self) -> &str {
        self.0.as_str()
    }

    fn __repr__(&self) -> String {
        format!("IdempotencyKey('{}')", self.0.as_str())
    }
}

/// What to do next, as ``Attempts`` decides: ``kind`` is ``"done"`` (stop: success),
/// ``"retry"`` (sleep ``delay_ms``, then make attempt ``next_attempt``) or ``"give_up"``
/// (stop: ``reason``, and for ``"wait_exceeds_deadline"`` the instant ``retry_at_ms`` on
/// your clock from which a retry would be allowed). Immutable, comparable and hashable.
#[pyclass(name = "Decision", module = "recuo", frozen, eq)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct PyDecision(pub(crate) Decision);

#[pymethods]
impl PyDecision {
    /// ``"done"``, ``"retry"`` or ``"give_up"``.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.0 {
            Decision::Done => "done",
            Decision::Retry { .. } => "retry",
            Decision::GiveUp { .. } => "give_up",
        }
    }

    /// For ``"retry"``: the delay before the next attempt in milliseconds; else ``None``.
    #[getter]
    fn delay_ms(&self) -> Option<u64> {
        match self.0 {
            Decision::Retry { delay_ms, .. } => Some(delay_ms),
            _ => None,
        }
    }

    /// For ``"retry"``: the delay in seconds (``delay_ms / 1000``); else ``None``.
    #[getter]
    fn delay(&self) -> Option<f64> {
        self.delay_ms().map(ms_to_secs)
    }

    /// For ``"retry"``: the number of the next attempt (from 0); else ``None``.
    #[getter]
    fn next_attempt(&self) -> Option<u32> {
        match self.0 {
            Decision::Retry { next_attempt, .. } => Some(next_attempt),
            _ => None,
        }
    }

    /// For ``"give_up"``: ``"permanent"``, ``"attempts_exhausted"``,
    /// ``"wait_exceeds_deadline"``, ``"budget_exhausted"`` or ``"cancelled"``; else ``None``.
    #[getter]
    fn reason(&self) -> Option<&'static str> {
        match self.0 {
            Decision::GiveUp { reason, .. } => Some(reason.name()),
            _ => None,
        }
    }

    /// For ``"wait_exceeds_deadline"`` with a finite server wait: the instant, on the clock
    /// you pass to ``Attempts``, from which a retry would be allowed; else ``None``.
    #[getter]
    fn retry_at_ms(&self) -> Option<u64> {
        match self.0 {
            Decision::GiveUp { retry_at_ms, .. } => retry_at_ms,
            _ => None,
        }
    }

    fn __hash__(&self) -> u64 {
        let mut h = DefaultHasher::new();
        (self.kind(), self.delay_ms(), self.next_attempt()).hash(&mut h);
        (self.reason(), self.retry_at_ms()).hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        match self.0 {
            Decision::Done => "Decision(kind='done')".to_owned(),
            Decision::Retry {
                delay_ms,
                next_attempt,
            } => {
                format!("Decision(kind='retry', delay_ms={delay_ms}, next_attempt={next_attempt})")
            }
            Decision::GiveUp {
                reason,
                retry_at_ms,
            } => format!(
                "Decision(kind='give_up', reason='{}', retry_at_ms={})",
                reason.name(),
                opt_repr(retry_at_ms)
            ),
        }
    }
}

/// What happened to one operation: ``attempts`` made, the ``reason`` it stopped without
/// success (``None`` when it succeeded or has not stopped), the time from the start of the
/// first attempt to the last decision (``elapsed_ms``, ``elapsed`` in seconds), and the
/// delays decided between attempts (``delays_ms``, ``delays`` in seconds). A report from
/// ``recuo.retry`` that gave up with ``"wait_exceeds_deadline"`` also says when a retry
/// would be allowed (``retry_at``, Unix time in seconds, as ``time.time()``).
#[pyclass(name = "Report", module = "recuo", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyReport {
    pub(crate) report: Report,
    pub(crate) retry_at: Option<f64>,
}

#[pymethods]
impl PyReport {
    /// Attempts made.
    #[getter]
    fn attempts(&self) -> u32 {
        self.report.attempts
    }

    /// Why the operation stopped without success (a give-up reason), or ``None``.
    #[getter]
    fn reason(&self) -> Option<&'static str> {
        self.report.reason.map(|r| r.name())
    }

    /// Milliseconds from the start of the first attempt to the last decision.
    #[getter]
    fn elapsed_ms(&self) -> u64 {
        self.report.elapsed_ms
    }

    /// ``elapsed_ms`` in seconds.
    #[getter]
    fn elapsed(&self) -> f64 {
        ms_to_secs(self.report.elapsed_ms)
    }

    /// The delays decided between attempts, in milliseconds, in order.
    #[getter]
    fn delays_ms<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.report.delays_ms)
    }

    /// The delays in seconds.
    #[getter]
    fn delays<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.report.delays_ms.iter().map(|&ms| ms_to_secs(ms)))
    }

    /// For a ``recuo.retry`` or ``recuo.com_retry`` loop that gave up with
    /// ``"wait_exceeds_deadline"`` on a finite wait: the Unix time (seconds, as
    /// ``time.time()``) from which the server would accept a retry; else ``None``.
    #[getter]
    fn retry_at(&self) -> Option<f64> {
        self.retry_at
    }

    fn __repr__(&self) -> String {
        let delays: Vec<String> = self.report.delays_ms.iter().map(u64::to_string).collect();
        let comma = if delays.len() == 1 { "," } else { "" };
        format!(
            "Report(attempts={}, reason={}, elapsed_ms={}, delays_ms=({}{comma}), retry_at={})",
            self.report.attempts,
            self.reason()
                .map_or_else(|| "None".to_owned(), |r| format!("'{r}'")),
            self.report.elapsed_ms,
            delays.join(", "),
            self.retry_at
                .map_or_else(|| "None".to_owned(), |t| format!("{t:?}")),
        )
    }
}

/// Seconds from milliseconds.
pub(crate) fn ms_to_secs(ms: u64) -> f64 {
    // Exact below 2^53 ms (285,000 years); a float is what Python's time functions take.
    ms as f64 / 1000.0
}

fn opt_repr(v: Option<u64>) -> String {
    v.map_or_else(|| "None".to_owned(), |n| n.to_string())
}

/// The retry state of one operation under a policy, for code that runs its own loop (an
/// event loop, a scheduler): ``begin(now_ms)`` before each attempt, ``decide(verdict,
/// now_ms)`` after it, and do what the ``Decision`` says. Times are readings of your own
/// monotonic clock in whole milliseconds. ``seed`` makes the jitter reproducible.
#[pyclass(name = "Attempts", module = "recuo")]
pub(crate) struct PyAttempts {
    inner: Attempts,
    rng: LazyJitterRng,
    key: KeyCell,
    header: Arc<str>,
    /// The notes of the attempt begun last (fresh at each `begin`).
    notes: NotesCell,
}

impl PyAttempts {
    /// A fresh operation under `policy`, drawing from `pool` when it runs inside another
    /// loop's context (see `runner::PoolScope`).
    pub(crate) fn make(
        policy: &recuo::Policy,
        seed: Option<u64>,
        pool: Option<(AttemptPool, bool)>,
    ) -> Self {
        let mut inner = Attempts::new(policy);
        if let Some((pool, nested)) = pool {
            inner = inner.with_pool(pool, nested);
        }
        PyAttempts {
            inner,
            rng: LazyJitterRng::new(seed),
            key: KeyCell::default(),
            header: Arc::from(policy.idempotency_header()),
            notes: NotesCell::default(),
        }
    }

    /// The report so far, with `retry_at` (Unix seconds) when the runner knows it.
    pub(crate) fn report_with(&self, retry_at: Option<f64>) -> PyReport {
        PyReport {
            report: self.inner.report(),
            retry_at,
        }
    }
}

/// The verdict a caller hands to `decide`: a `Verdict`, or a `bool` (`True` retries with no
/// server wait, `False` gives up as permanent, as a predicate would).
fn verdict_arg(value: &Bound<'_, PyAny>) -> PyResult<Verdict> {
    if let Ok(v) = value.cast::<PyVerdict>() {
        return Ok(v.get().0);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Verdict::from_predicate(b.is_true()));
    }
    Err(PyTypeError::new_err(format!(
        "verdict must be a recuo.Verdict or a bool, not {}",
        type_name(value)
    )))
}

#[pymethods]
impl PyAttempts {
    #[new]
    #[pyo3(signature = (policy, *, seed = None))]
    fn new(
        policy: PyRef<'_, PyPolicy>,
        #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
    ) -> Self {
        Self::make(&policy.0, seed, None)
    }

    /// Starts the next attempt at ``now_ms``. Answers ``None`` when it may go ahead, or the
    /// ``"give_up"`` decision when the operation was cancelled or its attempts are spent.
    fn begin(&mut self, #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64) -> Option<PyDecision> {
        match self.inner.begin(now_ms) {
            Ok(_) => {
                self.notes = NotesCell::default();
                None
            }
            Err(decision) => Some(PyDecision(decision)),
        }
    }

    /// Decides what follows the attempt just made, whose verdict is ``verdict`` (a
    /// ``Verdict``, or a ``bool``: ``True`` retries, ``False`` gives up as permanent), at
    /// ``now_ms``. With a ``budget`` (a ``recuo.RetryBudget``), a retry takes a token from
    /// it, and none left gives up with ``"budget_exhausted"``.
    #[pyo3(signature = (verdict, now_ms, *, budget = None))]
    fn decide(
        &mut self,
        verdict: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
        budget: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDecision> {
        let verdict = verdict_arg(verdict)?;
        let budget = match budget.filter(|b| !b.is_none()) {
            None => None,
            Some(b) => Some(b.cast::<PyRetryBudget>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "budget must be a recuo.RetryBudget or None, not {}",
                    type_name(b)
                ))
            })?),
        };
        let allowance = budget.map(|b| &b.get().inner as &dyn RetryAllowance);
        Ok(PyDecision(self.inner.decide_with(
            verdict,
            now_ms,
            &mut self.rng,
            allowance,
        )))
    }

    /// Gives up with ``"cancelled"`` at ``now_ms`` because the operation was cancelled after
    /// ``begin`` but before its attempt could start (say, while waiting at a gate): that
    /// attempt is not counted.
    fn refuse_cancelled(&mut self, #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64) -> PyDecision {
        self.inner.cancel();
        PyDecision(self.inner.refuse_cancelled(now_ms))
    }

    /// Gives up with ``"attempts_exhausted"`` at ``now_ms``: what a loop does instead of
    /// classifying a failure when ``is_spent`` says no attempt is left.
    fn exhaust(&mut self, #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64) -> PyDecision {
        PyDecision(self.inner.exhaust(now_ms))
    }

    /// Cancels the operation: the next ``begin`` or ``decide`` gives up with
    /// ``"cancelled"``.
    fn cancel(&mut self) {
        self.inner.cancel();
    }

    /// Whether no attempt is left after the ones begun: a failure now can only end in
    /// ``"attempts_exhausted"``.
    #[getter]
    fn is_spent(&self) -> bool {
        self.inner.is_spent()
    }

    /// Attempts begun so far.
    #[getter]
    fn attempts(&self) -> u32 {
        self.inner.attempts()
    }

    /// The attempt begun last (its number, the key and the header), or ``None`` before the
    /// first ``begin``.
    #[getter]
    fn attempt(&self) -> Option<PyAttempt> {
        self.inner
            .attempts()
            .checked_sub(1)
            .map(|number| PyAttempt {
                number,
                key: Arc::clone(&self.key),
                header: Arc::clone(&self.header),
                notes: Arc::clone(&self.notes),
            })
    }

    /// The operation's idempotency key (UUID v4 text): made at its first use, then the same
    /// for every attempt of this operation.
    #[getter]
    fn idempotency_key(&self) -> String {
        key_of(&self.key).to_string()
    }

    /// The policy (a copy; ``Attempts`` keeps its own).
    #[getter]
    fn policy(&self) -> PyPolicy {
        PyPolicy(self.inner.policy().clone())
    }

    /// What has happened so far.
    fn report(&self) -> PyReport {
        self.report_with(None)
    }

    fn __repr__(&self) -> String {
        format!(
            "<recuo.Attempts: {} of {} begun>",
            self.inner.attempts(),
            self.inner.policy().max_attempts()
        )
    }
}
