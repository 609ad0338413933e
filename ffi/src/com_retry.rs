//! Guide A's `comRetry` for C: a task callback retried with full-jitter backoff. Guide A is
//! “Como repetir requisições com backoff exponencial (retry)”
//! (<https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff>).

use std::ffi::c_int;
use std::mem::MaybeUninit;
use std::time::Duration;

use recuo::{ComRetry, Verdict};

use crate::prelude::*;

/// The task `recuo_com_retry` runs: returns 0 on success, any other value (the caller's own
/// failure code, handed back unchanged) on failure. Receives the call's `user_data`.
pub type recuo_task_fn = Option<unsafe extern "C" fn(user_data: *mut c_void) -> c_int>;

/// The predicate `repetir_se`: answers whether the failure code `error` is worth another
/// attempt — or, instead, writes a verdict into `*verdict_out` (all zeros on entry), e.g.
/// `recuo_classify`'s for the HTTP outcome behind `error`: then the verdict decides and the
/// answer is ignored (a give-up stops, a retry's server wait is honoured). Receives
/// the call's `user_data`.
pub type recuo_retry_predicate_fn = Option<
    unsafe extern "C" fn(
        error: c_int,
        verdict_out: *mut recuo_verdict,
        user_data: *mut c_void,
    ) -> bool,
>;

/// A sleep replacing the real one: asked to wait `ms` milliseconds (never 0). Receives the
/// call's `user_data`. For tests (record the delays) and for callers with their own timers.
pub type recuo_sleep_fn = Option<unsafe extern "C" fn(ms: u64, user_data: *mut c_void)>;

/// Options for `recuo_com_retry_with_options`: an opaque handle, so that options can be added
/// without changing any signature. Backed by a Rust struct holding an optional jitter seed and
/// an optional sleep callback.
///
/// Create it with `recuo_com_retry_options_new`, set what you need, pass it to any number of
/// calls (also from several threads at once, as long as no setter runs meanwhile: the calls
/// only read it), and release it with `recuo_com_retry_options_free`.
#[derive(Debug, Clone, Copy, Default)]
pub struct recuo_com_retry_options {
    seed: Option<u64>,
    sleep_ms: recuo_sleep_fn,
}

/// A new options handle with the defaults: jitter seeded by the operating system, real sleeps.
/// Free it with `recuo_com_retry_options_free`. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_com_retry_options_new() -> *mut recuo_com_retry_options {
    boundary(|| Box::into_raw(Box::default()))
}

/// Releases an options handle. NULL is accepted and ignored.
///
/// # Safety
/// `options` must be NULL or come from `recuo_com_retry_options_new` and not have been freed;
/// it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn recuo_com_retry_options_free(options: *mut recuo_com_retry_options) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(options) })
}

/// Draws the jitter from a generator seeded with `seed`, so the delays are the same on every
/// run and in every language recuo speaks. Returns `RECUO_OK`, or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `options` must be NULL or a live handle from `recuo_com_retry_options_new`.
#[no_mangle]
pub unsafe extern "C" fn recuo_com_retry_options_set_seed(
    options: *mut recuo_com_retry_options,
    seed: u64,
) -> recuo_status {
    // SAFETY: the caller vouches for a live handle.
    unsafe { ptr::with(options, |o| o.seed = Some(seed)) }
}

/// Replaces the real sleep with `sleep_ms`, called with each non-zero delay in milliseconds
/// and the call's `user_data`; NULL restores the real sleep. Returns `RECUO_OK`, or
/// `RECUO_ERR_NULL_ARGUMENT` when `options` is NULL.
///
/// # Safety
/// `options` must be NULL or a live handle from `recuo_com_retry_options_new`.
#[no_mangle]
pub unsafe extern "C" fn recuo_com_retry_options_set_sleep(
    options: *mut recuo_com_retry_options,
    sleep_ms: recuo_sleep_fn,
) -> recuo_status {
    // SAFETY: the caller vouches for a live handle.
    unsafe { ptr::with(options, |o| o.sleep_ms = sleep_ms) }
}

