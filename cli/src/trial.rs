//! `recuo trial`: a batch of reads through the core's batch runner — one policy, one gate
//! (a regulator at `--rate`, a concurrency limit, the batch's deadline) — against a URL or
//! an embedded simulated API, then the report: the core's counts beside the plan.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Uri};
use recuo::http::{self, Last, RequestPlan, Style};
use recuo::telemetry::Registry;
use recuo::{
    monotonic_ns, unix_now_ms, AttemptContext, Batch, BatchResult, ConcurrencyLimit, Gate,
    GiveUpReason, Outcome, Policy, Rate, Record, Regulator, Report, Request, RequestLine,
    RetryError, ServerWait, Verdict,
};

use crate::args::{RetryAfterMode, TrialArgs};
use crate::client::{check_url, redact_url, HttpClient, Read};
use crate::error::{run_error, CliError};
use crate::events::{responses, Event, EventLog};
use crate::plot::{self, PlotInput};
use crate::progress::Progress;
use crate::report::{planned, print_table, ReadJson, TrialJson};
use crate::serve::cors::Cors;
use crate::serve::{self, Server, API_KEY_HEADER};
use crate::server_state::ServerConfig;
use crate::table::show_rate;
use crate::tls::{self, Trust};

/// The embedded server's allowance: tighter than the default `--rate` of 90/min, so a trial
/// meets 429s as well as 503s.
const EMBEDDED_ALLOWANCE: &str = "60/min";
/// The embedded server's burst.
const EMBEDDED_BURST: u32 = 5;
/// The embedded server's share of 503s.
const EMBEDDED_FAIL_RATE: f64 = 0.1;
/// The embedded server's answer time: 2 s, so 90/min keeps 3 requests in flight.
const EMBEDDED_LATENCY: Duration = Duration::from_secs(2);

/// A read that did not succeed on this attempt: the core's verdict and what came back.
#[derive(Debug, Clone, Copy)]
struct Failure {
    verdict: Verdict,
    last: Last,
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
    if let (Some(url), None) = (&a.url, &a.urls) {
        check_url(&url.replace("{i}", "0"))?;
    }
    let method = method_of(a)?;
    let body = body_of(a)?;
    let headers = headers_of(a)?;
    let lines = match &a.urls {
        Some(path) => Some(read_url_lines(path)?),
        None => None,
    };
    // The HTTP adapters' policy: an HTTP-date wait is measured from the response's own Date.
    let policy = Policy::adapters()
        .to_builder()
        .max_attempts(a.attempts)
        .base(a.base)
        .cap(a.cap)
        .deadline(Some(a.deadline))
        .server_honours_keys(a.keys_honoured)
        .build()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    // Which key every attempt carries, and whether the request counts as idempotent.
    let request_plan = RequestPlan::for_headers(
        &policy,
        method.as_str(),
        headers.iter().map(|(k, v)| (k.as_str(), v)),
        a.keys.send_keys(),
    );
    let regulator =
        Regulator::new(a.rate, 1).map_err(|e| CliError::Usage(format!("--rate: {e}")))?;
    let limit = ConcurrencyLimit::new(a.concurrency)
        .ok_or_else(|| CliError::Usage("--concurrency must be at least 1".to_string()))?;
    let gate = Gate::new().with_regulator(regulator).with_limit(limit);

