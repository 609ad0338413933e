//! The sans-IO state machine (SPEC §6) for C programs that send their own requests (libcurl):
//! they say when each attempt starts and what it came to; the core answers what to do next.

use std::ffi::c_char;

use recuo::{
    AttemptPool, Attempts, Decision, Gate, GiveUpReason, LazyJitterRng, Report, RetryAllowance,
    Verdict,
};

use crate::cenum::{c_enum, name_or_unknown};
use crate::classify::recuo_verdict;
use crate::gate::recuo_gate;
use crate::panic::boundary;
use crate::policy::recuo_policy;
use crate::ptr;
use crate::status::recuo_status::{
    self, RECUO_ERR_ALREADY_STARTED, RECUO_ERR_BUFFER_TOO_SMALL, RECUO_ERR_INVALID_ENUM,
    RECUO_ERR_NULL_ARGUMENT, RECUO_OK,
};

/// The size of the buffer an idempotency key needs: 36 characters and the NUL.
pub const RECUO_IDEMPOTENCY_KEY_SIZE: usize = 37;

/// Why an operation stopped without succeeding (SPEC §6). `0` is "none": not given up.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_give_up_reason {
    /// Not given up: the operation succeeded, or has not stopped.
    RECUO_GIVE_UP_NONE = 0,
    /// The outcome is not worth repeating (4xx, 501, TLS, an unsafe repeat, a verdict that
    /// gave up).
    RECUO_GIVE_UP_PERMANENT = 1,
    /// The attempts are spent (this operation's, or those of the shared attempt pool).
    RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED = 2,
    /// The wait needed would pass the deadline, or the server's wait is unbounded.
    RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE = 3,
    /// A retry budget had no token left (SPEC §9).
    RECUO_GIVE_UP_BUDGET_EXHAUSTED = 4,
    /// The operation was cancelled.
    RECUO_GIVE_UP_CANCELLED = 5,
}

c_enum!(recuo_give_up_reason {
    RECUO_GIVE_UP_NONE => c"none",
    RECUO_GIVE_UP_PERMANENT => c"permanent",
    RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED => c"attempts_exhausted",
    RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE => c"wait_exceeds_deadline",
    RECUO_GIVE_UP_BUDGET_EXHAUSTED => c"budget_exhausted",
    RECUO_GIVE_UP_CANCELLED => c"cancelled",
});

impl recuo_give_up_reason {
    /// The C constant for the core's reason (`None`: not given up).
    pub(crate) fn from_core(r: Option<GiveUpReason>) -> Self {
        match r {
            None => Self::RECUO_GIVE_UP_NONE,
            Some(GiveUpReason::Permanent) => Self::RECUO_GIVE_UP_PERMANENT,
            Some(GiveUpReason::AttemptsExhausted) => Self::RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED,
            Some(GiveUpReason::WaitExceedsDeadline) => Self::RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE,
            Some(GiveUpReason::BudgetExhausted) => Self::RECUO_GIVE_UP_BUDGET_EXHAUSTED,
            Some(GiveUpReason::Cancelled) => Self::RECUO_GIVE_UP_CANCELLED,
        }
    }

    /// The core's reason (`None` for `RECUO_GIVE_UP_NONE`).
    pub(crate) fn to_core(self) -> Option<GiveUpReason> {
        match self {
            Self::RECUO_GIVE_UP_NONE => None,
            Self::RECUO_GIVE_UP_PERMANENT => Some(GiveUpReason::Permanent),
            Self::RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED => Some(GiveUpReason::AttemptsExhausted),
            Self::RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE => Some(GiveUpReason::WaitExceedsDeadline),
            Self::RECUO_GIVE_UP_BUDGET_EXHAUSTED => Some(GiveUpReason::BudgetExhausted),
            Self::RECUO_GIVE_UP_CANCELLED => Some(GiveUpReason::Cancelled),
        }
    }
}

/// What the caller should do next.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_decision_kind {
    /// The operation succeeded: stop.
    RECUO_DECISION_DONE = 1,
    /// Sleep `delay_ms`, then begin attempt `next_attempt` (`recuo_attempts_begin`).
    RECUO_DECISION_RETRY = 2,
    /// Stop without success, for `reason`.
    RECUO_DECISION_GIVE_UP = 3,
    /// (From `recuo_attempts_begin` only.) Make attempt `next_attempt` now.
    RECUO_DECISION_PROCEED = 4,
}

