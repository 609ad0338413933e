//! A decision of the state machine allocates nothing (issue 18): `Attempts::decide` keeps the
//! delays of up to 8 retries in place, and past them makes room once for the rest. Counted by
//! a global allocator that counts each thread's allocations, so that the other tests of this
//! binary, running on their own threads, never count here.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;

use recuo::{Attempts, Decision, JitterRng, Outcome, Policy, Request};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call goes to the system allocator unchanged; the count is a thread-local
// `Cell` with a const initializer, which itself never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

/// Runs one operation to its end, every attempt failing with a 503 (or a 429 with a
/// server wait, every other one); answers the allocations made by its decisions alone, and
/// the delays decided.
fn decisions_allocate(policy: &Policy) -> (usize, Vec<u64>) {
    let none: &[(&str, &str)] = &[];
    let retry_503 = policy.classify(Outcome::Status(503), Request::GET, none, 0);
    let retry_429 = policy.classify(
        Outcome::Status(429),
        Request::GET,
        &[("Retry-After", "1")],
        0,
    );
    let mut attempts = Attempts::new(policy);
    let mut rng = JitterRng::seeded(18);
    let (mut spent, mut delays, mut now) = (0, Vec::with_capacity(64), 0);
    loop {
        let n = attempts.begin(now).expect("the attempts fit the policy");
        let verdict = if n % 2 == 0 { retry_503 } else { retry_429 };
        let before = allocations();
        let decision = attempts.decide(verdict, now, &mut rng);
        spent += allocations() - before;
        match decision {
            Decision::Retry { delay_ms, .. } => {
                delays.push(delay_ms);
                now += delay_ms;
            }
            Decision::GiveUp { .. } => break,
            Decision::Done => unreachable!("every attempt fails"),
        }
    }
    assert_eq!(
        attempts.report().delays_ms,
        delays,
        "the report lists every delay"
    );
    (spent, delays)
}

#[test]
fn guide_b_decides_without_allocating() {
    let (spent, delays) = decisions_allocate(&Policy::guide_b());
    assert_eq!(delays.len(), 4);
    assert_eq!(spent, 0, "allocations in 4 decisions");
    let (spent, delays) = decisions_allocate(&Policy::guide_a());
    assert_eq!((spent, delays.len()), (0, 4));
}

#[test]
fn nine_attempts_fit_in_place() {
    let policy = Policy::builder().max_attempts(9).build().unwrap();
    let (spent, delays) = decisions_allocate(&policy);
    assert_eq!((spent, delays.len()), (0, 8));
}

#[test]
fn more_attempts_allocate_once_per_operation() {
    let policy = Policy::builder()
        .max_attempts(40)
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(4))
        .build()
        .unwrap();
    let (spent, delays) = decisions_allocate(&policy);
    assert_eq!(delays.len(), 39);
    assert_eq!(spent, 1, "one allocation for the 39 decisions");
}
