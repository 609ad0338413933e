//! `recuo_attempts_*`: the operation machine for C programs that send their own requests
//! (libcurl) — `Operation` in every other language. The handle is a `recuo::Operation`: the program tells it what
//! happened, it answers the next step. The machine owns the attempts, the delays, their
//! order, the gate's feedback and the budget, the stats, the records and the report;
//! these shims only convert.

use recuo::{
    GatePoll, GiveUpReason, IdempotencyKey, Level, Operation, Policy, RegulatorError, Report, Seen,
    Step, Verdict,
};

use recuo::telemetry::telemetry;

use crate::prelude::*;

/// The size of the buffer an idempotency key needs: 36 characters and the NUL.
pub const RECUO_IDEMPOTENCY_KEY_SIZE: usize = 37;

/// Why an operation stopped without succeeding. `0` is "none": not given up.
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
    /// A retry budget had no token left.
    RECUO_GIVE_UP_BUDGET_EXHAUSTED = 4,
    /// The operation was cancelled by its caller.
    RECUO_GIVE_UP_CANCELLED = 5,
    /// The batch queue the operation belongs to stopped, on another operation's reason
    /// (`stopped_by`).
    RECUO_GIVE_UP_QUEUE_STOPPED = 6,
}

c_enum!(recuo_give_up_reason: Option<GiveUpReason> {
    RECUO_GIVE_UP_NONE = [None] => c"none",
    RECUO_GIVE_UP_PERMANENT = [Some(GiveUpReason::Permanent)] => c"permanent",
    RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED = [Some(GiveUpReason::AttemptsExhausted)]
        => c"attempts_exhausted",
    RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE = [Some(GiveUpReason::WaitExceedsDeadline)]
        => c"wait_exceeds_deadline",
    RECUO_GIVE_UP_BUDGET_EXHAUSTED = [Some(GiveUpReason::BudgetExhausted)] => c"budget_exhausted",
    RECUO_GIVE_UP_CANCELLED = [Some(GiveUpReason::Cancelled)] => c"cancelled",
    RECUO_GIVE_UP_QUEUE_STOPPED = [Some(GiveUpReason::QueueStopped)] => c"queue_stopped",
});

impl recuo_give_up_reason {
    /// The core's reason for the C number `code`: `RECUO_ERR_INVALID_ENUM` for a number that
    /// is no constant, and for `RECUO_GIVE_UP_NONE`.
    pub(crate) fn reason_of(code: u32) -> Result<GiveUpReason, recuo_status> {
        Self::core_of(code)?.ok_or(RECUO_ERR_INVALID_ENUM)
    }
}

/// What the machine asks for next (`recuo::Step`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_step_kind {
    /// Pass the gate for attempt `attempt` (a place in flight, then a start slot), giving up
    /// the wait at `until_ms` when `has_until`; then `recuo_attempts_entered`.
    RECUO_STEP_ENTER = 1,
    /// Make attempt `attempt` now, bounded by `timeout_ms` when `has_timeout` (what is left
    /// of the deadline); then `recuo_attempts_responded` (HTTP), `_succeeded` or `_failed`.
    RECUO_STEP_CALL = 2,
    /// Judge the failure of attempt `attempt`: `recuo_attempts_judged` with a verdict.
    RECUO_STEP_CLASSIFY = 3,
    /// Attempt `attempt` failed and is retried: wait `delay_ms` (nothing when 0), waking
    /// early on a cancellation, then `recuo_attempts_slept`.
    RECUO_STEP_SLEEP = 4,
    /// The operation succeeded: `recuo_attempts_report` tells how.
    RECUO_STEP_DONE = 5,
    /// The operation stopped without success, for `reason` (with `retry_at_ms` when
    /// `has_retry_at`).
    RECUO_STEP_GAVE_UP = 6,
}

c_enum!(recuo_step_kind {
    RECUO_STEP_ENTER => c"enter",
    RECUO_STEP_CALL => c"call",
    RECUO_STEP_CLASSIFY => c"classify",
    RECUO_STEP_SLEEP => c"sleep",
    RECUO_STEP_DONE => c"done",
    RECUO_STEP_GAVE_UP => c"gave_up",
});

/// A step of the operation machine: a plain struct recuo fills in (every field, every
/// time; the fields a kind does not use are 0).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_step {
    /// A `recuo_step_kind` constant.
    pub kind: recuo_step_kind,
    /// The attempt the step is about, from 0 (for DONE and GAVE_UP: the last one).
    pub attempt: u32,
    /// For `RECUO_STEP_SLEEP`: the delay, ms.
    pub delay_ms: u64,
    /// Whether `until_ms` holds an instant.
    pub has_until: bool,
    /// For `RECUO_STEP_ENTER`: the deadline's instant on the caller's monotonic clock.
    pub until_ms: u64,
    /// Whether `timeout_ms` holds a time.
    pub has_timeout: bool,
    /// For `RECUO_STEP_CALL`: what is left of the deadline, ms.
    pub timeout_ms: u64,
    /// For `RECUO_STEP_GAVE_UP`: why; else `RECUO_GIVE_UP_NONE`.
    pub reason: recuo_give_up_reason,
    /// Whether `retry_at_ms` holds an instant.
    pub has_retry_at: bool,
    /// For `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` with a finite wait: the instant on the
    /// caller's monotonic clock from which the server would accept a retry.
    pub retry_at_ms: u64,
}

