//! Telemetry for C: the metric points each record means, handed to a callback under their
//! Prometheus and OpenTelemetry names, and what any record means as JSON — the core's one
//! mapping (`recuo::telemetry`), the same in every language.

use std::ffi::CString;

use recuo::telemetry::{telemetry, Instrument, InstrumentKind, RecordValue};
use recuo::Record;

use crate::prelude::*;

/// How a metric adds its points up.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_instrument_kind {
    /// A monotonic sum: add each point's value (Prometheus `_total`).
    RECUO_INSTRUMENT_COUNTER = 1,
    /// A distribution: each point is one observation, in seconds.
    RECUO_INSTRUMENT_HISTOGRAM = 2,
}

/// One attribute of a metric point: its OpenTelemetry key (`recuo.reason`), the Prometheus
/// label for it (`recuo_reason`) and its value, NUL-terminated UTF-8.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct recuo_metric_attribute {
    /// The OpenTelemetry attribute key.
    pub key: *const c_char,
    /// The Prometheus label name.
    pub label: *const c_char,
    /// The value.
    pub value: *const c_char,
}

/// One metric point, valid during the callback only (copy what you keep):
///
/// | `prometheus_name` | `otel_name` (`unit`) | kind | attributes |
/// |---|---|---|---|
/// | `recuo_attempts_total` | `recuo.attempts` (`{attempt}`) | counter | `recuo.outcome` (a status, a transport failure, `success`), `recuo.reason` |
/// | `recuo_retry_delay_seconds` | `recuo.retry.delay` (`s`) | histogram | `recuo.reason`, `recuo.wait.source` (`server`, `backoff`) |
/// | `recuo_give_ups_total` | `recuo.give_ups` (`{operation}`) | counter | `recuo.reason` |
/// | `recuo_gate_wait_seconds` | `recuo.gate.wait` (`s`) | histogram | none |
/// | `recuo_budget_refusals_total` | `recuo.budget.refusals` (`{retry}`) | counter | none |
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct recuo_metric_point {
    /// The Prometheus name (base units, `_total` on counters).
    pub prometheus_name: *const c_char,
    /// The OpenTelemetry name (dotted, no unit).
    pub otel_name: *const c_char,
    /// The OpenTelemetry unit (`s`, or `{attempt}` for a count of things).
    pub unit: *const c_char,
    /// A counter or a histogram.
    pub kind: recuo_instrument_kind,
    /// The count to add (counters) or the value observed, in seconds (histograms).
    pub value: f64,
    /// The attributes (NULL when there are none).
    pub attributes: *const recuo_metric_attribute,
    /// How many.
    pub attribute_count: usize,
}

/// Receives each metric point a record means, with the call's `user_data`, on the thread that
/// made the record.
pub type recuo_metrics_fn =
    Option<unsafe extern "C" fn(point: *const recuo_metric_point, user_data: *mut c_void)>;

/// The longest record `recuo_telemetry_json` reads, in bytes.
pub const RECUO_TELEMETRY_RECORD_MAX: usize = 64 * 1024;

/// Text for C: a NUL inside (none of recuo's own names has one; a URL cannot) is cut there.
fn c_text(s: &str) -> CString {
    CString::new(s.split('\0').next().unwrap_or_default()).unwrap_or_default()
}

/// Hands each point `record` means to `f`.
pub(crate) fn send_points(f: recuo_metrics_fn, user_data: *mut c_void, record: &Record) {
    let Some(f) = f else { return };
    for point in telemetry(record).points {
        let label = recuo::telemetry::prometheus_label;
        let texts: Vec<[CString; 3]> = point
            .attributes
            .iter()
            .map(|(k, v)| [*k, &label(k), v].map(c_text))
            .collect();
        let attributes: Vec<recuo_metric_attribute> = texts
            .iter()
            .map(|[k, l, v]| recuo_metric_attribute {
                key: k.as_ptr(),
                label: l.as_ptr(),
                value: v.as_ptr(),
            })
            .collect();
        let i: Instrument = point.instrument;
        let names = [i.prometheus_name(), i.otel_name(), i.unit()].map(c_text);
        let c = recuo_metric_point {
            prometheus_name: names[0].as_ptr(),
            otel_name: names[1].as_ptr(),
            unit: names[2].as_ptr(),
            kind: match i.kind() {
                InstrumentKind::Counter => recuo_instrument_kind::RECUO_INSTRUMENT_COUNTER,
                InstrumentKind::Histogram => recuo_instrument_kind::RECUO_INSTRUMENT_HISTOGRAM,
            },
            value: point.value,
            attributes: if attributes.is_empty() {
                std::ptr::null()
            } else {
                attributes.as_ptr()
            },
            attribute_count: attributes.len(),
        };
        // SAFETY: the caller vouches for the callback and `user_data`; every pointer in the
        // point lives across the call.
        unsafe { f(&c, user_data) };
    }
}

