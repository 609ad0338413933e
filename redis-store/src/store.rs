//! The connection to one server running recuo's scripts, and the regulator's state on it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use recuo::{RemoteGcra, SharedError};

use crate::calls::{tagged, GcraCalls, Script, ScriptCall, SettingsCheck};
use crate::client::{call_deadline, io, Answer, Client, DEADLINE};
use crate::cluster::{is_cluster_url, slot_of, Cluster};

/// The regulator's rule on the server.
pub const GCRA_LUA: &str = crate::calls::GCRA.body;
/// The adaptive rule on the server.
pub const ADAPT_LUA: &str = crate::calls::ADAPT.body;

/// Where the scripts run: one server, or the master of their keys' slot in a cluster.
#[derive(Debug)]
pub(crate) enum Store {
    One(Client),
    Cluster(Cluster),
}

impl Store {
    /// `redis+cluster://…` and `rediss+cluster://…` name a cluster; any other URL one server.
    pub(crate) fn open(url: &str, deadline: Duration) -> Result<Self, SharedError> {
        if is_cluster_url(url) {
            Cluster::open(url, deadline).map(Store::Cluster)
        } else {
            Client::new(url, deadline).map(Store::One)
        }
    }

    /// The limit key `key`, refused on a cluster when its keys could not share one slot (an
    /// empty key, or one whose hash tag `{key}` would be read as empty: it starts with `}`).
    pub(crate) fn checked_key(&self, key: &str) -> Result<(), SharedError> {
        let slot = |suffix| slot_of(tagged(key, suffix).as_bytes());
        let one_slot = ["settings", "interval", "leases", "budget"]
            .into_iter()
            .all(|suffix| slot(suffix) == slot("tat"));
        if matches!(self, Store::Cluster(_)) && !one_slot {
            return Err(io(format!(
                "the key {:?} cannot name a limit on a Redis Cluster: its keys would land in \
                 different slots (give a key that is not empty and does not start with '}}')",
                key.chars().take(64).collect::<String>()
            )));
        }
        Ok(())
    }

    /// Runs `cmd` on `keys`' server by `deadline`.
    fn call(
        &self,
        cmd: &redis::Cmd,
        keys: &[&str],
        deadline: Instant,
    ) -> Result<Answer, SharedError> {
        match self {
            Store::One(client) => client.call_by(cmd, deadline),
            Store::Cluster(cluster) => {
                let slot = keys.first().map_or(0, |k| slot_of(k.as_bytes()));
                if keys.iter().any(|k| slot_of(k.as_bytes()) != slot) {
                    return Err(io("a script's keys lie in different Redis Cluster slots"));
                }
                cluster.call_by(cmd, slot, deadline)
            }
        }
    }

    /// Runs `script` on `keys` with `args`: `EVALSHA`, then `EVAL` on `NOSCRIPT` (on the node
    /// that did not know it) — both by one deadline, the client's, cut shorter by `until`.
    fn run(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[String],
        until: Option<Instant>,
    ) -> Result<redis::Value, SharedError> {
        let own = match self {
            Store::One(client) => client.own_deadline(),
            Store::Cluster(cluster) => cluster.own_deadline(),
        };
        let deadline = call_deadline(own, until);
        let with = |verb: &str, first: &str| {
            let mut c = redis::cmd(verb);
            c.arg(first).arg(keys.len()).arg(keys).arg(args);
            c
        };
        let answer = match self.call(&with("EVALSHA", script.sha1), keys, deadline)? {
            Answer::NoScript => match self.call(&with("EVAL", script.body), keys, deadline)? {
                Answer::NoScript => return Err(io("the server refused the script (NOSCRIPT)")),
                other => other,
            },
            other => other,
        };
        match self {
            Store::One(client) => client.value(answer),
            // The cluster's client follows every redirect; what is left is a value.
            Store::Cluster(_) => match answer {
                Answer::Value(v) => Ok(v),
                Answer::Busy(e) => Err(e),
                _ => Err(io("unexpected answer from the Redis Cluster")),
            },
        }
    }

