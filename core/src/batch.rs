//! The threaded batch runner: workers that drive the sans-IO [`BatchQueue`]
//! and an [`Operation`](crate::Operation) each, through one policy and one gate, with a
//! deadline for the whole queue. No operation starts or waits past it.

use std::sync::Mutex;
use std::time::Duration;

use crate::attempts::{GiveUpReason, Report};
use crate::classify::Verdict;
use crate::clock::{CancelToken, Clock, SystemClock};
use crate::drive::{AttemptContext, RetryError};
use crate::gate::Gate;
use crate::journal::RequestLine;
use crate::queue::{BatchEnd, BatchProgress, BatchQueue, Next};
use crate::record::RecordSink;
use crate::run::Retry;
use crate::stats::{Stats, StatsRecorder};
use crate::Policy;

/// How one operation of a batch ended.
#[derive(Debug)]
pub enum BatchResult<T, E> {
    /// It succeeded with this value.
    Succeeded(T),
    /// It gave up: its last error, the reason and its report — or, with no attempt made, its
    /// gate's error (`RetryError::gate_error`: a remote store out of reach).
    GaveUp(RetryError<E>),
    /// It was never started: the batch's deadline passed first (`wait_exceeds_deadline`),
    /// the queue stopped (`queue_stopped`, on `stopped_by`), or the caller stopped the batch
    /// (`cancelled`).
    NotStarted {
        /// Why.
        reason: GiveUpReason,
        /// For `queue_stopped`: the reason that stopped the queue.
        stopped_by: Option<GiveUpReason>,
    },
}

/// What a batch did: one result per operation, in the order given, and the stats.
#[derive(Debug)]
pub struct BatchReport<T, E> {
    /// The results, in the order of the operations.
    pub results: Vec<BatchResult<T, E>>,
    /// Each operation's report (attempts, elapsed, the delays chosen between attempts, the
    /// reason it gave up), in the order of the operations; `None` for one never started.
    pub reports: Vec<Option<Report>>,
    /// The batch's stats.
    pub stats: Stats,
    /// How long the batch took.
    pub elapsed: Duration,
}

/// How one operation ended, and its report.
type Ended<T, E> = (BatchResult<T, E>, Option<Report>);

/// Runs operations through one policy and one gate, `workers` at a time.
///
/// # Defaults
/// [`Batch::new`]: 1 worker, no deadline, a gate that lets everything through.
#[derive(Debug, Clone)]
#[must_use]
pub struct Batch<'a> {
    policy: &'a Policy,
    gate: Gate,
    workers: usize,
    deadline: Option<Duration>,
    stop: CancelToken,
    stop_on_unreachable_wait: bool,
    records: Option<Records<'a>>,
    progress: Option<Progress<'a>>,
}

/// Where a batch's records go, and the request of each operation.
#[derive(Clone, Copy)]
struct Records<'a>(&'a dyn RecordSink, &'a [RequestLine]);

/// Where a batch tells its progress.
#[derive(Clone, Copy)]
struct Progress<'a>(&'a (dyn Fn(&BatchProgress) + Sync));

impl std::fmt::Debug for Progress<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

impl std::fmt::Debug for Records<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Records")
            .field(&self.1)
            .finish_non_exhaustive()
    }
}

impl<'a> Batch<'a> {
    /// A batch under `policy`.
    pub fn new(policy: &'a Policy) -> Self {
        Batch {
            policy,
            gate: Gate::new(),
            workers: 1,
            deadline: None,
            stop: CancelToken::new(),
            stop_on_unreachable_wait: false,
            records: None,
            progress: None,
        }
    }

    /// Sends every operation's records, and a result record for each one never
    /// started, to `sink`; `requests[i]` names operation `i` (redacted in the records).
    pub fn records(mut self, sink: &'a dyn RecordSink, requests: &'a [RequestLine]) -> Self {
        self.records = Some(Records(sink, requests));
        self
    }

    /// Stops the whole batch as soon as one operation gives up with
    /// `wait_exceeds_deadline`: when the server says "come back tomorrow" (a daily quota
    /// spent), the other operations would only be refused too.
    pub fn stop_when_a_wait_exceeds_the_deadline(mut self, stop: bool) -> Self {
        self.stop_on_unreachable_wait = stop;
        self
    }

    /// Stops the batch when `token` is cancelled: what has not started is not started, and
    /// what waits wakes at once. (The deadline cancels the same token.) Cancel it from an
    /// operation that learns the rest is hopeless — a daily quota spent.
    pub fn cancel_token(mut self, token: CancelToken) -> Self {
        self.stop = token;
        self
    }

    /// Calls `progress` as each operation ends, started or not, with the batch's progress:
    /// one call per operation, one at a time, `done` going up by one each call.
    pub fn on_progress(mut self, progress: &'a (dyn Fn(&BatchProgress) + Sync)) -> Self {
        self.progress = Some(Progress(progress));
        self
    }

    /// The gate every attempt passes.
    pub fn gate(mut self, gate: Gate) -> Self {
        self.gate = gate;
        self
    }