c_enum!(recuo_decision_kind {
    RECUO_DECISION_DONE => c"done",
    RECUO_DECISION_RETRY => c"retry",
    RECUO_DECISION_GIVE_UP => c"give_up",
    RECUO_DECISION_PROCEED => c"proceed",
});

/// A decision of the state machine: a plain struct recuo fills in (every field, every time).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_decision {
    /// What to do: a `recuo_decision_kind` constant (never 0 once recuo filled it).
    pub kind: recuo_decision_kind,
    /// For `RECUO_DECISION_RETRY`: milliseconds to wait before the next attempt; else 0.
    pub delay_ms: u64,
    /// For `RECUO_DECISION_PROCEED` and `RECUO_DECISION_RETRY`: the number of the attempt to
    /// make (now, or after the delay), counted from 0; else 0.
    pub next_attempt: u32,
    /// For `RECUO_DECISION_GIVE_UP`: why; else `RECUO_GIVE_UP_NONE`.
    pub reason: recuo_give_up_reason,
    /// Whether `retry_at_ms` holds an instant.
    pub has_retry_at: bool,
    /// For `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` with a finite wait: the instant, on the
    /// caller's monotonic clock (the `now_ms` given to `recuo_attempts_next`), from which the
    /// server would accept a retry — so the caller can reschedule. Else 0.
    pub retry_at_ms: u64,
}

impl recuo_decision {
    fn proceed(attempt: u32) -> Self {
        recuo_decision {
            kind: recuo_decision_kind::RECUO_DECISION_PROCEED,
            delay_ms: 0,
            next_attempt: attempt,
            reason: recuo_give_up_reason::RECUO_GIVE_UP_NONE,
            has_retry_at: false,
            retry_at_ms: 0,
        }
    }

    /// The C form of the core's decision.
    pub(crate) fn from_core(d: Decision) -> Self {
        let none = Self {
            kind: recuo_decision_kind::RECUO_DECISION_DONE,
            ..Self::proceed(0)
        };
        match d {
            Decision::Done => none,
            Decision::Retry {
                delay_ms,
                next_attempt,
            } => recuo_decision {
                kind: recuo_decision_kind::RECUO_DECISION_RETRY,
                delay_ms,
                next_attempt,
                ..none
            },
            Decision::GiveUp {
                reason,
                retry_at_ms,
            } => recuo_decision {
                kind: recuo_decision_kind::RECUO_DECISION_GIVE_UP,
                reason: recuo_give_up_reason::from_core(Some(reason)),
                has_retry_at: retry_at_ms.is_some(),
                retry_at_ms: retry_at_ms.unwrap_or(0),
                ..none
            },
        }
    }
}

/// What happened to one operation (SPEC §6): a plain struct recuo fills in. The delays
/// themselves are copied into a buffer of yours (see `recuo_attempts_report`, `recuo_retry`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_report {
    /// Attempts made.
    pub attempts: u32,
    /// Why the operation gave up; `RECUO_GIVE_UP_NONE` when it succeeded or has not stopped.
    pub reason: recuo_give_up_reason,
    /// Milliseconds from the start of the first attempt to the last decision (after a
    /// success in `recuo_retry`: to the end of the successful attempt).
    pub elapsed_ms: u64,
    /// How many delays were decided between attempts (each one slept, or to be slept).
    pub delay_count: usize,
    /// Whether `retry_after_ms` holds a wait.
    pub has_retry_after: bool,
    /// For `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` with a finite wait: how many milliseconds
    /// after the give-up the server would accept a retry (clock-independent). Else 0.
    pub retry_after_ms: u64,
}

impl recuo_report {
    /// The C form of the core's report; `retry_after_ms` comes from the give-up decision.
    pub(crate) fn from_core(r: &Report, retry_after_ms: Option<u64>) -> Self {
        recuo_report {
            attempts: r.attempts,
            reason: recuo_give_up_reason::from_core(r.reason),
            elapsed_ms: r.elapsed_ms,
            delay_count: r.delays_ms.len(),
            has_retry_after: retry_after_ms.is_some(),
            retry_after_ms: retry_after_ms.unwrap_or(0),
        }
    }
}

