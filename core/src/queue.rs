//! The batch queue as a sans-IO machine: which operation starts next, with what
//! deadline, or why it is not started; when the whole queue stops. The threaded
//! [`crate::Batch`], C's, Python's and PHP's batch runners and `recuo trial` all drive it,
//! so no operation starts or waits past the batch's deadline on any surface.

use std::collections::VecDeque;

use crate::attempts::{GiveUpReason, Report};
use crate::journal::{Level, RequestLine};
use crate::record::{FinalRecord, Record};
use crate::stats::{Stats, StatsRecorder};
use crate::Policy;

/// What the queue answers a worker that asks for work.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Next {
    /// Start operation `index` under `policy`: the batch's policy with its deadline clipped
    /// to what is left of the batch's.
    Start {
        /// The operation's place in the batch, from 0.
        index: usize,
        /// The policy to run it under.
        policy: Box<Policy>,
    },
    /// Operation `index` is not started: the batch's deadline has passed
    /// (`wait_exceeds_deadline`), or the queue stopped (`queue_stopped`, on `stopped_by`).
    NotStarted {
        /// The operation's place in the batch.
        index: usize,
        /// Why.
        reason: GiveUpReason,
        /// For `queue_stopped`: the reason that stopped the queue.
        stopped_by: Option<GiveUpReason>,
    },
    /// Every operation has been handed out.
    Finished,
}

impl Next {
    /// `start`, `not_started` or `finished`.
    pub const fn kind(&self) -> &'static str {
        match self {
            Next::Start { .. } => "start",
            Next::NotStarted { .. } => "not_started",
            Next::Finished => "finished",
        }
    }
}

/// How far a batch has come, as its progress callback is told each time an operation ends:
/// operations ended (`done`, of `total`) and how — succeeded, gave up (`failed`), never
/// started — and the retries started so far. `done` goes up by one at each call, and
/// `done == succeeded + failed + not_started`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct BatchProgress {
    /// Operations in the batch.
    pub total: u64,
    /// Operations ended, whichever way.
    pub done: u64,
    /// Operations that succeeded.
    pub succeeded: u64,
    /// Operations that gave up after at least one attempt.
    pub failed: u64,
    /// Operations never started (the batch's deadline came first, or the batch stopped).
    pub not_started: u64,
    /// Retries started so far, by every operation of the batch.
    pub retries: u64,
}

/// A queue of `len` operations under one policy and one deadline.
#[derive(Debug, Clone)]
pub struct BatchQueue {
    policy: Policy,
    len: usize,
    next: usize,
    start_ms: u64,
    deadline_ms: Option<u64>,
    stop_on_unreachable_wait: bool,
    stopped: Option<GiveUpReason>,
    stats: Option<StatsRecorder>,
    records: Option<QueueRecords>,
    progress: BatchProgress,
}

/// The records the queue makes itself: those of the operations it does not start.
#[derive(Debug, Clone)]
struct QueueRecords {
    requests: Vec<RequestLine>,
    start_unix_ms: i64,
    made: VecDeque<(Level, Record)>,
}

/// How one operation of a batch ended, as the batch reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchEnd {
    /// It succeeded.
    Succeeded,
    /// It gave up after at least one attempt (or its gate could not be used).
    GaveUp {
        /// Why.
        reason: GiveUpReason,
        /// For `queue_stopped`: the reason that stopped the queue.
        stopped_by: Option<GiveUpReason>,
    },
    /// It was never started.
    NotStarted {
        /// Why: the batch's deadline (`wait_exceeds_deadline`), the queue stopped
        /// (`queue_stopped`), the caller's stop (`cancelled`).
        reason: GiveUpReason,
        /// For `queue_stopped`: the reason that stopped the queue.
        stopped_by: Option<GiveUpReason>,
    },
}

/// How one operation of a batch ended, by name: `succeeded`, `gave_up` or `not_started`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum BatchStatus {
    /// It succeeded.
    Succeeded,
    /// It gave up after at least one attempt (or its gate could not be used).
    GaveUp,
    /// It was never started.
    NotStarted,
}

