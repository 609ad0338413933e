//! Attempt and result records for C: the core's records (`recuo::AttemptRecord`,
//! `recuo::FinalRecord`), redacted when they are built, as JSON lines — into the caller's
//! buffer for a program driving the state machine itself, or handed to a record sink by
//! `recuo_retry_http` and `recuo_retry`.

use std::ptr::addr_of;

use recuo::{
    AttemptDecision, AttemptReason, AttemptRecord, Decision, FinalRecord, Record, Verdict,
};

use crate::prelude::*;

/// Where records go: called with one record as a JSON object on one line (no newline at the
/// end; `json_line` is also NUL-terminated, and `len` excludes the NUL), and the call's
/// `user_data`. The line is valid during the call only: copy it to keep it. Every URL and
/// header in it was redacted before it was built — it may be logged as it is.
pub type recuo_record_sink_fn =
    Option<unsafe extern "C" fn(json_line: *const c_char, len: usize, user_data: *mut c_void)>;

/// What was decided after an attempt, as `recuo_record_attempt_json` records it. (`4` and
/// `5`, the start of an attempt and the pass through a gate, are retired.)
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_decision_kind {
    /// The operation succeeded: stop.
    RECUO_DECISION_DONE = 1,
    /// Sleep `delay_ms`, then make attempt `next_attempt`.
    RECUO_DECISION_RETRY = 2,
    /// Stop without success, for `reason`.
    RECUO_DECISION_GIVE_UP = 3,
    // 4: reserved (was RECUO_DECISION_PROCEED)
    // 5: reserved (was RECUO_DECISION_ENTER)
}

c_enum!(recuo_decision_kind: AttemptDecision {
    RECUO_DECISION_DONE = [AttemptDecision::Done] => c"done",
    RECUO_DECISION_RETRY = [AttemptDecision::Retry] => c"retry",
    RECUO_DECISION_GIVE_UP = [AttemptDecision::GiveUp] => c"give_up",
});

/// What was decided after an attempt, for its record (`recuo_record_attempt_json`): a plain
/// struct, yours to fill — from the `recuo_step` that followed the attempt's verdict
/// (`RECUO_STEP_SLEEP`: retry; `_DONE`; `_GAVE_UP`), or by hand for a loop of your own.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_decision {
    /// What was decided: a `recuo_decision_kind` constant.
    pub kind: recuo_decision_kind,
    /// For `RECUO_DECISION_RETRY`: milliseconds to wait before the next attempt; else 0.
    pub delay_ms: u64,
    /// For `RECUO_DECISION_RETRY`: the number of the next attempt, counted from 0; else 0.
    /// (Not recorded.)
    pub next_attempt: u32,
    /// For `RECUO_DECISION_GIVE_UP`: why; else `RECUO_GIVE_UP_NONE`.
    pub reason: recuo_give_up_reason,
    /// Whether `retry_at_ms` holds an instant.
    pub has_retry_at: bool,
    /// For `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` with a finite wait: the instant, on the
    /// caller's monotonic clock, from which the server would accept a retry. Else 0. (Not
    /// recorded.)
    pub retry_at_ms: u64,
}

/// The name of the `recuo_decision_kind` constant `kind` (`"done"`, `"retry"`, `"give_up"`:
/// as a record writes it), or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_decision_kind_name(kind: u32) -> *const c_char {
    recuo_decision_kind::name_of(kind)
}

