//! `Recuo\plan`: the planning arithmetic, the core's [`recuo::plan()`] (its
//! answer, `Recuo\Plan`, is one of the core's values: see [`crate::values`]).

use ext_php_rs::prelude::*;

use crate::convert::non_negative;
use crate::errors::plan_error;
use crate::limits::{rate, RateArg};
use crate::values::{instance, Instance};

php_functions!({
    /// Plans `$requests` requests sent at `$target` under an `$allowance` (rates as `"90/min"`
    /// or numbers per second), each answered in `$latencyS` seconds, with `$retryFraction` of
    /// all attempts being retries. Throws `Recuo\Exception\PlanError` (a `\ValueError`) when the
    /// target is above the allowance, the latency is negative or the fraction is not in [0, 1).
    #[php(name = "Recuo\\plan", defaults(retryFraction = 0.0))]
    pub fn plan(
        requests: i64,
        allowance: RateArg<'_>,
        target: RateArg<'_>,
        latencyS: f64,
        retryFraction: f64,
    ) -> PhpResult<Instance<recuo::Plan>> {
        let requests = non_negative(F, 1, "requests", requests)?;
        let allowance = rate(F, 2, "allowance", allowance)?;
        let target = rate(F, 3, "target", target)?;
        let inner = recuo::plan(requests, allowance, target, latencyS, retryFraction)
            .map_err(|e| plan_error(F, &e))?;
        instance(&inner)
    }
});
