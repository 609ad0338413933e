//! The concurrency limit: a semaphore on requests in flight, with permits that
//! give their place back when dropped — kept in this process, in a file shared by the
//! processes of one machine (each place a lock the kernel releases when its holder dies), or
//! in a store shared between machines (Redis, through `recuo-redis`), where each place is a
//! lease.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::clock::CancelToken;
use crate::limit_file::{FileLimit, FilePlaces};
use crate::shm::SharedError;

/// The longest wait between two looks for a free place held in another process: a place
/// freed there (or by its holder's death) is seen within this time.
pub const LONGEST_POLL: Duration = Duration::from_millis(10);

/// A lease of a place in a shared store of `ms` milliseconds, when it is one every binding
/// takes: from 1 ms to one day.
pub fn lease_of_ms(ms: u64) -> Option<Duration> {
    (1..=86_400_000)
        .contains(&ms)
        .then(|| Duration::from_millis(ms))
}

/// A lease given in seconds (as Python and PHP give it), by the same rule: from 0.001 s to
/// 86400 s (one day); NaN is none.
pub fn lease_of_secs(seconds: f64) -> Option<Duration> {
    (0.001..=86_400.0)
        .contains(&seconds)
        .then(|| Duration::from_secs_f64(seconds))
}

/// Why a concurrency limit in a shared file could not be made.
#[derive(Debug)]
pub enum LimitError {
    /// A limit of 0 places: nothing could ever run.
    ZeroLimit,
    /// The file could not be used, or holds a limit of another number of places.
    Shared(SharedError),
}

impl std::fmt::Display for LimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LimitError::ZeroLimit => {
                f.write_str("a concurrency limit needs at least 1 place (0 lets nothing run)")
            }
            LimitError::Shared(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LimitError {}

impl From<SharedError> for LimitError {
    fn from(e: SharedError) -> Self {
        LimitError::Shared(e)
    }
}

impl LimitError {
    /// The stable code: [`ConcurrencyLimit::ZERO_LIMIT_CODE`], or the shared file's.
    pub const fn code(&self) -> u32 {
        match self {
            LimitError::ZeroLimit => ConcurrencyLimit::ZERO_LIMIT_CODE,
            LimitError::Shared(e) => e.code(),
        }
    }

    /// The stable name: `zero_limit`, or the shared file's.
    pub const fn name(&self) -> &'static str {
        match self {
            LimitError::ZeroLimit => "zero_limit",
            LimitError::Shared(e) => e.name(),
        }
    }
}

/// A place held in a remote store, as a lease: dropping it gives the place back (a place
/// whose holder dies comes back when its lease expires).
pub trait RemoteLease: Send + Sync {
    /// Extends the lease from now; `Ok(false)` when it had already expired (the place may be
    /// someone else's now).
    ///
    /// # Errors
    /// The store could not be used.
    fn renew(&self) -> Result<bool, SharedError>;
}

/// A place held in a remote store.
pub type RemotePlace = Box<dyn RemoteLease>;

/// A concurrency limit kept in a store shared between machines (Redis, in `recuo-redis`):
/// the store decides who gets a place, so every process of a fleet shares one limit.
pub trait RemoteLimit: Send + Sync + std::fmt::Debug {
    /// The number of places.
    fn limit(&self) -> u32;

    /// Waits for a place, at most `timeout` (`None`: as long as it takes; zero: only asks),
    /// giving up when `cancel` is cancelled. `Ok(None)`: the timeout passed or `cancel` was
    /// cancelled. Each call to the store ends by `calls_until` when given, whatever the
    /// store's own deadline.
    ///
    /// # Errors
    /// The store could not be used: no place (the limit fails closed).
    fn acquire(
        &self,
        timeout: Option<Duration>,
        calls_until: Option<std::time::Instant>,
        cancel: &CancelToken,
    ) -> Result<Option<RemotePlace>, SharedError>;
}

#[derive(Debug, Default)]
struct Counts {
    in_flight: u32,
    max_in_flight: u32,
}

#[derive(Debug)]
struct Inner {
    limit: u32,
    /// This process's places (for a remote limit: the leases it holds).
    counts: Mutex<Counts>,
    freed: Condvar,
    remote: Option<Box<dyn RemoteLimit>>,
    /// The places of a shared file (then `remote` is the same file's handle).
    file: Option<Arc<FilePlaces>>,
}

