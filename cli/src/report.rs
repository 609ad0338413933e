//! The trial's report: the core's plan for it, the JSON object `--json` prints and the
//! table printed otherwise.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use recuo::{GiveUpReason, Rate, Stats};
use serde::Serialize;

use crate::args::TrialArgs;
use crate::server_state::{ServerConfig, ServerStats};
use crate::table::{human_ms, human_seconds, show_rate, Table};

/// The trial as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct TrialJson {
    /// The URL read (redacted; `{i}` stands for the read's number).
    pub url: String,
    /// Reads asked for.
    pub count: u32,
    /// The method of every read.
    pub method: String,
    /// The request headers sent, `Name: value`, sensitive values as `[redacted]`.
    pub headers: Vec<String>,
    /// Each read's URL, redacted.
    pub urls: Vec<String>,
    /// The rate of starts, per minute.
    pub rate_per_min: f64,
    /// The most requests in flight allowed.
    pub concurrency: u32,
    /// The most attempts per read.
    pub attempts: u32,
    /// The batch's deadline, seconds.
    pub deadline_s: f64,
    /// First attempts started (the core's stats, as every count below).
    pub initial: u64,
    /// Retries started.
    pub retries: u64,
    /// Reads that succeeded.
    pub successes: u64,
    /// Reads that gave up.
    pub failures: u64,
    /// Reads never started: the deadline came first.
    pub not_started: u64,
    /// 429s seen (and 403s with a spent quota).
    pub throttled: u64,
    /// 503s seen.
    pub unavailable: u64,
    /// The shortest time between two starts, ms.
    pub min_spacing_ms: Option<f64>,
    /// The mean time between two starts, ms.
    pub mean_spacing_ms: Option<f64>,
    /// The most requests in flight at once.
    pub max_in_flight: u64,
    /// How long the batch took, seconds.
    pub elapsed_s: f64,
    /// The least time the core's planner gives the reads at the rate, seconds.
    pub planned_s: f64,
    /// The planner's mean requests in flight (rate × latency).
    pub planned_in_flight: f64,
    /// Reads that gave up, by reason (`wait_exceeds_deadline`, …).
    pub gave_up: BTreeMap<&'static str, u64>,
    /// For reads that gave up because the server's wait passed the deadline: the earliest
    /// instant (epoch ms) the server said it would accept them again.
    pub retry_at_unix_ms: Option<i64>,
    /// Answers seen by the client, by status code or transport kind.
    pub responses: BTreeMap<String, u64>,
    /// What the planner warns of.
    pub warnings: Vec<String>,
    /// What the embedded server saw (`GET /stats`), when there was one.
    pub server: Option<ServerStats>,
    /// The idempotency key every attempt carried: `none`, `caller` (the caller's own, from
    /// `--header`) or `recuo` (one made per read, the same on all its attempts).
    pub idempotency_key: &'static str,
    /// Whether a failure whose outcome is unknown (a timeout, a reset, a 500) was retried.
    pub idempotent: bool,
    /// How each read ended, in order.
    pub reads: Vec<ReadJson>,
}

/// How one read ended, as an HTTP client with recuo inside would surface it.
#[derive(Debug, Serialize)]
pub struct ReadJson {
    /// The URL, redacted.
    pub url: String,
    /// `success`, `gave_up` or `not_started`.
    pub result: &'static str,
    /// Attempts made.
    pub attempts: u32,
    /// `response` (the last response is returned), `error` (the transport error is raised
    /// again) or `give_up` (recuo's give-up error is raised, with `message`).
    pub ending: &'static str,
    /// The last response's status, if the last attempt got one.
    pub status: Option<u16>,
    /// The last attempt's transport failure (`reset`, `timeout`, …; `late` when the deadline
    /// cut it), if it had one.
    pub error: Option<&'static str>,
    /// Why it gave up (null for a success).
    pub reason: Option<&'static str>,
    /// For a wait past the deadline: the instant (epoch ms) from which a retry is allowed.
    pub retry_at_unix_ms: Option<i64>,
    /// The give-up's message, for a `give_up` ending.
    pub message: Option<String>,
}

/// What the core's planner expects of the trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// The least time the reads take at the rate, seconds.
    pub duration_s: f64,
    /// Mean requests in flight (rate × latency).
    pub in_flight: f64,
    /// What to know.
    pub warnings: Vec<String>,
}

