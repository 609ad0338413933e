//! Exponential backoff windows and jitter.
//!
//! `window(n) = min(cap, base · 2^n)` in whole milliseconds, with saturating arithmetic: no
//! overflow and no panic for any `n` and any `base`, `cap`.
//!
//! Guide A, named below, is the guide (in Portuguese)
//! [“Como repetir requisições com backoff exponencial (retry)”](https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff),
//! whose `com_retry` waits 200 ms to 5 s of full jitter.

use std::time::Duration;

use rand::RngCore;

use crate::rng::{uniform_inclusive, JitterRng};
use crate::ConfigError;

/// How a delay is drawn from the window `w = window(n)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Jitter {
    /// Uniform in `[0, w]` (the default, and what both guides draw).
    #[default]
    Full,
    /// `w/2` (rounded down) plus uniform in `[0, w − w/2]`: never below half the window,
    /// never above it.
    Equal,
    /// `min(cap, uniform[base, 3 · previous])`, where `previous` is the last delay and starts
    /// at `base` (AWS "decorrelated jitter").
    Decorrelated,
    /// Exactly `w`: for tests and for callers who add their own spread.
    None,
}

impl Jitter {
    /// Every mode, in the order the docs and messages list them.
    pub const ALL: [Jitter; 4] = [
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::None,
    ];

    /// The mode's lower-case name: `full`, `equal`, `decorrelated` or `none`.
    pub const fn name(self) -> &'static str {
        match self {
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
            Jitter::None => "none",
        }
    }

    /// The mode named `name` (as [`Jitter::name`] spells it), or `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|j| j.name() == name)
    }
}

/// `min(cap_ms, base_ms · 2^n)`, saturating instead of overflowing.
pub const fn window_ms(base_ms: u64, cap_ms: u64, n: u32) -> u64 {
    // `base · 2^n` fits when the shift loses no bit: `n` at most `base`'s leading zeros (64
    // for 0, whose every shift is 0; at most 63 otherwise, so `n ≥ 64` saturates).
    let shift = if n < 64 { n } else { 64 };
    let grown = if base_ms.leading_zeros() >= shift {
        base_ms << (shift & 63)
    } else {
        u64::MAX
    };
    if grown < cap_ms {
        grown
    } else {
        cap_ms
    }
}

