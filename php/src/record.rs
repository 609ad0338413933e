//! Records of attempts and results (SPEC §7) for PHP: the `$records` sink of `Recuo\retry`,
//! `Recuo\comRetry` and `Recuo\runBatch`, and `Recuo\Record` for PHP code with its own loop.
//!
//! Every record is the core's: [`recuo::AttemptRecord`] and [`recuo::FinalRecord`] redact the
//! URL and keep only the request id and the wait headers of a response, and
//! [`recuo::Record::to_json_line`] is the one way a record is written. PHP code receives that
//! very line decoded by PHP's own `json_decode($line, true)`: an array with the core's field
//! names, so no field is named twice. [`Journal`] only keeps what the records of one
//! operation need while its loop runs: when each attempt started, what it sent and received,
//! the verdict on it, and what the loop decided.

use ext_php_rs::boxed::ZBox;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};
use ext_php_rs::zend::ce;
use recuo::{AttemptRecord, Cause, FinalRecord, GiveUpReason, Outcome, Record, Transport};

use crate::convert::{header_pairs, Array, Bytes};
use crate::errors::{guarded, value_error, value_error_message};
use crate::policy::TRANSPORTS;

/// The decisions an attempt record may hold.
const DECISIONS: [&str; 3] = [DONE, "retry", "give_up"];
/// The decision of an attempt that succeeded.
const DONE: &str = "done";
/// The reason of an attempt that succeeded.
const SUCCESS: &str = Cause::Success.name();

/// The request an attempt sends, as its record describes it (the URL as given: the core
/// redacts it when it makes the record).
#[derive(Debug, Clone, Default)]
pub struct RequestLine {
    /// The HTTP method; empty for a task with no HTTP meaning.
    pub method: String,
    /// The URL, not yet redacted.
    pub url: String,
}

impl RequestLine {
    /// The request `$method` and `$url` describe (a URL's bytes that are not UTF-8
    /// percent-encoded).
    pub fn new(method: Bytes<'_>, url: Bytes<'_>) -> Self {
        RequestLine {
            method: method.text().into_owned(),
            url: url.url_text().into_owned(),
        }
    }
}

/// What an attempt came to, for its record: the outcome and the response's headers (of
/// which the core keeps the request id and the wait headers only).
#[derive(Debug, Clone)]
pub struct Seen {
    /// A status, a transport failure, or a success with no HTTP meaning.
    pub outcome: Outcome,
    /// The response's headers, as given.
    pub headers: Vec<(String, String)>,
}

/// An HTTP status for a record: three digits (RFC 9110 §15).
pub fn record_status(function: &str, position: u32, status: i64) -> PhpResult<u16> {
    u16::try_from(status)
        .ok()
        .filter(|s| (100..=999).contains(s))
        .ok_or_else(|| value_error(function, position, "status", "must be between 100 and 999"))
}

/// The record as PHP reads it: the core's JSON line, decoded by `json_decode($line, true)`.
///
/// # Errors
/// An `\Error` should PHP's JSON extension fail to decode it (it is always built in).
pub fn record_array(function: &str, record: &Record) -> PhpResult<Zval> {
    let line = record.to_json_line();
    let failed = || {
        PhpException::new(
            format!("{function}(): cannot decode a record with json_decode()"),
            0,
            ce::error(),
        )
    };
    let decode = ZendCallable::try_from_name("json_decode").map_err(|_| failed())?;
    let array = decode.try_call(vec![&line, &true]).map_err(|_| failed())?;
    if array.is_array() {
        Ok(array)
    } else {
        Err(failed())
    }
}

/// As [`record_array`], as a PHP array of its own (for a declared `array` return type).
fn record_table(function: &str, record: &Record) -> PhpResult<ZBox<ZendHashTable>> {
    let array = record_array(function, record)?;
    array
        .array()
        .map(ToOwned::to_owned)
        .ok_or_else(|| PhpException::new(format!("{function}(): no record"), 0, ce::error()))
}

/// The attempt under way, or the one just made and not yet recorded.
#[derive(Debug)]
struct Current {
    /// When it started: ms since the Unix epoch, and ms on the loop's monotonic clock.
    start_unix_ms: i64,
    start_mono_ms: u64,
    /// How long it took (set when it ends).
    elapsed_ms: u64,
    /// What it sent, when the operation said so.
    request: Option<RequestLine>,
    /// What it came to: as the operation said, else as the verdict on it read it.
    seen: Option<Seen>,
    /// Whether it failed.
    failed: bool,
    /// The verdict on its failure, when one was asked for.
    verdict: Option<recuo::Verdict>,
}

