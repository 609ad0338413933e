//! `recuo.run_batch`: a queue of operations through one policy and one gate, with a deadline
//! for the whole queue (SPEC §6–§9), and what it did (`BatchReport`, `BatchResult`, and the
//! core's [`recuo::Stats`] as a `recuo.Stats`).
//!
//! The core's [`recuo::Batch`] cannot be told to stop from outside (so Ctrl-C could not end a
//! batch waiting at its gate) and its classifier cannot fail (so an exception raised by
//! `classify` would be lost). This runner therefore takes the same steps on the pieces the
//! core gives: worker threads (Rust threads that take the GIL only to call Python), each
//! operation through the core's one loop ([`recuo::drive()`], see [`crate::runner`]) with the
//! core's [`recuo::Gate`], and the core's [`recuo::StatsRecorder`]. As in the core's runner:
//! an operation not started when the deadline passes is never started, no operation waits
//! past the deadline (its policy's deadline is cut to what is left, and its waits at the gate
//! and between attempts are cancelled when the deadline passes), and a loop stopped before
//! its first attempt counts as not started.
//!
//! Each operation's loop logs its records to the `recuo` logger as `recuo.retry` does (an
//! operation says what it sends with `recuo.current_attempt().record_request(...)`), and an
//! operation the deadline kept from starting has a result record of its own: given up,
//! `cancelled`, no attempt — as in C and PHP.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use recuo::{CancelToken, Gate, Policy, Report, StatsRecorder, Stopped};

use crate::args::{int_arg, opt_callable, opt_secs_to_ms, require_callable, type_name, Int};
use crate::machine::PyReport;
use crate::policy::PyPolicy;
use crate::record::log_not_started;
use crate::runner::{drive_python, gate_arg, Driven, Effects, Env, Operation, SLEEP_SLICE};
use crate::stats::PyStats;

/// How one operation ended, as the workers leave it.
enum Ended {
    Succeeded { value: Py<PyAny>, attempts: u32 },
    GaveUp { error: PyErr, report: Report },
    NotStarted,
}

/// What the workers share.
struct Queue<'a> {
    ops: Vec<Py<PyAny>>,
    policy: &'a Policy,
    gate: Option<&'a Gate>,
    classify: Option<Py<PyAny>>,
    deadline: Option<Duration>,
    started: Instant,
    next: AtomicUsize,
    results: Vec<Mutex<Option<Ended>>>,
    recorder: StatsRecorder,
    /// Cancelled when the deadline passes, on Ctrl-C, or when a classifier raised.
    stop: CancelToken,
    /// Cancelled when the last worker is done.
    done: CancelToken,
    running: AtomicUsize,
    /// The first exception that ended the batch (raised by `classify`, or a
    /// `BaseException` that is not an `Exception`).
    aborted: Mutex<Option<PyErr>>,
}

impl Queue<'_> {
    /// A worker: takes the next operation until none is left.
    fn work(&self, py: Python<'_>) {
        loop {
            let i = self.next.fetch_add(1, Ordering::AcqRel);
            let Some(slot) = self.results.get(i) else {
                break;
            };
            let ended = self.run_one(py, i);
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(ended);
        }
    }

    /// A worker (or the loop starting them) is done; the last one says so.
    fn finish_worker(&self) {
        if self.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.done.cancel();
        }
    }

    fn abort(&self, error: PyErr) {
        self.aborted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(error);
        self.stop.cancel();
    }

    fn run_one(&self, py: Python<'_>, i: usize) -> Ended {
        let remaining = self
            .deadline
            .map(|d| d.saturating_sub(self.started.elapsed()));
        if self.stop.is_cancelled() || remaining.is_some_and(|r| r.is_zero()) {
            self.recorder.not_started();
            if let Err(raised) = log_not_started(py) {
                self.abort(raised);
            }
            return Ended::NotStarted;
        }
        // No operation may wait past the batch's deadline.
        let deadline = match (self.policy.deadline_ms(), remaining) {
            (Some(own), Some(left)) => Some(Duration::from_millis(own).min(left)),
            (own, left) => own.map(Duration::from_millis).or(left),
        };
        let policy = self
            .policy
            .to_builder()
            .deadline(deadline)
            .build()
            .unwrap_or_else(|_| self.policy.clone());
        let classify = self.classify.as_ref().map(|c| c.bind(py).clone());
        let effects = Effects {
            classify: classify.as_ref(),
            on_retry: None,
            on_give_up: None,
            sleep: None,
        };
        let env = Env {
            gate: self.gate,
            stats: Some(&self.recorder),
            cancel: self.stop.clone(),
            signals: false,
            request: None,
        };
        let op = self.ops[i].bind(py);
        let driven = drive_python(py, &policy, None, Operation::Tarefa(op), &effects, &env);
        match driven {
            Ok(Driven {
                outcome: Ok(value),
                attempts,
                ..
            }) => {
                self.recorder.finished(true);
                Ended::Succeeded { value, attempts }
            }
            Ok(Driven {
                outcome: Err(Stopped::GaveUp(gave_up)),
                ..
            }) => match gave_up.error {
                Some(error) => {
                    self.recorder.finished(false);
                    Ended::GaveUp {
                        error,
                        report: gave_up.report,
                    }
                }
                None => {
                    self.recorder.not_started();
                    Ended::NotStarted
                }
            },
            Ok(Driven {
                outcome: Err(Stopped::Aborted(error)),
                ..
            })
            | Err(error) => {
                self.recorder.finished(false);
                self.abort(error);
                Ended::NotStarted
            }
        }
    }

    /// The calling thread, while the workers run: stops the batch when its deadline passes,
    /// runs Python's signal handlers every 50 ms (Ctrl-C stops the batch), and returns when
    /// the last worker is done.
    fn supervise(&self) {
        loop {
            let mut slice = SLEEP_SLICE;
            if let Some(deadline) = self.deadline {
                let left = deadline.saturating_sub(self.started.elapsed());
                if left.is_zero() {
                    self.stop.cancel();
                } else {
                    slice = slice.min(left);
                }
            }
            if self.done.sleep(slice) {
                return;
            }
            if let Err(signalled) = Python::attach(|py| py.check_signals()) {
                self.abort(signalled);
            }
        }
    }
}