impl recuo_step {
    /// The C form of the core's step.
    pub(crate) fn from_core(step: &Step) -> Self {
        use recuo_step_kind::*;
        let (kind, attempt) = match *step {
            Step::Enter { attempt, .. } => (RECUO_STEP_ENTER, attempt),
            Step::Call { attempt, .. } => (RECUO_STEP_CALL, attempt),
            Step::Classify { attempt } => (RECUO_STEP_CLASSIFY, attempt),
            Step::Sleep { attempt, .. } => (RECUO_STEP_SLEEP, attempt),
            Step::Done(ref r) => (RECUO_STEP_DONE, r.attempts.saturating_sub(1)),
            Step::GaveUp { ref report, .. } => {
                (RECUO_STEP_GAVE_UP, report.attempts.saturating_sub(1))
            }
        };
        let (until, timeout, delay_ms, reason, retry_at) = match *step {
            Step::Enter { until_ms, .. } => (until_ms, None, 0, None, None),
            Step::Call { timeout_ms, .. } => (None, timeout_ms, 0, None, None),
            Step::Sleep { delay_ms, .. } => (None, None, delay_ms, None, None),
            Step::GaveUp {
                reason,
                retry_at_ms,
                ..
            } => (None, None, 0, Some(reason), retry_at_ms),
            Step::Classify { .. } | Step::Done(_) => (None, None, 0, None, None),
        };
        recuo_step {
            kind,
            attempt,
            delay_ms,
            has_until: until.is_some(),
            until_ms: until.unwrap_or(0),
            has_timeout: timeout.is_some(),
            timeout_ms: timeout.unwrap_or(0),
            reason: recuo_give_up_reason::from_core(reason),
            has_retry_at: retry_at.is_some(),
            retry_at_ms: retry_at.unwrap_or(0),
        }
    }
}

/// How much a record matters, as a logger ranks it. `0` is "none".
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_level {
    /// No record (`recuo_attempts_poll_record` had none left; `recuo_attempts_set_records`:
    /// keep none).
    RECUO_LEVEL_NONE = 0,
    /// An attempt that succeeded; the result of an operation done at its first attempt.
    RECUO_LEVEL_DEBUG = 1,
    /// An attempt retried or given up on; the result of an operation that needed retries.
    RECUO_LEVEL_INFO = 2,
    /// The result of an operation that gave up.
    RECUO_LEVEL_WARNING = 3,
}

c_enum!(recuo_level: Option<Level> {
    RECUO_LEVEL_NONE = [None] => c"none",
    RECUO_LEVEL_DEBUG = [Some(Level::Debug)] => c"debug",
    RECUO_LEVEL_INFO = [Some(Level::Info)] => c"info",
    RECUO_LEVEL_WARNING = [Some(Level::Warning)] => c"warning",
});

/// What happened to one operation: a plain struct recuo fills in. The delays
/// themselves are copied into a buffer of yours (see `recuo_attempts_report`, `recuo_retry`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_report {
    /// Attempts made.
    pub attempts: u32,
    /// Why the operation gave up; `RECUO_GIVE_UP_NONE` when it succeeded or has not stopped.
    pub reason: recuo_give_up_reason,
    /// Milliseconds from the start of the operation to its last step.
    pub elapsed_ms: u64,
    /// How many delays were decided between attempts (each one slept, or to be slept).
    pub delay_count: usize,
    /// Whether `retry_after_ms` holds a wait.
    pub has_retry_after: bool,
    /// For `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` with a finite wait: how many milliseconds
    /// after the give-up the server would accept a retry (clock-independent). Else 0.
    pub retry_after_ms: u64,
    /// For `RECUO_GIVE_UP_QUEUE_STOPPED`: the reason that stopped the queue; else
    /// `RECUO_GIVE_UP_NONE`.
    pub stopped_by: recuo_give_up_reason,
    /// Whether `retry_at_unix_ms` holds an instant.
    pub has_retry_at_unix_ms: bool,
    /// For `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` with a finite wait: when the server would
    /// accept a retry, in milliseconds since the Unix epoch (on the wall clock the operation
    /// was started with). Else 0.
    pub retry_at_unix_ms: i64,
}

impl recuo_report {
    /// The C form of the core's report; `retry_after_ms` comes from the give-up.
    pub(crate) fn from_core(r: &Report, retry_after_ms: Option<u64>) -> Self {
        recuo_report {
            attempts: r.attempts,
            reason: recuo_give_up_reason::from_core(r.reason),
            elapsed_ms: r.elapsed_ms,
            delay_count: r.delays_ms.len(),
            has_retry_after: retry_after_ms.is_some(),
            retry_after_ms: retry_after_ms.unwrap_or(0),
            stopped_by: recuo_give_up_reason::from_core(r.stopped_by),
            has_retry_at_unix_ms: r.retry_at_unix_ms.is_some(),
            retry_at_unix_ms: r.retry_at_unix_ms.unwrap_or(0),
        }
    }
}

/// Writes the report to `out` and the first delays to `delays` (as many as fit), and their
/// number to `delays_written`.
///
/// # Safety
/// `out` must be NULL or writable; `delays_written` NULL or a writable `size_t`.
pub(crate) unsafe fn write_report(
    report: &Report,
    retry_after_ms: Option<u64>,
    out: *mut recuo_report,
    delays: &mut [u64],
    delays_written: *mut usize,
) {
    let n = delays.len().min(report.delays_ms.len());
    delays[..n].copy_from_slice(&report.delays_ms[..n]);
    // SAFETY: the caller vouches for the outputs.
    unsafe {
        ptr::put(out, recuo_report::from_core(report, retry_after_ms));
        ptr::put(delays_written, n);
    }
}

