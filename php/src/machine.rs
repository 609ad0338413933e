//! The core's sans-IO machines for PHP code with its own event loop or HTTP client:
//! `Recuo\Operation` (one operation's whole loop, [`recuo::Operation`]) and `Recuo\BatchQueue`
//! ([`recuo::BatchQueue`]), with the values they answer, `Recuo\Step` and `Recuo\Next`. The
//! host says what happened, on its own monotonic clock in milliseconds, and is told what to do
//! next; `Recuo\retry`, `Recuo\comRetry` and `Recuo\runBatch` drive the very same machines.

use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use recuo::http::{Last, RequestPlan, Style};
use recuo::{GiveUpReason, Level, Next as CoreNext, Outcome, Seen, Step as CoreStep, Transport};

use crate::attempts::Report;
use crate::convert::{header_pairs, instant, php_int, seed as seed_arg, Array, Bytes};
use crate::errors::{guarded, value_error};
use crate::limits::Gate;
use crate::policy::{Policy, TRANSPORTS};
use crate::stats::StatsRecorder;
use crate::verdict::Verdict;

/// No method, no URL: an operation with no HTTP meaning.
const NONE: &str = "";
/// A client adapter's way of ending, the default of `ending()`'s `$style`.
const CLIENT: &str = "client";

/// The give-up reasons, for messages.
const REASONS: &str = "\"permanent\", \"attempts_exhausted\", \"wait_exceeds_deadline\", \
                       \"budget_exhausted\", \"queue_stopped\" or \"cancelled\"";

/// A give-up reason named by PHP code.
fn reason_arg(function: &str, position: u32, name: &str) -> PhpResult<GiveUpReason> {
    GiveUpReason::from_name(name)
        .ok_or_else(|| value_error(function, position, "reason", &format!("must be {REASONS}")))
}

/// What the host does next, as `Recuo\Operation` answers it: `kind` is `"enter"` (pass the
/// gate, giving up at `untilMs`), `"call"` (make attempt `attempt`, bounded by `timeoutMs`),
/// `"classify"` (judge the failure: `judged()`), `"sleep"` (wait `delayMs`, then `slept()`),
/// `"done"` (with the `report`) or `"gave_up"` (for `reason`, with `retryAtMs` and the
/// `report`).
#[php_class]
#[php(name = "Recuo\\Step")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Step {
    inner: CoreStep,
}

#[php_impl]
impl Step {
    /// `"enter"`, `"call"`, `"classify"`, `"sleep"`, `"done"` or `"gave_up"`.
    #[php(getter)]
    pub fn get_kind(&self) -> &'static str {
        match self.inner {
            CoreStep::Enter { .. } => "enter",
            CoreStep::Call { .. } => "call",
            CoreStep::Classify { .. } => "classify",
            CoreStep::Sleep { .. } => "sleep",
            CoreStep::Done(_) => "done",
            CoreStep::GaveUp { .. } => "gave_up",
        }
    }

    /// The attempt the step is about (from 0); null for `done` and `gave_up`.
    #[php(getter)]
    pub fn get_attempt(&self) -> Option<i64> {
        match self.inner {
            CoreStep::Enter { attempt, .. }
            | CoreStep::Call { attempt, .. }
            | CoreStep::Classify { attempt }
            | CoreStep::Sleep { attempt, .. } => Some(i64::from(attempt)),
            _ => None,
        }
    }

    /// For `enter`: the deadline's instant on the host's clock (ms), when there is one.
    #[php(getter)]
    pub fn get_until_ms(&self) -> Option<i64> {
        match self.inner {
            CoreStep::Enter { until_ms, .. } => until_ms.map(php_int),
            _ => None,
        }
    }

    /// For `call`: what is left of the deadline (ms), when there is one.
    #[php(getter)]
    pub fn get_timeout_ms(&self) -> Option<i64> {
        match self.inner {
            CoreStep::Call { timeout_ms, .. } => timeout_ms.map(php_int),
            _ => None,
        }
    }

    /// For `sleep`: the delay, in milliseconds.
    #[php(getter)]
    pub fn get_delay_ms(&self) -> Option<i64> {
        match self.inner {
            CoreStep::Sleep { delay_ms, .. } => Some(php_int(delay_ms)),
            _ => None,
        }
    }

    /// For `gave_up`: why.
    #[php(getter)]
    pub fn get_reason(&self) -> Option<&'static str> {
        match self.inner {
            CoreStep::GaveUp { reason, .. } => Some(reason.name()),
            _ => None,
        }
    }

    /// For `gave_up` with `wait_exceeds_deadline`: the instant (the host's clock, ms) from
    /// which the server would accept a retry; null when unbounded or otherwise.
    #[php(getter)]
    pub fn get_retry_at_ms(&self) -> Option<i64> {
        match self.inner {
            CoreStep::GaveUp { retry_at_ms, .. } => retry_at_ms.map(php_int),
            _ => None,
        }
    }

    /// For `done` and `gave_up`: what happened.
    #[php(getter)]
    pub fn get_report(&self) -> Option<Report> {
        match &self.inner {
            CoreStep::Done(report) | CoreStep::GaveUp { report, .. } => Some(report.clone().into()),
            _ => None,
        }
    }
}

