//! tests/vectors/gcra.json through the Lua scripts on a real Redis server: exactly the answers
//! recuo::Regulator gives (core/tests/vectors.rs) — the GCRA rule and the adaptive rule are
//! one rule. Each holder of a case is its own connection to one key, as two processes are.
#![cfg(feature = "client")]

use std::collections::HashMap;

use recuo::RemoteGcra;
use recuo_redis::{RedisGcra, DEADLINE};

mod support;
use support::Server;

#[test]
fn the_lua_scripts_answer_the_gcra_vectors() {
    let server = Server::start();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/gcra.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let u = |v: &serde_json::Value| v.as_u64().unwrap();
    let (mut reservations, mut events) = (0, 0);
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let interval_us = u(&case["interval_us"]);
        let burst = u32::try_from(u(&case["burst"])).unwrap();
        let adaptive = case["adaptive"].as_bool().unwrap();
        let mut holders = HashMap::new();
        for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let holder = step["holder"].as_str().unwrap();
            let gcra = holders.entry(holder).or_insert_with(|| {
                RedisGcra::open_with_deadline(
                    &server.url,
                    &format!("vectors:{name}"),
                    interval_us * 1000,
                    burst,
                    adaptive,
                    DEADLINE,
                )
                .unwrap()
            });
            if let Some(event) = step.get("event") {
                let throttled = match event.as_str().unwrap() {
                    "throttled" => true,
                    "success" => false,
                    other => panic!("{name} #{i}: event {other:?}"),
                };
                let got = gcra.adapt(throttled).unwrap();
                assert_eq!(got, u(&step["interval_ns"]), "{name} #{i}");
                assert_eq!(gcra.interval_in_force_ns(), got, "{name} #{i}");
                events += 1;
                continue;
            }
            let got = gcra
                .reserve_us(
                    Some(u(&step["now_us"])),
                    u32::try_from(u(&step["cost"])).unwrap(),
                    u(&step["max_wait_us"]),
                )
                .unwrap();
            let want = (
                step["reserved"].as_bool().unwrap(),
                u(&step["wait_us"]),
                u(&step["interval_us"]) * 1000,
            );
            assert_eq!(got, want, "{name} #{i}");
            reservations += 1;
        }
    }
    assert_eq!((reservations, events), (300, 266));
}
