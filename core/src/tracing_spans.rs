//! The [`crate::Retry`] runner's spans and events through `tracing` (the `tracing` feature):
//! a `recuo.operation` span around the operation, a `recuo.attempt` span around each attempt
//! — entered while the attempt runs, so an HTTP client's own spans nest under it — and an
//! event per record (target `recuo`, the record's JSON line as `record`). The spans'
//! attributes are the telemetry mapping's ([`crate::telemetry`]), recorded once each record
//! is made; `otel.name`, `otel.kind` and `otel.status_code` are what `tracing-opentelemetry`
//! reads for the OpenTelemetry span's name, kind and status.

use tracing::field::Empty;
use tracing::Span;

use crate::journal::Level;
use crate::record::Record;
use crate::telemetry::{telemetry, AttrValue};

/// Whether anyone listens to recuo's spans: the runner keeps the records they need only then.
pub(crate) fn wanted() -> bool {
    tracing::enabled!(target: "recuo", tracing::Level::INFO)
}

/// The span of one operation, its attributes empty until its result record.
pub(crate) fn operation_span() -> Span {
    tracing::info_span!(
        target: "recuo",
        "recuo.operation",
        otel.name = "recuo.operation",
        otel.kind = "internal",
        otel.status_code = Empty,
        http.request.method = Empty,
        http.request.method_original = Empty,
        url.full = Empty,
        error.type = Empty,
        recuo.attempts = Empty,
        recuo.result = Empty,
        recuo.reason = Empty,
        recuo.stopped_by = Empty,
    )
}

/// The span of attempt number `attempt` (from 0), its attributes empty until its record.
pub(crate) fn attempt_span(attempt: u32) -> Span {
    tracing::info_span!(
        target: "recuo",
        "recuo.attempt",
        otel.name = Empty,
        otel.kind = "client",
        otel.status_code = Empty,
        http.request.method = Empty,
        http.request.method_original = Empty,
        url.full = Empty,
        http.response.status_code = Empty,
        error.type = Empty,
        http.request.resend_count = Empty,
        recuo.attempt = attempt + 1,
        recuo.decision = Empty,
        recuo.reason = Empty,
        recuo.retry.delay_ms = Empty,
        recuo.wait.source = Empty,
        recuo.gate.wait_ms = Empty,
    )
}

/// Records what `record` means into `span` (its attempt's, or the operation's) and emits the
/// record as an event at its level.
pub(crate) fn record(span: &Span, level: Level, record: &Record) {
    let t = telemetry(record);
    span.record("otel.name", t.span.name.as_str());
    if t.span.error {
        span.record("otel.status_code", "ERROR");
    }
    for (key, value) in &t.span.attributes {
        match value {
            AttrValue::Str(s) => span.record(*key, s.as_str()),
            AttrValue::Int(n) => span.record(*key, *n),
        };
    }
    let line = record.to_json_line();
    let _in = span.enter();
    match level {
        Level::Debug => tracing::debug!(target: "recuo", record = %line),
        Level::Info => tracing::info!(target: "recuo", record = %line),
        Level::Warning => tracing::warn!(target: "recuo", record = %line),
    }
}
