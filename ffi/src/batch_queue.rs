//! `recuo_batch_queue_*`: the batch queue as a sans-IO machine (`recuo::BatchQueue`), for a C
//! program that runs a batch's operations itself (its own threads, an event loop): which
//! operation starts next and under what deadline, or why it is not started, and when the
//! whole queue stops; the records of the operations it does not start; how an operation
//! ended for the batch.

use recuo::{BatchEnd, BatchQueue, Next, RequestLine};

use crate::attempts::poll_record_into;
use crate::batch::batch_end;
use crate::prelude::*;

/// What the queue answers `recuo_batch_queue_next`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_batch_next_kind {
    /// Start operation `index` under `policy` (the batch's, its deadline clipped to what is
    /// left of the batch's).
    RECUO_BATCH_NEXT_START = 1,
    /// Operation `index` is not started, for `reason` (with `stopped_by`).
    RECUO_BATCH_NEXT_NOT_STARTED = 2,
    /// Every operation has been handed out.
    RECUO_BATCH_NEXT_FINISHED = 3,
}

c_enum!(recuo_batch_next_kind {
    RECUO_BATCH_NEXT_START => c"start",
    RECUO_BATCH_NEXT_NOT_STARTED => c"not_started",
    RECUO_BATCH_NEXT_FINISHED => c"finished",
});

/// The queue's answer: a plain struct recuo fills in.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct recuo_batch_next {
    /// A `recuo_batch_next_kind` constant.
    pub kind: recuo_batch_next_kind,
    /// The operation's place in the batch, from 0 (0 for FINISHED).
    pub index: usize,
    /// For START: a new policy to run the operation under (`recuo_attempts_new`); yours to
    /// free with `recuo_policy_free`. Else NULL.
    pub policy: *mut recuo_policy,
    /// For START: whether the policy has a deadline, and which (ms).
    pub has_deadline: bool,
    /// For START with a deadline: the policy's deadline, ms.
    pub deadline_ms: u64,
    /// For NOT_STARTED: `wait_exceeds_deadline` (the batch's deadline passed),
    /// `queue_stopped` (see `stopped_by`) or `cancelled` (`recuo_batch_queue_stop`).
    pub reason: recuo_give_up_reason,
    /// For `queue_stopped`: the reason that stopped the queue.
    pub stopped_by: recuo_give_up_reason,
}

/// A queue of operations under one policy and one deadline: a `recuo::BatchQueue`, plus a
/// record polled into a buffer too small for it. Use it from one thread at a time (guard it
/// with a mutex when workers share it).
#[derive(Debug)]
pub struct recuo_batch_queue {
    queue: BatchQueue,
    started: bool,
    polled: crate::attempts::Polled,
}

/// The request of one operation of a batch, as its records name it: a plain struct, yours
/// to fill. The bytes need no terminator.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct recuo_request_line {
    /// The HTTP method (UTF-8); NULL only with `method_len` 0 (empty: no HTTP meaning).
    pub method: *const c_char,
    /// The method's length in bytes.
    pub method_len: usize,
    /// The URL (redacted in the records; bytes that are not UTF-8 read as U+FFFD); NULL only
    /// with `url_len` 0.
    pub url: *const c_char,
    /// The URL's length in bytes.
    pub url_len: usize,
}

