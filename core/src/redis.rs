//! A regulator shared between machines through Redis (SPEC §9): GCRA in one Lua script, so
//! every check-and-set is atomic on the server, timed by the server's clock. A minimal RESP
//! client over a TCP stream — no dependency beyond the standard library, and bounded as a
//! client facing a stranger must be: every call ends by a deadline (not each read), a reply
//! line, a bulk string, an array and a whole reply each have a size cap, and an error quotes
//! at most a short, redacted prefix of what the server sent. `rediss://` is refused until
//! TLS exists (the password would leave in plain text).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::shm::SharedError;

/// GCRA on the server, in microseconds (Lua numbers are doubles: exact to 2^53 µs).
/// KEYS[1]: the arrival-time key. ARGV: interval_us, burst, cost, max_wait_us, now_us ('' =
/// the server's TIME). Answers {1, wait_us} when reserved, {0, wait_us} when not.
const GCRA: &str = r"
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local max_wait = tonumber(ARGV[4])
local now
if ARGV[5] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[5])
end
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local nxt = tat + interval * cost
local wait = nxt - interval * burst - now
if wait < 0 then wait = 0 end
if wait > max_wait then return {0, tostring(wait)} end
local ttl = math.ceil((nxt - now) / 1000) + 1000
redis.call('SET', KEYS[1], string.format('%.0f', nxt), 'PX', ttl)
return {1, tostring(wait)}
";

/// Records the settings on first use and answers the settings in force.
/// KEYS[1]: the settings hash. ARGV: interval_us, burst.
const SETTINGS: &str = r"
local cur = redis.call('HMGET', KEYS[1], 'interval_us', 'burst')
if not cur[1] then
  redis.call('HSET', KEYS[1], 'interval_us', ARGV[1], 'burst', ARGV[2])
  return {ARGV[1], ARGV[2]}
end
return cur
";

/// A reply from the server.
#[derive(Debug, PartialEq)]
enum Reply {
    Status(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

/// The longest reply line (a status, an error, a number or a length) read, in bytes.
const MAX_LINE: usize = 4096;
/// The longest bulk string read, in bytes.
const MAX_BULK: usize = 1 << 20;
/// The most bytes one whole reply may take, nested arrays included.
const MAX_REPLY: usize = 4 << 20;
/// The most elements of one array.
const MAX_ITEMS: usize = 1024;
/// How deep arrays may nest.
const MAX_DEPTH: u32 = 8;
/// How many bytes of a reply an error message quotes.
const QUOTE: usize = 48;
/// Each call — connecting, authenticating, the command and its reply — ends within this.
const DEADLINE: Duration = Duration::from_secs(5);

/// Where and how to reach the server: `redis://[[user]:password@]host[:port][/db]` or
/// `host:port`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Target {
    addr: String,
    user: Option<String>,
    password: Option<String>,
    db: u32,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("addr", &self.addr)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "[redacted]"))
            .field("db", &self.db)
            .finish()
    }
}

fn io(msg: impl Into<String>) -> SharedError {
    SharedError::Io(std::io::Error::other(msg.into()))
}

