//! The one status enum of the C ABI, its messages and its predicates.

use std::ffi::c_char;
use std::fmt;

use recuo::{BudgetError, ConfigError, LimitError, PlanError, RegulatorError, SharedError};

use crate::cenum::c_enum;
use crate::panic::{boundary, checked};

/// The answer of every recuo function that can fail.
///
/// The numbers are stable: a code is never renumbered nor reused, and a retired code stays
/// listed as reserved. They are grouped in ranges, which the `recuo_status_is_*` predicates
/// test so that C code never hard-codes them:
///
/// * `0`: success.
/// * `1`–`99`: an argument was unusable (a NULL pointer, a buffer too small, a length too
///   large, a value that is none of its enum's constants, text that is not UTF-8, a handle in
///   the wrong state, an index past the end).
/// * `100`–`199`: a configuration was refused. `100`–`149`: the code is `100 +` the core's
///   stable configuration-error code, as in Python's and PHP's exceptions; `150`–`199`: the
///   settings of the shared limits (rates, the plan, bursts, limits, budgets, shared files).
/// * `200`–`299`: no fault of the call, but a "no" for an answer, which the other outputs
///   explain: the operation did not succeed (`200`–`209`), or a limit said "not now"
///   (`210`–`219`: `RECUO_WOULD_WAIT`, `RECUO_TIMED_OUT`, `RECUO_CANCELLED`, `RECUO_QUEUE_FULL`,
///   `RECUO_HOST_PENDING`,
///   `RECUO_BUDGET_EXHAUSTED` — their names carry no `ERR`).
/// * `300`–`399`: the system refused (a shared file could not be opened, sized, locked or
///   mapped, or a Redis server could not be used).
/// * `900`–`999`: a bug in recuo (a panic was caught at the boundary).
///
/// `recuo_status_message` describes a code in words, `recuo_status_name` names it.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_status {
    /// Success.
    RECUO_OK = 0,
    /// A pointer that must not be NULL was NULL.
    RECUO_ERR_NULL_ARGUMENT = 1,
    /// The caller's buffer was too small: what fits was written (still NUL-terminated).
    RECUO_ERR_BUFFER_TOO_SMALL = 2,
    /// A length was larger than `PTRDIFF_MAX`, or than the function's own bound
    /// (`RECUO_POLICY_JSON_MAX` for `recuo_policy_from_json`).
    RECUO_ERR_LENGTH_TOO_LARGE = 3,
    /// A value of an enumeration (an argument, or a field of a struct passed in) was none of
    /// its constants.
    RECUO_ERR_INVALID_ENUM = 4,
    /// Text that must be UTF-8 (an HTTP method, a header name to set) was not.
    RECUO_ERR_NOT_UTF8 = 5,
    /// An HTTP method recuo does not know: only GET, HEAD, OPTIONS, TRACE, PUT, DELETE, POST,
    /// PATCH and CONNECT (in any ASCII case) can be configured.
    RECUO_ERR_UNKNOWN_METHOD = 6,
    /// Retired: no function answers it. A rule's status outside 400–599 is
    /// `RECUO_ERR_STATUS_OUT_OF_RANGE`, the name every language gives it. Never reused.
    RECUO_ERR_INVALID_STATUS = 7,
    /// The state machine has already started: the setting must come before
    /// `recuo_attempts_start`.
    RECUO_ERR_ALREADY_STARTED = 8,
    /// The operation given to `recuo_retry` (or to `recuo_batch_run`) returned without
    /// writing a valid verdict (its `verdict` field left 0, or a field holding none of its
    /// constants).
    RECUO_ERR_NO_VERDICT = 9,
    /// An index was past the end (`recuo_plan_warning` for a warning the plan does not have,
    /// `recuo_who_answered_evidence` for an evidence line the answer does not have).
    RECUO_ERR_INDEX_OUT_OF_RANGE = 10,
    /// The operation given to `recuo_retry_http` returned without describing the response
    /// (its `response_out->outcome` left 0, holding none of its constants, or headers NULL
    /// with a count above 0).
    RECUO_ERR_NO_RESPONSE = 11,
    /// A `recuo_stats` passed in was inconsistent: its first start after its last, or counts
    /// whose sum would not fit in a `uint64_t`.
    RECUO_ERR_INVALID_STATS = 12,
    /// A configuration error that this version of the header has no name for.
    RECUO_ERR_INVALID_CONFIG = 100,
    /// The number of attempts was 0 (it must be at least 1).
    RECUO_ERR_ZERO_ATTEMPTS = 101,
    /// A duration was negative.
    RECUO_ERR_NEGATIVE_DURATION = 102,
    /// A duration was NaN.
    RECUO_ERR_NOT_A_NUMBER = 103,
    /// A duration was infinite or too large to count in milliseconds.
    RECUO_ERR_DURATION_TOO_LARGE = 104,
    /// The maximum (cap) was below the base.
    RECUO_ERR_CAP_BELOW_BASE = 105,
    /// A header name was empty or not an HTTP token (RFC 9110 section 5.6.2).
    RECUO_ERR_INVALID_HEADER_NAME = 106,
    /// A retry rule was set for an HTTP status outside 400–599 (a setter, or the
    /// `status_retry` of a policy's JSON).
    RECUO_ERR_STATUS_OUT_OF_RANGE = 107,
    /// A policy's JSON named something recuo does not know: a jitter, a retry rule, a
    /// transport failure, a method, or a status that is not a number.
    RECUO_ERR_UNKNOWN_NAME = 108,
    /// A policy's JSON was not an object of the known fields with the right types (not JSON,
    /// an unknown field, a string for a number, a negative or fractional number, `null` for a
    /// count).
    RECUO_ERR_INVALID_VALUE = 109,
    /// A rate was refused: it must be a finite number of events per second above zero, or
    /// text such as `90/min`, `1.5/s`, `5000/h` or `86400/day` (a bare number is per second).
    RECUO_ERR_INVALID_RATE = 150,
    /// `recuo_plan`: the target rate is above the allowance, so the server would throttle the
    /// batch.
    RECUO_ERR_TARGET_ABOVE_ALLOWANCE = 151,
    /// `recuo_plan`: the retry fraction must be at least 0 and below 1.
    RECUO_ERR_INVALID_RETRY_FRACTION = 152,
    /// `recuo_plan`: the latency must be a finite number of seconds, 0 or more.
    RECUO_ERR_INVALID_LATENCY = 153,
    /// A regulator's burst was 0 (it must be at least 1).
    RECUO_ERR_ZERO_BURST = 154,
    /// A start's cost was above the regulator's burst: it could never be allowed.
    RECUO_ERR_COST_ABOVE_BURST = 155,
    /// A concurrency limit of 0: nothing could ever run.
    RECUO_ERR_ZERO_LIMIT = 156,
    /// A retry budget's settings were refused: the ratio must be 0 to 1000, the floor 0 or
    /// more retries per second, the window 1 to 60 seconds.
    RECUO_ERR_INVALID_BUDGET = 157,
    /// A shared file or Redis key was set up with other settings (another rate or burst,
    /// another budget), or a file holds something else (another kind of recuo state, a file
    /// of the wrong size): processes sharing it would disagree about the allowance.
    RECUO_ERR_SHARED_MISMATCH = 158,
    /// A concurrency limit on Redis was asked for a lease outside 1 ms – 1 day
    /// (`recuo_concurrency_limit_new_redis`).
    RECUO_ERR_INVALID_LEASE = 159,
    /// A regulator was asked for a start of cost 0, which would take nothing.
    RECUO_ERR_ZERO_COST = 160,
    /// The task failed on its last attempt, or the predicate declined to retry its failure;
    /// the task's own failure code is in the `last_error_out` parameter.
    RECUO_ERR_TASK_FAILED = 200,
    /// `recuo_retry` gave up: the operation did not succeed, and the report says why
    /// (`reason`) and what it cost (attempts, elapsed time, delays).
    RECUO_ERR_GAVE_UP = 201,
    /// Not an error: a start may not go now. `RECUO_WOULD_WAIT` from a regulator's
    /// `_try_acquire` comes with the wait needed; from a concurrency limit's `_try_acquire`
    /// it means every place is taken.
    RECUO_WOULD_WAIT = 210,
    /// Not an error: what was waited for did not come within the timeout (nothing was taken).
    RECUO_TIMED_OUT = 211,
    /// Not an error: the cancellation token was cancelled before or during the wait.
    RECUO_CANCELLED = 212,
    /// Not an error: the retry budget has no retry left.
    RECUO_BUDGET_EXHAUSTED = 213,
    /// Not an error: the start would wait beyond the 4096 starts a regulator queues ahead
    /// (`RECUO_MAX_QUEUED_STARTS`); nothing was reserved, ask again later. A regulator never
    /// starts more than its burst plus its rate over any span of time, however many wait.
    RECUO_QUEUE_FULL = 214,
    /// Not an error: a limit kept on a server the host reaches waits on a call the host must
    /// run first (`recuo_host_channel_pending`); answer it, then make the same call again.
    RECUO_HOST_PENDING = 215,
    /// The system refused: a shared file could not be opened, sized, locked or mapped, or a
    /// Redis server could not be reached or used (the detail buffer of the `_new_shared` and
    /// `_new_redis` functions says why).
    RECUO_ERR_IO = 300,
    /// recuo panicked (a bug: please report it); the panic was caught and nothing was
    /// written to the outputs.
    RECUO_ERR_PANIC = 900,
}