impl From<CoreStep> for Step {
    fn from(inner: CoreStep) -> Self {
        Step { inner }
    }
}

/// One operation's whole retry loop (SPEC §6) as a sans-IO machine: `start()`, then answer
/// each `Recuo\Step` as it says. It owns the gate's feedback, the budget, the stats, the
/// records (polled with `pollRecord()`) and the report; it sleeps never and reads no clock.
#[php_class]
#[php(name = "Recuo\\Operation")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct Operation {
    inner: recuo::Operation,
    /// The request's plan: the key its attempts carry, whether it counts as idempotent.
    plan: RequestPlan,
    /// What the last attempt told `responded()` came to.
    last: Last,
}

/// A client adapter's (`"client"`) or guide A's `buscarComRetry` (`"guide"`) way of ending.
fn style_arg(function: &str, position: u32, name: &str) -> PhpResult<Style> {
    match name {
        "client" => Ok(Style::Client),
        "guide" => Ok(Style::Guide),
        _ => Err(value_error(
            function,
            position,
            "style",
            "must be \"client\" or \"guide\"",
        )),
    }
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
        (false, None, Some(kind)) => Last::Transport(transport_arg(function, 3, &kind.text())?),
        (false, None, None) => Last::Nothing,
        (false, Some(_), Some(_)) => {
            return Err(crate::errors::value_error_message(format!(
                "{function}(): at most one of $status and $error may be given"
            )))
        }
    })
}

/// A transport failure's kind named by PHP code.
fn transport_arg(function: &str, position: u32, name: &str) -> PhpResult<Transport> {
    Transport::from_name(name).ok_or_else(|| {
        value_error(
            function,
            position,
            "error",
            &format!("must be null or {TRANSPORTS}"),
        )
    })
}

/// How an HTTP operation that ended for `$reason` (null: it succeeded) reaches its caller,
/// its last attempt having come to `$status`, the transport failure `$error`, a cut by the
/// deadline (`$late`) or nothing (no attempt made): `"response"` (the last response is
/// returned), `"error"` (the client's transport error is raised again) or `"give_up"` (recuo's
/// give-up is raised). `$style` is `"client"` for a client adapter, `"guide"` for guide A's
/// `buscarComRetry`, which throws after a final 429 or 5xx.
#[php_function]
#[php(name = "Recuo\\httpEnding")]
#[php(defaults(late = false))]
pub fn http_ending(
    style: Bytes<'_>,
    reason: Option<Bytes<'_>>,
    status: Option<i64>,
    error: Option<Bytes<'_>>,
    late: bool,
) -> PhpResult<&'static str> {
    const F: &str = "Recuo\\httpEnding";
    guarded(F, || {
        let style = style_arg(F, 1, &style.text())?;
        let reason = reason.map(|r| reason_arg(F, 2, &r.text())).transpose()?;
        let last = last_arg(F, status, error, late)?;
        Ok(recuo::http::ending(style, reason, last).name())
    })
}