/// An exponential backoff schedule: base, cap, jitter mode and an optional retry limit.
///
/// # Defaults
/// [`Backoff::new`] is guide A's schedule: base 200 ms, cap 5000 ms, [`Jitter::Full`], no
/// retry limit (the iterator of delays never ends; limit it with
/// [`with_max_retries`](Backoff::with_max_retries) or `take`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    base_ms: u64,
    cap_ms: u64,
    jitter: Jitter,
    max_retries: Option<u32>,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Backoff {
    /// Guide A's schedule: 200 ms base, 5000 ms cap, full jitter, no retry limit.
    pub const fn new() -> Self {
        Backoff {
            base_ms: 200,
            cap_ms: 5000,
            jitter: Jitter::Full,
            max_retries: None,
        }
    }

    /// The same schedule with another base, in milliseconds.
    pub const fn with_base_ms(mut self, base_ms: u64) -> Self {
        self.base_ms = base_ms;
        self
    }

    /// The same schedule with another cap (the largest window), in milliseconds.
    pub const fn with_cap_ms(mut self, cap_ms: u64) -> Self {
        self.cap_ms = cap_ms;
        self
    }

    /// The same schedule with another jitter mode.
    pub const fn with_jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// The same schedule, ending after `max_retries` delays (`None`: never ending).
    pub const fn with_max_retries(mut self, max_retries: Option<u32>) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// The base, in milliseconds.
    pub const fn base_ms(&self) -> u64 {
        self.base_ms
    }

    /// The cap, in milliseconds.
    pub const fn cap_ms(&self) -> u64 {
        self.cap_ms
    }

    /// The jitter mode.
    pub const fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// The schedule itself when it is usable.
    ///
    /// # Errors
    /// [`ConfigError::CapBelowBase`] when the cap is below the base.
    pub const fn validate(self) -> Result<Self, ConfigError> {
        if self.cap_ms < self.base_ms {
            Err(ConfigError::CapBelowBase {
                base_ms: self.base_ms,
                cap_ms: self.cap_ms,
            })
        } else {
            Ok(self)
        }
    }

    /// `min(cap, base · 2^n)` for retry index `n`.
    pub const fn window_ms(&self, n: u32) -> u64 {
        window_ms(self.base_ms, self.cap_ms, n)
    }

    /// The delay before attempt `n + 1`, in milliseconds. `previous_ms` is the delay drawn
    /// for retry index `n − 1` (only [`Jitter::Decorrelated`] reads it; pass the base for
    /// `n = 0`).
    pub fn delay_ms<R: RngCore + ?Sized>(&self, n: u32, previous_ms: u64, rng: &mut R) -> u64 {
        self.draw(n, previous_ms).take(rng)
    }

    /// What [`delay_ms`](Self::delay_ms) draws, before the draw: the state machine makes its
    /// one draw from this or from a server's wait, at a single site.
    #[inline]
    pub(crate) const fn draw(&self, n: u32, previous_ms: u64) -> Draw {
        let w = self.window_ms(n);
        match self.jitter {
            Jitter::Full => Draw::up_to(0, w),
            Jitter::Equal => {
                let half = w / 2;
                Draw::up_to(half, w - half)
            }
            Jitter::Decorrelated => {
                let hi = if previous_ms > self.base_ms {
                    previous_ms
                } else {
                    self.base_ms
                };
                Draw {
                    offset_ms: 0,
                    lo_ms: self.base_ms,
                    hi_ms: hi.saturating_mul(3),
                    max_ms: self.cap_ms,
                }
            }
            Jitter::None => Draw::up_to(w, 0),
        }
    }

    /// The delays of this schedule, drawn from `rng`.
    pub fn delays<R: RngCore>(self, rng: R) -> Delays<R> {
        Delays {
            schedule: self,
            rng,
            n: 0,
            previous_ms: self.base_ms,
        }
    }

    /// The delays of this schedule with jitter drawn from [`JitterRng::seeded`]`(seed)`.
    pub fn seeded(self, seed: u64) -> Delays<JitterRng> {
        self.delays(JitterRng::seeded(seed))
    }
}

/// One delay before it is drawn: `offset_ms` plus a uniform draw from `lo_ms..=hi_ms`
/// (none when `hi_ms <= lo_ms`: then `lo_ms`), saturating, then at most `max_ms`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Draw {
    pub(crate) offset_ms: u64,
    pub(crate) lo_ms: u64,
    pub(crate) hi_ms: u64,
    pub(crate) max_ms: u64,
}

impl Draw {
    /// `offset_ms` plus a draw from `0..=spread_ms`.
    #[inline]
    pub(crate) const fn up_to(offset_ms: u64, spread_ms: u64) -> Self {
        Draw {
            offset_ms,
            lo_ms: 0,
            hi_ms: spread_ms,
            max_ms: u64::MAX,
        }
    }

    /// The delay, drawing from `rng` (never when the range is a single value).
    #[inline]
    pub(crate) fn take<R: RngCore + ?Sized>(self, rng: &mut R) -> u64 {
        let drawn = uniform_inclusive(rng, self.lo_ms, self.hi_ms);
        let delay = self.offset_ms.saturating_add(drawn);
        if delay < self.max_ms {
            delay
        } else {
            self.max_ms
        }
    }
}

/// The iterator of delays of a [`Backoff`]: one per retry, in order.
#[derive(Debug, Clone)]
pub struct Delays<R> {
    schedule: Backoff,
    rng: R,
    n: u32,
    previous_ms: u64,
}

