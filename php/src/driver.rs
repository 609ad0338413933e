//! The PHP host of the core's one retry loop: `Recuo\retry`, `Recuo\comRetry` and each
//! operation of `Recuo\runBatch` run the core's [`recuo::Operation`] machine through
//! [`recuo::drive_from()`]. Every decision, count and record is the machine's; this module
//! only calls PHP code, waits, and keeps the nested loops' pools per request and fiber.
//!
//! When a PHP callable throws, the engine leaves the exception pending in the executor
//! globals. The loop takes it out (so PHP code can run again: the classifier, a hook, the
//! next attempt) and keeps the object itself, with its reference count, as the loop's error.
//! When the loop gives up, that very object is thrown again with `zend_throw_exception_object`,
//! which neither copies it nor touches its trace: `$caught === $thrown` in PHP, and
//! `getTrace()` still points into the operation.
//!
//! Nested loops share one limit: the core chooses each loop's pool ([`recuo::LoopPool`]);
//! [`crate::pool`] keeps it per request and fiber.
//!
//! A first attempt the fast path made before any machine ([`crate::fast`]) and that failed is
//! handed to the core's loop ([`recuo::drive_from`]): the machine starts after that attempt
//! and hears its failure at the first attempt's turn.
//!
//! Guide A, as these docs call it, is
//! “Como repetir requisições com backoff exponencial (retry)”
//! (<https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff>), the guide that
//! writes `comRetry` and `buscarComRetry`.

use std::cell::OnceCell;
use std::time::Duration;

use ext_php_rs::convert::{FromZval, IntoZval, IntoZvalDyn};
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};
use ext_php_rs::zend::{ce, BailoutGuard, ExecutorGlobals};
use recuo::{
    drive_from, AttemptContext, CancelToken, Driver, Gate, Level, LoopPool, Operation, Pass,
    Record, RequestLine, RetryError, Seen, Stopped,
};

use crate::convert::{php_int, type_name};
use crate::errors::{php_error, shared_file_error, type_error, value_error_message};
use crate::limits::would_wait_forever;
use crate::loop_values::Attempt;
use crate::pool::{PoolScope, Start};
use crate::record::record_array;
use crate::verdict::Verdict;

/// Why a loop stopped without a value, or why an attempt failed.
pub enum Halt {
    /// A `Throwable` from PHP code, owned here until it is thrown again.
    Thrown(Zval),
    /// The engine holds something that is not a `Throwable` (PHP's `exit()` unwinds this
    /// way). It stays pending and propagates on its own; no PHP code may run meanwhile.
    Pending,
    /// A failure of the call itself, or a value of the wrong type, with no exception from
    /// PHP.
    Raise(PhpException),
}

impl Halt {
    /// The PHP exception that ends the call: the very object for [`Halt::Thrown`].
    pub fn into_exception(self) -> PhpException {
        match self {
            // Throwing an object rethrows that object: no copy, no new trace.
            Halt::Thrown(object) => {
                PhpException::new(String::new(), 0, ce::exception()).with_object(object)
            }
            // The engine's own exception is pending: `throw()` leaves it alone.
            Halt::Pending => PhpException::new(String::new(), 0, ce::error()),
            Halt::Raise(e) => e,
        }
    }
}

/// After a PHP callable failed: the exception it left pending, taken out of the engine.
pub fn take_failure(function: &str, role: &str) -> Halt {
    let throwable = {
        let globals = ExecutorGlobals::get();
        globals.exception().map(|e| e.instance_of(ce::throwable()))
    };
    match throwable {
        Some(true) => match ExecutorGlobals::take_exception().map(|e| e.into_zval(false)) {
            Some(Ok(object)) => Halt::Thrown(object),
            Some(Err(e)) => Halt::Raise(e.into()),
            None => Halt::Pending,
        },
        Some(false) => Halt::Pending,
        None => Halt::Raise(php_error(format!("{function}(): calling {role} failed"))),
    }
}

/// How a failure is judged.
#[derive(Clone, Copy)]
pub enum Judge<'a, 'z> {
    /// Every `Throwable` is worth another attempt.
    RetryAll,
    /// Guide A's `$repetirSe($e)`: a `Recuo\Verdict`, or any answer read as a PHP condition.
    Predicate(&'a ZendCallable<'z>),
    /// `Recuo\retry`'s `$classify($e)`: a `Recuo\Verdict` or a bool.
    Classifier(&'a ZendCallable<'z>),
}

