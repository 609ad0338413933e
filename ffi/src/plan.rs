//! Rates and the planning arithmetic for C: `recuo_rate_parse`, `recuo_rate_format`,
//! `recuo_plan` and its warnings. The rules are the core's (`recuo::Rate`, `recuo::plan`).
//! Guide B, whose example `recuo_plan` shows, is
//! “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”.

use recuo::{Plan, Rate};

use crate::prelude::*;

/// The core's rate for a number of events per second: `RECUO_ERR_INVALID_RATE` unless it is
/// finite and above zero.
pub(crate) fn rate(per_second: f64) -> Result<Rate, recuo_status> {
    Rate::per_second(per_second).map_err(|_| RECUO_ERR_INVALID_RATE)
}

/// Reads a rate written as text — `90/min`, `1.5/s`, `5000/h`, `86400/day` (the units may
/// also be spelled `sec`, `second`, `m`, `minute`, `hour`, `d`, in any case; spaces around
/// the number and the unit are ignored; a bare number is per second) — and stores it in
/// `*per_second_out` as events per second (`90/min` gives 1.5).
///
/// * `text`, `len`: the text, exactly `len` bytes (a NUL inside makes it no rate); NULL
///   only with `len` 0.
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_RATE` for anything that is not a rate above zero
/// (`0/min`, `-5/s`, `abc`, `NaN/s`, `1e3/s`, `5/fortnight`, empty text);
/// `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_LENGTH_TOO_LARGE`. On an
/// error `*per_second_out` is untouched.
///
/// # Safety
/// `text` must point to `len` readable bytes (or be NULL with `len` 0); `per_second_out` NULL
/// or a writable `double`.
#[no_mangle]
pub unsafe extern "C" fn recuo_rate_parse(
    text: *const c_char,
    len: usize,
    per_second_out: *mut f64,
) -> recuo_status {
    // SAFETY: the caller vouches for the text and the output.
    unsafe {
        ptr::fill(per_second_out, || {
            let rate = ptr::text(text, len)?.parse::<Rate>();
            Ok(rate.map_err(|_| RECUO_ERR_INVALID_RATE)?.as_per_second())
        })
    }
}

/// Writes the rate `per_second` (events per second) as recuo writes rates: per minute when
/// that is a whole number and the rate is below 1000/s (`1.5` gives `90/min`), else per
/// second (`5000/s`, `0.01/s`). The text goes into `buf` (`len` bytes), NUL-terminated;
/// `*written` (when not NULL) receives its length without the NUL. 64 bytes always suffice
/// for rates from 1e-6/s to 1e12/s.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (truncated, terminated);
/// `RECUO_ERR_INVALID_RATE` for a rate that is not finite and above zero (nothing written);
/// `RECUO_ERR_NULL_ARGUMENT` for `buf`.
///
/// # Safety
/// `buf` must point to `len` writable bytes; `written` must be NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_rate_format(
    per_second: f64,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { write_made(buf, len, written, || Ok(rate(per_second)?.to_string())) }
}

/// What a batch will take: a plain struct `recuo_plan` fills in.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct recuo_plan_result {
    /// Milliseconds between two starts at the target rate (rounded): 667 for 90/min.
    pub interval_ms: u64,
    /// The least time the batch can take at the target rate, retries included, in seconds.
    pub duration_s: f64,
    /// The expected number of retries: `requests · f / (1 − f)` for a retry fraction `f`.
    pub retries: f64,
    /// The mean number of requests in flight (Little's law: target rate × latency).
    pub in_flight: f64,
    /// How many warnings the plan has (read them with `recuo_plan_warning`).
    pub warning_count: usize,
}

impl recuo_plan_result {
    fn from_core(p: &Plan) -> Self {
        copied!(recuo_plan_result {
            interval_ms, duration_s, retries, in_flight;
            warning_count: p.warnings.len(),
        } from p)
    }
}

/// Plans `requests` requests sent at `target_per_s` under an allowance of `allowance_per_s`
/// (both in events per second: `recuo_rate_parse` reads `"90/min"`), each answered in
/// `latency_s` seconds, with a fraction `retry_fraction` (0 ≤ f < 1) of all attempts being
/// retries, and stores the plan in `*out`:
///
/// * `interval_ms` = 1000 / target (rounded); `duration_s` = (requests + retries) / target;
/// * `retries` = requests · f / (1 − f); `in_flight` = target · latency;
/// * `warning_count`: things worth knowing that do not stop the plan (a target at or near
///   the allowance, very many requests in flight); read each with `recuo_plan_warning`.
///
/// Guide B: `recuo_plan(600, 2.0, 1.5, 2.0, 0.0, &p)` gives 667 ms, 400 s, 3 in flight.
///
/// Returns `RECUO_OK`; `RECUO_ERR_TARGET_ABOVE_ALLOWANCE` (the server would throttle the
/// batch: aim at or below the allowance); `RECUO_ERR_INVALID_RATE` (a rate not finite and
/// above zero); `RECUO_ERR_INVALID_RETRY_FRACTION`; `RECUO_ERR_INVALID_LATENCY` (negative,
/// infinite or NaN); `RECUO_ERR_NULL_ARGUMENT`. On an error `*out` is untouched.
///
/// # Safety
/// `out` must be NULL or a writable `recuo_plan_result`.
#[no_mangle]
pub unsafe extern "C" fn recuo_plan(
    requests: u64,
    allowance_per_s: f64,
    target_per_s: f64,
    latency_s: f64,
    retry_fraction: f64,
    out: *mut recuo_plan_result,
) -> recuo_status {
    // SAFETY: the caller vouches for a writable struct at `out`.
    unsafe {
        ptr::fill(out, || {
            let (allowance, target) = (rate(allowance_per_s)?, rate(target_per_s)?);
            let plan = recuo::plan(requests, allowance, target, latency_s, retry_fraction)?;
            Ok(recuo_plan_result::from_core(&plan))
        })
    }
}

/// Writes warning number `index` (from 0, below the plan's `warning_count`) of the plan that
/// `recuo_plan` makes with the same first five arguments, as English text, into `buf` (`len`
/// bytes), NUL-terminated; `*written` (when not NULL) receives its length without the NUL.
/// (The plan is recomputed: it is pure arithmetic, and no handle is needed.) 256 bytes
/// always suffice.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (truncated, terminated);
/// `RECUO_ERR_INDEX_OUT_OF_RANGE` when the plan has no warning `index` (nothing written);
/// `recuo_plan`'s errors; `RECUO_ERR_NULL_ARGUMENT` for `buf`.
///
/// # Safety
/// `buf` must point to `len` writable bytes; `written` must be NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_plan_warning(
    requests: u64,
    allowance_per_s: f64,
    target_per_s: f64,
    latency_s: f64,
    retry_fraction: f64,
    index: usize,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        write_made(buf, len, written, || {
            let (allowance, target) = (rate(allowance_per_s)?, rate(target_per_s)?);
            let plan = recuo::plan(requests, allowance, target, latency_s, retry_fraction)?;
            let mut warnings = plan.warnings.into_iter();
            warnings.nth(index).ok_or(RECUO_ERR_INDEX_OUT_OF_RANGE)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::recuo_status::RECUO_OK;

    fn parse(text: &str) -> Result<f64, recuo_status> {
        let mut out = f64::NAN;
        // SAFETY: a live string and a live double.
        match unsafe { recuo_rate_parse(text.as_ptr().cast(), text.len(), &mut out) } {
            RECUO_OK => Ok(out),
            status => Err(status),
        }
    }

    #[test]
    fn rates_are_the_core_rates() {
        assert_eq!(parse("90/min"), Ok(1.5));
        assert_eq!(parse(" 5000 / H "), Ok(5000.0 / 3600.0));
        assert_eq!(parse("3"), Ok(3.0));
        for bad in ["0/min", "abc", "NaN/s", "", "90/min\0"] {
            assert_eq!(parse(bad), Err(RECUO_ERR_INVALID_RATE), "{bad:?}");
        }
        let mut buf = [0u8; 32];
        let mut n = 0;
        // SAFETY: a live buffer.
        let rc = unsafe { recuo_rate_format(1.5, buf.as_mut_ptr().cast(), 32, &mut n) };
        assert_eq!((rc, &buf[..n]), (RECUO_OK, &b"90/min"[..]));
    }

    #[test]
    fn guide_b_plan_and_its_warnings() {
        let mut p = recuo_plan_result::from_core(
            &recuo::plan(
                1,
                Rate::per_second(1.0).unwrap(),
                Rate::per_second(1.0).unwrap(),
                0.0,
                0.0,
            )
            .unwrap(),
        );
        // SAFETY: a live struct.
        assert_eq!(
            unsafe { recuo_plan(600, 2.0, 1.5, 2.0, 0.0, &mut p) },
            RECUO_OK
        );
        assert_eq!(
            (p.interval_ms, p.duration_s, p.in_flight),
            (667, 400.0, 3.0)
        );
        assert_eq!(p.warning_count, 0);
        // SAFETY: a live struct.
        let rc = unsafe { recuo_plan(600, 2.0, 2.5, 2.0, 0.0, &mut p) };
        assert_eq!(rc, RECUO_ERR_TARGET_ABOVE_ALLOWANCE);
        let mut buf = [0u8; 256];
        // SAFETY: a live buffer.
        let rc = unsafe {
            recuo_plan_warning(
                10,
                2.0,
                2.0,
                0.1,
                0.0,
                0,
                buf.as_mut_ptr().cast(),
                256,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(rc, RECUO_OK);
        // SAFETY: a live buffer.
        let rc = unsafe {
            recuo_plan_warning(
                10,
                2.0,
                2.0,
                0.1,
                0.0,
                1,
                buf.as_mut_ptr().cast(),
                256,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(rc, RECUO_ERR_INDEX_OUT_OF_RANGE);
    }
}