/// Reads C's decision after an attempt judged `verdict`, each field as the plain number it
/// holds (a `repr(u32)` enum is a u32 in memory): what the record names, its delay, and the
/// reason the core gives the decision (the next attempt's number does not enter it).
///
/// # Safety
/// `p` must point to a readable `recuo_decision`.
unsafe fn read_decision(
    p: *const recuo_decision,
    verdict: &Verdict,
) -> Result<(AttemptDecision, Option<u64>, AttemptReason), recuo_status> {
    // SAFETY: the caller vouches for the memory.
    let (kind, delay_ms, reason) = unsafe {
        (
            addr_of!((*p).kind).cast::<u32>().read(),
            addr_of!((*p).delay_ms).read(),
            addr_of!((*p).reason).cast::<u32>().read(),
        )
    };
    let name = recuo_decision_kind::core_of(kind)?;
    let decision = match name {
        AttemptDecision::Done => Decision::Done,
        AttemptDecision::Retry => Decision::Retry {
            delay_ms,
            next_attempt: 0,
        },
        AttemptDecision::GiveUp => Decision::GiveUp {
            reason: recuo_give_up_reason::reason_of(reason)?,
            retry_at_ms: None,
        },
    };
    let delay = (name == AttemptDecision::Retry).then_some(delay_ms);
    Ok((name, delay, recuo::attempt_reason(&decision, verdict)))
}

/// Builds the record of one attempt, as a JSON line, into `buf` (`buf_len` bytes),
/// NUL-terminated; `*written` (when not NULL) receives its length without the NUL. For a C
/// program that runs a retry loop of its own with its own HTTP client (a machine keeps its
/// records itself: `recuo_attempts_set_records`): call it once the attempt is judged, with
/// what the attempt was and what was decided.
///
/// The record is the core's, as every language writes it:
///
/// ```text
/// {"type":"attempt","start":"2026-11-30T10:26:05.123Z","elapsed_ms":250,"method":"GET",
///  "url":"https://api.example.com/users/[email]?api_key=[redacted]","status":429,
///  "request_id":"req-7","wait_headers":{"Retry-After":"12"},"delay_ms":12345,
///  "decision":"retry","reason":"rate_limited"}
/// ```
///
/// (one line). The URL is redacted (see `recuo_redact_url`; `"url_malformed":true` follows
/// it when it was malformed, or not UTF-8); of the headers only the request id
/// (`X-Request-Id`, `X-Amzn-RequestId`, `X-Amz-Request-Id`, `CF-Ray`, `X-Correlation-Id`: the
/// first found) and the wait headers (`Retry-After`, `RateLimit*`, `X-RateLimit-*`) are kept.
///
/// * `start_unix_ms`: when the attempt started, milliseconds since the Unix epoch
///   (`recuo_now_ms()`), shown in RFC 3339, UTC; `elapsed_ms`: how long it took.
/// * `method`, `method_len`: the HTTP method (UTF-8; may be empty for a task with no HTTP
///   meaning); `url`, `url_len`: the URL as requested — redacted here. Bytes of the URL that
///   are not UTF-8 are replaced by U+FFFD (and the URL is marked malformed).
/// * `outcome`: what the attempt came to; `headers`, `header_count`: the response's headers
///   (NULL only with 0; bytes that are not UTF-8 read as U+FFFD).
/// * `verdict`: the attempt's verdict (from `recuo_classify`, or written by hand);
///   `decision`: what was decided after it — `RECUO_DECISION_DONE`, `_RETRY` (its
///   `delay_ms` is recorded) or `_GIVE_UP` (with its reason).
///
/// The record's `decision` is the decision's name; its `reason` is the verdict's cause
/// (`success`, `rate_limited`, `unavailable`, `not_idempotent`, `tls`, …), or, for a give-up
/// of the loop's own (`attempts_exhausted`, `wait_exceeds_deadline`, `budget_exhausted`,
/// `cancelled`), that reason.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written, cut at a character
/// boundary and NUL-terminated: no longer a JSON object — call again with a larger buffer,
/// the line is built again the same); and with nothing written: `RECUO_ERR_NULL_ARGUMENT`
/// (`outcome`, `verdict`, `decision`, `buf`, or a pointer with a non-zero length),
/// `RECUO_ERR_INVALID_ENUM` (a field of `outcome`, `verdict` or `decision` that is none of its
/// constants, or a give-up with `RECUO_GIVE_UP_NONE`),
/// `RECUO_ERR_NOT_UTF8` (`method`), `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// Every pointer must be NULL or valid for its length (`outcome`, `verdict`, `decision`: one
/// readable struct each); `buf` must point to `buf_len` writable bytes; `written` NULL or a
/// writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_record_attempt_json(
    start_unix_ms: i64,
    elapsed_ms: u64,
    method: *const c_char,
    method_len: usize,
    url: *const c_char,
    url_len: usize,
    outcome: *const recuo_outcome,
    headers: *const recuo_header,
    header_count: usize,
    verdict: *const recuo_verdict,
    decision: *const recuo_decision,
    buf: *mut c_char,
    buf_len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: each conversion below is vouched for by the caller (see # Safety), and `buf`,
    // `buf_len` and `written`.
    unsafe {
        write_made(buf, buf_len, written, || {
            if verdict.is_null() || decision.is_null() {
                return Err(RECUO_ERR_NULL_ARGUMENT);
            }
            let (method, url, (outcome, headers), verdict) = (
                ptr::text(method, method_len)?,
                ptr::bytes(url, url_len)?,
                read_response(outcome, headers, header_count)?,
                read_verdict(verdict)?,
            );
            let (name, delay, reason) = read_decision(decision, &verdict)?;
            let (url, replaced) = lossy(url);
            let mut r = AttemptRecord::new(
                start_unix_ms,
                elapsed_ms,
                method,
                &url,
                outcome,
                &headers,
                delay,
                name,
                reason,
            );
            r.url_malformed |= replaced;
            Ok(Record::Attempt(r).to_json_line())
        })
    }
}

