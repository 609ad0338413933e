//! `recuo simulate --model occ`: the experiment of "Exponential Backoff and Jitter" (AWS
//! Architecture blog, 2015) as its published simulator (`aws-samples/aws-arch-backoff-
//! simulator`, `src/backoff_simulator.py`) models it. Optimistic concurrency on one row:
//! every client reads the row's version, then writes with it; a write succeeds only when the
//! version is still current (and bumps it), else the client backs off and starts again with a
//! read. Each message takes `|N(10 ms, 2 ms)|` on the network. The work is the writes the
//! server received ("calls"); the time is when the last client got its write through.
//!
//! The delays are the core's backoff ([`Backoff::delay_ms`]), counted as the published
//! simulator counts them: the retry index of a client's first retry is 1 (its first window
//! is `2 · base`), and decorrelated jitter starts from the base. The backoff runs in
//! microseconds (the core's arithmetic is in whole units: milliseconds would round away the
//! 5 ms base's detail), the network in nanoseconds. Virtual time: no sockets, no sleeping.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::RngCore;
use recuo::{Backoff, Jitter};
use serde::Serialize;

/// How a client waits after a failed write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// The core's backoff with this jitter (`none` is exponential backoff without jitter).
    Backoff(Jitter),
    /// No wait at all: the published simulator's baseline ("None").
    NoBackoff,
}

impl Strategy {
    /// The strategies in the order printed: the four jitter modes, then no backoff.
    pub const ALL: [Strategy; 5] = [
        Strategy::Backoff(Jitter::None),
        Strategy::Backoff(Jitter::Full),
        Strategy::Backoff(Jitter::Equal),
        Strategy::Backoff(Jitter::Decorrelated),
        Strategy::NoBackoff,
    ];

    /// The name in the JSON: the core's jitter name, or `no_backoff`.
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::Backoff(j) => j.name(),
            Strategy::NoBackoff => "no_backoff",
        }
    }

    /// The name in the table, as the post says it.
    pub const fn label(self) -> &'static str {
        match self {
            Strategy::Backoff(Jitter::None) => "exponential",
            Strategy::Backoff(Jitter::Full) => "full jitter",
            Strategy::Backoff(Jitter::Equal) => "equal jitter",
            Strategy::Backoff(Jitter::Decorrelated) => "decorrelated",
            Strategy::NoBackoff => "no backoff",
        }
    }
}

/// The published simulator's network: each message takes `|N(mean, sd)|`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Network {
    /// The mean one-way delay, ms.
    pub mean_ms: f64,
    /// Its standard deviation, ms.
    pub sd_ms: f64,
}

/// The published simulator's: 10 ms, 2 ms.
pub const NETWORK: Network = Network {
    mean_ms: 10.0,
    sd_ms: 2.0,
};

/// What one strategy did at one client count, averaged over the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OccResult {
    /// How many clients raced.
    pub clients: u32,
    /// The strategy's name (the core's jitter name, or `no_backoff`).
    pub strategy: &'static str,
    /// Writes the server received, mean per run: the work.
    pub calls: f64,
    /// `calls / clients`.
    pub calls_per_client: f64,
    /// When the last client's write got through, mean per run, ms.
    pub completion_ms: f64,
}

/// The one message each client has on the network at any time, arriving at its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Message {
    /// The client's read reaches the server.
    Read,
    /// The version read reaches the client.
    ReadReply(u64),
    /// The client's write (with the version it read) reaches the server.
    Write(u64),
    /// The write's answer reaches the client.
    WriteReply(bool),
}

/// One client: its message in flight, its failed writes so far (the published simulator's
/// `attempt`) and the last delay it drew (decorrelated jitter grows from it).
#[derive(Debug, Clone, Copy)]
struct Client {
    message: Message,
    failures: u32,
    previous_us: u64,
}

/// The simulation's generator, SplitMix64 (Steele, Lea, Flood 2014): seeded, and cheap
/// enough that a hundred runs of a hundred clients take a moment even in a debug build.
/// The core's backoff draws its jitter from it too (any `RngCore` will do).
#[derive(Debug, Clone)]
pub struct SimRng(u64);

impl SimRng {
    /// A generator seeded with `seed`.
    pub const fn seeded(seed: u64) -> Self {
        SimRng(seed)
    }
}

impl RngCore for SimRng {
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}

