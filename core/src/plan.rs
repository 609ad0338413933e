//! The planning arithmetic: how long a batch takes at a target rate, how many
//! requests are in flight, and whether the target fits the allowance.

use std::fmt;

use crate::rate::Rate;

/// What a batch will take.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Plan {
    /// Time between two starts at the target rate, in milliseconds (rounded).
    pub interval_ms: u64,
    /// The least time the batch can take at the target rate, retries included, in seconds.
    pub duration_s: f64,
    /// The expected number of retries (`requests · f / (1 − f)`).
    pub retries: f64,
    /// Mean requests in flight (Little's law: rate × latency).
    pub in_flight: f64,
    /// Things worth knowing that do not stop the plan.
    pub warnings: Vec<String>,
}

/// Why a plan could not be made.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanError {
    /// The target rate is above the allowance: the batch would be throttled.
    TargetAboveAllowance {
        /// The target, per minute.
        target_per_min: f64,
        /// The allowance, per minute.
        allowance_per_min: f64,
    },
    /// The retry fraction is not in `[0, 1)`.
    BadRetryFraction(f64),
    /// The latency is negative or not a number.
    BadLatency(f64),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::TargetAboveAllowance {
                target_per_min,
                allowance_per_min,
            } => write!(
                f,
                "the target ({target_per_min}/min) is above the allowance ({allowance_per_min}/min): \
                 the server would throttle the batch; aim at or below the allowance"
            ),
            PlanError::BadRetryFraction(x) => {
                write!(f, "the retry fraction must be at least 0 and below 1, not {x}")
            }
            PlanError::BadLatency(x) => {
                write!(f, "the latency must be a number of seconds, 0 or more, not {x}")
            }
        }
    }
}

impl std::error::Error for PlanError {}

impl PlanError {
    /// The stable code every binding reports (C: `100 +` it).
    pub const fn code(&self) -> u32 {
        match self {
            PlanError::TargetAboveAllowance { .. } => 51,
            PlanError::BadRetryFraction(_) => 52,
            PlanError::BadLatency(_) => 53,
        }
    }

    /// The stable name: `target_above_allowance`, `invalid_retry_fraction` or
    /// `invalid_latency`.
    pub const fn name(&self) -> &'static str {
        match self {
            PlanError::TargetAboveAllowance { .. } => "target_above_allowance",
            PlanError::BadRetryFraction(_) => "invalid_retry_fraction",
            PlanError::BadLatency(_) => "invalid_latency",
        }
    }
}

