//! The sans-IO retry state machine: outcomes and times go in, decisions come out.
//!
//! It reads no clock and sleeps never: the caller says when each attempt starts and what it
//! came to, and is told whether to retry after a delay, or to stop and why. Every runner —
//! the blocking one in [`crate::run`], Python's asyncio loop, PHP, a C program with its own
//! HTTP client — drives this same machine, so they all decide alike.
//!
//! ```
//! use recuo::{Attempts, Decision, Outcome, Policy, Request, JitterRng};
//!
//! let policy = Policy::guide_b();
//! let mut attempts = Attempts::new(&policy);
//! let mut rng = JitterRng::seeded(1);
//! let mut now = 0; // monotonic milliseconds, from the caller's clock
//! attempts.begin(now).unwrap();
//! let verdict = policy.classify(Outcome::Status(429), Request::GET, &[("Retry-After", "3")], 0);
//! match attempts.decide(verdict, now, &mut rng) {
//!     Decision::Retry { delay_ms, .. } => assert!((3000..=4000).contains(&delay_ms)),
//!     other => panic!("{other:?}"),
//! }
//! ```

use rand::RngCore;

use crate::backoff::Draw;
use crate::classify::Verdict;
use crate::idempotency::IdempotencyKey;
use crate::pool::AttemptPool;
use crate::server_wait::ServerWait;
use crate::Policy;

/// Why an operation stopped without succeeding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum GiveUpReason {
    /// The outcome is not worth repeating (4xx, 501, TLS, an unsafe repeat, the caller's
    /// predicate said no).
    Permanent,
    /// The attempts are spent (this loop's, or the enclosing loop's).
    AttemptsExhausted,
    /// The wait needed would pass the deadline, or the server's wait is unbounded.
    WaitExceedsDeadline,
    /// The retry budget has no token left.
    BudgetExhausted,
    /// The operation was cancelled by its caller.
    Cancelled,
    /// The batch queue it belongs to stopped (another operation's reason, in
    /// [`Report::stopped_by`]).
    QueueStopped,
}

impl GiveUpReason {
    /// Every reason.
    pub const ALL: [GiveUpReason; 6] = [
        GiveUpReason::Permanent,
        GiveUpReason::AttemptsExhausted,
        GiveUpReason::WaitExceedsDeadline,
        GiveUpReason::BudgetExhausted,
        GiveUpReason::Cancelled,
        GiveUpReason::QueueStopped,
    ];

    /// The reason named `name`, as [`GiveUpReason::name`] spells it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The reason's name: `permanent`, `attempts_exhausted`, `wait_exceeds_deadline`,
    /// `budget_exhausted`, `cancelled` or `queue_stopped`.
    pub const fn name(self) -> &'static str {
        match self {
            GiveUpReason::Permanent => "permanent",
            GiveUpReason::AttemptsExhausted => "attempts_exhausted",
            GiveUpReason::WaitExceedsDeadline => "wait_exceeds_deadline",
            GiveUpReason::BudgetExhausted => "budget_exhausted",
            GiveUpReason::Cancelled => "cancelled",
            GiveUpReason::QueueStopped => "queue_stopped",
        }
    }
}

/// What the caller should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Decision {
    /// The operation succeeded: stop.
    Done,
    /// Sleep `delay_ms`, then make attempt number `next_attempt`.
    Retry {
        /// The delay before the next attempt, in milliseconds.
        delay_ms: u64,
        /// The number of the next attempt (attempts are numbered from 0).
        next_attempt: u32,
    },
    /// Stop without success.
    GiveUp {
        /// Why.
        reason: GiveUpReason,
        /// For `wait_exceeds_deadline`: the monotonic instant (the caller's clock, ms) from
        /// which the server would accept a retry — so the caller can reschedule. `None` when
        /// the wait is unbounded or the reason is another.
        retry_at_ms: Option<u64>,
    },
}

/// Something that may refuse a retry: a retry budget.
pub trait RetryAllowance {
    /// Takes one retry from the allowance; `false` when none is left.
    fn try_withdraw(&self) -> bool;

