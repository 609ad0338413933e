//! The PHP effects of the core's one retry loop ([`recuo::drive()`]): `Recuo\retry` and
//! `Recuo\comRetry` both run through [`run`], with PHP callables for the operation, the
//! classification, the hooks and the sleep.
//!
//! When a PHP callable throws, the engine leaves the exception pending in the executor
//! globals. The loop takes it out (so PHP code can run again: the classifier, a hook, the
//! next attempt) and keeps the object itself, with its reference count, as the loop's error.
//! When the loop gives up, that very object is thrown again with `zend_throw_exception_object`,
//! which neither copies it nor touches its trace: `$caught === $thrown` in PHP, and
//! `getTrace()` still points into the operation.
//!
//! Nested loops share one limit (SPEC §6): the outermost loop running in the current fiber
//! of the current request owns an [`AttemptPool`]; a loop started inside one of its
//! attempts draws from it, its first attempt being the enclosing attempt itself. The pools
//! are kept per fiber, so that loops suspended in different fibers (an event loop running
//! many operations) do not count against one another. A fatal error inside a loop jumps over
//! the Rust frames (`longjmp`), so the scope that owns a pool is a [`BailoutGuard`], which
//! the engine's catch point drops; and every request starts and ends with no pool at all.
//!
//! A loop may pass every attempt through a [`recuo::Gate`], as the core's own runner does
//! (`Retry::gate`): the gate's place and start slot before each attempt, the place given back
//! right after it (before any sleep), the gate's budget as the loop's allowance, and an
//! adaptive regulator told of `rate_limited` verdicts and of successes. `Recuo\runBatch`
//! adds its stats recorder and the cancellation of its deadline ([`BatchPart`]).
//!
//! With a `$records` sink, the loop keeps a [`Journal`] of the operation and hands the sink
//! the core's records (SPEC §7): one per attempt, once its decision is known (before
//! `$onRetry`, before `$onGiveUp`), then one for the result. An attempt's outcome is what the
//! operation said it received (`Recuo\Attempt::recordResponse`), else what `Recuo\classify`
//! judged (the `Recuo\Verdict` keeps it), else a success or, for a failure nothing said more
//! about, the transport kind `other`.

use std::cell::RefCell;
use std::time::Duration;

use ext_php_rs::convert::{FromZval, IntoZval};
use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;
use ext_php_rs::zend::{ce, BailoutGuard, ExecutorGlobals};
use recuo::{
    drive, AttemptContext, AttemptPool, Attempts, CancelToken, Clock, Driver, Gate, GiveUpReason,
    LazyJitterRng, Pass, RetryError, StatsRecorder, Stopped, SystemClock,
};

use crate::attempts::{Attempt, Report};
use crate::convert::{php_int, type_name};
use crate::errors::{shared_file_error, type_error, value_error_message};
use crate::limits::ConcurrencyLimit;
use crate::record::{Journal, RequestLine, Seen, Sink};
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
        None => Halt::Raise(PhpException::new(
            format!("{function}(): calling {role} failed"),
            0,
            ce::error(),
        )),
    }
}

/// How a failure is judged.
#[derive(Clone, Copy)]
pub enum Judge<'a, 'z> {
    /// Every `Throwable` is worth another attempt.
    RetryAll,
    /// Guide A's `$repetirSe($e)`: its answer read as a PHP condition.
    Predicate(&'a ZendCallable<'z>),
    /// `Recuo\retry`'s `$classify($e)`: a `Recuo\Verdict` (server waits included) or a bool.
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
    /// The gate every attempt passes, if any.
    pub gate: Option<&'a Gate>,
    /// What a batch adds, when the loop runs one operation of `Recuo\runBatch`.
    pub batch: Option<BatchPart<'a>>,
    /// Where the records go, and the request they describe, when `$records` is given.
    pub records: Option<Records<'a, 'z>>,
}

/// The records of one loop: the sink and the request the loop was given.
pub struct Records<'a, 'z> {
    /// `$records(array $record)`.
    pub sink: &'a ZendCallable<'z>,
    /// The loop's `method:` and `url:` (an attempt may say otherwise).
    pub request: RequestLine,
}

/// What `Recuo\runBatch` adds to the loop of each of its operations.
#[derive(Clone, Copy)]
pub struct BatchPart<'a> {
    /// The batch's stats: every start, its end, and the causes seen.
    pub recorder: &'a StatsRecorder,
    /// Cancelled when the batch's deadline passes: a wait for the gate ends at once, and no
    /// attempt starts afterwards.
    pub stop: &'a CancelToken,
}

