use std::fmt;

/// Why a configuration (attempts, durations) was refused.
///
/// Every binding maps these to its own error: a status code in C, `ValueError` in Python
/// and PHP. The [`code`](ConfigError::code) is stable across releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The number of attempts was below 1.
    ZeroAttempts,
    /// A duration was negative.
    NegativeDuration,
    /// A duration was NaN.
    NotANumber,
    /// A duration was infinite or too large to count in milliseconds.
    DurationTooLarge,
    /// The cap (maximum window) was below the base.
    CapBelowBase {
        /// The base, in milliseconds.
        base_ms: u64,
        /// The cap, in milliseconds.
        cap_ms: u64,
    },
    /// A header name was empty or not an HTTP token.
    EmptyHeaderName,
    /// A status a rule was configured for is outside 400–599.
    StatusOutOfRange {
        /// The status given.
        status: u32,
    },
    /// A name in a policy's plain form (a jitter, a retry rule, a transport failure, a
    /// method or a status) that recuo does not know.
    UnknownName {
        /// What the name was meant to be: `"jitter"`, `"retry rule"`, `"transport"`,
        /// `"method"` or `"status"`.
        what: &'static str,
    },
    /// A policy's plain form that is not an object of the known fields with the right
    /// types (an unknown field, a string for a number, a negative count). Raised by the
    /// bindings when their data cannot be read as a [`crate::PolicyValue`].
    InvalidValue,
}

impl ConfigError {
    /// A stable number for this error, shared by every binding (C status codes are
    /// `100 + code`).
    pub const fn code(&self) -> u32 {
        match self {
            ConfigError::ZeroAttempts => 1,
            ConfigError::NegativeDuration => 2,
            ConfigError::NotANumber => 3,
            ConfigError::DurationTooLarge => 4,
            ConfigError::CapBelowBase { .. } => 5,
            ConfigError::EmptyHeaderName => 6,
            ConfigError::StatusOutOfRange { .. } => 7,
            ConfigError::UnknownName { .. } => 8,
            ConfigError::InvalidValue => 9,
        }
    }

    /// A stable lower-case name for this error (`"zero_attempts"`, …).
    pub const fn name(&self) -> &'static str {
        match self {
            ConfigError::ZeroAttempts => "zero_attempts",
            ConfigError::NegativeDuration => "negative_duration",
            ConfigError::NotANumber => "not_a_number",
            ConfigError::DurationTooLarge => "duration_too_large",
            ConfigError::CapBelowBase { .. } => "cap_below_base",
            ConfigError::EmptyHeaderName => "invalid_header_name",
            ConfigError::StatusOutOfRange { .. } => "status_out_of_range",
            ConfigError::UnknownName { .. } => "unknown_name",
            ConfigError::InvalidValue => "invalid_value",
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::ZeroAttempts => f.write_str("attempts must be at least 1"),
            ConfigError::NegativeDuration => f.write_str("a duration must not be negative"),
            ConfigError::NotANumber => f.write_str("a duration must be a number, not NaN"),
            ConfigError::DurationTooLarge => {
                f.write_str("a duration must be finite and at most u64::MAX milliseconds")
            }
            ConfigError::CapBelowBase { base_ms, cap_ms } => write!(
                f,
                "the maximum ({cap_ms} ms) must not be below the base ({base_ms} ms)"
            ),
            ConfigError::EmptyHeaderName => {
                f.write_str("a header name must be a non-empty HTTP token")
            }
            ConfigError::StatusOutOfRange { status } => write!(
                f,
                "a retry rule can be set for statuses 400 to 599, not {status}"
            ),
            ConfigError::UnknownName { what } => write!(f, "unknown {what} name"),
            ConfigError::InvalidValue => f.write_str(
                "not a policy value: an object of the known fields with the right types",
            ),
        }
    }
}

impl std::error::Error for ConfigError {}
