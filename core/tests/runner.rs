//! The blocking runner, with a manual clock: no real sleeping, exact times.

use std::cell::Cell;
use std::time::Duration;

use recuo::{
    CancelToken, Clock, GiveUpReason, ManualClock, Outcome, Policy, Request, Retry, Verdict,
};

fn policy(attempts: u32) -> Policy {
    Policy::builder().max_attempts(attempts).build().unwrap()
}

#[test]
fn nested_loops_share_the_outer_limit() {
    let p = policy(5);
    let calls = Cell::new(0);
    let outer = Retry::new(&p).clock(ManualClock::new(0)).call(|_| {
        Retry::new(&p)
            .clock(ManualClock::new(0))
            .call(|_| {
                calls.set(calls.get() + 1);
                Err::<(), _>("down")
            })
            .map_err(|e| e.error.unwrap_or("none"))
    });
    let err = outer.unwrap_err();
    assert_eq!(calls.get(), 5, "5 calls, not 25");
    assert_eq!(err.reason, GiveUpReason::AttemptsExhausted);
    assert_eq!(err.error, Some("down"));
}

#[test]
fn a_shorter_inner_loop_still_adds_up_to_the_outer_limit() {
    let outer_p = policy(5);
    let inner_p = policy(3);
    let calls = Cell::new(0);
    let _ = Retry::new(&outer_p).clock(ManualClock::new(0)).call(|_| {
        Retry::new(&inner_p)
            .clock(ManualClock::new(0))
            .call(|_| {
                calls.set(calls.get() + 1);
                Err::<(), _>(())
            })
            .map_err(|_| ())
    });
    assert_eq!(calls.get(), 5);
    // A loop that follows on the same thread starts with a fresh limit.
    let again = Cell::new(0);
    let _ = Retry::new(&inner_p).clock(ManualClock::new(0)).call(|_| {
        again.set(again.get() + 1);
        Err::<(), _>(())
    });
    assert_eq!(again.get(), 3);
}

#[test]
fn the_key_is_the_same_on_every_attempt_and_new_per_operation() {
    let p = policy(4);
    let mut keys = Vec::new();
    let _ = Retry::new(&p).clock(ManualClock::new(0)).call(|ctx| {
        keys.push(ctx.idempotency_key().to_string());
        assert_eq!(ctx.idempotency_header(), "Idempotency-Key");
        Err::<(), _>(())
    });
    assert_eq!(keys.len(), 4);
    assert!(keys.iter().all(|k| *k == keys[0]));
    let mut other = String::new();
    let _ = Retry::new(&p).clock(ManualClock::new(0)).call(|ctx| {
        other = ctx.idempotency_key().to_string();
        Ok::<(), ()>(())
    });
    assert_ne!(other, keys[0]);
}

#[test]
fn a_server_wait_past_the_deadline_gives_up_with_the_retry_instant() {
    let p = Policy::guide_b();
    let clock = ManualClock::new(784_111_777_000);
    let err = Retry::new(&p)
        .clock(clock.clone())
        .classify(|headers: &Vec<(&str, &str)>| {
            p.classify(Outcome::Status(429), Request::GET, headers, 784_111_777_000)
        })
        .call(|_| Err::<(), _>(vec![("Retry-After", "86400")]))
        .unwrap_err();
    assert_eq!(err.reason, GiveUpReason::WaitExceedsDeadline);
    assert_eq!(err.retry_at_ms, Some(86_400_000));
    assert_eq!(err.report.attempts, 1);
    assert_eq!(clock.now_ms(), 0, "it never slept");
}

#[test]
fn backoff_sleeps_are_reported_and_the_hooks_see_them() {
    let p = Policy::builder()
        .max_attempts(4)
        .base(Duration::from_millis(100))
        .cap(Duration::from_millis(1000))
        .jitter(recuo::Jitter::None)
        .build()
        .unwrap();
    let clock = ManualClock::new(0);
    let mut seen = Vec::new();
    let mut gave_up = None;
    let err = Retry::new(&p)
        .clock(clock.clone())
        .on_retry(|attempt, e: &&str, d| seen.push((attempt, *e, d.as_millis() as u64)))
        .on_give_up(|report| gave_up = Some(report.clone()))
        .call(|_| Err::<(), _>("503"))
        .unwrap_err();
    assert_eq!(seen, [(0, "503", 100), (1, "503", 200), (2, "503", 400)]);
    assert_eq!(clock.now_ms(), 700);
    let report = gave_up.unwrap();
    assert_eq!(report, err.report);
    assert_eq!(
        (report.attempts, report.elapsed_ms, report.delays_ms),
        (4, 700, vec![100, 200, 400])
    );
    assert_eq!(report.reason, Some(GiveUpReason::AttemptsExhausted));
}