/// Writes the report to `out` and the first delays to `delays` (as many as fit), and their
/// number to `delays_written`.
///
/// # Safety
/// `out` must be a checked output; `delays` must point to `delays_len` writable `uint64_t`s
/// (or be NULL with `delays_len == 0`); `delays_written` NULL or a writable `size_t`.
pub(crate) unsafe fn write_report(
    report: &Report,
    retry_after_ms: Option<u64>,
    out: Option<ptr::Out<recuo_report>>,
    delays: &mut [u64],
    delays_written: *mut usize,
) {
    let n = delays.len().min(report.delays_ms.len());
    delays[..n].copy_from_slice(&report.delays_ms[..n]);
    // SAFETY: the caller vouches for the outputs.
    unsafe {
        if let Some(out) = out {
            out.write(recuo_report::from_core(report, retry_after_ms));
        }
        if let Some(w) = ptr::optional_out(delays_written) {
            w.write(n);
        }
    }
}

/// A shared count of attempts, so that nested retry loops share one limit (SPEC §6): in C
/// this is explicit — create one pool for the outermost operation, sized by its policy's
/// attempts, and hand the same pool to the inner ones (`recuo_attempts_set_pool`,
/// `recuo_retry_options_set_pool`). Backed by a `recuo::AttemptPool` (an atomic count).
///
/// Safe to use from several threads at once. Free it with `recuo_attempt_pool_free`; the
/// state machines and options it was given to keep their own reference, so it may be freed
/// before them.
#[derive(Debug, Clone)]
pub struct recuo_attempt_pool(pub(crate) AttemptPool);

/// A new pool of `attempts` attempts (0 is allowed: every draw fails). Free it with
/// `recuo_attempt_pool_free`. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_attempt_pool_new(attempts: u32) -> *mut recuo_attempt_pool {
    boundary(|| Box::into_raw(Box::new(recuo_attempt_pool(AttemptPool::new(attempts)))))
}

/// Releases a pool handle (the count lives on while a state machine or options use it).
/// NULL is accepted and ignored.
///
/// # Safety
/// `pool` must be NULL or come from `recuo_attempt_pool_new` and not have been freed.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempt_pool_free(pool: *mut recuo_attempt_pool) {
    boundary(|| {
        if !pool.is_null() {
            // SAFETY: the caller vouches that it came from Box::into_raw and is freed once.
            drop(unsafe { Box::from_raw(pool) });
        }
    })
}

/// Attempts left in the pool. 0 when `pool` is NULL.
///
/// # Safety
/// `pool` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempt_pool_remaining(pool: *const recuo_attempt_pool) -> u32 {
    // SAFETY: the caller vouches for NULL or a live handle.
    boundary(|| unsafe { pool.as_ref() }.map_or(0, |p| p.0.remaining()))
}

/// The retry state of one operation: a `recuo::Attempts` (holding its own copy of the
/// policy, the attempts begun, the delays, the reason) plus the jitter generator and the last
/// give-up's wait. One handle per operation; use it from one thread at a time.
///
/// The loop: `recuo_attempts_begin` (PROCEED: make the attempt; GIVE_UP: stop) → your request
/// → `recuo_classify` → `recuo_attempts_next` (DONE, GIVE_UP: stop; RETRY: sleep
/// `delay_ms`, then begin again). Times are milliseconds on a monotonic clock of your choice
/// (`recuo_monotonic_ms`, `CLOCK_MONOTONIC`, a fake clock in tests).
#[derive(Debug)]
pub struct recuo_attempts {
    machine: Attempts,
    rng: LazyJitterRng,
    retry_after_ms: Option<u64>,
}

/// Creates the state machine of one operation under `policy` (copied: the policy may be
/// changed or freed afterwards) and stores it in `*out`. The jitter (and the idempotency key)
/// is drawn from a generator seeded by the operating system at its first use.
///
/// Returns `RECUO_OK`; the policy's configuration error (e.g. `RECUO_ERR_CAP_BELOW_BASE`);
/// `RECUO_ERR_NULL_ARGUMENT` when `policy` or `out` is NULL (then `*out` is untouched).
/// Free the handle with `recuo_attempts_free`.
///
/// # Safety
/// `policy` must be NULL or a live handle; `out` NULL or a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_new(
    policy: *const recuo_policy,
    out: *mut *mut recuo_attempts,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { new_attempts(policy, None, out) }
}

