//! `recuo.run_batch`: a queue of operations through one policy and one gate, with a deadline
//! for the whole queue, and what it did (`BatchReport`, `BatchResult`, and the
//! core's [`recuo::Stats`] as a `recuo.Stats`).
//!
//! The queue is the core's sans-IO [`BatchQueue`] (which operation starts next, with its
//! deadline clipped to the batch's, or why it is not started; when the whole queue stops),
//! and each operation is the core's machine driven by [`crate::driver`]'s loop. The queue
//! makes the result record of each operation it does not start, and says how an operation
//! ended for the batch (`BatchEnd`). What stays here is the host's: worker threads (Rust
//! threads that take the GIL only to call Python), logging the queue's records, waking the
//! operations that wait when the queue stops, Ctrl-C, and converting results.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyTuple};

use recuo::{
    BatchEnd, BatchProgress, BatchQueue, BatchReportValue, BatchResultValue, BatchStatus,
    CancelToken, Clock, Gate, GiveUpReason, Next, Operation, Policy, Report, Stats, StatsRecorder,
    Stopped, SystemClock,
};

use crate::args::{
    deadline_arg, int_in, locked, methods, must_be, opt_callable, opt_repr, readers,
    require_callable,
};
use crate::call::{Call, Effects, Env};
use crate::driver::drive_python;
use crate::limits::{gate_arg, opt_instance};
use crate::machine::Build;
use crate::policy::PyPolicy;
use crate::pool::PoolScope;
use crate::record::log_record;
use crate::sleep::SLEEP_SLICE;
use crate::values::{instance, plain_object, read_as, rebuilt_by, value_of};

/// What the workers share.
struct Queue<'a> {
    ops: Vec<Py<PyAny>>,
    gate: Option<&'a Gate>,
    classify: Option<Py<PyAny>>,
    queue: Mutex<BatchQueue>,
    clock: SystemClock,
    results: Mutex<Vec<Option<PyBatchResult>>>,
    recorder: StatsRecorder,
    /// Cancelled when the queue stops, on Ctrl-C, or when a classifier raised: wakes every
    /// operation that waits.
    stop: CancelToken,
    /// Cancelled when the last worker is done.
    done: CancelToken,
    running: AtomicUsize,
    /// The first exception that ended the batch (raised by `classify` or `on_progress`, or
    /// a `BaseException` that is not an `Exception`).
    aborted: Mutex<Option<PyErr>>,
    /// Told the batch's progress, on the calling thread, in order.
    on_progress: Option<Py<PyAny>>,
    /// The progress not yet told, queued in the order the queue answered it.
    untold: Mutex<VecDeque<BatchProgress>>,
}

