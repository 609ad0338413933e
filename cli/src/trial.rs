//! `recuo trial`: a batch of reads through the core's batch runner — one policy, one gate
//! (a regulator at `--rate`, a concurrency limit, the batch's deadline) — against a URL or
//! an embedded simulated API, then the report: the core's counts beside the plan.

use std::collections::BTreeMap;
use std::time::Duration;

use hyper::Uri;
use recuo::{
    monotonic_ns, unix_now_ms, AttemptContext, Batch, BatchResult, ConcurrencyLimit, Gate,
    GiveUpReason, Outcome, Policy, Rate, Record, Regulator, Request, RequestLine, ServerWait,
    Verdict,
};

use crate::args::{RetryAfterMode, TrialArgs};
use crate::client::{check_url, redact_url, HttpClient};
use crate::error::{run_error, CliError};
use crate::events::{responses, Event, EventLog};
use crate::plot::{self, PlotInput};
use crate::progress::Progress;
use crate::report::{planned, print_table, TrialJson};
use crate::serve::{self, Server};
use crate::server_state::ServerConfig;
use crate::table::show_rate;

/// The embedded server's allowance: tighter than the default `--rate` of 90/min, so a trial
/// meets 429s as well as 503s.
const EMBEDDED_ALLOWANCE: &str = "60/min";
/// The embedded server's burst.
const EMBEDDED_BURST: u32 = 5;
/// The embedded server's share of 503s.
const EMBEDDED_FAIL_RATE: f64 = 0.1;
/// The embedded server's answer time: guide B's 2 s, so 90/min keeps 3 requests in flight.
const EMBEDDED_LATENCY: Duration = Duration::from_secs(2);

/// A read that did not succeed on this attempt: the core's verdict and what came back.
#[derive(Debug, Clone, Copy)]
struct Failure {
    verdict: Verdict,
    at_unix_ms: i64,
}