/// `%XX` escapes decoded (a password holding `@` or `:` is written `%40`, `%3A` in a URL).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |j: usize| b.get(j).and_then(|c| char::from(*c).to_digit(16));
        if b[i] == b'%' {
            if let (Some(hi), Some(lo)) = (hex(i + 1), hex(i + 2)) {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Target {
    pub(crate) fn parse(url: &str) -> Result<Self, SharedError> {
        let rest = if let Some(rest) = url.strip_prefix("redis://") {
            rest
        } else if url.starts_with("rediss://") {
            return Err(io(
                "rediss:// (Redis over TLS) is not supported yet: recuo would send the password \
                 in plain text; reach the server through a TLS tunnel and give its redis:// URL",
            ));
        } else if let Some((scheme, _)) = url.split_once("://") {
            let scheme: String = scheme.chars().take(16).collect();
            return Err(io(format!(
                "the Redis URL's scheme {scheme:?} is not redis:// (the only one supported)"
            )));
        } else {
            url
        };
        let (auth, rest) = match rest.rsplit_once('@') {
            Some((a, r)) => (Some(a), r),
            None => (None, rest),
        };
        // `user:password`, `:password`, or (as Redis before ACLs) a lone `password`.
        let (user, password) = match auth.map(|a| a.split_once(':')) {
            None => (None, None),
            Some(None) => (None, auth.map(percent_decoded)),
            Some(Some((u, p))) => (
                (!u.is_empty()).then(|| percent_decoded(u)),
                Some(percent_decoded(p)),
            ),
        };
        let (hostport, db) = match rest.split_once('/') {
            Some((h, d)) if !d.is_empty() => (
                h,
                d.parse()
                    .map_err(|_| io(format!("Redis at {h}: the database must be a number")))?,
            ),
            Some((h, _)) => (h, 0),
            None => (rest, 0),
        };
        if hostport.is_empty() {
            return Err(io("the Redis URL names no host"));
        }
        let addr = if hostport.contains(':') {
            hostport.to_string()
        } else {
            format!("{hostport}:6379")
        };
        Ok(Target {
            addr,
            user,
            password,
            db,
        })
    }
}

/// A byte stream whose blocking reads and writes can be bounded (a socket; a slice when
/// fuzzing).
trait Stream: Read + Write {
    /// Makes the next read or write give up after `left`.
    fn bound(&mut self, left: Duration) -> std::io::Result<()>;
}

impl Stream for TcpStream {
    fn bound(&mut self, left: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(left))?;
        self.set_write_timeout(Some(left))
    }
}

/// The instant a call must be over by, and the reply bytes it may still read.
struct Limits {
    deadline: Instant,
    left: usize,
}

impl Limits {
    fn new(deadline: Instant) -> Self {
        Limits {
            deadline,
            left: MAX_REPLY,
        }
    }

    /// Bounds the next blocking operation on `s` by what is left of the deadline.
    fn arm<S: Stream>(&self, s: &mut S) -> Result<(), SharedError> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out());
        }
        s.bound(left).map_err(SharedError::Io)
    }

    /// Counts `n` more bytes of the reply.
    fn spend(&mut self, n: usize) -> Result<(), SharedError> {
        self.left = self.left.checked_sub(n).ok_or_else(|| {
            io(format!(
                "Redis: a reply longer than {MAX_REPLY} bytes (refused)"
            ))
        })?;
        Ok(())
    }
}

fn timed_out() -> SharedError {
    SharedError::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "Redis: no complete answer within the call's deadline",
    ))
}

fn closed() -> SharedError {
    SharedError::Io(std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "Redis closed the connection",
    ))
}

/// Whether `e` says the connection was lost (worth one new connection), not that the server
/// answered something wrong or too late.
fn lost(e: &SharedError) -> bool {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
    matches!(e, SharedError::Io(e) if matches!(e.kind(), BrokenPipe | ConnectionAborted | ConnectionReset | UnexpectedEof))
}

/// A read or write error, with a timeout said as the deadline it is.
fn wire_error(e: std::io::Error) -> SharedError {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => timed_out(),
        _ => SharedError::Io(e),
    }
}

/// At most [`QUOTE`] bytes of `bytes`, escaped, for an error message (and at most twice as
/// many characters once escaped); URLs in it redacted.
fn quote(bytes: &[u8]) -> String {
    let cut = bytes.len().min(QUOTE);
    let text = String::from_utf8_lossy(&bytes[..cut]);
    let text = crate::redact::redact_urls_in(&text);
    let escaped: String = text.escape_debug().collect();
    let shown: String = escaped.chars().take(2 * QUOTE).collect();
    let more = if bytes.len() > cut || shown.len() < escaped.len() {
        "…"
    } else {
        ""
    };
    format!("\"{shown}{more}\"")
}

/// One line, without its `\r\n`: at most [`MAX_LINE`] bytes, read by the deadline.
fn read_line<S: Stream>(
    conn: &mut BufReader<S>,
    limits: &mut Limits,
) -> Result<Vec<u8>, SharedError> {
    let mut line = Vec::new();
    loop {
        limits.arm(conn.get_mut())?;
        let buf = match conn.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(wire_error(e)),
        };
        if buf.is_empty() {
            return Err(closed());
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + take > MAX_LINE + 2 {
            let mut start = line;
            start.extend_from_slice(&buf[..take.min(QUOTE + 1)]);
            return Err(io(format!(
                "Redis: a reply line longer than {MAX_LINE} bytes (refused), starting {}",
                quote(&start)
            )));
        }
        line.extend_from_slice(&buf[..take]);
        conn.consume(take);
        limits.spend(take)?;
        if done {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(line);
        }
    }
}

