//! The batch runner for C: a queue of operations through one policy and one gate, a few at a
//! time on worker threads, with a deadline for the whole queue; what has not started when
//! it passes is never started late. The runner and its stats are the core's
//! (`recuo::Batch`, `recuo::Stats`).
//!
//! It starts and joins worker threads, so it is not in the WebAssembly build, whose host
//! runs a batch through `recuo_batch_queue` with its own waits.

use std::time::Duration;

use recuo::{AttemptContext, Batch, BatchEnd, BatchResult};

use crate::com_retry::written_verdict;
use crate::prelude::*;
use crate::retry::{Callback, Failure};

/// One operation of a batch, called by `recuo_batch_run` **on a worker thread**, possibly
/// at the same time as other operations of the batch (up to `workers` at once): make
/// attempt number `attempt` (from 0) of operation number `index` (from 0, below `count`),
/// sending `idempotency_key` (NUL-terminated, the same on every attempt of this operation,
/// another for each operation; valid during the call only), then write the verdict into
/// `*verdict_out` (`recuo_classify`, or by hand) — exactly as `recuo_operation_fn`, whose
/// rules apply (all zeros on entry; left so, or holding no constant, it counts as a missing
/// verdict).
///
/// `user_data` is the batch's, shared by every worker: whatever the operation touches through
/// it must be safe to use from several threads at once (one slot per `index`, atomics, or a
/// mutex). The operation must return normally.
pub type recuo_batch_operation_fn = Option<
    unsafe extern "C" fn(
        index: usize,
        attempt: u32,
        idempotency_key: *const c_char,
        verdict_out: *mut recuo_verdict,
        user_data: *mut c_void,
    ),
>;

/// Told, with the batch's `user_data`, each time an operation of a `recuo_batch_run` ends —
/// started or not: the batch's progress (valid during the call only). Called on a worker
/// thread, one call at a time, in order (`done` goes up by one each call); keep it short, as
/// the other workers wait for it. It must return normally.
pub type recuo_batch_progress_fn =
    Option<unsafe extern "C" fn(progress: *const recuo_batch_progress, user_data: *mut c_void)>;

/// The C operation and its `user_data`, called from the worker threads.
#[derive(Clone, Copy)]
struct Operation {
    call: Callback<recuo_batch_operation_fn>,
    user_data: *mut c_void,
}

// SAFETY: the caller of `recuo_batch_run` vouches that the operation may be called with
// `user_data` from any thread, several at once (see `recuo_batch_operation_fn`).
unsafe impl Send for Operation {}
// SAFETY: as above.
unsafe impl Sync for Operation {}

impl Operation {
    /// Makes one attempt of operation `index`: the attempts made on success, else the
    /// verdict (or its absence).
    fn attempt(self, index: usize, ctx: &AttemptContext<'_>) -> Result<u32, Failure> {
        let mut key = [0u8; RECUO_IDEMPOTENCY_KEY_SIZE];
        let text = ctx.idempotency_key();
        key[..text.as_str().len()].copy_from_slice(text.as_str().as_bytes());
        let (call, attempt, data) = (self.call, ctx.attempt(), self.user_data);
        // SAFETY: the caller of recuo_batch_run vouches for the operation and `user_data`;
        // the key and the verdict live across the call.
        let ((), written) =
            written_verdict(|v| unsafe { call(index, attempt, key.as_ptr().cast(), v, data) });
        Failure::of(written).map(|()| attempt.saturating_add(1))
    }

    /// Tells `on_progress` (if any) the batch's progress, with the batch's `user_data`.
    fn progress(self, on_progress: recuo_batch_progress_fn, progress: recuo::BatchProgress) {
        if let Some(tell) = on_progress {
            let progress = recuo_batch_progress::from_core(progress);
            // SAFETY: the caller of recuo_batch_run vouches for the callback and `user_data`;
            // the progress lives across the call.
            unsafe { tell(&progress, self.user_data) };
        }
    }
}