/// Plans `requests` requests sent at `target` under an `allowance`, each taking `latency_s`
/// seconds, with a fraction `retry_fraction` of all attempts being retries.
///
/// # Errors
/// [`PlanError::TargetAboveAllowance`] when the target exceeds the allowance; a bad retry
/// fraction or latency.
pub fn plan(
    requests: u64,
    allowance: Rate,
    target: Rate,
    latency_s: f64,
    retry_fraction: f64,
) -> Result<Plan, PlanError> {
    if !(0.0..1.0).contains(&retry_fraction) {
        return Err(PlanError::BadRetryFraction(retry_fraction));
    }
    if !(latency_s >= 0.0 && latency_s.is_finite()) {
        return Err(PlanError::BadLatency(latency_s));
    }
    if target > allowance {
        return Err(PlanError::TargetAboveAllowance {
            target_per_min: target.as_per_minute(),
            allowance_per_min: allowance.as_per_minute(),
        });
    }
    let per_s = target.as_per_second();
    let retries = requests as f64 * retry_fraction / (1.0 - retry_fraction);
    let duration_s = (requests as f64 + retries) / per_s;
    let in_flight = per_s * latency_s;
    let mut warnings = Vec::new();
    // Extreme rates (1e308/s for 10 s, 1e-308/s) overflow: every figure stays a number.
    let (duration_s, in_flight) = if duration_s.is_finite() && in_flight.is_finite() {
        (duration_s, in_flight)
    } else {
        warnings.push(
            "a figure is beyond what a number can hold (the rates are extreme): shown as the \
             largest number"
                .to_string(),
        );
        (duration_s.min(f64::MAX), in_flight.min(f64::MAX))
    };
    if target == allowance {
        warnings.push(
            "the target equals the allowance: any other client on the account, or any clock \
             drift, will bring 429s; leave some headroom"
                .to_string(),
        );
    } else if target.as_per_second() > 0.9 * allowance.as_per_second() {
        warnings.push(format!(
            "the target uses {:.0}% of the allowance: little headroom for other clients",
            100.0 * target.as_per_second() / allowance.as_per_second()
        ));
    }
    if in_flight > 100.0 {
        warnings.push(format!(
            "about {in_flight:.0} requests will be in flight at once: check the server allows \
             that many connections"
        ));
    }
    // A rate so slow that the interval passes what every language's number holds exactly.
    let interval_ms = (1000.0 / per_s).round().min(crate::MAX_SAFE_MS as f64) as u64;
    if interval_ms == crate::MAX_SAFE_MS {
        warnings.push(format!(
            "the interval between starts is beyond {} ms (the rate is extreme): shown as that",
            crate::MAX_SAFE_MS
        ));
    }
    Ok(Plan {
        interval_ms,
        duration_s,
        retries,
        in_flight,
        warnings,
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn extreme_rates_give_the_largest_number_and_say_so() {
        let huge = Rate::per_second(1e308).unwrap();
        let p = plan(1, huge, huge, 10.0, 0.0).unwrap();
        assert_eq!(p.in_flight, f64::MAX);
        assert!(p
            .warnings
            .iter()
            .any(|w| w.contains("beyond what a number can hold")));
        let tiny = Rate::per_second(1e-308).unwrap();
        let p = plan(10, tiny, tiny, 0.0, 0.0).unwrap();
        assert_eq!(p.duration_s, f64::MAX);
        assert_eq!(p.interval_ms, crate::MAX_SAFE_MS);
    }

    use super::*;

    fn r(s: &str) -> Rate {
        s.parse().unwrap()
    }

    #[test]
    fn guide_b_example() {
        let p = plan(600, r("120/min"), r("90/min"), 2.0, 0.0).unwrap();
        assert_eq!(p.interval_ms, 667);
        assert_eq!(p.duration_s, 400.0);
        assert_eq!(p.in_flight, 3.0);
        assert_eq!(p.retries, 0.0);
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn retries_lengthen_the_batch() {
        let p = plan(600, r("120/min"), r("90/min"), 2.0, 0.2).unwrap();
        assert_eq!(p.retries, 150.0);
        assert_eq!(p.duration_s, 500.0);
    }

    #[test]
    fn a_target_above_the_allowance_is_an_error() {
        let e = plan(600, r("120/min"), r("150/min"), 2.0, 0.0).unwrap_err();
        assert_eq!(
            e,
            PlanError::TargetAboveAllowance {
                target_per_min: 150.0,
                allowance_per_min: 120.0
            }
        );
        assert!(e.to_string().contains("above the allowance"));
    }

    #[test]
    fn warnings_and_bad_input() {
        assert_eq!(
            plan(10, r("2/s"), r("2/s"), 0.1, 0.0)
                .unwrap()
                .warnings
                .len(),
            1
        );
        assert_eq!(
            plan(10, r("100/s"), r("95/s"), 0.1, 0.0)
                .unwrap()
                .warnings
                .len(),
            1
        );
        assert_eq!(
            plan(10, r("1000/s"), r("500/s"), 1.0, 0.0)
                .unwrap()
                .warnings
                .len(),
            1
        );
        assert_eq!(
            plan(1, r("1/s"), r("1/s"), 1.0, 1.0),
            Err(PlanError::BadRetryFraction(1.0))
        );
        assert!(plan(1, r("1/s"), r("1/s"), f64::NAN, 0.0).is_err());
        assert!(plan(1, r("1/s"), r("1/s"), -1.0, 0.0).is_err());
        assert_eq!(
            plan(0, r("1/s"), r("1/s"), 0.0, 0.0).unwrap().duration_s,
            0.0
        );
    }
}
