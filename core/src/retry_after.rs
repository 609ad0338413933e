//! `Retry-After` read right (SPEC §3): seconds or HTTP-date; `12` means 12 seconds; a past
//! date means 0; anything else is invalid and leaves the decision to the backoff.

use rand::RngCore;

use crate::http_date::parse_http_date;
use crate::rng::uniform_inclusive;
use crate::{window_ms, GUIDE_B_BASE_MS, GUIDE_B_CAP_MS};

/// 2^53 − 1: the largest integer a double holds exactly. A wait above it is unbounded.
pub const MAX_SAFE_MS: u64 = (1 << 53) - 1;

/// What a `Retry-After` value asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[must_use]
pub enum RetryAfter {
    /// Delay-seconds: wait this many milliseconds (the seconds × 1000).
    Seconds {
        /// The wait in milliseconds, at most [`MAX_SAFE_MS`].
        wait_ms: u64,
    },
    /// An HTTP-date: wait until then (0 when it has passed).
    Date {
        /// The wait in milliseconds, at most [`MAX_SAFE_MS`].
        wait_ms: u64,
    },
    /// A wait too long to count (over 2^53 − 1 ms): the caller should give up, never treat
    /// it as short.
    Unbounded,
    /// Not a `Retry-After` value: no server wait, the backoff applies.
    Invalid,
}

impl RetryAfter {
    /// The finite server wait in milliseconds, or `None` for unbounded and invalid values.
    pub const fn wait_ms(&self) -> Option<u64> {
        match *self {
            RetryAfter::Seconds { wait_ms } | RetryAfter::Date { wait_ms } => Some(wait_ms),
            RetryAfter::Unbounded | RetryAfter::Invalid => None,
        }
    }

    /// The kind's name: `seconds`, `date`, `unbounded` or `invalid`.
    pub const fn kind(&self) -> &'static str {
        match self {
            RetryAfter::Seconds { .. } => "seconds",
            RetryAfter::Date { .. } => "date",
            RetryAfter::Unbounded => "unbounded",
            RetryAfter::Invalid => "invalid",
        }
    }

    /// Guide B's delay for retry index `attempt`, in milliseconds: the exact server wait,
    /// `+∞` when unbounded, and for an invalid value a full-jitter draw from
    /// `[0, min(8000, 1000 · 2^attempt)]`.
    pub fn guide_b_delay_ms<R: RngCore + ?Sized>(&self, attempt: u32, rng: &mut R) -> f64 {
        match *self {
            RetryAfter::Seconds { wait_ms } | RetryAfter::Date { wait_ms } => wait_ms as f64,
            RetryAfter::Unbounded => f64::INFINITY,
            RetryAfter::Invalid => {
                let window = window_ms(GUIDE_B_BASE_MS, GUIDE_B_CAP_MS, attempt);
                uniform_inclusive(rng, 0, window) as f64
            }
        }
    }
}

/// Reads a `Retry-After` value as of `now_unix_ms` (milliseconds since the Unix epoch; pass
/// the response's `Date` when it has one to be immune to the client's clock skew).
///
/// Spaces and tabs around the value are ignored. One or more ASCII digits are seconds
/// (leading zeros allowed); an HTTP-date in any of RFC 9110's three forms is a date; anything
/// else (signs, fractions, other zones, trailing bytes, non-ASCII, NUL) is
/// [`RetryAfter::Invalid`]. Never panics and never allocates.
pub fn parse_retry_after(value: impl AsRef<[u8]>, now_unix_ms: i64) -> RetryAfter {
    let value = trim_spaces_and_tabs(value.as_ref());
    if value.is_empty() {
        return RetryAfter::Invalid;
    }
    if value.iter().all(u8::is_ascii_digit) {
        return delay_seconds(value);
    }
    match parse_http_date(value, now_unix_ms) {
        Some(date_s) => {
            let wait = (i128::from(date_s) * 1000 - i128::from(now_unix_ms)).max(0);
            match u64::try_from(wait) {
                Ok(wait_ms) if wait_ms <= MAX_SAFE_MS => RetryAfter::Date { wait_ms },
                _ => RetryAfter::Unbounded,
            }
        }
        None => RetryAfter::Invalid,
    }
}

