//! `Retry-After` and guide B's `retryDelayMs`. Guide B is
//! “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”.

use std::ffi::CStr;

use recuo::{parse_retry_after, LazyJitterRng, RetryAfter};

use crate::prelude::*;

/// What a `Retry-After` value asks for. The numbers are stable; `0` is never a kind, so a
/// zero-initialised `recuo_retry_after` that recuo did not fill in is recognisable.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_retry_after_kind {
    /// Delay-seconds (`"12"`): wait `wait_ms` = the seconds × 1000.
    RECUO_RETRY_AFTER_SECONDS = 1,
    /// An HTTP-date: wait `wait_ms` until then (0 when it has passed).
    RECUO_RETRY_AFTER_DATE = 2,
    /// A wait over 2^53 − 1 ms: too long to count, never to be treated as short.
    RECUO_RETRY_AFTER_UNBOUNDED = 3,
    /// Not a Retry-After value (empty, `-5`, `1.5`, words, non-ASCII, NUL bytes…): no server
    /// wait, the backoff applies.
    RECUO_RETRY_AFTER_INVALID = 4,
}

c_enum!(recuo_retry_after_kind {
    RECUO_RETRY_AFTER_SECONDS => c"seconds",
    RECUO_RETRY_AFTER_DATE => c"date",
    RECUO_RETRY_AFTER_UNBOUNDED => c"unbounded",
    RECUO_RETRY_AFTER_INVALID => c"invalid",
});

/// A parsed `Retry-After` value: a plain struct, filled in by `recuo_parse_retry_after`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_retry_after {
    /// Which form the value had.
    pub kind: recuo_retry_after_kind,
    /// The server's wait in milliseconds for `SECONDS` and `DATE` (at most 2^53 − 1); 0 for
    /// `UNBOUNDED` and `INVALID`.
    pub wait_ms: u64,
}

impl From<RetryAfter> for recuo_retry_after {
    fn from(parsed: RetryAfter) -> Self {
        use recuo_retry_after_kind::*;
        let kind = match parsed {
            RetryAfter::Seconds { .. } => RECUO_RETRY_AFTER_SECONDS,
            RetryAfter::Date { .. } => RECUO_RETRY_AFTER_DATE,
            RetryAfter::Unbounded => RECUO_RETRY_AFTER_UNBOUNDED,
            RetryAfter::Invalid => RECUO_RETRY_AFTER_INVALID,
        };
        recuo_retry_after {
            kind,
            wait_ms: parsed.wait_ms().unwrap_or(0),
        }
    }
}

