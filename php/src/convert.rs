//! Conversions from PHP arguments to the core's numbers. Validation of durations is the
//! core's ([`recuo::units`]); this module only says which argument was at fault.

use std::time::{SystemTime, UNIX_EPOCH};

use ext_php_rs::convert::FromZval;
use ext_php_rs::flags::DataType;
use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;

use crate::errors::{config_error, value_error};

/// A PHP `string` argument read as the bytes it holds: PHP strings are byte strings, and a
/// `Retry-After` value that is not UTF-8 is simply invalid, never a `TypeError`.
#[derive(Debug, Clone, Copy)]
pub struct Bytes<'a>(pub &'a [u8]);

impl<'a> FromZval<'a> for Bytes<'a> {
    const TYPE: DataType = DataType::String;

    fn from_zval(zval: &'a Zval) -> Option<Self> {
        zval.zend_str().map(|s| Bytes(s.as_bytes()))
    }
}

/// A retry index (`$attempt`): negative is a `\ValueError`; beyond `u32::MAX` it saturates,
/// which changes no answer because every window has reached its cap long before.
pub fn retry_index(function: &str, position: u32, name: &str, value: i64) -> PhpResult<u32> {
    if value < 0 {
        return Err(value_error(
            function,
            position,
            name,
            "must be greater than or equal to 0",
        ));
    }
    Ok(u32::try_from(value).unwrap_or(u32::MAX))
}

/// A duration in milliseconds, checked by the core (`Recuo\Exception\ConfigError` when
/// negative).
pub fn millis(function: &str, position: u32, name: &str, value: i64) -> PhpResult<u64> {
    recuo::units::ms_from_i64(value).map_err(|e| config_error(function, Some((position, name)), e))
}

/// A jitter seed: any non-negative PHP int.
pub fn seed(function: &str, position: u32, value: Option<i64>) -> PhpResult<Option<u64>> {
    value
        .map(|s| {
            u64::try_from(s).map_err(|_| {
                value_error(
                    function,
                    position,
                    "seed",
                    "must be null or greater than or equal to 0",
                )
            })
        })
        .transpose()
}

/// `$nowMs`, or the system clock (milliseconds since the Unix epoch) when it is null.
pub fn now_ms(value: Option<i64>) -> i64 {
    value.unwrap_or_else(|| match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    })
}

/// A count of milliseconds as a PHP int (saturating; the core's delays never get there).
pub fn php_int(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}