/// Exactly `buf.len()` bytes, by the deadline.
fn read_exact<S: Stream>(
    conn: &mut BufReader<S>,
    buf: &mut [u8],
    limits: &mut Limits,
) -> Result<(), SharedError> {
    let mut filled = 0;
    while filled < buf.len() {
        limits.arm(conn.get_mut())?;
        match conn.read(&mut buf[filled..]) {
            Ok(0) => return Err(closed()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(wire_error(e)),
        }
    }
    limits.spend(buf.len())
}

/// The decimal integer of a reply line's rest.
fn number(line: &[u8]) -> Result<i64, SharedError> {
    std::str::from_utf8(&line[1..])
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| io(format!("Redis: bad reply {}", quote(line))))
}

fn read_reply<S: Stream>(
    conn: &mut BufReader<S>,
    limits: &mut Limits,
    depth: u32,
) -> Result<Reply, SharedError> {
    if depth > MAX_DEPTH {
        return Err(io("Redis: reply nested too deep"));
    }
    let line = read_line(conn, limits)?;
    match line.first() {
        Some(b'+') => Ok(Reply::Status(String::from_utf8_lossy(&line[1..]).into())),
        Some(b'-') => Err(io(format!("Redis: error {}", quote(&line[1..])))),
        Some(b':') => Ok(Reply::Int(number(&line)?)),
        Some(b'$') => {
            let len = number(&line)?;
            if len < 0 {
                return Ok(Reply::Bulk(None));
            }
            let len = usize::try_from(len)
                .ok()
                .filter(|&n| n <= MAX_BULK)
                .ok_or_else(|| {
                    io(format!(
                        "Redis: a bulk reply of {len} bytes, above the {MAX_BULK} accepted \
                         (refused)"
                    ))
                })?;
            let mut buf = vec![0; len + 2];
            read_exact(conn, &mut buf, limits)?;
            if buf[len..] != *b"\r\n" {
                return Err(io("Redis: a bulk reply that does not end in \\r\\n"));
            }
            buf.truncate(len);
            Ok(Reply::Bulk(Some(buf)))
        }
        Some(b'*') => {
            let n = number(&line)?;
            if n < 0 {
                return Ok(Reply::Array(Vec::new()));
            }
            let n = usize::try_from(n)
                .ok()
                .filter(|&n| n <= MAX_ITEMS)
                .ok_or_else(|| {
                    io(format!(
                        "Redis: an array of {n} elements, above the {MAX_ITEMS} accepted \
                         (refused)"
                    ))
                })?;
            (0..n)
                .map(|_| read_reply(conn, limits, depth + 1))
                .collect::<Result<_, _>>()
                .map(Reply::Array)
        }
        _ => Err(io(format!("Redis: bad reply {}", quote(&line)))),
    }
}

fn write_all<S: Stream>(conn: &mut S, mut req: &[u8], limits: &Limits) -> Result<(), SharedError> {
    while !req.is_empty() {
        limits.arm(conn)?;
        match conn.write(req) {
            Ok(0) => return Err(closed()),
            Ok(n) => req = &req[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(wire_error(e)),
        }
    }
    Ok(())
}

fn round_trip<S: Stream>(
    conn: &mut BufReader<S>,
    args: &[&[u8]],
    deadline: Instant,
) -> Result<Reply, SharedError> {
    let mut req = Vec::with_capacity(64);
    req.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        req.extend_from_slice(a);
        req.extend_from_slice(b"\r\n");
    }
    let mut limits = Limits::new(deadline);
    write_all(conn.get_mut(), &req, &limits)?;
    read_reply(conn, &mut limits, 0)
}

/// One connection, reopened after a failure.
#[derive(Debug)]
pub(crate) struct Connection {
    target: Target,
    deadline: Duration,
    stream: Mutex<Option<BufReader<TcpStream>>>,
}

