//! `recuo serve --script FILE`: a scripted server on 127.0.0.1, for testing a client's
//! retries. The file names cases (`requests[*]`, each an `id` and a `script` of events, as in
//! `tests/vectors/http.json`); a request to any path whose last segment is a case's id plays
//! that case's next event — one counter per whole path, the last event repeated. An event is
//! a status with headers, a `cut` answer (its headers say `Content-Length: 1000`, 10 bytes of
//! body follow, then the connection closes) or a `reset` (the request is read, then the
//! connection closes with no answer). `{date+N}` in a header value is the HTTP-date of the
//! server's clock plus N seconds. `GET /__script/log/<path>` answers what the server saw on
//! `/<path>`: one `{"method", "key"}` per request, in order (`key`: the `Idempotency-Key`
//! request header, or null).
//!
//! HTTP is hyper's: a reset is a service error (hyper closes the connection without a word),
//! a cut is a body that fails after its first bytes.

use std::collections::HashMap;
use std::future::Future as _;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::header::{HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use serde_json::Value;

use crate::error::CliError;
use crate::serve::binding;
use crate::serve::cors::{Cors, WithCors};
use crate::serve::listen::{announce_and_wait, Listening};

/// The largest script file read.
pub const MAX_FILE: u64 = 4 << 20;
/// The most events in one case's script.
const MAX_EVENTS: usize = 1000;
/// The requests logged per path (later ones are played, counted, and not logged).
pub const LOG_PER_PATH: usize = 1000;
/// The paths the server keeps a counter and a log for.
pub const MAX_PATHS: usize = 10_000;
/// The bytes the logs may hold in all (paths, methods and keys).
const MAX_LOG_BYTES: usize = 16 << 20;
/// A `{date+N}` offset is at most ten years either way.
const MAX_OFFSET_S: i64 = 10 * 366 * 86_400;
/// What a cut answer's headers promise.
const CUT_LENGTH: u64 = 1000;
/// What a cut answer sends of it.
const CUT_BODY: &[u8] = b"0123456789";
/// How long a cut answer waits after its bytes before closing (so they leave first).
const CUT_PAUSE: Duration = Duration::from_millis(20);
/// The largest request body read.
const MAX_BODY: usize = 1 << 20;
/// Where the logs are read.
const LOG_PREFIX: &str = "/__script/log";
/// The request header logged.
const KEY_HEADER: &str = "idempotency-key";

/// What one event of a script does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A whole answer.
    Answer,
    /// The status line and headers with `Content-Length: 1000`, 10 bytes, then the
    /// connection closes.
    Cut,
    /// The connection closes with no answer.
    Reset,
}

/// One piece of a header value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    /// The HTTP-date of the server's clock plus this many seconds.
    Date(i64),
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The status (200 for a reset, never sent).
    pub status: u16,
    /// What happens.
    pub kind: Kind,
    headers: Vec<(HeaderName, Vec<Piece>)>,
}

impl Event {
    /// The headers, their `{date+N}` written as of `now`.
    fn headers_at(&self, now: SystemTime) -> Vec<(HeaderName, HeaderValue)> {
        self.headers
            .iter()
            .filter_map(|(name, pieces)| {
                let mut v = String::new();
                for p in pieces {
                    match p {
                        Piece::Text(t) => v.push_str(t),
                        Piece::Date(n) => v.push_str(&date_at(now, *n)),
                    }
                }
                Some((name.clone(), HeaderValue::from_str(&v).ok()?))
            })
            .collect()
    }
}

/// The HTTP-date of `now` plus `offset_s` seconds.
fn date_at(now: SystemTime, offset_s: i64) -> String {
    let shift = Duration::from_secs(offset_s.unsigned_abs());
    let at = if offset_s >= 0 {
        now.checked_add(shift)
    } else {
        now.checked_sub(shift)
    };
    let at = at
        .filter(|t| *t >= SystemTime::UNIX_EPOCH)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    httpdate::fmt_http_date(at)
}

/// The cases of a script file, by id.
#[derive(Debug, Clone, Default)]
pub struct Script {
    cases: HashMap<String, Vec<Event>>,
}

