//! `recuo serve` and `recuo trial` over real HTTP on 127.0.0.1: every request the client
//! sent, the server saw; starts stay within the regulator's limit; a spent quota stops the
//! trial at once. Fast rates keep the suite short.

mod support;

use std::time::Duration;

use serde_json::Value;
use support::{assert_same_counts, http_get, n, recuo_within, Serve};

#[test]
fn trial_counts_match_the_servers_stats_and_starts_stay_within_the_limit() {
    let server = Serve::start(&[
        "--allowance",
        "480/min",
        "--burst",
        "2",
        "--fail-rate",
        "0.2",
        "--latency",
        "20ms",
        "--seed",
        "3",
    ]);
    let url = format!("{}/items/{{i}}", server.url);
    let r = recuo_within(
        &[
            "trial",
            "--url",
            &url,
            "--count",
            "20",
            "--rate",
            "600/min",
            "--concurrency",
            "3",
            "--attempts",
            "10",
            "--deadline",
            "25s",
            // GETs carry no key by default: one per read lets the server see early retries.
            "--keys",
            "always",
            "--json",
        ],
        Duration::from_secs(40),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let trial = r.json();
    let stats = server.stats();
    assert_same_counts(&trial, &stats);
    assert_eq!(
        n(&stats, "early_retries"),
        0,
        "no retry before the server's wait"
    );
    assert_eq!(n(&trial, "initial"), 20);
    assert_eq!(n(&trial, "successes"), 20, "{trial}");
    assert_eq!(n(&trial, "failures"), 0);
    assert!(
        n(&trial, "throttled") > 0,
        "the server's 480/min refused some: {trial}"
    );
    assert!(n(&trial, "max_in_flight") <= 3);
    for key in [
        "min_spacing_ms",
        "mean_spacing_ms",
        "elapsed_s",
        "planned_s",
        "retries",
        "unavailable",
    ] {
        assert!(trial[key].is_number(), "{key} in {trial}");
    }
    assert_eq!(trial["planned_s"], 2.0, "20 reads at 600/min");
    // The regulator: 10 starts a second with a burst of 1. The server counts arrivals in
    // whole seconds of its own clock: at most 10 + 1 in any of them.
    let per_second: Vec<u64> = stats["starts_per_second"]
        .as_array()
        .expect("starts_per_second")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert!(per_second.iter().all(|&s| s <= 11), "{per_second:?}");
    assert_eq!(per_second.iter().sum::<u64>(), n(&stats, "requests"));
    // Over the whole trial, starts were spaced by at least the interval (100 ms) on average.
    let mean = trial["mean_spacing_ms"].as_f64().expect("mean spacing");
    assert!(mean >= 99.0, "mean spacing {mean} ms");
    assert_eq!(
        server.terminate(),
        Some(0),
        "SIGTERM stops the server cleanly"
    );
}

#[test]
fn a_spent_quota_stops_the_trial_instead_of_waiting() {
    for mode in ["seconds", "none"] {
        let server = Serve::start(&[
            "--quota",
            "5",
            "--allowance",
            "6000/min",
            "--burst",
            "100",
            "--fail-rate",
            "0",
            "--latency",
            "5ms",
            "--retry-after",
            mode,
        ]);
        let r = recuo_within(
            &[
                "trial",
                "--url",
                &server.url,
                "--count",
                "10",
                "--rate",
                "600/min",
                "--deadline",
                "20s",
                "--keys",
                "always",
                "--json",
            ],
            Duration::from_secs(30),
        );
        assert_eq!(r.code, 0, "{r:?}");
        let trial = r.json();
        let stats = server.stats();
        assert_same_counts(&trial, &stats);
        assert_eq!(n(&trial, "successes"), 5, "{mode}: {trial}");
        // The first refusal stops the queue: only reads already in flight are refused too
        // (the trial runs 3 at a time), the rest are never sent.
        let failures = n(&trial, "failures");
        assert!((1..=3).contains(&failures), "{mode}: {trial}");
        assert_eq!(failures + n(&trial, "not_started"), 5, "{mode}: {trial}");
        assert_eq!(
            n(&trial, "retries"),
            0,
            "no retry against a spent quota: {trial}"
        );
        assert_eq!(
            trial["gave_up"],
            serde_json::json!({"wait_exceeds_deadline": failures})
        );
        assert_eq!(n(&stats, "quota_refused"), failures);
        let elapsed = trial["elapsed_s"].as_f64().expect("elapsed");
        assert!(elapsed < 10.0, "{mode}: it did not wait ({elapsed} s)");
        // The server said: come back in a day.
        let retry_at = trial["retry_at_unix_ms"]
            .as_i64()
            .expect("retry_at_unix_ms");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_millis() as i64;
        assert!(retry_at > now + 86_000_000, "{mode}: {retry_at} vs {now}");
    }
}

#[test]
fn the_embedded_server_and_the_plot() {
    let dir = std::env::temp_dir().join(format!("recuo-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let svg = dir.join("trial.svg");
    let svg_arg = svg.to_string_lossy().to_string();
    let r = recuo_within(
        &[
            "trial",
            "--count",
            "12",
            "--rate",
            "600/min",
            "--allowance",
            "300/min",
            "--burst",
            "2",
            "--fail-rate",
            "0.2",
            "--latency",
            "50ms",
            "--retry-after",
            "date",
            "--seed",
            "5",
            "--attempts",
            "10",
            "--keys",
            "always",
            "--json",
            "--plot",
            &svg_arg,
        ],
        Duration::from_secs(40),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let trial = r.json();
    let server = trial["server"].clone();
    assert!(server.is_object(), "the embedded server's stats: {trial}");
    assert_same_counts(&trial, &server);
    assert_eq!(n(&trial, "successes"), 12, "{trial}");
    assert_eq!(server["config"]["retry_after"], "date");
    let text = std::fs::read_to_string(&svg).expect("the plot was written");
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert!(text.contains("allowance 300/min, burst 2"));
    let starts = n(&trial, "initial") + n(&trial, "retries");
    assert_eq!(
        text.matches("<title>t=").count() as u64,
        starts,
        "one mark per start"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_table_and_an_unreachable_url() {
    let server = Serve::start(&["--fail-rate", "0", "--latency", "1ms"]);
    let r = recuo_within(
        &[
            "trial",
            "--url",
            &server.url,
            "--count",
            "3",
            "--rate",
            "600/min",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(r.code, 0, "{r:?}");
    for row in [
        "initial requests",
        "retries",
        "successes",
        "final failures",
        "429s seen",
        "503s seen",
        "min spacing",
        "mean spacing",
        "max in flight",
        "total time",
    ] {
        assert!(r.stdout.contains(row), "{row} in {}", r.stdout);
    }
    drop(server);
    // Nothing listens on port 9 of 127.0.0.1: connect failures, retried, then given up.
    let r = recuo_within(
        &[
            "trial",
            "--url",
            "http://127.0.0.1:9/",
            "--count",
            "2",
            "--rate",
            "6000/min",
            "--attempts",
            "2",
            "--deadline",
            "5s",
            "--json",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let j = r.json();
    assert_eq!((n(&j, "successes"), n(&j, "failures")), (0, 2), "{j}");
    assert_eq!(j["responses"]["connect"], 4, "{j}");
}

/// Issue 6: the trial's records agree with the server's own `/stats`, and keep no secret.
#[test]
fn the_records_match_the_servers_stats_and_keep_no_secret() {
    let server = Serve::start(&[
        "--allowance",
        "480/min",
        "--burst",
        "2",
        "--fail-rate",
        "0.2",
        "--latency",
        "10ms",
        "--seed",
        "5",
    ]);
    let dir = std::env::temp_dir().join(format!("recuo-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let path = dir.join("records.jsonl");
    let url = format!(
        "{}/items/{{i}}?access_token=tok-abc-123&email=ana@example.com",
        server.url
    );
    let r = recuo_within(
        &[
            "trial",
            "--url",
            &url,
            "--count",
            "12",
            "--rate",
            "600/min",
            "--concurrency",
            "3",
            "--attempts",
            "10",
            "--api-key",
            "key-secret-789",
            "--records",
            path.to_str().expect("a UTF-8 path"),
            "--json",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let trial = r.json();
    let stats = server.stats();
    let text = std::fs::read_to_string(&path).expect("the records");
    std::fs::remove_dir_all(&dir).expect("cleaned up");
    for secret in ["tok-abc-123", "ana@example.com", "key-secret-789"] {
        assert!(!text.contains(secret), "{secret} in the records");
    }
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect();
    let attempts: Vec<&Value> = records.iter().filter(|r| r["type"] == "attempt").collect();
    let results: Vec<&Value> = records.iter().filter(|r| r["type"] == "result").collect();
    assert_eq!(
        attempts.len() as u64,
        n(&stats, "requests"),
        "one record per request the server saw"
    );
    assert_eq!(results.len(), 12, "one result per read");
    let with_status = |code: u64| attempts.iter().filter(|r| r["status"] == code).count() as u64;
    assert_eq!(with_status(200), n(&stats, "ok"));
    assert_eq!(with_status(429), n(&stats, "throttled"));
    assert_eq!(with_status(503), n(&stats, "unavailable"));
    assert_eq!(
        attempts.iter().filter(|r| r["decision"] == "retry").count() as u64,
        n(&trial, "retries"),
        "every retry decided is a retry made"
    );
    for a in &attempts {
        let url = a["url"].as_str().expect("a URL");
        assert!(
            url.starts_with(&server.url) && url.contains("/items/"),
            "{url}"
        );
        assert!(
            url.contains("access_token=[redacted]") && url.contains("[email]"),
            "{url}"
        );
        if a["decision"] == "retry" {
            assert!(
                a["delay_ms"].as_u64().is_some(),
                "a retry has its delay: {a}"
            );
        }
    }
    let succeeded = results.iter().filter(|r| r["result"] == "success").count() as u64;
    assert_eq!(succeeded, n(&trial, "successes"));
}

/// Issue 10: a read whose attempts time out near the deadline ends within the deadline, for
/// a reason of its own — never a bare `cancelled` nobody asked for.
#[test]
fn reads_timing_out_near_the_deadline_end_within_it_and_say_why() {
    let server = Serve::start(&["--latency", "10s", "--allowance", "6000/min"]);
    let url = format!("{}/items/{{i}}", server.url);
    let started = std::time::Instant::now();
    let r = recuo_within(
        &[
            "trial",
            "--url",
            &url,
            "--count",
            "1",
            "--rate",
            "600/min",
            "--timeout",
            "1s",
            "--deadline",
            "3s",
            "--attempts",
            "10",
            "--json",
        ],
        Duration::from_secs(20),
    );
    let took = started.elapsed();
    assert_eq!(r.code, 0, "{r:?}");
    let trial = r.json();
    assert_eq!(n(&trial, "failures"), 1, "{trial}");
    let reasons = trial["gave_up"].as_object().expect("gave_up by reason");
    assert!(!reasons.contains_key("cancelled"), "{trial}");
    assert_eq!(
        reasons.values().filter_map(Value::as_u64).sum::<u64>(),
        1,
        "{trial}"
    );
    assert!(
        trial["elapsed_s"].as_f64().expect("elapsed") <= 3.2,
        "no read starts or waits past the deadline: {trial}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// Issue 25: reads in flight when one read's wait passes the deadline and stops the queue
/// end `queue_stopped` — in their attempts' records too — never `cancelled`, which only the
/// caller's own stop may say (20 reads at 90/min, 3 in flight, answers after 3 s).
#[test]
fn reads_stopped_by_the_queue_are_never_recorded_cancelled() {
    let server = Serve::start(&["--latency", "3s", "--allowance", "6000/min"]);
    let url = format!("{}/items/{{i}}", server.url);
    let records = std::env::temp_dir().join(format!("recuo-trial-{}.jsonl", std::process::id()));
    let r = recuo_within(
        &[
            "trial",
            "--url",
            &url,
            "--count",
            "20",
            "--rate",
            "90/min",
            "--concurrency",
            "3",
            "--timeout",
            "1s",
            "--deadline",
            "5s",
            "--records",
            records.to_str().expect("a UTF-8 temporary path"),
            "--json",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let lines = std::fs::read_to_string(&records).expect("the records");
    let _ = std::fs::remove_file(&records);
    let trial = r.json();
    assert!(n(&trial, "failures") >= 1, "{trial}");
    assert!(!lines.contains("\"cancelled\""), "{lines}");
    assert!(lines.contains("\"queue_stopped\""), "{lines}");
    let reasons = trial["gave_up"].as_object().expect("gave_up by reason");
    assert!(!reasons.contains_key("cancelled"), "{trial}");
}

/// The deadline bounds the whole attempt: against a server that trickles a 503's body or its
/// head one byte every 100 ms, a trial with a 2 s deadline ends within it plus 1 s, every
/// request given up.
#[test]
fn a_trickling_server_cannot_hold_a_trial_past_its_deadline() {
    for trickle in ["body", "headers"] {
        let server = Serve::start(&["--trickle", trickle, "--trickle-every", "100ms"]);
        let started = std::time::Instant::now();
        let r = recuo_within(
            &[
                "trial",
                "--url",
                &server.url,
                "--count",
                "2",
                "--deadline",
                "2s",
                "--json",
            ],
            Duration::from_secs(20),
        );
        let took = started.elapsed();
        let trial = r.json();
        assert!(took < Duration::from_secs(3), "{trickle}: {took:?}");
        assert_eq!(n(&trial, "successes"), 0, "{trial}");
        assert_eq!(
            n(&trial, "failures") + n(&trial, "not_started"),
            2,
            "{trial}"
        );
        eprintln!("recuo trial against a trickled {trickle}: ended after {took:?}");
    }
}

/// The value of the series `name` (with its labels, as written) in a Prometheus text, 0 when
/// it is absent.
fn series(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .map_or(0.0, |v| v.parse().expect("a number"))
}

/// Issue 32: the trial's `--metrics` counts what the server's `/metrics` says it answered —
/// every attempt, the 200s, 429s and 503s — and one retry delay per retry made.
#[test]
fn the_trials_metrics_match_the_servers_metrics() {
    let server = Serve::start(&[
        "--allowance",
        "480/min",
        "--burst",
        "2",
        "--fail-rate",
        "0.2",
        "--latency",
        "10ms",
        "--seed",
        "5",
    ]);
    let path = std::env::temp_dir().join(format!("recuo-metrics-{}.prom", std::process::id()));
    let url = format!("{}/items/{{i}}", server.url);
    let r = recuo_within(
        &[
            "trial",
            "--url",
            &url,
            "--count",
            "12",
            "--rate",
            "600/min",
            "--concurrency",
            "3",
            "--attempts",
            "10",
            "--metrics",
            path.to_str().expect("a UTF-8 path"),
            "--json",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let trial = r.json();
    let ours = std::fs::read_to_string(&path).expect("the metrics");
    let _ = std::fs::remove_file(&path);
    let (theirs, status) = http_get(&server.url, "/metrics");
    assert_eq!(status, 200);
    let attempts = |outcome: &str| -> f64 {
        ours.lines()
            .filter(|l| {
                l.starts_with(&format!(
                    "recuo_attempts_total{{recuo_outcome=\"{outcome}\","
                ))
            })
            .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
            .sum()
    };
    for status in ["200", "429", "503"] {
        assert_eq!(
            attempts(status),
            series(
                &theirs,
                &format!("recuo_serve_responses_total{{status=\"{status}\"}}")
            ),
            "{status}s\n{ours}\n{theirs}"
        );
    }
    assert_eq!(
        attempts("200") + attempts("429") + attempts("503"),
        series(&theirs, "recuo_serve_requests_total")
    );
    assert!(attempts("429") + attempts("503") > 0.0, "{theirs}");
    let delays: f64 = ours
        .lines()
        .filter(|l| l.starts_with("recuo_retry_delay_seconds_count"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(delays, n(&trial, "retries") as f64, "{ours}");
    assert_eq!(
        series(&ours, "recuo_gate_wait_seconds_count"),
        series(&theirs, "recuo_serve_requests_total"),
        "every attempt passed the gate"
    );
    assert!(
        ours.contains("# TYPE recuo_retry_delay_seconds histogram"),
        "{ours}"
    );
}