impl Queue<'_> {
    fn lock(&self) -> MutexGuard<'_, BatchQueue> {
        locked(&self.queue)
    }

    /// A worker: takes the next operation until none is left.
    fn work(&self, py: Python<'_>) {
        loop {
            let next = self.lock().next(self.clock.now_ms());
            self.log_queue_records(py);
            let (index, ended) = match next {
                Next::Finished => break,
                Next::NotStarted {
                    index,
                    reason,
                    stopped_by,
                } => (
                    index,
                    PyBatchResult::not_started(BatchEnd::NotStarted { reason, stopped_by }),
                ),
                Next::Start { index, policy } => {
                    let ended = self.run_one(py, index, &policy);
                    let reason = ended
                        .plain
                        .reason
                        .filter(|_| ended.plain.status == BatchStatus::GaveUp);
                    if self.lock().finished(index, reason) {
                        self.stop.cancel();
                    }
                    (index, ended)
                }
            };
            if self.on_progress.is_some() {
                // Queued under the queue's lock, so in the order the queue counted.
                let mut queue = self.lock();
                let progress = queue.ended(index, ended.end());
                locked(&self.untold).push_back(progress);
            }
            locked(&self.results)[index] = Some(ended);
        }
    }

    /// Tells `on_progress` the progress queued so far, in order; an exception it raises
    /// stops the batch and propagates.
    fn tell_progress(&self, py: Python<'_>) {
        let Some(on_progress) = &self.on_progress else {
            return;
        };
        loop {
            if locked(&self.aborted).is_some() {
                return;
            }
            let next = locked(&self.untold).pop_front();
            let Some(progress) = next else { return };
            let told = instance(py, "BatchProgress", &progress)
                .and_then(|p| on_progress.bind(py).call1((p,)));
            if let Err(raised) = told {
                self.abort(raised);
                return;
            }
        }
    }

    /// Logs the records the queue made (those of the operations it did not start).
    fn log_queue_records(&self, py: Python<'_>) {
        loop {
            let Some((level, record)) = self.lock().poll_record() else {
                return;
            };
            if let Err(raised) = log_record(py, level, &record) {
                self.abort(raised);
            }
        }
    }

    /// A worker (or the loop starting them) is done; the last one says so.
    fn finish_worker(&self) {
        if self.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.done.cancel();
        }
    }

    fn abort(&self, error: PyErr) {
        locked(&self.aborted).get_or_insert(error);
        self.lock().stop(GiveUpReason::Cancelled);
        self.stop.cancel();
    }

    fn run_one(&self, py: Python<'_>, i: usize, policy: &Policy) -> PyBatchResult {
        let classify = self.classify.as_ref().map(|c| c.bind(py).clone());
        let effects = Effects {
            classify: classify.as_ref(),
            ..Effects::default()
        };
        // The caller's own stop is a cancellation (the token); another operation's reason
        // stops the queue.
        let stopped = || self.lock().stopped_by_another();
        let env = Env {
            cancel: self.stop.clone(),
            queue_stopped: Some(&stopped),
        };
        let build = Build {
            gate: self.gate.cloned(),
            stats: Some(self.recorder.clone()),
            ..Build::default()
        };
        let op = self.ops[i].bind(py);
        // A batch's operation owns its pool (the core's `LoopPool::choose`).
        let driven = PoolScope::enter(py, policy.max_attempts(), true).and_then(|scope| {
            drive_python(
                py,
                Operation::new(policy),
                build,
                Call::Tarefa(op),
                &effects,
                &env,
                scope,
                None,
            )
        });
        match driven.map(|driven| (driven.outcome, driven.done)) {
            Ok((Ok(value), done)) => {
                let attempts = done.map_or(1, |r| r.attempts);
                PyBatchResult::new(BatchEnd::Succeeded, attempts, None, Some(value), None)
            }
            Ok((Err(Stopped::GaveUp(gave_up)), _)) => {
                match (BatchEnd::of(&gave_up.report, false), gave_up.error) {
                    (end @ BatchEnd::GaveUp { .. }, Some(error)) => {
                        let (attempts, error) = (gave_up.report.attempts, error.into_value(py));
                        let report = Some(gave_up.report);
                        PyBatchResult::new(end, attempts, report, None, Some(error.into_any()))
                    }
                    (end, _) => PyBatchResult::not_started(end),
                }
            }
            Ok((Err(Stopped::Aborted(error)), _)) | Err(error) => {
                self.abort(error);
                PyBatchResult::not_started(BatchEnd::UNREACHED)
            }
        }
    }

    /// The calling thread, while the workers run: runs Python's signal handlers every 50 ms
    /// (Ctrl-C stops the batch), and returns when the last worker is done.
    fn supervise(&self) {
        while !self.done.sleep(SLEEP_SLICE) {
            Python::attach(|py| {
                if let Err(signalled) = py.check_signals() {
                    self.abort(signalled);
                }
                self.tell_progress(py);
            });
        }
    }
}

readers! {
    fn workers_arg -> usize = int_in("workers", 1..=usize::MAX, "must be at least 1");
}