/// The operation machine: the one that Rust, Python, PHP and JavaScript call `Operation`,
/// named `recuo_attempts` in C because `recuo_operation_fn` is already the type of the
/// operation `recuo_retry` calls. One handle per operation (its own copy of the policy, the
/// attempts, the delays, the gate, stats and records it was given, the wait left after a
/// `wait_exceeds_deadline` give-up, and a record polled into a buffer too small for it); use
/// it from one thread at a time.
///
/// The loop (`recuo_step`): `recuo_attempts_start` → ENTER: pass the gate,
/// `recuo_attempts_entered` → CALL: make the attempt, `recuo_attempts_responded` (or
/// `_succeeded` / `_failed` → CLASSIFY: `recuo_attempts_judged`) → SLEEP: wait,
/// `recuo_attempts_slept` → … → DONE or GAVE_UP. Times are milliseconds on a monotonic clock
/// of your choice (`recuo_monotonic_ms`, `CLOCK_MONOTONIC`, a fake clock in tests).
#[derive(Debug)]
pub struct recuo_attempts {
    pub(crate) op: Operation,
    started: bool,
    retry_after_ms: Option<u64>,
    polled: Polled,
}

impl recuo_attempts {
    /// Keeps what `step`, answered at `now_ms` by a machine that was `finished` before, leaves
    /// for later (the wait of a first give-up), and answers its C form.
    fn answered(&mut self, now_ms: u64, finished: bool, step: &Step) -> recuo_step {
        self.started = true;
        if let (Step::GaveUp { retry_at_ms, .. }, false) = (step, finished) {
            self.retry_after_ms = retry_at_ms.map(|at| at.saturating_sub(now_ms));
        }
        recuo_step::from_core(step)
    }

    /// Changes the machine before its start (`RECUO_ERR_ALREADY_STARTED` after).
    pub(crate) fn build(&mut self, change: impl FnOnce(Operation) -> Operation) -> recuo_status {
        if self.started {
            return RECUO_ERR_ALREADY_STARTED;
        }
        let op = std::mem::replace(&mut self.op, Operation::new(&Policy::default()));
        self.op = change(op);
        RECUO_OK
    }
}

/// Creates the machine of one operation under `policy` (copied: the policy may be changed
/// or freed afterwards) and stores it in `*out`; jitter from the operating system's entropy.
/// Free it with `recuo_attempts_free`.
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT`; the policy's configuration error (then
/// `*out` is untouched).
///
/// # Safety
/// `policy` must be NULL or a live handle; `out` NULL or a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_new(
    policy: *const recuo_policy,
    out: *mut *mut recuo_attempts,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { make(policy, None, out) }
}

/// `recuo_attempts_new` with the jitter drawn from a generator seeded with `seed` (the same
/// seed and outcomes give the same delays on every run and in every language). The
/// idempotency key still comes from the operating system's random source.
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
    unsafe { make(policy, Some(seed), out) }
}

/// The body of `recuo_attempts_new` and `recuo_attempts_new_seeded`.
///
/// # Safety
/// As `recuo_attempts_new`.
unsafe fn make(
    policy: *const recuo_policy,
    seed: Option<u64>,
    out: *mut *mut recuo_attempts,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    // Boxed where it is made: the machine is large, and a move through `ptr::make`'s
    // `Result` would copy it once more.
    unsafe {
        ptr::fill(out, || {
            let op = Operation::new(ptr::input(policy)?.policy()?).seed(seed);
            Ok(Box::into_raw(Box::new(recuo_attempts {
                op,
                started: false,
                retry_after_ms: None,
                polled: Polled::default(),
            })))
        })
    }
}

/// Releases a machine. NULL is accepted and ignored.
///
/// # Safety
/// `attempts` must be NULL or come from `recuo_attempts_new*` and not have been freed.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_free(attempts: *mut recuo_attempts) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(attempts) })
}

/// Changes the machine behind `attempts` before its start with `change`, given `arg`, read
/// first (its error comes first; then nothing changes).
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread.
pub(crate) unsafe fn build<V>(
    attempts: *mut recuo_attempts,
    arg: Result<V, recuo_status>,
    change: impl FnOnce(Operation, V) -> Operation,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_read(attempts, arg, |a, arg| a.build(|op| change(op, arg))) }
}

/// Makes this operation draw its attempts from `pool` (nested loops share one limit).
/// `nested` = false for the outermost operation (each of its attempts takes one from the
/// pool); true for an operation running inside an attempt of an enclosing one that already
/// took from the pool: its first attempt is that one and takes nothing, the later ones take
/// one each. When the pool is empty, the machine gives up with
/// `RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED`.
///
/// Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED` once started (nothing changes);
/// `RECUO_ERR_NULL_ARGUMENT`. The machine keeps its own reference to the pool.
///
/// # Safety
/// `attempts` and `pool` must each be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_pool(
    attempts: *mut recuo_attempts,
    pool: *const recuo_attempt_pool,
    nested: bool,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe { build(attempts, ptr::shared(pool), |op, p| op.pool(p, nested)) }
}

