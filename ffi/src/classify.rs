//! Outcomes → verdicts: plain structs in, a plain struct out, the core's rules.

use std::borrow::Cow;

use recuo::{Cause, Outcome, Request, ServerWait, Transport, Verdict};

use crate::prelude::*;
pub use crate::transport::recuo_transport;

/// What kind of outcome a `recuo_outcome` describes.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_outcome_kind {
    /// The operation succeeded (for tasks with no HTTP meaning).
    RECUO_OUTCOME_SUCCESS = 1,
    /// An HTTP response came back with the status in `status`.
    RECUO_OUTCOME_STATUS = 2,
    /// The request failed in transport, as `transport` says.
    RECUO_OUTCOME_TRANSPORT = 3,
}

c_enum!(recuo_outcome_kind {
    RECUO_OUTCOME_SUCCESS => c"success",
    RECUO_OUTCOME_STATUS => c"status",
    RECUO_OUTCOME_TRANSPORT => c"transport",
});

/// What one attempt came to: a plain struct, yours to fill (on the stack too).
///
/// `kind` says which of the other fields is read: `status` for `RECUO_OUTCOME_STATUS` (any
/// number; codes outside 100–599 are treated as 500, RFC 9110 section 15), `transport` for
/// `RECUO_OUTCOME_TRANSPORT`; the unused field is ignored. Values that are none of their
/// enum's constants are refused with `RECUO_ERR_INVALID_ENUM`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_outcome {
    /// A `recuo_outcome_kind` constant.
    pub kind: recuo_outcome_kind,
    /// The HTTP status, for `RECUO_OUTCOME_STATUS`.
    pub status: u16,
    /// A `recuo_transport` constant, for `RECUO_OUTCOME_TRANSPORT`.
    pub transport: recuo_transport,
}

mirror!(
    /// `recuo_outcome` (and `recuo_last`, of the same layout) as C may have filled it: every
    /// field a plain number.
    RawOutcome: recuo_outcome, crate::http::recuo_last {
        kind: u32,
        status: u16,
        transport: u32,
    }
);

impl RawOutcome {
    /// Reads C's `recuo_outcome` without trusting its enum fields.
    ///
    /// # Safety
    /// `ptr` must be NULL or point to a readable `recuo_outcome`.
    pub(crate) unsafe fn read(ptr: *const recuo_outcome) -> Result<Outcome, recuo_status> {
        // SAFETY: the mirror has the same layout (checked above) and every bit pattern is a
        // valid u32/u16; the caller vouches for the memory.
        let raw = unsafe { ptr::input(ptr.cast::<RawOutcome>()) }?;
        Ok(match recuo_outcome_kind::from_c(raw.kind)? {
            recuo_outcome_kind::RECUO_OUTCOME_SUCCESS => Outcome::Success,
            recuo_outcome_kind::RECUO_OUTCOME_STATUS => Outcome::Status(raw.status),
            recuo_outcome_kind::RECUO_OUTCOME_TRANSPORT => {
                Outcome::Transport(recuo_transport::core_of(raw.transport)?)
            }
        })
    }
}

/// One response header: a name and a value, each given as bytes with their length (they may
/// contain NUL bytes; they need no terminator). A plain struct, yours to fill.
///
/// Header bytes come from a server, so they are never refused: bytes that are not UTF-8 are
/// read as U+FFFD, which no header recuo understands accepts — such a header counts as
/// present but invalid (a `Retry-After: 12\xff` gives no wait; a name with such bytes matches
/// nothing), exactly as a non-ASCII value does in every language recuo speaks.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct recuo_header {
    /// The header's name (matched without regard to ASCII case); NULL only with `name_len` 0.
    pub name: *const c_char,
    /// The name's length in bytes.
    pub name_len: usize,
    /// The header's value (blanks around it are ignored); NULL only with `value_len` 0.
    pub value: *const c_char,
    /// The value's length in bytes.
    pub value_len: usize,
}

/// Response headers as the core takes them: pairs of text.
pub(crate) type Headers<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

/// An outcome and its response's headers, as C gives them.
///
/// # Safety
/// As [`RawOutcome::read`] and [`read_headers`].
pub(crate) unsafe fn read_response<'a>(
    outcome: *const recuo_outcome,
    headers: *const recuo_header,
    count: usize,
) -> Result<(Outcome, Headers<'a>), recuo_status> {
    // SAFETY: forwarded from the caller.
    unsafe { Ok((RawOutcome::read(outcome)?, read_headers(headers, count)?)) }
}

