//! The baselines the core's costs are measured against, shared by the criterion benches
//! (`benches/decide.rs`, `benches/retry_after.rs`) and the `instructions` binary that
//! `make bench-profile` runs under callgrind.

use rand::Rng;
use recuo::JitterRng;

/// Guide B's policy, as the hand-rolled decision spells it out.
pub const BASE_MS: u64 = 1000;
/// The cap of the backoff window.
pub const CAP_MS: u64 = 8000;
/// Attempts in all.
pub const MAX_ATTEMPTS: u32 = 5;
/// The deadline, from the start of the first attempt.
pub const DEADLINE_MS: u64 = 30_000;
/// The cap of the spread added to a server's wait.
pub const SPREAD_CAP_MS: u64 = 1000;
/// The attempt that failed started at 0 and the decision is taken here (ms).
pub const NOW_MS: u64 = 2_000;

/// The hand-rolled decision after attempt `n` failed: the delay, or `None` to give up.
///
/// The least code that decides what `Attempts::decide` decides under guide B's policy —
/// attempts left, the window `min(cap, base · 2^n)`, the jitter draw (or the server's wait
/// plus a spread), the deadline check — inline, with the same generator, and no bookkeeping.
#[inline]
pub fn hand_rolled(n: u32, server_wait_ms: Option<u64>, rng: &mut JitterRng) -> Option<u64> {
    if n + 1 >= MAX_ATTEMPTS {
        return None;
    }
    let window = BASE_MS
        .saturating_mul(1u64.checked_shl(n).unwrap_or(u64::MAX))
        .min(CAP_MS);
    let delay = match server_wait_ms {
        Some(wait) => wait + rng.random_range(0..=window.min(SPREAD_CAP_MS)),
        None => rng.random_range(0..=window),
    };
    (NOW_MS + delay <= DEADLINE_MS).then_some(delay)
}

/// Delta-seconds the way a caller writes it with the standard library: spaces and tabs
/// trimmed, `str::parse::<u64>`, times 1000.
#[inline]
pub fn std_seconds_ms(value: &str) -> Option<u64> {
    let secs: u64 = value.trim_matches([' ', '\t']).parse().ok()?;
    Some(secs.saturating_mul(1000))
}