/// Reads the `len` bytes at `value` as a `Retry-After` value, as of `now_ms` (milliseconds
/// since the Unix epoch; pass the response's `Date` when it has one, else `recuo_now_ms()`),
/// and stores the result in `*out`.
///
/// The length is explicit, so bytes after a NUL are read too (`"12\0x"` is invalid, not 12 s).
/// Spaces and tabs around the value are ignored; anything that is not one or more ASCII
/// digits or an RFC 9110 HTTP-date is `RECUO_RETRY_AFTER_INVALID`, which is an answer, not an
/// error. `value` may be NULL when `len` is 0.
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` when `out` is NULL or `value` is NULL with
/// `len > 0`; `RECUO_ERR_LENGTH_TOO_LARGE` when `len > PTRDIFF_MAX`. On an error `*out` is
/// left untouched.
///
/// # Safety
/// `value` must point to `len` readable bytes (or be NULL with `len == 0`); `out` must be NULL
/// or point to a writable `recuo_retry_after`.
#[no_mangle]
pub unsafe extern "C" fn recuo_parse_retry_after(
    value: *const c_char,
    len: usize,
    now_ms: i64,
    out: *mut recuo_retry_after,
) -> recuo_status {
    // SAFETY: the caller vouches for `len` readable bytes at `value` and a writable
    // `recuo_retry_after` at `out`.
    unsafe {
        ptr::fill(out, || {
            Ok(parse_retry_after(ptr::bytes(value, len)?, now_ms).into())
        })
    }
}

/// Guide B's delay for the header's bytes (`None`: no header).
fn delay(value: Option<&[u8]>, attempt: u32, now_ms: i64, seed: Option<u64>) -> f64 {
    // Seeded at the first draw only: a header of seconds or a date costs no entropy.
    let mut rng = LazyJitterRng::new(seed);
    match value {
        None => recuo::retry_delay_ms(None, attempt, now_ms, &mut rng),
        Some(value) => parse_retry_after(value, now_ms).guide_b_delay_ms(attempt, &mut rng),
    }
}

/// The bytes of a header given up to its NUL (`None` for NULL).
///
/// # Safety
/// `retry_after` must be NULL or a NUL-terminated string.
unsafe fn header<'a>(retry_after: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: the caller vouches for a NUL-terminated string.
    (!retry_after.is_null()).then(|| unsafe { CStr::from_ptr(retry_after) }.to_bytes())
}

/// Guide B's `retryDelayMs`: how long to wait, in milliseconds, before retry index `attempt`
/// (the first retry is 0), given the response's `Retry-After` header and the time `now_ms`
/// (milliseconds since the Unix epoch, e.g. `recuo_now_ms()`).
///
/// * Seconds (`"12"`) or an HTTP-date: exactly the server's wait (a past date is 0).
/// * A wait over 2^53 − 1 ms: `INFINITY` (from `<math.h>`) — give up, never wait "a little".
/// * NULL (no header) or an invalid value (including non-UTF-8 bytes): full jitter, a uniform
///   draw from `[0, min(8000, 1000 · 2^attempt)]`, from a generator seeded by the operating
///   system.
///
/// Never fails; NaN only if recuo panicked (a bug).
///
/// # Safety
/// `retry_after` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_delay_ms(
    retry_after: *const c_char,
    attempt: u32,
    now_ms: i64,
) -> f64 {
    // SAFETY: forwarded from the caller.
    boundary(|| delay(unsafe { header(retry_after) }, attempt, now_ms, None))
}

/// `recuo_retry_delay_ms` with the jitter drawn from a generator seeded with `seed`: the same
/// arguments always give the same delay (in every language recuo speaks), for exact tests.
///
/// # Safety
/// `retry_after` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_delay_ms_seeded(
    retry_after: *const c_char,
    attempt: u32,
    now_ms: i64,
    seed: u64,
) -> f64 {
    // SAFETY: forwarded from the caller.
    boundary(|| delay(unsafe { header(retry_after) }, attempt, now_ms, Some(seed)))
}

/// `recuo_retry_delay_ms` for a header given as `len` bytes (a NUL among them is part of the
/// value, which then is invalid, as every other language reads it): NULL `value` is no header.
/// `seed` NULL draws from a generator seeded by the operating system; else as
/// `recuo_retry_delay_ms_seeded`.
///
/// # Safety
/// `value` must be NULL or point to `len` readable bytes; `seed` NULL or a readable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_delay_ms_bytes(
    value: *const u8,
    len: usize,
    attempt: u32,
    now_ms: i64,
    seed: *const u64,
) -> f64 {
    boundary(|| {
        // SAFETY: NULL or a readable `uint64_t` (the caller's word).
        let seed = unsafe { seed.as_ref() }.copied();
        // SAFETY: `len` readable bytes at a non-NULL `value` (the caller's word).
        let bytes = (!value.is_null()).then(|| unsafe { ptr::bytes(value.cast(), len) });
        bytes
            .transpose()
            .map_or(f64::NAN, |v| delay(v, attempt, now_ms, seed))
    })
}

/// The name of the `recuo_retry_after_kind` constant `kind` (`"seconds"`, `"date"`,
/// `"unbounded"`, `"invalid"`: the names every language uses), or `"unknown"`. Static: never
/// free it. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_retry_after_kind_name(kind: u32) -> *const c_char {
    recuo_retry_after_kind::name_of(kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use recuo_retry_after_kind::*;

    fn parse(value: &[u8], now_ms: i64) -> (recuo_status, recuo_retry_after) {
        let mut out = recuo_retry_after {
            kind: RECUO_RETRY_AFTER_INVALID,
            wait_ms: 99,
        };
        // SAFETY: `value` is a live slice, `out` a live struct.
        let rc = unsafe {
            recuo_parse_retry_after(value.as_ptr().cast(), value.len(), now_ms, &mut out)
        };
        (rc, out)
    }

    #[test]
    fn kinds_and_waits() {
        let ok = |kind, wait_ms| (RECUO_OK, recuo_retry_after { kind, wait_ms });
        assert_eq!(parse(b"12", 0), ok(RECUO_RETRY_AFTER_SECONDS, 12_000));
        assert_eq!(
            parse(b"Sun, 06 Nov 1994 08:49:37 GMT", 784_111_767_000),
            ok(RECUO_RETRY_AFTER_DATE, 10_000)
        );
        assert_eq!(
            parse(b"99999999999999999999", 0),
            ok(RECUO_RETRY_AFTER_UNBOUNDED, 0)
        );
        assert_eq!(parse(b"12\0", 0), ok(RECUO_RETRY_AFTER_INVALID, 0));
        assert_eq!(parse(b"\xff12", 0), ok(RECUO_RETRY_AFTER_INVALID, 0));
        assert_eq!(parse(b"", 0), ok(RECUO_RETRY_AFTER_INVALID, 0));
    }

    #[test]
    fn kind_names_are_the_core_names() {
        for (value, now) in [
            (&b"12"[..], 0),
            (b"Sun, 06 Nov 1994 08:49:37 GMT", 0),
            (b"99999999999999999999", 0),
            (b"soon", 0),
        ] {
            let parsed = parse_retry_after(value, now);
            let c = recuo_retry_after::from(parsed);
            assert_eq!(c.kind.name().to_str(), Ok(parsed.kind()));
        }
    }

    #[test]
    fn null_arguments() {
        let mut out = recuo_retry_after {
            kind: RECUO_RETRY_AFTER_SECONDS,
            wait_ms: 5,
        };
        // SAFETY: NULL pointers are checked before use; `out` is live.
        unsafe {
            assert_eq!(
                recuo_parse_retry_after(std::ptr::null(), 0, 0, &mut out),
                RECUO_OK
            );
            assert_eq!(out.kind, RECUO_RETRY_AFTER_INVALID);
            let rc = recuo_parse_retry_after(std::ptr::null(), 3, 0, &mut out);
            assert_eq!(rc, RECUO_ERR_NULL_ARGUMENT);
            let rc = recuo_parse_retry_after(c"1".as_ptr(), 1, 0, std::ptr::null_mut());
            assert_eq!(rc, RECUO_ERR_NULL_ARGUMENT);
        }
    }

    #[test]
    fn guide_b_delays() {
        // SAFETY: the pointers are NULL or static C strings.
        unsafe {
            assert_eq!(recuo_retry_delay_ms(c"12".as_ptr(), 0, 0), 12_000.0);
            // With its length, a NUL inside is part of the value: invalid, so a draw.
            let seed = 7u64;
            let nul = recuo_retry_delay_ms_bytes(b"12\x000".as_ptr(), 4, 0, 0, &seed);
            let none = recuo_retry_delay_ms_bytes(std::ptr::null(), 0, 0, 0, &seed);
            assert_eq!(nul, none);
            assert!((0.0..=1000.0).contains(&nul), "{nul}");
            assert_eq!(
                recuo_retry_delay_ms_bytes(b"12".as_ptr(), 2, 0, 0, std::ptr::null()),
                12_000.0
            );
            assert_eq!(
                recuo_retry_delay_ms(c"99999999999999999999".as_ptr(), 0, 0),
                f64::INFINITY
            );
            let d = recuo_retry_delay_ms(std::ptr::null(), 3, 0);
            assert!((0.0..=8000.0).contains(&d), "{d}");
            let a = recuo_retry_delay_ms_seeded(c"soon".as_ptr(), 30, 0, 42);
            let b = recuo_retry_delay_ms_seeded(c"soon".as_ptr(), 30, 0, 42);
            let mut rng = recuo::JitterRng::seeded(42);
            assert_eq!(a, recuo::retry_delay_ms(None, 30, 0, &mut rng));
            assert_eq!(a, b);
        }
    }
}
