//! # recuo — careful retries
//!
//! The core decides; the caller does. Every function here is a decision: how long to wait,
//! what a `Retry-After` header means. Time and randomness are parameters: nothing in this
//! crate reads the clock or a global random generator on its own, so every answer can be
//! reproduced exactly (fixed seeds, fake clocks).
//!
//! * [`backoff`] — exponential windows and jitter (SPEC §2).
//! * [`retry_after`] — `Retry-After` as seconds or HTTP-date (SPEC §3).
//! * [`guide`] — the two guides' functions: [`com_retry`] and [`retry_delay_ms`].
//! * [`units`] — checked conversions from the caller's numbers (seconds as floats).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod backoff;
mod error;
pub mod guide;
mod http_date;
pub mod retry_after;
pub mod rng;
pub mod units;

pub use backoff::{window_ms, Backoff, Jitter};
pub use error::ConfigError;
pub use guide::{com_retry, retry_delay_ms, ComRetry, GUIDE_B_BASE_MS, GUIDE_B_CAP_MS};
pub use http_date::parse_http_date;
pub use retry_after::{parse_retry_after, RetryAfter, MAX_SAFE_MS};
pub use rng::{JitterRng, LazyJitterRng};

/// The README's Rust example, compiled and run by `cargo test` so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;

/// The version of this crate, which every binding reports as its own.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
