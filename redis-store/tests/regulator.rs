//! The regulator shared between machines through a real Redis server (support/), started by the test on
//! 127.0.0.1 and stopped at the end. Four handles with their own connections stand for four
//! machines; a fake clock they share proves the window bound exactly.
#![cfg(feature = "client")]

use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use recuo::{Rate, RegulatorError, SharedError};
use recuo_redis::regulator;

mod support;
use support::Server;

const BURST: u32 = 5;
const STEP_NS: u64 = 100_000;
const TRIES: u64 = 1_500;

#[test]
fn machines_share_one_allowance_through_redis() {
    let server = Server::start();
    holds_its_rate(&server.url, "recuo-test");
}

/// Over TLS, logged in as the ACL user `app`.
#[test]
fn a_regulator_over_rediss_with_an_acl_user_holds_its_rate() {
    let server = Server::start();
    holds_its_rate(&server.tls_url, "recuo-tls");
}

fn holds_its_rate(url: &str, key: &str) {
    let rate: Rate = "100/s".parse().unwrap();
    let clock = Arc::new(AtomicU64::new(1_000_000_000_000));
    let first = clock.load(Ordering::Acquire);
    let starts = Arc::new(Mutex::new(Vec::new()));
    let machines: Vec<_> = (0..4)
        .map(|_| {
            let r = regulator(url, key, rate, BURST).unwrap();
            let (clock, starts) = (clock.clone(), starts.clone());
            std::thread::spawn(move || {
                for _ in 0..TRIES {
                    let now = clock.fetch_add(STEP_NS, Ordering::AcqRel);
                    if r.try_acquire_at(now, 1).is_ok() {
                        starts.lock().unwrap().push(now);
                    }
                }
            })
        })
        .collect();
    for m in machines {
        m.join().unwrap();
    }
    let span = clock.load(Ordering::Acquire) - first;
    let mut starts = std::mem::take(&mut *starts.lock().unwrap());
    starts.sort_unstable();
    let interval = rate.interval_ns() as f64;
    for i in 0..starts.len() {
        for j in i..starts.len() {
            let allowed = f64::from(BURST) + (starts[j] - starts[i]) as f64 / interval;
            assert!(
                ((j - i + 1) as f64) <= allowed + 1e-6,
                "{} starts over {} ns",
                j - i + 1,
                starts[j] - starts[i]
            );
        }
    }
    // The server counts in microseconds: a start may be allowed up to 1 µs late.
    let possible = f64::from(BURST) + span as f64 / interval;
    assert!(
        starts.len() as f64 >= 0.95 * possible,
        "{} of {possible}",
        starts.len()
    );
}

#[test]
fn the_servers_clock_paces_real_starts() {
    let server = Server::start();
    let r = regulator(&server.url, "recuo-real", "20/s".parse().unwrap(), 2).unwrap();
    r.reserve_now(1, 0).unwrap();
    assert!(r.try_acquire().is_ok());
    let wait = r.try_acquire().unwrap_err();
    assert!(
        wait > Duration::ZERO && wait <= Duration::from_millis(50),
        "{wait:?}"
    );
    // A blocking acquire takes the next slot.
    assert!(r.acquire(1, &recuo::CancelToken::new()).unwrap());
}

#[test]
fn another_rate_on_the_same_key_is_refused() {
    let server = Server::start();
    let _a = regulator(&server.url, "k", "90/min".parse().unwrap(), 3).unwrap();
    let err = regulator(&server.url, "k", "120/min".parse().unwrap(), 3).unwrap_err();
    assert!(
        matches!(err, RegulatorError::Shared(SharedError::Mismatch(_))),
        "{err}"
    );
    assert!(err.to_string().contains("asked for"), "{err}");
    assert!(regulator(&server.url, "other", "120/min".parse().unwrap(), 3).is_ok());
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = regulator(&format!("127.0.0.1:{port}"), "k", "1/s".parse().unwrap(), 1).unwrap_err();
    assert!(
        matches!(err, RegulatorError::Shared(SharedError::Io(_))),
        "{err}"
    );
    assert!(err.to_string().contains("Redis at 127.0.0.1"), "{err}");
}

