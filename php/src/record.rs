//! Records of attempts and results for PHP: the `$records` sink of `Recuo\retry`,
//! `Recuo\comRetry` and `Recuo\runBatch`, and `Recuo\Record` for PHP code with its own loop.
//!
//! Every record is the core's: [`recuo::AttemptRecord`] and [`recuo::FinalRecord`] redact the
//! URL and keep only the request id and the wait headers of a response, and
//! [`recuo::Record::to_json_line`] is the one way a record is written. PHP code receives that
//! very line decoded by PHP's own `json_decode($line, true)`: an array with the core's field
//! names, so no field is named twice. Which record a loop makes, and when, is the core's
//! [`recuo::Operation`]'s: the loops only hand its records to the sink.

use ext_php_rs::boxed::ZBox;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};
use recuo::{
    AttemptDecision, AttemptReason, AttemptRecord, Cause, FinalRecord, Outcome, Record, RequestLine,
};

use crate::convert::{count, header_pairs, json_decode, named, non_negative, Array, Bytes};
use crate::errors::{php_error, value_error, value_error_message};
use crate::policy::transport_arg;

/// The decision of an attempt that succeeded.
const DONE: &str = "done";
/// The reason of an attempt that succeeded.
const SUCCESS: &str = Cause::Success.name();

/// The request `$method` and `$url` describe (a URL's bytes that are not UTF-8
/// percent-encoded).
pub fn request_line(method: Bytes<'_>, url: Bytes<'_>) -> RequestLine {
    RequestLine {
        method: method.text().into_owned(),
        url: url.url_text().into_owned(),
    }
}

/// An HTTP status for a record: three digits (RFC 9110 §15).
pub fn record_status(function: &str, position: u32, status: i64) -> PhpResult<u16> {
    u16::try_from(status)
        .ok()
        .filter(|s| recuo::record::STATUSES.contains(s))
        .ok_or_else(|| value_error(function, position, "status", "must be between 100 and 999"))
}

/// The record as PHP reads it: the core's JSON line, decoded by `json_decode($line, true)`.
///
/// # Errors
/// An `\Error` should PHP's JSON extension fail to decode it (it is always built in).
pub fn record_array(function: &str, record: &Record) -> PhpResult<Zval> {
    json_decode(&record.to_json_line(), true)
        .filter(Zval::is_array)
        .ok_or_else(|| {
            php_error(format!(
                "{function}(): cannot decode a record with json_decode()"
            ))
        })
}

/// As [`record_array`], as a PHP array of its own (for a declared `array` return type).
fn record_table(function: &str, record: &Record) -> PhpResult<ZBox<ZendHashTable>> {
    record_array(function, record)?
        .array()
        .map(ToOwned::to_owned)
        .ok_or_else(|| php_error(format!("{function}(): no record")))
}

/// What an attempt's `$reason` must be.
const ATTEMPT_REASONS: &str = "must be a verdict's reason (\"rate_limited\", \"not_idempotent\", \
                               …) or a give-up reason (\"attempts_exhausted\", …)";

/// Records for PHP code with a loop of its own (an event loop, a queue
/// worker): the same records, redacted the same way, as the loops hand to their
/// `$records` sink — as arrays (`attempt()`, `result()`) or as the core's JSON lines
/// (`attemptJson()`, `resultJson()`).
#[php_class]
#[php(name = "Recuo\\Record", flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct RecordFactory;

/// The arguments of an attempt record, checked.
fn attempt_of(
    function: &str,
    startMs: i64,
    elapsedMs: i64,
    method: Bytes<'_>,
    url: Bytes<'_>,
    status: Option<i64>,
    error: Option<Bytes<'_>>,
    headers: Array<'_>,
    delayMs: Option<i64>,
    decision: Bytes<'_>,
    reason: Bytes<'_>,
) -> PhpResult<Record> {
    let elapsed = non_negative(function, 2, "elapsedMs", elapsedMs)?;
    let outcome = match (status, error) {
        (None, None) => Outcome::Success,
        (Some(status), None) => Outcome::Status(record_status(function, 5, status)?),
        (None, Some(kind)) => Outcome::Transport(transport_arg(function, 6, kind, true)?),
        (Some(_), Some(_)) => {
            return Err(value_error_message(format!(
                "{function}(): at most one of Argument #5 ($status) and Argument #6 ($error) \
                 may be given"
            )))
        }
    };
    let headers = header_pairs(function, 7, "headers", headers)?;
    let delay = delayMs
        .map(|d| non_negative(function, 8, "delayMs", d))
        .transpose()?;
    let decision: AttemptDecision = named(function, (9, "decision"), &decision.text(), "")?;
    let reason = AttemptReason::from_name(&reason.text())
        .ok_or_else(|| value_error(function, 10, "reason", ATTEMPT_REASONS))?;
    let request = request_line(method, url);
    Ok(Record::Attempt(AttemptRecord::new(
        startMs,
        elapsed,
        &request.method,
        &request.url,
        outcome,
        &headers,
        delay,
        decision,
        reason,
    )))
}

