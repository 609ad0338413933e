//! The wall clock, read at the edge (the core never reads a clock itself).

use std::time::{SystemTime, UNIX_EPOCH};

use crate::panic::boundary;

/// The system clock now, in milliseconds since the Unix epoch: the `now_ms` the Retry-After
/// functions expect when the response carries no `Date` header.
///
/// Negative before 1970; saturates at the ends of `int64_t`. 0 only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_now_ms() -> i64 {
    boundary(|| match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_after_this_code_was_written() {
        // 2026-01-01T00:00:00Z
        assert!(recuo_now_ms() > 1_767_225_600_000);
    }
}