impl<R: RngCore> Delays<R> {
    /// The next delay in whole milliseconds, or `None` when the retry limit is reached.
    pub fn next_ms(&mut self) -> Option<u64> {
        if self.schedule.max_retries.is_some_and(|max| self.n >= max) {
            return None;
        }
        let d = self
            .schedule
            .delay_ms(self.n, self.previous_ms, &mut self.rng);
        self.previous_ms = d;
        self.n = self.n.saturating_add(1);
        Some(d)
    }
}

impl<R: RngCore> Iterator for Delays<R> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        self.next_ms().map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_double_then_cap() {
        let b = Backoff::new();
        let w: Vec<u64> = (0..7).map(|n| b.window_ms(n)).collect();
        assert_eq!(w, [200, 400, 800, 1600, 3200, 5000, 5000]);
    }

    #[test]
    fn windows_saturate_instead_of_overflowing() {
        assert_eq!(window_ms(u64::MAX, u64::MAX, u32::MAX), u64::MAX);
        assert_eq!(window_ms(1, u64::MAX, 63), 1 << 63);
        assert_eq!(window_ms(1, u64::MAX, 64), u64::MAX);
        assert_eq!(window_ms(3, u64::MAX, 63), u64::MAX);
        assert_eq!(window_ms(u64::MAX / 2 + 1, u64::MAX, 1), u64::MAX);
        assert_eq!(window_ms(u64::MAX / 2, u64::MAX, 1), u64::MAX - 1);
        assert_eq!(window_ms(0, 10, u32::MAX), 0);
        assert_eq!(window_ms(200, 5000, u32::MAX), 5000);
    }

    #[test]
    fn no_jitter_is_the_window() {
        let d: Vec<u64> = Backoff::new()
            .with_jitter(Jitter::None)
            .with_max_retries(Some(6))
            .seeded(1)
            .map(|d| d.as_millis() as u64)
            .collect();
        assert_eq!(d, [200, 400, 800, 1600, 3200, 5000]);
    }

    #[test]
    fn every_mode_stays_in_its_range() {
        for seed in 0..50 {
            let b = Backoff::new().with_base_ms(100).with_cap_ms(3000);
            let mut full = b.seeded(seed);
            let mut equal = b.with_jitter(Jitter::Equal).seeded(seed);
            let mut deco = b.with_jitter(Jitter::Decorrelated).seeded(seed);
            let mut prev = 100;
            for n in 0..12 {
                let w = b.window_ms(n);
                let f = full.next_ms().unwrap();
                assert!(f <= w, "full {f} > {w}");
                let e = equal.next_ms().unwrap();
                assert!(e >= w / 2 && e <= w, "equal {e} outside [{}, {w}]", w / 2);
                let d = deco.next_ms().unwrap();
                assert!(
                    (100..=3000).contains(&d) && d <= prev * 3,
                    "decorrelated {d}"
                );
                prev = d;
            }
        }
    }

    #[test]
    fn seeded_delays_are_reproducible() {
        let a: Vec<Duration> = Backoff::new().seeded(42).take(10).collect();
        let b: Vec<Duration> = Backoff::new().seeded(42).take(10).collect();
        let c: Vec<Duration> = Backoff::new().seeded(43).take(10).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn retry_limit_ends_the_iterator() {
        assert_eq!(
            Backoff::new().with_max_retries(Some(4)).seeded(0).count(),
            4
        );
        assert_eq!(
            Backoff::new().with_max_retries(Some(0)).seeded(0).count(),
            0
        );
    }

    #[test]
    fn cap_below_base_is_refused() {
        assert_eq!(
            Backoff::new().with_base_ms(10).with_cap_ms(5).validate(),
            Err(ConfigError::CapBelowBase {
                base_ms: 10,
                cap_ms: 5
            })
        );
        assert!(Backoff::new()
            .with_base_ms(5)
            .with_cap_ms(5)
            .validate()
            .is_ok());
    }

    #[test]
    fn jitter_names_round_trip() {
        for j in [
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
            Jitter::None,
        ] {
            assert_eq!(Jitter::from_name(j.name()), Some(j));
        }
        assert_eq!(Jitter::from_name("Full"), None);
    }
}