impl BatchStatus {
    /// Every status, in the order a batch's counts list them.
    pub const ALL: [BatchStatus; 3] = [
        BatchStatus::Succeeded,
        BatchStatus::GaveUp,
        BatchStatus::NotStarted,
    ];

    /// `succeeded`, `gave_up` or `not_started`.
    pub const fn name(self) -> &'static str {
        match self {
            BatchStatus::Succeeded => "succeeded",
            BatchStatus::GaveUp => "gave_up",
            BatchStatus::NotStarted => "not_started",
        }
    }

    /// The status named `name`, as [`name`](Self::name) spells it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// One operation of a batch as plain data: how it ended, why, the attempts made and, when it
/// gave up, its report. A batch's result without the operation's own value and error, which
/// belong to the language that ran it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct BatchResultValue {
    /// How it ended.
    pub status: BatchStatus,
    /// Why it gave up or was not started; null when it succeeded.
    pub reason: Option<GiveUpReason>,
    /// For `queue_stopped`: the reason that stopped the queue.
    pub stopped_by: Option<GiveUpReason>,
    /// Attempts made (0 when never started).
    pub attempts: u32,
    /// When it gave up: its report.
    pub report: Option<Report>,
}

impl BatchResultValue {
    /// The result of an operation that ended as `end` after `attempts` attempts, with its
    /// `report` when it gave up.
    pub fn of(end: BatchEnd, attempts: u32, report: Option<Report>) -> Self {
        let status = end.status();
        BatchResultValue {
            status,
            reason: end.reason(),
            stopped_by: end.stopped_by(),
            attempts,
            report: report.filter(|_| status == BatchStatus::GaveUp),
        }
    }

    /// How it ended, as the batch's queue counts it; `None` for a give-up or an operation
    /// not started without its reason (a value read from elsewhere).
    pub fn end(&self) -> Option<BatchEnd> {
        BatchEnd::from_parts(self.status, self.reason, self.stopped_by)
    }
}

/// What a batch did, as plain data: each operation's result, in order, the batch's stats and
/// how long it took — what a worker process sends back, and what a file keeps.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct BatchReportValue {
    /// One result per operation, in the order given.
    pub results: Vec<BatchResultValue>,
    /// The batch's stats.
    pub stats: Stats,
    /// How long the batch took, in milliseconds.
    pub elapsed_ms: u64,
}

impl BatchEnd {
    /// The end a `status`, its `reason` and `stopped_by` describe (as a binding or a file
    /// gives them); `None` for a give-up or an operation not started without its reason.
    pub fn from_parts(
        status: BatchStatus,
        reason: Option<GiveUpReason>,
        stopped_by: Option<GiveUpReason>,
    ) -> Option<Self> {
        Some(match status {
            BatchStatus::Succeeded => BatchEnd::Succeeded,
            BatchStatus::GaveUp => BatchEnd::GaveUp {
                reason: reason?,
                stopped_by,
            },
            BatchStatus::NotStarted => BatchEnd::NotStarted {
                reason: reason?,
                stopped_by,
            },
        })
    }

    /// The end of an operation whose loop reported `report`: a give-up with no attempt made
    /// is an operation never started — unless its gate could not be used (`gate_failed`),
    /// an error the batch reports as such.
    pub fn of(report: &Report, gate_failed: bool) -> Self {
        match report.reason {
            None => BatchEnd::Succeeded,
            Some(reason) if report.attempts == 0 && !gate_failed => BatchEnd::NotStarted {
                reason,
                stopped_by: report.stopped_by,
            },
            Some(reason) => BatchEnd::GaveUp {
                reason,
                stopped_by: report.stopped_by,
            },
        }
    }

    /// The end of an operation the batch never reached because the batch itself was stopped
    /// by its caller (an exception, Ctrl-C): not started, `cancelled`.
    pub const UNREACHED: BatchEnd = BatchEnd::NotStarted {
        reason: GiveUpReason::Cancelled,
        stopped_by: None,
    };