fn trim_spaces_and_tabs(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// `digits` is non-empty and all ASCII digits.
fn delay_seconds(digits: &[u8]) -> RetryAfter {
    let significant = match digits.iter().position(|&b| b != b'0') {
        Some(first) => &digits[first..],
        None => return RetryAfter::Seconds { wait_ms: 0 },
    };
    // 2^53 − 1 ms is 9_007_199_254_740 s: thirteen digits. Anything with more than 16 is
    // far past it, and 16 digits × 1000 still fits in a u64.
    if significant.len() > 16 {
        return RetryAfter::Unbounded;
    }
    let seconds = significant
        .iter()
        .fold(0u64, |acc, &b| acc * 10 + u64::from(b - b'0'));
    match seconds * 1000 {
        wait_ms if wait_ms <= MAX_SAFE_MS => RetryAfter::Seconds { wait_ms },
        _ => RetryAfter::Unbounded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 784_111_777_000; // Sun, 06 Nov 1994 08:49:37 GMT

    #[test]
    fn twelve_means_twelve_seconds() {
        assert_eq!(
            parse_retry_after("12", NOW),
            RetryAfter::Seconds { wait_ms: 12_000 }
        );
        assert_eq!(
            parse_retry_after(" \t0012\t ", NOW),
            RetryAfter::Seconds { wait_ms: 12_000 }
        );
        assert_eq!(
            parse_retry_after("000", NOW),
            RetryAfter::Seconds { wait_ms: 0 }
        );
    }

    #[test]
    fn the_largest_exact_wait_and_beyond() {
        assert_eq!(
            parse_retry_after("9007199254740", NOW),
            RetryAfter::Seconds {
                wait_ms: 9_007_199_254_740_000
            }
        );
        assert_eq!(
            parse_retry_after("9007199254741", NOW),
            RetryAfter::Unbounded
        );
        assert_eq!(
            parse_retry_after("99999999999999999999999999", NOW),
            RetryAfter::Unbounded
        );
        assert_eq!(
            parse_retry_after("0000000000000000000000000000007", NOW),
            RetryAfter::Seconds { wait_ms: 7000 }
        );
    }

    #[test]
    fn dates_wait_until_then_and_the_past_is_zero() {
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:37 GMT", NOW),
            RetryAfter::Date { wait_ms: 60_000 }
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", NOW + 1),
            RetryAfter::Date { wait_ms: 0 }
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:38 GMT", NOW + 250),
            RetryAfter::Date { wait_ms: 750 }
        );
    }

    #[test]
    fn everything_else_is_invalid() {
        for bad in [
            "", " ", "-5", "+5", "1.5", "5s", "1e3", "soon", "١٢", "12\0", "0x10",
        ] {
            assert_eq!(parse_retry_after(bad, NOW), RetryAfter::Invalid, "{bad:?}");
        }
        assert_eq!(parse_retry_after([0xffu8, b'1'], NOW), RetryAfter::Invalid);
    }

    #[test]
    fn guide_b_delay() {
        let mut rng = crate::JitterRng::seeded(3);
        let d = |s: &str, a: u32, rng: &mut crate::JitterRng| {
            parse_retry_after(s, NOW).guide_b_delay_ms(a, rng)
        };
        assert_eq!(d("12", 0, &mut rng), 12_000.0);
        assert_eq!(d("99999999999999", 0, &mut rng), f64::INFINITY);
        for attempt in [0, 1, 2, 3, 4, 100, u32::MAX] {
            let window = window_ms(1000, 8000, attempt) as f64;
            for _ in 0..50 {
                let x = d("garbage", attempt, &mut rng);
                assert!((0.0..=window).contains(&x) && x.fract() == 0.0, "{x}");
            }
        }
    }
}
