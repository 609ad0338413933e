//! Issue 17: `recuo trial` over HTTPS against `recuo serve --tls` (trusting its CA with
//! `--cacert`), with an `Authorization` header that never appears in any output or record,
//! twenty URLs from a file, and POSTs with one idempotency key per read — the counts match
//! the server's `/stats` as they do over HTTP.

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use support::{assert_same_counts, n, recuo_within, Serve};

const SECRET: &str = "Bearer sekrit-tok-4242";
const BODY: &str = r#"{"amount":10,"currency":"EUR"}"#;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("recuo-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

#[test]
fn posts_over_https_with_a_secret_header_and_twenty_urls_match_the_servers_stats() {
    let server = Serve::start(&[
        "--tls",
        "--allowance",
        "480/min",
        "--burst",
        "2",
        "--fail-rate",
        "0.2",
        "--latency",
        "10ms",
        "--seed",
        "3",
    ]);
    let ca = server.ca.clone().expect("the CA file is printed");
    assert!(std::path::Path::new(&ca).is_file(), "{ca}");
    let dir = temp_dir("https");
    // Twenty reads: nineteen paths read against --url, one whole URL; blank lines and
    // comments are skipped.
    let mut list = String::from("# twenty reads\n\n");
    for i in 0..19 {
        list.push_str(&format!("/payments/{i}\n"));
    }
    list.push_str(&format!("{}/payments/last\n", server.url));
    let urls = dir.join("urls.txt");
    std::fs::write(&urls, list).expect("the URL list");
    let records = dir.join("records.jsonl");
    let r = recuo_within(
        &[
            "trial",
            "--url",
            &server.url,
            "--urls",
            urls.to_str().expect("UTF-8"),
            "--cacert",
            &ca,
            "--header",
            &format!("Authorization: {SECRET}"),
            "--header",
            "Content-Type: application/json",
            "--data",
            BODY,
            "--rate",
            "600/min",
            "--attempts",
            "10",
            "--records",
            records.to_str().expect("UTF-8"),
            "--json",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let trial = r.json();
    let stats = server.stats();
    assert_same_counts(&trial, &stats);
    assert_eq!(n(&trial, "count"), 20);
    assert_eq!(n(&trial, "initial"), 20);
    assert_eq!(n(&trial, "successes"), 20, "{trial}");
    assert!(n(&trial, "retries") > 0, "20% of 503s: {trial}");
    assert_eq!(trial["method"], "POST", "--data sends a POST");
    assert_eq!(
        trial["headers"],
        serde_json::json!([
            "authorization: [redacted]",
            "content-type: application/json"
        ])
    );
    let requests = n(&stats, "requests");
    // Every request was a POST with the body and the header, to twenty paths.
    assert_eq!(stats["methods"], serde_json::json!({ "POST": requests }));
    assert_eq!(n(&stats, "paths"), 20);
    assert_eq!(n(&stats, "with_authorization"), requests);
    assert_eq!(n(&stats, "body_bytes"), requests * BODY.len() as u64);
    // One key per read, the same on every attempt of it: the server's count of requests
    // per key is the records' count of attempts per read.
    assert_eq!(n(&stats, "idempotency_keys"), 20);
    assert_eq!(n(&stats, "idempotency_key_conflicts"), 0);
    let per_key = stats["requests_per_idempotency_key"]
        .as_object()
        .expect("requests per key");
    let mut server_counts: Vec<u64> = per_key.values().filter_map(Value::as_u64).collect();
    assert_eq!(server_counts.iter().sum::<u64>(), requests);
    assert!(
        server_counts.iter().any(|&c| c > 1),
        "a retried read: {per_key:?}"
    );
    let text = std::fs::read_to_string(&records).expect("the records");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect();
    let mut record_counts: Vec<u64> = lines
        .iter()
        .filter(|l| l["type"] == "result")
        .filter_map(|l| l["attempts"].as_u64())
        .collect();
    server_counts.sort_unstable();
    record_counts.sort_unstable();
    assert_eq!(record_counts, server_counts);
    let attempts: Vec<&Value> = lines.iter().filter(|l| l["type"] == "attempt").collect();
    assert_eq!(attempts.len() as u64, requests);
    let mut by_status = BTreeMap::new();
    for a in &attempts {
        assert_eq!(a["method"], "POST");
        assert!(
            a["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("https://127.0.0.1:")),
            "{a}"
        );
        *by_status.entry(a["status"].to_string()).or_insert(0u64) += 1;
    }
    assert_eq!(by_status.get("200").copied(), Some(n(&stats, "ok")));
    // The secret is nowhere: stdout, stderr, records.
    for (what, text) in [
        ("stdout", &r.stdout),
        ("stderr", &r.stderr),
        ("records", &text),
    ] {
        assert!(!text.contains("sekrit"), "the secret in the {what}: {text}");
    }
    // The table says the same, without the secret either.
    let table = recuo_within(
        &[
            "trial",
            "--url",
            &server.url,
            "--count",
            "2",
            "--cacert",
            &ca,
            "-H",
            &format!("Authorization: {SECRET}"),
            "--rate",
            "600/min",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(table.code, 0, "{table:?}");
    assert!(
        table
            .stdout
            .contains("(GET with authorization: [redacted])"),
        "{}",
        table.stdout
    );
    assert!(!table.stdout.contains("sekrit") && !table.stderr.contains("sekrit"));
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

#[test]
fn an_untrusted_certificate_is_a_tls_failure_given_up_at_once() {
    let server = Serve::start(&["--tls", "--fail-rate", "0", "--latency", "1ms"]);
    // The system's roots do not know the server's CA: `tls`, permanent, one attempt each.
    let r = recuo_within(
        &[
            "trial",
            "--url",
            &server.url,
            "--count",
            "3",
            "--rate",
            "6000/min",
            "--json",
        ],
        Duration::from_secs(30),
    );
    let j = r.json();
    assert_eq!((n(&j, "initial"), n(&j, "retries")), (3, 0), "{j}");
    assert_eq!(j["responses"], serde_json::json!({"tls": 3}));
    assert_eq!(j["gave_up"], serde_json::json!({"permanent": 3}));
    assert_eq!(n(&server.stats(), "requests"), 0, "no request got through");
    // --insecure takes the certificate, and says on stderr that it is dangerous.
    let r = recuo_within(
        &[
            "trial",
            "--url",
            &server.url,
            "--count",
            "2",
            "--rate",
            "6000/min",
            "--insecure",
            "--json",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(n(&r.json(), "successes"), 2, "{r:?}");
    assert!(r.stderr.contains("not verified"), "{}", r.stderr);
    // A CA file that is not one is a usage error.
    let r = recuo_within(
        &[
            "trial",
            "--url",
            &server.url,
            "--cacert",
            "/nonexistent/ca.pem",
        ],
        Duration::from_secs(10),
    );
    assert_eq!(r.code, 2, "{r:?}");
    let ca = server.ca.clone().expect("the CA file");
    assert_eq!(server.terminate(), Some(0));
    assert!(
        !std::path::Path::new(&ca).exists(),
        "the CA file made for the run is removed at the stop"
    );
}
