//! The blocking runner: calls the operation, sleeps between attempts, honours the
//! deadline and cancellation, and shares one attempt limit between nested loops on a thread.

use std::cell::{OnceCell, RefCell};
use std::time::Duration;

use crate::attempts::{GiveUpReason, Report};
use crate::classify::{Cause, Verdict};
use crate::clock::{CancelToken, Clock, SystemClock};
use crate::drive::{drive, AttemptContext, Driver, RetryError, Stopped};
use crate::gate::{Gate, Pass};
use crate::journal::{Level, Seen};
use crate::operation::Operation;
use crate::pool::{AttemptPool, LoopPool};
use crate::record::{Record, RecordSink};
use crate::stats::StatsRecorder;
use crate::Policy;

thread_local! {
    static CURRENT_POOL: RefCell<Option<AttemptPool>> = const { RefCell::new(None) };
}

/// The attempt pool of the outermost loop running on this thread, restored on drop.
pub(crate) struct PoolScope {
    outermost: bool,
}

impl PoolScope {
    pub(crate) fn enter(max_attempts: u32) -> (Self, LoopPool) {
        CURRENT_POOL.with(|current| {
            let mut current = current.borrow_mut();
            let chosen = LoopPool::choose(current.as_ref(), max_attempts, false);
            if chosen.owned {
                *current = Some(chosen.pool.clone());
            }
            (
                PoolScope {
                    outermost: chosen.owned,
                },
                chosen,
            )
        })
    }
}

impl Drop for PoolScope {
    fn drop(&mut self) {
        if self.outermost {
            CURRENT_POOL.with(|current| current.borrow_mut().take());
        }
    }
}

type Classifier<'h, E> = Box<dyn FnMut(&E) -> Verdict + 'h>;
type RetryHook<'h, E> = Box<dyn FnMut(u32, &E, Duration) + 'h>;
type ReportHook<'h> = Box<dyn FnMut(&Report) + 'h>;

/// A configured blocking retry loop. Start with [`Retry::new`], finish with
/// [`call`](Retry::call).
///
/// ```
/// use recuo::{Policy, Retry};
///
/// let policy = Policy::builder().max_attempts(3).build().unwrap();
/// let mut calls = 0;
/// let result: Result<u32, _> = Retry::new(&policy)
///     .on_retry(|attempt, err: &String, delay| println!("attempt {attempt}: {err}, waiting {delay:?}"))
///     .call(|ctx| {
///         calls += 1;
///         if ctx.attempt() < 2 { Err(format!("failure {calls}")) } else { Ok(calls) }
///     });
/// assert_eq!(result.unwrap(), 3);
/// ```
pub struct Retry<'p, 'h, E, C = SystemClock> {
    policy: &'p Policy,
    clock: C,
    cancel: CancelToken,
    seed: Option<u64>,
    classify: Classifier<'h, E>,
    on_retry: Option<RetryHook<'h, E>>,
    on_give_up: Option<ReportHook<'h>>,
    on_done: Option<ReportHook<'h>>,
    gate: Option<&'h Gate>,
    stats: Option<StatsRecorder>,
    records: Option<&'h dyn RecordSink>,
    request: Option<(String, String)>,
    queue: Option<QueueProbe<'h>>,
}

/// Asks a batch queue whether it stopped, and on which reason.
type QueueProbe<'h> = Box<dyn Fn() -> Option<GiveUpReason> + 'h>;

impl<'p, 'h, E> Retry<'p, 'h, E, SystemClock> {
    /// A loop under `policy` that retries every error, with the system clock.
    pub fn new(policy: &'p Policy) -> Self {
        Retry {
            policy,
            clock: SystemClock::default(),
            cancel: CancelToken::new(),
            seed: None,
            classify: Box::new(|_| Verdict::Retry {
                cause: Cause::ServerError,
                server_wait: None,
            }),
            on_retry: None,
            on_give_up: None,
            on_done: None,
            gate: None,
            stats: None,
            records: None,
            request: None,
            queue: None,
        }
    }
}

impl<'p, 'h, E, C: Clock> Retry<'p, 'h, E, C> {
    /// Another clock (a [`crate::ManualClock`] in tests: no real sleeping).
    pub fn clock<D: Clock>(self, clock: D) -> Retry<'p, 'h, E, D> {
        Retry {
            policy: self.policy,
            clock,
            cancel: self.cancel,
            seed: self.seed,
            classify: self.classify,
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
            on_done: self.on_done,
            gate: self.gate,
            stats: self.stats,
            records: self.records,
            request: self.request,
            queue: self.queue,
        }
    }