/// The operations: an iterable of callables taking no argument, none of them `async`.
fn operations_arg(py: Python<'_>, operations: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
    let iter = operations
        .try_iter()
        .map_err(|_| must_be(operations, "operations", "an iterable of callables"))?;
    let is_async = py
        .import(pyo3::intern!(py, "inspect"))?
        .getattr(pyo3::intern!(py, "iscoroutinefunction"))?;
    let mut ops = Vec::new();
    for op in iter {
        let op = op?;
        require_callable(&op, "each operation")?;
        if is_async.call1((&op,))?.is_truthy()? {
            return Err(PyTypeError::new_err(
                "run_batch calls blocking functions; an async def operation would never be \
                 awaited (run async operations with asyncio.gather and recuo.retry)",
            ));
        }
        ops.push(op.unbind());
    }
    Ok(ops)
}

/// Runs ``operations`` (callables taking no argument) through one ``policy`` and one
/// ``gate``, ``workers`` at a time, with a ``deadline`` (seconds) for the whole batch, and
/// answers a ``BatchReport``: each operation's result, in order, and the batch's stats.
///
/// Each operation is retried as ``recuo.retry`` would (``classify`` decides for each
/// exception; by default, as ``recuo.retry``'s, one that carries an HTTP response is judged by
/// its status and headers, an HTTP client's transport error by its kind, and every other
/// ``Exception`` is retried) and passes the gate before every
/// attempt. The queue is the core's: once the deadline has passed, the operations not yet
/// started are never started (their results say ``"not_started"``, reason
/// ``"wait_exceeds_deadline"``), and no operation starts or waits past it. With
/// ``stop_when_a_wait_exceeds_the_deadline``, one operation giving up
/// ``"wait_exceeds_deadline"`` (the server said "come back tomorrow") stops the whole
/// queue: the operations running give up ``"queue_stopped"`` and the rest are not started
/// (``"queue_stopped"``), both with ``stopped_by="wait_exceeds_deadline"``. With
/// ``workers > 1`` the operations run on worker threads (each takes the GIL to run Python,
/// and releases it while waiting); ``recuo.current_attempt()`` works inside them.
///
/// ``on_progress`` (a callable) is called on the calling thread with a ``BatchProgress`` as
/// each operation ends — started or not — one call per operation, in order.
///
/// Ctrl-C stops the batch promptly and raises ``KeyboardInterrupt``; an exception raised by
/// ``classify`` or ``on_progress`` (or a ``BaseException`` that is not an ``Exception`` raised by an operation)
/// stops it and propagates. ``TypeError`` for an argument of the wrong type (an ``async def``
/// operation included), ``ValueError`` for ``workers < 1``, ``recuo.ConfigError`` for a bad
/// deadline.
#[pyfunction]
#[pyo3(signature = (operations, *, policy = None, gate = None, workers = 1, deadline = None, classify = None, stop_when_a_wait_exceeds_the_deadline = false, on_progress = None))]
pub(crate) fn run_batch(
    py: Python<'_>,
    operations: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, PyAny>>,
    gate: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = workers_arg)] workers: usize,
    #[pyo3(from_py_with = deadline_arg)] deadline: Option<u64>,
    classify: Option<&Bound<'_, PyAny>>,
    stop_when_a_wait_exceeds_the_deadline: bool,
    on_progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyBatchReport> {
    let policy = opt_instance::<PyPolicy>(policy, "policy", "Policy")?
        .map_or_else(Policy::default, |p| p.get().0.clone());
    let gate = gate_arg(gate)?.map(|g| g.get().inner.clone());
    let classify = match opt_callable(classify, "classify")? {
        Some(c) => c.clone().unbind(),
        // As `recuo.retry`'s: an exception that carries an HTTP response is judged by its
        // status and headers, the HTTP clients' transport errors by their kind; every other
        // `Exception` is retried.
        None => {
            let failure = py
                .import(pyo3::intern!(py, "recuo._http"))?
                .getattr(pyo3::intern!(py, "classify_failure"))?;
            let options = [
                ("policy", Py::new(py, PyPolicy(policy.clone()))?.into_any()),
                ("method", py.None()),
            ]
            .into_py_dict(py)?;
            py.import(pyo3::intern!(py, "functools"))?
                .getattr(pyo3::intern!(py, "partial"))?
                .call((failure,), Some(&options))?
                .unbind()
        }
    };
    let on_progress = opt_callable(on_progress, "on_progress")?.map(|c| c.clone().unbind());
    let ops = operations_arg(py, operations)?;
    let n = ops.len();
    let clock = SystemClock::default();
    let recorder = StatsRecorder::new();
    let started = Instant::now();
    let queue = Queue {
        queue: Mutex::new(
            BatchQueue::new(&policy, n, clock.now_ms(), deadline)
                .stop_when_a_wait_exceeds_the_deadline(stop_when_a_wait_exceeds_the_deadline)
                .stats(recorder.clone())
                // The operations are callables: their records name no request.
                .records(Vec::new(), recuo::unix_now_ms()),
        ),
        ops,
        gate: gate.as_ref(),
        classify: Some(classify),
        clock,
        results: Mutex::new((0..n).map(|_| None).collect()),
        recorder,
        stop: CancelToken::new(),
        done: CancelToken::new(),
        running: AtomicUsize::new(1),
        aborted: Mutex::new(None),
        on_progress,
        untold: Mutex::new(VecDeque::new()),
    };
    if n > 0 {
        py.detach(|| {
            std::thread::scope(|scope| {
                // `running` starts at 1 for this loop, so the batch is not done before every
                // worker that could start has.
                for _ in 0..workers.min(n) {
                    queue.running.fetch_add(1, Ordering::AcqRel);
                    let spawned = std::thread::Builder::new()
                        .name("recuo-batch".to_owned())
                        .spawn_scoped(scope, || {
                            Python::attach(|py| queue.work(py));
                            queue.finish_worker();
                        });
                    if let Err(refused) = spawned {
                        queue.finish_worker();
                        if queue.running.load(Ordering::Acquire) <= 1 {
                            // Not even one worker: say why.
                            queue.abort(refused.into());
                        }
                        break;
                    }
                }
                queue.finish_worker();
                queue.supervise();
            });
        });
        queue.tell_progress(py);
    }
    if let Some(error) = locked(&queue.aborted).take() {
        return Err(error);
    }
    let results = std::mem::take(&mut *locked(&queue.results));
    let results = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| PyBatchResult::not_started(BatchEnd::UNREACHED)));
    let results = PyTuple::new(py, results)?;
    report_from(py, results, &queue.recorder.snapshot(), started.elapsed())
}