crate::panic::fallbacks!(recuo_status => recuo_status::RECUO_ERR_PANIC);

use recuo_status::*;

/// Gives `recuo_status` its `c_enum!` table and `message`, from one row per status: its
/// constant, its stable name and its description — or, for a configuration error the core
/// describes without values, `return Err(the core's error)`, whose message is used.
macro_rules! statuses {
    ($($variant:ident => $name:literal, $message:expr;)+) => {
        c_enum!(recuo_status { $($variant => $name),+ });

        impl recuo_status {
            /// The description of a status, or the configuration error whose message (the
            /// core's) describes it.
            fn message(self) -> Result<&'static str, ConfigError> {
                Ok(match self {
                    $($variant => $message),+
                })
            }
        }
    };
}

// Every status in numeric order, `from_code` (C may pass any integer: it is never transmuted
// into the enum) and the stable lower-case names: `ok`, `null_argument`, …,
// `cap_below_base`, …; configuration errors carry the core's own names. Then each status's
// description (`recuo_status_message`): configuration errors use the core's messages.
statuses! {
    RECUO_OK => c"ok", "success";
    RECUO_ERR_NULL_ARGUMENT => c"null_argument", "a required pointer argument was NULL";
    RECUO_ERR_BUFFER_TOO_SMALL => c"buffer_too_small",
        "the output buffer was too small; the text was truncated";
    RECUO_ERR_LENGTH_TOO_LARGE => c"length_too_large",
        "a length was too large (above PTRDIFF_MAX, or the function's bound)";
    RECUO_ERR_INVALID_ENUM => c"invalid_enum", "an enum value was none of its constants";
    RECUO_ERR_NOT_UTF8 => c"not_utf8", "the text was not valid UTF-8";
    RECUO_ERR_UNKNOWN_METHOD => c"unknown_method", "the HTTP method is not one recuo knows";
    RECUO_ERR_INVALID_STATUS => c"invalid_status", "a status code was refused (retired)";
    RECUO_ERR_ALREADY_STARTED => c"already_started", "the operation has already begun an attempt";
    RECUO_ERR_NO_VERDICT => c"no_verdict", "the operation returned without writing a valid verdict";
    RECUO_ERR_INDEX_OUT_OF_RANGE => c"index_out_of_range", "an index was past the end";
    RECUO_ERR_NO_RESPONSE => c"no_response",
        "the operation returned without describing the response";
    RECUO_ERR_INVALID_STATS => c"invalid_stats",
        "the stats were inconsistent: a first start after the last, or counts too large";
    RECUO_ERR_INVALID_CONFIG => c"invalid_config", "the configuration was refused";
    RECUO_ERR_ZERO_ATTEMPTS => c"zero_attempts", return Err(ConfigError::ZeroAttempts);
    RECUO_ERR_NEGATIVE_DURATION => c"negative_duration", return Err(ConfigError::NegativeDuration);
    RECUO_ERR_NOT_A_NUMBER => c"not_a_number", return Err(ConfigError::NotANumber);
    RECUO_ERR_DURATION_TOO_LARGE => c"duration_too_large",
        return Err(ConfigError::DurationTooLarge);
    // The core's message names the two values, which a bare code no longer has.
    RECUO_ERR_CAP_BELOW_BASE => c"cap_below_base", "the maximum must not be below the base";
    RECUO_ERR_INVALID_HEADER_NAME => c"invalid_header_name",
        return Err(ConfigError::EmptyHeaderName);
    RECUO_ERR_STATUS_OUT_OF_RANGE => c"status_out_of_range",
        "a retry rule can be set for statuses 400 to 599 only";
    // The core's message names what the name was meant to be, which a bare code has
    // not.
    RECUO_ERR_UNKNOWN_NAME => c"unknown_name",
        "a jitter, retry rule, transport failure, method or status recuo does not know";
    RECUO_ERR_INVALID_VALUE => c"invalid_value", return Err(ConfigError::InvalidValue);
    RECUO_ERR_INVALID_RATE => c"invalid_rate",
        "a rate must be above zero, finite and countable by a regulator, written as \
         N/s, N/min, N/h or N/day";
    RECUO_ERR_TARGET_ABOVE_ALLOWANCE => c"target_above_allowance",
        "the target is above the allowance: the server would throttle the batch; \
         aim at or below the allowance";
    RECUO_ERR_INVALID_RETRY_FRACTION => c"invalid_retry_fraction",
        "the retry fraction must be at least 0 and below 1";
    RECUO_ERR_INVALID_LATENCY => c"invalid_latency",
        "the latency must be a finite number of seconds, 0 or more";
    RECUO_ERR_ZERO_BURST => c"zero_burst", "the burst must be at least 1";
    RECUO_ERR_COST_ABOVE_BURST => c"cost_above_burst",
        "a start whose cost is above the burst could never go";
    RECUO_ERR_ZERO_LIMIT => c"zero_limit", "a concurrency limit must be at least 1";
    RECUO_ERR_INVALID_BUDGET => c"invalid_budget",
        "a retry budget needs a ratio of 0 to 1000, a floor of 0 or more per second \
         and a window of 1 to 60 s";
    RECUO_ERR_SHARED_MISMATCH => c"shared_mismatch",
        "the shared file or Redis key holds other settings, or the file another kind of \
         state";
    RECUO_ERR_INVALID_LEASE => c"invalid_lease", "a lease must last from 1 ms to 1 day";
    RECUO_ERR_ZERO_COST => c"zero_cost", "a start's cost must be at least 1";
    RECUO_ERR_TASK_FAILED => c"task_failed",
        "the task failed on its last attempt, or its failure was not to be retried";
    RECUO_ERR_GAVE_UP => c"gave_up", "the operation gave up; the report says why";
    RECUO_WOULD_WAIT => c"would_wait", "not now: the start would have to wait";
    RECUO_TIMED_OUT => c"timed_out", "not in time: nothing came within the timeout";
    RECUO_CANCELLED => c"cancelled", "cancelled before or during the wait";
    RECUO_BUDGET_EXHAUSTED => c"budget_exhausted", "the retry budget has no retry left";
    RECUO_QUEUE_FULL => c"queue_full",
        "not now: the start would wait beyond the starts the regulator queues ahead; \
         nothing was reserved, ask again later";
    RECUO_HOST_PENDING => c"host_pending",
        "not yet: the limit waits on a Redis call the host must run and answer first";
    RECUO_ERR_IO => c"io",
        "a shared file could not be opened, sized, locked or mapped, or a Redis server \
         reached";
    RECUO_ERR_PANIC => c"panic", "recuo panicked (a bug in recuo, please report it)";
}