/// A queue of `len` operations under `policy` (copied), started at `now_ms` on your
/// monotonic clock; with `has_deadline`, none of them starts or waits past `deadline_ms`
/// from now. With `stop_on_unreachable_wait`, the whole queue stops when one operation gives
/// up `wait_exceeds_deadline`. `recorder` (may be NULL) counts the operations not started.
/// Stores the queue in `*out`; free it with `recuo_batch_queue_free`.
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT`; the policy's configuration error.
///
/// # Safety
/// `policy` and `recorder` must be NULL or live handles; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_queue_new(
    policy: *const recuo_policy,
    len: usize,
    now_ms: u64,
    has_deadline: bool,
    deadline_ms: u64,
    stop_on_unreachable_wait: bool,
    recorder: *const recuo_stats_recorder,
    out: *mut *mut recuo_batch_queue,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live pointers.
    unsafe {
        ptr::make(out, || {
            let deadline = has_deadline.then_some(deadline_ms);
            let mut queue = BatchQueue::new(ptr::input(policy)?.policy()?, len, now_ms, deadline)
                .stop_when_a_wait_exceeds_the_deadline(stop_on_unreachable_wait);
            if let Ok(stats) = ptr::shared(recorder) {
                queue = queue.stats(stats);
            }
            Ok(recuo_batch_queue {
                queue,
                started: false,
                polled: crate::attempts::Polled::default(),
            })
        })
    }
}

/// Releases a queue. NULL is accepted and ignored.
///
/// # Safety
/// `queue` must be NULL or come from `recuo_batch_queue_new` and not have been freed.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_queue_free(queue: *mut recuo_batch_queue) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(queue) })
}

/// The next operation at `now_ms`, or why it is not started, or FINISHED, into `*out`.
/// Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `queue` must be NULL or a live handle not in use by another thread; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_queue_next(
    queue: *mut recuo_batch_queue,
    now_ms: u64,
    out: *mut recuo_batch_next,
) -> recuo_status {
    use recuo_batch_next_kind::*;
    // SAFETY: the caller vouches for NULL or live pointers.
    unsafe {
        ptr::fill(out, || {
            let q = ptr::handle(queue)?;
            q.started = true;
            let (kind, index, policy, reason, stopped_by) = match q.queue.next(now_ms) {
                Next::Start { index, policy } => {
                    (RECUO_BATCH_NEXT_START, index, Some(policy), None, None)
                }
                Next::NotStarted {
                    index,
                    reason,
                    stopped_by,
                } => (
                    RECUO_BATCH_NEXT_NOT_STARTED,
                    index,
                    None,
                    Some(reason),
                    stopped_by,
                ),
                Next::Finished => (RECUO_BATCH_NEXT_FINISHED, 0, None, None, None),
            };
            let deadline = policy.as_ref().and_then(|p| p.deadline_ms());
            let policy = policy.map(|p| Box::into_raw(Box::new(recuo_policy::from_core(*p))));
            Ok(recuo_batch_next {
                kind,
                index,
                policy: policy.unwrap_or(std::ptr::null_mut()),
                has_deadline: deadline.is_some(),
                deadline_ms: deadline.unwrap_or(0),
                reason: recuo_give_up_reason::from_core(reason),
                stopped_by: recuo_give_up_reason::from_core(stopped_by),
            })
        })
    }
}

/// Operation `index` ended: succeeded (`reason` = `RECUO_GIVE_UP_NONE`) or gave up for
/// `reason`. `*stops` (may be NULL) receives whether this stops the queue now: then stop the
/// operations still running with `recuo_attempts_stop_queue` and `recuo_batch_queue_stopped`'s
/// reason. Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM`; `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `queue` must be NULL or a live handle not in use by another thread; `stops` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_queue_finished(
    queue: *mut recuo_batch_queue,
    index: usize,
    reason: u32,
    stops: *mut bool,
) -> recuo_status {
    let reason = recuo_give_up_reason::core_of(reason);
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_read(queue, reason, |q, r| {
            ptr::put(stops, q.queue.finished(index, r))
        })
    }
}

/// Operation `index` ended as a `recuo_batch_result` says — its `kind`, `reason` and
/// `stopped_by`, as `recuo_attempts_batch_result` gave them, or the `RECUO_BATCH_NOT_STARTED`
/// and reasons `recuo_batch_queue_next` answered: `*out` (may be NULL) receives the batch's
/// progress, for a progress display. Tell the queue of every operation's end exactly once,
/// after `recuo_batch_queue_finished` for one that started. Returns `RECUO_OK`;
/// `RECUO_ERR_INVALID_ENUM` (a kind or reason that is no constant, or a give-up without its
/// reason); `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `queue` must be NULL or a live handle not in use by another thread; `out` NULL or a
/// writable `recuo_batch_progress`.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_queue_ended(
    queue: *mut recuo_batch_queue,
    index: usize,
    kind: u32,
    reason: u32,
    stopped_by: u32,
    out: *mut recuo_batch_progress,
) -> recuo_status {
    let end = batch_end(kind, reason, stopped_by).ok_or(RECUO_ERR_INVALID_ENUM);
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_read(queue, end, |q, end| {
            let progress = q.queue.ended(index, end);
            ptr::put(out, recuo_batch_progress::from_core(progress))
        })
    }
}

/// Stops the queue on `reason` (your own stop: `RECUO_GIVE_UP_CANCELLED`): nothing more
/// starts. Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` (no constant, or NONE);
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `queue` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_queue_stop(
    queue: *mut recuo_batch_queue,
    reason: u32,
) -> recuo_status {
    let reason = recuo_give_up_reason::reason_of(reason);
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_read(queue, reason, |q, reason| q.queue.stop(reason)) }
}

/// The reason the queue stopped: a `recuo_give_up_reason` constant (`RECUO_GIVE_UP_NONE`:
/// it did not, or `queue` is NULL).
///
/// # Safety
/// `queue` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_queue_stopped(queue: *const recuo_batch_queue) -> u32 {
    // SAFETY: the caller vouches for NULL or a live handle.
    let stopped = unsafe { queue.as_ref() }.and_then(|q| q.queue.stopped());
    boundary(|| recuo_give_up_reason::from_core(stopped) as u32)
}

