//! Time for the runners: a monotonic clock, the wall clock, and a sleep that cancellation
//! interrupts. The decisions never read it; the runners pass its readings in.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A flag that cancels an operation, and wakes it at once if it is sleeping. Clones share
/// the flag; it is safe to cancel from another thread.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<(Mutex<bool>, Condvar)>);

impl CancelToken {
    /// A token not yet cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels: every sleep on this token ends now, and every later check sees it.
    pub fn cancel(&self) {
        let (flag, woken) = &*self.0;
        *flag.lock().unwrap_or_else(PoisonError::into_inner) = true;
        woken.notify_all();
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        *self.0 .0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sleeps for `d` unless cancelled first; answers `true` when it was cancelled.
    pub fn sleep(&self, d: Duration) -> bool {
        let (flag, woken) = &*self.0;
        let guard = flag.lock().unwrap_or_else(PoisonError::into_inner);
        let (guard, _) = woken
            .wait_timeout_while(guard, d, |cancelled| !*cancelled)
            .unwrap_or_else(PoisonError::into_inner);
        *guard
    }
}

/// The time a runner works with.
pub trait Clock {
    /// Milliseconds on a monotonic clock (any origin).
    fn now_ms(&self) -> u64;
    /// Milliseconds since the Unix epoch (for HTTP-dates and rate-limit resets).
    fn unix_ms(&self) -> i64;
    /// Sleeps `d`, waking early when `cancel` is cancelled; answers `true` when cancelled.
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> bool;
}

/// The real clocks: [`Instant`] and [`SystemTime`].
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
    fn unix_ms(&self) -> i64 {
        unix_now_ms()
    }
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> bool {
        cancel.sleep(d)
    }
}

/// The clocks a host hands the core where the system has none to give (WebAssembly in a
/// JavaScript runtime: `performance.now()` and `Date.now()`): nanoseconds on a monotonic
/// clock, and milliseconds since the Unix epoch.
#[cfg(not(unix))]
#[derive(Debug, Clone, Copy)]
pub struct HostClocks {
    /// Nanoseconds on the host's monotonic clock.
    pub monotonic_ns: fn() -> u64,
    /// Milliseconds since the Unix epoch, by the host's wall clock.
    pub unix_ms: fn() -> i64,
}

#[cfg(not(unix))]
static HOST_CLOCKS: std::sync::OnceLock<HostClocks> = std::sync::OnceLock::new();

/// Gives the core the host's clocks, once, before anything reads the time; a second call is
/// ignored (the first clocks stay, so time never jumps). Without it, a system that is not
/// Unix is read through the standard library.
#[cfg(not(unix))]
pub fn set_host_clocks(clocks: HostClocks) {
    let _ = HOST_CLOCKS.set(clocks);
}

/// Nanoseconds on the system's monotonic clock (`CLOCK_MONOTONIC`): the same clock in every
/// process on the machine, which is what lets processes share a regulator. Where the system
/// is not Unix, the host's clock ([`set_host_clocks`]) or the standard library's.
#[cfg(not(unix))]
pub fn monotonic_ns() -> u64 {
    if let Some(clocks) = HOST_CLOCKS.get() {
        return (clocks.monotonic_ns)();
    }
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let origin = *ORIGIN.get_or_init(Instant::now);
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Nanoseconds on the system's monotonic clock (`CLOCK_MONOTONIC`): the same clock in every
/// process on the machine, which is what lets processes share a regulator.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    u64::try_from(ts.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(ts.tv_nsec).unwrap_or(0))
}

/// Milliseconds on [`monotonic_ns`]'s clock, rounded down: the one reading every host's
/// operation machine is told its instants in (a host reads no clock of its own).
pub fn monotonic_ms() -> u64 {
    monotonic_ns() / 1_000_000
}

/// A wait of `ns` nanoseconds in whole milliseconds, rounded up: a wait never ends before
/// what it was asked to wait.
pub const fn wait_ms_from_ns(ns: u64) -> u64 {
    ns.div_ceil(1_000_000)
}

/// Milliseconds on the same monotonic clock as [`monotonic_ns`], as cheaply as the system
/// allows: Linux's coarse monotonic clock (`CLOCK_MONOTONIC_COARSE`, the last tick's time: a
/// few ns to read where a precise read takes ~30 ns under a VM), rounded down. Never ahead of
/// a precise read taken at the same moment, and a tick or two behind (3–7 ms on a 250 Hz
/// VM): for a start that is cheap to take and may count that much more time, never less.
/// Elsewhere, the precise clock.
#[allow(unsafe_code)]
pub fn coarse_monotonic_ms() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec through a valid pointer.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
        if rc == 0 {
            let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
            let ms = u64::try_from(ts.tv_nsec).unwrap_or(0) / 1_000_000;
            return secs.saturating_mul(1000).saturating_add(ms);
        }
    }
    monotonic_ns() / 1_000_000
}

/// The instant `d` from now, which bounds a remote store's call: `None` when it cannot be
/// told — too far ahead, or a WebAssembly host, whose module has no clock of the standard
/// library's (`Instant::now` would trap) and whose stores' calls the host makes and bounds.
pub(crate) fn instant_in(d: Duration) -> Option<Instant> {
    #[cfg(all(target_family = "wasm", target_os = "unknown"))]
    {
        let _ = d;
        None
    }
    #[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
    {
        Instant::now().checked_add(d)
    }
}

/// Milliseconds since the Unix epoch by the system clock (negative before 1970).
pub fn unix_now_ms() -> i64 {
    #[cfg(not(unix))]
    if let Some(clocks) = HOST_CLOCKS.get() {
        return (clocks.unix_ms)();
    }
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// A clock that moves only when slept on: virtual time for tests and simulations. Clones
/// share the time.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now_ms: Arc<AtomicU64>,
    unix_origin_ms: i64,
}

impl ManualClock {
    /// A clock at monotonic 0, whose wall time is `unix_origin_ms` plus the monotonic time.
    pub fn new(unix_origin_ms: i64) -> Self {
        ManualClock {
            now_ms: Arc::new(AtomicU64::new(0)),
            unix_origin_ms,
        }
    }

    /// Moves the clock forward by `ms`.
    pub fn advance(&self, ms: u64) {
        self.now_ms.fetch_add(ms, Ordering::AcqRel);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::Acquire)
    }
    fn unix_ms(&self) -> i64 {
        self.unix_origin_ms
            .saturating_add(i64::try_from(self.now_ms()).unwrap_or(i64::MAX))
    }
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> bool {
        if cancel.is_cancelled() {
            return true;
        }
        self.advance(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelling_wakes_a_sleeper_at_once() {
        let token = CancelToken::new();
        let other = token.clone();
        let t = std::thread::spawn(move || other.sleep(Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(20));
        token.cancel();
        assert!(t.join().unwrap());
        assert!(token.is_cancelled());
        assert!(token.sleep(Duration::from_secs(30)));
    }

    #[test]
    fn an_uncancelled_sleep_runs_out() {
        assert!(!CancelToken::new().sleep(Duration::from_millis(1)));
    }

    #[test]
    fn manual_clock_moves_when_slept_on() {
        let c = ManualClock::new(1_000);
        assert!(!c.sleep(Duration::from_millis(250), &CancelToken::new()));
        assert_eq!((c.now_ms(), c.unix_ms()), (250, 1_250));
        let cancelled = CancelToken::new();
        cancelled.cancel();
        assert!(c.sleep(Duration::from_millis(250), &cancelled));
        assert_eq!(c.now_ms(), 250);
    }
}