/// Guide A's `comRetry`: calls `task(user_data)` up to `tentativas` times until it returns 0.
/// Between attempts it sleeps a full-jitter delay drawn from `[0, min(max_ms, base_ms · 2^i)]`
/// before attempt `i + 1` (a zero delay is not slept at all), as long as
/// `repetir_se(error, verdict_out, user_data)` answers true for the failure code, or the
/// verdict it writes says retry (then a server wait in it replaces the delay, and a verdict
/// that gives up stops at once); a NULL `repetir_se` retries every failure. The predicate is
/// not asked after the last attempt (guide A's loop).
///
/// Returns:
/// * `RECUO_OK`: the task succeeded; `*last_error_out` = 0.
/// * `RECUO_ERR_TASK_FAILED`: the attempts ran out, or `repetir_se` answered false;
///   `*last_error_out` = the task's last return value, unchanged.
/// * `RECUO_ERR_NULL_ARGUMENT` when `task` is NULL, `RECUO_ERR_ZERO_ATTEMPTS` when
///   `tentativas` is 0, `RECUO_ERR_CAP_BELOW_BASE` when `max_ms < base_ms`: checked before any
///   attempt, and the outputs are left untouched.
///
/// `*attempts_out` receives the number of calls of `task` (with `RECUO_OK` and
/// `RECUO_ERR_TASK_FAILED`). Both outputs may be NULL. Guide A's defaults are
/// `tentativas = 5`, `base_ms = 200`, `max_ms = 5000`.
///
/// Sleeps are real (the calling thread blocks) and the jitter is seeded by the operating system
/// the first time a delay is drawn; `recuo_com_retry_with_options` changes both. The
/// callbacks run on the calling thread and must return normally (no `longjmp`, no C++
/// exception).
///
/// # Safety
/// `task` and `repetir_se` must be safe to call with `user_data`; `last_error_out` and
/// `attempts_out` must each be NULL or point to a writable value of their type.
#[no_mangle]
pub unsafe extern "C" fn recuo_com_retry(
    task: recuo_task_fn,
    user_data: *mut c_void,
    tentativas: u32,
    base_ms: u64,
    max_ms: u64,
    repetir_se: recuo_retry_predicate_fn,
    last_error_out: *mut c_int,
    attempts_out: *mut u32,
) -> recuo_status {
    let (options, last, attempts) = (std::ptr::null(), last_error_out, attempts_out);
    // SAFETY: forwarded from the caller; NULL options are the defaults.
    unsafe {
        recuo_com_retry_with_options(
            task, user_data, tentativas, base_ms, max_ms, repetir_se, options, last, attempts,
        )
    }
}

/// `recuo_com_retry` with options (a seed, a sleep callback): see
/// `recuo_com_retry_options_new`. NULL `options` means the defaults, exactly as
/// `recuo_com_retry`. The options are only read, and not kept after the call returns.
///
/// # Safety
/// As `recuo_com_retry`; `options` must be NULL or a live handle, not modified during the call.
#[no_mangle]
pub unsafe extern "C" fn recuo_com_retry_with_options(
    task: recuo_task_fn,
    user_data: *mut c_void,
    tentativas: u32,
    base_ms: u64,
    max_ms: u64,
    repetir_se: recuo_retry_predicate_fn,
    options: *const recuo_com_retry_options,
    last_error_out: *mut c_int,
    attempts_out: *mut u32,
) -> recuo_status {
    checked(|| {
        let task = task.ok_or(RECUO_ERR_NULL_ARGUMENT)?;
        // SAFETY: the caller vouches for NULL or a live handle.
        let options = unsafe { options.as_ref() }.copied().unwrap_or_default();
        let policy = ComRetry::new(tentativas, base_ms, max_ms)?;
        let mut attempts: u32 = 0;
        let result = policy.run_with(
            options.seed,
            || {
                attempts += 1;
                // SAFETY: the caller vouches that `task` may be called with `user_data`.
                match unsafe { task(user_data) } {
                    0 => Ok(()),
                    failure => Err(failure),
                }
            },
            |&failure| {
                let Some(repetir_se) = repetir_se else {
                    return Ok(Verdict::from(true));
                };
                // SAFETY: as for `task`; the verdict lives across the call.
                let (again, written) =
                    written_verdict(|v| unsafe { repetir_se(failure, v, user_data) });
                Ok(written.unwrap_or(Verdict::from(again)))
            },
            |delay: Duration| {
                match options.sleep_ms {
                    Some(sleep_ms) => {
                        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
                        // SAFETY: as for `task`.
                        unsafe { sleep_ms(ms, user_data) }
                    }
                    None => std::thread::sleep(delay),
                }
                Ok(())
            },
        );
        let (status, last_error) = match result {
            Ok(()) => (RECUO_OK, 0),
            Err(failure) => (RECUO_ERR_TASK_FAILED, failure),
        };
        // SAFETY: the caller vouches that non-NULL outputs are writable.
        unsafe {
            ptr::put(last_error_out, last_error);
            ptr::put(attempts_out, attempts);
        }
        Ok(status)
    })
}

