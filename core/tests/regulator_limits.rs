//! The regulator's promise, checked with a fake clock: starts never exceed
//! `burst + rate × window` in any window, and at least 95% of the allowed starts are used —
//! with threads sharing one regulator, and with processes sharing one file.
#![allow(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use recuo::{Rate, Regulator};

const RATE: &str = "100/s";
const BURST: u32 = 5;
const STEP_NS: u64 = 100_000; // each try moves the fake clock 0.1 ms
const TRIES: u64 = 20_000; // per thread or process

/// Checks the window bound over every pair of starts, and that the starts used at least 95%
/// of what the span allowed.
fn check(mut starts: Vec<u64>, span_ns: u64) {
    starts.sort_unstable();
    let interval = RATE.parse::<Rate>().unwrap().interval_ns() as f64;
    for i in 0..starts.len() {
        for j in i..starts.len() {
            let count = (j - i + 1) as f64;
            let allowed = f64::from(BURST) + (starts[j] - starts[i]) as f64 / interval;
            assert!(
                count <= allowed + 1e-9,
                "{count} starts in {} ns, more than {allowed}",
                starts[j] - starts[i]
            );
        }
    }
    let possible = f64::from(BURST) + span_ns as f64 / interval;
    let used = starts.len() as f64;
    assert!(
        used >= 0.95 * possible,
        "only {used} of {possible} starts used"
    );
}

#[test]
fn threads_share_one_allowance() {
    let regulator = Regulator::new(RATE.parse().unwrap(), BURST).unwrap();
    let clock = Arc::new(AtomicU64::new(1_000_000_000));
    let starts = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (r, clock, starts) = (regulator.clone(), clock.clone(), starts.clone());
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
    for t in threads {
        t.join().unwrap();
    }
    let starts = std::mem::take(&mut *starts.lock().unwrap());
    check(starts, 4 * TRIES * STEP_NS);
}

/// A u64 in a shared file: the fake clock every child process moves.
struct SharedClock(*mut AtomicU64);

impl SharedClock {
    fn open(path: &Path) -> Self {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .unwrap();
        f.set_len(8).unwrap();
        // SAFETY: mapping 8 bytes of a file that is 8 bytes long, shared; the file may close
        // afterwards, the mapping stays valid for the process's life.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                8,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        SharedClock(p.cast())
    }

    fn cell(&self) -> &AtomicU64 {
        // SAFETY: a live, aligned, shared mapping of one u64.
        unsafe { &*self.0 }
    }

    fn tick(&self) -> u64 {
        self.cell().fetch_add(STEP_NS, Ordering::AcqRel)
    }

    /// Waits (at most 10 s) until the parent starts the clock, so the children run together.
    fn wait_for_start(&self) {
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while self.cell().load(Ordering::Acquire) == 0 && std::time::Instant::now() < give_up {
            std::thread::yield_now();
        }
    }
}

fn child_dir() -> Option<PathBuf> {
    std::env::var_os("RECUO_REGULATOR_CHILD").map(PathBuf::from)
}

/// The child's part: run only when the parent test starts this binary with the variable set.
#[test]
fn shared_regulator_child() {
    let Some(dir) = child_dir() else { return };
    let id = std::env::var("RECUO_CHILD_ID").unwrap();
    let r = Regulator::shared(dir.join("regulator"), RATE.parse().unwrap(), BURST).unwrap();
    let clock = SharedClock::open(&dir.join("clock"));
    clock.wait_for_start();
    let mut starts = Vec::new();
    for _ in 0..TRIES {
        let now = clock.tick();
        if r.try_acquire_at(now, 1).is_ok() {
            starts.push(now.to_string());
        }
    }
    std::fs::write(dir.join(format!("starts-{id}")), starts.join("\n")).unwrap();
}

#[test]
fn processes_share_one_allowance_through_a_file() {
    if child_dir().is_some() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("recuo-regulator-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let clock = SharedClock::open(&dir.join("clock"));
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..4)
        .map(|i| {
            Command::new(&exe)
                .args([
                    "shared_regulator_child",
                    "--exact",
                    "--test-threads=1",
                    "--quiet",
                ])
                .env("RECUO_REGULATOR_CHILD", &dir)
                .env("RECUO_CHILD_ID", i.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let first = 1_000_000_000;
    clock.cell().store(first, Ordering::Release);
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let mut starts = Vec::new();
    for i in 0..4 {
        let text = std::fs::read_to_string(dir.join(format!("starts-{i}"))).unwrap();
        starts.extend(
            text.lines()
                .filter(|l| !l.is_empty())
                .map(|l| l.parse::<u64>().unwrap()),
        );
    }
    let span = clock.cell().load(Ordering::Acquire) - first;
    assert_eq!(span, 4 * TRIES * STEP_NS);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(starts.len() > 100);
    check(starts, span);
}

#[test]
fn a_second_opener_with_another_rate_is_refused() {
    let dir = std::env::temp_dir().join(format!("recuo-mismatch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("regulator");
    let a = Regulator::shared(&path, "90/min".parse().unwrap(), 3).unwrap();
    let same = Regulator::shared(&path, "90/min".parse().unwrap(), 3).unwrap();
    assert!(a.try_acquire_at(5_000_000_000, 3).is_ok());
    assert!(
        same.try_acquire_at(5_000_000_000, 1).is_err(),
        "one allowance, two handles"
    );
    let other = Regulator::shared(&path, "120/min".parse().unwrap(), 3).unwrap_err();
    assert!(other.to_string().contains("asked for"), "{other}");
    let burst = Regulator::shared(&path, "90/min".parse().unwrap(), 4).unwrap_err();
    assert!(burst.to_string().contains("burst"), "{burst}");
    std::fs::write(dir.join("junk"), b"not a regulator").unwrap();
    assert!(Regulator::shared(dir.join("junk"), "1/s".parse().unwrap(), 1).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
