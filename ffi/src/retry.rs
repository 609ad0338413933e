//! `recuo_retry` and `recuo_retry_http`: an operation callback run under a policy, with real
//! sleeps.
//!
//! The loop is the core's: `recuo::drive` runs the operation machine (`recuo::Operation`)
//! with C's effects — call the operation, read its verdict, wait at the gate, sleep on the
//! cancellation token, hand the records to the sink. The machine decides and counts (the
//! report, the stats, the records, the gate's feedback); this file only converts.

use std::cell::OnceCell;
use std::time::Duration;

use recuo::{
    drive, AttemptContext, CancelToken, Cause, Driver, Gate, Level, Operation, Pass, Record,
    RegulatorError, Report, RequestLine, Seen, StatsRecorder, Stopped, Verdict,
};

use crate::attempt_context::recuo_attempt_context;
use crate::attempts::write_report;
use crate::com_retry::{recuo_sleep_fn, written_verdict};
use crate::prelude::*;
use crate::record::recuo_record_sink_fn;

/// The operation `recuo_retry` runs: make attempt number `attempt` (from 0), sending
/// `idempotency_key` (a NUL-terminated UUID v4 of 36 characters, the same on every attempt of
/// this `recuo_retry` call; valid during the call only — copy it to keep it) in the header
/// named by `recuo_policy_idempotency_header`, then write the verdict on what happened into
/// `*verdict_out`: with `recuo_classify` for an HTTP outcome, or by hand for a task with no
/// HTTP meaning (`RECUO_VERDICT_SUCCESS`, or `RECUO_VERDICT_RETRY` /
/// `RECUO_VERDICT_GIVE_UP` with a cause).
///
/// `*verdict_out` is all zeros when the operation is called; if it is still 0, or holds a
/// field that is none of its constants, when the operation returns, `recuo_retry` stops with
/// `RECUO_ERR_NO_VERDICT` (so a failed `recuo_classify` can never pass for a success).
/// Whatever the operation points to (headers, method) only has to live until its own
/// `recuo_classify` call returns: recuo copies the verdict, never the pointers.
pub type recuo_operation_fn = Option<
    unsafe extern "C" fn(
        attempt: u32,
        idempotency_key: *const c_char,
        verdict_out: *mut recuo_verdict,
        user_data: *mut c_void,
    ),
>;

/// The hook called before each sleep of `recuo_retry`: `attempt` is the attempt that just
/// failed, `verdict` its verdict (valid during the call), `delay_ms` the delay about to be
/// slept (possibly 0, then nothing is slept). Receives the call's `user_data`.
pub type recuo_on_retry_fn = Option<
    unsafe extern "C" fn(
        attempt: u32,
        verdict: *const recuo_verdict,
        delay_ms: u64,
        user_data: *mut c_void,
    ),
>;

/// The hook called once when `recuo_retry` gives up, before it returns, with the report
/// (valid during the call). Receives the call's `user_data`.
pub type recuo_on_give_up_fn =
    Option<unsafe extern "C" fn(report: *const recuo_report, user_data: *mut c_void)>;

/// Options for `recuo_retry` and `recuo_retry_http`: an opaque handle, so that options can be
/// added without changing any signature. Backed by a Rust struct holding an optional jitter
/// seed, an optional sleep callback, an optional cancellation flag, attempt pool, gate and
/// stats recorder (shared references), the optional hooks, an optional record sink with the
/// request's method and URL (copies), and optional clock callbacks.
///
/// Create it with `recuo_retry_options_new`, set what you need, pass it to any number of
/// `recuo_retry` calls (also from several threads at once, as long as no setter runs
/// meanwhile: the calls only read it), release it with `recuo_retry_options_free`.
#[derive(Debug, Clone, Default)]
pub struct recuo_retry_options {
    seed: Option<u64>,
    sleep_ms: recuo_sleep_fn,
    cancel: Option<CancelToken>,
    pool: Option<(recuo::AttemptPool, bool)>,
    on_retry: recuo_on_retry_fn,
    on_give_up: recuo_on_give_up_fn,
    gate: Option<Gate>,
    record_sink: recuo_record_sink_fn,
    metrics: crate::telemetry::recuo_metrics_fn,
    /// The request's method and URL (as given: redacted when a record is built).
    method: String,
    url: Vec<u8>,
    monotonic_ms: recuo_monotonic_clock_fn,
    unix_ms: recuo_wall_clock_fn,
    stats: Option<StatsRecorder>,
}

/// New options with the defaults: jitter seeded by the operating system, real sleeps
/// and clocks, no cancellation token, no attempt pool, no gate, no hooks, no record sink (and
/// an empty method and URL), no stats recorder. Free them with
/// `recuo_retry_options_free`. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_retry_options_new() -> *mut recuo_retry_options {
    boundary(|| Box::into_raw(Box::default()))
}

/// Releases an options handle. NULL is accepted and ignored.
///
/// # Safety
/// `options` must be NULL or come from `recuo_retry_options_new` and not have been freed.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_free(options: *mut recuo_retry_options) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(options) })
}

/// Draws the jitter from a generator seeded with `seed`: the same seed and outcomes give the
/// same delays on every run. The idempotency key still comes from the operating system's
/// random source (a seed never makes a key). Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_seed(
    options: *mut recuo_retry_options,
    seed: u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with(options, |o| o.seed = Some(seed)) }
}

/// Replaces the real sleep with `sleep_ms`, called with each non-zero delay and the call's
/// `user_data` (for tests, and for callers with their own timers); NULL restores the real
/// sleep. A cancellation cannot interrupt your sleep: it is seen when it returns. Returns
/// `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_sleep(
    options: *mut recuo_retry_options,
    sleep_ms: recuo_sleep_fn,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with(options, |o| o.sleep_ms = sleep_ms) }
}

