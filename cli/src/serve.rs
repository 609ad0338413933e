//! `recuo serve`: the simulated API over HTTP/1.1 on 127.0.0.1 (hyper on tokio), plain or
//! over TLS (rustls, with a certificate made at start). The decisions are in
//! `server_state.rs`; here are the answers' headers and bodies, and the command. The sockets
//! and a clean stop on Ctrl-C or SIGTERM, shared with `recuo serve --script`, are in
//! [`listen`].

pub mod cors;
pub mod listen;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use recuo::monotonic_ns;

use crate::args::{RetryAfterMode, ServeArgs};
use crate::error::{run_error, CliError};
use crate::server_state::{Answer, Arrival, ServerConfig, ServerState, ServerStats, QUOTA_WAIT};
use crate::tls;
use cors::{Cors, WithCors};
use listen::{announce_and_wait, Listening};

/// The header whose value the allowance is counted by; without it, the client's address.
pub const API_KEY_HEADER: &str = "x-api-key";

/// The largest request body read (the rest makes the request fail).
const MAX_BODY: usize = 1 << 20;

/// A running simulated API.
#[derive(Debug)]
pub struct Server {
    listening: Listening,
    state: Arc<ServerState>,
}

impl Server {
    /// Binds 127.0.0.1:`port` (0 picks a free port) and starts answering, on the current
    /// tokio runtime; over TLS with `tls`, with `cors`'s cross-origin headers.
    ///
    /// # Errors
    /// The socket could not be bound.
    pub async fn start(
        config: ServerConfig,
        port: u16,
        tls: Option<Arc<rustls::ServerConfig>>,
        cors: Cors,
    ) -> std::io::Result<Server> {
        let state = Arc::new(ServerState::new(config, monotonic_ns()));
        let shared = Arc::clone(&state);
        let listening = Listening::start(port, tls, move |peer: SocketAddr| {
            let state = Arc::clone(&shared);
            WithCors::new(
                cors,
                service_fn(move |req| answer(req, Arc::clone(&state), peer)),
            )
        })
        .await?;
        Ok(Server { listening, state })
    }

    /// `http://127.0.0.1:PORT`, or `https://` over TLS.
    pub fn url(&self) -> String {
        self.listening.url()
    }

    /// What the server saw so far.
    pub fn stats(&self) -> ServerStats {
        self.state.stats(monotonic_ns())
    }

    /// Stops accepting, lets the requests being answered finish (for up to two seconds),
    /// and closes every connection.
    pub async fn stop(self) {
        self.listening.stop().await;
    }
}

/// Keeps a request counted as in flight until its answer is sent or it is dropped.
struct InFlight(Arc<ServerState>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.finish();
    }
}

