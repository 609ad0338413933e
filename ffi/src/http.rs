//! The rules every HTTP adapter follows for one request (`recuo::http`), for C and for the
//! hosts that call librecuo (the libcurl glue, JavaScript through koffi): which idempotency
//! key a request carries and whether it counts as idempotent (the plan), how an operation's
//! end reaches the caller (the ending) and the one message of a give-up. The rules are the
//! core's; these shims only convert. Guide A, named below, is
//! “Como repetir requisições com backoff exponencial (retry)”
//! (<https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff>).

use recuo::http::{self, Ending, KeyToSend, Last, RequestPlan, Style};
use recuo::{Operation, Policy};

use crate::classify::RawOutcome;
use crate::prelude::*;

/// The size of a buffer that holds any give-up message (`recuo_give_up_message`,
/// `recuo_attempts_give_up_message`) with its NUL.
pub const RECUO_GIVE_UP_MESSAGE_SIZE: usize = 256;

/// Which idempotency key the attempts of a request carry.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_key_to_send {
    /// None.
    RECUO_KEY_NONE = 1,
    /// The caller's own, already among the request's headers: sent as it is.
    RECUO_KEY_CALLER = 2,
    /// recuo's key for the operation (`recuo_attempts_idempotency_key`), the same on every
    /// attempt: add it in the policy's header (`recuo_policy_idempotency_header`).
    RECUO_KEY_RECUO = 3,
}

c_enum!(recuo_key_to_send: KeyToSend {
    RECUO_KEY_NONE = [KeyToSend::Nothing] => c"none",
    RECUO_KEY_CALLER = [KeyToSend::Callers] => c"caller",
    RECUO_KEY_RECUO = [KeyToSend::Recuos] => c"recuo",
});

/// What one request is to its operation: a plain struct recuo fills in.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_request_plan {
    /// A `recuo_key_to_send` constant: the key every attempt carries.
    pub key: recuo_key_to_send,
    /// Whether a failure whose outcome is unknown (a timeout, a reset, a 500) may be retried.
    pub idempotent: bool,
}

impl recuo_request_plan {
    fn from_core(p: RequestPlan) -> Self {
        recuo_request_plan {
            key: recuo_key_to_send::from_core(p.key()),
            idempotent: p.idempotent(),
        }
    }
}

/// Which contract a request's caller expects when the operation ends.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_style {
    /// A client adapter: the last response is returned, as the client would have returned it
    /// without recuo.
    RECUO_STYLE_CLIENT = 1,
    /// Guide A's `buscarComRetry` (`recuo_curl_perform`): after the last attempt a 429 or a
    /// 5xx is a give-up; other statuses are returned.
    RECUO_STYLE_GUIDE = 2,
}

c_enum!(recuo_style: Style {
    RECUO_STYLE_CLIENT = [Style::Client] => c"client",
    RECUO_STYLE_GUIDE = [Style::Guide] => c"guide",
});

/// How an operation's end reaches its caller.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_ending {
    /// The last response is returned.
    RECUO_ENDING_RESPONSE = 1,
    /// The client's own transport error is returned, unchanged.
    RECUO_ENDING_ERROR = 2,
    /// recuo's give-up is returned, with its reason, the wait left (`retry_at`), the last
    /// response if there is one, and the give-up message.
    RECUO_ENDING_GIVE_UP = 3,
}

c_enum!(recuo_ending: Ending {
    RECUO_ENDING_RESPONSE = [Ending::Response] => c"response",
    RECUO_ENDING_ERROR = [Ending::Error] => c"error",
    RECUO_ENDING_GIVE_UP = [Ending::GiveUp] => c"give_up",
});

/// What kind of last attempt a `recuo_last` describes.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_last_kind {
    /// No attempt was made (the gate, the deadline or a cancellation stopped it first).
    RECUO_LAST_NOTHING = 1,
    /// A response with the status in `status` (its headers read; a body that failed after
    /// them is a transport failure, not a response).
    RECUO_LAST_STATUS = 2,
    /// A transport failure of the kind in `transport`.
    RECUO_LAST_TRANSPORT = 3,
    /// The deadline cut the attempt while the server was still answering: the client's error
    /// is an artefact of that cut.
    RECUO_LAST_LATE = 4,
}

