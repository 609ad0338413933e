//! `recuo run [options] -- CMD ARGS…`: `com_retry` for the shell (the retry loop of
//! “Como repetir requisições com backoff exponencial (retry)”). The core's
//! operation machine runs the loop (`recuo::drive`): attempts, backoff and jitter, the
//! deadline, the server's wait. This module only runs the command, waits, and says which
//! exit codes are transient — as a [`Verdict`] per exit code, the classification of this
//! kind of operation.
//!
//! The command inherits the terminal (stdin, stdout, stderr: its output is never read or
//! changed) and runs in a process group of its own, so that stopping it at the deadline
//! stops what it started too (as `timeout` does): SIGTERM to the group, SIGKILL after
//! `--kill-after`. Ctrl-C (SIGINT) or SIGTERM sent to recuo is passed to the group at once,
//! and no attempt follows.

use std::cell::OnceCell;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::process::{ExitCode, ExitStatus};
use std::time::{Duration, Instant};

use recuo::{
    drive, parse_retry_after, unix_now_ms, AttemptContext, Cause, Driver, IdempotencyKey,
    Operation, Policy, RetryAfter, ServerWait, Stopped, Transport, Verdict,
};
use tokio::runtime::Runtime;
use tokio::signal::unix::{signal, Signal, SignalKind};

use crate::args::RunArgs;
use crate::error::{run_error, CliError};

/// The exit codes that are permanent by default: misuse (2, as shells and many tools say
/// it), EX_USAGE (64), cannot execute (126), not found (127). Retrying cannot fix them.
pub const PERMANENT_BY_DEFAULT: [u8; 4] = [2, 64, 126, 127];

/// The status recuo exits with when the deadline or `--timeout` stopped the command, as
/// `timeout` does.
pub const TIMED_OUT: u8 = 124;

/// The largest Retry-After value read from the file, bytes.
const MAX_WAIT_FILE: u64 = 256;

/// How one attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The command exited with this non-zero code; `wait` is what it wrote in the
    /// Retry-After file.
    Exit {
        /// The exit code.
        code: u8,
        /// The server-style wait it asked for.
        wait: Option<ServerWait>,
    },
    /// The command was killed by this signal (not of recuo's sending).
    Signaled(i32),
    /// recuo stopped it: the deadline or `--timeout` came first.
    TimedOut,
    /// It could not be started: not found (127) or not executable (126).
    NotStarted(u8),
    /// recuo was sent this signal (Ctrl-C: SIGINT) and passed it on.
    Interrupted(i32),
}

impl Failure {
    /// The shell's status for it: the code, `128 + signal`, 124 for a time limit.
    pub fn status(self) -> u8 {
        match self {
            Failure::Exit { code, .. } | Failure::NotStarted(code) => code,
            Failure::Signaled(sig) | Failure::Interrupted(sig) => {
                u8::try_from(128 + sig).unwrap_or(255)
            }
            Failure::TimedOut => TIMED_OUT,
        }
    }

    fn describe(self) -> String {
        match self {
            Failure::Exit { code, wait: None } => format!("exited with {code}"),
            Failure::Exit {
                code,
                wait: Some(ServerWait::Ms(ms)),
            } => format!("exited with {code}, asking to wait {ms} ms"),
            Failure::Exit {
                code,
                wait: Some(ServerWait::Unbounded),
            } => format!("exited with {code}, asking to wait too long to count"),
            Failure::Signaled(sig) => format!("was killed by signal {sig}"),
            Failure::TimedOut => "was stopped: out of time".to_string(),
            Failure::NotStarted(127) => "could not be found".to_string(),
            Failure::NotStarted(_) => "could not be executed".to_string(),
            Failure::Interrupted(sig) => format!("was stopped by signal {sig} sent to recuo"),
        }
    }
}

/// Which exit codes are transient: `--retry-on`'s, or every non-zero code but
/// [`PERMANENT_BY_DEFAULT`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitCodes(Option<Vec<u8>>);

