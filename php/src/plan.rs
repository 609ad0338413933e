//! `Recuo\plan` and `Recuo\Plan`: the planning arithmetic of SPEC §8, the core's
//! [`recuo::plan()`].

use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;

use crate::convert::php_int;
use crate::errors::{guarded, not_constructible, plan_error, value_error};
use crate::limits::{rate, RateArg};

/// What a batch will take: `intervalMs` between starts at the target rate, `durationS` at
/// the least (retries included), the `retries` expected, the mean `inFlight` (Little's law)
/// and `warnings` worth knowing that do not stop the plan.
#[php_class]
#[php(name = "Recuo\\Plan")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Plan {
    inner: recuo::Plan,
}

#[php_impl]
impl Plan {
    /// Not constructible from PHP: `Recuo\plan` makes one.
    #[php(vis = "private")]
    pub fn __construct() -> PhpResult<Self> {
        not_constructible("Recuo\\Plan")
    }

    /// Time between two starts at the target rate, in milliseconds (rounded).
    #[php(getter)]
    pub fn get_interval_ms(&self) -> i64 {
        php_int(self.inner.interval_ms)
    }

    /// The least time the batch takes at the target rate, retries included, in seconds.
    #[php(getter)]
    pub fn get_duration_s(&self) -> f64 {
        self.inner.duration_s
    }

    /// The expected number of retries: `requests * f / (1 - f)`.
    #[php(getter)]
    pub fn get_retries(&self) -> f64 {
        self.inner.retries
    }

    /// Mean requests in flight: the target rate times the latency.
    #[php(getter)]
    pub fn get_in_flight(&self) -> f64 {
        self.inner.in_flight
    }

    /// Things worth knowing that do not stop the plan (little headroom, many in flight).
    #[php(getter)]
    pub fn get_warnings(&self) -> Vec<String> {
        self.inner.warnings.clone()
    }
}

/// Plans `$requests` requests sent at `$target` under an `$allowance` (rates as `"90/min"`
/// or numbers per second), each answered in `$latencyS` seconds, with `$retryFraction` of
/// all attempts being retries. Throws `Recuo\Exception\PlanError` (a `\ValueError`) when the
/// target is above the allowance, the latency is negative or the fraction is not in [0, 1).
#[php_function]
#[php(name = "Recuo\\plan")]
#[php(defaults(retryFraction = 0.0))]
pub fn plan(
    requests: i64,
    allowance: RateArg<'_>,
    target: RateArg<'_>,
    latencyS: f64,
    retryFraction: f64,
) -> PhpResult<Plan> {
    const F: &str = "Recuo\\plan";
    guarded(F, || {
        let requests = u64::try_from(requests)
            .map_err(|_| value_error(F, 1, "requests", "must be greater than or equal to 0"))?;
        let allowance = rate(F, 2, "allowance", allowance)?;
        let target = rate(F, 3, "target", target)?;
        let inner = recuo::plan(requests, allowance, target, latencyS, retryFraction)
            .map_err(|e| plan_error(F, &e))?;
        Ok(Plan { inner })
    })
}

/// `Recuo\\plan`, for the module's registration (the macros keep the function's wrapper
/// private to this module).
pub fn plan_function() -> ext_php_rs::builders::FunctionBuilder<'static> {
    wrap_function!(plan)
}