impl Connection {
    pub(crate) fn new(target: Target) -> Self {
        Self::with_deadline(target, DEADLINE)
    }

    /// A connection whose calls each end within `deadline`.
    fn with_deadline(target: Target, deadline: Duration) -> Self {
        Connection {
            target,
            deadline,
            stream: Mutex::new(None),
        }
    }

    fn connect(&self, deadline: Instant) -> Result<BufReader<TcpStream>, SharedError> {
        let at = |e: &dyn std::fmt::Display| io(format!("Redis at {}: {e}", self.target.addr));
        let addrs: Vec<_> = self
            .target
            .addr
            .to_socket_addrs()
            .map_err(|e| at(&e))?
            .collect();
        let addr = addrs.first().ok_or_else(|| at(&"no address"))?;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out());
        }
        let s = TcpStream::connect_timeout(addr, left).map_err(|e| at(&e))?;
        let _ = s.set_nodelay(true);
        let mut conn = BufReader::new(s);
        if let Some(pw) = &self.target.password {
            let reply = match &self.target.user {
                Some(user) => round_trip(
                    &mut conn,
                    &[b"AUTH", user.as_bytes(), pw.as_bytes()],
                    deadline,
                ),
                None => round_trip(&mut conn, &[b"AUTH", pw.as_bytes()], deadline),
            };
            expect_ok(reply?)?;
        }
        if self.target.db != 0 {
            expect_ok(round_trip(
                &mut conn,
                &[b"SELECT", self.target.db.to_string().as_bytes()],
                deadline,
            )?)?;
        }
        Ok(conn)
    }

    /// Runs a command, reconnecting once if a connection kept from an earlier call turns
    /// out to be lost; the whole call — reconnecting included — ends by the connection's
    /// deadline.
    fn call(&self, args: &[&[u8]]) -> Result<Reply, SharedError> {
        let deadline = Instant::now() + self.deadline;
        let mut guard = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
        let result = (|| {
            if let Some(conn) = guard.as_mut() {
                match round_trip(conn, args, deadline) {
                    Ok(reply) => return Ok(reply),
                    Err(e) if !lost(&e) => return Err(e),
                    Err(_) => {}
                }
            }
            *guard = None;
            let mut conn = self.connect(deadline)?;
            let reply = round_trip(&mut conn, args, deadline)?;
            *guard = Some(conn);
            Ok(reply)
        })();
        if result.is_err() {
            *guard = None;
        }
        result.map_err(|e| self.scrubbed(e))
    }

    /// `e` naming the server, and never quoting the password (a server may echo it).
    fn scrubbed(&self, e: SharedError) -> SharedError {
        let SharedError::Io(inner) = e else { return e };
        let mut text = inner.to_string();
        if let Some(pw) = self.target.password.as_deref().filter(|p| !p.is_empty()) {
            text = text.replace(pw, crate::redact::REDACTED);
            let escaped: String = pw.escape_debug().collect();
            text = text.replace(&escaped, crate::redact::REDACTED);
        }
        if !text.starts_with("Redis at ") {
            let text_without = text.strip_prefix("Redis: ").unwrap_or(&text);
            text = format!("Redis at {}: {text_without}", self.target.addr);
        }
        SharedError::Io(std::io::Error::new(inner.kind(), text))
    }

    /// `EVAL script 1 key args…`, answering an array of integers.
    pub(crate) fn eval_ints(
        &self,
        script: &str,
        key: &str,
        args: &[String],
    ) -> Result<Vec<i64>, SharedError> {
        let mut parts: Vec<&[u8]> = vec![b"EVAL", script.as_bytes(), b"1", key.as_bytes()];
        parts.extend(args.iter().map(String::as_bytes));
        match self.call(&parts)? {
            Reply::Array(items) => items.into_iter().map(int_of).collect(),
            other => Err(io(format!("Redis: unexpected reply {}", shown(&other)))),
        }
    }
}

/// A reply, briefly, for an error message.
fn shown(r: &Reply) -> String {
    match r {
        Reply::Status(s) => format!("status {}", quote(s.as_bytes())),
        Reply::Int(i) => format!("integer {i}"),
        Reply::Bulk(None) => "nil".to_string(),
        Reply::Bulk(Some(b)) => format!("string {}", quote(b)),
        Reply::Array(items) => format!("array of {}", items.len()),
    }
}