#[test]
fn the_deadline_stops_backoff_before_it_is_passed() {
    let p = Policy::builder()
        .max_attempts(10)
        .base(Duration::from_millis(100))
        .cap(Duration::from_millis(100))
        .jitter(recuo::Jitter::None)
        .deadline(Some(Duration::from_millis(250)))
        .build()
        .unwrap();
    let clock = ManualClock::new(0);
    let err = Retry::new(&p)
        .clock(clock.clone())
        .call(|_| Err::<(), _>(()))
        .unwrap_err();
    assert_eq!(err.reason, GiveUpReason::WaitExceedsDeadline);
    assert_eq!(err.report.attempts, 3);
    assert_eq!(clock.now_ms(), 200);
    assert_eq!(err.retry_at_ms, Some(300));
}

#[test]
fn a_permanent_error_stops_at_once() {
    let p = policy(5);
    let mut calls = 0;
    let err = Retry::new(&p)
        .clock(ManualClock::new(0))
        .retry_if(|e: &u16| *e >= 500)
        .call(|_| {
            calls += 1;
            Err::<(), _>(if calls == 1 { 503 } else { 404 })
        })
        .unwrap_err();
    assert_eq!(
        (calls, err.reason, err.error),
        (2, GiveUpReason::Permanent, Some(404))
    );
}

#[test]
fn cancelling_wakes_a_sleeping_loop_at_once() {
    let p = Policy::builder()
        .base(Duration::from_secs(60))
        .cap(Duration::from_secs(60))
        .jitter(recuo::Jitter::None)
        .build()
        .unwrap();
    let token = CancelToken::new();
    let canceller = token.clone();
    let started = std::time::Instant::now();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        canceller.cancel();
    });
    let err = Retry::new(&p)
        .cancel_token(token)
        .call(|_| Err::<(), _>("x"))
        .unwrap_err();
    t.join().unwrap();
    assert_eq!(err.reason, GiveUpReason::Cancelled);
    assert_eq!(err.error, Some("x"));
    assert_eq!(err.report.attempts, 1);
    assert!(started.elapsed() < Duration::from_secs(30), "woke early");
}

#[test]
fn cancelled_before_the_first_attempt_makes_none() {
    let p = policy(5);
    let token = CancelToken::new();
    token.cancel();
    let mut calls = 0;
    let err = Retry::new(&p)
        .cancel_token(token)
        .call(|_| {
            calls += 1;
            Ok::<(), ()>(())
        })
        .unwrap_err();
    assert_eq!(
        (calls, err.reason, err.error),
        (0, GiveUpReason::Cancelled, None)
    );
}

#[test]
fn an_empty_budget_gives_up_instead_of_adding_load() {
    let p = policy(5);
    // No ratio, a floor of 0.2 retries/s over 10 s: exactly 2 retries.
    let gate = recuo::Gate::new().with_budget(recuo::RetryBudget::new(0.0, 0.2, 10).unwrap());
    let err = Retry::new(&p)
        .clock(ManualClock::new(0))
        .gate(&gate)
        .call(|_| Err::<(), _>(()))
        .unwrap_err();
    assert_eq!(
        (err.reason, err.report.attempts),
        (GiveUpReason::BudgetExhausted, 3)
    );
}

#[test]
fn a_zero_server_wait_still_spreads_and_counts() {
    let p = policy(3);
    let clock = ManualClock::new(0);
    let err = Retry::new(&p)
        .clock(clock.clone())
        .seed(4)
        .classify(|_: &()| Verdict::Retry {
            cause: recuo::Cause::RateLimited,
            server_wait: Some(recuo::ServerWait::Ms(0)),
        })
        .call(|_| Err::<(), _>(()))
        .unwrap_err();
    assert_eq!(err.report.attempts, 3);
    let d = &err.report.delays_ms;
    assert!(d[0] <= 200 && d[1] <= 400, "{d:?}");
}

#[test]
fn the_gate_place_is_given_back_before_the_backoff_sleep() {
    let p = policy(3);
    let limit = recuo::ConcurrencyLimit::new(1).unwrap();
    let gate = recuo::Gate::new().with_limit(limit.clone());
    let mut in_flight_during_attempt = Vec::new();
    let mut in_flight_before_sleep = Vec::new();
    let _ = Retry::new(&p)
        .clock(ManualClock::new(0))
        .gate(&gate)
        .on_retry(|_, _: &(), _| in_flight_before_sleep.push(limit.in_flight()))
        .call(|_| {
            in_flight_during_attempt.push(limit.in_flight());
            Err::<(), _>(())
        });
    assert_eq!(in_flight_during_attempt, [1, 1, 1]);
    assert_eq!(in_flight_before_sleep, [0, 0]);
    assert_eq!(limit.max_in_flight(), 1);
}