fn workers_arg(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    match int_arg(value, "workers")? {
        Int::Fits(n) if n >= 1 => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        _ => Err(PyValueError::new_err(format!(
            "workers must be at least 1, not {value}"
        ))),
    }
}

fn deadline_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    opt_secs_to_ms(value, "deadline")
}

/// The operations: an iterable of callables taking no argument, none of them `async`.
fn operations_arg(py: Python<'_>, operations: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
    let iter = operations.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "operations must be an iterable of callables, not {}",
            type_name(operations)
        ))
    })?;
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
/// exception; by default every ``Exception`` is retried) and passes the gate before every
/// attempt. When the deadline passes, the operations not yet started are never started (their
/// results say ``"not_started"``), and no operation waits past it. With ``workers > 1`` the
/// operations run on worker threads (each takes the GIL to run Python, and releases it while
/// waiting); ``recuo.current_attempt()`` works inside them.
///
/// Ctrl-C stops the batch promptly and raises ``KeyboardInterrupt``; an exception raised by
/// ``classify`` (or a ``BaseException`` that is not an ``Exception`` raised by an operation)
/// stops it and propagates. ``TypeError`` for an argument of the wrong type (an ``async def``
/// operation included), ``ValueError`` for ``workers < 1``, ``recuo.ConfigError`` for a bad
/// deadline.
#[pyfunction]
#[pyo3(signature = (operations, *, policy = None, gate = None, workers = 1, deadline = None, classify = None))]
pub(crate) fn run_batch(
    py: Python<'_>,
    operations: &Bound<'_, PyAny>,
    policy: Option<&Bound<'_, PyAny>>,
    gate: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = workers_arg)] workers: usize,
    #[pyo3(from_py_with = deadline_arg)] deadline: Option<u64>,
    classify: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyBatchReport> {
    let policy = match policy.filter(|p| !p.is_none()) {
        None => Policy::default(),
        Some(p) => p
            .cast::<PyPolicy>()
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "policy must be a recuo.Policy or None, not {}",
                    type_name(p)
                ))
            })?
            .get()
            .0
            .clone(),
    };
    let gate = gate_arg(gate)?.map(|g| g.get().inner.clone());
    let classify = opt_callable(classify, "classify")?.map(|c| c.clone().unbind());
    let ops = operations_arg(py, operations)?;
    let n = ops.len();
    let queue = Queue {
        ops,
        policy: &policy,
        gate: gate.as_ref(),
        classify,
        deadline: deadline.map(Duration::from_millis),
        started: Instant::now(),
        next: AtomicUsize::new(0),
        results: (0..n).map(|_| Mutex::new(None)).collect(),
        recorder: StatsRecorder::new(),
        stop: CancelToken::new(),
        done: CancelToken::new(),
        running: AtomicUsize::new(1),
        aborted: Mutex::new(None),
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
    }
    if let Some(error) = queue
        .aborted
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        return Err(error);
    }
    let results = queue
        .results
        .into_iter()
        .map(|slot| {
            let ended = slot
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .unwrap_or(Ended::NotStarted);
            PyBatchResult::from_ended(py, ended)
        })
        .collect::<Vec<_>>();
    Ok(PyBatchReport {
        results: PyTuple::new(py, results)?.unbind(),
        stats: PyStats(queue.recorder.snapshot()),
        elapsed: queue.started.elapsed(),
    })
}

