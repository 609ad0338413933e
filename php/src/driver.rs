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
use crate::errors::{type_error, value_error_message};
use crate::limits::ConcurrencyLimit;
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
}

impl PhpDriver<'_, '_> {
    fn failed(&mut self, role: &str) -> Halt {
        let halt = take_failure(self.callbacks.function, role);
        if matches!(halt, Halt::Pending) {
            self.engine_busy = true;
        }
        halt
    }

    /// Calls the operation, with a `Recuo\Attempt` when it takes one.
    fn call_operation(&mut self, ctx: &AttemptContext<'_>) -> Result<Zval, Halt> {
        let (operation, role) = self.callbacks.operation;
        let result = if self.callbacks.pass_attempt {
            let attempt = Attempt {
                number: ctx.attempt(),
                idempotency_key: ctx.idempotency_key().to_string(),
                idempotency_header: ctx.idempotency_header().to_string(),
            }
            .into_zval(false)
            .map_err(|e| Halt::Raise(e.into()))?;
            operation.try_call(vec![&attempt])
        } else {
            operation.try_call(vec![])
        };
        result.map_err(|_| self.failed(role))
    }

    /// The verdict of the callbacks on a failure.
    fn judge(&mut self, error: &Halt) -> Result<recuo::Verdict, Halt> {
        let thrown = match error {
            Halt::Thrown(thrown) => thrown,
            Halt::Pending => return Err(Halt::Pending),
            // Not the operation's own failure: never retried.
            Halt::Raise(_) => return Ok(recuo::Verdict::from_predicate(false)),
        };
        let (judge, role) = &self.callbacks.judge;
        let role = *role;
        match judge {
            Judge::RetryAll => Ok(recuo::Verdict::from_predicate(true)),
            Judge::Predicate(predicate) => match predicate.try_call(vec![thrown]) {
                // `if ($repetirSe($e))`: PHP's truthiness, as guide A's PHP code reads it.
                Ok(answer) => Ok(recuo::Verdict::from_predicate(answer.coerce_to_bool())),
                Err(_) => Err(self.failed(role)),
            },
            Judge::Classifier(classifier) => match classifier.try_call(vec![thrown]) {
                Ok(answer) => {
                    if let Some(verdict) = <&Verdict>::from_zval(&answer) {
                        Ok(verdict.for_failure())
                    } else if let Some(retry) = answer.bool() {
                        Ok(recuo::Verdict::from_predicate(retry))
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
        let result = self.call_operation(ctx);
        if let Some(batch) = batch {
            batch.recorder.end();
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
        let verdict = self.judge(error)?;
        if let Some(batch) = self.callbacks.batch {
            batch.recorder.saw(verdict.cause());
        }
        if let Some(gate) = self.callbacks.gate {
            gate.on_verdict(&verdict);
        }
        Ok(verdict)
    }

    fn on_retry(&mut self, attempt: u32, error: &Halt, delay: Duration) -> Result<(), Halt> {
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
        let Some(hook) = self.callbacks.on_give_up else {
            return;
        };
        if self.engine_busy {
            return;
        }
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
    let mut driver = PhpDriver {
        callbacks,
        clock: SystemClock::default(),
        engine_busy: false,
        give_up_failure: None,
        pass: None,
        cancel,
        attempts_made: 0,
    };
    let allowance = gate
        .and_then(Gate::budget)
        .map(|b| b as &dyn recuo::RetryAllowance);
    let outcome = drive(attempts, &mut *rng, allowance, &mut driver);
    let made = driver.attempts_made;
    match outcome {
        Ok(value) => Ok((Ended::Value(value), made)),
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
