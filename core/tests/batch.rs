//! The batch runner: every operation through one policy and one gate, a deadline for all.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use recuo::{
    Batch, BatchResult, Cause, ConcurrencyLimit, Gate, GiveUpReason, Jitter, Policy, Regulator,
    ServerWait, Verdict,
};

fn quick_policy() -> Policy {
    Policy::builder()
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(2))
        .jitter(Jitter::None)
        .spread(Some(Duration::ZERO))
        .build()
        .unwrap()
}

/// The failure every operation reports: an HTTP status.
#[derive(Debug, PartialEq)]
struct Status(u16);

fn classify(e: &Status) -> Verdict {
    match e.0 {
        503 => Verdict::Retry {
            cause: Cause::Unavailable,
            server_wait: Some(ServerWait::Ms(0)),
        },
        429 => Verdict::Retry {
            cause: Cause::RateLimited,
            server_wait: Some(ServerWait::Ms(1)),
        },
        _ => Verdict::GiveUp {
            cause: Cause::Permanent,
        },
    }
}

#[test]
fn every_operation_retries_once_and_succeeds() {
    let policy = quick_policy();
    let limit = ConcurrencyLimit::new(3).unwrap();
    let in_op = Arc::new(AtomicU32::new(0));
    let ops: Vec<_> = (0..20)
        .map(|i| {
            let in_op = in_op.clone();
            let mut calls = 0;
            move |_: &recuo::AttemptContext<'_>| {
                let now = in_op.fetch_add(1, Ordering::AcqRel) + 1;
                assert!(now <= 3, "{now} in flight");
                std::thread::sleep(Duration::from_millis(1));
                in_op.fetch_sub(1, Ordering::AcqRel);
                calls += 1;
                match (calls, i % 2) {
                    (1, 0) => Err(Status(503)),
                    (1, _) => Err(Status(429)),
                    _ => Ok(i),
                }
            }
        })
        .collect();
    let report = Batch::new(&policy)
        .gate(Gate::new().with_limit(limit))
        .workers(5)
        .run(ops, classify);
    let values: Vec<u32> = report
        .results
        .iter()
        .map(|r| match r {
            BatchResult::Succeeded(v) => *v,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(values, (0..20).collect::<Vec<_>>());
    let s = &report.stats;
    assert_eq!(
        (s.initial, s.retries, s.successes, s.failures, s.not_started),
        (20, 20, 20, 0, 0)
    );
    assert_eq!((s.unavailable, s.throttled), (10, 10));
    assert!(
        s.max_in_flight <= 3 && s.max_in_flight >= 1,
        "{}",
        s.max_in_flight
    );
    assert!(s.min_spacing_ns.is_some() && s.mean_spacing_ns().is_some());
}

#[test]
fn the_deadline_leaves_the_rest_not_started() {
    let policy = quick_policy();
    let regulator = Regulator::new("1/min".parse().unwrap(), 2).unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let ops: Vec<_> = (0..5)
        .map(|_| {
            let calls = calls.clone();
            move |_: &recuo::AttemptContext<'_>| {
                calls.fetch_add(1, Ordering::AcqRel);
                Ok::<_, Status>(())
            }
        })
        .collect();
    let started = std::time::Instant::now();
    let report = Batch::new(&policy)
        .gate(Gate::new().with_regulator(regulator))
        .deadline(Some(Duration::from_millis(150)))
        .run(ops, classify);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the gate wait was cut at the deadline"
    );
    let kinds: Vec<&str> = report
        .results
        .iter()
        .map(|r| match r {
            BatchResult::Succeeded(()) => "ok",
            BatchResult::GaveUp(_) => "gave up",
            BatchResult::NotStarted { .. } => "not started",
        })
        .collect();
    assert_eq!(
        kinds,
        ["ok", "ok", "not started", "not started", "not started"]
    );
    assert_eq!(calls.load(Ordering::Acquire), 2);
    let s = &report.stats;
    assert_eq!((s.initial, s.successes, s.not_started), (2, 2, 3));
}