/// Makes `recuo_retry` stop when `token` is cancelled (see `recuo_cancel_token`); NULL
/// removes the token. The options keep their own reference to the flag. Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT` (for `options`).
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread; `token` NULL or a
/// live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_cancel_token(
    options: *mut recuo_retry_options,
    token: *const recuo_cancel_token,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe { ptr::with(options, |o| o.cancel = ptr::shared(token).ok()) }
}

/// Makes `recuo_retry` draw its attempts from `pool` (nested loops share one limit);
/// `nested` as in `recuo_attempts_set_pool` (false for the outermost loop, true for a loop
/// running inside an attempt of one). NULL removes the pool. The options keep their own
/// reference to the count. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT` (for `options`).
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread; `pool` NULL or a
/// live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_pool(
    options: *mut recuo_retry_options,
    pool: *const recuo_attempt_pool,
    nested: bool,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    let pool = unsafe { ptr::shared(pool) }.ok().zip(Some(nested));
    // SAFETY: as above.
    unsafe { ptr::with(options, |o| o.pool = pool) }
}

/// Sets the hook called before each sleep (see `recuo_on_retry_fn`); NULL removes it.
/// Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_on_retry(
    options: *mut recuo_retry_options,
    on_retry: recuo_on_retry_fn,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with(options, |o| o.on_retry = on_retry) }
}

/// Sets the hook called once on giving up (see `recuo_on_give_up_fn`); NULL removes it.
/// Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_on_give_up(
    options: *mut recuo_retry_options,
    on_give_up: recuo_on_give_up_fn,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with(options, |o| o.on_give_up = on_give_up) }
}

/// Sends every attempt of `recuo_retry` through `gate`; NULL removes the
/// gate. The options keep their own reference to the gate as it is now (its regulator, limit
/// and budget are shared, not copied), so the handle may be freed or changed afterwards
/// without changing the options. With a gate, `recuo_retry`:
///
/// * before each attempt, first or retry, waits for a place in flight, then for a start
///   slot (blocking the calling thread; the options' cancellation token wakes it, and the
///   loop then gives up with `RECUO_GIVE_UP_CANCELLED`);
/// * gives the place back as soon as the operation returns — before the hook and any sleep;
/// * takes a retry from the gate's budget before each sleep: none left, and it gives up with
///   `RECUO_GIVE_UP_BUDGET_EXHAUSTED` (attempt 0 is counted by the budget);
/// * tells an adaptive regulator to slow down on a `RECUO_CAUSE_RATE_LIMITED` verdict and to
///   speed back up on a success;
/// * stops with the gate's error when its regulator or limit is on a Redis server that
///   cannot be used (`RECUO_ERR_IO`, or `RECUO_ERR_SHARED_MISMATCH`): that attempt is not
///   made, and the report says what was (see `recuo_retry`).
///
/// A sleep callback (`recuo_retry_options_set_sleep`) replaces the sleeps between attempts
/// only: waiting at the gate is always real. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`
/// (for `options`).
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread; `gate` NULL or a
/// live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_gate(
    options: *mut recuo_retry_options,
    gate: *const recuo_gate,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe { ptr::with(options, |o| o.gate = ptr::shared(gate).ok()) }
}

/// A monotonic clock replacing the real one in `recuo_retry` and `recuo_retry_http`:
/// milliseconds that never go back, any origin. Receives the call's `user_data`.
pub type recuo_monotonic_clock_fn = Option<unsafe extern "C" fn(user_data: *mut c_void) -> u64>;

/// A wall clock replacing the real one in the records of `recuo_retry` and
/// `recuo_retry_http`: milliseconds since the Unix epoch. Receives the call's `user_data`.
pub type recuo_wall_clock_fn = Option<unsafe extern "C" fn(user_data: *mut c_void) -> i64>;

/// Sends the records of every `recuo_retry_http` and `recuo_retry` call made with these
/// options to `sink`, as JSON lines (see `recuo_record_sink_fn`), with the call's
/// `user_data`, on the calling thread; NULL removes the sink.
///
/// * `recuo_retry_http` hands over one attempt record per attempt made, just after the
///   decision that followed it — before the `on_retry` hook and the sleep, or before the
///   result — then one result record: the start (RFC 3339, UTC), elapsed time, method,
///   redacted URL, status or transport failure, request id, wait headers, the delay chosen,
///   the decision (`retry`, `give_up`, `done`) and its reason (see
///   `recuo_record_attempt_json`), and the result (`success` or `gave_up`, the attempts, the
///   reason, the total time: see `recuo_record_result_json`). The `on_give_up` hook runs
///   after the records.
/// * `recuo_retry`, whose operation tells recuo nothing of the response, hands over the same
///   records with no HTTP meaning (a failed attempt as transport `other`).
///
/// The records are the operation machine's journal, the same in every language.
///
/// Every URL and header is redacted by the core before a record exists; the records name the
/// request set by `recuo_retry_options_set_request`. A loop that stops with
/// `RECUO_ERR_NO_VERDICT` or `RECUO_ERR_NO_RESPONSE` ends as a permanent failure does: the
/// attempt's record, then a result record with reason `permanent`. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_record_sink(
    options: *mut recuo_retry_options,
    sink: recuo_record_sink_fn,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with(options, |o| o.record_sink = sink) }
}