/// How one operation of a batch ended: ``status`` is ``"succeeded"`` (its ``value``),
/// ``"gave_up"`` (its last exception — the very object it raised — as ``error``, the
/// ``reason`` and the ``report``) or ``"not_started"`` (its ``reason``: the deadline came
/// first, the queue stopped, or the batch was cancelled).
/// ``attempts`` counts its calls.
#[pyclass(name = "BatchResult", module = "recuo", frozen)]
pub(crate) struct PyBatchResult {
    /// The core's plain form: how it ended, why, the attempts and the report.
    plain: BatchResultValue,
    /// The operation's value when it succeeded, else ``None``.
    #[pyo3(get)]
    value: Option<Py<PyAny>>,
    /// The operation's last exception (the very object) when it gave up, else ``None``.
    #[pyo3(get)]
    error: Option<Py<PyAny>>,
}

impl PyBatchResult {
    /// An operation that ended as `end` after `attempts` attempts, with its `report` when it
    /// gave up, and its value or its last exception.
    fn new(
        end: BatchEnd,
        attempts: u32,
        report: Option<Report>,
        value: Option<Py<PyAny>>,
        error: Option<Py<PyAny>>,
    ) -> Self {
        PyBatchResult {
            plain: BatchResultValue::of(end, attempts, report),
            value,
            error,
        }
    }

    /// An operation that did not run: how the batch ended it (the core's [`BatchEnd`]).
    fn not_started(end: BatchEnd) -> Self {
        let reason = end.reason().unwrap_or(GiveUpReason::Cancelled);
        let end = BatchEnd::NotStarted {
            reason,
            stopped_by: end.stopped_by(),
        };
        Self::new(end, 0, None, None, None)
    }