    /// Cancels the loop when `token` is cancelled, waking it at once if it is sleeping.
    pub fn cancel_token(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }

    /// Seeds the jitter for exact tests (never the idempotency key).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Decides per error: retry (with any server wait), or give up. Build the verdict with
    /// [`Policy::classify`] for HTTP outcomes. The default retries every error.
    pub fn classify(mut self, f: impl FnMut(&E) -> Verdict + 'h) -> Self {
        self.classify = Box::new(f);
        self
    }

    /// Retries only the errors for which `f` answers `true` (as `com_retry`'s `repetir_se` does).
    pub fn retry_if(self, mut f: impl FnMut(&E) -> bool + 'h) -> Self {
        self.classify(move |e| Verdict::from_predicate(f(e)))
    }

    /// Called before each sleep with the attempt just failed, its error and the delay.
    pub fn on_retry(mut self, f: impl FnMut(u32, &E, Duration) + 'h) -> Self {
        self.on_retry = Some(Box::new(f));
        self
    }

    /// Called once when the loop gives up, with its report.
    pub fn on_give_up(mut self, f: impl FnMut(&Report) + 'h) -> Self {
        self.on_give_up = Some(Box::new(f));
        self
    }

    /// Sends every attempt through `gate`: a place in flight and a start slot before it, the
    /// gate's budget for every retry, and — with an adaptive regulator — slowing down on
    /// `rate_limited` verdicts and speeding back up on successes.
    pub fn gate(mut self, gate: &'h Gate) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Counts starts, causes and the result in `stats` (a batch shares one recorder).
    pub fn stats(mut self, stats: StatsRecorder) -> Self {
        self.stats = Some(stats);
        self
    }

    /// Sends the loop's records to `sink`, naming the request `method` and `url`
    /// (redacted when each record is made).
    pub fn records(mut self, sink: &'h dyn RecordSink, method: &str, url: &str) -> Self {
        self.records = Some(sink);
        self.request = Some((method.to_string(), url.to_string()));
        self
    }

    /// Ends the loop `queue_stopped` when `probe` answers a reason (the batch queue that
    /// runs it stopped on another operation's reason).
    pub fn queue_probe(mut self, probe: impl Fn() -> Option<GiveUpReason> + 'h) -> Self {
        self.queue = Some(Box::new(probe));
        self
    }

    /// Called once when the operation succeeds, with its report (attempts, elapsed, delays).
    pub fn on_done(mut self, f: impl FnMut(&Report) + 'h) -> Self {
        self.on_done = Some(Box::new(f));
        self
    }

    /// Runs `op` until it succeeds or the policy gives up.
    ///
    /// # Errors
    /// The operation's own last error, unchanged, inside a [`RetryError`] with the reason
    /// and the report.
    pub fn call<T>(
        self,
        op: impl FnMut(&AttemptContext<'_>) -> Result<T, E>,
    ) -> Result<T, RetryError<E>> {
        let (_scope, pool) = PoolScope::enter(self.policy.max_attempts());
        let mut machine = Operation::new(self.policy).seed(self.seed).loop_pool(pool);
        if let Some(gate) = self.gate {
            machine = machine.gate(gate.clone());
        }
        if let Some(stats) = &self.stats {
            machine = machine.stats(stats.clone());
        }
        #[cfg(feature = "tracing")]
        let spans = crate::tracing_spans::wanted().then(|| Spans {
            operation: crate::tracing_spans::operation_span(),
            attempt: None,
        });
        #[cfg(feature = "tracing")]
        let traced = spans.is_some();
        #[cfg(not(feature = "tracing"))]
        let traced = false;
        if self.records.is_some() || traced {
            let (method, url) = self.request.clone().unwrap_or_default();
            machine = machine.request(&method, &url).records(Some(Level::Debug));
        }
        let mut driver = Hooks {
            retry: self,
            op,
            pass: None,
            gate_error: None,
            #[cfg(feature = "tracing")]
            spans,
        };
        match drive(machine, &OnceCell::new(), &mut driver) {
            Ok(value) => Ok(value),
            Err(Stopped::GaveUp(mut e)) => {
                e.gate_error = driver.gate_error.take();
                Err(e)
            }
            // The runner's effects never fail, so nothing aborts; were one to, its error would
            // still reach the caller.
            Err(Stopped::Aborted(e)) => Err(RetryError {
                error: Some(e),
                reason: GiveUpReason::Permanent,
                retry_at_ms: None,
                report: Report::default(),
                gate_error: None,
            }),
        }
    }
}

/// The runner's closures as the effects of [`drive`].
struct Hooks<'p, 'h, E, C, F> {
    retry: Retry<'p, 'h, E, C>,
    op: F,
    pass: Option<Pass>,
    /// Why the gate could not be used, ending the loop.
    gate_error: Option<crate::RegulatorError>,
    /// The operation's span and the last attempt's, while someone listens to them.
    #[cfg(feature = "tracing")]
    spans: Option<Spans>,
}

/// The spans of one [`Retry::call`]: the operation's, and the attempt's whose record is next.
#[cfg(feature = "tracing")]
struct Spans {
    operation: tracing::Span,
    attempt: Option<tracing::Span>,
}

impl<E, C: Clock, T, F> Driver for Hooks<'_, '_, E, C, F>
where
    F: FnMut(&AttemptContext<'_>) -> Result<T, E>,
{
    type Value = T;
    type Error = E;

    fn now_ms(&mut self) -> u64 {
        self.retry.clock.now_ms()
    }
    fn unix_ms(&mut self) -> i64 {
        self.retry.clock.unix_ms()
    }
    fn is_cancelled(&mut self) -> bool {
        self.retry.cancel.is_cancelled()
    }
    fn queue_stopped(&mut self) -> Option<GiveUpReason> {
        self.retry.queue.as_ref().and_then(|q| q())
    }
    fn enter(&mut self, _attempt: u32, until_ms: Option<u64>) -> Result<bool, E> {
        let Some(gate) = self.retry.gate else {
            return Ok(true);
        };
        let now = self.retry.clock.now_ms();
        let timeout = until_ms.map(|u| Duration::from_millis(u.saturating_sub(now)));
        match gate.wait(timeout, &self.retry.cancel) {
            Ok(Some(pass)) => {
                self.pass = Some(pass);
                Ok(true)
            }
            Ok(None) => Ok(false),
            // A remote store out of reach (a cost above the burst cannot happen: the runner
            // asks for 1): no attempt, and the caller is told why.
            Err(e) => {
                self.gate_error = Some(e);
                Ok(false)
            }
        }
    }
    fn attempt(&mut self, ctx: &AttemptContext<'_>) -> Result<T, E> {
        #[cfg(feature = "tracing")]
        if let Some(spans) = &mut self.spans {
            let span = spans
                .operation
                .in_scope(|| crate::tracing_spans::attempt_span(ctx.attempt()));
            let result = span.in_scope(|| (self.op)(ctx));
            spans.attempt = Some(span);
            return result;
        }
        (self.op)(ctx)
    }
    fn leave(&mut self) {
        self.pass = None; // the place in flight is given back before any waiting
    }
    fn classify(&mut self, error: &E) -> Result<(Verdict, Option<Seen>), E> {
        Ok(((self.retry.classify)(error), None))
    }
    fn on_retry(&mut self, attempt: u32, error: &E, delay: Duration) -> Result<(), E> {
        if let Some(hook) = &mut self.retry.on_retry {
            hook(attempt, error, delay);
        }
        Ok(())
    }
    fn sleep(&mut self, delay: Duration) -> Result<bool, E> {
        Ok(self.retry.clock.sleep(delay, &self.retry.cancel))
    }
    fn on_record(&mut self, level: Level, record: &Record) {
        #[cfg(feature = "tracing")]
        if let Some(spans) = &mut self.spans {
            match record {
                Record::Attempt(_) => {
                    if let Some(span) = spans.attempt.take() {
                        crate::tracing_spans::record(&span, level, record);
                    }
                }
                Record::Final(_) => crate::tracing_spans::record(&spans.operation, level, record),
            }
        }
        let _ = level;
        if let Some(sink) = self.retry.records {
            sink.record(record);
        }
    }
    fn on_give_up(&mut self, report: &Report) {
        if let Some(hook) = &mut self.retry.on_give_up {
            hook(report);
        }
    }
    fn on_done(&mut self, report: &Report) {
        if let Some(hook) = &mut self.retry.on_done {
            hook(report);
        }
    }
}

/// Runs `op` under `policy`, retrying every error, with real sleeps.
///
/// # Errors
/// The operation's last error inside a [`RetryError`].
pub fn retry<T, E>(
    policy: &Policy,
    op: impl FnMut(&AttemptContext<'_>) -> Result<T, E>,
) -> Result<T, RetryError<E>> {
    Retry::new(policy).call(op)
}