/// Sends every attempt through `gate`: with a regulator or a
/// concurrency limit, each attempt's step is first `RECUO_STEP_ENTER` — a program that may
/// block passes it with `recuo_gate_wait`, then `recuo_attempts_entered`; one that must not
/// block (an event loop) asks the machine itself with `recuo_attempts_poll_gate` and waits
/// as long as it says, without blocking, between looks. Its budget counts first attempts and
/// pays for retries (none left: `RECUO_GIVE_UP_BUDGET_EXHAUSTED`); an adaptive regulator
/// slows down on a `rate_limited` verdict and speeds back up on a success. The machine keeps
/// its own reference to the gate's parts.
///
/// Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED`; `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` and `gate` must each be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_gate(
    attempts: *mut recuo_attempts,
    gate: *const recuo_gate,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe { build(attempts, ptr::shared(gate), Operation::gate) }
}

/// Counts this operation's starts, causes and result into `recorder` (shared by
/// as many operations as you like). Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED`;
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` and `recorder` must each be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_stats_recorder(
    attempts: *mut recuo_attempts,
    recorder: *const recuo_stats_recorder,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe { build(attempts, ptr::shared(recorder), Operation::stats) }
}

/// Names the request the operation sends: its HTTP method (`method_len` bytes, UTF-8; it
/// decides the classification of `recuo_attempts_responded`; empty means GET there) and its
/// URL (`url_len` bytes; redacted in the records; bytes that are not UTF-8 read as U+FFFD).
/// Both are copied.
///
/// Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED`; `RECUO_ERR_NULL_ARGUMENT`;
/// `RECUO_ERR_NOT_UTF8` (`method`); `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// `attempts` must be NULL or a live handle; `method` and `url` NULL or valid for their
/// lengths.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_request(
    attempts: *mut recuo_attempts,
    method: *const c_char,
    method_len: usize,
    url: *const c_char,
    url_len: usize,
) -> recuo_status {
    // SAFETY: the caller vouches for the bytes.
    let read = || unsafe { Ok((ptr::text(method, method_len)?, ptr::bytes(url, url_len)?)) };
    // SAFETY: forwarded from the caller.
    unsafe { build(attempts, read(), |op, (m, u)| op.request(m, &lossy(u).0)) }
}

/// Keeps the records of level `min_level` and above (a `recuo_level` constant;
/// `RECUO_LEVEL_NONE`: none, the default), for `recuo_attempts_poll_record`.
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM`; `RECUO_ERR_ALREADY_STARTED`;
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_records(
    attempts: *mut recuo_attempts,
    min_level: u32,
) -> recuo_status {
    let level = recuo_level::core_of(min_level);
    // SAFETY: forwarded from the caller.
    unsafe { build(attempts, level, Operation::records) }
}

/// Whether the failure of an attempt after which none is left is judged too: true by
/// default (a permanent last failure gives up `permanent`); false is guide
/// A's loop (`recuo_attempts_failed` then gives up `attempts_exhausted` at once).
///
/// Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED`; `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_classify_last_failure(
    attempts: *mut recuo_attempts,
    yes: bool,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { build(attempts, Ok(yes), Operation::classify_last_failure) }
}

/// Says the caller sends an idempotency key of its own with every attempt: the request is
/// then idempotent whatever its method for `recuo_attempts_responded`.
///
/// Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED`; `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_own_key(attempts: *mut recuo_attempts) -> recuo_status {
    let key = Ok(IdempotencyKey::random());
    // SAFETY: forwarded from the caller.
    unsafe { build(attempts, key, Operation::idempotency_key) }
}

/// Runs `event` on the machine and writes its step to `out`.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread; `out` NULL or a
/// writable `recuo_step`.
unsafe fn step(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    out: *mut recuo_step,
    event: impl FnOnce(&mut Operation) -> Step,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { step_with(attempts, now_ms, out, || Ok(()), |op, ()| event(op)) }
}

/// [`step`] with what `arg` reads first (its error comes first; then nothing changes).
///
/// # Safety
/// As [`step`].
unsafe fn step_with<V>(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    out: *mut recuo_step,
    arg: impl FnOnce() -> Result<V, recuo_status>,
    event: impl FnOnce(&mut Operation, V) -> Step,
) -> recuo_status {
    checked(|| {
        let arg = arg()?;
        // SAFETY: the caller vouches for NULL or live pointers.
        let (a, out) = unsafe { (ptr::handle(attempts)?, ptr::out(out)?) };
        let finished = a.op.is_finished();
        let step = event(&mut a.op, arg);
        // SAFETY: the caller vouches for a writable recuo_step.
        unsafe { out.write(a.answered(now_ms, finished, &step)) };
        Ok(RECUO_OK)
    })
}

/// Starts the operation at `now_ms` on your monotonic clock, which is `unix_ms` on the wall
/// clock (the records' times): the first step. Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`. Every step function answers out of turn by repeating the step
/// the machine waits on.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread; `out` NULL or a
/// writable `recuo_step`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_start(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    unix_ms: i64,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { step(attempts, now_ms, out, |op| op.start(now_ms, unix_ms)) }
}

