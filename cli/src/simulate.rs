//! `recuo simulate`: many clients retrying, in virtual time. `--model occ` (in `occ.rs`) is
//! the experiment of "Exponential Backoff and Jitter" (AWS Architecture blog, 2015) as its
//! published simulator has it. `--model rate`, here, is recuo's own: every client sends one
//! request at time 0; the server admits a rate with a burst (the core's regulator, on a
//! virtual clock); each refused client asks the core's attempt state machine for its delay
//! (the core's backoff and jitter, seeded). No sockets, no sleeping.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use std::time::Duration;

use recuo::{Attempts, Cause, Decision, Jitter, JitterRng, Policy, Rate, Regulator, Verdict};
use serde::Serialize;

use crate::args::{Model, SimulateArgs};
use crate::error::CliError;
use crate::occ::{self, Strategy};

/// The modes in the blog's order.
const MODES: [Jitter; 4] = [
    Jitter::None,
    Jitter::Full,
    Jitter::Equal,
    Jitter::Decorrelated,
];

/// The most attempts (clients × attempts) one run may simulate.
const MAX_WORK: u64 = 5_000_000;

/// What one jitter mode did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeResult {
    /// The jitter mode's name.
    pub jitter: &'static str,
    /// Calls the server received: the total work.
    pub calls: u64,
    /// Of those, retries.
    pub retries: u64,
    /// Clients that got through.
    pub successes: u64,
    /// Clients that ran out of attempts.
    pub gave_up: u64,
    /// When the last client finished, in virtual seconds.
    pub completion_s: f64,
    /// The most retries the server received within one of its intervals (1 / rate, at
    /// least 1 ms): how many came back at once.
    pub peak_load: u64,
}

/// The run as `--json` prints it.
#[derive(Debug, Serialize)]
struct SimulateJson {
    model: &'static str,
    clients: u32,
    rate_per_s: f64,
    burst: u32,
    base_ms: u64,
    cap_ms: u64,
    attempts: u32,
    seed: u64,
    load_window_ms: u64,
    modes: Vec<ModeResult>,
}

/// Simulates `clients` clients under `policy` (its backoff, jitter and attempts) against a
/// server admitting `server`'s rate and burst, with jitter drawn from `seed`.
pub fn simulate(clients: u32, policy: &Policy, server: &Regulator, seed: u64) -> ModeResult {
    // The regulator's clock starts one second in, so that time 0 is an ordinary instant.
    const ORIGIN_NS: u64 = 1_000_000_000;
    let mut rng = JitterRng::seeded(seed);
    let mut states: Vec<Attempts> = (0..clients).map(|_| Attempts::new(policy)).collect();
    let mut queue: BinaryHeap<Reverse<(u64, u32)>> =
        (0..clients).map(|c| Reverse((0, c))).collect();
    let mut load: HashMap<u64, u64> = HashMap::new();
    let mut r = ModeResult {
        jitter: policy.backoff().jitter().name(),
        calls: 0,
        retries: 0,
        successes: 0,
        gave_up: 0,
        completion_s: 0.0,
        peak_load: 0,
    };
    let mut last_ms = 0;
    let window_ms = load_window_ms(server);
    let refused = Verdict::Retry {
        cause: Cause::RateLimited,
        server_wait: None,
    };
    while let Some(Reverse((t, c))) = queue.pop() {
        let Some(state) = states.get_mut(c as usize) else {
            continue;
        };
        let attempt = match state.begin(t) {
            Ok(n) => n,
            Err(_) => {
                r.gave_up += 1;
                last_ms = last_ms.max(t);
                continue;
            }
        };
        r.calls += 1;
        if attempt > 0 {
            r.retries += 1;
            *load.entry(t / window_ms).or_insert(0) += 1;
        }
        let now_ns = ORIGIN_NS.saturating_add(t.saturating_mul(1_000_000));
        if server.try_acquire_at(now_ns, 1).is_ok() {
            r.successes += 1;
            last_ms = last_ms.max(t);
            continue;
        }
        match state.decide(refused, t, &mut rng) {
            Decision::Retry { delay_ms, .. } => {
                queue.push(Reverse((t.saturating_add(delay_ms), c)))
            }
            _ => {
                r.gave_up += 1;
                last_ms = last_ms.max(t);
            }
        }
    }
    r.completion_s = last_ms as f64 / 1000.0;
    r.peak_load = load.values().copied().max().unwrap_or(0);
    r
}

/// The window the peak load is counted in: the server's interval between two admissions,
/// in whole milliseconds (at least 1).
pub fn load_window_ms(server: &Regulator) -> u64 {
    (server.rate().interval_ns() / 1_000_000).max(1)
}

/// The rate model's settings, with their defaults.
struct RateModel {
    clients: u32,
    rate: Rate,
    burst: u32,
    base: Duration,
    cap: Duration,
    attempts: u32,
}