/// What the records of one operation need, kept while its loop runs; it makes the records,
/// the loop hands them to the sink.
#[derive(Debug)]
pub struct Journal {
    /// The request the loop was given (`method:`, `url:`).
    request: RequestLine,
    /// When the first attempt started: ms since the Unix epoch, and on the monotonic clock.
    first: Option<(i64, u64)>,
    /// The request the latest attempt sent, for the result record.
    last_request: Option<RequestLine>,
    /// The attempt under way or not yet recorded.
    current: Option<Current>,
}

impl Journal {
    /// The journal of an operation that sends `request` (unless its attempts say otherwise).
    pub fn new(request: RequestLine) -> Self {
        Journal {
            request,
            first: None,
            last_request: None,
            current: None,
        }
    }

    /// An attempt starts now (ms since the Unix epoch; ms on the loop's monotonic clock).
    pub fn started(&mut self, unix_ms: i64, mono_ms: u64) {
        self.first.get_or_insert((unix_ms, mono_ms));
        self.current = Some(Current {
            start_unix_ms: unix_ms,
            start_mono_ms: mono_ms,
            elapsed_ms: 0,
            request: None,
            seen: None,
            failed: false,
            verdict: None,
        });
    }

    /// The attempt ended at `mono_ms`, having failed or not; the operation said it sent
    /// `request` and received `response`, when it did.
    pub fn ended(
        &mut self,
        mono_ms: u64,
        failed: bool,
        request: Option<RequestLine>,
        response: Option<Seen>,
    ) {
        if let Some(current) = &mut self.current {
            current.elapsed_ms = mono_ms.saturating_sub(current.start_mono_ms);
            current.failed = failed;
            if request.is_some() {
                self.last_request.clone_from(&request);
            }
            current.request = request;
            current.seen = response;
        }
    }

    /// The verdict on the failure just recorded, and what it judged (when it came from
    /// `Recuo\classify`): the outcome and headers for the record, unless the operation
    /// already said what it received.
    pub fn judged(&mut self, verdict: recuo::Verdict, seen: Option<Seen>) {
        if let Some(current) = &mut self.current {
            current.verdict = Some(verdict);
            if current.seen.is_none() {
                current.seen = seen;
            }
        }
    }

    /// Whether the attempt just made failed and nothing said what it came to: no
    /// `recordResponse()`, no verdict.
    pub fn unjudged(&self) -> bool {
        self.current
            .as_ref()
            .is_some_and(|c| c.failed && c.seen.is_none() && c.verdict.is_none())
    }

    /// What the attempt just made came to, when nothing said it yet (without a verdict:
    /// the loop's own reason stays the record's).
    pub fn saw(&mut self, seen: Option<Seen>) {
        if let Some(current) = &mut self.current {
            if current.seen.is_none() {
                current.seen = seen;
            }
        }
    }

    /// The record of the attempt just made, decided `decision` for `reason`.
    fn attempt_record(
        &mut self,
        delay_ms: Option<u64>,
        decision: &str,
        reason: &str,
    ) -> Option<Record> {
        let current = self.current.take()?;
        let request = current.request.as_ref().unwrap_or(&self.request);
        let (outcome, headers) = match current.seen {
            Some(Seen { outcome, headers }) => (outcome, headers),
            // A failure nothing said more about: an error with no HTTP meaning.
            None if current.failed => (Outcome::Transport(Transport::Other), Vec::new()),
            None => (Outcome::Success, Vec::new()),
        };
        Some(Record::Attempt(AttemptRecord::new(
            current.start_unix_ms,
            current.elapsed_ms,
            &request.method,
            &request.url,
            outcome,
            &headers,
            delay_ms,
            decision,
            reason,
        )))
    }

    /// The result record, at `mono_ms` (or at `unix_ms` when no attempt started).
    fn result_record(
        &self,
        reason: Option<GiveUpReason>,
        attempts: u32,
        unix_ms: i64,
        mono_ms: u64,
    ) -> Record {
        let request = self.last_request.as_ref().unwrap_or(&self.request);
        let (start, total) = match self.first {
            Some((start_unix, start_mono)) => (start_unix, mono_ms.saturating_sub(start_mono)),
            None => (unix_ms, 0),
        };
        Record::Final(FinalRecord::new(
            start,
            &request.method,
            &request.url,
            reason.map(GiveUpReason::name),
            attempts,
            total,
        ))
    }

    /// The record of the attempt that failed and is retried after `delay_ms`: its reason is
    /// the verdict's cause.
    pub fn retry(&mut self, delay_ms: u64) -> Option<Record> {
        let cause = self
            .current
            .as_ref()
            .and_then(|c| c.verdict)
            .map_or(Cause::ServerError, |v| v.cause());
        self.attempt_record(Some(delay_ms), "retry", cause.name())
    }