    /// How the operation ended, as the batch's queue counts it.
    fn end(&self) -> BatchEnd {
        self.plain.end().unwrap_or(BatchEnd::UNREACHED)
    }
}

/// A plain form read back: a result whose value and error are those given (``None`` when
/// only the plain form crossed).
fn result_from(
    plain: BatchResultValue,
    value: Option<Py<PyAny>>,
    error: Option<Py<PyAny>>,
) -> PyResult<PyBatchResult> {
    if plain.end().is_none() {
        return Err(PyValueError::new_err(
            "not a recuo.BatchResult: a give-up or an operation not started needs its reason",
        ));
    }
    Ok(PyBatchResult {
        plain,
        value,
        error,
    })
}

methods!({
    impl PyBatchResult {
        /// ``"succeeded"``, ``"gave_up"`` or ``"not_started"``.
        getter!(status(self) -> &'static str = self.plain.status.name());
        /// Why it gave up (``"permanent"``, ``"attempts_exhausted"``,
        /// ``"wait_exceeds_deadline"``, ``"budget_exhausted"``, ``"cancelled"``,
        /// ``"queue_stopped"``) or was not started (``"wait_exceeds_deadline"``: the batch's
        /// deadline had passed; ``"queue_stopped"``; ``"cancelled"``); ``None`` for a success.
        getter!(reason(self) -> Option<&'static str> = self.plain.reason.map(GiveUpReason::name));
        /// The calls made of the operation.
        getter!(attempts(self) -> u32 = self.plain.attempts);
        /// For ``"queue_stopped"``: the reason that stopped the queue (another operation's);
        /// else ``None``.
        getter!(stopped_by(self) -> Option<&'static str> =
            self.plain.stopped_by.map(GiveUpReason::name));
        /// The report of an operation that gave up, else ``None``.
        #[getter]
        fn report(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
            self.plain
                .report
                .as_ref()
                .map(|report| instance(py, "Report", report))
                .transpose()
        }

        /// The plain form: ``status``, ``reason``, ``stopped_by``, ``attempts`` and ``report``
        /// (a dict, or ``None``) — everything but the operation's own value and error.
        fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            plain_object(py, &self.plain)
        }

        /// The result whose plain form is ``value`` (its value and error ``None``):
        /// ``TypeError`` unless a mapping, ``ValueError`` for what is not a result's plain form.
        #[staticmethod]
        #[pyo3(signature = (value, /))]
        fn from_dict(value: &Bound<'_, PyAny>) -> PyResult<Self> {
            result_from(read_as(value, "BatchResult")?, None, None)
        }

        /// Pickles as the plain form with the value and the error (each pickled as Python
        /// pickles it).
        fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
            let args = (self.to_dict(py)?, &self.value, &self.error);
            rebuilt_by(py, "_batch_result", args)
        }

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            let repr = |v: &Option<Py<PyAny>>| opt_repr(py, v.as_ref());
            Ok(match self.plain.status {
                BatchStatus::Succeeded => format!(
                    "BatchResult(status='succeeded', value={}, attempts={})",
                    repr(&self.value)?,
                    self.plain.attempts
                ),
                BatchStatus::GaveUp => format!(
                    "BatchResult(status='gave_up', error={}, reason='{}', attempts={})",
                    repr(&self.error)?,
                    self.reason().unwrap_or("?"),
                    self.plain.attempts
                ),
                BatchStatus::NotStarted => format!(
                    "BatchResult(status='not_started', reason='{}')",
                    self.reason().unwrap_or("?")
                ),
            })
        }
    }
});

/// A batch result rebuilt from its pickle: the plain form, the value and the error.
/// Private: ``BatchResult.__reduce__``.
#[pyfunction]
#[pyo3(name = "_batch_result", signature = (plain, value, error, /))]
pub(crate) fn batch_result(
    plain: &Bound<'_, PyAny>,
    value: Option<Py<PyAny>>,
    error: Option<Py<PyAny>>,
) -> PyResult<PyBatchResult> {
    result_from(read_as(plain, "BatchResult")?, value, error)
}