impl RateModel {
    fn of(a: &SimulateArgs) -> Result<RateModel, CliError> {
        if a.runs.is_some_and(|r| r != 1) {
            return Err(CliError::Usage(
                "--runs averages --model occ; the rate model is one seeded run".to_string(),
            ));
        }
        let clients = match a.clients.as_slice() {
            [] => 100,
            [n] => *n,
            _ => {
                return Err(CliError::Usage(
                    "--model rate takes one --clients count (occ takes a list)".to_string(),
                ))
            }
        };
        let rate = match a.rate {
            Some(r) => r,
            None => "100/s"
                .parse()
                .map_err(|e: recuo::RateError| CliError::Usage(e.to_string()))?,
        };
        Ok(RateModel {
            clients,
            rate,
            burst: a.burst.unwrap_or(10),
            base: a.base.unwrap_or(Duration::from_millis(100)),
            cap: a.cap.unwrap_or(Duration::from_secs(10)),
            attempts: a.attempts.unwrap_or(100),
        })
    }
}

/// Runs `recuo simulate`.
///
/// # Errors
/// [`CliError::Usage`] for a backoff the core refuses (a cap below the base), a flag of the
/// other model, or a run too large to simulate.
pub fn run(a: &SimulateArgs) -> Result<(), CliError> {
    let seed = a.seed.unwrap_or_else(|| {
        use rand::RngCore;
        JitterRng::from_entropy().next_u64() >> 12
    });
    match a.model {
        Model::Rate => run_rate(a, &RateModel::of(a)?, seed),
        Model::Occ => run_occ(a, seed),
    }
}

/// The most writes an occ simulation may take: clients² × runs, summed, per strategy.
const MAX_OCC_WORK: u64 = 200_000_000;

