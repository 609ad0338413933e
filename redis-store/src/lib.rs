//! recuo's shared limits on Redis: every process on every machine that uses the
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
//! - [`calls`]: each operation as data — the script, its keys and arguments, and what its
//!   reply means — for this crate's client and for a host that reaches Redis itself.
//! - [`host`]: the three limits for a host that reaches Redis itself (recuo's WebAssembly
//!   build, with a JavaScript client): their calls go through a channel the host serves.
//!
//! Each check is one script run with `EVALSHA` (the script's SHA-1), falling back to `EVAL`
//! when the server answers `NOSCRIPT` (a restarted or flushed server), which caches it again.
//! Keys carry a `{hash tag}` — `{KEY}:tat`, `{KEY}:settings`, `{KEY}:interval` — so one
//! limit's keys share one cluster slot.
//!
//! **Redis Cluster**: a URL `redis+cluster://[user:password@]host:port[,host:port…]/`
//! (`rediss+cluster://` for TLS) names a cluster's seed nodes. recuo reads the slot map itself
//! and runs each script on the master of its keys' slot, over the same bounded connections as
//! for one server: `MOVED` and `ASK` are followed, a node that forgot a script is taught it, and
//! while a slot has no master (a failover) a call asks again every 50 ms — every step within
//! the one call's deadline. A cluster node named by a plain `redis://` URL is refused with a
//! message naming the cluster form.

//! Without the `client` feature (on by default) the crate has no Redis client: [`regulator`],
//! [`limit`], [`budget`] and [`ping`] answer that this build has no Redis support — the one
//! place the bindings' builds without Redis get that error from.
//!
//! URLs: `redis://[[user]:password@]host[:port][/db]`, `rediss://…` for TLS (rustls on
//! `ring`; the system's roots, or those `SSL_CERT_FILE` names), `host:port`, or the cluster
//! form above. Every call
//! ends within 5 s, connecting and authenticating included, however slowly the server
//! answers; a reply is at most 4 MiB; errors name the server and never the password.

#![deny(missing_docs)]

#[cfg(feature = "client")]
mod budget;
pub mod calls;
#[cfg(feature = "client")]
mod client;
#[cfg(feature = "client")]
mod cluster;
pub mod host;
#[cfg(feature = "client")]
mod limit;
#[cfg(feature = "client")]
mod store;

use std::time::Duration;

use recuo::{
    BudgetError, ConcurrencyLimit, Rate, Regulator, RegulatorError, RetryBudget, SharedError,
};

#[cfg(feature = "client")]
pub use budget::RedisBudget;
#[cfg(feature = "client")]
pub use client::{replay_replies, DEADLINE, MAX_REPLY, SHORTEST_CALL};
#[cfg(feature = "client")]
pub use limit::{Lease, RedisLimit};
#[cfg(feature = "client")]
pub use store::{RedisGcra, ADAPT_LUA, GCRA_LUA};

/// A regulator on the Redis server at `url`, under `key`: shared by every process on every
/// machine that uses the same server and key. Each check is one atomic script on the server,
/// timed by the server's clock, so the machines' own clocks do not matter. Not adaptive:
/// [`regulator_with`] sets a key up adaptive.
///
/// # Errors
/// [`RegulatorError::ZeroBurst`]; [`RegulatorError::Shared`] when the server cannot be
/// reached ([`SharedError::Io`]) or the key was set up with another rate, burst or adaptive
/// setting ([`SharedError::Mismatch`]).
pub fn regulator(
    url: &str,
    key: &str,
    rate: Rate,
    burst: u32,
) -> Result<Regulator, RegulatorError> {
    regulator_with(url, key, rate, burst, false)
}

/// [`regulator`], adaptive or not. The setting is recorded on the server with the rate and
/// burst when the key is set up, and every process that uses the key must agree (another
/// setting is refused). On an adaptive key the interval in force lives on the server: a 429
/// reported by any holder ([`Regulator::on_throttled`]) halves the rate for every holder on
/// every machine, and successes give back 1/16 of the configured rate each, by the same rule
/// as a regulator of one process, applied atomically by a script on the server.
///
/// # Errors
/// As [`regulator`].
pub fn regulator_with(
    url: &str,
    key: &str,
    rate: Rate,
    burst: u32,
    adaptive: bool,
) -> Result<Regulator, RegulatorError> {
    if burst == 0 {
        return Err(RegulatorError::ZeroBurst);
    }
    #[cfg(feature = "client")]
    {
        let gcra = RedisGcra::open(url, key, rate.interval_ns(), burst, adaptive)?;
        Regulator::remote(Box::new(gcra), rate, burst, adaptive)
    }
    #[cfg(not(feature = "client"))]
    {
        let _ = (url, key, rate, adaptive);
        Err(RegulatorError::Shared(unsupported()))
    }
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
    limit_settings(max, lease)?;
    #[cfg(feature = "client")]
    {
        Ok(ConcurrencyLimit::remote(Box::new(RedisLimit::open(
            url, key, max, lease,
        )?)))
    }
    #[cfg(not(feature = "client"))]
    {
        let _ = (url, key);
        Err(unsupported())
    }
}

/// A limit's settings checked: the lease in milliseconds.
fn limit_settings(max: u32, lease: Duration) -> Result<u64, SharedError> {
    let invalid = |m: &str| SharedError::Io(std::io::Error::other(m.to_owned()));
    if max == 0 {
        return Err(invalid(
            "a concurrency limit must allow at least 1 request in flight",
        ));
    }
    let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
    if !(1..=86_400_000).contains(&lease_ms) {
        return Err(invalid("a lease must last from 1 ms to 1 day"));
    }
    Ok(lease_ms)
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
    #[cfg(feature = "client")]
    {
        let store = RedisBudget::open(url, key, ratio, floor_per_s, window_s)
            .map_err(BudgetError::Shared)?;
        RetryBudget::remote(Box::new(store))
    }
    #[cfg(not(feature = "client"))]
    {
        let _ = (url, key);
        Err(BudgetError::Shared(unsupported()))
    }
}

/// Answers whether the server at `url` takes this URL's login (`PING` after `AUTH`): for
/// tests and health checks.
///
/// # Errors
/// The server cannot be used.
pub fn ping(url: &str, deadline: Duration) -> Result<(), SharedError> {
    #[cfg(feature = "client")]
    {
        use client::{io, Client};
        if cluster::is_cluster_url(url) {
            return cluster::Cluster::open(url, deadline)?.ping();
        }
        let client = Client::new(url, deadline)?;
        match client.value(client.call(&redis::cmd("PING"))?)? {
            redis::Value::SimpleString(s) if s == "PONG" => Ok(()),
            v => Err(io(format!("unexpected reply {v:?}"))),
        }
    }
    #[cfg(not(feature = "client"))]
    {
        let _ = (url, deadline);
        Err(unsupported())
    }
}

/// The error of a build without a Redis client (the `client` feature).
#[cfg(not(feature = "client"))]
fn unsupported() -> SharedError {
    match RegulatorError::no_redis_support() {
        RegulatorError::Shared(e) => e,
        other => SharedError::Io(std::io::Error::other(other.to_string())),
    }
}
