//! tests/vectors/http.json through `recuo trial`: a `recuo serve --script` plays every
//! client-style request case on its own path, `recuo trial` reads it once with the case's
//! method, key and policy, and the test checks, from the server's log, the attempts made
//! and the key each carried, and from trial's JSON and records how the read ended.

mod support;

use std::time::Duration;

use serde_json::Value;
use support::{http_get, recuo_within, Serve};

const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/http.json");

/// Cases `recuo trial` cannot express, by id, with why.
const SKIPPED: &[(&str, &str)] = &[(
    "a-body-that-cannot-be-replayed-gets-one-attempt",
    "trial holds every body in memory: its bodies can always be sent again",
)];

fn doc() -> Value {
    serde_json::from_str(&std::fs::read_to_string(VECTORS).expect("http.json")).expect("JSON")
}

/// A UUID v4 as text: 8-4-4-4-12 lowercase hex digits, version 4, variant 10xx.
fn is_uuid_v4(k: &str) -> bool {
    let parts: Vec<&str> = k.split('-').collect();
    parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts.iter().all(|p| {
            p.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
        && parts[2].starts_with('4')
        && parts[3].starts_with(['8', '9', 'a', 'b'])
}

/// Plays one case through `recuo trial`; panics naming the case when it answers otherwise.
fn play(server: &Serve, c: &Value, dir: &std::path::Path) {
    let id = c["id"].as_str().unwrap();
    let e = &c["expect"];
    let p = &c["policy"];
    let path = format!("/cli-trial/{id}");
    let url = format!("{}{path}", server.url);
    let records = dir.join(format!("{id}.jsonl"));
    let ms = |k: &str| p[k].as_u64().map(|v| format!("{v}ms"));
    let mut args: Vec<String> = [
        "trial",
        "--url",
        &url,
        "--count",
        "1",
        "--method",
        c["method"].as_str().unwrap(),
        "--attempts",
        &p["max_attempts"].to_string(),
        "--base",
        &ms("base_ms").unwrap(),
        "--cap",
        &ms("cap_ms").unwrap(),
        "--deadline",
        &ms("deadline_ms").unwrap_or_else(|| "30s".to_string()),
        // Starts are not what these cases are about: a rate that never holds a retry back.
        "--rate",
        "1000/s",
        "--timeout",
        "5s",
        "--records",
        records.to_str().unwrap(),
        "--json",
    ]
    .map(String::from)
    .to_vec();
    if let Some(k) = c["callers_key"].as_str() {
        args.extend(["--header".to_string(), format!("Idempotency-Key: {k}")]);
    }
    match c["send_keys"].as_bool() {
        None => {}
        Some(true) => args.extend(["--keys".to_string(), "always".to_string()]),
        Some(false) => args.extend(["--keys".to_string(), "never".to_string()]),
    }
    if p["server_honours_keys"] == true {
        args.push("--keys-honoured".to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = recuo_within(&args, Duration::from_secs(20));
    assert_eq!(r.code, 0, "{id}: {r:?}");
    let trial = r.json();

    // What the server saw: the attempts and the key each carried.
    let (log, status) = http_get(&server.url, &format!("/__script/log{path}"));
    assert_eq!(status, 200, "{id}");
    let log: Vec<Value> = serde_json::from_str(&log).expect("the log is JSON");
    assert_eq!(
        Some(log.len() as u64),
        e["attempts"].as_u64(),
        "{id}: {log:?}"
    );
    let method = c["method"].as_str().unwrap();
    assert!(log.iter().all(|l| l["method"] == method), "{id}: {log:?}");
    let keys: Vec<&Value> = log.iter().map(|l| &l["key"]).collect();
    match e["key"].as_str().unwrap() {
        "none" => assert!(keys.iter().all(|k| k.is_null()), "{id}: {keys:?}"),
        "caller" => assert!(
            keys.iter().all(|k| **k == c["callers_key"]),
            "{id}: {keys:?}"
        ),
        "recuo" => {
            let first = keys[0].as_str().unwrap_or_else(|| panic!("{id}: {keys:?}"));
            assert!(is_uuid_v4(first), "{id}: {first}");
            assert!(keys.iter().all(|k| *k == keys[0]), "{id}: {keys:?}");
        }
        other => panic!("{id}: key {other}"),
    }

    // What trial said of it.
    assert_eq!(trial["idempotency_key"], e["key"], "{id}");
    assert_eq!(trial["idempotent"], e["idempotent"], "{id}");
    let read = &trial["reads"][0];
    assert_eq!(read["attempts"], e["attempts"], "{id}: {read}");
    assert_eq!(read["ending"], e["ending"], "{id}: {read}");
    assert_eq!(read["reason"], e["reason"], "{id}: {read}");
    assert_eq!(read["message"], e["message"], "{id}: {read}");
    assert_eq!(
        read["retry_at_unix_ms"].is_number(),
        e["retry_at"] == true,
        "{id}: {read}"
    );
    // The response returned or carried, or the transport error raised again.
    assert_eq!(read["status"], e["status"], "{id}: {read}");
    assert_eq!(read["error"], e["error"], "{id}: {read}");
    let succeeded = e["reason"].is_null();
    assert_eq!(
        read["result"],
        if succeeded { "success" } else { "gave_up" }
    );
    assert_eq!(trial["successes"], u64::from(succeeded), "{id}");
    assert_eq!(trial["failures"], u64::from(!succeeded), "{id}");

    // Each attempt's decision, from the records.
    let text = std::fs::read_to_string(&records).expect("the records");
    let decisions: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a record is JSON"))
        .filter(|r| r["type"] == "attempt")
        .map(|r| r["decision"].clone())
        .collect();
    assert_eq!(
        Value::Array(decisions),
        e["decisions"],
        "{id}: the records say {text}"
    );
}

#[test]
fn every_client_case_of_http_json_through_recuo_trial() {
    let server = Serve::start(&["--script", VECTORS]);
    let dir = std::env::temp_dir().join(format!("recuo-cli-vectors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder for the records");
    let d = doc();
    let mut played = Vec::new();
    for c in d["requests"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        if c["style"] != "client" {
            continue;
        }
        if SKIPPED.iter().any(|(s, _)| *s == id) {
            continue;
        }
        play(&server, c, &dir);
        played.push(id);
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Every client case is either played or skipped by name (a skip names a real case).
    let clients = d["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["style"] == "client")
        .count();
    assert_eq!(played.len() + SKIPPED.len(), clients, "played {played:?}");
    assert!(played.len() >= 10, "{played:?}");
}

#[test]
fn a_script_that_is_not_as_described_is_refused_at_start() {
    let dir = std::env::temp_dir().join(format!("recuo-cli-bad-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"requests": [{"id": "a", "script": [{"status": 99}]}]}"#,
    )
    .unwrap();
    let r = support::recuo(&["serve", "--script", bad.to_str().unwrap(), "--port", "0"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr,
        format!(
            "recuo: --script {}: requests[0] (a): script[0]: \"status\" is a number from 200 to \
             599 (or the event is \"reset\": true)\n",
            bad.display()
        )
    );
    let big = dir.join("big.json");
    std::fs::write(&big, vec![b' '; (4 << 20) + 1]).unwrap();
    let r = support::recuo(&["serve", "--script", big.to_str().unwrap(), "--port", "0"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr,
        format!("recuo: --script {}: larger than 4 MiB\n", big.display())
    );
    let _ = std::fs::remove_dir_all(&dir);
}
