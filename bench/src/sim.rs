//! Schedules in virtual time: a batch of requests against a simulated rate-limited server,
//! driven by recuo's own decisions — the regulator's GCRA arithmetic
//! ([`Regulator::reserve_at`], what `acquire` does, with the clock passed in), the policy's
//! classification of a 429 and its `Retry-After`, the [`Attempts`] state machine and the
//! [`Backoff`] windows — with no sleeping: an event queue jumps from one instant to the next.
//!
//! The model, the same for every client:
//! * `workers` requests in flight at most (a worker takes the next request when its last one
//!   is done, as recuo's batch runner does);
//! * a request reaches the server one network hop after it starts; a hop takes a uniform
//!   20–80 ms, drawn per hop;
//! * the server is a GCRA limiter (a token bucket) of `allowance` with a burst of
//!   `server_burst`: a request arriving within the allowance is answered 200 two seconds
//!   after it started; one arriving above it is answered 429 one hop later, with a
//!   `Retry-After` of the whole seconds until it would have been allowed (at least 1).
//!   Refused requests do not use the allowance.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::Rng;
use recuo::{Attempts, Backoff, Decision, JitterRng, Outcome, Policy, Rate, Regulator, Request};

const MS: u64 = 1_000_000;

/// What every schedule shares: the batch, the server, the network.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// Requests in the batch.
    pub requests: u32,
    /// The server's allowance.
    pub allowance: Rate,
    /// The server's burst: requests it takes at once after a quiet spell.
    pub server_burst: u32,
    /// From a request's start to its 200 response, ms.
    pub latency_ms: u64,
    /// One network hop, ms: drawn uniformly from this range.
    pub hop_ms: (u64, u64),
    /// Requests in flight at most.
    pub workers: usize,
}

impl Setup {
    /// Guide B's example: 600 requests, 120/min allowed (burst 5), 2 s responses, 8 workers.
    pub fn guide_b() -> Self {
        Setup {
            requests: 600,
            allowance: Rate::per_minute(120.0).expect("a positive rate"),
            server_burst: 5,
            latency_ms: 2000,
            hop_ms: (20, 80),
            workers: 8,
        }
    }
}

/// How the client starts and retries its requests.
#[derive(Debug, Clone, Copy)]
pub enum Client {
    /// Every attempt, first or retry, waits for a start slot of a regulator at `rate` (burst
    /// 1); a 429 is retried by guide B's policy, honouring `Retry-After`.
    Paced {
        /// The regulator's rate.
        rate: Rate,
    },
    /// No regulator: each worker sends at once, and retries a 429 after a full-jitter delay
    /// from guide B's windows (`min(8 s, 1 s · 2^n)`), ignoring `Retry-After`, until it
    /// succeeds.
    Naive,
}

/// What a schedule came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcomes {
    /// From the first start to the last 200, ns.
    pub elapsed_ns: u64,
    /// 429 answers the client saw.
    pub throttled: u64,
    /// Requests sent, retries included.
    pub attempts: u64,
    /// Requests that succeeded.
    pub succeeded: u64,
    /// Requests given up.
    pub failed: u64,
}

/// The simulated server: GCRA, one theoretical arrival time.
#[derive(Debug)]
pub struct Server {
    interval_ns: u64,
    tolerance_ns: u64,
    tat_ns: u64,
}

impl Server {
    /// A server that allows `allowance` with a burst of `burst` (at least 1).
    pub fn new(allowance: Rate, burst: u32) -> Self {
        let interval_ns = allowance.interval_ns();
        Server {
            interval_ns,
            tolerance_ns: interval_ns * u64::from(burst.max(1) - 1),
            tat_ns: 0,
        }
    }

    /// A request arrives at `t_ns`: `Ok` when allowed, else the wait until it would be.
    pub fn arrive(&mut self, t_ns: u64) -> Result<(), u64> {
        let allowed_from = self.tat_ns.saturating_sub(self.tolerance_ns);
        if t_ns < allowed_from {
            return Err(allowed_from - t_ns);
        }
        self.tat_ns = self.tat_ns.max(t_ns) + self.interval_ns;
        Ok(())
    }
}

/// What happens next to a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// Take the next request, if any.
    Free,
    /// Ask for a start slot (paced clients only).
    Acquire,
    /// Send the request.
    Start,
    /// The request reaches the server.
    Arrive,
    /// The answer reaches the client: 200, or 429 with a `Retry-After` of this many seconds.
    Answer(Option<u64>),
}

/// One worker's request in progress.
struct Job {
    attempts: Attempts,
    /// Retries made (the naive client's backoff index).
    retries: u32,
    previous_delay_ms: u64,
    started_ns: u64,
}

