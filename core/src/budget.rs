//! The retry budget: retries may be at most a ratio of recent requests plus a small
//! floor per second, so that when everything fails, clients stop multiplying the load (as in
//! Finagle's RetryBudget, gRPC retry throttling and the AWS retry quota).

use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::attempts::RetryAllowance;
use crate::clock::monotonic_ns;
use crate::shm::{Header, Mapping, SharedError, SharedState};

/// The longest window a budget remembers, in seconds.
pub const MAX_WINDOW_S: u32 = 60;

/// One second's counts. Each is one word, the second it counts (its stamp: the monotonic
/// second + 1, in the high 32 bits) and the count (the low 32 bits), so that a count and the
/// second it belongs to change together: a bucket is recycled for a new second by the same
/// compare-and-swap that counts in it, and nothing a preempted process does can count into
/// a second it did not read.
#[repr(C)]
struct Bucket {
    requests: AtomicU64,
    retries: AtomicU64,
}

/// The stamp of the second of `now_ns` (never 0, which a zeroed bucket holds).
fn stamp(now_ns: u64) -> u32 {
    ((now_ns / 1_000_000_000) as u32).wrapping_add(1).max(1)
}

/// The count `word` holds for a window of `window` seconds ending at stamp `now`: 0 when
/// it counts a second outside the window (or none).
fn count_in_window(word: u64, now: u32, window: u32) -> u64 {
    let seen = (word >> 32) as u32;
    if seen != 0 && now.wrapping_sub(seen) < window {
        word & u64::from(u32::MAX)
    } else {
        0
    }
}

/// Whether stamp `a` is a later second than stamp `b`.
fn later(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// Counts one in `word` for stamp `now`: the word is recycled when it counts an earlier
/// second; a count stops at 2^32 − 1. When it already counts a later second (`now` was read
/// before another process moved on), the one is counted there if `into_later`, else dropped:
/// a retry counted late still counts, a request counted late earns nothing.
fn count_one(word: &AtomicU64, now: u32, into_later: bool) {
    let _ = word.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
        let seen = (w >> 32) as u32;
        let (stamp, count) = if seen == now || (seen != 0 && later(seen, now)) {
            if seen != now && !into_later {
                return None;
            }
            (
                seen,
                (w & u64::from(u32::MAX))
                    .saturating_add(1)
                    .min(u64::from(u32::MAX)),
            )
        } else {
            (now, 1)
        };
        Some(u64::from(stamp) << 32 | count)
    });
}

#[repr(C)]
pub(crate) struct BudgetState {
    header: Header,
    ratio_ppm: AtomicU64,
    floor_milli_per_s: AtomicU64,
    window_s: AtomicU32,
    _pad: u32,
    buckets: [Bucket; MAX_WINDOW_S as usize],
}

// SAFETY: repr(C), integers and atomics only, valid when zeroed.
#[allow(unsafe_code)]
unsafe impl SharedState for BudgetState {
    fn header(&self) -> &Header {
        &self.header
    }
}

/// Version 2: counts and their second in one word (version 1 files are refused).
const KIND_BUDGET: u32 = 0x0002_0002;

/// Why a budget could not be made.
#[derive(Debug)]
pub enum BudgetError {
    /// The ratio is not a number in `[0, 1000]`, the floor is negative or not a number, or
    /// the window is not 1–60 s.
    Invalid(String),
    /// The shared file could not be used, or was set up with other settings.
    Shared(SharedError),
}

impl std::fmt::Display for BudgetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BudgetError::Invalid(s) => f.write_str(s),
            BudgetError::Shared(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for BudgetError {}

impl BudgetError {
    /// The stable code every binding reports (C: `100 +` it; an I/O failure is 200).
    pub const fn code(&self) -> u32 {
        match self {
            BudgetError::Invalid(_) => 57,
            BudgetError::Shared(e) => e.code(),
        }
    }

    /// The stable name: `invalid_budget`, or the shared file's error.
    pub const fn name(&self) -> &'static str {
        match self {
            BudgetError::Invalid(_) => "invalid_budget",
            BudgetError::Shared(e) => e.name(),
        }
    }
}

