//! The core's sans-IO machines for PHP code with its own event loop or HTTP client:
//! `Recuo\Operation` (one operation's whole loop, [`recuo::Operation`]) and `Recuo\BatchQueue`
//! ([`recuo::BatchQueue`]), with the values they answer, `Recuo\Step` and `Recuo\Next`. The
//! host says what happened, on its own monotonic clock in milliseconds, and is told what to do
//! next; `Recuo\retry`, `Recuo\comRetry` and `Recuo\runBatch` drive the very same machines.
//!
//! Guide A, as these docs call it, is
//! “Como repetir requisições com backoff exponencial (retry)”
//! (<https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff>), the guide that
//! writes `comRetry` and `buscarComRetry`.

use ext_php_rs::convert::FromZval;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};
use recuo::http::{Last, RequestPlan, Style};
use recuo::{
    BatchEnd, GatePoll, GiveUpReason, Level, Next as CoreNext, Outcome, RequestLine, Seen,
    Step as CoreStep,
};

use crate::convert::{
    count, entry_holds, given, header_pairs, named, non_negative, pair_of, php_int,
    seed as seed_arg, Array, Bytes,
};
use crate::errors::{type_error, value_error, value_error_message};
use crate::limits::{regulator_error, Gate};
use crate::policy::{transport_arg, Policy};
use crate::pool::LoopPool;
use crate::record::record_status;
use crate::stats::StatsRecorder;
use crate::values::{instance, Given, Instance};
use crate::verdict::{outcome_arg, Verdict};

/// No method, no URL: an operation with no HTTP meaning (in its records).
pub(crate) const NONE: &str = "";
/// A client adapter's way of ending, the default of `ending()`'s `$style`.
const CLIENT: &str = Style::Client.name();

/// A give-up reason named by PHP code.
fn reason_arg(function: &str, position: u32, name: &str) -> PhpResult<GiveUpReason> {
    named(function, (position, "reason"), name, "")
}

/// What the host does next, as `Recuo\Operation` answers it: `kind` is `"enter"` (pass the
/// gate, giving up at `untilMs`), `"call"` (make attempt `attempt`, bounded by `timeoutMs`),
/// `"classify"` (judge the failure: `judged()`), `"sleep"` (wait `delayMs`, then `slept()`),
/// `"done"` (with the `report`) or `"gave_up"` (for `reason`, with `retryAtMs` and the
/// `report`); `pollGate()` also answers `"wait"` (not through yet: look again in `delayMs`).
#[php_class]
#[php(name = "Recuo\\Step", flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Step {
    inner: GatePoll,
}

impl Step {
    /// The machine's step; `None` for a wait at the gate.
    fn step(&self) -> Option<&CoreStep> {
        match &self.inner {
            GatePoll::Next(step) => Some(step),
            GatePoll::Wait { .. } => None,
        }
    }
}

php_impl!({
    impl Step {
        /// Not constructible from PHP: `Recuo\Operation` makes them.
        private_constructor!();
        /// `"enter"`, `"wait"`, `"call"`, `"classify"`, `"sleep"`, `"done"` or `"gave_up"`.
        getter!(get_kind(self) -> &'static str = match self.step() {
            None => "wait",
            Some(CoreStep::Enter { .. }) => "enter",
            Some(CoreStep::Call { .. }) => "call",
            Some(CoreStep::Classify { .. }) => "classify",
            Some(CoreStep::Sleep { .. }) => "sleep",
            Some(CoreStep::Done(_)) => "done",
            Some(CoreStep::GaveUp { .. }) => "gave_up",
        });
        /// The attempt the step is about (from 0); null for `wait`, `done` and `gave_up`.
        getter!(get_attempt(self) -> Option<i64> = match self.step()? {
            CoreStep::Enter { attempt, .. }
            | CoreStep::Call { attempt, .. }
            | CoreStep::Classify { attempt }
            | CoreStep::Sleep { attempt, .. } => Some(i64::from(*attempt)),
            _ => None,
        });
        /// For `enter`: the deadline's instant on the host's clock (ms), when there is one.
        getter!(get_until_ms(self) -> Option<i64> = match self.step()? {
            CoreStep::Enter { until_ms, .. } => until_ms.map(php_int),
            _ => None,
        });
        /// For `call`: what is left of the deadline (ms), when there is one.
        getter!(get_timeout_ms(self) -> Option<i64> = match self.step()? {
            CoreStep::Call { timeout_ms, .. } => timeout_ms.map(php_int),
            _ => None,
        });
        /// For `sleep`: the delay, in milliseconds; for `wait`: how long until the next look at
        /// the gate.
        getter!(get_delay_ms(self) -> Option<i64> = match self.inner {
            GatePoll::Wait { delay_ms } | GatePoll::Next(CoreStep::Sleep { delay_ms, .. }) => {
                Some(php_int(delay_ms))
            }
            GatePoll::Next(_) => None,
        });
        /// For `gave_up`: why.
        getter!(get_reason(self) -> Option<&'static str> = match self.step()? {
            CoreStep::GaveUp { reason, .. } => Some(reason.name()),
            _ => None,
        });
        /// For `gave_up` with `wait_exceeds_deadline`: the instant (the host's clock, ms) from
        /// which the server would accept a retry; null when unbounded or otherwise.
        getter!(get_retry_at_ms(self) -> Option<i64> = match self.step()? {
            CoreStep::GaveUp { retry_at_ms, .. } => retry_at_ms.map(php_int),
            _ => None,
        });
        /// For `done` and `gave_up`: what happened.
        getter!(get_report(self) -> PhpResult<Option<Instance<recuo::Report>>> = match self.step() {
            Some(CoreStep::Done(report) | CoreStep::GaveUp { report, .. }) => {
                instance(report).map(Some)
            }
            _ => Ok(None),
        });
    }
});