/// `recuo_attempts_new` with the jitter drawn from a generator seeded with `seed`: the same
/// calls give the same delays on every run (for exact tests). The idempotency key never comes
/// from the seed: it is the operating system's, new for every machine (SPEC §5).
///
/// # Safety
/// As `recuo_attempts_new`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_new_seeded(
    policy: *const recuo_policy,
    seed: u64,
    out: *mut *mut recuo_attempts,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { new_attempts(policy, Some(seed), out) }
}

/// # Safety
/// As `recuo_attempts_new`.
unsafe fn new_attempts(
    policy: *const recuo_policy,
    seed: Option<u64>,
    out: *mut *mut recuo_attempts,
) -> recuo_status {
    boundary(|| {
        // SAFETY: forwarded from the caller.
        let checked = unsafe {
            (|| -> Result<_, recuo_status> { Ok((ptr::out(out)?, ptr::input(policy)?.policy()?)) })(
            )
        };
        let (out, policy) = match checked {
            Ok(checked) => checked,
            Err(status) => return status,
        };
        let handle = Box::new(recuo_attempts {
            machine: Attempts::new(policy),
            rng: LazyJitterRng::new(seed),
            retry_after_ms: None,
        });
        // SAFETY: the caller vouches for a writable pointer at `out`.
        unsafe { out.write(Box::into_raw(handle)) };
        RECUO_OK
    })
}

/// Releases a state machine. NULL is accepted and ignored.
///
/// # Safety
/// `attempts` must be NULL or come from `recuo_attempts_new*` and not have been freed.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_free(attempts: *mut recuo_attempts) {
    boundary(|| {
        if !attempts.is_null() {
            // SAFETY: the caller vouches that it came from Box::into_raw and is freed once.
            drop(unsafe { Box::from_raw(attempts) });
        }
    })
}

/// Makes this operation draw its attempts from `pool` (nested loops share one limit, SPEC §6).
/// `nested` = false for the outermost operation (each of its attempts takes one from the
/// pool); true for an operation running inside an attempt of an enclosing one that already
/// took from the pool: its first attempt is that one and takes nothing, the later ones take
/// one each. When the pool is empty, `recuo_attempts_begin` gives up with
/// `RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED` (and `recuo_attempts_next` does not ask for a retry).
///
/// Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED` once an attempt has begun (nothing
/// changes); `RECUO_ERR_NULL_ARGUMENT`. The machine keeps its own reference to the pool.
///
/// # Safety
/// `attempts` and `pool` must each be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_pool(
    attempts: *mut recuo_attempts,
    pool: *const recuo_attempt_pool,
    nested: bool,
) -> recuo_status {
    boundary(|| {
        // SAFETY: the caller vouches for NULL or live handles.
        let (a, pool) = match unsafe { (ptr::handle(attempts), ptr::input(pool)) } {
            (Ok(a), Ok(pool)) => (a, pool),
            _ => return RECUO_ERR_NULL_ARGUMENT,
        };
        if a.machine.attempts() > 0 {
            return RECUO_ERR_ALREADY_STARTED;
        }
        a.machine = a.machine.clone().with_pool(pool.0.clone(), nested);
        RECUO_OK
    })
}

/// Asks to start the next attempt at `now_ms` (monotonic milliseconds) and stores the answer
/// in `*out`: `RECUO_DECISION_PROCEED` with the attempt's number in `next_attempt` (make it
/// now), or `RECUO_DECISION_GIVE_UP` with `reason` cancelled (after `recuo_attempts_cancel`)
/// or attempts_exhausted (this operation's, or the shared pool's).
///
/// Returns `RECUO_OK`, or `RECUO_ERR_NULL_ARGUMENT` (nothing changes, `*out` untouched).
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread; `out` NULL or a
/// writable `recuo_decision`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_begin(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    out: *mut recuo_decision,
) -> recuo_status {
    boundary(|| {
        // SAFETY: the caller vouches for NULL or live pointers.
        let (a, out) = match unsafe { (ptr::handle(attempts), ptr::out(out)) } {
            (Ok(a), Ok(out)) => (a, out),
            _ => return RECUO_ERR_NULL_ARGUMENT,
        };
        let decision = match a.machine.begin(now_ms) {
            Ok(n) => recuo_decision::proceed(n),
            Err(d) => recuo_decision::from_core(d),
        };
        // SAFETY: the caller vouches for a writable recuo_decision.
        unsafe { out.write(decision) };
        RECUO_OK
    })
}

