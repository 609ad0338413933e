//! Telemetry from the journal: for each record, the span it stands for and the metric points
//! it adds — one mapping for every surface (OpenTelemetry, Prometheus, `tracing`, a logger's
//! or a C caller's callback), run by `tests/vectors/telemetry.json` everywhere.
//!
//! An attempt's record is one physical request: a CLIENT span named by its method, carrying
//! OpenTelemetry's HTTP client attributes (`http.request.resend_count` from the second
//! attempt on) and recuo's own. An operation's result record is the INTERNAL span around its
//! attempts. Each instrument has two names: OpenTelemetry's (dotted, its unit apart) and the
//! Prometheus one (base units, `_total` on counters), which every surface without
//! OpenTelemetry uses.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::attempts::GiveUpReason;
use crate::classify::Outcome;
use crate::record::{AttemptDecision, AttemptReason, AttemptRecord, FinalRecord, Record};

/// How an instrument adds its points up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InstrumentKind {
    /// A monotonic sum: each point adds its value.
    Counter,
    /// A distribution: each point is one observation.
    Histogram,
}

impl InstrumentKind {
    /// `counter` or `histogram`.
    pub const fn name(self) -> &'static str {
        match self {
            InstrumentKind::Counter => "counter",
            InstrumentKind::Histogram => "histogram",
        }
    }
}

/// The metrics recuo reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Instrument {
    /// Attempts made, by outcome and reason.
    Attempts,
    /// The delays before retries, in seconds, by reason and by who chose the wait.
    RetryDelay,
    /// Operations given up, by reason.
    GiveUps,
    /// The time attempts waited at a gate (a start slot, a place in flight), in seconds.
    GateWait,
    /// Retries the retry budget refused.
    BudgetRefusals,
}

impl Instrument {
    /// Every instrument, in the order of their points.
    pub const ALL: [Instrument; 5] = [
        Instrument::Attempts,
        Instrument::RetryDelay,
        Instrument::GiveUps,
        Instrument::GateWait,
        Instrument::BudgetRefusals,
    ];

    /// OpenTelemetry's name: dotted, no unit in it.
    pub const fn otel_name(self) -> &'static str {
        match self {
            Instrument::Attempts => "recuo.attempts",
            Instrument::RetryDelay => "recuo.retry.delay",
            Instrument::GiveUps => "recuo.give_ups",
            Instrument::GateWait => "recuo.gate.wait",
            Instrument::BudgetRefusals => "recuo.budget.refusals",
        }
    }

    /// The unit, as OpenTelemetry writes it (UCUM; `{…}` for a count of things).
    pub const fn unit(self) -> &'static str {
        match self {
            Instrument::Attempts => "{attempt}",
            Instrument::RetryDelay | Instrument::GateWait => "s",
            Instrument::GiveUps => "{operation}",
            Instrument::BudgetRefusals => "{retry}",
        }
    }

    /// The Prometheus name: OpenTelemetry's with `_` for `.`, the base unit as a suffix
    /// (`_seconds`) and `_total` on counters.
    pub const fn prometheus_name(self) -> &'static str {
        match self {
            Instrument::Attempts => "recuo_attempts_total",
            Instrument::RetryDelay => "recuo_retry_delay_seconds",
            Instrument::GiveUps => "recuo_give_ups_total",
            Instrument::GateWait => "recuo_gate_wait_seconds",
            Instrument::BudgetRefusals => "recuo_budget_refusals_total",
        }
    }

    /// A counter or a histogram.
    pub const fn kind(self) -> InstrumentKind {
        match self {
            Instrument::RetryDelay | Instrument::GateWait => InstrumentKind::Histogram,
            _ => InstrumentKind::Counter,
        }
    }

    /// One line saying what it counts.
    pub const fn description(self) -> &'static str {
        match self {
            Instrument::Attempts => "Attempts made, by outcome and reason.",
            Instrument::RetryDelay => {
                "Delays before retries, by reason and by who chose the wait (server or backoff)."
            }
            Instrument::GiveUps => "Operations given up, by reason.",
            Instrument::GateWait => {
                "Time attempts waited at the gate (a start slot, a place in flight)."
            }
            Instrument::BudgetRefusals => "Retries the retry budget refused.",
        }
    }

    /// The instrument whose OpenTelemetry or Prometheus name is `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|i| i.otel_name() == name || i.prometheus_name() == name)
    }
}

