//! `instructions CASE N`: makes N calls of one of the core's measured functions, for
//! callgrind (`make bench-profile`, bench/report/callgrind.py). Each call goes through an
//! `#[inline(never)]` function named `measured_*`, and callgrind counts only inside those
//! (`--toggle-collect='*measured_*'`): the fresh state each decision gets is made outside.
//!
//! The cases, each recuo's side beside its baseline (bench/src/peers.rs):
//! `decide/<backoff|server-wait|give-up>/<recuo|hand-rolled>` — one decision under guide B's
//! policy, as in benches/decide.rs; `retry-after-seconds/<recuo|std-parse|str-parse>` —
//! `parse_retry_after("120")`, the caller's `str::parse::<u64>` with the trim and × 1000, and
//! the bare `str::parse::<u64>`.
//!
//! It prints `{"calls": N, "allocations": A}`: the allocations made inside the measured
//! calls, counted by this binary's global allocator (`make bench` reports them per decision).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use recuo::{parse_retry_after, Attempts, Decision, JitterRng, Outcome, Policy, Request, Verdict};
use recuo_bench::peers::{hand_rolled, std_seconds_ms, MAX_ATTEMPTS, NOW_MS};

/// Allocations (and reallocations) made so far.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

struct Counting;

// SAFETY: every call goes to the system allocator unchanged; the count is an atomic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Runs `call` and answers the allocations it made.
fn counted(call: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    call();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

const SECONDS: &str = "120";
const UNIX_NOW_MS: i64 = 784_108_800_000;

#[inline(never)]
fn measured_decide(attempts: &mut Attempts, verdict: Verdict, rng: &mut JitterRng) -> Decision {
    attempts.decide(verdict, NOW_MS, rng)
}

#[inline(never)]
fn measured_hand_rolled(n: u32, wait: Option<u64>, rng: &mut JitterRng) -> Option<u64> {
    hand_rolled(n, wait, rng)
}

#[inline(never)]
fn measured_parse_retry_after(value: &str) -> Option<u64> {
    parse_retry_after(value, UNIX_NOW_MS).wait_ms()
}

#[inline(never)]
fn measured_std_seconds(value: &str) -> Option<u64> {
    std_seconds_ms(value)
}

#[inline(never)]
fn measured_str_parse(value: &str) -> Option<u64> {
    value.parse().ok()
}

fn decisions(outcome: &str, side: &str, n: u64) -> u64 {
    let policy = Policy::guide_b();
    let (status, headers, made): (u16, &[(&str, &str)], u32) = match outcome {
        "backoff" => (503, &[], 1),
        "server-wait" => (429, &[("Retry-After", "3")], 1),
        "give-up" => (503, &[], MAX_ATTEMPTS),
        other => panic!("no decision case {other:?}"),
    };
    let verdict = policy.classify(Outcome::Status(status), Request::GET, headers, 0);
    let mut start = Attempts::new(&policy);
    for _ in 0..made {
        start.begin(0).expect("the attempts fit the policy");
    }
    let wait = verdict.server_wait().and_then(|w| w.ms());
    let mut rng = JitterRng::seeded(1);
    let mut allocations = 0;
    for _ in 0..n {
        match side {
            "recuo" => {
                let mut attempts = start.clone();
                allocations += counted(|| {
                    let _ = black_box(measured_decide(&mut attempts, black_box(verdict), &mut rng));
                });
            }
            "hand-rolled" => {
                allocations += counted(|| {
                    black_box(measured_hand_rolled(
                        black_box(made - 1),
                        black_box(wait),
                        &mut rng,
                    ));
                });
            }
            other => panic!("no side {other:?}"),
        }
    }
    allocations
}

fn seconds(side: &str, n: u64) -> u64 {
    let measured = match side {
        "recuo" => measured_parse_retry_after,
        "std-parse" => measured_std_seconds,
        "str-parse" => measured_str_parse,
        other => panic!("no side {other:?}"),
    };
    assert_eq!(measured(SECONDS).map(|s| s.min(120)), Some(120));
    (0..n)
        .map(|_| {
            counted(|| {
                black_box(measured(black_box(SECONDS)));
            })
        })
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, case, n] = &args[..] else {
        panic!("usage: instructions CASE N");
    };
    let n: u64 = n.parse().expect("N is a whole number");
    let parts: Vec<&str> = case.split('/').collect();
    let allocations = match parts[..] {
        ["decide", outcome, side] => decisions(outcome, side, n),
        ["retry-after-seconds", side] => seconds(side, n),
        _ => panic!("no case {case:?}"),
    };
    println!("{{\"calls\": {n}, \"allocations\": {allocations}}}");
}