c_enum!(recuo_last_kind {
    RECUO_LAST_NOTHING => c"nothing",
    RECUO_LAST_STATUS => c"status",
    RECUO_LAST_TRANSPORT => c"transport",
    RECUO_LAST_LATE => c"late",
});

/// What the last attempt of an operation came to, as the caller saw it: a plain struct, yours
/// to fill (on the stack too). `kind` says which other field is read: `status` for
/// `RECUO_LAST_STATUS`, `transport` for `RECUO_LAST_TRANSPORT`; the unused field is ignored.
/// Values that are none of their enum's constants are refused with `RECUO_ERR_INVALID_ENUM`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_last {
    /// A `recuo_last_kind` constant.
    pub kind: recuo_last_kind,
    /// The HTTP status, for `RECUO_LAST_STATUS`.
    pub status: u16,
    /// A `recuo_transport` constant, for `RECUO_LAST_TRANSPORT`.
    pub transport: recuo_transport,
}

/// Reads C's `recuo_last` without trusting its enum fields.
///
/// # Safety
/// `last` must be NULL or point to a readable `recuo_last`.
unsafe fn read_last(last: *const recuo_last) -> Result<Last, recuo_status> {
    // SAFETY: the mirror has the same layout (checked with `RawOutcome`) and every bit pattern
    // is a valid u32/u16; the caller vouches for the memory.
    let raw = unsafe { ptr::input(last.cast::<RawOutcome>()) }?;
    Ok(match recuo_last_kind::from_c(raw.kind)? {
        recuo_last_kind::RECUO_LAST_NOTHING => Last::Nothing,
        recuo_last_kind::RECUO_LAST_STATUS => Last::Status(raw.status),
        recuo_last_kind::RECUO_LAST_TRANSPORT => {
            Last::Transport(recuo_transport::core_of(raw.transport)?)
        }
        recuo_last_kind::RECUO_LAST_LATE => Last::Late,
    })
}

/// Reads the caller's choice of whether recuo adds its own key: -1 the default, 0 no, 1 yes.
fn read_send_keys(send_keys: i32) -> Result<Option<bool>, recuo_status> {
    match send_keys {
        -1 => Ok(None),
        0 => Ok(Some(false)),
        1 => Ok(Some(true)),
        _ => Err(RECUO_ERR_INVALID_ENUM),
    }
}

/// The plan of a request under `policy`: the key its attempts carry and whether it counts as
/// idempotent, into `*out`. The rules, the same in every language:
///
/// * a request that already carries the policy's idempotency header (`callers_key`) sends
///   the caller's key as it is, and counts as idempotent (the caller vouches for it);
/// * otherwise recuo adds its own key when `send_keys` says so: `1` yes, `0` no, `-1` the
///   default — to methods the policy does not call idempotent (POST, PATCH);
/// * a request is idempotent when its method is (GET, HEAD, OPTIONS, TRACE, PUT and DELETE
///   by default, in any ASCII case), or when it carries recuo's key and the policy says the
///   server honours keys (`recuo_policy_set_server_honours_keys`).
///
/// * `method`, `method_len`: the HTTP method, UTF-8.
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`policy`, `out`, or `method` NULL with a
/// non-zero length); `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_LENGTH_TOO_LARGE`;
/// `RECUO_ERR_INVALID_ENUM` (`send_keys` not -1, 0 or 1); the policy's configuration error.
/// On an error `*out` is untouched.
///
/// # Safety
/// `policy` must be NULL or a live handle; `method` NULL or `method_len` readable bytes; `out`
/// NULL or a writable `recuo_request_plan`.
#[no_mangle]
pub unsafe extern "C" fn recuo_plan_request(
    policy: *const recuo_policy,
    method: *const c_char,
    method_len: usize,
    callers_key: bool,
    send_keys: i32,
    out: *mut recuo_request_plan,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::fill(out, || {
            let policy = ptr::input(policy)?.policy()?;
            let (method, send_keys) = (ptr::text(method, method_len)?, read_send_keys(send_keys)?);
            let p = RequestPlan::new(policy, method, callers_key, send_keys);
            Ok(recuo_request_plan::from_core(p))
        })
    }
}

