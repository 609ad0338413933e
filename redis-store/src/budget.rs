//! The retry budget on Redis, shared by every process of a fleet: the same rule as
//! [`recuo::RetryBudget`] — retries in the last `window` seconds stay within
//! `ratio × requests + floor × window` — counted per second on the server's clock.

use std::time::Duration;

use recuo::{RemoteBudget, RetryAllowance, RetryBudget, SharedError};

use crate::calls::{BudgetCalls, BudgetOp};
use crate::client::{io, DEADLINE};
use crate::store::{check_settings, Store};

/// A retry budget kept on a Redis server.
pub struct RedisBudget {
    store: Store,
    calls: BudgetCalls,
}

impl std::fmt::Debug for RedisBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBudget")
            .field("store", &self.store)
            .field("calls", &self.calls)
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
        let store = Store::open(url, deadline)?;
        store.checked_key(key)?;
        let calls = BudgetCalls::new(key, ratio, floor_per_s, window_s);
        check_settings(&store, &calls.settings())?;
        Ok(RedisBudget { store, calls })
    }

    fn op(&self, op: BudgetOp, now_s: Option<u64>) -> Result<(bool, u64, u64), SharedError> {
        self.op_by(op, now_s, None)
    }

    /// [`op`](Self::op), the call ending by `until` too when given.
    fn op_by(
        &self,
        op: BudgetOp,
        now_s: Option<u64>,
        until: Option<std::time::Instant>,
    ) -> Result<(bool, u64, u64), SharedError> {
        let a = BudgetCalls::answered(&self.store.reply(&self.calls.op(op, now_s), until)?);
        Ok((a.done, a.requests, a.retries))
    }

    /// Counts a first attempt: it earns retries.
    ///
    /// # Errors
    /// The server could not be used.
    pub fn record_request(&self) -> Result<(), SharedError> {
        self.op(BudgetOp::Request, None).map(|_| ())
    }

    /// Takes one retry if the budget allows it.
    ///
    /// # Errors
    /// The server could not be used.
    pub fn withdraw(&self) -> Result<bool, SharedError> {
        self.op(BudgetOp::Withdraw, None).map(|(done, _, _)| done)
    }

    /// Requests and retries counted in the window.
    ///
    /// # Errors
    /// The server could not be used.
    pub fn counts(&self) -> Result<(u64, u64), SharedError> {
        self.op(BudgetOp::Counts, None).map(|(_, q, r)| (q, r))
    }

    /// The same, at `now_s` seconds on a time base every user shares (tests).
    ///
    /// # Errors
    /// The server could not be used.
    #[doc(hidden)]
    pub fn op_at(&self, op: &str, now_s: u64) -> Result<(bool, u64, u64), SharedError> {
        let op = match op {
            "request" => BudgetOp::Request,
            "withdraw" => BudgetOp::Withdraw,
            "counts" => BudgetOp::Counts,
            other => return Err(io(format!("no budget operation {other:?}"))),
        };
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
        self.calls.settings_in_force()
    }

    fn record_request(&self, now_ns: Option<u64>) -> Result<(), SharedError> {
        self.op(BudgetOp::Request, now_ns.map(seconds)).map(|_| ())
    }

    fn withdraw(&self, now_ns: Option<u64>) -> Result<bool, SharedError> {
        self.op(BudgetOp::Withdraw, now_ns.map(seconds))
            .map(|(done, _, _)| done)
    }

    fn record_request_by(&self, until: Option<std::time::Instant>) -> Result<(), SharedError> {
        self.op_by(BudgetOp::Request, None, until).map(|_| ())
    }

    fn withdraw_by(&self, until: Option<std::time::Instant>) -> Result<bool, SharedError> {
        self.op_by(BudgetOp::Withdraw, None, until)
            .map(|(done, _, _)| done)
    }

    fn counts(&self, now_ns: Option<u64>) -> Result<(u64, u64), SharedError> {
        self.op(BudgetOp::Counts, now_ns.map(seconds))
            .map(|(_, q, r)| (q, r))
    }
}

/// The server counts whole seconds.
fn seconds(now_ns: u64) -> u64 {
    now_ns / 1_000_000_000
}
