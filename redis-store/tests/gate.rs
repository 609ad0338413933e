//! The core's gate holding a fleet's limits on a real Redis server (support/): a gate over
//! `recuo_redis::limit` keeps `recuo serve`'s requests in flight within the limit across 3
//! processes × 2 threads running `recuo::Retry`; a gate over `recuo_redis::budget` refuses
//! retries beyond its ratio for two handles; a gate whose server is gone stops the loop with
//! the store's error, before any attempt and within the call's deadline. The test binary
//! starts copies of itself as the fleet's processes (`GATE_CHILD` says which part to play).
#![cfg(feature = "client")]

use std::process::Command;
use std::time::{Duration, Instant};

use recuo::{GiveUpReason, Policy, Retry};

mod support;
use support::{recuo_serve, Server};

fn playing(name: &str) -> bool {
    std::env::var("GATE_CHILD").as_deref() == Ok(name)
}

fn parent() -> bool {
    std::env::var("GATE_CHILD").is_err()
}

/// One GET with curl: its status, as the attempt's result.
fn get(url: &str) -> Result<(), String> {
    let out = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--max-time",
            "10",
            url,
        ])
        .output()
        .map_err(|e| e.to_string())?;
    match String::from_utf8_lossy(&out.stdout).as_ref() {
        "200" => Ok(()),
        other => Err(format!("status {other}")),
    }
}

#[test]
fn gate_child() {
    if !playing("gate_child") {
        return;
    }
    let url = std::env::var("URL").unwrap();
    let api = std::env::var("API").unwrap();
    let limit = recuo_redis::limit(&url, "gate:limit", 2, Duration::from_secs(10)).unwrap();
    let gate = recuo::Gate::new().with_limit(limit.clone());
    let policy = Policy::builder().max_attempts(3).build().unwrap();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..5 {
                    Retry::new(&policy)
                        .gate(&gate)
                        .call(|_| get(&format!("{api}/")))
                        .unwrap();
                }
            });
        }
    });
    // This process's own places: never above the fleet's limit, all given back.
    assert!(limit.max_in_flight() <= 2);
    assert_eq!(limit.in_flight(), 0);
    println!("done");
}

#[test]
fn a_gate_over_the_redis_limit_holds_a_fleets_requests_in_flight() {
    if !parent() {
        return;
    }
    let server = Server::start();
    let serve = recuo_serve("40ms");
    let env = [("URL", server.tls_url.clone()), ("API", serve.1.clone())];
    let stats = support::run_fleet("GATE_CHILD", "gate_child", 3, &env, serve);
    assert_eq!(stats["requests"], 30, "{stats}");
    let most = stats["max_in_flight"].as_u64().unwrap();
    assert!(most <= 2, "{stats}");
    assert!(most >= 2, "the limit was hardly used: {stats}");
}

#[test]
fn a_gate_over_the_redis_budget_refuses_retries_beyond_its_ratio() {
    if !parent() {
        return;
    }
    let server = Server::start();
    // No ratio, a floor of 0.2 retries a second over 10 s: 2 retries for everyone.
    let open = || recuo_redis::budget(&server.acl_url, "gate:budget", 0.0, 0.2, 10).unwrap();
    let (one, two) = (open(), open());
    let policy = Policy::builder().max_attempts(5).build().unwrap();
    let run = |budget: &recuo::RetryBudget| {
        let gate = recuo::Gate::new().with_budget(budget.clone());
        Retry::new(&policy)
            .clock(recuo::ManualClock::new(0))
            .gate(&gate)
            .call(|_| Err::<(), _>("down"))
            .unwrap_err()
    };
    let first = run(&one);
    assert_eq!(
        (first.reason, first.report.attempts),
        (GiveUpReason::BudgetExhausted, 3)
    );
    // The other handle shares the same budget: nothing left for a retry.
    let second = run(&two);
    assert_eq!(
        (second.reason, second.report.attempts),
        (GiveUpReason::BudgetExhausted, 1)
    );
    // Two first attempts counted, two retries taken, as the local budget would count them.
    assert_eq!(one.counts_checked(None).unwrap(), (2, 2));
    assert!(one.is_remote());
    // Settings are the core's rule, and the key's settings are checked.
    let e = recuo_redis::budget(&server.url, "gate:budget", 0.5, 0.2, 10).unwrap_err();
    assert!(e.to_string().contains("asked for ratio 0.5"), "{e}");
    let e = recuo_redis::budget(&server.url, "gate:other", -1.0, 0.2, 10).unwrap_err();
    assert_eq!(e.name(), "invalid_budget");
}

#[test]
fn a_gate_whose_redis_is_gone_stops_the_loop_with_the_error() {
    if !parent() {
        return;
    }
    let mut server = Server::start();
    let limit = recuo_redis::limit(&server.url, "gate:gone", 1, Duration::from_secs(5)).unwrap();
    let budget = recuo_redis::budget(&server.url, "gate:gone", 0.1, 1.0, 10).unwrap();
    server.stop();
    let gate = recuo::Gate::new()
        .with_limit(limit)
        .with_budget(budget.clone());
    let policy = Policy::builder().max_attempts(3).build().unwrap();
    let started = Instant::now();
    let mut calls = 0;
    let e = Retry::new(&policy)
        .gate(&gate)
        .call(|_| {
            calls += 1;
            Ok::<(), &str>(())
        })
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!((calls, e.report.attempts, e.error), (0, 0, None));
    let gate_error = e
        .gate_error
        .as_ref()
        .expect("the store's error")
        .to_string();
    assert!(gate_error.contains("127.0.0.1"), "{gate_error}");
    assert!(!gate_error.contains(&server.password), "{gate_error}");
    assert!(took < Duration::from_secs(7), "{took:?}");
    assert!(e.to_string().contains("the gate could not be used"), "{e}");
    // The budget fails closed: no retry without the store's word; its own calls say why.
    assert!(!recuo::RetryAllowance::try_withdraw(&budget));
    let e = budget.withdraw_checked(None).unwrap_err().to_string();
    assert!(e.contains("127.0.0.1"), "{e}");
    assert!(budget.record_request_checked(None).is_err());
    assert!(budget.counts_checked(None).is_err());
}
