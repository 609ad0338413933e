//! `recuo plan`, `delay` and `classify` against guide B and the shared vectors.

mod support;

use serde_json::Value;
use support::recuo;

const GUIDE_B: [&str; 9] = [
    "plan",
    "--requests",
    "600",
    "--allowance",
    "120/min",
    "--target",
    "90/min",
    "--latency",
    "2s",
];

#[test]
fn plan_reproduces_guide_b_in_words() {
    let r = recuo(&GUIDE_B);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("start interval  667 ms"), "{}", r.stdout);
    assert!(r.stdout.contains("least duration  400 s"), "{}", r.stdout);
    assert!(
        r.stdout.contains("in flight       3 on average"),
        "{}",
        r.stdout
    );
}

#[test]
fn plan_reproduces_guide_b_in_json() {
    let mut args = GUIDE_B.to_vec();
    args.push("--json");
    let j = recuo(&args).json();
    assert_eq!(j["interval_ms"], 667);
    assert_eq!(j["duration_s"], 400.0);
    assert_eq!(j["in_flight"], 3.0);
    assert_eq!(j["warnings"], Value::Array(vec![]));
    let mut args = GUIDE_B.to_vec();
    args.extend(["--retry-fraction", "0.2", "--json"]);
    let j = recuo(&args).json();
    assert_eq!(
        (j["duration_s"].as_f64(), j["retries"].as_f64()),
        (Some(500.0), Some(150.0))
    );
}

#[test]
fn plan_refuses_a_target_above_the_allowance() {
    let mut args = GUIDE_B.to_vec();
    args[6] = "150/min";
    let r = recuo(&args);
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr.lines().count(), 1, "{:?}", r.stderr);
    assert!(r.stderr.contains("above the allowance"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
}

fn vectors(name: &str) -> Vec<Value> {
    let path = format!("{}/../tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let v: Value = serde_json::from_str(&text).expect("vector JSON");
    v["cases"].as_array().expect("cases").clone()
}

#[test]
fn delay_answers_the_retry_after_vectors() {
    let cases = vectors("retry_after.json");
    let mut checked = 0;
    for c in &cases {
        let value = c["value"].as_str().expect("value");
        if value.contains('\0') {
            continue; // a NUL cannot travel in an argument
        }
        let now = c["now_ms"].as_i64().expect("now_ms").to_string();
        let flag = format!("--retry-after={value}");
        let r = recuo(&[
            "delay",
            &flag,
            "--attempt",
            "3",
            "--now-ms",
            &now,
            "--seed",
            "1",
            "--json",
        ]);
        assert_eq!(r.code, 0, "{c}: {r:?}");
        let j = r.json();
        assert_eq!(j["kind"], c["kind"], "{c}");
        assert_eq!(j["wait_ms"], c["wait_ms"], "{c}");
        match c["kind"].as_str() {
            Some("seconds" | "date") => {
                assert_eq!(j["delay_ms"].as_f64(), c["wait_ms"].as_f64(), "{c}")
            }
            Some("unbounded") => assert!(j["delay_ms"].is_null(), "{c}"),
            _ => {
                let d = j["delay_ms"].as_f64().expect("a finite delay");
                assert!((0.0..=8000.0).contains(&d), "{c}: {d}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 80, "only {checked} vectors checked");
}

#[test]
fn delay_reads_the_date_header_as_now_and_prints_inf() {
    let r = recuo(&[
        "delay",
        "--retry-after",
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "--attempt",
        "0",
        "--date",
        "Sun, 06 Nov 1994 08:49:07 GMT",
        "--json",
    ]);
    assert_eq!(
        r.json(),
        serde_json::json!({"kind": "date", "wait_ms": 30000, "delay_ms": 30000.0})
    );
    let r = recuo(&[
        "delay",
        "--retry-after",
        "99999999999999999",
        "--attempt",
        "0",
    ]);
    assert!(r.stdout.starts_with("inf "), "{}", r.stdout);
    let a = recuo(&["delay", "--attempt", "2", "--seed", "9", "--json"]).json();
    let b = recuo(&["delay", "--attempt", "2", "--seed", "9", "--json"]).json();
    assert_eq!(a, b, "a seeded draw repeats");
    assert_eq!(a["kind"], "invalid");
    assert!(a["delay_ms"]
        .as_f64()
        .is_some_and(|d| (0.0..=4000.0).contains(&d)));
}

#[test]
fn classify_answers_the_classification_vectors() {
    let cases = vectors("classify.json");
    for c in &cases {
        let outcome = match &c["outcome"] {
            Value::Number(n) => n.to_string(),
            Value::String(s) => s.clone(),
            other => panic!("outcome {other}"),
        };
        let now = c["now_ms"].as_i64().expect("now_ms").to_string();
        let method = c["method"].as_str().expect("method");
        let mut args = vec![
            "classify".to_string(),
            outcome,
            format!("--method={method}"),
            "--now-ms".to_string(),
            now,
            "--json".to_string(),
        ];
        if c["idempotency_key"] == true {
            args.push("--idempotency-key".to_string());
        }
        for h in c["headers"].as_array().expect("headers") {
            args.push(format!(
                "--header={}: {}",
                h[0].as_str().expect("name"),
                h[1].as_str().expect("value")
            ));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = recuo(&args);
        assert_eq!(r.code, 0, "{c}: {r:?}");
        let j = r.json();
        for key in ["verdict", "reason", "wait_ms", "wait_unbounded"] {
            assert_eq!(j[key], c[key], "{key} of {c}");
        }
    }
    assert!(cases.len() >= 90);
}

#[test]
fn classify_in_words() {
    let r = recuo(&["classify", "429", "--header", "Retry-After: 30"]);
    assert_eq!(
        r.stdout.trim(),
        "retry (rate_limited), the server asks to wait 30000 ms"
    );
    let r = recuo(&["classify", "500", "--method", "POST"]);
    assert_eq!(r.stdout.trim(), "give_up (not_idempotent)");
    let r = recuo(&[
        "classify",
        "timeout",
        "--method",
        "POST",
        "--idempotency-key",
    ]);
    assert_eq!(r.stdout.trim(), "retry (timeout)");
}
