//! One operation's whole retry loop as a sans-IO machine, as quinn-proto holds a
//! whole connection: the host tells it what happened, it answers the next [`Step`].
//!
//! The machine owns everything a loop decides or counts: the attempts and the nested pool's
//! rule, the delays and the deadline, the loop's order (the last attempt's failure is
//! classified before the loop gives up, so a permanent one gives up `permanent` and a final
//! 429 is counted), the gate's feedback and the retry budget, the stats, the journal of
//! records and the report. A host only calls the operation, waits, and converts.
//!
//! ```
//! use recuo::{Operation, Outcome, Policy, Step};
//!
//! let policy = Policy::builder().max_attempts(3).jitter(recuo::Jitter::None).build().unwrap();
//! let mut op = Operation::new(&policy).request("GET", "https://api.example/items");
//! let mut now = 0; // the host's monotonic clock, ms
//! let mut step = op.start(now, 1_700_000_000_000);
//! let mut statuses = [503, 200].into_iter();
//! loop {
//!     step = match step {
//!         Step::Enter { .. } => op.entered(now, true),
//!         Step::Call { .. } => {
//!             now += 10; // the request takes 10 ms
//!             op.responded(now, Outcome::Status(statuses.next().unwrap()), &[("Retry-After", "1")])
//!         }
//!         Step::Classify { .. } => unreachable!("responded() classifies by the policy"),
//!         Step::Sleep { delay_ms, .. } => {
//!             now += delay_ms;
//!             op.slept(now)
//!         }
//!         Step::Done(report) => {
//!             assert_eq!(report.attempts, 2);
//!             // Retry-After: 1 — the server's second, plus a spread of at most window(0).
//!             assert!(report.delays_ms[0] >= 1000, "{:?}", report.delays_ms);
//!             break;
//!         }
//!         Step::GaveUp { .. } => unreachable!(),
//!     };
//! }
//! ```

use crate::attempts::{Attempts, Decision, GiveUpReason, Report, RetryAllowance};
use crate::budget::RetryBudget;
use crate::classify::{Cause, Outcome, Request, Verdict};
use crate::gate::{Gate, GatePoll, GATE_POLL_MS};
use crate::http::{Ending, Last, RequestPlan, Style};
use crate::idempotency::IdempotencyKey;
use crate::journal::{Journal, Level, RequestLine, Seen};
use crate::limit::{ConcurrencyLimit, Permit};
use crate::pool::{AttemptPool, LoopPool};
use crate::record::{attempt_reason, AttemptDecision, Record};
use crate::regulator::{RegulatorError, Reservation};
use crate::rng::LazyJitterRng;
use crate::stats::StatsRecorder;
use crate::Policy;

/// What the host does next.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Step {
    /// Pass the gate for attempt `attempt`: a place among the requests in flight, then a
    /// start slot. Give up waiting at `until_ms` (the deadline, on the host's clock) if set.
    /// Answer with [`Operation::entered`].
    Enter {
        /// The attempt's number, from 0.
        attempt: u32,
        /// The deadline's instant (the host's monotonic ms), if there is one.
        until_ms: Option<u64>,
    },
    /// Make attempt `attempt` now, with the operation's [`key`](Operation::key) if it needs
    /// one. A host that can bound an attempt bounds it by `timeout_ms`, what is left of the
    /// deadline. Answer with [`Operation::succeeded`], [`Operation::failed`] or
    /// [`Operation::responded`].
    Call {
        /// The attempt's number, from 0.
        attempt: u32,
        /// What is left of the deadline, ms; `None` without a deadline.
        timeout_ms: Option<u64>,
    },
    /// Judge the failure of attempt `attempt`: answer with [`Operation::judged`].
    Classify {
        /// The attempt that failed.
        attempt: u32,
    },
    /// Attempt `attempt` failed and is retried: wait `delay_ms` (no wait at all when 0),
    /// waking early on cancellation, then answer with [`Operation::slept`].
    Sleep {
        /// The attempt that failed.
        attempt: u32,
        /// The delay, ms.
        delay_ms: u64,
    },
    /// The operation succeeded.
    Done(Report),
    /// The operation stopped without success. The host returns the operation's own last
    /// error, unchanged (none when no attempt was made).
    GaveUp {
        /// Why.
        reason: GiveUpReason,
        /// For `wait_exceeds_deadline`: the monotonic instant (the host's ms) from which the
        /// server would accept a retry; `None` when unbounded or for another reason.
        retry_at_ms: Option<u64>,
        /// Attempts, elapsed time, delays.
        report: Report,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    New,
    Entering,
    Calling,
    Classifying,
    Sleeping,
    Finished,
}

/// Why the host stopped the operation from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    QueueStopped(GiveUpReason),
}

