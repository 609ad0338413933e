//! A retry budget in a shared file is exact across processes: 8 processes withdrawing as fast
//! as they can from one budget never take more than its floor allows in any window, as one
//! process's threads never do. (The processes are copies of this test binary, each running
//! `withdraw_as_a_child` with the budget's path in the environment.)

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use recuo::{monotonic_ns, RetryBudget};

const CHILD_PATH: &str = "RECUO_TEST_BUDGET_CHILD_PATH";
const PROCESSES: usize = 8;
/// The budget: no ratio, 5 retries a second, a window of 2 s: 10 retries in any window.
const FLOOR: f64 = 5.0;
const WINDOW_S: u32 = 2;
const S: u64 = 1_000_000_000;
/// How long each child withdraws.
const RUN: Duration = Duration::from_millis(3_500);

fn budget(path: &str) -> RetryBudget {
    RetryBudget::shared(path, 0.0, FLOOR, WINDOW_S).unwrap()
}

/// A child's part (does nothing in an ordinary run): withdraw from the shared budget until
/// `RUN` is over, printing the instant of each retry taken.
#[test]
fn withdraw_as_a_child() {
    let Ok(path) = std::env::var(CHILD_PATH) else {
        return;
    };
    let b = budget(&path);
    let until = Instant::now() + RUN;
    let mut taken = Vec::new();
    while Instant::now() < until {
        let now = monotonic_ns();
        if b.withdraw_checked(Some(now)).unwrap() {
            taken.push(now);
        }
        std::thread::yield_now();
    }
    for t in taken {
        println!("taken {t}");
    }
}

#[test]
fn processes_withdrawing_from_one_file_never_exceed_the_budget() {
    if std::env::var(CHILD_PATH).is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("recuo-budget-procs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("budget");
    let path = path.to_str().unwrap();
    budget(path); // set up once, before the children race
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "withdraw_as_a_child",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD_PATH, path)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut taken: Vec<u64> = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "a child failed: {:?}", out.status);
        taken.extend(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                // (libtest may print its own words before the first line on the same line)
                .filter_map(|l| l.split_once("taken ").map(|(_, n)| n))
                .map(|n| n.parse::<u64>().unwrap()),
        );
    }
    // The budget counts whole seconds: the window of second s is seconds s-1 and s.
    let allowed = (FLOOR * f64::from(WINDOW_S)) as usize;
    let first = taken.iter().min().unwrap() / S;
    let last = taken.iter().max().unwrap() / S;
    let mut worst = 0;
    for second in first..=last {
        let in_window = taken
            .iter()
            .filter(|&&t| (second + 1 - u64::from(WINDOW_S)..=second).contains(&(t / S)))
            .count();
        worst = worst.max(in_window);
    }
    let mut per_second = std::collections::BTreeMap::new();
    for t in &taken {
        *per_second.entry(t / S).or_insert(0) += 1;
    }
    assert_eq!(
        worst, allowed,
        "the most retries in one window of {WINDOW_S} s: {per_second:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