/// Runs `recuo trial`: the core's batch queue over the reads (no read starts or waits past
/// the deadline; one whose wait cannot fit stops the queue, and the rest say
/// `queue_stopped`), the records from the core's journal.
///
/// # Errors
/// [`CliError::Usage`] for a bad URL or embedded-server flags beside `--url`;
/// [`CliError::Run`] when the embedded server or the plot file fails.
pub fn run(a: &TrialArgs) -> Result<(), CliError> {
    let embedded = embedded_config(a)?;
    if let Some(url) = &a.url {
        check_url(&url.replace("{i}", "0"))?;
    }
    let policy = Policy::guide_b()
        .to_builder()
        .max_attempts(a.attempts)
        .deadline(Some(a.deadline))
        .build()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let regulator =
        Regulator::new(a.rate, 1).map_err(|e| CliError::Usage(format!("--rate: {e}")))?;
    let limit = ConcurrencyLimit::new(a.concurrency)
        .ok_or_else(|| CliError::Usage("--concurrency must be at least 1".to_string()))?;
    let gate = Gate::new().with_regulator(regulator).with_limit(limit);

    let rt = serve::runtime()?;
    let server = match &embedded {
        Some(config) => Some(
            rt.block_on(Server::start(config.clone(), 0))
                .map_err(|e| run_error("starting the embedded server", e))?,
        ),
        None => None,
    };
    let template = match (&server, &a.url) {
        (Some(s), _) => format!("{}/items/{{i}}", s.url()),
        (None, Some(url)) => url.clone(),
        (None, None) => return Err(CliError::Usage("--url is needed".to_string())),
    };
    let uris = (0..a.count)
        .map(|i| check_url(&template.replace("{i}", &i.to_string())))
        .collect::<Result<Vec<Uri>, _>>()?;
    let client = HttpClient::new(rt.handle().clone(), a.timeout, a.api_key.as_deref())?;
    let log = EventLog::new();
    let lines = std::sync::Mutex::new(String::new());
    let sink = |r: &Record| {
        let mut l = lines.lock().unwrap_or_else(|e| e.into_inner());
        l.push_str(&r.to_json_line());
        l.push('\n');
    };
    let requests: Vec<RequestLine> = uris
        .iter()
        .map(|u| RequestLine {
            method: "GET".to_string(),
            url: u.to_string(),
        })
        .collect();
    let progress = Progress::new(a.count as usize, !a.json);

    let ops: Vec<_> = uris
        .iter()
        .map(|uri| {
            let (client, log, progress, policy) = (&client, &log, &progress, &policy);
            move |ctx: &AttemptContext<'_>| read(uri, ctx, client, policy, log, progress)
        })
        .collect();
    let mut batch = Batch::new(&policy);
    if a.records.is_some() {
        batch = batch.records(&sink, &requests);
    }
    let report = batch
        .gate(gate)
        .workers(a.concurrency as usize)
        .deadline(Some(a.deadline))
        .stop_when_a_wait_exceeds_the_deadline(true)
        .run(ops, |f: &Failure| f.verdict);
    progress.finish();

    let server_stats = server.as_ref().map(Server::stats);
    if let Some(s) = server {
        rt.block_on(s.stop());
    }
    let (gave_up, retry_at) = gave_up(&report.results);
    let allowance = embedded
        .as_ref()
        .map(|c| (c.allowance, c.burst))
        .or(a.server.allowance.map(|r| (r, 1)));
    let events = log.sorted();
    // The planner's latency: the embedded server's, or the mean answer time observed.
    let latency_s = embedded
        .as_ref()
        .map_or_else(|| mean_latency_s(&events), |c| c.latency.as_secs_f64());
    let plan = planned(
        u64::from(a.count),
        a.rate,
        allowance.map(|p| p.0),
        latency_s,
    );
    let s = &report.stats;
    let out = TrialJson {
        url: redact_url(&template),
        count: a.count,
        rate_per_min: a.rate.as_per_minute(),
        concurrency: a.concurrency,
        attempts: a.attempts,
        deadline_s: a.deadline.as_secs_f64(),
        initial: s.initial,
        retries: s.retries,
        successes: s.successes,
        failures: s.failures,
        not_started: s.not_started,
        throttled: s.throttled,
        unavailable: s.unavailable,
        min_spacing_ms: s.min_spacing_ns.map(|ns| ns as f64 / 1e6),
        mean_spacing_ms: s.mean_spacing_ns().map(|ns| ns / 1e6),
        max_in_flight: s.max_in_flight,
        elapsed_s: report.elapsed.as_secs_f64(),
        planned_s: plan.duration_s,
        planned_in_flight: plan.in_flight,
        gave_up,
        retry_at_unix_ms: retry_at,
        responses: responses(&events),
        warnings: plan.warnings,
        server: server_stats,
    };
    if a.json {
        crate::table::print_json(&out);
    } else {
        print_table(a, &out, s, embedded.as_ref());
    }
    if let Some(path) = &a.records {
        let lines = lines.into_inner().unwrap_or_else(|e| e.into_inner());
        std::fs::write(path, lines)
            .map_err(|e| run_error(&format!("writing {}", path.display()), e))?;
    }
    if let Some(path) = &a.plot {
        let input = PlotInput {
            title: format!(
                "recuo trial: {} reads of {} at {}, {} in flight",
                a.count,
                out.url,
                show_rate(a.rate),
                a.concurrency
            ),
            events: &events,
            rate: a.rate,
            allowance,
            concurrency: a.concurrency,
        };
        std::fs::write(path, plot::svg(&input))
            .map_err(|e| run_error(&format!("writing {}", path.display()), e))?;
        if !a.json {
            println!("timeline written to {}", path.display());
        }
    }
    Ok(())
}

/// The reads that gave up, by reason; and for those whose server wait passed the deadline,
/// the earliest instant (epoch ms) the server said it would accept them again.
fn gave_up<T>(results: &[BatchResult<T, Failure>]) -> (BTreeMap<&'static str, u64>, Option<i64>) {
    let mut by_reason = BTreeMap::new();
    let mut retry_at = None::<i64>;
    for r in results {
        let BatchResult::GaveUp(e) = r else {
            continue;
        };
        *by_reason.entry(e.reason.name()).or_insert(0) += 1;
        let wait = match (e.reason, &e.error) {
            (GiveUpReason::WaitExceedsDeadline, Some(f)) => f.verdict.server_wait().zip(Some(f)),
            _ => None,
        };
        if let Some((ServerWait::Ms(w), f)) = wait {
            let at = f
                .at_unix_ms
                .saturating_add(i64::try_from(w).unwrap_or(i64::MAX));
            retry_at = Some(retry_at.map_or(at, |r| r.min(at)));
        }
    }
    (by_reason, retry_at)
}