/// Whether an operation whose first attempt succeeds still needs its machine, given its
/// gate (`gate`, NULL: none), whether it counts stats (`stats`) and the records it keeps
/// (`min_level`, a `recuo_level` constant; `RECUO_LEVEL_NONE`: none). Stores the answer in
/// `*out`. When false, make attempt 0 before creating any machine: a success then needs
/// nothing more; on a failure create the machine and start it with
/// `recuo_attempts_start_after_first`. Ask once per policy and gate and keep the answer
/// (the gate's parts do not change what it says). A gate with a regulator, a limit or a
/// budget needs the machine, as do stats and records of level debug.
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM`; `RECUO_ERR_NULL_ARGUMENT` (`out`).
///
/// # Safety
/// `gate` must be NULL or a live handle; `out` NULL or a writable `bool`.
#[no_mangle]
pub unsafe extern "C" fn recuo_success_needs_machine(
    gate: *const recuo_gate,
    stats: bool,
    min_level: u32,
    out: *mut bool,
) -> recuo_status {
    checked(|| {
        let level = recuo_level::core_of(min_level)?;
        // SAFETY: the caller vouches for NULL or a live gate.
        let gate = unsafe { gate.as_ref() }.map(ptr::Shared::core);
        let needs = Operation::success_needs_machine(gate, stats, level);
        // SAFETY: the caller vouches for `out`.
        Ok(unsafe { ptr::fill(out, || Ok(needs)) })
    })
}

/// Starts the operation whose first attempt you already made, before creating the machine
/// (see `recuo_success_needs_machine`: when a success needs no machine, make attempt 0
/// first and create the machine only if it fails). `now_ms` is when that attempt began on
/// your monotonic clock, `unix_ms` the same instant on the wall clock. Stores that attempt's
/// `RECUO_STEP_CALL` (attempt 0), counted and recorded as begun at `now_ms`: tell its
/// outcome next (`recuo_attempts_responded`, `_failed`, `_failed_noted`, `_succeeded`). The
/// attempt passed no gate: the gate is not entered for it. Give the machine the pool
/// `recuo_loop_pool_choose` answers with `after_first` true, so that the attempt counts as
/// drawn. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`; on a started machine, the step it
/// waits on.
///
/// # Safety
/// As `recuo_attempts_start`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_start_after_first(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    unix_ms: i64,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        step(attempts, now_ms, out, |op| {
            op.start_after_first(now_ms, unix_ms)
        })
    }
}

/// The gate's answer for `RECUO_STEP_ENTER`, at `now_ms`: `passed` is false when the wait
/// was cancelled or reached `until_ms` (an attempt not made is not counted).
///
/// # Safety
/// As `recuo_attempts_start`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_entered(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    passed: bool,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { step(attempts, now_ms, out, |op| op.entered(now_ms, passed)) }
}

/// One look at the gate for `RECUO_STEP_ENTER` at `now_ms`, without blocking: for a program
/// that must not block its thread (an event loop). The machine takes a place in flight
/// first, then a start slot from the regulator, within the deadline. On `RECUO_OK`:
///
/// * `*wait_ms > 0`: not yet — wait that long (without blocking; a cancellation may end the
///   wait early), then look again. While the concurrency limit is full the wait is never
///   more than 5 ms; once a start slot is reserved, it is the time until that slot. `*out`
///   is left untouched.
/// * `*wait_ms == 0`: `*out` is the next step — the attempt's `RECUO_STEP_CALL`, or the
///   give-up (`RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` when the place or the slot would come
///   after the deadline; `RECUO_GIVE_UP_CANCELLED` or `RECUO_GIVE_UP_QUEUE_STOPPED` after
///   `recuo_attempts_cancel` or `recuo_attempts_stop_queue`).
///
/// The machine holds the place itself until the attempt ends (there is no pass to release),
/// and gives back a reserved slot it did not use. Do not also call `recuo_gate_wait` or
/// `recuo_attempts_entered` for this step. Out of turn (the machine waits on another step)
/// it answers `*wait_ms == 0` and that step.
///
/// Returns `RECUO_OK`; `RECUO_ERR_IO` when the limit or the regulator is on a store (Redis)
/// that cannot be used — nothing is held and the machine still waits at `RECUO_STEP_ENTER`
/// (look again later, or `recuo_attempts_cancel`); `RECUO_ERR_NULL_ARGUMENT`. On an error
/// the outputs are untouched.
///
/// # Safety
/// As `recuo_attempts_start`; `wait_ms` NULL or a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_poll_gate(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    wait_ms: *mut u64,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { poll(attempts, now_ms, wait_ms, out, |op| op.poll_gate(now_ms)) }
}

/// `recuo_attempts_poll_gate` with the regulator asked at `regulator_now_ns` on a clock
/// every user of the regulator shares (a fake clock in tests, as the regulator's `_at`
/// functions take), instead of its own.
///
/// # Safety
/// As `recuo_attempts_poll_gate`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_poll_gate_at(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    regulator_now_ns: u64,
    wait_ms: *mut u64,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        poll(attempts, now_ms, wait_ms, out, |op| {
            op.poll_gate_at(now_ms, regulator_now_ns)
        })
    }
}

/// The body of `recuo_attempts_poll_gate` and `_poll_gate_at`: `look` looks at the gate.
///
/// # Safety
/// As `recuo_attempts_poll_gate`.
unsafe fn poll(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    wait_ms: *mut u64,
    out: *mut recuo_step,
    look: impl FnOnce(&mut Operation) -> Result<GatePoll, RegulatorError>,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for NULL or live pointers.
        let (a, wait_out, out) =
            unsafe { (ptr::handle(attempts)?, ptr::out(wait_ms)?, ptr::out(out)?) };
        let finished = a.op.is_finished();
        let (wait, step) = match look(&mut a.op)? {
            GatePoll::Wait { delay_ms } => (delay_ms, None),
            GatePoll::Next(step) => (0, Some(a.answered(now_ms, finished, &step))),
        };
        // SAFETY: checked outputs.
        unsafe { wait_out.write(wait) };
        if let Some(s) = step {
            // SAFETY: as above.
            unsafe { out.write(s) };
        }
        Ok(RECUO_OK)
    })
}