fn int_of(r: Reply) -> Result<i64, SharedError> {
    match r {
        Reply::Int(i) => Ok(i),
        Reply::Bulk(Some(b)) => std::str::from_utf8(&b)
            .ok()
            .and_then(|t| t.trim().parse::<f64>().ok())
            .map(|x| x as i64)
            .ok_or_else(|| io(format!("Redis: {} is not a number", quote(&b)))),
        other => Err(io(format!("Redis: unexpected reply {}", shown(&other)))),
    }
}

fn expect_ok(r: Reply) -> Result<(), SharedError> {
    match r {
        Reply::Status(_) => Ok(()),
        other => Err(io(format!("Redis: unexpected reply {}", shown(&other)))),
    }
}

/// The bytes a fuzzer hands in, as a server's stream (writes go nowhere).
#[cfg(feature = "fuzzing")]
struct Replay<'a>(&'a [u8]);

#[cfg(feature = "fuzzing")]
impl Read for Replay<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

#[cfg(feature = "fuzzing")]
impl Write for Replay<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "fuzzing")]
impl Stream for Replay<'_> {
    fn bound(&mut self, _: Duration) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads replies from `data` as if a server had sent them, until it runs out or an error:
/// the text of the error, or `Ok` with the number of replies read.
#[cfg(feature = "fuzzing")]
pub(crate) fn fuzz_replies(data: &[u8]) -> Result<usize, String> {
    let mut conn = BufReader::new(Replay(data));
    let deadline = Instant::now() + DEADLINE;
    let mut count = 0;
    loop {
        if conn.fill_buf().map_or(true, <[u8]>::is_empty) {
            return Ok(count);
        }
        let reply = read_reply(&mut conn, &mut Limits::new(deadline), 0);
        let reply = reply.and_then(|r| match r {
            Reply::Array(items) => items
                .into_iter()
                .map(int_of)
                .collect::<Result<Vec<_>, _>>()
                .map(|_| ()),
            other => expect_ok(other),
        });
        if let Err(e) = reply {
            return Err(e.to_string());
        }
        count += 1;
    }
}

/// The regulator's state on a Redis server.
#[derive(Debug)]
pub(crate) struct RedisGcra {
    conn: Connection,
    key: String,
    interval_us: u64,
    burst: u32,
}

impl RedisGcra {
    /// Connects, and checks (or records) the settings under `key`.
    pub(crate) fn open(
        url: &str,
        key: &str,
        interval_ns: u64,
        burst: u32,
    ) -> Result<Self, SharedError> {
        let conn = Connection::new(Target::parse(url)?);
        let interval_us = (interval_ns / 1000).max(1);
        let found = conn.eval_ints(
            SETTINGS,
            &format!("{key}:settings"),
            &[interval_us.to_string(), burst.to_string()],
        )?;
        if found != [interval_us as i64, i64::from(burst)] {
            return Err(SharedError::Mismatch(format!(
                "the Redis key {key:?} regulates one start every {} µs with a burst of {}; this \
                 process asked for one every {interval_us} µs with a burst of {burst}",
                found.first().copied().unwrap_or(0),
                found.get(1).copied().unwrap_or(0)
            )));
        }
        Ok(RedisGcra {
            conn,
            key: format!("{key}:tat"),
            interval_us,
            burst,
        })
    }

