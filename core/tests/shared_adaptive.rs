//! An adaptive regulator in a shared file, held by two processes (this test binary, and a
//! copy of it as process A): a 429 reported by A halves the rate B reserves at, and B's
//! successes give it back for both. Both processes reserve at the same fake instants, so
//! every wait is exact.

use std::process::{Command, Stdio};
use std::time::Duration;

use recuo::{Regulator, RegulatorError, SharedError};

const CHILD_PATH: &str = "RECUO_TEST_ADAPTIVE_CHILD_PATH";
const MS: u64 = 1_000_000;
/// The fake instant both processes reserve at, ns on the monotonic clock's scale.
const T: u64 = 1_000_000_000_000;

fn open(path: &str) -> Regulator {
    Regulator::shared_with(path, "10/s".parse().unwrap(), 1, true).unwrap()
}

/// Process A's part (does nothing in an ordinary run): one start at T, then a 429.
#[test]
fn process_a_is_throttled() {
    let Ok(path) = std::env::var(CHILD_PATH) else {
        return;
    };
    let r = open(&path);
    assert!(r.try_acquire_at(T, 1).is_ok());
    r.on_throttled();
    println!("rate {}", r.rate().interval_ns());
}

#[test]
fn a_429_in_one_process_halves_the_rate_of_another() {
    if std::env::var(CHILD_PATH).is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("recuo-adaptive-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("regulator");
    let path = path.to_str().unwrap();
    let b = open(path);
    assert!(b.is_adaptive());
    let a = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "process_a_is_throttled", "--nocapture"])
        .env(CHILD_PATH, path)
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(a.status.success());
    let out = String::from_utf8(a.stdout).unwrap();
    assert!(out.contains("rate 200000000\n"), "{out}");
    // B sees the cut at once; A's start at T holds the slot until T + 100 ms, B's first
    // start takes it, and the next one is 200 ms later — the halved rate — not 100 ms.
    assert_eq!(b.rate().interval_ns(), 200 * MS);
    assert!(b.try_acquire_at(T + 100 * MS, 1).is_ok());
    assert_eq!(
        b.try_acquire_at(T + 100 * MS, 1).unwrap_err().unwrap(),
        Duration::from_millis(200)
    );
    // B's successes give back 1/16 of the configured rate each, for every holder.
    b.on_success();
    assert_eq!(b.rate().interval_ns(), 177_777_778);
    for _ in 0..7 {
        b.on_success();
    }
    assert_eq!(open(path).rate().interval_ns(), 100 * MS);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_process_must_agree_on_the_adaptive_setting() {
    let dir = std::env::temp_dir().join(format!("recuo-adaptive-agree-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("regulator");
    let a = Regulator::shared_with(&path, "10/s".parse().unwrap(), 1, true).unwrap();
    for refused in [
        Regulator::shared(&path, "10/s".parse().unwrap(), 1).unwrap_err(),
        Regulator::shared_with(&path, "10/s".parse().unwrap(), 1, false).unwrap_err(),
    ] {
        assert!(
            matches!(refused, RegulatorError::Shared(SharedError::Mismatch(_))),
            "{refused}"
        );
        assert_eq!(
            refused.to_string(),
            format!(
                "shared state: {} regulates 10.000000/s with a burst of 1, adaptive (a 429 \
                 slows every holder); this process asked for 10.000000/s with a burst of 1, \
                 not adaptive (the settings are made when the file is set up, and every \
                 process that opens it must agree)",
                path.display()
            )
        );
    }
    // No process switches it for the others; with_adaptive leaves a shared file alone.
    let e = a.set_adaptive(false).unwrap_err();
    assert_eq!((e.code(), e.name()), (58, "shared_mismatch"));
    assert_eq!(
        e.to_string(),
        "shared state: this shared regulator is adaptive (a 429 slows every holder): the \
         setting is made when its state is set up, and every process that opens it must \
         agree (set it up again under another name to change it)"
    );
    assert!(a.set_adaptive(true).is_ok());
    assert!(a.clone().with_adaptive(false).is_adaptive());
    // A file that is not adaptive ignores a 429 from any process.
    let plain = Regulator::shared(dir.join("plain"), "10/s".parse().unwrap(), 1).unwrap();
    assert!(!plain.is_adaptive());
    plain.on_throttled();
    assert_eq!(plain.rate().interval_ns(), 100 * MS);
    let _ = std::fs::remove_dir_all(&dir);
}