/// The attempt of `RECUO_STEP_CALL` succeeded at `now_ms`.
///
/// # Safety
/// As `recuo_attempts_start`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_succeeded(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { step(attempts, now_ms, out, |op| op.succeeded(now_ms)) }
}

/// The attempt of `RECUO_STEP_CALL` failed at `now_ms`: answers `RECUO_STEP_CLASSIFY` (or,
/// with `recuo_attempts_set_classify_last_failure(false)` and no attempt left, gives up).
///
/// # Safety
/// As `recuo_attempts_start`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_failed(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { step(attempts, now_ms, out, |op| op.failed(now_ms)) }
}

/// As `recuo_attempts_failed`, saying what the attempt's record shows it received. The
/// record shows, first, what the attempt said it received (`seen`: an outcome and its
/// response's headers); else what the verdict's classifier saw (`recuo_attempts_judged_seen`);
/// else what the attempt's error carried (`error_seen`: a response attached to the error);
/// else an error with no HTTP meaning. Either outcome may be NULL: nothing said (its headers
/// are then not read).
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` (an outcome's field is no constant);
/// `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_LENGTH_TOO_LARGE` (nothing changes on an error).
///
/// # Safety
/// As `recuo_attempts_start`; each outcome NULL or readable; each `headers` must point to
/// its `header_count` readable `recuo_header`s (or be NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_failed_noted(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    seen: *const recuo_outcome,
    seen_headers: *const recuo_header,
    seen_header_count: usize,
    error_seen: *const recuo_outcome,
    error_headers: *const recuo_header,
    error_header_count: usize,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: the caller vouches for the memory.
    let read = || unsafe {
        let seen = read_seen(seen, seen_headers, seen_header_count)?;
        let error = read_seen(error_seen, error_headers, error_header_count)?;
        Ok((seen, error))
    };
    // SAFETY: forwarded from the caller.
    unsafe {
        step_with(attempts, now_ms, out, read, |op, (s, e)| {
            op.failed_noted(now_ms, s, e)
        })
    }
}

/// What an attempt received, as C says it: an outcome (NULL: nothing said) and its
/// response's headers.
///
/// # Safety
/// `outcome` NULL or readable; `headers` valid for `count` (or NULL with 0).
unsafe fn read_seen(
    outcome: *const recuo_outcome,
    headers: *const recuo_header,
    count: usize,
) -> Result<Option<Seen>, recuo_status> {
    if outcome.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded from the caller.
    let (outcome, headers) = unsafe { read_response(outcome, headers, count) }?;
    Ok(Some(Seen::new(outcome, &headers)))
}

/// The verdict `*verdict` (from `recuo_classify`, or written by hand) on the failure of
/// `RECUO_STEP_CLASSIFY`, at `now_ms`. Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` (a field
/// of `*verdict` is no constant; nothing changes); `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// As `recuo_attempts_start`; `verdict` NULL or a readable `recuo_verdict`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_judged(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    verdict: *const recuo_verdict,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: the caller vouches for a readable verdict.
    let read = || unsafe { read_verdict(verdict) };
    // SAFETY: forwarded from the caller.
    unsafe {
        step_with(attempts, now_ms, out, read, |op, v| {
            op.judged(now_ms, v, None)
        })
    }
}

/// As `recuo_attempts_judged`, with what the verdict's classifier saw of the attempt
/// (`seen`: an outcome and its response's headers; NULL: nothing): the attempt's record
/// shows it unless the attempt itself said what it received (see
/// `recuo_attempts_failed_noted`). Returns as `recuo_attempts_judged`, and
/// `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// As `recuo_attempts_judged`; `seen` NULL or readable; `seen_headers` must point to
/// `seen_header_count` readable `recuo_header`s (or be NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_judged_seen(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    verdict: *const recuo_verdict,
    seen: *const recuo_outcome,
    seen_headers: *const recuo_header,
    seen_header_count: usize,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: the caller vouches for the memory.
    let read = || unsafe {
        let verdict = read_verdict(verdict)?;
        Ok((verdict, read_seen(seen, seen_headers, seen_header_count)?))
    };
    // SAFETY: forwarded from the caller.
    unsafe {
        step_with(attempts, now_ms, out, read, |op, (v, s)| {
            op.judged(now_ms, v, s)
        })
    }
}

/// Reads a verdict from C.
///
/// # Safety
/// `verdict` must be NULL or readable.
pub(crate) unsafe fn read_verdict(verdict: *const recuo_verdict) -> Result<Verdict, recuo_status> {
    // SAFETY: non-NULL, and the caller vouches for the memory.
    unsafe { recuo_verdict::read(ptr::input(verdict)?) }.ok_or(RECUO_ERR_INVALID_ENUM)
}

/// The HTTP attempt of `RECUO_STEP_CALL` ended at `now_ms` with `*outcome` (a status or a
/// transport failure) and the response's headers: the machine classifies it by the policy
/// with the request's method (`recuo_attempts_set_request`) and keeps what its
/// record needs. Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM`; `RECUO_ERR_NULL_ARGUMENT`;
/// `RECUO_ERR_LENGTH_TOO_LARGE` (nothing changes on an error).
///
/// # Safety
/// As `recuo_attempts_start`; `outcome` NULL or readable; `headers` must point to
/// `header_count` readable `recuo_header`s (or be NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_responded(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    outcome: *const recuo_outcome,
    headers: *const recuo_header,
    header_count: usize,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: the caller vouches for the memory.
    let read = || unsafe { read_response(outcome, headers, header_count) };
    // SAFETY: forwarded from the caller.
    unsafe {
        step_with(attempts, now_ms, out, read, |op, (o, h)| {
            op.responded(now_ms, o, &h)
        })
    }
}