/// Runs `requests` requests of `setup` with `client`, `seed` fixing the network and the jitter.
pub fn run(setup: &Setup, client: Client, seed: u64) -> Outcomes {
    let policy = Policy::guide_b();
    let naive_backoff = Backoff::new().with_base_ms(1000).with_cap_ms(8000);
    let regulator = match client {
        Client::Paced { rate } => Some(Regulator::new(rate, 1).expect("a burst of 1")),
        Client::Naive => None,
    };
    let mut server = Server::new(setup.allowance, setup.server_burst);
    let mut rng = JitterRng::seeded(seed);
    let hop = |rng: &mut JitterRng| rng.random_range(setup.hop_ms.0..=setup.hop_ms.1) * MS;

    let mut queue = BinaryHeap::new();
    let mut seq = 0u64;
    let mut at = |queue: &mut BinaryHeap<_>, t: u64, worker: usize, step: Step| {
        seq += 1;
        queue.push(Reverse((t, seq, worker, step)));
    };
    for w in 0..setup.workers {
        at(&mut queue, 0, w, Step::Free);
    }
    let mut jobs: Vec<Option<Job>> = (0..setup.workers).map(|_| None).collect();
    let mut left = setup.requests;
    let mut out = Outcomes::default();

    while let Some(Reverse((t, _, w, step))) = queue.pop() {
        match step {
            Step::Free => {
                if left == 0 {
                    continue;
                }
                left -= 1;
                jobs[w] = Some(Job {
                    attempts: Attempts::new(&policy),
                    retries: 0,
                    previous_delay_ms: 0,
                    started_ns: 0,
                });
                let next = if regulator.is_some() {
                    Step::Acquire
                } else {
                    Step::Start
                };
                at(&mut queue, t, w, next);
            }
            Step::Acquire => {
                let regulator = regulator.as_ref().expect("paced clients have a regulator");
                // `acquire` in virtual time: reserve the next slot, then wait for it.
                let wait = regulator
                    .reserve_at(t, 1, u64::MAX)
                    .expect("no wait is too long and a cost of 1 fits");
                at(&mut queue, t + wait, w, Step::Start);
            }
            Step::Start => {
                let job = jobs[w].as_mut().expect("a worker starts its own request");
                job.started_ns = t;
                out.attempts += 1;
                if regulator.is_some() {
                    if let Err(gave_up) = job.attempts.begin(t / MS) {
                        panic!("a paced request was refused before it started: {gave_up:?}");
                    }
                }
                at(&mut queue, t + hop(&mut rng), w, Step::Arrive);
            }
            Step::Arrive => match server.arrive(t) {
                Ok(()) => {
                    let started = jobs[w].as_ref().expect("in flight").started_ns;
                    at(
                        &mut queue,
                        started + setup.latency_ms * MS,
                        w,
                        Step::Answer(None),
                    );
                }
                Err(wait_ns) => {
                    let retry_after_s = wait_ns.div_ceil(1000 * MS).max(1);
                    at(
                        &mut queue,
                        t + hop(&mut rng),
                        w,
                        Step::Answer(Some(retry_after_s)),
                    );
                }
            },
            Step::Answer(None) => {
                out.succeeded += 1;
                out.elapsed_ns = out.elapsed_ns.max(t);
                jobs[w] = None;
                at(&mut queue, t, w, Step::Free);
            }
            Step::Answer(Some(retry_after_s)) => {
                out.throttled += 1;
                let job = jobs[w].as_mut().expect("in flight");
                match client {
                    Client::Paced { .. } => {
                        let header = retry_after_s.to_string();
                        let headers = [("Retry-After", header.as_str())];
                        let verdict =
                            policy.classify(Outcome::Status(429), Request::GET, &headers, 0);
                        match job.attempts.decide(verdict, t / MS, &mut rng) {
                            Decision::Retry { delay_ms, .. } => {
                                at(&mut queue, t + delay_ms * MS, w, Step::Acquire)
                            }
                            _ => {
                                out.failed += 1;
                                jobs[w] = None;
                                at(&mut queue, t, w, Step::Free);
                            }
                        }
                    }
                    Client::Naive => {
                        let delay_ms =
                            naive_backoff.delay_ms(job.retries, job.previous_delay_ms, &mut rng);
                        job.retries += 1;
                        job.previous_delay_ms = delay_ms;
                        at(&mut queue, t + delay_ms * MS, w, Step::Start);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_takes_a_burst_then_one_per_interval() {
        let mut s = Server::new(Rate::per_minute(120.0).unwrap(), 3);
        for _ in 0..3 {
            assert_eq!(s.arrive(0), Ok(()));
        }
        assert_eq!(s.arrive(0), Err(500 * MS));
        assert_eq!(s.arrive(499 * MS), Err(MS));
        assert_eq!(s.arrive(500 * MS), Ok(()));
        assert!(s.arrive(500 * MS).is_err());
    }

    #[test]
    fn pacing_below_the_allowance_meets_no_429_and_keeps_to_the_plan() {
        let setup = Setup::guide_b();
        let rate = Rate::per_minute(90.0).unwrap();
        let out = run(&setup, Client::Paced { rate }, 1);
        assert_eq!(out.throttled, 0);
        assert_eq!((out.succeeded, out.failed, out.attempts), (600, 0, 600));
        // 599 intervals of 2/3 s, then a 2 s response.
        let expected = 599.0 * 60.0 / 90.0 + 2.0;
        assert!(
            (out.elapsed_ns as f64 / 1e9 - expected).abs() < 0.01,
            "{out:?}"
        );
    }

    #[test]
    fn a_naive_client_is_throttled_and_still_finishes() {
        let out = run(&Setup::guide_b(), Client::Naive, 1);
        assert!(out.throttled > 0);
        assert_eq!(out.succeeded, 600);
        assert_eq!(out.attempts, 600 + out.throttled);
    }

    #[test]
    fn the_same_seed_gives_the_same_schedule() {
        let setup = Setup::guide_b();
        assert_eq!(run(&setup, Client::Naive, 9), run(&setup, Client::Naive, 9));
    }
}