/// The bucket bounds of the histograms, in seconds: from 5 ms to the 5 minutes a server may
/// ask to wait.
pub const SECONDS_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// A span attribute's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrValue {
    /// Text.
    Str(String),
    /// A whole number.
    Int(i64),
}

/// What a span is to its trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpanKind {
    /// A request sent to a server: one per physical attempt.
    Client,
    /// Work inside the process: the operation around its attempts, or an attempt of a task
    /// with no HTTP meaning.
    Internal,
}

impl SpanKind {
    /// `client` or `internal`.
    pub const fn name(self) -> &'static str {
        match self {
            SpanKind::Client => "client",
            SpanKind::Internal => "internal",
        }
    }
}

/// The span a record stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanData {
    /// The span's name: the method for an attempt (`GET`; `HTTP` for a method OpenTelemetry
    /// does not know; `recuo.attempt` for a task), `recuo.operation` for an operation.
    pub name: String,
    /// Client or internal.
    pub kind: SpanKind,
    /// When it started, ms since the Unix epoch.
    pub start_unix_ms: i64,
    /// When it ended, ms since the Unix epoch.
    pub end_unix_ms: i64,
    /// Its attributes, in a fixed order.
    pub attributes: Vec<(&'static str, AttrValue)>,
    /// Its status is an error (`error.type` says which), as OpenTelemetry's HTTP client
    /// conventions set it: a status of 400 or more, a transport failure, a give-up.
    pub error: bool,
}

impl SpanData {
    /// The attribute `key`, if the span has it.
    pub fn attribute(&self, key: &str) -> Option<&AttrValue> {
        self.attributes
            .iter()
            .find_map(|(k, v)| (*k == key).then_some(v))
    }
}

/// One point of one instrument: a count to add or an observation.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Which instrument.
    pub instrument: Instrument,
    /// The count added (counters) or the value observed (histograms: seconds).
    pub value: f64,
    /// Its attributes (OpenTelemetry's keys; [`prometheus_label`] gives the label).
    pub attributes: Vec<(&'static str, String)>,
}

/// What one record means to telemetry: its span and the points it adds.
#[derive(Debug, Clone, PartialEq)]
pub struct Telemetry {
    /// The operation the record belongs to (its attempts' spans are children of its span):
    /// unique in this process, 0 when the record does not say.
    pub operation_id: u64,
    /// The span.
    pub span: SpanData,
    /// The points, in the order of [`Instrument::ALL`].
    pub points: Vec<Point>,
}

/// The methods OpenTelemetry's HTTP conventions know; any other is `_OTHER`.
const KNOWN_METHODS: [&str; 10] = [
    "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY", "TRACE",
];