impl recuo_status {
    /// Whether this status is in the configuration range (`100`–`199`).
    pub const fn is_config_error(self) -> bool {
        matches!(self as u32, 100..=199)
    }

    /// Whether this status is in the argument range (`1`–`99`).
    pub const fn is_argument_error(self) -> bool {
        matches!(self as u32, 1..=99)
    }
}

impl fmt::Display for recuo_status {
    /// The human-readable description. Configuration errors use the core's messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.message() {
            Ok(text) => f.write_str(text),
            Err(core) => write!(f, "{core}"),
        }
    }
}

/// The C status of a core error: `100 +` its stable code, the one numbering every language
/// shares (an I/O failure, core code 200, is C's 300) — except a shared store that waits on
/// its host (`would_block`): `RECUO_HOST_PENDING`. A code C does not know (a configuration
/// error newer than this library) is `RECUO_ERR_INVALID_CONFIG`.
fn of_core(code: u32, would_block: bool) -> recuo_status {
    match recuo_status::from_code(100 + code) {
        _ if would_block => RECUO_HOST_PENDING,
        Some(status) => status,
        None => RECUO_ERR_INVALID_CONFIG,
    }
}

/// Converts each core error to its C status by [`of_core`], given whether it is a shared
/// store waiting on its host.
macro_rules! from_core_errors {
    ($($error:ty => $would_block:expr),+ $(,)?) => {
        $(impl From<$error> for recuo_status {
            fn from(e: $error) -> Self {
                of_core(e.code(), $would_block(&e))
            }
        })+
    };
}