/// Runs `call`, a C callback given a `recuo_verdict` to write: its answer, and the verdict it
/// wrote, if valid. The verdict starts all zeros (no constant of `recuo_verdict_kind` is 0, so
/// a callback that writes nothing is caught) and is read only through `recuo_verdict::read`.
/// Shared by `recuo_com_retry`'s predicate, `recuo_retry`'s operation and the batch's.
#[inline]
pub(crate) fn written_verdict<R>(
    call: impl FnOnce(*mut recuo_verdict) -> R,
) -> (R, Option<Verdict>) {
    let mut verdict = MaybeUninit::<recuo_verdict>::zeroed();
    let answer = call(verdict.as_mut_ptr());
    // SAFETY: the live local, which the callback may only have filled with numbers.
    (answer, unsafe { recuo_verdict::read(verdict.as_ptr()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task that fails with `100 + call` until call `fail_until` has passed.
    struct Script {
        calls: c_int,
        fail_until: c_int,
        slept: Vec<u64>,
    }

    unsafe extern "C" fn scripted(user_data: *mut c_void) -> c_int {
        // SAFETY: the tests pass a live Script.
        let s = unsafe { &mut *user_data.cast::<Script>() };
        s.calls += 1;
        if s.calls <= s.fail_until {
            100 + s.calls
        } else {
            0
        }
    }

    unsafe extern "C" fn record(ms: u64, user_data: *mut c_void) {
        // SAFETY: the tests pass a live Script.
        unsafe { &mut *user_data.cast::<Script>() }.slept.push(ms);
    }

    unsafe extern "C" fn only_below_102(
        error: c_int,
        _: *mut recuo_verdict,
        _: *mut c_void,
    ) -> bool {
        error < 102
    }

    fn run(
        fail_until: c_int,
        tentativas: u32,
        predicate: recuo_retry_predicate_fn,
        seed: u64,
    ) -> (recuo_status, c_int, u32, Script) {
        let mut script = Script {
            calls: 0,
            fail_until,
            slept: Vec::new(),
        };
        let options = recuo_com_retry_options_new();
        let (mut last, mut attempts) = (-1, 0);
        // SAFETY: live handle, live Script, live outputs.
        let rc = unsafe {
            assert_eq!(recuo_com_retry_options_set_seed(options, seed), RECUO_OK);
            assert_eq!(
                recuo_com_retry_options_set_sleep(options, Some(record)),
                RECUO_OK
            );
            let rc = recuo_com_retry_with_options(
                Some(scripted),
                (&mut script as *mut Script).cast(),
                tentativas,
                200,
                5000,
                predicate,
                options,
                &mut last,
                &mut attempts,
            );
            recuo_com_retry_options_free(options);
            rc
        };
        (rc, last, attempts, script)
    }

    #[test]
    fn the_loop_matches_the_core_loop_with_the_same_seed() {
        let (rc, last, attempts, script) = run(2, 5, None, 1);
        assert_eq!((rc, last, attempts, script.calls), (RECUO_OK, 0, 3, 3));
        let mut core_sleeps = Vec::new();
        let mut n = 0;
        let _ = ComRetry::GUIDE_A.run_with(
            Some(1),
            || {
                n += 1;
                if n <= 2 {
                    Err(())
                } else {
                    Ok(())
                }
            },
            |_| Ok(true),
            |d| {
                core_sleeps.push(d.as_millis() as u64);
                Ok(())
            },
        );
        assert_eq!(script.slept, core_sleeps);
    }

    #[test]
    fn gives_up_with_the_last_code_unchanged() {
        let (rc, last, attempts, _) = run(9, 4, None, 2);
        assert_eq!((rc, last, attempts), (RECUO_ERR_TASK_FAILED, 104, 4));
    }

    #[test]
    fn the_predicate_stops_the_loop() {
        let (rc, last, attempts, script) = run(9, 5, Some(only_below_102), 3);
        assert_eq!(
            (rc, last, attempts, script.calls),
            (RECUO_ERR_TASK_FAILED, 102, 2, 2)
        );
    }

    #[test]
    fn bad_arguments_are_refused_before_any_attempt() {
        let (mut last, mut attempts) = (-1, 77);
        // SAFETY: the task is never called; outputs are live.
        unsafe {
            let rc = recuo_com_retry(
                None,
                std::ptr::null_mut(),
                5,
                200,
                5000,
                None,
                &mut last,
                &mut attempts,
            );
            assert_eq!(rc, RECUO_ERR_NULL_ARGUMENT);
            let rc = recuo_com_retry(
                Some(scripted),
                std::ptr::null_mut(),
                0,
                200,
                5000,
                None,
                &mut last,
                &mut attempts,
            );
            assert_eq!(rc, RECUO_ERR_ZERO_ATTEMPTS);
            let rc = recuo_com_retry(
                Some(scripted),
                std::ptr::null_mut(),
                5,
                200,
                100,
                None,
                &mut last,
                &mut attempts,
            );
            assert_eq!(rc, RECUO_ERR_CAP_BELOW_BASE);
            assert_eq!(
                recuo_com_retry_options_set_seed(std::ptr::null_mut(), 1),
                RECUO_ERR_NULL_ARGUMENT
            );
            assert_eq!(
                recuo_com_retry_options_set_sleep(std::ptr::null_mut(), None),
                RECUO_ERR_NULL_ARGUMENT
            );
            recuo_com_retry_options_free(std::ptr::null_mut());
        }
        assert_eq!((last, attempts), (-1, 77));
    }
}
