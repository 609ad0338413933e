//! Checked conversions from the numbers callers hand us to the milliseconds the core counts in.
//!
//! Bindings take durations as floats (Python seconds) or signed integers (PHP, C); these
//! functions are the one place that decides which of those are acceptable.

use crate::ConfigError;

/// Milliseconds from a duration in seconds given as a float, rounded to the nearest
/// millisecond.
///
/// # Errors
/// [`ConfigError::NotANumber`] for NaN, [`ConfigError::NegativeDuration`] below zero
/// (`-0.0` is zero), [`ConfigError::DurationTooLarge`] for infinity or more than
/// `u64::MAX` milliseconds.
pub fn ms_from_secs_f64(seconds: f64) -> Result<u64, ConfigError> {
    /// 2^52: every f64 below it has at most one bit below the units place.
    const EXACT: f64 = 4_503_599_627_370_496.0;
    if seconds.is_nan() {
        return Err(ConfigError::NotANumber);
    }
    if seconds < 0.0 {
        return Err(ConfigError::NegativeDuration);
    }
    let ms = seconds * 1000.0;
    if ms < EXACT {
        // Below 2^52 the whole part converts exactly and the rest is exact: rounding half
        // away from zero without a call to libm's `round` (every `com_retry` call converts two).
        // Through i64, which x86-64 converts in one instruction each way (u64 takes several).
        let whole = ms as i64;
        return Ok(whole.unsigned_abs() + u64::from(ms - whole as f64 >= 0.5));
    }
    let ms = ms.round();
    // u64::MAX as f64 rounds up to 2^64, so `>=` rejects exactly what does not fit.
    if !ms.is_finite() || ms >= u64::MAX as f64 {
        return Err(ConfigError::DurationTooLarge);
    }
    Ok(ms as u64)
}

/// Milliseconds from a signed integer count of milliseconds.
///
/// # Errors
/// [`ConfigError::NegativeDuration`] below zero.
pub fn ms_from_i64(ms: i64) -> Result<u64, ConfigError> {
    u64::try_from(ms).map_err(|_| ConfigError::NegativeDuration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_become_rounded_milliseconds() {
        assert_eq!(ms_from_secs_f64(0.2), Ok(200));
        assert_eq!(ms_from_secs_f64(5.0), Ok(5000));
        assert_eq!(ms_from_secs_f64(0.0004), Ok(0));
        assert_eq!(ms_from_secs_f64(0.0005), Ok(1));
        assert_eq!(ms_from_secs_f64(-0.0), Ok(0));
    }

    #[test]
    fn rounding_is_halves_away_from_zero_on_both_sides_of_2_pow_52() {
        let below = 4_503_599_627_370_496.0 / 1000.0;
        let mut values = vec![
            0.0005,
            0.0015,
            0.0025,
            1.2345,
            2.5e-3,
            0.1 + 0.2,
            below,
            below * 2.0,
        ];
        values.extend((0..2000).map(|i| f64::from(i) * 0.000_25));
        values.extend((0..64).map(|i| below - f64::from(i) * 1e-3));
        for seconds in values {
            let expected = (seconds * 1000.0).round() as u64;
            assert_eq!(ms_from_secs_f64(seconds), Ok(expected), "{seconds}");
        }
    }

    #[test]
    fn bad_seconds_are_refused() {
        assert_eq!(ms_from_secs_f64(f64::NAN), Err(ConfigError::NotANumber));
        assert_eq!(ms_from_secs_f64(-0.001), Err(ConfigError::NegativeDuration));
        assert_eq!(
            ms_from_secs_f64(f64::NEG_INFINITY),
            Err(ConfigError::NegativeDuration)
        );
        assert_eq!(
            ms_from_secs_f64(f64::INFINITY),
            Err(ConfigError::DurationTooLarge)
        );
        assert_eq!(ms_from_secs_f64(1e17), Err(ConfigError::DurationTooLarge));
    }

    #[test]
    fn integer_milliseconds() {
        assert_eq!(ms_from_i64(200), Ok(200));
        assert_eq!(ms_from_i64(0), Ok(0));
        assert_eq!(ms_from_i64(-1), Err(ConfigError::NegativeDuration));
        assert_eq!(ms_from_i64(i64::MAX), Ok(i64::MAX as u64));
    }
}
