//! The regulator: limits request *starts* to a rate with a burst, by GCRA — one
//! "theoretical arrival time" updated with a compare-and-swap, no lock and no timer thread.
//! It can live in this process or in a file shared by every process that opens it.

use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{monotonic_ns, CancelToken};
use crate::rate::Rate;
use crate::shm::{Header, Mapping, SharedError, SharedState};

/// Why a regulator could not be made or used.
#[derive(Debug)]
pub enum RegulatorError {
    /// The burst was 0.
    ZeroBurst,
    /// A start weighs more than the burst: it could never be allowed.
    CostAboveBurst {
        /// The start's cost.
        cost: u32,
        /// The burst.
        burst: u32,
    },
    /// A start of cost 0: it would take nothing, so it could pass any limit.
    ZeroCost,
    /// The rate is so slow that the furthest start the regulator may queue (its burst and
    /// [`MAX_QUEUED_STARTS`] intervals ahead) cannot be counted in nanoseconds.
    RateTooSlow {
        /// The rate asked for.
        rate: Rate,
        /// The burst asked for.
        burst: u32,
    },
    /// The start would wait beyond the [`MAX_QUEUED_STARTS`] already queued ahead of it: it
    /// is refused, never started early. Nothing was reserved.
    QueueFull {
        /// The wait the start would need, in nanoseconds.
        wait_ns: u64,
        /// The longest wait the regulator queues, in nanoseconds.
        longest_ns: u64,
    },
    /// The shared file could not be used.
    Shared(SharedError),
}

impl std::fmt::Display for RegulatorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegulatorError::ZeroBurst => f.write_str("the burst must be at least 1"),
            RegulatorError::CostAboveBurst { cost, burst } => write!(
                f,
                "a start of cost {cost} can never pass a regulator whose burst is {burst}"
            ),
            RegulatorError::ZeroCost => f.write_str("a start's cost must be at least 1"),
            RegulatorError::RateTooSlow { rate, burst } => write!(
                f,
                "a regulator of {rate} with a burst of {burst} is too slow: the furthest start \
                 it may queue ({burst} + {MAX_QUEUED_STARTS} intervals ahead) cannot be counted \
                 in nanoseconds; a rate of at least one start every {} days is needed",
                max_interval_ns(*burst) / 86_400_000_000_000
            ),
            RegulatorError::QueueFull {
                wait_ns,
                longest_ns,
            } => write!(
                f,
                "the regulator's queue is full: this start would wait {:.3} s, beyond the \
                 {MAX_QUEUED_STARTS} starts ({:.3} s) it queues ahead; nothing was reserved, \
                 ask again later",
                *wait_ns as f64 / 1e9,
                *longest_ns as f64 / 1e9
            ),
            RegulatorError::Shared(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RegulatorError {}

impl RegulatorError {
    /// The stable code every binding reports (C: `100 +` it; an I/O failure is 200).
    pub const fn code(&self) -> u32 {
        match self {
            RegulatorError::ZeroBurst => 54,
            RegulatorError::CostAboveBurst { .. } => 55,
            RegulatorError::RateTooSlow { .. } => 50,
            RegulatorError::ZeroCost => 60,
            RegulatorError::QueueFull { .. } => 114,
            RegulatorError::Shared(e) => e.code(),
        }
    }

    /// The stable name: `zero_burst`, `cost_above_burst`, `zero_cost`, `invalid_rate` (a
    /// rate too slow), `queue_full`, or the shared file's error.
    pub const fn name(&self) -> &'static str {
        match self {
            RegulatorError::ZeroBurst => "zero_burst",
            RegulatorError::CostAboveBurst { .. } => "cost_above_burst",
            RegulatorError::ZeroCost => "zero_cost",
            RegulatorError::RateTooSlow { .. } => "invalid_rate",
            RegulatorError::QueueFull { .. } => "queue_full",
            RegulatorError::Shared(e) => e.name(),
        }
    }
}

/// The regulator's state: plain atomics, so it can be shared between processes.
#[repr(C)]
pub(crate) struct RegulatorState {
    header: Header,
    /// The configured interval between starts, ns.
    interval_ns: AtomicU64,
    /// The burst.
    burst: AtomicU32,
    /// 1 when the rate adapts to throttling.
    adaptive: AtomicU32,
    /// The interval in force (differs from `interval_ns` only when adaptive), ns.
    current_interval_ns: AtomicU64,
    /// The theoretical arrival time of the next start, ns on the monotonic clock.
    tat_ns: AtomicU64,
}

impl RegulatorState {
    fn new(rate: Rate, burst: u32, adaptive: bool) -> Self {
        RegulatorState {
            header: Header::new(KIND_REGULATOR),
            interval_ns: AtomicU64::new(rate.interval_ns()),
            burst: AtomicU32::new(burst),
            adaptive: AtomicU32::new(u32::from(adaptive)),
            current_interval_ns: AtomicU64::new(rate.interval_ns()),
            tat_ns: AtomicU64::new(0),
        }
    }
}

// SAFETY: repr(C), integers and atomics only, valid when zeroed.
#[allow(unsafe_code)]
unsafe impl SharedState for RegulatorState {
    fn header(&self) -> &Header {
        &self.header
    }
}

impl From<SharedError> for RegulatorError {
    fn from(e: SharedError) -> Self {
        RegulatorError::Shared(e)
    }
}

