//! The blocking host of the [`Operation`] machine: the Rust [`crate::Retry`] runner,
//! [`crate::ComRetry`] (the `com_retry` loop), and the bindings' callback loops all call [`drive`] with
//! their own effects — how to call the operation, classify its error, wait and log. Every
//! decision and count is the machine's.

use std::cell::{OnceCell, RefCell};
use std::time::Duration;

use crate::attempts::{GiveUpReason, Report};
use crate::classify::Verdict;
use crate::gate::GatePoll;
use crate::idempotency::IdempotencyKey;
use crate::journal::{Level, RequestLine, Seen};
use crate::operation::{Operation, Step};
use crate::record::Record;
use crate::regulator::RegulatorError;

/// What the operation knows about the attempt it is making.
pub struct AttemptContext<'a> {
    attempt: u32,
    timeout_ms: Option<u64>,
    key: &'a OnceCell<IdempotencyKey>,
    header: &'a str,
    notes: Option<&'a RefCell<Notes>>,
}

/// What an attempt said it sent and received, for its record.
#[derive(Debug, Default)]
pub struct Notes {
    /// The request it sent.
    pub request: Option<RequestLine>,
    /// What it received.
    pub seen: Option<Seen>,
}

impl std::fmt::Debug for AttemptContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttemptContext")
            .field("attempt", &self.attempt)
            .field("key", &self.key.get())
            .finish_non_exhaustive()
    }
}

impl<'a> AttemptContext<'a> {
    /// The context of attempt `attempt` (for a host that drives an [`Operation`] itself and
    /// hands its operation this context): the key is made in `key` at the first ask.
    pub fn new(
        attempt: u32,
        timeout_ms: Option<u64>,
        key: &'a OnceCell<IdempotencyKey>,
        header: &'a str,
    ) -> Self {
        AttemptContext {
            attempt,
            timeout_ms,
            key,
            header,
            notes: None,
        }
    }

    /// The same context, keeping what the operation says of its attempt in `notes` (only
    /// when the loop keeps records).
    pub fn with_notes(mut self, notes: &'a RefCell<Notes>) -> Self {
        self.notes = Some(notes);
        self
    }

    /// Tells the loop's record what this attempt received: its `outcome` and the response's
    /// `headers` (only the request id and the wait headers are kept, redacted). Costs
    /// nothing when no record is kept.
    pub fn record_response<K: AsRef<str>, V: AsRef<str>>(
        &self,
        outcome: crate::Outcome,
        headers: &[(K, V)],
    ) {
        if let Some(notes) = self.notes {
            notes.borrow_mut().seen = Some(Seen::new(outcome, headers));
        }
    }

    /// Tells the loop's record what this attempt sent (the URL is redacted in the record).
    pub fn record_request(&self, method: &str, url: &str) {
        if let Some(notes) = self.notes {
            notes.borrow_mut().request = Some(RequestLine {
                method: method.to_string(),
                url: url.to_string(),
            });
        }
    }

    /// The attempt's number, from 0.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// What is left of the deadline when the attempt starts, ms (`None` without a deadline):
    /// an operation that can bound its own time (an HTTP timeout) bounds it by this.
    pub fn timeout_ms(&self) -> Option<u64> {
        self.timeout_ms
    }

    /// The operation's idempotency key: created at the first call from the operating
    /// system's random source, the same on every attempt of this operation, never shared
    /// with another operation.
    pub fn idempotency_key(&self) -> IdempotencyKey {
        *self.key.get_or_init(IdempotencyKey::random)
    }

    /// The header to send the key in (the policy's, `Idempotency-Key` by default).
    pub fn idempotency_header(&self) -> &str {
        self.header
    }
}

/// An operation that did not succeed: its own last error, unchanged, and why it stopped.
#[derive(Debug)]
pub struct RetryError<E> {
    /// The operation's last error; `None` only when no attempt was made (cancelled before
    /// the first, or an enclosing loop had no attempts left).
    pub error: Option<E>,
    /// Why the loop stopped.
    pub reason: GiveUpReason,
    /// For `wait_exceeds_deadline`: the monotonic instant (the runner clock's ms) from which
    /// a retry would be allowed.
    pub retry_at_ms: Option<u64>,
    /// Attempts, elapsed time and the delays slept.
    pub report: Report,
    /// Set when the loop stopped because its gate could not be used — a remote limit,
    /// regulator or budget whose store is out of reach (Rust's [`Retry`](crate::Retry); the
    /// bindings raise it as their own error). The attempt was not made; `reason` is what a
    /// refused entry comes to (`wait_exceeds_deadline`).
    pub gate_error: Option<crate::RegulatorError>,
}

