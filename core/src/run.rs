//! The blocking runner (SPEC §6): calls the operation, sleeps between attempts, honours the
//! deadline and cancellation, and shares one attempt limit between nested loops on a thread.

use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::time::Duration;

use crate::attempts::{Attempts, Decision, GiveUpReason, Report, RetryAllowance};
use crate::classify::{Cause, Verdict};
use crate::clock::{CancelToken, Clock, SystemClock};
use crate::idempotency::IdempotencyKey;
use crate::pool::AttemptPool;
use crate::rng::LazyJitterRng;
use crate::Policy;

/// What the operation knows about the attempt it is making.
#[derive(Debug)]
pub struct AttemptContext<'a> {
    attempt: u32,
    key: &'a OnceCell<IdempotencyKey>,
    rng: &'a RefCell<LazyJitterRng>,
    header: &'a str,
}

impl AttemptContext<'_> {
    /// The attempt's number, from 0.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The operation's idempotency key: created at the first call, the same on every attempt
    /// of this operation, never shared with another operation.
    pub fn idempotency_key(&self) -> IdempotencyKey {
        *self
            .key
            .get_or_init(|| IdempotencyKey::generate(&mut *self.rng.borrow_mut()))
    }

    /// The header to send the key in (the policy's, `Idempotency-Key` by default).
    pub fn idempotency_header(&self) -> &str {
        self.header
    }
}

/// An operation that did not succeed: its own last error, unchanged, and why it stopped.
#[derive(Debug)]
pub struct RetryError<E> {
    /// The operation's last error; `None` only when no attempt was made (cancelled before
    /// the first, or an enclosing loop had no attempts left).
    pub error: Option<E>,
    /// Why the loop stopped.
    pub reason: GiveUpReason,
    /// For `wait_exceeds_deadline`: the monotonic instant (the runner clock's ms) from which
    /// a retry would be allowed.
    pub retry_at_ms: Option<u64>,
    /// Attempts, elapsed time and the delays slept.
    pub report: Report,
}

impl<E> RetryError<E> {
    /// The operation's last error, dropping the rest.
    pub fn into_error(self) -> Option<E> {
        self.error
    }
}

