//! The limits on a Redis server that the host reaches itself: a program with a Redis client
//! of its own (recuo's WebAssembly build, whose JavaScript runs the calls with the user's
//! `redis` or `ioredis` client). The regulator, the concurrency limit and the retry budget are
//! recuo-redis's, their calls going through a `recuo_host_channel` instead of a connection;
//! the gates and the operation machine use them as any other.
//!
//! The protocol, one channel per limit:
//! 1. Make the channel, then the limit on it: its key's settings are the first call left
//!    pending. Run it, answer it, and read `recuo_host_channel_settled`.
//! 2. When a call returns `RECUO_HOST_PENDING`, the channel holds the call it waits on
//!    (`recuo_host_channel_pending`): run it on the server (`EVALSHA sha1`, then `EVAL
//!    script` when the server answers `NOSCRIPT`), give its reply's integers
//!    (`recuo_host_channel_answer`) and make the same call again.
//! 3. After each call, run the calls the channel queued (`recuo_host_channel_take_notice`),
//!    in order: a first attempt counted, a place given back, a 429 told to an adaptive key.
//! 4. Before `recuo_attempts_judged`, when `recuo_attempts_would_draw_on_budget` says so, ask
//!    the budget for the retry (`recuo_retry_budget_try_withdraw`, which answers
//!    `RECUO_HOST_PENDING`), run and answer that call: `judged` then reads the reply.

use recuo::{ConcurrencyLimit, Regulator, RetryBudget};
use recuo_redis::calls::{BudgetCalls, GcraCalls, LeaseCalls, ScriptCall};
use recuo_redis::host::{HostBudget, HostChannel, HostGcra, HostLimit};

use crate::prelude::*;

/// A channel between one limit kept on a Redis server and the host that reaches the server.
#[derive(Debug, Clone, Default)]
pub struct recuo_host_channel(pub(crate) HostChannel);

/// A new, empty channel in `*out`: free it with `recuo_host_channel_free` (the limit made on
/// it keeps its own reference). Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `out` must be NULL or a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn recuo_host_channel_new(out: *mut *mut recuo_host_channel) -> recuo_status {
    // SAFETY: a checked output.
    unsafe { ptr::make(out, || Ok(recuo_host_channel::default())) }
}

/// Releases a channel handle. NULL is accepted and ignored.
///
/// # Safety
/// `channel` must be NULL or come from `recuo_host_channel_new`, not have been freed, and
/// not be in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_host_channel_free(channel: *mut recuo_host_channel) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(channel) })
}

/// `call` as the JSON text the host reads: `{"sha1": …, "script": …, "keys": […],
/// "args": […]}`; the empty text for none.
fn call_json(call: Option<&ScriptCall>) -> String {
    call.map_or_else(String::new, |call| {
        serde_json::json!({
            "sha1": call.script.sha1,
            "script": call.script.body,
            "keys": call.keys,
            "args": call.args,
        })
        .to_string()
    })
}

/// The call the channel's limit waits on, as JSON into `buf` (`buf_len` bytes, NUL-terminated;
/// its length without the NUL in `*written`), or the empty text when it waits on none.
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (call again with a larger buffer: a
/// script's text is a few kilobytes); `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// `channel` NULL or a live handle; `buf` `buf_len` writable bytes; `written` NULL or a
/// `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_host_channel_pending(
    channel: *const recuo_host_channel,
    buf: *mut c_char,
    buf_len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_ref(channel, |ch| {
            write_text(buf, buf_len, written, &call_json(ch.0.pending().as_ref()))
        })
    }
}

/// The next call the channel queued whose reply nothing waits for, as JSON (as
/// `recuo_host_channel_pending`), taken from the queue only when it fits; the empty text when
/// none is left. Run them in order.
///
/// # Safety
/// As `recuo_host_channel_pending`.
#[no_mangle]
pub unsafe extern "C" fn recuo_host_channel_take_notice(
    channel: *const recuo_host_channel,
    buf: *mut c_char,
    buf_len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_ref(channel, |ch| {
            let next = ch.0.peek_notice();
            let status = write_text(buf, buf_len, written, &call_json(next.as_ref()));
            if status == RECUO_OK && next.is_some() {
                let _ = ch.0.take_notice();
            }
            status
        })
    }
}

