//! A fleet through a failover: 4 processes × 2 threads run `recuo::Retry` behind one gate —
//! a regulator, a concurrency limit and a retry budget on a Redis Cluster over TLS, as an ACL
//! user — against `recuo serve`, while the master holding the limits' slot is killed with
//! SIGKILL. What must hold: no operation outlives its deadline; while the slot has no master
//! an operation ends with the gate's error and no attempt; once the replica has taken over,
//! the starts stay within the regulator's allowance and the requests in flight within the
//! limit (plus what asynchronous replication may lose: docs/limits.md); a lease held on the
//! dead master keeps its place for no longer than the lease. The figures are printed.
//! The test binary starts copies of itself as the fleet (`FAILOVER_CHILD`).
#![cfg(feature = "client")]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use recuo::{Gate, GiveUpReason, Policy, Retry};
use recuo_redis::RedisLimit;

mod support;
use support::{recuo_serve, Cluster};

const RATE: u64 = 30;
const BURST: u32 = 3;
const LIMIT: u32 = 2;
const DEADLINE: Duration = Duration::from_secs(2);
/// The lease of the place the parent takes just before the kill and never gives back.
const HELD_LEASE: Duration = Duration::from_secs(5);
/// How long the fleet runs.
const RUN: Duration = Duration::from_secs(9);
/// When the master is killed, after the fleet started.
const KILL_AFTER: Duration = Duration::from_secs(2);

fn unix_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap()
}

/// One GET of `api` (`http://127.0.0.1:port`): Ok on a 200.
fn get(api: &str) -> Result<(), String> {
    let addr = api.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    s.write_all(format!("GET / HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes())
        .map_err(|e| e.to_string())?;
    let mut status = String::new();
    BufReader::new(s)
        .read_line(&mut status)
        .map_err(|e| e.to_string())?;
    if status.starts_with("HTTP/1.1 200") {
        Ok(())
    } else {
        Err(status)
    }
}

#[test]
fn failover_child() {
    if std::env::var("FAILOVER_CHILD").as_deref() != Ok("failover_child") {
        return;
    }
    let (url, api) = (var("URL"), var("API"));
    let end_ms: u64 = var("END_MS").parse().unwrap();
    let rate = recuo::Rate::per_second(RATE as f64).unwrap();
    let gate = Gate::new()
        .with_regulator(recuo_redis::regulator(&url, &var("REGULATOR"), rate, BURST).unwrap())
        .with_limit(recuo_redis::limit(&url, &var("LIMIT"), LIMIT, Duration::from_secs(2)).unwrap())
        .with_budget(recuo_redis::budget(&url, &var("BUDGET"), 0.1, 1.0, 10).unwrap());
    let policy = Policy::builder()
        .max_attempts(3)
        .deadline(Some(DEADLINE))
        .build()
        .unwrap();
    // Per operation: when it began (unix ms), how long it took (ms), how it ended, and when
    // its attempt started (0: none did).
    let ops: Vec<(u64, u64, &'static str, u64)> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut ops = Vec::new();
                    while unix_ms() < end_ms {
                        let (at, started) = (unix_ms(), Instant::now());
                        let mut attempt_at = 0;
                        let result = Retry::new(&policy).gate(&gate).call(|_| {
                            attempt_at = unix_ms();
                            get(&api)
                        });
                        let took = u64::try_from(started.elapsed().as_millis()).unwrap();
                        let end = match result {
                            Ok(()) => "ok",
                            Err(e) if e.gate_error.is_some() && e.report.attempts == 0 => {
                                "gate_error"
                            }
                            // 8 threads want 160 starts a second of a fleet allowed 30: some
                            // wait past their deadline for a place or a slot.
                            Err(e)
                                if e.reason == GiveUpReason::WaitExceedsDeadline
                                    && e.report.attempts == 0 =>
                            {
                                "waited"
                            }
                            Err(e) => panic!("{e}"),
                        };
                        ops.push((at, took, end, attempt_at));
                    }
                    ops
                })
            })
            .collect();
        runs.into_iter().flat_map(|r| r.join().unwrap()).collect()
    });
    println!("ops {}", serde_json::to_string(&ops).unwrap());
}

/// A limit name whose keys live on the master at `port`.
fn name_on(cluster: &Cluster, prefix: &str, port: u16) -> String {
    (0..200)
        .map(|i| format!("{prefix}{i}"))
        .find(|name| cluster.master_of(&format!("{{{name}}}:x")).0 == port)
        .unwrap()
}

