//! The gate every attempt passes: a place among the requests in flight,
//! then a start slot from the regulator; and the retry budget that retries draw on.

use crate::budget::RetryBudget;
use crate::classify::{Cause, Verdict};
use crate::clock::CancelToken;
use crate::limit::{ConcurrencyLimit, Permit};
use crate::regulator::{Regulator, RegulatorError};

/// A regulator, a concurrency limit and a retry budget, each optional. Clones share them.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    regulator: Option<Regulator>,
    limit: Option<ConcurrencyLimit>,
    budget: Option<RetryBudget>,
}

/// Passage through a gate: holds the place in flight until dropped.
#[derive(Debug)]
#[must_use = "the place in flight is given back when this is dropped"]
pub struct Pass {
    _permit: Option<Permit>,
}

impl Gate {
    /// A gate that lets everything through.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same gate, with starts limited by `regulator`.
    pub fn with_regulator(mut self, regulator: Regulator) -> Self {
        self.regulator = Some(regulator);
        self
    }

    /// The same gate, with requests in flight limited by `limit`.
    pub fn with_limit(mut self, limit: ConcurrencyLimit) -> Self {
        self.limit = Some(limit);
        self
    }

    /// The same gate, with retries drawing on `budget`.
    pub fn with_budget(mut self, budget: RetryBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The regulator, if any.
    pub fn regulator(&self) -> Option<&Regulator> {
        self.regulator.as_ref()
    }

    /// The concurrency limit, if any.
    pub fn limit(&self) -> Option<&ConcurrencyLimit> {
        self.limit.as_ref()
    }

    /// The retry budget, if any.
    pub fn budget(&self) -> Option<&RetryBudget> {
        self.budget.as_ref()
    }

    /// Tells the gate what an attempt came to: with an adaptive regulator, a `rate_limited`
    /// verdict slows it down. Every runner calls this after classifying a failure.
    pub fn on_verdict(&self, verdict: &Verdict) {
        self.on_verdict_by(verdict, None);
    }

    /// [`on_verdict`](Self::on_verdict), a remote regulator's call ending by `until` too when
    /// given (the operation's deadline).
    pub fn on_verdict_by(&self, verdict: &Verdict, until: Option<std::time::Instant>) {
        if verdict.cause() == Cause::RateLimited {
            if let Some(r) = &self.regulator {
                r.report_by(true, until);
            }
        }
    }

    /// Tells the gate an attempt succeeded: an adaptive regulator speeds back up.
    pub fn on_success(&self) {
        self.on_success_by(None);
    }

    /// [`on_success`](Self::on_success), a remote regulator's call ending by `until` too when
    /// given (the operation's deadline).
    pub fn on_success_by(&self, until: Option<std::time::Instant>) {
        if let Some(r) = &self.regulator {
            r.report_by(false, until);
        }
    }

    /// Waits for a place in flight, then for a start slot — in that order, so that the
    /// start happens when its slot comes and starts stay spaced as the regulator says —
    /// for at most `timeout` (`None`: as long as it takes). `None` when `cancel` was
    /// cancelled meanwhile or the timeout came first (a start slot that would come after it
    /// is not reserved). The budget is not touched: the operation machine counts requests.
    ///
    /// # Errors
    /// A remote limit's or regulator's store could not be used ([`RegulatorError::Shared`]).
    pub fn wait(
        &self,
        timeout: Option<std::time::Duration>,
        cancel: &CancelToken,
    ) -> Result<Option<Pass>, RegulatorError> {
        let started = std::time::Instant::now();
        let permit = match &self.limit {
            Some(limit) => match limit.acquire(timeout, cancel)? {
                Some(p) => Some(p),
                None => return Ok(None),
            },
            None => None,
        };
        if let Some(regulator) = &self.regulator {
            let passed = match timeout {
                None => regulator.acquire(1, cancel)?,
                Some(t) => {
                    let left = t.saturating_sub(started.elapsed());
                    regulator.acquire_until(1, left, cancel)? == Some(true)
                }
            };
            if !passed {
                return Ok(None);
            }
        }
        Ok(Some(Pass { _permit: permit }))
    }
}

/// How often a host that cannot block looks at a full concurrency limit again, ms: the
/// cadence of the core's own blocking wait.
pub const GATE_POLL_MS: u64 = 5;

/// One look at the gate by [`Operation::poll_gate`](crate::Operation::poll_gate).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum GatePoll {
    /// Not yet: sleep `delay_ms` (waking early on cancellation), then look again.
    Wait {
        /// How long, ms.
        delay_ms: u64,
    },
    /// Through (the attempt's [`Step::Call`](crate::Step::Call)) or refused (the give-up).
    Next(crate::Step),
}

impl Gate {
    /// Whether passing this gate, or counting in its budget, asks a remote store (Redis): a
    /// host with an event loop then looks at it off the loop.
    pub fn is_remote(&self) -> bool {
        self.regulator.as_ref().is_some_and(Regulator::is_remote)
            || self.limit.as_ref().is_some_and(ConcurrencyLimit::is_remote)
            || self.budget.as_ref().is_some_and(RetryBudget::is_remote)
    }
}
