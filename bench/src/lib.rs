//! Benchmarks of recuo beside the libraries users would pick instead: see `benches/` (the
//! criterion benches), `python/`, `php/` and `report/`, all run by `make bench`.
//!
//! The library holds what the `schedules` binary runs: [`sim`], batches against a simulated
//! rate-limited server in virtual time; and [`peers`], the baselines of the core's benches.

pub mod peers;
pub mod sim;

/// Which side of a comparison a benchmark measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// recuo.
    Recuo,
    /// The peer or baseline it is compared with.
    Peer,
}

/// The order in which a criterion group runs its two sides: recuo first, unless
/// `RECUO_BENCH_PEER_FIRST=1` (bench/report/criterion_rounds.py sets it every other round,
/// so that a load that comes and goes on a shared machine favours neither side).
pub fn sides() -> [Side; 2] {
    if std::env::var("RECUO_BENCH_PEER_FIRST").is_ok_and(|v| v == "1") {
        [Side::Peer, Side::Recuo]
    } else {
        [Side::Recuo, Side::Peer]
    }
}
