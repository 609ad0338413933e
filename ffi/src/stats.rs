//! Batch stats for C: merging two `recuo_stats`, and a recorder for C programs with
//! their own loops. The counting is the core's (`recuo::Stats`, `recuo::StatsRecorder`).

use std::time::Duration;

use recuo::{Stats, StatsRecorder};

use crate::prelude::*;

/// A batch's stats: a plain struct `recuo_batch_run`, `recuo_stats_merge` and
/// `recuo_stats_recorder_snapshot` fill in, mirroring `recuo::Stats`. Instants are
/// nanoseconds on `recuo_monotonic_ns()` (or on the clock a recorder was given).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct recuo_stats {
    /// First attempts started.
    pub initial: u64,
    /// Retries started.
    pub retries: u64,
    /// Operations that succeeded.
    pub successes: u64,
    /// Operations that gave up (final failures).
    pub failures: u64,
    /// Operations never started (the deadline came first).
    pub not_started: u64,
    /// Rate-limited answers seen (`RECUO_CAUSE_RATE_LIMITED`: 429, or a 403 with a spent
    /// quota).
    pub throttled: u64,
    /// `RECUO_CAUSE_UNAVAILABLE` answers seen (503).
    pub unavailable: u64,
    /// The most attempts in flight at once.
    pub max_in_flight: u64,
    /// Whether there were at least two starts (then the spacings below are set).
    pub has_spacing: bool,
    /// The shortest time between two consecutive starts, in nanoseconds; else 0.
    pub min_spacing_ns: u64,
    /// The mean time between consecutive starts, in nanoseconds; else 0.
    pub mean_spacing_ns: f64,
    /// Whether any attempt started (then the instants below are set).
    pub has_starts: bool,
    /// The first start; else 0.
    pub first_start_ns: u64,
    /// The last start; else 0.
    pub last_start_ns: u64,
    /// How long the batch took, in milliseconds (0 from a recorder's snapshot; the longer of
    /// the two from a merge).
    pub elapsed_ms: u64,
}

impl recuo_stats {
    /// The C form of the core's stats, with the batch's time.
    pub(crate) fn from_core(s: &Stats, elapsed: Duration) -> Self {
        copied!(recuo_stats {
            initial, retries, successes, failures, not_started, throttled, unavailable,
            max_in_flight;
            has_spacing: s.min_spacing_ns.is_some(),
            min_spacing_ns: s.min_spacing_ns.unwrap_or(0),
            mean_spacing_ns: s.mean_spacing_ns().unwrap_or(0.0),
            has_starts: s.first_start_ns.is_some(),
            first_start_ns: s.first_start_ns.unwrap_or(0),
            last_start_ns: s.last_start_ns.unwrap_or(0),
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        } from s)
    }
}

/// A `recuo_stats` C filled in, as the core's stats and the batch's time. Its `bool` fields
/// are read as bytes (any non-zero byte is true), never trusted as Rust `bool`s; the mean
/// spacing is not read (it is derived from the rest).
///
/// # Errors
/// `RECUO_ERR_NULL_ARGUMENT` for NULL; `RECUO_ERR_INVALID_STATS` for a first start after the
/// last, or more starts than a `uint64_t` counts.
///
/// # Safety
/// A non-NULL `p` must point to a readable `recuo_stats`.
unsafe fn read_stats(p: *const recuo_stats) -> Result<(Stats, u64), recuo_status> {
    // SAFETY: the mirror has the same layout (checked) and every bit pattern is valid for it;
    // the caller vouches for the memory.
    let r = unsafe { ptr::input(p.cast::<RawStats>()) }?;
    let (has_spacing, has_starts) = (r.has_spacing != 0, r.has_starts != 0);
    if (has_starts && r.first_start_ns > r.last_start_ns)
        || r.initial.checked_add(r.retries).is_none()
    {
        return Err(RECUO_ERR_INVALID_STATS);
    }
    let stats = copied!(Stats {
        initial, retries, successes, failures, not_started, throttled, unavailable, max_in_flight;
        min_spacing_ns: has_spacing.then_some(r.min_spacing_ns),
        first_start_ns: has_starts.then_some(r.first_start_ns),
        last_start_ns: has_starts.then_some(r.last_start_ns),
    } from r);
    Ok((stats, r.elapsed_ms))
}

mirror!(
    /// `recuo_stats` as C may have filled it: its `bool` fields as the bytes they are.
    RawStats: recuo_stats {
        initial: u64,
        retries: u64,
        successes: u64,
        failures: u64,
        not_started: u64,
        throttled: u64,
        unavailable: u64,
        max_in_flight: u64,
        has_spacing: u8,
        min_spacing_ns: u64,
        mean_spacing_ns: f64,
        has_starts: u8,
        first_start_ns: u64,
        last_start_ns: u64,
        elapsed_ms: u64,
    }
);