impl RegulatorError {
    /// Whether a store reached by the host has not answered yet
    /// ([`SharedError::would_block`]).
    pub fn would_block(&self) -> bool {
        matches!(self, RegulatorError::Shared(e) if e.would_block())
    }

    /// The error of a build without Redis support (a binding built without its `redis`
    /// feature): a clear [`SharedError::Io`].
    pub fn no_redis_support() -> Self {
        RegulatorError::Shared(SharedError::Io(std::io::Error::other(
            "this build of recuo has no Redis support (the `redis` feature)",
        )))
    }
}

/// A regulator's state kept in a store shared between machines (Redis, in `recuo-redis`):
/// the same GCRA rule as the local regulator, run atomically in the store
/// (`tests/vectors/gcra.json` holds both to the same answers).
pub trait RemoteGcra: Send + Sync {
    /// Reserves a start of `cost` if it can go within `max_wait_ns`, at `now_ns` (a time base
    /// every user of the state shares) or, with `None`, the store's own clock.
    /// `Ok(Ok(wait_ns))`: reserved, to start after `wait_ns`; `Ok(Err(needed_ns))`: not
    /// reserved, the wait it would need.
    ///
    /// The call ends by `until` when it is given (a caller's timeout), whatever the store's
    /// own deadline.
    ///
    /// # Errors
    /// The store could not be used (it fails closed: no start).
    fn reserve(
        &self,
        now_ns: Option<u64>,
        cost: u32,
        max_wait_ns: u64,
        until: Option<std::time::Instant>,
    ) -> Result<Result<u64, u64>, SharedError>;

    /// Reports a 429 (`throttled`) or a success to an adaptive state: the store applies
    /// [`adapted_interval_ns`] to the interval in force it keeps, atomically, and answers the
    /// interval in force after it, in nanoseconds. A store that keeps no adaptation answers 0.
    ///
    /// # Errors
    /// The store could not be used (the report is lost: nothing changes).
    fn adapt(&self, throttled: bool) -> Result<u64, SharedError> {
        let _ = throttled;
        Ok(0)
    }

    /// [`adapt`](Self::adapt), the store's call ending by `until` too when given (an
    /// operation's deadline).
    ///
    /// # Errors
    /// As [`adapt`](Self::adapt).
    fn adapt_by(
        &self,
        throttled: bool,
        until: Option<std::time::Instant>,
    ) -> Result<u64, SharedError> {
        let _ = until;
        self.adapt(throttled)
    }

    /// The interval in force the store answered last (by a reservation or a report), in
    /// nanoseconds; 0 when it has answered none yet.
    fn interval_in_force_ns(&self) -> u64 {
        0
    }
}

/// The adaptive rule (one rule, which a remote store repeats — `tests/vectors/gcra.json`
/// holds both to it): the interval in force after a 429 (`throttled`) or a success, from the
/// interval in force `current_ns` and the configured one `base_ns`. A 429 doubles the
/// interval (halves the rate), up to 64 times the configured one; a success gives back 1/16
/// of the configured rate — `1/next = 1/current + 1/(16·base)` — rounded to the nearest
/// nanosecond, down to the configured interval. `None` when nothing changes.
pub fn adapted_interval_ns(current_ns: u64, base_ns: u64, throttled: bool) -> Option<u64> {
    let base = base_ns.max(1);
    let slowest = base.saturating_mul(64);
    let cur = current_ns.clamp(base, slowest);
    if throttled {
        return Some(cur.saturating_mul(2).min(slowest));
    }
    if cur <= base {
        return None;
    }
    // rate' = rate + base_rate/16, i.e. interval' = 1 / (1/cur + 1/(16·base)).
    let next = (cur as f64 * 16.0 * base as f64) / (16.0 * base as f64 + cur as f64);
    Some((next.round() as u64).clamp(base, slowest))
}

const KIND_REGULATOR: u32 = 0x0001_0001;

fn adaptive_words(adaptive: bool) -> &'static str {
    if adaptive {
        "adaptive (a 429 slows every holder)"
    } else {
        "not adaptive"
    }
}

/// How many starts, at the configured rate, a regulator queues ahead of now beyond its
/// burst: a start that would wait longer than `MAX_QUEUED_STARTS` intervals is refused
/// ([`RegulatorError::QueueFull`]), never started early, so that in any window `W` at most
/// `burst + rate·W` starts go however many callers wait.
pub const MAX_QUEUED_STARTS: u64 = 4096;

/// The most nanoseconds ahead of now a regulator's arrival time can be: ahead by the longest
/// queued wait plus the burst's tolerance at the slowest adaptive interval (64 times the
/// configured one).
const fn horizon_ns(interval_ns: u64, burst: u32) -> u64 {
    interval_ns.saturating_mul(MAX_QUEUED_STARTS.saturating_add(64 * burst as u64))
}

/// The slowest interval a regulator of `burst` can count: its horizon stays within 2^62 ns
/// (146 years), so that adding any monotonic time of the machine cannot overflow.
const fn max_interval_ns(burst: u32) -> u64 {
    (1u64 << 62) / (MAX_QUEUED_STARTS + 64 * burst as u64)
}

