//! The core's operation machine for Python: `recuo.Operation` and the `Step` it answers; its
//! `Attempt` and `IdempotencyKey` are [`crate::attempt`]'s, its `Report` the generated
//! dataclass ([`crate::values`]).
//!
//! Every decision, count and record is the core's `recuo::Operation`; this module converts
//! its arguments and answers, and keeps what an attempt told its `Attempt` for the records.

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBool;

use recuo::{
    AttemptPool, Gate, GatePoll, IdempotencyKey, Level, LoopPool, Operation, Policy, Report, Seen,
    Step, Verdict,
};

use crate::args::{
    headers_arg, methods, mono_ms_arg, ms_to_secs, must_be, opt, outcome_arg, seed_arg,
};
use crate::attempt::{key_of, FramePool, KeyCell, PyAttempt, PyIdempotencyKey};
use crate::limits::{detach_if, PyGate};
use crate::policy::PyPolicy;
use crate::record::{
    carried, give_up_reason, observed, polled, record_status_arg, request_arg, NotesCell,
};
use crate::stats::PyStatsRecorder;
use crate::values::instance;
use crate::verdict::PyVerdict;

/// What the machine answers the host: a [`Step`], or — to a look at the gate that is not
/// through yet ([`recuo::GatePoll::Wait`]) — how long to wait before looking again.
#[derive(Clone, PartialEq)]
pub(crate) enum Answer {
    /// The machine's step.
    Step(Step),
    /// Not through the gate yet for `attempt`: look again in `delay_ms`.
    Wait {
        /// The attempt waiting at the gate.
        attempt: u32,
        /// How long, ms.
        delay_ms: u64,
    },
}

/// What to do next, as ``recuo.Operation`` answers: ``kind`` is ``"enter"`` (pass the gate
/// for ``attempt``, waiting at most until ``until_ms``: a host that cannot block asks
/// ``poll_gate``), ``"wait"`` (``poll_gate``'s answer while the gate is not open yet: sleep
/// ``delay_ms``, then poll again), ``"call"`` (make ``attempt`` now, bounded by
/// ``timeout_ms`` when you can), ``"classify"`` (judge the failure of ``attempt``),
/// ``"sleep"`` (wait ``delay_ms``), ``"done"`` (succeeded: ``report``) or ``"gave_up"``
/// (``reason``, ``report``, and for ``"wait_exceeds_deadline"`` the instant ``retry_at_ms``
/// on your clock from which a retry would be allowed). Immutable and comparable.
#[pyclass(name = "Step", module = "recuo", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyStep(pub(crate) Answer);

impl PyStep {
    /// The machine's step (`None` for a wait at the gate).
    fn step(&self) -> Option<&Step> {
        match &self.0 {
            Answer::Step(step) => Some(step),
            Answer::Wait { .. } => None,
        }
    }
}