impl ExitCodes {
    /// `retry_on` empty: the default.
    pub fn new(retry_on: &[u8]) -> Self {
        ExitCodes((!retry_on.is_empty()).then(|| retry_on.to_vec()))
    }

    /// Whether `code` is worth another attempt.
    pub fn transient(&self, code: u8) -> bool {
        match &self.0 {
            Some(list) => list.contains(&code),
            None => code != 0 && !PERMANENT_BY_DEFAULT.contains(&code),
        }
    }

    /// The verdict on a failure: a transient exit code is retried (after the wait the
    /// command asked for, if any), a command stopped for time is retried as a timeout, and
    /// everything else — a permanent code, a command that cannot start, an interruption —
    /// gives up.
    pub fn verdict(&self, f: Failure) -> Verdict {
        match f {
            Failure::Exit { code, wait } if self.transient(code) => Verdict::Retry {
                cause: Verdict::from_predicate(true).cause(),
                server_wait: wait,
            },
            Failure::Signaled(_) if self.transient(f.status()) => Verdict::from_predicate(true),
            Failure::NotStarted(code) if self.transient(code) => Verdict::from_predicate(true),
            Failure::TimedOut => Verdict::Retry {
                cause: Cause::Transport(Transport::Timeout),
                server_wait: None,
            },
            _ => Verdict::from_predicate(false),
        }
    }
}

/// What waiting for the command came to.
enum Waited {
    Exited(ExitStatus),
    OutOfTime,
    Signal(i32),
}

/// The effects of `recuo run`: start the command, wait for it (and for signals), sleep.
struct RunDriver<'a> {
    rt: &'a Runtime,
    started: Instant,
    argv: &'a [String],
    attempts: u32,
    per_attempt: Option<Duration>,
    kill_after: Duration,
    codes: ExitCodes,
    quiet: bool,
    wait_file: PathBuf,
    sigint: Signal,
    sigterm: Signal,
    interrupted: Option<i32>,
    last_attempt: u32,
}

impl RunDriver<'_> {
    fn say(&self, text: &str) {
        if !self.quiet {
            eprintln!("recuo run: {text}");
        }
    }

    /// Sends `sig` to the command's process group (its pid: it leads the group).
    fn signal_group(pid: Option<u32>, sig: i32) {
        if let Some(pid) = pid.and_then(|p| libc::pid_t::try_from(p).ok()) {
            // SAFETY: kill(2) on the process group our own child leads; no memory involved.
            unsafe {
                libc::kill(-pid, sig);
            }
        }
    }

    /// Stops the command: `sig` to its group, SIGKILL after the grace period (or at once on
    /// a second Ctrl-C), and waits for it.
    async fn stop(&mut self, child: &mut tokio::process::Child, sig: i32) {
        let pid = child.id();
        Self::signal_group(pid, sig);
        tokio::select! {
            _ = child.wait() => {}
            () = tokio::time::sleep(self.kill_after) => {}
            _ = self.sigint.recv() => {}
        }
        Self::signal_group(pid, libc::SIGKILL);
        let _ = child.wait().await;
    }

    /// The wait the command wrote in its Retry-After file, if any.
    fn read_wait(&self) -> Option<ServerWait> {
        use std::io::Read;
        let mut text = String::new();
        let file = std::fs::File::open(&self.wait_file).ok()?;
        file.take(MAX_WAIT_FILE).read_to_string(&mut text).ok()?;
        let value = text.trim();
        if value.is_empty() {
            return None;
        }
        match parse_retry_after(value, unix_now_ms()) {
            RetryAfter::Seconds { wait_ms } | RetryAfter::Date { wait_ms } => {
                Some(ServerWait::Ms(wait_ms))
            }
            RetryAfter::Unbounded => Some(ServerWait::Unbounded),
            RetryAfter::Invalid => {
                self.say("ignored the Retry-After file: not seconds or an HTTP-date");
                None
            }
        }
    }
}