/// What one record means to telemetry, as JSON, into `buf` (`buf_len` bytes, NUL-terminated;
/// `*written`, when not NULL, receives its length): `{"span": {"name", "kind", "start_unix_ms",
/// "end_unix_ms", "error", "attributes": {…}}, "points": [{"instrument", "prometheus",
/// "value", "attributes": {…}}, …]}` — the span an OpenTelemetry exporter would send and the
/// metric points, as `recuo_metric_point` gives them.
///
/// The record is JSON (`len` bytes, at most `RECUO_TELEMETRY_RECORD_MAX`): an attempt,
/// `{"type": "attempt", "start_unix_ms", "elapsed_ms", "method", "url", "status" or
/// "transport" (neither: a success with no HTTP meaning), "headers": [[name, value], …],
/// "delay_ms", "decision", "reason", "attempt" (from 0), "server_wait", "gate_wait_ms"}`, or
/// a result, `{"type": "result", "start_unix_ms", "method", "url", "attempts", "reason",
/// "stopped_by", "total_ms"}`. The URL and headers are redacted as a record's are.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written, NUL-terminated);
/// with nothing written: `RECUO_ERR_INVALID_VALUE` (not such a record, or a name recuo does
/// not know), `RECUO_ERR_NOT_UTF8`, `RECUO_ERR_LENGTH_TOO_LARGE`, `RECUO_ERR_NULL_ARGUMENT`
/// (`buf`, or `record` with `len > 0`).
///
/// # Safety
/// `record` must point to `len` readable bytes (or be NULL with `len == 0`); `buf` must point
/// to `buf_len` writable bytes; `written` NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_telemetry_json(
    record: *const c_char,
    len: usize,
    buf: *mut c_char,
    buf_len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: the caller vouches for the record's bytes and for `buf`, `buf_len` and `written`.
    unsafe {
        write_made(buf, buf_len, written, || {
            if len > RECUO_TELEMETRY_RECORD_MAX {
                return Err(RECUO_ERR_LENGTH_TOO_LARGE);
            }
            let text = ptr::text(record, len)?;
            let value =
                serde_json::from_str::<RecordValue>(text).map_err(|_| RECUO_ERR_INVALID_VALUE)?;
            value.telemetry_json().map_err(|_| RECUO_ERR_INVALID_VALUE)
        })
    }
}

/// The instruments the records feed, as JSON, into `buf` (`buf_len` bytes, NUL-terminated;
/// `*written`, when not NULL, receives its length): `{"instruments": [{"otel_name", "unit",
/// "kind", "prometheus", "description"}, …], "buckets_s": [0.005, …]}` — what a host creates
/// its counters and histograms from before the first point.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written);
/// `RECUO_ERR_NULL_ARGUMENT` (`buf`).
///
/// # Safety
/// `buf` must point to `buf_len` writable bytes; `written` NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_telemetry_instruments_json(
    buf: *mut c_char,
    buf_len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: the caller vouches for `buf`, `buf_len` and `written`.
    boundary(|| unsafe { write_text(buf, buf_len, written, &recuo::telemetry::instruments_json()) })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_longest_record_read_is_the_cores() {
        assert_eq!(
            super::RECUO_TELEMETRY_RECORD_MAX,
            recuo::telemetry::RECORD_JSON_MAX
        );
    }
}