/// One operation under a [`Policy`]: the loop as a state machine.
///
/// Start it with [`start`](Self::start) and answer each [`Step`] as it says. Records, when
/// asked for with [`records`](Self::records), come out of [`poll_record`](Self::poll_record).
#[derive(Debug)]
pub struct Operation {
    attempts: Attempts,
    rng: LazyJitterRng,
    gate: Option<Gate>,
    stats: Option<StatsRecorder>,
    journal: Option<Journal>,
    method: String,
    classify_last: bool,
    key: Option<IdempotencyKey>,
    /// Whether the request counts as idempotent by its key: the caller's key, or a plan
    /// that says so (the server honours recuo's keys).
    idempotent_by_key: bool,
    phase: Phase,
    attempt: u32,
    start_ms: u64,
    start_unix_ms: i64,
    stop: Option<Stop>,
    /// The request, until [`records`](Self::records) makes the journal that keeps it.
    journal_request: Option<RequestLine>,
    /// How the operation ended: the reason (none for a success) and `retry_at`.
    last: Option<(Option<GiveUpReason>, Option<u64>)>,
    /// The delay of the last [`Step::Sleep`].
    delay_ms: u64,
    /// The gate's passage being made by [`poll_gate`](Operation::poll_gate), then held for
    /// the attempt.
    entry: Entry,
    /// When the attempt being made came to the gate (none: no gate to pass).
    entered_at_ms: Option<u64>,
}

/// What [`Operation::poll_gate`] has of the gate so far: a place in flight (held until the
/// attempt ends), and the start slot reserved, due at `due_ms` on the host's clock.
#[derive(Debug, Default)]
struct Entry {
    permit: Option<Permit>,
    due_ms: Option<u64>,
    reservation: Option<Reservation>,
}

impl Operation {
    /// A new operation under `policy` (the machine keeps its own copy): the failure of every
    /// attempt is judged, the last one's too; no gate, no stats, no records; jitter from
    /// the operating system's entropy, drawn only when a delay is needed.
    #[inline]
    pub fn new(policy: &Policy) -> Self {
        Operation {
            attempts: Attempts::new(policy),
            rng: LazyJitterRng::new(None),
            gate: None,
            stats: None,
            journal: None,
            method: String::new(),
            classify_last: true,
            key: None,
            idempotent_by_key: false,
            phase: Phase::New,
            attempt: 0,
            start_ms: 0,
            start_unix_ms: 0,
            stop: None,
            journal_request: None,
            last: None,
            delay_ms: 0,
            entry: Entry::default(),
            entered_at_ms: None,
        }
    }

    /// Whether an operation with `gate`, stats (`stats`) and records of `records` and above
    /// needs its machine when its first attempt succeeds: when it does not, a host may make
    /// that attempt before the machine exists, and start the machine only on a failure
    /// ([`start_after_first`](Self::start_after_first)). A host decides this once per policy
    /// and gate. A gate with anything in it needs the machine (the regulator's slot, the
    /// limit's place, the budget's count, an adaptive rate restored), as do stats and the
    /// debug-level record a success makes.
    pub fn success_needs_machine(gate: Option<&Gate>, stats: bool, records: Option<Level>) -> bool {
        let gated = gate.is_some_and(|g| {
            g.regulator().is_some() || g.limit().is_some() || g.budget().is_some()
        });
        gated || stats || records.is_some_and(|level| level <= Level::Debug)
    }

    /// Seeds the jitter for exact tests (never the idempotency key).
    #[inline]
    pub fn seed(mut self, seed: Option<u64>) -> Self {
        self.rng = LazyJitterRng::new(seed);
        self
    }

    /// When a remote store's calls made for this operation must end: its deadline as an
    /// instant (`None`: no deadline).
    fn calls_until(&self, now_ms: u64) -> Option<std::time::Instant> {
        crate::attempts::instant_at(now_ms, self.attempts.deadline_at_ms())
    }

    /// Whether a step may ask a remote store (the gate's budget, its limit, or its adaptive
    /// regulator is on Redis): a host with an event loop then runs the steps off it, and a host
    /// with a lock releases it (each such call ends by the operation's deadline).
    pub fn asks_a_remote_store(&self) -> bool {
        let Some(gate) = &self.gate else {
            return false;
        };
        // The budget is asked on every attempt; a remote limit's place is given back when the
        // attempt ends; an adaptive remote regulator is told every refusal (and the successes
        // that restore its rate).
        gate.budget().is_some_and(RetryBudget::is_remote)
            || gate.limit().is_some_and(ConcurrencyLimit::is_remote)
            || gate
                .regulator()
                .is_some_and(|r| r.is_remote() && r.is_adaptive())
    }

