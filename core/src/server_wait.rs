//! The minimum wait a server asked for (SPEC §3, §4): `Retry-After`, else the rate-limit
//! hints, optionally measured against the response's own `Date`.

use crate::headers::header;
use crate::http_date::parse_http_date;
use crate::retry_after::{parse_retry_after, RetryAfter, MAX_SAFE_MS};

/// A wait the server asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerWait {
    /// Wait at least this many milliseconds (0 is allowed: a date in the past).
    Ms(u64),
    /// A wait too long to count: no retry can honour it.
    Unbounded,
}

impl ServerWait {
    /// The finite wait in milliseconds, or `None` when unbounded.
    pub const fn ms(self) -> Option<u64> {
        match self {
            ServerWait::Ms(ms) => Some(ms),
            ServerWait::Unbounded => None,
        }
    }

    fn from_seconds(seconds: u64) -> Self {
        match seconds.checked_mul(1000) {
            Some(ms) if ms <= MAX_SAFE_MS => ServerWait::Ms(ms),
            _ => ServerWait::Unbounded,
        }
    }
}

/// Epoch seconds above this in `X-RateLimit-Reset` are instants (as GitHub sends), below it
/// delta seconds.
const EPOCH_THRESHOLD_S: u64 = 1_000_000_000;

/// The server's wait from response headers, as of `now_unix_ms`.
///
/// In order: a valid `Retry-After` (an invalid one counts as absent); the `RateLimit`
/// structured field (`t=` of the policies with `r=0`, the longest); `RateLimit-Reset` with
/// `RateLimit-Remaining: 0`; `X-RateLimit-Reset` with `X-RateLimit-Remaining: 0` (values above
/// 10^9 are epoch seconds). When `use_date_header` is set and the response has a valid
/// `Date`, that instant is "now" — the wait then does not depend on the client's clock.
pub fn server_wait<K, V>(
    headers: &[(K, V)],
    now_unix_ms: i64,
    use_date_header: bool,
) -> Option<ServerWait>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    let now = if use_date_header {
        header(headers, "Date")
            .and_then(|d| parse_http_date(d.as_bytes(), now_unix_ms))
            .map_or(now_unix_ms, |s| s.saturating_mul(1000))
    } else {
        now_unix_ms
    };
    if let Some(value) = header(headers, "Retry-After") {
        match parse_retry_after(value, now) {
            RetryAfter::Seconds { wait_ms } | RetryAfter::Date { wait_ms } => {
                return Some(ServerWait::Ms(wait_ms))
            }
            RetryAfter::Unbounded => return Some(ServerWait::Unbounded),
            RetryAfter::Invalid => {}
        }
    }
    if let Some(wait) = header(headers, "RateLimit").and_then(structured_ratelimit_wait) {
        return Some(wait);
    }
    if header(headers, "RateLimit-Remaining").and_then(delta) == Some(0) {
        if let Some(s) = header(headers, "RateLimit-Reset").and_then(delta) {
            return Some(ServerWait::from_seconds(s));
        }
    }
    if header(headers, "X-RateLimit-Remaining").and_then(delta) == Some(0) {
        if let Some(reset) = header(headers, "X-RateLimit-Reset").and_then(delta) {
            if reset > EPOCH_THRESHOLD_S {
                let wait = (i128::from(reset) * 1000 - i128::from(now)).max(0);
                return Some(match u64::try_from(wait) {
                    Ok(ms) if ms <= MAX_SAFE_MS => ServerWait::Ms(ms),
                    _ => ServerWait::Unbounded,
                });
            }
            return Some(ServerWait::from_seconds(reset));
        }
    }
    None
}

/// Whether the headers say the quota is spent (`X-RateLimit-Remaining: 0`, `RateLimit` with a
/// policy at `r=0`, or `RateLimit-Remaining: 0`): a 403 that says so is a rate limit.
pub fn quota_spent<K, V>(headers: &[(K, V)]) -> bool
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    header(headers, "X-RateLimit-Remaining").and_then(delta) == Some(0)
        || header(headers, "RateLimit-Remaining").and_then(delta) == Some(0)
        || header(headers, "RateLimit")
            .is_some_and(|v| ratelimit_items(v).any(|(r, _)| r == Some(0)))
}

/// A non-negative integer of ASCII digits (delta-seconds); saturates instead of overflowing.
fn delta(s: &str) -> Option<u64> {
    let s = s.trim_matches([' ', '\t']);
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| {
        s.bytes().fold(0u64, |acc, b| {
            acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
        })
    })
}

