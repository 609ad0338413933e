//! One connection to one Redis server, bounded as a client facing a stranger must be.
//!
//! The `redis` crate parses the URL (`redis://` and `rediss://`, ACL users, the database),
//! encodes every command and parses every reply (its `Parser`): no RESP is written or read
//! here. What this module adds is the transport the crate's own sync connection lacks:
//!
//! - a **deadline per call** — connecting, the TLS handshake, `AUTH`, `SELECT`, the command
//!   and its reply all end by it, because every socket read and write is given only the time
//!   left (a per-read timeout alone lets a server that trickles a byte at a time hold a call
//!   for ever);
//! - **replies bounded in size**: the parser is fed at most [`MAX_REPLY`] bytes per reply;
//! - TLS through rustls on `ring`, the workspace's one crypto provider, with the system's
//!   roots (`SSL_CERT_FILE` / `SSL_CERT_DIR` name others);
//! - errors that name the server and never the password.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use recuo::SharedError;
use redis::{ConnectionAddr, IntoConnectionInfo, ServerErrorKind, Value};

/// The most bytes one reply may take.
pub const MAX_REPLY: usize = 4 << 20;
/// How many bytes of a server's error an error message quotes.
const QUOTE: usize = 48;
/// Each call — connecting, authenticating, the command and its reply — ends within this.
pub const DEADLINE: Duration = Duration::from_secs(5);
/// The least time a call is given when a caller's timeout or an operation's deadline cuts it
/// shorter than [`DEADLINE`]: a round trip's worth.
pub const SHORTEST_CALL: Duration = Duration::from_millis(100);

/// Where and how to reach the server.
#[derive(Clone)]
pub(crate) struct Target {
    host: String,
    port: u16,
    tls: bool,
    user: Option<String>,
    password: Option<String>,
    db: i64,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("addr", &self.addr())
            .field("tls", &self.tls)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "[redacted]"))
            .field("db", &self.db)
            .finish()
    }
}

pub(crate) fn io(msg: impl Into<String>) -> SharedError {
    SharedError::Io(std::io::Error::other(msg.into()))
}

impl Target {
    /// `redis://[[user]:password@]host[:port][/db]`, `rediss://…` (TLS) or `host:port`.
    pub(crate) fn parse(url: &str) -> Result<Self, SharedError> {
        let url = if url.contains("://") {
            url.to_owned()
        } else {
            format!("redis://{url}")
        };
        let scheme = url.split("://").next().unwrap_or("");
        if scheme != "redis" && scheme != "rediss" {
            return Err(io(format!(
                "the Redis URL's scheme {scheme:?} is not redis:// or rediss://"
            )));
        }
        if url
            .split("://")
            .nth(1)
            .is_none_or(|rest| rest.is_empty() || rest.starts_with('/'))
        {
            return Err(io("the Redis URL names no host"));
        }
        // The crate's own message never quotes the URL (nor its password).
        let info = url.as_str().into_connection_info().map_err(|e| {
            io(format!(
                "the Redis URL is not valid: {}",
                e.detail().unwrap_or("could not parse")
            ))
        })?;
        let (host, port, tls) = match info.addr() {
            ConnectionAddr::Tcp(h, p) => (h.clone(), *p, false),
            ConnectionAddr::TcpTls { host, port, .. } => (host.clone(), *port, true),
            _ => return Err(io("the Redis URL names no TCP host")),
        };
        if host.is_empty() {
            return Err(io("the Redis URL names no host"));
        }
        let r = info.redis_settings();
        Ok(Target {
            db: r.db(),
            ..Self::seed(
                &host,
                port,
                tls,
                r.username().map(str::to_owned),
                r.password().map(str::to_owned).filter(|p| !p.is_empty()),
            )
        })
    }

    /// A node of a cluster: `host:port` reached with the seeds' TLS setting and login.
    pub(crate) fn node(&self, host: &str, port: u16) -> Self {
        Self::seed(
            host,
            port,
            self.tls,
            self.user.clone(),
            self.password.clone(),
        )
    }

    /// A server at `host:port` (brackets around an IPv6 address dropped), database 0: a
    /// cluster's seed as [`crate::cluster`] parsed it.
    pub(crate) fn seed(
        host: &str,
        port: u16,
        tls: bool,
        user: Option<String>,
        password: Option<String>,
    ) -> Self {
        Target {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port,
            tls,
            user,
            password,
            db: 0,
        }
    }

