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
            &mut JitterRng::seeded(u64_of(&case["seed"])),
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