/// Refuses a rate whose horizon cannot be counted, and a burst of 0.
fn check_settings(rate: Rate, burst: u32) -> Result<(), RegulatorError> {
    if burst == 0 {
        return Err(RegulatorError::ZeroBurst);
    }
    if rate.interval_ns() > max_interval_ns(burst) {
        return Err(RegulatorError::RateTooSlow { rate, burst });
    }
    Ok(())
}

enum Storage {
    Local(Arc<RegulatorState>),
    /// In a file; `interval_ns`, `burst` and `adaptive` are this process's settings (checked
    /// against the file's when opened), which every value read from the file is clamped to.
    Shared {
        mapping: Arc<Mapping<RegulatorState>>,
        interval_ns: u64,
        burst: u32,
        adaptive: bool,
    },
    /// On a remote store (Redis, through `recuo-redis`); `settings` mirrors the rate, burst
    /// and adaptive setting (checked against the store's when opened) for the getters.
    Remote {
        settings: RegulatorState,
        gcra: Box<dyn RemoteGcra>,
    },
}

/// Limits request starts to a rate with a burst. Clones share the allowance; so do all
/// [`Regulator::shared`] regulators opened on the same file, in any process.
///
/// Every start — first attempt or retry — passes the same regulator. Times are
/// nanoseconds on the system's monotonic clock ([`monotonic_ns`]), which every process on
/// the machine shares.
#[derive(Clone)]
pub struct Regulator {
    state: Arc<Storage>,
}

impl std::fmt::Debug for Regulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Regulator")
            .field("rate", &self.rate().to_string())
            .field("burst", &self.burst())
            .field("adaptive", &self.is_adaptive())
            .field("shared", &!matches!(*self.state, Storage::Local(_)))
            .finish()
    }
}

impl Regulator {
    /// A regulator for this process: `rate` starts per second on average, up to `burst` at
    /// once.
    ///
    /// # Errors
    /// [`RegulatorError::ZeroBurst`]; [`RegulatorError::RateTooSlow`] for a rate so slow that
    /// the starts it queues cannot be counted in nanoseconds (below one start every 12 days
    /// with a burst of 1).
    pub fn new(rate: Rate, burst: u32) -> Result<Self, RegulatorError> {
        check_settings(rate, burst)?;
        Ok(Regulator {
            state: Arc::new(Storage::Local(Arc::new(RegulatorState::new(
                rate, burst, false,
            )))),
        })
    }

    /// A regulator whose state lives in a remote store shared between machines — the
    /// `recuo-redis` crate's `regulator_with(url, key, rate, burst, adaptive)` builds one on
    /// Redis. The store answers each reservation atomically by its own clock; `rate`, `burst`
    /// and `adaptive` are the settings the store was opened with (the getters answer them).
    ///
    /// When `adaptive`, the store keeps the interval in force: a 429 reported by any holder
    /// ([`on_throttled`](Self::on_throttled)) slows every holder, and successes bring it back
    /// by the same rule as in one process ([`adapted_interval_ns`]).
    ///
    /// # Errors
    /// [`RegulatorError::ZeroBurst`].
    pub fn remote(
        gcra: Box<dyn RemoteGcra>,
        rate: Rate,
        burst: u32,
        adaptive: bool,
    ) -> Result<Self, RegulatorError> {
        check_settings(rate, burst)?;
        Ok(Regulator {
            state: Arc::new(Storage::Remote {
                settings: RegulatorState::new(rate, burst, adaptive),
                gcra,
            }),
        })
    }

    /// A regulator in the file at `path` (created if missing), shared by every process and
    /// thread that opens the same file: one allowance for PHP-FPM workers, Python
    /// `multiprocessing` workers and C programs alike.
    ///
    /// The file is not adaptive: [`shared_with`](Self::shared_with) sets it up adaptive.
    ///
    /// # Errors
    /// [`RegulatorError::ZeroBurst`]; [`RegulatorError::Shared`] when the file cannot be
    /// mapped, holds something else, or was set up with another rate, burst or adaptive
    /// setting — two processes must not believe in two different allowances.
    pub fn shared(path: impl AsRef<Path>, rate: Rate, burst: u32) -> Result<Self, RegulatorError> {
        Self::shared_with(path, rate, burst, false)
    }

