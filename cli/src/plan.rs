//! `recuo plan`: the core's planner in words and in JSON.

use serde::Serialize;

use crate::args::PlanArgs;
use crate::error::CliError;
use crate::table::{human_seconds, show_rate, Table};

/// The plan as `--json` prints it.
#[derive(Debug, Serialize)]
struct PlanJson {
    requests: u64,
    allowance_per_min: f64,
    target_per_min: f64,
    latency_s: f64,
    retry_fraction: f64,
    interval_ms: u64,
    duration_s: f64,
    retries: f64,
    in_flight: f64,
    warnings: Vec<String>,
}

/// Runs `recuo plan`.
///
/// # Errors
/// [`CliError::Usage`] when the core refuses the plan (a target above the allowance, a
/// retry fraction out of range).
pub fn run(a: &PlanArgs) -> Result<(), CliError> {
    let latency_s = a.latency.as_secs_f64();
    let p = recuo::plan(
        a.requests,
        a.allowance,
        a.target,
        latency_s,
        a.retry_fraction,
    )
    .map_err(|e| CliError::Usage(e.to_string()))?;
    if a.json {
        let out = PlanJson {
            requests: a.requests,
            allowance_per_min: a.allowance.as_per_minute(),
            target_per_min: a.target.as_per_minute(),
            latency_s,
            retry_fraction: a.retry_fraction,
            interval_ms: p.interval_ms,
            duration_s: p.duration_s,
            retries: p.retries,
            in_flight: p.in_flight,
            warnings: p.warnings,
        };
        crate::table::print_json(&out);
        return Ok(());
    }
    println!(
        "{} requests at {} under an allowance of {}, {} per response:",
        a.requests,
        show_rate(a.target),
        show_rate(a.allowance),
        human_seconds(latency_s)
    );
    let mut t = Table::new();
    t.row("start interval", format!("{} ms", p.interval_ms));
    let retries = if p.retries > 0.0 {
        format!(", {:.0} retries included", p.retries)
    } else {
        String::new()
    };
    t.row(
        "least duration",
        format!("{}{retries}", human_seconds(p.duration_s)),
    );
    t.row(
        "in flight",
        format!("{} on average", trim_number(p.in_flight)),
    );
    print!("{t}");
    for w in &p.warnings {
        println!("warning: {w}");
    }
    Ok(())
}

/// A number with at most two decimals and no trailing zeros: `3`, `2.5`, `0.67`.
pub fn trim_number(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lose_their_trailing_zeros() {
        assert_eq!(trim_number(3.0), "3");
        assert_eq!(trim_number(2.5), "2.5");
        assert_eq!(trim_number(2.0 / 3.0), "0.67");
        assert_eq!(trim_number(100.0), "100");
    }
}