/// A retry budget kept in a store shared between machines (Redis, in `recuo-redis`): the
/// same rule as the local budget, counted by the store, so every process of a fleet shares
/// one budget.
pub trait RemoteBudget: Send + Sync {
    /// The settings the store counts with: ratio, floor per second, window in seconds.
    fn settings(&self) -> (f64, f64, u32);

    /// Counts a first attempt, now on the store's clock or, with `now_ns`, at that instant on
    /// a time base every user of the store shares (tests).
    ///
    /// # Errors
    /// The store could not be used.
    fn record_request(&self, now_ns: Option<u64>) -> Result<(), SharedError>;

    /// [`record_request`](Self::record_request) now, the store's call ending by `until` too
    /// when given (an operation's deadline).
    ///
    /// # Errors
    /// The store could not be used by then.
    fn record_request_by(&self, until: Option<std::time::Instant>) -> Result<(), SharedError> {
        let _ = until;
        self.record_request(None)
    }

    /// [`withdraw`](Self::withdraw) now, the store's call ending by `until` too when given.
    ///
    /// # Errors
    /// The store could not be used by then.
    fn withdraw_by(&self, until: Option<std::time::Instant>) -> Result<bool, SharedError> {
        let _ = until;
        self.withdraw(None)
    }

    /// Takes one retry if the budget allows it (now, or at `now_ns` as above).
    ///
    /// # Errors
    /// The store could not be used.
    fn withdraw(&self, now_ns: Option<u64>) -> Result<bool, SharedError>;

    /// Requests and retries counted in the window ending now (or at `now_ns` as above).
    ///
    /// # Errors
    /// The store could not be used.
    fn counts(&self, now_ns: Option<u64>) -> Result<(u64, u64), SharedError>;
}

enum Storage {
    Local(Box<BudgetState>),
    Shared(Mapping<BudgetState>),
    Remote {
        store: Box<dyn RemoteBudget>,
        /// Buckets never used: what `s()` answers for a remote budget.
        unused: Box<BudgetState>,
    },
}

/// A budget's settings, kept by this process: a shared file's are checked against them
/// when it is opened and never read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Settings {
    ratio_ppm: u64,
    floor_milli_per_s: u64,
    window_s: u32,
}

struct Inner {
    storage: Storage,
    settings: Settings,
    /// Held by a withdrawal between reading the counts and counting the retry (with a
    /// shared file's lock too): no two withdrawals, in any thread or process, see the same
    /// counts.
    withdrawing: std::sync::Mutex<()>,
}

/// Allows a retry only while retries in the last `window` seconds stay within
/// `ratio × requests + floor × window`. Clones share the budget; so do all
/// [`RetryBudget::shared`] budgets on the same file.
///
/// # Defaults
/// [`RetryBudget::default`]: ratio 0.1 (10%), floor 1 retry per second, window 10 s.
///
/// Requests are counted per second without a lock; a withdrawal reads the counts and takes
/// its retry under a lock (in a shared file, the file's lock too), so the budget is exact
/// across threads and processes alike.
#[derive(Clone)]
pub struct RetryBudget(Arc<Inner>);

impl std::fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.0.settings;
        f.debug_struct("RetryBudget")
            .field("ratio", &(s.ratio_ppm as f64 / 1e6))
            .field("floor_per_s", &(s.floor_milli_per_s as f64 / 1e3))
            .field("window_s", &s.window_s)
            .finish()
    }
}

impl Default for RetryBudget {
    fn default() -> Self {
        Self::new(0.1, 1.0, 10).unwrap_or_else(|_| unreachable!("the defaults are valid"))
    }
}