/// At most `limit` requests in flight at once. Clones share the limit; so do all limits on
/// the same shared file, in any process of the machine, and all remote limits on the same
/// store and key, in any process on any machine.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimit(Arc<Inner>);

/// One place in flight, given back when dropped.
#[must_use = "the place is given back as soon as the permit is dropped"]
pub struct Permit {
    limit: Arc<Inner>,
    // Dropped after the count is given back (field order), releasing the remote place.
    _place: Option<RemotePlace>,
}

impl std::fmt::Debug for Permit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permit")
            .field("remote", &self._place.is_some())
            .finish()
    }
}

impl Permit {
    /// Extends a remote place's lease from now (a long request does this before its lease
    /// ends); `Ok(false)` when the lease had already expired. A local place has no lease:
    /// `Ok(true)`.
    ///
    /// # Errors
    /// The remote store could not be used.
    pub fn renew(&self) -> Result<bool, SharedError> {
        self._place.as_ref().map_or(Ok(true), |p| p.renew())
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut c = self
            .limit
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        c.in_flight -= 1;
        drop(c);
        self.limit.freed.notify_one();
    }
}

/// How often a blocked `acquire` looks at its cancellation token.
const CANCEL_POLL: Duration = Duration::from_millis(5);

impl ConcurrencyLimit {
    /// The stable code of a zero limit, the only way to make none (C: 156).
    pub const ZERO_LIMIT_CODE: u32 = 56;

    /// A limit of `limit` places; `None` when `limit` is 0 (nothing could ever run).
    pub fn new(limit: u32) -> Option<Self> {
        (limit > 0).then(|| Self::with(limit, None, None))
    }

    /// A limit kept in a remote store (Redis, through `recuo-redis`), shared by every process
    /// that uses the same store and key. Its counts ([`in_flight`](Self::in_flight),
    /// [`max_in_flight`](Self::max_in_flight)) are this process's places.
    pub fn remote(remote: Box<dyn RemoteLimit>) -> Self {
        Self::with(remote.limit().max(1), Some(remote), None)
    }

    /// A limit of `limit` places in the file at `path` (created `0600` if missing), shared
    /// by every process of this machine that opens the same file with the same limit.
    ///
    /// Each place is a lock on one byte of the file (an open-file-description lock, Linux
    /// 3.15 or later), which the kernel releases when its holder's process ends — `kill -9`
    /// included: a dead holder's place comes back at once, and a waiter in another process
    /// takes it within [`LONGEST_POLL`] (waiters look again every 1 ms, then less often, at
    /// least every 10 ms). [`in_flight`](Self::in_flight) counts the places held by every
    /// process; [`max_in_flight`](Self::max_in_flight) only this handle's.
    ///
    /// A process forked from one that holds places shares those locks until it exits or
    /// first uses the limit (it then opens the file again for itself): open the limit in each
    /// worker, or start workers afresh rather than forking a holder.
    ///
    /// # Errors
    /// [`LimitError::ZeroLimit`] for 0 places; [`LimitError::Shared`] when the file cannot be
    /// used (a symbolic link, not a regular file, another user's, writable by others, not a
    /// recuo state, a kernel without these locks) or holds another number of places.
    pub fn shared(path: impl AsRef<std::path::Path>, limit: u32) -> Result<Self, LimitError> {
        if limit == 0 {
            return Err(LimitError::ZeroLimit);
        }
        let places = Arc::new(FilePlaces::open(path.as_ref(), limit)?);
        Ok(Self::with(
            limit,
            Some(Box::new(FileLimit(places.clone()))),
            Some(places),
        ))
    }

    fn with(
        limit: u32,
        remote: Option<Box<dyn RemoteLimit>>,
        file: Option<Arc<FilePlaces>>,
    ) -> Self {
        ConcurrencyLimit(Arc::new(Inner {
            limit,
            counts: Mutex::new(Counts::default()),
            freed: Condvar::new(),
            remote,
            file,
        }))
    }

    /// The shared file of a limit made by [`shared`](Self::shared).
    pub fn path(&self) -> Option<&std::path::Path> {
        self.0.file.as_deref().map(FilePlaces::path)
    }

    /// The number of places.
    pub fn limit(&self) -> u32 {
        self.0.limit
    }

    /// Whether the places are kept in a remote store (not a shared file).
    pub fn is_remote(&self) -> bool {
        self.0.remote.is_some() && self.0.file.is_none()
    }