/// The reply to the pending call: its `count` integers (Redis's integers, or the numbers it
/// answered as text). Returns `RECUO_OK`, `RECUO_ERR_NULL_ARGUMENT` or
/// `RECUO_ERR_LENGTH_TOO_LARGE` (over 64 integers: no reply of recuo's scripts is so long).
///
/// # Safety
/// `channel` NULL or a live handle; `reply` `count` readable integers (NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn recuo_host_channel_answer(
    channel: *const recuo_host_channel,
    reply: *const i64,
    count: usize,
) -> recuo_status {
    /// The longest reply recuo's scripts make is a few integers.
    const MOST: usize = 64;
    checked(|| {
        if count > MOST {
            return Err(RECUO_ERR_LENGTH_TOO_LARGE);
        }
        // SAFETY: the caller vouches for the handle and the integers.
        let (channel, reply) = unsafe { (ptr::input(channel)?, ptr::slice(reply, count)?) };
        channel.0.answer(reply.to_vec());
        Ok(RECUO_OK)
    })
}

/// Whether the limit's key agrees with this user's settings: `RECUO_OK`;
/// `RECUO_HOST_PENDING` until the settings' call is answered; `RECUO_ERR_SHARED_MISMATCH`
/// with both settings named in `detail` (a key set up otherwise: every user must agree, and
/// the limit is not used); `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `channel` NULL or a live handle; `detail` NULL or `detail_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn recuo_host_channel_settled(
    channel: *const recuo_host_channel,
    detail: *mut c_char,
    detail_len: usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_ref(channel, |ch| {
            let (status, text) = match ch.0.settled() {
                None => (RECUO_HOST_PENDING, String::new()),
                Some(Ok(())) => (RECUO_OK, String::new()),
                Some(Err(m)) => (RECUO_ERR_SHARED_MISMATCH, m),
            };
            write_detail(detail, detail_len, &text);
            status
        })
    }
}

/// A host limit's constructor: `build` from the key and the channel, checked, into `*out`.
///
/// # Safety
/// `key` `key_len` readable bytes; `channel` NULL or a live handle; `out` NULL or writable.
unsafe fn make<T>(
    key: *const c_char,
    key_len: usize,
    channel: *const recuo_host_channel,
    out: *mut *mut T,
    build: impl FnOnce(&str, HostChannel) -> Result<T, recuo_status>,
) -> recuo_status {
    checked(|| {
        // SAFETY: forwarded from the caller.
        let (key, channel) = unsafe { (ptr::text(key, key_len)?, ptr::input(channel)?) };
        // SAFETY: the caller vouches for `out`.
        Ok(unsafe { ptr::make(out, || build(key, channel.0.clone())) })
    })
}

/// A regulator kept under `key` on the Redis server the host reaches through `channel`:
/// `per_second` starts a second, `burst` at once, adaptive or not, as
/// `recuo_regulator_new_redis_with` — its key's settings the channel's first call.
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_RATE`; `RECUO_ERR_ZERO_BURST`; `RECUO_ERR_NOT_UTF8`;
/// `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// `key` `key_len` readable bytes; `channel` a live handle; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_new_host(
    key: *const c_char,
    key_len: usize,
    per_second: f64,
    burst: u32,
    adaptive: bool,
    channel: *const recuo_host_channel,
    out: *mut *mut recuo_regulator,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        make(key, key_len, channel, out, |key, ch| {
            let rate = rate(per_second)?;
            let calls = GcraCalls::new(key, rate.interval_ns(), burst, adaptive);
            let settings = calls.settings();
            let store = HostGcra::new(calls, ch.clone());
            let regulator = Regulator::remote(Box::new(store), rate, burst, adaptive)?;
            ch.check_settings(settings);
            Ok(recuo_regulator(regulator))
        })
    }
}

/// A concurrency limit kept under `key` on the Redis server the host reaches through
/// `channel`: `limit` places, each a lease of `lease_ms` (1 ms to 1 day), as
/// `recuo_concurrency_limit_new_redis`. A gate's look only asks (the host waits between
/// looks). Returns `RECUO_OK`; `RECUO_ERR_ZERO_LIMIT`; `RECUO_ERR_INVALID_LEASE`;
/// `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// As `recuo_regulator_new_host`.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_new_host(
    key: *const c_char,
    key_len: usize,
    limit: u32,
    lease_ms: u64,
    channel: *const recuo_host_channel,
    out: *mut *mut recuo_concurrency_limit,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        make(key, key_len, channel, out, |key, ch| {
            crate::limit::lease(limit, lease_ms)?;
            let calls = LeaseCalls::new(key, limit, lease_ms);
            ch.check_settings(calls.settings());
            let limit = ConcurrencyLimit::remote(Box::new(HostLimit::new(calls, ch)));
            Ok(recuo_concurrency_limit(limit))
        })
    }
}