    let rt = serve::runtime()?;
    let server = match &embedded {
        Some(config) => Some(
            rt.block_on(Server::start(config.clone(), 0, None, Cors::None))
                .map_err(|e| run_error("starting the embedded server", e))?,
        ),
        None => None,
    };
    let base = match (&server, &a.url) {
        (Some(s), _) => Some(s.url()),
        (None, url) => url.clone(),
    };
    let (template, uris) = match (&lines, &base) {
        (Some(lines), base) => (
            a.urls
                .as_ref()
                .map_or_else(String::new, |p| p.display().to_string()),
            lines
                .iter()
                .enumerate()
                .map(|(i, line)| check_url(&resolve(line, base.as_deref(), i)?))
                .collect::<Result<Vec<Uri>, _>>()?,
        ),
        (None, Some(base)) => {
            let template = match &server {
                Some(_) => format!("{base}/items/{{i}}"),
                None => base.clone(),
            };
            let uris = (0..a.count.unwrap_or(DEFAULT_COUNT))
                .map(|i| check_url(&template.replace("{i}", &i.to_string())))
                .collect::<Result<Vec<Uri>, _>>()?;
            (template, uris)
        }
        (None, None) => return Err(CliError::Usage("--url is needed".to_string())),
    };
    let count = u32::try_from(uris.len()).unwrap_or(u32::MAX);
    let trust = if !uris.iter().any(|u| u.scheme_str() == Some("https")) {
        Trust::Nobody
    } else if a.insecure {
        eprintln!(
            "recuo: warning: --insecure: the servers' certificates are not verified; anyone \
             in the path can read and change these requests, credentials included"
        );
        Trust::Anyone
    } else if let Some(ca) = &a.cacert {
        Trust::CaFile(ca.clone())
    } else {
        Trust::System
    };
    let tls = tls::client_config(&trust)?;
    let shown_headers = shown(&headers);
    let client = HttpClient::new(rt.handle().clone(), a.timeout, headers, tls);
    let log = EventLog::new();
    let record_lines = std::sync::Mutex::new(String::new());
    let metrics = std::sync::Mutex::new(Registry::new());
    let sink = |r: &Record| {
        if a.records.is_some() {
            let mut l = record_lines.lock().unwrap_or_else(|e| e.into_inner());
            l.push_str(&r.to_json_line());
            l.push('\n');
        }
        if a.metrics.is_some() {
            let mut m = metrics.lock().unwrap_or_else(|e| e.into_inner());
            m.add_record(r);
        }
    };
    let requests: Vec<RequestLine> = uris
        .iter()
        .map(|u| RequestLine {
            method: method.as_str().to_string(),
            url: u.to_string(),
        })
        .collect();
    let reads: Vec<Read> = uris
        .iter()
        .map(|uri| Read {
            method: method.clone(),
            uri: uri.clone(),
            body: body.clone(),
        })
        .collect();
    let progress = Progress::new(reads.len(), !a.json);
    let timeout = a.timeout;

