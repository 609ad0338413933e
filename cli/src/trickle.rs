//! `recuo serve --trickle`: a hostile server on 127.0.0.1, for seeing a client's deadline
//! hold. It reads a request (its head and a body of at most 1 MiB, within 10 s) and answers
//! it badly: a 503's body or its head one byte at a time, or a 200 whose body never ends. One
//! request per connection; every connection ends when the client closes it or the server
//! stops.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::args::TrickleMode;

/// The largest request head read.
const MAX_HEAD: usize = 64 << 10;
/// The largest request body read.
const MAX_BODY: usize = 1 << 20;
/// How long a client may take to send its request.
const READ_REQUEST: Duration = Duration::from_secs(10);
/// The 503's body: 35 bytes.
const BODY: &[u8] = b"{\"ok\":false,\"detail\":\"trickling\"}\n";
/// One chunk of the endless body.
const CHUNK: usize = 64 << 10;

/// A running hostile server.
#[derive(Debug)]
pub struct Trickler {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Trickler {
    /// Binds 127.0.0.1:`port` (0: a free port) and starts misbehaving as `mode` says, a byte
    /// every `every`.
    ///
    /// # Errors
    /// The socket could not be bound.
    pub async fn start(mode: TrickleMode, every: Duration, port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(accept(listener, mode, every, stopped));
        Ok(Trickler { addr, stop, task })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting and ends every connection.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn accept(
    listener: TcpListener,
    mode: TrickleMode,
    every: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let mut stop = stop.clone();
                    connections.spawn(async move {
                        tokio::select! {
                            _ = misbehave(stream, mode, every) => {}
                            _ = stop.changed() => {}
                        }
                    });
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            _ = stop.changed() => break,
        }
    }
    connections.abort_all();
    while connections.join_next().await.is_some() {}
}

/// Reads one request's head and body (bounded in size and time): `false` when the client
/// sent none.
async fn read_request(stream: &mut TcpStream) -> bool {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if got.len() > MAX_HEAD {
            return false;
        }
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_BODY);
    let mut body = got.len() - head_end;
    while body < length {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => body += n,
        }
    }
    true
}

async fn misbehave(mut stream: TcpStream, mode: TrickleMode, every: Duration) {
    let _ = stream.set_nodelay(true);
    match tokio::time::timeout(READ_REQUEST, read_request(&mut stream)).await {
        Ok(true) => {}
        _ => return,
    }
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: \
         application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        BODY.len()
    );
    match mode {
        TrickleMode::Body => {
            if stream.write_all(head.as_bytes()).await.is_ok() {
                let _ = one_at_a_time(&mut stream, BODY, every).await;
            }
        }
        TrickleMode::Headers => {
            if one_at_a_time(&mut stream, head.as_bytes(), every)
                .await
                .is_ok()
            {
                let _ = stream.write_all(BODY).await;
            }
        }
        TrickleMode::Endless => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\
                        Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
            let chunk = [b'x'; CHUNK];
            let mut framed = format!("{CHUNK:x}\r\n").into_bytes();
            framed.extend_from_slice(&chunk);
            framed.extend_from_slice(b"\r\n");
            if stream.write_all(head.as_bytes()).await.is_ok() {
                while stream.write_all(&framed).await.is_ok() {}
            }
        }
    }
    let _ = stream.shutdown().await;
}

async fn one_at_a_time(
    stream: &mut TcpStream,
    bytes: &[u8],
    every: Duration,
) -> std::io::Result<()> {
    for b in bytes {
        stream.write_all(std::slice::from_ref(b)).await?;
        stream.flush().await?;
        tokio::time::sleep(every).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn ask(url: &str) -> (Vec<u8>, Duration) {
        let addr = url.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let mut got = Vec::new();
        s.read_to_end(&mut got).await.unwrap();
        (got, started.elapsed())
    }

    #[tokio::test]
    async fn a_503_trickles_its_body_or_its_head_a_byte_at_a_time() {
        let every = Duration::from_millis(5);
        for mode in [TrickleMode::Body, TrickleMode::Headers] {
            let t = Trickler::start(mode, every, 0).await.unwrap();
            let (got, took) = ask(&t.url()).await;
            let text = String::from_utf8(got).unwrap();
            assert!(text.starts_with("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"));
            assert!(
                text.ends_with("{\"ok\":false,\"detail\":\"trickling\"}\n"),
                "{text}"
            );
            let trickled = if mode == TrickleMode::Body {
                35
            } else {
                text.len() - 35
            };
            assert!(took >= every * (trickled as u32 - 1), "{mode:?}: {took:?}");
            t.stop().await;
        }
    }

    #[tokio::test]
    async fn an_endless_body_goes_on_until_the_client_leaves() {
        let t = Trickler::start(TrickleMode::Endless, Duration::from_secs(1), 0)
            .await
            .unwrap();
        let addr = t.url().trim_start_matches("http://").to_owned();
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0;
        while total < 4 << 20 {
            total += s.read(&mut buf).await.unwrap();
        }
        drop(s);
        t.stop().await;
    }
}