/// Hands the metric points of every `recuo_retry_http` and `recuo_retry` call made with these
/// options to `metrics` (see `recuo_metric_point`), with the call's `user_data`, on the
/// calling thread, as each attempt's decision and the result are made: attempts by outcome and
/// reason, retry delays, give-ups, time waited at the gate, budget refusals — the names a
/// Prometheus exporter or an OpenTelemetry meter takes as they are. NULL removes it. Returns
/// `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_metrics(
    options: *mut recuo_retry_options,
    metrics: crate::telemetry::recuo_metrics_fn,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with(options, |o| o.metrics = metrics) }
}

/// Names the request the records describe: its HTTP method (`method_len` bytes, UTF-8; empty
/// for a task with no HTTP meaning) and its URL (`url_len` bytes, as you request it: the
/// records show it redacted; bytes that are not UTF-8 are replaced by U+FFFD there). Both are
/// copied. The options hold one request: set it before each call (or use one options handle
/// per request). Only the records read it.
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`options`, or a pointer NULL with a
/// non-zero length); `RECUO_ERR_NOT_UTF8` (`method`); `RECUO_ERR_LENGTH_TOO_LARGE`. On an
/// error the options are unchanged.
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread; `method` and `url`
/// NULL or valid for their lengths.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_request(
    options: *mut recuo_retry_options,
    method: *const c_char,
    method_len: usize,
    url: *const c_char,
    url_len: usize,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for the bytes.
        let (method, url) = unsafe { (ptr::text(method, method_len)?, ptr::bytes(url, url_len)?) };
        // SAFETY: forwarded from the caller.
        let o = unsafe { ptr::handle(options) }?;
        (o.method, o.url) = (method.to_string(), url.to_vec());
        Ok(RECUO_OK)
    })
}

/// Replaces the clocks of `recuo_retry` and `recuo_retry_http` (for tests and simulations:
/// with the sleep callback, a fake clock makes a run exact): `monotonic_ms` for the
/// deadline, the report's elapsed time, the records' elapsed times and the stats' instants
/// (as milliseconds × 1 000 000); `unix_ms` for the records' start times. Either may be NULL:
/// the real clock. Both receive the call's `user_data`. Waiting at a gate stays real. Returns
/// `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_clock(
    options: *mut recuo_retry_options,
    monotonic_ms: recuo_monotonic_clock_fn,
    unix_ms: recuo_wall_clock_fn,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with(options, |o| {
            (o.monotonic_ms, o.unix_ms) = (monotonic_ms, unix_ms)
        })
    }
}

/// Makes `recuo_retry` and `recuo_retry_http` count into `recorder`, as every loop
/// counts (the operation machine does): each attempt's start (first attempt or retry, at
/// `recuo_monotonic_ns()`'s milliseconds × 1 000 000 unless a clock is set) and end, the 429s
/// and 503s among the verdicts (the last attempt's too), and how the operation ended (success, failure, or never started
/// when no attempt was made). Several calls, on several threads, may share one recorder; read
/// it with `recuo_stats_recorder_snapshot`. NULL removes the recorder. The options keep their
/// own reference. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT` (for `options`).
///
/// # Safety
/// `options` must be NULL or a live handle not in use by another thread; `recorder` NULL or a
/// live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_options_set_stats_recorder(
    options: *mut recuo_retry_options,
    recorder: *const recuo_stats_recorder,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe { ptr::with(options, |o| o.stats = ptr::shared(recorder).ok()) }
}

/// Runs `operation` under `policy` until it succeeds or the policy gives up:
/// attempt 0, then, while its verdict says retry and the policy allows, a delay (the backoff,
/// or the server's wait plus the spread; a real sleep on the calling thread, woken at once by
/// a cancellation) and the next attempt. The idempotency key is created once, before attempt
/// 0, and handed to every attempt. The loop is the core's operation machine driven by
/// `recuo::drive`, as in Rust, Python and PHP. With a gate (`recuo_retry_options_set_gate`)
/// every attempt passes it. A record sink on the options receives the machine's records
/// (with no HTTP meaning: the response is `recuo_retry_http`'s); a stats recorder counts the
/// attempts.
///
/// * `policy`: read at the start (a copy is used; validated: a configuration error is
///   returned before any attempt).
/// * `operation`, `user_data`: see `recuo_operation_fn`; `user_data` also goes to the sleep
///   callback, the clocks, the hooks and the record sink. Everything runs on the calling
///   thread.
/// * `options`: NULL for the defaults (see `recuo_retry_options_new`); only read.
/// * `report_out` (may be NULL): attempts made, reason, elapsed milliseconds (from the start
///   of the loop to its last step), number of
///   delays, and for a wait past the deadline how long until the server would accept a retry.
/// * `delays`, `delays_len`, `delays_written` (may be NULL, 0, NULL): the first
///   `min(delays_len, report.delay_count)` delays, in order, and how many were copied.
///
/// Returns:
/// * `RECUO_OK`: an attempt succeeded (`report.reason` is `RECUO_GIVE_UP_NONE`).
/// * `RECUO_ERR_GAVE_UP`: the policy gave up; `report.reason` says why (permanent,
///   attempts_exhausted, wait_exceeds_deadline, budget_exhausted, cancelled, the last
///   attempt's verdict included: a permanent last failure is `permanent`). The
///   `on_give_up` hook ran once, just before the return. The operation's own last result is
///   whatever it left in `user_data`.
/// * `RECUO_ERR_IO` (or another status of the gate's store): the gate could not be passed —
///   its regulator or concurrency limit is on a Redis server that could not be used (no
///   place and no start without the server's word). The attempt it was for was not made;
///   the report says what the loop did until then (its reason is what a refused entry comes
///   to, `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` or `RECUO_GIVE_UP_CANCELLED`); the
///   `on_give_up` hook does not run (the policy did not give up).
/// * `RECUO_ERR_NO_VERDICT`: the operation returned without a valid verdict; the loop stopped
///   there as on a permanent failure (no hook; the report, records and stats say
///   `permanent`).
/// * Before any attempt, with the outputs untouched: `RECUO_ERR_NULL_ARGUMENT` (`policy`,
///   `operation`, or `delays` with `delays_len > 0`), `RECUO_ERR_LENGTH_TOO_LARGE`, the
///   policy's configuration error.
///
/// # Safety
/// `policy` and `options` must be NULL or live handles, not changed during the call;
/// `operation` and the callbacks of `options` must be safe to call with `user_data` and must
/// return normally; the outputs must be NULL or writable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry(
    policy: *const recuo_policy,
    operation: recuo_operation_fn,
    user_data: *mut c_void,
    options: *const recuo_retry_options,
    report_out: *mut recuo_report,
    delays: *mut u64,
    delays_len: usize,
    delays_written: *mut usize,
) -> recuo_status {
    let out = (report_out, delays, delays_len, delays_written);
    // SAFETY: forwarded from the caller.
    unsafe { run(policy, operation.map(Call::Plain), user_data, options, out) }
}