/// The core's plan for `count` reads at `rate`: a rate above the server's allowance is
/// planned at the rate itself, with a warning; an unknown allowance warns of nothing.
pub fn planned(count: u64, rate: Rate, allowance: Option<Rate>, latency_s: f64) -> Planned {
    let at_rate = |warnings| {
        let p = recuo::plan(count, rate, rate, latency_s, 0.0);
        Planned {
            duration_s: p.as_ref().map_or(f64::NAN, |p| p.duration_s),
            in_flight: p.as_ref().map_or(f64::NAN, |p| p.in_flight),
            warnings,
        }
    };
    let Some(allowance) = allowance else {
        return at_rate(Vec::new());
    };
    match recuo::plan(count, allowance, rate, latency_s, 0.0) {
        Ok(p) => Planned {
            duration_s: p.duration_s,
            in_flight: p.in_flight,
            warnings: p.warnings,
        },
        Err(recuo::PlanError::TargetAboveAllowance { .. }) => at_rate(vec![format!(
            "the rate ({}) is above the server's allowance ({}): expect 429s, and a longer \
             batch than planned",
            show_rate(rate),
            show_rate(allowance)
        )]),
        Err(e) => at_rate(vec![e.to_string()]),
    }
}

pub fn print_table(a: &TrialArgs, out: &TrialJson, s: &Stats, server: Option<&ServerConfig>) {
    println!(
        "recuo trial: {} reads of {} at {}, {} in flight",
        out.count,
        out.url,
        show_rate(a.rate),
        a.concurrency
    );
    if out.method != "GET" || !out.headers.is_empty() {
        println!(
            "  ({}{}{})",
            out.method,
            if out.headers.is_empty() { "" } else { " with " },
            out.headers.join(", ")
        );
    }
    if let Some(c) = server {
        println!(
            "  (embedded server: {} allowance, burst {}, {:.0}% 503s, {} per answer{})",
            show_rate(c.allowance),
            c.burst,
            c.fail_rate * 100.0,
            human_seconds(c.latency.as_secs_f64()),
            c.quota.map_or(String::new(), |q| format!(", quota {q}"))
        );
    }
    let mut t = Table::new();
    t.row("initial requests", s.initial.to_string());
    t.row("retries", s.retries.to_string());
    t.row("successes", s.successes.to_string());
    t.row("final failures", s.failures.to_string());
    if s.not_started > 0 {
        t.row(
            "not started",
            format!("{} (the deadline came first)", s.not_started),
        );
    }
    t.row("429s seen", s.throttled.to_string());
    t.row("503s seen", s.unavailable.to_string());
    t.row("min spacing", human_ms(s.min_spacing_ns.map(|n| n as f64)));
    t.row("mean spacing", human_ms(s.mean_spacing_ns()));
    t.row(
        "max in flight",
        format!(
            "{} (plan: {} on average)",
            s.max_in_flight,
            crate::plan::trim_number(out.planned_in_flight)
        ),
    );
    t.row(
        "total time",
        format!(
            "{} (plan: {} at {})",
            human_seconds(out.elapsed_s),
            human_seconds(out.planned_s),
            show_rate(a.rate)
        ),
    );
    for (reason, n) in &out.gave_up {
        let mut text = format!("{n}");
        if *reason == GiveUpReason::WaitExceedsDeadline.name() {
            if let Some(at) = out.retry_at_unix_ms {
                let when =
                    SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(at).unwrap_or(0));
                text.push_str(&format!(
                    " (the server accepts again at {})",
                    httpdate::fmt_http_date(when)
                ));
            }
        }
        t.row(format!("gave up: {reason}"), text);
    }
    print!("{t}");
    if let Some(st) = &out.server {
        println!(
            "  server saw {} requests: {} ok, {} 429s, {} 503s, at most {} in flight, at most \
             {} starts in one second",
            st.requests,
            st.ok,
            st.throttled,
            st.unavailable,
            st.max_in_flight,
            st.max_starts_per_second
        );
    }
    for w in &out.warnings {
        println!("warning: {w}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_warns_when_the_rate_is_above_the_allowance() {
        let r = |s: &str| s.parse::<Rate>().unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let p = planned(20, r("90/min"), Some(r("120/min")), 2.0);
        assert!(close(p.duration_s, 20.0 / 1.5) && close(p.in_flight, 3.0));
        assert!(p.warnings.is_empty());
        let p = planned(20, r("90/min"), Some(r("60/min")), 2.0);
        assert!(close(p.duration_s, 20.0 / 1.5) && close(p.in_flight, 3.0));
        assert!(
            p.warnings[0].contains("above the server's allowance (60/min)"),
            "{p:?}"
        );
        let p = planned(20, r("90/min"), Some(r("90/min")), 0.0);
        assert_eq!(
            p.warnings.len(),
            1,
            "a rate equal to the allowance warns: {p:?}"
        );
        let p = planned(20, r("90/min"), None, 0.0);
        assert!(close(p.duration_s, 20.0 / 1.5));
        assert!(
            p.warnings.is_empty(),
            "an unknown allowance warns of nothing: {p:?}"
        );
    }
}
