//! Records of every attempt and of each operation's result, redacted before they
//! exist: a record can be printed, logged or handed to a hook as it is.

use std::fmt::Write as _;

use crate::attempts::{Decision, GiveUpReason};
use crate::classify::{Cause, Outcome, Verdict};
use crate::headers::header;
use crate::http_date::civil_from_days;
use crate::redact::{is_sensitive_name, redact_url, redact_urls_in, REDACTED};

/// The statuses a record holds, as every binding checks one it is given: three digits (RFC
/// 9110 §15).
pub const STATUSES: std::ops::RangeInclusive<u16> = 100..=999;

/// The headers that name a request (first found wins), as recuo's rules lists them.
pub const REQUEST_ID_HEADERS: [&str; 5] = [
    "X-Request-Id",
    "X-Amzn-RequestId",
    "X-Amz-Request-Id",
    "CF-Ray",
    "X-Correlation-Id",
];

/// One attempt, as it is recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    /// When it started, milliseconds since the Unix epoch (shown as RFC 3339, UTC).
    pub start_unix_ms: i64,
    /// How long it took.
    pub elapsed_ms: u64,
    /// The HTTP method (`GET`; empty for a task with no HTTP meaning).
    pub method: String,
    /// The URL, redacted.
    pub url: String,
    /// The URL was malformed (it was redacted as far as it could be read).
    pub url_malformed: bool,
    /// The status, transport failure or success.
    pub outcome: Outcome,
    /// The request id the response carried, if any.
    pub request_id: Option<String>,
    /// The wait headers seen (`Retry-After`, `RateLimit*`, `X-RateLimit-*`).
    pub wait_headers: Vec<(String, String)>,
    /// The delay chosen before the next attempt, when there is one.
    pub delay_ms: Option<u64>,
    /// What the loop decided after this attempt.
    pub decision: AttemptDecision,
    /// Why: the verdict's cause, or the give-up reason ([`attempt_reason`]).
    pub reason: AttemptReason,
    /// The attempt's number, from 0 (the first attempt; 1 is the first retry). Telemetry's,
    /// like the two fields below: the JSON line does not show them.
    pub attempt: u32,
    /// The delay before the next attempt is the server's wait (`Retry-After` or a rate-limit
    /// header), not recuo's backoff.
    pub server_wait: bool,
    /// How long the attempt waited at the gate (a start slot, a place in flight) before it
    /// started, ms; `None` when there was no gate to pass.
    pub gate_wait_ms: Option<u64>,
    /// The operation it belongs to: a number unique in this process, the same on every record
    /// of one operation (0: none said).
    pub operation_id: u64,
}

/// What the loop decided after an attempt, as its record says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptDecision {
    /// The operation succeeded.
    Done,
    /// Another attempt follows after a delay.
    Retry,
    /// The loop gave up.
    GiveUp,
}

impl AttemptDecision {
    /// Every decision.
    pub const ALL: [AttemptDecision; 3] = [
        AttemptDecision::Done,
        AttemptDecision::Retry,
        AttemptDecision::GiveUp,
    ];

    /// `done`, `retry` or `give_up`.
    pub const fn name(self) -> &'static str {
        match self {
            AttemptDecision::Done => "done",
            AttemptDecision::Retry => "retry",
            AttemptDecision::GiveUp => "give_up",
        }
    }

    /// The decision named `name`, as [`name`](Self::name) spells it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.name() == name)
    }
}

/// Why an attempt's record says what it decided: a verdict's cause (`rate_limited`,
/// `not_idempotent`, `success`, …) or a reason of the loop (`attempts_exhausted`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptReason {
    /// The verdict's cause.
    Cause(Cause),
    /// The loop's reason for giving up.
    Loop(GiveUpReason),
}

impl AttemptReason {
    /// The reason's name: a [`Cause::name`] or a [`GiveUpReason::name`].
    pub const fn name(self) -> &'static str {
        match self {
            AttemptReason::Cause(c) => c.name(),
            AttemptReason::Loop(r) => r.name(),
        }
    }

    /// The reason named `name`: a give-up reason first (`permanent` is both a cause and a
    /// reason, and reads as the loop's), then a cause.
    pub fn from_name(name: &str) -> Option<Self> {
        GiveUpReason::from_name(name)
            .map(AttemptReason::Loop)
            .or_else(|| Cause::from_name(name).map(AttemptReason::Cause))
    }
}