/// The give-up's message, the same in every language: `recuo gave up after 1 attempt
/// (wait_exceeds_deadline): HTTP 429; a retry is allowed in 3600 s`. `$retryInMs`: how long
/// until a retry would be allowed, when known.
#[php_function]
#[php(name = "Recuo\\giveUpMessage")]
#[php(defaults(late = false))]
pub fn give_up_message(
    reason: Bytes<'_>,
    attempts: i64,
    status: Option<i64>,
    error: Option<Bytes<'_>>,
    late: bool,
    retryInMs: Option<i64>,
) -> PhpResult<String> {
    const F: &str = "Recuo\\giveUpMessage";
    guarded(F, || {
        let reason = reason_arg(F, 1, &reason.text())?;
        let attempts = u32::try_from(attempts)
            .map_err(|_| value_error(F, 2, "attempts", "must be between 0 and 4294967295"))?;
        let last = last_arg(F, status, error, late)?;
        let retry_in = retryInMs.map(|ms| u64::try_from(ms).unwrap_or(0));
        Ok(recuo::http::give_up_message(
            reason, attempts, last, retry_in,
        ))
    })
}

#[php_impl]
impl Operation {
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
    /// be sent twice: one attempt.
    #[php(defaults(method = NONE, url = NONE, classifyLastFailure = true, keyGiven = false, nested = false, replayable = true))]
    #[allow(clippy::too_many_arguments)]
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
    ) -> PhpResult<Self> {
        const F: &str = "Recuo\\Operation::__construct";
        guarded(F, || {
            let method = method.text();
            let plan = RequestPlan::new(&policy.inner, &method, keyGiven, sendKeys);
            let mut op = recuo::Operation::new(&policy.inner)
                .seed(seed_arg(F, 2, seed)?)
                .request(&method, &url.url_text())
                .classify_last_failure(classifyLastFailure)
                .plan(plan)
                .replayable(replayable);
            if let Some(gate) = gate {
                op = op.gate(gate.inner.clone());
            }
            if let Some(stats) = stats {
                op = op.stats(stats.inner.clone());
            }
            if let Some(level) = records {
                let level = [Level::Debug, Level::Info, Level::Warning]
                    .into_iter()
                    .find(|l| l.name() == level.text())
                    .ok_or_else(|| {
                        value_error(
                            F,
                            7,
                            "records",
                            "must be null, \"debug\", \"info\" or \"warning\"",
                        )
                    })?;
                op = op.records(Some(level));
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
            Ok(Operation {
                inner: op,
                plan,
                last: Last::Nothing,
            })
        })
    }

    /// Starts the operation at `$nowMs` (the host's monotonic clock), which is `$unixMs` on
    /// the wall clock (ms since the Unix epoch; the records' times).
    pub fn start(&mut self, nowMs: i64, unixMs: i64) -> PhpResult<Step> {
        const F: &str = "Recuo\\Operation::start";
        guarded(F, || {
            Ok(self
                .inner
                .start(instant(F, 1, "nowMs", nowMs)?, unixMs)
                .into())
        })
    }

    /// The gate's answer for `enter`, at `$nowMs`: `$passed` is false when the wait was
    /// cancelled or reached the deadline.
    pub fn entered(&mut self, nowMs: i64, passed: bool) -> PhpResult<Step> {
        const F: &str = "Recuo\\Operation::entered";
        guarded(F, || {
            Ok(self
                .inner
                .entered(instant(F, 1, "nowMs", nowMs)?, passed)
                .into())
        })
    }

    /// The attempt succeeded at `$nowMs`.
    pub fn succeeded(&mut self, nowMs: i64) -> PhpResult<Step> {
        const F: &str = "Recuo\\Operation::succeeded";
        guarded(F, || {
            Ok(self.inner.succeeded(instant(F, 1, "nowMs", nowMs)?).into())
        })
    }

    /// The attempt failed at `$nowMs`: answers `classify` (or, in guide A's loop with no
    /// attempt left, gives up).
    pub fn failed(&mut self, nowMs: i64) -> PhpResult<Step> {
        const F: &str = "Recuo\\Operation::failed";
        guarded(F, || {
            Ok(self.inner.failed(instant(F, 1, "nowMs", nowMs)?).into())
        })
    }

    /// The verdict on the failure of `classify`, reached at `$nowMs` (a `Recuo\classify`
    /// verdict also gives the record the status and headers it judged).
    pub fn judged(&mut self, nowMs: i64, verdict: &Verdict) -> PhpResult<Step> {
        const F: &str = "Recuo\\Operation::judged";
        guarded(F, || {
            let now = instant(F, 1, "nowMs", nowMs)?;
            let seen = match &verdict.judged {
                Some((outcome, headers)) if self.inner.keeps_records() => {
                    Some(Seen::new(*outcome, headers))
                }
                _ => None,
            };
            Ok(self.inner.judged(now, verdict.inner, seen).into())
        })
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
        const F: &str = "Recuo\\Operation::responded";
        guarded(F, || {
            let now = instant(F, 1, "nowMs", nowMs)?;
            let outcome = match (status, error) {
                (Some(code), None) => {
                    let code = u16::try_from(code).unwrap_or(0);
                    self.last = Last::Status(code);
                    Outcome::Status(code)
                }
                (None, Some(kind)) => {
                    let kind = transport_arg(F, 3, &kind.text())?;
                    self.last = Last::Transport(kind);
                    Outcome::Transport(kind)
                }
                _ => {
                    return Err(crate::errors::value_error_message(format!(
                        "{F}(): exactly one of Argument #2 ($status) and Argument #3 ($error) \
                         must be given"
                    )))
                }
            };
            let headers = header_pairs(F, 4, "headers", headers)?;
            Ok(self.inner.responded(now, outcome, &headers).into())
        })
    }

    /// The wait of `sleep` is over at `$nowMs` (or was cut short).
    pub fn slept(&mut self, nowMs: i64) -> PhpResult<Step> {
        const F: &str = "Recuo\\Operation::slept";
        guarded(F, || {
            Ok(self.inner.slept(instant(F, 1, "nowMs", nowMs)?).into())
        })
    }

    /// Cancels the operation: the next step gives up `cancelled`.
    pub fn cancel(&mut self) {
        self.inner.cancel();
    }

    /// Stops the operation because its batch queue stopped on another operation's
    /// `$reason`: it gives up `queue_stopped`, naming it.
    pub fn stop_queue(&mut self, reason: Bytes<'_>) -> PhpResult<()> {
        const F: &str = "Recuo\\Operation::stopQueue";
        guarded(F, || {
            self.inner.stop_queue(reason_arg(F, 1, &reason.text())?);
            Ok(())
        })
    }

    /// What the attempt being made says it sent (for its record and the result's).
    pub fn attempt_request(&mut self, method: Bytes<'_>, url: Bytes<'_>) {
        self.inner.attempt_request(&method.text(), &url.url_text());
    }

    /// The next record, in the order they were made: `[level, json]` (the level `"debug"`,
    /// `"info"` or `"warning"`, and the core's JSON line); null when there is none.
    pub fn poll_record(&mut self) -> Option<Vec<String>> {
        self.inner
            .poll_record()
            .map(|(level, record)| vec![level.name().to_string(), record.to_json_line()])
    }

    /// What has happened so far.
    pub fn report(&self) -> Report {
        self.inner.report().into()
    }

    /// The operation's idempotency key (a UUID v4 from the operating system's random
    /// source, never from the seed): made at the first call, then the same.
    pub fn key(&mut self) -> String {
        self.inner.key().to_string()
    }

    /// The key the request's attempts carry: `"none"`, `"caller"` (the caller's own, already
    /// on the request) or `"recuo"` (add `key()` in the policy's idempotency header).
    #[php(getter)]
    pub fn get_key_sent(&self) -> &'static str {
        self.plan.key().name()
    }

    /// Whether a failure of the request whose outcome is unknown (a timeout, a dropped
    /// connection, a 500) may be retried.
    #[php(getter)]
    pub fn get_idempotent(&self) -> bool {
        self.plan.idempotent()
    }

    /// For an operation that gave up waiting past its deadline: the instant (the host's
    /// clock, ms) from which a retry would be allowed; null otherwise.
    #[php(getter)]
    pub fn get_retry_at_ms(&self) -> Option<i64> {
        self.inner.retry_at_ms().map(php_int)
    }

    /// How the operation's end reaches the caller, its last attempt being what
    /// `responded()` was told (or, with `$late`, cut by the deadline while the server was
    /// still answering): `"response"`, `"error"` or `"give_up"` (see `Recuo\httpEnding()`).
    #[php(defaults(style = CLIENT, late = false))]
    pub fn ending(&self, style: Bytes<'_>, late: bool) -> PhpResult<&'static str> {
        const F: &str = "Recuo\\Operation::ending";
        guarded(F, || {
            let style = style_arg(F, 1, &style.text())?;
            Ok(self.inner.ending(style, self.last_or_late(late)).name())
        })
    }

    /// The give-up's message at `$nowMs` (see `Recuo\giveUpMessage()`); null unless the
    /// operation gave up.
    #[php(defaults(late = false))]
    pub fn give_up_message(&self, nowMs: i64, late: bool) -> PhpResult<Option<String>> {
        const F: &str = "Recuo\\Operation::giveUpMessage";
        guarded(F, || {
            let now = instant(F, 1, "nowMs", nowMs)?;
            Ok(self.inner.give_up_message(now, self.last_or_late(late)))
        })
    }
}