from_core_errors!(
    ConfigError => |_| false,
    PlanError => |_| false,
    SharedError => SharedError::would_block,
    RegulatorError => |e: &RegulatorError| matches!(e, RegulatorError::Shared(s) if s.would_block()),
    BudgetError => |e: &BudgetError| matches!(e, BudgetError::Shared(s) if s.would_block()),
    LimitError => |e: &LimitError| matches!(e, LimitError::Shared(s) if s.would_block()),
);

/// Writes `text` into the caller's buffer `buf` of `len` bytes as every text output does:
/// NUL-terminated, truncated at a character boundary when it does not fit (then
/// `RECUO_ERR_BUFFER_TOO_SMALL`), the length without the NUL stored in `*written` when
/// `written` is not NULL; `RECUO_ERR_NULL_ARGUMENT` for `buf`, `RECUO_ERR_LENGTH_TOO_LARGE`
/// above `PTRDIFF_MAX`, before anything is written.
///
/// # Safety
/// `buf` must be NULL or point to `len` writable bytes; `written` must be NULL or point
/// to a `size_t`.
pub(crate) unsafe fn write_text(
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
    text: &str,
) -> recuo_status {
    if buf.is_null() {
        return RECUO_ERR_NULL_ARGUMENT;
    }
    if len > isize::MAX as usize {
        return RECUO_ERR_LENGTH_TOO_LARGE;
    }
    // SAFETY: non-NULL, len ≤ isize::MAX, and the caller vouches for `len` writable bytes.
    let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
    let mut n = text.len().min(len.saturating_sub(1));
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    if let Some(nul) = buf.get_mut(n) {
        *nul = 0;
    }
    // SAFETY: the caller vouches that a non-NULL `written` points to a size_t.
    unsafe { crate::ptr::put(written, n) };
    if len == 0 || n < text.len() {
        RECUO_ERR_BUFFER_TOO_SMALL
    } else {
        RECUO_OK
    }
}