/// The operation `recuo_retry_http` runs: `recuo_operation_fn` for an HTTP request, which also
/// tells recuo what came back. Make attempt number `attempt` (from 0), sending
/// `idempotency_key` as `recuo_operation_fn` says; then, before returning, call
/// `recuo_attempt_context_set_response(context, …)` with the outcome and the response's
/// headers, and write the verdict into `*verdict_out` (`recuo_classify` with the same outcome
/// and headers, or by hand). `context` is valid during the call only.
///
/// A call that returns without a response set stops the loop with `RECUO_ERR_NO_RESPONSE`
/// (one without a valid verdict, with `RECUO_ERR_NO_VERDICT`): a forgotten call can never
/// pass for an answer.
pub type recuo_http_operation_fn = Option<
    unsafe extern "C" fn(
        attempt: u32,
        idempotency_key: *const c_char,
        context: *mut recuo_attempt_context,
        verdict_out: *mut recuo_verdict,
        user_data: *mut c_void,
    ),
>;

/// `recuo_retry` for an operation that also tells recuo the response of each attempt
/// (`recuo_http_operation_fn`, `recuo_attempt_context_set_response`), so that every attempt
/// can be recorded: with a record sink on the options
/// (`recuo_retry_options_set_record_sink`, `recuo_retry_options_set_request`), each attempt
/// gives one attempt record — after the decision that followed it, before the `on_retry`
/// hook and the sleep — and the operation one result record at the end, all redacted by the
/// core before the sink sees them.
///
/// Everything else is `recuo_retry`: the same arguments, the same loop, options, hooks and
/// outputs, and the same returns, plus `RECUO_ERR_NO_RESPONSE` when the operation returned
/// without setting the response (the loop stopped there as on a permanent failure, no
/// hook).
///
/// # Safety
/// As `recuo_retry`.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_http(
    policy: *const recuo_policy,
    operation: recuo_http_operation_fn,
    user_data: *mut c_void,
    options: *const recuo_retry_options,
    report_out: *mut recuo_report,
    delays: *mut u64,
    delays_len: usize,
    delays_written: *mut usize,
) -> recuo_status {
    let out = (report_out, delays, delays_len, delays_written);
    // SAFETY: forwarded from the caller.
    unsafe { run(policy, operation.map(Call::Http), user_data, options, out) }
}

/// The function a C callback type (`Option<unsafe extern "C" fn(…)>`) holds when not NULL.
pub(crate) type Callback<T> = <T as Nullable>::Fn;

/// A C callback type: a function, or NULL.
pub(crate) trait Nullable {
    /// The function.
    type Fn;
}

impl<F> Nullable for Option<F> {
    type Fn = F;
}

/// The operation of a run: `recuo_retry`'s, or `recuo_retry_http`'s.
#[derive(Clone, Copy)]
enum Call {
    Plain(Callback<recuo_operation_fn>),
    Http(Callback<recuo_http_operation_fn>),
}

/// Where `recuo_retry` writes what happened: the report, the delays' buffer and its length,
/// how many delays were written.
type ReportOut = (*mut recuo_report, *mut u64, usize, *mut usize);

