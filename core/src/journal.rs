//! The journal of one operation: which record is made when, at which level. The
//! operation machine ([`crate::Operation`]) keeps it; a host only forwards what it polls.
//!
//! The rule, for every surface: an attempt's record once its decision is known — `retry`
//! (info) before the sleep, `done` (debug) on success, `give_up` (info) when the loop stops
//! after a failed attempt — then one result record: debug for a success at the first
//! attempt, info for a success after retries, warning for a give-up.

use std::collections::VecDeque;

use crate::attempts::{GiveUpReason, Report};
use crate::classify::Outcome;
use crate::record::{AttemptDecision, AttemptReason, AttemptRecord, FinalRecord, Record};

/// How much a record matters, as a logger ranks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// An attempt that succeeded; the result of an operation done at its first attempt.
    Debug,
    /// An attempt retried or given up on; the result of an operation that needed retries.
    Info,
    /// The result of an operation that gave up.
    Warning,
}

impl Level {
    /// Every level, from the least severe.
    pub const ALL: [Level; 3] = [Level::Debug, Level::Info, Level::Warning];

    /// `debug`, `info` or `warning`.
    pub const fn name(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warning => "warning",
        }
    }

    /// The level named `name` (as [`name`](Self::name) spells it).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// What an attempt received, as its record keeps it: the outcome, the request id and the
/// wait headers, already redacted (nothing else of the response is kept, even in memory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The status, the transport failure, or a success with no HTTP meaning.
    pub outcome: Outcome,
    /// The request id the response carried, redacted.
    pub request_id: Option<String>,
    /// The wait headers seen, redacted.
    pub wait_headers: Vec<(String, String)>,
}

impl Seen {
    /// What a record keeps of a response with `outcome` and `headers`.
    pub fn new<K: AsRef<str>, V: AsRef<str>>(outcome: Outcome, headers: &[(K, V)]) -> Self {
        let kept = AttemptRecord::new(
            0,
            0,
            "",
            "",
            outcome,
            headers,
            None,
            AttemptDecision::Done,
            AttemptReason::Loop(GiveUpReason::Permanent),
        );
        Seen {
            outcome,
            request_id: kept.request_id,
            wait_headers: kept.wait_headers,
        }
    }

    /// An outcome with no response headers.
    pub fn outcome(outcome: Outcome) -> Self {
        Seen {
            outcome,
            request_id: None,
            wait_headers: Vec::new(),
        }
    }
}

/// The request an operation sends, as its records name it (the URL is redacted when a
/// record is made).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestLine {
    /// The HTTP method; empty for a task with no HTTP meaning.
    pub method: String,
    /// The URL as given, not yet redacted.
    pub url: String,
}

/// The attempt being made, as far as its record needs it.
#[derive(Debug, Clone)]
struct Current {
    attempt: u32,
    gate_wait_ms: Option<u64>,
    start_unix_ms: i64,
    start_ms: u64,
    end_ms: u64,
    request: Option<RequestLine>,
    seen: Option<Seen>,
    /// What the attempt's error itself carried: shown only when neither the attempt nor the
    /// verdict said what it received.
    error_seen: Option<Seen>,
}

/// The records of one operation, made as the loop decides and kept until polled.
#[derive(Debug, Clone)]
pub(crate) struct Journal {
    /// The operation's number, on each of its records.
    id: u64,
    min_level: Level,
    request: RequestLine,
    last_request: Option<RequestLine>,
    current: Option<Current>,
    first_unix_ms: Option<i64>,
    queue: VecDeque<(Level, Record)>,
}

impl Journal {
    /// A journal that keeps records of `min_level` and above.
    pub(crate) fn new(min_level: Level, request: RequestLine) -> Self {
        /// The numbers given so far: each journal is one operation.
        static OPERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Journal {
            id: OPERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
            min_level,
            request,
            last_request: None,
            current: None,
            first_unix_ms: None,
            queue: VecDeque::new(),
        }
    }

    pub(crate) fn set_request(&mut self, request: RequestLine) {
        self.request = request;
    }