impl Operation {
    fn last_or_late(&self, late: bool) -> Last {
        if late {
            Last::Late
        } else {
            self.last
        }
    }
}

/// What `Recuo\BatchQueue` answers: `kind` is `"start"` (operation `index` under `policy`,
/// its deadline clipped to the batch's), `"not_started"` (operation `index`, for `reason`,
/// and for `queue_stopped` the `stoppedBy` reason that stopped the queue) or `"finished"`.
#[php_class]
#[php(name = "Recuo\\Next")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Next {
    inner: CoreNext,
}

#[php_impl]
impl Next {
    /// `"start"`, `"not_started"` or `"finished"`.
    #[php(getter)]
    pub fn get_kind(&self) -> &'static str {
        match self.inner {
            CoreNext::Start { .. } => "start",
            CoreNext::NotStarted { .. } => "not_started",
            CoreNext::Finished => "finished",
        }
    }

    /// The operation's place in the batch (from 0); null for `finished`.
    #[php(getter)]
    pub fn get_index(&self) -> Option<i64> {
        match self.inner {
            CoreNext::Start { index, .. } | CoreNext::NotStarted { index, .. } => {
                i64::try_from(index).ok()
            }
            CoreNext::Finished => None,
        }
    }

    /// For `start`: the policy to run the operation under.
    #[php(getter)]
    pub fn get_policy(&self) -> Option<Policy> {
        match &self.inner {
            CoreNext::Start { policy, .. } => Some(Policy {
                inner: (**policy).clone(),
            }),
            _ => None,
        }
    }

    /// For `not_started`: why.
    #[php(getter)]
    pub fn get_reason(&self) -> Option<&'static str> {
        match self.inner {
            CoreNext::NotStarted { reason, .. } => Some(reason.name()),
            _ => None,
        }
    }

    /// For `not_started` with `queue_stopped`: the reason that stopped the queue.
    #[php(getter)]
    pub fn get_stopped_by(&self) -> Option<&'static str> {
        match self.inner {
            CoreNext::NotStarted { stopped_by, .. } => stopped_by.map(GiveUpReason::name),
            _ => None,
        }
    }
}