    /// The loop succeeded: the last attempt's record (`done`, `success`) and the result.
    pub fn done(&mut self, attempts: u32, unix_ms: i64, mono_ms: u64) -> Vec<Record> {
        let mut records: Vec<Record> = self
            .attempt_record(None, "done", Cause::Success.name())
            .into_iter()
            .collect();
        records.push(self.result_record(None, attempts, unix_ms, mono_ms));
        records
    }

    /// The loop gave up for `reason`: the last attempt's record, when it is not recorded yet,
    /// and the result. The attempt's reason is the verdict's cause when the verdict gave up
    /// (`not_idempotent`, `permanent`, `tls`: more than the loop's `permanent`), else the
    /// loop's reason (`attempts_exhausted`, `wait_exceeds_deadline`, …).
    pub fn give_up(
        &mut self,
        reason: GiveUpReason,
        attempts: u32,
        unix_ms: i64,
        mono_ms: u64,
    ) -> Vec<Record> {
        let why = match self.current.as_ref().and_then(|c| c.verdict) {
            Some(recuo::Verdict::GiveUp { cause }) if cause != Cause::Success => cause.name(),
            _ => reason.name(),
        };
        let mut records: Vec<Record> = if self.current.as_ref().is_some_and(|c| c.failed) {
            self.attempt_record(None, "give_up", why)
                .into_iter()
                .collect()
        } else {
            // Cancelled before the attempt could start: nothing to record but the result.
            self.current = None;
            Vec::new()
        };
        records.push(self.result_record(Some(reason), attempts, unix_ms, mono_ms));
        records
    }
}

/// The result record of an operation a batch never started (its deadline came first):
/// given up, `cancelled`, with no attempt.
pub fn not_started(unix_ms: i64) -> Record {
    Journal::new(RequestLine::default()).result_record(Some(GiveUpReason::Cancelled), 0, unix_ms, 0)
}

/// A reason an attempt record may give: a verdict's cause or a give-up reason.
fn is_reason(name: &str) -> bool {
    Cause::from_name(name).is_some() || GiveUpReason::ALL.iter().any(|r| r.name() == name)
}

/// A give-up reason by its name.
fn give_up_reason(function: &str, position: u32, name: &str) -> PhpResult<GiveUpReason> {
    GiveUpReason::ALL
        .into_iter()
        .find(|r| r.name() == name)
        .ok_or_else(|| {
            value_error(
                function,
                position,
                "reason",
                "must be null, \"permanent\", \"attempts_exhausted\", \"wait_exceeds_deadline\", \
                 \"budget_exhausted\" or \"cancelled\"",
            )
        })
}

/// A count of milliseconds given by PHP code: never negative.
fn ms(function: &str, position: u32, name: &str, value: i64) -> PhpResult<u64> {
    u64::try_from(value).map_err(|_| {
        value_error(
            function,
            position,
            name,
            "must be greater than or equal to 0",
        )
    })
}

/// Records for PHP code with its own loop (`Recuo\Attempts`, an event loop, a queue
/// worker): the same records, redacted the same way, as the loops hand to their
/// `$records` sink — as arrays (`attempt()`, `result()`) or as the core's JSON lines
/// (`attemptJson()`, `resultJson()`).
#[php_class]
#[php(name = "Recuo\\Record")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct RecordFactory;