/// Writes the text `make` answers into `buf` as [`write_text`] does, inside the panic
/// boundary: `RECUO_ERR_NULL_ARGUMENT` for `buf` first (before `make` runs), or `make`'s
/// error, with nothing written.
///
/// # Safety
/// `buf` must be NULL or point to `len` writable bytes; `written` NULL or a writable `size_t`.
pub(crate) unsafe fn write_made<T: AsRef<str>>(
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
    make: impl FnOnce() -> Result<T, recuo_status>,
) -> recuo_status {
    checked(|| {
        if buf.is_null() {
            return Err(RECUO_ERR_NULL_ARGUMENT);
        }
        // SAFETY: forwarded from the caller.
        Ok(unsafe { write_text(buf, len, written, make()?.as_ref()) })
    })
}

/// Writes `detail` into an optional detail buffer (`buf` NULL or `len` 0: nothing is
/// written), NUL-terminated and truncated at a character boundary when it does not fit. The
/// detail accompanies a status, so a truncation is not reported.
///
/// # Safety
/// `buf` must be NULL or point to `len` writable bytes.
pub(crate) unsafe fn write_detail(buf: *mut c_char, len: usize, detail: &str) {
    if !buf.is_null() && len > 0 {
        // SAFETY: forwarded from the caller.
        let _ = unsafe { write_text(buf, len, std::ptr::null_mut(), detail) };
    }
}