/// Adds up two stats — of two batches, or two threads' recorders — into `*out` (which may be
/// `a` or `b`), with the core's `Stats::merge`: the counts add up; the spacing is that of the
/// merged timeline as far as it can be known (the shorter of the two minimums, the first of
/// the first starts and the last of the last ones, the mean recomputed over all starts);
/// `max_in_flight` adds up (an upper bound when the two ran at the same time); `elapsed_ms`
/// is the longer of the two (the stats are taken to have run side by side).
///
/// `mean_spacing_ns` of the inputs is not read (it follows from the rest); their `bool`
/// fields are read as bytes, any non-zero byte meaning true.
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_INVALID_STATS` when an input's
/// first start is after its last (with `has_starts`), or the counts would add up beyond
/// `UINT64_MAX`. On an error `*out` is untouched.
///
/// # Safety
/// `a` and `b` must be NULL or point to readable `recuo_stats`; `out` NULL or to a writable
/// one.
#[no_mangle]
pub unsafe extern "C" fn recuo_stats_merge(
    a: *const recuo_stats,
    b: *const recuo_stats,
    out: *mut recuo_stats,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for NULL or readable stats.
        let ((a, a_ms), (b, b_ms)) = unsafe { (read_stats(a)?, read_stats(b)?) };
        let out = ptr::out(out)?;
        let merged = a.merge(&b).ok_or(RECUO_ERR_INVALID_STATS)?;
        let elapsed = Duration::from_millis(a_ms.max(b_ms));
        // SAFETY: the caller vouches for a writable recuo_stats.
        unsafe { out.write(recuo_stats::from_core(&merged, elapsed)) };
        Ok(RECUO_OK)
    })
}

/// A stats recorder for a C program with its own loop (the state machine, its own threads):
/// a `recuo::StatsRecorder`, one timeline behind a mutex, which any number of threads may
/// use at once. `recuo_retry_options_set_stats_recorder` makes `recuo_retry` and
/// `recuo_retry_http` record into it too. Free it with `recuo_stats_recorder_free`; options
/// given it keep their own reference.
#[derive(Debug, Clone, Default)]
pub struct recuo_stats_recorder(pub(crate) StatsRecorder);

/// A new, empty recorder. Free it with `recuo_stats_recorder_free`. NULL only if recuo
/// panicked.
#[no_mangle]
pub extern "C" fn recuo_stats_recorder_new() -> *mut recuo_stats_recorder {
    boundary(|| Box::into_raw(Box::default()))
}

/// Releases a recorder handle (the recording lives on while options use it). NULL is
/// accepted and ignored.
///
/// # Safety
/// `recorder` must be NULL or come from `recuo_stats_recorder_new` and not have been freed.
#[no_mangle]
pub unsafe extern "C" fn recuo_stats_recorder_free(recorder: *mut recuo_stats_recorder) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(recorder) })
}

/// Attempt number `attempt` (0 for a first attempt, more for a retry) starts at `now_ns`
/// (nanoseconds on a clock that does not go back: `recuo_monotonic_ns()`, or a fake one).
/// Call `recuo_stats_recorder_end` when it is over. Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `recorder` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_stats_recorder_start(
    recorder: *const recuo_stats_recorder,
    attempt: u32,
    now_ns: u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_ref(recorder, |r| r.0.start(attempt, now_ns)) }
}

/// An attempt started earlier is over (it is no longer in flight). Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `recorder` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_stats_recorder_end(
    recorder: *const recuo_stats_recorder,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_ref(recorder, |r| r.0.end()) }
}

/// An attempt's verdict had the `recuo_cause` `cause`: `RECUO_CAUSE_RATE_LIMITED` counts in
/// `throttled`, `RECUO_CAUSE_UNAVAILABLE` in `unavailable`, the others in nothing. Returns
/// `RECUO_OK`, `RECUO_ERR_INVALID_ENUM` (nothing counted) or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `recorder` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_stats_recorder_saw(
    recorder: *const recuo_stats_recorder,
    cause: u32,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_ref(recorder, |r| {
            recuo_cause::from_c(cause).map(|c| r.0.saw(c.core_in(true)))
        })
    }
}

/// An operation ended: it succeeded (`success` true) or gave up. Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `recorder` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_stats_recorder_finished(
    recorder: *const recuo_stats_recorder,
    success: bool,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_ref(recorder, |r| r.0.finished(success)) }
}

/// An operation was never started (a deadline came first). Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `recorder` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_stats_recorder_not_started(
    recorder: *const recuo_stats_recorder,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_ref(recorder, |r| r.0.not_started()) }
}

/// The stats so far, into `*out` (instants on the clock the starts were recorded with;
/// `elapsed_ms` is 0: a recorder does not time anything itself). Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT` (`*out` untouched).
///
/// # Safety
/// `recorder` must be NULL or a live handle; `out` NULL or a writable `recuo_stats`.
#[no_mangle]
pub unsafe extern "C" fn recuo_stats_recorder_snapshot(
    recorder: *const recuo_stats_recorder,
    out: *mut recuo_stats,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::fill(out, || {
            let stats = ptr::input(recorder)?.0.snapshot();
            Ok(recuo_stats::from_core(&stats, Duration::ZERO))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn c(s: &Stats, ms: u64) -> recuo_stats {
        recuo_stats::from_core(s, Duration::from_millis(ms))
    }

    #[test]
    fn merge_is_the_core_merge() {
        let a = Stats {
            initial: 2,
            throttled: 1,
            min_spacing_ns: Some(10),
            first_start_ns: Some(5),
            last_start_ns: Some(15),
            max_in_flight: 1,
            ..Stats::default()
        };
        let b = Stats {
            initial: 1,
            retries: 1,
            failures: 1,
            min_spacing_ns: Some(7),
            first_start_ns: Some(1),
            last_start_ns: Some(31),
            max_in_flight: 2,
            ..Stats::default()
        };
        let (ca, cb) = (c(&a, 40), c(&b, 90));
        let mut out = c(&Stats::default(), 0);
        // SAFETY: live structs.
        assert_eq!(unsafe { recuo_stats_merge(&ca, &cb, &mut out) }, RECUO_OK);
        assert_eq!(out, c(&a.merge(&b).unwrap(), 90));
        assert_eq!(out.mean_spacing_ns, 10.0);
        let empty = c(&Stats::default(), 0);
        let copy = out;
        let p: *mut recuo_stats = &mut out;
        // SAFETY: live structs; `out` may be an input.
        assert_eq!(unsafe { recuo_stats_merge(p, &empty, p) }, RECUO_OK);
        assert_eq!(out, copy);
    }

    #[test]
    fn inconsistent_stats_are_refused() {
        let mut bad = c(&Stats::default(), 0);
        bad.has_starts = true;
        bad.first_start_ns = 9;
        bad.last_start_ns = 3;
        let ok = c(&Stats::default(), 0);
        let mut huge = ok;
        huge.initial = u64::MAX;
        let mut one = ok;
        one.initial = 1;
        let mut out = ok;
        out.retries = 77;
        // SAFETY: live structs and NULLs, which are checked before any read.
        unsafe {
            assert_eq!(
                recuo_stats_merge(&bad, &ok, &mut out),
                RECUO_ERR_INVALID_STATS
            );
            assert_eq!(
                recuo_stats_merge(&huge, &one, &mut out),
                RECUO_ERR_INVALID_STATS
            );
            assert_eq!(recuo_stats_merge(&huge, &ok, &mut out), RECUO_OK);
            assert_eq!(
                recuo_stats_merge(std::ptr::null(), &ok, &mut out),
                RECUO_ERR_NULL_ARGUMENT
            );
            assert_eq!(
                recuo_stats_merge(&ok, &ok, std::ptr::null_mut()),
                RECUO_ERR_NULL_ARGUMENT
            );
        }
    }

    #[test]
    fn the_recorder_is_the_core_recorder() {
        let r = recuo_stats_recorder_new();
        let mut s = c(&Stats::default(), 5);
        // SAFETY: a live handle, freed once.
        unsafe {
            assert_eq!(recuo_stats_recorder_start(r, 0, 1_000), RECUO_OK);
            assert_eq!(recuo_stats_recorder_start(r, 0, 1_500), RECUO_OK);
            assert_eq!(recuo_stats_recorder_end(r), RECUO_OK);
            assert_eq!(recuo_stats_recorder_start(r, 1, 4_000), RECUO_OK);
            let rate_limited = recuo_cause::RECUO_CAUSE_RATE_LIMITED as u32;
            assert_eq!(recuo_stats_recorder_saw(r, rate_limited), RECUO_OK);
            assert_eq!(recuo_stats_recorder_saw(r, 0), RECUO_ERR_INVALID_ENUM);
            assert_eq!(recuo_stats_recorder_end(r), RECUO_OK);
            assert_eq!(recuo_stats_recorder_end(r), RECUO_OK);
            assert_eq!(recuo_stats_recorder_finished(r, true), RECUO_OK);
            assert_eq!(recuo_stats_recorder_finished(r, false), RECUO_OK);
            assert_eq!(recuo_stats_recorder_not_started(r), RECUO_OK);
            assert_eq!(recuo_stats_recorder_snapshot(r, &mut s), RECUO_OK);
            assert_eq!(
                recuo_stats_recorder_end(std::ptr::null()),
                RECUO_ERR_NULL_ARGUMENT
            );
            recuo_stats_recorder_free(r);
        }
        assert_eq!(
            (s.initial, s.retries, s.successes, s.failures),
            (2, 1, 1, 1)
        );
        assert_eq!((s.not_started, s.throttled, s.max_in_flight), (1, 1, 2));
        assert_eq!(
            (s.min_spacing_ns, s.mean_spacing_ns, s.elapsed_ms),
            (500, 1_500.0, 0)
        );
    }
}