#[test]
fn a_fleet_keeps_its_limits_through_a_failover() {
    if std::env::var("FAILOVER_CHILD").is_ok() {
        return;
    }
    let cluster = Cluster::start(true);
    let cert = cluster.cert.clone().unwrap();
    std::env::set_var("SSL_CERT_FILE", &cert);
    let (port, pid) = cluster.master_of("{failover}:tat");
    let names = [
        ("REGULATOR", "failover".to_owned()),
        ("LIMIT", name_on(&cluster, "failover-limit", port)),
        ("BUDGET", name_on(&cluster, "failover-budget", port)),
    ];
    let held = RedisLimit::open(
        &cluster.url,
        &name_on(&cluster, "failover-held", port),
        1,
        HELD_LEASE,
    )
    .unwrap();

    let (serve, api) = recuo_serve("50ms");
    let started_ms = unix_ms();
    let end_ms = started_ms + u64::try_from(RUN.as_millis()).unwrap();
    let mut env: Vec<(&str, String)> = vec![
        ("URL", cluster.url.clone()),
        ("API", api.clone()),
        ("END_MS", end_ms.to_string()),
        ("SSL_CERT_FILE", cert.display().to_string()),
    ];
    env.extend(names.iter().cloned());
    let children: Vec<_> = (0..4)
        .map(|_| support::child("FAILOVER_CHILD", "failover_child", &env))
        .collect();

    std::thread::sleep(KILL_AFTER);
    let lease = held.try_acquire().unwrap().unwrap();
    let held_at = Instant::now();
    std::mem::forget(lease); // never given back: the place must come back by its lease
    let killed_ms = unix_ms();
    assert!(Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    let took_over_s = cluster.wait_ok();
    let recovered_ms = unix_ms();
    let freed = loop {
        if let Ok(Ok(lease)) = held.try_acquire() {
            drop(lease);
            break held_at.elapsed();
        }
        assert!(
            held_at.elapsed() < HELD_LEASE * 2,
            "the held place never came back"
        );
        std::thread::sleep(Duration::from_millis(20));
    };

    let mut ops: Vec<(u64, u64, String, u64)> = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let at = text.find("ops ").unwrap();
        let line = text[at + 4..].lines().next().unwrap();
        ops.extend(serde_json::from_str::<Vec<(u64, u64, String, u64)>>(line).unwrap());
    }
    let stats = support::stop_serve((serve, api));

    let longest = ops.iter().map(|o| o.1).max().unwrap();
    let failed: Vec<_> = ops.iter().filter(|o| o.2 == "gate_error").collect();
    let waited = ops.iter().filter(|o| o.2 == "waited").count();
    // The starts the regulator allowed from the takeover to the last one.
    let after: Vec<u64> = ops
        .iter()
        .map(|o| o.3)
        .filter(|at| *at >= recovered_ms)
        .collect();
    let last_start = after.iter().copied().max().unwrap_or(recovered_ms);
    let allowance_after = u64::from(BURST) + (last_start - recovered_ms) * RATE / 1000 + 1;
    let starts_after = after.len() as u64;
    let most_in_flight = stats["max_in_flight"].as_u64().unwrap();
    let first_failed = failed.iter().map(|o| o.0).min();
    let last_failed = failed.iter().map(|o| o.0 + o.1).max();
    println!(
        "failover figures: {} operations, longest {longest} ms (deadline {} ms); {} ended by \
         the gate's error, from {:?} ms to {:?} ms after the kill; {waited} gave up waiting \
         for the gate (the fleet asks 5x its allowance); the replica took over after \
         {took_over_s} s; after that {starts_after} starts for an allowance of \
         {allowance_after}; at most {most_in_flight} in flight (limit {LIMIT}); the held \
         place came back {} ms after it was taken (lease {} ms); {} requests in all",
        ops.len(),
        DEADLINE.as_millis(),
        failed.len(),
        first_failed.map(|t| t as i64 - killed_ms as i64),
        last_failed.map(|t| t as i64 - killed_ms as i64),
        freed.as_millis(),
        HELD_LEASE.as_millis(),
        stats["requests"],
    );

    // No operation outlives its deadline (a round trip's grace: each call is given at least
    // 100 ms to hear the server's word).
    assert!(longest <= 2_000 + 400, "{longest} ms");
    // While the slot has no master, operations end with the gate's error and no attempt —
    // and only then.
    assert!(!failed.is_empty(), "the kill was not seen");
    assert!(
        first_failed.unwrap() + 2_500 >= killed_ms,
        "{first_failed:?} {killed_ms}"
    );
    assert!(
        last_failed.unwrap() <= recovered_ms + 2_500,
        "{last_failed:?} {recovered_ms}"
    );
    // Once the replica took over, the limits hold again (replication may lose what the master
    // granted in its last moment: at most one grant per process here).
    assert!(starts_after > 0, "nothing started after the failover");
    assert!(
        starts_after <= allowance_after + 4,
        "{starts_after} > {allowance_after}"
    );
    assert!(most_in_flight <= u64::from(LIMIT) + 4, "{stats}");
    // The held place: kept by the new master until its lease ended (or lost with the master),
    // never longer.
    assert!(
        freed <= HELD_LEASE + Duration::from_millis(500),
        "{freed:?}"
    );
}
