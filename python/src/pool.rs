//! The attempt pool a loop draws from, for Python: `_AttemptPool`, the core's rule for which
//! pool a loop joins (`LoopPool::choose`, and `LoopPool::after_first` for a loop whose first
//! attempt was made before its machine), the pool an `Attempt` carries for the loops nested
//! in it ([`frame_pool`]), and a loop's [`PoolScope`], which sets its own pool in the context
//! for as long as the loop runs.

use pyo3::prelude::*;

use recuo::{AttemptPool, LoopPool};

use crate::args::methods;
use crate::attempt::{FramePool, PyAttempt};
use crate::context::vars;
use crate::current::current;

/// The attempts left to the outermost loop of a context, shared by the loops inside it.
/// Private: it travels in `recuo._recuo._attempt_pool`; ``_AttemptPool(n)`` makes one of `n`
/// attempts (for tests).
#[pyclass(name = "_AttemptPool", module = "recuo._recuo", frozen)]
pub(crate) struct PyAttemptPool(AttemptPool);

methods!({
    impl PyAttemptPool {
        /// Attempts left.
        getter!(remaining(self) -> u32 = self.0.remaining());

        #[new]
        fn new(remaining: u32) -> Self {
            PyAttemptPool(AttemptPool::new(remaining))
        }

        /// Takes one attempt: ``False`` when none is left.
        fn _take(&self) -> bool {
            self.0.try_take()
        }
    }
});

/// The core's rule for the pool a loop draws from (`LoopPool::choose`, or with
/// `after_first` `LoopPool::after_first`): ``(pool, nested, owned)`` for a loop of
/// `max_attempts` starting in a context whose pool is `enclosing` — `pool` is `enclosing`
/// itself (shared) when the loop joins it. Private: the loop vectors' tests use it.
#[pyfunction]
#[pyo3(name = "_loop_pool", signature = (enclosing, max_attempts, batch_operation, after_first, /))]
pub(crate) fn loop_pool(
    enclosing: Option<PyRef<'_, PyAttemptPool>>,
    max_attempts: u32,
    batch_operation: bool,
    after_first: bool,
) -> (PyAttemptPool, bool, bool) {
    let enclosing = enclosing.as_ref().map(|p| &p.0);
    let chosen = if after_first {
        LoopPool::after_first(enclosing, max_attempts, batch_operation)
    } else {
        LoopPool::choose(enclosing, max_attempts, batch_operation)
    };
    (PyAttemptPool(chosen.pool), chosen.nested, chosen.owned)
}

/// The attempt pool of the loop this context is inside, if any: the one the attempt being made
/// carries (the first attempt of an outermost loop makes it only now, at the first ask), else
/// the one an enclosing loop set in the context (a loop run by a classifier or a hook).
pub(crate) fn enclosing_pool(py: Python<'_>) -> PyResult<Option<AttemptPool>> {
    let current = current(py)?;
    below(py, &current)
}

/// The pool of the loops around an attempt that replaced `previous` as the current one:
/// the one `previous` carries, else the one an enclosing loop set in the context.
fn below(py: Python<'_>, previous: &Bound<'_, PyAny>) -> PyResult<Option<AttemptPool>> {
    if let Ok(attempt) = previous.cast::<PyAttempt>() {
        if let Some((pool, _)) = frame_pool(py, attempt.get())? {
            return Ok(Some(pool));
        }
    }
    let current = vars(py)?.pool.get(py)?;
    Ok(current
        .cast::<PyAttemptPool>()
        .ok()
        .map(|enclosing| enclosing.get().0.clone()))
}

/// The pool `frame`'s loop draws from, and whether it is that loop's own (`None` when not
/// known here). A first attempt made before its machine finds it now, at the first ask, by
/// the core's rule (`LoopPool::after_first`).
pub(crate) fn frame_pool(
    py: Python<'_>,
    frame: &PyAttempt,
) -> PyResult<Option<(AttemptPool, bool)>> {
    match &frame.pool {
        FramePool::Unknown => Ok(None),
        FramePool::Known(pool) => Ok(Some((pool.clone(), false))),
        FramePool::Unresolved {
            found,
            max_attempts,
            below: under,
        } => {
            if let Some(found) = found.get() {
                return Ok(Some(found.clone()));
            }
            let previous = under
                .get()
                .map_or_else(|| py.None().into_bound(py), |p| p.bind(py).clone());
            let enclosing = below(py, &previous)?;
            let chosen = LoopPool::after_first(enclosing.as_ref(), *max_attempts, false);
            Ok(Some(
                found.get_or_init(|| (chosen.pool, chosen.owned)).clone(),
            ))
        }
    }
}

/// The pool a loop draws from, as the core chose it; when it is the loop's own, it is the
/// context's pool until [`PoolScope::exit`].
pub(crate) struct PoolScope {
    chosen: LoopPool,
    token: Option<Py<PyAny>>,
}

impl PoolScope {
    /// The pool of a loop of `max_attempts` starting in this context (`batch_operation`: an
    /// operation of a batch), as the core's `LoopPool::choose` says.
    pub(crate) fn enter(
        py: Python<'_>,
        max_attempts: u32,
        batch_operation: bool,
    ) -> PyResult<Self> {
        let enclosing = enclosing_pool(py)?;
        let chosen = LoopPool::choose(enclosing.as_ref(), max_attempts, batch_operation);
        Self::keep(py, chosen)
    }

    /// The scope of a loop whose first attempt was made before its machine ([`crate::first::First`]): the
    /// pool that attempt drew from (the core's `LoopPool::after_first`, found lazily), set in
    /// the context for the rest of the loop when it is this loop's own.
    pub(crate) fn after_first(py: Python<'_>, frame: &PyAttempt) -> PyResult<Self> {
        let (pool, owned) = frame_pool(py, frame)?.unwrap_or_else(|| (AttemptPool::new(0), false));
        Self::keep(
            py,
            LoopPool {
                pool,
                nested: true,
                owned,
            },
        )
    }

    /// Stores `chosen`: its pool becomes the context's when it is the loop's own.
    fn keep(py: Python<'_>, chosen: LoopPool) -> PyResult<Self> {
        let token = if chosen.owned {
            let pool = PyAttemptPool(chosen.pool.clone());
            Some(vars(py)?.pool.set(py, pool)?.unbind())
        } else {
            None
        };
        Ok(PoolScope { chosen, token })
    }

    /// Where the loop's attempts come from.
    pub(crate) fn loop_pool(&self) -> LoopPool {
        self.chosen.clone()
    }

    /// The pool the loop draws from.
    pub(crate) fn pool(&self) -> AttemptPool {
        self.chosen.pool.clone()
    }

    /// Restores the context as it was before [`enter`](Self::enter).
    pub(crate) fn exit(mut self, py: Python<'_>) -> PyResult<()> {
        match self.token.take() {
            Some(token) => vars(py)?.pool.reset(py, token),
            None => Ok(()),
        }
    }

    /// The token, for a caller that resets the variable itself (the asyncio loop).
    pub(crate) fn into_token(mut self) -> Option<Py<PyAny>> {
        self.token.take()
    }
}

impl Drop for PoolScope {
    /// Should a scope be left without [`exit`](Self::exit) (a panic unwinding through the
    /// loop), the context is still restored: a pool left behind would make every later loop
    /// in this context "nested" in a spent pool.
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            Python::attach(|py| {
                if let Ok(vars) = vars(py) {
                    let _ = vars.pool.reset(py, token);
                }
            });
        }
    }
}