/// A uniform draw in `[0, 1)`.
fn unit(rng: &mut SimRng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// `|N(mean, sd)|` in nanoseconds (Box–Muller).
fn net_delay_ns(net: Network, rng: &mut SimRng) -> u64 {
    let u1 = 1.0 - unit(rng);
    let u2 = unit(rng);
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    ((net.mean_ms + net.sd_ms * z).abs() * 1e6).round() as u64
}

/// One run: `clients` clients race; answers (writes received, the last instant in ns).
/// `backoff` is in microseconds.
pub fn run_once(
    clients: u32,
    strategy: Strategy,
    backoff: &Backoff,
    net: Network,
    rng: &mut SimRng,
) -> (u64, u64) {
    // Each client has exactly one message in flight: the queue holds (arrival ns, order
    // sent, client) packed in one u128, earliest first; the message is the client's.
    let mut queue: BinaryHeap<Reverse<u128>> = BinaryHeap::with_capacity(clients as usize);
    let mut seq = 0u32;
    let mut send = |queue: &mut BinaryHeap<Reverse<u128>>, at: u64, c: u32| {
        seq = seq.wrapping_add(1);
        queue.push(Reverse(
            (u128::from(at) << 64) | (u128::from(seq) << 32) | u128::from(c),
        ));
    };
    let mut state = vec![
        Client {
            message: Message::Read,
            failures: 0,
            previous_us: backoff.base_ms(),
        };
        clients as usize
    ];
    for c in 0..clients {
        let at = net_delay_ns(net, rng);
        send(&mut queue, at, c);
    }
    let (mut version, mut calls, mut now) = (0u64, 0u64, 0u64);
    while let Some(Reverse(key)) = queue.pop() {
        now = (key >> 64) as u64;
        let c = (key & 0xffff_ffff) as u32;
        let Some(client) = state.get_mut(c as usize) else {
            continue;
        };
        let (next, wait_us) = match client.message {
            Message::Read => (Message::ReadReply(version), 0),
            Message::ReadReply(seen) => (Message::Write(seen), 0),
            Message::Write(seen) => {
                calls += 1;
                let ok = seen == version;
                if ok {
                    version += 1;
                }
                (Message::WriteReply(ok), 0)
            }
            Message::WriteReply(true) => continue,
            Message::WriteReply(false) => {
                client.failures += 1;
                let wait_us = match strategy {
                    Strategy::NoBackoff => 0,
                    Strategy::Backoff(_) => {
                        backoff.delay_ms(client.failures, client.previous_us, rng)
                    }
                };
                client.previous_us = wait_us;
                (Message::Read, wait_us)
            }
        };
        client.message = next;
        let at = now + net_delay_ns(net, rng) + wait_us.saturating_mul(1000);
        send(&mut queue, at, c);
    }
    (calls, now)
}

/// `runs` runs of each count and strategy, seeded from `seed`: the means.
pub fn simulate(
    counts: &[u32],
    strategies: &[Strategy],
    base_us: u64,
    cap_us: u64,
    runs: u32,
    seed: u64,
) -> Vec<OccResult> {
    let mut out = Vec::new();
    for &clients in counts {
        for &strategy in strategies {
            let jitter = match strategy {
                Strategy::Backoff(j) => j,
                Strategy::NoBackoff => Jitter::None,
            };
            let backoff = Backoff::new()
                .with_base_ms(base_us)
                .with_cap_ms(cap_us)
                .with_jitter(jitter);
            let (mut calls, mut time_ns) = (0u64, 0u64);
            for r in 0..runs {
                let mut rng =
                    SimRng::seeded(seed ^ (u64::from(clients) << 40) ^ (u64::from(r) << 20));
                let (c, t) = run_once(clients, strategy, &backoff, NETWORK, &mut rng);
                calls += c;
                time_ns += t;
            }
            let runs_f = f64::from(runs.max(1));
            let mean_calls = calls as f64 / runs_f;
            out.push(OccResult {
                clients,
                strategy: strategy.name(),
                calls: mean_calls,
                calls_per_client: mean_calls / f64::from(clients.max(1)),
                completion_ms: time_ns as f64 / runs_f / 1e6,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_client_writes_once() {
        let b = Backoff::new().with_base_ms(5000).with_cap_ms(2_000_000);
        let mut rng = SimRng::seeded(1);
        let (calls, t) = run_once(1, Strategy::NoBackoff, &b, NETWORK, &mut rng);
        assert_eq!(calls, 1);
        // Four messages of about 10 ms each.
        assert!((20_000_000..60_000_000).contains(&t), "{t}");
    }

    #[test]
    fn every_client_gets_through_once_and_runs_are_reproducible() {
        let r = simulate(&[20], &Strategy::ALL, 5000, 2_000_000, 5, 9);
        assert_eq!(r, simulate(&[20], &Strategy::ALL, 5000, 2_000_000, 5, 9));
        for x in &r {
            assert!(x.calls >= 20.0, "{x:?}");
        }
        let calls = |name: &str| r.iter().find(|x| x.strategy == name).map(|x| x.calls);
        assert!(calls("full") < calls("no_backoff"), "{r:?}");
    }

    #[test]
    fn the_network_delay_is_about_ten_ms() {
        let mut rng = SimRng::seeded(3);
        let n = 20_000;
        let mean = (0..n)
            .map(|_| net_delay_ns(NETWORK, &mut rng) as f64)
            .sum::<f64>()
            / f64::from(n)
            / 1e6;
        assert!((9.9..10.1).contains(&mean), "{mean}");
    }
}
