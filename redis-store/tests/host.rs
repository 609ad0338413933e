//! The host-reached stores (`recuo_redis::host`) behind the core's gate, this test playing
//! the host as recuo's WebAssembly build's JavaScript does: it runs each call the stores leave
//! in their channels on a real Redis server (support/) — `EVALSHA`, then `EVAL` on `NOSCRIPT`
//! — answers it, and looks again; it runs the queued calls after each step. The limit, the
//! regulator and the budget then hold on the server exactly as the crate's own client holds
//! them.
#![cfg(feature = "client")]

use std::time::Duration;

use recuo::{
    Cause, ConcurrencyLimit, Gate, GatePoll, GiveUpReason, Jitter, Operation, Policy, Rate,
    Regulator, RetryBudget, Step, Verdict,
};
use recuo_redis::calls::{BudgetCalls, GcraCalls, LeaseCalls, ScriptCall, SettingsCheck};
use recuo_redis::host::{HostBudget, HostChannel, HostGcra, HostLimit};

mod support;
use support::Server;

/// Runs `call` on the server as a host does: its SHA-1 first, its text when the server
/// answers `NOSCRIPT`; the reply's integers.
fn run(con: &mut redis::Connection, call: &ScriptCall) -> Vec<i64> {
    let with = |verb: &str, first: &str| {
        let mut c = redis::cmd(verb);
        c.arg(first)
            .arg(call.keys.len())
            .arg(&call.keys)
            .arg(&call.args);
        c
    };
    match with("EVALSHA", call.script.sha1).query::<Vec<i64>>(con) {
        Ok(reply) => reply,
        Err(e) if e.code() == Some("NOSCRIPT") => {
            with("EVAL", call.script.body).query(con).expect("EVAL")
        }
        Err(e) => panic!("EVALSHA: {e}"),
    }
}

/// A server of the test's own, and the host's connection to it.
fn started() -> (Server, redis::Connection) {
    let server = Server::start();
    let client = redis::Client::open(server.url.as_str()).expect("the URL");
    let con = client.get_connection().expect("a connection");
    (server, con)
}

fn settled(con: &mut redis::Connection, check: &SettingsCheck) {
    check
        .reply(&run(con, &check.call))
        .expect("the key's settings");
}

/// A regulator (burst 1) whose calls go through `channel`.
fn key_of(gcra: &GcraCalls, channel: &HostChannel, rate: Rate) -> Regulator {
    let store = HostGcra::new(gcra.clone(), channel.clone());
    Regulator::remote(Box::new(store), rate, 1, false).unwrap()
}

/// A gate of `regulator` and the limit `leases`, whose calls go through `channel`.
fn gated(regulator: Regulator, leases: &LeaseCalls, channel: &HostChannel) -> Gate {
    let limit = HostLimit::new(leases.clone(), channel.clone());
    Gate::new()
        .with_regulator(regulator)
        .with_limit(ConcurrencyLimit::remote(Box::new(limit)))
}

struct Host {
    con: redis::Connection,
    channels: Vec<HostChannel>,
    budget: HostChannel,
    /// The gate's budget: asked for the retry first, as a host asks it.
    retries: RetryBudget,
}

impl Host {
    /// Runs what the stores wait on (one call), and every queued call.
    fn serve(&mut self) -> bool {
        let mut answered = false;
        for ch in &self.channels {
            if let Some(call) = ch.pending() {
                let reply = run(&mut self.con, &call);
                ch.answer(reply);
                answered = true;
            }
        }
        self.drain();
        answered
    }

    fn drain(&mut self) {
        for ch in &self.channels {
            while let Some(call) = ch.take_notice() {
                run(&mut self.con, &call);
            }
        }
    }

    /// Drives `op` to its end as a host with an event loop does, every attempt answering a
    /// 503 (no server wait): the step it ends with.
    fn drive(&mut self, op: &mut Operation) -> Step {
        let mut now = 0u64;
        let mut step = op.start(now, 0);
        let mut passes = 0;
        loop {
            self.drain();
            step = match step {
                Step::Enter { .. } => match op.poll_gate(now) {
                    Ok(GatePoll::Next(next)) => {
                        passes += 1;
                        next
                    }
                    Ok(GatePoll::Wait { delay_ms }) => {
                        now += delay_ms;
                        step
                    }
                    Err(e) => {
                        assert!(e.would_block(), "{e}");
                        assert!(self.serve(), "a call waits on the host");
                        step
                    }
                },
                Step::Call { .. } => op.failed(now),
                Step::Classify { .. } => {
                    let verdict = Verdict::Retry {
                        cause: Cause::ServerError,
                        server_wait: None,
                    };
                    if op.would_draw_on_budget(now, &verdict) {
                        // The budget waits on the withdrawal: run it, answer it.
                        let asked = self.retries.withdraw_checked(None).unwrap_err();
                        assert!(asked.would_block(), "{asked}");
                        let call = self.budget.pending().expect("the withdrawal");
                        let reply = run(&mut self.con, &call);
                        self.budget.answer(reply);
                    }
                    op.judged(now, verdict, None)
                }
                Step::Sleep { delay_ms, .. } => {
                    now += delay_ms;
                    op.slept(now)
                }
                end => {
                    self.drain();
                    assert!(passes >= 1);
                    return end;
                }
            };
        }
    }
}

