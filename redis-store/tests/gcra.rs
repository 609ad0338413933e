//! tests/vectors/gcra.json through the Lua script on a real Redis server: exactly the answers
//! recuo::Regulator gives (core/tests/vectors.rs) — the GCRA rule is one rule.
#![cfg(feature = "client")]

use recuo_redis::{RedisGcra, DEADLINE};

mod support;
use support::Server;

#[test]
fn the_lua_script_answers_the_gcra_vectors() {
    let server = Server::start();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/gcra.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let u = |v: &serde_json::Value| v.as_u64().unwrap();
    let mut checked = 0;
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let interval_us = u(&case["interval_us"]);
        let burst = u32::try_from(u(&case["burst"])).unwrap();
        let gcra = RedisGcra::open_with_deadline(
            &server.url,
            &format!("vectors:{name}"),
            interval_us * 1000,
            burst,
            DEADLINE,
        )
        .unwrap();
        for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            if step.get("event").is_some() {
                continue;
            }
            let got = gcra
                .reserve_us(
                    u(&step["interval_us"]),
                    Some(u(&step["now_us"])),
                    u32::try_from(u(&step["cost"])).unwrap(),
                    u(&step["max_wait_us"]),
                )
                .unwrap();
            let want = (step["reserved"].as_bool().unwrap(), u(&step["wait_us"]));
            assert_eq!(got, want, "{name} #{i}");
            checked += 1;
        }
    }
    assert!(checked > 250, "{checked}");
}
