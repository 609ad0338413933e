//! The shared vectors in `tests/vectors/`, as the Rust surface answers them.

use std::path::PathBuf;

use recuo::{parse_retry_after, retry_delay_ms, window_ms, Backoff, ComRetry, JitterRng};
use serde_json::Value;

fn vectors(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn u64_of(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

#[test]
fn retry_after_cases() {
    let doc = vectors("retry_after.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    for case in cases {
        let value = case["value"].as_str().unwrap();
        let parsed = parse_retry_after(value, case["now_ms"].as_i64().unwrap());
        let name = case["name"].as_str().unwrap();
        assert_eq!(
            parsed.kind(),
            case["kind"].as_str().unwrap(),
            "{name}: {value:?}"
        );
        assert_eq!(
            parsed.wait_ms(),
            case["wait_ms"].as_u64(),
            "{name}: {value:?}"
        );
    }
}

#[test]
fn backoff_windows() {
    let doc = vectors("backoff.json");
    for case in doc["windows"].as_array().unwrap() {
        let (base, cap) = (u64_of(&case["base_ms"]), u64_of(&case["cap_ms"]));
        let n = u32::try_from(u64_of(&case["n"])).unwrap();
        assert_eq!(
            window_ms(base, cap, n),
            u64_of(&case["window_ms"]),
            "{case}"
        );
        let b = Backoff::new()
            .with_base_ms(base)
            .with_cap_ms(cap)
            .validate()
            .unwrap();
        assert_eq!(b.window_ms(n), u64_of(&case["window_ms"]), "{case}");
    }
    for case in doc["errors"].as_array().unwrap() {
        let b = Backoff::new()
            .with_base_ms(u64_of(&case["base_ms"]))
            .with_cap_ms(u64_of(&case["cap_ms"]));
        assert_eq!(
            b.validate().unwrap_err().name(),
            case["error"].as_str().unwrap()
        );
    }
}

#[test]
fn seeded_retry_delays() {
    let doc = vectors("seeded.json");
    for case in doc["retry_delay_ms"].as_array().unwrap() {
        let header = case["retry_after"].as_str();
        let attempt = u32::try_from(u64_of(&case["attempt"])).unwrap();
        let mut rng = JitterRng::seeded(u64_of(&case["seed"]));
        let d = retry_delay_ms(header, attempt, case["now_ms"].as_i64().unwrap(), &mut rng);
        if case["unbounded"].as_bool() == Some(true) {
            assert_eq!(d, f64::INFINITY, "{case}");
        } else {
            assert_eq!(d, u64_of(&case["delay_ms"]) as f64, "{case}");
            let parsed = parse_retry_after(header.unwrap_or(""), 0);
            if parsed.wait_ms().is_none() {
                assert!(d <= window_ms(1000, 8000, attempt) as f64, "{case}");
            }
        }
    }
}

#[test]
fn seeded_com_retry_loops() {
    let doc = vectors("seeded.json");
    for case in doc["com_retry"].as_array().unwrap() {
        let tentativas = u32::try_from(u64_of(&case["tentativas"])).unwrap();
        let policy = ComRetry::new(
            tentativas,
            u64_of(&case["base_ms"]),
            u64_of(&case["max_ms"]),
        )
        .unwrap();
        let failures = u64_of(&case["failures"]);
        let (mut calls, mut sleeps) = (0u64, Vec::new());
        let result: Result<u64, ()> = policy.run_with(
            Some(u64_of(&case["seed"])),
            || {
                calls += 1;
                if calls <= failures {
                    Err(())
                } else {
                    Ok(calls)
                }
            },
            |_| Ok(true),
            |d| {
                sleeps.push(d.as_millis() as u64);
                Ok(())
            },
        );
        assert_eq!(calls, u64_of(&case["calls"]), "{case}");
        let outcome = if result.is_ok() { "ok" } else { "error" };
        assert_eq!(outcome, case["outcome"], "{case}");
        let expected: Vec<u64> = case["sleeps_ms"]
            .as_array()
            .unwrap()
            .iter()
            .map(u64_of)
            .collect();
        assert_eq!(sleeps, expected, "{case}");
        let max_ms = u64_of(&case["max_ms"]);
        assert!(sleeps.iter().all(|&s| s > 0 && s <= max_ms), "{case}");
    }
}

fn outcome_of(v: &Value) -> recuo::Outcome {
    match v {
        Value::String(s) => recuo::Outcome::Transport(recuo::Transport::from_name(s).unwrap()),
        n => recuo::Outcome::Status(u16::try_from(u64_of(n)).unwrap()),
    }
}

fn headers_of(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            let p = pair.as_array().unwrap();
            (
                p[0].as_str().unwrap().to_string(),
                p[1].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn classification_cases() {
    let doc = vectors("classify.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 40);
    for case in cases {
        let request = recuo::Request {
            method: case["method"].as_str().unwrap(),
            has_idempotency_key: case["idempotency_key"].as_bool().unwrap(),
        };
        let verdict = recuo::Rules::DEFAULT.classify(
            outcome_of(&case["outcome"]),
            request,
            &headers_of(&case["headers"]),
            case["now_ms"].as_i64().unwrap(),
            false,
        );
        let name = case["name"].as_str().unwrap();
        assert_eq!(verdict.name(), case["verdict"], "{name}");
        assert_eq!(verdict.cause().name(), case["reason"], "{name}");
        let wait = verdict.server_wait();
        assert_eq!(
            wait.and_then(|w| w.ms()),
            case["wait_ms"].as_u64(),
            "{name}"
        );
        let unbounded = wait == Some(recuo::ServerWait::Unbounded);
        assert_eq!(
            unbounded,
            case["wait_unbounded"].as_bool().unwrap(),
            "{name}"
        );
    }
}

/// Builds the policy of a scenario.
fn policy_of(p: &Value) -> recuo::Policy {
    use std::time::Duration;
    let ms = |v: &Value| v.as_u64().map(Duration::from_millis);
    recuo::Policy::builder()
        .max_attempts(u32::try_from(u64_of(&p["max_attempts"])).unwrap())
        .base(ms(&p["base_ms"]).unwrap())
        .cap(ms(&p["cap_ms"]).unwrap())
        .jitter(recuo::Jitter::from_name(p["jitter"].as_str().unwrap()).unwrap())
        .deadline(ms(&p["deadline_ms"]))
        .spread(ms(&p["spread_ms"]))
        .use_date_header(p["use_date_header"].as_bool().unwrap())
        .build()
        .unwrap()
}

#[test]
fn state_machine_scenarios() {
    let doc = vectors("scenarios.json");
    for sc in doc["scenarios"].as_array().unwrap() {
        let name = sc["name"].as_str().unwrap();
        let policy = policy_of(&sc["policy"]);
        let wall0 = sc["now_ms"].as_i64().unwrap();
        let mut attempts = recuo::Attempts::new(&policy);
        let mut rng = JitterRng::seeded(0);
        for step in sc["steps"].as_array().unwrap() {
            attempts.begin(u64_of(&step["begin_ms"])).unwrap();
            let end = u64_of(&step["end_ms"]);
            let request = recuo::Request {
                method: step["method"].as_str().unwrap(),
                has_idempotency_key: step["idempotency_key"].as_bool().unwrap(),
            };
            let verdict = policy.classify(
                outcome_of(&step["outcome"]),
                request,
                &headers_of(&step["headers"]),
                wall0 + end as i64,
            );
            if step["cancel"].as_bool().unwrap() {
                attempts.cancel();
            }
            let decision = attempts.decide(verdict, end, &mut rng);
            let e = &step["expect"];
            let expected = match e["decision"].as_str().unwrap() {
                "done" => recuo::Decision::Done,
                "retry" => recuo::Decision::Retry {
                    delay_ms: u64_of(&e["delay_ms"]),
                    next_attempt: u32::try_from(u64_of(&e["next_attempt"])).unwrap(),
                },
                _ => recuo::Decision::GiveUp {
                    reason: reason_of(e["reason"].as_str().unwrap()),
                    retry_at_ms: e["retry_at_ms"].as_u64(),
                },
            };
            assert_eq!(decision, expected, "{name}: {step}");
        }
        let r = attempts.report();
        let want = &sc["report"];
        assert_eq!(
            r.attempts,
            u32::try_from(u64_of(&want["attempts"])).unwrap(),
            "{name}"
        );
        assert_eq!(
            r.reason.map(|x| x.name()),
            want["reason"].as_str(),
            "{name}"
        );
        assert_eq!(r.elapsed_ms, u64_of(&want["elapsed_ms"]), "{name}");
        let delays: Vec<u64> = want["delays_ms"]
            .as_array()
            .unwrap()
            .iter()
            .map(u64_of)
            .collect();
        assert_eq!(r.delays_ms, delays, "{name}");
    }
}

fn reason_of(name: &str) -> recuo::GiveUpReason {
    use recuo::GiveUpReason::*;
    [
        Permanent,
        AttemptsExhausted,
        WaitExceedsDeadline,
        BudgetExhausted,
        Cancelled,
    ]
    .into_iter()
    .find(|r| r.name() == name)
    .unwrap()
}

#[test]
fn redaction_cases() {
    let doc = vectors("redaction.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 40);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let url = case["url"].as_str().unwrap();
        let headers = headers_of(&case["headers"]);
        let redacted = recuo::redact_url(url);
        let redacted_headers = recuo::redact_headers(&headers);
        let record = recuo::Record::Attempt(recuo::AttemptRecord::new(
            0,
            1,
            "GET",
            url,
            recuo::Outcome::Status(503),
            &headers,
            Some(10),
            recuo::AttemptDecision::Retry,
            recuo::AttemptReason::Cause(recuo::Cause::Unavailable),
        ))
        .to_json_line();
        let mut shown = redacted.url.clone();
        for (k, v) in &redacted_headers {
            shown.push_str(&format!("\n{k}: {v}"));
        }
        for secret in case["secrets"].as_array().unwrap() {
            let secret = secret.as_str().unwrap();
            assert!(
                !shown.contains(secret),
                "{name}: {secret:?} survives in {shown}"
            );
            assert!(
                !record.contains(secret),
                "{name}: {secret:?} survives in {record}"
            );
        }
        for keep in case["keep"].as_array().unwrap() {
            let keep = keep.as_str().unwrap();
            assert!(shown.contains(keep), "{name}: {keep:?} lost from {shown}");
        }
        assert!(record.contains("\"status\":503"), "{name}");
        if let Some(exact) = case["redacted_url"].as_str() {
            assert_eq!(redacted.url, exact, "{name}");
        }
        assert_eq!(
            redacted.malformed,
            case["malformed"].as_bool().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn origin_cases() {
    let doc = vectors("origin.json");
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let headers = headers_of(&case["headers"]);
        let w = recuo::who_answered(&headers, case["expected_content_type"].as_str());
        assert_eq!(w.origin.name(), case["origin"], "{name}: {:?}", w.evidence);
        assert_eq!(
            w.confidence.name(),
            case["confidence"],
            "{name}: {:?}",
            w.evidence
        );
        for part in case["evidence_contains"].as_array().unwrap() {
            let part = part.as_str().unwrap();
            assert!(
                w.evidence.iter().any(|e| e.contains(part)),
                "{name}: {part:?} not in {:?}",
                w.evidence
            );
        }
        let excluded = case.get("evidence_excludes").and_then(|v| v.as_array());
        for part in excluded.into_iter().flatten() {
            let part = part.as_str().unwrap();
            assert!(
                !w.evidence.iter().any(|e| e.contains(part)),
                "{name}: {part:?} in {:?}",
                w.evidence
            );
        }
    }
}

/// tests/vectors/gcra.json through the regulator: the same answers as the Lua scripts on
/// Redis (redis-store/tests/gcra.rs). Each case runs twice: its holders as clones of one
/// regulator of this process, and as separate openings of one shared file (what two
/// processes do).
#[test]
fn gcra_vectors() {
    let doc = vectors("gcra.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    let dir = std::env::temp_dir().join(format!("recuo-gcra-vectors-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (mut reservations, mut events) = (0, 0);
    for (n, case) in cases.iter().enumerate() {
        let name = case["name"].as_str().unwrap();
        let interval_us = u64_of(&case["interval_us"]);
        let rate = recuo::Rate::per_second(1e6 / interval_us as f64).unwrap();
        assert_eq!(rate.interval_ns(), interval_us * 1000, "{name}");
        let burst = u32::try_from(u64_of(&case["burst"])).unwrap();
        let adaptive = case["adaptive"].as_bool().unwrap();
        let local = recuo::Regulator::new(rate, burst)
            .unwrap()
            .with_adaptive(adaptive);
        let file = dir.join(format!("case-{n}"));
        let open = |in_file: bool| {
            if in_file {
                recuo::Regulator::shared_with(&file, rate, burst, adaptive).unwrap()
            } else {
                local.clone()
            }
        };
        for (how, in_file) in [("in this process", false), ("in a shared file", true)] {
            let mut holders = std::collections::HashMap::new();
            for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
                let holder = step["holder"].as_str().unwrap();
                let r = holders.entry(holder).or_insert_with(|| open(in_file));
                if let Some(event) = step.get("event") {
                    match event.as_str().unwrap() {
                        "throttled" => r.on_throttled(),
                        "success" => r.on_success(),
                        other => panic!("{name} #{i}: event {other:?}"),
                    }
                    assert_eq!(
                        r.rate().interval_ns(),
                        u64_of(&step["interval_ns"]),
                        "{name} #{i} {how}"
                    );
                    events += 1;
                    continue;
                }
                assert_eq!(
                    r.rate().interval_ns(),
                    u64_of(&step["interval_us"]) * 1000,
                    "{name} #{i} {how}"
                );
                let cost = u32::try_from(u64_of(&step["cost"])).unwrap();
                let got = r.reserve_at(
                    u64_of(&step["now_us"]) * 1000,
                    cost,
                    u64_of(&step["max_wait_us"]) * 1000,
                );
                let wait_ns = u64_of(&step["wait_us"]) * 1000;
                match (step["reserved"].as_bool().unwrap(), got) {
                    (true, Ok(wait)) => assert_eq!(wait, wait_ns, "{name} #{i} {how}"),
                    (false, Err(Ok(needed))) => assert_eq!(needed, wait_ns, "{name} #{i} {how}"),
                    (want, got) => {
                        panic!("{name} #{i} {how}: expected reserved={want}, got {got:?}")
                    }
                }
                reservations += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!((reservations, events), (2 * 300, 2 * 266));
}

/// tests/vectors/curl.json: the libcurl table, as `recuo_curl.h` and PHP's `buscarComRetry`
/// read it through the core.
#[test]
fn curl_vectors() {
    let doc = vectors("curl.json");
    let codes = doc["codes"].as_array().unwrap();
    assert!(codes.len() >= 60);
    for v in codes {
        let code = u32::try_from(v["code"].as_u64().unwrap()).unwrap();
        let sent = v["sent"].as_bool().unwrap();
        let got = recuo::curl_transport(code, sent).name();
        assert_eq!(got, v["kind"].as_str().unwrap(), "{v}");
    }
}
