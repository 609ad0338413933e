//! The loop vectors (`tests/vectors/loops.json`): the operation machine and the batch queue,
//! driven event by event, answer exactly the steps, reports, stats and records written there.
//! The threaded runners are checked against the same scenarios in `runner.rs`/`batch.rs`.

use std::path::PathBuf;

use recuo::{
    AttemptPool, BatchQueue, Cause, ConcurrencyLimit, Gate, GiveUpReason, IdempotencyKey, Next,
    Operation, Outcome, Policy, RetryBudget, ServerWait, StatsRecorder, Step, Transport, Verdict,
};
use serde_json::{json, Value};

fn loops() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/loops.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn policy_of(p: &Value) -> Policy {
    use std::time::Duration;
    let ms = |v: &Value| v.as_u64().map(Duration::from_millis);
    Policy::builder()
        .max_attempts(u32::try_from(p["max_attempts"].as_u64().unwrap()).unwrap())
        .base(ms(&p["base_ms"]).unwrap())
        .cap(ms(&p["cap_ms"]).unwrap())
        .jitter(recuo::Jitter::from_name(p["jitter"].as_str().unwrap()).unwrap())
        .deadline(ms(&p["deadline_ms"]))
        .spread(ms(&p["spread_ms"]))
        .use_date_header(p["use_date_header"].as_bool().unwrap())
        .build()
        .unwrap()
}

fn reason_of(v: &Value) -> GiveUpReason {
    GiveUpReason::from_name(v.as_str().unwrap()).unwrap()
}

fn verdict_of(v: &Value) -> Verdict {
    let cause = Cause::from_name(v["reason"].as_str().unwrap()).unwrap();
    match v["verdict"].as_str().unwrap() {
        "retry" => Verdict::Retry {
            cause,
            server_wait: v["wait_ms"].as_u64().map(ServerWait::Ms),
        },
        "give_up" => Verdict::GiveUp { cause },
        _ => Verdict::Success,
    }
}

