//! Batch stats: initial requests, retries, successes, final failures, 429s and
//! 503s seen, the spacing between starts, and the most requests in flight.

use std::sync::{Arc, Mutex, PoisonError};

use crate::classify::Cause;

/// What a batch did: first attempts and retries started, operations that succeeded, gave
/// up or never started, rate-limited (429) and unavailable (503) answers seen, the shortest
/// time between two starts, the first and last start on the monotonic clock, and the most
/// attempts in flight at once. Plain numbers; a merge adds up the stats of separate
/// recorders (its counts are exact; its shortest spacing and most in flight are bounds).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Stats {
    /// First attempts started.
    pub initial: u64,
    /// Retries started.
    pub retries: u64,
    /// Operations that succeeded.
    pub successes: u64,
    /// Operations that gave up.
    pub failures: u64,
    /// Operations never started (the batch's deadline came first).
    pub not_started: u64,
    /// Rate-limited answers seen (429, or a 403 with a spent quota).
    pub throttled: u64,
    /// 503 answers seen.
    pub unavailable: u64,
    /// The shortest time between two consecutive starts, ns (null with fewer than 2).
    pub min_spacing_ns: Option<u64>,
    /// The first start, ns on the monotonic clock.
    pub first_start_ns: Option<u64>,
    /// The last start, ns on the monotonic clock.
    pub last_start_ns: Option<u64>,
    /// The most attempts in flight at once.
    pub max_in_flight: u64,
}

impl Stats {
    /// All attempts started: first attempts and retries.
    pub fn starts(&self) -> u64 {
        self.initial.saturating_add(self.retries)
    }

    /// The mean time between consecutive starts, ns (`None` with fewer than 2 starts).
    pub fn mean_spacing_ns(&self) -> Option<f64> {
        match (self.first_start_ns, self.last_start_ns, self.starts()) {
            // A first start after the last (a value read from elsewhere) has no spacing.
            (Some(first), Some(last), n) if n >= 2 && last >= first => {
                Some((last - first) as f64 / (n - 1) as f64)
            }
            _ => None,
        }
    }

    /// The sum of two recorders' stats: counts add up; the spacing is that of the merged
    /// timeline as far as it can be known (the shortest spacing of either, the span of
    /// both); `max_in_flight` adds up, an upper bound when the two ran at the same time.
    /// `None` when a count would pass `u64::MAX`: a sum that cannot be told is refused,
    /// never rounded to a wrong figure (every surface gives this one answer).
    pub fn merge(&self, other: &Stats) -> Option<Stats> {
        let opt_min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let opt_max = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        let merged = Stats {
            initial: self.initial.checked_add(other.initial)?,
            retries: self.retries.checked_add(other.retries)?,
            successes: self.successes.checked_add(other.successes)?,
            failures: self.failures.checked_add(other.failures)?,
            not_started: self.not_started.checked_add(other.not_started)?,
            throttled: self.throttled.checked_add(other.throttled)?,
            unavailable: self.unavailable.checked_add(other.unavailable)?,
            min_spacing_ns: opt_min(self.min_spacing_ns, other.min_spacing_ns),
            first_start_ns: opt_min(self.first_start_ns, other.first_start_ns),
            last_start_ns: opt_max(self.last_start_ns, other.last_start_ns),
            max_in_flight: self.max_in_flight.checked_add(other.max_in_flight)?,
        };
        merged.initial.checked_add(merged.retries)?; // every start, counted once
        Some(merged)
    }
}

#[derive(Debug, Default)]
struct Inner {
    stats: Stats,
    in_flight: u64,
}

/// Records a batch's stats from any number of threads, in one timeline. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct StatsRecorder(Arc<Mutex<Inner>>);