impl Script {
    /// Reads and checks a script file.
    ///
    /// # Errors
    /// [`CliError::Usage`] naming the file and what is wrong: unreadable, over 4 MiB, not
    /// JSON, or a case or event that is not as described.
    pub fn load(path: &Path) -> Result<Script, CliError> {
        let bad = |what: String| CliError::Usage(format!("--script {}: {what}", path.display()));
        let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_FILE + 1), &mut text)
            .map_err(|e| bad(e.to_string()))?;
        if text.len() as u64 > MAX_FILE {
            return Err(bad(format!("larger than {} MiB", MAX_FILE >> 20)));
        }
        let text = String::from_utf8(text).map_err(|_| bad("not UTF-8 text".to_string()))?;
        Script::parse(&text).map_err(bad)
    }

    /// Reads a script from its JSON text.
    ///
    /// # Errors
    /// What is wrong, and where.
    pub fn parse(text: &str) -> Result<Script, String> {
        let doc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let cases = doc
            .get("requests")
            .and_then(Value::as_array)
            .ok_or("no \"requests\" array of cases")?;
        let mut script = Script::default();
        for (i, case) in cases.iter().enumerate() {
            let at = |what: &str| format!("requests[{i}]: {what}");
            let id = case
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| at("no \"id\" string"))?;
            if id.is_empty()
                || !id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
            {
                return Err(at(&format!(
                    "the id {id:?} must be letters, digits, '-', '.', '_' or '~'"
                )));
            }
            let at = |what: &str| format!("requests[{i}] ({id}): {what}");
            let events = case
                .get("script")
                .and_then(Value::as_array)
                .ok_or_else(|| at("no \"script\" array of events"))?;
            if events.is_empty() || events.len() > MAX_EVENTS {
                return Err(at(&format!("a script has 1 to {MAX_EVENTS} events")));
            }
            let events = events
                .iter()
                .enumerate()
                .map(|(j, e)| event(e).map_err(|m| at(&format!("script[{j}]: {m}"))))
                .collect::<Result<Vec<_>, _>>()?;
            if script.cases.insert(id.to_string(), events).is_some() {
                return Err(at("a second case with this id"));
            }
        }
        if script.cases.is_empty() {
            return Err("no case in \"requests\"".to_string());
        }
        Ok(script)
    }

    /// The case a path plays: the one named by its last segment.
    fn case_of(&self, path: &str) -> Option<&[Event]> {
        let id = path.rsplit('/').next()?;
        self.cases.get(id).map(Vec::as_slice)
    }
}

/// One event: `{"status": 503, "headers": {...}}`, `{"status": 200, "cut": true}` or
/// `{"reset": true}`.
fn event(e: &Value) -> Result<Event, String> {
    let obj = e.as_object().ok_or("an event is an object")?;
    if let Some(k) = obj
        .keys()
        .find(|k| !["status", "headers", "cut", "reset"].contains(&k.as_str()))
    {
        return Err(format!(
            "unknown field {k:?} (an event has status, headers, cut or reset)"
        ));
    }
    let flag = |name: &str| match obj.get(name) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("\"{name}\" is true or false")),
    };
    let (cut, reset) = (flag("cut")?, flag("reset")?);
    if reset {
        if obj.len() > 1 {
            return Err("a reset has nothing beside \"reset\": true".to_string());
        }
        return Ok(Event {
            status: 200,
            kind: Kind::Reset,
            headers: Vec::new(),
        });
    }
    let status = obj
        .get("status")
        .and_then(Value::as_u64)
        .filter(|s| (200..=599).contains(s))
        .ok_or("\"status\" is a number from 200 to 599 (or the event is \"reset\": true)")?;
    let mut headers = Vec::new();
    match obj.get("headers") {
        None => {}
        Some(Value::Object(h)) => {
            for (name, value) in h {
                let header = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| format!("{name:?} is not a header name"))?;
                if ["content-length", "transfer-encoding", "connection"].contains(&header.as_str())
                {
                    return Err(format!("{name} is the server's to set"));
                }
                let value = value
                    .as_str()
                    .ok_or_else(|| format!("the value of {name} is a string"))?;
                headers.push((header, template(value).map_err(|m| format!("{name}: {m}"))?));
            }
        }
        Some(_) => return Err("\"headers\" is an object of names and values".to_string()),
    }
    Ok(Event {
        status: u16::try_from(status).unwrap_or(500),
        kind: if cut { Kind::Cut } else { Kind::Answer },
        headers,
    })
}