/// The Prometheus label for an attribute key: `.` and any other character a label cannot
/// hold become `_`.
pub fn prometheus_label(key: &str) -> String {
    key.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The attempt's outcome as metrics name it: the status code, the transport failure's
/// name, or `success`.
fn outcome_name(outcome: Outcome) -> String {
    match outcome {
        Outcome::Status(code) => code.to_string(),
        Outcome::Transport(t) => t.name().to_string(),
        Outcome::Success => "success".to_string(),
    }
}

/// OpenTelemetry's `error.type` for an attempt: the status code from 400 on, the transport
/// failure's name; none for anything else.
fn error_type(outcome: Outcome) -> Option<String> {
    match outcome {
        Outcome::Status(code) if code >= 400 => Some(code.to_string()),
        Outcome::Transport(t) => Some(t.name().to_string()),
        _ => None,
    }
}

/// The method's attributes: `http.request.method` (`_OTHER` for an unknown method, the
/// method itself then in `http.request.method_original`).
fn method_attributes(method: &str, attributes: &mut Vec<(&'static str, AttrValue)>) {
    if method.is_empty() {
        return;
    }
    if KNOWN_METHODS.contains(&method) {
        attributes.push(("http.request.method", AttrValue::Str(method.to_string())));
    } else {
        attributes.push(("http.request.method", AttrValue::Str("_OTHER".into())));
        attributes.push((
            "http.request.method_original",
            AttrValue::Str(method.to_string()),
        ));
    }
}

fn ms_to_s(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

fn end_of(start_unix_ms: i64, elapsed_ms: u64) -> i64 {
    start_unix_ms.saturating_add(i64::try_from(elapsed_ms).unwrap_or(i64::MAX))
}

/// What `record` means to telemetry.
pub fn telemetry(record: &Record) -> Telemetry {
    match record {
        Record::Attempt(a) => Telemetry {
            operation_id: a.operation_id,
            ..attempt_telemetry(a)
        },
        Record::Final(f) => Telemetry {
            operation_id: f.operation_id,
            ..operation_telemetry(f)
        },
    }
}

fn attempt_telemetry(a: &AttemptRecord) -> Telemetry {
    let mut attributes = Vec::new();
    method_attributes(&a.method, &mut attributes);
    if !a.url.is_empty() {
        attributes.push(("url.full", AttrValue::Str(a.url.clone())));
    }
    if let Outcome::Status(code) = a.outcome {
        attributes.push(("http.response.status_code", AttrValue::Int(code.into())));
    }
    let error = error_type(a.outcome);
    if let Some(e) = &error {
        attributes.push(("error.type", AttrValue::Str(e.clone())));
    }
    if a.attempt > 0 {
        attributes.push((
            "http.request.resend_count",
            AttrValue::Int(a.attempt.into()),
        ));
    }
    attributes.push(("recuo.attempt", AttrValue::Int(i64::from(a.attempt) + 1)));
    attributes.push(("recuo.decision", AttrValue::Str(a.decision.name().into())));
    attributes.push(("recuo.reason", AttrValue::Str(a.reason.name().into())));
    let source = if a.server_wait { "server" } else { "backoff" };
    if let Some(delay) = a.delay_ms {
        attributes.push((
            "recuo.retry.delay_ms",
            AttrValue::Int(i64::try_from(delay).unwrap_or(i64::MAX)),
        ));
        attributes.push(("recuo.wait.source", AttrValue::Str(source.into())));
    }
    if let Some(waited) = a.gate_wait_ms {
        attributes.push((
            "recuo.gate.wait_ms",
            AttrValue::Int(i64::try_from(waited).unwrap_or(i64::MAX)),
        ));
    }
    let name = match (
        a.method.as_str(),
        KNOWN_METHODS.contains(&a.method.as_str()),
    ) {
        ("", _) => "recuo.attempt".to_string(),
        (m, true) => m.to_string(),
        (_, false) => "HTTP".to_string(),
    };
    let span = SpanData {
        name,
        kind: if a.method.is_empty() {
            SpanKind::Internal
        } else {
            SpanKind::Client
        },
        start_unix_ms: a.start_unix_ms,
        end_unix_ms: end_of(a.start_unix_ms, a.elapsed_ms),
        attributes,
        error: error.is_some(),
    };
    let reason = a.reason.name().to_string();
    let mut points = vec![Point {
        instrument: Instrument::Attempts,
        value: 1.0,
        attributes: vec![
            ("recuo.outcome", outcome_name(a.outcome)),
            ("recuo.reason", reason.clone()),
        ],
    }];
    if let (AttemptDecision::Retry, Some(delay)) = (a.decision, a.delay_ms) {
        points.push(Point {
            instrument: Instrument::RetryDelay,
            value: ms_to_s(delay),
            attributes: vec![
                ("recuo.reason", reason.clone()),
                ("recuo.wait.source", source.to_string()),
            ],
        });
    }
    if let Some(waited) = a.gate_wait_ms {
        points.push(Point {
            instrument: Instrument::GateWait,
            value: ms_to_s(waited),
            attributes: Vec::new(),
        });
    }
    if a.reason == AttemptReason::Loop(GiveUpReason::BudgetExhausted) {
        points.push(Point {
            instrument: Instrument::BudgetRefusals,
            value: 1.0,
            attributes: Vec::new(),
        });
    }
    Telemetry {
        operation_id: 0,
        span,
        points,
    }
}

fn operation_telemetry(f: &FinalRecord) -> Telemetry {
    let mut attributes = Vec::new();
    method_attributes(&f.method, &mut attributes);
    if !f.url.is_empty() {
        attributes.push(("url.full", AttrValue::Str(f.url.clone())));
    }
    if let Some(reason) = f.reason {
        attributes.push(("error.type", AttrValue::Str(reason.name().into())));
    }
    attributes.push(("recuo.attempts", AttrValue::Int(f.attempts.into())));
    attributes.push(("recuo.result", AttrValue::Str(f.result().into())));
    if let Some(reason) = f.reason {
        attributes.push(("recuo.reason", AttrValue::Str(reason.name().into())));
    }
    if let Some(by) = f.stopped_by {
        attributes.push(("recuo.stopped_by", AttrValue::Str(by.name().into())));
    }
    let span = SpanData {
        name: "recuo.operation".to_string(),
        kind: SpanKind::Internal,
        start_unix_ms: f.start_unix_ms,
        end_unix_ms: end_of(f.start_unix_ms, f.total_ms),
        attributes,
        error: f.reason.is_some(),
    };
    let points = f
        .reason
        .map(|reason| Point {
            instrument: Instrument::GiveUps,
            value: 1.0,
            attributes: vec![("recuo.reason", reason.name().to_string())],
        })
        .into_iter()
        .collect();
    Telemetry {
        operation_id: 0,
        span,
        points,
    }
}

impl Telemetry {
    /// The telemetry as one line of JSON: what the bindings hand to their hosts'
    /// OpenTelemetry, loggers and callbacks.
    pub fn to_json(&self) -> String {
        let s = &self.span;
        let mut out = format!("{{\"operation\":{},\"span\":{{\"name\":", self.operation_id);
        push_str(&mut out, &s.name);
        let _ = write!(
            out,
            ",\"kind\":\"{}\",\"start_unix_ms\":{},\"end_unix_ms\":{},\"error\":{},\"attributes\":{{",
            s.kind.name(),
            s.start_unix_ms,
            s.end_unix_ms,
            s.error
        );
        for (i, (k, v)) in s.attributes.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_str(&mut out, k);
            out.push(':');
            match v {
                AttrValue::Str(t) => push_str(&mut out, t),
                AttrValue::Int(n) => {
                    let _ = write!(out, "{n}");
                }
            }
        }
        out.push_str("}},\"points\":[");
        for (i, p) in self.points.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"instrument\":");
            push_str(&mut out, p.instrument.otel_name());
            out.push_str(",\"prometheus\":");
            push_str(&mut out, p.instrument.prometheus_name());
            out.push_str(",\"value\":");
            out.push_str(&decimal(p.value));
            for (field, label) in [("attributes", false), ("labels", true)] {
                out.push_str(",\"");
                out.push_str(field);
                out.push_str("\":{");
                for (j, (k, v)) in p.attributes.iter().enumerate() {
                    if j > 0 {
                        out.push(',');
                    }
                    if label {
                        push_str(&mut out, &prometheus_label(k));
                    } else {
                        push_str(&mut out, k);
                    }
                    out.push(':');
                    push_str(&mut out, v);
                }
                out.push('}');
            }
            out.push('}');
        }
        out.push_str("]}");
        out
    }
}

