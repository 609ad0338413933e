//! The one retry loop every runner shares (SPEC §6): the Rust [`crate::Retry`] runner, guide
//! A's [`crate::ComRetry`], and the Python and PHP bindings all call [`drive`] with their
//! own effects — how to call the operation, classify its error, sleep and report.

use std::cell::{OnceCell, RefCell};
use std::time::Duration;

use rand::RngCore;

use crate::attempts::{Attempts, Decision, GiveUpReason, Report, RetryAllowance};
use crate::classify::{Cause, Verdict};
use crate::idempotency::IdempotencyKey;

/// What the operation knows about the attempt it is making.
pub struct AttemptContext<'a> {
    attempt: u32,
    key: &'a OnceCell<IdempotencyKey>,
    header: &'a str,
}

impl std::fmt::Debug for AttemptContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttemptContext")
            .field("attempt", &self.attempt)
            .field("key", &self.key.get())
            .finish_non_exhaustive()
    }
}

impl AttemptContext<'_> {
    /// The attempt's number, from 0.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The operation's idempotency key: created at the first call, the same on every attempt
    /// of this operation, never shared with another operation: from the operating system's
    /// random source ([`IdempotencyKey::random`]), never from the loop's seed (SPEC §5).
    pub fn idempotency_key(&self) -> IdempotencyKey {
        *self.key.get_or_init(IdempotencyKey::random)
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

impl<E: std::fmt::Display> std::fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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

impl<E: std::fmt::Debug + std::fmt::Display> std::error::Error for RetryError<E> {}

/// How a driven loop ended without a value.
#[derive(Debug)]
pub enum Stopped<E> {
    /// The policy gave up: the operation's last error, the reason and the report.
    GaveUp(RetryError<E>),
    /// One of the driver's own effects failed (a predicate that raised, a sleep interrupted
    /// by Ctrl-C): its error, as is.
    Aborted(E),
}

/// The effects of a retry loop: everything [`drive`] does not decide.
pub trait Driver {
    /// What the operation returns on success.
    type Value;
    /// What the operation fails with.
    type Error;

    /// Milliseconds on the runner's monotonic clock.
    fn now_ms(&mut self) -> u64;

    /// Whether the operation has been cancelled.
    fn is_cancelled(&mut self) -> bool {
        false
    }

    /// Called before each attempt (after the cancellation check): waits for whatever must
    /// come first — the gate's place and start slot. `Ok(false)` means the operation was
    /// cancelled meanwhile.
    ///
    /// # Errors
    /// Ends the loop at once with this error.
    fn before_attempt(&mut self, attempt: u32) -> Result<bool, Self::Error> {
        let _ = attempt;
        Ok(true)
    }

    /// Makes one attempt.
    ///
    /// # Errors
    /// The operation's failure.
    fn attempt(&mut self, ctx: &AttemptContext<'_>) -> Result<Self::Value, Self::Error>;

    /// Whether [`classify`](Self::classify) is asked about a failure when no attempt is left
    /// anyway (default: no — guide A's `repetir_se` is never asked after the last attempt).
    /// A runner that counts causes or slows a regulator on 429s answers yes, so the last
    /// attempt's answer is seen too; a permanent verdict then gives up as `permanent`.
    fn classify_spent(&self) -> bool {
        false
    }

    /// The verdict on a failure. Not asked when no attempt is left anyway, unless
    /// [`classify_spent`](Self::classify_spent) says so.
    ///
    /// # Errors
    /// Ends the loop at once with this error ([`Stopped::Aborted`]).
    fn classify(&mut self, error: &Self::Error) -> Result<Verdict, Self::Error>;

    /// Called before each sleep with the attempt that failed, its error and the delay.
    ///
    /// # Errors
    /// Ends the loop at once with this error.
    fn on_retry(
        &mut self,
        attempt: u32,
        error: &Self::Error,
        delay: Duration,
    ) -> Result<(), Self::Error> {
        let _ = (attempt, error, delay);
        Ok(())
    }

    /// Sleeps `delay` (never zero); answers `true` when the operation was cancelled meanwhile.
    ///
    /// # Errors
    /// Ends the loop at once with this error.
    fn sleep(&mut self, delay: Duration) -> Result<bool, Self::Error>;

    /// Called once when the loop gives up, with its report.
    fn on_give_up(&mut self, report: &Report) {
        let _ = report;
    }

    /// Called once when the operation succeeds, with its report (attempts, elapsed, the
    /// delays slept; no reason).
    fn on_done(&mut self, report: &Report) {
        let _ = report;
    }
}

/// Runs the retry loop of SPEC §6 over `attempts` with `driver`'s effects: cancelled? → begin
/// → attempt → classify → decide (attempts, deadline, `allowance`) → hook → sleep, drawing
/// jitter and the idempotency key from `rng`.
///
/// # Errors
/// [`Stopped::GaveUp`] with the operation's last error unchanged, or [`Stopped::Aborted`]
/// when one of the driver's effects failed.
pub fn drive<D: Driver, R: RngCore>(
    mut attempts: Attempts,
    rng: R,
    allowance: Option<&dyn RetryAllowance>,
    driver: &mut D,
) -> Result<D::Value, Stopped<D::Error>> {
    let rng = RefCell::new(rng);
    let key = OnceCell::new();
    let mut last_error = None;
    loop {
        if driver.is_cancelled() {
            attempts.cancel();
        }
        let attempt = match attempts.begin(driver.now_ms()) {
            Ok(n) => n,
            Err(decision) => return Err(give_up(driver, decision, last_error, &attempts)),
        };
        if !driver.before_attempt(attempt).map_err(Stopped::Aborted)? {
            attempts.cancel();
            let decision = attempts.refuse_cancelled(driver.now_ms());
            return Err(give_up(driver, decision, last_error, &attempts));
        }
        let ctx = AttemptContext {
            attempt,
            key: &key,
            header: attempts.policy().idempotency_header(),
        };
        let error = match driver.attempt(&ctx) {
            Ok(value) => {
                let _ = attempts.decide(Verdict::Success, driver.now_ms(), &mut *rng.borrow_mut());
                driver.on_done(&attempts.report());
                return Ok(value);
            }
            Err(e) => e,
        };
        if driver.is_cancelled() {
            attempts.cancel();
        }
        let decision = if attempts.is_spent() && !driver.classify_spent() {
            attempts.exhaust(driver.now_ms())
        } else {
            let verdict = match driver.classify(&error).map_err(Stopped::Aborted)? {
                // An error the caller calls a success is final: nothing to retry.
                Verdict::Success => Verdict::GiveUp {
                    cause: Cause::Success,
                },
                v => v,
            };
            let now = driver.now_ms();
            attempts.decide_with(verdict, now, &mut *rng.borrow_mut(), allowance)
        };
        match decision {
            Decision::Retry { delay_ms, .. } => {
                let delay = Duration::from_millis(delay_ms);
                driver
                    .on_retry(attempt, &error, delay)
                    .map_err(Stopped::Aborted)?;
                last_error = Some(error);
                if delay_ms > 0 && driver.sleep(delay).map_err(Stopped::Aborted)? {
                    attempts.cancel();
                }
            }
            other => return Err(give_up(driver, other, Some(error), &attempts)),
        }
    }
}

fn give_up<D: Driver>(
    driver: &mut D,
    decision: Decision,
    error: Option<D::Error>,
    attempts: &Attempts,
) -> Stopped<D::Error> {
    let (reason, retry_at_ms) = match decision {
        Decision::GiveUp {
            reason,
            retry_at_ms,
        } => (reason, retry_at_ms),
        _ => (GiveUpReason::Permanent, None),
    };
    let report = attempts.report();
    driver.on_give_up(&report);
    Stopped::GaveUp(RetryError {
        error,
        reason,
        retry_at_ms,
        report,
    })
}