/// Makes the queue keep a record of each operation it does not start (a warning, as the
/// result record of every operation that gave up), for `recuo_batch_queue_poll_record`:
/// operation `i` is named by `requests[i]` (`count` of them, copied; an index past them is
/// named by an empty request), its time measured on the wall clock from `unix_ms`, the wall
/// clock's time when the queue was created. The operations you start keep their own
/// records (`recuo_attempts_set_records`).
///
/// Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED` after the first `recuo_batch_queue_next`
/// (nothing changes); `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_NOT_UTF8` (a method);
/// `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// `queue` must be NULL or a live handle not in use by another thread; `requests` must
/// point to `count` readable `recuo_request_line`s (or be NULL with 0), each valid for its
/// lengths.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_queue_set_records(
    queue: *mut recuo_batch_queue,
    requests: *const recuo_request_line,
    count: usize,
    unix_ms: i64,
) -> recuo_status {
    // SAFETY: the caller vouches for each request's bytes.
    let line = |r: &recuo_request_line| unsafe {
        let method = ptr::text(r.method, r.method_len)?.to_string();
        let url = lossy(ptr::bytes(r.url, r.url_len)?).0.into_owned();
        Ok(RequestLine { method, url })
    };
    checked(|| {
        // SAFETY: the caller vouches for NULL or live pointers.
        let (q, lines) = unsafe { (ptr::handle(queue)?, ptr::slice(requests, count)?) };
        let lines: Result<Vec<_>, recuo_status> = lines.iter().map(line).collect();
        let lines = lines?;
        if q.started {
            return Err(RECUO_ERR_ALREADY_STARTED);
        }
        let empty = BatchQueue::new(&recuo::Policy::default(), 0, 0, None);
        q.queue = std::mem::replace(&mut q.queue, empty).records(lines, unix_ms);
        Ok(RECUO_OK)
    })
}

/// Takes the next record the queue made (`recuo_batch_queue_set_records`), in order, as
/// `recuo_attempts_poll_record` does: its level in `*level_out` and its JSON line (redacted)
/// into `buf` (`len` bytes, NUL-terminated; `*written`, when not NULL, receives its length).
/// None left: `*level_out` = `RECUO_LEVEL_NONE` and `buf` holds an empty string.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written; the record stays
/// first in line); `RECUO_ERR_NULL_ARGUMENT` (`queue`, `level_out`, `buf`).
///
/// # Safety
/// `queue` must be NULL or a live handle not in use by another thread; `level_out` NULL or
/// writable; `buf` must point to `len` writable bytes; `written` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_queue_poll_record(
    queue: *mut recuo_batch_queue,
    level_out: *mut recuo_level,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with(queue, |q| {
            let next = || q.queue.poll_record();
            poll_record_into(&mut q.polled, next, level_out, buf, len, written)
        })
    }
}

/// What the record `recuo_batch_queue_poll_record` gave last means to telemetry, as JSON
/// (as `recuo_attempts_record_telemetry`); an empty string when none was polled.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written);
/// `RECUO_ERR_NULL_ARGUMENT` (`queue`, `buf`).
///
/// # Safety
/// `queue` must be NULL or a live handle not in use by another thread; `buf` must point to
/// `len` writable bytes; `written` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_queue_record_telemetry(
    queue: *mut recuo_batch_queue,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or a live handle and for the buffer.
    unsafe { ptr::with(queue, |q| q.polled.telemetry(buf, len, written)) }
}

/// How the operation of `attempts` ended, for the batch it belongs to, into `*out`: it
/// succeeded; it gave up after at least one attempt; or it gave up before any attempt,
/// which is an operation never started (`RECUO_BATCH_NOT_STARTED`, with its reason) — unless
/// its gate could not be used (`gate_failed`: a store out of reach), an error reported as a
/// give-up with `gate_error` set. `no_verdict` is false. Ask once the machine has finished
/// (before, it answers as the operation stands).
///
/// Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` must be NULL or a live handle; `out` NULL or a writable `recuo_batch_result`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_batch_result(
    attempts: *const recuo_attempts,
    gate_failed: bool,
    out: *mut recuo_batch_result,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live pointers.
    unsafe {
        ptr::fill(out, || {
            let report = ptr::input(attempts)?.op.report();
            let (end, attempts) = (BatchEnd::of(&report, gate_failed), report.attempts);
            Ok(recuo_batch_result::of(end, attempts, false, gate_failed))
        })
    }
}

/// The name of the `recuo_batch_next_kind` constant `kind` (`"start"`, `"not_started"`,
/// `"finished"`: as the loop vectors write them), or `"unknown"`. Static. NULL only if recuo
/// panicked.
#[no_mangle]
pub extern "C" fn recuo_batch_next_kind_name(kind: u32) -> *const std::ffi::c_char {
    recuo_batch_next_kind::name_of(kind)
}