/// `v` in decimal to the millisecond (every value here is a count or milliseconds in seconds),
/// with no trailing zero: `1`, `0.12`, `2.5`. Integer formatting only: the float formatter
/// would grow the WebAssembly module by kilobytes.
pub fn decimal(v: f64) -> String {
    let ms = (v * 1000.0).round();
    let ms = if (0.0..9.0e15).contains(&ms) {
        ms as u64
    } else {
        0
    };
    let (whole, frac) = (ms / 1000, ms % 1000);
    if frac == 0 {
        return whole.to_string();
    }
    let mut f = format!("{frac:03}");
    while f.ends_with('0') {
        f.pop();
    }
    format!("{whole}.{f}")
}

/// The instruments and the histograms' buckets as one line of JSON — `{"instruments":
/// [{"otel_name", "unit", "kind", "prometheus", "description"}, …], "buckets_s": […]}` —
/// what a host creates its counters and histograms from before the first point.
pub fn instruments_json() -> String {
    let mut out = String::from("{\"instruments\":[");
    for (n, i) in Instrument::ALL.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        let fields = [
            ("otel_name", i.otel_name()),
            ("unit", i.unit()),
            ("kind", i.kind().name()),
            ("prometheus", i.prometheus_name()),
            ("description", i.description()),
        ];
        for (m, (key, value)) in fields.into_iter().enumerate() {
            out.push(if m == 0 { '{' } else { ',' });
            push_str(&mut out, key);
            out.push(':');
            push_str(&mut out, value);
        }
        out.push('}');
    }
    out.push_str("],\"buckets_s\":[");
    let buckets: Vec<String> = SECONDS_BUCKETS.iter().map(|b| decimal(*b)).collect();
    out.push_str(&buckets.join(","));
    out.push_str("]}");
    out
}