/// Reads the caller's headers as the core takes them: pairs of text, invalid UTF-8 replaced.
///
/// # Safety
/// `headers` must point to `count` readable `recuo_header`s (or be NULL with `count == 0`),
/// each pointing to its bytes.
pub(crate) unsafe fn read_headers<'a>(
    headers: *const recuo_header,
    count: usize,
) -> Result<Headers<'a>, recuo_status> {
    // SAFETY: the caller vouches for each header's bytes.
    let text = |p, len| unsafe { ptr::bytes(p, len) }.map(String::from_utf8_lossy);
    // SAFETY: forwarded from the caller.
    let headers = unsafe { ptr::slice(headers, count) }?;
    let pair = |h: &recuo_header| Ok((text(h.name, h.name_len)?, text(h.value, h.value_len)?));
    headers.iter().map(pair).collect()
}

/// What to do about one outcome.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_verdict_kind {
    /// Done: nothing to retry.
    RECUO_VERDICT_SUCCESS = 1,
    /// Worth another attempt, after at least the server's wait if it gave one.
    RECUO_VERDICT_RETRY = 2,
    /// Not worth another attempt.
    RECUO_VERDICT_GIVE_UP = 3,
}

c_enum!(recuo_verdict_kind {
    RECUO_VERDICT_SUCCESS => c"success",
    RECUO_VERDICT_RETRY => c"retry",
    RECUO_VERDICT_GIVE_UP => c"give_up",
});

/// Why a verdict was reached.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_cause {
    /// 1xx–3xx, or a task's success.
    RECUO_CAUSE_SUCCESS = 1,
    /// 429, or a 403 whose rate-limit headers say the quota is spent.
    RECUO_CAUSE_RATE_LIMITED = 2,
    /// 503: the server refused the request.
    RECUO_CAUSE_UNAVAILABLE = 3,
    /// Another status in the retry sets (500, 502, 504, …).
    RECUO_CAUSE_SERVER_ERROR = 4,
    /// The connection could not be made: nothing was sent.
    RECUO_CAUSE_CONNECT = 5,
    /// A timeout after the request was sent.
    RECUO_CAUSE_TIMEOUT = 6,
    /// The connection dropped after the request was sent.
    RECUO_CAUSE_RESET = 7,
    /// Another transport failure.
    RECUO_CAUSE_OTHER = 8,
    /// Retryable, but the request may have taken effect and is not safe to repeat (no
    /// idempotent method, no idempotency key).
    RECUO_CAUSE_NOT_IDEMPOTENT = 9,
    /// A status repeating will not change (4xx, 501, 505, …).
    RECUO_CAUSE_PERMANENT = 10,
    /// The certificate failed verification (a retry of it, when configured, has this cause
    /// too).
    RECUO_CAUSE_TLS = 11,
}

// A TLS failure is one constant for the core's two causes: the certificate's refusal
// (`Cause::Tls`, what `to_core` answers) and the transport failure a retry names.
c_enum!(recuo_cause: Cause {
    RECUO_CAUSE_SUCCESS = [Cause::Success] => c"success",
    RECUO_CAUSE_RATE_LIMITED = [Cause::RateLimited] => c"rate_limited",
    RECUO_CAUSE_UNAVAILABLE = [Cause::Unavailable] => c"unavailable",
    RECUO_CAUSE_SERVER_ERROR = [Cause::ServerError] => c"server_error",
    RECUO_CAUSE_CONNECT = [Cause::Transport(Transport::Connect)] => c"connect",
    RECUO_CAUSE_TIMEOUT = [Cause::Transport(Transport::Timeout)] => c"timeout",
    RECUO_CAUSE_RESET = [Cause::Transport(Transport::Reset)] => c"reset",
    RECUO_CAUSE_OTHER = [Cause::Transport(Transport::Other)] => c"other",
    RECUO_CAUSE_NOT_IDEMPOTENT = [Cause::NotIdempotent] => c"not_idempotent",
    RECUO_CAUSE_PERMANENT = [Cause::Permanent] => c"permanent",
    RECUO_CAUSE_TLS = [Cause::Tls] | [Cause::Transport(Transport::Tls)] => c"tls",
});

impl recuo_cause {
    /// The core's cause; `retrying` tells a retried TLS failure from a refused one.
    pub(crate) fn core_in(self, retrying: bool) -> Cause {
        match self {
            Self::RECUO_CAUSE_TLS if retrying => Cause::Transport(Transport::Tls),
            cause => cause.to_core(),
        }
    }
}