impl Driver for RunDriver<'_> {
    type Value = ();
    type Error = Failure;

    fn now_ms(&mut self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn is_cancelled(&mut self) -> bool {
        self.interrupted.is_some()
    }

    fn attempt(&mut self, ctx: &AttemptContext<'_>) -> Result<(), Failure> {
        self.last_attempt = ctx.attempt();
        let _ = std::fs::write(&self.wait_file, "");
        let mut cmd = tokio::process::Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..])
            .env("RECUO_ATTEMPT", ctx.attempt().to_string())
            .env("RECUO_ATTEMPTS", self.attempts.to_string())
            .env("RECUO_IDEMPOTENCY_KEY", ctx.idempotency_key().as_str())
            .env("RECUO_RETRY_AFTER_FILE", &self.wait_file)
            .process_group(0);
        let limit = match (
            ctx.timeout_ms().map(Duration::from_millis),
            self.per_attempt,
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let rt = self.rt;
        let mut child = match rt.block_on(async { cmd.spawn() }) {
            Ok(c) => c,
            Err(e) => {
                let code = if e.kind() == ErrorKind::NotFound {
                    127
                } else {
                    126
                };
                eprintln!("recuo run: {}: {e}", self.argv[0]);
                return Err(Failure::NotStarted(code));
            }
        };
        let waited = rt.block_on(async {
            let timer = async {
                match limit {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                status = child.wait() => match status {
                    Ok(s) => Waited::Exited(s),
                    Err(_) => Waited::Signal(libc::SIGKILL),
                },
                () = timer => Waited::OutOfTime,
                _ = self.sigint.recv() => Waited::Signal(libc::SIGINT),
                _ = self.sigterm.recv() => Waited::Signal(libc::SIGTERM),
            }
        });
        match waited {
            Waited::Exited(status) => {
                use std::os::unix::process::ExitStatusExt;
                match (status.code(), status.signal()) {
                    (Some(0), _) => Ok(()),
                    (Some(code), _) => Err(Failure::Exit {
                        code: u8::try_from(code).unwrap_or(1),
                        wait: self.read_wait(),
                    }),
                    (None, Some(sig)) => Err(Failure::Signaled(sig)),
                    (None, None) => Err(Failure::Signaled(libc::SIGKILL)),
                }
            }
            Waited::OutOfTime => {
                rt.block_on(self.stop(&mut child, libc::SIGTERM));
                Err(Failure::TimedOut)
            }
            Waited::Signal(sig) => {
                self.interrupted = Some(sig);
                rt.block_on(self.stop(&mut child, sig));
                Err(Failure::Interrupted(sig))
            }
        }
    }

    fn classify(&mut self, error: &Failure) -> Result<(Verdict, Option<recuo::Seen>), Failure> {
        Ok((self.codes.verdict(*error), None))
    }

    fn on_retry(&mut self, attempt: u32, error: &Failure, delay: Duration) -> Result<(), Failure> {
        let left = self.attempts.saturating_sub(attempt + 1);
        self.say(&format!(
            "attempt {attempt} {}; retrying in {} ms ({left} attempt{} left)",
            error.describe(),
            delay.as_millis(),
            if left == 1 { "" } else { "s" }
        ));
        Ok(())
    }

    fn sleep(&mut self, delay: Duration) -> Result<bool, Failure> {
        let rt = self.rt;
        let woke = rt.block_on(async {
            tokio::select! {
                () = tokio::time::sleep(delay) => None,
                _ = self.sigint.recv() => Some(libc::SIGINT),
                _ = self.sigterm.recv() => Some(libc::SIGTERM),
            }
        });
        if let Some(sig) = woke {
            self.interrupted = Some(sig);
        }
        Ok(woke.is_some())
    }
}

/// A folder of its own for the Retry-After file, removed at the end.
struct WaitDir(PathBuf);

