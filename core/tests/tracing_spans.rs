//! The `tracing` feature: `Retry::call` makes an operation span, one attempt span per
//! attempt (entered while the attempt runs) with the telemetry mapping's attributes, and an
//! event per record — for a request retried twice after 503s, three attempt spans with
//! `http.request.resend_count` 1 and 2 on the last two.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use recuo::{Cause, ManualClock, Outcome, Policy, Retry, Verdict};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Debug, Default, Clone)]
struct SpanSeen {
    name: String,
    parent: Option<u64>,
    fields: HashMap<String, String>,
    /// The spans entered while this one ran (an HTTP client's, in real use).
    entered: usize,
}

#[derive(Default)]
struct Seen {
    spans: Vec<SpanSeen>,
    stack: Vec<u64>,
    events: Vec<(Option<u64>, String)>,
}

/// A subscriber that keeps every span, its parent, its fields and the events inside it.
#[derive(Clone, Default)]
struct Keep(Arc<Mutex<Seen>>);

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl Subscriber for Keep {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut seen = self.0.lock().unwrap();
        let mut span = SpanSeen {
            name: attrs.metadata().name().to_string(),
            parent: seen.stack.last().copied(),
            ..SpanSeen::default()
        };
        attrs.record(&mut Fields(&mut span.fields));
        seen.spans.push(span);
        Id::from_u64(seen.spans.len() as u64)
    }
    fn record(&self, id: &Id, values: &Record<'_>) {
        let mut seen = self.0.lock().unwrap();
        let span = &mut seen.spans[id.into_u64() as usize - 1];
        values.record(&mut Fields(&mut span.fields));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        let mut seen = self.0.lock().unwrap();
        let at = seen.stack.last().copied();
        seen.events
            .push((at, fields.remove("record").unwrap_or_default()));
    }
    fn enter(&self, id: &Id) {
        let mut seen = self.0.lock().unwrap();
        if let Some(&top) = seen.stack.last() {
            seen.spans[top as usize - 1].entered += 1;
        }
        seen.stack.push(id.into_u64());
    }
    fn exit(&self, _: &Id) {
        self.0.lock().unwrap().stack.pop();
    }
}

#[test]
fn a_request_retried_twice_after_503s_is_one_operation_span_around_three_attempt_spans() {
    let keep = Keep::default();
    let policy = Policy::builder().max_attempts(3).build().unwrap();
    let mut statuses = [503u16, 503, 200].into_iter();
    let result = tracing::subscriber::with_default(keep.clone(), || {
        Retry::new(&policy)
            .clock(ManualClock::new(1_000_000))
            .seed(7)
            .classify(|_: &u16| Verdict::Retry {
                cause: Cause::ServerError,
                server_wait: None,
            })
            .call(|ctx| {
                ctx.record_request("GET", "https://api.example/items?token=s3cret");
                let status = statuses.next().unwrap();
                ctx.record_response(Outcome::Status(status), &[] as &[(&str, &str)]);
                // What an HTTP client's own instrumentation would open inside the attempt.
                tracing::info_span!("http.client").in_scope(|| ());
                if status == 200 {
                    Ok(status)
                } else {
                    Err(status)
                }
            })
    });
    assert_eq!(result.ok(), Some(200));
    let seen = keep.0.lock().unwrap();
    let names: Vec<&str> = seen.spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "recuo.operation",
            "recuo.attempt",
            "http.client",
            "recuo.attempt",
            "http.client",
            "recuo.attempt",
            "http.client"
        ]
    );
    let attempts: Vec<&SpanSeen> = seen
        .spans
        .iter()
        .filter(|s| s.name == "recuo.attempt")
        .collect();
    for a in &attempts {
        assert_eq!(a.parent, Some(1), "an attempt is a child of its operation");
        assert_eq!(a.fields["otel.name"], "GET");
        assert_eq!(a.fields["otel.kind"], "client");
        assert_eq!(
            a.fields["url.full"],
            "https://api.example/items?token=[redacted]"
        );
        assert_eq!(a.entered, 1, "the client's span ran inside the attempt's");
    }
    let resends: Vec<Option<&str>> = attempts
        .iter()
        .map(|a| {
            a.fields
                .get("http.request.resend_count")
                .map(String::as_str)
        })
        .collect();
    assert_eq!(resends, [None, Some("1"), Some("2")]);
    let statuses: Vec<&str> = attempts
        .iter()
        .map(|a| a.fields["http.response.status_code"].as_str())
        .collect();
    assert_eq!(statuses, ["503", "503", "200"]);
    assert_eq!(attempts[0].fields["otel.status_code"], "ERROR");
    assert_eq!(attempts[0].fields["recuo.decision"], "retry");
    assert!(!attempts[2].fields.contains_key("otel.status_code"));
    let op = &seen.spans[0];
    assert_eq!(op.fields["recuo.attempts"], "3");
    assert_eq!(op.fields["recuo.result"], "success");
    // One event per record: three attempts and the result, each inside its own span.
    let at: Vec<Option<u64>> = seen.events.iter().map(|(at, _)| *at).collect();
    assert_eq!(at, [Some(2), Some(4), Some(6), Some(1)]);
    assert!(
        seen.events[3].1.contains("\"type\":\"result\""),
        "{:?}",
        seen.events[3]
    );
}
