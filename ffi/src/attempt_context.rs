//! `recuo_attempt_context_*`: what an attempt of `recuo_retry_http` says it received.

use recuo::Seen;

use crate::prelude::*;

/// What an attempt of `recuo_retry_http` tells recuo besides its verdict: an opaque handle,
/// valid during the operation's call only, on which the operation calls
/// `recuo_attempt_context_set_response`. Backed by a Rust struct holding what the attempt's
/// record keeps of the response (its outcome, request id and wait headers, redacted).
#[derive(Debug, Default)]
pub struct recuo_attempt_context {
    pub(crate) response: Option<Seen>,
}

/// Tells `recuo_retry_http` what the attempt running came to: `outcome` (a status, a
/// transport failure, or a success for a task with no HTTP meaning) and the response's
/// headers (`headers`, `header_count`; NULL only with 0). recuo copies them before this
/// returns (your buffers may go at once); a second call replaces the first. The records keep
/// of the headers only the request id and the wait headers; header bytes that are not UTF-8
/// are read as U+FFFD (see `recuo_header`).
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`context`, `outcome`, or a pointer NULL
/// with a non-zero length); `RECUO_ERR_INVALID_ENUM` (a field of `outcome` that is none of
/// its constants); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error nothing is set.
///
/// # Safety
/// `context` must be NULL or the handle passed to the running operation; `outcome` NULL or a
/// readable `recuo_outcome`; `headers` must point to `header_count` readable `recuo_header`s
/// (or be NULL with 0), each pointing to its bytes.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempt_context_set_response(
    context: *mut recuo_attempt_context,
    outcome: *const recuo_outcome,
    headers: *const recuo_header,
    header_count: usize,
) -> recuo_status {
    checked(|| {
        // SAFETY: each conversion is vouched for by the caller (see # Safety).
        let context = unsafe { ptr::handle(context) }?;
        // SAFETY: as above.
        let (outcome, headers) = unsafe { read_response(outcome, headers, header_count) }?;
        context.response = Some(Seen::new(outcome, &headers));
        Ok(RECUO_OK)
    })
}
