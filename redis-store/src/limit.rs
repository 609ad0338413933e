//! A concurrency limit on Redis with leases: each permit is an owner token with an
//! expiry in one sorted set per limit, pruned inside the same script, timed by the server's
//! clock. A holder that dies frees its slot within its lease; a long request renews its
//! lease; releasing twice or after expiry is harmless.

use std::sync::Arc;
use std::time::{Duration, Instant};

use recuo::{CancelToken, IdempotencyKey, RemoteLease, RemoteLimit, RemotePlace, SharedError};

use crate::calls::LeaseCalls;
use crate::client::DEADLINE;
use crate::store::{check_settings, Store};

struct Inner {
    store: Store,
    calls: LeaseCalls,
}

/// A limit on requests in flight shared through Redis by every process of a fleet. Clones
/// share the connection.
#[derive(Clone)]
pub struct RedisLimit(Arc<Inner>);

impl std::fmt::Debug for RedisLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLimit")
            .field("store", &self.0.store)
            .field("calls", &self.0.calls)
            .finish()
    }
}

/// One place in flight, held until released, dropped or its lease expires.
#[must_use = "a lease holds a place until it is released or dropped"]
pub struct Lease {
    limit: RedisLimit,
    token: String,
    released: bool,
    /// When dropped, the release's call ends by then too (a gate's lease: the operation's
    /// deadline, so that an operation never outlives it giving its place back).
    release_by: Option<Instant>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease").field("token", &self.token).finish()
    }
}

impl RedisLimit {
    /// At most `max` requests in flight under `key` on the server at `url`, each lease
    /// lasting `lease` unless renewed. The settings are recorded under `{key}:settings`; a
    /// later user with other settings is refused.
    ///
    /// # Errors
    /// [`SharedError::Io`] for a server out of reach or a `max` of 0 or a lease outside
    /// 1 ms – 1 day; [`SharedError::Mismatch`] for a key set up otherwise.
    pub fn open(url: &str, key: &str, max: u32, lease: Duration) -> Result<Self, SharedError> {
        Self::open_with_deadline(url, key, max, lease, DEADLINE)
    }