/// The verdict `recuo_attempts_responded` would act on for this outcome at `now_ms` — the
/// policy's classification with the operation's method and key — into `*out`; nothing
/// changes. A host whose retry budget answers through it (a budget on Redis through the
/// host's own client) asks the budget first: `recuo_attempts_failed_noted` with the response,
/// then `recuo_attempts_judged_seen` with this verdict, is `recuo_attempts_responded`.
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT`; an outcome or header error.
///
/// # Safety
/// `attempts` NULL or a live handle; `outcome` NULL or readable; `headers` must point to
/// `header_count` readable `recuo_header`s (or be NULL with 0); `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_response_verdict(
    attempts: *const recuo_attempts,
    now_ms: u64,
    outcome: *const recuo_outcome,
    headers: *const recuo_header,
    header_count: usize,
    out: *mut recuo_verdict,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for the memory.
        let a = unsafe { ptr::input(attempts) }?;
        // SAFETY: as above.
        let (outcome, headers) = unsafe { read_response(outcome, headers, header_count) }?;
        let verdict = recuo_verdict::from_core(a.op.response_verdict(now_ms, outcome, &headers));
        // SAFETY: the caller vouches for `out`.
        Ok(unsafe { ptr::fill(out, || Ok(verdict)) })
    })
}

/// The wait of `RECUO_STEP_SLEEP` is over at `now_ms` (or was cut short by a cancellation).
///
/// # Safety
/// As `recuo_attempts_start`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_slept(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    out: *mut recuo_step,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { step(attempts, now_ms, out, |op| op.slept(now_ms)) }
}

/// Cancels the operation (your own cancellation): the next step asked for gives up
/// `RECUO_GIVE_UP_CANCELLED` — an attempt in flight still ends as it ends. Call it on the
/// thread that drives the machine. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_cancel(attempts: *mut recuo_attempts) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with(attempts, |a| a.op.cancel()) }
}

/// Stops the operation because its batch queue stopped on `reason` (a `recuo_give_up_reason`
/// constant, another operation's: `recuo_batch_queue_finished` said so): it gives up
/// `RECUO_GIVE_UP_QUEUE_STOPPED`, with `stopped_by` = `reason` in its report. Returns
/// `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` (no constant, or NONE); `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_stop_queue(
    attempts: *mut recuo_attempts,
    reason: u32,
) -> recuo_status {
    let reason = recuo_give_up_reason::reason_of(reason);
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_read(attempts, reason, |a, reason| a.op.stop_queue(reason)) }
}

/// Takes the next record the machine made (with `recuo_attempts_set_records`), in order: its
/// level in `*level_out` and its JSON line (redacted, see `recuo_record_attempt_json` and
/// `recuo_record_result_json`) into `buf` (`len` bytes, NUL-terminated; `*written`, when not
/// NULL, receives its length). None left: `*level_out` = `RECUO_LEVEL_NONE` and `buf` holds
/// an empty string.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written; the record stays
/// first in line: call again with a larger buffer); `RECUO_ERR_NULL_ARGUMENT` (`attempts`,
/// `level_out`, `buf`).
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread; `level_out` NULL
/// or writable; `buf` must point to `len` writable bytes; `written` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_poll_record(
    attempts: *mut recuo_attempts,
    level_out: *mut recuo_level,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with(attempts, |a| {
            let next = || a.op.poll_record();
            poll_record_into(&mut a.polled, next, level_out, buf, len, written)
        })
    }
}

/// The records polled from a machine or a queue: one still waiting for a larger buffer, and
/// the last one taken (for its telemetry).
#[derive(Debug, Default)]
pub(crate) struct Polled {
    pending: Option<(Level, String)>,
    last: Option<recuo::Record>,
}

impl Polled {
    /// What the record polled last means to telemetry, as JSON (`""` when none was), into
    /// `buf` as `write_text` writes it.
    ///
    /// # Safety
    /// As `write_text`.
    pub(crate) unsafe fn telemetry(
        &self,
        buf: *mut c_char,
        len: usize,
        written: *mut usize,
    ) -> recuo_status {
        let json = self.last.as_ref().map(|r| telemetry(r).to_json());
        // SAFETY: forwarded from the caller.
        unsafe { write_text(buf, len, written, &json.unwrap_or_default()) }
    }
}

/// What the record `recuo_attempts_poll_record` gave last means to telemetry, as JSON (see
/// `recuo_telemetry_json`: its operation's number, its span, its metric points), into `buf`
/// (`len` bytes, NUL-terminated; `*written`, when not NULL, receives its length); an empty
/// string when no record was polled yet, or the last poll found none.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written);
/// `RECUO_ERR_NULL_ARGUMENT` (`attempts`, `buf`).
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread; `buf` must point to
/// `len` writable bytes; `written` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_record_telemetry(
    attempts: *mut recuo_attempts,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or a live handle and for the buffer.
    unsafe { ptr::with(attempts, |a| a.polled.telemetry(buf, len, written)) }
}

