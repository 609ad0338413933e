//! The minimum wait a server asked for: `Retry-After`, else the rate-limit
//! hints, optionally measured against the response's own `Date`.

use crate::headers::{combined, singleton};
use crate::http_date::parse_http_date;
use crate::retry_after::{parse_retry_after, RetryAfter, MAX_SAFE_MS};
use crate::structured::{parse_list, Bare, Member};

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

/// `X-RateLimit-Reset` values of this many digits or more have no known unit (epoch
/// milliseconds read as seconds would be 53,000 years): no hint.
const X_RESET_MAX_DIGITS: usize = 10;

/// The server's wait from response headers, as of `now_unix_ms`.
///
/// In order: a valid `Retry-After` (an invalid one counts as absent); the `RateLimit`
/// structured field (`t=` of the policies with `r=0`, the longest); `RateLimit-Reset` with
/// `RateLimit-Remaining: 0`; `X-RateLimit-Reset` with `X-RateLimit-Remaining: 0` (values above
/// 10^9 are epoch seconds; 11 digits or more give no hint). When `use_date_header` is set and
/// the response has a valid `Date`, that instant is "now" — the wait then does not depend on
/// the client's clock.
///
/// Field lines: the lines of `RateLimit` are combined into one list before it is
/// parsed, and a `RateLimit` that is not a valid structured list (RFC 9651; an integer of
/// more than 15 digits, say) is ignored as a whole. A singleton field (`Retry-After`,
/// `Date`, `RateLimit-Reset`, `RateLimit-Remaining`, `X-RateLimit-*`) repeated with
/// different values is malformed and gives no hint.
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
        singleton(headers, "Date")
            .and_then(|d| parse_http_date(d.as_bytes(), now_unix_ms))
            .map_or(now_unix_ms, |s| s.saturating_mul(1000))
    } else {
        now_unix_ms
    };
    if let Some(value) = singleton(headers, "Retry-After") {
        match parse_retry_after(value, now) {
            RetryAfter::Seconds { wait_ms } | RetryAfter::Date { wait_ms } => {
                return Some(ServerWait::Ms(wait_ms))
            }
            RetryAfter::Unbounded => return Some(ServerWait::Unbounded),
            RetryAfter::Invalid => {}
        }
    }
    if let Some(wait) = ratelimit_members(headers).and_then(|m| structured_ratelimit_wait(&m)) {
        return Some(wait);
    }
    if singleton(headers, "RateLimit-Remaining").and_then(delta) == Some(0) {
        if let Some(s) = singleton(headers, "RateLimit-Reset").and_then(delta) {
            return Some(ServerWait::from_seconds(s));
        }
    }
    if singleton(headers, "X-RateLimit-Remaining").and_then(delta) == Some(0) {
        let text = singleton(headers, "X-RateLimit-Reset");
        if let Some(reset) = text
            .filter(|t| t.len() <= X_RESET_MAX_DIGITS)
            .and_then(delta)
        {
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
    singleton(headers, "X-RateLimit-Remaining").and_then(delta) == Some(0)
        || singleton(headers, "RateLimit-Remaining").and_then(delta) == Some(0)
        || ratelimit_members(headers)
            .is_some_and(|m| m.iter().any(|m| m.param("r") == Some(Bare::Integer(0))))
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

/// The members of the `RateLimit` field, its lines combined; `None` when absent or not a
/// valid structured list.
fn ratelimit_members<K, V>(headers: &[(K, V)]) -> Option<Vec<Member>>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    parse_list(&combined(headers, "RateLimit")?)
}

/// The longest `t=` of the policies at `r=0` (`"default";r=0;t=30, "daily";r=100;t=86400`).
fn structured_ratelimit_wait(members: &[Member]) -> Option<ServerWait> {
    members
        .iter()
        .filter(|m| m.param("r") == Some(Bare::Integer(0)))
        .filter_map(|m| match m.param("t") {
            Some(Bare::Integer(t)) => u64::try_from(t).ok(),
            _ => None,
        })
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
    fn ratelimit_lines_are_one_list() {
        let h = [
            ("RateLimit", "\"minute\";r=5;t=30"),
            ("RateLimit", "\"day\";r=0;t=3600"),
        ];
        assert_eq!(wait(&h), Some(ServerWait::Ms(3_600_000)));
        assert!(quota_spent(&h));
    }

    #[test]
    fn a_malformed_ratelimit_is_ignored_as_a_whole() {
        let sixteen = [("RateLimit", "\"day\";r=0;t=1234567890123456")];
        assert_eq!(wait(&sixteen), None);
        assert!(!quota_spent(&sixteen));
        let one_bad_member = [("RateLimit", "\"a\";r=0;t=30, \"b\";r=0;t=x y")];
        assert_eq!(wait(&one_bad_member), None);
        let bad_line = [
            ("RateLimit", "\"a\";r=0;t=30"),
            ("RateLimit", "\"b\";r=0;;t=3"),
        ];
        assert_eq!(wait(&bad_line), None);
        // 15 digits are valid: a wait too long to count, never a short one.
        let fifteen = [("RateLimit", "\"day\";r=0;t=999999999999999")];
        assert_eq!(wait(&fifteen), Some(ServerWait::Unbounded));
    }

    #[test]
    fn an_x_ratelimit_reset_of_eleven_digits_gives_no_hint() {
        let ms = [
            ("X-RateLimit-Remaining", "0"),
            ("X-RateLimit-Reset", "1700000042000"),
        ];
        assert_eq!(wait(&ms), None);
        assert!(quota_spent(&ms));
        let eleven = [
            ("X-RateLimit-Remaining", "0"),
            ("X-RateLimit-Reset", "17000000420"),
        ];
        assert_eq!(wait(&eleven), None);
        let ten = [
            ("X-RateLimit-Remaining", "0"),
            ("X-RateLimit-Reset", "9999999999"),
        ];
        assert_eq!(wait(&ten), Some(ServerWait::Ms(8_299_999_999_000)));
    }

    #[test]
    fn a_singleton_repeated_with_different_values_gives_no_hint() {
        let two = [("Retry-After", "5"), ("Retry-After", "10")];
        assert_eq!(wait(&two), None);
        let alike = [("Retry-After", "5"), ("Retry-After", "5")];
        assert_eq!(wait(&alike), Some(ServerWait::Ms(5_000)));
        let falls_through = [
            ("Retry-After", "5"),
            ("Retry-After", "10"),
            ("RateLimit-Remaining", "0"),
            ("RateLimit-Reset", "7"),
        ];
        assert_eq!(wait(&falls_through), Some(ServerWait::Ms(7_000)));
        let remaining = [
            ("X-RateLimit-Remaining", "0"),
            ("X-RateLimit-Remaining", "5"),
            ("X-RateLimit-Reset", "60"),
        ];
        assert_eq!(wait(&remaining), None);
        assert!(!quota_spent(&remaining));
        let reset = [
            ("RateLimit-Remaining", "0"),
            ("RateLimit-Reset", "7"),
            ("RateLimit-Reset", "9"),
        ];
        assert_eq!(wait(&reset), None);
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