    let ops: Vec<_> = reads
        .iter()
        .map(|r| {
            let (client, log, progress, policy) = (&client, &log, &progress, &policy);
            move |ctx: &AttemptContext<'_>| {
                read(r, request_plan, timeout, ctx, client, policy, log, progress)
            }
        })
        .collect();
    let mut batch = Batch::new(&policy);
    if a.records.is_some() || a.metrics.is_some() {
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
    let read_results = read_results(&report.results, &report.reports, &uris);
    let allowance = embedded
        .as_ref()
        .map(|c| (c.allowance, c.burst))
        .or(a.server.allowance.map(|r| (r, 1)));
    let events = log.sorted();
    // The planner's latency: the embedded server's, or the mean answer time observed.
    let latency_s = embedded
        .as_ref()
        .map_or_else(|| mean_latency_s(&events), |c| c.latency.as_secs_f64());
    let plan = planned(u64::from(count), a.rate, allowance.map(|p| p.0), latency_s);
    let s = &report.stats;
    let out = TrialJson {
        url: redact_url(&template),
        count,
        method: method.as_str().to_string(),
        headers: shown_headers,
        urls: uris.iter().map(|u| redact_url(&u.to_string())).collect(),
        rate_per_min: a.rate.as_per_minute(),
        concurrency: a.concurrency,
        attempts: a.attempts,
        deadline_s: a.deadline.as_secs_f64(),
        idempotency_key: request_plan.key().name(),
        idempotent: request_plan.idempotent(),
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
        reads: read_results,
    };
    if a.json {
        crate::table::print_json(&out);
    } else {
        print_table(a, &out, s, embedded.as_ref());
    }
    if let Some(path) = &a.records {
        let lines = record_lines.into_inner().unwrap_or_else(|e| e.into_inner());
        std::fs::write(path, lines)
            .map_err(|e| run_error(&format!("writing {}", path.display()), e))?;
    }
    if let Some(path) = &a.metrics {
        let text = metrics
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .to_prometheus();
        std::fs::write(path, text)
            .map_err(|e| run_error(&format!("writing {}", path.display()), e))?;
    }
    if let Some(path) = &a.plot {
        let input = PlotInput {
            title: format!(
                "recuo trial: {} reads of {} at {}, {} in flight",
                count,
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
        if let Some(at) = retry_at_unix_ms(e) {
            retry_at = Some(retry_at.map_or(at, |r| r.min(at)));
        }
    }
    (by_reason, retry_at)
}

/// For a read whose server wait passed the deadline: the instant (epoch ms) the server said
/// it would accept it again — the wait the core read from the answer, from when it came.
/// (The core's own `retry_at` is on the runner's clock, which starts with each operation
/// inside a batch: the epoch instant is the host's to write.)
fn retry_at_unix_ms(e: &RetryError<Failure>) -> Option<i64> {
    let f = e.error.as_ref()?;
    match (e.reason, f.verdict.server_wait()) {
        (GiveUpReason::WaitExceedsDeadline, Some(ServerWait::Ms(w))) => Some(
            f.at_unix_ms
                .saturating_add(i64::try_from(w).unwrap_or(i64::MAX)),
        ),
        _ => None,
    }
}

/// How each read ended, as an HTTP adapter would surface it (the core's `ending` and
/// `give_up_message`).
fn read_results(
    results: &[BatchResult<u16, Failure>],
    reports: &[Option<Report>],
    uris: &[Uri],
) -> Vec<ReadJson> {
    let now = unix_now_ms();
    results
        .iter()
        .zip(reports)
        .zip(uris)
        .map(|((r, report), uri)| {
            let attempts = match r {
                BatchResult::GaveUp(e) => e.report.attempts,
                _ => report.as_ref().map_or(0, |r| r.attempts),
            };
            let (result, reason, last, retry_at) = match r {
                BatchResult::Succeeded(status) => ("success", None, Last::Status(*status), None),
                BatchResult::GaveUp(e) => (
                    "gave_up",
                    Some(e.reason),
                    e.error.as_ref().map_or(Last::Nothing, |f| f.last),
                    retry_at_unix_ms(e),
                ),
                BatchResult::NotStarted { reason, .. } => {
                    ("not_started", Some(*reason), Last::Nothing, None)
                }
            };
            let ending = http::ending(Style::Client, reason, last);
            let message = match (ending, reason) {
                (http::Ending::GiveUp, Some(reason)) => Some(http::give_up_message(
                    reason,
                    attempts,
                    last,
                    retry_at.map(|at| u64::try_from(at.saturating_sub(now)).unwrap_or(0)),
                )),
                _ => None,
            };
            ReadJson {
                url: redact_url(&uri.to_string()),
                result,
                attempts,
                ending: ending.name(),
                status: match last {
                    Last::Status(s) => Some(s),
                    _ => None,
                },
                error: match last {
                    Last::Transport(t) => Some(t.name()),
                    Last::Late => Some("late"),
                    _ => None,
                },
                reason: reason.map(GiveUpReason::name),
                retry_at_unix_ms: retry_at,
                message,
            }
        })
        .collect()
}

/// One attempt of one read: send it with the key `plan` says, classify with the core as
/// `plan` says, log (and tell the record what it saw). `timeout`: the client's own bound on
/// an attempt (a timeout of a shorter bound, the rest of the deadline, is the deadline's).
#[allow(clippy::too_many_arguments)]
fn read(
    r: &Read,
    plan: RequestPlan,
    timeout: Duration,
    ctx: &AttemptContext<'_>,
    client: &HttpClient,
    policy: &Policy,
    log: &EventLog,
    progress: &Progress,
) -> Result<u16, Failure> {
    let key = plan.sends_recuos_key().then(|| ctx.idempotency_key());
    let start_ns = monotonic_ns();
    let left = ctx.timeout_ms().map(Duration::from_millis);
    let reply = client.send(
        r,
        key.as_ref().map(|k| (ctx.idempotency_header(), k.as_str())),
        left,
    );
    let end_ns = monotonic_ns();
    let now = unix_now_ms();
    let request = Request {
        method: r.method.as_str(),
        has_idempotency_key: plan.idempotent(),
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
    let last = match &reply {
        Ok(r) => Last::Status(r.status),
        Err(recuo::Transport::Timeout) if left.is_some_and(|l| l < timeout) => Last::Late,
        Err(t) => Last::Transport(*t),
    };
    match verdict {
        Verdict::Success => Ok(status),
        _ => Err(Failure {
            verdict,
            last,
            at_unix_ms: now,
        }),
    }
}

/// The reads of `--url` without `--urls`.
const DEFAULT_COUNT: u32 = 20;

/// The method: `--method`, or POST with a body, or GET.
fn method_of(a: &TrialArgs) -> Result<Method, CliError> {
    let has_body = a.data.is_some() || a.data_file.is_some();
    match &a.method {
        Some(m) => Method::from_bytes(m.trim().to_ascii_uppercase().as_bytes())
            .map_err(|_| CliError::Usage(format!("--method {m:?} is not an HTTP method"))),
        None if has_body => Ok(Method::POST),
        None => Ok(Method::GET),
    }
}

/// The body of every attempt: `--data`, or `--data-file` read once.
fn body_of(a: &TrialArgs) -> Result<Bytes, CliError> {
    match (&a.data, &a.data_file) {
        (Some(text), _) => Ok(Bytes::from(text.clone())),
        (None, Some(path)) => std::fs::read(path)
            .map(Bytes::from)
            .map_err(|e| CliError::Usage(format!("--data-file {}: {e}", path.display()))),
        (None, None) => Ok(Bytes::new()),
    }
}

/// The request headers: each `--header 'Name: value'`, then `--api-key` as `X-Api-Key`.
/// A message about a bad header names it and never shows its value (it may be a secret).
fn headers_of(a: &TrialArgs) -> Result<Vec<(HeaderName, HeaderValue)>, CliError> {
    let mut out = Vec::new();
    for text in &a.headers {
        let Some((name, value)) = text.split_once(':') else {
            return Err(CliError::Usage(
                "--header is written 'Name: value' (the text given is not shown: it may hold a \
                 secret)"
                    .to_string(),
            ));
        };
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
            CliError::Usage(
                "--header: the part before ':' is not a header name (the text is not shown: it \
                 may hold a secret)"
                    .to_string(),
            )
        })?;
        let value = HeaderValue::from_str(value.trim_matches([' ', '\t'])).map_err(|_| {
            CliError::Usage(format!(
                "--header {}: the value is not a header value: visible ASCII (not shown)",
                name.as_str()
            ))
        })?;
        out.push((name, value));
    }
    if let Some(k) = &a.api_key {
        let value = HeaderValue::from_str(k).map_err(|_| {
            CliError::Usage("--api-key must be visible ASCII (a header value)".to_string())
        })?;
        out.push((HeaderName::from_static(API_KEY_HEADER), value));
    }
    Ok(out)
}

/// The headers as they may be shown: `Name: value`, redacted by the core.
fn shown(headers: &[(HeaderName, HeaderValue)]) -> Vec<String> {
    let pairs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.to_str().unwrap_or("")))
        .collect();
    recuo::redact_headers(&pairs)
        .into_iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect()
}

