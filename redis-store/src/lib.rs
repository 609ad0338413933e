//! recuo's shared limits on Redis (SPEC §9): every process on every machine that uses the
//! same server and key shares one allowance.
//!
//! - [`regulator`]: the regulator (GCRA) as a [`recuo::Regulator`], one Lua script per check,
//!   timed by the server's clock.
//! - [`RedisLimit`]: a concurrency limit with leases (a holder that dies frees its place
//!   when its lease expires).
//! - [`RedisBudget`]: the retry budget, the same rule as [`recuo::RetryBudget`].
//! - [`limit`] and [`budget`]: the same two as the core's [`recuo::ConcurrencyLimit`] and
//!   [`recuo::RetryBudget`], for a [`recuo::Gate`] (and every binding's gate).
//!
//! Each check is one script run with `EVALSHA` (the script's SHA-1), falling back to `EVAL`
//! when the server answers `NOSCRIPT` (a restarted or flushed server), which caches it again.
//! Keys carry a `{hash tag}` — `{KEY}:tat`, `{KEY}:settings` — so one limit's keys would land
//! in one cluster slot; **cluster mode itself is refused**: a server that answers `MOVED` or
//! `ASK` gets a clear error naming it (give a standalone server's address).
//!
//! URLs: `redis://[[user]:password@]host[:port][/db]`, `rediss://…` for TLS (rustls on
//! `ring`; the system's roots, or those `SSL_CERT_FILE` names), or `host:port`. Every call
//! ends within 5 s, connecting and authenticating included, however slowly the server
//! answers; a reply is at most 4 MiB; errors name the server and never the password.

#![deny(missing_docs)]

mod budget;
mod client;
mod limit;

use std::time::Duration;

use recuo::{
    BudgetError, ConcurrencyLimit, Rate, Regulator, RegulatorError, RemoteGcra, RetryBudget,
    SharedError,
};

pub use budget::RedisBudget;
use client::{io, Answer, Client};
pub use client::{replay_replies, DEADLINE, MAX_REPLY};
pub use limit::{Lease, RedisLimit};

/// The regulator's rule on the server.
pub const GCRA_LUA: &str = include_str!("gcra.lua");
const SETTINGS_LUA: &str = include_str!("settings.lua");

/// A Lua script and its SHA-1, run by `EVALSHA` with the `EVAL` fallback.
struct Script {
    body: &'static str,
    sha: String,
}

impl Script {
    fn new(body: &'static str) -> Self {
        Script {
            body,
            sha: redis::Script::new(body).get_hash().to_owned(),
        }
    }
}

/// A connection to one server, running scripts.
struct Store {
    client: Client,
}

impl Store {
    fn open(url: &str, deadline: Duration) -> Result<Self, SharedError> {
        Ok(Store {
            client: Client::new(url, deadline)?,
        })
    }

    /// Runs `script` on `keys` with `args`: `EVALSHA`, then `EVAL` on `NOSCRIPT`.
    fn run(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[String],
    ) -> Result<redis::Value, SharedError> {
        let with = |verb: &str, first: &str| {
            let mut c = redis::cmd(verb);
            c.arg(first).arg(keys.len()).arg(keys).arg(args);
            c
        };
        match self.client.call(&with("EVALSHA", &script.sha))? {
            Answer::Value(v) => Ok(v),
            Answer::NoScript => match self.client.call(&with("EVAL", script.body))? {
                Answer::Value(v) => Ok(v),
                Answer::NoScript => Err(io("the server refused the script (NOSCRIPT)")),
            },
        }
    }

    /// `run`, answering an array of integers (numbers sent as strings count).
    fn ints(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[String],
    ) -> Result<Vec<i64>, SharedError> {
        match self.run(script, keys, args)? {
            redis::Value::Array(items) => items.iter().map(int_of).collect(),
            other => Err(io(format!("unexpected reply {other:?}"))),
        }
    }
}