    /// [`try_withdraw`](Self::try_withdraw), a remote store's call ending by `until` (the
    /// operation's deadline) when given: `false` when the store did not answer by then.
    fn try_withdraw_by(&self, until: Option<std::time::Instant>) -> bool {
        let _ = until;
        self.try_withdraw()
    }
}

/// The instant `end_ms` on a clock that reads `now_ms` now (`None` for no end): the deadline
/// of a remote store's call made for an operation.
pub(crate) fn instant_at(now_ms: u64, end_ms: Option<u64>) -> Option<std::time::Instant> {
    let left = end_ms?.saturating_sub(now_ms);
    crate::clock::instant_in(std::time::Duration::from_millis(left))
}

/// What happened to one operation: attempts, why it stopped, how long it took, and the
/// delays slept between attempts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Report {
    /// Attempts made.
    pub attempts: u32,
    /// Why it stopped without success; null when it succeeded (or has not stopped).
    pub reason: Option<GiveUpReason>,
    /// Milliseconds from the start of the first attempt to the last decision.
    pub elapsed_ms: u64,
    /// The delays decided between attempts, in order.
    pub delays_ms: Vec<u64>,
    /// For `queue_stopped`: the reason of the operation that stopped the queue.
    pub stopped_by: Option<GiveUpReason>,
    /// For `wait_exceeds_deadline`: when the server would accept a retry, in milliseconds
    /// since the Unix epoch (null when unbounded, or for another reason).
    pub retry_at_unix_ms: Option<i64>,
}

/// The retry state of one operation under a [`Policy`] (it keeps its own copy).
#[derive(Debug, Clone)]
pub struct Attempts {
    policy: Policy,
    key: Option<IdempotencyKey>,
    /// Attempts begun so far.
    begun: u32,
    started_ms: Option<u64>,
    /// When the deadline ends (`u64::MAX` without one, or before the start), so that a
    /// decision checks it with one comparison.
    deadline_end_ms: u64,
    last_ms: u64,
    previous_delay_ms: u64,
    delays_ms: Delays,
    reason: Option<GiveUpReason>,
    cancelled: bool,
    pool: Option<(AttemptPool, bool)>,
}

impl Attempts {
    /// A fresh operation under `policy`: no attempt begun yet.
    pub fn new(policy: &Policy) -> Self {
        Attempts {
            policy: policy.clone(),
            key: None,
            begun: 0,
            started_ms: None,
            deadline_end_ms: u64::MAX,
            last_ms: 0,
            previous_delay_ms: policy.backoff().base_ms(),
            delays_ms: Delays::new(),
            reason: None,
            cancelled: false,
            pool: None,
        }
    }

    /// The same operation, drawing its attempts from `pool` (nested loops share one limit).
    /// `nested` says the operation runs inside an attempt of an enclosing loop that
    /// already drew from the pool: its first attempt is that one, and draws nothing.
    pub fn with_pool(mut self, pool: AttemptPool, nested: bool) -> Self {
        self.pool = Some((pool, nested));
        self
    }

