//! The small read-only values the loops hand to PHP (`Recuo\Attempt`, `Recuo\Decision`,
//! `Recuo\Report`), and `Recuo\Attempts`: the begin/decide face of the core's one machine,
//! [`recuo::Operation`], kept for PHP code written against it.

use std::borrow::Cow;
use std::cell::OnceCell;

use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use recuo::{IdempotencyKey, RequestLine, Seen, Step};

use crate::convert::{header_pairs, instant, php_int, seed as seed_arg, Array, Bytes};
use crate::errors::{guarded, not_constructible};
use crate::policy::Policy;
use crate::record::{record_status, request_line};
use crate::verdict::Verdict;

/// What `Recuo\retry`'s operation knows about the attempt it is making: its `number` (from
/// 0), the operation's `idempotencyKey` (a UUID v4, the same on every attempt) and the
/// `idempotencyHeader` to send it in. The operation may tell the attempt's record what it
/// sent (`recordRequest()`) and what it received (`recordResponse()`).
#[php_class]
#[php(name = "Recuo\\Attempt")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Attempt {
    pub(crate) number: u32,
    /// The operation's key, made at the first ask (a first attempt that never asks for it
    /// makes none); the loop fills it before any later attempt, so that every attempt's
    /// object, this one's too, answers the same key.
    pub(crate) idempotency_key: OnceCell<IdempotencyKey>,
    pub(crate) idempotency_header: Cow<'static, str>,
    /// What the operation said it sent, for the records.
    pub(crate) request: Option<RequestLine>,
    /// What the operation said it received, for the records.
    pub(crate) response: Option<Seen>,
}

impl Attempt {
    /// The attempt `number` of an operation whose key is `idempotency_key` (made at the
    /// first ask when `None`), sent in `idempotency_header`.
    pub fn new(
        number: u32,
        idempotency_key: Option<IdempotencyKey>,
        idempotency_header: Cow<'static, str>,
    ) -> Self {
        Attempt {
            number,
            idempotency_key: idempotency_key.map_or_else(OnceCell::new, OnceCell::from),
            idempotency_header,
            request: None,
            response: None,
        }
    }

    /// The operation's key: this attempt's, made now if nobody asked for it yet.
    pub fn key(&self) -> IdempotencyKey {
        *self.idempotency_key.get_or_init(IdempotencyKey::random)
    }
}

#[php_impl]
impl Attempt {
    /// Not constructible from PHP: `Recuo\retry` makes one per attempt.
    #[php(vis = "private")]
    pub fn __construct() -> PhpResult<Self> {
        not_constructible("Recuo\\Attempt")
    }

    /// For the records: this attempt sends `$method` to `$url` (redacted in every record;
    /// it replaces the loop's `method:` and `url:` for this attempt and the result).
    pub fn record_request(&mut self, method: Bytes<'_>, url: Bytes<'_>) -> PhpResult<()> {
        guarded("Recuo\\Attempt::recordRequest", || {
            self.request = Some(request_line(method, url));
            Ok(())
        })
    }

    /// For the records: this attempt received `$status` with `$headers` (any shape
    /// `Recuo\classify` takes; the records keep only the request id and the wait headers).
    /// Without it, a failure's record takes the status and headers `Recuo\classify` judged.
    #[php(defaults(headers = Array::EMPTY))]
    pub fn record_response(&mut self, status: i64, headers: Array<'_>) -> PhpResult<()> {
        const F: &str = "Recuo\\Attempt::recordResponse";
        guarded(F, || {
            let status = record_status(F, 1, status)?;
            let headers = header_pairs(F, 2, "headers", headers)?;
            self.response = Some(Seen::new(recuo::Outcome::Status(status), &headers));
            Ok(())
        })
    }

    /// The attempt's number: 0 for the first.
    #[php(getter)]
    pub fn get_number(&self) -> i64 {
        i64::from(self.number)
    }

    /// The operation's idempotency key: a UUID v4, the same on every attempt.
    #[php(getter)]
    pub fn get_idempotency_key(&self) -> String {
        self.key().to_string()
    }

    /// The header to send the key in (the policy's; `Idempotency-Key` by default).
    #[php(getter)]
    pub fn get_idempotency_header(&self) -> String {
        self.idempotency_header.to_string()
    }
}