/// The arguments of a result record, checked.
fn result_of(
    function: &str,
    startMs: i64,
    method: Bytes<'_>,
    url: Bytes<'_>,
    attempts: i64,
    totalMs: i64,
    reason: Option<Bytes<'_>>,
) -> PhpResult<Record> {
    let attempts = count(function, 4, "attempts", attempts)?;
    let total = non_negative(function, 5, "totalMs", totalMs)?;
    let reason = reason
        .map(|r| named(function, (6, "reason"), &r.text(), "null, "))
        .transpose()?;
    let request = request_line(method, url);
    Ok(Record::Final(FinalRecord::new(
        startMs,
        &request.method,
        &request.url,
        reason,
        attempts,
        total,
    )))
}

/// The methods of `Recuo\Record`, in pairs that take the same arguments, checked by one `$of`:
/// the record as a PHP array (`$array`, named `$array_name` in messages), and as the core's
/// JSON line (`$json`).
macro_rules! record_methods {
    ($(
        $(#[$($array_attr:tt)*])*
        fn $array:ident = $array_name:literal;
        $(#[$($json_attr:tt)*])*
        fn $json:ident = $json_name:literal;
        ($($params:tt)*) => $of:ident($($arg:ident),*);
    )*) => {
        php_impl!({
            impl RecordFactory {
                /// Not constructible: the methods are static.
                private_constructor!();
                $(
                    $(#[$($array_attr)*])*
                    pub fn $array($($params)*) -> PhpResult<ZBox<ZendHashTable>> {
                        guarded!($array_name, record_table(F, &$of(F, $($arg),*)?))
                    }

                    $(#[$($json_attr)*])*
                    pub fn $json($($params)*) -> PhpResult<String> {
                        guarded!($json_name, Ok($of(F, $($arg),*)?.to_json_line()))
                    }
                )*
            }
        });
    };
}

record_methods! {
    /// The record of one attempt: started at `$startMs` (ms since the Unix epoch), took
    /// `$elapsedMs`; `$method` and `$url` (redacted here); the `$status` received or the
    /// transport `$error` (neither: a success with no HTTP meaning); the response's
    /// `$headers` (only the request id and the wait headers are kept); the `$delayMs` chosen
    /// before the next attempt; the `$decision` (`done`, `retry`, `give_up`) and its
    /// `$reason` (a verdict's reason or a give-up reason).
    #[php(defaults(headers = Array::EMPTY, decision = DONE, reason = SUCCESS))]
    fn attempt = "Recuo\\Record::attempt";
    /// As `attempt()`, as the core's JSON line (no newline at the end).
    #[php(defaults(headers = Array::EMPTY, decision = DONE, reason = SUCCESS))]
    fn attempt_json = "Recuo\\Record::attemptJson";
    (
        startMs: i64,
        elapsedMs: i64,
        method: Bytes<'_>,
        url: Bytes<'_>,
        status: Option<i64>,
        error: Option<Bytes<'_>>,
        headers: Array<'_>,
        delayMs: Option<i64>,
        decision: Bytes<'_>,
        reason: Bytes<'_>,
    ) => attempt_of(
        startMs, elapsedMs, method, url, status, error, headers, delayMs, decision, reason
    );

    /// The record of one operation's result: its first attempt started at `$startMs` (ms
    /// since the Unix epoch); `$method` and `$url` (redacted here); `$attempts` made;
    /// `$totalMs` from the start of the first attempt to the end; the give-up `$reason`, or
    /// null for a success.
    fn result = "Recuo\\Record::result";
    /// As `result()`, as the core's JSON line (no newline at the end).
    fn result_json = "Recuo\\Record::resultJson";
    (
        startMs: i64,
        method: Bytes<'_>,
        url: Bytes<'_>,
        attempts: i64,
        totalMs: i64,
        reason: Option<Bytes<'_>>,
    ) => result_of(startMs, method, url, attempts, totalMs, reason);
}