    /// [`shared`](Self::shared), adaptive or not. The adaptive setting is recorded in the
    /// file with the rate and burst when the file is set up, and every process that opens it
    /// must agree (another setting is refused). On an adaptive file a 429 reported by any
    /// process ([`on_throttled`](Self::on_throttled)) halves the rate for every process, and
    /// each success reported by any of them gives back 1/16 of the configured rate.
    ///
    /// # Errors
    /// As [`shared`](Self::shared).
    pub fn shared_with(
        path: impl AsRef<Path>,
        rate: Rate,
        burst: u32,
        adaptive: bool,
    ) -> Result<Self, RegulatorError> {
        check_settings(rate, burst)?;
        let interval = rate.interval_ns();
        let flag = u32::from(adaptive);
        let mapping = Mapping::open(
            path.as_ref(),
            KIND_REGULATOR,
            |s: &RegulatorState| {
                s.interval_ns.store(interval, Ordering::Release);
                s.current_interval_ns.store(interval, Ordering::Release);
                s.burst.store(burst, Ordering::Release);
                s.adaptive.store(flag, Ordering::Release);
                s.tat_ns.store(0, Ordering::Release);
            },
            |s| {
                let (i, b, a) = (
                    s.interval_ns.load(Ordering::Acquire),
                    s.burst.load(Ordering::Acquire),
                    s.adaptive.load(Ordering::Acquire),
                );
                if i == interval && b == burst && a == flag {
                    Ok(())
                } else if a == flag {
                    Err(SharedError::Mismatch(format!(
                        "{} regulates {:.6}/s with a burst of {b}; this process asked for \
                         {:.6}/s with a burst of {burst}",
                        path.as_ref().display(),
                        1e9 / i.max(1) as f64,
                        1e9 / interval as f64
                    )))
                } else {
                    Err(SharedError::Mismatch(format!(
                        "{} regulates {:.6}/s with a burst of {b}, {}; this process asked for \
                         {:.6}/s with a burst of {burst}, {} (the settings are made when the \
                         file is set up, and every process that opens it must agree)",
                        path.as_ref().display(),
                        1e9 / i.max(1) as f64,
                        adaptive_words(a != 0),
                        1e9 / interval as f64,
                        adaptive_words(adaptive),
                    )))
                }
            },
        )
        .map_err(RegulatorError::Shared)?;
        Ok(Regulator {
            state: Arc::new(Storage::Shared {
                mapping: Arc::new(mapping),
                interval_ns: interval,
                burst,
                adaptive,
            }),
        })
    }

    fn s(&self) -> &RegulatorState {
        match &*self.state {
            Storage::Local(s) => s,
            Storage::Shared { mapping, .. } => mapping,
            Storage::Remote { settings, .. } => settings,
        }
    }

    /// The configured interval (ns, at least 1) and burst: this process's own settings for
    /// a shared file, never what the file says now.
    fn settings(&self) -> (u64, u32) {
        match &*self.state {
            Storage::Shared {
                interval_ns, burst, ..
            } => (*interval_ns, *burst),
            Storage::Local(_) | Storage::Remote { .. } => {
                let s = self.s();
                (
                    s.interval_ns.load(Ordering::Acquire).max(1),
                    s.burst.load(Ordering::Acquire),
                )
            }
        }
    }

    /// The interval in force, clamped to what the settings allow: the configured one, up to
    /// 64 times it while adapting. A remote regulator answers the one its store answered
    /// last (the configured one before any answer).
    fn current_interval(&self) -> u64 {
        let (interval, _) = self.settings();
        let current = match &*self.state {
            Storage::Remote { gcra, .. } => match gcra.interval_in_force_ns() {
                0 => interval,
                known => known,
            },
            Storage::Local(_) | Storage::Shared { .. } => {
                self.s().current_interval_ns.load(Ordering::Acquire)
            }
        };
        current.clamp(interval, interval.saturating_mul(64))
    }

    /// Whether the regulator's state lives in a remote store (Redis): asking it is a network
    /// call.
    pub fn is_remote(&self) -> bool {
        matches!(&*self.state, Storage::Remote { .. })
    }

    /// Whether the regulator adapts to throttling: for a shared file or a remote store, the
    /// setting it was set up with.
    pub fn is_adaptive(&self) -> bool {
        match &*self.state {
            Storage::Shared { adaptive, .. } => *adaptive,
            Storage::Local(s) => s.adaptive.load(Ordering::Acquire) != 0,
            Storage::Remote { settings, .. } => settings.adaptive.load(Ordering::Acquire) != 0,
        }
    }

    /// The rate in force (lower than the configured one while adapting to throttling).
    pub fn rate(&self) -> Rate {
        Rate::from_interval_ns(self.current_interval())
    }

    /// The burst: how many starts may go at once after a quiet spell.
    pub fn burst(&self) -> u32 {
        self.settings().1
    }

    /// Makes the regulator slow down when told to: after [`on_throttled`](Self::on_throttled)
    /// the rate halves (down to 1/64 of the configured rate), and each
    /// [`on_success`](Self::on_success) gives back 1/16 of the configured rate, up to it.
    ///
    /// For a regulator of this process only. A shared file's or a remote store's setting is
    /// made when the state is set up ([`shared_with`](Self::shared_with), `recuo-redis`'s
    /// `regulator_with`) and every process that opens it must agree: this has no effect on
    /// them ([`set_adaptive`](Self::set_adaptive) says when it differs).
    pub fn with_adaptive(self, adaptive: bool) -> Self {
        let _ = self.set_adaptive(adaptive);
        self
    }

    /// Switches a regulator of this process to adaptive or not (as
    /// [`with_adaptive`](Self::with_adaptive)).
    ///
    /// # Errors
    /// [`RegulatorError::Shared`] ([`SharedError::Mismatch`]) for a shared file or a remote
    /// store set up with the other setting: it is set when the state is made, and every
    /// process that opens it must agree — no process switches it for the others.
    pub fn set_adaptive(&self, adaptive: bool) -> Result<(), RegulatorError> {
        match &*self.state {
            Storage::Local(s) => {
                s.adaptive.store(u32::from(adaptive), Ordering::Release);
                Ok(())
            }
            Storage::Shared { .. } | Storage::Remote { .. } if self.is_adaptive() == adaptive => {
                Ok(())
            }
            Storage::Shared { .. } | Storage::Remote { .. } => {
                Err(RegulatorError::Shared(SharedError::Mismatch(format!(
                    "this shared regulator is {}: the setting is made when its state is set \
                     up, and every process that opens it must agree (set it up again under \
                     another name to change it)",
                    adaptive_words(!adaptive)
                ))))
            }
        }
    }