/// What ``run_batch`` did: ``results`` (one ``BatchResult`` per operation, in order),
/// ``stats`` (a ``recuo.Stats``) and ``elapsed`` (seconds).
#[pyclass(name = "BatchReport", module = "recuo", frozen)]
pub(crate) struct PyBatchReport {
    results: Py<PyTuple>,
    /// A `recuo.Stats`.
    stats: Py<PyAny>,
    /// Operations that succeeded (for `repr`).
    successes: u64,
    elapsed: Duration,
}

impl PyBatchReport {
    /// The core's plain form of this report.
    fn plain(&self, py: Python<'_>) -> PyResult<BatchReportValue> {
        let results = self
            .results
            .bind(py)
            .iter()
            .map(|r| Ok(r.cast::<PyBatchResult>()?.get().plain.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(BatchReportValue {
            results,
            stats: value_of(self.stats.bind(py), "Stats", "stats")?,
            elapsed_ms: u64::try_from(self.elapsed.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

/// A report of `results` (a tuple of `BatchResult`s), `stats` and `elapsed`.
fn report_from(
    py: Python<'_>,
    results: Bound<'_, PyTuple>,
    stats: &Stats,
    elapsed: Duration,
) -> PyResult<PyBatchReport> {
    Ok(PyBatchReport {
        results: results.unbind(),
        stats: instance(py, "Stats", stats)?,
        successes: stats.successes,
        elapsed,
    })
}

/// A batch report rebuilt from its pickle: its results, its stats' plain form and its time.
/// Private: ``BatchReport.__reduce__``.
#[pyfunction]
#[pyo3(name = "_batch_report", signature = (results, stats, elapsed_ms, /))]
pub(crate) fn batch_report(
    py: Python<'_>,
    results: &Bound<'_, PyTuple>,
    stats: &Bound<'_, PyAny>,
    elapsed_ms: u64,
) -> PyResult<PyBatchReport> {
    let stats: Stats = read_as(stats, "Stats")?;
    for result in results {
        result.cast::<PyBatchResult>()?;
    }
    report_from(
        py,
        results.clone(),
        &stats,
        Duration::from_millis(elapsed_ms),
    )
}

methods!({
    impl PyBatchReport {
        /// One ``BatchResult`` per operation, in the order given.
        getter!(results(self, py) -> Py<PyTuple> = self.results.clone_ref(py));
        /// The batch's stats.
        getter!(stats(self, py) -> Py<PyAny> = self.stats.clone_ref(py));
        /// How long the batch took, in seconds.
        getter!(elapsed(self) -> f64 = self.elapsed.as_secs_f64());

        /// The plain form: ``results`` (each result's ``to_dict()``), ``stats`` (the stats'
        /// ``to_dict()``) and ``elapsed_ms`` — what a worker process sends back as data.
        fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            plain_object(py, &self.plain(py)?)
        }

        /// The report whose plain form is ``value`` (its results' values and errors ``None``):
        /// ``TypeError`` unless a mapping, ``ValueError`` for what is not a report's plain form.
        #[staticmethod]
        #[pyo3(signature = (value, /))]
        fn from_dict(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Self> {
            let plain: BatchReportValue = read_as(value, "BatchReport")?;
            let results = plain
                .results
                .into_iter()
                .map(|r| result_from(r, None, None))
                .collect::<PyResult<Vec<_>>>()?;
            let elapsed = Duration::from_millis(plain.elapsed_ms);
            report_from(py, PyTuple::new(py, results)?, &plain.stats, elapsed)
        }

        /// Pickles as its results (each with its value and error) and its plain stats and time.
        fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
            let plain = self.plain(py)?;
            let args = (
                self.results.clone_ref(py),
                plain_object(py, &plain.stats)?,
                plain.elapsed_ms,
            );
            rebuilt_by(py, "_batch_report", args)
        }

        fn __repr__(&self, py: Python<'_>) -> String {
            format!(
                "<recuo.BatchReport: {} operations in {:.3} s, {} succeeded>",
                self.results.bind(py).len(),
                self.elapsed.as_secs_f64(),
                self.successes
            )
        }
    }
});