/// The PHP side of one loop: its callables and what the messages call them.
pub struct Callbacks<'a, 'z> {
    /// The PHP function running the loop, for messages (`Recuo\retry`).
    pub function: &'static str,
    /// The operation, and its parameter's name (`$operation`, `$tarefa`).
    pub operation: (&'a ZendCallable<'z>, &'static str),
    /// Whether the operation receives a `Recuo\Attempt`.
    pub pass_attempt: bool,
    /// How failures are judged, and the parameter's name.
    pub judge: (Judge<'a, 'z>, &'static str),
    /// `(int $attempt, Throwable $e, int $delayMs)` before each sleep, and its name.
    pub on_retry: Option<(&'a ZendCallable<'z>, &'static str)>,
    /// `(Recuo\Report $report)` once when the loop gives up.
    pub on_give_up: Option<&'a ZendCallable<'z>>,
    /// `(int $ms)` instead of the real sleep.
    pub sleep: Option<&'a ZendCallable<'z>>,
    /// Whether `$sleep` answering `false` cancels the loop (`Recuo\retry`; guide A's loop
    /// ignores the answer).
    pub sleep_false_cancels: bool,
    /// The gate every attempt passes, if any (the machine has its own handle on it too).
    pub gate: Option<&'a Gate>,
    /// `$records(array $record)`, when given, and the request (method, URL) they name.
    pub records: Option<(&'a ZendCallable<'z>, &'a str, &'a str)>,
    /// `$metrics(string $name, float $value, array $labels)`, when given, and the request the
    /// records it is fed from name: each metric point under its Prometheus name.
    pub metrics: Option<(&'a ZendCallable<'z>, &'a str, &'a str)>,
}

/// The callbacks as the effects of [`recuo::drive_from()`].
struct PhpDriver<'a, 'z> {
    callbacks: Callbacks<'a, 'z>,
    /// Something that is not a `Throwable` is pending in the engine: run no PHP code.
    engine_busy: bool,
    /// What a callback that cannot end the loop itself threw (`$records`, `$onGiveUp`): it
    /// ends the loop at the next effect, and replaces the operation's failure.
    failure: Option<Halt>,
    /// The gate's pass for the attempt under way: its place in flight, given back right
    /// after the attempt (and by the engine, should a fatal error jump over this frame).
    pass: Option<BailoutGuard<Pass>>,
    /// What the last attempt told its `Recuo\Attempt` it sent and received.
    notes: (Option<RequestLine>, Option<Seen>),
    /// The report of a success.
    done: Option<recuo::Report>,
    /// When a first attempt the fast path made failed: the loop's first clock read after
    /// the attempt is handed over (its failure's instant): the machine times that attempt as
    /// it was made.
    failed_ms: Option<u64>,
}

/// A first attempt the fast path made before any machine existed ([`crate::fast`]), and how
/// it failed: the machine starts after it ([`recuo::First`]), hears the failure at
/// `failed_ms` and carries on from there.
pub struct First {
    /// When it started, ms on the monotonic clock.
    pub started_ms: u64,
    /// When it failed.
    pub failed_ms: u64,
    /// How.
    pub failure: Halt,
    /// The key its `Recuo\Attempt` made or was given (`Recuo\retry`): every later attempt's.
    pub key: Option<recuo::IdempotencyKey>,
    /// Whether the fast path was the outermost loop of its fiber (it left its pool's entry
    /// for the machine to own).
    pub outermost: bool,
}

/// The idempotency header as an attempt keeps it: the default one without a copy.
pub fn header_name(name: &str) -> std::borrow::Cow<'static, str> {
    const DEFAULT: &str = "Idempotency-Key";
    if name == DEFAULT {
        std::borrow::Cow::Borrowed(DEFAULT)
    } else {
        std::borrow::Cow::Owned(name.to_string())
    }
}

impl PhpDriver<'_, '_> {
    fn failed(&mut self, role: &str) -> Halt {
        let halt = take_failure(self.callbacks.function, role);
        if matches!(halt, Halt::Pending) {
            self.engine_busy = true;
        }
        halt
    }

    /// The failure of a callback that could not end the loop when it happened.
    fn check(&mut self) -> Result<(), Halt> {
        self.failure.take().map_or(Ok(()), Err)
    }

    /// Calls `callable` with `args`, unless the engine is busy: its answer, or its failure.
    fn call(
        &mut self,
        callable: &ZendCallable<'_>,
        role: &str,
        args: Vec<&dyn IntoZvalDyn>,
    ) -> Result<Zval, Halt> {
        if self.engine_busy {
            return Err(Halt::Pending);
        }
        callable.try_call(args).map_err(|_| self.failed(role))
    }

    /// The verdict on a failure; what `Recuo\classify` judged, when the verdict came from it.
    fn judge(&mut self, error: &Halt) -> Result<(recuo::Verdict, Option<Seen>), Halt> {
        let thrown = match error {
            Halt::Thrown(thrown) => thrown,
            Halt::Pending => return Err(Halt::Pending),
            // Not the operation's own failure: never retried.
            Halt::Raise(_) => return Ok((false.into(), None)),
        };
        let (judge, role) = self.callbacks.judge;
        let (callable, strict) = match judge {
            Judge::RetryAll => return Ok((true.into(), None)),
            Judge::Predicate(predicate) => (predicate, false),
            Judge::Classifier(classifier) => (classifier, true),
        };
        let answer = self.call(callable, role, vec![thrown])?;
        if let Some(verdict) = <&Verdict>::from_zval(&answer) {
            let seen = match (&verdict.judged, self.callbacks.records) {
                (Some((outcome, headers)), Some(_)) => Some(Seen::new(*outcome, headers)),
                _ => None,
            };
            return Ok((verdict.inner, seen));
        }
        match (answer.bool(), strict) {
            (Some(retry), _) => Ok((retry.into(), None)),
            // `if ($repetirSe($e))`: PHP's truthiness, as guide A's PHP code reads it.
            (None, false) => Ok((answer.coerce_to_bool().into(), None)),
            (None, true) => Err(Halt::Raise(type_error(format!(
                "{}(): {role} must return Recuo\\Verdict or bool, {} returned",
                self.callbacks.function,
                type_name(&answer)
            )))),
        }
    }
}

impl Driver for PhpDriver<'_, '_> {
    type Value = Zval;
    type Error = Halt;

    fn now_ms(&mut self) -> u64 {
        // The first attempt's failure, as the fast path read it; else the clock.
        match self.failed_ms.take() {
            Some(at) => at,
            None => recuo::monotonic_ms(),
        }
    }

    /// The wall clock, which only records read here (the loop never hands the machine an
    /// HTTP date to measure): none read without them.
    fn unix_ms(&mut self) -> i64 {
        match self.callbacks.records {
            Some(_) => recuo::unix_now_ms(),
            None => 0,
        }
    }

    fn enter(&mut self, _attempt: u32, until_ms: Option<u64>) -> Result<bool, Halt> {
        self.check()?;
        let Some(gate) = self.callbacks.gate else {
            return Ok(true);
        };
        let function = self.callbacks.function;
        if let Some(limit) = gate.limit() {
            // Only this thread holds the places: waiting for one would never end.
            would_wait_forever(limit, function).map_err(Halt::Raise)?;
        }
        let timeout =
            until_ms.map(|u| Duration::from_millis(u.saturating_sub(recuo::monotonic_ms())));
        // Nothing cancels a PHP loop's wait: it ends at the deadline.
        match gate.wait(timeout, &CancelToken::new()) {
            Ok(Some(pass)) => {
                self.pass = Some(BailoutGuard::new(pass));
                Ok(true)
            }
            // No place or slot before the deadline: the machine reports a refusal with a
            // deadline as a wait that would pass it (`wait_exceeds_deadline`).
            Ok(None) => Ok(false),
            // A Redis regulator's server out of reach.
            Err(recuo::RegulatorError::Shared(e)) => {
                Err(Halt::Raise(shared_file_error(function, &e)))
            }
            // A cost above the burst; the gate asks for 1, which never is.
            Err(e) => Err(Halt::Raise(value_error_message(format!(
                "{function}(): {e}"
            )))),
        }
    }

    fn attempt(&mut self, ctx: &AttemptContext<'_>) -> Result<Zval, Halt> {
        let (operation, role) = self.callbacks.operation;
        if !self.callbacks.pass_attempt {
            return self.call(operation, role, vec![]);
        }
        let attempt = Attempt::new(
            ctx.attempt(),
            Some(ctx.idempotency_key()),
            header_name(ctx.idempotency_header()),
        )
        .into_zval(false)
        .map_err(|e| Halt::Raise(e.into()))?;
        let result = self.call(operation, role, vec![&attempt]);
        // The object the operation was given: what it recorded is in it.
        if let Some(attempt) = <&Attempt>::from_zval(&attempt) {
            self.notes = (attempt.request.clone(), attempt.response.clone());
        }
        result
    }

    fn leave(&mut self) {
        self.pass = None;
    }

    fn observed(&mut self, _failed: bool) -> (Option<RequestLine>, Option<Seen>) {
        std::mem::take(&mut self.notes)
    }

    /// The verdict, and what the classifier saw: the machine's record shows the attempt's
    /// own word before it.
    fn classify(&mut self, error: &Halt) -> Result<(recuo::Verdict, Option<Seen>), Halt> {
        self.check()?;
        self.judge(error)
    }

    fn on_retry(&mut self, attempt: u32, error: &Halt, delay: Duration) -> Result<(), Halt> {
        self.check()?;
        let (Some((hook, role)), Halt::Thrown(thrown)) = (self.callbacks.on_retry, error) else {
            return Ok(());
        };
        let delay = php_int(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
        self.call(hook, role, vec![&i64::from(attempt), thrown, &delay])
            .map(drop)
    }

    fn sleep(&mut self, delay: Duration) -> Result<bool, Halt> {
        self.check()?;
        match self.callbacks.sleep {
            Some(sleep) => {
                let ms = php_int(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
                let answer = self.call(sleep, "$sleep", vec![&ms])?;
                Ok(self.callbacks.sleep_false_cancels && answer.is_false())
            }
            None => {
                std::thread::sleep(delay);
                Ok(false)
            }
        }
    }

    fn on_record(&mut self, _level: Level, record: &Record) {
        if self.engine_busy || self.failure.is_some() {
            return;
        }
        let (function, records, metrics) = (
            self.callbacks.function,
            self.callbacks.records.map(|(sink, ..)| sink),
            self.callbacks.metrics.map(|(sink, ..)| sink),
        );
        let delivered = deliver(function, record, records, metrics, |sink, role, args| {
            self.call(sink, role, args)
        });
        if let Err(e) = delivered {
            self.failure = Some(e);
        }
    }

    fn on_give_up(&mut self, report: &recuo::Report) {
        let Some(hook) = self.callbacks.on_give_up else {
            return;
        };
        if self.engine_busy || self.failure.is_some() {
            return;
        }
        match crate::values::instance(report) {
            Ok(report) => {
                if let Err(e) = self.call(hook, "$onGiveUp", vec![&report.0]) {
                    self.failure = Some(e);
                }
            }
            Err(e) => self.failure = Some(Halt::Raise(e)),
        }
    }

    fn on_done(&mut self, report: &recuo::Report) {
        self.done = Some(report.clone());
    }
}

/// Hands `record` to `$metrics` (each metric point it means, under its Prometheus name,
/// with its attributes under their label names) and then to `$records`, through `call`: the
/// first failure ends it.
pub(crate) fn deliver<'z>(
    function: &str,
    record: &Record,
    records: Option<&ZendCallable<'z>>,
    metrics: Option<&ZendCallable<'z>>,
    mut call: impl FnMut(&ZendCallable<'z>, &str, Vec<&dyn IntoZvalDyn>) -> Result<Zval, Halt>,
) -> Result<(), Halt> {
    if let Some(sink) = metrics {
        for point in recuo::telemetry::telemetry(record).points {
            let mut labels = ZendHashTable::new();
            for (key, value) in &point.attributes {
                let label = recuo::telemetry::prometheus_label(key);
                labels
                    .insert(label.as_str(), value.as_str())
                    .map_err(|e| Halt::Raise(e.into()))?;
            }
            let name = point.instrument.prometheus_name();
            call(sink, "$metrics", vec![&name, &point.value, &labels])?;
        }
    }
    if let Some(sink) = records {
        let array = record_array(function, record).map_err(Halt::Raise)?;
        call(sink, "$records", vec![&array])?;
    }
    Ok(())
}

/// What a loop adds to its machine: the gate and, with records (for `$records` or
/// `$metrics`), the request they name.
type Effects<'a> = (Option<&'a Gate>, Option<(&'a str, &'a str)>);

/// The machine `op` with the loop's gate and records.
fn with_effects(op: Operation, (gate, records): Effects<'_>) -> Operation {
    let op = match gate {
        Some(gate) => op.gate(gate.clone()),
        None => op,
    };
    match records {
        Some((method, url)) => op.request(method, url).records(Some(Level::Debug)),
        None => op,
    }
}

/// Runs the machine `make` builds (of `max_attempts`, drawing from the pool it is given) with
/// `callbacks` (its gate and records) — an operation of a batch when `batch_operation` — and,
/// after `first`, a first attempt already made: the operation's value and its report, or how
/// it gave up (its last failure unchanged); `Err` with what a callback threw. (The machine is
/// large: it is built here, not moved here.)
pub fn drive_php(
    max_attempts: u32,
    make: impl FnOnce(LoopPool) -> Operation,
    callbacks: Callbacks<'_, '_>,
    batch_operation: bool,
    first: Option<First>,
) -> Result<Result<(Zval, recuo::Report), RetryError<Halt>>, Halt> {
    let start = match &first {
        Some(f) => Start::AfterFirst {
            own_pool: f.outermost,
        },
        None => Start::Machine,
    };
    let (scope, pool) = PoolScope::enter(max_attempts, batch_operation, start);
    // Dropped at the end of this function, or by the engine if PHP code bails out.
    let _scope = BailoutGuard::new(scope);
    let plain =
        callbacks.gate.is_none() && callbacks.records.is_none() && callbacks.metrics.is_none();
    let request = callbacks
        .records
        .map(|(_, method, url)| (method, url))
        .or(callbacks.metrics.map(|(_, method, url)| (method, url)));
    let effects = (callbacks.gate, request);
    let mut driver = PhpDriver {
        callbacks,
        engine_busy: first
            .as_ref()
            .is_some_and(|f| matches!(f.failure, Halt::Pending)),
        failure: None,
        pass: None,
        notes: (None, None),
        done: None,
        failed_ms: first.as_ref().map(|f| f.failed_ms),
    };
    let key = OnceCell::new();
    let first = first.map(|first| {
        if let Some(k) = first.key {
            let _ = key.set(k);
        }
        recuo::First {
            started_ms: first.started_ms,
            unix_ms: driver.unix_ms(),
            result: Err(first.failure),
        }
    });
    // Built in place: a loop with no gate and no records moves the machine no further.
    let outcome = if plain {
        drive_from(make(pool), &key, &mut driver, first)
    } else {
        drive_from(with_effects(make(pool), effects), &key, &mut driver, first)
    };
    driver.check()?;
    match outcome {
        Ok(value) => Ok(Ok((value, driver.done.unwrap_or_default()))),
        Err(Stopped::Aborted(halt)) => Err(halt),
        Err(Stopped::GaveUp(gave_up)) => Ok(Err(gave_up)),
    }
}

/// Runs the machine `make` builds with `callbacks` inside any enclosing loop: returns the
/// operation's value, or throws its last failure (the same object), or what a callback threw.
pub fn run(
    max_attempts: u32,
    make: impl FnOnce(LoopPool) -> Operation,
    callbacks: Callbacks<'_, '_>,
    first: Option<First>,
) -> PhpResult<Zval> {
    let function = callbacks.function;
    match drive_php(max_attempts, make, callbacks, false, first) {
        Ok(Ok((value, _))) => Ok(value),
        Ok(Err(RetryError { error: Some(e), .. })) | Err(e) => Err(e.into_exception()),
        // No attempt was made: there is no failure of the operation to rethrow.
        Ok(Err(RetryError { reason, .. })) => Err(php_error(format!(
            "{function}(): gave up before the first attempt ({})",
            reason.name()
        ))),
    }
}
