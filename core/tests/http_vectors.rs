//! tests/vectors/http.json, as the core answers it: the request plans, the endings, the
//! give-up messages, and every scripted request played through the operation machine on a
//! virtual clock (a cut body and a dropped connection are what the adapters report them as:
//! a `reset`).

use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

use recuo::http::{Last, RequestPlan, Style};
use recuo::{GiveUpReason, Operation, Outcome, Policy, RetryBudget, Step, Transport};
use serde_json::Value;

fn doc() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/http.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn style(v: &Value) -> Style {
    match v.as_str().unwrap() {
        "client" => Style::Client,
        "guide" => Style::Guide,
        s => panic!("style {s}"),
    }
}

fn reason(v: &Value) -> Option<GiveUpReason> {
    v.as_str().map(|s| GiveUpReason::from_name(s).unwrap())
}

fn last(v: &Value) -> Last {
    if let Some(s) = v.get("status") {
        Last::Status(u16::try_from(s.as_u64().unwrap()).unwrap())
    } else if let Some(t) = v.get("transport") {
        Last::Transport(Transport::from_name(t.as_str().unwrap()).unwrap())
    } else if v.get("late").is_some() {
        Last::Late
    } else {
        Last::Nothing
    }
}

fn policy(p: &Value, style: Style) -> Policy {
    let ms = |k: &str| p[k].as_u64().map(Duration::from_millis);
    let base = match style {
        Style::Client => Policy::adapters(),
        Style::Guide => Policy::guide_a(),
    };
    base.to_builder()
        .max_attempts(u32::try_from(p["max_attempts"].as_u64().unwrap()).unwrap())
        .base(ms("base_ms").unwrap())
        .cap(ms("cap_ms").unwrap())
        .deadline(ms("deadline_ms"))
        .server_honours_keys(p["server_honours_keys"].as_bool().unwrap())
        .build()
        .unwrap()
}

#[test]
fn plans() {
    for c in doc()["plans"].as_array().unwrap() {
        let p = Policy::adapters()
            .to_builder()
            .server_honours_keys(c["server_honours_keys"].as_bool().unwrap())
            .build()
            .unwrap();
        let plan = RequestPlan::new(
            &p,
            c["method"].as_str().unwrap(),
            c["callers_key"].as_bool().unwrap(),
            c["send_keys"].as_bool(),
        );
        assert_eq!(plan.key().name(), c["key"], "{c}");
        assert_eq!(plan.idempotent(), c["idempotent"], "{c}");
    }
}

#[test]
fn endings_and_messages() {
    let d = doc();
    for c in d["endings"].as_array().unwrap() {
        let e = recuo::http::ending(style(&c["style"]), reason(&c["reason"]), last(&c["last"]));
        assert_eq!(e.name(), c["ending"], "{c}");
    }
    for c in d["messages"].as_array().unwrap() {
        let m = recuo::http::give_up_message(
            reason(&c["reason"]).unwrap(),
            u32::try_from(c["attempts"].as_u64().unwrap()).unwrap(),
            last(&c["last"]),
            c["retry_in_ms"].as_u64(),
        );
        assert_eq!(m, c["message"], "{c}");
    }
}

/// A header value of a script: `{date+N}` is the HTTP-date of `unix_s + N`.
fn header_value(v: &str, unix_s: u64) -> String {
    match v.strip_prefix("{date+").and_then(|r| r.strip_suffix('}')) {
        Some(n) => httpdate::fmt_http_date(
            UNIX_EPOCH + Duration::from_secs(unix_s + n.parse::<u64>().unwrap()),
        ),
        None => v.to_string(),
    }
}