/// Decides what follows the attempt just made, whose verdict is `*verdict` (from
/// `recuo_classify`, or written by hand), at `now_ms` (monotonic milliseconds, the same clock
/// as `recuo_attempts_begin`), and stores the decision in `*out`:
///
/// * `RECUO_DECISION_DONE`: the verdict was a success.
/// * `RECUO_DECISION_RETRY`: sleep `delay_ms` (the backoff of the policy, or the server's wait
///   plus the spread — never shortened by the cap), then `recuo_attempts_begin` again.
/// * `RECUO_DECISION_GIVE_UP`: stop; `reason` says why (permanent for a verdict that gave up;
///   attempts_exhausted; wait_exceeds_deadline, with `retry_at_ms` when the wait was finite;
///   cancelled).
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` when a field of `*verdict` is none of its
/// constants; `RECUO_ERR_NULL_ARGUMENT`. On an error nothing changes and `*out` is untouched.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread; `verdict` NULL or a
/// readable `recuo_verdict`; `out` NULL or a writable `recuo_decision`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_next(
    attempts: *mut recuo_attempts,
    verdict: *const recuo_verdict,
    now_ms: u64,
    out: *mut recuo_decision,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { next(attempts, verdict, now_ms, None, out) }
}

/// `recuo_attempts_next` for an attempt that passed `gate` (`recuo_gate_enter`): a retry
/// also takes a token from the gate's budget — none left, and the decision is
/// `RECUO_DECISION_GIVE_UP` with `RECUO_GIVE_UP_BUDGET_EXHAUSTED` — and the gate's regulator,
/// when adaptive, slows down on a `RECUO_CAUSE_RATE_LIMITED` verdict and speeds back up on a
/// success. `gate` may be NULL (then this is `recuo_attempts_next`). The same returns as
/// `recuo_attempts_next`; on an error nothing changes, in the machine or the gate.
///
/// # Safety
/// As `recuo_attempts_next`; `gate` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_next_with_gate(
    attempts: *mut recuo_attempts,
    verdict: *const recuo_verdict,
    now_ms: u64,
    gate: *const recuo_gate,
    out: *mut recuo_decision,
) -> recuo_status {
    boundary(|| {
        // SAFETY: the caller vouches for NULL or a live gate.
        let gate = unsafe { gate.as_ref() }.map(recuo_gate::gate);
        // SAFETY: forwarded from the caller.
        unsafe { next(attempts, verdict, now_ms, gate, out) }
    })
}

/// The body of `recuo_attempts_next` and `recuo_attempts_next_with_gate`.
///
/// # Safety
/// As `recuo_attempts_next`.
unsafe fn next(
    attempts: *mut recuo_attempts,
    verdict: *const recuo_verdict,
    now_ms: u64,
    gate: Option<&Gate>,
    out: *mut recuo_decision,
) -> recuo_status {
    boundary(|| {
        // SAFETY: the caller vouches for NULL or live pointers.
        let (a, out) = match unsafe { (ptr::handle(attempts), ptr::out(out)) } {
            (Ok(a), Ok(out)) if !verdict.is_null() => (a, out),
            _ => return RECUO_ERR_NULL_ARGUMENT,
        };
        // SAFETY: non-NULL, and the caller vouches for a readable recuo_verdict.
        let Some(verdict) = (unsafe { recuo_verdict::read(verdict) }) else {
            return RECUO_ERR_INVALID_ENUM;
        };
        if let Some(g) = gate {
            match verdict {
                Verdict::Success => g.on_success(),
                v => g.on_verdict(&v),
            }
        }
        let allowance = gate
            .and_then(Gate::budget)
            .map(|b| b as &dyn RetryAllowance);
        let decision = a
            .machine
            .decide_with(verdict, now_ms, &mut a.rng, allowance);
        if let Decision::GiveUp { retry_at_ms, .. } = decision {
            a.retry_after_ms = retry_at_ms.map(|at| at.saturating_sub(now_ms));
        }
        // SAFETY: the caller vouches for a writable recuo_decision.
        unsafe { out.write(recuo_decision::from_core(decision)) };
        RECUO_OK
    })
}

/// Marks the operation cancelled: the next `recuo_attempts_begin` or `recuo_attempts_next`
/// (for a verdict that would retry) gives up with `RECUO_GIVE_UP_CANCELLED`. Call it on the
/// thread that drives the machine (from another thread, set a flag of yours and call it
/// there; `recuo_retry` has `recuo_cancel_token` for that). Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_cancel(attempts: *mut recuo_attempts) -> recuo_status {
    // SAFETY: the caller vouches for NULL or a live handle.
    boundary(|| match unsafe { ptr::handle(attempts) } {
        Ok(a) => {
            a.machine.cancel();
            RECUO_OK
        }
        Err(status) => status,
    })
}

/// Gives up because the attempt just begun could not start: it was cancelled while waiting
/// at the gate (`recuo_gate_enter` answered `RECUO_CANCELLED`). Unlike
/// `recuo_attempts_cancel`, that attempt is not counted (it was never made). Stores the
/// decision — `RECUO_DECISION_GIVE_UP` with `RECUO_GIVE_UP_CANCELLED` — in `*out`, at
/// `now_ms`. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT` (nothing changes).
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread; `out` NULL or a
/// writable `recuo_decision`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_cancel_before_start(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    out: *mut recuo_decision,
) -> recuo_status {
    boundary(|| {
        // SAFETY: the caller vouches for NULL or live pointers.
        let (a, out) = match unsafe { (ptr::handle(attempts), ptr::out(out)) } {
            (Ok(a), Ok(out)) => (a, out),
            _ => return RECUO_ERR_NULL_ARGUMENT,
        };
        a.machine.cancel();
        let decision = a.machine.refuse_cancelled(now_ms);
        // SAFETY: the caller vouches for a writable recuo_decision.
        unsafe { out.write(recuo_decision::from_core(decision)) };
        RECUO_OK
    })
}