fn int_of(v: &redis::Value) -> Result<i64, SharedError> {
    let bad = || io(format!("unexpected reply {v:?}"));
    match v {
        redis::Value::Int(i) => Ok(*i),
        redis::Value::BulkString(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad),
        redis::Value::SimpleString(s) => s.parse().map_err(|_| bad()),
        _ => Err(bad()),
    }
}

/// The keys of the limit named `key`: `{key}:suffix`, one cluster slot for all of them.
fn tagged(key: &str, suffix: &str) -> String {
    format!("{{{key}}}:{suffix}")
}

/// Records `settings` under `{key}:settings` on first use; a key set up otherwise is refused
/// with both settings named (`what` says what the key holds, for the message).
fn check_settings(
    store: &Store,
    key: &str,
    settings: &[(&str, String)],
    refused: impl FnOnce(&[i64]) -> String,
) -> Result<(), SharedError> {
    let args: Vec<String> = settings
        .iter()
        .flat_map(|(n, v)| [(*n).to_owned(), v.clone()])
        .collect();
    let script = Script::new(SETTINGS_LUA);
    let found = store.ints(&script, &[&tagged(key, "settings")], &args)?;
    let wanted: Vec<i64> = settings
        .iter()
        .map(|(_, v)| v.parse().unwrap_or(-1))
        .collect();
    if found != wanted {
        return Err(SharedError::Mismatch(refused(&found)));
    }
    Ok(())
}

/// The regulator's state on a Redis server (a [`RemoteGcra`]).
pub struct RedisGcra {
    store: Store,
    script: Script,
    key: String,
    interval_us: u64,
    burst: u32,
}

impl std::fmt::Debug for RedisGcra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisGcra")
            .field("client", &self.store.client)
            .field("key", &self.key)
            .finish()
    }
}

impl RedisGcra {
    /// Connects, and checks (or records) the settings under `{key}:settings`.
    ///
    /// # Errors
    /// [`SharedError::Io`] when the server cannot be used, [`SharedError::Mismatch`] when the
    /// key was set up with another interval or burst.
    pub fn open(url: &str, key: &str, interval_ns: u64, burst: u32) -> Result<Self, SharedError> {
        Self::open_with_deadline(url, key, interval_ns, burst, DEADLINE)
    }

    /// [`open`](Self::open), each call ending within `deadline`.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with_deadline(
        url: &str,
        key: &str,
        interval_ns: u64,
        burst: u32,
        deadline: Duration,
    ) -> Result<Self, SharedError> {
        let store = Store::open(url, deadline)?;
        let interval_us = (interval_ns / 1000).max(1);
        check_settings(
            &store,
            key,
            &[
                ("interval_us", interval_us.to_string()),
                ("burst", burst.to_string()),
            ],
            |found| {
                format!(
                    "the Redis key {key:?} regulates one start every {} µs with a burst of {}; \
                     this process asked for one every {interval_us} µs with a burst of {burst}",
                    found.first().copied().unwrap_or(0),
                    found.get(1).copied().unwrap_or(0)
                )
            },
        )?;
        Ok(RedisGcra {
            store,
            script: Script::new(GCRA_LUA),
            key: tagged(key, "tat"),
            interval_us,
            burst,
        })
    }
}

impl RedisGcra {
    /// One run of the script, in microseconds, with the interval given (the vectors' test
    /// passes the interval an adaptive regulator has in force): `(reserved, wait_us)`.
    ///
    /// # Errors
    /// The server could not be used.
    #[doc(hidden)]
    pub fn reserve_us(
        &self,
        interval_us: u64,
        now_us: Option<u64>,
        cost: u32,
        max_wait_us: u64,
    ) -> Result<(bool, u64), SharedError> {
        let args = [
            interval_us.to_string(),
            self.burst.to_string(),
            cost.to_string(),
            max_wait_us.min(1 << 52).to_string(),
            now_us.map_or_else(String::new, |n| n.to_string()),
        ];
        let r = self.store.ints(&self.script, &[&self.key], &args)?;
        let wait_us = u64::try_from(r.get(1).copied().unwrap_or(0)).unwrap_or(0);
        Ok((r.first() == Some(&1), wait_us))
    }
}

