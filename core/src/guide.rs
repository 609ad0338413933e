//! The two guides' functions: guide A's `com_retry` loop and guide B's `retry_delay_ms`.
//!
//! Guide A is [“Como repetir requisições com backoff exponencial (retry)”](https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff);
//! guide B is “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”. Their
//! names and parameters are the guides' own (Portuguese): `tentativas` (attempts), `base`,
//! `maximo` (the largest window), `prazo` (deadline), `repetir_se` (retry if).

use std::time::Duration;

use std::cell::OnceCell;

use rand::RngCore;

use crate::classify::Verdict;
use crate::clock::{Clock, SystemClock};
use crate::drive::{drive, AttemptContext, Driver, RetryError, Stopped};
use crate::journal::Seen;
use crate::operation::Operation;
use crate::run::PoolScope;
#[cfg(test)]
use crate::JitterRng;
use crate::{parse_retry_after, Backoff, ConfigError, Policy};

/// Guide B's base window: 1000 ms.
pub const GUIDE_B_BASE_MS: u64 = 1000;
/// Guide B's largest window: 8000 ms.
pub const GUIDE_B_CAP_MS: u64 = 8000;

/// Guide B's `retryDelayMs`: how long to wait before retry index `attempt`, in milliseconds.
///
/// A `Retry-After` of seconds or a date gives the server's wait exactly (a past date is 0);
/// a wait over 2^53 − 1 ms gives `f64::INFINITY`; a missing or invalid value gives a
/// full-jitter draw from `[0, min(8000, 1000 · 2^attempt)]` taken from `rng`.
/// `now_unix_ms` is the current time in milliseconds since the Unix epoch.
pub fn retry_delay_ms<R: RngCore + ?Sized>(
    retry_after: Option<&str>,
    attempt: u32,
    now_unix_ms: i64,
    rng: &mut R,
) -> f64 {
    parse_retry_after(retry_after.unwrap_or(""), now_unix_ms).guide_b_delay_ms(attempt, rng)
}

/// Guide A's retry loop: `tentativas` attempts with full-jitter backoff between them, and an
/// optional limit on the total time (`prazo`).
///
/// # Defaults
/// [`ComRetry::GUIDE_A`]: 5 attempts, base 200 ms, maximum 5000 ms, no deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComRetry {
    tentativas: u32,
    backoff: Backoff,
    deadline_ms: Option<u64>,
}

impl ComRetry {
    /// Guide A's defaults: 5 attempts, 200 ms base, 5000 ms maximum, full jitter.
    pub const GUIDE_A: ComRetry = ComRetry {
        tentativas: 5,
        backoff: Backoff::new(),
        deadline_ms: None,
    };

    /// A loop of `tentativas` attempts whose delay before attempt `i + 1` is drawn uniformly
    /// from `[0, min(maximo_ms, base_ms · 2^i)]`.
    ///
    /// # Errors
    /// [`ConfigError::ZeroAttempts`] when `tentativas` is 0, [`ConfigError::CapBelowBase`]
    /// when `maximo_ms < base_ms`.
    pub const fn new(tentativas: u32, base_ms: u64, maximo_ms: u64) -> Result<Self, ConfigError> {
        if tentativas == 0 {
            return Err(ConfigError::ZeroAttempts);
        }
        match Backoff::new()
            .with_base_ms(base_ms)
            .with_cap_ms(maximo_ms)
            .validate()
        {
            Ok(backoff) => Ok(ComRetry {
                tentativas,
                backoff,
                deadline_ms: None,
            }),
            Err(e) => Err(e),
        }
    }

    /// The same loop, giving up (`wait_exceeds_deadline`) rather than sleeping past
    /// `deadline_ms` after the start of the first attempt; `None` for no limit.
    pub const fn with_deadline_ms(mut self, deadline_ms: Option<u64>) -> Self {
        self.deadline_ms = deadline_ms;
        self
    }

    /// The number of attempts.
    pub const fn tentativas(&self) -> u32 {
        self.tentativas
    }

    /// The backoff schedule between attempts.
    pub const fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// The deadline, in milliseconds from the start of the first attempt.
    pub const fn deadline_ms(&self) -> Option<u64> {
        self.deadline_ms
    }