/// The arguments of an attempt record, checked.
#[allow(clippy::too_many_arguments)]
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
    let elapsed = ms(function, 2, "elapsedMs", elapsedMs)?;
    let outcome = match (status, error) {
        (None, None) => Outcome::Success,
        (Some(status), None) => Outcome::Status(record_status(function, 5, status)?),
        (None, Some(kind)) => {
            Outcome::Transport(Transport::from_name(&kind.text()).ok_or_else(|| {
                value_error(
                    function,
                    6,
                    "error",
                    &format!("must be null or {TRANSPORTS}"),
                )
            })?)
        }
        (Some(_), Some(_)) => {
            return Err(value_error_message(format!(
                "{function}(): at most one of Argument #5 ($status) and Argument #6 ($error) \
                 may be given"
            )))
        }
    };
    let headers = header_pairs(function, 7, "headers", headers)?;
    let delay = delayMs.map(|d| ms(function, 8, "delayMs", d)).transpose()?;
    let decision = decision.text();
    if !DECISIONS.contains(&decision.as_ref()) {
        return Err(value_error(
            function,
            9,
            "decision",
            "must be \"done\", \"retry\" or \"give_up\"",
        ));
    }
    let reason = reason.text();
    if !is_reason(&reason) {
        return Err(value_error(
            function,
            10,
            "reason",
            "must be a verdict's reason (\"rate_limited\", \"not_idempotent\", …) or a give-up \
             reason (\"attempts_exhausted\", …)",
        ));
    }
    let request = RequestLine::new(method, url);
    Ok(Record::Attempt(AttemptRecord::new(
        startMs,
        elapsed,
        &request.method,
        &request.url,
        outcome,
        &headers,
        delay,
        &decision,
        &reason,
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
    let attempts = u32::try_from(attempts)
        .map_err(|_| value_error(function, 4, "attempts", "must be between 0 and 4294967295"))?;
    let total = ms(function, 5, "totalMs", totalMs)?;
    let reason = reason
        .map(|r| give_up_reason(function, 6, &r.text()))
        .transpose()?;
    let request = RequestLine::new(method, url);
    Ok(Record::Final(FinalRecord::new(
        startMs,
        &request.method,
        &request.url,
        reason.map(GiveUpReason::name),
        attempts,
        total,
    )))
}

#[php_impl]
impl RecordFactory {
    /// The record of one attempt: started at `$startMs` (ms since the Unix epoch), took
    /// `$elapsedMs`; `$method` and `$url` (redacted here); the `$status` received or the
    /// transport `$error` (neither: a success with no HTTP meaning); the response's
    /// `$headers` (only the request id and the wait headers are kept); the `$delayMs` chosen
    /// before the next attempt; the `$decision` (`done`, `retry`, `give_up`) and its
    /// `$reason` (a verdict's reason or a give-up reason).
    #[php(defaults(headers = Array::EMPTY, decision = DONE, reason = SUCCESS))]
    #[allow(clippy::too_many_arguments)]
    pub fn attempt(
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
    ) -> PhpResult<ZBox<ZendHashTable>> {
        const F: &str = "Recuo\\Record::attempt";
        guarded(F, || {
            let record = attempt_of(
                F, startMs, elapsedMs, method, url, status, error, headers, delayMs, decision,
                reason,
            )?;
            record_table(F, &record)
        })
    }

    /// As `attempt()`, as the core's JSON line (no newline at the end).
    #[php(defaults(headers = Array::EMPTY, decision = DONE, reason = SUCCESS))]
    #[allow(clippy::too_many_arguments)]
    pub fn attempt_json(
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
    ) -> PhpResult<String> {
        const F: &str = "Recuo\\Record::attemptJson";
        guarded(F, || {
            let record = attempt_of(
                F, startMs, elapsedMs, method, url, status, error, headers, delayMs, decision,
                reason,
            )?;
            Ok(record.to_json_line())
        })
    }

    /// The record of one operation's result: its first attempt started at `$startMs` (ms
    /// since the Unix epoch); `$method` and `$url` (redacted here); `$attempts` made;
    /// `$totalMs` from the start of the first attempt to the end; the give-up `$reason`, or
    /// null for a success.
    pub fn result(
        startMs: i64,
        method: Bytes<'_>,
        url: Bytes<'_>,
        attempts: i64,
        totalMs: i64,
        reason: Option<Bytes<'_>>,
    ) -> PhpResult<ZBox<ZendHashTable>> {
        const F: &str = "Recuo\\Record::result";
        guarded(F, || {
            let record = result_of(F, startMs, method, url, attempts, totalMs, reason)?;
            record_table(F, &record)
        })
    }

    /// As `result()`, as the core's JSON line (no newline at the end).
    pub fn result_json(
        startMs: i64,
        method: Bytes<'_>,
        url: Bytes<'_>,
        attempts: i64,
        totalMs: i64,
        reason: Option<Bytes<'_>>,
    ) -> PhpResult<String> {
        const F: &str = "Recuo\\Record::resultJson";
        guarded(F, || {
            let record = result_of(F, startMs, method, url, attempts, totalMs, reason)?;
            Ok(record.to_json_line())
        })
    }
}

/// The sink of a loop's records.
#[derive(Clone, Copy)]
pub struct Sink<'a, 'z> {
    /// `$records(array $record)`.
    pub callable: &'a ZendCallable<'z>,
}

impl Sink<'_, '_> {
    /// Hands `record` to the sink as an array.
    ///
    /// # Errors
    /// `Err(None)` when the sink threw (the exception is pending in the engine), or the
    /// failure to make the array.
    pub fn send(&self, function: &str, record: &Record) -> Result<(), Option<PhpException>> {
        let array = record_array(function, record).map_err(Some)?;
        self.callable
            .try_call(vec![&array])
            .map(|_| ())
            .map_err(|_| None)
    }
}