/// What happened to one operation: `attempts` made, the `reason` it gave up (null when it
/// succeeded or has not stopped), `elapsedMs` from the start of the first attempt to the
/// last decision, and the `delaysMs` decided between attempts.
#[php_class]
#[php(name = "Recuo\\Report")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Report {
    pub(crate) inner: recuo::Report,
}

impl From<recuo::Report> for Report {
    fn from(inner: recuo::Report) -> Self {
        Report { inner }
    }
}

#[php_impl]
impl Report {
    /// Not constructible from PHP: `Recuo\retry`'s `$onGiveUp` and `Recuo\Attempts::report`
    /// hand one out.
    #[php(vis = "private")]
    pub fn __construct() -> PhpResult<Self> {
        not_constructible("Recuo\\Report")
    }

    /// Attempts made.
    #[php(getter)]
    pub fn get_attempts(&self) -> i64 {
        i64::from(self.inner.attempts)
    }

    /// Why the operation gave up: `permanent`, `attempts_exhausted`,
    /// `wait_exceeds_deadline`, `budget_exhausted` or `cancelled`; null otherwise.
    #[php(getter)]
    pub fn get_reason(&self) -> Option<&'static str> {
        self.inner.reason.map(recuo::GiveUpReason::name)
    }

    /// Milliseconds from the start of the first attempt to the last decision.
    #[php(getter)]
    pub fn get_elapsed_ms(&self) -> i64 {
        php_int(self.inner.elapsed_ms)
    }

    /// The delays decided between attempts, in milliseconds, in order.
    #[php(getter)]
    pub fn get_delays_ms(&self) -> Vec<i64> {
        self.inner.delays_ms.iter().copied().map(php_int).collect()
    }

    /// For `queue_stopped`: the reason of the operation that stopped the queue.
    #[php(getter)]
    pub fn get_stopped_by(&self) -> Option<&'static str> {
        self.inner.stopped_by.map(recuo::GiveUpReason::name)
    }

    /// For `wait_exceeds_deadline`: when the server would accept a retry, in milliseconds
    /// since the Unix epoch; null when unbounded, or for another reason.
    #[php(getter)]
    pub fn get_retry_at_unix_ms(&self) -> Option<i64> {
        self.inner.retry_at_unix_ms
    }
}

/// What to do next: `kind` is `"done"`, `"retry"` (sleep `delayMs`, then make attempt
/// `nextAttempt`) or `"give_up"` (for `reason`; `retryAtMs` is the instant on the caller's
/// clock from which the server would accept a retry, when the wait passed the deadline).
#[php_class]
#[php(name = "Recuo\\Decision")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug, Clone, Copy)]
pub struct Decision {
    inner: recuo::Decision,
}

#[php_impl]
impl Decision {
    /// Not constructible from PHP: `Recuo\Attempts` makes them.
    #[php(vis = "private")]
    pub fn __construct() -> PhpResult<Self> {
        not_constructible("Recuo\\Decision")
    }

    /// `"done"`, `"retry"` or `"give_up"`.
    #[php(getter)]
    pub fn get_kind(&self) -> &'static str {
        match self.inner {
            recuo::Decision::Done => "done",
            recuo::Decision::Retry { .. } => "retry",
            recuo::Decision::GiveUp { .. } => "give_up",
        }
    }

    /// For `"retry"`: the delay before the next attempt, in milliseconds.
    #[php(getter)]
    pub fn get_delay_ms(&self) -> Option<i64> {
        match self.inner {
            recuo::Decision::Retry { delay_ms, .. } => Some(php_int(delay_ms)),
            _ => None,
        }
    }

    /// For `"retry"`: the number of the next attempt (from 0).
    #[php(getter)]
    pub fn get_next_attempt(&self) -> Option<i64> {
        match self.inner {
            recuo::Decision::Retry { next_attempt, .. } => Some(i64::from(next_attempt)),
            _ => None,
        }
    }

    /// For `"give_up"`: `permanent`, `attempts_exhausted`, `wait_exceeds_deadline`,
    /// `budget_exhausted` or `cancelled`.
    #[php(getter)]
    pub fn get_reason(&self) -> Option<&'static str> {
        match self.inner {
            recuo::Decision::GiveUp { reason, .. } => Some(reason.name()),
            _ => None,
        }
    }

    /// For `"give_up"` with `wait_exceeds_deadline`: the instant (the caller's clock, ms)
    /// from which the server would accept a retry; null when unbounded or for other reasons.
    #[php(getter)]
    pub fn get_retry_at_ms(&self) -> Option<i64> {
        match self.inner {
            recuo::Decision::GiveUp { retry_at_ms, .. } => retry_at_ms.map(php_int),
            _ => None,
        }
    }
}