    /// How it ended, by name.
    pub const fn status(self) -> BatchStatus {
        match self {
            BatchEnd::Succeeded => BatchStatus::Succeeded,
            BatchEnd::GaveUp { .. } => BatchStatus::GaveUp,
            BatchEnd::NotStarted { .. } => BatchStatus::NotStarted,
        }
    }

    /// For `queue_stopped`: the reason that stopped the queue.
    pub const fn stopped_by(self) -> Option<GiveUpReason> {
        match self {
            BatchEnd::Succeeded => None,
            BatchEnd::GaveUp { stopped_by, .. } | BatchEnd::NotStarted { stopped_by, .. } => {
                stopped_by
            }
        }
    }

    /// The reason, for an end that is not a success.
    pub const fn reason(self) -> Option<GiveUpReason> {
        match self {
            BatchEnd::Succeeded => None,
            BatchEnd::GaveUp { reason: r, .. } | BatchEnd::NotStarted { reason: r, .. } => Some(r),
        }
    }
}

impl BatchQueue {
    /// A queue of `len` operations under `policy`, started at `now_ms` on the host's
    /// monotonic clock, none of which starts or waits past `deadline_ms` from now.
    pub fn new(policy: &Policy, len: usize, now_ms: u64, deadline_ms: Option<u64>) -> Self {
        BatchQueue {
            policy: policy.clone(),
            len,
            next: 0,
            start_ms: now_ms,
            deadline_ms,
            stop_on_unreachable_wait: false,
            stopped: None,
            stats: None,
            records: None,
            progress: BatchProgress {
                total: len as u64,
                ..BatchProgress::default()
            },
        }
    }

    /// Makes the records of the operations it does not start (a `warning` each, as every
    /// give-up's result record is), naming each by its request in `requests` (by index; the
    /// URL redacted), timed on the wall clock from `unix_ms`, the wall time at the queue's
    /// start: [`poll_record`](Self::poll_record) hands them out.
    pub fn records(mut self, requests: Vec<RequestLine>, unix_ms: i64) -> Self {
        self.records = Some(QueueRecords {
            requests,
            start_unix_ms: unix_ms,
            made: VecDeque::new(),
        });
        self
    }

    /// The next record the queue made, with its level, in order.
    pub fn poll_record(&mut self) -> Option<(Level, Record)> {
        self.records.as_mut()?.made.pop_front()
    }

    /// Stops the whole queue when one operation gives up `wait_exceeds_deadline`: when the
    /// server says "come back tomorrow" (a daily quota spent), the rest would only be
    /// refused too.
    pub fn stop_when_a_wait_exceeds_the_deadline(mut self, yes: bool) -> Self {
        self.stop_on_unreachable_wait = yes;
        self
    }

    /// Counts the operations never started in `stats` (the operations count the rest).
    pub fn stats(mut self, stats: StatsRecorder) -> Self {
        self.stats = Some(stats);
        self
    }

    /// The number of operations.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the queue has no operation at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The reason the queue stopped, if it did.
    pub fn stopped(&self) -> Option<GiveUpReason> {
        self.stopped
    }

    /// The reason the queue's running operations are stopped with
    /// ([`Operation::stop_queue`](crate::Operation::stop_queue)): another operation's reason.
    /// `None` while the queue runs, and when its caller stopped it — its operations are then
    /// cancelled ([`Operation::cancel`](crate::Operation::cancel)), the caller's own stop.
    pub fn stopped_by_another(&self) -> Option<GiveUpReason> {
        self.stopped.filter(|r| *r != GiveUpReason::Cancelled)
    }