fn settings(ratio: f64, floor_per_s: f64, window_s: u32) -> Result<(u64, u64, u32), BudgetError> {
    if !(0.0..=1000.0).contains(&ratio) {
        return Err(BudgetError::Invalid(format!(
            "the retry ratio must be between 0 and 1000, not {ratio}"
        )));
    }
    if !(0.0..=1e9).contains(&floor_per_s) {
        return Err(BudgetError::Invalid(format!(
            "the floor must be 0 or more retries per second, not {floor_per_s}"
        )));
    }
    if !(1..=MAX_WINDOW_S).contains(&window_s) {
        return Err(BudgetError::Invalid(format!(
            "the window must be 1 to {MAX_WINDOW_S} seconds, not {window_s}"
        )));
    }
    Ok((
        (ratio * 1e6).round() as u64,
        (floor_per_s * 1e3).round() as u64,
        window_s,
    ))
}

impl RetryBudget {
    /// A budget for this process.
    ///
    /// # Errors
    /// [`BudgetError::Invalid`] for a ratio outside `[0, 1000]`, a negative or NaN floor, or
    /// a window outside 1–60 s.
    pub fn new(ratio: f64, floor_per_s: f64, window_s: u32) -> Result<Self, BudgetError> {
        let (r, f, w) = settings(ratio, floor_per_s, window_s)?;
        // SAFETY: BudgetState is valid when zeroed (SharedState); built on the heap to avoid a
        // large stack copy.
        let state: Box<BudgetState> = zeroed_box();
        state.ratio_ppm.store(r, Ordering::Release);
        state.floor_milli_per_s.store(f, Ordering::Release);
        state.window_s.store(w, Ordering::Release);
        Ok(Self::with(Storage::Local(state), (r, f, w)))
    }

    /// A budget in the file at `path`, shared by every process that opens it.
    ///
    /// # Errors
    /// As [`RetryBudget::new`]; [`BudgetError::Shared`] when the file cannot be used or was
    /// set up with other settings.
    pub fn shared(
        path: impl AsRef<Path>,
        ratio: f64,
        floor_per_s: f64,
        window_s: u32,
    ) -> Result<Self, BudgetError> {
        let (r, f, w) = settings(ratio, floor_per_s, window_s)?;
        let path = path.as_ref();
        let mapping = Mapping::open(
            path,
            KIND_BUDGET,
            |s: &BudgetState| {
                s.ratio_ppm.store(r, Ordering::Release);
                s.floor_milli_per_s.store(f, Ordering::Release);
                s.window_s.store(w, Ordering::Release);
            },
            |s| {
                let found = (
                    s.ratio_ppm.load(Ordering::Acquire),
                    s.floor_milli_per_s.load(Ordering::Acquire),
                    s.window_s.load(Ordering::Acquire),
                );
                if found == (r, f, w) {
                    Ok(())
                } else {
                    Err(SharedError::Mismatch(format!(
                        "{} holds a budget of ratio {}, floor {}/s, window {} s; this process \
                         asked for ratio {ratio}, floor {floor_per_s}/s, window {window_s} s",
                        path.display(),
                        found.0 as f64 / 1e6,
                        found.1 as f64 / 1e3,
                        found.2
                    )))
                }
            },
        )
        .map_err(BudgetError::Shared)?;
        Ok(Self::with(Storage::Shared(mapping), (r, f, w)))
    }

    /// A budget kept in a remote store (Redis, through `recuo-redis`), shared by every
    /// process that uses the same store and key, with the store's settings. It fails closed:
    /// while the store cannot be used, a first attempt earns nothing and no retry is allowed
    /// (the `_checked` methods say why).
    ///
    /// # Errors
    /// [`BudgetError::Invalid`] for settings [`RetryBudget::new`] would refuse.
    pub fn remote(store: Box<dyn RemoteBudget>) -> Result<Self, BudgetError> {
        let (ratio, floor_per_s, window_s) = store.settings();
        let settings = settings(ratio, floor_per_s, window_s)?;
        Ok(Self::with(
            Storage::Remote {
                store,
                unused: zeroed_box(),
            },
            settings,
        ))
    }