/// Takes the next record from `next` (unless one polled before is still waiting in
/// `polled`, for a buffer that was too small) into the caller's `level_out` and `buf`, as
/// `recuo_attempts_poll_record` says.
///
/// # Safety
/// As `recuo_attempts_poll_record`.
pub(crate) unsafe fn poll_record_into(
    polled: &mut Polled,
    next: impl FnOnce() -> Option<(Level, recuo::Record)>,
    level_out: *mut recuo_level,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    let level_out = match ptr::out(level_out) {
        Ok(out) if !buf.is_null() => out,
        _ => return RECUO_ERR_NULL_ARGUMENT,
    };
    if polled.pending.is_none() {
        polled.last = next().map(|(l, r)| {
            polled.pending = Some((l, r.to_json_line()));
            r
        });
    }
    let (level, line) = match &polled.pending {
        Some((l, line)) => (recuo_level::from_core(Some(*l)), line.as_str()),
        None => (recuo_level::RECUO_LEVEL_NONE, ""),
    };
    // SAFETY: the caller vouches for the buffer.
    let status = unsafe { write_text(buf, len, written, line) };
    if status != RECUO_ERR_BUFFER_TOO_SMALL {
        polled.pending = None;
    }
    // SAFETY: checked output.
    unsafe { level_out.write(level) };
    status
}

/// Writes the operation's idempotency key into `buf` (`len` bytes, at least
/// `RECUO_IDEMPOTENCY_KEY_SIZE` = 37): a UUID v4 of 36 lower-case characters
/// (`xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`) and a NUL, from the operating system's
/// random source. It is created at the first call and the same on every later call for this
/// operation; send it with every attempt, in the header named by
/// `recuo_policy_idempotency_header`, and never with another operation. `*written` (when not
/// NULL) receives 36.
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
    // SAFETY: the caller vouches for NULL or a live handle; at least 37 writable bytes are
    // checked; the caller vouches for `written`.
    unsafe {
        write_made(buf, len, written, || {
            let a = ptr::handle(attempts)?;
            if len < RECUO_IDEMPOTENCY_KEY_SIZE {
                return Err(RECUO_ERR_BUFFER_TOO_SMALL);
            }
            Ok(a.op.key().as_str().to_owned())
        })
    }
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
    checked(|| {
        ptr::out(out)?;
        // SAFETY: the caller vouches for every pointer (see # Safety).
        let (a, delays) = unsafe { (ptr::input(attempts)?, ptr::slice_mut(delays, delays_len)?) };
        let report = a.op.report();
        // SAFETY: checked outputs; the caller vouches for `delays_written`.
        unsafe { write_report(&report, a.retry_after_ms, out, delays, delays_written) };
        Ok(RECUO_OK)
    })
}

/// The name of the `recuo_give_up_reason` constant `reason` (`"none"`, `"permanent"`,
/// `"attempts_exhausted"`, `"wait_exceeds_deadline"`, `"budget_exhausted"`, `"cancelled"`,
/// `"queue_stopped"`: the names every language uses), or `"unknown"`. Static. NULL only if
/// recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_give_up_reason_name(reason: u32) -> *const c_char {
    recuo_give_up_reason::name_of(reason)
}

/// The name of the `recuo_step_kind` constant `kind` (`"enter"`, `"call"`, `"classify"`,
/// `"sleep"`, `"done"`, `"gave_up"`: as the loop vectors write them), or `"unknown"`.
/// Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_step_kind_name(kind: u32) -> *const c_char {
    recuo_step_kind::name_of(kind)
}

/// The name of the `recuo_level` constant `level` (`"none"`, `"debug"`, `"info"`,
/// `"warning"`), or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_level_name(level: u32) -> *const c_char {
    recuo_level::name_of(level)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{recuo_policy_free, recuo_policy_new};
    use recuo::{Cause, Verdict};

    #[test]
    fn reason_names_are_the_core_names() {
        for r in GiveUpReason::ALL {
            assert_eq!(
                recuo_give_up_reason::from_core(Some(r)).name().to_str(),
                Ok(r.name())
            );
            assert_eq!(recuo_give_up_reason::from_core(Some(r)).to_core(), Some(r));
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
        let mut s = recuo_step::from_core(&Step::Done(Report::default()));
        // SAFETY: live handles and structs.
        unsafe {
            assert_eq!(recuo_attempts_new_seeded(p, 5, &mut a), RECUO_OK);
            let mut core = Operation::new(&recuo::Policy::guide_a()).seed(Some(5));
            let mut want = core.start(0, 0);
            recuo_policy_free(p);
            assert_eq!(recuo_attempts_start(a, 0, 0, &mut s), RECUO_OK);
            let mut now = 0;
            for _ in 0..5 {
                assert_eq!(s, recuo_step::from_core(&want));
                now += 10;
                assert_eq!(recuo_attempts_failed(a, now, &mut s), RECUO_OK);
                assert_eq!(s, recuo_step::from_core(&core.failed(now)));
                assert_eq!(recuo_attempts_judged(a, now, &retry, &mut s), RECUO_OK);
                let v = recuo_verdict::read(&retry).unwrap();
                want = core.judged(now, v, None);
                assert_eq!(s, recuo_step::from_core(&want));
                if let Step::Sleep { delay_ms, .. } = want {
                    now += delay_ms;
                    assert_eq!(recuo_attempts_slept(a, now, &mut s), RECUO_OK);
                    want = core.slept(now);
                }
            }
            assert_eq!(
                s.reason,
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
            assert_eq!(n, 4);
            recuo_attempts_free(a);
        }
    }
}