/// A header value with `{date}`, `{date+N}` or `{date-N}` in it.
fn template(value: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("{date") {
        pieces.push(Piece::Text(rest[..start].to_string()));
        let after = &rest[start + 5..];
        let end = after.find('}').ok_or("a {date…} is closed by '}'")?;
        let offset = match &after[..end] {
            "" => 0,
            n if n.starts_with(['+', '-']) && n[1..].bytes().all(|b| b.is_ascii_digit()) => n
                .parse::<i64>()
                .ok()
                .filter(|n| n.abs() <= MAX_OFFSET_S)
                .ok_or("a {date+N} is at most ten years away")?,
            _ => return Err("write {date}, {date+N} or {date-N} (N in seconds)".to_string()),
        };
        pieces.push(Piece::Date(offset));
        rest = &after[end + 1..];
    }
    pieces.push(Piece::Text(rest.to_string()));
    for p in &pieces {
        if let Piece::Text(t) = p {
            HeaderValue::from_str(t).map_err(|_| "not a header value".to_string())?;
        }
    }
    pieces.retain(|p| !matches!(p, Piece::Text(t) if t.is_empty()));
    Ok(pieces)
}

/// One request the server saw on a path.
#[derive(Debug, Clone, serde::Serialize)]
struct Entry {
    method: String,
    key: Option<String>,
}

/// A path's counter and log.
#[derive(Debug, Default)]
struct PathLog {
    seen: u64,
    log: Vec<Entry>,
    dropped: u64,
}

/// What the server keeps: the paths played, their logs, and the bytes the logs hold.
#[derive(Debug, Default)]
struct Logs {
    paths: HashMap<String, PathLog>,
    bytes: usize,
    requests: u64,
}

impl Logs {
    /// Counts a request on `path` and logs it: the index of the event it plays, or `None`
    /// when no more paths can be kept.
    fn arrive(&mut self, path: &str, entry: Entry) -> Option<u64> {
        if !self.paths.contains_key(path) {
            if self.paths.len() >= MAX_PATHS || self.bytes + path.len() > MAX_LOG_BYTES {
                return None;
            }
            self.bytes += path.len();
            self.paths.insert(path.to_string(), PathLog::default());
        }
        self.requests += 1;
        let size = entry.method.len() + entry.key.as_ref().map_or(0, String::len);
        let fits = self.bytes + size <= MAX_LOG_BYTES;
        let p = self.paths.get_mut(path)?;
        let n = p.seen;
        p.seen += 1;
        if p.log.len() < LOG_PER_PATH && fits {
            p.log.push(entry);
            self.bytes += size;
        } else {
            p.dropped += 1;
        }
        Some(n)
    }
}

/// The server's state.
#[derive(Debug)]
struct State {
    script: Script,
    logs: Mutex<Logs>,
}

impl State {
    fn logs(&self) -> std::sync::MutexGuard<'_, Logs> {
        self.logs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running scripted server.
#[derive(Debug)]
pub struct ScriptServer {
    listening: Listening,
    state: Arc<State>,
}

impl ScriptServer {
    /// Binds 127.0.0.1:`port` (0 picks a free port) and starts playing `script`, on the
    /// current tokio runtime; over TLS with `tls`, with `cors`'s cross-origin headers.
    ///
    /// # Errors
    /// The socket could not be bound.
    pub async fn start(
        script: Script,
        port: u16,
        tls: Option<Arc<rustls::ServerConfig>>,
        cors: Cors,
    ) -> std::io::Result<ScriptServer> {
        let state = Arc::new(State {
            script,
            logs: Mutex::new(Logs::default()),
        });
        let shared = Arc::clone(&state);
        let listening = Listening::start(port, tls, move |_| {
            let state = Arc::clone(&shared);
            WithCors::new(cors, service_fn(move |req| answer(req, Arc::clone(&state))))
        })
        .await?;
        Ok(ScriptServer { listening, state })
    }

    /// `http://127.0.0.1:PORT`, or `https://` over TLS.
    pub fn url(&self) -> String {
        self.listening.url()
    }

    /// The requests played and the paths they came on.
    pub fn seen(&self) -> (u64, usize) {
        let logs = self.state.logs();
        (logs.requests, logs.paths.len())
    }

    /// Stops accepting, lets the requests being answered finish (for up to two seconds),
    /// and closes every connection.
    pub async fn stop(self) {
        self.listening.stop().await;
    }
}

/// Why a connection was closed with no answer.
#[derive(Debug)]
struct Reset;

impl std::fmt::Display for Reset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the script says: reset")
    }
}

