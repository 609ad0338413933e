//! The batch runner (SPEC §6–§9): a queue of operations through one policy and one gate,
//! with a deadline for the whole queue. What has not started when the deadline passes is
//! never started late: it is reported as not started.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::attempts::{GiveUpReason, Report};
use crate::classify::Verdict;
use crate::clock::{monotonic_ns, CancelToken};
use crate::drive::{AttemptContext, RetryError};
use crate::gate::Gate;
use crate::run::Retry;
use crate::stats::{Stats, StatsRecorder};
use crate::Policy;

/// How one operation of a batch ended.
#[derive(Debug)]
pub enum BatchResult<T, E> {
    /// It succeeded with this value.
    Succeeded(T),
    /// It gave up: its last error, the reason and its report.
    GaveUp(RetryError<E>),
    /// It was never started: the batch's deadline passed first.
    NotStarted,
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
        }
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
        let started = Instant::now();
        let n = ops.len();
        let ops: Vec<Mutex<Option<F>>> = ops.into_iter().map(|f| Mutex::new(Some(f))).collect();
        let results: Vec<Mutex<Option<BatchResult<T, E>>>> =
            (0..n).map(|_| Mutex::new(None)).collect();
        let reports: Vec<Mutex<Option<Report>>> = (0..n).map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        let recorder = StatsRecorder::new();
        let stop = self.stop.clone();
        let finished = CancelToken::new();
        std::thread::scope(|scope| {
            if let Some(deadline) = self.deadline {
                let (stop, finished) = (&stop, &finished);
                scope.spawn(move || {
                    if !finished.sleep(deadline) {
                        stop.cancel();
                    }
                });
            }
            let workers: Vec<_> = (0..self.workers.min(n.max(1)))
                .map(|_| {
                    scope.spawn(|| loop {
                        let i = next.fetch_add(1, Ordering::AcqRel);
                        if i >= n {
                            break;
                        }
                        let (result, report) =
                            self.run_one(&ops[i], &classify, &recorder, &stop, started);
                        *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                        *reports[i].lock().unwrap_or_else(|e| e.into_inner()) = report;
                    })
                })
                .collect();
            for w in workers {
                let _ = w.join();
            }
            finished.cancel();
        });
        let results = results
            .into_iter()
            .map(|r| {
                r.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .unwrap_or(BatchResult::NotStarted)
            })
            .collect();
        let reports = reports
            .into_iter()
            .map(|r| r.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect();
        BatchReport {
            results,
            reports,
            stats: recorder.snapshot(),
            elapsed: started.elapsed(),
        }
    }

    fn run_one<T, E, F, C>(
        &self,
        op: &Mutex<Option<F>>,
        classify: &C,
        recorder: &StatsRecorder,
        stop: &CancelToken,
        started: Instant,
    ) -> (BatchResult<T, E>, Option<Report>)
    where
        F: FnMut(&AttemptContext<'_>) -> Result<T, E>,
        C: Fn(&E) -> Verdict,
    {
        let Some(mut op) = op.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return (BatchResult::NotStarted, None);
        };
        let remaining = self.deadline.map(|d| d.saturating_sub(started.elapsed()));
        if stop.is_cancelled() || remaining.is_some_and(|r| r.is_zero()) {
            recorder.not_started();
            return (BatchResult::NotStarted, None);
        }
        // No operation may wait past the batch's deadline.
        let deadline = match (self.policy.deadline_ms(), remaining) {
            (Some(own), Some(left)) => Some(Duration::from_millis(own).min(left)),
            (own, left) => own.map(Duration::from_millis).or(left),
        };
        let policy = match self.policy.to_builder().deadline(deadline).build() {
            Ok(p) => p,
            Err(_) => self.policy.clone(),
        };
        let mut done_report = None;
        let result = Retry::new(&policy)
            .gate(&self.gate)
            .on_done(|r| done_report = Some(r.clone()))
            .cancel_token(stop.clone())
            .classify(|e| {
                let v = classify(e);
                recorder.saw(v.cause());
                v
            })
            .call(|ctx| {
                recorder.start(ctx.attempt(), monotonic_ns());
                let r = op(ctx);
                recorder.end();
                r
            });
        match result {
            Ok(value) => {
                recorder.finished(true);
                (BatchResult::Succeeded(value), done_report)
            }
            Err(e) if e.error.is_none() => {
                recorder.not_started();
                (BatchResult::NotStarted, None)
            }
            Err(e) => {
                recorder.finished(false);
                if self.stop_on_unreachable_wait && e.reason == GiveUpReason::WaitExceedsDeadline {
                    stop.cancel();
                }
                let report = e.report.clone();
                (BatchResult::GaveUp(e), Some(report))
            }
        }
    }
}