#[test]
fn permanent_failures_are_reported_with_their_error() {
    let policy = quick_policy();
    let ops: Vec<_> = (0..3)
        .map(|i| move |_: &recuo::AttemptContext<'_>| if i == 1 { Err(Status(404)) } else { Ok(i) })
        .collect();
    let report = Batch::new(&policy).workers(2).run(ops, classify);
    match &report.results[1] {
        BatchResult::GaveUp(e) => {
            assert_eq!(
                (e.reason, &e.error, e.report.attempts),
                (GiveUpReason::Permanent, &Some(Status(404)), 1)
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!((report.stats.successes, report.stats.failures), (2, 1));
    type Op = fn(&recuo::AttemptContext<'_>) -> Result<(), Status>;
    let empty: Vec<Op> = Vec::new();
    assert!(Batch::new(&policy).run(empty, classify).results.is_empty());
}

#[test]
fn the_last_attempts_answer_is_counted_too() {
    let policy = Policy::builder()
        .max_attempts(2)
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(1))
        .spread(Some(Duration::ZERO))
        .build()
        .unwrap();
    let ops: Vec<_> = (0..3)
        .map(|_| |_: &recuo::AttemptContext<'_>| Err::<(), _>(Status(503)))
        .collect();
    let report = Batch::new(&policy).run(ops, classify);
    let s = &report.stats;
    assert_eq!(
        (s.initial, s.retries, s.failures, s.unavailable),
        (3, 3, 3, 6)
    );
}

#[test]
fn a_cancelled_batch_starts_nothing_more() {
    let policy = quick_policy();
    let stop = recuo::CancelToken::new();
    let calls = Arc::new(AtomicU32::new(0));
    let ops: Vec<_> = (0..6)
        .map(|i| {
            let (stop, calls) = (stop.clone(), calls.clone());
            move |_: &recuo::AttemptContext<'_>| {
                calls.fetch_add(1, Ordering::AcqRel);
                if i == 1 {
                    stop.cancel(); // say, a daily quota is spent: the rest is hopeless
                }
                Ok::<_, Status>(i)
            }
        })
        .collect();
    let report = Batch::new(&policy).cancel_token(stop).run(ops, classify);
    assert_eq!(calls.load(Ordering::Acquire), 2);
    assert_eq!((report.stats.successes, report.stats.not_started), (2, 4));
}

#[test]
fn a_spent_quota_can_stop_the_whole_batch() {
    let policy = Policy::builder()
        .deadline(Some(Duration::from_secs(30)))
        .build()
        .unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let ops: Vec<_> = (0..5)
        .map(|_| {
            let calls = calls.clone();
            move |_: &recuo::AttemptContext<'_>| {
                calls.fetch_add(1, Ordering::AcqRel);
                Err::<(), _>(Status(429))
            }
        })
        .collect();
    let daily = |_: &Status| Verdict::Retry {
        cause: Cause::RateLimited,
        server_wait: Some(ServerWait::Ms(86_400_000)),
    };
    let report = Batch::new(&policy)
        .stop_when_a_wait_exceeds_the_deadline(true)
        .run(ops, daily);
    assert_eq!(calls.load(Ordering::Acquire), 1);
    let s = &report.stats;
    assert_eq!((s.failures, s.not_started, s.throttled), (1, 4, 1));
}

#[test]
fn progress_is_told_once_per_operation_in_order() {
    let policy = quick_policy();
    // Operation 0 retries once then succeeds; 1 gives up at once; 2 succeeds.
    let ops: Vec<_> = (0..3)
        .map(|i| {
            let mut calls = 0;
            move |_: &recuo::AttemptContext<'_>| {
                calls += 1;
                match (i, calls) {
                    (0, 1) => Err(Status(503)),
                    (1, _) => Err(Status(404)),
                    _ => Ok(i),
                }
            }
        })
        .collect();
    let told = std::sync::Mutex::new(Vec::new());
    let tell = |p: &recuo::BatchProgress| told.lock().unwrap().push(*p);
    let report = Batch::new(&policy).on_progress(&tell).run(ops, classify);
    assert_eq!(report.results.len(), 3);
    let told: Vec<_> = told
        .into_inner()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p.total,
                p.done,
                p.succeeded,
                p.failed,
                p.not_started,
                p.retries,
            )
        })
        .collect();
    assert_eq!(
        told,
        vec![(3, 1, 1, 0, 0, 1), (3, 2, 1, 1, 0, 1), (3, 3, 2, 1, 0, 1)]
    );
}

#[test]
fn operations_past_the_deadline_are_told_as_not_started() {
    let policy = quick_policy();
    let ops: Vec<_> = (0..3)
        .map(|_| |_: &recuo::AttemptContext<'_>| Ok::<_, Status>(()))
        .collect();
    let told = std::sync::Mutex::new(Vec::new());
    let tell = |p: &recuo::BatchProgress| told.lock().unwrap().push((p.done, p.not_started));
    Batch::new(&policy)
        .deadline(Some(Duration::ZERO))
        .on_progress(&tell)
        .run(ops, classify);
    assert_eq!(told.into_inner().unwrap(), vec![(1, 1), (2, 2), (3, 3)]);
}