#[test]
fn a_gate_of_host_reached_stores_holds_on_the_server() {
    let (mut server, mut con) = started();
    let (regulator_ch, limit_ch, budget_ch) = (
        HostChannel::default(),
        HostChannel::default(),
        HostChannel::default(),
    );
    let rate: Rate = "1000/s".parse().unwrap();
    let gcra = GcraCalls::new("host-test", rate.interval_ns(), 1, false);
    let leases = LeaseCalls::new("host-test", 1, 10_000);
    // One retry in the window: a floor of 0.1 a second over 10 seconds, no ratio.
    let budget = BudgetCalls::new("host-test", 0.0, 0.1, 10);
    for check in [gcra.settings(), leases.settings(), budget.settings()] {
        settled(&mut con, &check);
    }
    let host_budget = HostBudget::new(budget.clone(), budget_ch.clone());
    let retries = RetryBudget::remote(Box::new(host_budget)).unwrap();
    let gate =
        gated(key_of(&gcra, &regulator_ch, rate), &leases, &limit_ch).with_budget(retries.clone());
    let mut host = Host {
        con,
        channels: vec![regulator_ch, limit_ch, budget_ch.clone()],
        budget: budget_ch,
        retries,
    };
    let policy = Policy::builder()
        .max_attempts(4)
        .base(Duration::from_millis(1))
        .jitter(Jitter::None)
        .deadline(None)
        .build()
        .unwrap();
    let mut op = Operation::new(&policy).gate(gate.clone());
    let end = host.drive(&mut op);
    // The first attempt's retry was the budget's one; the second was refused by the server.
    let Step::GaveUp { reason, report, .. } = end else {
        panic!("{end:?}")
    };
    assert_eq!(reason, GiveUpReason::BudgetExhausted);
    assert_eq!(report.attempts, 2);
    let counts = BudgetCalls::answered(&run(
        &mut host.con,
        &budget.op(recuo_redis::calls::BudgetOp::Counts, None),
    ));
    assert_eq!(
        (counts.requests, counts.retries),
        (1, 1),
        "counted on the server"
    );
    // Each attempt's place was given back: none is held now.
    let held = LeaseCalls::counted(&run(&mut host.con, &leases.in_flight()));
    assert_eq!(held, 0);
    // The regulator's arrival time is on the server.
    let tat: Option<String> = redis::cmd("GET")
        .arg("{host-test}:tat")
        .query(&mut host.con)
        .unwrap();
    assert!(tat.is_some(), "the regulator's state is the server's");
    server.stop();
}

#[test]
fn a_place_taken_stays_held_while_the_start_slot_is_asked() {
    let (mut server, mut con) = started();
    let (regulator_ch, limit_ch) = (HostChannel::default(), HostChannel::default());
    let rate: Rate = "10/s".parse().unwrap();
    let gcra = GcraCalls::new("held", rate.interval_ns(), 1, false);
    let leases = LeaseCalls::new("held", 1, 10_000);
    settled(&mut con, &gcra.settings());
    settled(&mut con, &leases.settings());
    let gate = gated(key_of(&gcra, &regulator_ch, rate), &leases, &limit_ch);
    let policy = Policy::builder()
        .max_attempts(1)
        .deadline(None)
        .build()
        .unwrap();
    let mut op = Operation::new(&policy).gate(gate);
    assert!(matches!(op.start(0, 0), Step::Enter { .. }));
    // The place first: asked, answered, taken.
    let e = op.poll_gate(0).unwrap_err();
    assert!(e.would_block());
    let call = limit_ch.pending().expect("the lease's call");
    limit_ch.answer(run(&mut con, &call));
    // The slot next: the place stays held while the host runs the slot's call.
    let e = op.poll_gate(0).unwrap_err();
    assert!(e.would_block());
    assert_eq!(LeaseCalls::counted(&run(&mut con, &leases.in_flight())), 1);
    let call = regulator_ch.pending().expect("the slot's call");
    regulator_ch.answer(run(&mut con, &call));
    assert!(matches!(
        op.poll_gate(0),
        Ok(GatePoll::Next(Step::Call { .. }))
    ));
    assert!(
        limit_ch.take_notice().is_none(),
        "no place given back and taken again"
    );
    assert!(matches!(op.succeeded(1), Step::Done(_)));
    // The attempt's end gives the place back: a call queued for the host.
    let release = limit_ch.take_notice().expect("the release");
    run(&mut con, &release);
    assert_eq!(LeaseCalls::counted(&run(&mut con, &leases.in_flight())), 0);
    server.stop();
}

#[test]
fn a_key_set_up_otherwise_is_refused_through_the_channel_and_never_used() {
    let (mut server, mut con) = started();
    let rate: Rate = "10/s".parse().unwrap();
    settled(
        &mut con,
        &GcraCalls::new("agreed", rate.interval_ns(), 1, false).settings(),
    );
    let channel = HostChannel::default();
    let gcra = GcraCalls::new("agreed", rate.interval_ns(), 2, false);
    channel.check_settings(gcra.settings());
    let regulator = key_of(&gcra, &channel, rate);
    // Until the settings' call is answered, nothing else is asked.
    assert!(regulator.try_acquire_at(0, 1).is_err());
    assert_eq!(channel.pending(), Some(gcra.settings().call));
    assert_eq!(channel.settled(), None);
    let call = channel.pending().unwrap();
    channel.answer(run(&mut con, &call));
    let Some(Err(refused)) = channel.settled() else {
        panic!("a mismatch")
    };
    assert!(
        refused.contains("burst of 1") && refused.contains("burst of 2"),
        "{refused}"
    );
    let Err(Err(e)) = regulator.try_acquire_at(0, 1) else {
        panic!("the store's refusal")
    };
    assert!(e.to_string().contains("burst of 1"), "{e}");
    assert_eq!(channel.pending(), None, "no call is left for the host");
    server.stop();
}