    fn remote_store(&self) -> Option<&dyn RemoteBudget> {
        match &self.0.storage {
            Storage::Remote { store, .. } => Some(store.as_ref()),
            _ => None,
        }
    }

    /// Whether the budget is kept in a remote store.
    pub fn is_remote(&self) -> bool {
        self.remote_store().is_some()
    }

    fn with(storage: Storage, (ratio_ppm, floor_milli_per_s, window_s): (u64, u64, u32)) -> Self {
        RetryBudget(Arc::new(Inner {
            storage,
            settings: Settings {
                ratio_ppm,
                floor_milli_per_s,
                window_s,
            },
            withdrawing: std::sync::Mutex::new(()),
        }))
    }

    fn s(&self) -> &BudgetState {
        match &self.0.storage {
            Storage::Local(s) => s,
            Storage::Shared(m) => m,
            Storage::Remote { unused, .. } => unused,
        }
    }

    /// The window in seconds, from this process's settings (1–60).
    fn window(&self) -> u64 {
        u64::from(self.0.settings.window_s.clamp(1, MAX_WINDOW_S))
    }

    /// The bucket of the second of stamp `now`.
    fn bucket(&self, now: u32) -> &Bucket {
        &self.s().buckets[(u64::from(now.wrapping_sub(1)) % self.window()) as usize]
    }

    /// Counts a first attempt at `now_ns` (the monotonic clock; for a remote budget, a time
    /// base every user of its store shares): it earns retries. A remote budget that cannot
    /// reach its store counts nothing (it fails closed: such a request earns no retry).
    pub fn record_request_at(&self, now_ns: u64) {
        let _ = self.record_request_checked(Some(now_ns));
    }

    /// Counts a first attempt now (a remote budget: on its store's clock).
    pub fn record_request(&self) {
        let _ = self.record_request_checked(None);
    }

    /// Counts a first attempt now, a remote budget's call ending by `until` too when given
    /// (an operation's deadline): not counted when the store did not answer by then.
    pub fn record_request_by(&self, until: Option<std::time::Instant>) {
        match self.remote_store() {
            Some(store) => {
                let _ = store.record_request_by(until);
            }
            None => self.record_request(),
        }
    }

    /// Counts a first attempt now (`None`) or at `now_ns`, as
    /// [`record_request_at`](Self::record_request_at) counts it.
    ///
    /// # Errors
    /// Only a remote budget: its store could not be used (the request is not counted).
    pub fn record_request_checked(&self, now_ns: Option<u64>) -> Result<(), SharedError> {
        if let Some(store) = self.remote_store() {
            return store.record_request(now_ns);
        }
        let now_ns = now_ns.unwrap_or_else(monotonic_ns);
        let now = stamp(now_ns);
        count_one(&self.bucket(now).requests, now, false);
        Ok(())
    }

    /// Requests and retries counted in the window ending at `now_ns` (`(0, 0)` while a
    /// remote budget cannot reach its store).
    pub fn counts_at(&self, now_ns: u64) -> (u64, u64) {
        self.counts_checked(Some(now_ns)).unwrap_or((0, 0))
    }

    /// Requests and retries counted in the window ending now (`None`) or at `now_ns`.
    ///
    /// # Errors
    /// Only a remote budget: its store could not be used.
    pub fn counts_checked(&self, now_ns: Option<u64>) -> Result<(u64, u64), SharedError> {
        if let Some(store) = self.remote_store() {
            return store.counts(now_ns);
        }
        Ok(self.local_counts(stamp(now_ns.unwrap_or_else(monotonic_ns))))
    }

    /// Requests and retries counted in the window ending at stamp `now`.
    fn local_counts(&self, now: u32) -> (u64, u64) {
        let window = self.window() as u32;
        self.s().buckets[..window as usize]
            .iter()
            .fold((0u64, 0u64), |(req, ret), b| {
                (
                    req + count_in_window(b.requests.load(Ordering::Acquire), now, window),
                    ret + count_in_window(b.retries.load(Ordering::Acquire), now, window),
                )
            })
    }