    /// Attempt number `attempt` starts at `now_ms` (monotonic), `unix_ms` on the wall clock,
    /// after `gate_wait_ms` at the gate (none: no gate).
    pub(crate) fn started(
        &mut self,
        now_ms: u64,
        unix_ms: i64,
        attempt: u32,
        gate_wait_ms: Option<u64>,
    ) {
        self.first_unix_ms.get_or_insert(unix_ms);
        self.current = Some(Current {
            attempt,
            gate_wait_ms,
            start_unix_ms: unix_ms,
            start_ms: now_ms,
            end_ms: now_ms,
            request: None,
            seen: None,
            error_seen: None,
        });
    }

    /// What the attempt being made says it sent.
    pub(crate) fn attempt_request(&mut self, request: RequestLine) {
        self.last_request = Some(request.clone());
        if let Some(c) = &mut self.current {
            c.request = Some(request);
        }
    }

    /// The attempt ended at `now_ms`, having received `seen` (if anyone knows).
    pub(crate) fn ended(&mut self, now_ms: u64, seen: Option<Seen>) {
        if let Some(c) = &mut self.current {
            c.end_ms = now_ms;
            if seen.is_some() {
                c.seen = seen;
            }
        }
    }

    /// What the attempt's error carried (a response attached to an exception): the record's
    /// last resort.
    pub(crate) fn error_carried(&mut self, seen: Option<Seen>) {
        if let Some(c) = &mut self.current {
            c.error_seen = seen;
        }
    }

    /// What the verdict's classifier saw, when the attempt's end did not say.
    pub(crate) fn judged(&mut self, seen: Option<Seen>) {
        if let (Some(c), Some(seen)) = (&mut self.current, seen) {
            // What the attempt itself said it received comes first.
            c.seen.get_or_insert(seen);
        }
    }

    fn keep(&self, level: Level) -> bool {
        level >= self.min_level
    }

    /// The record of the attempt just made (once), decided `decision` for `reason`; a delay
    /// that is the server's wait says so (`server_wait`).
    pub(crate) fn attempt(
        &mut self,
        level: Level,
        delay_ms: Option<u64>,
        decision: AttemptDecision,
        reason: AttemptReason,
        failed: bool,
        server_wait: bool,
    ) {
        let Some(c) = self.current.take() else {
            return;
        };
        if !self.keep(level) {
            return;
        }
        let request = c.request.as_ref().unwrap_or(&self.request);
        // The attempt's own word, then the verdict's, then the error's.
        let seen = c.seen.or(c.error_seen).unwrap_or_else(|| {
            // A failure nothing said more about is an error with no HTTP meaning.
            Seen::outcome(if failed {
                Outcome::Transport(crate::Transport::Other)
            } else {
                Outcome::Success
            })
        });
        let none: [(&str, &str); 0] = [];
        let mut record = AttemptRecord::new(
            c.start_unix_ms,
            c.end_ms.saturating_sub(c.start_ms),
            &request.method,
            &request.url,
            seen.outcome,
            &none,
            delay_ms,
            decision,
            reason,
        );
        record.request_id = seen.request_id;
        record.wait_headers = seen.wait_headers;
        record.attempt = c.attempt;
        record.server_wait = server_wait && delay_ms.is_some();
        record.gate_wait_ms = c.gate_wait_ms;
        record.operation_id = self.id;
        self.queue.push_back((level, Record::Attempt(record)));
    }

    /// Forgets the attempt being made without a record (it never started).
    pub(crate) fn drop_attempt(&mut self) {
        self.current = None;
    }

    /// The result record of the operation, which ended as `report` says; `unix_ms` is the
    /// wall time of its start when no attempt started.
    pub(crate) fn result(&mut self, report: &Report, start_unix_ms: i64) {
        let level = match report.reason {
            Some(_) => Level::Warning,
            None if report.attempts > 1 => Level::Info,
            None => Level::Debug,
        };
        if !self.keep(level) {
            return;
        }
        let request = self.last_request.as_ref().unwrap_or(&self.request);
        let mut record = FinalRecord::new(
            self.first_unix_ms.unwrap_or(start_unix_ms),
            &request.method,
            &request.url,
            report.reason,
            report.attempts,
            report.elapsed_ms,
        );
        record.stopped_by = report.stopped_by;
        record.operation_id = self.id;
        self.queue.push_back((level, Record::Final(record)));
    }

    pub(crate) fn poll(&mut self) -> Option<(Level, Record)> {
        self.queue.pop_front()
    }
}