    /// Allows this operation one attempt only, whatever its policy says.
    pub(crate) fn one_attempt(&mut self) {
        self.policy.one_attempt();
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The operation's idempotency key: made at the first call from the operating system's
    /// random source ([`IdempotencyKey::random`]; `_rng`, the jitter's generator, is never
    /// used for it), then the same on every attempt of this operation.
    pub fn idempotency_key<R: RngCore + ?Sized>(&mut self, _rng: &mut R) -> IdempotencyKey {
        *self.key.get_or_insert_with(IdempotencyKey::random)
    }

    /// Attempts begun so far.
    pub const fn attempts(&self) -> u32 {
        self.begun
    }

    /// Whether no attempt is left after the ones begun: this loop's are spent, or the shared
    /// pool of the enclosing loops is empty. A failure now can only end in
    /// `attempts_exhausted`.
    pub fn is_spent(&self) -> bool {
        self.begun >= self.policy.max_attempts()
            || self
                .pool
                .as_ref()
                .is_some_and(|(pool, _)| pool.remaining() == 0)
    }

    /// Gives up because the attempts are spent (see [`is_spent`](Self::is_spent)).
    pub fn exhaust(&mut self, now_ms: u64) -> Decision {
        self.last_ms = now_ms;
        self.give_up(GiveUpReason::AttemptsExhausted, None)
    }

    /// Marks the operation cancelled: the next [`begin`](Self::begin) or
    /// [`decide`](Self::decide) gives up with [`GiveUpReason::Cancelled`].
    pub fn cancel(&mut self) {
        self.cancelled = true;
    }

    /// Starts the next attempt at monotonic time `now_ms` and answers its number.
    ///
    /// # Errors
    /// The give-up decision when the operation was cancelled, its attempts are spent, or the
    /// shared pool of an enclosing loop is empty.
    pub fn begin(&mut self, now_ms: u64) -> Result<u32, Decision> {
        self.start(now_ms);
        self.last_ms = now_ms;
        if self.cancelled {
            return Err(self.give_up(GiveUpReason::Cancelled, None));
        }
        if self.begun >= self.policy.max_attempts() {
            return Err(self.give_up(GiveUpReason::AttemptsExhausted, None));
        }
        if let Some((pool, nested)) = &self.pool {
            let free = *nested && self.begun == 0;
            if !free && !pool.try_take() {
                return Err(self.give_up(GiveUpReason::AttemptsExhausted, None));
            }
        }
        let n = self.begun;
        self.begun += 1;
        Ok(n)
    }

    /// Decides what follows the attempt just made, whose verdict is `verdict`, at monotonic
    /// time `now_ms`, drawing any jitter from `rng`.
    pub fn decide<R: RngCore + ?Sized>(
        &mut self,
        verdict: Verdict,
        now_ms: u64,
        rng: &mut R,
    ) -> Decision {
        self.decide_with(verdict, now_ms, rng, None)
    }

    /// As [`decide`](Self::decide), taking a token from `allowance` for any retry (the loop's
    /// budget step).
    #[inline]
    pub fn decide_with<R: RngCore + ?Sized>(
        &mut self,
        verdict: Verdict,
        now_ms: u64,
        rng: &mut R,
        allowance: Option<&dyn RetryAllowance>,
    ) -> Decision {
        self.start(now_ms);
        self.last_ms = now_ms;
        // A retry first: one comparison of the verdict's tag.
        let Verdict::Retry { server_wait, .. } = verdict else {
            if let Verdict::Success = verdict {
                self.reason = None;
                return Decision::Done;
            }
            return self.give_up(GiveUpReason::Permanent, None);
        };
        if self.cancelled {
            return self.give_up(GiveUpReason::Cancelled, None);
        }
        if self.begun >= self.policy.max_attempts()
            || self
                .pool
                .as_ref()
                .is_some_and(|(pool, _)| pool.remaining() == 0)
        {
            return self.give_up(GiveUpReason::AttemptsExhausted, None);
        }
        let n = self.begun.saturating_sub(1);
        // One draw, at one site: from the server's wait plus a spread, or from the backoff.
        let (draw, server_ms) = match server_wait {
            Some(ServerWait::Unbounded) => {
                return self.give_up(GiveUpReason::WaitExceedsDeadline, None)
            }
            Some(ServerWait::Ms(w)) => (Draw::up_to(w, self.policy.spread_cap_ms(n)), Some(w)),
            None => (self.policy.backoff().draw(n, self.previous_delay_ms), None),
        };
        let delay_ms = draw.take(rng);
        let earliest_ms = server_ms.unwrap_or(delay_ms);
        if now_ms.saturating_add(delay_ms) > self.deadline_end_ms {
            let retry_at = now_ms.saturating_add(earliest_ms);
            return self.give_up(GiveUpReason::WaitExceedsDeadline, Some(retry_at));
        }
        let deadline = (self.deadline_end_ms != u64::MAX).then_some(self.deadline_end_ms);
        if allowance.is_some_and(|a| !a.try_withdraw_by(instant_at(now_ms, deadline))) {
            return self.give_up(GiveUpReason::BudgetExhausted, None);
        }
        self.previous_delay_ms = delay_ms;
        self.delays_ms.push(delay_ms, self.policy.max_attempts());
        Decision::Retry {
            delay_ms,
            next_attempt: self.begun,
        }
    }

    /// Gives up because the caller's own predicate refused to retry (a permanent error).
    pub fn refuse(&mut self, now_ms: u64) -> Decision {
        self.last_ms = now_ms;
        self.give_up(GiveUpReason::Permanent, None)
    }

    /// Gives up because the operation was cancelled after [`begin`](Self::begin) but before
    /// its attempt could start (say, while waiting at the gate): that attempt is not counted.
    pub fn refuse_cancelled(&mut self, now_ms: u64) -> Decision {
        self.refuse_start(now_ms, GiveUpReason::Cancelled)
    }

    /// Gives up for `reason` after [`begin`](Self::begin) but before its attempt could start
    /// (cancelled at the gate, or the gate let it through only past the deadline): that
    /// attempt is not counted.
    pub fn refuse_start(&mut self, now_ms: u64, reason: GiveUpReason) -> Decision {
        self.last_ms = now_ms;
        self.begun = self.begun.saturating_sub(1);
        self.give_up(reason, None)
    }

    /// The first attempt's start (or the first decision's, without a `begin`) at `now_ms`.
    #[inline]
    fn start(&mut self, now_ms: u64) {
        if self.started_ms.is_none() {
            self.started_ms = Some(now_ms);
            if let Some(deadline) = self.policy.deadline_ms() {
                self.deadline_end_ms = now_ms.saturating_add(deadline);
            }
        }
    }

    /// The monotonic instant (ms) the deadline ends, once the operation has started.
    pub fn deadline_at_ms(&self) -> Option<u64> {
        match (self.policy.deadline_ms(), self.started_ms) {
            (Some(d), Some(s)) => Some(s.saturating_add(d)),
            _ => None,
        }
    }

    // Once per operation at most: out of the way of the retries (7 fewer instructions in a
    // decision to retry; a give-up takes 5 more).
    #[cold]
    fn give_up(&mut self, reason: GiveUpReason, retry_at_ms: Option<u64>) -> Decision {
        self.reason = Some(reason);
        Decision::GiveUp {
            reason,
            retry_at_ms,
        }
    }

    /// What has happened so far.
    pub fn report(&self) -> Report {
        Report {
            attempts: self.begun,
            reason: self.reason,
            elapsed_ms: self
                .started_ms
                .map_or(0, |s| self.last_ms.saturating_sub(s)),
            delays_ms: self.delays_ms.as_slice().to_vec(),
            stopped_by: None,
            retry_at_unix_ms: None,
        }
    }
}

/// The delays an operation keeps inline: a decision never allocates under a policy of up to
/// `INLINE_DELAYS + 1` attempts (both guides make 5).
const INLINE_DELAYS: usize = 8;

/// The delays decided so far, in order: the first [`INLINE_DELAYS`] in place, the rest (a
/// policy of more attempts) on the heap, where room for all the policy's delays is made at
/// once, so that even then a decision allocates at most once per operation (for up to 1024
/// more).
#[derive(Clone)]
struct Delays {
    len: usize,
    inline: [u64; INLINE_DELAYS],
    /// Empty (never allocated) until the inline ones are full; then all of them.
    spilled: Vec<u64>,
}

impl Delays {
    const fn new() -> Self {
        Delays {
            len: 0,
            inline: [0; INLINE_DELAYS],
            spilled: Vec::new(),
        }
    }

    /// Adds `delay_ms` to an operation of at most `max_attempts` (so one delay fewer).
    #[inline]
    fn push(&mut self, delay_ms: u64, max_attempts: u32) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = delay_ms,
            None => self.spill(delay_ms, max_attempts),
        }
        self.len += 1;
    }

    #[cold]
    #[inline(never)]
    fn spill(&mut self, delay_ms: u64, max_attempts: u32) {
        if self.spilled.is_empty() {
            let room = (max_attempts as usize).min(INLINE_DELAYS + 1024);
            self.spilled.reserve_exact(room);
            self.spilled.extend_from_slice(&self.inline);
        }
        self.spilled.push(delay_ms);
    }

    fn as_slice(&self) -> &[u64] {
        match self.inline.get(..self.len) {
            Some(inline) => inline,
            None => &self.spilled,
        }
    }
}

/// As the list of delays it is, where they are kept aside.
impl std::fmt::Debug for Delays {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}
