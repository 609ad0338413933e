//! `recuo simulate`: reproducible with a seed, and full jitter does less work than none.

mod support;

use serde_json::Value;
use support::recuo;

fn modes(j: &Value) -> Vec<Value> {
    j["modes"].as_array().expect("modes").clone()
}

fn calls(j: &Value, mode: &str) -> u64 {
    modes(j)
        .iter()
        .find(|m| m["jitter"] == mode)
        .and_then(|m| m["calls"].as_u64())
        .unwrap_or_else(|| panic!("no {mode} in {j}"))
}

#[test]
fn a_seed_reproduces_the_run() {
    let a = recuo(&["simulate", "--seed", "42", "--json"]);
    let b = recuo(&["simulate", "--seed", "42", "--json"]);
    assert_eq!(a.code, 0, "{a:?}");
    assert_eq!(a.stdout, b.stdout);
    let j = a.json();
    assert_eq!(j["seed"], 42);
    let all = modes(&j);
    let names: Vec<&str> = all.iter().filter_map(|m| m["jitter"].as_str()).collect();
    assert_eq!(names, ["none", "full", "equal", "decorrelated"]);
    for m in modes(&j) {
        for key in [
            "calls",
            "retries",
            "successes",
            "gave_up",
            "completion_s",
            "peak_load",
        ] {
            assert!(m[key].is_number(), "{key} in {m}");
        }
        assert_eq!(m["successes"], 100, "every client gets through: {m}");
    }
}

#[test]
fn full_jitter_does_less_work_than_none() {
    for seed in ["1", "2", "3"] {
        let j = recuo(&["simulate", "--seed", seed, "--json"]).json();
        let (full, none) = (calls(&j, "full"), calls(&j, "none"));
        assert!(full < none, "seed {seed}: full {full} vs none {none}");
    }
    let j = recuo(&["simulate", "--clients", "500", "--seed", "5", "--json"]).json();
    assert!(calls(&j, "full") * 2 < calls(&j, "none"), "{j}");
}

#[test]
fn one_mode_and_the_table() {
    let j = recuo(&[
        "simulate",
        "--jitter",
        "decorrelated",
        "--seed",
        "1",
        "--json",
    ])
    .json();
    assert_eq!(modes(&j).len(), 1);
    let r = recuo(&["simulate", "--seed", "1"]);
    assert!(r.stdout.contains("full jitter made"), "{}", r.stdout);
    assert!(r.stdout.contains("seed 1"), "{}", r.stdout);
    let unseeded = recuo(&["simulate", "--jitter", "full", "--json"]).json();
    assert!(unseeded["seed"].is_u64(), "the seed used is printed");
}