/// The retry state of one operation under a policy (sans-IO): the caller says when each
/// attempt begins and what it came to, on its own monotonic clock in milliseconds, and is
/// told to go on, retry after a delay, or stop and why. The core's [`recuo::Operation`]
/// decides; `Recuo\Operation` is the same machine with every step.
#[php_class]
#[php(name = "Recuo\\Attempts")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct Attempts {
    op: recuo::Operation,
    started: bool,
}

impl Attempts {
    /// The machine's step as a decision (a step that asks to go on is not one).
    fn decision(step: Step) -> Option<Decision> {
        let inner = match step {
            Step::Done(_) => recuo::Decision::Done,
            Step::Sleep { attempt, delay_ms } => recuo::Decision::Retry {
                delay_ms,
                next_attempt: attempt + 1,
            },
            Step::GaveUp {
                reason,
                retry_at_ms,
                ..
            } => recuo::Decision::GiveUp {
                reason,
                retry_at_ms,
            },
            Step::Enter { .. } | Step::Call { .. } | Step::Classify { .. } => return None,
        };
        Some(Decision { inner })
    }

    fn start(&mut self, now: u64) -> Step {
        self.started = true;
        self.op.start(now, recuo::unix_now_ms())
    }
}

#[php_impl]
impl Attempts {
    /// A fresh operation under `$policy`; `$seed` fixes the jitter.
    pub fn __construct(policy: &Policy, seed: Option<i64>) -> PhpResult<Self> {
        const F: &str = "Recuo\\Attempts::__construct";
        guarded(F, || {
            let seed = seed_arg(F, 2, seed)?;
            Ok(Attempts {
                op: recuo::Operation::new(&policy.inner).seed(seed),
                started: false,
            })
        })
    }

    /// Begins the next attempt at `$nowMs` (the caller's monotonic clock): null to go
    /// ahead, or the give-up decision (cancelled, attempts spent).
    pub fn begin(&mut self, nowMs: i64) -> PhpResult<Option<Decision>> {
        const F: &str = "Recuo\\Attempts::begin";
        guarded(F, || {
            let now = instant(F, 1, "nowMs", nowMs)?;
            let step = if self.started {
                self.op.slept(now)
            } else {
                self.start(now)
            };
            Ok(Self::decision(step).filter(|d| d.get_kind() == "give_up"))
        })
    }

    /// Decides what follows the attempt just made, judged `$verdict`, at `$nowMs`.
    pub fn decide(&mut self, verdict: &Verdict, nowMs: i64) -> PhpResult<Decision> {
        const F: &str = "Recuo\\Attempts::decide";
        guarded(F, || {
            let now = instant(F, 2, "nowMs", nowMs)?;
            if !self.started {
                let _ = self.start(now);
            }
            let step = match verdict.inner {
                recuo::Verdict::Success => self.op.succeeded(now),
                v => match self.op.failed(now) {
                    Step::Classify { .. } => self.op.judged(now, v, None),
                    step => step,
                },
            };
            let done = Decision {
                inner: recuo::Decision::Done,
            };
            Ok(Self::decision(step).unwrap_or(done))
        })
    }

    /// Cancels the operation: the next `begin()` or `decide()` gives up (`cancelled`).
    pub fn cancel(&mut self) {
        self.op.cancel();
    }

    /// The operation's idempotency key (a UUID v4 from the operating system's random
    /// source): made at the first call, then the same.
    pub fn idempotency_key(&mut self) -> String {
        self.op.key().to_string()
    }

    /// Attempts begun so far.
    #[php(getter)]
    pub fn get_attempts(&self) -> i64 {
        i64::from(self.op.report().attempts)
    }

    /// What has happened so far.
    pub fn report(&self) -> PhpResult<Report> {
        guarded("Recuo\\Attempts::report", || Ok(self.op.report().into()))
    }
}