impl<E> RetryError<E> {
    /// The operation's last error, dropping the rest.
    pub fn into_error(self) -> Option<E> {
        self.error
    }
}

impl<E: std::fmt::Display> std::fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "gave up after {} attempt(s) ({})",
            self.report.attempts,
            self.reason.name()
        )?;
        if let Some(e) = &self.gate_error {
            write!(f, ": the gate could not be used: {e}")?;
        }
        match &self.error {
            Some(e) => write!(f, ": {e}"),
            None => Ok(()),
        }
    }
}

impl<E: std::fmt::Debug + std::fmt::Display> std::error::Error for RetryError<E> {}

/// How a driven loop ended without a value.
#[derive(Debug)]
pub enum Stopped<E> {
    /// The policy gave up: the operation's last error, the reason and the report.
    GaveUp(RetryError<E>),
    /// One of the driver's own effects failed (a predicate that raised, a sleep interrupted
    /// by Ctrl-C): its error, as is.
    Aborted(E),
}

/// A first attempt a host made before its machine existed (see
/// [`Operation::success_needs_machine`]), handed to [`drive_from`]: the loop starts after it
/// and goes on from its outcome.
#[derive(Debug)]
pub struct First<V, E> {
    /// When it began, ms on the runner's monotonic clock.
    pub started_ms: u64,
    /// The wall time then, ms since the Unix epoch.
    pub unix_ms: i64,
    /// What it came to.
    pub result: Result<V, E>,
}

/// What a host tells the machine, as a value: a step that may ask a remote store (giving a
/// limit's place back, counting in a budget) can then be run where the host prefers — with a
/// lock released ([`Driver::tell`]).
#[derive(Debug)]
pub enum Told {
    /// [`Operation::start`].
    Start {
        /// The runner's clock, ms.
        now_ms: u64,
        /// The wall clock, ms since the Unix epoch.
        unix_ms: i64,
    },
    /// [`Operation::start_after_first`].
    StartAfterFirst {
        /// When the first attempt began, on the runner's clock.
        started_ms: u64,
        /// The wall clock then.
        unix_ms: i64,
    },
    /// [`Operation::entered`].
    Entered {
        /// The runner's clock, ms.
        now_ms: u64,
        /// Whether the gate let the attempt through.
        passed: bool,
    },
    /// [`Operation::succeeded_seen`].
    Succeeded {
        /// The runner's clock, ms.
        now_ms: u64,
        /// What the attempt received.
        seen: Option<Seen>,
    },
    /// [`Operation::failed_noted`].
    Failed {
        /// The runner's clock, ms.
        now_ms: u64,
        /// What the attempt received.
        seen: Option<Seen>,
        /// What its error carried.
        carried: Option<Seen>,
    },
    /// [`Operation::judged`].
    Judged {
        /// The runner's clock, ms.
        now_ms: u64,
        /// The classifier's verdict.
        verdict: Verdict,
        /// What the classifier saw.
        seen: Option<Seen>,
    },
    /// [`Operation::slept`].
    Slept {
        /// The runner's clock, ms.
        now_ms: u64,
    },
}

impl Told {
    /// Tells `op`: its next step.
    pub fn to(self, op: &mut Operation) -> Step {
        match self {
            Told::Start { now_ms, unix_ms } => op.start(now_ms, unix_ms),
            Told::StartAfterFirst {
                started_ms,
                unix_ms,
            } => op.start_after_first(started_ms, unix_ms),
            Told::Entered { now_ms, passed } => op.entered(now_ms, passed),
            Told::Succeeded { now_ms, seen } => op.succeeded_seen(now_ms, seen),
            Told::Failed {
                now_ms,
                seen,
                carried,
            } => op.failed_noted(now_ms, seen, carried),
            Told::Judged {
                now_ms,
                verdict,
                seen,
            } => op.judged(now_ms, verdict, seen),
            Told::Slept { now_ms } => op.slept(now_ms),
        }
    }
}