async fn answer(
    req: Request<Incoming>,
    state: Arc<ServerState>,
    peer: SocketAddr,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.uri().path() == "/stats" {
        let body = serde_json::to_vec(&state.stats(monotonic_ns())).unwrap_or_default();
        return Ok(json(StatusCode::OK, body));
    }
    if req.uri().path() == "/metrics" {
        let text = state.stats(monotonic_ns()).to_prometheus();
        let mut response = Response::new(Full::new(Bytes::from(text)));
        response.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        );
        return Ok(response);
    }
    let (parts, body) = req.into_parts();
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let key = header(API_KEY_HEADER).map_or_else(|| peer.ip().to_string(), |k| format!("key:{k}"));
    // The body is read before the answer is decided: a request that cannot send it is not
    // one the server received.
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return Ok(problem(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the body is too large",
            ))
        }
    };
    let arrival = Arrival {
        client: &key,
        idempotency_key: header("idempotency-key"),
        method: parts.method.as_str(),
        path: parts.uri.path(),
        body_bytes: body.len() as u64,
        authorization: parts.headers.contains_key(hyper::header::AUTHORIZATION),
    };
    let answer = state.admit(&arrival, monotonic_ns());
    let _in_flight = InFlight(Arc::clone(&state));
    let config = state.config();
    let mode = config.retry_after;
    let response = match answer {
        Answer::Ok(n) => {
            tokio::time::sleep(config.latency).await;
            let body = serde_json::json!({
                "ok": true,
                "path": parts.uri.path(),
                "method": parts.method.as_str(),
                "served": n,
            });
            json(StatusCode::OK, body.to_string().into_bytes())
        }
        Answer::Unavailable => {
            tokio::time::sleep(config.latency).await;
            let mut r = problem(StatusCode::SERVICE_UNAVAILABLE, "unavailable for a moment");
            let told = add_retry_after(&mut r, mode, Duration::from_secs(1));
            state.told(arrival.idempotency_key, told, monotonic_ns());
            r
        }
        Answer::Throttled(wait) => {
            let mut r = problem(StatusCode::TOO_MANY_REQUESTS, "over the allowance");
            let told = add_retry_after(&mut r, mode, wait);
            state.told(arrival.idempotency_key, told, monotonic_ns());
            r
        }
        Answer::QuotaSpent => {
            let mut r = problem(StatusCode::TOO_MANY_REQUESTS, "the daily quota is spent");
            let told = add_retry_after(&mut r, mode, QUOTA_WAIT);
            state.told(arrival.idempotency_key, told, monotonic_ns());
            let reset = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .saturating_add(QUOTA_WAIT)
                .as_secs();
            let h = r.headers_mut();
            if let Some(q) = config.quota {
                h.insert("x-ratelimit-limit", HeaderValue::from(q));
            }
            h.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
            h.insert("x-ratelimit-reset", HeaderValue::from(reset));
            r
        }
    };
    Ok(response)
}

fn json(status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn problem(status: StatusCode, detail: &str) -> Response<Full<Bytes>> {
    let body = serde_json::json!({ "ok": false, "status": status.as_u16(), "detail": detail });
    json(status, body.to_string().into_bytes())
}

/// `Retry-After` for a wait, rounded up to whole seconds (a client told 0 s while the slot is
/// still 300 ms away would only be refused again). Answers the wait the header says (zero
/// without one).
fn add_retry_after(
    r: &mut Response<Full<Bytes>>,
    mode: RetryAfterMode,
    wait: Duration,
) -> Duration {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let (value, told) = match mode {
        RetryAfterMode::None => return Duration::ZERO,
        RetryAfterMode::Seconds => (
            HeaderValue::from(seconds.max(1)),
            Duration::from_secs(seconds.max(1)),
        ),
        RetryAfterMode::Date => {
            // An HTTP-date counts whole seconds: round the instant up to the next one.
            let at = SystemTime::now() + wait;
            let since = at
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default();
            let whole = since.as_secs() + u64::from(since.subsec_nanos() > 0);
            let at = SystemTime::UNIX_EPOCH + Duration::from_secs(whole.max(1));
            // What a client reading the date now is asked to wait: up to the whole second.
            let told = at
                .duration_since(SystemTime::now())
                .unwrap_or_default()
                .saturating_sub(Duration::from_millis(1));
            match HeaderValue::from_str(&httpdate::fmt_http_date(at)) {
                Ok(v) => (v, told),
                Err(_) => return Duration::ZERO,
            }
        }
    };
    r.headers_mut().insert(RETRY_AFTER, value);
    told
}

/// The server settings of `recuo serve`.
pub fn config_of(a: &ServeArgs) -> ServerConfig {
    ServerConfig {
        allowance: a.allowance,
        burst: a.burst,
        fail_rate: a.fail_rate,
        latency: a.latency,
        retry_after: a.retry_after,
        quota: a.quota,
        seed: a.seed,
    }
}

/// A tokio runtime for the command: two worker threads are plenty on 127.0.0.1.
///
/// # Errors
/// The runtime could not start.
pub fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| run_error("starting the runtime", e))
}

