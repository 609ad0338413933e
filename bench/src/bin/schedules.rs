//! `schedules [ROUNDS] > schedules.json`: guide B's batch (600 requests, a 120/min
//! allowance) in virtual time, paced at 90/min and at 120/min through recuo's regulator, and
//! sent by a naive client with no regulator; each figure over ROUNDS seeds (default 21).
//! Progress goes to stderr, the figures to stdout as JSON for bench/report/build_report.py.

use recuo_bench::sim::{run, Client, Setup};

fn per_minute(n: f64) -> recuo::Rate {
    recuo::Rate::per_minute(n).expect("a positive rate")
}

fn list<T: ToString>(xs: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = xs.into_iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(", "))
}

fn main() {
    let rounds: u64 = match std::env::args().nth(1) {
        Some(n) => n.parse().expect("ROUNDS is a whole number"),
        None => 21,
    };
    let setup = Setup::guide_b();
    let latency_s = setup.latency_ms as f64 / 1000.0;
    let planned = |target: f64| {
        recuo::plan(
            u64::from(setup.requests),
            setup.allowance,
            per_minute(target),
            latency_s,
            0.0,
        )
        .expect("the target fits the allowance")
        .duration_s
    };
    let allowance = setup.allowance.as_per_minute();
    let clients = [
        (
            "paced at 90/min through the gate",
            Client::Paced {
                rate: per_minute(90.0),
            },
            planned(90.0),
            "the plan",
        ),
        (
            "paced at 120/min through the gate",
            Client::Paced {
                rate: setup.allowance,
            },
            planned(allowance),
            "the physical limit",
        ),
        (
            "naive: no regulator, full-jitter retries of 429s",
            Client::Naive,
            planned(allowance),
            "the physical limit",
        ),
    ];
    let mut rows = Vec::new();
    for (name, client, baseline_s, baseline) in clients {
        eprintln!("schedules: {name} ({rounds} seeds)");
        let outs: Vec<_> = (1..=rounds).map(|seed| run(&setup, client, seed)).collect();
        rows.push(format!(
            "    {{\"name\": \"{name}\", \"baseline\": \"{baseline}\", \"baseline_s\": {baseline_s}, \
             \"elapsed_over_baseline\": {}, \"throttled\": {}, \"attempts\": {}, \
             \"succeeded\": {}, \"failed\": {}}}",
            list(outs.iter().map(|o| o.elapsed_ns as f64 / 1e9 / baseline_s)),
            list(outs.iter().map(|o| o.throttled)),
            list(outs.iter().map(|o| o.attempts)),
            list(outs.iter().map(|o| o.succeeded)),
            list(outs.iter().map(|o| o.failed)),
        ));
    }
    println!(
        "{{\n  \"requests\": {}, \"allowance_per_min\": {allowance}, \"server_burst\": {}, \
         \"latency_ms\": {}, \"hop_ms\": [{}, {}], \"workers\": {}, \"rounds\": {rounds},\n  \
         \"rows\": [\n{}\n  ]\n}}",
        setup.requests,
        setup.server_burst,
        setup.latency_ms,
        setup.hop_ms.0,
        setup.hop_ms.1,
        setup.workers,
        rows.join(",\n")
    );
}