    /// Every attempt passes `gate`: [`Step::Enter`] before it when the gate has a regulator or
    /// a concurrency limit; its budget counts first attempts and pays for retries; an
    /// adaptive regulator slows on `rate_limited` verdicts and recovers on successes.
    #[inline]
    pub fn gate(mut self, gate: Gate) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Counts this operation's starts, causes and result in `stats` (shared by a batch).
    #[inline]
    pub fn stats(mut self, stats: StatsRecorder) -> Self {
        self.stats = Some(stats);
        self
    }

    /// Draws attempts from `pool`, the outermost loop's (nested loops share one
    /// limit). `nested`: this operation runs inside an attempt that already drew from it.
    #[inline]
    pub fn pool(mut self, pool: AttemptPool, nested: bool) -> Self {
        self.attempts = self.attempts.with_pool(pool, nested);
        self
    }

    /// Draws attempts as `pool` says (see [`LoopPool`]).
    #[inline]
    pub fn loop_pool(self, pool: LoopPool) -> Self {
        self.pool(pool.pool, pool.nested)
    }

    /// The request this operation sends: its method decides classification by
    /// [`responded`](Self::responded), and both name it in the records.
    #[inline]
    pub fn request(mut self, method: &str, url: &str) -> Self {
        self.method = method.to_string();
        let line = RequestLine {
            method: method.to_string(),
            url: url.to_string(),
        };
        if let Some(j) = &mut self.journal {
            j.set_request(line);
        } else {
            self.journal_request = Some(line);
        }
        self
    }

    /// Keeps records of `min_level` and above, for [`poll_record`](Self::poll_record);
    /// `None` keeps none (and costs nothing).
    #[inline]
    pub fn records(mut self, min_level: Option<Level>) -> Self {
        self.journal = min_level
            .map(|level| Journal::new(level, self.journal_request.take().unwrap_or_default()));
        self
    }

    /// Whether the failure of an attempt after which none is left is judged too (default:
    /// yes, as recuo's rules say; the [`crate::com_retry`] loop answers no: its `repetir_se` is
    /// never asked after the last attempt, and the loop gives up `attempts_exhausted`).
    #[inline]
    pub fn classify_last_failure(mut self, yes: bool) -> Self {
        self.classify_last = yes;
        self
    }

    /// The operation's idempotency key, supplied by the caller: sent on every attempt, and
    /// — since the caller vouches for it — it makes the request idempotent.
    #[inline]
    pub fn idempotency_key(mut self, key: IdempotencyKey) -> Self {
        self.key = Some(key);
        self.idempotent_by_key = true;
        self
    }

    /// Sends the request as `plan` says: a request the plan calls idempotent has a failure
    /// with an unknown outcome (a timeout, a reset, a 500) judged retryable.
    #[inline]
    pub fn plan(mut self, plan: RequestPlan) -> Self {
        self.idempotent_by_key |= plan.idempotent();
        self
    }

    /// Whether the request's body can be sent again (default: yes). A body that cannot —
    /// a stream read once — gets one attempt: its failure is judged and recorded, and the
    /// operation gives up `attempts_exhausted` with no retry decided and no budget spent.
    #[inline]
    pub fn replayable(mut self, yes: bool) -> Self {
        if !yes {
            self.attempts.one_attempt();
        }
        self
    }

    /// How the operation's end reaches the caller, its last attempt having come to `last`
    /// (see [`http::ending`](crate::http::ending)); [`Ending::Response`] while it runs.
    pub fn ending(&self, style: Style, last: Last) -> Ending {
        match self.last {
            Some((reason, _)) => crate::http::ending(style, reason, last),
            None => Ending::Response,
        }
    }

    /// The give-up's message (see [`give_up_message`](crate::http::give_up_message)) at
    /// `now_ms` on the host's clock, its last attempt having come to `last`; `None` unless the
    /// operation gave up.
    pub fn give_up_message(&self, now_ms: u64, last: Last) -> Option<String> {
        let (reason, retry_at) = self.last?;
        let retry_in = retry_at.map(|at| at.saturating_sub(now_ms));
        Some(crate::http::give_up_message(
            reason?,
            self.attempts.attempts(),
            last,
            retry_in,
        ))
    }

    /// For an operation that gave up `wait_exceeds_deadline`: the instant on the host's
    /// monotonic clock (ms) from which a retry would be allowed.
    pub fn retry_at_ms(&self) -> Option<u64> {
        self.last.and_then(|(_, at)| at)
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        self.attempts.policy()
    }

    /// The operation's idempotency key: made from the operating system's random source at
    /// the first call (never from a seed), then the same on every attempt.
    pub fn key(&mut self) -> IdempotencyKey {
        *self.key.get_or_insert_with(IdempotencyKey::random)
    }