/// The body of `recuo_retry` and `recuo_retry_http`.
///
/// # Safety
/// As `recuo_retry`.
unsafe fn run(
    policy: *const recuo_policy,
    call: Option<Call>,
    user_data: *mut c_void,
    options: *const recuo_retry_options,
    (report_out, delays, delays_len, delays_written): ReportOut,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for every pointer (see # Safety).
        let policy = unsafe { ptr::input(policy) }?;
        let call = call.ok_or(RECUO_ERR_NULL_ARGUMENT)?;
        // SAFETY: as above.
        let delays = unsafe { ptr::slice_mut(delays, delays_len) }?;
        // Arguments first, the policy's configuration last.
        let policy = policy.policy()?;
        // SAFETY: the caller vouches for NULL or a live handle.
        let o = unsafe { options.as_ref() }.cloned().unwrap_or_default();
        let mut op = Operation::new(policy).seed(o.seed);
        if let Some((pool, nested)) = o.pool.clone() {
            op = op.pool(pool, nested);
        }
        op = o.gate.clone().into_iter().fold(op, Operation::gate);
        op = o.stats.clone().into_iter().fold(op, Operation::stats);
        if o.record_sink.is_some() || o.metrics.is_some() {
            op = op
                .request(&o.method, &lossy(&o.url).0)
                .records(Some(Level::Debug));
        }
        let mut driver = CDriver {
            call,
            user_data,
            cancel: o.cancel.clone().unwrap_or_default(),
            options: o,
            pass: None,
            gate_error: None,
            key: [0; RECUO_IDEMPOTENCY_KEY_SIZE],
            response: None,
            now_ms: 0,
            done: Report::default(),
        };
        let (status, report, retry_after_ms) = match drive(op, &OnceCell::new(), &mut driver) {
            Ok(()) => (RECUO_OK, std::mem::take(&mut driver.done), None),
            // The driver's effects never fail.
            Err(Stopped::Aborted(_)) => (RECUO_ERR_NO_VERDICT, Report::default(), None),
            Err(Stopped::GaveUp(e)) => {
                let retry_after_ms = e.retry_at_ms.map(|at| at.saturating_sub(driver.now_ms));
                let status = match (driver.gate_error.take(), e.error) {
                    (Some(gate), _) => gate.into(),
                    (None, Some(Failure::NoVerdict)) => RECUO_ERR_NO_VERDICT,
                    (None, Some(Failure::NoResponse)) => RECUO_ERR_NO_RESPONSE,
                    _ => RECUO_ERR_GAVE_UP,
                };
                if let (RECUO_ERR_GAVE_UP, Some(hook)) = (status, driver.options.on_give_up) {
                    let c_report = recuo_report::from_core(&e.report, retry_after_ms);
                    // SAFETY: the caller vouches that the hook may be called with `user_data`;
                    // the report lives across the call.
                    unsafe { hook(&c_report, user_data) };
                }
                (status, e.report, retry_after_ms)
            }
        };
        // SAFETY: the caller vouches for NULL or writable outputs.
        unsafe { write_report(&report, retry_after_ms, report_out, delays, delays_written) };
        Ok(status)
    })
}

/// What an attempt came to, when not a success (of `recuo_retry`'s operation, or of a batch's).
#[derive(Debug)]
pub(crate) enum Failure {
    /// The operation's verdict (a retry or a give-up).
    Verdict(Verdict),
    /// The operation wrote no valid verdict.
    NoVerdict,
    /// The operation (of `recuo_retry_http`) set no response.
    NoResponse,
}

impl Failure {
    /// What the verdict an operation wrote (if valid) makes of its attempt: `Ok` for a success.
    pub(crate) fn of(written: Option<Verdict>) -> Result<(), Failure> {
        match written {
            Some(Verdict::Success) => Ok(()),
            Some(v) => Err(Failure::Verdict(v)),
            None => Err(Failure::NoVerdict),
        }
    }

    /// The verdict the loop acts on: the operation's, or — without one, since no answer is no
    /// reason to try again — a permanent give-up (the loop stops, and says why).
    pub(crate) fn verdict(&self) -> Verdict {
        match self {
            Failure::Verdict(v) => *v,
            Failure::NoVerdict | Failure::NoResponse => Verdict::GiveUp {
                cause: Cause::Permanent,
            },
        }
    }
}

/// The effects of one `recuo_retry` call, for `recuo::drive`.
struct CDriver {
    call: Call,
    user_data: *mut c_void,
    cancel: CancelToken,
    options: recuo_retry_options,
    /// The gate's passage of the attempt running.
    pass: Option<Pass>,
    /// Why the gate could not be passed (a Redis store out of reach), ending the loop.
    gate_error: Option<RegulatorError>,
    /// The idempotency key, NUL-terminated, for the operation.
    key: [u8; RECUO_IDEMPOTENCY_KEY_SIZE],
    /// What the attempt just made said it received (`recuo_retry_http`).
    response: Option<Seen>,
    /// The last reading of the clock.
    now_ms: u64,
    /// The report of a success.
    done: Report,
}

impl Driver for CDriver {
    type Value = ();
    type Error = Failure;

    fn now_ms(&mut self) -> u64 {
        self.now_ms = match self.options.monotonic_ms {
            // SAFETY: the caller of recuo_retry vouches for the callbacks and `user_data`.
            Some(clock) => unsafe { clock(self.user_data) },
            None => recuo::monotonic_ms(),
        };
        self.now_ms
    }

    fn unix_ms(&mut self) -> i64 {
        match self.options.unix_ms {
            // SAFETY: as for the monotonic clock.
            Some(clock) => unsafe { clock(self.user_data) },
            None => recuo::unix_now_ms(),
        }
    }

    fn is_cancelled(&mut self) -> bool {
        self.cancel.is_cancelled()
    }

    fn enter(&mut self, _attempt: u32, until_ms: Option<u64>) -> Result<bool, Failure> {
        let now = self.now_ms();
        let timeout = until_ms.map(|until| Duration::from_millis(until.saturating_sub(now)));
        let gate = self.options.gate.clone().unwrap_or_default();
        // A cost of 1 never exceeds a burst; a store out of reach is no passage, and the
        // loop ends with its error (as Rust's `Retry` keeps it in `gate_error`).
        match gate.wait(timeout, &self.cancel) {
            Ok(pass) => self.pass = pass,
            Err(e) => {
                self.pass = None;
                self.gate_error = Some(e);
            }
        }
        Ok(self.pass.is_some())
    }