/// Builds the record of one operation's result, as a JSON line, into `buf` (`buf_len`
/// bytes), NUL-terminated; `*written` (when not NULL) receives its length without the NUL.
/// For a C program driving the state machine: call it once the operation is over, with the
/// report of `recuo_attempts_report`.
///
/// ```text
/// {"type":"result","start":"2026-11-30T10:26:05.123Z","method":"POST",
///  "url":"https://api.example.com/pay?token=[redacted]","result":"gave_up","attempts":5,
///  "reason":"attempts_exhausted","total_ms":1234}
/// ```
///
/// (one line). `result` is `success` when the report's reason is `RECUO_GIVE_UP_NONE` (then
/// `reason` is `null`), else `gave_up` with the reason's name; `attempts` and `total_ms` are
/// the report's `attempts` and `elapsed_ms`. `start_unix_ms` is when the first attempt
/// started (ms since the Unix epoch); `method` and `url` as in `recuo_record_attempt_json`.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (truncated, NUL-terminated); with
/// nothing written: `RECUO_ERR_NULL_ARGUMENT` (`report`, `buf`, or a pointer with a non-zero
/// length), `RECUO_ERR_INVALID_ENUM` (the report's `reason`), `RECUO_ERR_NOT_UTF8`
/// (`method`), `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// `method` and `url` must be NULL or valid for their lengths; `report` NULL or a readable
/// `recuo_report`; `buf` must point to `buf_len` writable bytes; `written` NULL or a writable
/// `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_record_result_json(
    start_unix_ms: i64,
    method: *const c_char,
    method_len: usize,
    url: *const c_char,
    url_len: usize,
    report: *const recuo_report,
    buf: *mut c_char,
    buf_len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: each conversion below is vouched for by the caller (see # Safety), each field
    // read as the plain number it holds; and `buf`, `buf_len` and `written`.
    unsafe {
        write_made(buf, buf_len, written, || {
            if report.is_null() {
                return Err(RECUO_ERR_NULL_ARGUMENT);
            }
            let (method, url, attempts, reason, total_ms, by) = (
                ptr::text(method, method_len)?,
                ptr::bytes(url, url_len)?,
                addr_of!((*report).attempts).read(),
                addr_of!((*report).reason).cast::<u32>().read(),
                addr_of!((*report).elapsed_ms).read(),
                addr_of!((*report).stopped_by).cast::<u32>().read(),
            );
            let (reason, by) = (
                recuo_give_up_reason::core_of(reason)?,
                recuo_give_up_reason::core_of(by)?,
            );
            let url = lossy(url).0;
            let mut r = FinalRecord::new(start_unix_ms, method, &url, reason, attempts, total_ms);
            r.stopped_by = by;
            Ok(Record::Final(r).to_json_line())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attempts::recuo_give_up_reason::RECUO_GIVE_UP_NONE;
    use crate::classify::{recuo_outcome_kind, recuo_transport};
    use crate::status::recuo_status::{RECUO_ERR_BUFFER_TOO_SMALL, RECUO_ERR_NOT_UTF8, RECUO_OK};
    use recuo::Decision;
    use recuo::{Cause, GiveUpReason, Verdict};

    impl recuo_decision {
        /// The C form of a core decision.
        fn from_core(d: Decision) -> Self {
            let none = recuo_decision {
                kind: recuo_decision_kind::RECUO_DECISION_DONE,
                delay_ms: 0,
                next_attempt: 0,
                reason: RECUO_GIVE_UP_NONE,
                has_retry_at: false,
                retry_at_ms: 0,
            };
            match d {
                Decision::Done => none,
                Decision::Retry {
                    delay_ms,
                    next_attempt,
                } => recuo_decision {
                    kind: recuo_decision_kind::RECUO_DECISION_RETRY,
                    delay_ms,
                    next_attempt,
                    ..none
                },
                Decision::GiveUp {
                    reason,
                    retry_at_ms,
                } => recuo_decision {
                    kind: recuo_decision_kind::RECUO_DECISION_GIVE_UP,
                    reason: recuo_give_up_reason::from_core(Some(reason)),
                    has_retry_at: retry_at_ms.is_some(),
                    retry_at_ms: retry_at_ms.unwrap_or(0),
                    ..none
                },
            }
        }
    }

    fn h(name: &'static std::ffi::CStr, value: &'static std::ffi::CStr) -> recuo_header {
        recuo_header {
            name: name.as_ptr(),
            name_len: name.to_bytes().len(),
            value: value.as_ptr(),
            value_len: value.to_bytes().len(),
        }
    }

    fn attempt(
        method: &[u8],
        url: &[u8],
        verdict: &recuo_verdict,
        decision: &recuo_decision,
        cap: usize,
    ) -> (recuo_status, String) {
        let headers = [
            h(c"Authorization", c"Bearer s3cr3t"),
            h(c"Retry-After", c"12"),
            h(c"X-Request-Id", c"req-7"),
        ];
        let outcome = recuo_outcome {
            kind: recuo_outcome_kind::RECUO_OUTCOME_STATUS,
            status: 429,
            transport: recuo_transport::RECUO_TRANSPORT_OTHER,
        };
        let mut buf = vec![0u8; cap];
        let mut written = 0;
        // SAFETY: live slices, structs and outputs.
        let rc = unsafe {
            recuo_record_attempt_json(
                784_111_777_123,
                250,
                method.as_ptr().cast(),
                method.len(),
                url.as_ptr().cast(),
                url.len(),
                &outcome,
                headers.as_ptr(),
                3,
                verdict,
                decision,
                buf.as_mut_ptr().cast(),
                cap,
                &mut written,
            )
        };
        (rc, String::from_utf8(buf[..written].to_vec()).unwrap())
    }

    #[test]
    fn an_attempt_is_the_core_record() {
        let verdict = recuo_verdict::from_core(Verdict::Retry {
            cause: Cause::RateLimited,
            server_wait: None,
        });
        let decision = recuo_decision::from_core(Decision::Retry {
            delay_ms: 12_345,
            next_attempt: 1,
        });
        let url = "https://u:pw@api.example.com/users/ana@example.com?api_key=k1&page=2";
        let (rc, line) = attempt(b"GET", url.as_bytes(), &verdict, &decision, 512);
        assert_eq!(rc, RECUO_OK);
        assert_eq!(
            line,
            r#"{"type":"attempt","start":"1994-11-06T08:49:37.123Z","elapsed_ms":250,"method":"GET","url":"https://api.example.com/users/[email]?api_key=[redacted]&page=2","status":429,"request_id":"req-7","wait_headers":{"Retry-After":"12"},"delay_ms":12345,"decision":"retry","reason":"rate_limited"}"#
        );
        let (rc, short) = attempt(b"GET", url.as_bytes(), &verdict, &decision, 20);
        assert_eq!(
            (rc, short.as_str()),
            (RECUO_ERR_BUFFER_TOO_SMALL, &line[..19])
        );
        let (rc, _) = attempt(b"G\xffT", url.as_bytes(), &verdict, &decision, 512);
        assert_eq!(rc, RECUO_ERR_NOT_UTF8);
        let (rc, line) = attempt(b"GET", b"/a\xff?token=\xff", &verdict, &decision, 512);
        assert_eq!(rc, RECUO_OK);
        assert!(line.contains("\"url\":\"/a\u{fffd}?token=[redacted]\",\"url_malformed\":true"));
    }

    #[test]
    fn reasons_are_the_cause_unless_the_loop_gave_up_on_its_own() {
        let verdict = recuo_verdict::from_core(Verdict::Retry {
            cause: Cause::Unavailable,
            server_wait: None,
        });
        let give_up = |reason| {
            recuo_decision::from_core(Decision::GiveUp {
                reason,
                retry_at_ms: None,
            })
        };
        let (_, line) = attempt(
            b"GET",
            b"/",
            &verdict,
            &give_up(GiveUpReason::AttemptsExhausted),
            512,
        );
        assert!(
            line.ends_with(
                r#""delay_ms":null,"decision":"give_up","reason":"attempts_exhausted"}"#
            ),
            "{line}"
        );
        let refused = recuo_verdict::from_core(Verdict::GiveUp {
            cause: Cause::NotIdempotent,
        });
        let (_, line) = attempt(
            b"POST",
            b"/",
            &refused,
            &give_up(GiveUpReason::Permanent),
            512,
        );
        assert!(
            line.ends_with(r#""decision":"give_up","reason":"not_idempotent"}"#),
            "{line}"
        );
        let done = recuo_decision::from_core(Decision::Done);
        let ok = recuo_verdict::from_core(Verdict::Success);
        let (_, line) = attempt(b"GET", b"/", &ok, &done, 512);
        assert!(
            line.ends_with(r#""decision":"done","reason":"success"}"#),
            "{line}"
        );
        let mut no_reason = give_up(GiveUpReason::Cancelled);
        no_reason.reason = RECUO_GIVE_UP_NONE;
        assert_eq!(
            attempt(b"GET", b"/", &ok, &no_reason, 512).0,
            RECUO_ERR_INVALID_ENUM
        );
    }

    #[test]
    fn a_result_is_the_core_record() {
        let report = recuo_report::from_core(
            &recuo::Report {
                attempts: 5,
                reason: Some(GiveUpReason::AttemptsExhausted),
                elapsed_ms: 1234,
                delays_ms: vec![],
                stopped_by: None,
                retry_at_unix_ms: None,
            },
            None,
        );
        let mut buf = [0u8; 256];
        let mut written = 0;
        let url = b"/pay?token=x\"y";
        // SAFETY: live slices, struct and outputs.
        let rc = unsafe {
            recuo_record_result_json(
                0,
                c"POST".as_ptr(),
                4,
                url.as_ptr().cast(),
                url.len(),
                &report,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            )
        };
        assert_eq!(rc, RECUO_OK);
        assert_eq!(
            std::str::from_utf8(&buf[..written]).unwrap(),
            r#"{"type":"result","start":"1970-01-01T00:00:00.000Z","method":"POST","url":"/pay?token=[redacted]","result":"gave_up","attempts":5,"reason":"attempts_exhausted","total_ms":1234}"#
        );
        // SAFETY: the NULL check comes before any read.
        let rc = unsafe {
            recuo_record_result_json(
                0,
                std::ptr::null(),
                0,
                std::ptr::null(),
                0,
                std::ptr::null(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            )
        };
        assert_eq!(rc, RECUO_ERR_NULL_ARGUMENT);
    }
}