impl From<CoreStep> for Step {
    fn from(step: CoreStep) -> Self {
        GatePoll::Next(step).into()
    }
}

impl From<GatePoll> for Step {
    fn from(inner: GatePoll) -> Self {
        Step { inner }
    }
}

/// The record `pollRecord()` answered last, kept for `recordTelemetry()`.
#[derive(Debug, Default)]
struct Polled(Option<recuo::Record>);

impl Polled {
    /// A polled record as `pollRecord()` answers it (`[level, json]`), the record itself kept.
    fn keep(&mut self, next: Option<(Level, recuo::Record)>) -> Option<Vec<String>> {
        let out = next
            .as_ref()
            .map(|(level, record)| vec![level.name().to_string(), record.to_json_line()]);
        self.0 = next.map(|(_, record)| record);
        out
    }

    /// What the kept record means to telemetry, as JSON; none when none was polled.
    fn telemetry(&self) -> Option<String> {
        self.0
            .as_ref()
            .map(|r| recuo::telemetry::telemetry(r).to_json())
    }
}

/// One operation's whole retry loop as a sans-IO machine: `start()`, then answer
/// each `Recuo\Step` as it says. It owns the gate's feedback, the budget, the stats, the
/// records (polled with `pollRecord()`) and the report; it sleeps never and reads no clock.
#[php_class]
#[php(name = "Recuo\\Operation", flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct Operation {
    inner: recuo::Operation,
    /// The record `pollRecord()` answered last (for its telemetry).
    polled: Polled,
    /// The request's plan: the key its attempts carry, whether it counts as idempotent.
    plan: RequestPlan,
    /// What the last attempt told `responded()` came to.
    last: Last,
}

/// A client adapter's (`"client"`) or guide A's `buscarComRetry` (`"guide"`) way of ending.
fn style_arg(function: &str, position: u32, name: &str) -> PhpResult<Style> {
    named(function, (position, "style"), name, "")
}

/// An attempt's end as PHP code names it: a `$status`, a transport failure `$error`, `$late`
/// (the deadline cut the attempt while the server was still answering), or none of them (no
/// attempt was made).
fn last_arg(
    function: &str,
    status: Option<i64>,
    error: Option<Bytes<'_>>,
    late: bool,
) -> PhpResult<Last> {
    Ok(match (late, status, error) {
        (true, _, _) => Last::Late,
        (false, Some(code), None) => Last::Status(u16::try_from(code).unwrap_or(0)),
        (false, None, Some(kind)) => Last::Transport(transport_arg(function, 3, kind, true)?),
        (false, None, None) => Last::Nothing,
        (false, Some(_), Some(_)) => {
            return Err(value_error_message(format!(
                "{function}(): at most one of $status and $error may be given"
            )))
        }
    })
}

