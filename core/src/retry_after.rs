//! `Retry-After` read right: seconds or HTTP-date; `12` means 12 seconds; a past
//! date means 0; anything else is invalid and leaves the decision to the backoff.
//!
//! Guide B, named below, is the guide (in Portuguese)
//! “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”; its `retryDelayMs`
//! is [`crate::retry_delay_ms`].

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

/// A `Retry-After` value as plain data, the form every language's `RetryAfter` has: its kind
/// and, for seconds and a date, the server's wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct RetryAfterValue {
    /// `seconds`, `date`, `unbounded` or `invalid`.
    pub kind: RetryAfterKind,
    /// The server's finite wait in milliseconds (at most 2^53 − 1) for seconds and a date;
    /// null when unbounded or invalid.
    pub wait_ms: Option<u64>,
}

/// What kind of `Retry-After` value was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum RetryAfterKind {
    /// Delay-seconds.
    Seconds,
    /// An HTTP-date.
    Date,
    /// A wait too long to count.
    Unbounded,
    /// Not a `Retry-After` value.
    Invalid,
}

impl From<RetryAfter> for RetryAfterValue {
    fn from(value: RetryAfter) -> Self {
        let kind = match value {
            RetryAfter::Seconds { .. } => RetryAfterKind::Seconds,
            RetryAfter::Date { .. } => RetryAfterKind::Date,
            RetryAfter::Unbounded => RetryAfterKind::Unbounded,
            RetryAfter::Invalid => RetryAfterKind::Invalid,
        };
        RetryAfterValue {
            kind,
            wait_ms: value.wait_ms(),
        }
    }
}

impl TryFrom<RetryAfterValue> for RetryAfter {
    type Error = crate::ConfigError;

    /// The value a plain form describes: a wait of at most 2^53 − 1 ms for seconds and a
    /// date, none for the others; anything else is [`crate::ConfigError::InvalidValue`].
    fn try_from(value: RetryAfterValue) -> Result<Self, Self::Error> {
        match (value.kind, value.wait_ms) {
            (RetryAfterKind::Seconds, Some(wait_ms)) if wait_ms <= MAX_SAFE_MS => {
                Ok(RetryAfter::Seconds { wait_ms })
            }
            (RetryAfterKind::Date, Some(wait_ms)) if wait_ms <= MAX_SAFE_MS => {
                Ok(RetryAfter::Date { wait_ms })
            }
            (RetryAfterKind::Unbounded, None) => Ok(RetryAfter::Unbounded),
            (RetryAfterKind::Invalid, None) => Ok(RetryAfter::Invalid),
            _ => Err(crate::ConfigError::InvalidValue),
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
    let value = value.as_ref();
    // The common value first: a few digits and nothing else, in one pass.
    if let Some(seconds) = bare_seconds(value) {
        return seconds;
    }
    let value = trim_spaces_and_tabs(value);
    match delay_seconds(value) {
        Some(seconds) => seconds,
        None if value.is_empty() => RetryAfter::Invalid,
        None => parse_date(value, now_unix_ms),
    }
}

/// An HTTP-date's wait as of `now_unix_ms`.
fn parse_date(value: &[u8], now_unix_ms: i64) -> RetryAfter {
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

#[inline]
fn trim_spaces_and_tabs(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// 2^53 − 1 ms is 9_007_199_254_740 s, so any count of seconds above this is unbounded; and
/// below it, one more digit (× 10 + 9) still fits in a u64 with room to spare.
const MAX_SAFE_SECONDS: u64 = MAX_SAFE_MS / 1000;

/// Delay-seconds of at most 19 digits, nothing around them: `None` for anything else. 19
/// digits never overflow a u64, so the count is checked once, at the end.
#[inline]
fn bare_seconds(value: &[u8]) -> Option<RetryAfter> {
    if value.is_empty() || value.len() > 19 {
        return None;
    }
    let mut seconds = 0u64;
    for &b in value {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        seconds = seconds * 10 + u64::from(digit);
    }
    Some(if seconds > MAX_SAFE_SECONDS {
        RetryAfter::Unbounded
    } else {
        RetryAfter::Seconds {
            wait_ms: seconds * 1000,
        }
    })
}

/// Delay-seconds of any length, in one pass: `None` unless `value` is one or more ASCII
/// digits.
#[inline]
fn delay_seconds(value: &[u8]) -> Option<RetryAfter> {
    let (mut seconds, mut unbounded) = (0u64, false);
    for &b in value {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        // Past the largest exact wait the count stops growing (so it never overflows); the
        // remaining bytes must still be digits.
        seconds = seconds * 10 + u64::from(digit);
        if seconds > MAX_SAFE_SECONDS {
            unbounded = true;
            seconds = MAX_SAFE_SECONDS;
        }
    }
    if value.is_empty() {
        None
    } else if unbounded {
        Some(RetryAfter::Unbounded)
    } else {
        Some(RetryAfter::Seconds {
            wait_ms: seconds * 1000,
        })
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_plain_form_round_trips_and_refuses_a_kind_without_its_wait() {
        for value in [
            RetryAfter::Seconds { wait_ms: 12_000 },
            RetryAfter::Date { wait_ms: 0 },
            RetryAfter::Unbounded,
            RetryAfter::Invalid,
        ] {
            assert_eq!(
                RetryAfter::try_from(RetryAfterValue::from(value)),
                Ok(value)
            );
        }
        let no_wait = RetryAfterValue {
            kind: RetryAfterKind::Seconds,
            wait_ms: None,
        };
        assert!(RetryAfter::try_from(no_wait).is_err());
        let too_long = RetryAfterValue {
            kind: RetryAfterKind::Date,
            wait_ms: Some(MAX_SAFE_MS + 1),
        };
        assert!(RetryAfter::try_from(too_long).is_err());
    }

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
    fn every_length_of_digits_bare_or_trimmed() {
        // The bare fast path (up to 19 digits) and the general one agree, at every length
        // and around the largest exact wait.
        let reference = |digits: &str| match digits.parse::<u128>() {
            Ok(s) if s * 1000 <= u128::from(MAX_SAFE_MS) => RetryAfter::Seconds {
                wait_ms: u64::try_from(s * 1000).unwrap(),
            },
            _ => RetryAfter::Unbounded,
        };
        let mut values: Vec<String> = (1..=25).map(|n| "9".repeat(n)).collect();
        values.extend((1..=25).map(|n| format!("{}12", "0".repeat(n))));
        values.extend((1..=22).map(|n| "1".repeat(n)));
        for edge in ["9007199254740", "9007199254741", "18446744073709551615"] {
            values.push(edge.to_owned());
            values.push(format!("000000{edge}"));
        }
        for v in &values {
            let want = reference(v);
            assert_eq!(parse_retry_after(v, NOW), want, "{v}");
            assert_eq!(parse_retry_after(format!(" \t{v}\t "), NOW), want, "{v}");
            assert_eq!(
                parse_retry_after(format!("{v}x"), NOW),
                RetryAfter::Invalid,
                "{v}x"
            );
        }
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