impl<E: fmt::Display> fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "gave up after {} attempt(s) ({})",
            self.report.attempts,
            self.reason.name()
        )?;
        match &self.error {
            Some(e) => write!(f, ": {e}"),
            None => Ok(()),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for RetryError<E> {}

thread_local! {
    static CURRENT_POOL: RefCell<Option<AttemptPool>> = const { RefCell::new(None) };
}

/// The attempt pool of the outermost loop running on this thread, restored on drop.
struct PoolScope {
    outermost: bool,
}

impl PoolScope {
    fn enter(max_attempts: u32) -> (Self, AttemptPool, bool) {
        CURRENT_POOL.with(|current| {
            let mut current = current.borrow_mut();
            match &*current {
                Some(pool) => (PoolScope { outermost: false }, pool.clone(), true),
                None => {
                    let pool = AttemptPool::new(max_attempts);
                    *current = Some(pool.clone());
                    (PoolScope { outermost: true }, pool, false)
                }
            }
        })
    }
}

impl Drop for PoolScope {
    fn drop(&mut self) {
        if self.outermost {
            CURRENT_POOL.with(|current| current.borrow_mut().take());
        }
    }
}

type Classifier<'h, E> = Box<dyn FnMut(&E) -> Verdict + 'h>;
type RetryHook<'h, E> = Box<dyn FnMut(u32, &E, Duration) + 'h>;
type GiveUpHook<'h> = Box<dyn FnMut(&Report) + 'h>;

/// A configured blocking retry loop. Start with [`Retry::new`], finish with
/// [`call`](Retry::call).
///
/// ```
/// use recuo::{Policy, Retry};
///
/// let policy = Policy::builder().max_attempts(3).build().unwrap();
/// let mut calls = 0;
/// let result: Result<u32, _> = Retry::new(&policy)
///     .on_retry(|attempt, err: &String, delay| println!("attempt {attempt}: {err}, waiting {delay:?}"))
///     .call(|ctx| {
///         calls += 1;
///         if ctx.attempt() < 2 { Err(format!("failure {calls}")) } else { Ok(calls) }
///     });
/// assert_eq!(result.unwrap(), 3);
/// ```
pub struct Retry<'p, 'h, E, C = SystemClock> {
    policy: &'p Policy,
    clock: C,
    cancel: CancelToken,
    seed: Option<u64>,
    classify: Classifier<'h, E>,
    on_retry: Option<RetryHook<'h, E>>,
    on_give_up: Option<GiveUpHook<'h>>,
    allowance: Option<&'h dyn RetryAllowance>,
}

impl<'p, 'h, E> Retry<'p, 'h, E, SystemClock> {
    /// A loop under `policy` that retries every error, with the system clock.
    pub fn new(policy: &'p Policy) -> Self {
        Retry {
            policy,
            clock: SystemClock::default(),
            cancel: CancelToken::new(),
            seed: None,
            classify: Box::new(|_| Verdict::Retry {
                cause: Cause::ServerError,
                server_wait: None,
            }),
            on_retry: None,
            on_give_up: None,
            allowance: None,
        }
    }
}

impl<'p, 'h, E, C: Clock> Retry<'p, 'h, E, C> {
    /// Another clock (a [`crate::ManualClock`] in tests: no real sleeping).
    pub fn clock<D: Clock>(self, clock: D) -> Retry<'p, 'h, E, D> {
        Retry {
            policy: self.policy,
            clock,
            cancel: self.cancel,
            seed: self.seed,
            classify: self.classify,
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
            allowance: self.allowance,
        }
    }

    /// Cancels the loop when `token` is cancelled, waking it at once if it is sleeping.
    pub fn cancel_token(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }

    /// Seeds the jitter (and the idempotency key) for exact tests.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Decides per error: retry (with any server wait), or give up. Build the verdict with
    /// [`Policy::classify`] for HTTP outcomes. The default retries every error.
    pub fn classify(mut self, f: impl FnMut(&E) -> Verdict + 'h) -> Self {
        self.classify = Box::new(f);
        self
    }

    /// Retries only the errors for which `f` answers `true` (guide A's `repetir_se`).
    pub fn retry_if(self, mut f: impl FnMut(&E) -> bool + 'h) -> Self {
        self.classify(move |e| {
            if f(e) {
                Verdict::Retry {
                    cause: Cause::ServerError,
                    server_wait: None,
                }
            } else {
                Verdict::GiveUp {
                    cause: Cause::Permanent,
                }
            }
        })
    }

    /// Called before each sleep with the attempt just failed, its error and the delay.
    pub fn on_retry(mut self, f: impl FnMut(u32, &E, Duration) + 'h) -> Self {
        self.on_retry = Some(Box::new(f));
        self
    }

    /// Called once when the loop gives up, with its report.
    pub fn on_give_up(mut self, f: impl FnMut(&Report) + 'h) -> Self {
        self.on_give_up = Some(Box::new(f));
        self
    }

    /// Takes a token from `allowance` (a retry budget) for every retry.
    pub fn allowance(mut self, allowance: &'h dyn RetryAllowance) -> Self {
        self.allowance = Some(allowance);
        self
    }

    /// Runs `op` until it succeeds or the policy gives up.
    ///
    /// # Errors
    /// The operation's own last error, unchanged, inside a [`RetryError`] with the reason
    /// and the report.
    pub fn call<T>(
        mut self,
        mut op: impl FnMut(&AttemptContext<'_>) -> Result<T, E>,
    ) -> Result<T, RetryError<E>> {
        let (_scope, pool, nested) = PoolScope::enter(self.policy.max_attempts());
        let mut attempts = Attempts::new(self.policy).with_pool(pool, nested);
        let rng = RefCell::new(LazyJitterRng::new(self.seed));
        let key = OnceCell::new();
        let mut last_error = None;
        loop {
            if self.cancel.is_cancelled() {
                attempts.cancel();
            }
            let attempt = match attempts.begin(self.clock.now_ms()) {
                Ok(n) => n,
                Err(decision) => return Err(self.give_up(decision, last_error, &attempts)),
            };
            let ctx = AttemptContext {
                attempt,
                key: &key,
                rng: &rng,
                header: self.policy.idempotency_header(),
            };
            let error = match op(&ctx) {
                Ok(value) => return Ok(value),
                Err(e) => e,
            };
            let verdict = (self.classify)(&error);
            if self.cancel.is_cancelled() {
                attempts.cancel();
            }
            let now = self.clock.now_ms();
            let decision =
                attempts.decide_with(verdict, now, &mut *rng.borrow_mut(), self.allowance);
            match decision {
                Decision::Retry { delay_ms, .. } => {
                    let delay = Duration::from_millis(delay_ms);
                    if let Some(hook) = &mut self.on_retry {
                        hook(attempt, &error, delay);
                    }
                    last_error = Some(error);
                    if delay_ms > 0 && self.clock.sleep(delay, &self.cancel) {
                        attempts.cancel();
                    }
                }
                other => return Err(self.give_up(other, Some(error), &attempts)),
            }
        }
    }

    fn give_up(
        &mut self,
        decision: Decision,
        error: Option<E>,
        attempts: &Attempts,
    ) -> RetryError<E> {
        let (reason, retry_at_ms) = match decision {
            Decision::GiveUp {
                reason,
                retry_at_ms,
            } => (reason, retry_at_ms),
            _ => (GiveUpReason::Permanent, None),
        };
        let report = attempts.report();
        if let Some(hook) = &mut self.on_give_up {
            hook(&report);
        }
        RetryError {
            error,
            reason,
            retry_at_ms,
            report,
        }
    }
}

/// Runs `op` under `policy`, retrying every error, with real sleeps.
///
/// # Errors
/// The operation's last error inside a [`RetryError`].
pub fn retry<T, E>(
    policy: &Policy,
    op: impl FnMut(&AttemptContext<'_>) -> Result<T, E>,
) -> Result<T, RetryError<E>> {
    Retry::new(policy).call(op)
}