php_functions!({
    /// How an HTTP operation that ended for `$reason` (null: it succeeded) reaches its caller,
    /// its last attempt having come to `$status`, the transport failure `$error`, a cut by the
    /// deadline (`$late`) or nothing (no attempt made): `"response"` (the last response is
    /// returned), `"error"` (the client's transport error is raised again) or `"give_up"` (recuo's
    /// give-up is raised). `$style` is `"client"` for a client adapter, `"guide"` for guide A's
    /// `buscarComRetry`, which throws after a final 429 or 5xx.
    #[php(name = "Recuo\\httpEnding", defaults(late = false))]
    pub fn http_ending(
        style: Bytes<'_>,
        reason: Option<Bytes<'_>>,
        status: Option<i64>,
        error: Option<Bytes<'_>>,
        late: bool,
    ) -> PhpResult<&'static str> {
        let style = style_arg(F, 1, &style.text())?;
        let reason = reason.map(|r| reason_arg(F, 2, &r.text())).transpose()?;
        let last = last_arg(F, status, error, late)?;
        Ok(recuo::http::ending(style, reason, last).name())
    }

    /// The give-up's message, the same in every language: `recuo gave up after 1 attempt
    /// (wait_exceeds_deadline): HTTP 429; a retry is allowed in 3600 s`. `$retryInMs`: how long
    /// until a retry would be allowed, when known.
    #[php(name = "Recuo\\giveUpMessage", defaults(late = false))]
    pub fn give_up_message(
        reason: Bytes<'_>,
        attempts: i64,
        status: Option<i64>,
        error: Option<Bytes<'_>>,
        late: bool,
        retryInMs: Option<i64>,
    ) -> PhpResult<String> {
        let reason = reason_arg(F, 1, &reason.text())?;
        let attempts = count(F, 2, "attempts", attempts)?;
        let last = last_arg(F, status, error, late)?;
        let retry_in = retryInMs.map(|ms| u64::try_from(ms).unwrap_or(0));
        Ok(recuo::http::give_up_message(
            reason, attempts, last, retry_in,
        ))
    }
});

