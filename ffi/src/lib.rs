//! # recuo's C ABI
//!
//! `librecuo.so` / `librecuo.a` and the header `include/recuo.h`, generated from this crate by
//! cbindgen (run `make header` after changing anything public here; a test fails when the
//! committed header drifts).
//!
//! Every `extern "C"` function is a shim (STYLE.md habit 1): a panic boundary
//! ([`panic::boundary`]), NULL-checked pointer conversion, one call into the core crate
//! `recuo`, and the error mapped to [`recuo_status`](status::recuo_status). No retry rule lives
//! here: if C needs a new decision, it goes into `core/` first.
//!
//! The C conventions are written down once, in the header's preamble (`ffi/cbindgen.toml`).
#![deny(missing_docs)]
// The names are the C names: `recuo_status`, `RECUO_OK`, `recuo_com_retry_options`.
#![allow(non_camel_case_types)]
// The C functions take what C passes them, one argument each (a buffer and its length, an
// output): their signatures are the header's, not a Rust design.
#![allow(clippy::too_many_arguments)]

// The boundary and pointer checks every shim uses, and the C enums' conversions.
mod cenum;
pub mod panic;
mod ptr;

/// What the modules of shims share, imported once: the C types, the panic boundary, the
/// pointer checks, the statuses, the enum and mirror tables, text written to a C buffer.
mod prelude {
    // What only the blocking functions use is unused in the WebAssembly build.
    #![cfg_attr(target_family = "wasm", allow(unused_imports))]

    pub(crate) use std::ffi::{c_char, c_void};

    pub(crate) use crate::cenum::{c_enum, copied, mirror};
    pub(crate) use crate::panic::{boundary, checked};
    pub(crate) use crate::ptr;
    pub(crate) use crate::status::recuo_status::{self, *};

    // The types and readers the shims hand one another.
    pub(crate) use crate::attempts::{read_verdict, recuo_attempts, recuo_give_up_reason};
    pub(crate) use crate::attempts::{recuo_level, recuo_report, RECUO_IDEMPOTENCY_KEY_SIZE};
    pub(crate) use crate::batch::{recuo_batch_progress, recuo_batch_result};
    pub(crate) use crate::budget::recuo_retry_budget;
    pub(crate) use crate::cancel::{cancel_token, recuo_cancel_token};
    pub(crate) use crate::classify::{read_headers, read_response, recuo_cause, recuo_header};
    pub(crate) use crate::classify::{recuo_outcome, recuo_verdict};
    pub(crate) use crate::gate::recuo_gate;
    pub(crate) use crate::limit::recuo_concurrency_limit;
    pub(crate) use crate::plan::rate;
    pub(crate) use crate::policy::recuo_policy;
    pub(crate) use crate::pool::recuo_attempt_pool;
    pub(crate) use crate::redact::lossy;
    pub(crate) use crate::regulator::recuo_regulator;
    pub(crate) use crate::stats::{recuo_stats, recuo_stats_recorder};
    pub(crate) use crate::status::{open_with_detail, write_detail, write_made, write_text};
    pub(crate) use crate::transport::recuo_transport;
}

// The modules in the order the header presents them (cbindgen follows this order).
pub mod version;

pub mod status;

pub mod clock;

pub mod retry_after;

pub mod backoff;

// Blocking (sleeps on the calling thread): not in the WebAssembly build, whose host waits.
#[cfg(not(target_family = "wasm"))]
pub mod com_retry;

pub mod transport;

pub mod policy;

pub mod classify;

pub mod pool;

pub mod attempts;

pub mod http;

pub mod cancel;

#[cfg(not(target_family = "wasm"))]
pub mod attempt_context;

// Blocking (sleeps on the calling thread): not in the WebAssembly build, whose host waits.
#[cfg(not(target_family = "wasm"))]
pub mod retry;

// The shared limits (docs/limits.md): rates and the planner, the regulator, the concurrency
// limit, the retry budget, the gate every attempt passes, and the batch runner.
pub mod plan;

pub mod regulator;

pub mod limit;

pub mod budget;

pub mod gate;

pub mod host;

pub mod batch;

// Starts threads: not in the WebAssembly build.
#[cfg(not(target_family = "wasm"))]
pub mod batch_run;

pub mod batch_queue;

// Records, stats, redaction and who answered (docs/records.md).
pub mod stats;

pub mod redact;

pub mod origin;

pub mod record;

// Telemetry: each record's metric points and span (issue 32).
pub mod telemetry;

// What a host waiting with its own timers needs (the JavaScript package).
pub mod js_support;

// The WebAssembly build's exchange with its JavaScript host (no C program sees it).
#[cfg(target_family = "wasm")]
pub mod wasm;

/// The C status of every core error is `100 +` the core's stable code (an I/O failure,
/// core code 200, is C's 300): one numbering, whatever the language.
#[cfg(test)]
mod code_alignment {
    use recuo::{BudgetError, ConfigError, PlanError, RegulatorError, SharedError};

    use crate::status::recuo_status;

    #[test]
    fn c_statuses_follow_the_core_codes() {
        let plan = [
            PlanError::TargetAboveAllowance {
                target_per_min: 2.0,
                allowance_per_min: 1.0,
            },
            PlanError::BadRetryFraction(1.0),
            PlanError::BadLatency(-1.0),
        ];
        for e in plan {
            let code = e.code();
            assert_eq!(recuo_status::from(e) as u32, 100 + code);
        }
        for e in [
            RegulatorError::ZeroBurst,
            RegulatorError::CostAboveBurst { cost: 2, burst: 1 },
            RegulatorError::ZeroCost,
            RegulatorError::RateTooSlow {
                rate: recuo::Rate::per_second(1e-12).unwrap(),
                burst: 1,
            },
            RegulatorError::QueueFull {
                wait_ns: 2,
                longest_ns: 1,
            },
        ] {
            let code = e.code();
            assert_eq!(recuo_status::from(e) as u32, 100 + code);
        }
        let mismatch = SharedError::Mismatch("x".into());
        assert_eq!(mismatch.code(), 58);
        assert_eq!(recuo_status::from(mismatch) as u32, 158);
        let io = SharedError::Io(std::io::Error::other("x"));
        assert_eq!(recuo_status::from(io) as u32, 100 + 200);
        let budget = BudgetError::Invalid("x".into());
        let code = budget.code();
        assert_eq!(recuo_status::from(budget) as u32, 100 + code);
        assert_eq!(recuo_status::from(ConfigError::ZeroAttempts) as u32, 101);
        assert_eq!(
            crate::status::recuo_status::RECUO_ERR_INVALID_RATE as u32,
            100 + "0/s".parse::<recuo::Rate>().unwrap_err().code()
        );
        assert_eq!(
            crate::status::recuo_status::RECUO_ERR_ZERO_LIMIT as u32,
            100 + recuo::ConcurrencyLimit::ZERO_LIMIT_CODE
        );
    }
}
