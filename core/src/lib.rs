//! # recuo — careful retries
//!
//! The core decides *and owns the loop*; the caller does the I/O. One sans-IO state machine,
//! [`Operation`], runs every retry loop of every language: it answers each host its next
//! [`Step`] — pass the gate, call, classify, sleep, done, gave up — and is told what
//! happened. Time and randomness are parameters: nothing here reads the clock or a global
//! random generator on its own, so every answer can be reproduced exactly (fixed seeds, fake
//! clocks).
//!
//! Two guides (in Portuguese) are named throughout these docs: **guide A** is
//! [“Como repetir requisições com backoff exponencial (retry)”](https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff),
//! whose retry loop is [`com_retry`]; **guide B** is
//! “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”, whose delay function is
//! [`retry_delay_ms`] and whose batch of 600 requests is what [`plan`](mod@plan), the shared
//! limits and [`Batch`] are for.
//!
//! * [`operation`] — the operation machine: the order of the steps, the gate's feedback, the
//!   retry budget, the stats, the records and the report; [`drive`](mod@drive) — the loop that runs it
//!   for a blocking host ([`Driver`] holds the effects); [`run`] — Rust's own blocking runner
//!   ([`Retry`], [`retry`]): sleeps, deadline, cancellation, hooks, nested loops.
//! * [`attempts`] — the decision inside the machine: attempt limits, deadline, backoff draws,
//!   give-up reasons, and the [`Report`].
//! * [`backoff`] — exponential windows and jitter; [`retry_after`] — `Retry-After` as seconds
//!   or HTTP-date; [`server_wait`](mod@server_wait) — the server's minimum wait from
//!   `Retry-After` and rate-limit headers.
//! * [`classify`] — outcomes → verdicts, idempotency; [`http`] — the HTTP request rules
//!   every adapter shares.
//! * [`guide`] — the two guides' functions: [`com_retry`] and [`retry_delay_ms`].
//! * [`policy`] — the policy and its validation.
//! * [`regulator`], [`limit`], [`budget`], [`gate`] — the shared limits, local, in a shared
//!   file or remote (Redis, through the `recuo-redis` crate); [`plan`](mod@plan) — the
//!   planning arithmetic; [`queue`], [`batch`] and [`stats`] — a queue of operations through
//!   one policy and gate, and what it did.
//! * [`journal`] and [`record`] — the operation's typed records, credentials redacted
//!   ([`redact`]).
//! * [`units`] — checked conversions from the caller's numbers (seconds as floats).
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod attempts;
pub mod backoff;
pub mod batch;
pub mod budget;
pub mod classify;
pub mod clock;
pub mod curl;
pub mod drive;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod gate;
pub mod guide;
pub mod headers;
pub mod http;
mod http_date;
pub mod idempotency;
pub mod journal;
pub mod limit;
#[cfg_attr(not(unix), path = "limit_file_unsupported.rs")]
mod limit_file;
pub mod names;
pub mod operation;
pub mod origin;
pub mod plan;
pub mod policy;
pub mod policy_value;
pub mod pool;
pub mod queue;
pub mod rate;
pub mod record;
pub mod redact;
pub mod regulator;
pub mod retry_after;
pub mod rng;
pub mod run;
pub mod server_wait;
mod shm;
pub mod stats;
mod structured;
pub mod telemetry;
#[cfg(feature = "tracing")]
mod tracing_spans;
pub mod units;

pub use attempts::{Attempts, Decision, GiveUpReason, Report, RetryAllowance};
pub use backoff::{window_ms, Backoff, Jitter};
pub use batch::{Batch, BatchReport, BatchResult};
pub use budget::{BudgetError, RemoteBudget, RetryBudget};
pub use classify::{
    Cause, MethodSet, Outcome, Request, RetryRule, Rules, StatusSet, Transport, TransportSet,
    Verdict,
};
pub use clock::{
    coarse_monotonic_ms, monotonic_ms, monotonic_ns, unix_now_ms, wait_ms_from_ns, CancelToken,
    Clock, ManualClock, SystemClock,
};
#[cfg(not(unix))]
pub use clock::{set_host_clocks, HostClocks};
pub use curl::curl_transport;
pub use drive::{
    drive, drive_from, AttemptContext, Driver, First, Notes, RetryError, Stopped, Told,
};
pub use error::ConfigError;
pub use gate::{Gate, GatePoll, Pass, GATE_POLL_MS};
pub use guide::{com_retry, retry_delay_ms, ComRetry, GUIDE_B_BASE_MS, GUIDE_B_CAP_MS};
pub use headers::header;
pub use http_date::parse_http_date;
pub use idempotency::IdempotencyKey;
pub use journal::{Level, RequestLine, Seen};
pub use limit::{ConcurrencyLimit, LimitError, Permit, RemoteLease, RemoteLimit, RemotePlace};
pub use names::{one_of, Named};
pub use operation::{Operation, Step};
pub use origin::{who_answered, Confidence, Origin, WhoAnswered};
pub use plan::{plan, Plan, PlanError};
pub use policy::{Policy, PolicyBuilder};
pub use policy_value::PolicyValue;
pub use pool::{AttemptPool, LoopPool};
pub use queue::{
    BatchEnd, BatchProgress, BatchQueue, BatchReportValue, BatchResultValue, BatchStatus, Next,
};
pub use rate::{Rate, RateError};
pub use record::{
    attempt_reason, AttemptDecision, AttemptReason, AttemptRecord, FinalRecord, Record, RecordSink,
};
pub use redact::{redact_headers, redact_url, RedactedUrl};
pub use regulator::{adapted_interval_ns, Regulator, RegulatorError, RemoteGcra, Reservation};
pub use retry_after::{
    parse_retry_after, RetryAfter, RetryAfterKind, RetryAfterValue, MAX_SAFE_MS,
};
pub use rng::{JitterRng, LazyJitterRng};
pub use run::{retry, Retry};
pub use server_wait::{quota_spent, server_wait, ServerWait};
pub use shm::SharedError;
pub use stats::{Stats, StatsRecorder};

/// The README's Rust example, compiled and run by `cargo test` so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;

/// The Rust examples of `docs/`, compiled and run by `cargo test`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/policy.md")]
pub struct PolicyDocExamples;

/// The Rust example of `docs/limits.md`, compiled and run by `cargo test`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/limits.md")]
pub struct LimitsDocExamples;

/// The version of this crate, which every binding reports as its own.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