    /// The host name or address, without brackets.
    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    /// `host:port` (`[v6]:port`).
    pub(crate) fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// A TCP socket whose every read and write ends by the call's deadline.
struct Socket {
    tcp: TcpStream,
    deadline: Instant,
}

fn timed_out() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "no complete answer within the call's deadline",
    )
}

impl Socket {
    fn left(&self) -> std::io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(timed_out())
        } else {
            Ok(left)
        }
    }

    fn timed<T>(r: std::io::Result<T>) -> std::io::Result<T> {
        r.map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => timed_out(),
            _ => e,
        })
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.tcp.set_read_timeout(Some(self.left()?))?;
        Self::timed(self.tcp.read(buf))
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tcp.set_write_timeout(Some(self.left()?))?;
        Self::timed(self.tcp.write(buf))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.tcp.flush()
    }
}

enum Transport {
    Plain(Socket),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, Socket>>),
}

impl Transport {
    fn socket(&mut self) -> &mut Socket {
        match self {
            Transport::Plain(s) => s,
            Transport::Tls(t) => &mut t.sock,
        }
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read(buf),
            Transport::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(t) => t.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(t) => t.flush(),
        }
    }
}

/// Feeds the parser at most `left` more bytes of one reply.
struct Capped<'a> {
    inner: &'a mut Transport,
    left: usize,
    /// The transport's own error, if reading failed (clearer than the parser's wrapping).
    failed: Option<(std::io::ErrorKind, String)>,
}

impl Read for Capped<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            let text = format!("a reply longer than {MAX_REPLY} bytes (refused)");
            self.failed = Some((std::io::ErrorKind::InvalidData, text.clone()));
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, text));
        }
        let n = buf.len().min(self.left);
        match self.inner.read(&mut buf[..n]) {
            Ok(0) => {
                self.failed = Some((
                    std::io::ErrorKind::UnexpectedEof,
                    "the server closed the connection".to_owned(),
                ));
                Ok(0)
            }
            Ok(got) => {
                self.left -= got;
                Ok(got)
            }
            Err(e) => {
                self.failed = Some((e.kind(), e.to_string()));
                Err(e)
            }
        }
    }
}

struct Conn {
    transport: Transport,
    parser: redis::Parser,
}

impl Conn {
    fn round_trip(&mut self, cmd: &redis::Cmd, deadline: Instant) -> Result<Value, SharedError> {
        self.round_trip_asking(cmd, deadline, false)
    }

    /// `cmd`'s reply; after `ASKING` in the same write when `asking`.
    fn round_trip_asking(
        &mut self,
        cmd: &redis::Cmd,
        deadline: Instant,
        asking: bool,
    ) -> Result<Value, SharedError> {
        self.transport.socket().deadline = deadline;
        let mut packed = if asking {
            redis::cmd("ASKING").get_packed_command()
        } else {
            Vec::new()
        };
        packed.extend_from_slice(&cmd.get_packed_command());
        self.transport
            .write_all(&packed)
            .and_then(|()| self.transport.flush())
            .map_err(wire)?;
        if asking {
            expect_ok(self.read_reply()?)?;
        }
        self.read_reply()
    }

    fn read_reply(&mut self) -> Result<Value, SharedError> {
        let mut capped = Capped {
            inner: &mut self.transport,
            left: MAX_REPLY,
            failed: None,
        };
        let parsed = self.parser.parse_value(&mut capped);
        let failed = capped.failed.take();
        parsed.map_err(|e| match failed {
            Some((kind, text)) => SharedError::Io(std::io::Error::new(kind, text)),
            None => io(format!("bad reply: {}", short(&e.to_string()))),
        })
    }
}

fn wire(e: std::io::Error) -> SharedError {
    if e.kind() == std::io::ErrorKind::TimedOut {
        SharedError::Io(timed_out())
    } else {
        SharedError::Io(e)
    }
}

