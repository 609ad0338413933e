//! The client against hostile fake servers (the tests of issue 11, now against the `redis`
//! crate's parser behind recuo-redis's transport): a clear error, bounded memory, within the
//! call's deadline — never a panic, a hang or the password in a message.
#![cfg(feature = "client")]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use recuo_redis::ping;

/// A server on 127.0.0.1 that reads what the client sends for 200 ms, then runs `answer`,
/// then holds the connection until the client goes; answers the bytes it read.
fn fake_server(
    answer: impl FnOnce(&mut TcpStream) + Send + 'static,
) -> (String, std::thread::JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let t = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        answer(&mut s);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _ = s.read(&mut buf);
        got
    });
    (addr, t)
}

fn call_on(url: &str, deadline: Duration) -> (String, Duration) {
    let started = Instant::now();
    let e = ping(url, deadline).unwrap_err().to_string();
    (e, started.elapsed())
}

#[test]
fn a_multi_byte_first_character_is_a_clear_error_not_a_panic() {
    let (addr, server) = fake_server(|s| s.write_all("é\r\n".as_bytes()).unwrap());
    let (e, took) = call_on(&addr, Duration::from_secs(5));
    assert!(
        e.starts_with(&format!("shared state: Redis at {addr}: bad reply: ")),
        "{e}"
    );
    assert!(e.len() < 300, "{e}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    server.join().unwrap();
}

#[test]
fn an_endless_line_stops_at_the_reply_cap() {
    let (addr, server) = fake_server(|s| {
        let chunk = vec![b'a'; 64 * 1024];
        let _ = s.write_all(b"+");
        // 400 MB if nobody stopped reading; the client hangs up after 4 MiB.
        for _ in 0..6400 {
            if s.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let (e, took) = call_on(&addr, Duration::from_secs(5));
    assert_eq!(
        e,
        format!("shared state: Redis at {addr}: a reply longer than 4194304 bytes (refused)")
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    server.join().unwrap();
}

#[test]
fn oversized_bulk_strings_and_arrays_stop_at_the_cap_or_the_deadline() {
    // Announced but never sent: the call ends at its deadline, with nothing allocated for it.
    for answer in ["$2000000000\r\n", "*100000\r\n"] {
        let (addr, server) = fake_server(move |s| s.write_all(answer.as_bytes()).unwrap());
        let (e, took) = call_on(&addr, Duration::from_millis(500));
        assert_eq!(
            e,
            format!("shared state: Redis at {addr}: no complete answer within the call's deadline"),
            "{answer:?}"
        );
        assert!(took < Duration::from_secs(2), "{answer:?}: {took:?}");
        server.join().unwrap();
    }
    // Announced and sent: refused at the cap.
    let (addr, server) = fake_server(|s| {
        let _ = s.write_all(b"$2000000000\r\n");
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..200 {
            if s.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let (e, _) = call_on(&addr, Duration::from_secs(5));
    assert_eq!(
        e,
        format!("shared state: Redis at {addr}: a reply longer than 4194304 bytes (refused)")
    );
    server.join().unwrap();
    // A bulk string that does not end in \r\n.
    let (addr, server) = fake_server(|s| s.write_all(b"$3\r\nabcXY").unwrap());
    let (e, _) = call_on(&addr, Duration::from_secs(5));
    assert!(
        e.starts_with(&format!("shared state: Redis at {addr}: bad reply: ")),
        "{e}"
    );
    server.join().unwrap();
}

#[test]
fn a_trickling_server_fails_within_the_calls_deadline() {
    let (addr, server) = fake_server(|s| {
        for b in b"+OKAY-BUT-SLOW" {
            if s.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(150));
        }
    });
    let (e, took) = call_on(&addr, Duration::from_millis(600));
    assert_eq!(
        e,
        format!("shared state: Redis at {addr}: no complete answer within the call's deadline")
    );
    // Every read was short, yet the call ended at its deadline.
    assert!(
        took >= Duration::from_millis(550) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    server.join().unwrap();
}

#[test]
fn a_trickling_tls_handshake_fails_within_the_calls_deadline() {
    let (addr, server) = fake_server(|s| {
        for _ in 0..20 {
            if s.write_all(&[0x16]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let (e, took) = call_on(
        &format!("rediss://u:hunter2@{addr}"),
        Duration::from_millis(600),
    );
    assert!(
        e.starts_with(&format!("shared state: Redis at {addr} (TLS): ")),
        "{e}"
    );
    assert!(!e.contains("hunter2"), "{e}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
    let sent = server.join().unwrap();
    // A TLS ClientHello went out, not the password in plain text.
    assert_eq!(sent.first(), Some(&0x16), "{sent:?}");
    assert!(!sent.windows(7).any(|w| w == b"hunter2"));
}

#[test]
fn the_acl_user_is_sent_and_an_echoed_password_is_not_quoted() {
    let (addr, server) = fake_server(|s| {
        s.write_all(b"-WRONGPASS invalid password hunter2 for app\r\n")
            .unwrap()
    });
    let (e, _) = call_on(
        &format!("redis://app:hunter2@{addr}"),
        Duration::from_secs(5),
    );
    assert_eq!(
        e,
        format!(
            "shared state: Redis at {addr}: error \"WRONGPASS invalid password [redacted] for \
             app\""
        )
    );
    let sent = String::from_utf8(server.join().unwrap()).unwrap();
    assert!(sent.contains("AUTH") && sent.contains("app") && sent.contains("hunter2"));
}

#[test]
fn a_long_error_reply_is_quoted_short() {
    let (addr, server) = fake_server(|s| {
        let mut reply = b"-ERR ".to_vec();
        reply.extend([b'x'; 3000]);
        reply.extend_from_slice(b"\r\n");
        s.write_all(&reply).unwrap();
    });
    let (e, _) = call_on(&addr, Duration::from_secs(5));
    assert_eq!(
        e,
        format!(
            "shared state: Redis at {addr}: error \"ERR {}…\"",
            "x".repeat(44)
        )
    );
    server.join().unwrap();
}

#[test]
fn a_cluster_redirect_names_the_cluster_form() {
    let (addr, server) = fake_server(|s| s.write_all(b"-MOVED 3999 127.0.0.1:6381\r\n").unwrap());
    let (e, _) = call_on(&addr, Duration::from_secs(5));
    assert_eq!(
        e,
        format!(
            "shared state: Redis at {addr}: the server is a Redis Cluster node and redirected \
             the call: name the cluster by a redis+cluster://host:port,host:port/ URL (or \
             rediss+cluster:// for TLS)"
        )
    );
    server.join().unwrap();
}

/// The fuzz corpus of issue 11's reply reader, through the same parser and cap.
#[test]
fn the_reply_corpus_gives_replies_or_short_errors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/replies");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        if let Err(message) = recuo_redis::replay_replies(&data) {
            assert!(message.len() <= 300, "{message:?}");
        }
        seen += 1;
    }
    assert!(seen >= 5);
}

/// A server named by a name, not an address: looked up (on a thread of its own, within the
/// call's deadline), then asked; a name nobody knows is a clear error.
#[test]
fn a_name_is_looked_up_within_the_call() {
    let (addr, server) = fake_server(|s| s.write_all(b"+PONG\r\n").unwrap());
    let port = addr.rsplit(':').next().unwrap();
    ping(&format!("redis://localhost:{port}"), Duration::from_secs(5)).unwrap();
    server.join().unwrap();
    let (e, took) = call_on("redis://no-such-host.invalid:6379", Duration::from_secs(5));
    assert!(
        e.starts_with("shared state: Redis at no-such-host.invalid:6379: "),
        "{e}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}