    /// The number of the attempt being made (or last made), from 0.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// What has happened so far.
    pub fn report(&self) -> Report {
        let mut report = self.attempts.report();
        if let Some(Stop::QueueStopped(by)) = self.stop {
            if report.reason == Some(GiveUpReason::Cancelled) {
                report.reason = Some(GiveUpReason::QueueStopped);
                report.stopped_by = Some(by);
            }
        }
        report.retry_at_unix_ms = self.retry_at_ms().map(|at| self.unix_at(at));
        report
    }

    /// The next record, with its level, in the order they were made.
    pub fn poll_record(&mut self) -> Option<(Level, Record)> {
        self.journal.as_mut()?.poll()
    }

    /// What the attempt being made says it sent (for its record and the result's).
    pub fn attempt_request(&mut self, method: &str, url: &str) {
        if let Some(j) = &mut self.journal {
            j.attempt_request(RequestLine {
                method: method.to_string(),
                url: url.to_string(),
            });
        }
    }

    /// Cancels the operation (the caller's own cancellation): the next step the host asks
    /// for gives up `cancelled` — an attempt in flight still ends as it ends.
    pub fn cancel(&mut self) {
        self.stop.get_or_insert(Stop::Cancelled);
        self.attempts.cancel();
    }

    /// Stops the operation because its batch queue stopped, on another operation's
    /// `reason`: it gives up `queue_stopped`, naming `reason`.
    pub fn stop_queue(&mut self, reason: GiveUpReason) {
        self.stop.get_or_insert(Stop::QueueStopped(reason));
        self.attempts.cancel();
    }

    /// Whether the operation has finished (done or given up).
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// Starts the operation at `now_ms` on the host's monotonic clock, which is `unix_ms` on
    /// the wall clock (the records' times are measured from it).
    pub fn start(&mut self, now_ms: u64, unix_ms: i64) -> Step {
        if self.phase != Phase::New {
            return self.finish_or_repeat(now_ms);
        }
        self.start_ms = now_ms;
        self.start_unix_ms = unix_ms;
        self.begin(now_ms)
    }

    /// Starts the operation whose first attempt was already made — begun at `now_ms` on the
    /// host's monotonic clock, `unix_ms` on the wall clock — before the machine existed (see
    /// [`success_needs_machine`](Self::success_needs_machine)): answers that attempt's
    /// [`Step::Call`], counted and recorded as begun then; tell its outcome next. Its pool
    /// counts it as drawn ([`LoopPool::after_first`]). The attempt passed no gate: a gate
    /// with a regulator or a limit is not entered for it.
    pub fn start_after_first(&mut self, now_ms: u64, unix_ms: i64) -> Step {
        if self.phase != Phase::New {
            return self.finish_or_repeat(now_ms);
        }
        self.start_ms = now_ms;
        self.start_unix_ms = unix_ms;
        match self.attempts.begin(now_ms) {
            Ok(n) => {
                self.attempt = n;
                self.call(now_ms)
            }
            Err(decision) => self.finish(decision, false),
        }
    }

    /// For a host that cannot block: one look at the gate for the attempt of [`Step::Enter`]
    /// at `now_ms` — a place in flight first, then a start slot from the regulator, within the
    /// deadline. Answers [`GatePoll::Wait`] (sleep that long, then look again: never more than
    /// [`GATE_POLL_MS`] while the limit is full, the slot's time once reserved) or the step
    /// after the gate: the attempt's [`Step::Call`], or the give-up — `wait_exceeds_deadline`
    /// when the place or the slot would come after the deadline, `cancelled` (or
    /// `queue_stopped`) after [`cancel`](Self::cancel). The place is held by the operation
    /// until the attempt ends; a slot reserved and not used is given back.
    ///
    /// The regulator reads its own clock (the machine's monotonic clock, or a Redis
    /// server's).
    ///
    /// # Errors
    /// A remote limit's or regulator's store could not be used: nothing is held, and the
    /// operation is still at [`Step::Enter`].
    pub fn poll_gate(&mut self, now_ms: u64) -> Result<GatePoll, RegulatorError> {
        self.poll_gate_on(now_ms, None)
    }

    /// [`poll_gate`](Self::poll_gate) with the regulator asked at `regulator_now_ns` on a
    /// clock every user of it shares (tests, simulations).
    ///
    /// # Errors
    /// As [`poll_gate`](Self::poll_gate).
    pub fn poll_gate_at(
        &mut self,
        now_ms: u64,
        regulator_now_ns: u64,
    ) -> Result<GatePoll, RegulatorError> {
        self.poll_gate_on(now_ms, Some(regulator_now_ns))
    }