/// `(r, t)` of each list member of a `RateLimit` structured field, e.g.
/// `"default";r=0;t=30, "daily";r=100;t=86400`.
fn ratelimit_items(value: &str) -> impl Iterator<Item = (Option<u64>, Option<u64>)> + '_ {
    value.split(',').map(|member| {
        let mut r = None;
        let mut t = None;
        for param in member.split(';').skip(1) {
            if let Some((key, v)) = param.split_once('=') {
                match key.trim() {
                    "r" => r = delta(v),
                    "t" => t = delta(v),
                    _ => {}
                }
            }
        }
        (r, t)
    })
}

fn structured_ratelimit_wait(value: &str) -> Option<ServerWait> {
    ratelimit_items(value)
        .filter(|(r, _)| *r == Some(0))
        .filter_map(|(_, t)| t)
        .max()
        .map(ServerWait::from_seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn wait(h: &[(&str, &str)]) -> Option<ServerWait> {
        server_wait(h, NOW, false)
    }

    #[test]
    fn retry_after_comes_first() {
        let h = [
            ("Retry-After", "12"),
            ("X-RateLimit-Remaining", "0"),
            ("X-RateLimit-Reset", "99"),
        ];
        assert_eq!(wait(&h), Some(ServerWait::Ms(12_000)));
        assert_eq!(
            wait(&[("Retry-After", "99999999999999")]),
            Some(ServerWait::Unbounded)
        );
    }

    #[test]
    fn an_invalid_retry_after_falls_through_to_the_hints() {
        let h = [
            ("Retry-After", "soon"),
            ("RateLimit-Remaining", "0"),
            ("RateLimit-Reset", "7"),
        ];
        assert_eq!(wait(&h), Some(ServerWait::Ms(7_000)));
        assert_eq!(wait(&[("Retry-After", "soon")]), None);
    }

    #[test]
    fn structured_field_takes_the_longest_exhausted_policy() {
        let h = [(
            "RateLimit",
            "\"minute\";r=0;t=30, \"day\";r=0;t=3600, \"burst\";r=5;t=9000",
        )];
        assert_eq!(wait(&h), Some(ServerWait::Ms(3_600_000)));
        assert_eq!(wait(&[("RateLimit", "\"minute\";r=3;t=30")]), None);
        assert!(quota_spent(&h));
        assert!(!quota_spent(&[("RateLimit", "\"minute\";r=3;t=30")]));
    }

    #[test]
    fn remaining_above_zero_gives_no_wait() {
        assert_eq!(
            wait(&[("RateLimit-Remaining", "1"), ("RateLimit-Reset", "7")]),
            None
        );
        assert_eq!(
            wait(&[("X-RateLimit-Remaining", "4"), ("X-RateLimit-Reset", "7")]),
            None
        );
    }

    #[test]
    fn x_ratelimit_reset_epoch_or_delta() {
        let epoch = [
            ("X-RateLimit-Remaining", "0"),
            ("X-RateLimit-Reset", "1700000042"),
        ];
        assert_eq!(wait(&epoch), Some(ServerWait::Ms(42_000)));
        let past = [
            ("X-RateLimit-Remaining", "0"),
            ("X-RateLimit-Reset", "1600000000"),
        ];
        assert_eq!(wait(&past), Some(ServerWait::Ms(0)));
        let delta = [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "60")];
        assert_eq!(wait(&delta), Some(ServerWait::Ms(60_000)));
    }

    #[test]
    fn the_date_header_can_be_now() {
        // The server's clock says 08:49:37; the client's is 10 minutes behind.
        let h = [
            ("Date", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("Retry-After", "Sun, 06 Nov 1994 08:50:07 GMT"),
        ];
        let client_now = 784_111_777_000 - 600_000;
        assert_eq!(
            server_wait(&h, client_now, true),
            Some(ServerWait::Ms(30_000))
        );
        assert_eq!(
            server_wait(&h, client_now, false),
            Some(ServerWait::Ms(630_000))
        );
        let bad_date = [
            ("Date", "yesterday"),
            ("Retry-After", "Sun, 06 Nov 1994 08:50:07 GMT"),
        ];
        assert_eq!(
            server_wait(&bad_date, client_now, true),
            Some(ServerWait::Ms(630_000))
        );
    }

    #[test]
    fn huge_hints_are_unbounded_not_short() {
        let h = [
            ("RateLimit-Remaining", "0"),
            ("RateLimit-Reset", "999999999999999999999999"),
        ];
        assert_eq!(wait(&h), Some(ServerWait::Unbounded));
    }
}
