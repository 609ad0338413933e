//! tests/vectors/telemetry.json: each record's span and points, the instruments' two names,
//! and the Prometheus text of every point added up; then the machine itself: a request
//! retried twice after 503s makes three attempt spans (resend counts 1 and 2 on the last
//! two), two retry delays and one operation span.

use recuo::record::Record;
use recuo::telemetry::{telemetry, Instrument, RecordValue, Registry, SECONDS_BUCKETS};
use recuo::{Jitter, Level, Operation, Outcome, Policy, Step};
use serde_json::Value;
use std::time::Duration;

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/telemetry.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// The record a case describes, made as the machine makes it (the core's plain form).
fn record_of(r: &Value) -> Record {
    serde_json::from_value::<RecordValue>(r.clone())
        .expect("a record value")
        .to_record()
        .expect("a record")
}

#[test]
fn each_record_means_its_span_and_points() {
    let v = vectors();
    for case in v["cases"].as_array().unwrap() {
        let got: Value = serde_json::from_str(&telemetry(&record_of(&case["record"])).to_json())
            .expect("the telemetry's JSON");
        assert_eq!(got["span"], case["span"], "{}", case["name"]);
        assert_eq!(got["points"], case["points"], "{}", case["name"]);
    }
}

#[test]
fn every_instrument_has_its_two_names() {
    let v = vectors();
    let listed = v["instruments"].as_array().unwrap();
    assert_eq!(listed.len(), Instrument::ALL.len());
    for (i, want) in Instrument::ALL.iter().zip(listed) {
        assert_eq!(i.otel_name(), text(want, "otel_name"));
        assert_eq!(i.unit(), text(want, "unit"));
        assert_eq!(i.kind().name(), text(want, "kind"));
        assert_eq!(i.prometheus_name(), text(want, "prometheus"));
        assert_eq!(Instrument::from_name(i.prometheus_name()), Some(*i));
    }
    let buckets: Vec<f64> = v["histogram_buckets_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_f64().unwrap())
        .collect();
    assert_eq!(buckets, SECONDS_BUCKETS);
    // The instruments as every host reads them: the same names and buckets, as JSON.
    let json: Value = serde_json::from_str(&recuo::telemetry::instruments_json()).unwrap();
    assert_eq!(json["buckets_s"], v["histogram_buckets_s"]);
    for (got, want) in json["instruments"].as_array().unwrap().iter().zip(listed) {
        for key in ["otel_name", "unit", "kind", "prometheus"] {
            assert_eq!(got[key], want[key]);
        }
    }
    assert_eq!(json["instruments"].as_array().unwrap().len(), listed.len());
}

#[test]
fn the_points_added_up_are_the_prometheus_text() {
    let v = vectors();
    let mut registry = Registry::new();
    for case in v["cases"].as_array().unwrap() {
        registry.add_record(&record_of(&case["record"]));
    }
    let want: Vec<&str> = v["prometheus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(registry.to_prometheus().lines().collect::<Vec<_>>(), want);
}

#[test]
fn a_request_retried_twice_after_503s_makes_three_attempt_spans_and_one_operation_span() {
    let policy = Policy::builder()
        .max_attempts(3)
        .base(Duration::from_millis(100))
        .jitter(Jitter::None)
        .build()
        .unwrap();
    let mut op = Operation::new(&policy)
        .request("GET", "https://api.example/items?key=s3cret")
        .records(Some(Level::Debug));
    let mut step = op.start(0, 1_000_000);
    let mut at = 0;
    for status in [503, 503, 200] {
        assert!(matches!(step, Step::Call { .. }), "{step:?}");
        at += 10;
        step = op.responded(at, Outcome::Status(status), &[] as &[(&str, &str)]);
        if let Step::Sleep { delay_ms, .. } = step {
            at += delay_ms;
            step = op.slept(at);
        }
    }
    assert!(matches!(step, Step::Done(_)), "{step:?}");
    let mut spans = Vec::new();
    let mut delays = Vec::new();
    let mut operations = Vec::new();
    while let Some((_, record)) = op.poll_record() {
        let t = telemetry(&record);
        operations.push(t.operation_id);
        delays.extend(
            t.points
                .iter()
                .filter(|p| p.instrument == Instrument::RetryDelay)
                .map(|p| p.value),
        );
        spans.push(t.span);
    }
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["GET", "GET", "GET", "recuo.operation"]);
    let resends: Vec<_> = spans[..3]
        .iter()
        .map(|s| s.attribute("http.request.resend_count").cloned())
        .collect();
    use recuo::telemetry::AttrValue::Int;
    assert_eq!(resends, [None, Some(Int(1)), Some(Int(2))]);
    assert_eq!(delays, [0.1, 0.2]);
    assert_eq!(
        spans[0].attribute("url.full"),
        Some(&recuo::telemetry::AttrValue::Str(
            "https://api.example/items?key=[redacted]".into()
        ))
    );
    assert_eq!(spans[3].attribute("recuo.attempts"), Some(&Int(3)));
    // Every record names its operation, and no other operation has that number.
    assert!(operations[0] > 0 && operations.iter().all(|o| *o == operations[0]));
    let mut other = Operation::new(&policy).records(Some(Level::Debug));
    let _ = other.start(0, 0);
    let _ = other.succeeded(5);
    let (_, record) = other.poll_record().unwrap();
    assert_ne!(telemetry(&record).operation_id, operations[0]);
}

#[test]
fn an_attempt_that_waited_for_its_start_slot_says_how_long() {
    let regulator = recuo::Regulator::new("1/s".parse().unwrap(), 1).unwrap();
    regulator.try_acquire_at(0, 1).unwrap(); // the slot at 0 is someone else's
    let gate = recuo::Gate::new().with_regulator(regulator);
    let policy = Policy::builder().max_attempts(1).build().unwrap();
    let mut op = Operation::new(&policy)
        .gate(gate)
        .request("GET", "https://api.example/items")
        .records(Some(Level::Debug));
    assert!(matches!(op.start(0, 1_000_000), Step::Enter { .. }));
    let wait = match op.poll_gate_at(0, 0).unwrap() {
        recuo::GatePoll::Wait { delay_ms } => delay_ms,
        other => panic!("{other:?}"),
    };
    assert_eq!(wait, 1000);
    let step = match op.poll_gate_at(wait, wait * 1_000_000).unwrap() {
        recuo::GatePoll::Next(step) => step,
        other => panic!("{other:?}"),
    };
    assert!(matches!(step, Step::Call { .. }), "{step:?}");
    let done = op.responded(wait + 40, Outcome::Status(200), &[] as &[(&str, &str)]);
    assert!(matches!(done, Step::Done(_)), "{done:?}");
    let (_, record) = op.poll_record().unwrap();
    let t = telemetry(&record);
    use recuo::telemetry::AttrValue::Int;
    assert_eq!(t.span.attribute("recuo.gate.wait_ms"), Some(&Int(1000)));
    let gate_waits: Vec<f64> = t
        .points
        .iter()
        .filter(|p| p.instrument == Instrument::GateWait)
        .map(|p| p.value)
        .collect();
    assert_eq!(gate_waits, [1.0]);
}
