//! One limit for nested loops: a loop inside another draws its attempts from the
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

/// Where one loop's attempts come from — the rule every host applies when a loop starts; the
/// host only stores the answer where its language keeps per-context state (a thread-local,
/// a `contextvars.ContextVar`, an `AsyncLocalStorage`, the request).
#[derive(Debug, Clone)]
pub struct LoopPool {
    /// The pool the loop draws from.
    pub pool: AttemptPool,
    /// Whether the loop runs inside an attempt of an enclosing loop (that attempt already
    /// drew its first one), or its first attempt was made before its machine (drawn already).
    pub nested: bool,
    /// Whether the pool is this loop's own: the host makes it the context's pool for the
    /// loops nested inside, until this loop ends.
    pub owned: bool,
}

impl LoopPool {
    /// The pool of a loop that starts with the context's `enclosing` pool (the pool of the
    /// outermost loop running there, if any): it joins that pool, so nested loops share one
    /// limit — unless it is an operation of a batch (`batch_operation`), whose operations each
    /// own a pool of `max_attempts`, as does a loop with no enclosing one.
    pub fn choose(
        enclosing: Option<&AttemptPool>,
        max_attempts: u32,
        batch_operation: bool,
    ) -> Self {
        match enclosing {
            Some(pool) if !batch_operation => LoopPool {
                pool: pool.clone(),
                nested: true,
                owned: false,
            },
            _ => LoopPool {
                pool: AttemptPool::new(max_attempts),
                nested: false,
                owned: true,
            },
        }
    }

    /// The pool of a loop whose first attempt was made before its machine (a success then
    /// needs no machine at all): that attempt is counted as drawn — from the enclosing pool as
    /// a nested loop's first attempt is, or from a pool of its own that starts at
    /// `max_attempts - 1`.
    pub fn after_first(
        enclosing: Option<&AttemptPool>,
        max_attempts: u32,
        batch_operation: bool,
    ) -> Self {
        let mut chosen = Self::choose(enclosing, max_attempts, batch_operation);
        if chosen.owned {
            chosen.pool = AttemptPool::new(max_attempts.saturating_sub(1));
        }
        chosen.nested = true;
        chosen
    }
}
