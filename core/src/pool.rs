//! One limit for nested loops (SPEC §6): a loop inside another draws its attempts from the
//! outer loop's remaining ones, so the innermost operation runs at most the outermost
//! loop's `max_attempts` times in total.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// A shared count of attempts left. Cloning shares the count.
#[derive(Debug, Clone)]
pub struct AttemptPool(Arc<AtomicU32>);

impl AttemptPool {
    /// A pool of `attempts` attempts.
    pub fn new(attempts: u32) -> Self {
        AttemptPool(Arc::new(AtomicU32::new(attempts)))
    }

    /// Attempts left.
    pub fn remaining(&self) -> u32 {
        self.0.load(Ordering::Acquire)
    }

    /// Takes one attempt; `false` when none is left.
    pub fn try_take(&self) -> bool {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }
}