#[test]
fn scripted_requests() {
    const UNIX_S: u64 = 1_780_000_000;
    for c in doc()["requests"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let st = style(&c["style"]);
        let p = policy(&c["policy"], st);
        let callers = c["callers_key"].is_string();
        let plan = RequestPlan::new(
            &p,
            c["method"].as_str().unwrap(),
            callers,
            c["send_keys"].as_bool(),
        );
        let budget = RetryBudget::new(1.0, 100.0, 10).unwrap();
        let mut op = Operation::new(&p)
            .seed(Some(1))
            .request(c["method"].as_str().unwrap(), "http://127.0.0.1/x")
            .plan(plan)
            .replayable(c["replayable"].as_bool().unwrap())
            .gate(recuo::Gate::new().with_budget(budget.clone()))
            .records(Some(recuo::Level::Debug));
        let script = c["script"].as_array().unwrap();
        let mut now = 0u64;
        let mut step = op.start(now, i64::try_from(UNIX_S * 1000).unwrap());
        let mut calls = 0usize;
        let mut seen = Last::Nothing;
        let mut retries = 0u32;
        loop {
            step = match step {
                Step::Call { .. } => {
                    let ev = &script[calls.min(script.len() - 1)];
                    calls += 1;
                    now += 5;
                    let headers: Vec<(String, String)> = ev["headers"]
                        .as_object()
                        .map(|h| {
                            h.iter()
                                .map(|(k, v)| {
                                    (k.clone(), header_value(v.as_str().unwrap(), UNIX_S))
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    let broken =
                        ev["cut"].as_bool() == Some(true) || ev["reset"].as_bool() == Some(true);
                    if broken {
                        seen = Last::Transport(Transport::Reset);
                        op.responded(
                            now,
                            Outcome::Transport(Transport::Reset),
                            &[] as &[(&str, &str)],
                        )
                    } else {
                        let s = u16::try_from(ev["status"].as_u64().unwrap()).unwrap();
                        seen = Last::Status(s);
                        op.responded(now, Outcome::Status(s), &headers)
                    }
                }
                Step::Sleep { delay_ms, .. } => {
                    retries += 1;
                    now += delay_ms;
                    op.slept(now)
                }
                Step::Enter { .. } | Step::Classify { .. } => panic!("{name}: {step:?}"),
                Step::Done(_) | Step::GaveUp { .. } => break,
            };
        }
        let e = &c["expect"];
        assert_eq!(plan.key().name(), e["key"], "{name}");
        assert_eq!(plan.idempotent(), e["idempotent"], "{name}");
        assert_eq!(calls as u64, e["attempts"].as_u64().unwrap(), "{name}");
        let mut decisions = Vec::new();
        while let Some((_, r)) = op.poll_record() {
            let line: Value = serde_json::from_str(&r.to_json_line()).unwrap();
            if line["type"] == "attempt" {
                decisions.push(line["decision"].as_str().unwrap().to_string());
            }
        }
        assert_eq!(Value::from(decisions), e["decisions"], "{name}");
        // Only a retry decided spends the budget: a body that cannot be replayed spends none.
        assert_eq!(
            budget.counts_at(recuo::clock::monotonic_ns()).1,
            u64::from(retries),
            "{name}"
        );
        let ending = op.ending(st, seen);
        assert_eq!(ending.name(), e["ending"], "{name}");
        let report = op.report();
        assert_eq!(
            report.reason.map(|r| r.name()),
            e["reason"].as_str(),
            "{name}"
        );
        assert_eq!(op.retry_at_ms().is_some(), e["retry_at"], "{name}");
        match seen {
            Last::Status(s) if ending != recuo::http::Ending::Error => {
                assert_eq!(Some(u64::from(s)), e["status"].as_u64(), "{name}")
            }
            Last::Transport(t) => assert_eq!(Some(t.name()), e["error"].as_str(), "{name}"),
            _ => {}
        }
        let message = match ending {
            recuo::http::Ending::GiveUp => op.give_up_message(now, seen),
            _ => None,
        };
        assert_eq!(message.as_deref(), e["message"].as_str(), "{name}");
    }
}
