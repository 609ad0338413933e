//! The backoff window.

use recuo::Backoff;

use crate::prelude::*;

/// The backoff window for retry index `n`: `min(cap_ms, base_ms · 2^n)` milliseconds,
/// saturating (no overflow for any `n`, `base_ms`, `cap_ms`). Full jitter draws the delay
/// uniformly from `[0, window]`.
///
/// Stores the window in `*window_ms_out` and returns `RECUO_OK`; returns
/// `RECUO_ERR_CAP_BELOW_BASE` when `cap_ms < base_ms` and `RECUO_ERR_NULL_ARGUMENT` when
/// `window_ms_out` is NULL, writing nothing.
///
/// # Safety
/// `window_ms_out` must be NULL or point to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_backoff_window_ms(
    base_ms: u64,
    cap_ms: u64,
    n: u32,
    window_ms_out: *mut u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::fill(window_ms_out, || {
            let backoff = Backoff::new().with_base_ms(base_ms).with_cap_ms(cap_ms);
            Ok(backoff.validate()?.window_ms(n))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(base: u64, cap: u64, n: u32) -> (recuo_status, u64) {
        let mut w = 7;
        // SAFETY: `w` is a live u64.
        let rc = unsafe { recuo_backoff_window_ms(base, cap, n, &mut w) };
        (rc, w)
    }

    #[test]
    fn windows_and_errors() {
        assert_eq!(window(200, 5000, 3), (RECUO_OK, 1600));
        assert_eq!(window(200, 5000, u32::MAX), (RECUO_OK, 5000));
        assert_eq!(window(u64::MAX, u64::MAX, 63), (RECUO_OK, u64::MAX));
        assert_eq!(window(200, 100, 0), (RECUO_ERR_CAP_BELOW_BASE, 7));
        // SAFETY: NULL is checked before any write.
        let rc = unsafe { recuo_backoff_window_ms(1, 2, 0, std::ptr::null_mut()) };
        assert_eq!(rc, RECUO_ERR_NULL_ARGUMENT);
    }
}