impl std::error::Error for Reset {}

async fn answer(req: Request<Incoming>, state: Arc<State>) -> Result<Response<Answer>, Reset> {
    let path = req.uri().path().to_string();
    if let Some(rest) = path.strip_prefix(LOG_PREFIX) {
        if rest.starts_with('/') {
            return Ok(log_of(&state, rest));
        }
    }
    let Some(events) = state.script.case_of(&path) else {
        return Ok(json(
            StatusCode::NOT_FOUND,
            serde_json::json!({"ok": false, "detail": "no case of the script ends this path"}),
        ));
    };
    let (parts, body) = req.into_parts();
    // The body is read first: a request that cannot send it is not one the server received.
    if Limited::new(body, MAX_BODY).collect().await.is_err() {
        return Ok(json(
            StatusCode::PAYLOAD_TOO_LARGE,
            serde_json::json!({"ok": false, "detail": "the body is too large"}),
        ));
    }
    let entry = Entry {
        method: parts.method.as_str().to_string(),
        key: parts
            .headers
            .get(KEY_HEADER)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
    };
    let Some(n) = state.logs().arrive(&path, entry) else {
        return Ok(json(
            StatusCode::INSUFFICIENT_STORAGE,
            serde_json::json!({"ok": false, "detail": "the server keeps no more paths"}),
        ));
    };
    let last = events.len() - 1;
    let event = &events[usize::try_from(n).unwrap_or(last).min(last)];
    let status = StatusCode::from_u16(event.status).unwrap_or(StatusCode::OK);
    let mut response = match event.kind {
        Kind::Reset => return Err(Reset),
        Kind::Answer => {
            let body = serde_json::json!({"request": n, "status": event.status}).to_string();
            let mut r = Response::new(Answer::Whole(Some(Bytes::from(body))));
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            r
        }
        Kind::Cut => {
            let mut r = Response::new(Answer::Cut(Cut::Bytes));
            r.headers_mut()
                .insert(CONTENT_LENGTH, HeaderValue::from(CUT_LENGTH));
            r
        }
    };
    *response.status_mut() = status;
    for (name, value) in event.headers_at(SystemTime::now()) {
        response.headers_mut().insert(name, value);
    }
    Ok(response)
}

/// `GET /__script/log/<path>`: what the server saw on `/<path>`.
fn log_of(state: &State, path: &str) -> Response<Answer> {
    let logs = state.logs();
    let (entries, dropped) = logs
        .paths
        .get(path)
        .map_or((&[][..], 0), |p| (p.log.as_slice(), p.dropped));
    let body = serde_json::to_vec(entries).unwrap_or_default();
    let mut r = Response::new(Answer::Whole(Some(Bytes::from(body))));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if dropped > 0 {
        r.headers_mut()
            .insert("x-recuo-log-dropped", HeaderValue::from(dropped));
    }
    r
}

fn json(status: StatusCode, body: Value) -> Response<Answer> {
    let mut r = Response::new(Answer::Whole(Some(Bytes::from(body.to_string()))));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// An answer's body: whole, or cut short.
#[derive(Debug)]
enum Answer {
    Whole(Option<Bytes>),
    Cut(Cut),
}

/// Where a cut body is.
#[derive(Debug)]
enum Cut {
    /// Its bytes are next.
    Bytes,
    /// They were sent: a pause, so they leave, then the failure that closes the connection.
    Pause(Pin<Box<tokio::time::Sleep>>),
}

/// An empty body (a preflight's).
impl Default for Answer {
    fn default() -> Self {
        Answer::Whole(None)
    }
}

impl Body for Answer {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            Answer::Whole(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Answer::Cut(cut) => match cut {
                Cut::Bytes => {
                    *cut = Cut::Pause(Box::pin(tokio::time::sleep(CUT_PAUSE)));
                    Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(CUT_BODY)))))
                }
                Cut::Pause(sleep) => match sleep.as_mut().poll(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(()) => Poll::Ready(Some(Err("the script says: cut".into()))),
                },
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Answer::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Answer::Whole(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Answer::Cut(_) => SizeHint::with_exact(CUT_LENGTH),
        }
    }
}