/// The body of every constructor that explains its errors in a detail buffer
/// (`recuo_regulator_new_shared`, the `_new_redis` functions), inside the panic boundary: the
/// output checked first, then the arguments as `open` reads them, then what it opens — the
/// handle stored in `*out` and an empty detail, or why not written to the detail and its
/// status answered.
///
/// # Safety
/// `detail` must be NULL or point to `detail_len` writable bytes; `out` NULL or writable.
pub(crate) unsafe fn open_with_detail<T, E>(
    detail: *mut c_char,
    detail_len: usize,
    out: *mut *mut T,
    open: impl FnOnce() -> Result<Result<T, E>, recuo_status>,
) -> recuo_status
where
    E: fmt::Display + Into<recuo_status>,
{
    boundary(|| {
        let (status, text) = match crate::ptr::out(out).and_then(|out| Ok((out, open()?))) {
            Err(status) => (status, status.to_string()),
            // SAFETY: a checked output.
            Ok((out, Ok(made))) => (unsafe { crate::ptr::store(out, made) }, String::new()),
            Ok((_, Err(e))) => {
                let text = e.to_string();
                (e.into(), text)
            }
        };
        // SAFETY: forwarded from the caller.
        unsafe { write_detail(detail, detail_len, &text) };
        status
    })
}

/// Writes a description of the status `code` into the caller's buffer `buf` of `len` bytes,
/// always NUL-terminated, and stores the number of bytes written (without the NUL) in
/// `*written` when `written` is not NULL.
///
/// Returns `RECUO_OK` when the whole message fitted, `RECUO_ERR_BUFFER_TOO_SMALL` when it was
/// truncated (what fits is still written and terminated; with `len == 0` nothing is written),
/// and `RECUO_ERR_NULL_ARGUMENT` when `buf` is NULL. 128 bytes always suffice. An unknown
/// code gets a message saying so. The text is ASCII English, for humans: compare codes, or
/// `recuo_status_name`, never messages.
///
/// # Safety
/// `buf` must point to `len` writable bytes; `written` must be NULL or point to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_status_message(
    code: u32,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    boundary(|| {
        let text = match recuo_status::from_code(code) {
            Some(status) => status.to_string(),
            None => format!("unknown recuo status code {code}"),
        };
        // SAFETY: forwarded from the caller.
        unsafe { write_text(buf, len, written, &text) }
    })
}

/// The stable name of the status `code` (`"ok"`, `"null_argument"`, `"cap_below_base"`, …), or
/// `"unknown"` for a number that is no status.
///
/// The string is static: never free it. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_status_name(code: u32) -> *const c_char {
    recuo_status::name_of(code)
}

/// Whether `code` is a configuration error (`100`–`199`): the arguments were well-formed but
/// the values are refused (zero attempts, a maximum below the base, …).
#[no_mangle]
pub extern "C" fn recuo_status_is_config_error(code: u32) -> bool {
    boundary(|| recuo_status::from_code(code).is_some_and(recuo_status::is_config_error))
}

