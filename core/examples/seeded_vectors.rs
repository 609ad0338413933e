//! Writes `tests/vectors/seeded.json`: seeded jitter draws that every surface must reproduce.
//!
//! These are regression fixtures for parity between Rust, C, Python and PHP (each surface
//! seeds the same generator); the ranges they must fall in are checked independently by
//! the vector tests. Regenerate only when the generator or the jitter rule changes on
//! purpose: `cargo run -q -p recuo --example seeded_vectors > tests/vectors/seeded.json`.

use serde_json::{json, Value};

use recuo::{retry_delay_ms, ComRetry, JitterRng};

fn main() {
    let now_ms = 784_111_777_000i64;
    let mut delays = Vec::new();
    let headers: [Option<&str>; 6] = [
        None,
        Some(""),
        Some("soon"),
        Some("12"),
        Some("Sun, 06 Nov 1994 08:49:47 GMT"),
        Some("99999999999999"),
    ];
    for (i, header) in headers.iter().enumerate() {
        for attempt in [0u32, 1, 2, 3, 4, 10, u32::MAX] {
            let seed = 1000 + i as u64 * 10 + u64::from(attempt % 10);
            let d = retry_delay_ms(*header, attempt, now_ms, &mut JitterRng::seeded(seed));
            let mut case =
                json!({"retry_after": header, "attempt": attempt, "now_ms": now_ms, "seed": seed});
            if d.is_infinite() {
                case["unbounded"] = Value::Bool(true);
            } else {
                case["delay_ms"] = json!(d as u64);
            }
            delays.push(case);
        }
    }
    let mut loops = Vec::new();
    for (seed, tentativas, base_ms, max_ms, failures) in [
        (1u64, 5u32, 200u64, 5000u64, 2u32),
        (2, 5, 200, 5000, 9),
        (3, 3, 10, 20, 1),
        (4, 1, 200, 5000, 3),
        (5, 6, 1000, 8000, 5),
        (6, 4, 0, 0, 9),
        (7, 8, 50, 300, 7),
    ] {
        let mut calls = 0u32;
        let mut sleeps = Vec::new();
        let result: Result<u32, ()> = ComRetry::new(tentativas, base_ms, max_ms)
            .unwrap()
            .run_with(
                Some(seed),
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
        loops.push(json!({
            "seed": seed, "tentativas": tentativas, "base_ms": base_ms, "max_ms": max_ms,
            "failures": failures, "calls": calls,
            "outcome": if result.is_ok() { "ok" } else { "error" }, "sleeps_ms": sleeps,
        }));
    }
    let doc = json!({
        "description": "Seeded jitter (SPEC §2, §3): with the generator seeded by `seed`, guide B's retry_delay_ms and guide A's com_retry (a task that fails `failures` times, then returns) must give exactly these numbers in every surface. Zero delays are not slept, so they do not appear in sleeps_ms. Regenerate with `cargo run -q -p recuo --example seeded_vectors`.",
        "retry_delay_ms": delays,
        "com_retry": loops,
    });
    println!("{}", serde_json::to_string_pretty(&doc).unwrap());
}
