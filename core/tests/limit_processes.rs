//! A concurrency limit in a shared file survives its holder's death: 4 processes on a limit
//! of 1, one holds the place and 3 wait; each holder in turn is killed with `kill -9`, and
//! the next waiter starts within the bound docs/limits.md states (250 ms after the kill),
//! never two at once. (The processes are copies of this test binary, each running
//! `hold_as_a_child` with the limit's path in the environment.)

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use recuo::{monotonic_ns, CancelToken, ConcurrencyLimit};

const CHILD_PATH: &str = "RECUO_TEST_LIMIT_CHILD_PATH";
const PROCESSES: usize = 4;
/// The bound docs/limits.md states between a holder's death and the next waiter's start.
const BOUND_NS: u64 = 250_000_000;
/// How long a child waits for the place, or holds it, before it ends on its own.
const CHILD_LIFE: Duration = Duration::from_secs(20);

/// A child's part (does nothing in an ordinary run): say it waits, take the place, say when,
/// and hold it until killed (or `CHILD_LIFE` is over).
#[test]
fn hold_as_a_child() {
    let Ok(path) = std::env::var(CHILD_PATH) else {
        return;
    };
    let limit = ConcurrencyLimit::shared(&path, 1).unwrap();
    let placed = match limit.try_acquire().unwrap() {
        Some(p) => Some(p),
        None => {
            println!("waiting");
            limit
                .acquire(Some(CHILD_LIFE), &CancelToken::new())
                .unwrap()
        }
    };
    if placed.is_some() {
        println!("started {}", monotonic_ns());
        std::thread::sleep(CHILD_LIFE);
    }
}

enum Said {
    Waiting,
    Started(u64),
}

#[test]
fn a_killed_holder_frees_its_place_for_the_next_waiter_at_once() {
    if std::env::var(CHILD_PATH).is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("recuo-limit-procs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("limit");
    let watcher = ConcurrencyLimit::shared(&path, 1).unwrap(); // set up before the race
    let exe = std::env::current_exe().unwrap();
    let (tx, rx) = mpsc::channel::<(usize, Said)>();
    let mut children: Vec<Child> = (0..PROCESSES)
        .map(|i| {
            let mut child = Command::new(&exe)
                .args([
                    "--exact",
                    "hold_as_a_child",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD_PATH, &path)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let out = BufReader::new(child.stdout.take().unwrap());
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in out.lines().map_while(Result::ok) {
                    // (libtest may print its own words before the first line on the same line)
                    if line.ends_with("waiting") {
                        let _ = tx.send((i, Said::Waiting));
                    } else if let Some((_, n)) = line.split_once("started ") {
                        let _ = tx.send((i, Said::Started(n.parse().unwrap())));
                    }
                }
            });
            child
        })
        .collect();
    drop(tx);
    let next = |timeout: Duration| rx.recv_timeout(timeout).ok();

    // One starts and three wait.
    let mut holder = None;
    let mut waiting = 0;
    while holder.is_none() || waiting < PROCESSES - 1 {
        match next(Duration::from_secs(10)).expect("every child starts or waits") {
            (i, Said::Started(_)) => {
                assert!(holder.is_none(), "two children started at once");
                holder = Some(i);
            }
            (_, Said::Waiting) => waiting += 1,
        }
    }
    let mut holder = holder.unwrap();
    let mut delays = Vec::new();
    for _ in 1..PROCESSES {
        // Nobody else starts while the holder lives.
        assert!(next(Duration::from_millis(100)).is_none());
        assert_eq!(watcher.in_flight(), 1);
        let killed_at = monotonic_ns();
        // SAFETY: kill on the pid of a child of this process, which has not been waited for.
        let pid = i32::try_from(children[holder].id()).unwrap();
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
        children[holder].wait().unwrap();
        let (i, said) = next(Duration::from_secs(5)).expect("a waiter takes the place");
        let Said::Started(at) = said else {
            panic!("child {i} said it waits again");
        };
        assert_ne!(i, holder);
        delays.push(at.saturating_sub(killed_at));
        holder = i;
    }
    println!("from each kill to the next start (ns): {delays:?}");
    assert!(
        delays.iter().all(|&d| d <= BOUND_NS),
        "delays after each kill (ns): {delays:?}"
    );
    // The last holder: killed too, and the place is free again.
    let pid = i32::try_from(children[holder].id()).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    for child in &mut children {
        let _ = child.wait();
    }
    assert_eq!(watcher.in_flight(), 0);
    assert!(watcher.try_acquire().unwrap().is_some());
    let _ = std::fs::remove_dir_all(&dir);
}
