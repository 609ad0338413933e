//! Issue 17: `recuo run -- CMD` on small scripts — exact attempt counts, the command's own
//! output and exit status passed through, seeded delays (the core's backoff, asked here
//! independently), the deadline stopping a command that outlives it, the wait a command
//! asks for, and Ctrl-C stopping at once. Short delays keep the suite fast.

mod support;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use recuo::{Backoff, Jitter};
use support::{recuo_within, Run, RECUO};

/// A folder with an executable `script.sh` of `body`, and the file it counts its runs in.
struct Script {
    dir: PathBuf,
}

impl Script {
    fn new(name: &str, body: &str) -> Script {
        let dir = std::env::temp_dir().join(format!("recuo-run-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        let path = dir.join("script.sh");
        let text = format!(
            "#!/bin/sh\necho run >> '{}'\n{body}\n",
            dir.join("runs").display()
        );
        std::fs::write(&path, text).expect("the script");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        Script { dir }
    }

    fn path(&self) -> String {
        self.dir.join("script.sh").display().to_string()
    }

    /// How many times the script ran.
    fn runs(&self) -> usize {
        std::fs::read_to_string(self.dir.join("runs")).map_or(0, |t| t.lines().count())
    }

    fn run(&self, options: &[&str]) -> Run {
        let path = self.path();
        let mut args = vec!["run"];
        args.extend_from_slice(options);
        args.extend(["--", path.as_str()]);
        recuo_within(&args, Duration::from_secs(20))
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The delays recuo said it chose, in order ("retrying in N ms").
fn delays(stderr: &str) -> Vec<u64> {
    stderr
        .lines()
        .filter_map(|l| l.split_once("retrying in ")?.1.split_once(" ms"))
        .map(|(n, _)| n.parse().expect("a delay"))
        .collect()
}

/// Asserts that recuo said it gave up with `ending` (e.g. "(permanent); exit status 64").
fn assert_gave_up(r: &Run, ending: &str) {
    assert!(r.stderr.contains(ending), "{ending} in {}", r.stderr);
}

/// The first `n` delays of the core's backoff with this base, cap, jitter and seed.
fn seeded(base_ms: u64, cap_ms: u64, jitter: Jitter, seed: u64, n: usize) -> Vec<u64> {
    let mut d = Backoff::new()
        .with_base_ms(base_ms)
        .with_cap_ms(cap_ms)
        .with_jitter(jitter)
        .seeded(seed);
    (0..n).map(|_| d.next_ms().expect("a delay")).collect()
}

const FAILS_TWICE: &str = r#"echo "out $RECUO_ATTEMPT $RECUO_IDEMPOTENCY_KEY"
echo "err $RECUO_ATTEMPT of $RECUO_ATTEMPTS" >&2
[ "$RECUO_ATTEMPT" -ge 2 ] && exit 0
exit 75"#;

#[test]
fn fails_twice_with_a_transient_code_then_succeeds() {
    let s = Script::new("twice", FAILS_TWICE);
    let r = s.run(&["--base", "20ms", "--cap", "200ms", "--seed", "7"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.runs(), 3);
    // The command's stdout, unchanged; the same key on every attempt, a UUID.
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    let key = lines[0].split(' ').nth(2).expect("a key");
    assert_eq!(key.len(), 36, "{key}");
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(*line, format!("out {i} {key}"));
    }
    // Its stderr too, with recuo's own lines between.
    for i in 0..3 {
        assert!(
            r.stderr.contains(&format!("err {i} of 5\n")),
            "{}",
            r.stderr
        );
    }
    assert_eq!(
        delays(&r.stderr),
        seeded(20, 200, Jitter::Full, 7, 2),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("recuo run: attempt 2 succeeded"),
        "{}",
        r.stderr
    );
    // Without jitter the delays are the windows; --quiet says nothing of recuo's own.
    let s = Script::new("twice-none", FAILS_TWICE);
    let r = s.run(&["--base", "20ms", "--jitter", "none"]);
    assert_eq!((r.code, s.runs()), (0, 3));
    assert_eq!(delays(&r.stderr), [20, 40]);
    let s = Script::new("twice-quiet", FAILS_TWICE);
    let r = s.run(&["--base", "1ms", "--quiet"]);
    assert_eq!((r.code, s.runs()), (0, 3));
    assert_eq!(r.stderr, "err 0 of 5\nerr 1 of 5\nerr 2 of 5\n");
    // Another run of recuo is another operation: another key.
    let other = r.stdout.lines().next().and_then(|l| l.split(' ').nth(2));
    assert_ne!(other, Some(key));
}

#[test]
fn a_permanent_code_is_run_once_and_passed_through() {
    let s = Script::new("permanent", "echo nope >&2\nexit 64");
    let r = s.run(&["--base", "1ms"]);
    assert_eq!((r.code, s.runs()), (64, 1), "{r:?}");
    assert!(r.stderr.starts_with("nope\n"), "{}", r.stderr);
    assert!(r
        .stderr
        .contains("gave up after 1 attempt (permanent); exit status 64"));
    // With --retry-on, only the codes listed are transient.
    let s = Script::new("permanent-list", "exit 1");
    let r = s.run(&["--base", "1ms", "--retry-on", "75,111"]);
    assert_eq!((r.code, s.runs()), (1, 1), "{r:?}");
    let s = Script::new("listed", "exit 111");
    let r = s.run(&["--base", "1ms", "--retry-on", "75,111", "--attempts", "2"]);
    assert_eq!((r.code, s.runs()), (111, 2), "{r:?}");
    // A command that is not there: 127, once.
    let r = recuo_within(
        &["run", "--base", "1ms", "--", "/nonexistent/recuo-test-cmd"],
        Duration::from_secs(10),
    );
    assert_eq!(r.code, 127, "{r:?}");
}

#[test]
fn a_command_that_never_succeeds_runs_out_of_attempts_with_its_last_code() {
    // Full and decorrelated jitter, seeded: the delays are the core's.
    for (name, jitter, cap_ms, seed) in [
        ("full", Jitter::Full, 50, 3),
        ("decorrelated", Jitter::Decorrelated, 80, 11),
    ] {
        let s = Script::new(name, r#"echo "try $RECUO_ATTEMPT"; exit 75"#);
        let (cap, seed_text) = (format!("{cap_ms}ms"), seed.to_string());
        let options = [
            "--attempts",
            "4",
            "--base",
            "10ms",
            "--cap",
            &cap,
            "--jitter",
            name,
            "--seed",
            &seed_text,
        ];
        let r = s.run(&options);
        assert_eq!((r.code, s.runs()), (75, 4), "{r:?}");
        assert_eq!(r.stdout, "try 0\ntry 1\ntry 2\ntry 3\n");
        assert_eq!(delays(&r.stderr), seeded(10, cap_ms, jitter, seed, 3));
        assert_gave_up(
            &r,
            "gave up after 4 attempts (attempts_exhausted); exit status 75",
        );
    }
}

#[test]
fn a_command_that_outlives_the_deadline_is_stopped() {
    // It would print "late" after 5 s; the deadline stops it (and the sleep it started,
    // which shares its process group) at 400 ms: 124, as timeout says.
    let s = Script::new("deadline", "sleep 5\necho late");
    let started = Instant::now();
    let r = s.run(&[
        "--deadline",
        "400ms",
        "--base",
        "10ms",
        "--kill-after",
        "1s",
    ]);
    let took = started.elapsed();
    assert_eq!((r.code, s.runs()), (124, 1), "{r:?}");
    assert!(!r.stdout.contains("late"), "{r:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_gave_up(&r, "(wait_exceeds_deadline); exit status 124");
    // One that ignores SIGTERM is killed after --kill-after.
    let s = Script::new("stubborn", "trap '' TERM\nsleep 5");
    let started = Instant::now();
    let r = s.run(&["--deadline", "300ms", "--kill-after", "200ms"]);
    let took = started.elapsed();
    assert_eq!((r.code, s.runs()), (124, 1), "{r:?}");
    assert!(took >= Duration::from_millis(500), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    // --timeout bounds each attempt, and a stopped attempt is retried: 3 runs.
    let s = Script::new("timeout", "sleep 5");
    let r = s.run(&[
        "--timeout",
        "150ms",
        "--attempts",
        "3",
        "--base",
        "10ms",
        "--jitter",
        "none",
        "--deadline",
        "10s",
    ]);
    assert_eq!((r.code, s.runs()), (124, 3), "{r:?}");
    assert_eq!(delays(&r.stderr), [10, 20]);
}

#[test]
fn the_wait_a_command_asks_for_is_honoured() {
    let s = Script::new(
        "wait",
        r#"[ "$RECUO_ATTEMPT" = 0 ] || exit 0
echo 1 > "$RECUO_RETRY_AFTER_FILE"
exit 75"#,
    );
    let r = s.run(&["--base", "10ms", "--seed", "1"]);
    assert_eq!((r.code, s.runs()), (0, 2), "{r:?}");
    let d = delays(&r.stderr);
    // The server-style wait (1 s), plus a spread of at most window(0) = 10 ms.
    assert!(d.len() == 1 && (1000..=1010).contains(&d[0]), "{d:?}");
    assert!(r.stderr.contains("asking to wait 1000 ms"), "{}", r.stderr);
    // A wait beyond the deadline gives up at once, with the command's code.
    let s = Script::new(
        "wait-too-long",
        r#"echo 3600 > "$RECUO_RETRY_AFTER_FILE"; exit 75"#,
    );
    let started = Instant::now();
    let r = s.run(&["--deadline", "30s"]);
    assert_eq!((r.code, s.runs()), (75, 1), "{r:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_gave_up(&r, "(wait_exceeds_deadline); exit status 75");
}

/// Whether a process named `name` runs as a child of a child of `pid` (read from `/proc`).
fn grandchild_named(pid: u32, name: &str) -> bool {
    let parent_of = |stat: &str| -> Option<(String, u32)> {
        let (comm, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
        Some((comm.to_owned(), rest.split(' ').nth(1)?.parse().ok()?))
    };
    let stat = |p: &str| std::fs::read_to_string(format!("/proc/{p}/stat")).ok();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let p = entry.file_name().to_string_lossy().into_owned();
        let Some((comm, ppid)) = stat(&p).as_deref().and_then(parent_of) else {
            return false;
        };
        comm == name
            && stat(&ppid.to_string())
                .as_deref()
                .and_then(parent_of)
                .is_some_and(|(_, grandparent)| grandparent == pid)
    })
}

#[test]
fn ctrl_c_stops_at_once() {
    let s = Script::new("ctrl-c", "sleep 5\nexit 75");
    let script = s.path();
    let mut child = Command::new(RECUO)
        .args(["run", "--base", "10ms", "--", script.as_str()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("recuo starts");
    // Wait for the script's `sleep` to run, then press Ctrl-C (SIGINT to recuo). Not sooner:
    // a shell sent SIGINT before it has forked its foreground command finishes that command
    // first, as it would at a terminal, which is the shell's doing, not recuo's.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !grandchild_named(child.id(), "sleep") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let started = Instant::now();
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if started.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            panic!("recuo run still ran 5 s after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(s.runs(), 1, "no attempt after Ctrl-C");
}