/// How an operation that ended for `reason` (a `recuo_give_up_reason` constant;
/// `RECUO_GIVE_UP_NONE`: it succeeded) reaches a caller of `style` (a `recuo_style`
/// constant), its last attempt having come to `*last`; into `*out`. The rules, the same in
/// every language:
///
/// * a success returns its response;
/// * no attempt made, or an attempt the deadline cut, gives up;
/// * a transport failure returns the client's own error;
/// * a response is returned — but a server wait past the deadline
///   (`RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE`) gives up carrying it, and in
///   `RECUO_STYLE_GUIDE` a last 429 or 5xx gives up.
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`last`, `out`); `RECUO_ERR_INVALID_ENUM`.
/// On an error `*out` is untouched.
///
/// # Safety
/// `last` must be NULL or a readable `recuo_last`; `out` NULL or a writable `recuo_ending`.
#[no_mangle]
pub unsafe extern "C" fn recuo_ending_for(
    style: u32,
    reason: u32,
    last: *const recuo_last,
    out: *mut recuo_ending,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::fill(out, || {
            let (last, style) = (read_last(last)?, recuo_style::core_of(style)?);
            let reason = recuo_give_up_reason::core_of(reason)?;
            Ok(recuo_ending::from_core(http::ending(style, reason, last)))
        })
    }
}

/// The message of a give-up, the same in every language, into `buf` (`len` bytes),
/// NUL-terminated; `*written` (when not NULL) receives its length without the NUL. For
/// example `recuo gave up after 2 attempts (wait_exceeds_deadline): HTTP 429; a retry is
/// allowed in 3600 s`.
///
/// * `reason`: a `recuo_give_up_reason` constant other than `RECUO_GIVE_UP_NONE`;
/// * `attempts`: the attempts made;
/// * `last`: what the last one came to;
/// * `has_retry_in`, `retry_in_ms`: how long from now until a retry would be allowed, when
///   known (shown in whole seconds, rounded up; 0 says "now").
///
/// 256 bytes always suffice. Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is
/// written, NUL-terminated); `RECUO_ERR_NULL_ARGUMENT` (`buf`, `last`);
/// `RECUO_ERR_INVALID_ENUM` (`RECUO_GIVE_UP_NONE` too: there is no give-up to tell), with
/// nothing written.
///
/// # Safety
/// `last` must be NULL or a readable `recuo_last`; `buf` must point to `len` writable bytes;
/// `written` NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_give_up_message(
    reason: u32,
    attempts: u32,
    last: *const recuo_last,
    has_retry_in: bool,
    retry_in_ms: u64,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        write_made(buf, len, written, || {
            let (last, reason) = (read_last(last)?, recuo_give_up_reason::reason_of(reason)?);
            let retry_in = has_retry_in.then_some(retry_in_ms);
            Ok(http::give_up_message(reason, attempts, last, retry_in))
        })
    }
}

/// Plans the machine's request (as `recuo_plan_request` does, by the machine's own policy)
/// and sends it as planned: a request the plan calls idempotent has a failure whose outcome
/// is unknown judged retryable. The plan is also stored in `*out` when `out` is not NULL:
/// with `RECUO_KEY_RECUO`, add `recuo_attempts_idempotency_key` to every attempt in the
/// policy's header; with `RECUO_KEY_CALLER`, send your own as it is.
///
/// Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED` (nothing changes); the errors of
/// `recuo_plan_request`. On an error nothing is written.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread; `method` NULL or
/// `method_len` readable bytes; `out` NULL or a writable `recuo_request_plan`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_plan(
    attempts: *mut recuo_attempts,
    method: *const c_char,
    method_len: usize,
    callers_key: bool,
    send_keys: i32,
    out: *mut recuo_request_plan,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        set_plan(attempts, out, |policy| {
            let (method, send_keys) = (ptr::text(method, method_len)?, read_send_keys(send_keys)?);
            Ok(RequestPlan::new(policy, method, callers_key, send_keys))
        })
    }
}

