//! The concurrency limit (SPEC §9): a semaphore on requests in flight, with permits that
//! give their place back when dropped.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::clock::CancelToken;

#[derive(Debug, Default)]
struct Counts {
    in_flight: u32,
    max_in_flight: u32,
}

#[derive(Debug)]
struct Inner {
    limit: u32,
    counts: Mutex<Counts>,
    freed: Condvar,
}

/// At most `limit` requests in flight at once. Clones share the limit.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimit(Arc<Inner>);

/// One place in flight, given back when dropped.
#[derive(Debug)]
#[must_use = "the place is given back as soon as the permit is dropped"]
pub struct Permit(Arc<Inner>);

impl Drop for Permit {
    fn drop(&mut self) {
        let mut c = self.0.counts.lock().unwrap_or_else(PoisonError::into_inner);
        c.in_flight -= 1;
        drop(c);
        self.0.freed.notify_one();
    }
}

/// How often a blocked `acquire` looks at its cancellation token.
const CANCEL_POLL: Duration = Duration::from_millis(5);

impl ConcurrencyLimit {
    /// The stable code of a zero limit, the only way to make none (C: 156).
    pub const ZERO_LIMIT_CODE: u32 = 56;

    /// A limit of `limit` places; `None` when `limit` is 0 (nothing could ever run).
    pub fn new(limit: u32) -> Option<Self> {
        (limit > 0).then(|| {
            ConcurrencyLimit(Arc::new(Inner {
                limit,
                counts: Mutex::new(Counts::default()),
                freed: Condvar::new(),
            }))
        })
    }

    /// The number of places.
    pub fn limit(&self) -> u32 {
        self.0.limit
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> u32 {
        self.lock().in_flight
    }

    /// The most requests that were ever in flight at once.
    pub fn max_in_flight(&self) -> u32 {
        self.lock().max_in_flight
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.0.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(&self, c: &mut Counts) -> Permit {
        c.in_flight += 1;
        c.max_in_flight = c.max_in_flight.max(c.in_flight);
        Permit(self.0.clone())
    }

    /// A place now, or `None` when all are taken.
    pub fn try_acquire(&self) -> Option<Permit> {
        let mut c = self.lock();
        (c.in_flight < self.0.limit).then(|| self.take(&mut c))
    }

    /// Waits for a place, at most `timeout` (`None`: as long as it takes), and gives up when
    /// `cancel` is cancelled (within a few milliseconds).
    pub fn acquire(&self, timeout: Option<Duration>, cancel: &CancelToken) -> Option<Permit> {
        // A timeout too long to add to the clock is no timeout.
        let until = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut c = self.lock();
        loop {
            if c.in_flight < self.0.limit {
                return Some(self.take(&mut c));
            }
            if cancel.is_cancelled() {
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
    fn permits_come_back_when_dropped() {
        let l = ConcurrencyLimit::new(2).unwrap();
        let a = l.try_acquire().unwrap();
        let b = l.try_acquire().unwrap();
        assert!(l.try_acquire().is_none());
        assert_eq!((l.in_flight(), l.max_in_flight()), (2, 2));
        drop(a);
        assert_eq!(l.in_flight(), 1);
        let _c = l.try_acquire().unwrap();
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
                        let _p = l.acquire(None, &cancel).unwrap();
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
        let _held = l.try_acquire().unwrap();
        let cancel = CancelToken::new();
        assert!(l
            .acquire(Some(Duration::from_millis(10)), &cancel)
            .is_none());
        let c = cancel.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            c.cancel();
        });
        assert!(l.acquire(None, &cancel).is_none());
        t.join().unwrap();
    }
}