/// Appends `s` as a JSON string literal.
fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Metric points added up, as a Prometheus scrape shows them: counters summed and
/// histograms bucketed by [`SECONDS_BUCKETS`], per instrument and set of attributes.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    series: BTreeMap<(Instrument, Vec<(String, String)>), Series>,
}

#[derive(Debug, Clone)]
struct Series {
    /// A counter's sum, or a histogram's sum of observations.
    sum: f64,
    /// Observations per bucket (a histogram's; not cumulative), and the count.
    buckets: [u64; SECONDS_BUCKETS.len()],
    count: u64,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one point: a counter's value added, a histogram's value observed.
    pub fn add(&mut self, point: &Point) {
        let labels = point
            .attributes
            .iter()
            .map(|(k, v)| (prometheus_label(k), v.clone()))
            .collect();
        let series = self
            .series
            .entry((point.instrument, labels))
            .or_insert(Series {
                sum: 0.0,
                buckets: [0; SECONDS_BUCKETS.len()],
                count: 0,
            });
        series.sum += point.value;
        series.count += 1;
        if let Some(i) = SECONDS_BUCKETS.iter().position(|b| point.value <= *b) {
            series.buckets[i] += 1;
        }
    }

    /// Adds every point `record` means.
    pub fn add_record(&mut self, record: &Record) {
        for p in telemetry(record).points {
            self.add(&p);
        }
    }

    /// The Prometheus text exposition format (version 0.0.4): every instrument's `# HELP`
    /// and `# TYPE`, then its series in the order of their labels.
    pub fn to_prometheus(&self) -> String {
        let mut out = String::new();
        for instrument in Instrument::ALL {
            let name = instrument.prometheus_name();
            let _ = writeln!(out, "# HELP {name} {}", instrument.description());
            let _ = writeln!(out, "# TYPE {name} {}", instrument.kind().name());
            for ((i, labels), s) in &self.series {
                if *i != instrument {
                    continue;
                }
                match instrument.kind() {
                    InstrumentKind::Counter => {
                        let _ =
                            writeln!(out, "{name}{} {}", label_set(labels, None), number(s.sum));
                    }
                    InstrumentKind::Histogram => {
                        let mut cumulative = 0;
                        for (bound, n) in SECONDS_BUCKETS.iter().zip(s.buckets) {
                            cumulative += n;
                            let le = number(*bound);
                            let _ = writeln!(
                                out,
                                "{name}_bucket{} {cumulative}",
                                label_set(labels, Some(&le))
                            );
                        }
                        let _ = writeln!(
                            out,
                            "{name}_bucket{} {}",
                            label_set(labels, Some("+Inf")),
                            s.count
                        );
                        let _ = writeln!(
                            out,
                            "{name}_sum{} {}",
                            label_set(labels, None),
                            number(s.sum)
                        );
                        let _ =
                            writeln!(out, "{name}_count{} {}", label_set(labels, None), s.count);
                    }
                }
            }
        }
        out
    }
}

/// `{a="1",le="0.5"}`, or nothing when there is no label.
fn label_set(labels: &[(String, String)], le: Option<&str>) -> String {
    let mut pairs: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect();
    if let Some(le) = le {
        pairs.push(format!("le=\"{le}\""));
    }
    if pairs.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", pairs.join(","))
    }
}

fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A number as Prometheus writes it: whole numbers without a fraction.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A record as plain data: the shape of `tests/vectors/telemetry.json`'s records, with the
/// fields the JSON line leaves out (`attempt`, `server_wait`, `gate_wait_ms`). `type` is
/// `attempt` or `result`; an attempt's status, transport failure or neither (a success with no
/// HTTP meaning) is its outcome; the URL and headers are redacted when the record is made from
/// it. (One flat struct, not a tagged enum: it keeps the WebAssembly module small.)
#[cfg(feature = "serde")]
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub struct RecordValue {
    /// `attempt` or `result`.
    #[serde(rename = "type")]
    pub kind: String,
    /// When the attempt (or the operation's first attempt) started, ms since the Unix epoch.
    pub start_unix_ms: i64,
    /// An attempt's: how long it took, ms.
    pub elapsed_ms: u64,
    /// The HTTP method (empty for a task).
    pub method: String,
    /// The URL.
    pub url: String,
    /// An attempt's status, if a response came.
    pub status: Option<u16>,
    /// An attempt's transport failure, by name, if one ended it.
    pub transport: Option<String>,
    /// An attempt's response headers.
    pub headers: Vec<(String, String)>,
    /// An attempt's delay before the next attempt.
    pub delay_ms: Option<u64>,
    /// An attempt's decision: `done`, `retry` or `give_up`.
    pub decision: String,
    /// The reason's name (a result's: none when it succeeded).
    pub reason: Option<String>,
    /// An attempt's number, from 0.
    pub attempt: u32,
    /// An attempt's delay is the server's wait.
    pub server_wait: bool,
    /// How long an attempt waited at the gate, ms (none: no gate).
    pub gate_wait_ms: Option<u64>,
    /// A result's attempts.
    pub attempts: u32,
    /// A result's `queue_stopped`: the reason that stopped the queue.
    pub stopped_by: Option<String>,
    /// A result's time from its start to its end, ms.
    pub total_ms: u64,
}

/// The longest record, as JSON text, that a binding reads for its telemetry: 64 KiB.
pub const RECORD_JSON_MAX: usize = 64 * 1024;

#[cfg(feature = "serde")]
impl RecordValue {
    /// What the record means to telemetry, as [`Telemetry::to_json`] writes it; the error of
    /// [`to_record`](Self::to_record) for a record that is none.
    pub fn telemetry_json(&self) -> Result<String, String> {
        Ok(telemetry(&self.to_record()?).to_json())
    }

    /// The record, made as the machine makes it; a name that is none of recuo's is an error
    /// naming it.
    pub fn to_record(&self) -> Result<Record, String> {
        let give_up = |name: &Option<String>| -> Result<Option<GiveUpReason>, String> {
            name.as_deref()
                .map(|n| GiveUpReason::from_name(n).ok_or_else(|| format!("unknown reason {n:?}")))
                .transpose()
        };
        match self.kind.as_str() {
            "attempt" => {
                let outcome = match (self.status, &self.transport) {
                    (Some(s), None) => Outcome::Status(s),
                    (None, Some(t)) => Outcome::Transport(
                        crate::Transport::from_name(t)
                            .ok_or_else(|| format!("unknown transport failure {t:?}"))?,
                    ),
                    (None, None) => Outcome::Success,
                    (Some(_), Some(_)) => {
                        return Err("both a status and a transport failure".into())
                    }
                };
                let reason = self.reason.as_deref().unwrap_or_default();
                let mut a = AttemptRecord::new(
                    self.start_unix_ms,
                    self.elapsed_ms,
                    &self.method,
                    &self.url,
                    outcome,
                    &self.headers,
                    self.delay_ms,
                    AttemptDecision::from_name(&self.decision)
                        .ok_or_else(|| format!("unknown decision {:?}", self.decision))?,
                    AttemptReason::from_name(reason)
                        .ok_or_else(|| format!("unknown reason {reason:?}"))?,
                );
                a.attempt = self.attempt;
                a.server_wait = self.server_wait;
                a.gate_wait_ms = self.gate_wait_ms;
                Ok(Record::Attempt(a))
            }
            "result" => {
                let mut f = FinalRecord::new(
                    self.start_unix_ms,
                    &self.method,
                    &self.url,
                    give_up(&self.reason)?,
                    self.attempts,
                    self.total_ms,
                );
                f.stopped_by = give_up(&self.stopped_by)?;
                Ok(Record::Final(f))
            }
            other => Err(format!("unknown record type {other:?}")),
        }
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;

    #[test]
    fn a_record_value_answers_its_telemetry_json() {
        let value = RecordValue {
            kind: "attempt".into(),
            method: "GET".into(),
            url: "/".into(),
            status: Some(503),
            decision: "retry".into(),
            reason: Some("unavailable".into()),
            ..RecordValue::default()
        };
        let record = value.to_record().unwrap();
        assert_eq!(value.telemetry_json(), Ok(telemetry(&record).to_json()));
        let unknown = RecordValue {
            kind: "attempt".into(),
            transport: Some("dns".into()),
            ..RecordValue::default()
        };
        assert!(unknown.telemetry_json().unwrap_err().contains("dns"));
    }
}