    fn attempt(&mut self, ctx: &AttemptContext<'_>) -> Result<(), Failure> {
        let key = ctx.idempotency_key();
        self.key[..key.as_str().len()].copy_from_slice(key.as_str().as_bytes());
        let mut context = recuo_attempt_context::default();
        let (call, key, data) = (self.call, self.key.as_ptr().cast(), self.user_data);
        // SAFETY: the caller of recuo_retry vouches that the operation may be called with
        // `user_data`; the key, the context and the verdict live across the call.
        let ((), written) = written_verdict(|out| unsafe {
            match call {
                Call::Plain(call) => call(ctx.attempt(), key, out, data),
                Call::Http(call) => call(ctx.attempt(), key, &mut context, out, data),
            }
        });
        self.response = context.response;
        if matches!((call, &self.response), (Call::Http(_), None)) {
            return Err(Failure::NoResponse);
        }
        Failure::of(written)
    }

    fn leave(&mut self) {
        self.pass = None;
    }

    fn observed(&mut self, _failed: bool) -> (Option<RequestLine>, Option<Seen>) {
        (None, self.response.take())
    }

    fn classify(&mut self, error: &Failure) -> Result<(Verdict, Option<Seen>), Failure> {
        Ok((error.verdict(), None))
    }

    fn on_retry(&mut self, attempt: u32, error: &Failure, delay: Duration) -> Result<(), Failure> {
        if let (Some(hook), Failure::Verdict(v)) = (self.options.on_retry, error) {
            let verdict = recuo_verdict::from_core(*v);
            let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
            // SAFETY: as for the operation; the verdict lives across the call.
            unsafe { hook(attempt, &verdict, ms, self.user_data) };
        }
        Ok(())
    }

    fn sleep(&mut self, delay: Duration) -> Result<bool, Failure> {
        Ok(match self.options.sleep_ms {
            Some(sleep_ms) => {
                let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
                // SAFETY: as for the operation.
                unsafe { sleep_ms(ms, self.user_data) };
                self.cancel.is_cancelled()
            }
            None => self.cancel.sleep(delay),
        })
    }

    fn on_record(&mut self, _level: Level, record: &Record) {
        crate::telemetry::send_points(self.options.metrics, self.user_data, record);
        if let Some(sink) = self.options.record_sink {
            let mut line = record.to_json_line();
            let len = line.len();
            line.push('\0');
            // SAFETY: the caller vouches for the sink and `user_data`; the line lives across
            // the call.
            unsafe { sink(line.as_ptr().cast(), len, self.user_data) };
        }
    }