/// Whose attempts a loop counts (SPEC §6, nested loops).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nesting {
    /// Inside another loop, draw from its attempts (`Recuo\retry`, `Recuo\comRetry`).
    Enclosing,
    /// Count its own attempts even inside another loop (each operation of
    /// `Recuo\runBatch`: a batch's operations are not attempts of the enclosing one).
    /// Loops inside it draw from it.
    Own,
}

/// The callbacks as the effects of [`recuo::drive()`].
struct PhpDriver<'a, 'z> {
    callbacks: Callbacks<'a, 'z>,
    clock: SystemClock,
    /// Something that is not a `Throwable` is pending in the engine: run no PHP code.
    engine_busy: bool,
    /// What `$onGiveUp` threw: it replaces the operation's failure.
    give_up_failure: Option<Halt>,
    /// The gate's pass for the attempt under way: its place in flight, given back right
    /// after the attempt (and by the engine, should a fatal error jump over this frame).
    pass: Option<BailoutGuard<Pass>>,
    /// Cancels the loop: the batch's deadline, or a token nothing cancels.
    cancel: CancelToken,
    /// Attempts made (the operation called).
    attempts_made: u32,
    /// The records' sink and the operation's journal, when records are asked for.
    journal: Option<(Sink<'a, 'z>, Journal)>,
    /// With records: the last attempt's failure, when it is a `Throwable` (a second handle
    /// on the object the loop holds), for `$classify` to read its status and headers when
    /// the loop did not ask it (no attempt was left).
    last_thrown: Option<Zval>,
}

impl PhpDriver<'_, '_> {
    fn failed(&mut self, role: &str) -> Halt {
        let halt = take_failure(self.callbacks.function, role);
        if matches!(halt, Halt::Pending) {
            self.engine_busy = true;
        }
        halt
    }

    /// Calls the operation, with a `Recuo\Attempt` when it takes one: its result, and what
    /// the operation told the attempt it sent and received.
    fn call_operation(&mut self, ctx: &AttemptContext<'_>) -> (Result<Zval, Halt>, Notes) {
        let (operation, role) = self.callbacks.operation;
        let mut notes = Notes::default();
        let result = if self.callbacks.pass_attempt {
            let attempt = match Attempt::new(
                ctx.attempt(),
                ctx.idempotency_key().to_string(),
                ctx.idempotency_header().to_string(),
            )
            .into_zval(false)
            {
                Ok(attempt) => attempt,
                Err(e) => return (Err(Halt::Raise(e.into())), notes),
            };
            let result = operation.try_call(vec![&attempt]);
            // The object the operation was given: what it recorded is in it.
            if let Some(attempt) = <&Attempt>::from_zval(&attempt) {
                notes = Notes {
                    request: attempt.request.clone(),
                    response: attempt.response.clone(),
                };
            }
            result
        } else {
            operation.try_call(vec![])
        };
        (result.map_err(|_| self.failed(role)), notes)
    }

    /// The verdict of the callbacks on a failure, and what `Recuo\classify` judged when the
    /// verdict came from it.
    fn judge(&mut self, error: &Halt) -> Result<(recuo::Verdict, Option<Seen>), Halt> {
        let thrown = match error {
            Halt::Thrown(thrown) => thrown,
            Halt::Pending => return Err(Halt::Pending),
            // Not the operation's own failure: never retried.
            Halt::Raise(_) => return Ok((recuo::Verdict::from_predicate(false), None)),
        };
        let (judge, role) = &self.callbacks.judge;
        let role = *role;
        match judge {
            Judge::RetryAll => Ok((recuo::Verdict::from_predicate(true), None)),
            Judge::Predicate(predicate) => match predicate.try_call(vec![thrown]) {
                // `if ($repetirSe($e))`: PHP's truthiness, as guide A's PHP code reads it.
                Ok(answer) => Ok((
                    recuo::Verdict::from_predicate(answer.coerce_to_bool()),
                    None,
                )),
                Err(_) => Err(self.failed(role)),
            },
            Judge::Classifier(classifier) => match classifier.try_call(vec![thrown]) {
                Ok(answer) => {
                    if let Some(verdict) = <&Verdict>::from_zval(&answer) {
                        Ok((verdict.for_failure(), verdict.seen.clone()))
                    } else if let Some(retry) = answer.bool() {
                        Ok((recuo::Verdict::from_predicate(retry), None))
                    } else {
                        Err(Halt::Raise(type_error(format!(
                            "{}(): {role} must return Recuo\\Verdict or bool, {} returned",
                            self.callbacks.function,
                            type_name(&answer)
                        ))))
                    }
                }
                Err(_) => Err(self.failed(role)),
            },
        }
    }
}

