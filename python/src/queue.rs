//! The core's sans-IO batch queue for Python: `recuo.BatchQueue` and the `Next` it answers.
//! `recuo.run_batch` drives the same queue with worker threads.

use pyo3::prelude::*;

use pyo3::exceptions::PyValueError;

use recuo::{BatchEnd, BatchQueue, BatchStatus, GiveUpReason, Named, Next, Report, RequestLine};

use crate::args::{methods, mono_ms_arg, must_be};
use crate::policy::PyPolicy;
use crate::record::{give_up_reason, polled, record_object, request_arg};
use crate::stats::PyStatsRecorder;
use crate::values::{instance, value_of};

/// What the queue answers a worker that asks for work: ``kind`` is ``"start"`` (start
/// operation ``index`` under ``policy``, whose deadline is clipped to what is left of the
/// batch's), ``"not_started"`` (operation ``index`` is not started: ``reason``, and for
/// ``"queue_stopped"`` the reason that stopped the queue, ``stopped_by``) or ``"finished"``.
#[pyclass(name = "Next", module = "recuo", frozen, get_all)]
pub(crate) struct PyNext {
    /// ``"start"``, ``"not_started"`` or ``"finished"``.
    kind: &'static str,
    /// The operation's place in the batch, from 0 (``None`` for ``"finished"``).
    index: Option<usize>,
    /// For ``"start"``: the policy to run the operation under.
    policy: Option<PyPolicy>,
    /// For ``"not_started"``: why.
    reason: Option<&'static str>,
    /// For ``"not_started"`` with ``"queue_stopped"``: the reason that stopped the queue.
    stopped_by: Option<&'static str>,
}

impl From<Next> for PyNext {
    fn from(next: Next) -> Self {
        let kind = next.kind();
        let (index, policy, reason, stopped_by) = match next {
            Next::Start { index, policy } => (Some(index), Some(*policy), None, None),
            Next::NotStarted {
                index,
                reason,
                stopped_by,
            } => (Some(index), None, Some(reason), stopped_by),
            Next::Finished => (None, None, None, None),
        };
        PyNext {
            kind,
            index,
            policy: policy.map(PyPolicy),
            reason: reason.map(GiveUpReason::name),
            stopped_by: stopped_by.map(GiveUpReason::name),
        }
    }
}

#[pymethods]
impl PyNext {
    fn __repr__(&self) -> String {
        let mut out = format!("Next(kind='{}'", self.kind);
        if let Some(index) = self.index {
            out += &format!(", index={index}");
        }
        if let Some(reason) = self.reason {
            let by = self
                .stopped_by
                .map_or_else(|| "None".to_owned(), |r| format!("'{r}'"));
            out += &format!(", reason='{reason}', stopped_by={by}");
        }
        out + ")"
    }
}

/// A queue of ``len`` operations under one ``policy`` and one deadline (``deadline_ms`` from
/// ``now_ms``, on your monotonic clock in ms): which operation starts next, with what
/// deadline, or why it is not started — no operation starts or waits past the batch's
/// deadline. ``stop_when_a_wait_exceeds_the_deadline``: one operation giving up
/// ``"wait_exceeds_deadline"`` stops the whole queue. ``stats`` (a ``recuo.StatsRecorder``)
/// counts the operations never started. ``requests`` (one ``(method, url)`` per operation,
/// by index): the queue makes the result record of each operation it does not start, naming
/// its request (redacted), timed from ``unix_ms``, the wall clock at ``now_ms`` (ms since the
/// Unix epoch; ``None``: the system clock) — ``poll_record`` hands them out.
/// ``recuo.run_batch`` drives the same queue.
#[pyclass(name = "BatchQueue", module = "recuo")]
pub(crate) struct PyBatchQueue(BatchQueue);

/// `requests=`: `None`, or an iterable of `(method, url)` tuples.
fn requests_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<RequestLine>>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let items = value
        .try_iter()
        .map_err(|_| must_be(value, "requests", "an iterable of (method, url) tuples"))?;
    let read =
        |item: PyResult<Bound<'_, PyAny>>| Ok(request_arg(Some(&item?))?.unwrap_or_default());
    items.map(read).collect::<PyResult<_>>().map(Some)
}