/// `--model occ`.
fn run_occ(a: &SimulateArgs, seed: u64) -> Result<(), CliError> {
    let rate_only = [
        ("--rate", a.rate.is_some()),
        ("--burst", a.burst.is_some()),
        ("--attempts", a.attempts.is_some()),
    ];
    if let Some((flag, _)) = rate_only.iter().find(|(_, given)| *given) {
        return Err(CliError::Usage(format!(
            "{flag} belongs to --model rate: the occ model's server has no rate, and its \
             clients retry until their write gets through"
        )));
    }
    let counts: Vec<u32> = if a.clients.is_empty() {
        (1..=10).map(|i| i * 10).collect()
    } else {
        a.clients.clone()
    };
    let runs = a.runs.unwrap_or(100);
    let work: u64 = counts
        .iter()
        .map(|&c| u64::from(c) * u64::from(c) * u64::from(runs))
        .sum();
    if work > MAX_OCC_WORK {
        return Err(CliError::Usage(format!(
            "clients² × runs comes to {work}: at most {MAX_OCC_WORK} can be simulated"
        )));
    }
    let base_us = a
        .base
        .map_or(5_000, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    let cap_us = a.cap.map_or(2_000_000, |d| {
        u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
    });
    if cap_us < base_us {
        return Err(CliError::Usage(format!(
            "the cap ({} ms) is below the base ({} ms)",
            cap_us as f64 / 1000.0,
            base_us as f64 / 1000.0
        )));
    }
    let strategies: Vec<Strategy> = match a.jitter {
        Some(j) => vec![Strategy::Backoff(j)],
        None => Strategy::ALL.to_vec(),
    };
    let results = occ::simulate(&counts, &strategies, base_us, cap_us, runs, seed);
    let net = occ::NETWORK;
    if a.json {
        crate::table::print_json(&OccJson {
            model: "occ",
            runs,
            seed,
            base_ms: base_us as f64 / 1000.0,
            cap_ms: cap_us as f64 / 1000.0,
            net_mean_ms: net.mean_ms,
            net_sd_ms: net.sd_ms,
            results,
        });
        return Ok(());
    }
    println!(
        "recuo simulate --model occ: clients race to update one row under optimistic \
         concurrency; {runs} runs per count"
    );
    println!(
        "  network |N({} ms, {} ms)| per message; backoff base {} ms, cap {} ms; seed {seed}",
        net.mean_ms,
        net.sd_ms,
        base_us as f64 / 1000.0,
        cap_us as f64 / 1000.0
    );
    let table = |title: &str, value: &dyn Fn(&occ::OccResult) -> String| {
        println!();
        print!("  {title:<9}");
        for s in &strategies {
            print!(" {:>13}", s.label());
        }
        println!();
        for &c in &counts {
            print!("  {c:<9}");
            for s in &strategies {
                let r = results
                    .iter()
                    .find(|r| r.clients == c && r.strategy == s.name());
                print!(" {:>13}", r.map_or_else(String::new, value));
            }
            println!();
        }
    };
    table("calls", &|r| format!("{:.1}", r.calls));
    table("time (ms)", &|r| format!("{:.0}", r.completion_ms));
    println!();
    println!("  calls: writes the server received (the work), mean per run");
    println!("  time: when the last client's write got through, mean per run");
    Ok(())
}

/// `--model occ --json`.
#[derive(Debug, Serialize)]
struct OccJson {
    model: &'static str,
    runs: u32,
    seed: u64,
    base_ms: f64,
    cap_ms: f64,
    net_mean_ms: f64,
    net_sd_ms: f64,
    results: Vec<occ::OccResult>,
}

/// `--model rate`.
fn run_rate(a: &SimulateArgs, p: &RateModel, seed: u64) -> Result<(), CliError> {
    let work = u64::from(p.clients) * u64::from(p.attempts);
    if work > MAX_WORK {
        return Err(CliError::Usage(format!(
            "--clients × --attempts is {work}: at most {MAX_WORK} attempts can be simulated"
        )));
    }
    let modes: Vec<Jitter> = match a.jitter {
        Some(j) => vec![j],
        None => MODES.to_vec(),
    };
    let mut results = Vec::new();
    for jitter in modes {
        let policy = Policy::builder()
            .max_attempts(p.attempts)
            .base(p.base)
            .cap(p.cap)
            .jitter(jitter)
            .build()
            .map_err(|e| CliError::Usage(e.to_string()))?;
        let server = Regulator::new(p.rate, p.burst).map_err(|e| CliError::Usage(e.to_string()))?;
        results.push(simulate(p.clients, &policy, &server, seed));
    }
    let window_ms = Regulator::new(p.rate, p.burst)
        .map(|r| load_window_ms(&r))
        .unwrap_or(1);
    let backoff = Policy::builder()
        .base(p.base)
        .cap(p.cap)
        .build()
        .map_err(|e| CliError::Usage(e.to_string()))?
        .backoff();
    if a.json {
        crate::table::print_json(&SimulateJson {
            model: "rate",
            clients: p.clients,
            rate_per_s: p.rate.as_per_second(),
            burst: p.burst,
            base_ms: backoff.base_ms(),
            cap_ms: backoff.cap_ms(),
            attempts: p.attempts,
            seed,
            load_window_ms: window_ms,
            modes: results,
        });
        return Ok(());
    }
    println!(
        "recuo simulate --model rate: {} clients send one request each at time 0 and retry \
         every 429",
        p.clients
    );
    println!(
        "  server admits {} with a burst of {}; backoff base {} ms, cap {} ms, at most {} \
         attempts; seed {seed}",
        crate::table::show_rate(p.rate),
        p.burst,
        backoff.base_ms(),
        backoff.cap_ms(),
        p.attempts
    );
    println!("  peak: the most retries arriving within one server interval ({window_ms} ms)");
    println!();
    println!(
        "  {:<13} {:>9} {:>9} {:>12} {:>16} {:>8}",
        "jitter",
        "calls",
        "retries",
        "completion",
        format!("peak/{window_ms}ms"),
        "gave up"
    );
    for r in &results {
        println!(
            "  {:<13} {:>9} {:>9} {:>10.1} s {:>16} {:>8}",
            r.jitter, r.calls, r.retries, r.completion_s, r.peak_load, r.gave_up
        );
    }
    let calls = |name: &str| results.iter().find(|r| r.jitter == name).map(|r| r.calls);
    if let (Some(full), Some(none)) = (calls("full"), calls("none")) {
        if none > 0 {
            println!();
            println!(
                "  full jitter made {full} calls, {:.0}% of the {none} made without jitter",
                100.0 * full as f64 / none as f64
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(j: Jitter) -> Policy {
        Policy::builder()
            .max_attempts(100)
            .base(Duration::from_millis(100))
            .cap(Duration::from_secs(10))
            .jitter(j)
            .build()
            .unwrap()
    }

    fn server() -> Regulator {
        Regulator::new("100/s".parse().unwrap(), 10).unwrap()
    }

    #[test]
    fn no_jitter_moves_in_lockstep() {
        // Without jitter every refused client comes back at the same instant: the server
        // admits its burst each round, 100 + 90 + … + 10 calls.
        let r = simulate(100, &policy(Jitter::None), &server(), 1);
        assert_eq!((r.calls, r.successes, r.gave_up), (550, 100, 0));
        assert_eq!(r.peak_load, 90);
    }

    #[test]
    fn full_jitter_does_less_work_and_is_reproducible() {
        let full = simulate(100, &policy(Jitter::Full), &server(), 7);
        assert_eq!(full, simulate(100, &policy(Jitter::Full), &server(), 7));
        let none = simulate(100, &policy(Jitter::None), &server(), 7);
        assert!(full.calls < none.calls, "{full:?} vs {none:?}");
        assert_eq!(full.successes, 100);
    }

    #[test]
    fn attempts_run_out() {
        let p = Policy::builder().max_attempts(1).build().unwrap();
        let r = simulate(20, &p, &server(), 1);
        assert_eq!((r.calls, r.successes, r.gave_up), (20, 10, 10));
    }
}
