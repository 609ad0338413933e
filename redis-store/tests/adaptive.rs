//! An adaptive regulator on Redis, held by two processes (this test binary, and a copy of it
//! as process A): a 429 reported by A halves the rate B reserves at, and B's successes give it
//! back for both. A fake clock both processes share makes every wait exact.
#![cfg(feature = "client")]

use recuo::{RegulatorError, SharedError};
use recuo_redis::{regulator, regulator_with};

mod support;
use support::{child, Server};

const ROLE: &str = "RECUO_TEST_ADAPTIVE_ROLE";
const MS: u64 = 1_000_000;
/// The fake clock's start, ns (a server counts whole microseconds).
const T: u64 = 1_000_000_000_000;

/// Process A's part (does nothing in an ordinary run): one start at T, then a 429.
#[test]
fn process_a_is_throttled() {
    let Ok(url) = std::env::var("RECUO_TEST_ADAPTIVE_URL") else {
        return;
    };
    let r = regulator_with(&url, "shared-adaptive", "10/s".parse().unwrap(), 1, true).unwrap();
    assert!(r.try_acquire_at(T, 1).is_ok());
    r.on_throttled();
    println!("rate {}", r.rate().interval_ns());
}

#[test]
fn a_429_in_one_process_halves_the_rate_of_another() {
    if std::env::var(ROLE).is_ok() {
        return;
    }
    let server = Server::start();
    let b = regulator_with(
        &server.url,
        "shared-adaptive",
        "10/s".parse().unwrap(),
        1,
        true,
    )
    .unwrap();
    assert!(b.is_adaptive());
    let a = child(
        ROLE,
        "process_a_is_throttled",
        &[("RECUO_TEST_ADAPTIVE_URL", server.url.clone())],
    )
    .wait_with_output()
    .unwrap();
    assert!(a.status.success());
    let out = String::from_utf8(a.stdout).unwrap();
    assert!(out.contains("rate 200000000\n"), "{out}");
    // A's start at T holds the slot until T + 100 ms; B's first start takes it, and the next
    // one is 200 ms later — the halved rate — not 100 ms.
    assert!(b.try_acquire_at(T + 100 * MS, 1).is_ok());
    assert_eq!(b.rate().interval_ns(), 200 * MS);
    assert_eq!(
        b.try_acquire_at(T + 100 * MS, 1).unwrap_err().unwrap(),
        std::time::Duration::from_millis(200)
    );
    // B's successes give back 1/16 of the configured rate each: 5/s + 16 × 10/16 per s
    // passes 10/s after 8, and never beyond it.
    b.on_success();
    assert_eq!(b.rate().interval_ns(), 177_777_778);
    for _ in 0..7 {
        b.on_success();
    }
    assert_eq!(b.rate().interval_ns(), 100 * MS);
    // The server holds the interval for every holder: a new one sees it too.
    let c = regulator_with(
        &server.url,
        "shared-adaptive",
        "10/s".parse().unwrap(),
        1,
        true,
    )
    .unwrap();
    assert!(c.try_acquire_at(T + 400 * MS, 1).is_ok());
    assert_eq!(c.rate().interval_ns(), 100 * MS);
}

#[test]
fn every_holder_must_agree_on_the_adaptive_setting() {
    let server = Server::start();
    let rate = "10/s".parse().unwrap();
    let a = regulator_with(&server.url, "agree", rate, 1, true).unwrap();
    for refused in [
        regulator(&server.url, "agree", rate, 1).unwrap_err(),
        regulator_with(&server.url, "agree", rate, 1, false).unwrap_err(),
    ] {
        assert!(
            matches!(refused, RegulatorError::Shared(SharedError::Mismatch(_))),
            "{refused}"
        );
        assert_eq!(
            refused.to_string(),
            "shared state: the Redis key \"agree\" regulates one start every 100000 µs with a \
             burst of 1, adaptive (a 429 slows every holder); this process asked for one every \
             100000 µs with a burst of 1, not adaptive (the settings are made when the key is \
             set up, and every process that uses it must agree)"
        );
    }
    // No holder switches it for the others.
    let e = a.set_adaptive(false).unwrap_err();
    assert_eq!(e.name(), "shared_mismatch");
    assert!(a.set_adaptive(true).is_ok());
    let plain = regulator(&server.url, "plain", rate, 1).unwrap();
    plain.on_throttled();
    assert!(plain.try_acquire_at(T, 1).is_ok());
    assert_eq!(plain.rate().interval_ns(), 100 * MS);
    assert_eq!(
        plain.try_acquire_at(T, 1).unwrap_err().unwrap(),
        std::time::Duration::from_millis(100)
    );
}