methods!({
    impl PyStep {
        /// For ``sleep`` and ``wait``: the delay in seconds.
        getter!(delay(self) -> Option<f64> = self.delay_ms().map(ms_to_secs));
        /// ``"enter"``, ``"wait"``, ``"call"``, ``"classify"``, ``"sleep"``, ``"done"`` or
        /// ``"gave_up"``.
        #[getter]
        fn kind(&self) -> &'static str {
            match &self.0 {
                Answer::Wait { .. } => "wait",
                Answer::Step(Step::Enter { .. }) => "enter",
                Answer::Step(Step::Call { .. }) => "call",
                Answer::Step(Step::Classify { .. }) => "classify",
                Answer::Step(Step::Sleep { .. }) => "sleep",
                Answer::Step(Step::Done(_)) => "done",
                Answer::Step(Step::GaveUp { .. }) => "gave_up",
            }
        }
        /// The attempt's number (from 0) for ``enter``, ``wait``, ``call``, ``classify`` and
        /// ``sleep``.
        #[getter]
        fn attempt(&self) -> Option<u32> {
            match &self.0 {
                Answer::Wait { attempt, .. }
                | Answer::Step(
                    Step::Enter { attempt, .. }
                    | Step::Call { attempt, .. }
                    | Step::Classify { attempt }
                    | Step::Sleep { attempt, .. },
                ) => Some(*attempt),
                _ => None,
            }
        }
        /// For ``enter``: the deadline's instant on your clock (ms), if there is one.
        #[getter]
        fn until_ms(&self) -> Option<u64> {
            match self.step() {
                Some(Step::Enter { until_ms, .. }) => *until_ms,
                _ => None,
            }
        }
        /// For ``call``: what is left of the deadline (ms), if there is one.
        #[getter]
        fn timeout_ms(&self) -> Option<u64> {
            match self.step() {
                Some(Step::Call { timeout_ms, .. }) => *timeout_ms,
                _ => None,
            }
        }
        /// For ``sleep`` and ``wait``: the delay in ms.
        #[getter]
        fn delay_ms(&self) -> Option<u64> {
            match &self.0 {
                Answer::Step(Step::Sleep { delay_ms, .. }) | Answer::Wait { delay_ms, .. } => {
                    Some(*delay_ms)
                }
                _ => None,
            }
        }
        /// For ``gave_up``: why.
        #[getter]
        fn reason(&self) -> Option<&'static str> {
            match self.step() {
                Some(Step::GaveUp { reason, .. }) => Some(reason.name()),
                _ => None,
            }
        }
        /// For ``gave_up`` with ``"wait_exceeds_deadline"`` on a finite wait: the instant on
        /// your clock (ms) from which the server would accept a retry.
        #[getter]
        fn retry_at_ms(&self) -> Option<u64> {
            match self.step() {
                Some(Step::GaveUp { retry_at_ms, .. }) => *retry_at_ms,
                _ => None,
            }
        }
        /// For ``done`` and ``gave_up``: the operation's report.
        #[getter]
        fn report(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
            match self.step() {
                Some(Step::Done(report) | Step::GaveUp { report, .. }) => {
                    instance(py, "Report", report).map(Some)
                }
                _ => Ok(None),
            }
        }

        fn __repr__(&self) -> String {
            let n = |v: Option<u64>| v.map_or_else(|| "None".to_owned(), |v| v.to_string());
            let kind = self.kind();
            let mut out = format!("Step(kind='{kind}'");
            if let Some(attempt) = self.attempt() {
                out += &format!(", attempt={attempt}");
            }
            out += &match kind {
                "wait" | "sleep" => format!(", delay_ms={}", n(self.delay_ms())),
                "enter" => format!(", until_ms={}", n(self.until_ms())),
                "call" => format!(", timeout_ms={}", n(self.timeout_ms())),
                "gave_up" => format!(
                    ", reason='{}', retry_at_ms={}",
                    self.reason().unwrap_or("?"),
                    n(self.retry_at_ms())
                ),
                _ => String::new(),
            };
            out + ")"
        }
    }
});

/// A verdict handed to the machine: a `Verdict` (with what `recuo.classify` saw), or a
/// `bool` (`True` retries, `False` gives up as permanent, as a predicate would).
pub(crate) fn verdict_arg(value: &Bound<'_, PyAny>) -> PyResult<(Verdict, Option<Seen>)> {
    if let Ok(v) = value.cast::<PyVerdict>() {
        let v = v.get();
        return Ok((v.0, v.1.as_deref().cloned()));
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok((b.is_true().into(), None));
    }
    Err(must_be(value, "verdict", "a recuo.Verdict or a bool"))
}

fn level_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<Level>> {
    opt(value, |v| {
        let name = crate::args::require_str(v, "records")?;
        Level::from_name(&name).ok_or_else(|| {
            let levels = Level::ALL.map(|l| format!("'{}'", l.name())).join(", ");
            pyo3::exceptions::PyValueError::new_err(format!(
                "records must be {levels} or None, not {name:?}"
            ))
        })
    })
}

/// What an operation is built from, besides its policy.
#[derive(Default)]
pub(crate) struct Build {
    pub(crate) seed: Option<u64>,
    pub(crate) gate: Option<recuo::Gate>,
    pub(crate) stats: Option<recuo::StatsRecorder>,
    pub(crate) request: Option<recuo::RequestLine>,
    pub(crate) records: Option<Level>,
    pub(crate) guide: bool,
    pub(crate) key: Option<IdempotencyKey>,
    /// Where its attempts come from (the core's rule, [`LoopPool::choose`] or
    /// [`LoopPool::after_first`]).
    pub(crate) pool: Option<LoopPool>,
    /// An HTTP request's plan (its key, whether it counts as idempotent).
    pub(crate) plan: Option<recuo::http::RequestPlan>,
    /// The request's body cannot be sent twice: one attempt.
    pub(crate) unreplayable: bool,
}