/// One attempt of one read: GET, classify with the core, log (and tell `saw` what it saw).
fn read(
    uri: &Uri,
    ctx: &AttemptContext<'_>,
    client: &HttpClient,
    policy: &Policy,
    log: &EventLog,
    progress: &Progress,
) -> Result<u16, Failure> {
    let key = ctx.idempotency_key();
    let start_ns = monotonic_ns();
    let left = ctx.timeout_ms().map(Duration::from_millis);
    let reply = client.get(uri, ctx.idempotency_header(), key.as_str(), left);
    let end_ns = monotonic_ns();
    let now = unix_now_ms();
    let request = Request {
        method: "GET",
        has_idempotency_key: true,
    };
    let (outcome, verdict) = match &reply {
        Ok(r) => {
            let o = Outcome::Status(r.status);
            (o, policy.classify(o, request, r.headers.as_slice(), now))
        }
        Err(t) => {
            let o = Outcome::Transport(*t);
            (o, policy.classify::<&str, &str>(o, request, &[], now))
        }
    };
    log.push(Event {
        start_ns,
        end_ns,
        attempt: ctx.attempt(),
        outcome,
    });
    match &reply {
        Ok(r) => ctx.record_response(outcome, r.headers.as_slice()),
        Err(_) => ctx.record_response::<&str, &str>(outcome, &[]),
    }
    let done = !matches!(verdict, Verdict::Retry { .. })
        || ctx.attempt().saturating_add(1) >= policy.max_attempts();
    let status = reply.as_ref().map_or(0, |r| r.status);
    progress.attempt(ctx.attempt(), status, done);
    match verdict {
        Verdict::Success => Ok(status),
        _ => Err(Failure {
            verdict,
            at_unix_ms: now,
        }),
    }
}

/// The mean time from start to answer of the attempts, seconds (0 with none).
fn mean_latency_s(events: &[Event]) -> f64 {
    if events.is_empty() {
        return 0.0;
    }
    let total: u64 = events
        .iter()
        .map(|e| e.end_ns.saturating_sub(e.start_ns))
        .sum();
    total as f64 / events.len() as f64 / 1e9
}

/// The embedded server's settings, or `None` with `--url` (where only `--allowance` may be
/// given, for the plan and the plot).
fn embedded_config(a: &TrialArgs) -> Result<Option<ServerConfig>, CliError> {
    let s = &a.server;
    if a.url.is_some() {
        let only_embedded = [
            ("--burst", s.burst.is_some()),
            ("--fail-rate", s.fail_rate.is_some()),
            ("--latency", s.latency.is_some()),
            ("--retry-after", s.retry_after.is_some()),
            ("--quota", s.quota.is_some()),
            ("--seed", s.seed.is_some()),
        ];
        if let Some((flag, _)) = only_embedded.iter().find(|(_, given)| *given) {
            return Err(CliError::Usage(format!(
                "{flag} sets up the embedded server: leave it out with --url"
            )));
        }
        return Ok(None);
    }
    let default_allowance = EMBEDDED_ALLOWANCE
        .parse::<Rate>()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    Ok(Some(ServerConfig {
        allowance: s.allowance.unwrap_or(default_allowance),
        burst: s.burst.unwrap_or(EMBEDDED_BURST),
        fail_rate: s.fail_rate.unwrap_or(EMBEDDED_FAIL_RATE),
        latency: s.latency.unwrap_or(EMBEDDED_LATENCY),
        retry_after: s.retry_after.unwrap_or(RetryAfterMode::Seconds),
        quota: s.quota,
        seed: s.seed,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use recuo::{Cause, Report, RetryError};

    #[test]
    fn give_ups_are_tallied_with_the_earliest_return() {
        let failure = |wait_ms, at_unix_ms| Failure {
            verdict: Verdict::Retry {
                cause: Cause::RateLimited,
                server_wait: Some(ServerWait::Ms(wait_ms)),
            },
            at_unix_ms,
        };
        let gave_up_with = |reason, f| {
            BatchResult::<u16, Failure>::GaveUp(RetryError {
                error: Some(f),
                reason,
                retry_at_ms: None,
                report: Report::default(),
            })
        };
        let results = vec![
            BatchResult::Succeeded(200),
            gave_up_with(
                GiveUpReason::WaitExceedsDeadline,
                failure(86_400_000, 1_000),
            ),
            gave_up_with(GiveUpReason::WaitExceedsDeadline, failure(86_400_000, 500)),
            gave_up_with(GiveUpReason::AttemptsExhausted, failure(5, 0)),
            BatchResult::NotStarted {
                reason: GiveUpReason::QueueStopped,
                stopped_by: Some(GiveUpReason::WaitExceedsDeadline),
            },
        ];
        let (by_reason, at) = gave_up(&results);
        assert_eq!(by_reason["wait_exceeds_deadline"], 2);
        assert_eq!(by_reason["attempts_exhausted"], 1);
        assert_eq!(by_reason.len(), 2);
        assert_eq!(at, Some(86_400_500));
    }
}
