//! `recuo simulate`: many clients retrying against one limited server, in virtual time —
//! the experiment of "Exponential Backoff and Jitter" (AWS Architecture blog, 2015). Every
//! client sends one request at time 0; the server admits a rate with a burst (the core's
//! regulator, on a virtual clock); each refused client asks the core's attempt state
//! machine for its delay (the core's backoff and jitter, seeded). No sockets, no sleeping.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use recuo::{Attempts, Cause, Decision, Jitter, JitterRng, Policy, Regulator, Verdict};
use serde::Serialize;

use crate::args::SimulateArgs;
use crate::error::CliError;

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

/// Runs `recuo simulate`.
///
/// # Errors
/// [`CliError::Usage`] for a backoff the core refuses (a cap below the base) or a run too
/// large to simulate.
pub fn run(a: &SimulateArgs) -> Result<(), CliError> {
    let work = u64::from(a.clients) * u64::from(a.attempts);
    if work > MAX_WORK {
        return Err(CliError::Usage(format!(
            "--clients × --attempts is {work}: at most {MAX_WORK} attempts can be simulated"
        )));
    }
    let seed = a.seed.unwrap_or_else(|| {
        use rand::RngCore;
        JitterRng::from_entropy().next_u64() >> 12
    });
    let modes: Vec<Jitter> = match a.jitter {
        Some(j) => vec![j],
        None => MODES.to_vec(),
    };
    let mut results = Vec::new();
    for jitter in modes {
        let policy = Policy::builder()
            .max_attempts(a.attempts)
            .base(a.base)
            .cap(a.cap)
            .jitter(jitter)
            .build()
            .map_err(|e| CliError::Usage(e.to_string()))?;
        let server = Regulator::new(a.rate, a.burst).map_err(|e| CliError::Usage(e.to_string()))?;
        results.push(simulate(a.clients, &policy, &server, seed));
    }
    let window_ms = Regulator::new(a.rate, a.burst)
        .map(|r| load_window_ms(&r))
        .unwrap_or(1);
    let backoff = Policy::builder()
        .base(a.base)
        .cap(a.cap)
        .build()
        .map_err(|e| CliError::Usage(e.to_string()))?
        .backoff();
    if a.json {
        crate::table::print_json(&SimulateJson {
            clients: a.clients,
            rate_per_s: a.rate.as_per_second(),
            burst: a.burst,
            base_ms: backoff.base_ms(),
            cap_ms: backoff.cap_ms(),
            attempts: a.attempts,
            seed,
            load_window_ms: window_ms,
            modes: results,
        });
        return Ok(());
    }
    println!(
        "recuo simulate: {} clients send one request each at time 0 and retry every 429",
        a.clients
    );
    println!(
        "  server admits {} with a burst of {}; backoff base {} ms, cap {} ms, at most {} \
         attempts; seed {seed}",
        crate::table::show_rate(a.rate),
        a.burst,
        backoff.base_ms(),
        backoff.cap_ms(),
        a.attempts
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
    use std::time::Duration;

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