/// At most [`QUOTE`] bytes of `text`, escaped and quoted, URLs in it redacted.
fn short(text: &str) -> String {
    let mut end = text.len().min(QUOTE);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text_cut = recuo::redact::redact_urls_in(&text[..end]);
    let escaped: String = text_cut.escape_debug().collect();
    let shown: String = escaped.chars().take(2 * QUOTE).collect();
    let more = if end < text.len() || shown.len() < escaped.len() {
        "…"
    } else {
        ""
    };
    format!("\"{shown}{more}\"")
}

/// A server's error reply, quoted short.
fn server_error(e: &redis::ServerError) -> SharedError {
    let text = match e.details() {
        Some(d) => format!("{} {d}", e.code()),
        None => e.code().to_owned(),
    };
    io(format!("error {}", short(&text)))
}

fn tls_config() -> Result<Arc<rustls::ClientConfig>, SharedError> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                let _ = roots.add(cert);
            }
            if roots.is_empty() {
                return Err("no trusted root certificates (set SSL_CERT_FILE)".to_owned());
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map(|b| Arc::new(b.with_root_certificates(roots).with_no_client_auth()))
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(io)
}

/// A server's answer: a value, `NOSCRIPT`, or a cluster node's word on where to go.
pub(crate) enum Answer {
    Value(Value),
    NoScript,
    /// `MOVED slot host:port`: the slot lives on that node now.
    Moved {
        slot: u16,
        addr: String,
    },
    /// `ASK slot host:port`: this one call goes to that node, after `ASKING`.
    Ask {
        addr: String,
    },
    /// `TRYAGAIN`, `CLUSTERDOWN`, `MASTERDOWN` or `LOADING`: the node cannot serve the call
    /// now (a failover or a resharding under way); the error says which.
    Busy(SharedError),
}

/// `slot host:port` of a `MOVED` or `ASK` error, when well formed.
fn redirect(details: Option<&str>) -> Option<(u16, String)> {
    let mut words = details?.split_ascii_whitespace();
    let slot: u16 = words.next()?.parse().ok().filter(|s| *s < 16384)?;
    let addr = words.next()?;
    (words.next().is_none() && addr.len() <= 300 && addr.rsplit_once(':').is_some())
        .then(|| (slot, addr.to_owned()))
}

/// How many idle connections a client keeps for the next calls.
const MAX_IDLE: usize = 16;

/// Connections to one server: each call takes an idle one (or opens one) for itself, so that
/// threads sharing the client never wait for each other's calls — each call ends by its own
/// deadline however many run at once. A connection goes back to the idle ones only after a
/// call that succeeded.
pub(crate) struct Client {
    target: Target,
    deadline: Duration,
    /// Connecting takes at most the time left divided by this: 1 for one server; 2 for a
    /// cluster's node, so that a node gone without a word leaves the call time to ask another.
    connect_share: u32,
    idle: Mutex<Vec<Conn>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("target", &self.target)
            .finish()
    }
}

impl Client {
    pub(crate) fn new(url: &str, deadline: Duration) -> Result<Self, SharedError> {
        Ok(Self::to(Target::parse(url)?, deadline))
    }

    /// A client of a cluster's node (see `connect_share`).
    pub(crate) fn to_node(target: Target, deadline: Duration) -> Self {
        Client {
            connect_share: 2,
            ..Self::to(target, deadline)
        }
    }