impl WaitDir {
    fn new() -> Result<WaitDir, CliError> {
        let dir = std::env::temp_dir().join(format!(
            "recuo-run-{}-{}",
            std::process::id(),
            recuo::monotonic_ns()
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| run_error(&format!("creating {}", dir.display()), e))?;
        Ok(WaitDir(dir))
    }

    fn file(&self) -> PathBuf {
        self.0.join("retry-after")
    }
}

impl Drop for WaitDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `recuo run` and answers the exit status: the command's own, or as the module
/// says.
pub fn main(a: &RunArgs) -> ExitCode {
    match run(a) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("recuo: {e}");
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1))
        }
    }
}

fn run(a: &RunArgs) -> Result<u8, CliError> {
    let policy = Policy::builder()
        .max_attempts(a.attempts)
        .base(a.base)
        .cap(a.cap)
        .jitter(a.jitter)
        .deadline(a.deadline)
        .build()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| run_error("starting the runtime", e))?;
    let (sigint, sigterm) = rt
        .block_on(async {
            Ok::<_, std::io::Error>((
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
            ))
        })
        .map_err(|e| run_error("listening for signals", e))?;
    let dir = WaitDir::new()?;
    let mut driver = RunDriver {
        rt: &rt,
        started: Instant::now(),
        argv: &a.command,
        attempts: a.attempts,
        per_attempt: a.timeout,
        kill_after: a.kill_after,
        codes: ExitCodes::new(&a.retry_on),
        quiet: a.quiet,
        wait_file: dir.file(),
        sigint,
        sigterm,
        interrupted: None,
        last_attempt: 0,
    };
    let op = Operation::new(&policy).seed(a.seed);
    let key = OnceCell::<IdempotencyKey>::new();
    let result = drive(op, &key, &mut driver);
    let code = match result {
        Ok(()) => {
            // Said only when an attempt had failed before: a first success is silent.
            if driver.last_attempt > 0 {
                driver.say(&format!("attempt {} succeeded", driver.last_attempt));
            }
            0
        }
        Err(Stopped::GaveUp(e)) => {
            let status = e.error.map_or(TIMED_OUT, Failure::status);
            if let Some(sig) = driver.interrupted {
                u8::try_from(128 + sig).unwrap_or(255)
            } else {
                driver.say(&format!(
                    "gave up after {} attempt{} ({}); exit status {status}",
                    e.report.attempts,
                    if e.report.attempts == 1 { "" } else { "s" },
                    e.reason.name()
                ));
                status
            }
        }
        Err(Stopped::Aborted(f)) => f.status(),
    };
    drop(dir);
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_codes_and_a_list() {
        let d = ExitCodes::new(&[]);
        assert!(d.transient(1) && d.transient(75) && d.transient(255));
        for code in PERMANENT_BY_DEFAULT {
            assert!(!d.transient(code), "{code}");
        }
        assert!(!d.transient(0));
        let l = ExitCodes::new(&[75, 111]);
        assert!(l.transient(75) && l.transient(111) && !l.transient(1));
    }

    #[test]
    fn verdicts_per_failure() {
        let d = ExitCodes::new(&[]);
        let wait = Some(ServerWait::Ms(3000));
        assert_eq!(
            d.verdict(Failure::Exit { code: 75, wait }).server_wait(),
            wait
        );
        assert_eq!(d.verdict(Failure::Exit { code: 75, wait }).name(), "retry");
        assert_eq!(d.verdict(Failure::Exit { code: 2, wait }).name(), "give_up");
        assert_eq!(d.verdict(Failure::TimedOut).name(), "retry");
        assert_eq!(d.verdict(Failure::NotStarted(127)).name(), "give_up");
        assert_eq!(d.verdict(Failure::Interrupted(2)).name(), "give_up");
        // Killed by SIGKILL (137) is transient by default; by a list, only if listed.
        assert_eq!(d.verdict(Failure::Signaled(9)).name(), "retry");
        assert_eq!(
            ExitCodes::new(&[75]).verdict(Failure::Signaled(9)).name(),
            "give_up"
        );
        assert_eq!(Failure::Signaled(15).status(), 143);
        assert_eq!(Failure::TimedOut.status(), 124);
    }
}
