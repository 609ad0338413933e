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
    if seconds.is_nan() {
        return Err(ConfigError::NotANumber);
    }
    if seconds < 0.0 {
        return Err(ConfigError::NegativeDuration);
    }
    let ms = (seconds * 1000.0).round();
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
