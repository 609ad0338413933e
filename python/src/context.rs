//! The two `contextvars.ContextVar`s every loop shares with the code it runs (a loop's state
//! is per context, as asyncio tasks need): `recuo.attempt_pool`, the attempt pool of the outermost loop,
//! so that nested loops share one limit ([`crate::pool`]), and `recuo.current_attempt`, the
//! attempt being made, which `recuo.current_attempt()` answers ([`crate::current`]).
//!
//! The variables only store; which pool a loop draws from is the core's `LoopPool::choose`.
//! The asyncio loop (`recuo/_retry.py`) uses the same two variables (`_attempt_pool`,
//! `_current_attempt`), so sync and async loops nest in each other alike.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

/// A `contextvars.ContextVar` and its methods, looked up once: calling a method found
/// anew each time would make (and drop) a bound method per call.
pub(crate) struct Var {
    pub(crate) var: Py<PyAny>,
    pub(crate) get: Py<PyAny>,
    pub(crate) set: Py<PyAny>,
    pub(crate) reset: Py<PyAny>,
}

impl Var {
    fn new(py: Python<'_>, name: &str) -> PyResult<Self> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("default", py.None())?;
        let var = py
            .import("contextvars")?
            .getattr("ContextVar")?
            .call((name,), Some(&kwargs))?;
        Ok(Var {
            get: var.getattr("get")?.unbind(),
            set: var.getattr("set")?.unbind(),
            reset: var.getattr("reset")?.unbind(),
            var: var.unbind(),
        })
    }

    /// The variable's value in this context.
    pub(crate) fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.get.bind(py).call0()
    }

    /// Sets `value` in this context: the token to reset it with.
    pub(crate) fn set<'py>(
        &self,
        py: Python<'py>,
        value: impl IntoPyObject<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.set.bind(py).call1((value,))
    }

    /// Restores the value `token` replaced.
    pub(crate) fn reset<'py>(
        &self,
        py: Python<'py>,
        token: impl IntoPyObject<'py>,
    ) -> PyResult<()> {
        self.reset.bind(py).call1((token,)).map(drop)
    }
}

/// The two variables every loop shares (created with `default=None` at first use):
/// `recuo.attempt_pool` (`_AttemptPool | None`: the pool of the outermost loop running in
/// this context) and `recuo.current_attempt` (`Attempt | None`: the attempt being made).
pub(crate) struct Vars {
    pub(crate) pool: Var,
    pub(crate) attempt: Var,
}

/// The context variables of every loop.
pub(crate) fn vars(py: Python<'_>) -> PyResult<&'static Vars> {
    static VARS: PyOnceLock<Vars> = PyOnceLock::new();
    VARS.get_or_try_init(py, || {
        Ok(Vars {
            pool: Var::new(py, "recuo.attempt_pool")?,
            attempt: Var::new(py, "recuo.current_attempt")?,
        })
    })
}
