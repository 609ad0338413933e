//! The limits on Redis, through `recuo-redis` (the `redis` feature, on by default): what
//! `Recuo\Regulator::redis`, `Recuo\ConcurrencyLimit::redis` and `Recuo\RetryBudget::redis`
//! are made of. Conversion only: the rules are recuo-redis's scripts and the core's.
//!
//! A Redis budget is the core's `RetryBudget::remote`, which fails closed without a word (a
//! gate's loop gives up `budget_exhausted`); the extension keeps a second handle on the same
//! store so that the budget's own methods can throw the server's error instead.

#[cfg(feature = "redis")]
mod on {
    use std::sync::Arc;
    use std::time::Duration;

    use recuo::{BudgetError, ConcurrencyLimit, RemoteBudget, RetryBudget, SharedError};
    use recuo_redis::RedisBudget;

    pub(crate) use recuo_redis::regulator;

    /// One store shared by the core's budget (in gates) and the extension (for its errors).
    #[derive(Debug, Clone)]
    pub(crate) struct BudgetStore(Arc<RedisBudget>);

    impl RemoteBudget for BudgetStore {
        fn settings(&self) -> (f64, f64, u32) {
            RemoteBudget::settings(self.0.as_ref())
        }

        fn record_request(&self) -> Result<(), SharedError> {
            self.0.record_request()
        }

        fn withdraw(&self) -> Result<bool, SharedError> {
            self.0.withdraw()
        }

        fn counts(&self) -> Result<(u64, u64), SharedError> {
            self.0.counts()
        }
    }

    impl BudgetStore {
        /// Runs `op` (`"request"`, `"withdraw"` or `"counts"`) at `now_ns` on a clock every
        /// user of the key shares (the server counts whole seconds), or now on the server's
        /// clock: `(done, requests, retries)`.
        pub(crate) fn op(
            &self,
            op: &str,
            now_ns: Option<u64>,
        ) -> Result<(bool, u64, u64), SharedError> {
            match now_ns {
                Some(ns) => self.0.op_at(op, ns / 1_000_000_000),
                None => match op {
                    "request" => self.0.record_request().map(|()| (true, 0, 0)),
                    "withdraw" => self.0.withdraw().map(|done| (done, 0, 0)),
                    _ => self.0.counts().map(|(q, r)| (true, q, r)),
                },
            }
        }
    }

    /// A concurrency limit of `limit` places under `key` on the Redis server at `url`, each
    /// place a lease of `lease`.
    pub(crate) fn limit(
        url: &str,
        key: &str,
        limit: u32,
        lease: Duration,
    ) -> Result<ConcurrencyLimit, SharedError> {
        recuo_redis::limit(url, key, limit, lease)
    }

    /// A retry budget under `key` on the Redis server at `url`, and a handle on its store.
    pub(crate) fn budget(
        url: &str,
        key: &str,
        ratio: f64,
        floor_per_s: f64,
        window_s: u32,
    ) -> Result<(RetryBudget, BudgetStore), BudgetError> {
        // The core's check first, so that bad settings get the core's error.
        RetryBudget::new(ratio, floor_per_s, window_s)?;
        let store = BudgetStore(Arc::new(
            RedisBudget::open(url, key, ratio, floor_per_s, window_s)
                .map_err(BudgetError::Shared)?,
        ));
        Ok((RetryBudget::remote(Box::new(store.clone()))?, store))
    }
}

#[cfg(not(feature = "redis"))]
mod on {
    use std::time::Duration;

    use recuo::{
        BudgetError, ConcurrencyLimit, Rate, Regulator, RegulatorError, RetryBudget, SharedError,
    };

    /// Never made without Redis support.
    #[derive(Debug, Clone)]
    pub(crate) enum BudgetStore {}

    impl BudgetStore {
        pub(crate) fn op(&self, _: &str, _: Option<u64>) -> Result<(bool, u64, u64), SharedError> {
            match *self {}
        }
    }

    fn no_redis() -> SharedError {
        match RegulatorError::no_redis_support() {
            RegulatorError::Shared(e) => e,
            other => SharedError::Io(std::io::Error::other(other.to_string())),
        }
    }

    pub(crate) fn regulator(
        _: &str,
        _: &str,
        _: Rate,
        _: u32,
    ) -> Result<Regulator, RegulatorError> {
        Err(RegulatorError::no_redis_support())
    }

    pub(crate) fn limit(
        _: &str,
        _: &str,
        _: u32,
        _: Duration,
    ) -> Result<ConcurrencyLimit, SharedError> {
        Err(no_redis())
    }

    pub(crate) fn budget(
        _: &str,
        _: &str,
        ratio: f64,
        floor_per_s: f64,
        window_s: u32,
    ) -> Result<(RetryBudget, BudgetStore), BudgetError> {
        RetryBudget::new(ratio, floor_per_s, window_s)?;
        Err(BudgetError::Shared(no_redis()))
    }
}

pub(crate) use on::{budget, limit, regulator, BudgetStore};