/// A retry budget kept under `key` on the Redis server the host reaches through `channel`,
/// with the local budget's rule and settings (`recuo_retry_budget_new`). Returns `RECUO_OK`;
/// `RECUO_ERR_INVALID_BUDGET`; `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT`;
/// `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// As `recuo_regulator_new_host`.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_new_host(
    key: *const c_char,
    key_len: usize,
    ratio: f64,
    floor_per_s: f64,
    window_s: u32,
    channel: *const recuo_host_channel,
    out: *mut *mut recuo_retry_budget,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        make(key, key_len, channel, out, |key, ch| {
            // The local budget's rule first (one rule).
            RetryBudget::new(ratio, floor_per_s, window_s)?;
            let calls = BudgetCalls::new(key, ratio, floor_per_s, window_s);
            ch.check_settings(calls.settings());
            let budget = RetryBudget::remote(Box::new(HostBudget::new(calls, ch)))?;
            Ok(recuo_retry_budget(budget))
        })
    }
}

/// Whether `recuo_attempts_judged` with `*verdict` at `now_ms` would take a retry from the
/// gate's budget, in `*out`: a host whose budget is kept on a server it reaches asks the
/// budget for that retry first (see the module's protocol). Nothing changes. Returns
/// `RECUO_OK`, `RECUO_ERR_INVALID_ENUM` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` NULL or a live handle; `verdict` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_would_draw_on_budget(
    attempts: *mut recuo_attempts,
    now_ms: u64,
    verdict: *const recuo_verdict,
    out: *mut bool,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for the handle, the verdict and the output (the verdict's
        // error first).
        let verdict = unsafe { read_verdict(verdict) }?;
        // SAFETY: as above.
        let (a, out) = unsafe { (ptr::handle(attempts)?, ptr::out(out)?) };
        // SAFETY: a checked output.
        unsafe { out.write(a.op.would_draw_on_budget(now_ms, &verdict)) };
        Ok(RECUO_OK)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{recuo_retry_budget_free, recuo_retry_budget_try_withdraw};
    use crate::regulator::{recuo_regulator_free, recuo_regulator_try_acquire_at};
    use std::ptr::null_mut;

    /// The channel's pending call, parsed (`Value::Null` when it waits on none).
    fn pending(ch: *const recuo_host_channel) -> serde_json::Value {
        let mut buf = vec![0 as c_char; 8192];
        let mut written = 0usize;
        // SAFETY: a live handle and a buffer of its length.
        let status =
            unsafe { recuo_host_channel_pending(ch, buf.as_mut_ptr(), buf.len(), &mut written) };
        assert_eq!(status, RECUO_OK);
        let bytes: Vec<u8> = buf[..written].iter().map(|&c| c as u8).collect();
        if bytes.is_empty() {
            return serde_json::Value::Null;
        }
        serde_json::from_slice(&bytes).unwrap()
    }

    fn answer(ch: *const recuo_host_channel, reply: &[i64]) {
        // SAFETY: a live handle and `reply.len()` integers.
        assert_eq!(
            unsafe { recuo_host_channel_answer(ch, reply.as_ptr(), reply.len()) },
            RECUO_OK
        );
    }

    #[test]
    fn a_host_regulator_and_budget_wait_on_the_calls_the_host_answers() {
        let mut ch = null_mut();
        // SAFETY: each handle is live until freed, each buffer as long as said.
        unsafe {
            assert_eq!(recuo_host_channel_new(&mut ch), RECUO_OK);
            let mut reg = null_mut();
            let key = "api";
            assert_eq!(
                recuo_regulator_new_host(
                    key.as_ptr().cast(),
                    key.len(),
                    10.0,
                    2,
                    false,
                    ch,
                    &mut reg
                ),
                RECUO_OK
            );
            // The key's settings first.
            assert_eq!(
                recuo_host_channel_settled(ch, null_mut(), 0),
                RECUO_HOST_PENDING
            );
            let settings = pending(ch);
            assert_eq!(settings["keys"], serde_json::json!(["{api}:settings"]));
            assert_eq!(settings["sha1"], recuo_redis::calls::SETTINGS.sha1);
            assert!(settings["script"].as_str().unwrap().contains("HSETNX"));
            answer(ch, &[100_000, 2, 0]);
            assert_eq!(recuo_host_channel_settled(ch, null_mut(), 0), RECUO_OK);
            // A start: the reservation's call, answered, then the start.
            let mut wait = 0u64;
            assert_eq!(
                recuo_regulator_try_acquire_at(reg, 5_000_000, 1, &mut wait),
                RECUO_HOST_PENDING
            );
            let call = pending(ch);
            assert_eq!(
                call["keys"],
                serde_json::json!(["{api}:tat", "{api}:interval"])
            );
            assert_eq!(
                call["args"],
                serde_json::json!(["100000000", "2", "1", "0", "5000"])
            );
            answer(ch, &[0, 40_000, 100_000_000]);
            assert_eq!(
                recuo_regulator_try_acquire_at(reg, 5_000_000, 1, &mut wait),
                RECUO_WOULD_WAIT
            );
            assert_eq!(wait, 40_000_000, "the server's wait, in ns");
            assert_eq!(pending(ch), serde_json::Value::Null);
            recuo_regulator_free(reg);

            // A budget on a channel of its own: a key set up otherwise is refused by name.
            let mut bch = null_mut();
            assert_eq!(recuo_host_channel_new(&mut bch), RECUO_OK);
            let mut budget = null_mut();
            assert_eq!(
                recuo_retry_budget_new_host(
                    key.as_ptr().cast(),
                    key.len(),
                    0.1,
                    1.0,
                    10,
                    bch,
                    &mut budget
                ),
                RECUO_OK
            );
            answer(bch, &[200_000, 1000, 10]);
            let mut detail = vec![0 as c_char; 256];
            assert_eq!(
                recuo_host_channel_settled(bch, detail.as_mut_ptr(), detail.len()),
                RECUO_ERR_SHARED_MISMATCH
            );
            let said = std::ffi::CStr::from_ptr(detail.as_ptr())
                .to_string_lossy()
                .into_owned();
            assert!(
                said.contains("ratio 0.2") && said.contains("ratio 0.1"),
                "{said}"
            );
            assert_eq!(
                recuo_retry_budget_try_withdraw(budget),
                RECUO_ERR_SHARED_MISMATCH
            );
            recuo_retry_budget_free(budget);
            recuo_host_channel_free(bch);
            recuo_host_channel_free(ch);
        }
    }

    #[test]
    fn bad_arguments_are_refused() {
        let mut ch = null_mut();
        // SAFETY: NULLs and a live handle.
        unsafe {
            assert_eq!(recuo_host_channel_new(null_mut()), RECUO_ERR_NULL_ARGUMENT);
            assert_eq!(recuo_host_channel_new(&mut ch), RECUO_OK);
            let mut out = null_mut();
            let key = "k";
            assert_eq!(
                recuo_concurrency_limit_new_host(key.as_ptr().cast(), 1, 0, 1000, ch, &mut out),
                RECUO_ERR_ZERO_LIMIT
            );
            assert_eq!(
                recuo_concurrency_limit_new_host(key.as_ptr().cast(), 1, 1, 0, ch, &mut out),
                RECUO_ERR_INVALID_LEASE
            );
            assert_eq!(
                recuo_regulator_new_host(key.as_ptr().cast(), 1, 0.0, 1, false, ch, null_mut()),
                RECUO_ERR_NULL_ARGUMENT
            );
            let mut reg = null_mut();
            assert_eq!(
                recuo_regulator_new_host(key.as_ptr().cast(), 1, -1.0, 1, false, ch, &mut reg),
                RECUO_ERR_INVALID_RATE
            );
            assert_eq!(
                recuo_retry_budget_new_host(
                    key.as_ptr().cast(),
                    1,
                    -0.5,
                    1.0,
                    10,
                    ch,
                    &mut null_mut()
                ),
                RECUO_ERR_INVALID_BUDGET
            );
            assert_eq!(
                recuo_host_channel_answer(ch, [0i64; 65].as_ptr(), 65),
                RECUO_ERR_LENGTH_TOO_LARGE
            );
            assert_eq!(
                recuo_host_channel_settled(null_mut(), null_mut(), 0),
                RECUO_ERR_NULL_ARGUMENT
            );
            recuo_host_channel_free(ch);
        }
    }
}