/// Runs `recuo serve` until Ctrl-C, SIGTERM or `--stop-after`.
///
/// # Errors
/// [`CliError::Run`] when the port cannot be bound.
pub fn run(a: &ServeArgs) -> Result<(), CliError> {
    let rt = runtime()?;
    // Made once for both servers that take --tls (it conflicts with --trickle).
    let tls = if a.tls {
        let made = tls::server_tls()?;
        let ca = CaFile::write(a.ca_file.as_deref(), &made.ca_pem)?;
        Some((made.config, ca))
    } else {
        None
    };
    let config = tls.as_ref().map(|(c, _)| Arc::clone(c));
    if let Some(path) = &a.script {
        let ca = tls.as_ref().map(|(_, ca)| ca.path.as_path());
        let ran = crate::script::run(path, a.port, a.stop_after, (config, a.cors), ca, &rt);
        drop(tls);
        return ran;
    }
    if let Some(mode) = a.trickle {
        return rt.block_on(async {
            let server = crate::trickle::Trickler::start(mode, a.trickle_every, a.port)
                .await
                .map_err(|e| binding(a.port, e))?;
            let why = announce_and_wait(&server.url(), None, a.stop_after).await;
            server.stop().await;
            eprintln!("recuo serve --trickle: stopped ({why})");
            Ok(())
        });
    }
    rt.block_on(async {
        let server = Server::start(config_of(a), a.port, config, a.cors)
            .await
            .map_err(|e| binding(a.port, e))?;
        let ca = tls.as_ref().map(|(_, ca)| ca.path.as_path());
        let why = announce_and_wait(&server.url(), ca, a.stop_after).await;
        let s = server.stats();
        server.stop().await;
        drop(tls);
        eprintln!(
            "recuo serve: stopped ({why}) after {} requests: {} ok, {} throttled (429), {} \
             unavailable (503), at most {} in flight",
            s.requests, s.ok, s.throttled, s.unavailable, s.max_in_flight
        );
        Ok(())
    })
}

/// The error for a port that could not be bound.
pub fn binding(port: u16, e: std::io::Error) -> CliError {
    run_error(&format!("binding 127.0.0.1:{port}"), e)
}

/// The CA's certificate on disk: a file of the caller's (kept), or a new one in a folder of
/// its own in the temporary folder (removed when the server stops).
#[derive(Debug)]
struct CaFile {
    path: std::path::PathBuf,
    made_dir: Option<std::path::PathBuf>,
}

impl CaFile {
    fn write(chosen: Option<&std::path::Path>, pem: &str) -> Result<CaFile, CliError> {
        let (path, made_dir) = match chosen {
            Some(p) => (p.to_path_buf(), None),
            None => {
                let dir = std::env::temp_dir().join(format!(
                    "recuo-serve-{}-{}",
                    std::process::id(),
                    monotonic_ns()
                ));
                std::fs::create_dir_all(&dir)
                    .map_err(|e| run_error(&format!("creating {}", dir.display()), e))?;
                (dir.join("ca.pem"), Some(dir))
            }
        };
        std::fs::write(&path, pem)
            .map_err(|e| run_error(&format!("writing {}", path.display()), e))?;
        Ok(CaFile { path, made_dir })
    }
}

impl Drop for CaFile {
    fn drop(&mut self) {
        if let Some(dir) = &self.made_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up() {
        let mut r = problem(StatusCode::TOO_MANY_REQUESTS, "x");
        add_retry_after(&mut r, RetryAfterMode::Seconds, Duration::from_millis(1200));
        assert_eq!(r.headers()[RETRY_AFTER], "2");
        add_retry_after(&mut r, RetryAfterMode::Seconds, Duration::ZERO);
        assert_eq!(r.headers()[RETRY_AFTER], "1");
        let mut r = problem(StatusCode::TOO_MANY_REQUESTS, "x");
        add_retry_after(&mut r, RetryAfterMode::None, Duration::from_secs(5));
        assert!(r.headers().get(RETRY_AFTER).is_none());
        add_retry_after(&mut r, RetryAfterMode::Date, Duration::from_secs(5));
        let date = r.headers()[RETRY_AFTER].to_str().unwrap().to_string();
        let now = recuo::unix_now_ms();
        let wait = recuo::parse_retry_after(&date, now).wait_ms().unwrap();
        assert!((5000..=6000).contains(&wait), "{date}: {wait}");
    }
}