    /// A 429 (or 503) was seen: when adaptive, halve the rate — for every holder of a shared
    /// file or a remote store. A remote store that cannot be reached loses the report.
    pub fn on_throttled(&self) {
        self.adapt(true, None);
    }

    /// [`on_throttled`](Self::on_throttled) or [`on_success`](Self::on_success)
    /// (`throttled: false`), a remote store's call ending by `until` too when given (an
    /// operation's deadline).
    pub fn report_by(&self, throttled: bool, until: Option<std::time::Instant>) {
        self.adapt(throttled, until);
    }

    /// A start succeeded: when adaptive, give back 1/16 of the configured rate, up to it —
    /// for every holder of a shared file or a remote store. A remote regulator tells its
    /// store only while the interval in force it last heard of is slower than the configured
    /// one (no round trip otherwise).
    pub fn on_success(&self) {
        self.adapt(false, None);
    }

    fn adapt(&self, throttled: bool, until: Option<std::time::Instant>) {
        if !self.is_adaptive() {
            return;
        }
        let (base, _) = self.settings();
        match &*self.state {
            Storage::Remote { gcra, .. } => {
                if throttled || self.current_interval() > base {
                    let _ = gcra.adapt_by(throttled, until);
                }
            }
            Storage::Local(_) | Storage::Shared { .. } => {
                let _ = self.s().current_interval_ns.fetch_update(
                    Ordering::AcqRel,
                    Ordering::Acquire,
                    |cur| adapted_interval_ns(cur, base, throttled),
                );
            }
        }
    }

    /// Reserves a start of weight `cost` at `now_ns` if it can go within `max_wait_ns`:
    /// answers the wait before it may go (0: now). When the wait needed is longer, nothing
    /// is reserved and `Err(Ok(needed_ns))` says how long it would be.
    ///
    /// `now_ns` must be on a clock every user of the regulator shares: [`monotonic_ns`] on
    /// one machine; for a Redis regulator, one the caller keeps common (tests), or use
    /// [`reserve_now`](Self::reserve_now), which reads the server's clock.
    ///
    /// # Errors
    /// `Err(Ok(ns))`: not within `max_wait_ns`; `Err(Err(_))`: the cost is 0 or exceeds the
    /// burst, the start would wait beyond the queue ([`RegulatorError::QueueFull`]), or
    /// a Redis regulator's server could not be used — its call ends by `max_wait_ns` when that
    /// is neither 0 (only asking: the store's own deadline) nor `u64::MAX`.
    pub fn reserve_at(
        &self,
        now_ns: u64,
        cost: u32,
        max_wait_ns: u64,
    ) -> Result<u64, Result<u64, RegulatorError>> {
        self.reserve(Some(now_ns), cost, max_wait_ns)
    }

    /// [`reserve_at`](Self::reserve_at) on the regulator's own clock: the machine's
    /// monotonic clock, or a Redis server's.
    ///
    /// # Errors
    /// As [`reserve_at`](Self::reserve_at).
    pub fn reserve_now(
        &self,
        cost: u32,
        max_wait_ns: u64,
    ) -> Result<u64, Result<u64, RegulatorError>> {
        self.reserve(None, cost, max_wait_ns)
    }

    fn reserve(
        &self,
        now_ns: Option<u64>,
        cost: u32,
        max_wait_ns: u64,
    ) -> Result<u64, Result<u64, RegulatorError>> {
        self.reservation(now_ns, cost, max_wait_ns)
            .map(|r| r.wait_ns)
    }

    /// [`reserve_now`](Self::reserve_now), answering the [`Reservation`] itself, which
    /// [`give_back`](Self::give_back) can return unused (a wait that was cancelled or timed
    /// out).
    ///
    /// # Errors
    /// As [`reserve_at`](Self::reserve_at).
    pub fn reserve_start(
        &self,
        cost: u32,
        max_wait_ns: u64,
    ) -> Result<Reservation, Result<u64, RegulatorError>> {
        self.reservation(None, cost, max_wait_ns)
    }

    /// [`reserve_start`](Self::reserve_start) at `now_ns` on a clock every user of the
    /// regulator shares (as [`reserve_at`](Self::reserve_at) says).
    ///
    /// # Errors
    /// As [`reserve_at`](Self::reserve_at).
    pub fn reserve_start_at(
        &self,
        now_ns: u64,
        cost: u32,
        max_wait_ns: u64,
    ) -> Result<Reservation, Result<u64, RegulatorError>> {
        self.reservation(Some(now_ns), cost, max_wait_ns)
    }