/// Runs `count` operations through one policy and one gate, `workers` at a time, with a
/// deadline for the whole batch, and reports what became of each and the batch's stats.
/// Blocks the calling thread until every operation has ended or the deadline
/// has passed; the operations run on worker threads recuo starts and joins.
///
/// * `policy`: each operation runs the retry loop of `recuo_retry` under it (read at the
///   start; a configuration error is returned before anything runs). Its own deadline, if
///   any, still applies to each operation, never beyond the batch's.
/// * `gate` (may be NULL: none): every attempt, first or retry, passes it — a place in flight,
///   then a start slot; the place is given back before any sleep; retries draw on its budget;
///   an adaptive regulator slows down on 429s (see `recuo_retry_options_set_gate`).
/// * `count`, `operation`, `user_data`: the operations `0 … count − 1` (see
///   `recuo_batch_operation_fn`: it runs on worker threads). `count` may be 0.
/// * `workers`: how many operations run at the same time (0 counts as 1).
/// * `deadline_ms`: a limit on the whole batch's time, in milliseconds (0: none). When it
///   passes, operations not yet started are not started (`RECUO_BATCH_NOT_STARTED`), those
///   waiting at the gate stop waiting (not started, if it was their first attempt), and no
///   operation sleeps past it (`wait_exceeds_deadline`).
/// * `on_progress` (may be NULL): told the batch's progress as each operation ends (see
///   `recuo_batch_progress_fn`), with `user_data`.
/// * `results`: `count` entries (NULL only when `count` is 0), filled in index order.
/// * `stats_out` (may be NULL): the batch's stats.
///
/// The jitter and idempotency keys come from the operating system's generator (a batch is
/// concurrent, so its order is not reproducible anyway).
///
/// Returns `RECUO_OK` (every operation ended one way or another: read `results`);
/// `RECUO_ERR_NO_VERDICT` when an operation returned without a valid verdict — it gave up
/// as `permanent` with `no_verdict` set, the batch went on, and `results` and `*stats_out`
/// are filled; `RECUO_ERR_IO` when an operation's gate could not be used (a Redis limit,
/// regulator or budget out of reach: `gate_error` set, no attempt made; `results` and
/// `*stats_out` filled); before anything runs, with the outputs untouched: `RECUO_ERR_NULL_ARGUMENT`
/// (`policy`, `operation`, `results` with `count > 0`), `RECUO_ERR_LENGTH_TOO_LARGE`, the
/// policy's configuration error.
///
/// # Safety
/// `policy` and `gate` must be NULL or live handles, not changed during the call;
/// `operation` must be safe to call with `user_data` from several threads at once and must
/// return normally; `results` must point to `count` writable `recuo_batch_result`s;
/// `stats_out` NULL or a writable `recuo_stats`.
#[no_mangle]
pub unsafe extern "C" fn recuo_batch_run(
    policy: *const recuo_policy,
    gate: *const recuo_gate,
    count: usize,
    operation: recuo_batch_operation_fn,
    user_data: *mut c_void,
    workers: u32,
    deadline_ms: u64,
    on_progress: recuo_batch_progress_fn,
    results: *mut recuo_batch_result,
    stats_out: *mut recuo_stats,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for every pointer (see # Safety).
        let policy = unsafe { ptr::input(policy) }?;
        let call = operation.ok_or(RECUO_ERR_NULL_ARGUMENT)?;
        // SAFETY: as above.
        let results = unsafe { ptr::slice_mut(results, count) }?;
        // Arguments first, the policy's configuration last.
        let policy = policy.policy()?;
        // SAFETY: the caller vouches for NULL or a live gate.
        let gate = unsafe { ptr::shared(gate) }.unwrap_or_default();
        let (policy, op) = (policy.clone(), Operation { call, user_data });
        let workers = usize::try_from(workers).unwrap_or(usize::MAX);
        let deadline = (deadline_ms > 0).then(|| Duration::from_millis(deadline_ms));
        // The batch is run from a thread of its own, joined here: the workers' scope needs a
        // Rust handle on the thread that opens it, which std allocates once per thread and
        // frees when the thread ends — never, for the caller's main thread, where a memory
        // checker would report it.
        let run = std::thread::spawn(move || {
            let ops: Vec<_> = (0..count)
                .map(|index| move |ctx: &AttemptContext<'_>| op.attempt(index, ctx))
                .collect();
            let tell = |p: &recuo::BatchProgress| op.progress(on_progress, *p);
            let batch = Batch::new(&policy)
                .gate(gate)
                .workers(workers)
                .deadline(deadline);
            // The verdict the batch acts on: the operation's, or — without one — a permanent
            // give-up (the batch goes on; `recuo_batch_run` reports the missing verdict).
            let classify = Failure::verdict;
            match on_progress {
                Some(_) => batch.on_progress(&tell).run(ops, classify),
                None => batch.run(ops, classify),
            }
        });
        let report = run.join().map_err(|_| RECUO_ERR_PANIC)?;
        for (slot, result) in results.iter_mut().zip(&report.results) {
            let (end, attempts, no_verdict, gate_error) = match *result {
                BatchResult::Succeeded(attempts) => (BatchEnd::Succeeded, attempts, false, false),
                BatchResult::GaveUp(ref e) => {
                    let (reason, stopped_by) = (e.reason, e.report.stopped_by);
                    let no_verdict = matches!(e.error, Some(Failure::NoVerdict));
                    let gate_error = e.gate_error.is_some();
                    let end = BatchEnd::GaveUp { reason, stopped_by };
                    (end, e.report.attempts, no_verdict, gate_error)
                }
                BatchResult::NotStarted { reason, stopped_by } => {
                    (BatchEnd::NotStarted { reason, stopped_by }, 0, false, false)
                }
            };
            *slot = recuo_batch_result::of(end, attempts, no_verdict, gate_error);
        }
        let stats = recuo_stats::from_core(&report.stats, report.elapsed);
        // SAFETY: the caller vouches for NULL or a writable recuo_stats.
        unsafe { ptr::put(stats_out, stats) };
        let any = |flag: fn(&recuo_batch_result) -> bool| results.iter().any(flag);
        Ok(if any(|r| r.gate_error) {
            RECUO_ERR_IO
        } else if any(|r| r.no_verdict) {
            RECUO_ERR_NO_VERDICT
        } else {
            RECUO_OK
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attempts::recuo_give_up_reason;
    use crate::batch::recuo_batch_result_kind;
    use crate::classify::recuo_cause;
    use crate::policy::{
        recuo_policy_free, recuo_policy_new, recuo_policy_set_base_ms, recuo_policy_set_cap_ms,
    };
    use std::mem::MaybeUninit;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Fails the first attempt of odd operations, then succeeds; operation 3 writes nothing.
    unsafe extern "C" fn op(
        index: usize,
        attempt: u32,
        _key: *const c_char,
        out: *mut recuo_verdict,
        user_data: *mut c_void,
    ) {
        // SAFETY: the test passes a live counter.
        let calls = unsafe { &*user_data.cast::<AtomicU32>() };
        calls.fetch_add(1, Ordering::AcqRel);
        if index == 3 {
            return;
        }
        let kind = if index % 2 == 1 && attempt == 0 { 2 } else { 1 };
        // SAFETY: recuo hands a writable verdict; its fields are plain numbers.
        unsafe {
            let raw = out.cast::<u32>();
            raw.write(kind);
            raw.add(1)
                .write(recuo_cause::RECUO_CAUSE_SERVER_ERROR as u32);
        }
    }

    #[test]
    fn every_operation_ends_and_is_counted() {
        let p = recuo_policy_new();
        let calls = AtomicU32::new(0);
        let empty = recuo_batch_result {
            kind: recuo_batch_result_kind::RECUO_BATCH_NOT_STARTED,
            reason: recuo_give_up_reason::RECUO_GIVE_UP_NONE,
            attempts: 99,
            no_verdict: false,
            gate_error: true,
            stopped_by: recuo_give_up_reason::RECUO_GIVE_UP_NONE,
        };
        let mut results = [empty; 6];
        let mut stats = MaybeUninit::<recuo_stats>::zeroed();
        // SAFETY: live handles, counter and outputs.
        let rc = unsafe {
            assert_eq!(recuo_policy_set_base_ms(p, 1), RECUO_OK);
            assert_eq!(recuo_policy_set_cap_ms(p, 2), RECUO_OK);
            let rc = recuo_batch_run(
                p,
                std::ptr::null(),
                6,
                Some(op),
                (&calls as *const AtomicU32).cast_mut().cast(),
                3,
                0,
                None,
                results.as_mut_ptr(),
                stats.as_mut_ptr(),
            );
            recuo_policy_free(p);
            rc
        };
        assert_eq!(rc, RECUO_ERR_NO_VERDICT);
        // SAFETY: filled by recuo_batch_run.
        let stats = unsafe { stats.assume_init() };
        let attempts: Vec<u32> = results.iter().map(|r| r.attempts).collect();
        assert_eq!(attempts, [1, 2, 1, 1, 1, 2]);
        assert!(results[3].no_verdict);
        assert!(
            results.iter().all(|r| !r.gate_error),
            "no gate, no gate error"
        );
        assert_eq!(
            results[3].kind,
            recuo_batch_result_kind::RECUO_BATCH_GAVE_UP
        );
        assert_eq!(calls.load(Ordering::Acquire), 8);
        assert_eq!(
            (
                stats.initial,
                stats.retries,
                stats.successes,
                stats.failures
            ),
            (6, 2, 5, 1)
        );
    }
}