impl RemoteGcra for RedisGcra {
    fn reserve(
        &self,
        now_ns: Option<u64>,
        cost: u32,
        max_wait_ns: u64,
    ) -> Result<Result<u64, u64>, SharedError> {
        let (reserved, wait_us) = self.reserve_us(
            self.interval_us,
            now_ns.map(|n| n / 1000),
            cost,
            max_wait_ns / 1000,
        )?;
        let wait_ns = wait_us.saturating_mul(1000);
        Ok(if reserved { Ok(wait_ns) } else { Err(wait_ns) })
    }
}

/// A regulator on the Redis server at `url`, under `key`: shared by every process on every
/// machine that uses the same server and key. Each check is one atomic script on the server,
/// timed by the server's clock, so the machines' own clocks do not matter.
///
/// # Errors
/// [`RegulatorError::ZeroBurst`]; [`RegulatorError::Shared`] when the server cannot be
/// reached ([`SharedError::Io`]) or the key was set up with another rate or burst
/// ([`SharedError::Mismatch`]).
pub fn regulator(
    url: &str,
    key: &str,
    rate: Rate,
    burst: u32,
) -> Result<Regulator, RegulatorError> {
    if burst == 0 {
        return Err(RegulatorError::ZeroBurst);
    }
    let gcra =
        RedisGcra::open(url, key, rate.interval_ns(), burst).map_err(RegulatorError::Shared)?;
    Regulator::remote(Box::new(gcra), rate, burst)
}

/// A concurrency limit on the Redis server at `url`, under `key`, for the core's gates: at most
/// `max` requests in flight for every process on every machine that uses the same server and
/// key, each place a lease of `lease` (a holder that dies frees its place when the lease
/// expires; choose a lease longer than the longest attempt, since a gate does not renew it).
///
/// # Errors
/// As [`RedisLimit::open`].
pub fn limit(
    url: &str,
    key: &str,
    max: u32,
    lease: Duration,
) -> Result<ConcurrencyLimit, SharedError> {
    Ok(ConcurrencyLimit::remote(Box::new(RedisLimit::open(
        url, key, max, lease,
    )?)))
}

/// A retry budget on the Redis server at `url`, under `key`, for the core's gates: the same
/// rule and settings as [`RetryBudget::new`], counted on the server for every process that
/// uses the same server and key. It fails closed (no retry while the server is out of reach).
///
/// # Errors
/// [`BudgetError::Invalid`] for settings the local budget would refuse;
/// [`BudgetError::Shared`] as [`RedisBudget::open`].
pub fn budget(
    url: &str,
    key: &str,
    ratio: f64,
    floor_per_s: f64,
    window_s: u32,
) -> Result<RetryBudget, BudgetError> {
    // The core's check first, so that bad settings get the core's error.
    RetryBudget::new(ratio, floor_per_s, window_s)?;
    let store =
        RedisBudget::open(url, key, ratio, floor_per_s, window_s).map_err(BudgetError::Shared)?;
    RetryBudget::remote(Box::new(store))
}

/// Answers whether the server at `url` takes this URL's login (`PING` after `AUTH`): for
/// tests and health checks.
///
/// # Errors
/// The server cannot be used.
pub fn ping(url: &str, deadline: Duration) -> Result<(), SharedError> {
    let client = Client::new(url, deadline)?;
    match client.call(&redis::cmd("PING"))? {
        Answer::Value(redis::Value::SimpleString(s)) if s == "PONG" => Ok(()),
        Answer::Value(v) => Err(io(format!("unexpected reply {v:?}"))),
        Answer::NoScript => Err(io("unexpected NOSCRIPT")),
    }
}