    pub(crate) fn to(target: Target, deadline: Duration) -> Self {
        Client {
            target,
            deadline,
            connect_share: 1,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// How long a call may take at most.
    pub(crate) fn own_deadline(&self) -> Duration {
        self.deadline
    }

    fn connect(&self, deadline: Instant) -> Result<Conn, SharedError> {
        let addr = resolve(&self.target.host, self.target.port, deadline)?;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(SharedError::Io(timed_out()));
        }
        let connect_for = (left / self.connect_share).max(SHORTEST_CALL).min(left);
        let tcp = TcpStream::connect_timeout(&addr, connect_for).map_err(wire)?;
        let _ = tcp.set_nodelay(true);
        let socket = Socket { tcp, deadline };
        let transport = if self.target.tls {
            let name = rustls::pki_types::ServerName::try_from(self.target.host.clone())
                .map_err(|e| io(format!("TLS: {e}")))?;
            let tls = rustls::ClientConnection::new(tls_config()?, name)
                .map_err(|e| io(format!("TLS: {e}")))?;
            Transport::Tls(Box::new(rustls::StreamOwned::new(tls, socket)))
        } else {
            Transport::Plain(socket)
        };
        let mut conn = Conn {
            transport,
            parser: redis::Parser::new(),
        };
        if let Some(pw) = &self.target.password {
            let mut auth = redis::cmd("AUTH");
            if let Some(user) = &self.target.user {
                auth.arg(user);
            }
            auth.arg(pw);
            expect_ok(conn.round_trip(&auth, deadline)?)?;
        }
        if self.target.db != 0 {
            expect_ok(conn.round_trip(redis::cmd("SELECT").arg(self.target.db), deadline)?)?;
        }
        Ok(conn)
    }

    /// Runs `cmd` by the client's deadline.
    pub(crate) fn call(&self, cmd: &redis::Cmd) -> Result<Answer, SharedError> {
        self.call_by(cmd, call_deadline(self.deadline, None))
    }

    /// Runs `cmd`, reconnecting once if an idle connection kept from an earlier call turns
    /// out to be lost; the whole call — waiting for nobody, connecting, the command and its
    /// reply — ends by `deadline`.
    pub(crate) fn call_by(
        &self,
        cmd: &redis::Cmd,
        deadline: Instant,
    ) -> Result<Answer, SharedError> {
        self.call_asking(cmd, deadline, false)
    }

    /// [`call_by`](Self::call_by), after `ASKING` on the same connection when `asking` (a
    /// cluster node's `ASK` redirect).
    pub(crate) fn call_asking(
        &self,
        cmd: &redis::Cmd,
        deadline: Instant,
        asking: bool,
    ) -> Result<Answer, SharedError> {
        let kept = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let result = (|| {
            if let Some(mut conn) = kept {
                match conn.round_trip_asking(cmd, deadline, asking) {
                    Ok(v) => return Ok((conn, v)),
                    Err(SharedError::Io(e)) if e.kind() == std::io::ErrorKind::TimedOut => {
                        return Err(SharedError::Io(e))
                    }
                    Err(_) => {}
                }
            }
            let mut conn = self.connect(deadline)?;
            let v = conn.round_trip_asking(cmd, deadline, asking)?;
            Ok((conn, v))
        })();
        let result = result.and_then(|(conn, v)| {
            let answer = match v {
                Value::ServerError(e) if e.kind() == Some(ServerErrorKind::NoScript) => {
                    Ok(Answer::NoScript)
                }
                Value::ServerError(e) => match e.kind() {
                    Some(ServerErrorKind::Moved) => Ok(match redirect(e.details()) {
                        Some((slot, addr)) => Answer::Moved { slot, addr },
                        None => Answer::Busy(self.scrubbed(server_error(&e))),
                    }),
                    Some(ServerErrorKind::Ask) => Ok(match redirect(e.details()) {
                        Some((_, addr)) => Answer::Ask { addr },
                        None => Answer::Busy(self.scrubbed(server_error(&e))),
                    }),
                    Some(
                        ServerErrorKind::TryAgain
                        | ServerErrorKind::ClusterDown
                        | ServerErrorKind::MasterDown
                        | ServerErrorKind::ReadOnly
                        | ServerErrorKind::BusyLoading,
                    ) => Ok(Answer::Busy(self.scrubbed(server_error(&e)))),
                    _ => Err(server_error(&e)),
                },
                v => Ok(Answer::Value(v)),
            };
            if matches!(answer, Ok(Answer::Value(_) | Answer::NoScript)) {
                let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
                if idle.len() < MAX_IDLE {
                    idle.push(conn);
                }
            }
            answer
        });
        result.map_err(|e| self.scrubbed(e))
    }

    /// The value of `answer`, or the error a client of this one server gives for any other
    /// answer (a cluster node's redirect says how to name the cluster).
    pub(crate) fn value(&self, answer: Answer) -> Result<Value, SharedError> {
        match answer {
            Answer::Value(v) => Ok(v),
            Answer::NoScript => Err(self.scrubbed(io("unexpected NOSCRIPT"))),
            Answer::Moved { .. } | Answer::Ask { .. } => Err(self.scrubbed(io(
                "the server is a Redis Cluster node and redirected the call: name the \
                 cluster by a redis+cluster://host:port,host:port/ URL (or rediss+cluster:// \
                 for TLS)",
            ))),
            Answer::Busy(e) => Err(e),
        }
    }

    /// `e` naming the server, and never quoting the password (a server may echo it).
    fn scrubbed(&self, e: SharedError) -> SharedError {
        let SharedError::Io(inner) = e else { return e };
        let mut text = inner.to_string();
        if let Some(pw) = self.target.password.as_deref() {
            text = text.replace(pw, recuo::redact::REDACTED);
            let escaped: String = pw.escape_debug().collect();
            text = text.replace(&escaped, recuo::redact::REDACTED);
        }
        let tls = if self.target.tls { " (TLS)" } else { "" };
        SharedError::Io(std::io::Error::new(
            inner.kind(),
            format!("Redis at {}{tls}: {text}", self.target.addr()),
        ))
    }
}

/// The deadline of a call starting now: `own` from now, cut shorter by `until` — but never
/// below [`SHORTEST_CALL`] from now, so that a caller with no time left (a `try_acquire`, a
/// timeout of 0) still gets the server's word when the server answers.
pub(crate) fn call_deadline(own: Duration, until: Option<Instant>) -> Instant {
    let now = Instant::now();
    let own = later(now, own);
    until.map_or(own, |u| u.max(now + SHORTEST_CALL).min(own))
}

/// The address of `host:port` by `deadline`: an IP address as it is; a name looked up on a
/// thread of its own, waited for only until the deadline (the system's resolver has no
/// timeout of ours; a lookup that hangs costs its thread, never the call).
fn resolve(host: &str, port: u16, deadline: Instant) -> Result<SocketAddr, SharedError> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let name = host.to_owned();
    std::thread::Builder::new()
        .name("recuo-redis-dns".to_owned())
        .spawn(move || {
            let _ = tx.send(
                (name.as_str(), port)
                    .to_socket_addrs()
                    .map(|mut a| a.next()),
            );
        })
        .map_err(SharedError::Io)?;
    let left = deadline.saturating_duration_since(Instant::now());
    match rx.recv_timeout(left) {
        Ok(Ok(Some(addr))) => Ok(addr),
        Ok(Ok(None)) => Err(io(format!("no address for {host:?}"))),
        Ok(Err(e)) => Err(SharedError::Io(e)),
        Err(_) => Err(SharedError::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the server's name was not looked up within the call's deadline",
        ))),
    }
}

