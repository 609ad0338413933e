//! A regulator shared between machines through Redis (SPEC §9): GCRA in one Lua script, so
//! every check-and-set is atomic on the server, timed by the server's clock. A minimal RESP
//! client over a TCP stream — no dependency beyond the standard library.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

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

/// Where and how to reach the server: `redis://[:password@]host[:port][/db]` or `host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    addr: String,
    password: Option<String>,
    db: u32,
}

fn io(msg: impl Into<String>) -> SharedError {
    SharedError::Io(std::io::Error::other(msg.into()))
}

impl Target {
    pub(crate) fn parse(url: &str) -> Result<Self, SharedError> {
        let rest = url.strip_prefix("redis://").unwrap_or(url);
        let (auth, rest) = match rest.rsplit_once('@') {
            Some((a, r)) => (Some(a), r),
            None => (None, rest),
        };
        let password = auth.map(|a| a.split_once(':').map_or(a, |(_, p)| p).to_string());
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
        Ok(Target { addr, password, db })
    }
}

/// One connection, reopened after a failure.
#[derive(Debug)]
pub(crate) struct Connection {
    target: Target,
    stream: Mutex<Option<BufReader<TcpStream>>>,
}

const TIMEOUT: Duration = Duration::from_secs(5);

impl Connection {
    pub(crate) fn new(target: Target) -> Self {
        Connection {
            target,
            stream: Mutex::new(None),
        }
    }

    fn connect(&self) -> Result<BufReader<TcpStream>, SharedError> {
        let addrs: Vec<_> = self
            .target
            .addr
            .to_socket_addrs()
            .map_err(|e| io(format!("Redis at {}: {e}", self.target.addr)))?
            .collect();
        let addr = addrs
            .first()
            .ok_or_else(|| io(format!("Redis at {}: no address", self.target.addr)))?;
        let s = TcpStream::connect_timeout(addr, TIMEOUT)
            .map_err(|e| io(format!("Redis at {}: {e}", self.target.addr)))?;
        s.set_read_timeout(Some(TIMEOUT)).map_err(SharedError::Io)?;
        s.set_write_timeout(Some(TIMEOUT))
            .map_err(SharedError::Io)?;
        let _ = s.set_nodelay(true);
        let mut conn = BufReader::new(s);
        if let Some(pw) = &self.target.password {
            expect_ok(round_trip(&mut conn, &[b"AUTH", pw.as_bytes()])?)?;
        }
        if self.target.db != 0 {
            expect_ok(round_trip(
                &mut conn,
                &[b"SELECT", self.target.db.to_string().as_bytes()],
            )?)?;
        }
        Ok(conn)
    }

    /// Runs a command, reconnecting once if the connection was lost.
    fn call(&self, args: &[&[u8]]) -> Result<Reply, SharedError> {
        let mut guard = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
        for attempt in 0..2 {
            if guard.is_none() {
                *guard = Some(self.connect()?);
            }
            let Some(conn) = guard.as_mut() else { continue };
            match round_trip(conn, args) {
                Ok(reply) => return Ok(reply),
                Err(e) => {
                    *guard = None;
                    if attempt == 1 {
                        return Err(match e {
                            SharedError::Io(e) => io(format!("Redis at {}: {e}", self.target.addr)),
                            other => other,
                        });
                    }
                }
            }
        }
        Err(io("Redis: no connection"))
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
            other => Err(io(format!("Redis: unexpected reply {other:?}"))),
        }
    }
}

fn int_of(r: Reply) -> Result<i64, SharedError> {
    match r {
        Reply::Int(i) => Ok(i),
        Reply::Bulk(Some(b)) => {
            let text = String::from_utf8_lossy(&b);
            text.trim()
                .parse::<f64>()
                .map(|x| x as i64)
                .map_err(|_| io(format!("Redis: {text:?} is not a number")))
        }
        other => Err(io(format!("Redis: unexpected reply {other:?}"))),
    }
}

fn expect_ok(r: Reply) -> Result<(), SharedError> {
    match r {
        Reply::Status(_) => Ok(()),
        other => Err(io(format!("Redis: unexpected reply {other:?}"))),
    }
}

fn round_trip(conn: &mut BufReader<TcpStream>, args: &[&[u8]]) -> Result<Reply, SharedError> {
    let mut req = Vec::with_capacity(64);
    req.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        req.extend_from_slice(a);
        req.extend_from_slice(b"\r\n");
    }
    conn.get_mut().write_all(&req).map_err(SharedError::Io)?;
    read_reply(conn, 0)
}

fn read_line(conn: &mut BufReader<TcpStream>) -> Result<String, SharedError> {
    let mut line = String::new();
    let n = conn.read_line(&mut line).map_err(SharedError::Io)?;
    if n == 0 {
        return Err(io("Redis closed the connection"));
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

fn read_reply(conn: &mut BufReader<TcpStream>, depth: u32) -> Result<Reply, SharedError> {
    if depth > 8 {
        return Err(io("Redis: reply nested too deep"));
    }
    let line = read_line(conn)?;
    let (kind, rest) = line.split_at(line.len().min(1));
    let number = || {
        rest.parse::<i64>()
            .map_err(|_| io(format!("Redis: bad reply {line:?}")))
    };
    match kind {
        "+" => Ok(Reply::Status(rest.to_string())),
        "-" => Err(io(format!("Redis: {rest}"))),
        ":" => Ok(Reply::Int(number()?)),
        "$" => {
            let len = number()?;
            if len < 0 {
                return Ok(Reply::Bulk(None));
            }
            let len = usize::try_from(len).map_err(|_| io("Redis: bad length"))?;
            if len > 1 << 20 {
                return Err(io("Redis: reply too long"));
            }
            let mut buf = vec![0; len + 2];
            conn.read_exact(&mut buf).map_err(SharedError::Io)?;
            buf.truncate(len);
            Ok(Reply::Bulk(Some(buf)))
        }
        "*" => {
            let n = number()?;
            if n < 0 {
                return Ok(Reply::Array(Vec::new()));
            }
            let n = usize::try_from(n)
                .map_err(|_| io("Redis: bad length"))?
                .min(1024);
            (0..n)
                .map(|_| read_reply(conn, depth + 1))
                .collect::<Result<_, _>>()
                .map(Reply::Array)
        }
        _ => Err(io(format!("Redis: bad reply {line:?}"))),
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

    #[test]
    fn targets() {
        assert_eq!(
            Target::parse("127.0.0.1:6380").unwrap(),
            Target {
                addr: "127.0.0.1:6380".into(),
                password: None,
                db: 0
            }
        );
        assert_eq!(
            Target::parse("redis://:pw@cache.local/3").unwrap(),
            Target {
                addr: "cache.local:6379".into(),
                password: Some("pw".into()),
                db: 3
            }
        );
        assert_eq!(
            Target::parse("redis://user:pw@h:1/")
                .unwrap()
                .password
                .as_deref(),
            Some("pw")
        );
        assert!(Target::parse("redis://").is_err());
        let bad_db = Target::parse("redis://:s3cr3t@h:1/x")
            .unwrap_err()
            .to_string();
        assert!(
            !bad_db.contains("s3cr3t") && bad_db.contains("Redis at h:1"),
            "{bad_db}"
        );
    }
}
