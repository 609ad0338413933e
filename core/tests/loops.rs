//! The loop vectors (`tests/vectors/loops.json`): the operation machine and the batch queue,
//! driven event by event, answer exactly the steps, reports, stats and records written there.
//! The threaded runners are checked against the same scenarios in `runner.rs`/`batch.rs`.

use std::path::PathBuf;

use recuo::{
    AttemptPool, BatchEnd, BatchProgress, BatchQueue, Cause, ConcurrencyLimit, Gate, GatePoll,
    GiveUpReason, IdempotencyKey, Level, LoopPool, Next, Operation, Outcome, Permit, Policy,
    Regulator, RequestLine, RetryBudget, Seen, ServerWait, StatsRecorder, Step, Transport, Verdict,
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

/// An HTTP attempt's end as a `respond` (a status and headers) or `transport` (a transport
/// failure of that kind) event says, told to `op` at `at`.
fn responded(op: &mut Operation, at: u64, ev: &Value) -> Step {
    match ev["do"].as_str() {
        Some("respond") => op.responded(
            at,
            Outcome::Status(ev["status"].as_u64().unwrap() as u16),
            &headers_of(&ev["headers"]),
        ),
        _ => op.responded::<&str, &str>(
            at,
            Outcome::Transport(Transport::from_name(ev["kind"].as_str().unwrap()).unwrap()),
            &[],
        ),
    }
}

/// A recorder's counts as the vectors write them.
fn stats_json(stats: &StatsRecorder) -> Value {
    let s = stats.snapshot();
    json!({
        "initial": s.initial, "retries": s.retries, "successes": s.successes,
        "failures": s.failures, "not_started": s.not_started,
        "throttled": s.throttled, "unavailable": s.unavailable,
    })
}

/// Every record `poll` hands out, as the vectors write them: `[level, JSON line]`, in order.
fn drain(mut poll: impl FnMut() -> Option<(Level, recuo::Record)>) -> Value {
    let mut made = Vec::new();
    while let Some((level, record)) = poll() {
        made.push(json!([level.name(), record.to_json_line()]));
    }
    Value::Array(made)
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

/// What an attempt received, as the vectors write it (`null`: nothing said).
fn seen_of(v: &Value) -> Option<Seen> {
    let status = v.get("status")?.as_u64()?;
    Some(Seen::new(
        Outcome::Status(u16::try_from(status).unwrap()),
        &headers_of(&v["headers"]),
    ))
}

/// One look at the gate, as the vectors write it.
fn poll_json(poll: &GatePoll) -> Value {
    match poll {
        GatePoll::Wait { delay_ms } => json!({"gate": "wait", "delay_ms": delay_ms}),
        GatePoll::Next(step) => step_json(step),
    }
}

/// The gate of a scenario, and the places of its limit that others hold at the start.
fn gate_with_holders(v: &Value) -> (Option<Gate>, Vec<Permit>) {
    let Some(mut gate) = gate_of(v) else {
        return (None, Vec::new());
    };
    if let Some(r) = v.get("regulator") {
        let regulator = Regulator::new(
            r["rate"].as_str().unwrap().parse().unwrap(),
            u32::try_from(r["burst"].as_u64().unwrap()).unwrap(),
        )
        .unwrap();
        for _ in 0..r["taken"].as_u64().unwrap_or(0) {
            regulator.try_acquire_at(0, 1).unwrap();
        }
        gate = gate.with_regulator(regulator);
    }
    let held = match (gate.limit(), v["held"].as_u64()) {
        (Some(limit), Some(n)) => (0..n)
            .map(|_| limit.try_acquire().unwrap().unwrap())
            .collect(),
        _ => Vec::new(),
    };
    (Some(gate), held)
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
        let (gate, mut held) = gate_with_holders(&sc["gate"]);
        if let Some(gate) = gate {
            op = op.gate(gate);
        }
        if let Some(pool) = sc["pool"].as_object() {
            op = match pool.get("after_first") {
                Some(_) => {
                    let enclosing = pool["enclosing"]
                        .as_u64()
                        .map(|n| AttemptPool::new(u32::try_from(n).unwrap()));
                    op.loop_pool(LoopPool::after_first(
                        enclosing.as_ref(),
                        policy.max_attempts(),
                        false,
                    ))
                }
                None => op.pool(
                    AttemptPool::new(pool["remaining"].as_u64().unwrap() as u32),
                    pool["nested"].as_bool().unwrap(),
                ),
            };
        }
        let unix = sc["unix_ms"].as_i64().unwrap();
        let mut last = None;
        for (i, ev) in sc["events"].as_array().unwrap().iter().enumerate() {
            let at = ev["at"].as_u64().unwrap_or(0);
            let step = match ev["do"].as_str().unwrap() {
                "start" => op.start(at, unix),
                "first" => op.start_after_first(at, unix),
                "poll_gate" => {
                    let poll = op.poll_gate_at(at, at * 1_000_000).unwrap();
                    assert_eq!(poll_json(&poll), ev["expect"], "{name}: event {i}");
                    match poll {
                        GatePoll::Next(step) => {
                            last = Some(step);
                        }
                        GatePoll::Wait { .. } => {}
                    }
                    continue;
                }
                "release" => {
                    drop(held.pop().expect("a place held"));
                    continue;
                }
                "enter" => op.entered(at, ev["passed"].as_bool().unwrap()),
                "respond" | "transport" => responded(&mut op, at, ev),
                "fail" => op.failed_noted(at, seen_of(&ev["seen"]), seen_of(&ev["error_seen"])),
                "succeed" => op.succeeded(at),
                "judge" => op.judged(at, verdict_of(&ev["verdict"]), seen_of(&ev["seen"])),
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
                "retry_at_unix_ms": report.retry_at_unix_ms,
            }),
            *want,
            "{name}: report"
        );
        assert_eq!(stats_json(&stats), sc["stats"], "{name}: stats");
        let records = drain(|| op.poll_record());
        assert_eq!(records, sc["records"], "{name}: records");
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

#[test]
fn the_pool_a_loop_draws_from() {
    for case in loops()["pools"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let enclosing = case["enclosing"]
            .as_u64()
            .map(|n| AttemptPool::new(u32::try_from(n).unwrap()));
        let max = u32::try_from(case["max_attempts"].as_u64().unwrap()).unwrap();
        let batch = case["batch"].as_bool().unwrap();
        let chosen = if case["after_first"].as_bool().unwrap() {
            LoopPool::after_first(enclosing.as_ref(), max, batch)
        } else {
            LoopPool::choose(enclosing.as_ref(), max, batch)
        };
        assert_eq!(
            json!({"remaining": chosen.pool.remaining(), "nested": chosen.nested, "owned": chosen.owned}),
            case["expect"],
            "{name}"
        );
        if let (Some(e), false) = (&enclosing, chosen.owned) {
            assert!(e.try_take(), "{name}: the enclosing pool itself");
            assert_eq!(chosen.pool.remaining(), e.remaining(), "{name}: shared");
        }
    }
}

#[test]
fn whether_a_success_needs_the_machine() {
    for case in loops()["success_needs_machine"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let (gate, _) = gate_with_holders(&case["gate"]);
        let records = case["records"]
            .as_str()
            .map(|l| Level::from_name(l).unwrap());
        assert_eq!(
            Operation::success_needs_machine(
                gate.as_ref(),
                case["stats"].as_bool().unwrap(),
                records
            ),
            case["expect"].as_bool().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn a_wait_rounds_up_to_whole_milliseconds() {
    for pair in loops()["wait_ms_from_ns"].as_array().unwrap() {
        assert_eq!(
            recuo::wait_ms_from_ns(pair[0].as_u64().unwrap()),
            pair[1].as_u64().unwrap(),
            "{pair}"
        );
    }
}

fn end_json(end: BatchEnd) -> Value {
    let (kind, reason, stopped_by) = match end {
        BatchEnd::Succeeded => ("succeeded", None, None),
        BatchEnd::GaveUp { reason, stopped_by } => ("gave_up", Some(reason), stopped_by),
        BatchEnd::NotStarted { reason, stopped_by } => ("not_started", Some(reason), stopped_by),
    };
    json!({"end": kind, "reason": reason.map(GiveUpReason::name), "stopped_by": stopped_by.map(GiveUpReason::name)})
}

/// A batch's progress, as the vectors write it.
fn progress_json(p: BatchProgress) -> Value {
    json!({
        "total": p.total, "done": p.done, "succeeded": p.succeeded, "failed": p.failed,
        "not_started": p.not_started, "retries": p.retries,
    })
}

#[test]
fn batch_scenarios() {
    for b in loops()["batches"].as_array().unwrap() {
        let name = b["name"].as_str().unwrap();
        let unix = b["unix_ms"].as_i64().unwrap();
        let stats = StatsRecorder::new();
        let requests: Vec<RequestLine> = b["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| RequestLine {
                method: r["method"].as_str().unwrap().to_string(),
                url: r["url"].as_str().unwrap().to_string(),
            })
            .collect();
        let len = b["len"].as_u64().unwrap() as usize;
        let mut queue =
            BatchQueue::new(&policy_of(&b["policy"]), len, 0, b["deadline_ms"].as_u64())
                .stop_when_a_wait_exceeds_the_deadline(
                    b["stop_on_unreachable_wait"].as_bool().unwrap(),
                )
                .stats(stats.clone())
                .records(requests.clone(), unix);
        let mut ops: Vec<Option<Operation>> = (0..len).map(|_| None).collect();
        let mut ends: Vec<Option<BatchEnd>> = vec![None; len];
        let mut progress = Vec::new();
        for (i, ev) in b["events"].as_array().unwrap().iter().enumerate() {
            let at = ev["at"].as_u64().unwrap_or(0);
            let index = ev["op"].as_u64().map(|n| n as usize);
            let got = match (ev["do"].as_str().unwrap(), index) {
                ("next", None) => match queue.next(at) {
                    Next::Start { index, policy } => {
                        let r = &requests[index];
                        ops[index] = Some(
                            Operation::new(&policy)
                                .request(&r.method, &r.url)
                                .records(Some(Level::Debug))
                                .stats(stats.clone()),
                        );
                        json!({"next": "start", "index": index, "deadline_ms": policy.deadline_ms()})
                    }
                    Next::NotStarted {
                        index,
                        reason,
                        stopped_by,
                    } => {
                        let end = BatchEnd::NotStarted { reason, stopped_by };
                        ends[index] = Some(end);
                        progress.push(progress_json(queue.ended(index, end)));
                        json!({
                            "next": "not_started", "index": index, "reason": reason.name(),
                            "stopped_by": stopped_by.map(GiveUpReason::name),
                        })
                    }
                    Next::Finished => json!({"next": "finished"}),
                },
                ("finished", Some(n)) => {
                    let report = ops[n].as_ref().unwrap().report();
                    let end = BatchEnd::of(&report, false);
                    ends[n] = Some(end);
                    let stops = queue.finished(n, report.reason);
                    progress.push(progress_json(queue.ended(n, end)));
                    json!({ "stops": stops })
                }
                ("stop_queue", Some(n)) => {
                    ops[n]
                        .as_mut()
                        .unwrap()
                        .stop_queue(queue.stopped().unwrap());
                    continue;
                }
                (what, Some(n)) => {
                    let op = ops[n].as_mut().unwrap();
                    let step = match what {
                        "start" => op.start(at, unix + at as i64),
                        "slept" => op.slept(at),
                        "respond" | "transport" => responded(op, at, ev),
                        other => panic!("{name}: unknown event {other}"),
                    };
                    step_json(&step)
                }
                (other, _) => panic!("{name}: unknown event {other}"),
            };
            assert_eq!(got, ev["expect"], "{name}: event {i}");
        }
        let results: Vec<Value> = ends.into_iter().map(|e| end_json(e.unwrap())).collect();
        assert_eq!(Value::Array(results), b["results"], "{name}: results");
        assert_eq!(Value::Array(progress), b["progress"], "{name}: progress");
        let mut records = serde_json::Map::new();
        for (n, op) in ops.iter_mut().enumerate() {
            if let Some(op) = op {
                records.insert(n.to_string(), drain(|| op.poll_record()));
            }
        }
        records.insert("queue".to_string(), drain(|| queue.poll_record()));
        assert_eq!(Value::Object(records), b["records"], "{name}: records");
        assert_eq!(stats_json(&stats), b["stats"], "{name}: stats");
    }
}
