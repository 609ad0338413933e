//! The retry budget on Redis, shared by every process of a fleet: the same rule as
//! [`recuo::RetryBudget`] — retries in the last `window` seconds stay within
//! `ratio × requests + floor × window` — counted per second on the server's clock.

use std::time::Duration;

use recuo::{RemoteBudget, RetryAllowance, RetryBudget, SharedError};

use crate::client::{io, DEADLINE};
use crate::store::{check_settings, tagged, Script, Store};

const BUDGET_LUA: &str = include_str!("budget.lua");

/// A retry budget kept on a Redis server.
pub struct RedisBudget {
    store: Store,
    script: Script,
    key: String,
    ratio_ppm: u64,
    floor_milli: u64,
    window_s: u32,
}

impl std::fmt::Debug for RedisBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBudget")
            .field("store", &self.store)
            .field("key", &self.key)
            .finish()
    }
}

impl RedisBudget {
    /// A budget under `key` on the server at `url`: retries may be `ratio` of the requests
    /// of the last `window_s` seconds, plus `floor_per_s` retries a second. The settings are
    /// checked as [`RetryBudget::new`] checks them, and recorded under `{key}:settings`.
    ///
    /// # Errors
    /// [`SharedError::Io`] for invalid settings or a server out of reach;
    /// [`SharedError::Mismatch`] for a key set up otherwise.
    pub fn open(
        url: &str,
        key: &str,
        ratio: f64,
        floor_per_s: f64,
        window_s: u32,
    ) -> Result<Self, SharedError> {
        Self::open_with_deadline(url, key, ratio, floor_per_s, window_s, DEADLINE)
    }

    /// [`open`](Self::open), each call ending within `deadline`.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with_deadline(
        url: &str,
        key: &str,
        ratio: f64,
        floor_per_s: f64,
        window_s: u32,
        deadline: Duration,
    ) -> Result<Self, SharedError> {
        // The core's own check of the settings (one rule).
        RetryBudget::new(ratio, floor_per_s, window_s).map_err(|e| io(e.to_string()))?;
        let (ratio_ppm, floor_milli) = (
            (ratio * 1e6).round() as u64,
            (floor_per_s * 1e3).round() as u64,
        );
        let store = Store::open(url, deadline)?;
        store.checked_key(key)?;
        check_settings(
            &store,
            key,
            &[
                ("ratio_ppm", ratio_ppm.to_string()),
                ("floor_milli_per_s", floor_milli.to_string()),
                ("window_s", window_s.to_string()),
            ],
            |found| {
                format!(
                    "the Redis key {key:?} holds a retry budget of ratio {} with a floor of {}/s \
                     over {} s; this process asked for ratio {ratio} with a floor of \
                     {floor_per_s}/s over {window_s} s",
                    found.first().copied().unwrap_or(0) as f64 / 1e6,
                    found.get(1).copied().unwrap_or(0) as f64 / 1e3,
                    found.get(2).copied().unwrap_or(0)
                )
            },
        )?;
        Ok(RedisBudget {
            store,
            script: Script::new(BUDGET_LUA),
            key: tagged(key, "budget"),
            ratio_ppm,
            floor_milli,
            window_s,
        })
    }

    fn op(&self, op: &str, now_s: Option<u64>) -> Result<(bool, u64, u64), SharedError> {
        self.op_by(op, now_s, None)
    }

    /// [`op`](Self::op), the call ending by `until` too when given.
    fn op_by(
        &self,
        op: &str,
        now_s: Option<u64>,
        until: Option<std::time::Instant>,
    ) -> Result<(bool, u64, u64), SharedError> {
        let r = self.store.ints_until(
            &self.script,
            &[&self.key],
            &[
                op.to_owned(),
                self.ratio_ppm.to_string(),
                self.floor_milli.to_string(),
                self.window_s.to_string(),
                now_s.map_or_else(String::new, |n| n.to_string()),
            ],
            until,
        )?;
        let n = |i: usize| u64::try_from(r.get(i).copied().unwrap_or(0)).unwrap_or(0);
        Ok((n(0) == 1, n(1), n(2)))
    }

    /// Counts a first attempt: it earns retries.
    ///
    /// # Errors
    /// The server could not be used.
    pub fn record_request(&self) -> Result<(), SharedError> {
        self.op("request", None).map(|_| ())
    }

    /// Takes one retry if the budget allows it.
    ///
    /// # Errors
    /// The server could not be used.
    pub fn withdraw(&self) -> Result<bool, SharedError> {
        self.op("withdraw", None).map(|(done, _, _)| done)
    }

    /// Requests and retries counted in the window.
    ///
    /// # Errors
    /// The server could not be used.
    pub fn counts(&self) -> Result<(u64, u64), SharedError> {
        self.op("counts", None).map(|(_, q, r)| (q, r))
    }

    /// The same, at `now_s` seconds on a time base every user shares (tests).
    ///
    /// # Errors
    /// The server could not be used.
    #[doc(hidden)]
    pub fn op_at(&self, op: &str, now_s: u64) -> Result<(bool, u64, u64), SharedError> {
        self.op(op, Some(now_s))
    }
}

/// A retry is allowed only when the server says so: a server out of reach allows none
/// (fail closed).
impl RetryAllowance for RedisBudget {
    fn try_withdraw(&self) -> bool {
        self.withdraw().unwrap_or(false)
    }
}

/// The budget as the core's [`RetryBudget::remote`] uses it.
impl RemoteBudget for RedisBudget {
    fn settings(&self) -> (f64, f64, u32) {
        (
            self.ratio_ppm as f64 / 1e6,
            self.floor_milli as f64 / 1e3,
            self.window_s,
        )
    }

    fn record_request(&self, now_ns: Option<u64>) -> Result<(), SharedError> {
        self.op("request", now_ns.map(seconds)).map(|_| ())
    }

    fn withdraw(&self, now_ns: Option<u64>) -> Result<bool, SharedError> {
        self.op("withdraw", now_ns.map(seconds))
            .map(|(done, _, _)| done)
    }

    fn record_request_by(&self, until: Option<std::time::Instant>) -> Result<(), SharedError> {
        self.op_by("request", None, until).map(|_| ())
    }

    fn withdraw_by(&self, until: Option<std::time::Instant>) -> Result<bool, SharedError> {
        self.op_by("withdraw", None, until).map(|(done, _, _)| done)
    }

    fn counts(&self, now_ns: Option<u64>) -> Result<(u64, u64), SharedError> {
        self.op("counts", now_ns.map(seconds))
            .map(|(_, q, r)| (q, r))
    }
}

/// The server counts whole seconds.
fn seconds(now_ns: u64) -> u64 {
    now_ns / 1_000_000_000
}