#[test]
fn the_gate_budget_refuses_retries_it_cannot_afford() {
    let p = policy(5);
    let budget = recuo::RetryBudget::new(0.0, 0.0, 10).unwrap();
    let gate = recuo::Gate::new().with_budget(budget);
    let err = Retry::new(&p)
        .clock(ManualClock::new(0))
        .gate(&gate)
        .call(|_| Err::<(), _>(()))
        .unwrap_err();
    assert_eq!(
        (err.reason, err.report.attempts),
        (GiveUpReason::BudgetExhausted, 1)
    );
}

#[test]
fn an_adaptive_gate_slows_down_on_rate_limits() {
    let p = policy(3);
    let regulator = recuo::Regulator::new("1000/s".parse().unwrap(), 10)
        .unwrap()
        .with_adaptive(true);
    let gate = recuo::Gate::new().with_regulator(regulator.clone());
    let _ = Retry::new(&p)
        .clock(ManualClock::new(0))
        .gate(&gate)
        .classify(|_: &()| Verdict::Retry {
            cause: recuo::Cause::RateLimited,
            server_wait: Some(recuo::ServerWait::Ms(0)),
        })
        .call(|_| Err::<(), _>(()));
    // Three rate-limited verdicts, the last attempt's included: 1000 → 500 → 250 → 125.
    assert!(
        (regulator.rate().as_per_second() - 125.0).abs() < 1e-6,
        "{}",
        regulator.rate()
    );
}

#[test]
fn a_cancelled_gate_wait_gives_up_cancelled() {
    let p = policy(3);
    let regulator = recuo::Regulator::new("1/min".parse().unwrap(), 1).unwrap();
    assert!(regulator.try_acquire().is_ok());
    let gate = recuo::Gate::new().with_regulator(regulator);
    let token = CancelToken::new();
    let c = token.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        c.cancel();
    });
    let mut calls = 0;
    let err = Retry::new(&p)
        .gate(&gate)
        .cancel_token(token)
        .call(|_| {
            calls += 1;
            Ok::<(), ()>(())
        })
        .unwrap_err();
    t.join().unwrap();
    assert_eq!(
        (calls, err.reason, err.error),
        (0, GiveUpReason::Cancelled, None)
    );
}

#[test]
fn an_error_classified_as_success_ends_the_loop_as_permanent() {
    let p = policy(5);
    let mut reported = None;
    let err = Retry::new(&p)
        .clock(ManualClock::new(0))
        .classify(|_: &()| Verdict::Success)
        .on_give_up(|r| reported = Some(r.reason))
        .call(|_| Err::<(), _>(()))
        .unwrap_err();
    assert_eq!(
        (err.reason, err.report.attempts),
        (GiveUpReason::Permanent, 1)
    );
    assert_eq!(reported, Some(Some(GiveUpReason::Permanent)));
}

#[test]
fn guide_a_inside_a_retry_loop_shares_its_limit() {
    let p = policy(4);
    let calls = Cell::new(0);
    let _ = Retry::new(&p).clock(ManualClock::new(0)).call(|_| {
        recuo::ComRetry::new(5, 0, 0).unwrap().run(
            || {
                calls.set(calls.get() + 1);
                Err::<(), _>("down")
            },
            |_| true,
        )
    });
    assert_eq!(calls.get(), 4, "4 calls, not 20");
}

#[test]
fn a_success_reports_its_attempts_and_delays() {
    let p = Policy::builder()
        .base(Duration::from_millis(10))
        .cap(Duration::from_millis(10))
        .jitter(recuo::Jitter::None)
        .build()
        .unwrap();
    let mut done = None;
    let mut calls = 0;
    let value = Retry::new(&p)
        .clock(ManualClock::new(0))
        .on_done(|r| done = Some(r.clone()))
        .call(|_| {
            calls += 1;
            if calls < 3 {
                Err(())
            } else {
                Ok(calls)
            }
        })
        .unwrap();
    assert_eq!(value, 3);
    let r = done.unwrap();
    assert_eq!(
        (r.attempts, r.reason, r.delays_ms, r.elapsed_ms),
        (3, None, vec![10, 10], 20)
    );
}
