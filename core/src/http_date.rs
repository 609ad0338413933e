//! HTTP-date as RFC 9110 §5.6.7 defines it, to the letter: the three forms, case-sensitive
//! names, single spaces, `GMT` only, and the 50-year rule for two-digit years.
//!
//! Where the grammar leaves room, recuo is strict: the calendar date must exist (no 30 Feb,
//! 29 Feb only in leap years), the day name must be the one the date falls on
//! (RFC 5322 §3.3, which IMF-fixdate is a subset of), hours run 00–23, minutes 00–59 and
//! seconds 00–60 (a leap second counts as the next minute's first).

const DAY_NAMES: [&[u8]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
const DAY_NAMES_LONG: [&[u8]; 7] = [
    b"Sunday",
    b"Monday",
    b"Tuesday",
    b"Wednesday",
    b"Thursday",
    b"Friday",
    b"Saturday",
];
const MONTHS: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// The instant an HTTP-date names, in seconds since the Unix epoch, or `None` when `value`
/// is not an HTTP-date of RFC 9110 §5.6.7.
///
/// `now_unix_ms` is only read for the obsolete RFC 850 form, whose two-digit year is taken
/// as the year with those last digits that lies within 50 years of now's year: never more
/// than 50 years ahead (RFC 9110 §5.6.7), otherwise the nearest.
pub fn parse_http_date(value: &[u8], now_unix_ms: i64) -> Option<i64> {
    match value.len() {
        29 => parse_imf_fixdate(value),
        24 => parse_asctime(value),
        _ => parse_rfc850(value, now_unix_ms),
    }
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn parse_imf_fixdate(s: &[u8]) -> Option<i64> {
    let wday = index_of(&DAY_NAMES, &s[0..3])?;
    expect(s, 3, b", ")?;
    let day = digits(&s[5..7])?;
    expect(s, 7, b" ")?;
    let month = index_of(&MONTHS, &s[8..11])? as u32 + 1;
    expect(s, 11, b" ")?;
    let year = digits(&s[12..16])? as i64;
    expect(s, 16, b" ")?;
    let secs = time_of_day(&s[17..25])?;
    expect(s, 25, b" GMT")?;
    instant(year, month, day, secs, wday)
}

/// `Sun Nov  6 08:49:37 1994` (the day is two digits, or a space and one digit)
fn parse_asctime(s: &[u8]) -> Option<i64> {
    let wday = index_of(&DAY_NAMES, &s[0..3])?;
    expect(s, 3, b" ")?;
    let month = index_of(&MONTHS, &s[4..7])? as u32 + 1;
    expect(s, 7, b" ")?;
    let day = if s[8] == b' ' {
        digits(&s[9..10])?
    } else {
        digits(&s[8..10])?
    };
    expect(s, 10, b" ")?;
    let secs = time_of_day(&s[11..19])?;
    expect(s, 19, b" ")?;
    let year = digits(&s[20..24])? as i64;
    instant(year, month, day, secs, wday)
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`
fn parse_rfc850(s: &[u8], now_unix_ms: i64) -> Option<i64> {
    let comma = s.iter().position(|&b| b == b',')?;
    let wday = index_of(&DAY_NAMES_LONG, &s[..comma])?;
    let rest = &s[comma..];
    if rest.len() != 24 {
        return None;
    }
    expect(rest, 0, b", ")?;
    let day = digits(&rest[2..4])?;
    expect(rest, 4, b"-")?;
    let month = index_of(&MONTHS, &rest[5..8])? as u32 + 1;
    expect(rest, 8, b"-")?;
    let yy = digits(&rest[9..11])? as i64;
    expect(rest, 11, b" ")?;
    let secs = time_of_day(&rest[12..20])?;
    expect(rest, 20, b" GMT")?;
    let now_year = civil_from_days(now_unix_ms.div_euclid(86_400_000)).0;
    // The year with these two last digits within (now − 50, now + 50].
    let mut year = now_year.div_euclid(100) * 100 + yy;
    if year > now_year + 50 {
        year -= 100;
    } else if year <= now_year - 50 {
        year += 100;
    }
    instant(year, month, day, secs, wday)
}

fn index_of(names: &[&[u8]], s: &[u8]) -> Option<usize> {
    names.iter().position(|n| *n == s)
}

fn expect(s: &[u8], at: usize, literal: &[u8]) -> Option<()> {
    (s.get(at..at + literal.len())? == literal).then_some(())
}

fn digits(s: &[u8]) -> Option<u32> {
    s.iter().try_fold(0u32, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
    })
}

/// `HH:MM:SS` → seconds into the day.
fn time_of_day(s: &[u8]) -> Option<i64> {
    expect(s, 2, b":")?;
    expect(s, 5, b":")?;
    let (h, m, sec) = (digits(&s[0..2])?, digits(&s[3..5])?, digits(&s[6..8])?);
    (h <= 23 && m <= 59 && sec <= 60).then(|| i64::from(h * 3600 + m * 60 + sec))
}

fn instant(year: i64, month: u32, day: u32, secs: i64, wday: usize) -> Option<i64> {
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    // 1970-01-01 was a Thursday (index 4 from Sunday).
    if (days + 4).rem_euclid(7) as usize != wday {
        return None;
    }
    Some(days * 86_400 + secs)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The (year, month, day) of a count of days since 1970-01-01.
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW_2026: i64 = 1_795_000_000_000; // 2026-11-18

    fn p(s: &str) -> Option<i64> {
        parse_http_date(s.as_bytes(), NOW_2026)
    }

    #[test]
    fn the_three_forms_name_the_same_instant() {
        assert_eq!(p("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(p("Sunday, 06-Nov-94 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(p("Sun Nov  6 08:49:37 1994"), Some(784_111_777));
        assert_eq!(p("Sun Nov 06 08:49:37 1994"), Some(784_111_777));
    }

    #[test]
    fn civil_round_trip() {
        for days in [-800_000, -1, 0, 1, 11_016, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn agrees_with_httpdate_on_imf_fixdates() {
        for secs in (0..4_000_000_000i64).step_by(7_777_777) {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs as u64);
            let text = httpdate::fmt_http_date(t);
            assert_eq!(p(&text), Some(secs), "{text}");
        }
    }

    #[test]
    fn two_digit_years_follow_the_fifty_year_rule() {
        // now is 2026: 76 is 2076 (50 years ahead), 77 is 1977.
        assert_eq!(p("Wednesday, 01-Jan-76 00:00:00 GMT"), Some(3_345_062_400));
        assert_eq!(p("Saturday, 01-Jan-77 00:00:00 GMT"), Some(220_924_800));
        assert_eq!(p("Friday, 01-Jan-27 00:00:00 GMT"), Some(1_798_761_600));
    }

    #[test]
    fn strictness() {
        for bad in [
            "sun, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 gmt",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun,  6 Nov 1994 08:49:37 GMT",
            "Mon, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 1994 08:49:61 GMT",
            "Sun Nov 6 08:49:37 1994",
            "Sun Nov  6 08:49:37 1994 ",
            "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT",
            "Tue, 30 Feb 2027 00:00:00 GMT",
            "Sat, 00 Jan 2000 00:00:00 GMT",
            "",
            "Sun, 06 Nov 1994 08:49:37 GMT\0",
        ] {
            assert_eq!(p(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn leap_days_and_leap_seconds() {
        assert_eq!(p("Tue, 29 Feb 2000 00:00:00 GMT"), Some(951_782_400));
        assert_eq!(p("Thu, 29 Feb 1900 00:00:00 GMT"), None);
        assert_eq!(
            p("Sat, 31 Dec 2016 23:59:60 GMT"),
            p("Sun, 01 Jan 2017 00:00:00 GMT")
        );
    }
}
