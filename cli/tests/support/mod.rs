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
    let status = wait_within(&mut child, args, limit);
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// Waits for `recuo args…` to end, killing it (and failing the test) after `limit`.
fn wait_within(child: &mut Child, args: &[&str], limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("recuo {args:?} still ran after {limit:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `recuo args…` with its stdout and stderr in one stream (as a terminal shows them),
/// in `stdout`, with a 20-second limit.
pub fn recuo_merged(args: &[&str]) -> Run {
    let path = std::env::temp_dir().join(format!(
        "recuo-merged-{}-{:?}.out",
        std::process::id(),
        thread::current().id()
    ));
    let file = std::fs::File::create(&path).expect("a file for the output");
    let mut child = Command::new(RECUO)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(file.try_clone().expect("dup")))
        .stderr(Stdio::from(file))
        .spawn()
        .expect("recuo starts");
    let status = wait_within(&mut child, args, Duration::from_secs(20));
    let out = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out,
        stderr: String::new(),
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
    /// With `--tls`: the CA certificate's file, as the server printed it.
    pub ca: Option<String>,
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
        let tls = args.contains(&"--tls");
        let lines = if tls { 2 } else { 1 };
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut text = String::new();
            for _ in 0..lines {
                let _ = reader.read_line(&mut text);
            }
            let _ = tx.send(text);
            // Keep reading, so the server never blocks on a full pipe.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let text = match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(text) => text,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("recuo serve printed nothing in 10 s");
            }
        };
        let mut it = text.lines();
        let first = it.next().unwrap_or_default();
        let url = first
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .to_string();
        let ca = it.next().map(|l| {
            l.trim()
                .strip_prefix("CA certificate: ")
                .unwrap_or_else(|| panic!("unexpected second line {l:?}"))
                .to_string()
        });
        let scheme = if tls { "https" } else { "http" };
        assert!(url.starts_with(&format!("{scheme}://127.0.0.1:")), "{url}");
        Serve { child, url, ca }
    }

    /// `GET /stats`, parsed (over TLS, trusting the server's CA, when it speaks HTTPS).
    pub fn stats(&self) -> Value {
        let (body, status) = match &self.ca {
            Some(ca) => https_get(&self.url, "/stats", ca),
            None => http_get(&self.url, "/stats"),
        };
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
    body_and_status(&raw)
}

/// An HTTP/1.1 response's body and status code.
fn body_and_status(raw: &str) -> (String, u16) {
    let (head, body) = raw.split_once("\r\n\r\n").expect("a response");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    (body.to_string(), status)
}

/// A one-off `GET path` over TLS against `base` (`https://127.0.0.1:PORT`), trusting only
/// the CA in the PEM file `ca`: the body and the status code.
pub fn https_get(base: &str, path: &str, ca: &str) -> (String, u16) {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    let host = base.trim_start_matches("https://").to_string();
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).expect("the CA file") {
        roots.add(cert.expect("a certificate")).expect("a CA");
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from("127.0.0.1").expect("a name");
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), name).expect("TLS");
    let tcp = TcpStream::connect(&host).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let mut stream = rustls::StreamOwned::new(conn, tcp);
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut raw = Vec::new();
    // The server may close without close_notify: what was read is the answer.
    let _ = stream.read_to_end(&mut raw);
    body_and_status(&String::from_utf8_lossy(&raw))
}

/// The trial's counts against the server's `/stats`, which must agree exactly.
pub fn assert_same_counts(trial: &Value, server: &Value) {
    let starts = n(trial, "initial") + n(trial, "retries");
    assert_eq!(starts, n(server, "requests"), "every request sent was seen");
    assert_eq!(n(trial, "successes"), n(server, "ok"));
    assert_eq!(n(trial, "throttled"), n(server, "throttled"));
    assert_eq!(n(trial, "unavailable"), n(server, "unavailable"));
    // recuo's key: one per read, the same on all its attempts.
    let keys = match trial["idempotency_key"].as_str() {
        Some("recuo") => n(trial, "initial"),
        Some("none") => 0,
        other => panic!("idempotency_key {other:?}"),
    };
    assert_eq!(keys, n(server, "idempotency_keys"), "one key per read");
    let answers: u64 = trial["responses"]
        .as_object()
        .expect("responses")
        .values()
        .filter_map(Value::as_u64)
        .sum();
    assert_eq!(answers, starts, "one answer per start");
    assert!(n(server, "max_in_flight") <= n(trial, "max_in_flight").max(3));
}

/// A JSON number as u64.
pub fn n(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not a count in {v}"))
}