php_impl!({
    impl Operation {
        /// The key the request's attempts carry: `"none"`, `"caller"` (the caller's own,
        /// already
        /// on the request) or `"recuo"` (add `key()` in the policy's idempotency header).
        getter!(get_key_sent(self) -> &'static str = self.plan.key().name());
        /// Whether a failure of the request whose outcome is unknown (a timeout, a dropped
        /// connection, a 500) may be retried.
        getter!(get_idempotent(self) -> bool = self.plan.idempotent());
        /// For an operation that gave up waiting past its deadline: the instant (the host's
        /// clock, ms) from which a retry would be allowed; null otherwise.
        getter!(get_retry_at_ms(self) -> Option<i64> = self.inner.retry_at_ms().map(php_int));

        /// An operation under `$policy`: `$seed` fixes the jitter (never the key); every attempt
        /// passes `$gate`; `$stats` counts it; `$method` and `$url` name the request (its method
        /// decides `responded()`'s classification); `$records` keeps the records of that level
        /// and above (`"debug"`, `"info"`, `"warning"`; null keeps none); `$classifyLastFailure`
        /// false is guide A's loop, which never judges the last failure; `$keyGiven` says the
        /// caller sends the operation's `key()` and vouches for it (the request counts as
        /// idempotent); `$pool` is what is left of an enclosing loop's attempts, `$nested` that
        /// this operation runs inside an attempt that already drew from it; `$sendKeys` is the
        /// caller's choice of recuo's keys (null: for methods that are not idempotent; the plan
        /// says which key to send, `keySent`); `$replayable` false is a request whose body cannot
        /// be sent twice: one attempt; `$loopPool` is where its attempts come from, as
        /// `Recuo\LoopPool` chose it (instead of `$pool` and `$nested`).
        #[php(defaults(method = NONE, url = NONE, classifyLastFailure = true, keyGiven = false, nested = false, replayable = true))]
        pub fn __construct(
            policy: &Policy,
            seed: Option<i64>,
            gate: Option<&Gate>,
            stats: Option<&StatsRecorder>,
            method: Bytes<'_>,
            url: Bytes<'_>,
            records: Option<Bytes<'_>>,
            classifyLastFailure: bool,
            keyGiven: bool,
            pool: Option<i64>,
            nested: bool,
            sendKeys: Option<bool>,
            replayable: bool,
            loopPool: Option<&LoopPool>,
        ) -> PhpResult<Self> {
            guard!("Recuo\\Operation::__construct");
            let method = method.text();
            let plan = RequestPlan::new(&policy.inner, &method, keyGiven, sendKeys);
            let mut op = recuo::Operation::new(&policy.inner)
                .seed(seed_arg(F, 2, seed)?)
                .request(&method, &url.url_text())
                .classify_last_failure(classifyLastFailure)
                .plan(plan)
                .replayable(replayable);
            op = given(op, gate, |op, gate| op.gate(gate.inner.clone()));
            op = given(op, stats, |op, stats| op.stats(stats.inner.clone()));
            if let Some(level) = records {
                op = op.records(Some(level_arg(F, 7, level)?));
            }
            if keyGiven {
                op = op.idempotency_key(recuo::IdempotencyKey::random());
            }
            if let Some(left) = pool {
                let left = u32::try_from(left).map_err(|_| {
                    value_error(F, 10, "pool", "must be null or between 0 and 4294967295")
                })?;
                op = op.pool(recuo::AttemptPool::new(left), nested);
            }
            if let Some(chosen) = loopPool {
                if pool.is_some() {
                    return Err(value_error_message(format!(
                        "{F}(): at most one of Argument #10 ($pool) and Argument #14 \
                             ($loopPool) may be given"
                    )));
                }
                op = op.loop_pool(chosen.inner.clone());
            }
            Ok(Operation {
                inner: op,
                polled: Polled::default(),
                plan,
                last: Last::Nothing,
            })
        }

        /// Whether an operation with `$gate`, stats (`$stats`) and records of `$records` and
        /// above needs its machine when its first attempt succeeds: when it does not, a host may
        /// make that attempt before creating the operation, and create it only on a failure
        /// (`startAfterFirst()`). Decide it once per policy and gate, and keep the answer.
        #[php(defaults(stats = false))]
        pub fn success_needs_machine(
            gate: Option<&Gate>,
            stats: bool,
            records: Option<Bytes<'_>>,
        ) -> PhpResult<bool> {
            guard!("Recuo\\Operation::successNeedsMachine");
            let records = records.map(|l| level_arg(F, 3, l)).transpose()?;
            Ok(recuo::Operation::success_needs_machine(
                gate.map(|g| &g.inner),
                stats,
                records,
            ))
        }

        /// Starts the operation at `$nowMs` (the host's monotonic clock), which is `$unixMs` on
        /// the wall clock (ms since the Unix epoch; the records' times).
        pub fn start(&mut self, nowMs: i64, unixMs: i64) -> PhpResult<Step> {
            guard!("Recuo\\Operation::start");
            Ok(self.inner.start(at(F, nowMs)?, unixMs).into())
        }

        /// Starts the operation whose first attempt was already made — begun at `$nowMs` (the
        /// host's monotonic clock), `$unixMs` on the wall clock — before the machine existed:
        /// answers that attempt's `call`, counted and recorded as begun then; tell its outcome
        /// next. That attempt passed no gate. Give the operation the pool that counts it as
        /// drawn (`Recuo\LoopPool::afterFirst()`).
        pub fn start_after_first(&mut self, nowMs: i64, unixMs: i64) -> PhpResult<Step> {
            guard!("Recuo\\Operation::startAfterFirst");
            Ok(self.inner.start_after_first(at(F, nowMs)?, unixMs).into())
        }

        /// For a host that cannot block: one look at the gate for `enter`, at `$nowMs` — a place
        /// in flight first, then a start slot, within the deadline. Answers `wait` (sleep
        /// `delayMs`, then look again) or the step after the gate: the attempt's `call`, or
        /// `gave_up` (`wait_exceeds_deadline` when the place or the slot would come after the
        /// deadline; `cancelled` or `queue_stopped` once stopped). The operation holds the place
        /// until the attempt ends, and gives back a slot it reserved and did not use.
        pub fn poll_gate(&mut self, nowMs: i64) -> PhpResult<Step> {
            guard!("Recuo\\Operation::pollGate");
            let step = self.inner.poll_gate(at(F, nowMs)?);
            Ok(step.map_err(|e| regulator_error(F, None, e))?.into())
        }

        /// As `pollGate()`, the regulator asked at `$regulatorNowNs` on a clock every user of it
        /// shares (tests and simulations; `Recuo\monotonicNs()` is the real one).
        pub fn poll_gate_at(&mut self, nowMs: i64, regulatorNowNs: i64) -> PhpResult<Step> {
            guard!("Recuo\\Operation::pollGateAt");
            let now = at(F, nowMs)?;
            let ns = non_negative(F, 2, "regulatorNowNs", regulatorNowNs)?;
            let step = self.inner.poll_gate_at(now, ns);
            Ok(step.map_err(|e| regulator_error(F, None, e))?.into())
        }

        /// The gate's answer for `enter`, at `$nowMs`: `$passed` is false when the wait was
        /// cancelled or reached the deadline.
        pub fn entered(&mut self, nowMs: i64, passed: bool) -> PhpResult<Step> {
            guard!("Recuo\\Operation::entered");
            Ok(self.inner.entered(at(F, nowMs)?, passed).into())
        }

        /// The attempt succeeded at `$nowMs`.
        pub fn succeeded(&mut self, nowMs: i64) -> PhpResult<Step> {
            guard!("Recuo\\Operation::succeeded");
            Ok(self.inner.succeeded(at(F, nowMs)?).into())
        }

        /// The attempt failed at `$nowMs`: answers `classify` (or, in guide A's loop with no
        /// attempt left, gives up). For its record: the attempt said it received `$status` with
        /// `$headers`; its error carried `$errorStatus` with `$errorHeaders` (a response attached
        /// to an exception). The record shows what the attempt said, else what the verdict's
        /// classifier saw, else what the error carried.
        #[php(defaults(headers = Array::EMPTY, errorHeaders = Array::EMPTY))]
        pub fn failed(
            &mut self,
            nowMs: i64,
            status: Option<i64>,
            headers: Array<'_>,
            errorStatus: Option<i64>,
            errorHeaders: Array<'_>,
        ) -> PhpResult<Step> {
            guard!("Recuo\\Operation::failed");
            let now = at(F, nowMs)?;
            let seen = seen_arg(F, (2, "status", status), (3, "headers", headers))?;
            let error_seen = seen_arg(
                F,
                (4, "errorStatus", errorStatus),
                (5, "errorHeaders", errorHeaders),
            )?;
            Ok(self.inner.failed_noted(now, seen, error_seen).into())
        }

        /// The verdict on the failure of `classify`, reached at `$nowMs`; for the record, what the
        /// classifier saw: `$status` with `$headers`, or what a `Recuo\classify` verdict judged.
        #[php(defaults(headers = Array::EMPTY))]
        pub fn judged(
            &mut self,
            nowMs: i64,
            verdict: &Verdict,
            status: Option<i64>,
            headers: Array<'_>,
        ) -> PhpResult<Step> {
            guard!("Recuo\\Operation::judged");
            let now = at(F, nowMs)?;
            let said = seen_arg(F, (3, "status", status), (4, "headers", headers))?;
            let seen = match (said, &verdict.judged) {
                (Some(seen), _) => Some(seen),
                (None, Some((outcome, headers))) if self.inner.keeps_records() => {
                    Some(Seen::new(*outcome, headers))
                }
                (None, _) => None,
            };
            Ok(self.inner.judged(now, verdict.inner, seen).into())
        }

        /// An HTTP attempt ended at `$nowMs` with `$status` or the transport failure `$error`
        /// (exactly one) and the response's `$headers`: the machine classifies it by the policy.
        #[php(defaults(headers = Array::EMPTY))]
        pub fn responded(
            &mut self,
            nowMs: i64,
            status: Option<i64>,
            error: Option<Bytes<'_>>,
            headers: Array<'_>,
        ) -> PhpResult<Step> {
            guard!("Recuo\\Operation::responded");
            let now = at(F, nowMs)?;
            let outcome = outcome_arg(F, 2, status, error)?;
            self.last = match outcome {
                Outcome::Status(code) => Last::Status(code),
                Outcome::Transport(kind) => Last::Transport(kind),
                Outcome::Success => Last::Nothing,
            };
            let headers = header_pairs(F, 4, "headers", headers)?;
            Ok(self.inner.responded(now, outcome, &headers).into())
        }

        /// The wait of `sleep` is over at `$nowMs` (or was cut short).
        pub fn slept(&mut self, nowMs: i64) -> PhpResult<Step> {
            guard!("Recuo\\Operation::slept");
            Ok(self.inner.slept(at(F, nowMs)?).into())
        }

        /// Cancels the operation: the next step gives up `cancelled`.
        pub fn cancel(&mut self) {
            self.inner.cancel();
        }

        /// Stops the operation because its batch queue stopped on another operation's
        /// `$reason`: it gives up `queue_stopped`, naming it.
        pub fn stop_queue(&mut self, reason: Bytes<'_>) -> PhpResult<()> {
            guard!("Recuo\\Operation::stopQueue");
            self.inner.stop_queue(reason_arg(F, 1, &reason.text())?);
            Ok(())
        }

        /// What the attempt being made says it sent (for its record and the result's).
        pub fn attempt_request(&mut self, method: Bytes<'_>, url: Bytes<'_>) {
            self.inner.attempt_request(&method.text(), &url.url_text());
        }

        /// The next record, in the order they were made: `[level, json]` (the level `"debug"`,
        /// `"info"` or `"warning"`, and the core's JSON line); null when there is none.
        pub fn poll_record(&mut self) -> Option<Vec<String>> {
            self.polled.keep(self.inner.poll_record())
        }

        /// What the record `pollRecord()` answered last means to telemetry, as JSON (the same
        /// mapping in every language): `{"operation", "span", "points"}`, each point with its
        /// `instrument` (OpenTelemetry's name), `prometheus` name, `value`, `attributes` and
        /// `labels` (the attributes under their Prometheus names); null when none was polled.
        pub fn record_telemetry(&self) -> Option<String> {
            self.polled.telemetry()
        }

        /// What has happened so far.
        pub fn report(&self) -> PhpResult<Instance<recuo::Report>> {
            instance(&self.inner.report())
        }

        /// The operation's idempotency key (a UUID v4 from the operating system's random
        /// source, never from the seed): made at the first call, then the same.
        pub fn key(&mut self) -> String {
            self.inner.key().to_string()
        }

        /// How the operation's end reaches the caller, its last attempt being what
        /// `responded()` was told (or, with `$late`, cut by the deadline while the server was
        /// still answering): `"response"`, `"error"` or `"give_up"` (see `Recuo\httpEnding()`).
        #[php(defaults(style = CLIENT, late = false))]
        pub fn ending(&self, style: Bytes<'_>, late: bool) -> PhpResult<&'static str> {
            guard!("Recuo\\Operation::ending");
            let style = style_arg(F, 1, &style.text())?;
            let last = if late { Last::Late } else { self.last };
            Ok(self.inner.ending(style, last).name())
        }

        /// The give-up's message at `$nowMs` (see `Recuo\giveUpMessage()`); null unless the
        /// operation gave up.
        #[php(defaults(late = false))]
        pub fn give_up_message(&self, nowMs: i64, late: bool) -> PhpResult<Option<String>> {
            guard!("Recuo\\Operation::giveUpMessage");
            let last = if late { Last::Late } else { self.last };
            Ok(self.inner.give_up_message(at(F, nowMs)?, last))
        }
    }
});

/// `$nowMs`, argument 1 of `function`: an instant on the host's clock.
fn at(function: &str, nowMs: i64) -> PhpResult<u64> {
    non_negative(function, 1, "nowMs", nowMs)
}

/// A level of records named by PHP code.
fn level_arg(function: &str, position: u32, name: Bytes<'_>) -> PhpResult<Level> {
    named(function, (position, "records"), &name.text(), "null, ")
}

/// What an attempt received, as PHP code says it: a status (100 to 999) and its headers;
/// nothing without a status.
fn seen_arg(
    function: &str,
    (position, name, status): (u32, &str, Option<i64>),
    (headers_position, headers_name, headers): (u32, &str, Array<'_>),
) -> PhpResult<Option<Seen>> {
    let Some(status) = status else {
        return Ok(None);
    };
    let must = "must be null or between 100 and 999";
    let status = record_status(function, position, status)
        .map_err(|_| value_error(function, position, name, must))?;
    let headers = header_pairs(function, headers_position, headers_name, headers)?;
    Ok(Some(Seen::new(Outcome::Status(status), &headers)))
}

/// What `Recuo\BatchQueue` answers: `kind` is `"start"` (operation `index` under `policy`,
/// its deadline clipped to the batch's), `"not_started"` (operation `index`, for `reason`,
/// and for `queue_stopped` the `stoppedBy` reason that stopped the queue) or `"finished"`.
#[php_class]
#[php(name = "Recuo\\Next", flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Next {
    inner: CoreNext,
}

php_impl!({
    impl Next {
        /// Not constructible from PHP: `Recuo\BatchQueue` makes them.
        private_constructor!();
        /// `"start"`, `"not_started"` or `"finished"`.
        getter!(get_kind(self) -> &'static str = self.inner.kind());
        /// The operation's place in the batch (from 0); null for `finished`.
        getter!(get_index(self) -> Option<i64> = match self.inner {
            CoreNext::Start { index, .. } | CoreNext::NotStarted { index, .. } => {
                i64::try_from(index).ok()
            }
            CoreNext::Finished => None,
        });
        /// For `start`: the policy to run the operation under.
        getter!(get_policy(self) -> Option<Policy> = match &self.inner {
            CoreNext::Start { policy, .. } => Some((**policy).clone().into()),
            _ => None,
        });
        /// For `not_started`: why.
        getter!(get_reason(self) -> Option<&'static str> = match self.inner {
            CoreNext::NotStarted { reason, .. } => Some(reason.name()),
            _ => None,
        });
        /// For `not_started` with `queue_stopped`: the reason that stopped the queue.
        getter!(get_stopped_by(self) -> Option<&'static str> = match self.inner {
            CoreNext::NotStarted { stopped_by, .. } => stopped_by.map(GiveUpReason::name),
            _ => None,
        });
    }
});

/// The batch queue (sans-IO): which operation starts next, with what deadline, or why it is
/// not started; when the whole queue stops.
#[php_class]
#[php(name = "Recuo\\BatchQueue", flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct BatchQueue {
    inner: recuo::BatchQueue,
    /// The record `pollRecord()` answered last (for its telemetry).
    polled: Polled,
}