    /// Runs `call` by the client's deadline, cut shorter by `until`, answering its reply as
    /// an array of integers (numbers sent as strings count).
    pub(crate) fn reply(
        &self,
        call: &ScriptCall,
        until: Option<Instant>,
    ) -> Result<Vec<i64>, SharedError> {
        let keys: Vec<&str> = call.keys.iter().map(String::as_str).collect();
        match self.run(call.script, &keys, &call.args, until)? {
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

/// Records a key's settings on first use; a key set up otherwise is refused with both
/// settings named.
pub(crate) fn check_settings(store: &Store, check: &SettingsCheck) -> Result<(), SharedError> {
    check.reply(&store.reply(&check.call, None)?)
}

/// The regulator's state on a Redis server (a [`RemoteGcra`]): the arrival time
/// `{key}:tat`, the settings `{key}:settings` (the interval, burst and adaptive setting,
/// recorded by the first opener) and, while an adaptive key is slowed down, the interval in
/// force `{key}:interval` (ns).
pub struct RedisGcra {
    store: Store,
    calls: GcraCalls,
    /// The interval in force the server answered last, ns (0: none yet).
    in_force_ns: AtomicU64,
}

impl std::fmt::Debug for RedisGcra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisGcra")
            .field("store", &self.store)
            .field("calls", &self.calls)
            .finish()
    }
}

impl RedisGcra {
    /// Connects, and checks (or records) the settings under `{key}:settings`.
    ///
    /// # Errors
    /// [`SharedError::Io`] when the server cannot be used, [`SharedError::Mismatch`] when the
    /// key was set up with another interval, burst or adaptive setting.
    pub fn open(
        url: &str,
        key: &str,
        interval_ns: u64,
        burst: u32,
        adaptive: bool,
    ) -> Result<Self, SharedError> {
        Self::open_with_deadline(url, key, interval_ns, burst, adaptive, DEADLINE)
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
        adaptive: bool,
        deadline: Duration,
    ) -> Result<Self, SharedError> {
        let store = Store::open(url, deadline)?;
        store.checked_key(key)?;
        let calls = GcraCalls::new(key, interval_ns, burst, adaptive);
        check_settings(&store, &calls.settings())?;
        Ok(RedisGcra {
            store,
            calls,
            in_force_ns: AtomicU64::new(0),
        })
    }

    /// One run of the script, in microseconds: `(reserved, wait_us, interval_ns)`, the last
    /// being the interval in force the server used (the vectors' test reads it).
    ///
    /// # Errors
    /// The server could not be used.
    #[doc(hidden)]
    pub fn reserve_us(
        &self,
        now_us: Option<u64>,
        cost: u32,
        max_wait_us: u64,
    ) -> Result<(bool, u64, u64), SharedError> {
        self.reserve_us_until(now_us, cost, max_wait_us, None)
    }

    fn reserve_us_until(
        &self,
        now_us: Option<u64>,
        cost: u32,
        max_wait_us: u64,
        until: Option<Instant>,
    ) -> Result<(bool, u64, u64), SharedError> {
        let call = self.calls.reserve(cost, max_wait_us, now_us);
        let r = GcraCalls::reserved(&self.store.reply(&call, until)?);
        let in_force = self.heard(r.interval_ns);
        Ok((r.reserved, r.wait_us, in_force))
    }

    /// Keeps the interval in force the server answered (clamped to the settings).
    fn heard(&self, answered_ns: u64) -> u64 {
        let ns = self.calls.in_force_ns(answered_ns);
        self.in_force_ns.store(ns, Ordering::Release);
        ns
    }
}

impl RemoteGcra for RedisGcra {
    fn reserve(
        &self,
        now_ns: Option<u64>,
        cost: u32,
        max_wait_ns: u64,
        until: Option<Instant>,
    ) -> Result<Result<u64, u64>, SharedError> {
        let (reserved, wait_us, _) =
            self.reserve_us_until(now_ns.map(|n| n / 1000), cost, max_wait_ns / 1000, until)?;
        let wait_ns = wait_us.saturating_mul(1000);
        Ok(if reserved { Ok(wait_ns) } else { Err(wait_ns) })
    }

    fn adapt(&self, throttled: bool) -> Result<u64, SharedError> {
        self.adapt_by(throttled, None)
    }

    fn adapt_by(&self, throttled: bool, until: Option<Instant>) -> Result<u64, SharedError> {
        let r = self.store.reply(&self.calls.adapt(throttled), until)?;
        Ok(self.heard(GcraCalls::adapted(&r)))
    }

    fn interval_in_force_ns(&self) -> u64 {
        self.in_force_ns.load(Ordering::Acquire)
    }
}
