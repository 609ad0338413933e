//! Properties of the retry state machine (issue 3): for any policy and any run of outcomes,
//! a delay is never below the server's wait, never above the cap without one, and the loop
//! never makes more than `max_attempts` attempts nor sleeps past its deadline.

use std::time::Duration;

use proptest::prelude::*;
use recuo::{Attempts, Cause, Decision, Jitter, JitterRng, Policy, ServerWait, Verdict};

fn jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
        Just(Jitter::None)
    ]
}

/// A failure's verdict: retryable with or without a server wait (sometimes unbounded), or
/// permanent.
fn verdict() -> impl Strategy<Value = Verdict> {
    prop_oneof![
        4 => Just(Verdict::Retry { cause: Cause::ServerError, server_wait: None }),
        3 => (0u64..120_000).prop_map(|w| Verdict::Retry {
            cause: Cause::RateLimited,
            server_wait: Some(ServerWait::Ms(w))
        }),
        1 => Just(Verdict::Retry { cause: Cause::RateLimited, server_wait: Some(ServerWait::Unbounded) }),
        1 => Just(Verdict::GiveUp { cause: Cause::Permanent }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn the_loop_keeps_its_promises(
        max_attempts in 1u32..12,
        base in 0u64..5_000,
        extra in 0u64..60_000,
        mode in jitter(),
        deadline in proptest::option::of(0u64..200_000),
        spread in proptest::option::of(0u64..5_000),
        work_ms in 0u64..3_000,
        outcomes in proptest::collection::vec(verdict(), 1..16),
        seed in any::<u64>(),
    ) {
        let policy = Policy::builder()
            .max_attempts(max_attempts)
            .base(Duration::from_millis(base))
            .cap(Duration::from_millis(base + extra))
            .jitter(mode)
            .deadline(deadline.map(Duration::from_millis))
            .spread(spread.map(Duration::from_millis))
            .build()
            .unwrap();
        let mut attempts = Attempts::new(&policy);
        let mut rng = JitterRng::seeded(seed);
        let mut now = 1_000u64;
        let start = now;
        let mut made = 0u32;
        for verdict in outcomes.iter().cycle().take(64) {
            match attempts.begin(now) {
                Ok(n) => prop_assert_eq!(n, made),
                Err(_) => break,
            }
            made += 1;
            prop_assert!(made <= max_attempts);
            now += work_ms;
            match attempts.decide(*verdict, now, &mut rng) {
                Decision::Retry { delay_ms, next_attempt } => {
                    prop_assert_eq!(next_attempt, made);
                    prop_assert!(made < max_attempts, "a retry after the last attempt");
                    match verdict.server_wait() {
                        Some(ServerWait::Ms(w)) => prop_assert!(delay_ms >= w, "{} below the server's {}", delay_ms, w),
                        Some(ServerWait::Unbounded) => prop_assert!(false, "retried an unbounded wait"),
                        None => prop_assert!(delay_ms <= base + extra, "{} above the cap", delay_ms),
                    }
                    if let Some(d) = deadline {
                        prop_assert!(now + delay_ms <= start + d, "sleeps past the deadline");
                    }
                    now += delay_ms;
                }
                Decision::GiveUp { .. } | Decision::Done => break,
            }
        }
        let report = attempts.report();
        prop_assert_eq!(report.attempts, made);
        prop_assert!(report.attempts <= max_attempts);
        prop_assert!(report.reason.is_some());
    }
}