/// Redis frozen (SIGSTOP) and then gone mid-run: every call fails within its deadline with a
/// clear error — never a start, never a hang — and the regulator works again once the server
/// is back.
#[test]
fn a_server_lost_mid_run_fails_each_call_within_its_deadline() {
    let mut server = Server::start();
    let deadline = Duration::from_millis(400);
    let gcra = recuo_redis::RedisGcra::open_with_deadline(
        &server.acl_url,
        "recuo-lost",
        10_000_000,
        2,
        false,
        deadline,
    )
    .unwrap();
    let r = recuo::Regulator::remote(Box::new(gcra), "100/s".parse().unwrap(), 2, false).unwrap();
    r.reserve_now(1, 0).unwrap();
    server.freeze(true);
    for _ in 0..3 {
        let started = Instant::now();
        let e = r.reserve_now(1, 0).unwrap_err().unwrap_err().to_string();
        let took = started.elapsed();
        assert!(
            e.contains("no complete answer within the call's deadline"),
            "{e}"
        );
        assert!(took < deadline + Duration::from_millis(300), "{took:?}");
        // try_acquire fails closed: a wait, never a start.
        assert!(r.try_acquire().is_err());
    }
    server.freeze(false);
    assert!(r.reserve_now(1, 1_000_000_000).is_ok());
    server.stop();
    let started = Instant::now();
    let e = r.reserve_now(1, 0).unwrap_err().unwrap_err().to_string();
    assert!(
        e.contains(&format!("Redis at 127.0.0.1:{}", server.port)),
        "{e}"
    );
    assert!(!e.contains("apppw"), "{e}");
    assert!(started.elapsed() < deadline + Duration::from_millis(300));
}

/// Six threads share one handle of each kind while the server is frozen: no call waits for
/// another's, so each ends by its own deadline; a caller's shorter timeout cuts a call
/// shorter still.
#[test]
fn with_the_server_frozen_every_call_ends_by_its_deadline_however_many_threads_share_it() {
    let server = Server::start();
    let deadline = Duration::from_millis(600);
    let gcra = recuo_redis::RedisGcra::open_with_deadline(
        &server.url,
        "recuo-frozen",
        10_000_000,
        2,
        false,
        deadline,
    )
    .unwrap();
    let r = recuo::Regulator::remote(Box::new(gcra), "100/s".parse().unwrap(), 2, false).unwrap();
    let limit = recuo_redis::RedisLimit::open_with_deadline(
        &server.url,
        "recuo-frozen-limit",
        3,
        Duration::from_secs(10),
        deadline,
    )
    .unwrap();
    let limit = recuo::ConcurrencyLimit::remote(Box::new(limit));
    r.reserve_now(1, 0).unwrap();
    drop(limit.try_acquire().unwrap());
    server.freeze(true);
    let longest = std::thread::scope(|s| {
        let calls: Vec<_> = (0..6)
            .map(|i| {
                let (r, limit) = (&r, &limit);
                s.spawn(move || {
                    let started = Instant::now();
                    let failed = if i % 2 == 0 {
                        r.reserve_now(1, 0).is_err()
                    } else {
                        limit.try_acquire().is_err()
                    };
                    assert!(failed, "a frozen server gave an answer");
                    started.elapsed()
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).max().unwrap()
    });
    eprintln!("the longest of 6 calls on shared handles to a frozen server: {longest:?}");
    assert!(
        longest < deadline + Duration::from_millis(300),
        "{longest:?}"
    );
    // A caller's timeout shorter than the deadline cuts the call: a limit's acquire and a
    // regulator's acquire_until end with the server's error by it.
    let cancel = recuo::CancelToken::new();
    let started = Instant::now();
    let e = limit
        .acquire(Some(Duration::from_millis(200)), &cancel)
        .unwrap_err();
    let took = started.elapsed();
    assert!(
        e.to_string()
            .contains("no complete answer within the call's deadline"),
        "{e}"
    );
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_millis(450),
        "{took:?}"
    );
    let started = Instant::now();
    assert!(matches!(
        r.acquire_until(1, Duration::from_millis(200), &cancel),
        Err(RegulatorError::Shared(SharedError::Io(_)))
    ));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_millis(450),
        "{took:?}"
    );
    server.freeze(false);
    assert!(r.reserve_now(1, 1_000_000_000).is_ok());
}