/// Writes the operation's idempotency key into `buf` (`len` bytes, at least
/// `RECUO_IDEMPOTENCY_KEY_SIZE` = 37): a UUID v4 of 36 lower-case characters
/// (`xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`) and a NUL. It is created at the first call
/// and the same on every later call for this operation; send it with every attempt, in the
/// header named by `recuo_policy_idempotency_header`, and never with another operation.
/// `*written` (when not NULL) receives 36.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` when `len < 37` — then nothing at all is
/// written (a truncated key must never be sent); `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread; `buf` must point to
/// `len` writable bytes; `written` NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_idempotency_key(
    attempts: *mut recuo_attempts,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    boundary(|| {
        // SAFETY: the caller vouches for NULL or a live handle.
        let a = match unsafe { ptr::handle(attempts) } {
            Ok(a) if !buf.is_null() => a,
            _ => return RECUO_ERR_NULL_ARGUMENT,
        };
        if len < RECUO_IDEMPOTENCY_KEY_SIZE {
            return RECUO_ERR_BUFFER_TOO_SMALL;
        }
        let key = a.machine.idempotency_key(&mut a.rng);
        let text = key.as_str().as_bytes();
        // SAFETY: `buf` holds at least 37 writable bytes (the caller vouches for `len`).
        unsafe {
            let dst = std::slice::from_raw_parts_mut(buf.cast::<u8>(), text.len() + 1);
            dst[..text.len()].copy_from_slice(text);
            dst[text.len()] = 0;
            if let Some(w) = ptr::optional_out(written) {
                w.write(text.len());
            }
        }
        RECUO_OK
    })
}

