//! Rates such as `90/min`, `1.5/s` or `5000/h`.

use std::fmt;
use std::str::FromStr;

/// A rate of events per second: finite and above zero.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Rate(f64);

/// Why a rate was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateError(String);

impl fmt::Display for RateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RateError {}

impl RateError {
    /// The stable code every binding reports (C: `100 +` it).
    pub const fn code(&self) -> u32 {
        50
    }

    /// The stable name: `invalid_rate`.
    pub const fn name(&self) -> &'static str {
        "invalid_rate"
    }
}

impl Rate {
    /// `per_second` events per second.
    ///
    /// # Errors
    /// When the number is not finite or not above zero (rates ≤ 0 are refused).
    pub fn per_second(per_second: f64) -> Result<Self, RateError> {
        if per_second.is_finite() && per_second > 0.0 {
            Ok(Rate(per_second))
        } else {
            Err(RateError(format!(
                "a rate must be a finite number above zero, not {per_second}"
            )))
        }
    }

    /// `n` events per minute.
    ///
    /// # Errors
    /// As [`Rate::per_second`].
    pub fn per_minute(n: f64) -> Result<Self, RateError> {
        Self::per_second(n / 60.0)
    }

    /// The rate of one event every `ns` nanoseconds (`ns` of 0 counts as 1).
    pub(crate) fn from_interval_ns(ns: u64) -> Self {
        Rate(1e9 / ns.max(1) as f64)
    }

    /// Events per second.
    pub const fn as_per_second(self) -> f64 {
        self.0
    }

    /// Events per minute.
    pub fn as_per_minute(self) -> f64 {
        self.0 * 60.0
    }

    /// The time between two events, in nanoseconds (at least 1).
    pub fn interval_ns(self) -> u64 {
        let ns = (1e9 / self.0).round();
        if ns >= u64::MAX as f64 {
            u64::MAX
        } else {
            (ns as u64).max(1)
        }
    }
}

impl FromStr for Rate {
    type Err = RateError;

    /// `N/unit` with N a positive decimal number and unit one of `s`, `sec`, `second`, `m`,
    /// `min`, `minute`, `h`, `hour`, `d`, `day` (case-insensitive); a bare number is per
    /// second.
    fn from_str(text: &str) -> Result<Self, RateError> {
        let bad = || {
            RateError(format!(
                "{text:?} is not a rate: write it as N/s, N/min, N/h or N/day, with N above zero"
            ))
        };
        let (number, unit) = match text.trim().split_once('/') {
            Some((n, u)) => (n.trim(), u.trim()),
            None => (text.trim(), "s"),
        };
        let seconds = match unit.to_ascii_lowercase().as_str() {
            "s" | "sec" | "second" => 1.0,
            "m" | "min" | "minute" => 60.0,
            "h" | "hour" => 3600.0,
            "d" | "day" => 86_400.0,
            _ => return Err(bad()),
        };
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return Err(bad());
        }
        let n: f64 = number.parse().map_err(|_| bad())?;
        Rate::per_second(n / seconds).map_err(|_| bad())
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per_min = self.as_per_minute();
        if (per_min - per_min.round()).abs() < 1e-9 && self.0 < 1000.0 {
            write!(f, "{}/min", per_min.round())
        } else {
            write!(f, "{}/s", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_forms() {
        let r = |s: &str| s.parse::<Rate>().unwrap().as_per_second();
        assert_eq!(r("120/min"), 2.0);
        assert_eq!(r("2/s"), 2.0);
        assert_eq!(r("1.5/s"), 1.5);
        assert_eq!(r("5000/h"), 5000.0 / 3600.0);
        assert_eq!(r(" 90 / MIN "), 1.5);
        assert_eq!(r("86400/day"), 1.0);
        assert_eq!(r("3"), 3.0);
    }

    #[test]
    fn refuses_what_is_not_a_rate() {
        for bad in [
            "",
            "0/min",
            "-5/s",
            "abc",
            "5/fortnight",
            "1e3/s",
            "/s",
            "NaN/s",
            "inf/s",
            "5/",
        ] {
            assert!(bad.parse::<Rate>().is_err(), "{bad:?}");
        }
        assert!(Rate::per_second(0.0).is_err());
        assert!(Rate::per_second(f64::NAN).is_err());
        assert!(Rate::per_second(f64::INFINITY).is_err());
    }

    #[test]
    fn intervals() {
        assert_eq!("90/min".parse::<Rate>().unwrap().interval_ns(), 666_666_667);
        assert_eq!("2/s".parse::<Rate>().unwrap().interval_ns(), 500_000_000);
        assert_eq!(Rate::per_second(1e-12).unwrap().interval_ns(), u64::MAX);
        assert_eq!(Rate::per_second(1e12).unwrap().interval_ns(), 1);
    }

    #[test]
    fn display() {
        assert_eq!("90/min".parse::<Rate>().unwrap().to_string(), "90/min");
        assert_eq!("1.5/s".parse::<Rate>().unwrap().to_string(), "90/min");
        assert_eq!("5000/s".parse::<Rate>().unwrap().to_string(), "5000/s");
    }
}
