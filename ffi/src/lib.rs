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

// The boundary and pointer checks every shim uses, and the C enums' conversions.
mod cenum;
pub mod panic;
mod ptr;

// The modules in the order the header presents them (cbindgen follows this order).
pub mod version;

pub mod status;

pub mod clock;

pub mod retry_after;

pub mod backoff;

pub mod com_retry;

pub mod policy;

pub mod classify;

pub mod attempts;

pub mod retry;

// The shared limits (SPEC §8, §9): rates and the planner, the regulator, the concurrency
// limit, the retry budget, the gate every attempt passes, and the batch runner.
pub mod plan;

pub mod regulator;

pub mod limit;

pub mod budget;

pub mod gate;

pub mod batch;