    /// The latest second any bucket counts (0: none).
    fn latest(&self) -> u32 {
        self.s().buckets[..self.window() as usize]
            .iter()
            .flat_map(|b| [&b.requests, &b.retries])
            .map(|w| (w.load(Ordering::Acquire) >> 32) as u32)
            .fold(0, |a, b| if a == 0 || later(b, a) { b } else { a })
    }

    /// Takes one retry at `now_ns` if the budget allows it (never while a remote budget
    /// cannot reach its store).
    pub fn try_withdraw_at(&self, now_ns: u64) -> bool {
        self.withdraw_checked(Some(now_ns)).unwrap_or(false)
    }

    /// Takes one retry now (`None`) or at `now_ns` if the budget allows it: `Ok(false)` when
    /// none is left — or, for a budget of this machine, when `now_ns` is a second earlier
    /// than one the budget has already counted (a clock read before another thread or
    /// process moved on: its retry is refused rather than counted in a window it was not
    /// judged in).
    ///
    /// # Errors
    /// A remote budget's store could not be used, or a shared file could not be locked (no
    /// retry is taken).
    pub fn withdraw_checked(&self, now_ns: Option<u64>) -> Result<bool, SharedError> {
        if let Some(store) = self.remote_store() {
            return store.withdraw(now_ns);
        }
        self.local_withdraw(now_ns)
    }

    /// Takes one retry at `now_ns` (`None`: the clock read under the lock) if the budget
    /// allows it.
    fn local_withdraw(&self, now_ns: Option<u64>) -> Result<bool, SharedError> {
        let _threads = self
            .0
            .withdrawing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _processes = match &self.0.storage {
            Storage::Shared(mapping) => Some(mapping.lock()?),
            _ => None,
        };
        // Under the lock the budget's time never goes back: a withdrawal whose `now` was read
        // before another moved on to a later second takes nothing (a retry refused, never
        // one too many).
        let now = stamp(now_ns.unwrap_or_else(monotonic_ns));
        let latest = self.latest();
        if latest != 0 && later(latest, now) {
            return Ok(false);
        }
        let settings = self.0.settings;
        let (requests, retries) = self.local_counts(now);
        let ratio = settings.ratio_ppm as f64 / 1e6;
        let floor = settings.floor_milli_per_s as f64 / 1e3;
        let window = self.window() as f64;
        let allowed = ratio * requests as f64 + floor * window;
        if retries.saturating_add(1) as f64 > allowed + 1e-9 {
            return Ok(false);
        }
        count_one(&self.bucket(now).retries, now, true);
        Ok(true)
    }
}

impl RetryAllowance for RetryBudget {
    fn try_withdraw(&self) -> bool {
        self.withdraw_checked(None).unwrap_or(false)
    }

    fn try_withdraw_by(&self, until: Option<std::time::Instant>) -> bool {
        match self.remote_store() {
            Some(store) => store.withdraw_by(until).unwrap_or(false),
            None => self.try_withdraw(),
        }
    }
}

