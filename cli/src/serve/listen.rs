//! What every HTTP server of `recuo serve` does the same way, whatever it answers: bind
//! 127.0.0.1, accept connections (over TLS when asked), give each to hyper with the service
//! the server makes for it, and stop cleanly; and, for the command, say where it listens and
//! wait for the stop.

use std::future::Future;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::{Body, Incoming};
use hyper::server::conn::http1;
use hyper::service::Service;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long a stopping server waits for the requests it is answering.
const DRAIN: Duration = Duration::from_secs(2);

/// How long a client may take over its TLS handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// An error a service or a body may fail with (hyper closes the connection on it).
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A listening socket and the task that accepts on it.
#[derive(Debug)]
pub struct Listening {
    addr: SocketAddr,
    tls: bool,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Listening {
    /// Binds 127.0.0.1:`port` (0 picks a free port) and starts accepting, on the current
    /// tokio runtime; over TLS with `tls`. Each connection is answered by the service
    /// `make` makes for its peer's address.
    ///
    /// # Errors
    /// The socket could not be bound.
    pub async fn start<M, S>(
        port: u16,
        tls: Option<Arc<rustls::ServerConfig>>,
        make: M,
    ) -> std::io::Result<Listening>
    where
        M: Fn(SocketAddr) -> S + Send + 'static,
        S: Answers,
    {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = watch::channel(false);
        let is_tls = tls.is_some();
        let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
        let task = tokio::spawn(accept_loop(listener, make, acceptor, stopped));
        Ok(Listening {
            addr,
            tls: is_tls,
            stop,
            task,
        })
    }

    /// `http://127.0.0.1:PORT`, or `https://` over TLS.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// Stops accepting, lets the requests being answered finish (for up to two seconds),
    /// and closes every connection.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn accept_loop<M, S>(
    listener: TcpListener,
    make: M,
    tls: Option<tokio_rustls::TlsAcceptor>,
    mut stop: watch::Receiver<bool>,
) where
    M: Fn(SocketAddr) -> S,
    S: Answers,
{
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                // Out of file descriptors and the like: wait a moment, keep serving.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.changed() => break,
        };
        let _ = stream.set_nodelay(true);
        let service = make(peer);
        let watcher = graceful.watcher();
        match &tls {
            None => {
                tokio::spawn(service.serve(stream, watcher));
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A client that fails its handshake (an untrusted CA) is just dropped.
                    if let Ok(Ok(tls)) =
                        tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await
                    {
                        service.serve(tls, watcher).await;
                    }
                });
            }
        }
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(DRAIN) => {}
    }
}

/// What a server makes for each connection: a hyper service that answers its requests on a
/// task of its own (its futures and bodies can be sent between threads).
pub trait Answers: Send + 'static {
    /// Answers the requests of one connection until it closes (or the server stops).
    fn serve<I>(self, io: I, watcher: Watcher) -> impl Future<Output = ()> + Send
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static;
}

impl<S, B> Answers for S
where
    S: Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    async fn serve<I>(self, io: I, watcher: Watcher)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let conn = http1::Builder::new().serve_connection(TokioIo::new(io), self);
        let _ = watcher.watch(conn).await;
    }
}

/// Says on stdout where a started server listens (`listening on URL`) and, over TLS, where
/// the CA's certificate is; then waits for Ctrl-C, SIGTERM or the end of `stop_after`, and
/// says which came.
pub async fn announce_and_wait(
    url: &str,
    ca: Option<&Path>,
    stop_after: Option<Duration>,
) -> &'static str {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "listening on {url}");
    if let Some(ca) = ca {
        let _ = writeln!(out, "CA certificate: {}", ca.display());
    }
    let _ = out.flush();
    drop(out);
    wait_for_stop(stop_after).await
}

/// Waits for Ctrl-C, SIGTERM or the end of `stop_after`, and says which came.
pub async fn wait_for_stop(stop_after: Option<Duration>) -> &'static str {
    let timer = async {
        match stop_after {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "Ctrl-C",
        () = term => "SIGTERM",
        () = timer => "--stop-after",
    }
}