/// The batch queue (sans-IO): which operation starts next, with what deadline, or why it is
/// not started; when the whole queue stops.
#[php_class]
#[php(name = "Recuo\\BatchQueue")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct BatchQueue {
    inner: recuo::BatchQueue,
}

#[php_impl]
impl BatchQueue {
    /// A queue of `$len` operations under `$policy`, started at `$nowMs` (the host's
    /// monotonic clock), none of which starts or waits past `$deadlineMs` from now. With
    /// `$stopOnUnreachableWait`, an operation that gives up `wait_exceeds_deadline` stops the
    /// queue. `$stats` counts the operations never started.
    #[php(defaults(stopOnUnreachableWait = false))]
    pub fn __construct(
        policy: &Policy,
        len: i64,
        nowMs: i64,
        deadlineMs: Option<i64>,
        stopOnUnreachableWait: bool,
        stats: Option<&StatsRecorder>,
    ) -> PhpResult<Self> {
        const F: &str = "Recuo\\BatchQueue::__construct";
        guarded(F, || {
            let len = usize::try_from(len)
                .map_err(|_| value_error(F, 2, "len", "must be greater than or equal to 0"))?;
            let now = instant(F, 3, "nowMs", nowMs)?;
            let deadline = deadlineMs
                .map(|d| instant(F, 4, "deadlineMs", d))
                .transpose()?;
            let mut inner = recuo::BatchQueue::new(&policy.inner, len, now, deadline)
                .stop_when_a_wait_exceeds_the_deadline(stopOnUnreachableWait);
            if let Some(stats) = stats {
                inner = inner.stats(stats.inner.clone());
            }
            Ok(BatchQueue { inner })
        })
    }