/// The effects of a retry loop: everything the [`Operation`] machine does not decide.
pub trait Driver {
    /// What the operation returns on success.
    type Value;
    /// What the operation fails with.
    type Error;

    /// Milliseconds on the runner's monotonic clock.
    fn now_ms(&mut self) -> u64;

    /// Milliseconds since the Unix epoch, read once when the loop starts (records and
    /// HTTP-dates are measured from it).
    fn unix_ms(&mut self) -> i64 {
        crate::clock::unix_now_ms()
    }

    /// Whether the operation has been cancelled by its caller.
    fn is_cancelled(&mut self) -> bool {
        false
    }

    /// Whether the batch queue the operation belongs to stopped, and on which reason.
    fn queue_stopped(&mut self) -> Option<GiveUpReason> {
        None
    }

    /// Waits at the gate for attempt `attempt` ([`Step::Enter`]), at most until `until_ms`
    /// on the runner's clock; `Ok(false)` when cancelled or out of time meanwhile.
    ///
    /// # Errors
    /// Ends the loop at once with this error.
    fn enter(&mut self, attempt: u32, until_ms: Option<u64>) -> Result<bool, Self::Error> {
        let _ = (attempt, until_ms);
        Ok(true)
    }

    /// Whether the gate is passed by the machine's gate step ([`Operation::poll_gate`], looked
    /// at by [`poll_gate`](Self::poll_gate), its waits slept by
    /// [`gate_sleep`](Self::gate_sleep)) instead of a blocking [`enter`](Self::enter). Default:
    /// no.
    fn polls_gate(&self) -> bool {
        false
    }

    /// One look at the gate for a driver that [`polls_gate`](Self::polls_gate): the machine's
    /// own (the default), or the same look made where the host prefers (with a lock
    /// released, off an event loop).
    ///
    /// # Errors
    /// A remote limit's or regulator's store could not be used.
    fn poll_gate(&mut self, op: &mut Operation, now_ms: u64) -> Result<GatePoll, RegulatorError> {
        op.poll_gate(now_ms)
    }

    /// The error the loop ends with when its gate's store could not be used (only for a
    /// driver that [`polls_gate`](Self::polls_gate)); `None`, the default, makes the loop give
    /// up as a refused entry does (`wait_exceeds_deadline`) with the error in
    /// [`RetryError::gate_error`].
    fn gate_error(&mut self, error: &RegulatorError) -> Option<Self::Error> {
        let _ = error;
        None
    }

    /// Sleeps one wait of the gate step (never zero); answers `true` when the operation was
    /// cancelled meanwhile. Default: [`sleep`](Self::sleep).
    ///
    /// # Errors
    /// Ends the loop at once with this error (what the machine holds of the gate is given
    /// back first).
    fn gate_sleep(&mut self, delay: Duration) -> Result<bool, Self::Error> {
        self.sleep(delay)
    }

    /// Tells the machine `told` when the step may ask a remote store
    /// ([`Operation::asks_a_remote_store`]): here (the default), or where the host prefers —
    /// with a lock released, off an event loop. Each such call ends by the operation's
    /// deadline.
    fn tell(&mut self, op: &mut Operation, told: Told) -> Step {
        told.to(op)
    }