/// What the operation told its `Recuo\Attempt`, for the records.
#[derive(Default)]
struct Notes {
    request: Option<RequestLine>,
    response: Option<Seen>,
}

impl PhpDriver<'_, '_> {
    /// Hands `records` to the sink, in order; stops at the first failure.
    fn send(&mut self, records: &[recuo::Record]) -> Result<(), Halt> {
        let Some((sink, _)) = &self.journal else {
            return Ok(());
        };
        let sink = *sink;
        for record in records {
            match sink.send(self.callbacks.function, record) {
                Ok(()) => {}
                Err(Some(e)) => return Err(Halt::Raise(e)),
                Err(None) => return Err(self.failed("$records")),
            }
        }
        Ok(())
    }

    /// When the loop gave up without asking `$classify` about the last failure (no attempt
    /// was left), asks it now, for the status and headers of that attempt's record only:
    /// the verdict decides nothing, counts nowhere, and reaches neither the gate nor the
    /// stats. Only with records, only a classifier (`$repetirSe` says nothing of a status).
    fn judge_for_records(&mut self) -> Result<(), Halt> {
        let (Judge::Classifier(classifier), Some(thrown)) =
            (self.callbacks.judge.0, self.last_thrown.take())
        else {
            return Ok(());
        };
        if !self
            .journal
            .as_ref()
            .is_some_and(|(_, journal)| journal.unjudged())
        {
            return Ok(());
        }
        let answer = classifier
            .try_call(vec![&thrown])
            .map_err(|_| self.failed(self.callbacks.judge.1))?;
        if let (Some(verdict), Some((_, journal))) =
            (<&Verdict>::from_zval(&answer), &mut self.journal)
        {
            journal.saw(verdict.seen.clone());
        }
        Ok(())
    }

    /// The records of a success: the last attempt's and the result.
    fn record_success(&mut self) -> Result<(), Halt> {
        let now = self.clock.now_ms();
        let made = self.attempts_made;
        let records = match &mut self.journal {
            Some((_, journal)) => journal.done(made, recuo::unix_now_ms(), now),
            None => return Ok(()),
        };
        self.send(&records)
    }
}

impl Driver for PhpDriver<'_, '_> {
    type Value = Zval;
    type Error = Halt;

    fn now_ms(&mut self) -> u64 {
        self.clock.now_ms()
    }

    fn is_cancelled(&mut self) -> bool {
        self.cancel.is_cancelled()
    }

    fn before_attempt(&mut self, attempt: u32) -> Result<bool, Halt> {
        if let Some(gate) = self.callbacks.gate {
            if let Some(limit) = gate.limit() {
                // Only this thread holds the places: waiting for one would never end.
                ConcurrencyLimit::would_wait_forever(limit, self.callbacks.function)
                    .map_err(Halt::Raise)?;
            }
            match gate.enter(attempt, &self.cancel) {
                Ok(Some(pass)) => self.pass = Some(BailoutGuard::new(pass)),
                Ok(None) => return Ok(false),
                // A Redis regulator's server out of reach.
                Err(recuo::RegulatorError::Shared(e)) => {
                    return Err(Halt::Raise(shared_file_error(self.callbacks.function, &e)))
                }
                // A cost above the burst; the gate asks for 1, which never is.
                Err(e) => {
                    return Err(Halt::Raise(value_error_message(format!(
                        "{}(): {e}",
                        self.callbacks.function
                    ))))
                }
            }
        }
        self.attempts_made += 1;
        Ok(true)
    }

    fn attempt(&mut self, ctx: &AttemptContext<'_>) -> Result<Zval, Halt> {
        let batch = self.callbacks.batch;
        if let Some(batch) = batch {
            batch.recorder.start(ctx.attempt(), recuo::monotonic_ns());
        }
        if let Some((_, journal)) = &mut self.journal {
            journal.started(recuo::unix_now_ms(), self.clock.now_ms());
        }
        let (result, notes) = self.call_operation(ctx);
        if let Some(batch) = batch {
            batch.recorder.end();
        }
        if let Some((_, journal)) = &mut self.journal {
            journal.ended(
                self.clock.now_ms(),
                result.is_err(),
                notes.request,
                notes.response,
            );
            self.last_thrown = match &result {
                Err(Halt::Thrown(thrown)) => Some(thrown.shallow_clone()),
                _ => None,
            };
        }
        // The place in flight is given back before any waiting.
        self.pass = None;
        if result.is_ok() {
            if let Some(gate) = self.callbacks.gate {
                gate.on_success();
            }
        }
        result
    }

