//! What a blocking loop is given to run: the operation it calls ([`Call`]), the Python
//! callables of its effects ([`Effects`]: classifier, hooks, sleep) and where it runs
//! ([`Env`]: its cancel token, its batch queue's stop).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use recuo::{CancelToken, GiveUpReason};

/// The operation a loop calls.
pub(crate) enum Call<'a, 'py> {
    /// `com_retry`'s `tarefa()`: no arguments.
    Tarefa(&'a Bound<'py, PyAny>),
    /// `function(*args, **kwargs)`.
    With {
        function: &'a Bound<'py, PyAny>,
        args: &'a Bound<'py, PyTuple>,
        kwargs: Option<&'a Bound<'py, PyDict>>,
    },
}

impl<'py> Call<'_, 'py> {
    /// Calls the operation once.
    pub(crate) fn call(&self) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Call::Tarefa(f) => f.call0(),
            Call::With {
                function,
                args,
                kwargs,
            } => function.call(*args, *kwargs),
        }
    }
}

/// The Python callables of a loop (each optional; already checked to be callable).
#[derive(Default)]
pub(crate) struct Effects<'a, 'py> {
    /// `classify(exc) -> Verdict | bool` (`com_retry`'s `repetir_se`); `None` retries every
    /// `Exception`.
    pub(crate) classify: Option<&'a Bound<'py, PyAny>>,
    /// `on_retry(attempt, exc, delay_seconds)` before each sleep (`com_retry`'s `ao_repetir`).
    pub(crate) on_retry: Option<&'a Bound<'py, PyAny>>,
    /// `on_give_up(report)` once, when the loop gives up.
    pub(crate) on_give_up: Option<&'a Bound<'py, PyAny>>,
    /// `sleep(seconds)` instead of the real wait.
    pub(crate) sleep: Option<&'a Bound<'py, PyAny>>,
}

/// Where a loop runs: the token that cancels it, and the batch queue's stop it answers to.
pub(crate) struct Env<'a> {
    /// Cancels the loop (a batch stopped); never cancelled otherwise.
    pub(crate) cancel: CancelToken,
    /// The reason the loop's batch queue stopped on, if it did.
    pub(crate) queue_stopped: Option<&'a (dyn Fn() -> Option<GiveUpReason> + Sync)>,
}

impl Env<'_> {
    /// A loop of its own on the caller's thread.
    pub(crate) fn caller() -> Env<'static> {
        Env {
            cancel: CancelToken::new(),
            queue_stopped: None,
        }
    }
}
