//! A fleet of processes sharing limits through a real Redis server (support/): the test
//! binary starts copies of itself as the fleet's processes (`FLEET_CHILD` says which part to
//! play). The concurrency limit holds `recuo serve`'s requests in flight to its max across 4
//! processes × 2 threads; a holder killed with SIGKILL frees its place within its lease; the
//! retry budget refuses retries beyond its ratio across processes.
#![cfg(feature = "client")]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use recuo::CancelToken;
use recuo_redis::{RedisBudget, RedisLimit};

mod support;
use support::{recuo_serve, Server};

/// This test binary, playing `name`.
fn child(name: &str, env: &[(&str, String)]) -> Child {
    support::child("FLEET_CHILD", name, env)
}

fn playing(name: &str) -> bool {
    std::env::var("FLEET_CHILD").as_deref() == Ok(name)
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap()
}

fn curl(url: &str) -> String {
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
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn fleet_limit_child() {
    if !playing("fleet_limit_child") {
        return;
    }
    let limit = RedisLimit::open(&var("URL"), "fleet:limit", 3, Duration::from_secs(10)).unwrap();
    let api = var("API");
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (limit, api) = (limit.clone(), api.clone());
            std::thread::spawn(move || {
                for _ in 0..8 {
                    let lease = limit
                        .acquire(Some(Duration::from_secs(30)), &CancelToken::new())
                        .unwrap()
                        .expect("a place within 30 s");
                    assert_eq!(curl(&format!("{api}/")), "200");
                    assert!(lease.release().unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    println!("done");
}

#[test]
fn four_processes_of_two_threads_keep_at_most_three_in_flight() {
    if std::env::var("FLEET_CHILD").is_ok() {
        return;
    }
    let server = Server::start();
    let serve = recuo_serve("40ms");
    let env = [("URL", server.tls_url.clone()), ("API", serve.1.clone())];
    let stats = support::run_fleet("FLEET_CHILD", "fleet_limit_child", 4, &env, serve);
    assert_eq!(stats["requests"], 64, "{stats}");
    let most = stats["max_in_flight"].as_u64().unwrap();
    assert!(most <= 3, "{stats}");
    assert!(most >= 2, "the limit was hardly used: {stats}");
}

#[test]
fn holder_child() {
    if !playing("holder_child") {
        return;
    }
    let limit =
        RedisLimit::open(&var("URL"), "fleet:holder", 1, Duration::from_millis(1500)).unwrap();
    let lease = limit.try_acquire().unwrap().unwrap();
    println!("held {}", lease.token());
    std::thread::sleep(Duration::from_secs(60));
    drop(lease);
}

#[test]
fn a_killed_holders_place_comes_back_within_its_lease() {
    if std::env::var("FLEET_CHILD").is_ok() {
        return;
    }
    let server = Server::start();
    let mut holder = child("holder_child", &[("URL", server.url.clone())]);
    let mut line = String::new();
    let mut out = BufReader::new(holder.stdout.take().unwrap());
    while !line.contains("held ") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the holder ended");
    }
    let held_at = Instant::now();
    holder.kill().unwrap(); // SIGKILL: no release
    holder.wait().unwrap();
    let limit =
        RedisLimit::open(&server.url, "fleet:holder", 1, Duration::from_millis(1500)).unwrap();
    assert_eq!(limit.in_flight().unwrap(), 1);
    let wait = limit.try_acquire().unwrap().unwrap_err();
    assert!(wait <= Duration::from_millis(1500), "{wait:?}");
    let lease = limit
        .acquire(Some(Duration::from_secs(5)), &CancelToken::new())
        .unwrap()
        .expect("the place back");
    let took = held_at.elapsed();
    assert!(took <= Duration::from_millis(1500 + 300), "{took:?}");
    // Renewing keeps it; releasing twice is harmless; another process's settings are refused.
    assert!(lease.renew().unwrap());
    let token = lease.token().to_owned();
    assert!(!token.is_empty());
    assert!(lease.release().unwrap());
    assert_eq!(limit.in_flight().unwrap(), 0);
    let again = limit.try_acquire().unwrap().unwrap();
    drop(again);
    assert_eq!(limit.in_flight().unwrap(), 0);
    let e = RedisLimit::open(&server.url, "fleet:holder", 2, Duration::from_millis(1500))
        .unwrap_err()
        .to_string();
    assert!(e.contains("limits 1 requests in flight"), "{e}");
}

#[test]
fn a_lease_not_renewed_expires_and_renewing_late_is_refused() {
    if std::env::var("FLEET_CHILD").is_ok() {
        return;
    }
    let server = Server::start();
    let limit = RedisLimit::open(
        &server.acl_url,
        "fleet:renew",
        1,
        Duration::from_millis(300),
    )
    .unwrap();
    let lease = limit.try_acquire().unwrap().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(lease.renew().unwrap());
    std::thread::sleep(Duration::from_millis(200));
    // Still held thanks to the renewal.
    assert!(limit.try_acquire().unwrap().is_err());
    std::thread::sleep(Duration::from_millis(250));
    assert!(!lease.renew().unwrap(), "renewed after expiry");
    let other = limit.try_acquire().unwrap().unwrap();
    // The expired lease's release is harmless: the other holder keeps its place.
    assert!(!lease.release().unwrap());
    assert_eq!(limit.in_flight().unwrap(), 1);
    drop(other);
}

#[test]
fn budget_child() {
    if !playing("budget_child") {
        return;
    }
    let budget = RedisBudget::open(&var("URL"), "fleet:budget", 0.1, 0.5, 10).unwrap();
    let granted = (0..10).filter(|_| budget.withdraw().unwrap()).count();
    println!("granted {granted}");
}

#[test]
fn the_shared_budget_refuses_retries_beyond_its_ratio_across_processes() {
    if std::env::var("FLEET_CHILD").is_ok() {
        return;
    }
    let server = Server::start();
    let budget = RedisBudget::open(&server.url, "fleet:budget", 0.1, 0.5, 10).unwrap();
    for _ in 0..40 {
        budget.record_request().unwrap();
    }
    let children: Vec<_> = (0..4)
        .map(|_| child("budget_child", &[("URL", server.url.clone())]))
        .collect();
    let mut granted = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        // libtest's "test budget_child ... " may share the line.
        let at = text.find("granted ").unwrap();
        let n = text[at + 8..].split_whitespace().next().unwrap();
        granted += n.parse::<u64>().unwrap();
    }
    // 10% of 40 requests plus 0.5/s over 10 s: 9 retries for the whole fleet, no more.
    assert_eq!(granted, 9);
    assert_eq!(budget.counts().unwrap(), (40, 9));
    assert!(!budget.withdraw().unwrap());
    let e = RedisBudget::open(&server.url, "fleet:budget", 0.2, 0.5, 10)
        .unwrap_err()
        .to_string();
    assert!(e.contains("asked for ratio 0.2"), "{e}");
    assert!(RedisBudget::open(&server.url, "x", -1.0, 0.5, 10).is_err());
}

/// The same rule as the local budget, on a shared time base.
#[test]
fn the_redis_budget_answers_as_the_local_one() {
    if std::env::var("FLEET_CHILD").is_ok() {
        return;
    }
    let server = Server::start();
    let remote = RedisBudget::open(&server.url, "fleet:same", 0.2, 1.0, 5).unwrap();
    let local = recuo::RetryBudget::new(0.2, 1.0, 5).unwrap();
    let mut rng = 16u64;
    for step in 0..400u64 {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let now_s = 1_000 + step / 7;
        let now_ns = now_s * 1_000_000_000;
        if rng >> 62 == 0 {
            let (done, _, _) = remote.op_at("withdraw", now_s).unwrap();
            assert_eq!(done, local.try_withdraw_at(now_ns), "step {step}");
        } else {
            remote.op_at("request", now_s).unwrap();
            local.record_request_at(now_ns);
        }
        let (_, q, r) = remote.op_at("counts", now_s).unwrap();
        assert_eq!((q, r), local.counts_at(now_ns), "step {step}");
    }
}
