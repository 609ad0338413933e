//! The PHP host of the core's one retry loop: `Recuo\retry`, `Recuo\comRetry` and each
//! operation of `Recuo\runBatch` run the core's [`recuo::Operation`] machine through
//! [`recuo::drive()`]. Every decision, count and record is the machine's; this module only
//! calls PHP code, waits, and keeps the nested loops' pools per request and fiber.
//!
//! When a PHP callable throws, the engine leaves the exception pending in the executor
//! globals. The loop takes it out (so PHP code can run again: the classifier, a hook, the
//! next attempt) and keeps the object itself, with its reference count, as the loop's error.
//! When the loop gives up, that very object is thrown again with `zend_throw_exception_object`,
//! which neither copies it nor touches its trace: `$caught === $thrown` in PHP, and
//! `getTrace()` still points into the operation.
//!
//! Nested loops share one limit (SPEC §6): the outermost loop running in the current fiber
//! of the current request owns an [`AttemptPool`], which the loops inside its attempts draw
//! from. The pools are kept per fiber, so that loops suspended in different fibers (an event
//! loop running many operations) do not count against one another. A fatal error inside a
//! loop jumps over the Rust frames (`longjmp`), so the scope that owns a pool is a
//! [`BailoutGuard`], which the engine's catch point drops; and every request starts and ends
//! with no pool at all.

use std::cell::{OnceCell, RefCell};
use std::time::Duration;

use ext_php_rs::convert::{FromZval, IntoZval};
use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;
use ext_php_rs::zend::{ce, BailoutGuard, ExecutorGlobals};
use recuo::{
    drive, AttemptContext, AttemptPool, CancelToken, Driver, Gate, Level, Operation, Pass, Record,
    RequestLine, RetryError, Seen, Stopped,
};

use crate::attempts::{Attempt, Report};
use crate::convert::{php_int, type_name};
use crate::errors::{shared_file_error, type_error, value_error_message};
use crate::limits::ConcurrencyLimit;
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
    /// Whether the last attempt said what it received: its word wins over the classifier's.
    said_seen: bool,
    /// The report of a success.
    done: Option<recuo::Report>,
    /// The failure of a first attempt the fast path made, handed to the machine as its
    /// first attempt's.
    replay: Option<Halt>,
    /// That attempt's start and end on the monotonic clock, read by the machine's first two
    /// clock reads (its start, then the failure).
    replay_clock: [Option<u64>; 2],
}

/// A first attempt the fast path made before any machine existed ([`crate::fast`]), and how
/// it failed: the loop replays it into the machine (`start(started_ms)`, then the failure at
/// `failed_ms`) and carries on from there.
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

/// Milliseconds on the monotonic clock every regulator and stats recorder counts in (rounded
/// up, so that no start is reported before a `Recuo\monotonicNs()` read earlier).
pub fn monotonic_ms() -> u64 {
    recuo::monotonic_ns().div_ceil(1_000_000)
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
        args: Vec<&dyn ext_php_rs::convert::IntoZvalDyn>,
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
        // A replayed first attempt: its start, then its end, as the fast path read them.
        match self.replay_clock.iter_mut().find_map(Option::take) {
            Some(at) => at,
            None => monotonic_ms(),
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
            ConcurrencyLimit::would_wait_forever(limit, function).map_err(Halt::Raise)?;
        }
        let timeout = until_ms.map(|u| Duration::from_millis(u.saturating_sub(monotonic_ms())));
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
        if let Some(first) = self.replay.take() {
            // The first attempt, already made by the fast path (see [`First`]).
            self.engine_busy = matches!(first, Halt::Pending);
            return Err(first);
        }
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
        self.said_seen = self.notes.1.is_some();
        std::mem::take(&mut self.notes)
    }

    fn classify(&mut self, error: &Halt) -> Result<(recuo::Verdict, Option<Seen>), Halt> {
        self.check()?;
        let (verdict, seen) = self.judge(error)?;
        Ok((verdict, seen.filter(|_| !self.said_seen)))
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
        let Some((sink, ..)) = self.callbacks.records else {
            return;
        };
        if self.engine_busy || self.failure.is_some() {
            return;
        }
        match record_array(self.callbacks.function, record) {
            Ok(array) => {
                if let Err(e) = self.call(sink, "$records", vec![&array]) {
                    self.failure = Some(e);
                }
            }
            Err(e) => self.failure = Some(Halt::Raise(e)),
        }
    }

    fn on_give_up(&mut self, report: &recuo::Report) {
        let Some(hook) = self.callbacks.on_give_up else {
            return;
        };
        if self.engine_busy || self.failure.is_some() {
            return;
        }
        match Report::from(report.clone()).into_zval(false) {
            Ok(report) => {
                if let Err(e) = self.call(hook, "$onGiveUp", vec![&report]) {
                    self.failure = Some(e);
                }
            }
            Err(e) => self.failure = Some(Halt::Raise(e.into())),
        }
    }

    fn on_done(&mut self, report: &recuo::Report) {
        self.done = Some(report.clone());
    }
}

/// What a loop adds to its machine: the gate and, with records, the request they name.
type Effects<'a, 'z> = (
    Option<&'a Gate>,
    Option<(&'a ZendCallable<'z>, &'a str, &'a str)>,
);

/// The machine `op` with the loop's gate and records.
fn with_effects(op: Operation, (gate, records): Effects<'_, '_>) -> Operation {
    let op = match gate {
        Some(gate) => op.gate(gate.clone()),
        None => op,
    };
    match records {
        Some((_, method, url)) => op.request(method, url).records(Some(Level::Debug)),
        None => op,
    }
}

