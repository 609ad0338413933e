//! The regulator shared between machines through a real Redis server, started by the test on
//! 127.0.0.1 and stopped at the end. Four handles with their own connections stand for four
//! machines; a fake clock they share proves the window bound exactly.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use recuo::{Rate, Regulator, RegulatorError, SharedError};

/// A `redis-server` of this test's own, on a free port of 127.0.0.1.
///
/// Tests run in parallel and a port the kernel just handed out may be handed out again: each
/// server gets its own password, so a test can never mistake another test's server for its
/// own, and a server that could not bind its port is started again on another.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Server {
        for round in 0..20 {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let password = format!("pw{}x{port}x{round}", std::process::id());
            let mut child = Command::new("redis-server")
                .args([
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--requirepass",
                    &password,
                ])
                .stdout(Stdio::null())
                .spawn()
                .expect("redis-server must be installed (make deps installs it)");
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until {
                if child.try_wait().ok().flatten().is_some() {
                    break; // it could not start (the port was taken): another port
                }
                if answers(port, &password) {
                    return Server {
                        child,
                        url: format!("redis://:{password}@127.0.0.1:{port}"),
                    };
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server did not start");
    }
}

/// Whether the server on `port` is the one with this password.
fn answers(port: u16, password: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let auth = format!("*2\r\n$4\r\nAUTH\r\n${}\r\n{password}\r\n", password.len());
    let mut reply = [0u8; 3];
    s.write_all(auth.as_bytes()).is_ok() && s.read_exact(&mut reply).is_ok() && &reply == b"+OK"
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const BURST: u32 = 5;
const STEP_NS: u64 = 100_000;
const TRIES: u64 = 1_500;

#[test]
fn machines_share_one_allowance_through_redis() {
    let server = Server::start();
    let rate: Rate = "100/s".parse().unwrap();
    let clock = Arc::new(AtomicU64::new(1_000_000_000_000));
    let first = clock.load(Ordering::Acquire);
    let starts = Arc::new(Mutex::new(Vec::new()));
    let machines: Vec<_> = (0..4)
        .map(|_| {
            let r = Regulator::redis(&server.url, "recuo-test", rate, BURST).unwrap();
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
    let r = Regulator::redis(&server.url, "recuo-real", "20/s".parse().unwrap(), 2).unwrap();
    assert!(r.try_acquire().is_ok());
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
    let _a = Regulator::redis(&server.url, "k", "90/min".parse().unwrap(), 3).unwrap();
    let err = Regulator::redis(&server.url, "k", "120/min".parse().unwrap(), 3).unwrap_err();
    assert!(
        matches!(err, RegulatorError::Shared(SharedError::Mismatch(_))),
        "{err}"
    );
    assert!(err.to_string().contains("asked for"), "{err}");
    assert!(Regulator::redis(&server.url, "other", "120/min".parse().unwrap(), 3).is_ok());
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err =
        Regulator::redis(&format!("127.0.0.1:{port}"), "k", "1/s".parse().unwrap(), 1).unwrap_err();
    assert!(
        matches!(err, RegulatorError::Shared(SharedError::Io(_))),
        "{err}"
    );
    assert!(err.to_string().contains("Redis at 127.0.0.1"), "{err}");
}