/// The operation so far: stores the report in `*out`, copies the first
/// `min(delays_len, out->delay_count)` delays (milliseconds, in order) into `delays`, and
/// stores how many were copied in `*delays_written` (when not NULL). Copying fewer delays than
/// there are is not an error: compare `*delays_written` with `out->delay_count`. `delays` may
/// be NULL when `delays_len` is 0.
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`attempts`, `out`, or `delays` with
/// `delays_len > 0`); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error nothing is written.
///
/// # Safety
/// `attempts` must be NULL or a live handle; `out` NULL or a writable `recuo_report`;
/// `delays` must point to `delays_len` writable `uint64_t`s (or be NULL with `delays_len ==
/// 0`); `delays_written` NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_report(
    attempts: *const recuo_attempts,
    out: *mut recuo_report,
    delays: *mut u64,
    delays_len: usize,
    delays_written: *mut usize,
) -> recuo_status {
    boundary(|| {
        // SAFETY: the caller vouches for every pointer (see # Safety).
        let checked = unsafe {
            (|| -> Result<_, recuo_status> {
                Ok((
                    ptr::input(attempts)?,
                    ptr::out(out)?,
                    ptr::slice_mut(delays, delays_len)?,
                ))
            })()
        };
        let (a, out, delays) = match checked {
            Ok(checked) => checked,
            Err(status) => return status,
        };
        let report = a.machine.report();
        // SAFETY: checked outputs; the caller vouches for `delays_written`.
        unsafe { write_report(&report, a.retry_after_ms, Some(out), delays, delays_written) };
        RECUO_OK
    })
}

/// The name of the `recuo_give_up_reason` constant `reason` (`"none"`, `"permanent"`,
/// `"attempts_exhausted"`, `"wait_exceeds_deadline"`, `"budget_exhausted"`, `"cancelled"`:
/// the names every language uses), or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_give_up_reason_name(reason: u32) -> *const c_char {
    boundary(|| {
        name_or_unknown(
            reason,
            recuo_give_up_reason::from_code,
            recuo_give_up_reason::name,
        )
    })
}

/// The name of the `recuo_decision_kind` constant `kind` (`"done"`, `"retry"`, `"give_up"`,
/// `"proceed"`), or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_decision_kind_name(kind: u32) -> *const c_char {
    boundary(|| {
        name_or_unknown(
            kind,
            recuo_decision_kind::from_code,
            recuo_decision_kind::name,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{recuo_policy_free, recuo_policy_new};
    use recuo::{Cause, Verdict};

    #[test]
    fn reason_names_are_the_core_names() {
        use GiveUpReason::*;
        for r in [
            Permanent,
            AttemptsExhausted,
            WaitExceedsDeadline,
            BudgetExhausted,
            Cancelled,
        ] {
            assert_eq!(
                recuo_give_up_reason::from_core(Some(r)).name().to_str(),
                Ok(r.name())
            );
        }
        assert_eq!(RECUO_IDEMPOTENCY_KEY_SIZE, 37);
    }

    #[test]
    fn the_machine_is_the_core_machine() {
        let p = recuo_policy_new();
        let mut a = std::ptr::null_mut();
        let retry = recuo_verdict::from_core(Verdict::Retry {
            cause: Cause::ServerError,
            server_wait: None,
        });
        let mut d = recuo_decision::proceed(9);
        // SAFETY: live handles and structs.
        unsafe {
            assert_eq!(recuo_attempts_new_seeded(p, 5, &mut a), RECUO_OK);
            recuo_policy_free(p);
            let mut core = Attempts::new(&recuo::Policy::guide_a());
            let mut rng = recuo::JitterRng::seeded(5);
            for now in [0, 1000, 2000, 3000, 4000] {
                assert_eq!(recuo_attempts_begin(a, now, &mut d), RECUO_OK);
                assert_eq!(d, recuo_decision::proceed(core.begin(now).unwrap()));
                assert_eq!(recuo_attempts_next(a, &retry, now + 10, &mut d), RECUO_OK);
                let expected = core.decide(
                    Verdict::Retry {
                        cause: Cause::ServerError,
                        server_wait: None,
                    },
                    now + 10,
                    &mut rng,
                );
                assert_eq!(d, recuo_decision::from_core(expected));
            }
            assert_eq!(
                d.reason,
                recuo_give_up_reason::RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED
            );
            let mut r = recuo_report::from_core(&Report::default(), None);
            let mut delays = [0u64; 8];
            let mut n = 0;
            let rc = recuo_attempts_report(a, &mut r, delays.as_mut_ptr(), 8, &mut n);
            assert_eq!(rc, RECUO_OK);
            let core_report = core.report();
            assert_eq!(r, recuo_report::from_core(&core_report, None));
            assert_eq!(&delays[..n], &core_report.delays_ms[..]);
            recuo_attempts_free(a);
        }
    }
}
