//! Where a loop's attempts come from (nested loops share one limit): the core's rule,
//! [`recuo::LoopPool`], as `Recuo\LoopPool` for PHP code that runs machines of its own, and
//! the place this extension keeps the pool of each context for `Recuo\retry`,
//! `Recuo\comRetry` and `Recuo\runBatch`. The rule is the core's; only the storage is PHP's.
//!
//! The context is the current fiber of the current request: the loop that owns a pool (the
//! core says which does) makes it the fiber's pool until it ends, so that loops suspended
//! in different fibers (an event loop running many operations) do not count against one
//! another. A fatal error inside a loop jumps over the Rust frames (`longjmp`), so the scope
//! that owns a pool is dropped by the engine's catch point (a `BailoutGuard`, see
//! [`crate::driver`]); and every request starts and ends with no pool at all.

use std::cell::RefCell;

use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;

use crate::convert::{count, php_int};

/// Where one loop's attempts come from, as the core's rule answers it: the `remaining`
/// attempts of its pool, whether the loop is `nested` (its first attempt is already drawn:
/// an enclosing loop's attempt, or one made before its machine) and whether the pool is
/// `owned` by it (then it is the context's pool, for the loops inside, until it ends).
#[php_class]
#[php(name = "Recuo\\LoopPool", flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct LoopPool {
    pub(crate) inner: recuo::LoopPool,
}

php_impl!({
    impl LoopPool {
        /// Not constructible from PHP: `choose()` and `afterFirst()` make one.
        private_constructor!();
        /// Attempts left in the pool (shared with every loop that draws from it).
        getter!(get_remaining(self) -> i64 = php_int(u64::from(self.inner.pool.remaining())));
        /// Whether the loop's first attempt is already drawn.
        getter!(get_nested(self) -> bool = self.inner.nested);
        /// Whether the pool is the loop's own: the context's pool until the loop ends.
        getter!(get_owned(self) -> bool = self.inner.owned);

        /// The pool of a loop of `$maxAttempts` that starts inside `$enclosing` (the pool of the
        /// outermost loop running in the same context, if any): it joins that pool — unless it
        /// is an operation of a batch (`$batchOperation`), which owns a pool of its own, as does
        /// a loop with no enclosing one.
        #[php(defaults(batchOperation = false))]
        pub fn choose(
            enclosing: Option<&LoopPool>,
            maxAttempts: i64,
            batchOperation: bool,
        ) -> PhpResult<Self> {
            guard!("Recuo\\LoopPool::choose");
            let max = count(F, 2, "maxAttempts", maxAttempts)?;
            let enclosing = enclosing.map(|e| &e.inner.pool);
            let inner = recuo::LoopPool::choose(enclosing, max, batchOperation);
            Ok(LoopPool { inner })
        }

        /// As `choose()`, for a loop whose first attempt was made before its machine (see
        /// `Recuo\Operation::startAfterFirst()`): that attempt counts as drawn — from the
        /// enclosing pool, as a nested loop's first attempt is, or from a pool of its own of
        /// `$maxAttempts - 1`.
        #[php(defaults(batchOperation = false))]
        pub fn after_first(
            enclosing: Option<&LoopPool>,
            maxAttempts: i64,
            batchOperation: bool,
        ) -> PhpResult<Self> {
            guard!("Recuo\\LoopPool::afterFirst");
            let max = count(F, 2, "maxAttempts", maxAttempts)?;
            let enclosing = enclosing.map(|e| &e.inner.pool);
            let inner = recuo::LoopPool::after_first(enclosing, max, batchOperation);
            Ok(LoopPool { inner })
        }
    }
});

thread_local! {
    /// The pool of the outermost loop running in each fiber (keyed by the fiber's address;
    /// 0 for the main one) of the request this thread serves.
    static POOLS: RefCell<Vec<(usize, Slot)>> = const { RefCell::new(Vec::new()) };
}

/// The pool of a fiber.
enum Slot {
    /// A loop in its first attempt, made before its machine ([`crate::fast`]), of
    /// `max_attempts`: its pool is chosen only when a loop inside asks for it (or when that
    /// attempt fails), so that a success costs nothing.
    Lazy(u32),
    /// The pool the core chose for the loop that owns it.
    Chosen(recuo::LoopPool),
}

impl Slot {
    /// The owning loop's pool, chosen now for a loop in its first attempt.
    fn chosen(&mut self) -> &recuo::LoopPool {
        if let Slot::Lazy(max_attempts) = *self {
            *self = Slot::Chosen(recuo::LoopPool::after_first(None, max_attempts, false));
        }
        match self {
            Slot::Chosen(chosen) => chosen,
            Slot::Lazy(_) => unreachable!("chosen just above"),
        }
    }
}