/// How one operation of a batch ended: ``status`` is ``"succeeded"`` (its ``value``),
/// ``"gave_up"`` (its last exception — the very object it raised — as ``error``, the
/// ``reason`` and the ``report``) or ``"not_started"`` (the deadline came first).
/// ``attempts`` counts its calls.
#[pyclass(name = "BatchResult", module = "recuo", frozen)]
pub(crate) struct PyBatchResult {
    status: &'static str,
    value: Option<Py<PyAny>>,
    error: Option<Py<PyAny>>,
    report: Option<PyReport>,
    attempts: u32,
}

impl PyBatchResult {
    fn from_ended(py: Python<'_>, ended: Ended) -> Self {
        match ended {
            Ended::Succeeded { value, attempts } => PyBatchResult {
                status: "succeeded",
                value: Some(value),
                error: None,
                report: None,
                attempts,
            },
            Ended::GaveUp { error, report } => PyBatchResult {
                status: "gave_up",
                value: None,
                error: Some(error.into_value(py).into_any()),
                attempts: report.attempts,
                report: Some(PyReport {
                    report,
                    retry_at: None,
                }),
            },
            Ended::NotStarted => PyBatchResult {
                status: "not_started",
                value: None,
                error: None,
                report: None,
                attempts: 0,
            },
        }
    }
}

#[pymethods]
impl PyBatchResult {
    /// ``"succeeded"``, ``"gave_up"`` or ``"not_started"``.
    #[getter]
    fn status(&self) -> &'static str {
        self.status
    }

    /// The operation's value when it succeeded, else ``None``.
    #[getter]
    fn value(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.value.as_ref().map(|v| v.clone_ref(py))
    }

    /// The operation's last exception (the very object) when it gave up, else ``None``.
    #[getter]
    fn error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.error.as_ref().map(|e| e.clone_ref(py))
    }

    /// Why it gave up (``"permanent"``, ``"attempts_exhausted"``,
    /// ``"wait_exceeds_deadline"``, ``"budget_exhausted"``, ``"cancelled"``), else ``None``.
    #[getter]
    fn reason(&self) -> Option<&'static str> {
        self.report
            .as_ref()
            .and_then(|r| r.report.reason.map(|reason| reason.name()))
    }

    /// The report of an operation that gave up, else ``None``.
    #[getter]
    fn report(&self) -> Option<PyReport> {
        self.report.clone()
    }

    /// The calls made of the operation.
    #[getter]
    fn attempts(&self) -> u32 {
        self.attempts
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(match self.status {
            "succeeded" => format!(
                "BatchResult(status='succeeded', value={}, attempts={})",
                self.value.as_ref().map_or(Ok("None".to_owned()), |v| v
                    .bind(py)
                    .repr()
                    .map(|r| r.to_string()))?,
                self.attempts
            ),
            "gave_up" => format!(
                "BatchResult(status='gave_up', error={}, reason='{}', attempts={})",
                self.error.as_ref().map_or(Ok("None".to_owned()), |e| e
                    .bind(py)
                    .repr()
                    .map(|r| r.to_string()))?,
                self.reason().unwrap_or("?"),
                self.attempts
            ),
            _ => "BatchResult(status='not_started')".to_owned(),
        })
    }
}

/// What ``run_batch`` did: ``results`` (one ``BatchResult`` per operation, in order),
/// ``stats`` (a ``recuo.Stats``) and ``elapsed`` (seconds).
#[pyclass(name = "BatchReport", module = "recuo", frozen)]
pub(crate) struct PyBatchReport {
    results: Py<PyTuple>,
    stats: PyStats,
    elapsed: Duration,
}

#[pymethods]
impl PyBatchReport {
    /// One ``BatchResult`` per operation, in the order given.
    #[getter]
    fn results(&self, py: Python<'_>) -> Py<PyTuple> {
        self.results.clone_ref(py)
    }

    /// The batch's stats.
    #[getter]
    fn stats(&self) -> PyStats {
        self.stats.clone()
    }

    /// How long the batch took, in seconds.
    #[getter]
    fn elapsed(&self) -> f64 {
        self.elapsed.as_secs_f64()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "<recuo.BatchReport: {} operations in {:.3} s, {} succeeded>",
            self.results.bind(py).len(),
            self.elapsed.as_secs_f64(),
            self.stats.0.successes
        )
    }
}