    /// [`open`](Self::open), each call ending within `deadline`.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with_deadline(
        url: &str,
        key: &str,
        max: u32,
        lease: Duration,
        deadline: Duration,
    ) -> Result<Self, SharedError> {
        let lease_ms = crate::limit_settings(max, lease)?;
        let store = Store::open(url, deadline)?;
        store.checked_key(key)?;
        let calls = LeaseCalls::new(key, max, lease_ms);
        check_settings(&store, &calls.settings())?;
        Ok(RedisLimit(Arc::new(Inner { store, calls })))
    }

    /// The most requests in flight.
    pub fn max(&self) -> u32 {
        self.0.calls.max()
    }

    /// How long a lease lasts unless renewed.
    pub fn lease(&self) -> Duration {
        Duration::from_millis(self.0.calls.lease_ms())
    }

    /// A place now, or the wait until the earliest lease expires.
    ///
    /// # Errors
    /// The server could not be used: no place (the limit fails closed).
    pub fn try_acquire(&self) -> Result<Result<Lease, Duration>, SharedError> {
        self.try_acquire_until(None)
    }

    /// [`try_acquire`](Self::try_acquire), its call ending by `until` too.
    fn try_acquire_until(
        &self,
        until: Option<Instant>,
    ) -> Result<Result<Lease, Duration>, SharedError> {
        let token = IdempotencyKey::random().as_str().to_owned();
        let i = &self.0;
        let r = i.store.reply(&i.calls.acquire(&token), until)?;
        Ok(match LeaseCalls::acquired(&r) {
            Ok(()) => Ok(Lease {
                limit: self.clone(),
                token,
                released: false,
                release_by: None,
            }),
            Err(wait_ms) => Err(Duration::from_millis(wait_ms)),
        })
    }

    /// Waits for a place, polling the server (every 5–50 ms, or sooner when the earliest
    /// lease ends), for at most `timeout` (`None`: no limit). `Ok(None)`: the timeout passed
    /// or `cancel` was cancelled.
    ///
    /// # Errors
    /// The server could not be used — a call to it ends by the client's deadline, or by the
    /// end of `timeout` when that comes first (then the error says the server did not answer
    /// in time).
    pub fn acquire(
        &self,
        timeout: Option<Duration>,
        cancel: &CancelToken,
    ) -> Result<Option<Lease>, SharedError> {
        let calls_until = timeout.filter(|t| !t.is_zero()).map(|t| Instant::now() + t);
        self.acquire_by(timeout, calls_until, cancel)
    }

    /// [`acquire`](Self::acquire), each call to the server ending by `calls_until` (`None`:
    /// the client's deadline).
    fn acquire_by(
        &self,
        timeout: Option<Duration>,
        calls_until: Option<Instant>,
        cancel: &CancelToken,
    ) -> Result<Option<Lease>, SharedError> {
        let until = timeout.map(|t| Instant::now() + t);
        let mut pause = Duration::from_millis(5);
        loop {
            match self.try_acquire_until(calls_until)? {
                Ok(lease) => return Ok(Some(lease)),
                Err(wait) => {
                    let mut nap = pause.min(wait);
                    if let Some(until) = until {
                        let left = until.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            return Ok(None);
                        }
                        nap = nap.min(left);
                    }
                    if cancel.sleep(nap) {
                        return Ok(None);
                    }
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
            }
        }
    }

    /// Leases held now (expired ones pruned).
    ///
    /// # Errors
    /// The server could not be used.
    pub fn in_flight(&self) -> Result<u32, SharedError> {
        let i = &self.0;
        Ok(LeaseCalls::counted(
            &i.store.reply(&i.calls.in_flight(), None)?,
        ))
    }
}

impl Lease {
    /// Extends the lease by the limit's lease time from now. `Ok(false)`: it had expired or
    /// was released — the place may be someone else's now, and is not taken back.
    ///
    /// # Errors
    /// The server could not be used.
    pub fn renew(&self) -> Result<bool, SharedError> {
        let i = &self.limit.0;
        Ok(LeaseCalls::held(
            &i.store.reply(&i.calls.renew(&self.token), None)?,
        ))
    }

    /// Gives the place back. `Ok(false)`: it had already expired (harmless).
    ///
    /// # Errors
    /// The server could not be used (the place comes back when the lease expires).
    pub fn release(mut self) -> Result<bool, SharedError> {
        self.released = true;
        self.release_token(None)
    }

    fn release_token(&self, until: Option<Instant>) -> Result<bool, SharedError> {
        let i = &self.limit.0;
        Ok(LeaseCalls::held(
            &i.store.reply(&i.calls.release(&self.token), until)?,
        ))
    }

    /// The owner token kept in the limit's sorted set.
    pub fn token(&self) -> &str {
        &self.token
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if !self.released {
            // An error leaves the place to its lease's expiry.
            let _ = self.release_token(self.release_by);
        }
    }
}

/// The limit as the core's [`recuo::ConcurrencyLimit`] uses it: each place a lease, given
/// back when the core's permit is dropped.
impl RemoteLimit for RedisLimit {
    fn limit(&self) -> u32 {
        self.max()
    }

    fn acquire(
        &self,
        timeout: Option<Duration>,
        calls_until: Option<Instant>,
        cancel: &CancelToken,
    ) -> Result<Option<RemotePlace>, SharedError> {
        Ok(self
            .acquire_by(timeout, calls_until, cancel)?
            .map(|mut lease| {
                lease.release_by = calls_until;
                Box::new(lease) as RemotePlace
            }))
    }
}

/// A lease as the core's permit holds it.
impl RemoteLease for Lease {
    fn renew(&self) -> Result<bool, SharedError> {
        Lease::renew(self)
    }
}