/// The server's wait attached to a verdict. `0` is "none", so a verdict written by hand may
/// leave it out.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_wait_kind {
    /// The server asked for no wait: the backoff of the policy applies.
    RECUO_WAIT_NONE = 0,
    /// Wait at least `wait_ms` milliseconds (0 is possible: a date in the past).
    RECUO_WAIT_MS = 1,
    /// The server's wait is too long to count: no retry can honour it.
    RECUO_WAIT_UNBOUNDED = 2,
}

c_enum!(recuo_wait_kind {
    RECUO_WAIT_NONE => c"none",
    RECUO_WAIT_MS => c"ms",
    RECUO_WAIT_UNBOUNDED => c"unbounded",
});

/// A verdict: what `recuo_classify` answers, and what `recuo_attempts_judged` and the
/// operation of `recuo_retry` take. A plain struct, yours to allocate; you may also fill one
/// by hand for an operation with no HTTP meaning, e.g.
/// `(recuo_verdict){.verdict = RECUO_VERDICT_RETRY, .cause = RECUO_CAUSE_SERVER_ERROR}` (no
/// server wait).
///
/// `wait` and `wait_ms` are read for `RECUO_VERDICT_RETRY` only; `cause` is informational
/// (it never changes a decision) but must be one of its constants, and not
/// `RECUO_CAUSE_SUCCESS` for a retry or a give-up (as in every recuo language).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_verdict {
    /// A `recuo_verdict_kind` constant (never 0 once recuo filled it).
    pub verdict: recuo_verdict_kind,
    /// A `recuo_cause` constant: why.
    pub cause: recuo_cause,
    /// A `recuo_wait_kind` constant: the server's wait, for a retry.
    pub wait: recuo_wait_kind,
    /// The server's wait in milliseconds when `wait` is `RECUO_WAIT_MS`, else 0.
    pub wait_ms: u64,
}

mirror!(
    /// `recuo_verdict` as C may have filled it: every field a plain number.
    RawVerdict: recuo_verdict {
        verdict: u32,
        cause: u32,
        wait: u32,
        wait_ms: u64,
    }
);

impl recuo_verdict {
    /// The C form of the core's verdict.
    pub(crate) fn from_core(v: Verdict) -> Self {
        let verdict = match v {
            Verdict::Success => recuo_verdict_kind::RECUO_VERDICT_SUCCESS,
            Verdict::Retry { .. } => recuo_verdict_kind::RECUO_VERDICT_RETRY,
            Verdict::GiveUp { .. } => recuo_verdict_kind::RECUO_VERDICT_GIVE_UP,
        };
        let (wait, wait_ms) = match v.server_wait() {
            None => (recuo_wait_kind::RECUO_WAIT_NONE, 0),
            Some(ServerWait::Ms(ms)) => (recuo_wait_kind::RECUO_WAIT_MS, ms),
            Some(ServerWait::Unbounded) => (recuo_wait_kind::RECUO_WAIT_UNBOUNDED, 0),
        };
        recuo_verdict {
            verdict,
            cause: recuo_cause::from_core(v.cause()),
            wait,
            wait_ms,
        }
    }

    /// Reads a verdict C handed in, without trusting its enum fields: the core's verdict, or
    /// `None` when a field is none of its constants or a retry or a give-up names a cause it
    /// cannot have (the core's [`Cause::nameable`]).
    ///
    /// # Safety
    /// `ptr` must be non-NULL and point to a readable `recuo_verdict`.
    pub(crate) unsafe fn read(ptr: *const recuo_verdict) -> Option<Verdict> {
        // SAFETY: the mirror has the same layout (checked above) and every bit pattern is a
        // valid u32/u64; the caller vouches for the memory.
        let raw = unsafe { ptr.cast::<RawVerdict>().read() };
        let kind = recuo_verdict_kind::from_code(raw.verdict)?;
        let cause = recuo_cause::from_code(raw.cause)?;
        let judged = kind != recuo_verdict_kind::RECUO_VERDICT_SUCCESS;
        if judged && !cause.to_core().nameable(false) {
            return None;
        }
        Some(match kind {
            recuo_verdict_kind::RECUO_VERDICT_SUCCESS => Verdict::Success,
            recuo_verdict_kind::RECUO_VERDICT_GIVE_UP => Verdict::GiveUp {
                cause: cause.core_in(false),
            },
            recuo_verdict_kind::RECUO_VERDICT_RETRY => Verdict::Retry {
                cause: cause.core_in(true),
                server_wait: match recuo_wait_kind::from_code(raw.wait)? {
                    recuo_wait_kind::RECUO_WAIT_NONE => None,
                    recuo_wait_kind::RECUO_WAIT_MS => Some(ServerWait::Ms(raw.wait_ms)),
                    recuo_wait_kind::RECUO_WAIT_UNBOUNDED => Some(ServerWait::Unbounded),
                },
            },
        })
    }
}