    /// The next operation to start at `$nowMs`, or why it is not started, or `finished`.
    pub fn next(&mut self, nowMs: i64) -> PhpResult<Next> {
        const F: &str = "Recuo\\BatchQueue::next";
        guarded(F, || {
            Ok(Next {
                inner: self.inner.next(instant(F, 1, "nowMs", nowMs)?),
            })
        })
    }

    /// Operation `$index` ended: succeeded (`$reason` null) or gave up for `$reason`.
    /// Answers true when this stops the queue: stop the operations still running
    /// (`Recuo\Operation::stopQueue()` with `stopped`).
    pub fn finished(&mut self, index: i64, reason: Option<Bytes<'_>>) -> PhpResult<bool> {
        const F: &str = "Recuo\\BatchQueue::finished";
        guarded(F, || {
            let reason = reason.map(|r| reason_arg(F, 2, &r.text())).transpose()?;
            Ok(self
                .inner
                .finished(usize::try_from(index).unwrap_or(usize::MAX), reason))
        })
    }

    /// Stops the queue on `$reason` (the caller's own stop: `"cancelled"`).
    pub fn stop(&mut self, reason: Bytes<'_>) -> PhpResult<()> {
        const F: &str = "Recuo\\BatchQueue::stop";
        guarded(F, || {
            self.inner.stop(reason_arg(F, 1, &reason.text())?);
            Ok(())
        })
    }

    /// The reason the queue stopped; null while it runs.
    #[php(getter)]
    pub fn get_stopped(&self) -> Option<&'static str> {
        self.inner.stopped().map(GiveUpReason::name)
    }
}

/// `Recuo\httpEnding` and `Recuo\giveUpMessage`, for the module's registration (the macros
/// keep the functions' wrappers private to this module).
pub fn http_functions() -> [ext_php_rs::builders::FunctionBuilder<'static>; 2] {
    [wrap_function!(http_ending), wrap_function!(give_up_message)]
}