/// How an operation ended for a batch, as a tuple ``(status, reason, stopped_by)``.
type End = (&'static str, Option<&'static str>, Option<&'static str>);

fn end_tuple(end: BatchEnd) -> End {
    (
        end.status().name(),
        end.reason().map(GiveUpReason::name),
        end.stopped_by().map(GiveUpReason::name),
    )
}

methods!({
    impl PyBatchQueue {
        /// The reason the queue stopped, if it did.
        getter!(stopped(self) -> Option<&'static str> = self.0.stopped().map(GiveUpReason::name));

        #[new]
        #[pyo3(signature = (policy, len, now_ms, deadline_ms = None, *, stop_when_a_wait_exceeds_the_deadline = false, stats = None, requests = None, unix_ms = None))]
        fn new(
            policy: PyRef<'_, PyPolicy>,
            len: usize,
            #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64,
            deadline_ms: Option<u64>,
            stop_when_a_wait_exceeds_the_deadline: bool,
            stats: Option<PyRef<'_, PyStatsRecorder>>,
            requests: Option<&Bound<'_, PyAny>>,
            unix_ms: Option<i64>,
        ) -> PyResult<Self> {
            let mut queue = BatchQueue::new(&policy.0, len, now_ms, deadline_ms)
                .stop_when_a_wait_exceeds_the_deadline(stop_when_a_wait_exceeds_the_deadline);
            if let Some(stats) = stats {
                queue = queue.stats(stats.0.clone());
            }
            if let Some(requests) = requests_arg(requests)? {
                queue = queue.records(requests, unix_ms.unwrap_or_else(recuo::unix_now_ms));
            }
            Ok(PyBatchQueue(queue))
        }

        /// The next record the queue made (with ``requests``: an operation it did not start), as
        /// ``(level, record)`` — ``"warning"`` and a ``ResultRecord`` — in order; ``None`` when
        /// there is none.
        fn poll_record(&mut self, py: Python<'_>) -> PyResult<Option<(&'static str, Py<PyAny>)>> {
            polled(py, self.0.poll_record())
        }

        /// How an operation whose loop reported ``report`` ended for the batch:
        /// ``(status, reason, stopped_by)`` — ``status`` is ``"succeeded"``, ``"gave_up"`` or
        /// ``"not_started"`` (a give-up with no attempt made, unless its gate could not be used:
        /// ``gate_failed``), as ``BatchResult.status`` says it.
        #[staticmethod]
        #[pyo3(signature = (report, *, gate_failed = false))]
        fn end_of(report: &Bound<'_, PyAny>, gate_failed: bool) -> PyResult<End> {
            let report: Report = value_of(report, "Report", "report")?;
            Ok(end_tuple(BatchEnd::of(&report, gate_failed)))
        }

        /// The next operation to start at ``now_ms``, or why it is not started, or
        /// ``"finished"``.
        fn next(&mut self, #[pyo3(from_py_with = mono_ms_arg)] now_ms: u64) -> PyNext {
            PyNext::from(self.0.next(now_ms))
        }

        /// Operation ``index`` ended: succeeded (``reason=None``) or gave up for ``reason``.
        /// ``True`` when this stops the queue: stop the operations still running
        /// (``Operation.stop_queue(queue.stopped)``).
        #[pyo3(signature = (index, reason = None))]
        fn finished(&mut self, index: usize, reason: Option<&str>) -> PyResult<bool> {
            let reason = reason.map(give_up_reason).transpose()?;
            Ok(self.0.finished(index, reason))
        }

        /// Operation ``index`` ended as ``end`` — a ``(status, reason, stopped_by)`` tuple as
        /// ``end_of`` answers it, or ``("not_started", reason, stopped_by)`` for a ``Next`` the
        /// queue did not start: answers the batch's progress (a ``BatchProgress``), for a progress
        /// display. Tell the queue of every operation's end exactly once.
        #[pyo3(signature = (index, end, /))]
        fn ended(
            &mut self,
            py: Python<'_>,
            index: usize,
            end: (String, Option<String>, Option<String>),
        ) -> PyResult<Py<PyAny>> {
            let (status, reason, stopped_by) = end;
            let reason = reason.as_deref().map(give_up_reason).transpose()?;
            let stopped_by = stopped_by.as_deref().map(give_up_reason).transpose()?;
            let status = BatchStatus::from_name(&status).ok_or_else(|| {
                let ends = <BatchStatus as Named>::one_of('"');
                PyValueError::new_err(format!("an end is {ends}, not {status:?}"))
            })?;
            let end = BatchEnd::from_parts(status, reason, stopped_by).ok_or_else(|| {
                PyValueError::new_err(format!("a {:?} end needs its reason", status.name()))
            })?;
            instance(py, "BatchProgress", &self.0.ended(index, end))
        }

        /// Stops the queue on ``reason`` (your own stop: ``"cancelled"``): nothing more starts.
        fn stop(&mut self, reason: &str) -> PyResult<()> {
            self.0.stop(give_up_reason(reason)?);
            Ok(())
        }

        /// The result record (a ``ResultRecord``) of an operation the queue did not start, at
        /// ``unix_ms`` (ms since the Unix epoch), naming it by ``method`` and ``url``.
        #[staticmethod]
        #[pyo3(signature = (unix_ms, method, url, reason, stopped_by = None))]
        fn not_started_record(
            py: Python<'_>,
            unix_ms: i64,
            method: &str,
            url: &str,
            reason: &str,
            stopped_by: Option<&str>,
        ) -> PyResult<Py<PyAny>> {
            let stopped_by = stopped_by.map(give_up_reason).transpose()?;
            let record = BatchQueue::not_started_record(
                unix_ms,
                method,
                url,
                give_up_reason(reason)?,
                stopped_by,
            );
            record_object(py, record)
        }

        fn __len__(&self) -> usize {
            self.0.len()
        }

        fn __repr__(&self) -> String {
            format!("<recuo.BatchQueue: {} operations>", self.0.len())
        }
    }
});