    /// Reserves a start of `cost` if it can go within `max_wait_ns`, at `now_ns` (a time base
    /// the caller shares with every other user of the key) or, with `None`, the server's
    /// clock. `Ok(Ok(wait_ns))` reserved; `Ok(Err(needed_ns))` not.
    pub(crate) fn reserve(
        &self,
        now_ns: Option<u64>,
        cost: u32,
        max_wait_ns: u64,
    ) -> Result<Result<u64, u64>, SharedError> {
        let args = [
            self.interval_us.to_string(),
            self.burst.to_string(),
            cost.to_string(),
            (max_wait_ns / 1000).min(1 << 52).to_string(),
            now_ns.map_or_else(String::new, |n| (n / 1000).to_string()),
        ];
        let r = self.conn.eval_ints(GCRA, &self.key, &args)?;
        let wait_ns = u64::try_from(r.get(1).copied().unwrap_or(0))
            .unwrap_or(0)
            .saturating_mul(1000);
        Ok(if r.first() == Some(&1) {
            Ok(wait_ns)
        } else {
            Err(wait_ns)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn target(addr: &str, user: Option<&str>, password: Option<&str>, db: u32) -> Target {
        Target {
            addr: addr.into(),
            user: user.map(Into::into),
            password: password.map(Into::into),
            db,
        }
    }

    #[test]
    fn targets() {
        assert_eq!(
            Target::parse("127.0.0.1:6380").unwrap(),
            target("127.0.0.1:6380", None, None, 0)
        );
        assert_eq!(
            Target::parse("redis://:pw@cache.local/3").unwrap(),
            target("cache.local:6379", None, Some("pw"), 3)
        );
        assert_eq!(
            Target::parse("redis://user:pw@h:1/").unwrap(),
            target("h:1", Some("user"), Some("pw"), 0)
        );
        assert_eq!(
            Target::parse("redis://alone@h:1").unwrap(),
            target("h:1", None, Some("alone"), 0)
        );
        assert_eq!(
            Target::parse("redis://app%3Aone:p%40ss@h:1").unwrap(),
            target("h:1", Some("app:one"), Some("p@ss"), 0)
        );
        assert_eq!(
            format!("{:?}", Target::parse("redis://u:s3cr3t@h:1").unwrap()),
            "Target { addr: \"h:1\", user: Some(\"u\"), password: Some(\"[redacted]\"), db: 0 }"
        );
        assert_eq!(
            Target::parse("redis://").unwrap_err().to_string(),
            "shared state: the Redis URL names no host"
        );
        let bad_db = Target::parse("redis://:s3cr3t@h:1/x")
            .unwrap_err()
            .to_string();
        assert_eq!(
            bad_db,
            "shared state: Redis at h:1: the database must be a number"
        );
    }

    #[test]
    fn rediss_and_other_schemes_are_refused_without_quoting_the_password() {
        let e = Target::parse("rediss://u:s3cr3t@h:6380").unwrap_err();
        assert_eq!(
            e.to_string(),
            "shared state: rediss:// (Redis over TLS) is not supported yet: recuo would send \
             the password in plain text; reach the server through a TLS tunnel and give its \
             redis:// URL"
        );
        let e = Target::parse("unix://:s3cr3t@/tmp/r.sock").unwrap_err();
        assert_eq!(
            e.to_string(),
            "shared state: the Redis URL's scheme \"unix\" is not redis:// (the only one supported)"
        );
    }

    /// A server on 127.0.0.1 that reads one request of `request_len` bytes and answers
    /// `answer` (then keeps the connection open until the client goes); answers the request
    /// it read.
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
            // Hold the connection until the client closes it.
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let _ = s.read(&mut buf);
            got
        });
        (addr, t)
    }

    fn call_on(addr: &str, deadline: Duration) -> (Result<Reply, SharedError>, Duration) {
        let conn = Connection::with_deadline(Target::parse(addr).unwrap(), deadline);
        let started = Instant::now();
        let r = conn.call(&[b"PING"]);
        (r, started.elapsed())
    }

    #[test]
    fn a_multi_byte_first_character_is_a_clear_error_not_a_panic() {
        let (addr, server) = fake_server(|s| s.write_all("é\r\n".as_bytes()).unwrap());
        let (r, _) = call_on(&addr, Duration::from_secs(5));
        assert_eq!(
            r.unwrap_err().to_string(),
            format!("shared state: Redis at {addr}: bad reply \"é\"")
        );
        assert_eq!(server.join().unwrap(), b"*1\r\n$4\r\nPING\r\n");
    }

    #[test]
    fn an_endless_line_stops_at_the_cap_and_quotes_a_short_prefix() {
        let (addr, server) = fake_server(|s| {
            let chunk = vec![b'a'; 64 * 1024];
            let _ = s.write_all(b"+");
            // 400 MB if nobody stopped reading; the client hangs up after 4 KiB.
            for _ in 0..6400 {
                if s.write_all(&chunk).is_err() {
                    break;
                }
            }
        });
        let (r, took) = call_on(&addr, Duration::from_secs(5));
        let text = r.unwrap_err().to_string();
        assert_eq!(
            text,
            format!(
                "shared state: Redis at {addr}: a reply line longer than 4096 bytes \
                 (refused), starting \"+{}…\"",
                "a".repeat(47)
            )
        );
        assert!(took < Duration::from_secs(5), "{took:?}");
        server.join().unwrap();
    }