    /// This loop as a [`Policy`]: what the bindings hand to [`drive`] with their own effects.
    pub const fn policy(&self) -> Policy {
        Policy::with_parts(self.tentativas, self.backoff, self.deadline_ms)
    }

    /// Runs the loop with every effect supplied by the caller.
    ///
    /// Calls `tarefa` until it succeeds, `repetir_se` refuses its error, or the attempts are
    /// spent, and returns its value or its **last error unchanged**. Between attempts it
    /// draws the delay (seeded with `seed` when given) and calls `sleep` with it — but never
    /// for a zero delay. `repetir_se` is not asked after the last attempt; it answers a
    /// `bool` or a [`Verdict`] (a verdict's give-up stops, its server wait is
    /// honoured). With no clock, the deadline (if any) is never reached.
    ///
    /// `repetir_se` and `sleep` may fail (a predicate that raises, a sleep interrupted by
    /// Ctrl-C); their error ends the loop at once and is returned as is.
    pub fn run_with<T, E, A: Into<Verdict>>(
        &self,
        seed: Option<u64>,
        tarefa: impl FnMut() -> Result<T, E>,
        repetir_se: impl FnMut(&E) -> Result<A, E>,
        sleep: impl FnMut(Duration) -> Result<(), E>,
    ) -> Result<T, E> {
        self.run_timed(seed, || 0, tarefa, repetir_se, sleep)
    }

    /// The operation machine of this loop: never judging the last attempt's failure, as the
    /// guide's loop never asks `repetir_se` after it.
    pub fn operation(&self, seed: Option<u64>) -> Operation {
        Operation::new(&self.policy())
            .seed(seed)
            .classify_last_failure(false)
    }

    /// As [`run_with`](Self::run_with), reading the time from `now_ms` (a monotonic clock in
    /// milliseconds), so that the deadline applies.
    pub fn run_timed<T, E, A: Into<Verdict>>(
        &self,
        seed: Option<u64>,
        now_ms: impl FnMut() -> u64,
        tarefa: impl FnMut() -> Result<T, E>,
        repetir_se: impl FnMut(&E) -> Result<A, E>,
        sleep: impl FnMut(Duration) -> Result<(), E>,
    ) -> Result<T, E> {
        let mut driver = GuideDriver {
            now_ms,
            tarefa,
            repetir_se,
            sleep,
        };
        finish(drive(self.operation(seed), &OnceCell::new(), &mut driver))
    }

    /// Runs the loop with real sleeps, the real monotonic clock and jitter seeded from the
    /// operating system.
    pub fn run<T, E, A: Into<Verdict>>(
        &self,
        tarefa: impl FnMut() -> Result<T, E>,
        mut repetir_se: impl FnMut(&E) -> A,
    ) -> Result<T, E> {
        let clock = SystemClock::default();
        // Like every runner, guide A's loop shares the attempts of an enclosing loop on this
        // thread (see "Loops inside loops" in docs/policy.md).
        let (_scope, pool) = PoolScope::enter(self.tentativas);
        let op = self.operation(None).loop_pool(pool);
        let mut driver = GuideDriver {
            now_ms: || clock.now_ms(),
            tarefa,
            repetir_se: |e: &E| Ok(repetir_se(e)),
            sleep: |d| {
                std::thread::sleep(d);
                Ok(())
            },
        };
        finish(drive(op, &OnceCell::new(), &mut driver))
    }
}

/// Guide A's answer: the value, or the task's (or a failing effect's) error as is.
fn finish<T, E>(result: Result<T, Stopped<E>>) -> Result<T, E> {
    match result {
        Ok(value) => Ok(value),
        Err(Stopped::Aborted(e)) => Err(e),
        Err(Stopped::GaveUp(RetryError { error, .. })) => match error {
            Some(e) => Err(e),
            // Guide A's loop always makes its first attempt: nothing cancels it, and a pool
            // it joins was drawn from by the enclosing attempt that called it.
            None => unreachable!("guide A's loop always makes its first attempt"),
        },
    }
}