    /// How many operations run at the same time (at least 1).
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self
    }

    /// A limit on the whole batch's time: operations not started by then are not started,
    /// and no operation waits past it.
    pub fn deadline(mut self, deadline: Option<Duration>) -> Self {
        self.deadline = deadline;
        self
    }

    /// Runs `ops`, classifying each failure with `classify`, and reports.
    pub fn run<T, E, F, C>(&self, ops: Vec<F>, classify: C) -> BatchReport<T, E>
    where
        T: Send,
        E: Send,
        F: FnMut(&AttemptContext<'_>) -> Result<T, E> + Send,
        C: Fn(&E) -> Verdict + Sync,
    {
        let clock = SystemClock::default();
        let n = ops.len();
        let recorder = StatsRecorder::new();
        let deadline_ms = self
            .deadline
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let queue = Mutex::new(
            BatchQueue::new(self.policy, n, clock.now_ms(), deadline_ms)
                .stop_when_a_wait_exceeds_the_deadline(self.stop_on_unreachable_wait)
                .stats(recorder.clone()),
        );
        let lock = || queue.lock().unwrap_or_else(|e| e.into_inner());
        let ops: Vec<Mutex<Option<F>>> = ops.into_iter().map(|f| Mutex::new(Some(f))).collect();
        let results: Vec<Mutex<Option<Ended<T, E>>>> = (0..n).map(|_| Mutex::new(None)).collect();
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..self.workers.min(n.max(1)))
                .map(|_| {
                    scope.spawn(|| loop {
                        if self.stop.is_cancelled() {
                            lock().stop(GiveUpReason::Cancelled);
                        }
                        let next = lock().next(clock.now_ms());
                        let (index, ended) = match next {
                            Next::Finished => break,
                            Next::NotStarted {
                                index,
                                reason,
                                stopped_by,
                            } => (
                                index,
                                (BatchResult::NotStarted { reason, stopped_by }, None),
                            ),
                            Next::Start { index, policy } => {
                                let op =
                                    ops[index].lock().unwrap_or_else(|e| e.into_inner()).take();
                                let Some(op) = op else { continue };
                                let ended =
                                    self.run_one(index, &policy, op, &classify, &recorder, &lock);
                                let reason = match &ended.0 {
                                    BatchResult::GaveUp(e) => Some(e.reason),
                                    _ => None,
                                };
                                if lock().finished(index, reason) {
                                    // The queue stopped: wake every operation that waits.
                                    self.stop.cancel();
                                }
                                (index, ended)
                            }
                        };
                        let end = match &ended.0 {
                            BatchResult::Succeeded(_) => BatchEnd::Succeeded,
                            BatchResult::GaveUp(e) => BatchEnd::GaveUp {
                                reason: e.reason,
                                stopped_by: e.report.stopped_by,
                            },
                            BatchResult::NotStarted { reason, stopped_by } => {
                                BatchEnd::NotStarted {
                                    reason: *reason,
                                    stopped_by: *stopped_by,
                                }
                            }
                        };
                        // Told under the queue's lock: one call at a time, in order.
                        let mut queue = lock();
                        let progress = queue.ended(index, end);
                        if let Some(Progress(tell)) = self.progress {
                            tell(&progress);
                        }
                        drop(queue);
                        *results[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(ended);
                    })
                })
                .collect();
            // Joined, not only finished: a scope returns once every worker's closure has, while
            // its thread may still be exiting, its thread-local storage not yet freed — what a
            // C host's memory checker then reports as lost (valgrind, about one run in six).
            for worker in workers {
                if let Err(panic) = worker.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        });
        let (results, reports) = results
            .into_iter()
            .map(|r| {
                r.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .unwrap_or_else(|| (not_started(BatchEnd::UNREACHED), None))
            })
            .unzip();
        BatchReport {
            results,
            reports,
            stats: recorder.snapshot(),
            elapsed: Duration::from_millis(clock.now_ms()),
        }
    }

    fn run_one<'q, T, E, F, C>(
        &self,
        index: usize,
        policy: &Policy,
        mut op: F,
        classify: &C,
        recorder: &StatsRecorder,
        queue: &(dyn Fn() -> std::sync::MutexGuard<'q, BatchQueue> + Sync),
    ) -> (BatchResult<T, E>, Option<Report>)
    where
        F: FnMut(&AttemptContext<'_>) -> Result<T, E>,
        C: Fn(&E) -> Verdict,
    {
        let mut done_report = None;
        let mut retry = Retry::new(policy);
        if let Some(Records(sink, requests)) = self.records {
            let r = requests.get(index).cloned().unwrap_or_default();
            retry = retry.records(sink, &r.method, &r.url);
        }
        let result = retry
            .gate(&self.gate)
            .stats(recorder.clone())
            .on_done(|r| done_report = Some(r.clone()))
            .cancel_token(self.stop.clone())
            .queue_probe(|| queue().stopped_by_another())
            .classify(classify)
            .call(|ctx| op(ctx));
        match result {
            Ok(value) => (BatchResult::Succeeded(value), done_report),
            Err(e) => match BatchEnd::of(&e.report, e.gate_error.is_some()) {
                end @ BatchEnd::NotStarted { .. } => (not_started(end), None),
                _ => {
                    let report = e.report.clone();
                    (BatchResult::GaveUp(e), Some(report))
                }
            },
        }
    }
}

/// The result of an operation the batch did not start (`end` is [`BatchEnd::NotStarted`]).
fn not_started<T, E>(end: BatchEnd) -> BatchResult<T, E> {
    match end {
        BatchEnd::NotStarted { reason, stopped_by } => {
            BatchResult::NotStarted { reason, stopped_by }
        }
        other => BatchResult::NotStarted {
            reason: other.reason().unwrap_or(GiveUpReason::Cancelled),
            stopped_by: None,
        },
    }
}