/// The lines of `--urls`: URLs or paths, blank lines and `#` comments skipped.
fn read_url_lines(path: &Path) -> Result<Vec<String>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("--urls {}: {e}", path.display())))?;
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    if lines.is_empty() {
        return Err(CliError::Usage(format!(
            "--urls {}: no URL in it",
            path.display()
        )));
    }
    if lines.len() > 100_000 {
        return Err(CliError::Usage(format!(
            "--urls {}: at most 100000 URLs",
            path.display()
        )));
    }
    Ok(lines)
}

/// A line of `--urls` as a URL: a URL as it is, a path read against `base` (`--url`, or
/// the embedded server); `{i}` is the read's number.
fn resolve(line: &str, base: Option<&str>, i: usize) -> Result<String, CliError> {
    let line = line.replace("{i}", &i.to_string());
    if line.contains("://") {
        return Ok(line);
    }
    let Some(base) = base else {
        return Err(CliError::Usage(format!(
            "--urls: {:?} is a path: give the server with --url",
            redact_url(&line)
        )));
    };
    let base: Uri = check_url(base)?;
    let origin = format!(
        "{}://{}",
        base.scheme_str().unwrap_or("http"),
        base.authority().map_or("", |a| a.as_str())
    );
    let sep = if line.starts_with('/') { "" } else { "/" };
    Ok(format!("{origin}{sep}{line}"))
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

/// Whether every line of a `--urls` file is a whole URL (then no embedded server is needed).
fn urls_are_absolute(path: &Path) -> bool {
    read_url_lines(path).is_ok_and(|lines| lines.iter().all(|l| l.contains("://")))
}

/// The embedded server's settings, or `None` with `--url` (where only `--allowance` may be
/// given, for the plan and the plot).
fn embedded_config(a: &TrialArgs) -> Result<Option<ServerConfig>, CliError> {
    let s = &a.server;
    if a.url.is_some() || a.urls.as_ref().is_some_and(|p| urls_are_absolute(p)) {
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
    use recuo::Cause;

    #[test]
    fn paths_are_read_against_the_base() {
        assert_eq!(
            resolve("/items/{i}", Some("https://127.0.0.1:8443/ignored?x=1"), 3).unwrap(),
            "https://127.0.0.1:8443/items/3"
        );
        assert_eq!(
            resolve("a/b", Some("http://h:1"), 0).unwrap(),
            "http://h:1/a/b"
        );
        assert_eq!(
            resolve("http://other/x", Some("http://h:1"), 0).unwrap(),
            "http://other/x"
        );
        assert!(resolve("/x", None, 0).is_err());
    }

    #[test]
    fn header_errors_never_show_the_value() {
        use clap::Parser;
        let args = |h: &str| {
            let cli = crate::args::Cli::parse_from(["recuo", "trial", "--header", h]);
            match cli.command {
                crate::args::Command::Trial(t) => t,
                _ => unreachable!(),
            }
        };
        for bad in [
            "Authorization Bearer sekrit-1",
            "Auth orization: sekrit-1",
            "Authorization: sekrit-1\u{7f}",
        ] {
            let e = headers_of(&args(bad)).unwrap_err().to_string();
            assert!(!e.contains("sekrit"), "{e}");
        }
        let ok = headers_of(&args("Authorization: Bearer sekrit-1")).unwrap();
        assert_eq!(shown(&ok), ["authorization: [redacted]"]);
        // The caller's own key is sent as it is.
        let mine = headers_of(&args("Idempotency-Key: mine")).unwrap();
        assert_eq!(mine[0].1, "mine");
    }

    #[test]
    fn give_ups_are_tallied_with_the_earliest_return() {
        let started = unix_now_ms();
        let failure = Failure {
            verdict: Verdict::Retry {
                cause: Cause::RateLimited,
                server_wait: Some(ServerWait::Ms(86_400_000)),
            },
            last: Last::Status(429),
            at_unix_ms: started,
        };
        let gave_up_with = |reason, at_unix_ms| {
            BatchResult::<u16, Failure>::GaveUp(RetryError {
                error: Some(Failure {
                    at_unix_ms,
                    ..failure
                }),
                reason,
                retry_at_ms: None,
                report: Report {
                    attempts: 1,
                    ..Report::default()
                },
                gate_error: None,
            })
        };
        let results = vec![
            BatchResult::Succeeded(200),
            gave_up_with(GiveUpReason::WaitExceedsDeadline, started + 1_000),
            gave_up_with(GiveUpReason::WaitExceedsDeadline, started + 500),
            gave_up_with(GiveUpReason::AttemptsExhausted, started),
            BatchResult::NotStarted {
                reason: GiveUpReason::QueueStopped,
                stopped_by: Some(GiveUpReason::WaitExceedsDeadline),
            },
        ];
        let (by_reason, at) = gave_up(&results);
        assert_eq!(by_reason["wait_exceeds_deadline"], 2);
        assert_eq!(by_reason["attempts_exhausted"], 1);
        assert_eq!(by_reason.len(), 2);
        assert_eq!(at, Some(started + 86_400_500));

        let reports = vec![
            Some(Report {
                attempts: 2,
                ..Report::default()
            }),
            Some(Report::default()),
            Some(Report::default()),
            Some(Report::default()),
            None,
        ];
        let uris: Vec<Uri> = (0..5)
            .map(|i| format!("http://h/{i}").parse().unwrap())
            .collect();
        let reads = read_results(&results, &reports, &uris);
        let row = |i: usize| {
            let r = &reads[i];
            (r.result, r.attempts, r.ending, r.status, r.reason)
        };
        assert_eq!(row(0), ("success", 2, "response", Some(200), None));
        assert_eq!(
            row(1),
            (
                "gave_up",
                1,
                "give_up",
                Some(429),
                Some("wait_exceeds_deadline")
            )
        );
        assert_eq!(
            reads[2].message.as_deref(),
            Some(
                "recuo gave up after 1 attempt (wait_exceeds_deadline): HTTP 429; a retry is \
                 allowed in 86401 s"
            )
        );
        assert_eq!(reads[2].retry_at_unix_ms, Some(started + 86_400_500));
        // Attempts exhausted on a 429: the client adapters return the last response.
        assert_eq!(
            row(3),
            (
                "gave_up",
                1,
                "response",
                Some(429),
                Some("attempts_exhausted")
            )
        );
        assert_eq!(reads[3].message, None);
        assert_eq!(
            row(4),
            ("not_started", 0, "give_up", None, Some("queue_stopped"))
        );
        assert_eq!(
            reads[4].message.as_deref(),
            Some("recuo gave up after 0 attempts (queue_stopped): no attempt was made")
        );
    }
}