    fn poll_gate_on(
        &mut self,
        now_ms: u64,
        regulator_now_ns: Option<u64>,
    ) -> Result<GatePoll, RegulatorError> {
        if self.phase != Phase::Entering {
            return Ok(GatePoll::Next(self.finish_or_repeat(now_ms)));
        }
        if self.stop.is_some() {
            return Ok(GatePoll::Next(self.entered(now_ms, false)));
        }
        let Some(gate) = self.gate.clone() else {
            return Ok(GatePoll::Next(self.entered(now_ms, true)));
        };
        let until = self.attempts.deadline_at_ms();
        if until.is_some_and(|u| now_ms > u) {
            // A look that comes after the deadline (a host that overslept) asks nothing.
            return Ok(GatePoll::Next(self.entered(now_ms, false)));
        }
        let out_of_time = until.is_some_and(|u| now_ms >= u);
        let left_ms = until.map(|u| u.saturating_sub(now_ms));
        if let (Some(limit), None) = (gate.limit(), &self.entry.permit) {
            // A remote store's call ends by the deadline too (never later than the store's
            // own deadline; at the deadline itself, the store's least time for a round trip).
            let calls_until = left_ms
                .and_then(|ms| crate::clock::instant_in(std::time::Duration::from_millis(ms)));
            let look = limit.acquire_slice(
                Some(std::time::Duration::ZERO),
                calls_until,
                &crate::clock::CancelToken::new(),
            );
            match look.map_err(RegulatorError::Shared)? {
                Some(permit) => self.entry.permit = Some(permit),
                None if out_of_time => return Ok(GatePoll::Next(self.entered(now_ms, false))),
                None => {
                    return Ok(GatePoll::Wait {
                        delay_ms: GATE_POLL_MS.min(left_ms.unwrap_or(u64::MAX)),
                    });
                }
            }
        }
        if let (Some(regulator), None) = (gate.regulator(), self.entry.due_ms) {
            let max_wait_ns = left_ms.map_or(u64::MAX, |ms| ms.saturating_mul(1_000_000));
            let reserved = match regulator_now_ns {
                Some(ns) => regulator.reserve_start_at(ns, 1, max_wait_ns),
                None => regulator.reserve_start(1, max_wait_ns),
            };
            match reserved {
                Ok(r) => {
                    let wait_ms = crate::clock::wait_ms_from_ns(r.wait_ns());
                    self.entry.due_ms = Some(now_ms.saturating_add(wait_ms));
                    self.entry.reservation = (wait_ms > 0).then_some(r);
                }
                Err(Ok(_)) => return Ok(GatePoll::Next(self.entered(now_ms, false))),
                // A store whose call the host makes (it would block: the host answers it,
                // then looks again) keeps the place taken meanwhile; any other failure
                // holds nothing.
                Err(Err(e)) => {
                    if !e.would_block() {
                        self.entry.permit = None;
                    }
                    return Err(e);
                }
            }
        }
        if let Some(due) = self.entry.due_ms {
            if now_ms < due {
                return Ok(GatePoll::Wait {
                    delay_ms: due - now_ms,
                });
            }
        }
        self.entry.reservation = None; // used: the start goes now
        self.entry.due_ms = None;
        Ok(GatePoll::Next(self.entered(now_ms, true)))
    }

    /// Gives back what [`poll_gate`](Self::poll_gate) took and the attempt did not use.
    fn leave_gate(&mut self) {
        if let Some(r) = self.entry.reservation.take() {
            if let Some(regulator) = self.gate.as_ref().and_then(Gate::regulator) {
                let _ = regulator.give_back(r);
            }
        }
        self.entry.due_ms = None;
        self.entry.permit = None;
    }

    /// The gate's answer for the attempt of [`Step::Enter`], at `now_ms`: `passed` is false
    /// when the wait was cancelled or reached the deadline.
    pub fn entered(&mut self, now_ms: u64, passed: bool) -> Step {
        if self.phase != Phase::Entering {
            return self.finish_or_repeat(now_ms);
        }
        if !passed || self.stop.is_some() {
            // A gate that refused with nobody stopping the operation gave up at the deadline
            // it was told (`until_ms`): its slot would only come after it.
            let reason = if self.stop.is_none() && self.attempts.deadline_at_ms().is_some() {
                GiveUpReason::WaitExceedsDeadline
            } else {
                GiveUpReason::Cancelled
            };
            let decision = self.attempts.refuse_start(now_ms, reason);
            self.leave_gate();
            return self.finish(decision, false);
        }
        self.call(now_ms) // which starts no attempt past the deadline
    }

    /// Whether records are kept (a host asks what an attempt saw only then).
    pub fn keeps_records(&self) -> bool {
        self.journal.is_some()
    }