    /// A reservation. A remote store's call ends by `max_wait_ns` too when it is neither 0
    /// (only asking: the store's own deadline) nor `u64::MAX` (as long as it takes); a store
    /// may give a call a least time of its own (recuo-redis: 100 ms, a round trip's worth).
    fn reservation(
        &self,
        now_ns: Option<u64>,
        cost: u32,
        max_wait_ns: u64,
    ) -> Result<Reservation, Result<u64, RegulatorError>> {
        let (base, burst) = self.settings();
        if cost == 0 {
            return Err(Err(RegulatorError::ZeroCost));
        }
        if cost > burst {
            return Err(Err(RegulatorError::CostAboveBurst { cost, burst }));
        }
        let longest = base.saturating_mul(MAX_QUEUED_STARTS);
        let queue_full = |wait_ns| {
            Err(Err(RegulatorError::QueueFull {
                wait_ns,
                longest_ns: longest,
            }))
        };
        if let Storage::Remote { gcra, .. } = &*self.state {
            let until = (max_wait_ns != u64::MAX && max_wait_ns != 0)
                .then(|| crate::clock::instant_in(Duration::from_nanos(max_wait_ns)))
                .flatten();
            return match gcra.reserve(now_ns, cost, max_wait_ns.min(longest), until) {
                Ok(Ok(wait_ns)) => Ok(Reservation {
                    wait_ns,
                    tat_ns: 0,
                    increment_ns: 0,
                }),
                Ok(Err(needed)) if needed <= max_wait_ns => queue_full(needed),
                Ok(Err(needed)) => Err(Ok(needed)),
                Err(e) => Err(Err(RegulatorError::Shared(e))),
            };
        }
        let s = self.s();
        let now_ns = now_ns.unwrap_or_else(monotonic_ns);
        let interval = self.current_interval();
        let increment = interval.saturating_mul(u64::from(cost));
        let tolerance = interval.saturating_mul(u64::from(burst));
        // No state the settings allow is further ahead (a corrupt shared file may be).
        let furthest = now_ns.saturating_add(horizon_ns(base, burst));
        let mut tat = s.tat_ns.load(Ordering::Acquire);
        loop {
            if tat > furthest {
                // Beyond what any reservation could have made: stored clamped, so that time
                // catches up with it rather than it staying ahead of every later now.
                match s.tat_ns.compare_exchange_weak(
                    tat,
                    furthest,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => tat = furthest,
                    Err(current) => tat = current,
                }
                continue;
            }
            let next = tat.max(now_ns).saturating_add(increment);
            let wait = next.saturating_sub(tolerance).saturating_sub(now_ns);
            if wait > max_wait_ns {
                return Err(Ok(wait));
            }
            if wait > longest {
                return queue_full(wait);
            }
            match s
                .tat_ns
                .compare_exchange_weak(tat, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    return Ok(Reservation {
                        wait_ns: wait,
                        tat_ns: next,
                        increment_ns: increment,
                    })
                }
                Err(current) => tat = current,
            }
        }
    }

    /// Returns a start reserved but not used (its wait was cancelled or timed out): when no
    /// later start was reserved behind it, the slot is free again, as if never reserved, and
    /// `true` is answered. Otherwise (or for a Redis regulator) the slot stays spent: it
    /// delays the starts reserved after it by its own weight — one interval for a start of
    /// cost 1 — and never more.
    pub fn give_back(&self, reservation: Reservation) -> bool {
        if reservation.increment_ns == 0 || matches!(&*self.state, Storage::Remote { .. }) {
            return false;
        }
        self.s()
            .tat_ns
            .compare_exchange(
                reservation.tat_ns,
                reservation.tat_ns - reservation.increment_ns,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// Answers at once: `Ok(())` when a start of weight `cost` may go at `now_ns` (and takes
    /// it), else the wait needed.
    ///
    /// # Errors
    /// `Err(Ok(wait))`, or the cost is 0 or exceeds the burst.
    pub fn try_acquire_at(
        &self,
        now_ns: u64,
        cost: u32,
    ) -> Result<(), Result<Duration, RegulatorError>> {
        self.reserve_at(now_ns, cost, 0)
            .map(|_| ())
            .map_err(|e| e.map(Duration::from_nanos))
    }

    /// A start of cost 1 now, on the regulator's own clock: `Ok(())` or the wait needed. A
    /// Redis regulator whose server cannot be reached answers a wait of one second — it
    /// fails closed, never allowing more starts (use [`reserve_now`](Self::reserve_now) to
    /// see the error).
    ///
    /// # Errors
    /// The wait needed before a start may go.
    pub fn try_acquire(&self) -> Result<(), Duration> {
        match self.reserve_now(1, 0) {
            Ok(_) => Ok(()),
            Err(Ok(wait)) => Err(Duration::from_nanos(wait)),
            Err(Err(_)) => Err(Duration::from_secs(1)),
        }
    }

    /// Waits for a start slot of weight `cost`, and takes it. Slots are handed out in the
    /// order they are asked for, so no caller starves. Answers `false` when `cancel` was
    /// cancelled during the wait: the slot is then given back ([`give_back`](Self::give_back))
    /// when no later start was reserved behind it, and otherwise delays the later starts by
    /// its own weight, never more.
    ///
    /// # Errors
    /// The cost is 0 or exceeds the burst; the start would wait beyond the
    /// [`MAX_QUEUED_STARTS`] queued ahead of it ([`RegulatorError::QueueFull`], nothing
    /// reserved); a remote store could not be used.
    pub fn acquire(&self, cost: u32, cancel: &CancelToken) -> Result<bool, RegulatorError> {
        self.acquire_within(cost, u64::MAX, cancel)
            .map(|r| r == Some(true))
    }

    /// Waits for a start slot of weight `cost` only if it comes within `timeout`: answers
    /// `None` (and reserves nothing) when it would not, `Some(false)` when cancelled during
    /// the wait, `Some(true)` when the start may go.
    ///
    /// # Errors
    /// As [`acquire`](Self::acquire).
    pub fn acquire_until(
        &self,
        cost: u32,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<Option<bool>, RegulatorError> {
        let max = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        self.acquire_within(cost, max, cancel)
    }

    fn acquire_within(
        &self,
        cost: u32,
        max_wait_ns: u64,
        cancel: &CancelToken,
    ) -> Result<Option<bool>, RegulatorError> {
        if cancel.is_cancelled() {
            return Ok(Some(false));
        }
        match self.reserve_start(cost, max_wait_ns) {
            Ok(r) if r.wait_ns == 0 => Ok(Some(true)),
            Ok(r) => {
                if cancel.sleep(Duration::from_nanos(r.wait_ns)) {
                    let _ = self.give_back(r);
                    Ok(Some(false))
                } else {
                    Ok(Some(true))
                }
            }
            Err(Ok(_)) => Ok(None),
            Err(Err(e)) => Err(e),
        }
    }
}

/// A start reserved by [`Regulator::reserve_start`]: how long to wait before it may go, and
/// what [`Regulator::give_back`] needs to return it unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a reservation is a start: wait for it, or give it back"]
pub struct Reservation {
    wait_ns: u64,
    tat_ns: u64,
    increment_ns: u64,
}

impl Reservation {
    /// The wait before the start may go, in nanoseconds (0: now).
    pub const fn wait_ns(&self) -> u64 {
        self.wait_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(rate: &str, burst: u32) -> Regulator {
        Regulator::new(rate.parse().unwrap(), burst).unwrap()
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_burst_then_one_per_interval() {
        let r = reg("2/s", 3);
        let t0 = 10 * S;
        for _ in 0..3 {
            assert!(r.try_acquire_at(t0, 1).is_ok());
        }
        assert_eq!(
            r.try_acquire_at(t0, 1).unwrap_err().unwrap(),
            Duration::from_millis(500)
        );
        assert!(r.try_acquire_at(t0 + S / 2 - 1, 1).is_err());
        assert!(r.try_acquire_at(t0 + S / 2, 1).is_ok());
        assert!(r.try_acquire_at(t0 + S / 2, 1).is_err());
        // After a quiet spell the burst is back, never more.
        let later = t0 + 100 * S;
        for _ in 0..3 {
            assert!(r.try_acquire_at(later, 1).is_ok());
        }
        assert!(r.try_acquire_at(later, 1).is_err());
    }

    #[test]
    fn costs_weigh_several_starts() {
        let r = reg("10/s", 10);
        assert!(r.try_acquire_at(S, 7).is_ok());
        assert_eq!(
            r.try_acquire_at(S, 4).unwrap_err().unwrap(),
            Duration::from_millis(100)
        );
        assert!(r.try_acquire_at(S, 3).is_ok());
        assert!(matches!(
            r.try_acquire_at(S, 11),
            Err(Err(RegulatorError::CostAboveBurst {
                cost: 11,
                burst: 10
            }))
        ));
    }

    #[test]
    fn reservations_queue_in_order() {
        let r = reg("1/s", 1);
        assert_eq!(r.reserve_at(S, 1, u64::MAX).unwrap(), 0);
        assert_eq!(r.reserve_at(S, 1, u64::MAX).unwrap(), S);
        assert_eq!(r.reserve_at(S, 1, u64::MAX).unwrap(), 2 * S);
        // One that would wait past its limit reserves nothing.
        assert_eq!(r.reserve_at(S, 1, S).unwrap_err().unwrap(), 3 * S);
        assert_eq!(r.reserve_at(S, 1, u64::MAX).unwrap(), 3 * S);
    }

    #[test]
    fn adaptive_halves_and_recovers() {
        let r = reg("8/s", 1).with_adaptive(true);
        r.on_throttled();
        assert!((r.rate().as_per_second() - 4.0).abs() < 1e-6);
        r.on_throttled();
        assert!((r.rate().as_per_second() - 2.0).abs() < 1e-6);
        for _ in 0..12 {
            r.on_success();
        }
        assert!(
            (r.rate().as_per_second() - 8.0).abs() < 1e-6,
            "{}",
            r.rate()
        );
        for _ in 0..20 {
            r.on_throttled();
        }
        assert!((r.rate().as_per_second() - 8.0 / 64.0).abs() < 1e-9);
        let fixed = reg("8/s", 1);
        fixed.on_throttled();
        assert_eq!(fixed.rate().as_per_second(), 8.0);
    }

    /// The most of `starts` (sorted, ns) in any window of `window_ns`.
    fn most_in_a_window(starts: &[u64], window_ns: u64) -> usize {
        let mut most = 0;
        let mut first = 0;
        for (i, &t) in starts.iter().enumerate() {
            while starts[first] + window_ns <= t {
                first += 1;
            }
            most = most.max(i + 1 - first);
        }
        most
    }

    #[test]
    fn a_backlog_beyond_the_queue_is_refused_never_started_early() {
        // 8,000 waiters ask at once of 1000/s with a burst of 20, on a virtual clock; one
        // refused asks again when the wait it was told would fit the queue.
        let r = reg("1000/s", 20);
        let ms = 1_000_000;
        let t0 = 10 * S;
        let mut asks: Vec<u64> = vec![t0; 8_000];
        let mut starts = Vec::new();
        let (mut first_refusals, mut round) = (0, 0);
        while !asks.is_empty() {
            let mut again = Vec::new();
            for &now in &asks {
                match r.reserve_at(now, 1, u64::MAX) {
                    Ok(wait) => starts.push(now + wait),
                    Err(Err(RegulatorError::QueueFull {
                        wait_ns,
                        longest_ns,
                    })) => {
                        assert_eq!(longest_ns, 4_096 * ms);
                        assert!(wait_ns > longest_ns);
                        again.push(now + (wait_ns - longest_ns));
                    }
                    Err(e) => panic!("{e:?}"),
                }
            }
            if round == 0 {
                first_refusals = again.len();
            }
            round += 1;
            asks = again;
            asks.sort_unstable();
        }
        assert_eq!(first_refusals, 8_000 - 20 - 4_096);
        assert_eq!(starts.len(), 8_000);
        starts.sort_unstable();
        // At most burst + rate·W in any window W (the burst and one start a millisecond
        // after it, in a window of 10 ms that excludes its end).
        assert_eq!(most_in_a_window(&starts, 10 * ms), 29);
        assert_eq!(most_in_a_window(&starts, S), 1_019);
        // The last start is where the rate puts it: 7,980 intervals after the burst.
        assert_eq!(starts[7_999] - t0, 7_980 * ms);
        let e = RegulatorError::QueueFull {
            wait_ns: 4_097 * ms,
            longest_ns: 4_096 * ms,
        };
        assert_eq!((e.code(), e.name()), (114, "queue_full"));
        assert_eq!(
            e.to_string(),
            "the regulator's queue is full: this start would wait 4.097 s, beyond the 4096 \
             starts (4.096 s) it queues ahead; nothing was reserved, ask again later"
        );
    }

    #[test]
    fn a_blocking_acquire_beyond_the_queue_is_refused() {
        let r = reg("1/s", 1);
        let cancel = CancelToken::new();
        let now = monotonic_ns();
        for _ in 0..=MAX_QUEUED_STARTS {
            assert!(r.reserve_at(now, 1, u64::MAX).is_ok());
        }
        assert!(matches!(
            r.acquire(1, &cancel),
            Err(RegulatorError::QueueFull { .. })
        ));
        // A timeout shorter than the wait answers "not in time", as before.
        assert_eq!(
            r.acquire_until(1, Duration::from_secs(1), &cancel).unwrap(),
            None
        );
    }

    #[test]
    fn a_rate_too_slow_to_count_is_refused_with_the_rate_named() {
        let tiny: Rate = "0.000000001/day".parse().unwrap();
        let e = Regulator::new(tiny, 1).unwrap_err();
        assert_eq!((e.code(), e.name()), (50, "invalid_rate"));
        assert!(
            e.to_string().starts_with(&format!(
                "a regulator of {tiny} with a burst of 1 is too slow"
            )),
            "{e}"
        );
        assert!(
            e.to_string().ends_with("one start every 12 days is needed"),
            "{e}"
        );
        assert!(Regulator::new(Rate::per_second(1e-10).unwrap(), 1).is_err());
        // One a day, and one every 12 days with a burst of 1, are counted exactly.
        let daily = reg("1/day", 1);
        let now = 5 * S;
        assert!(daily.try_acquire_at(now, 1).is_ok());
        assert_eq!(
            daily.try_acquire_at(now, 1).unwrap_err().unwrap(),
            Duration::from_secs(86_400)
        );
        let slowest = Rate::per_second(1.0 / (12.0 * 86_400.0)).unwrap();
        assert!(Regulator::new(slowest, 1).is_ok());
        // A large burst needs a faster rate.
        assert!(matches!(
            Regulator::new("1/day".parse().unwrap(), 10_000),
            Err(RegulatorError::RateTooSlow { burst: 10_000, .. })
        ));
        assert!(Regulator::new("1000/s".parse().unwrap(), u32::MAX).is_ok());
    }

    #[test]
    fn a_start_of_cost_zero_is_refused() {
        let r = reg("10/s", 5);
        let e = r.try_acquire_at(S, 0).unwrap_err().unwrap_err();
        assert_eq!((e.code(), e.name()), (60, "zero_cost"));
        assert_eq!(e.to_string(), "a start's cost must be at least 1");
        assert!(matches!(
            r.acquire(0, &CancelToken::new()),
            Err(RegulatorError::ZeroCost)
        ));
    }

    #[test]
    fn zero_burst_is_refused() {
        assert!(matches!(
            Regulator::new("1/s".parse().unwrap(), 0),
            Err(RegulatorError::ZeroBurst)
        ));
    }

    #[test]
    fn acquire_waits_and_cancellation_wakes_it() {
        let r = reg("1000/s", 1);
        let cancel = CancelToken::new();
        assert!(r.acquire(1, &cancel).unwrap());
        let slow = reg("1/min", 1);
        assert!(slow.acquire(1, &cancel).unwrap());
        // (On a slow regulator: a loaded machine may take a whole 1 ms between two calls.)
        assert_eq!(
            slow.acquire_until(1, Duration::ZERO, &cancel).unwrap(),
            None
        );
        let c = cancel.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            c.cancel();
        });
        let started = std::time::Instant::now();
        assert!(!slow.acquire(1, &cancel).unwrap());
        assert!(started.elapsed() < Duration::from_secs(30));
        t.join().unwrap();
    }
}