/// Whether `code` is an argument error (`1`–`99`): a NULL pointer, a buffer too small, a
/// length too large.
#[no_mangle]
pub extern "C" fn recuo_status_is_argument_error(code: u32) -> bool {
    boundary(|| recuo_status::from_code(code).is_some_and(recuo_status::is_argument_error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    const ALL_CONFIG_ERRORS: [ConfigError; 9] = [
        ConfigError::ZeroAttempts,
        ConfigError::NegativeDuration,
        ConfigError::NotANumber,
        ConfigError::DurationTooLarge,
        ConfigError::CapBelowBase {
            base_ms: 2,
            cap_ms: 1,
        },
        ConfigError::EmptyHeaderName,
        ConfigError::StatusOutOfRange { status: 302 },
        ConfigError::UnknownName { what: "jitter" },
        ConfigError::InvalidValue,
    ];

    #[test]
    fn config_errors_are_100_plus_the_core_code_and_share_its_names() {
        for e in ALL_CONFIG_ERRORS {
            let s = recuo_status::from(e);
            assert_eq!(s as u32, 100 + e.code(), "{e:?}");
            assert_eq!(s.name().to_str(), Ok(e.name()), "{e:?}");
            assert!(s.is_config_error() && !s.is_argument_error(), "{e:?}");
        }
    }

    #[test]
    fn codes_are_unique_sorted_and_round_trip() {
        let codes: Vec<u32> = recuo_status::ALL.iter().map(|s| *s as u32).collect();
        assert!(codes.windows(2).all(|w| w[0] < w[1]), "{codes:?}");
        for &s in recuo_status::ALL {
            assert_eq!(recuo_status::from_code(s as u32), Some(s));
        }
        assert_eq!(recuo_status::from_code(13), None);
        assert_eq!(recuo_status::from_code(110), None);
        assert_eq!(recuo_status::from_code(u32::MAX), None);
    }

    fn message(code: u32, len: usize) -> (recuo_status, String, usize) {
        let mut buf = vec![0xAAu8; len];
        let mut written = usize::MAX;
        // SAFETY: `buf` holds `len` bytes and `written` is a live usize.
        let rc = unsafe { recuo_status_message(code, buf.as_mut_ptr().cast(), len, &mut written) };
        let text = if len == 0 {
            String::new()
        } else {
            let nul = buf.iter().position(|&b| b == 0).expect("NUL-terminated");
            String::from_utf8(buf[..nul].to_vec()).unwrap()
        };
        (rc, text, written)
    }

    #[test]
    fn messages_fit_in_128_bytes_and_use_the_core_text() {
        for &s in recuo_status::ALL {
            let (rc, text, written) = message(s as u32, 128);
            assert_eq!(rc, RECUO_OK, "{s:?}");
            assert_eq!(written, text.len());
            assert!(!text.is_empty());
        }
        let (_, text, _) = message(RECUO_ERR_ZERO_ATTEMPTS as u32, 128);
        assert_eq!(text, ConfigError::ZeroAttempts.to_string());
    }

    #[test]
    fn truncation_is_reported_and_terminated() {
        let (rc, text, written) = message(RECUO_OK as u32, 4);
        assert_eq!(
            (rc, text.as_str(), written),
            (RECUO_ERR_BUFFER_TOO_SMALL, "suc", 3)
        );
        let (rc, text, written) = message(RECUO_OK as u32, 8);
        assert_eq!((rc, text.as_str(), written), (RECUO_OK, "success", 7));
        let (rc, _, written) = message(RECUO_OK as u32, 0);
        assert_eq!((rc, written), (RECUO_ERR_BUFFER_TOO_SMALL, 0));
        let (rc, text, _) = message(4242, 128);
        assert_eq!(
            (rc, text.as_str()),
            (RECUO_OK, "unknown recuo status code 4242")
        );
    }

    #[test]
    fn names_and_predicates_through_the_c_functions() {
        // SAFETY: recuo_status_name returns a static NUL-terminated string.
        let name = |c| {
            unsafe { CStr::from_ptr(recuo_status_name(c)) }
                .to_str()
                .unwrap()
        };
        assert_eq!(name(0), "ok");
        assert_eq!(name(105), "cap_below_base");
        assert_eq!(name(106), "invalid_header_name");
        assert_eq!(name(107), "status_out_of_range");
        assert_eq!(name(110), "unknown");
        assert_eq!(name(108), "unknown_name");
        assert_eq!(name(109), "invalid_value");
        assert_eq!(name(201), "gave_up");
        assert_eq!(name(10), "index_out_of_range");
        assert_eq!(name(11), "no_response");
        assert_eq!(name(12), "invalid_stats");
        assert_eq!(name(13), "unknown");
        assert_eq!(name(150), "invalid_rate");
        assert_eq!(name(210), "would_wait");
        assert!(recuo_status_is_config_error(101) && !recuo_status_is_config_error(1));
        assert!(recuo_status_is_argument_error(1) && !recuo_status_is_argument_error(0));
        assert!(recuo_status_is_config_error(158) && !recuo_status_is_argument_error(158));
        assert!(!recuo_status_is_config_error(199) && !recuo_status_is_argument_error(50));
        assert!(!recuo_status_is_config_error(210) && !recuo_status_is_argument_error(210));
    }
}