/// `now + by`, or a year from now when `by` is too long to add.
pub(crate) fn later(now: Instant, by: Duration) -> Instant {
    now.checked_add(by)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 86_400))
}

/// Whether `e` says the call's time ran out on this server (it may be gone without a word: a
/// cluster reads its slot map again before the next call).
pub(crate) fn is_timeout(e: &SharedError) -> bool {
    matches!(e, SharedError::Io(e) if e.kind() == std::io::ErrorKind::TimedOut)
}

/// Whether `e` says the server was not reached or the connection was lost (and not that the
/// call's time ran out): a cluster client asks another node, or the same after a failover.
pub(crate) fn is_lost(e: &SharedError) -> bool {
    use std::io::ErrorKind as K;
    matches!(e, SharedError::Io(e) if matches!(
        e.kind(),
        K::ConnectionRefused
            | K::ConnectionReset
            | K::ConnectionAborted
            | K::NotConnected
            | K::BrokenPipe
            | K::UnexpectedEof
            | K::AddrNotAvailable
            | K::HostUnreachable
            | K::NetworkUnreachable
    ))
}

fn expect_ok(v: Value) -> Result<(), SharedError> {
    match v {
        Value::Okay => Ok(()),
        Value::ServerError(e) => Err(server_error(&e)),
        other => Err(io(format!(
            "unexpected reply {}",
            short(&format!("{other:?}"))
        ))),
    }
}

/// Reads `data` as a server's replies through the same parser and cap as a connection: the
/// number of replies, or the first error's text. Never panics.
#[doc(hidden)]
pub fn replay_replies(data: &[u8]) -> Result<usize, String> {
    let mut parser = redis::Parser::new();
    let mut rest = data;
    let mut count = 0;
    while !rest.is_empty() {
        let mut capped = (&mut rest).take(MAX_REPLY as u64);
        match parser.parse_value(&mut capped) {
            Ok(_) => count += 1,
            Err(e) => return Err(short(&e.to_string())),
        }
    }
    Ok(count)
}