    /// The next operation to start at `now_ms`, or why it is not started, or
    /// [`Next::Finished`].
    pub fn next(&mut self, now_ms: u64) -> Next {
        if self.next >= self.len {
            return Next::Finished;
        }
        let index = self.next;
        self.next += 1;
        let not_started = |reason, stopped_by| Next::NotStarted {
            index,
            reason,
            stopped_by,
        };
        let next = if let Some(by) = self.stopped {
            match by {
                // The caller's own stop is a cancellation, not another operation's reason.
                GiveUpReason::Cancelled => not_started(GiveUpReason::Cancelled, None),
                by => not_started(GiveUpReason::QueueStopped, Some(by)),
            }
        } else {
            let left = self
                .deadline_ms
                .map(|d| d.saturating_sub(now_ms.saturating_sub(self.start_ms)));
            match left {
                Some(0) => not_started(GiveUpReason::WaitExceedsDeadline, None),
                _ => Next::Start {
                    index,
                    policy: Box::new(self.clipped(left)),
                },
            }
        };
        if let Next::NotStarted {
            index,
            reason,
            stopped_by,
        } = next
        {
            if let Some(stats) = &self.stats {
                stats.not_started();
            }
            let since = i64::try_from(now_ms.saturating_sub(self.start_ms)).unwrap_or(i64::MAX);
            if let Some(r) = &mut self.records {
                let request = r.requests.get(index).cloned().unwrap_or_default();
                let record = Self::not_started_record(
                    r.start_unix_ms.saturating_add(since),
                    &request.method,
                    &request.url,
                    reason,
                    stopped_by,
                );
                r.made.push_back((Level::Warning, record));
            }
        }
        next
    }

    /// The batch's policy with its deadline no longer than `left`.
    fn clipped(&self, left: Option<u64>) -> Policy {
        let own = self.policy.deadline_ms();
        let deadline = match (own, left) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if deadline == own {
            return self.policy.clone();
        }
        self.policy
            .to_builder()
            .deadline(deadline.map(std::time::Duration::from_millis))
            .build()
            .unwrap_or_else(|_| self.policy.clone())
    }

    /// Operation `index` ended: succeeded (`None`) or gave up for `reason`. Answers `true`
    /// when this stops the queue: the host then stops the operations still running
    /// ([`crate::Operation::stop_queue`] with [`stopped`](Self::stopped)'s reason).
    ///
    /// The caller's own stop ([`stop`](Self::stop) with `cancelled`) is the only way an
    /// operation of the queue ends `cancelled`: a queue stopped on another reason stops its
    /// running operations as `queue_stopped`, in every record.
    pub fn finished(&mut self, index: usize, reason: Option<GiveUpReason>) -> bool {
        let _ = index;
        if self.stopped.is_none()
            && self.stop_on_unreachable_wait
            && reason == Some(GiveUpReason::WaitExceedsDeadline)
        {
            self.stopped = reason;
            return true;
        }
        false
    }

    /// Operation `index` ended as `end` — started or not ([`Next::NotStarted`] included):
    /// answers the batch's progress, for its progress callback. Every runner tells the
    /// queue of each operation's end exactly once, so the counts are the same on every
    /// surface; the retries are those the queue's stats ([`stats`](Self::stats)) counted.
    pub fn ended(&mut self, index: usize, end: BatchEnd) -> BatchProgress {
        let _ = index;
        let p = &mut self.progress;
        p.done += 1;
        match end {
            BatchEnd::Succeeded => p.succeeded += 1,
            BatchEnd::GaveUp { .. } => p.failed += 1,
            BatchEnd::NotStarted { .. } => p.not_started += 1,
        }
        if let Some(stats) = &self.stats {
            p.retries = stats.snapshot().retries;
        }
        *p
    }

    /// Stops the queue on `reason` (the caller's own stop: `cancelled`): nothing more starts.
    pub fn stop(&mut self, reason: GiveUpReason) {
        self.stopped.get_or_insert(reason);
    }

    /// The result record of an operation the queue did not start ([`Next::NotStarted`]),
    /// naming it by `method` and `url` (redacted here).
    pub fn not_started_record(
        unix_ms: i64,
        method: &str,
        url: &str,
        reason: GiveUpReason,
        stopped_by: Option<GiveUpReason>,
    ) -> Record {
        Record::Final(FinalRecord::not_started(
            unix_ms, method, url, reason, stopped_by,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_kinds() {
        let stopped = Next::NotStarted {
            index: 0,
            reason: GiveUpReason::QueueStopped,
            stopped_by: None,
        };
        assert_eq!(
            [stopped.kind(), Next::Finished.kind()],
            ["not_started", "finished"]
        );
    }
}