    /// Makes one attempt.
    ///
    /// # Errors
    /// The operation's failure.
    fn attempt(&mut self, ctx: &AttemptContext<'_>) -> Result<Self::Value, Self::Error>;

    /// What the failed attempt's error carried of a response (a response attached to an
    /// exception), for its record: shown only when neither the attempt nor the classifier
    /// said what it received. Asked only when records are kept. Default: nothing.
    fn carried(&mut self, error: &Self::Error) -> Option<Seen> {
        let _ = error;
        None
    }

    /// The attempt is over and counted: give back its place in flight (before any wait).
    fn leave(&mut self) {}

    /// What the attempt just made received and sent, for its record (asked only when
    /// records are kept). Default: nothing known.
    fn observed(&mut self, failed: bool) -> (Option<RequestLine>, Option<Seen>) {
        let _ = failed;
        (None, None)
    }

    /// The verdict on a failure, and what the classifier saw of the response (for the
    /// record).
    ///
    /// # Errors
    /// Ends the loop at once with this error ([`Stopped::Aborted`]).
    fn classify(&mut self, error: &Self::Error) -> Result<(Verdict, Option<Seen>), Self::Error>;

    /// Called before each sleep with the attempt that failed, its error and the delay.
    ///
    /// # Errors
    /// Ends the loop at once with this error.
    fn on_retry(
        &mut self,
        attempt: u32,
        error: &Self::Error,
        delay: Duration,
    ) -> Result<(), Self::Error> {
        let _ = (attempt, error, delay);
        Ok(())
    }

    /// Sleeps `delay` (never zero); answers `true` when the operation was cancelled meanwhile.
    ///
    /// # Errors
    /// Ends the loop at once with this error.
    fn sleep(&mut self, delay: Duration) -> Result<bool, Self::Error>;

    /// Takes each record the loop makes, as it is made.
    fn on_record(&mut self, level: Level, record: &Record) {
        let _ = (level, record);
    }

    /// Called once when the loop gives up, with its report.
    fn on_give_up(&mut self, report: &Report) {
        let _ = report;
    }

    /// Called once when the operation succeeds, with its report (attempts, elapsed, the
    /// delays slept; no reason).
    fn on_done(&mut self, report: &Report) {
        let _ = report;
    }
}

fn check_stop<D: Driver>(driver: &mut D, op: &mut Operation) {
    if let Some(reason) = driver.queue_stopped() {
        op.stop_queue(reason);
    } else if driver.is_cancelled() {
        op.cancel();
    }
}

fn flush<D: Driver>(driver: &mut D, op: &mut Operation) {
    while let Some((level, record)) = op.poll_record() {
        driver.on_record(level, &record);
    }
}

/// Runs the [`Operation`] machine `op` to its end with `driver`'s effects — the one blocking
/// loop that the Rust runner, the `com_retry` loop and the bindings' callback runners
/// share. The key is `key`'s (made at the first ask when empty).
///
/// # Errors
/// [`Stopped::GaveUp`] with the operation's last error unchanged, or [`Stopped::Aborted`]
/// when one of the driver's effects failed.
pub fn drive<D: Driver>(
    op: Operation,
    key: &OnceCell<IdempotencyKey>,
    driver: &mut D,
) -> Result<D::Value, Stopped<D::Error>> {
    drive_from(op, key, driver, None)
}

/// [`drive`], from a first attempt made before the machine (`first`; `None`: from the
/// start): the machine starts after it ([`Operation::start_after_first`]) and hears its
/// outcome at its turn, what the driver [observed](Driver::observed) of it included.
///
/// # Errors
/// As [`drive`].
pub fn drive_from<D: Driver>(
    mut op: Operation,
    key: &OnceCell<IdempotencyKey>,
    driver: &mut D,
    mut first: Option<First<D::Value, D::Error>>,
) -> Result<D::Value, Stopped<D::Error>> {
    let mut last_error: Option<D::Error> = None;
    let mut value: Option<D::Value> = None;
    let mut gate_error: Option<RegulatorError> = None;
    check_stop(driver, &mut op);
    // Steps that may ask a remote store go through the driver (read once: the gate is fixed).
    let remote = op.asks_a_remote_store();
    let tell = |driver: &mut D, op: &mut Operation, told: Told| {
        if remote {
            driver.tell(op, told)
        } else {
            told.to(op)
        }
    };
    let mut step = match &first {
        Some(f) => tell(
            driver,
            &mut op,
            Told::StartAfterFirst {
                started_ms: f.started_ms,
                unix_ms: f.unix_ms,
            },
        ),
        None => {
            let unix = driver.unix_ms();
            let now_ms = driver.now_ms();
            tell(
                driver,
                &mut op,
                Told::Start {
                    now_ms,
                    unix_ms: unix,
                },
            )
        }
    };
    let header = op.policy().idempotency_header_name();
    loop {
        flush(driver, &mut op);
        step = match step {
            Step::Enter { attempt, until_ms } if driver.polls_gate() => {
                let now = driver.now_ms();
                match driver.poll_gate(&mut op, now) {
                    Ok(GatePoll::Next(step)) => step,
                    Ok(GatePoll::Wait { delay_ms }) => {
                        match driver.gate_sleep(Duration::from_millis(delay_ms)) {
                            Ok(woken) => {
                                check_stop(driver, &mut op);
                                if woken {
                                    op.cancel();
                                }
                                Step::Enter { attempt, until_ms }
                            }
                            Err(e) => {
                                // What the machine holds of the gate goes back at once.
                                op.cancel();
                                let _ = op.entered(driver.now_ms(), false);
                                return Err(Stopped::Aborted(e));
                            }
                        }
                    }
                    Err(e) => match driver.gate_error(&e) {
                        Some(raised) => return Err(Stopped::Aborted(raised)),
                        None => {
                            gate_error = Some(e);
                            op.entered(driver.now_ms(), false)
                        }
                    },
                }
            }
            Step::Enter { attempt, until_ms } => {
                let passed = driver.enter(attempt, until_ms).map_err(Stopped::Aborted)?;
                check_stop(driver, &mut op);
                let now_ms = driver.now_ms();
                tell(driver, &mut op, Told::Entered { now_ms, passed })
            }
            Step::Call {
                attempt,
                timeout_ms,
            } => {
                let notes = RefCell::new(Notes::default());
                let result = match first.take() {
                    Some(f) => f.result,
                    None => {
                        let mut ctx = AttemptContext::new(attempt, timeout_ms, key, &header);
                        if op.keeps_records() {
                            ctx = ctx.with_notes(&notes);
                        }
                        driver.attempt(&ctx)
                    }
                };
                let failed = result.is_err();
                let (sent, seen, carried) = if op.keeps_records() {
                    let noted = notes.into_inner();
                    let (sent, seen) = driver.observed(failed);
                    let carried = result.as_ref().err().and_then(|e| driver.carried(e));
                    (sent.or(noted.request), seen.or(noted.seen), carried)
                } else {
                    (None, None, None)
                };
                if let Some(sent) = sent {
                    op.attempt_request(&sent.method, &sent.url);
                }
                check_stop(driver, &mut op);
                let now_ms = driver.now_ms();
                let told = match result {
                    Ok(v) => {
                        value = Some(v);
                        Told::Succeeded { now_ms, seen }
                    }
                    Err(e) => {
                        last_error = Some(e);
                        Told::Failed {
                            now_ms,
                            seen,
                            carried,
                        }
                    }
                };
                let next = tell(driver, &mut op, told);
                driver.leave();
                next
            }
            Step::Classify { .. } => {
                let Some(error) = last_error.as_ref() else {
                    unreachable!("a failure is judged only after an attempt failed")
                };
                let (verdict, seen) = driver.classify(error).map_err(Stopped::Aborted)?;
                let now_ms = driver.now_ms();
                tell(
                    driver,
                    &mut op,
                    Told::Judged {
                        now_ms,
                        verdict,
                        seen,
                    },
                )
            }
            Step::Sleep { attempt, delay_ms } => {
                if let Some(error) = last_error.as_ref() {
                    let delay = Duration::from_millis(delay_ms);
                    driver
                        .on_retry(attempt, error, delay)
                        .map_err(Stopped::Aborted)?;
                    if delay_ms > 0 && driver.sleep(delay).map_err(Stopped::Aborted)? {
                        // Woken early: by the queue's stop if it stopped (never called a
                        // cancellation then), else by the caller's.
                        check_stop(driver, &mut op);
                        op.cancel();
                    }
                }
                check_stop(driver, &mut op);
                let now_ms = driver.now_ms();
                tell(driver, &mut op, Told::Slept { now_ms })
            }
            Step::Done(report) => {
                flush(driver, &mut op);
                driver.on_done(&report);
                match value {
                    Some(v) => return Ok(v),
                    None => unreachable!("an operation is done only after an attempt succeeded"),
                }
            }
            Step::GaveUp {
                reason,
                retry_at_ms,
                report,
            } => {
                flush(driver, &mut op);
                driver.on_give_up(&report);
                return Err(Stopped::GaveUp(RetryError {
                    error: last_error,
                    reason,
                    retry_at_ms,
                    report,
                    gate_error,
                }));
            }
        };
    }
}