    /// Requests in flight now (for a remote limit: this process's; for a shared file: every
    /// process's, as the kernel counts the locks held — this process's alone if the kernel
    /// cannot be asked).
    pub fn in_flight(&self) -> u32 {
        let own = self.lock().in_flight;
        self.0
            .file
            .as_ref()
            .and_then(|f| f.count_held().ok())
            .unwrap_or(own)
    }

    /// The places held through this handle and its clones: for a limit in this process or
    /// on a remote store, [`in_flight`](Self::in_flight); for a shared file, this process's
    /// places only.
    pub fn held_here(&self) -> u32 {
        self.lock().in_flight
    }

    /// The most requests that were ever in flight at once through this handle and its clones
    /// (for a remote limit or a shared file: this process's places, not the others').
    pub fn max_in_flight(&self) -> u32 {
        self.lock().max_in_flight
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.0.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(&self, c: &mut Counts, place: Option<RemotePlace>) -> Permit {
        c.in_flight += 1;
        c.max_in_flight = c.max_in_flight.max(c.in_flight);
        Permit {
            limit: self.0.clone(),
            _place: place,
        }
    }

    /// A place now, or `None` when all are taken.
    ///
    /// # Errors
    /// Only a remote limit: its store could not be used (no place is given without the
    /// store's word).
    pub fn try_acquire(&self) -> Result<Option<Permit>, SharedError> {
        if self.0.remote.is_some() {
            return self.acquire(Some(Duration::ZERO), &CancelToken::new());
        }
        let mut c = self.lock();
        Ok((c.in_flight < self.0.limit).then(|| self.take(&mut c, None)))
    }

    /// Waits for a place, at most `timeout` (`None`: as long as it takes), and gives up when
    /// `cancel` is cancelled (within a few milliseconds). `Ok(None)`: the timeout passed or
    /// `cancel` was cancelled.
    ///
    /// # Errors
    /// Only a remote limit: its store could not be used, within the store's deadline per
    /// call (the limit fails closed).
    ///
    /// A remote store's calls end by the timeout too (only asking, a timeout of 0, takes the
    /// store's own deadline).
    pub fn acquire(
        &self,
        timeout: Option<Duration>,
        cancel: &CancelToken,
    ) -> Result<Option<Permit>, SharedError> {
        let calls_until = timeout
            .filter(|t| !t.is_zero())
            .and_then(|t| std::time::Instant::now().checked_add(t));
        self.acquire_slice(timeout, calls_until, cancel)
    }

    /// [`acquire`](Self::acquire) for one slice of a longer wait (a host that looks at its
    /// signals between slices): waits at most `slice`, while a remote store's calls end by
    /// `until`, the end of the whole wait (`None`: the store's own deadline).
    ///
    /// # Errors
    /// As [`acquire`](Self::acquire).
    pub fn acquire_slice(
        &self,
        slice: Option<Duration>,
        until: Option<std::time::Instant>,
        cancel: &CancelToken,
    ) -> Result<Option<Permit>, SharedError> {
        if let Some(remote) = &self.0.remote {
            return Ok(remote
                .acquire(slice, until, cancel)?
                .map(|place| self.take(&mut self.lock(), Some(place))));
        }
        Ok(self.acquire_local(slice, cancel))
    }

    fn acquire_local(&self, timeout: Option<Duration>, cancel: &CancelToken) -> Option<Permit> {
        // A zero timeout only looks, and reads no clock (a WebAssembly host has none to read).
        let looks_only = timeout.is_some_and(|t| t.is_zero());
        // A timeout too long to add to the clock is no timeout.
        let until = timeout
            .filter(|_| !looks_only)
            .and_then(|t| Instant::now().checked_add(t));
        let mut c = self.lock();
        loop {
            if c.in_flight < self.0.limit {
                return Some(self.take(&mut c, None));
            }
            if looks_only || cancel.is_cancelled() {
                return None;
            }
            let mut slice = CANCEL_POLL;
            if let Some(until) = until {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return None;
                }
                slice = slice.min(left);
            }
            c = self
                .0
                .freed
                .wait_timeout(c, slice)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_last_from_a_millisecond_to_a_day() {
        let day = Duration::from_secs(86_400);
        assert_eq!(lease_of_ms(1), Some(Duration::from_millis(1)));
        assert_eq!(lease_of_ms(86_400_000), Some(day));
        assert_eq!((lease_of_ms(0), lease_of_ms(86_400_001)), (None, None));
        assert_eq!(lease_of_secs(0.001), Some(Duration::from_millis(1)));
        assert_eq!(lease_of_secs(86_400.0), Some(day));
        for s in [0.0, 0.000_9, 86_400.001, f64::NAN, f64::INFINITY, -1.0] {
            assert_eq!(lease_of_secs(s), None, "{s}");
        }
    }

    #[test]
    fn permits_come_back_when_dropped() {
        let l = ConcurrencyLimit::new(2).unwrap();
        let a = l.try_acquire().unwrap().unwrap();
        let b = l.try_acquire().unwrap().unwrap();
        assert!(l.try_acquire().unwrap().is_none());
        assert_eq!((l.in_flight(), l.max_in_flight()), (2, 2));
        drop(a);
        assert_eq!(l.in_flight(), 1);
        let _c = l.try_acquire().unwrap().unwrap();
        drop(b);
        assert_eq!((l.in_flight(), l.max_in_flight()), (1, 2));
        assert!(ConcurrencyLimit::new(0).is_none());
    }

    #[test]
    fn threads_never_exceed_the_limit() {
        let l = ConcurrencyLimit::new(3).unwrap();
        let cancel = CancelToken::new();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (l, cancel) = (l.clone(), cancel.clone());
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        let _p = l.acquire(None, &cancel).unwrap().unwrap();
                        assert!(l.in_flight() <= 3);
                        std::thread::yield_now();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(l.in_flight(), 0);
        assert!(l.max_in_flight() <= 3);
    }

    #[test]
    fn waiting_ends_on_timeout_or_cancellation() {
        let l = ConcurrencyLimit::new(1).unwrap();
        let _held = l.try_acquire().unwrap().unwrap();
        let cancel = CancelToken::new();
        assert!(l
            .acquire(Some(Duration::from_millis(10)), &cancel)
            .unwrap()
            .is_none());
        let c = cancel.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            c.cancel();
        });
        assert!(l.acquire(None, &cancel).unwrap().is_none());
        t.join().unwrap();
    }

