//! The state machine's decision per outcome — `Attempts::decide` under guide B's policy
//! (5 attempts, 1 s base, 8 s cap, full jitter, 30 s deadline) — beside a hand-rolled
//! decision that gives the same answer.
//!
//! The baseline: the least code that decides the same thing — attempts left, the window
//! `min(cap, base · 2^n)`, the jitter draw (or the server's wait plus a spread), the deadline
//! check — inline, with the same generator, and no bookkeeping. It is what a careful
//! hand-written loop computes, so the ratio is the price of the state machine itself (the
//! report of delays, the shared attempt pool, cancellation, the budget hook) per decision.
//! Both sides get a fresh state per decision, made outside the timing, in batches of 64.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use recuo::{Attempts, Decision, JitterRng, Outcome, Policy, Request, Verdict};
use recuo_bench::peers::{hand_rolled, MAX_ATTEMPTS, NOW_MS};
use recuo_bench::{sides, Side};

/// Fresh states made per timed batch: few enough that they are still in the cache when they
/// are decided on, as a host's own state is (its `begin` has just touched it). Criterion's
/// `SmallInput` batches run to tens of thousands, and recuo's state (its policy, the delays
/// kept inline) is some 450 bytes beside the baseline's 4: megabytes of fresh states per
/// batch, so that figure timed the cache misses of the state, not the decision.
const BATCH: BatchSize = BatchSize::NumIterations(64);

/// One outcome: its verdict and how many attempts were made before the decision.
struct Case {
    name: &'static str,
    verdict: Verdict,
    made: u32,
}

fn cases(policy: &Policy) -> [Case; 3] {
    let none: &[(&str, &str)] = &[];
    [
        Case {
            name: "retry with backoff (503, first failure)",
            verdict: policy.classify(Outcome::Status(503), Request::GET, none, 0),
            made: 1,
        },
        Case {
            name: "retry with server wait (429, Retry-After: 3)",
            verdict: policy.classify(
                Outcome::Status(429),
                Request::GET,
                &[("Retry-After", "3")],
                0,
            ),
            made: 1,
        },
        Case {
            name: "give up (503 on the last attempt)",
            verdict: policy.classify(Outcome::Status(503), Request::GET, none, 0),
            made: MAX_ATTEMPTS,
        },
    ]
}

/// The state after `made` attempts, the first started at 0.
fn after(policy: &Policy, made: u32) -> Attempts {
    let mut attempts = Attempts::new(policy);
    for _ in 0..made {
        attempts.begin(0).expect("the attempts fit the policy");
    }
    attempts
}

fn decisions(c: &mut Criterion) {
    let policy = Policy::guide_b();
    for case in cases(&policy) {
        let start = after(&policy, case.made);
        // Both sides must reach the same decision before their costs are compared.
        let mut rng = JitterRng::seeded(7);
        let recuo = start.clone().decide(case.verdict, NOW_MS, &mut rng);
        let mut rng = JitterRng::seeded(7);
        let wait = case.verdict.server_wait().and_then(|w| w.ms());
        let hand = hand_rolled(case.made - 1, wait, &mut rng);
        match (recuo, hand) {
            (Decision::Retry { delay_ms, .. }, Some(d)) => assert_eq!(delay_ms, d, "{}", case.name),
            (Decision::GiveUp { .. }, None) => {}
            other => panic!("{}: the two sides disagree: {other:?}", case.name),
        }

        let mut g = c.benchmark_group(format!("decide/{}", case.name));
        let mut rng = JitterRng::seeded(1);
        for side in sides() {
            match side {
                Side::Recuo => g.bench_function("recuo Attempts::decide", |b| {
                    b.iter_batched_ref(
                        || start.clone(),
                        |attempts| attempts.decide(black_box(case.verdict), NOW_MS, &mut rng),
                        BATCH,
                    )
                }),
                Side::Peer => g.bench_function("hand-rolled", |b| {
                    b.iter_batched_ref(
                        || case.made - 1,
                        |n| hand_rolled(black_box(*n), black_box(wait), &mut rng),
                        BATCH,
                    )
                }),
            };
        }
        g.finish();
    }
}

criterion_group!(decide, decisions);
criterion_main!(decide);