/// The fiber PHP code is running in: its address, or 0 outside any fiber.
fn current_fiber() -> usize {
    // SAFETY: the engine's globals are valid for the life of the process, and only this
    // thread touches them.
    unsafe { (*ext_php_rs::ffi::ext_php_rs_executor_globals()).active_fiber as usize }
}

/// A first attempt made before any machine ([`crate::fast`]): when no loop runs in the
/// current fiber, a lazy pool for a loop of `max_attempts`, and `true` (the caller then owns
/// it: [`fast_leave`] when it succeeds, or it hands it to the machine); `false` inside
/// another loop.
pub fn fast_enter(max_attempts: u32) -> bool {
    let fiber = current_fiber();
    POOLS.with(|pools| {
        let mut pools = pools.borrow_mut();
        if pools.iter().any(|(f, _)| *f == fiber) {
            return false;
        }
        pools.push((fiber, Slot::Lazy(max_attempts)));
        true
    })
}

/// The loop of [`fast_enter`] is over: its pool goes.
pub fn fast_leave() {
    let fiber = current_fiber();
    let _ = POOLS.try_with(|pools| {
        let mut pools = pools.borrow_mut();
        if let Some(i) = pools.iter().rposition(|(f, _)| *f == fiber) {
            pools.swap_remove(i);
        }
    });
}

/// How a loop's first attempt is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// By its machine.
    Machine,
    /// Before its machine ([`crate::fast`]); `own_pool`: that attempt was the outermost
    /// loop of its fiber, and left its pool ([`fast_enter`]) for this loop.
    AfterFirst {
        /// Whether the fiber's pool is this loop's own.
        own_pool: bool,
    },
}

/// A loop's hold on the context's pool: gives it back on drop.
pub struct PoolScope {
    /// The fiber whose pool this loop owns.
    owner: Option<usize>,
    /// The enclosing loop's pool, set aside by a loop that owns one inside it (a batch's
    /// operation), and put back when it ends.
    saved: Option<Slot>,
}

impl PoolScope {
    /// Enters a loop of `max_attempts` (`batch_operation`: an operation of a batch) whose
    /// first attempt is made as `start` says: the pool the core chooses, kept as the
    /// context's when the loop owns it.
    pub fn enter(
        max_attempts: u32,
        batch_operation: bool,
        start: Start,
    ) -> (Self, recuo::LoopPool) {
        let fiber = current_fiber();
        POOLS.with(|pools| {
            let mut pools = pools.borrow_mut();
            let at = pools.iter().position(|(f, _)| *f == fiber);
            if let (Start::AfterFirst { own_pool: true }, Some(i)) = (start, at) {
                // Chosen when the first attempt was made (or now): this loop's own.
                let chosen = pools[i].1.chosen().clone();
                let scope = PoolScope {
                    owner: Some(fiber),
                    saved: None,
                };
                return (scope, chosen);
            }
            let enclosing = at.map(|i| pools[i].1.chosen().pool.clone());
            let chosen = match start {
                Start::Machine => {
                    recuo::LoopPool::choose(enclosing.as_ref(), max_attempts, batch_operation)
                }
                Start::AfterFirst { .. } => {
                    recuo::LoopPool::after_first(enclosing.as_ref(), max_attempts, batch_operation)
                }
            };
            if !chosen.owned {
                let scope = PoolScope {
                    owner: None,
                    saved: None,
                };
                return (scope, chosen);
            }
            let saved = at.map(|i| pools.remove(i).1);
            pools.push((fiber, Slot::Chosen(chosen.clone())));
            let scope = PoolScope {
                owner: Some(fiber),
                saved,
            };
            (scope, chosen)
        })
    }
}

impl Drop for PoolScope {
    fn drop(&mut self) {
        if let Some(fiber) = self.owner {
            let saved = self.saved.take();
            // `try_with`: the thread may be ending.
            let _ = POOLS.try_with(|pools| {
                let mut pools = pools.borrow_mut();
                pools.retain(|(f, _)| *f != fiber);
                if let Some(slot) = saved {
                    pools.push((fiber, slot));
                }
            });
        }
    }
}

/// Forgets every pool: called when a request starts and ends, so that a request that died
/// inside a loop (a fatal error skips the scopes' destructors) leaves nothing behind.
pub fn reset_pools() {
    let _ = POOLS.try_with(|pools| pools.borrow_mut().clear());
}