    /// The attempt succeeded at `now_ms`.
    pub fn succeeded(&mut self, now_ms: u64) -> Step {
        self.succeeded_seen(now_ms, None)
    }

    /// The attempt failed at `now_ms`: answers [`Step::Classify`], or — when no attempt is
    /// left and the last failure is not judged — gives up `attempts_exhausted`.
    pub fn failed(&mut self, now_ms: u64) -> Step {
        self.failed_seen(now_ms, None)
    }

    /// As [`failed_seen`](Self::failed_seen), the attempt's error having carried `error_seen`
    /// (a response attached to an exception): its record shows what the attempt said it
    /// received (`seen`), else what the verdict's classifier saw, else `error_seen`.
    pub fn failed_noted(
        &mut self,
        now_ms: u64,
        seen: Option<Seen>,
        error_seen: Option<Seen>,
    ) -> Step {
        if self.phase == Phase::Calling {
            if let Some(j) = &mut self.journal {
                j.error_carried(error_seen);
            }
        }
        self.failed_seen(now_ms, seen)
    }

    /// As [`succeeded`](Self::succeeded), having received `seen` (for its record).
    pub fn succeeded_seen(&mut self, now_ms: u64, seen: Option<Seen>) -> Step {
        if self.phase != Phase::Calling {
            return self.finish_or_repeat(now_ms);
        }
        self.end_attempt(now_ms, seen);
        if let Some(gate) = &self.gate {
            gate.on_success_by(self.calls_until(now_ms));
        }
        let decision = self
            .attempts
            .decide(Verdict::Success, now_ms, &mut self.rng);
        if let Some(j) = &mut self.journal {
            j.attempt(
                Level::Debug,
                None,
                AttemptDecision::Done,
                attempt_reason(&decision, &Verdict::Success),
                false,
                false,
            );
        }
        self.finish(decision, true)
    }

    /// As [`failed`](Self::failed), having received `seen` (for its record).
    pub fn failed_seen(&mut self, now_ms: u64, seen: Option<Seen>) -> Step {
        if self.phase != Phase::Calling {
            return self.finish_or_repeat(now_ms);
        }
        self.end_attempt(now_ms, seen);
        if self.attempts.is_spent() && !self.classify_last {
            let decision = self.attempts.exhaust(now_ms);
            let decision = self.as_stopped(decision);
            if let Some(j) = &mut self.journal {
                j.attempt(
                    Level::Info,
                    None,
                    AttemptDecision::GiveUp,
                    attempt_reason(&decision, &Verdict::from_predicate(true)),
                    true,
                    false,
                );
            }
            return self.finish(decision, false);
        }
        self.phase = Phase::Classifying;
        Step::Classify {
            attempt: self.attempt,
        }
    }