impl Build {
    /// The core's machine under `policy` with these settings, as a `recuo.Operation`.
    pub(crate) fn operation(self, policy: &Policy) -> PyOperation {
        let op = Operation::new(policy);
        let op = if self.guide {
            op.classify_last_failure(false)
        } else {
            op
        };
        let records = self.records;
        let gate_remote = self.gate.as_ref().is_some_and(Gate::is_remote);
        let (op, key) = self.apply(op);
        PyOperation {
            attempt_records: records.is_some_and(|level| level <= Level::Info),
            header: Arc::from(op.policy().idempotency_header()),
            op,
            key,
            notes: NotesCell::default(),
            current: None,
            last: None,
            pool: None,
            gate_remote,
        }
    }

    /// `op` with these settings, and the cell of its key.
    pub(crate) fn apply(self, mut op: Operation) -> (Operation, KeyCell) {
        // Each builder call moves the machine: only the settings given are made.
        if self.seed.is_some() {
            op = op.seed(self.seed);
        }
        if let Some(line) = &self.request {
            op = op.request(&line.method, &line.url);
        }
        if self.records.is_some() {
            op = op.records(self.records);
        }
        if let Some(gate) = self.gate {
            op = op.gate(gate);
        }
        if let Some(stats) = self.stats {
            op = op.stats(stats);
        }
        if let Some(pool) = self.pool {
            op = op.loop_pool(pool);
        }
        if let Some(plan) = self.plan {
            op = op.plan(plan);
        }
        if self.unreplayable {
            op = op.replayable(false);
        }
        let key = KeyCell::default();
        if let Some(k) = self.key {
            op = op.idempotency_key(k);
            let _ = key.set(k);
        }
        (op, key)
    }
}

/// One operation's whole retry loop as the core's sans-IO machine, for code that
/// runs its own loop (an event loop, a scheduler): tell it what happened, do the ``Step`` it
/// answers. ``recuo.retry``'s asyncio loop is such a driver.
///
/// Times are readings of your own monotonic clock in whole milliseconds. ``seed`` makes the
/// jitter reproducible (never the key). ``gate`` (a ``recuo.Gate``): a ``"enter"`` step
/// before each attempt when it has a limit or a regulator — answer it with ``poll_gate``
/// (a host that cannot block) or with ``entered`` after waiting yourself — its budget counts
/// first attempts and pays for retries, an adaptive regulator hears every verdict.
/// ``stats`` (a ``recuo.StatsRecorder``) counts starts, causes and the result.
/// ``request=(method, url)`` is what ``responded`` classifies with and the records name.
/// ``records`` (``"debug"``, ``"info"``, ``"warning"`` or ``None``) keeps the records of that
/// level and above, for ``poll_record``. ``classify_last_failure=False`` is ``com_retry``'s loop
/// (the last failure is not judged: ``"attempts_exhausted"``). ``idempotency_key`` (a
/// ``recuo.IdempotencyKey``) is the caller's key, which makes the request idempotent.
/// ``pool`` (an int): this operation runs inside an attempt of an enclosing loop with that
/// many attempts left, and draws from them — or its first attempt was made before the
/// operation existed (``start_after_first``) and ``pool`` is what is left for the rest.
#[pyclass(name = "Operation", module = "recuo")]
pub(crate) struct PyOperation {
    op: Operation,
    key: KeyCell,
    header: Arc<str>,
    /// The notes of the attempt being made (fresh at each ``"call"``).
    notes: NotesCell,
    /// The number of the attempt of the last ``"call"``.
    current: Option<u32>,
    /// Whether the records kept include the attempts' (the level is info or debug).
    attempt_records: bool,
    /// The report of the final step (the machine's `report()` then may not name who stopped
    /// the queue).
    last: Option<Report>,
    /// The attempt pool this operation draws from (an enclosing loop's, or its own), which
    /// its attempts carry for the loops nested in them; `None` when not known here.
    pool: Option<AttemptPool>,
    /// Whether a look at the gate may ask a Redis server: the GIL is released meanwhile.
    gate_remote: bool,
}

impl PyOperation {
    /// The operation's idempotency key (UUID v4 text), made now if this is its first use.
    pub(crate) fn key_text(&self) -> String {
        key_of(&self.key).to_string()
    }