    #[test]
    fn oversized_bulk_strings_and_arrays_are_refused_before_reading_them() {
        for (answer, expected) in [
            (
                "$2000000000\r\n",
                "Redis: a bulk reply of 2000000000 bytes, above the 1048576 accepted (refused)",
            ),
            (
                "*100000\r\n",
                "Redis: an array of 100000 elements, above the 1024 accepted (refused)",
            ),
            (
                "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n",
                "Redis: reply nested too deep",
            ),
            (
                "$3\r\nabcXY",
                "Redis: a bulk reply that does not end in \\r\\n",
            ),
        ] {
            let (addr, server) = fake_server(move |s| s.write_all(answer.as_bytes()).unwrap());
            let (r, took) = call_on(&addr, Duration::from_secs(5));
            assert_eq!(
                r.unwrap_err().to_string(),
                format!(
                    "shared state: Redis at {addr}: {}",
                    expected.trim_start_matches("Redis: ")
                )
            );
            assert!(took < Duration::from_secs(2), "{answer:?}: {took:?}");
            server.join().unwrap();
        }
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
        let (r, took) = call_on(&addr, Duration::from_millis(600));
        let e = r.unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("shared state: Redis at {addr}: no complete answer within the call's deadline")
        );
        // Every read was short, yet the call ended at its deadline (each read is not
        // granted the whole timeout again).
        assert!(
            took >= Duration::from_millis(550) && took < Duration::from_millis(1500),
            "{took:?}"
        );
        server.join().unwrap();
    }

    #[test]
    fn the_acl_user_is_sent_and_an_echoed_password_is_not_quoted() {
        let (addr, server) = fake_server(|s| {
            s.write_all(b"-WRONGPASS invalid password hunter2 for app\r\n")
                .unwrap()
        });
        let conn = Connection::with_deadline(
            Target::parse(&format!("redis://app:hunter2@{addr}")).unwrap(),
            Duration::from_secs(5),
        );
        let e = conn.call(&[b"PING"]).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "shared state: Redis at {addr}: error \"WRONGPASS invalid password \
                 [redacted] for app\""
            )
        );
        assert_eq!(
            server.join().unwrap(),
            b"*3\r\n$4\r\nAUTH\r\n$3\r\napp\r\n$7\r\nhunter2\r\n"
        );
    }

    #[test]
    fn quotes_are_short_escaped_and_redacted() {
        assert_eq!(quote(b"OK"), "\"OK\"");
        // 60 control bytes: 48 quoted, escaped as \u{1}, cut at 96 characters.
        assert_eq!(
            quote(&[1u8; 60]),
            format!("\"{}…\"", "\\u{1}".repeat(19) + "\\")
        );
        assert_eq!(
            quote(b"see https://u:pw@h/x?token=abc"),
            "\"see https://h/x?token=[redacted]\""
        );
        assert!(line_error(&[0xffu8; 5000]).len() <= 300);
    }

    impl Stream for std::io::Cursor<Vec<u8>> {
        fn bound(&mut self, _: Duration) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The error text the reader gives for `data`.
    fn line_error(data: &[u8]) -> String {
        let mut conn = BufReader::new(std::io::Cursor::new(data.to_vec()));
        match read_line(&mut conn, &mut Limits::new(Instant::now() + DEADLINE)) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_long_error_reply_is_quoted_short() {
        let (addr, server) = fake_server(|s| {
            let mut reply = b"-ERR ".to_vec();
            reply.extend([b'x'; 3000]);
            reply.extend_from_slice(b"\r\n");
            s.write_all(&reply).unwrap();
        });
        let (r, _) = call_on(&addr, Duration::from_secs(5));
        assert_eq!(
            r.unwrap_err().to_string(),
            format!(
                "shared state: Redis at {addr}: error \"ERR {}…\"",
                "x".repeat(44)
            )
        );
        server.join().unwrap();
    }
}