/// Classifies one outcome under `policy`: success, retry (with the server's wait,
/// from `Retry-After` or the rate-limit headers) or give up, and why. Stores the
/// verdict in `*out`.
///
/// * `outcome`: what the attempt came to.
/// * `method`, `method_len`: the request's HTTP method (ASCII case ignored; a method recuo
///   does not know is never idempotent); it must be UTF-8. NULL only with `method_len` 0.
/// * `has_idempotency_key`: whether the request carried an idempotency key (then any method
///   is safe to repeat).
/// * `headers`, `header_count`: the response's headers, in order (the first of a name wins);
///   NULL only with `header_count` 0. Bytes that are not UTF-8 make that header invalid,
///   never the call (see `recuo_header`).
/// * `now_ms`: the wall clock, milliseconds since the Unix epoch (`recuo_now_ms()`), for
///   HTTP-dates and rate-limit resets; with `recuo_policy_set_use_date_header`, a valid
///   `Date` header in `headers` takes its place.
///
/// Returns `RECUO_OK`; the policy's configuration error (e.g. `RECUO_ERR_CAP_BELOW_BASE`);
/// `RECUO_ERR_NULL_ARGUMENT` (`policy`, `outcome`, `out`, or a pointer with a non-zero
/// length); `RECUO_ERR_INVALID_ENUM` for an outcome field that is no constant;
/// `RECUO_ERR_NOT_UTF8` for a method that is not UTF-8; `RECUO_ERR_LENGTH_TOO_LARGE`. On an
/// error `*out` is left untouched. Nothing is kept after the call.
///
/// # Safety
/// Every pointer must be NULL or valid for its length; `out` must be NULL or point to a
/// writable `recuo_verdict`.
#[no_mangle]
pub unsafe extern "C" fn recuo_classify(
    policy: *const recuo_policy,
    outcome: *const recuo_outcome,
    method: *const c_char,
    method_len: usize,
    has_idempotency_key: bool,
    headers: *const recuo_header,
    header_count: usize,
    now_ms: i64,
    out: *mut recuo_verdict,
) -> recuo_status {
    // SAFETY: each conversion below is vouched for by the caller (see # Safety).
    unsafe {
        ptr::fill(out, || {
            let (policy, outcome) = (ptr::input(policy)?, RawOutcome::read(outcome)?);
            let method = ptr::text(method, method_len)?;
            let headers = read_headers(headers, header_count)?;
            let request = Request {
                method,
                has_idempotency_key,
            };
            // Arguments first, the policy's configuration last: the same error for a valid
            // and an invalid policy.
            let verdict = policy
                .policy()?
                .classify(outcome, request, &headers, now_ms);
            Ok(recuo_verdict::from_core(verdict))
        })
    }
}

/// The name of the `recuo_outcome_kind` constant `kind` (`"success"`, `"status"`,
/// `"transport"`), or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_outcome_kind_name(kind: u32) -> *const c_char {
    recuo_outcome_kind::name_of(kind)
}

/// The name of the `recuo_verdict_kind` constant `verdict` (`"success"`, `"retry"`,
/// `"give_up"`), or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_verdict_kind_name(verdict: u32) -> *const c_char {
    recuo_verdict_kind::name_of(verdict)
}

/// The name of the `recuo_cause` constant `cause` (`"success"`, `"rate_limited"`,
/// `"unavailable"`, `"server_error"`, `"connect"`, `"timeout"`, `"reset"`, `"other"`,
/// `"not_idempotent"`, `"permanent"`, `"tls"`: the names every language uses), or
/// `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_cause_name(cause: u32) -> *const c_char {
    recuo_cause::name_of(cause)
}