fn headers_of(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    (
                        p[0].as_str().unwrap().to_string(),
                        p[1].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A step as the vectors write it.
fn step_json(step: &Step) -> Value {
    match step {
        Step::Enter { attempt, until_ms } => {
            json!({"step": "enter", "attempt": attempt, "until_ms": until_ms})
        }
        Step::Call {
            attempt,
            timeout_ms,
        } => json!({"step": "call", "attempt": attempt, "timeout_ms": timeout_ms}),
        Step::Classify { attempt } => json!({"step": "classify", "attempt": attempt}),
        Step::Sleep { attempt, delay_ms } => {
            json!({"step": "sleep", "attempt": attempt, "delay_ms": delay_ms})
        }
        Step::Done(_) => json!({"step": "done"}),
        Step::GaveUp {
            reason,
            retry_at_ms,
            ..
        } => json!({"step": "gave_up", "reason": reason.name(), "retry_at_ms": retry_at_ms}),
    }
}

fn gate_of(v: &Value) -> Option<Gate> {
    if v.is_null() {
        return None;
    }
    let mut gate = Gate::new();
    if let Some(b) = v.get("budget") {
        gate = gate.with_budget(
            RetryBudget::new(
                b["ratio"].as_f64().unwrap(),
                b["floor_per_s"].as_f64().unwrap(),
                u32::try_from(b["window_s"].as_u64().unwrap()).unwrap(),
            )
            .unwrap(),
        );
    }
    if let Some(n) = v.get("limit") {
        gate = gate.with_limit(ConcurrencyLimit::new(n.as_u64().unwrap() as u32).unwrap());
    }
    Some(gate)
}

#[test]
fn operation_scenarios() {
    let doc = loops();
    let scenarios = doc["scenarios"].as_array().unwrap();
    assert!(scenarios.len() >= 12);
    for sc in scenarios {
        let name = sc["name"].as_str().unwrap();
        let policy = policy_of(&sc["policy"]);
        let stats = StatsRecorder::new();
        let request = &sc["request"];
        let mut op = Operation::new(&policy)
            .request(
                request["method"].as_str().unwrap(),
                request["url"].as_str().unwrap(),
            )
            .records(Some(recuo::Level::Debug))
            .stats(stats.clone())
            .classify_last_failure(!sc["guide"].as_bool().unwrap());
        if sc["key_given"].as_bool().unwrap() {
            op = op.idempotency_key(IdempotencyKey::random());
        }
        if let Some(gate) = gate_of(&sc["gate"]) {
            op = op.gate(gate);
        }
        if let Some(pool) = sc["pool"].as_object() {
            op = op.pool(
                AttemptPool::new(pool["remaining"].as_u64().unwrap() as u32),
                pool["nested"].as_bool().unwrap(),
            );
        }
        let unix = sc["unix_ms"].as_i64().unwrap();
        let mut last = None;
        for (i, ev) in sc["events"].as_array().unwrap().iter().enumerate() {
            let at = ev["at"].as_u64().unwrap_or(0);
            let step = match ev["do"].as_str().unwrap() {
                "start" => op.start(at, unix),
                "enter" => op.entered(at, ev["passed"].as_bool().unwrap()),
                "respond" => op.responded(
                    at,
                    Outcome::Status(ev["status"].as_u64().unwrap() as u16),
                    &headers_of(&ev["headers"]),
                ),
                "transport" => op.responded::<&str, &str>(
                    at,
                    Outcome::Transport(Transport::from_name(ev["kind"].as_str().unwrap()).unwrap()),
                    &[],
                ),
                "fail" => op.failed(at),
                "succeed" => op.succeeded(at),
                "judge" => op.judged(at, verdict_of(&ev["verdict"]), None),
                "slept" => op.slept(at),
                "cancel" => {
                    op.cancel();
                    continue;
                }
                "stop_queue" => {
                    op.stop_queue(reason_of(&ev["reason"]));
                    continue;
                }
                other => panic!("{name}: unknown event {other}"),
            };
            assert_eq!(step_json(&step), ev["expect"], "{name}: event {i}");
            last = Some(step);
        }
        let report = match last {
            Some(Step::Done(r)) | Some(Step::GaveUp { report: r, .. }) => r,
            other => panic!("{name}: ended on {other:?}"),
        };
        let want = &sc["report"];
        assert_eq!(
            json!({
                "attempts": report.attempts,
                "reason": report.reason.map(GiveUpReason::name),
                "elapsed_ms": report.elapsed_ms,
                "delays_ms": report.delays_ms,
                "stopped_by": report.stopped_by.map(GiveUpReason::name),
            }),
            *want,
            "{name}: report"
        );
        let s = stats.snapshot();
        assert_eq!(
            json!({
                "initial": s.initial, "retries": s.retries, "successes": s.successes,
                "failures": s.failures, "not_started": s.not_started,
                "throttled": s.throttled, "unavailable": s.unavailable,
            }),
            sc["stats"],
            "{name}: stats"
        );
        let mut records = Vec::new();
        while let Some((level, record)) = op.poll_record() {
            records.push(json!([level.name(), record.to_json_line()]));
        }
        assert_eq!(Value::Array(records), sc["records"], "{name}: records");
    }
}

#[test]
fn queue_scenarios() {
    let doc = loops();
    for q in doc["queues"].as_array().unwrap() {
        let name = q["name"].as_str().unwrap();
        let stats = StatsRecorder::new();
        let mut queue = BatchQueue::new(
            &policy_of(&q["policy"]),
            q["len"].as_u64().unwrap() as usize,
            0,
            q["deadline_ms"].as_u64(),
        )
        .stop_when_a_wait_exceeds_the_deadline(q["stop_on_unreachable_wait"].as_bool().unwrap())
        .stats(stats.clone());
        for (i, ev) in q["events"].as_array().unwrap().iter().enumerate() {
            let got = match ev["do"].as_str().unwrap() {
                "next" => match queue.next(ev["at"].as_u64().unwrap()) {
                    Next::Start { index, policy } => {
                        json!({"next": "start", "index": index, "deadline_ms": policy.deadline_ms()})
                    }
                    Next::NotStarted {
                        index,
                        reason,
                        stopped_by,
                    } => json!({
                        "next": "not_started", "index": index, "reason": reason.name(),
                        "stopped_by": stopped_by.map(GiveUpReason::name),
                    }),
                    Next::Finished => json!({"next": "finished"}),
                },
                "finished" => {
                    let stops = queue.finished(
                        ev["index"].as_u64().unwrap() as usize,
                        ev["reason"]
                            .as_str()
                            .map(|r| GiveUpReason::from_name(r).unwrap()),
                    );
                    json!({ "stops": stops })
                }
                "stop" => {
                    queue.stop(reason_of(&ev["reason"]));
                    continue;
                }
                other => panic!("{name}: unknown event {other}"),
            };
            assert_eq!(got, ev["expect"], "{name}: event {i}");
        }
        assert_eq!(
            stats.snapshot().not_started,
            q["not_started"].as_u64().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn one_retry_rule_and_one_status_range() {
    use recuo::{ConfigError, RetryRule, Rules};
    let mut rules = Rules::DEFAULT;
    assert_eq!(rules.status_rule(429), RetryRule::Always);
    assert_eq!(rules.status_rule(502), RetryRule::IfIdempotent);
    assert_eq!(rules.status_rule(404), RetryRule::Never);
    rules.set_status_rule(408, RetryRule::Always).unwrap();
    assert_eq!(rules.status_rule(408), RetryRule::Always);
    rules.set_status_rule(503, RetryRule::Never).unwrap();
    assert_eq!(rules.status_rule(503), RetryRule::Never);
    for bad in [0, 100, 200, 399, 600, 70_000] {
        assert_eq!(
            rules.set_status_rule(bad, RetryRule::Always),
            Err(ConfigError::StatusOutOfRange { status: bad })
        );
    }
    rules.set_transport_rule(Transport::Reset, RetryRule::Always);
    assert_eq!(rules.transport_rule(Transport::Reset), RetryRule::Always);
    assert_eq!(rules.transport_rule(Transport::Connect), RetryRule::Always);
    assert_eq!(
        rules.transport_rule(Transport::Timeout),
        RetryRule::IfIdempotent
    );
}