    /// The same operation, its attempts carrying `pool` for the loops nested in them.
    pub(crate) fn with_pool(mut self, pool: Option<AttemptPool>) -> Self {
        self.pool = pool;
        self
    }

    /// Takes over the first attempt, made before the machine (`frame`): its key and its
    /// notes become this operation's. Call it right after `start_after_first`.
    pub(crate) fn adopt_first(&mut self, frame: &PyAttempt) {
        self.key = Arc::clone(frame.key.get());
        self.notes = Arc::clone(frame.notes.get());
    }

    fn step(&mut self, step: Step) -> PyStep {
        match &step {
            Step::Call { attempt, .. } => {
                self.notes = NotesCell::default();
                self.current = Some(*attempt);
            }
            Step::GaveUp { report, .. } | Step::Done(report) => self.last = Some(report.clone()),
            _ => {}
        }
        PyStep(Answer::Step(step))
    }

    /// Runs a step of the machine that may ask a Redis budget — with the GIL released then,
    /// so that other threads (an event loop among them) run meanwhile — and answers it.
    fn advance(
        &mut self,
        py: Python<'_>,
        step: impl FnOnce(&mut Operation) -> Step + Send,
    ) -> PyStep {
        let op = &mut self.op;
        let step = detach_if(py, op.asks_a_remote_store(), move || step(op));
        self.step(step)
    }

    /// What the attempt just made told its notes, and what `error` carries: for its record.
    fn ended(&mut self, error: Option<&Bound<'_, PyAny>>) -> (Option<Seen>, Option<Seen>) {
        if !self.op.keeps_records() {
            return (None, None);
        }
        // Only an attempt's record shows what it received: below, the error is not read.
        let error = error.filter(|e| !e.is_none() && self.attempt_records);
        let (sent, seen) = observed(&self.notes);
        let carried = error.and_then(carried);
        if let Some(sent) = sent {
            self.op.attempt_request(&sent.method, &sent.url);
        }
        (seen, carried)
    }

    /// One look at the gate (the core's `Operation::poll_gate`, or `poll_gate_at` with the
    /// regulator asked at `regulator_now_ns`), with the GIL released when it may ask a Redis
    /// server.
    fn polled(
        &mut self,
        py: Python<'_>,
        now_ms: u64,
        regulator_now_ns: Option<u64>,
    ) -> PyResult<PyStep> {
        let look = move |op: &mut Operation| match regulator_now_ns {
            Some(ns) => op.poll_gate_at(now_ms, ns),
            None => op.poll_gate(now_ms),
        };
        let op = &mut self.op;
        let polled = detach_if(py, self.gate_remote, move || look(op));
        match polled.map_err(|e| crate::limits::regulator_use_error(&e))? {
            GatePoll::Wait { delay_ms } => Ok(PyStep(Answer::Wait {
                attempt: self.op.attempt(),
                delay_ms,
            })),
            GatePoll::Next(step) => Ok(self.step(step)),
        }
    }
}