    /// A remote store of `places` places, counting what it gives and takes back; `broken`
    /// makes it fail.
    #[derive(Debug, Default)]
    struct Store {
        places: u32,
        held: Arc<Mutex<u32>>,
        broken: bool,
    }

    struct Place(Arc<Mutex<u32>>);

    impl RemoteLease for Place {
        fn renew(&self) -> Result<bool, SharedError> {
            Ok(*self.0.lock().unwrap() > 0)
        }
    }

    impl Drop for Place {
        fn drop(&mut self) {
            *self.0.lock().unwrap() -= 1;
        }
    }

    impl RemoteLimit for Store {
        fn limit(&self) -> u32 {
            self.places
        }

        fn acquire(
            &self,
            _timeout: Option<Duration>,
            _calls_until: Option<std::time::Instant>,
            _cancel: &CancelToken,
        ) -> Result<Option<RemotePlace>, SharedError> {
            if self.broken {
                return Err(SharedError::Io(std::io::Error::other("store out of reach")));
            }
            let mut held = self.held.lock().unwrap();
            if *held == self.places {
                return Ok(None);
            }
            *held += 1;
            Ok(Some(Box::new(Place(self.held.clone()))))
        }
    }

    #[test]
    fn a_remote_limit_takes_its_places_from_the_store_and_gives_them_back() {
        let held = Arc::new(Mutex::new(0));
        let l = ConcurrencyLimit::remote(Box::new(Store {
            places: 2,
            held: held.clone(),
            broken: false,
        }));
        assert!(l.is_remote());
        assert_eq!(l.limit(), 2);
        let a = l.try_acquire().unwrap().unwrap();
        let _b = l.try_acquire().unwrap().unwrap();
        assert!(a.renew().unwrap());
        assert!(l.try_acquire().unwrap().is_none());
        assert_eq!((*held.lock().unwrap(), l.in_flight()), (2, 2));
        drop(a);
        assert_eq!((*held.lock().unwrap(), l.in_flight()), (1, 1));
        assert_eq!(l.max_in_flight(), 2);

        let broken = ConcurrencyLimit::remote(Box::new(Store {
            places: 2,
            broken: true,
            ..Store::default()
        }));
        let e = broken.try_acquire().unwrap_err();
        assert_eq!(e.to_string(), "shared state: store out of reach");
        assert_eq!(broken.in_flight(), 0);
    }
}