/// Runs the machine `make` builds (of `max_attempts`, drawing from the pool it is given) with
/// `callbacks` (its gate and records), its attempts counted as `nesting` says: the
/// operation's value and its report, or how it gave up (its last failure unchanged); `Err`
/// with what a callback threw. (The machine is large: it is built here, not moved here.)
pub fn drive_php(
    max_attempts: u32,
    make: impl FnOnce(AttemptPool, bool) -> Operation,
    callbacks: Callbacks<'_, '_>,
    nesting: Nesting,
    first: Option<First>,
) -> Result<Result<(Zval, recuo::Report), RetryError<Halt>>, Halt> {
    let adopt = first.as_ref().is_some_and(|f| f.outermost);
    let (scope, pool, nested) = PoolScope::enter(max_attempts, nesting, adopt);
    // Dropped at the end of this function, or by the engine if PHP code bails out.
    let _scope = BailoutGuard::new(scope);
    let plain = callbacks.gate.is_none() && callbacks.records.is_none();
    let effects = (callbacks.gate, callbacks.records);
    let mut driver = PhpDriver {
        callbacks,
        engine_busy: false,
        failure: None,
        pass: None,
        notes: (None, None),
        said_seen: false,
        done: None,
        replay: None,
        replay_clock: [None, None],
    };
    let key = OnceCell::new();
    if let Some(first) = first {
        driver.replay = Some(first.failure);
        driver.replay_clock = [Some(first.started_ms), Some(first.failed_ms)];
        if let Some(k) = first.key {
            let _ = key.set(k);
        }
    }
    // Built in place: a loop with no gate and no records moves the machine no further.
    let outcome = if plain {
        drive(make(pool, nested), &key, &mut driver)
    } else {
        drive(with_effects(make(pool, nested), effects), &key, &mut driver)
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
    make: impl FnOnce(AttemptPool, bool) -> Operation,
    callbacks: Callbacks<'_, '_>,
    first: Option<First>,
) -> PhpResult<Zval> {
    let function = callbacks.function;
    match drive_php(max_attempts, make, callbacks, Nesting::Enclosing, first) {
        Ok(Ok((value, _))) => Ok(value),
        Ok(Err(RetryError { error: Some(e), .. })) | Err(e) => Err(e.into_exception()),
        // No attempt was made: there is no failure of the operation to rethrow.
        Ok(Err(RetryError { reason, .. })) => Err(PhpException::new(
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
    static POOLS: RefCell<Vec<(usize, Slot)>> = const { RefCell::new(Vec::new()) };
}

/// The attempts of the outermost loop of a fiber.
enum Slot {
    /// A loop in its first attempt, on the fast path, of `max_attempts`: its pool is made
    /// only when a loop inside asks for it (or when that attempt fails).
    Lazy(u32),
    /// The pool.
    Pool(AttemptPool),
}

impl Slot {
    /// The pool, made now for a loop in its first attempt: that attempt already drawn.
    fn pool(&mut self) -> AttemptPool {
        match self {
            Slot::Pool(pool) => pool.clone(),
            Slot::Lazy(max_attempts) => {
                let pool = AttemptPool::new(max_attempts.saturating_sub(1));
                *self = Slot::Pool(pool.clone());
                pool
            }
        }
    }
}

/// The fiber PHP code is running in: its address, or 0 outside any fiber.
fn current_fiber() -> usize {
    // SAFETY: the engine's globals are valid for the life of the process, and only this
    // thread touches them.
    unsafe { (*ext_php_rs::ffi::ext_php_rs_executor_globals()).active_fiber as usize }
}

/// The fast path's entry into the nested loops' pools ([`crate::fast`]): when no loop runs in
/// the current fiber, a lazy entry for a loop of `max_attempts`, and `true` (the caller then
/// owns it: [`fast_leave`] when it succeeds, or it hands it to the machine); `false` inside
/// another loop.
pub fn fast_enter(max_attempts: u32) -> bool {
    let fiber = current_fiber();
    POOLS.with(|pools| {
        let mut pools = pools.borrow_mut();
        if pools.iter().any(|(f, _)| *f == fiber) {
            return false;
        }
        pools.push((fiber, Slot::Lazy(max_attempts)));
        true
    })
}

/// The fast path's loop of the current fiber is over: its entry goes.
pub fn fast_leave() {
    let fiber = current_fiber();
    let _ = POOLS.try_with(|pools| {
        let mut pools = pools.borrow_mut();
        if let Some(i) = pools.iter().rposition(|(f, _)| *f == fiber) {
            pools.swap_remove(i);
        }
    });
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
    /// `adopt`: the enclosing entry is this loop's own, left by its fast path's first
    /// attempt (already drawn, so `nested = true` too): the scope owns it.
    fn enter(max_attempts: u32, nesting: Nesting, adopt: bool) -> (Self, AttemptPool, bool) {
        let fiber = current_fiber();
        POOLS.with(|pools| {
            let mut pools = pools.borrow_mut();
            let enclosing = pools.iter().position(|(f, _)| *f == fiber);
            let saved = match (enclosing, nesting) {
                (Some(i), Nesting::Enclosing) => {
                    let pool = pools[i].1.pool();
                    let scope = PoolScope {
                        owner: adopt.then_some(fiber),
                        saved: None,
                    };
                    return (scope, pool, true);
                }
                (Some(i), Nesting::Own) => match pools.remove(i).1 {
                    Slot::Pool(pool) => Some(pool),
                    mut lazy => Some(lazy.pool()),
                },
                (None, _) => None,
            };
            let pool = AttemptPool::new(max_attempts);
            pools.push((fiber, Slot::Pool(pool.clone())));
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
                    pools.push((fiber, Slot::Pool(pool)));
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