    fn on_done(&mut self, report: &Report) {
        self.done = report.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attempt_context::recuo_attempt_context_set_response;
    use crate::attempts::recuo_give_up_reason;
    use crate::cancel::{
        recuo_cancel_token_cancel, recuo_cancel_token_free, recuo_cancel_token_is_cancelled,
        recuo_cancel_token_new,
    };
    use crate::classify::recuo_cause;
    use crate::classify::{recuo_header, recuo_outcome};
    use crate::policy::{
        recuo_policy_free, recuo_policy_new, recuo_policy_set_base_ms, recuo_policy_set_cap_ms,
        recuo_policy_set_jitter,
    };
    use crate::pool::{recuo_attempt_pool_free, recuo_attempt_pool_new};

    /// What the test operation answers, and what the callbacks saw.
    #[derive(Default)]
    struct Script {
        /// Verdict kinds per attempt (0: write nothing); the last one repeats.
        kinds: Vec<u32>,
        calls: u32,
        inner_calls: u32,
        inner_status: Option<recuo_status>,
        keys: Vec<String>,
        events: Vec<String>,
        inner: Option<(*const recuo_policy, *const recuo_retry_options)>,
    }

    // The callbacks only record (a panic may not unwind out of an `extern "C"` function); the
    // tests assert afterwards.
    unsafe extern "C" fn operation(
        attempt: u32,
        key: *const c_char,
        out: *mut recuo_verdict,
        user_data: *mut c_void,
    ) {
        // SAFETY: the tests pass a live Script, recuo a live key and verdict.
        let s = unsafe { &mut *user_data.cast::<Script>() };
        s.calls += 1;
        // SAFETY: recuo hands a NUL-terminated key.
        let key = unsafe { std::ffi::CStr::from_ptr(key) };
        s.keys.push(key.to_string_lossy().into_owned());
        s.events.push(format!("op{attempt}"));
        if let Some((policy, options)) = s.inner {
            let mut inner = Script {
                kinds: vec![2],
                ..Script::default()
            };
            // SAFETY: live handles and a live Script.
            let rc = unsafe {
                recuo_retry(
                    policy,
                    Some(operation),
                    (&mut inner as *mut Script).cast(),
                    options,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0,
                    std::ptr::null_mut(),
                )
            };
            s.inner_status = Some(rc);
            s.inner_calls += inner.calls;
        }
        let kind = s.kinds.get(attempt as usize).or(s.kinds.last()).copied();
        let kind = kind.unwrap_or(0);
        if kind != 0 {
            // SAFETY: recuo hands a writable verdict; the mirror's fields are plain numbers.
            unsafe {
                let raw = out.cast::<u32>();
                raw.write(kind);
                raw.add(1)
                    .write(recuo_cause::RECUO_CAUSE_SERVER_ERROR as u32);
            }
        }
    }

    unsafe extern "C" fn on_retry(
        attempt: u32,
        verdict: *const recuo_verdict,
        delay_ms: u64,
        user_data: *mut c_void,
    ) {
        // SAFETY: the tests pass a live Script, recuo a live verdict.
        let (s, v) = unsafe { (&mut *user_data.cast::<Script>(), &*verdict) };
        let kind = v.verdict.name().to_str().unwrap_or("?");
        let wait = v.wait.name().to_str().unwrap_or("?");
        s.events
            .push(format!("retry{attempt}:{delay_ms}:{kind}:{wait}"));
    }

    unsafe extern "C" fn sleep(ms: u64, user_data: *mut c_void) {
        // SAFETY: the tests pass a live Script.
        unsafe { &mut *user_data.cast::<Script>() }
            .events
            .push(format!("sleep{ms}"));
    }

    unsafe extern "C" fn on_give_up(report: *const recuo_report, user_data: *mut c_void) {
        // SAFETY: the tests pass a live Script, recuo a live report.
        let (s, r) = unsafe { (&mut *user_data.cast::<Script>(), &*report) };
        s.events
            .push(format!("give_up{}:{}", r.attempts, r.reason as u32));
    }

    /// A policy of fixed delays: base 10, cap 20, no jitter.
    fn policy() -> *mut recuo_policy {
        let p = recuo_policy_new();
        // SAFETY: a live handle.
        unsafe {
            assert_eq!(recuo_policy_set_base_ms(p, 10), RECUO_OK);
            assert_eq!(recuo_policy_set_cap_ms(p, 20), RECUO_OK);
            assert_eq!(recuo_policy_set_jitter(p, 4), RECUO_OK);
        }
        p
    }

    fn options() -> *mut recuo_retry_options {
        let o = recuo_retry_options_new();
        // SAFETY: a live handle.
        unsafe {
            assert_eq!(recuo_retry_options_set_seed(o, 1), RECUO_OK);
            assert_eq!(recuo_retry_options_set_sleep(o, Some(sleep)), RECUO_OK);
            assert_eq!(
                recuo_retry_options_set_on_retry(o, Some(on_retry)),
                RECUO_OK
            );
            assert_eq!(
                recuo_retry_options_set_on_give_up(o, Some(on_give_up)),
                RECUO_OK
            );
        }
        o
    }

    fn run(
        p: *const recuo_policy,
        o: *const recuo_retry_options,
        s: &mut Script,
    ) -> (recuo_status, recuo_report, Vec<u64>) {
        let mut report = recuo_report::from_core(&Report::default(), None);
        let mut delays = [0u64; 8];
        let mut n = 0;
        // SAFETY: live handles, Script and outputs.
        let rc = unsafe {
            recuo_retry(
                p,
                Some(operation),
                (s as *mut Script).cast(),
                o,
                &mut report,
                delays.as_mut_ptr(),
                8,
                &mut n,
            )
        };
        (rc, report, delays[..n].to_vec())
    }

    #[test]
    fn the_loop_calls_hooks_in_order_and_reports() {
        let (p, o) = (policy(), options());
        let mut s = Script {
            kinds: vec![2, 2, 1],
            ..Script::default()
        };
        let (rc, report, delays) = run(p, o, &mut s);
        assert_eq!(rc, RECUO_OK);
        assert_eq!(
            s.events,
            [
                "op0",
                "retry0:10:retry:none",
                "sleep10",
                "op1",
                "retry1:20:retry:none",
                "sleep20",
                "op2"
            ]
        );
        assert_eq!((report.attempts, report.delay_count), (3, 2));
        assert_eq!(report.reason, recuo_give_up_reason::RECUO_GIVE_UP_NONE);
        assert_eq!(delays, [10, 20]);
        assert!(s.keys.iter().all(|k| *k == s.keys[0]) && s.keys[0].len() == 36);

        let mut failing = Script {
            kinds: vec![2],
            ..Script::default()
        };
        let (rc, report, delays) = run(p, o, &mut failing);
        assert_eq!(rc, RECUO_ERR_GAVE_UP);
        assert_eq!(failing.calls, 5);
        assert_eq!(
            failing.events.last().map(String::as_str),
            Some("give_up5:2")
        );
        assert_eq!(delays, [10, 20, 20, 20]);
        assert_eq!(
            report.reason,
            recuo_give_up_reason::RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED
        );
        // SAFETY: live handles, freed once.
        unsafe {
            recuo_retry_options_free(o);
            recuo_policy_free(p);
        }
    }

    #[test]
    fn a_missing_verdict_stops_the_loop_without_a_hook() {
        let (p, o) = (policy(), options());
        let mut s = Script {
            kinds: vec![2, 0],
            ..Script::default()
        };
        let (rc, report, _) = run(p, o, &mut s);
        assert_eq!(rc, RECUO_ERR_NO_VERDICT);
        assert_eq!((s.calls, report.attempts), (2, 2));
        assert!(!s.events.iter().any(|e| e.starts_with("give_up")));
        // SAFETY: live handles, freed once.
        unsafe {
            recuo_retry_options_free(o);
            recuo_policy_free(p);
        }
    }

    #[test]
    fn nested_loops_share_an_explicit_pool() {
        let (p, outer_o, inner_o) = (policy(), options(), options());
        let pool = recuo_attempt_pool_new(5);
        // SAFETY: live handles.
        unsafe {
            assert_eq!(recuo_retry_options_set_pool(outer_o, pool, false), RECUO_OK);
            assert_eq!(recuo_retry_options_set_pool(inner_o, pool, true), RECUO_OK);
            recuo_attempt_pool_free(pool);
        }
        let mut s = Script {
            kinds: vec![2],
            inner: Some((p, inner_o)),
            ..Script::default()
        };
        let (rc, report, _) = run(p, outer_o, &mut s);
        assert_eq!(rc, RECUO_ERR_GAVE_UP);
        // One outer attempt, made of five inner ones: 5 calls of the operation, not 25.
        assert_eq!((s.calls, s.inner_calls, report.attempts), (1, 5, 1));
        assert_eq!(s.inner_status, Some(RECUO_ERR_GAVE_UP));
        assert_eq!(
            report.reason,
            recuo_give_up_reason::RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED
        );
        // SAFETY: live handles, freed once.
        unsafe {
            recuo_retry_options_free(outer_o);
            recuo_retry_options_free(inner_o);
            recuo_policy_free(p);
        }
    }

    #[test]
    fn a_cancelled_token_stops_before_the_first_attempt() {
        let (p, o) = (policy(), options());
        let t = recuo_cancel_token_new();
        // SAFETY: live handles.
        unsafe {
            assert_eq!(recuo_cancel_token_cancel(t), RECUO_OK);
            assert!(recuo_cancel_token_is_cancelled(t));
            assert_eq!(recuo_retry_options_set_cancel_token(o, t), RECUO_OK);
            recuo_cancel_token_free(t);
        }
        let mut s = Script {
            kinds: vec![1],
            ..Script::default()
        };
        let (rc, report, _) = run(p, o, &mut s);
        assert_eq!((rc, s.calls, report.attempts), (RECUO_ERR_GAVE_UP, 0, 0));
        assert_eq!(report.reason, recuo_give_up_reason::RECUO_GIVE_UP_CANCELLED);
        // SAFETY: live handles, freed once.
        unsafe {
            recuo_retry_options_free(o);
            recuo_policy_free(p);
        }
    }

    /// The HTTP operation: a 503 for attempts in `kinds` equal to 2, else a 200; sets the
    /// response unless the kind is 0.
    unsafe extern "C" fn http_operation(
        attempt: u32,
        _key: *const c_char,
        context: *mut recuo_attempt_context,
        out: *mut recuo_verdict,
        user_data: *mut c_void,
    ) {
        // SAFETY: the tests pass a live Script, recuo a live context and verdict.
        let s = unsafe { &mut *user_data.cast::<Script>() };
        s.calls += 1;
        s.events.push(format!("op{attempt}"));
        let kind = s.kinds.get(attempt as usize).or(s.kinds.last()).copied();
        if kind == Some(0) {
            return;
        }
        let status = if kind == Some(2) { 503 } else { 200 };
        let outcome = recuo_outcome {
            kind: crate::classify::recuo_outcome_kind::RECUO_OUTCOME_STATUS,
            status,
            transport: crate::classify::recuo_transport::RECUO_TRANSPORT_OTHER,
        };
        let headers = [recuo_header {
            name: c"Authorization".as_ptr(),
            name_len: 13,
            value: c"Bearer s3cr3t".as_ptr(),
            value_len: 13,
        }];
        // SAFETY: live context, outcome, headers and verdict.
        unsafe {
            recuo_attempt_context_set_response(context, &outcome, headers.as_ptr(), 1);
            let verdict = if status == 200 {
                Verdict::Success
            } else {
                Verdict::Retry {
                    cause: recuo::Cause::Unavailable,
                    server_wait: None,
                }
            };
            out.write(recuo_verdict::from_core(verdict));
        }
    }

    unsafe extern "C" fn sink(line: *const c_char, len: usize, user_data: *mut c_void) {
        // SAFETY: the tests pass a live Script, recuo a live NUL-terminated line.
        let (s, line) = unsafe {
            (
                &mut *user_data.cast::<Script>(),
                std::ffi::CStr::from_ptr(line).to_str().unwrap_or("?"),
            )
        };
        let kind = if line.contains("\"type\":\"result\"") {
            "result"
        } else {
            "attempt"
        };
        let decision = ["done", "retry", "give_up", "success", "gave_up"]
            .into_iter()
            .find(|d| line.contains(&format!(":\"{d}\"")))
            .unwrap_or("?");
        let clean = !line.contains("s3cr3t") && line.len() == len;
        s.events.push(format!("{kind}:{decision}:{clean}"));
    }

    #[test]
    fn records_come_after_the_decision_and_before_the_hooks() {
        let (p, o) = (policy(), options());
        // SAFETY: a live handle.
        unsafe {
            assert_eq!(recuo_retry_options_set_record_sink(o, Some(sink)), RECUO_OK);
            assert_eq!(
                recuo_retry_options_set_request(
                    o,
                    c"GET".as_ptr(),
                    3,
                    c"/x?token=s3cr3t".as_ptr(),
                    15
                ),
                RECUO_OK
            );
        }
        let run_http = |s: &mut Script| {
            // SAFETY: live handles and Script.
            unsafe {
                recuo_retry_http(
                    p,
                    Some(http_operation),
                    (s as *mut Script).cast(),
                    o,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0,
                    std::ptr::null_mut(),
                )
            }
        };
        let mut s = Script {
            kinds: vec![2, 1],
            ..Script::default()
        };
        assert_eq!(run_http(&mut s), RECUO_OK);
        assert_eq!(
            s.events,
            [
                "op0",
                "attempt:retry:true",
                "retry0:10:retry:none",
                "sleep10",
                "op1",
                "attempt:done:true",
                "result:success:true"
            ]
        );
        let mut s = Script {
            kinds: vec![2],
            ..Script::default()
        };
        assert_eq!(run_http(&mut s), RECUO_ERR_GAVE_UP);
        assert_eq!(
            &s.events[s.events.len() - 3..],
            ["attempt:give_up:true", "result:gave_up:true", "give_up5:2"]
        );
        let mut s = Script {
            kinds: vec![0],
            ..Script::default()
        };
        assert_eq!(run_http(&mut s), RECUO_ERR_NO_RESPONSE);
        // A missing response stops the loop as a permanent failure would: its attempt is
        // recorded (with no HTTP meaning), then the result.
        assert_eq!(
            s.events,
            ["op0", "attempt:give_up:true", "result:gave_up:true"]
        );
        // SAFETY: live handles, freed once.
        unsafe {
            recuo_retry_options_free(o);
            recuo_policy_free(p);
        }
    }
}