/// One operation's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalRecord {
    /// When the first attempt started, ms since the Unix epoch.
    pub start_unix_ms: i64,
    /// The HTTP method.
    pub method: String,
    /// The URL, redacted.
    pub url: String,
    /// Attempts made.
    pub attempts: u32,
    /// Why it gave up (`None` on success).
    pub reason: Option<GiveUpReason>,
    /// For `queue_stopped`: the reason of the operation that stopped the queue.
    pub stopped_by: Option<GiveUpReason>,
    /// From the start of the first attempt to the end.
    pub total_ms: u64,
    /// The operation, as its attempts' records number it (0: none said).
    pub operation_id: u64,
}

impl FinalRecord {
    /// `success` or `gave_up`.
    pub const fn result(&self) -> &'static str {
        if self.reason.is_none() {
            "success"
        } else {
            "gave_up"
        }
    }
}

/// The `reason` an attempt record gives for its `decision`: the verdict's cause for a retry
/// (`rate_limited`, `unavailable`, …); `success` when done; when it gave up, the verdict's
/// cause if the verdict itself refused (`permanent`, `not_idempotent`, `tls`), else the
/// loop's reason (`attempts_exhausted`, `wait_exceeds_deadline`, `budget_exhausted`,
/// `cancelled`). One rule for every surface.
pub fn attempt_reason(decision: &Decision, verdict: &Verdict) -> AttemptReason {
    match (decision, verdict) {
        (Decision::Retry { .. }, v) => AttemptReason::Cause(v.cause()),
        (Decision::Done, _) => AttemptReason::Cause(Cause::Success),
        (
            Decision::GiveUp {
                reason: GiveUpReason::Permanent,
                ..
            },
            Verdict::GiveUp { cause },
        ) if *cause != Cause::Success => AttemptReason::Cause(*cause),
        (Decision::GiveUp { reason, .. }, _) => AttemptReason::Loop(*reason),
    }
}

/// A record: an attempt, or an operation's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// One attempt.
    Attempt(AttemptRecord),
    /// One operation's result.
    Final(FinalRecord),
}

/// Where records go: a log, a file, a test's list. Called from the thread that made the
/// attempt.
pub trait RecordSink: Send + Sync {
    /// Takes one record.
    fn record(&self, record: &Record);
}

impl<F: Fn(&Record) + Send + Sync> RecordSink for F {
    fn record(&self, record: &Record) {
        self(record)
    }
}

/// Records go to the `log` facade: target `recuo`, level info, the JSON line as the message.
#[cfg(feature = "log")]
#[derive(Debug, Clone, Copy, Default)]
pub struct LogSink;

#[cfg(feature = "log")]
impl RecordSink for LogSink {
    fn record(&self, record: &Record) {
        log::info!(target: "recuo", "{}", record.to_json_line());
    }
}

fn is_wait_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "retry-after" || n.starts_with("ratelimit") || n.starts_with("x-ratelimit-")
}

impl AttemptRecord {
    /// A record of an attempt: the URL is redacted here, the request id and the wait headers
    /// are taken from the response's `headers` (nothing else of them is kept).
    #[allow(clippy::too_many_arguments)]
    pub fn new<K: AsRef<str>, V: AsRef<str>>(
        start_unix_ms: i64,
        elapsed_ms: u64,
        method: &str,
        url: &str,
        outcome: Outcome,
        headers: &[(K, V)],
        delay_ms: Option<u64>,
        decision: AttemptDecision,
        reason: AttemptReason,
    ) -> Self {
        let redacted = redact_url(url);
        // What is kept of the response is redacted too: a header named like a secret
        // (`X-RateLimit-Api-Key`) shows `[redacted]`, URLs and personal data inside values
        // are masked.
        let request_id = REQUEST_ID_HEADERS
            .iter()
            .find_map(|name| header(headers, name))
            .map(|v| clip(&redact_urls_in(v), 200));
        let mut wait_headers: Vec<(String, String)> = Vec::new();
        for (name, value) in headers.iter().filter(|(k, _)| is_wait_header(k.as_ref())) {
            let (name, value) = (name.as_ref(), value.as_ref());
            let value = if is_sensitive_name(name) {
                REDACTED.to_string()
            } else {
                clip(&redact_urls_in(value), 200)
            };
            // A repeated header is one entry, its values joined as HTTP joins them.
            match wait_headers
                .iter_mut()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
            {
                Some((_, v)) => {
                    v.push_str(", ");
                    v.push_str(&value);
                }
                None => wait_headers.push((name.to_string(), value)),
            }
        }
        AttemptRecord {
            start_unix_ms,
            elapsed_ms,
            method: clip(method, 32),
            url: redacted.url,
            url_malformed: redacted.malformed,
            outcome,
            request_id,
            wait_headers,
            delay_ms,
            decision,
            reason,
            attempt: 0,
            server_wait: false,
            gate_wait_ms: None,
            operation_id: 0,
        }
    }
}

