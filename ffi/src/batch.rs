//! How each operation of a batch ended, as C reads it (`recuo_batch_result`), whichever
//! runs the batch: `recuo_batch_run` (batch_run.rs) or a host stepping `recuo_batch_queue`.

use recuo::{BatchEnd, BatchProgress, BatchStatus};

use crate::prelude::*;

/// How one operation of a batch ended.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_batch_result_kind {
    /// An attempt succeeded.
    RECUO_BATCH_SUCCEEDED = 1,
    /// The operation gave up: `reason` says why.
    RECUO_BATCH_GAVE_UP = 2,
    /// The operation was never started (no attempt was made — never one started late):
    /// `reason` says why.
    RECUO_BATCH_NOT_STARTED = 3,
}

c_enum!(recuo_batch_result_kind: BatchStatus {
    RECUO_BATCH_SUCCEEDED = [BatchStatus::Succeeded] => c"succeeded",
    RECUO_BATCH_GAVE_UP = [BatchStatus::GaveUp] => c"gave_up",
    RECUO_BATCH_NOT_STARTED = [BatchStatus::NotStarted] => c"not_started",
});

/// What became of one operation of a batch: a plain struct `recuo_batch_run` fills in, one
/// per operation, in the order of the indexes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_batch_result {
    /// A `recuo_batch_result_kind` constant.
    pub kind: recuo_batch_result_kind,
    /// For `RECUO_BATCH_GAVE_UP`: why (`permanent`, `attempts_exhausted`,
    /// `wait_exceeds_deadline` — also when the batch's deadline left no time for the wait —
    /// `budget_exhausted`, `queue_stopped`); for `RECUO_BATCH_NOT_STARTED`: why it was not
    /// started (`wait_exceeds_deadline`: the batch's deadline passed; `queue_stopped`: the
    /// queue stopped, see `stopped_by`; `cancelled`); else `RECUO_GIVE_UP_NONE`.
    pub reason: recuo_give_up_reason,
    /// The attempts made (0 for `RECUO_BATCH_NOT_STARTED`).
    pub attempts: u32,
    /// Whether the operation's last attempt returned without a valid verdict (then it gave
    /// up as `permanent`, and `recuo_batch_run` answers `RECUO_ERR_NO_VERDICT`).
    pub no_verdict: bool,
    /// Whether the operation's gate could not be used — a Redis limit, regulator or budget
    /// whose server is out of reach (then it gave up with no attempt, and `recuo_batch_run`
    /// answers `RECUO_ERR_IO`).
    pub gate_error: bool,
    /// For a reason `RECUO_GIVE_UP_QUEUE_STOPPED`: the reason that stopped the queue (another
    /// operation's `wait_exceeds_deadline`); else `RECUO_GIVE_UP_NONE`.
    pub stopped_by: recuo_give_up_reason,
}

impl recuo_batch_result {
    /// The C form of an operation that ended as `end` after `attempts` attempts.
    pub(crate) fn of(end: BatchEnd, attempts: u32, no_verdict: bool, gate_error: bool) -> Self {
        recuo_batch_result {
            kind: recuo_batch_result_kind::from_core(end.status()),
            reason: recuo_give_up_reason::from_core(end.reason()),
            attempts,
            no_verdict,
            gate_error,
            stopped_by: recuo_give_up_reason::from_core(end.stopped_by()),
        }
    }
}

/// How far a batch has come: what `recuo_batch_run`'s progress callback is given, and what
/// `recuo_batch_queue_ended` answers, each time an operation ends. `done` goes up by one at
/// each call, and `done == succeeded + failed + not_started`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct recuo_batch_progress {
    /// Operations in the batch.
    pub total: u64,
    /// Operations ended, whichever way.
    pub done: u64,
    /// Operations that succeeded.
    pub succeeded: u64,
    /// Operations that gave up after at least one attempt.
    pub failed: u64,
    /// Operations never started (the batch's deadline came first, or the batch stopped).
    pub not_started: u64,
    /// Retries started so far, by every operation of the batch.
    pub retries: u64,
}

impl recuo_batch_progress {
    /// The core's progress, field for field (a field added to the core's value is a compile
    /// error here until C has it too).
    pub(crate) const fn from_core(p: BatchProgress) -> Self {
        copied!(recuo_batch_progress {
            total, done, succeeded, failed, not_started, retries
        } from p: BatchProgress)
    }
}

/// How an operation ended, as the core's queue counts it, from a `recuo_batch_result`'s
/// `kind`, `reason` and `stopped_by` as C passed them; `None` unless each is a constant (and
/// a give-up or an operation not started has a reason).
pub(crate) fn batch_end(kind: u32, reason: u32, stopped_by: u32) -> Option<recuo::BatchEnd> {
    recuo::BatchEnd::from_parts(
        recuo_batch_result_kind::from_code(kind)?.to_core(),
        recuo_give_up_reason::core_of(reason).ok()?,
        recuo_give_up_reason::core_of(stopped_by).ok()?,
    )
}

/// The name of the `recuo_batch_result_kind` constant `kind` (`"succeeded"`, `"gave_up"`,
/// `"not_started"`), or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_batch_result_kind_name(kind: u32) -> *const c_char {
    recuo_batch_result_kind::name_of(kind)
}