/// Plans the request of the machine behind `attempts` with `make` (given the machine's
/// policy), sends it as planned, and stores the plan in `out` when not NULL.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread; `out` NULL or a
/// writable `recuo_request_plan`.
unsafe fn set_plan(
    attempts: *mut recuo_attempts,
    out: *mut recuo_request_plan,
    make: impl FnOnce(&Policy) -> Result<RequestPlan, recuo_status>,
) -> recuo_status {
    checked(|| {
        // SAFETY: forwarded from the caller.
        let a = unsafe { ptr::handle(attempts) }?;
        let p = make(a.op.policy())?;
        let rc = a.build(|op| op.plan(p));
        if rc == RECUO_OK {
            // SAFETY: the caller vouches for NULL or a writable plan at `out`.
            unsafe { ptr::put(out, recuo_request_plan::from_core(p)) };
        }
        Ok(rc)
    })
}

/// `recuo_attempts_set_plan`, with the caller's key found among the request's own `headers`
/// (`header_count` of them; NULL only with 0): the request carries the caller's key when one
/// of them is named as the policy's idempotency header (`recuo_policy_idempotency_header`,
/// without regard to ASCII case). Header bytes that are not UTF-8 are read as U+FFFD.
///
/// Returns the statuses of `recuo_attempts_set_plan`, and `RECUO_ERR_NULL_ARGUMENT` for
/// `headers` (or a header's bytes) NULL with a non-zero length.
///
/// # Safety
/// As `recuo_attempts_set_plan`; `headers` must point to `header_count` readable
/// `recuo_header`s (or be NULL with 0), each pointing to its bytes.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_plan_for_headers(
    attempts: *mut recuo_attempts,
    method: *const c_char,
    method_len: usize,
    headers: *const recuo_header,
    header_count: usize,
    send_keys: i32,
    out: *mut recuo_request_plan,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        set_plan(attempts, out, |policy| {
            let method = ptr::text(method, method_len)?;
            let headers = read_headers(headers, header_count)?;
            let send_keys = read_send_keys(send_keys)?;
            let headers = headers.iter().map(|(k, v)| (k.as_ref(), v));
            Ok(RequestPlan::for_headers(policy, method, headers, send_keys))
        })
    }
}

/// Says whether the request's body can be sent again (default true). A body that cannot — a
/// stream read once — gets one attempt: its outcome is judged and recorded, and the operation
/// gives up `RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED` with no retry decided and no budget spent.
///
/// Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED` (nothing changes);
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `attempts` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_set_replayable(
    attempts: *mut recuo_attempts,
    yes: bool,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { crate::attempts::build(attempts, Ok(yes), Operation::replayable) }
}