methods!({
    impl PyOperation {
        /// The operation's idempotency key (UUID v4 text): the caller's, or made from the
        /// operating system's random source at its first use, then the same on every attempt.
        getter!(key(self) -> String = key_of(&self.key).to_string());
        /// Whether records are kept.
        getter!(keeps_records(self) -> bool = self.op.keeps_records());
        /// Whether the operation has finished (done or given up).
        getter!(is_finished(self) -> bool = self.op.is_finished());
        /// The policy (a copy).
        getter!(policy(self) -> PyPolicy = PyPolicy(self.op.policy().clone()));
        /// Whether a step may ask a Redis server (the gate's budget is on Redis): the asyncio loop
        /// then runs its steps from the loop's executor, and each step releases the GIL while
        /// it asks. Private.
        #[pyo3(name = "_asks_remote")]
        getter!(asks_remote(self) -> bool = self.op.asks_a_remote_store());
        /// Whether a look at the gate (``poll_gate``) may ask a Redis server (the gate's
        /// regulator, limit or budget is on Redis): the asyncio loop then looks from the loop's
        /// executor. Private.
        #[pyo3(name = "_polls_remote")]
        getter!(polls_remote(self) -> bool = self.gate_remote);
        /// What has happened so far; for ``"wait_exceeds_deadline"``, ``retry_at`` is the
        /// Unix time (seconds) from which a retry would be allowed.
        #[getter]
        fn report(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
            match &self.last {
                Some(report) => instance(py, "Report", report),
                None => instance(py, "Report", &self.op.report()),
            }
        }
        /// The attempt being (or last) made: its number, the key, the header; and what it
        /// tells ``record_request`` / ``record_response`` goes in its record. ``None`` before
        /// the first ``"call"``.
        #[getter]
        fn attempt(&self) -> Option<PyAttempt> {
            self.current.map(|number| PyAttempt {
                number,
                key: Arc::clone(&self.key).into(),
                header: Arc::clone(&self.header),
                notes: Arc::clone(&self.notes).into(),
                pool: self
                    .pool
                    .clone()
                    .map_or(FramePool::Unknown, FramePool::Known),
            })
        }

        #[new]
        #[pyo3(signature = (policy = None, *, seed = None, gate = None, stats = None, request = None, records = None, classify_last_failure = true, idempotency_key = None, pool = None))]
        fn new(
            policy: Option<PyRef<'_, PyPolicy>>,
            #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
            gate: Option<PyRef<'_, PyGate>>,
            stats: Option<PyRef<'_, PyStatsRecorder>>,
            request: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = level_arg)] records: Option<Level>,
            classify_last_failure: bool,
            idempotency_key: Option<PyRef<'_, PyIdempotencyKey>>,
            pool: Option<u32>,
        ) -> PyResult<Self> {
            let policy = policy.map_or_else(Policy::default, |p| p.0.clone());
            let build = Build {
                seed,
                gate: gate.map(|g| g.inner.clone()),
                stats: stats.map(|s| s.0.clone()),
                request: request_arg(request)?,
                records,
                guide: !classify_last_failure,
                key: idempotency_key.map(|k| k.0),
                // An enclosing loop's pool, with this many attempts left: this operation's first
                // attempt draws nothing from it (the enclosing attempt did).
                pool: pool.map(|n| LoopPool {
                    pool: AttemptPool::new(n),
                    nested: true,
                    owned: false,
                }),
                ..Build::default()
            };
            Ok(build.operation(&policy))
        }

        /// Whether an operation under ``gate`` (a ``recuo.Gate`` or ``None``) that counts
        /// ``stats`` and keeps records of ``records`` and above (``"debug"``, ``"info"``,
        /// ``"warning"`` or ``None``) needs its machine when its first attempt succeeds: when it
        /// does not, make that attempt before making the ``Operation``, and make it only on a
        /// failure (``start_after_first``). Decide it once per policy and gate: a gate with
        /// anything in it needs the machine, as do stats and the ``"debug"`` record a success
        /// makes.
        #[staticmethod]
        #[pyo3(signature = (gate = None, *, stats = false, records = None))]
        fn success_needs_machine(
            gate: Option<PyRef<'_, PyGate>>,
            stats: bool,
            #[pyo3(from_py_with = level_arg)] records: Option<Level>,
        ) -> bool {
            Operation::success_needs_machine(gate.as_ref().map(|g| &g.inner), stats, records)
        }

        /// Starts the operation at ``now_ms``, which is ``unix_ms`` on the wall clock (ms since
        /// the Unix epoch; ``None``: the system clock) — the records' times are measured from it.
        #[pyo3(signature = (now_ms, unix_ms = None))]
        pub(crate) fn start(
            &mut self,
            py: Python<'_>,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
            unix_ms: Option<i64>,
        ) -> PyStep {
            let unix = unix_ms.unwrap_or_else(recuo::unix_now_ms);
            self.advance(py, |op| op.start(now_ms, unix))
        }

        /// Starts an operation whose first attempt you made before making it (as
        /// ``success_needs_machine`` allows), begun at ``now_ms`` (``unix_ms`` on the wall clock;
        /// ``None``: the system clock now): answers that attempt's ``"call"``, counted and
        /// recorded as begun then. Tell its outcome next (``succeeded``, ``failed``,
        /// ``responded``). The attempt passed no gate. Its pool is what is left after it: an
        /// operation of its own is made with ``pool=max_attempts - 1``, a nested one with the
        /// enclosing loop's attempts left.
        #[pyo3(signature = (now_ms, unix_ms = None))]
        pub(crate) fn start_after_first(
            &mut self,
            py: Python<'_>,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
            unix_ms: Option<i64>,
        ) -> PyStep {
            let unix = unix_ms.unwrap_or_else(recuo::unix_now_ms);
            self.advance(py, |op| op.start_after_first(now_ms, unix))
        }

        /// For a host that cannot block (an event loop): one look at the gate for ``"enter"`` at
        /// ``now_ms`` — a place among the requests in flight, then a start slot, within the
        /// deadline. Answers a ``"wait"`` step (sleep its ``delay_ms`` — at most 5 ms while the
        /// limit is full, the start slot's time once reserved — then look again), or the step
        /// after the gate: the attempt's ``"call"``, or ``"gave_up"`` (``"wait_exceeds_deadline"``
        /// when the place or the slot would come after the deadline; ``"cancelled"`` after
        /// ``cancel``). The operation holds the place until the attempt ends, and gives back a
        /// start slot it reserved and did not use. ``ConnectionError`` when a Redis limit or
        /// regulator cannot be used (nothing is held; look again, or give up). A look that may
        /// ask a Redis server releases the GIL.
        fn poll_gate(
            &mut self,
            py: Python<'_>,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
        ) -> PyResult<PyStep> {
            self.polled(py, now_ms, None)
        }

        /// ``poll_gate`` with the gate's regulator asked at ``regulator_now_ns``, a reading of a
        /// clock of your own in nanoseconds that every user of the regulator shares (a fake
        /// clock in tests and simulations; see ``Regulator.try_acquire_at``).
        fn poll_gate_at(
            &mut self,
            py: Python<'_>,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
            regulator_now_ns: u64,
        ) -> PyResult<PyStep> {
            self.polled(py, now_ms, Some(regulator_now_ns))
        }

        /// The gate's answer for ``"enter"``, when you waited at the gate yourself: ``passed``
        /// is false when the wait was cancelled or reached the deadline.
        fn entered(
            &mut self,
            py: Python<'_>,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
            passed: bool,
        ) -> PyStep {
            self.advance(py, |op| op.entered(now_ms, passed))
        }

        /// The attempt of ``"call"`` succeeded at ``now_ms``.
        fn succeeded(
            &mut self,
            py: Python<'_>,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
        ) -> PyStep {
            let (seen, _) = self.ended(None);
            self.advance(py, |op| op.succeeded_seen(now_ms, seen))
        }

        /// The attempt of ``"call"`` failed at ``now_ms``, raising ``error`` if you have one:
        /// answers ``"classify"``, or for ``com_retry``'s loop with no attempt left ``"gave_up"``. Its
        /// record shows the response the attempt noted (``Attempt.record_response``), else the
        /// one the verdict was reached on, else the status and headers ``error`` carries.
        #[pyo3(signature = (now_ms, error = None))]
        fn failed(
            &mut self,
            py: Python<'_>,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
            error: Option<&Bound<'_, PyAny>>,
        ) -> PyStep {
            let (seen, carried) = self.ended(error);
            self.advance(py, |op| op.failed_noted(now_ms, seen, carried))
        }

        /// The verdict on the failure of ``"classify"``: a ``recuo.Verdict`` (whose server wait
        /// is honoured, and whose response goes in the record) or a ``bool`` (``True`` retries,
        /// ``False`` gives up as permanent).
        fn judged(
            &mut self,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
            verdict: &Bound<'_, PyAny>,
        ) -> PyResult<PyStep> {
            let (judged, seen) = verdict_arg(verdict)?;
            Ok(self.advance(verdict.py(), |op| op.judged(now_ms, judged, seen)))
        }

        /// An HTTP attempt ended at ``now_ms`` with ``status`` (or the transport failure
        /// ``error``: ``"connect"``, ``"tls"``, ``"timeout"``, ``"reset"``, ``"other"``) and the
        /// response's ``headers``: the machine classifies it by the policy with the request's
        /// method and key (no ``"classify"`` step).
        #[pyo3(signature = (now_ms, status = None, *, error = None, headers = None))]
        fn responded(
            &mut self,
            py: Python<'_>,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
            status: Option<&Bound<'_, PyAny>>,
            error: Option<&Bound<'_, PyAny>>,
            headers: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<PyStep> {
            let either = "responded takes a status or an error, not both or neither";
            let outcome = outcome_arg(status, error, record_status_arg, either)?
                .ok_or_else(|| PyTypeError::new_err(either))?;
            let headers = headers_arg(headers)?;
            if let (Some(sent), _) = observed(&self.notes) {
                self.op.attempt_request(&sent.method, &sent.url);
            }
            Ok(self.advance(py, |op| op.responded(now_ms, outcome, &headers)))
        }

        /// The wait of ``"sleep"`` is over at ``now_ms`` (or was cut short by a cancellation).
        fn slept(
            &mut self,
            py: Python<'_>,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
        ) -> PyStep {
            self.advance(py, |op| op.slept(now_ms))
        }

        /// Cancels the operation (your own cancellation): the next step gives up
        /// ``"cancelled"``; an attempt in flight still ends as it ends.
        fn cancel(&mut self) {
            self.op.cancel();
        }

        /// For a loop that stops driving the operation on an exception that is not an attempt's
        /// own failure: cancels it and answers the steps it waits on until it gives up, so that
        /// what it holds of the gate (a place in flight, a reserved start slot) goes back now
        /// rather than when the operation is collected. Its records are not polled. Private.
        fn _abandon(&mut self, py: Python<'_>, #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64) {
            if self.op.is_finished() {
                return;
            }
            // What it holds of a Redis gate goes back with the GIL released.
            let _ = self.advance(py, |op| {
                op.cancel();
                // Out of turn, `slept` repeats the step the machine waits on.
                let mut step = op.slept(now_ms);
                for _ in 0..4 {
                    step = match step {
                        Step::Enter { .. } => op.entered(now_ms, false),
                        Step::Call { .. } => op.failed_seen(now_ms, None),
                        Step::Classify { .. } => {
                            op.judged(now_ms, Verdict::from_predicate(true), None)
                        }
                        Step::Sleep { .. } => op.slept(now_ms),
                        Step::Done(_) | Step::GaveUp { .. } => break,
                    };
                }
                step
            });
        }

        /// Stops the operation because its batch queue stopped on another operation's
        /// ``reason``: it gives up ``"queue_stopped"``, naming it.
        fn stop_queue(&mut self, reason: &str) -> PyResult<()> {
            self.op.stop_queue(give_up_reason(reason)?);
            Ok(())
        }

        /// The next record, as ``(level, record)`` — ``level`` is ``"debug"``, ``"info"`` or
        /// ``"warning"``, ``record`` an ``AttemptRecord`` or a ``ResultRecord`` — in the order
        /// they were made; ``None`` when there is none.
        fn poll_record(&mut self, py: Python<'_>) -> PyResult<Option<(&'static str, Py<PyAny>)>> {
            polled(py, self.op.poll_record())
        }

        /// Forwards the records made so far to the ``recuo`` logger (what the loops of
        /// ``recuo.retry`` do after each step). Private.
        fn _log_records(&mut self, py: Python<'_>) -> PyResult<()> {
            while let Some((level, record)) = self.op.poll_record() {
                crate::record::log_record(py, level, &record)?;
            }
            Ok(())
        }

        /// How the operation's end reaches the caller of an HTTP adapter, its last attempt having
        /// come to ``last`` (``None``: no attempt made; a status; a transport failure's kind;
        /// ``"late"``: cut by the deadline while the server was still answering): ``"response"``
        /// (return the last response), ``"error"`` (raise the client's error again) or
        /// ``"give_up"`` (raise ``recuo.GiveUp``). ``style`` is ``"client"`` (a client adapter:
        /// the last response is returned) or ``"guide"`` (``buscar_com_retry``: a
        /// final 429 or 5xx gives up). ``"response"`` while the operation runs.
        fn ending(
            &self,
            #[pyo3(from_py_with = crate::http::style_arg)] style: recuo::http::Style,
            #[pyo3(from_py_with = crate::http::last_arg)] last: recuo::http::Last,
        ) -> &'static str {
            self.op.ending(style, last).name()
        }

        /// The give-up's message at ``now_ms``, its last attempt having come to ``last`` (as for
        /// ``ending``); ``None`` unless the operation gave up.
        fn give_up_message(
            &self,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
            #[pyo3(from_py_with = crate::http::last_arg)] last: recuo::http::Last,
        ) -> Option<String> {
            self.op.give_up_message(now_ms, last)
        }

        fn __repr__(&self) -> String {
            format!(
                "<recuo.Operation: attempt {} of {}{}>",
                self.op.attempt(),
                self.op.policy().max_attempts(),
                if self.op.is_finished() {
                    ", finished"
                } else {
                    ""
                }
            )
        }
    }
});