/// A zeroed `BudgetState` on the heap.
#[allow(unsafe_code)]
fn zeroed_box() -> Box<BudgetState> {
    let layout = std::alloc::Layout::new::<BudgetState>();
    // SAFETY: BudgetState is valid when all zeros (SharedState) and has a non-zero size; the
    // allocation is checked and handed to Box with the same layout.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout).cast::<BudgetState>();
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn retries_are_a_ratio_of_requests_plus_a_floor() {
        let b = RetryBudget::new(0.1, 0.5, 10).unwrap();
        let t = 100 * S;
        // The floor alone: 0.5/s × 10 s = 5 retries.
        for _ in 0..5 {
            assert!(b.try_withdraw_at(t));
        }
        assert!(!b.try_withdraw_at(t));
        // 100 requests earn 10 more.
        for _ in 0..100 {
            b.record_request_at(t);
        }
        for _ in 0..10 {
            assert!(b.try_withdraw_at(t));
        }
        assert!(!b.try_withdraw_at(t));
        assert_eq!(b.counts_at(t), (100, 15));
    }

    #[test]
    fn old_seconds_fall_out_of_the_window() {
        let b = RetryBudget::new(0.0, 0.1, 10).unwrap();
        let t = 50 * S;
        assert!(b.try_withdraw_at(t));
        assert!(!b.try_withdraw_at(t + 9 * S));
        assert!(b.try_withdraw_at(t + 10 * S), "the first retry is 10 s old");
        assert_eq!(b.counts_at(t + 10 * S), (0, 1));
    }

    /// A store allowing `allowed` retries, counting what it is told; `broken` makes it fail.
    struct Store {
        allowed: std::sync::Mutex<u64>,
        requests: AtomicU64,
        broken: bool,
    }

    impl RemoteBudget for Store {
        fn settings(&self) -> (f64, f64, u32) {
            (0.5, 0.0, 10)
        }
        fn record_request(&self, _now_ns: Option<u64>) -> Result<(), SharedError> {
            if self.broken {
                return Err(SharedError::Io(std::io::Error::other("out of reach")));
            }
            self.requests.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        fn withdraw(&self, _now_ns: Option<u64>) -> Result<bool, SharedError> {
            if self.broken {
                return Err(SharedError::Io(std::io::Error::other("out of reach")));
            }
            let mut left = self.allowed.lock().unwrap();
            Ok(left.checked_sub(1).map(|l| *left = l).is_some())
        }
        fn counts(&self, _now_ns: Option<u64>) -> Result<(u64, u64), SharedError> {
            if self.broken {
                return Err(SharedError::Io(std::io::Error::other("out of reach")));
            }
            Ok((self.requests.load(Ordering::Relaxed), 0))
        }
    }

    #[test]
    fn a_remote_budget_asks_its_store_and_fails_closed() {
        let store = |allowed, broken| Store {
            allowed: std::sync::Mutex::new(allowed),
            requests: AtomicU64::new(0),
            broken,
        };
        let b = RetryBudget::remote(Box::new(store(2, false))).unwrap();
        assert!(b.is_remote());
        b.record_request();
        b.record_request();
        assert_eq!(b.counts_at(0), (2, 0));
        assert!(b.try_withdraw());
        assert!(b.try_withdraw());
        assert!(!b.try_withdraw());
        assert!(format!("{b:?}").contains("ratio: 0.5"));

        let broken = RetryBudget::remote(Box::new(store(5, true))).unwrap();
        broken.record_request();
        assert!(!broken.try_withdraw());
        assert_eq!(broken.counts_at(0), (0, 0));
        let out = "shared state: out of reach";
        assert_eq!(
            broken.record_request_checked(None).unwrap_err().to_string(),
            out
        );
        assert_eq!(
            broken.withdraw_checked(Some(0)).unwrap_err().to_string(),
            out
        );
        assert_eq!(broken.counts_checked(None).unwrap_err().to_string(), out);
        // A local budget never fails.
        let local = RetryBudget::new(0.0, 0.1, 10).unwrap();
        local.record_request_checked(Some(3 * S)).unwrap();
        assert!(local.withdraw_checked(Some(3 * S)).unwrap());
        assert!(!local.withdraw_checked(Some(3 * S)).unwrap());
        assert_eq!(local.counts_checked(Some(3 * S)).unwrap(), (1, 1));
    }

    #[test]
    fn defaults_and_bad_settings() {
        let b = RetryBudget::default();
        let t = 7 * S;
        let granted = (0..100).filter(|_| b.try_withdraw_at(t)).count();
        assert_eq!(granted, 10);
        assert!(RetryBudget::new(-0.1, 1.0, 10).is_err());
        assert!(RetryBudget::new(f64::NAN, 1.0, 10).is_err());
        assert!(RetryBudget::new(0.1, -1.0, 10).is_err());
        assert!(RetryBudget::new(0.1, 1.0, 0).is_err());
        assert!(RetryBudget::new(0.1, 1.0, 61).is_err());
    }
}
