//! The blocking waits of recuo's Python face: the GIL released, in slices of at most
//! [`SLEEP_SLICE`] with Python's signal handlers run between them, so Ctrl-C ends a wait
//! promptly; a cancel token, when given, ends it at once.

use std::time::{Duration, Instant};

use pyo3::prelude::*;

use recuo::CancelToken;

/// The longest a blocking wait goes without looking for a signal (Ctrl-C).
pub(crate) const SLEEP_SLICE: Duration = Duration::from_millis(50);

/// Sleeps `delay` with the GIL released, in slices of at most [`SLEEP_SLICE`], running
/// Python's signal handlers between slices: Ctrl-C raises `KeyboardInterrupt` promptly.
/// With a `cancel` token, cancelling it ends the sleep at once: answers `true` then.
pub(crate) fn interruptible_sleep(
    py: Python<'_>,
    delay: Duration,
    cancel: Option<&CancelToken>,
) -> PyResult<bool> {
    let mut remaining = delay;
    while !remaining.is_zero() {
        let slice = remaining.min(SLEEP_SLICE);
        let started = Instant::now();
        let cancelled = py.detach(|| match cancel {
            Some(token) => token.sleep(slice),
            None => {
                std::thread::sleep(slice);
                false
            }
        });
        if cancelled {
            return Ok(true);
        }
        py.check_signals()?;
        remaining = remaining.saturating_sub(started.elapsed());
    }
    Ok(false)
}