    /// Whether [`judged`](Self::judged) with `verdict` at `now_ms` would take a retry from
    /// the gate's budget: the retry it would decide if the budget allows it. A host that
    /// reaches the budget's store itself asks the store for that retry first and gives the
    /// store its answer, which `judged` then reads (recuo-redis's host stores). Nothing
    /// changes here: the decision is tried on a copy of the attempts and the jitter.
    pub fn would_draw_on_budget(&mut self, now_ms: u64, verdict: &Verdict) -> bool {
        /// An allowance that says yes and remembers that it was asked.
        struct Probe<'a>(&'a std::cell::Cell<bool>);
        impl RetryAllowance for Probe<'_> {
            fn try_withdraw(&self) -> bool {
                self.0.set(true);
                true
            }
        }
        if self.phase != Phase::Classifying || self.gate.as_ref().and_then(Gate::budget).is_none() {
            return false;
        }
        self.rng.ready();
        let (mut attempts, mut rng) = (self.attempts.clone(), self.rng.clone());
        let asked = std::cell::Cell::new(false);
        let _ = attempts.decide_with(*verdict, now_ms, &mut rng, Some(&Probe(&asked)));
        asked.get()
    }

    /// The verdict on the failure of [`Step::Classify`], reached at `now_ms`; `seen` is what
    /// the classifier saw of the response (for the record). A `success` verdict on a failure
    /// gives up as permanent: there is nothing to retry.
    pub fn judged(&mut self, now_ms: u64, verdict: Verdict, seen: Option<Seen>) -> Step {
        if self.phase != Phase::Classifying {
            return self.finish_or_repeat(now_ms);
        }
        let verdict = match verdict {
            Verdict::Success => Verdict::GiveUp {
                cause: Cause::Success,
            },
            v => v,
        };
        if let Some(j) = &mut self.journal {
            j.judged(seen);
        }
        if let Some(stats) = &self.stats {
            stats.saw(verdict.cause());
        }
        if let Some(gate) = &self.gate {
            gate.on_verdict_by(&verdict, self.calls_until(now_ms));
        }
        let budget = self.gate.as_ref().and_then(Gate::budget);
        let decision = self.attempts.decide_with(
            verdict,
            now_ms,
            &mut self.rng,
            budget.map(|b| b as &dyn RetryAllowance),
        );
        let decision = self.as_stopped(decision);
        let reason = attempt_reason(&decision, &verdict);
        match decision {
            Decision::Retry { delay_ms, .. } => {
                if let Some(j) = &mut self.journal {
                    j.attempt(
                        Level::Info,
                        Some(delay_ms),
                        AttemptDecision::Retry,
                        reason,
                        true,
                        matches!(
                            verdict,
                            Verdict::Retry {
                                server_wait: Some(_),
                                ..
                            }
                        ),
                    );
                }
                self.phase = Phase::Sleeping;
                self.delay_ms = delay_ms;
                Step::Sleep {
                    attempt: self.attempt,
                    delay_ms,
                }
            }
            other => {
                if let Some(j) = &mut self.journal {
                    j.attempt(
                        Level::Info,
                        None,
                        AttemptDecision::GiveUp,
                        reason,
                        true,
                        false,
                    );
                }
                self.finish(other, false)
            }
        }
    }

    /// The verdict [`responded`](Self::responded) acts on for this outcome at `now_ms` — the
    /// policy's classification with this operation's method and key — and nothing changes. A
    /// host whose budget answers through it asks the budget first: [`failed`](Self::failed),
    /// then [`judged`](Self::judged) with this verdict and the same `seen`, is `responded`.
    pub fn response_verdict<K: AsRef<str>, V: AsRef<str>>(
        &self,
        now_ms: u64,
        outcome: Outcome,
        headers: &[(K, V)],
    ) -> Verdict {
        let unix_ms = self.unix_at(now_ms);
        let request = Request {
            method: if self.method.is_empty() {
                "GET"
            } else {
                &self.method
            },
            has_idempotency_key: self.idempotent_by_key,
        };
        self.attempts
            .policy()
            .classify(outcome, request, headers, unix_ms)
    }

    /// An HTTP attempt ended at `now_ms` with `outcome` and the response's `headers`: a
    /// success, or a failure judged by the policy's classification ([`Rules`](crate::Rules):
    /// which statuses and failures are worth another attempt) with this operation's method
    /// and key — the machine takes [`Step::Classify`] itself.
    pub fn responded<K: AsRef<str>, V: AsRef<str>>(
        &mut self,
        now_ms: u64,
        outcome: Outcome,
        headers: &[(K, V)],
    ) -> Step {
        let verdict = self.response_verdict(now_ms, outcome, headers);
        let seen = self.journal.as_ref().map(|_| Seen::new(outcome, headers));
        if verdict == Verdict::Success {
            return self.succeeded_seen(now_ms, seen);
        }
        match self.failed_seen(now_ms, seen.clone()) {
            Step::Classify { .. } => self.judged(now_ms, verdict, seen),
            step => step,
        }
    }

    /// The wait of [`Step::Sleep`] is over at `now_ms` (or was cut short by a
    /// cancellation): answers the next attempt's step, or gives up.
    pub fn slept(&mut self, now_ms: u64) -> Step {
        if self.phase != Phase::Sleeping {
            return self.finish_or_repeat(now_ms);
        }
        self.begin(now_ms)
    }

    /// The wall time at `now_ms` on the host's clock.
    fn unix_at(&self, now_ms: u64) -> i64 {
        let since = i64::try_from(now_ms.saturating_sub(self.start_ms)).unwrap_or(i64::MAX);
        self.start_unix_ms.saturating_add(since)
    }

    /// A loop stopped because its queue stopped says so in every record — an attempt's too
    /// — never `cancelled`: nobody cancelled it.
    fn as_stopped(&self, decision: Decision) -> Decision {
        match (decision, self.stop) {
            (
                Decision::GiveUp {
                    reason: GiveUpReason::Cancelled,
                    retry_at_ms,
                },
                Some(Stop::QueueStopped(_)),
            ) => Decision::GiveUp {
                reason: GiveUpReason::QueueStopped,
                retry_at_ms,
            },
            (d, _) => d,
        }
    }

    fn past_deadline(&self, now_ms: u64) -> bool {
        self.attempts.deadline_at_ms().is_some_and(|d| now_ms > d)
    }

    fn begin(&mut self, now_ms: u64) -> Step {
        match self.attempts.begin(now_ms) {
            Ok(n) => {
                self.attempt = n;
                let gated = self
                    .gate
                    .as_ref()
                    .is_some_and(|g| g.regulator().is_some() || g.limit().is_some());
                self.entered_at_ms = gated.then_some(now_ms);
                if gated {
                    self.phase = Phase::Entering;
                    Step::Enter {
                        attempt: n,
                        until_ms: self.attempts.deadline_at_ms(),
                    }
                } else {
                    self.call(now_ms)
                }
            }
            Err(decision) => self.finish(decision, false),
        }
    }

    fn call(&mut self, now_ms: u64) -> Step {
        if self.past_deadline(now_ms) {
            // No attempt starts past the deadline (a gate that let it through late, a wait
            // the host overran, a body that took longer than the wait); one whose wait ends
            // exactly at it still goes.
            let decision = self
                .attempts
                .refuse_start(now_ms, GiveUpReason::WaitExceedsDeadline);
            return self.finish(decision, false);
        }
        self.phase = Phase::Calling;
        if self.attempt == 0 {
            if let Some(budget) = self.gate.as_ref().and_then(Gate::budget) {
                budget.record_request_by(self.calls_until(now_ms));
            }
        }
        if let Some(stats) = &self.stats {
            // The spacing between starts is measured on the machine's monotonic clock, in ns,
            // so that every operation of a batch (each with its host's own clock origin) lands
            // on one timeline.
            stats.start(self.attempt, crate::clock::monotonic_ns());
        }
        let unix_ms = self.unix_at(now_ms);
        if let Some(j) = &mut self.journal {
            let gate_wait_ms = self.entered_at_ms.map(|at| now_ms.saturating_sub(at));
            j.started(now_ms, unix_ms, self.attempt, gate_wait_ms);
        }
        Step::Call {
            attempt: self.attempt,
            timeout_ms: self
                .attempts
                .deadline_at_ms()
                .map(|d| d.saturating_sub(now_ms)),
        }
    }

    fn end_attempt(&mut self, now_ms: u64, seen: Option<Seen>) {
        self.entry.permit = None; // the attempt's place in flight, before any wait
        if let Some(stats) = &self.stats {
            stats.end();
        }
        if let Some(j) = &mut self.journal {
            j.ended(now_ms, seen);
        }
    }

    /// Ends the operation with `decision` (done or given up).
    fn finish(&mut self, decision: Decision, success: bool) -> Step {
        self.phase = Phase::Finished;
        self.leave_gate();
        let mut report = self.report();
        let (reason, retry_at_ms) = match decision {
            Decision::GiveUp {
                reason,
                retry_at_ms,
            } => (Some(reason), retry_at_ms),
            _ => (None, None),
        };
        // A loop stopped from outside says who stopped it.
        let reason = match (reason, self.stop) {
            (
                Some(GiveUpReason::Cancelled | GiveUpReason::QueueStopped),
                Some(Stop::QueueStopped(by)),
            ) => {
                report.reason = Some(GiveUpReason::QueueStopped);
                report.stopped_by = Some(by);
                Some(GiveUpReason::QueueStopped)
            }
            (r, _) => r,
        };
        report.retry_at_unix_ms = retry_at_ms.map(|at| self.unix_at(at));
        if let Some(stats) = &self.stats {
            if report.attempts == 0 {
                stats.not_started();
            } else {
                stats.finished(success);
            }
        }
        if let Some(j) = &mut self.journal {
            j.drop_attempt();
            j.result(&report, self.start_unix_ms);
        }
        self.last = Some((reason, retry_at_ms));
        match reason {
            None => Step::Done(report),
            Some(reason) => Step::GaveUp {
                reason,
                retry_at_ms,
                report,
            },
        }
    }

    /// An answer out of turn changes nothing: the machine repeats the step it is waiting on
    /// (the final one once finished; a machine not started yet starts at `now_ms`).
    fn finish_or_repeat(&mut self, now_ms: u64) -> Step {
        match self.phase {
            Phase::Finished => {
                let report = self.report();
                match self.last.and_then(|(r, _)| r) {
                    None => Step::Done(report),
                    Some(reason) => Step::GaveUp {
                        reason,
                        retry_at_ms: self.last.and_then(|(_, at)| at),
                        report,
                    },
                }
            }
            Phase::New => self.start(now_ms, 0),
            Phase::Entering => Step::Enter {
                attempt: self.attempt,
                until_ms: self.attempts.deadline_at_ms(),
            },
            Phase::Calling => Step::Call {
                attempt: self.attempt,
                timeout_ms: self
                    .attempts
                    .deadline_at_ms()
                    .map(|d| d.saturating_sub(now_ms)),
            },
            Phase::Classifying => Step::Classify {
                attempt: self.attempt,
            },
            Phase::Sleeping => Step::Sleep {
                attempt: self.attempt,
                delay_ms: self.delay_ms,
            },
        }
    }
}