/// The name of the `recuo_wait_kind` constant `wait` (`"none"`, `"ms"`, `"unbounded"`), or
/// `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_wait_kind_name(wait: u32) -> *const c_char {
    recuo_wait_kind::name_of(wait)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{recuo_policy_free, recuo_policy_new, recuo_policy_set_cap_ms};

    fn all_core_causes() -> Vec<Cause> {
        let mut v = vec![
            Cause::Success,
            Cause::RateLimited,
            Cause::Unavailable,
            Cause::ServerError,
            Cause::NotIdempotent,
            Cause::Permanent,
            Cause::Tls,
        ];
        for t in recuo_transport::ALL {
            v.push(Cause::Transport(t.to_core()));
        }
        v
    }

    #[test]
    fn names_are_the_core_names() {
        for c in all_core_causes() {
            assert_eq!(recuo_cause::from_core(c).name().to_str(), Ok(c.name()));
        }
        for t in recuo_transport::ALL {
            assert_eq!(t.name().to_str(), Ok(t.to_core().name()));
        }
        let verdicts = [
            Verdict::Success,
            Verdict::Retry {
                cause: Cause::ServerError,
                server_wait: None,
            },
            Verdict::GiveUp {
                cause: Cause::Permanent,
            },
        ];
        for v in verdicts {
            assert_eq!(
                recuo_verdict::from_core(v).verdict.name().to_str(),
                Ok(v.name())
            );
        }
    }

    #[test]
    fn verdicts_round_trip() {
        let waits = [
            None,
            Some(ServerWait::Ms(0)),
            Some(ServerWait::Ms(1234)),
            Some(ServerWait::Unbounded),
        ];
        let mut all = vec![Verdict::Success];
        // A retry or a give-up names any cause but `success` (that one reads as none).
        for cause in all_core_causes()
            .into_iter()
            .filter(|&c| c != Cause::Success)
        {
            if cause != Cause::Tls {
                for server_wait in waits {
                    all.push(Verdict::Retry { cause, server_wait });
                }
            }
            if !matches!(cause, Cause::Transport(Transport::Tls)) {
                all.push(Verdict::GiveUp { cause });
            }
        }
        for v in all {
            let c = recuo_verdict::from_core(v);
            // SAFETY: `c` is a live verdict.
            assert_eq!(unsafe { recuo_verdict::read(&c) }, Some(v), "{v:?}");
        }
        let bad = RawVerdict {
            verdict: 2,
            cause: 4,
            wait: 7,
            wait_ms: 0,
        };
        // SAFETY: same layout, live value.
        let read = unsafe { recuo_verdict::read((&bad as *const RawVerdict).cast()) };
        assert_eq!(read, None);
        // A retry or a give-up never names `success`; a success does.
        for (verdict, expected) in [(1, true), (2, false), (3, false)] {
            let raw = RawVerdict {
                verdict,
                cause: recuo_cause::RECUO_CAUSE_SUCCESS as u32,
                wait: 0,
                wait_ms: 0,
            };
            // SAFETY: same layout, live value.
            let read = unsafe { recuo_verdict::read((&raw as *const RawVerdict).cast()) };
            assert_eq!(read.is_some(), expected, "verdict {verdict}");
        }
    }

    #[test]
    fn classify_calls_the_core() {
        let p = recuo_policy_new();
        let outcome = recuo_outcome {
            kind: recuo_outcome_kind::RECUO_OUTCOME_STATUS,
            status: 429,
            transport: recuo_transport::RECUO_TRANSPORT_OTHER,
        };
        let h = [recuo_header {
            name: c"retry-after".as_ptr(),
            name_len: 11,
            value: c"12".as_ptr(),
            value_len: 2,
        }];
        let mut v = recuo_verdict::from_core(Verdict::Success);
        // SAFETY: live handle, structs and strings.
        unsafe {
            let rc = recuo_classify(
                p,
                &outcome,
                c"POST".as_ptr(),
                4,
                false,
                h.as_ptr(),
                1,
                0,
                &mut v,
            );
            assert_eq!(rc, RECUO_OK);
            assert_eq!(
                recuo_verdict::read(&v),
                Some(Verdict::Retry {
                    cause: Cause::RateLimited,
                    server_wait: Some(ServerWait::Ms(12_000))
                })
            );
            assert_eq!(recuo_policy_set_cap_ms(p, 1), RECUO_OK);
            let rc = recuo_classify(
                p,
                &outcome,
                std::ptr::null(),
                0,
                false,
                std::ptr::null(),
                0,
                0,
                &mut v,
            );
            assert_eq!(rc, RECUO_ERR_CAP_BELOW_BASE);
            recuo_policy_free(p);
        }
    }
}