/// Guide A's closures as the effects of [`drive`].
struct GuideDriver<N, F, P, S> {
    now_ms: N,
    tarefa: F,
    repetir_se: P,
    sleep: S,
}

impl<T, E, A, N, F, P, S> Driver for GuideDriver<N, F, P, S>
where
    A: Into<Verdict>,
    N: FnMut() -> u64,
    F: FnMut() -> Result<T, E>,
    P: FnMut(&E) -> Result<A, E>,
    S: FnMut(Duration) -> Result<(), E>,
{
    type Value = T;
    type Error = E;

    fn now_ms(&mut self) -> u64 {
        (self.now_ms)()
    }
    fn attempt(&mut self, _: &AttemptContext<'_>) -> Result<T, E> {
        (self.tarefa)()
    }
    fn classify(&mut self, error: &E) -> Result<(Verdict, Option<Seen>), E> {
        (self.repetir_se)(error).map(|a| (a.into(), None))
    }
    fn sleep(&mut self, delay: Duration) -> Result<bool, E> {
        (self.sleep)(delay).map(|()| false)
    }
}

/// Guide A's `comRetry`: calls `tarefa` up to `tentativas` times, sleeping a full-jitter
/// delay from `[0, min(maximo, base · 2^i)]` between attempts while `repetir_se` answers
/// `true` for the error, and returns the value or the **last error unchanged**.
///
/// # Errors
/// The outer `Err` is a bad configuration ([`ConfigError`]): no attempt was made. The inner
/// result is the task's own.
pub fn com_retry<T, E>(
    tarefa: impl FnMut() -> Result<T, E>,
    tentativas: u32,
    base: Duration,
    maximo: Duration,
    repetir_se: impl FnMut(&E) -> bool,
) -> Result<Result<T, E>, ConfigError> {
    // (A `bool` predicate, as the guide writes it; `ComRetry::run` also takes verdicts.)
    let ms = |d: Duration| u64::try_from(d.as_millis()).map_err(|_| ConfigError::DurationTooLarge);
    let policy = ComRetry::new(tentativas, ms(base)?, ms(maximo)?)?;
    Ok(policy.run(tarefa, repetir_se))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `policy` over a task that fails `failures` times, recording the sleeps.
    fn scripted(
        policy: ComRetry,
        failures: u32,
        seed: u64,
    ) -> (Result<u32, String>, u32, Vec<u64>) {
        let mut calls = 0;
        let mut slept = Vec::new();
        let result = policy.run_with(
            Some(seed),
            || {
                calls += 1;
                if calls <= failures {
                    Err(format!("failure {calls}"))
                } else {
                    Ok(calls)
                }
            },
            |_| Ok(true),
            |d| {
                slept.push(d.as_millis() as u64);
                Ok(())
            },
        );
        (result, calls, slept)
    }

    #[test]
    fn succeeds_on_the_third_attempt() {
        let (result, calls, slept) = scripted(ComRetry::GUIDE_A, 2, 9);
        assert_eq!(result, Ok(3));
        assert_eq!(calls, 3);
        assert_eq!(slept.len(), 2);
        assert!(slept[0] <= 200 && slept[1] <= 400, "{slept:?}");
    }

    #[test]
    fn sleeps_are_the_seeded_full_jitter_draws() {
        let (_, _, slept) = scripted(ComRetry::GUIDE_A, 10, 5);
        let mut rng = JitterRng::seeded(5);
        let expected: Vec<u64> = (0..4)
            .map(|i| crate::rng::uniform_inclusive(&mut rng, 0, Backoff::new().window_ms(i)))
            .filter(|&d| d > 0)
            .collect();
        assert_eq!(slept, expected);
    }

    #[test]
    fn gives_back_the_last_error_unchanged() {
        let (result, calls, slept) = scripted(ComRetry::GUIDE_A, 10, 1);
        assert_eq!(result, Err("failure 5".to_string()));
        assert_eq!(calls, 5);
        assert!(slept.len() <= 4);
    }

    #[test]
    fn the_predicate_stops_the_loop() {
        let mut calls = 0;
        let mut asked = 0;
        let result: Result<(), &str> = ComRetry::GUIDE_A.run_with(
            Some(0),
            || {
                calls += 1;
                Err(if calls == 2 { "400" } else { "503" })
            },
            |e| {
                asked += 1;
                Ok(*e == "503")
            },
            |_| Ok(()),
        );
        assert_eq!((result, calls, asked), (Err("400"), 2, 2));
    }

    #[test]
    fn a_failing_sleep_ends_the_loop_with_its_error() {
        let mut calls = 0;
        let result: Result<(), &str> = ComRetry::new(5, 10, 10).unwrap().run_with(
            Some(0),
            || {
                calls += 1;
                Err("task")
            },
            |_| Ok(true),
            |_| Err("interrupted"),
        );
        // With base 10 every window is 10 ms; seed 0 may draw 0 for the first delay, so the
        // sleep that fails is the first non-zero one.
        assert_eq!(result, Err("interrupted"));
        assert!(calls < 5);
    }

    #[test]
    fn the_deadline_stops_the_loop_instead_of_sleeping_past_it() {
        let now = std::cell::Cell::new(0u64);
        let mut calls = 0;
        let mut slept = Vec::new();
        let policy = ComRetry::new(10, 100, 100)
            .unwrap()
            .with_deadline_ms(Some(250));
        let result: Result<(), u32> = policy.run_timed(
            Some(2),
            || now.get(),
            || {
                calls += 1;
                Err(calls)
            },
            |_| Ok(true),
            |d| {
                let ms = d.as_millis() as u64;
                slept.push(ms);
                now.set(now.get() + ms);
                Ok(())
            },
        );
        // Replay the rule by hand: draw each delay; stop when it would pass 250 ms.
        let mut rng = JitterRng::seeded(2);
        let (mut t, mut expected_calls, mut expected_sleeps) = (0, 0, Vec::new());
        loop {
            expected_calls += 1;
            let d = crate::rng::uniform_inclusive(&mut rng, 0, 100);
            if t + d > 250 {
                break;
            }
            t += d;
            if d > 0 {
                expected_sleeps.push(d);
            }
        }
        assert_eq!(result, Err(calls));
        assert_eq!(
            (calls, slept, now.get()),
            (expected_calls, expected_sleeps, t)
        );
        assert!(calls > 2, "the deadline, not the attempts, ended it");
    }

    #[test]
    fn zero_delays_never_sleep() {
        let mut slept = 0;
        let result: Result<(), ()> = ComRetry::new(4, 0, 0).unwrap().run_with(
            Some(0),
            || Err(()),
            |_| Ok(true),
            |_| {
                slept += 1;
                Ok(())
            },
        );
        assert_eq!((result, slept), (Err(()), 0));
    }

    #[test]
    fn bad_configuration_is_refused() {
        assert_eq!(ComRetry::new(0, 200, 5000), Err(ConfigError::ZeroAttempts));
        assert_eq!(
            ComRetry::new(5, 200, 100),
            Err(ConfigError::CapBelowBase {
                base_ms: 200,
                cap_ms: 100
            })
        );
        let r = com_retry(
            || Ok::<_, ()>(1),
            5,
            Duration::from_millis(1),
            Duration::MAX,
            |_| true,
        );
        assert_eq!(r, Err(ConfigError::DurationTooLarge));
    }

    #[test]
    fn com_retry_with_real_sleeps() {
        let mut calls = 0;
        let r = com_retry(
            || {
                calls += 1;
                if calls < 3 {
                    Err("boom")
                } else {
                    Ok("ok")
                }
            },
            5,
            Duration::from_millis(1),
            Duration::from_millis(2),
            |_| true,
        );
        assert_eq!(r, Ok(Ok("ok")));
        assert_eq!(calls, 3);
    }

    #[test]
    fn retry_delay_ms_reads_the_header() {
        let mut rng = JitterRng::seeded(0);
        assert_eq!(retry_delay_ms(Some("12"), 0, 0, &mut rng), 12_000.0);
        assert!(retry_delay_ms(Some("1e3"), 9, 0, &mut rng) <= 8000.0);
        assert!(retry_delay_ms(None, 0, 0, &mut rng) <= 1000.0);
    }
}