/// Runs `recuo serve --script`: plays `path`'s cases until Ctrl-C, SIGTERM or
/// `--stop-after`; over TLS with `tls`, whose CA's certificate is the file `ca`.
///
/// # Errors
/// [`CliError::Usage`] for a script that cannot be played; [`CliError::Run`] when the port
/// cannot be bound.
pub fn run(
    path: &Path,
    port: u16,
    stop_after: Option<Duration>,
    (tls, cors): (Option<Arc<rustls::ServerConfig>>, Cors),
    ca: Option<&Path>,
    rt: &tokio::runtime::Runtime,
) -> Result<(), CliError> {
    let script = Script::load(path)?;
    rt.block_on(async {
        let server = ScriptServer::start(script, port, tls, cors)
            .await
            .map_err(|e| binding(port, e))?;
        let why = announce_and_wait(&server.url(), ca, stop_after).await;
        let (requests, paths) = server.seen();
        server.stop().await;
        eprintln!(
            "recuo serve --script: stopped ({why}) after {requests} requests on {paths} paths"
        );
        Ok::<(), CliError>(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    const SCRIPT: &str = r#"{"requests": [
        {"id": "a", "script": [{"status": 503, "headers": {"Retry-After": "0"}}, {"status": 200}]},
        {"id": "cut", "script": [{"status": 200, "cut": true}]},
        {"id": "reset", "script": [{"reset": true}, {"status": 201}]},
        {"id": "date", "script": [{"status": 429, "headers": {"Date": "{date+3600}", "Retry-After": "{date+3600}", "X-Was": "at {date-60}!"}}]}
    ]}"#;

    /// Sends `request` on a new connection and reads until the server closes it.
    async fn raw(url: &str, request: &str) -> String {
        let addr = url.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut got = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut got)).await;
        String::from_utf8_lossy(&got).into_owned()
    }

    /// A server playing [`SCRIPT`] on a free port, and its URL.
    async fn started() -> (ScriptServer, String) {
        let s = ScriptServer::start(Script::parse(SCRIPT).unwrap(), 0, None, Cors::None)
            .await
            .unwrap();
        let url = s.url();
        (s, url)
    }

    fn get(path: &str, key: Option<&str>) -> String {
        let key = key.map_or(String::new(), |k| format!("Idempotency-Key: {k}\r\n"));
        format!("GET {path} HTTP/1.1\r\nHost: x\r\n{key}Connection: close\r\n\r\n")
    }

    #[tokio::test]
    async fn plays_each_paths_script_and_logs_it() {
        let (s, url) = started().await;
        let first = raw(&url, &get("/p/a", Some("k-1"))).await;
        assert!(
            first.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
            "{first}"
        );
        assert!(first.contains("\r\nretry-after: 0\r\n"), "{first}");
        // Another path has its own counter.
        assert!(raw(&url, &get("/q/a", None))
            .await
            .starts_with("HTTP/1.1 503 "));
        for _ in 0..2 {
            let later = raw(&url, &get("/p/a", None)).await;
            assert!(later.starts_with("HTTP/1.1 200 OK\r\n"), "{later}");
        }
        let post =
            "POST /p/a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc";
        assert!(raw(&url, post).await.starts_with("HTTP/1.1 200 OK\r\n"));
        let log = raw(&url, &get("/__script/log/p/a", None)).await;
        let body = log.split("\r\n\r\n").nth(1).unwrap();
        assert_eq!(
            body,
            r#"[{"method":"GET","key":"k-1"},{"method":"GET","key":null},{"method":"GET","key":null},{"method":"POST","key":null}]"#
        );
        let none = raw(&url, &get("/__script/log/never/a", None)).await;
        assert!(none.ends_with("\r\n\r\n[]"), "{none}");
        let missing = raw(&url, &get("/p/nothing", None)).await;
        assert!(
            missing.starts_with("HTTP/1.1 404 Not Found\r\n"),
            "{missing}"
        );
        assert_eq!(s.seen(), (5, 2));
        s.stop().await;
    }

    #[tokio::test]
    async fn cuts_resets_and_dates() {
        let (s, url) = started().await;
        let cut = raw(&url, &get("/t/cut", None)).await;
        assert!(cut.starts_with("HTTP/1.1 200 OK\r\n"), "{cut}");
        assert!(cut.contains("\r\ncontent-length: 1000\r\n"), "{cut}");
        assert!(cut.ends_with("\r\n\r\n0123456789"), "{cut}");
        assert_eq!(raw(&url, &get("/t/reset", None)).await, "");
        assert!(raw(&url, &get("/t/reset", None))
            .await
            .starts_with("HTTP/1.1 201 "));
        let date = raw(&url, &get("/t/date", None)).await;
        let header = |name: &str| {
            date.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}: ")))
                .unwrap_or_else(|| panic!("{name} in {date}"))
                .to_string()
        };
        let now = SystemTime::now();
        let at = |v: &str| httpdate::parse_http_date(v).unwrap();
        let ahead = at(&header("date")).duration_since(now).unwrap().as_secs();
        assert!((3598..=3600).contains(&ahead), "{ahead}");
        assert_eq!(header("retry-after"), header("date"));
        let was = header("x-was");
        let back = at(was.trim_start_matches("at ").trim_end_matches('!'));
        let behind = now.duration_since(back).unwrap().as_secs();
        assert!((59..=61).contains(&behind), "{behind}");
        s.stop().await;
    }

    #[test]
    fn bad_scripts_are_refused_saying_where() {
        let err = |text: &str| Script::parse(text).unwrap_err();
        assert!(err("[").starts_with("not JSON"));
        assert_eq!(err("{}"), "no \"requests\" array of cases");
        assert_eq!(err(r#"{"requests": []}"#), "no case in \"requests\"");
        assert_eq!(
            err(r#"{"requests": [{"id": "a/b", "script": [{"status": 200}]}]}"#),
            "requests[0]: the id \"a/b\" must be letters, digits, '-', '.', '_' or '~'"
        );
        assert_eq!(
            err(r#"{"requests": [{"id": "a", "script": []}]}"#),
            "requests[0] (a): a script has 1 to 1000 events"
        );
        assert_eq!(
            err(r#"{"requests": [{"id": "a", "script": [{"status": 700}]}]}"#),
            "requests[0] (a): script[0]: \"status\" is a number from 200 to 599 (or the event is \"reset\": true)"
        );
        assert_eq!(
            err(r#"{"requests": [{"id": "a", "script": [{"reset": true, "status": 200}]}]}"#),
            "requests[0] (a): script[0]: a reset has nothing beside \"reset\": true"
        );
        assert_eq!(
            err(r#"{"requests": [{"id": "a", "script": [{"status": 200, "reest": true}]}]}"#),
            "requests[0] (a): script[0]: unknown field \"reest\" (an event has status, headers, cut or reset)"
        );
        assert_eq!(
            err(
                r#"{"requests": [{"id": "a", "script": [{"status": 200, "headers": {"Date": "{date+x}"}}]}]}"#
            ),
            "requests[0] (a): script[0]: Date: write {date}, {date+N} or {date-N} (N in seconds)"
        );
        assert_eq!(
            err(
                r#"{"requests": [{"id": "a", "script": [{"status": 200, "headers": {"Content-Length": "5"}}]}]}"#
            ),
            "requests[0] (a): script[0]: Content-Length is the server's to set"
        );
        assert_eq!(
            err(
                r#"{"requests": [{"id": "a", "script": [{"status": 200}]}, {"id": "a", "script": [{"status": 200}]}]}"#
            ),
            "requests[1] (a): a second case with this id"
        );
    }

    #[test]
    fn the_shared_vectors_load() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/http.json");
        let script = Script::load(&path).unwrap();
        assert_eq!(
            script
                .case_of("/x/a-get-whose-connection-drops-is-retried")
                .map(|e| e[0].kind.clone()),
            Some(Kind::Reset)
        );
    }

    #[test]
    fn logs_are_bounded() {
        let mut logs = Logs::default();
        let entry = || Entry {
            method: "GET".into(),
            key: None,
        };
        for i in 0..LOG_PER_PATH as u64 + 5 {
            assert_eq!(logs.arrive("/p", entry()), Some(i));
        }
        assert_eq!(logs.paths["/p"].log.len(), LOG_PER_PATH);
        assert_eq!(logs.paths["/p"].dropped, 5);
        for i in 1..MAX_PATHS {
            assert_eq!(logs.arrive(&format!("/{i}"), entry()), Some(0));
        }
        assert_eq!(logs.arrive("/one-more", entry()), None);
        assert_eq!(logs.arrive("/p", entry()), Some(LOG_PER_PATH as u64 + 5));
    }
}