/// How the machine's operation reaches a caller of `style` (a `recuo_style` constant), its
/// last attempt having come to `*last`, into `*out` — `recuo_ending_for` with the machine's
/// reason; `RECUO_ENDING_RESPONSE` while it runs.
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_INVALID_ENUM`. On an error
/// `*out` is untouched.
///
/// # Safety
/// `attempts` must be NULL or a live handle; `last` NULL or a readable `recuo_last`; `out`
/// NULL or a writable `recuo_ending`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_ending(
    attempts: *const recuo_attempts,
    style: u32,
    last: *const recuo_last,
    out: *mut recuo_ending,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::fill(out, || {
            let a = ptr::input(attempts)?;
            let (last, style) = (read_last(last)?, recuo_style::core_of(style)?);
            Ok(recuo_ending::from_core(a.op.ending(style, last)))
        })
    }
}

/// The message of the machine's give-up (as `recuo_give_up_message` words it: its reason,
/// its attempts, `*last`, and the wait left at `now_ms` on your monotonic clock after a
/// server wait past the deadline), into `buf` (`len` bytes), NUL-terminated; `*written`
/// (when not NULL) receives its length without the NUL. An operation that did not give up
/// (it succeeded, or still runs) has no message: "" is written.
///
/// 256 bytes always suffice. Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is
/// written, NUL-terminated); `RECUO_ERR_NULL_ARGUMENT` (`attempts`, `last`, `buf`);
/// `RECUO_ERR_INVALID_ENUM`, with nothing written.
///
/// # Safety
/// `attempts` must be NULL or a live handle; `last` NULL or a readable `recuo_last`; `buf`
/// must point to `len` writable bytes; `written` NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempts_give_up_message(
    attempts: *const recuo_attempts,
    now_ms: u64,
    last: *const recuo_last,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        write_made(buf, len, written, || {
            let a = ptr::input(attempts)?;
            let last = read_last(last)?;
            Ok(a.op.give_up_message(now_ms, last).unwrap_or_default())
        })
    }
}

/// The name of the `recuo_key_to_send` constant `key` (`"none"`, `"caller"`, `"recuo"`: the
/// names every language uses), or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_key_to_send_name(key: u32) -> *const c_char {
    recuo_key_to_send::name_of(key)
}

/// The name of the `recuo_style` constant `style` (`"client"`, `"guide"`), or `"unknown"`.
/// Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_style_name(style: u32) -> *const c_char {
    recuo_style::name_of(style)
}

/// The name of the `recuo_ending` constant `ending` (`"response"`, `"error"`, `"give_up"`),
/// or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_ending_name(ending: u32) -> *const c_char {
    recuo_ending::name_of(ending)
}

/// The name of the `recuo_last_kind` constant `kind` (`"nothing"`, `"status"`,
/// `"transport"`, `"late"`), or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_last_kind_name(kind: u32) -> *const c_char {
    recuo_last_kind::name_of(kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attempts::{recuo_attempts_free, recuo_attempts_new};
    use crate::policy::{recuo_policy_free, recuo_policy_new_adapters};
    use crate::status::recuo_status::RECUO_ERR_BUFFER_TOO_SMALL;

    fn status(s: u16) -> recuo_last {
        recuo_last {
            kind: recuo_last_kind::RECUO_LAST_STATUS,
            status: s,
            transport: recuo_transport::RECUO_TRANSPORT_OTHER,
        }
    }

    #[test]
    fn the_longest_message_fits() {
        let longest = http::give_up_message(
            recuo::GiveUpReason::WaitExceedsDeadline,
            u32::MAX,
            Last::Late,
            Some(u64::MAX),
        );
        assert!(longest.len() < RECUO_GIVE_UP_MESSAGE_SIZE, "{longest}");
        let other = http::give_up_message(
            recuo::GiveUpReason::AttemptsExhausted,
            u32::MAX,
            Last::Transport(recuo::Transport::Timeout),
            Some(u64::MAX),
        );
        assert!(other.len() < longest.len(), "{other}");
    }

    #[test]
    fn names_are_the_core_names() {
        for k in [KeyToSend::Nothing, KeyToSend::Callers, KeyToSend::Recuos] {
            assert_eq!(
                recuo_key_to_send::from_core(k).name().to_str(),
                Ok(k.name())
            );
        }
        for e in [Ending::Response, Ending::Error, Ending::GiveUp] {
            assert_eq!(recuo_ending::from_core(e).name().to_str(), Ok(e.name()));
        }
        // SAFETY: static strings.
        let name = |p| unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap();
        assert_eq!(name(recuo_key_to_send_name(3)), "recuo");
        assert_eq!(name(recuo_key_to_send_name(0)), "unknown");
        assert_eq!(name(recuo_style_name(2)), "guide");
        assert_eq!(name(recuo_ending_name(3)), "give_up");
        assert_eq!(name(recuo_last_kind_name(4)), "late");
        assert_eq!(name(recuo_last_kind_name(5)), "unknown");
    }

    #[test]
    fn plans_endings_and_messages_are_the_core_ones() {
        let p = recuo_policy_new_adapters();
        let mut plan = recuo_request_plan {
            key: recuo_key_to_send::RECUO_KEY_NONE,
            idempotent: true,
        };
        let mut ending = recuo_ending::RECUO_ENDING_RESPONSE;
        let mut buf = [0u8; 256];
        let mut written = 0;
        // SAFETY: live handles, text and outputs.
        unsafe {
            assert_eq!(
                recuo_plan_request(p, c"POST".as_ptr(), 4, false, -1, &mut plan),
                RECUO_OK
            );
            assert_eq!(
                plan,
                recuo_request_plan {
                    key: recuo_key_to_send::RECUO_KEY_RECUO,
                    idempotent: false
                }
            );
            assert_eq!(
                recuo_plan_request(p, c"POST".as_ptr(), 4, false, 2, &mut plan),
                RECUO_ERR_INVALID_ENUM
            );
            assert_eq!(
                recuo_plan_request(p, c"\xff".as_ptr(), 1, false, -1, &mut plan),
                recuo_status::RECUO_ERR_NOT_UTF8
            );
            let last = status(503);
            assert_eq!(recuo_ending_for(2, 2, &last, &mut ending), RECUO_OK);
            assert_eq!(ending, recuo_ending::RECUO_ENDING_GIVE_UP);
            assert_eq!(recuo_ending_for(1, 2, &last, &mut ending), RECUO_OK);
            assert_eq!(ending, recuo_ending::RECUO_ENDING_RESPONSE);
            assert_eq!(
                recuo_ending_for(3, 2, &last, &mut ending),
                RECUO_ERR_INVALID_ENUM
            );
            let bad = RawOutcome {
                kind: 9,
                status: 0,
                transport: 0,
            };
            let bad = (&bad as *const RawOutcome).cast::<recuo_last>();
            assert_eq!(
                recuo_ending_for(1, 2, bad, &mut ending),
                RECUO_ERR_INVALID_ENUM
            );
            let rc = recuo_give_up_message(
                3,
                2,
                &status(429),
                true,
                3_599_998,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            );
            assert_eq!(rc, RECUO_OK);
            assert_eq!(
                std::str::from_utf8(&buf[..written]),
                Ok("recuo gave up after 2 attempts (wait_exceeds_deadline): HTTP 429; a retry is allowed in 3600 s")
            );
            let rc = recuo_give_up_message(
                0,
                2,
                &last,
                false,
                0,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            );
            assert_eq!(rc, RECUO_ERR_INVALID_ENUM);
            let rc = recuo_give_up_message(
                2,
                1,
                &last,
                false,
                0,
                buf.as_mut_ptr().cast(),
                8,
                &mut written,
            );
            assert_eq!((rc, written), (RECUO_ERR_BUFFER_TOO_SMALL, 7));

            let mut a = std::ptr::null_mut();
            assert_eq!(recuo_attempts_new(p, &mut a), RECUO_OK);
            assert_eq!(
                recuo_attempts_set_plan(a, c"PUT".as_ptr(), 3, true, -1, &mut plan),
                RECUO_OK
            );
            assert_eq!(
                plan,
                recuo_request_plan {
                    key: recuo_key_to_send::RECUO_KEY_CALLER,
                    idempotent: true
                }
            );
            let h = [recuo_header {
                name: c"idempotency-KEY".as_ptr(),
                name_len: 15,
                value: c"k".as_ptr(),
                value_len: 1,
            }];
            assert_eq!(
                recuo_attempts_set_plan_for_headers(
                    a,
                    c"POST".as_ptr(),
                    4,
                    h.as_ptr(),
                    1,
                    -1,
                    &mut plan
                ),
                RECUO_OK
            );
            assert_eq!(plan.key, recuo_key_to_send::RECUO_KEY_CALLER);
            assert_eq!(
                recuo_attempts_set_plan_for_headers(
                    a,
                    c"POST".as_ptr(),
                    4,
                    h.as_ptr(),
                    0,
                    0,
                    &mut plan
                ),
                RECUO_OK
            );
            assert_eq!(
                plan,
                recuo_request_plan {
                    key: recuo_key_to_send::RECUO_KEY_NONE,
                    idempotent: false
                }
            );
            assert_eq!(recuo_attempts_set_replayable(a, false), RECUO_OK);
            assert_eq!(recuo_attempts_ending(a, 2, &last, &mut ending), RECUO_OK);
            assert_eq!(ending, recuo_ending::RECUO_ENDING_RESPONSE);
            buf[0] = b'x';
            let rc = recuo_attempts_give_up_message(
                a,
                0,
                &last,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            );
            assert_eq!((rc, written, buf[0]), (RECUO_OK, 0, 0));
            recuo_attempts_free(a);
            recuo_policy_free(p);
        }
    }
}