impl StatsRecorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// An attempt (number `attempt`, from 0) starts at `now_ns`. Starts must be recorded with
    /// a clock that does not go back; call [`end`](Self::end) when it is over.
    pub fn start(&self, attempt: u32, now_ns: u64) {
        self.with(|i| {
            let s = &mut i.stats;
            if attempt == 0 {
                s.initial += 1;
            } else {
                s.retries += 1;
            }
            if let Some(last) = s.last_start_ns {
                let gap = now_ns.saturating_sub(last);
                s.min_spacing_ns = Some(s.min_spacing_ns.map_or(gap, |m| m.min(gap)));
            }
            s.first_start_ns.get_or_insert(now_ns);
            s.last_start_ns = Some(now_ns.max(s.last_start_ns.unwrap_or(0)));
            i.in_flight += 1;
            s.max_in_flight = s.max_in_flight.max(i.in_flight);
        });
    }

    /// The attempt started last by this caller is over.
    pub fn end(&self) {
        self.with(|i| i.in_flight = i.in_flight.saturating_sub(1));
    }

    /// An attempt's failure had this cause (429s and 503s are counted).
    pub fn saw(&self, cause: Cause) {
        self.with(|i| match cause {
            Cause::RateLimited => i.stats.throttled += 1,
            Cause::Unavailable => i.stats.unavailable += 1,
            _ => {}
        });
    }

    /// An operation ended: it succeeded or it gave up.
    pub fn finished(&self, success: bool) {
        self.with(|i| {
            if success {
                i.stats.successes += 1;
            } else {
                i.stats.failures += 1;
            }
        });
    }

    /// An operation was never started.
    pub fn not_started(&self) {
        self.with(|i| i.stats.not_started += 1);
    }

    /// The stats so far.
    pub fn snapshot(&self) -> Stats {
        self.with(|i| i.stats.clone())
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_first_start_after_the_last_has_no_mean_spacing() {
        let stats = Stats {
            initial: 2,
            first_start_ns: Some(5),
            last_start_ns: Some(1),
            ..Stats::default()
        };
        assert_eq!(stats.mean_spacing_ns(), None);
    }

    use super::*;

    #[test]
    fn counts_spacing_and_in_flight() {
        let r = StatsRecorder::new();
        r.start(0, 1_000);
        r.start(0, 1_500);
        r.end();
        r.start(1, 4_000);
        r.saw(Cause::RateLimited);
        r.saw(Cause::Unavailable);
        r.saw(Cause::ServerError);
        r.end();
        r.end();
        r.finished(true);
        r.finished(false);
        r.not_started();
        let s = r.snapshot();
        assert_eq!((s.initial, s.retries, s.starts()), (2, 1, 3));
        assert_eq!((s.successes, s.failures, s.not_started), (1, 1, 1));
        assert_eq!((s.throttled, s.unavailable), (1, 1));
        assert_eq!(s.min_spacing_ns, Some(500));
        assert_eq!(s.mean_spacing_ns(), Some(1_500.0));
        assert_eq!(s.max_in_flight, 2);
    }

    #[test]
    fn merge_adds_up() {
        let a = Stats {
            initial: 2,
            min_spacing_ns: Some(10),
            first_start_ns: Some(5),
            last_start_ns: Some(15),
            max_in_flight: 1,
            ..Stats::default()
        };
        let b = Stats {
            initial: 1,
            retries: 1,
            min_spacing_ns: Some(7),
            first_start_ns: Some(1),
            last_start_ns: Some(31),
            max_in_flight: 2,
            ..Stats::default()
        };
        let m = a.merge(&b).unwrap();
        assert_eq!(
            (m.initial, m.retries, m.min_spacing_ns, m.max_in_flight),
            (3, 1, Some(7), 3)
        );
        assert_eq!(m.mean_spacing_ns(), Some(10.0));
        assert_eq!(Stats::default().mean_spacing_ns(), None);
    }

    #[test]
    fn a_merge_that_would_overflow_is_refused() {
        let full = Stats {
            retries: u64::MAX,
            ..Stats::default()
        };
        let one = Stats {
            retries: 1,
            ..Stats::default()
        };
        assert_eq!(full.merge(&one), None);
        let first = Stats {
            initial: 1,
            ..Stats::default()
        };
        assert_eq!(full.merge(&first), None, "the starts would not fit");
        assert_eq!(full.merge(&Stats::default()), Some(full.clone()));
    }
}