php_impl!({
    impl BatchQueue {
        /// The reason the queue stopped; null while it runs.
        getter!(get_stopped(self) -> Option<&'static str> =
            self.inner.stopped().map(GiveUpReason::name));

        /// A queue of `$len` operations under `$policy`, started at `$nowMs` (the host's
        /// monotonic clock), none of which starts or waits past `$deadlineMs` from now. With
        /// `$stopOnUnreachableWait`, an operation that gives up `wait_exceeds_deadline` stops the
        /// queue. `$stats` counts the operations never started. With `$requests` (the
        /// operations' `[method, url]`, by index), the queue makes the record of each operation
        /// it does not start (`pollRecord()`), timed from `$unixMs` (the wall clock at `$nowMs`;
        /// now when null).
        #[php(defaults(stopOnUnreachableWait = false))]
        pub fn __construct(
            policy: &Policy,
            len: i64,
            nowMs: i64,
            deadlineMs: Option<i64>,
            stopOnUnreachableWait: bool,
            stats: Option<&StatsRecorder>,
            requests: Option<&ZendHashTable>,
            unixMs: Option<i64>,
        ) -> PhpResult<Self> {
            guard!("Recuo\\BatchQueue::__construct");
            let len = usize::try_from(len)
                .map_err(|_| value_error(F, 2, "len", "must be greater than or equal to 0"))?;
            let now = non_negative(F, 3, "nowMs", nowMs)?;
            let deadline = deadlineMs
                .map(|d| non_negative(F, 4, "deadlineMs", d))
                .transpose()?;
            let mut inner = recuo::BatchQueue::new(&policy.inner, len, now, deadline)
                .stop_when_a_wait_exceeds_the_deadline(stopOnUnreachableWait);
            inner = given(inner, stats, |q, stats| q.stats(stats.inner.clone()));
            if let Some(requests) = requests {
                let unix = unixMs.unwrap_or_else(recuo::unix_now_ms);
                inner = inner.records(request_lines(F, requests)?, unix);
            }
            Ok(BatchQueue {
                inner,
                polled: Polled::default(),
            })
        }

        /// The next operation to start at `$nowMs`, or why it is not started, or `finished`.
        pub fn next(&mut self, nowMs: i64) -> PhpResult<Next> {
            guard!("Recuo\\BatchQueue::next");
            Ok(Next {
                inner: self.inner.next(at(F, nowMs)?),
            })
        }

        /// Operation `$index` ended: succeeded (`$reason` null) or gave up for `$reason`.
        /// Answers true when this stops the queue: stop the operations still running
        /// (`Recuo\Operation::stopQueue()` with `stopped`).
        pub fn finished(&mut self, index: i64, reason: Option<Bytes<'_>>) -> PhpResult<bool> {
            guard!("Recuo\\BatchQueue::finished");
            let reason = reason.map(|r| reason_arg(F, 2, &r.text())).transpose()?;
            let index = usize::try_from(index).unwrap_or(usize::MAX);
            Ok(self.inner.finished(index, reason))
        }

        /// Operation `$index` ended as `$end` — `"succeeded"`, `"gave_up"` or `"not_started"`
        /// (what `endOf()` answers, or a `Recuo\Next` the queue did not start), with its
        /// `$reason` and `$stoppedBy`: answers the batch's progress, for a progress display. Tell
        /// the queue of every operation's end exactly once.
        pub fn ended(
            &mut self,
            index: i64,
            end: Bytes<'_>,
            reason: Option<Bytes<'_>>,
            stoppedBy: Option<Bytes<'_>>,
        ) -> PhpResult<Instance<recuo::BatchProgress>> {
            guard!("Recuo\\BatchQueue::ended");
            let reason = reason.map(|r| reason_arg(F, 3, &r.text())).transpose()?;
            let stopped_by = stoppedBy.map(|r| reason_arg(F, 4, &r.text())).transpose()?;
            let status: recuo::BatchStatus = named(F, (2, "end"), &end.text(), "")?;
            let end = BatchEnd::from_parts(status, reason, stopped_by)
                .ok_or_else(|| value_error(F, 3, "reason", "must be given for this end"))?;
            let index = usize::try_from(index).unwrap_or(usize::MAX);
            instance(&self.inner.ended(index, end))
        }

        /// Stops the queue on `$reason` (the caller's own stop: `"cancelled"`).
        pub fn stop(&mut self, reason: Bytes<'_>) -> PhpResult<()> {
            guard!("Recuo\\BatchQueue::stop");
            self.inner.stop(reason_arg(F, 1, &reason.text())?);
            Ok(())
        }

        /// The next record the queue made (one for each operation it did not start, when given
        /// `$requests`), in order: `[level, json]` as `Recuo\Operation::pollRecord()` answers
        /// them; null when there is none.
        pub fn poll_record(&mut self) -> Option<Vec<String>> {
            self.polled.keep(self.inner.poll_record())
        }

        /// What the record `pollRecord()` answered last means to telemetry, as JSON (as
        /// `Recuo\Operation::recordTelemetry()`); null when none was polled.
        pub fn record_telemetry(&self) -> Option<String> {
            self.polled.telemetry()
        }

        /// How an operation of the batch whose loop reported `$report` ended for the batch:
        /// `"succeeded"`, `"gave_up"`, or `"not_started"` (it gave up before any attempt — unless
        /// its gate could not be used, `$gateFailed`, which is a give-up to report as such).
        #[php(defaults(gateFailed = false))]
        pub fn end_of(
            report: Given<'_, recuo::Report>,
            gateFailed: bool,
        ) -> PhpResult<&'static str> {
            guard!("Recuo\\BatchQueue::endOf");
            let report = report
                .read()
                .map_err(|e| value_error(F, 1, "report", &format!("is not whole: {e}")))?;
            Ok(BatchEnd::of(&report, gateFailed).status().name())
        }
    }
});

/// The requests of a batch's operations, by index: `[method, url]` pairs (argument 7 of
/// `function`).
fn request_lines(function: &str, requests: &ZendHashTable) -> PhpResult<Vec<RequestLine>> {
    /// A string entry's bytes.
    fn text(value: &Zval) -> Option<Bytes<'_>> {
        Bytes::from_zval(value.dereference())
    }
    let mut lines = Vec::with_capacity(requests.len());
    let mut entries = requests.iter();
    while let Some((key, value)) = entries.next_zval() {
        let value = value.dereference();
        let pair = pair_of(value).and_then(|(method, url)| Some((text(method)?, text(url)?)));
        let Some((method, url)) = pair else {
            return Err(type_error(format!(
                "{function}(): Argument #7 ($requests) must list [method, url] pairs \
                 of strings; {}",
                entry_holds(&key, value)
            )));
        };
        lines.push(crate::record::request_line(method, url));
    }
    Ok(lines)
}