    fn classify(&mut self, error: &Halt) -> Result<recuo::Verdict, Halt> {
        let (verdict, seen) = self.judge(error)?;
        if let Some((_, journal)) = &mut self.journal {
            journal.judged(verdict, seen);
        }
        if let Some(batch) = self.callbacks.batch {
            batch.recorder.saw(verdict.cause());
        }
        if let Some(gate) = self.callbacks.gate {
            gate.on_verdict(&verdict);
        }
        Ok(verdict)
    }

    fn on_retry(&mut self, attempt: u32, error: &Halt, delay: Duration) -> Result<(), Halt> {
        let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        let record = match &mut self.journal {
            Some((_, journal)) => journal.retry(delay_ms),
            None => None,
        };
        if let Some(record) = record {
            self.send(&[record])?;
        }
        let (Some((hook, role)), Halt::Thrown(thrown)) = (self.callbacks.on_retry, error) else {
            return Ok(());
        };
        let attempt = i64::from(attempt);
        let delay = php_int(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
        match hook.try_call(vec![&attempt, thrown, &delay]) {
            Ok(_) => Ok(()),
            Err(_) => Err(self.failed(role)),
        }
    }

    fn sleep(&mut self, delay: Duration) -> Result<bool, Halt> {
        match self.callbacks.sleep {
            Some(sleep) => {
                let ms = php_int(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
                match sleep.try_call(vec![&ms]) {
                    Ok(answer) => Ok(self.callbacks.sleep_false_cancels && answer.is_false()),
                    Err(_) => Err(self.failed("$sleep")),
                }
            }
            // Wakes at once when a batch's deadline passes.
            None => Ok(self.cancel.sleep(delay)),
        }
    }

    fn on_give_up(&mut self, report: &recuo::Report) {
        if self.engine_busy {
            return;
        }
        if let Err(failure) = self.judge_for_records() {
            self.give_up_failure = Some(failure);
            return;
        }
        let now = self.clock.now_ms();
        let made = self.attempts_made;
        let records = match (&mut self.journal, report.reason) {
            (Some((_, journal)), Some(reason)) => {
                journal.give_up(reason, made, recuo::unix_now_ms(), now)
            }
            _ => Vec::new(),
        };
        if let Err(failure) = self.send(&records) {
            self.give_up_failure = Some(failure);
            return;
        }
        let Some(hook) = self.callbacks.on_give_up else {
            return;
        };
        let report = match Report::from(report.clone()).into_zval(false) {
            Ok(report) => report,
            Err(e) => {
                self.give_up_failure = Some(Halt::Raise(e.into()));
                return;
            }
        };
        if hook.try_call(vec![&report]).is_err() {
            self.give_up_failure = Some(self.failed("$onGiveUp"));
        }
    }
}

/// How a loop ended without failing itself.
pub enum Ended {
    /// The operation returned this value.
    Value(Zval),
    /// The policy gave up: the operation's last failure (none when no attempt was made), and
    /// why.
    GaveUp {
        /// The operation's last failure.
        error: Option<Halt>,
        /// Why the loop stopped.
        reason: GiveUpReason,
    },
}

/// Runs the retry loop of `policy` with `callbacks`, drawing jitter and the idempotency key
/// from `rng`: how it ended and the attempts made, or what a callback threw (or
/// `$onGiveUp`'s failure, which replaces the operation's).
pub fn drive_php(
    policy: &recuo::Policy,
    rng: &mut LazyJitterRng,
    callbacks: Callbacks<'_, '_>,
    nesting: Nesting,
) -> PhpResult<(Ended, u32)> {
    let (scope, pool, nested) = PoolScope::enter(policy.max_attempts(), nesting);
    // Dropped at the end of this function, or by the engine if PHP code bails out.
    let _scope = BailoutGuard::new(scope);
    let attempts = Attempts::new(policy).with_pool(pool, nested);
    let cancel = callbacks
        .batch
        .map_or_else(CancelToken::new, |b| b.stop.clone());
    let gate = callbacks.gate;
    let journal = callbacks.records.as_ref().map(|records| {
        (
            Sink {
                callable: records.sink,
            },
            Journal::new(records.request.clone()),
        )
    });
    let mut driver = PhpDriver {
        callbacks,
        clock: SystemClock::default(),
        engine_busy: false,
        give_up_failure: None,
        pass: None,
        cancel,
        attempts_made: 0,
        journal,
        last_thrown: None,
    };
    let allowance = gate
        .and_then(Gate::budget)
        .map(|b| b as &dyn recuo::RetryAllowance);
    let outcome = drive(attempts, &mut *rng, allowance, &mut driver);
    let made = driver.attempts_made;
    match outcome {
        Ok(value) => {
            // A `Throwable` from `$records` ends the call, as a hook's would.
            driver.record_success().map_err(Halt::into_exception)?;
            Ok((Ended::Value(value), made))
        }
        Err(Stopped::Aborted(halt)) => Err(halt.into_exception()),
        Err(Stopped::GaveUp(RetryError { error, reason, .. })) => {
            match driver.give_up_failure.take() {
                Some(hook_failure) => Err(hook_failure.into_exception()),
                None => Ok((Ended::GaveUp { error, reason }, made)),
            }
        }
    }
}

/// Runs the retry loop of `policy` with `callbacks`: returns the operation's value, or
/// throws its last failure (the same object), or what a callback threw.
pub fn run(
    policy: &recuo::Policy,
    seed: Option<u64>,
    callbacks: Callbacks<'_, '_>,
) -> PhpResult<Zval> {
    let function = callbacks.function;
    // Seeded at the first draw only: a first-attempt success of guide A's loop costs no
    // seeding at all.
    let mut rng = LazyJitterRng::new(seed);
    let (ended, _) = drive_php(policy, &mut rng, callbacks, Nesting::Enclosing)?;
    match ended {
        Ended::Value(value) => Ok(value),
        Ended::GaveUp { error: Some(e), .. } => Err(e.into_exception()),
        // No attempt was made: there is no failure of the operation to rethrow.
        Ended::GaveUp {
            error: None,
            reason,
        } => Err(PhpException::new(
            format!(
                "{function}(): gave up before the first attempt ({})",
                reason.name()
            ),
            0,
            ce::error(),
        )),
    }
}

thread_local! {
    /// The pool of the outermost loop running in each fiber (keyed by the fiber's address;
    /// 0 for the main one) of the request this thread serves.
    static POOLS: RefCell<Vec<(usize, AttemptPool)>> = const { RefCell::new(Vec::new()) };
}

/// The fiber PHP code is running in: its address, or 0 outside any fiber.
fn current_fiber() -> usize {
    ExecutorGlobals::get().active_fiber as usize
}

/// The attempt pool of the outermost loop of the current fiber, given back on drop.
struct PoolScope {
    /// The fiber whose pool this scope created, when it is the outermost loop there.
    owner: Option<usize>,
    /// The enclosing loop's pool, set aside by a loop that counts its own attempts, and put
    /// back when it ends.
    saved: Option<AttemptPool>,
}

impl PoolScope {
    /// Enters a loop of `max_attempts`: with [`Nesting::Enclosing`], the enclosing loop's
    /// pool and `nested = true` when there is one; else a new pool that this scope owns.
    fn enter(max_attempts: u32, nesting: Nesting) -> (Self, AttemptPool, bool) {
        let fiber = current_fiber();
        POOLS.with(|pools| {
            let mut pools = pools.borrow_mut();
            let enclosing = pools.iter().position(|(f, _)| *f == fiber);
            let saved = match (enclosing, nesting) {
                (Some(i), Nesting::Enclosing) => {
                    let pool = pools[i].1.clone();
                    let scope = PoolScope {
                        owner: None,
                        saved: None,
                    };
                    return (scope, pool, true);
                }
                (Some(i), Nesting::Own) => Some(pools.remove(i).1),
                (None, _) => None,
            };
            let pool = AttemptPool::new(max_attempts);
            pools.push((fiber, pool.clone()));
            let scope = PoolScope {
                owner: Some(fiber),
                saved,
            };
            (scope, pool, false)
        })
    }
}

impl Drop for PoolScope {
    fn drop(&mut self) {
        if let Some(fiber) = self.owner {
            let saved = self.saved.take();
            // `try_with`: the thread may be ending.
            let _ = POOLS.try_with(|pools| {
                let mut pools = pools.borrow_mut();
                pools.retain(|(f, _)| *f != fiber);
                if let Some(pool) = saved {
                    pools.push((fiber, pool));
                }
            });
        }
    }
}

/// Forgets every pool: called when a request starts and ends, so that a request that died
/// inside a loop (a fatal error skips the scopes' destructors) leaves nothing behind.
pub fn reset_pools() {
    let _ = POOLS.try_with(|pools| pools.borrow_mut().clear());
}
