//! Helpers for the command's tests: run `recuo` with a time limit, start `recuo serve` as a
//! child process that always stops, and read its `/stats`.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The binary under test.
pub const RECUO: &str = env!("CARGO_BIN_EXE_recuo");

/// What a finished `recuo` said.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The stdout parsed as one JSON value.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?} / {:?}", self.stdout, self.stderr))
    }
}

/// Runs `recuo args…`, killing it (and failing the test) after `limit`.
pub fn recuo_within(args: &[&str], limit: Duration) -> Run {
    let mut child = Command::new(RECUO)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("recuo starts");
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("recuo {args:?} still ran after {limit:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// Runs `recuo args…` with a 20-second limit.
pub fn recuo(args: &[&str]) -> Run {
    recuo_within(args, Duration::from_secs(20))
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_string(&mut s);
        }
        s
    })
}

/// A `recuo serve` child process: SIGTERM when dropped, and `--stop-after 60s` in case the
/// test process itself dies first.
pub struct Serve {
    child: Child,
    pub url: String,
}

impl Serve {
    /// Starts `recuo serve --port 0 --stop-after 60s args…` and reads its first line.
    pub fn start(args: &[&str]) -> Serve {
        let mut child = Command::new(RECUO)
            .args(["serve", "--port", "0", "--stop-after", "60s"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("recuo serve starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("recuo serve printed nothing in 10 s");
            }
        };
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        Serve { child, url }
    }

    /// `GET /stats`, parsed.
    pub fn stats(&self) -> Value {
        let (body, status) = http_get(&self.url, "/stats");
        assert_eq!(status, 200);
        serde_json::from_str(&body).expect("stats are JSON")
    }

    /// Sends SIGTERM and waits (5 s at most) for the exit status.
    pub fn terminate(mut self) -> Option<i32> {
        self.stop()
    }

    fn stop(&mut self) -> Option<i32> {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid");
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.code(),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return None;
                }
            }
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

/// A one-off `GET path` (Connection: close) against `base` (`http://127.0.0.1:PORT`):
/// the body and the status code. The test's own probe; the command uses hyper.
pub fn http_get(base: &str, path: &str) -> (String, u16) {
    let host = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a response");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    (body.to_string(), status)
}

/// A JSON number as u64.
pub fn n(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not a count in {v}"))
}