impl FinalRecord {
    /// The result of an operation that was never started: given up for `reason` (a batch's
    /// deadline came first: `wait_exceeds_deadline`; the queue stopped: `queue_stopped`, with
    /// the reason that stopped it), with no attempt.
    pub fn not_started(
        start_unix_ms: i64,
        method: &str,
        url: &str,
        reason: GiveUpReason,
        stopped_by: Option<GiveUpReason>,
    ) -> Self {
        let mut record = Self::new(start_unix_ms, method, url, Some(reason), 0, 0);
        record.stopped_by = stopped_by;
        record
    }

    /// A record of an operation's result; the URL is redacted here.
    pub fn new(
        start_unix_ms: i64,
        method: &str,
        url: &str,
        reason: Option<GiveUpReason>,
        attempts: u32,
        total_ms: u64,
    ) -> Self {
        FinalRecord {
            start_unix_ms,
            method: clip(method, 32),
            url: redact_url(url).url,
            attempts,
            reason,
            stopped_by: None,
            total_ms,
            operation_id: 0,
        }
    }
}

/// At most `max` characters of `s` (a header value is data from the network).
fn clip(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

impl Record {
    /// The record as one line of JSON (no newline at the end).
    pub fn to_json_line(&self) -> String {
        let mut j = Json::default();
        match self {
            Record::Attempt(a) => {
                j.str("type", "attempt");
                j.str("start", &rfc3339(a.start_unix_ms));
                j.num("elapsed_ms", a.elapsed_ms);
                j.str("method", &a.method);
                j.str("url", &a.url);
                if a.url_malformed {
                    j.raw("url_malformed", "true");
                }
                match a.outcome {
                    Outcome::Status(code) => j.num("status", u64::from(code)),
                    Outcome::Transport(t) => j.str("transport", t.name()),
                    Outcome::Success => j.str("outcome", "success"),
                }
                match &a.request_id {
                    Some(id) => j.str("request_id", id),
                    None => j.raw("request_id", "null"),
                }
                let mut waits = String::from("{");
                for (i, (k, v)) in a.wait_headers.iter().enumerate() {
                    if i > 0 {
                        waits.push(',');
                    }
                    let _ = write!(waits, "{}:{}", quote(k), quote(v));
                }
                waits.push('}');
                j.raw("wait_headers", &waits);
                match a.delay_ms {
                    Some(d) => j.num("delay_ms", d),
                    None => j.raw("delay_ms", "null"),
                }
                j.str("decision", a.decision.name());
                j.str("reason", a.reason.name());
            }
            Record::Final(f) => {
                j.str("type", "result");
                j.str("start", &rfc3339(f.start_unix_ms));
                j.str("method", &f.method);
                j.str("url", &f.url);
                j.str("result", f.result());
                j.num("attempts", u64::from(f.attempts));
                match f.reason {
                    Some(r) => j.str("reason", r.name()),
                    None => j.raw("reason", "null"),
                }
                j.num("total_ms", f.total_ms);
                if let Some(by) = f.stopped_by {
                    j.str("stopped_by", by.name());
                }
            }
        }
        j.finish()
    }
}

#[derive(Default)]
struct Json(String);

impl Json {
    fn key(&mut self, k: &str) {
        self.0.push(if self.0.is_empty() { '{' } else { ',' });
        self.0.push_str(&quote(k));
        self.0.push(':');
    }
    fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        self.0.push_str(&quote(v));
    }
    fn num(&mut self, k: &str, v: u64) {
        self.key(k);
        let _ = write!(self.0, "{v}");
    }
    fn raw(&mut self, k: &str, v: &str) {
        self.key(k);
        self.0.push_str(v);
    }
    fn finish(mut self) -> String {
        if self.0.is_empty() {
            self.0.push('{');
        }
        self.0.push('}');
        self.0
    }
}

/// A JSON string literal.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `2026-11-30T10:26:05.123Z` for milliseconds since the Unix epoch.
pub fn rfc3339(unix_ms: i64) -> String {
    let days = unix_ms.div_euclid(86_400_000);
    let ms_of_day = unix_ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, ms) = (
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{ms:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Transport;

    #[test]
    fn statuses_have_three_digits() {
        assert!(STATUSES.contains(&100) && STATUSES.contains(&999));
        assert!(!STATUSES.contains(&99) && !STATUSES.contains(&1000));
    }

    #[test]
    fn an_attempt_as_a_json_line() {
        let h = [
            ("Authorization", "Bearer s3cr3t"),
            ("Retry-After", "12"),
            ("X-RateLimit-Remaining", "0"),
            ("X-Request-Id", "req-7"),
            ("Set-Cookie", "sid=abc"),
        ];
        let r = AttemptRecord::new(
            784_111_777_123,
            250,
            "GET",
            "https://u:pw@api.example.com/users/ana@example.com?api_key=k1&page=2",
            Outcome::Status(429),
            &h,
            Some(12_345),
            AttemptDecision::Retry,
            AttemptReason::Cause(Cause::RateLimited),
        );
        let line = Record::Attempt(r).to_json_line();
        assert_eq!(
            line,
            r#"{"type":"attempt","start":"1994-11-06T08:49:37.123Z","elapsed_ms":250,"method":"GET","url":"https://api.example.com/users/[email]?api_key=[redacted]&page=2","status":429,"request_id":"req-7","wait_headers":{"Retry-After":"12","X-RateLimit-Remaining":"0"},"delay_ms":12345,"decision":"retry","reason":"rate_limited"}"#
        );
        for secret in ["s3cr3t", "pw@", "ana@", "k1", "sid=abc"] {
            assert!(!line.contains(secret), "{secret} in {line}");
        }
    }

    #[test]
    fn what_is_kept_of_the_response_is_redacted_too() {
        let h = [
            ("X-RateLimit-Api-Key", "sk_live_123"),
            ("Retry-After", "https://u:p@h.io/?token=z"),
            ("retry-after", "5"),
            ("X-Request-Id", "for ana@example.com"),
        ];
        let r = AttemptRecord::new(
            0,
            0,
            "GET",
            "/",
            Outcome::Status(429),
            &h,
            None,
            AttemptDecision::GiveUp,
            AttemptReason::Loop(GiveUpReason::Permanent),
        );
        let line = Record::Attempt(r).to_json_line();
        for secret in ["sk_live_123", "u:p@", "token=z", "ana@"] {
            assert!(!line.contains(secret), "{secret} in {line}");
        }
        assert!(line.contains(r#""wait_headers":{"X-RateLimit-Api-Key":"[redacted]","Retry-After":"https://h.io/?token=[redacted], 5"}"#), "{line}");
        assert!(line.contains(r#""request_id":"for [email]""#), "{line}");
    }

    #[test]
    fn the_reason_rule() {
        let retry = Decision::Retry {
            delay_ms: 1,
            next_attempt: 1,
        };
        let give_up = |reason| Decision::GiveUp {
            reason,
            retry_at_ms: None,
        };
        let limited = Verdict::Retry {
            cause: Cause::RateLimited,
            server_wait: None,
        };
        let name = |d: &Decision, v: &Verdict| attempt_reason(d, v).name();
        let unsafe_post = Verdict::GiveUp {
            cause: Cause::NotIdempotent,
        };
        assert_eq!(name(&retry, &limited), "rate_limited");
        assert_eq!(name(&Decision::Done, &Verdict::Success), "success");
        assert_eq!(
            name(&give_up(GiveUpReason::Permanent), &unsafe_post),
            "not_idempotent"
        );
        let tls = Verdict::GiveUp { cause: Cause::Tls };
        assert_eq!(name(&give_up(GiveUpReason::Permanent), &tls), "tls");
        assert_eq!(
            name(&give_up(GiveUpReason::AttemptsExhausted), &limited),
            "attempts_exhausted"
        );
    }

    #[test]
    fn a_result_and_a_transport_failure() {
        let f = FinalRecord::new(
            0,
            "POST",
            "/pay?token=x\"y",
            Some(GiveUpReason::AttemptsExhausted),
            5,
            1234,
        );
        assert_eq!(
            Record::Final(f).to_json_line(),
            r#"{"type":"result","start":"1970-01-01T00:00:00.000Z","method":"POST","url":"/pay?token=[redacted]","result":"gave_up","attempts":5,"reason":"attempts_exhausted","total_ms":1234}"#
        );
        let none: [(&str, &str); 0] = [];
        let a = AttemptRecord::new(
            -1,
            0,
            "GET",
            "/a\n\"b\\",
            Outcome::Transport(Transport::Reset),
            &none,
            None,
            AttemptDecision::GiveUp,
            AttemptReason::Cause(Cause::NotIdempotent),
        );
        let line = Record::Attempt(a).to_json_line();
        assert!(
            line.contains(r#""url":"/a\n\"b\\","url_malformed":true"#),
            "{line}"
        );
        assert!(
            line.contains(r#""start":"1969-12-31T23:59:59.999Z""#),
            "{line}"
        );
        assert!(line.contains(r#""transport":"reset""#));
    }
}
