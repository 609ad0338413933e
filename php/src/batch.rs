//! `Recuo\runBatch`: a queue of operations through one policy and one gate, with a deadline
//! for the whole queue (SPEC §6–§9), and what it did (`Recuo\BatchReport`,
//! `Recuo\BatchResult`, and the core's [`recuo::Stats`] as a `Recuo\Stats`).
//!
//! The core's [`recuo::Batch`] runs its operations on worker threads; PHP callables must run
//! on the PHP thread, so this runner takes them one after the other, each through the
//! core's one loop ([`recuo::drive()`], see [`crate::driver`]) with the core's
//! [`recuo::Gate`] and [`recuo::StatsRecorder`]. As in the core's runner: an operation not
//! started when the deadline passes is never started, no operation waits past the deadline
//! (its policy's deadline is cut to what is left, and a wait for the gate is cancelled when
//! the deadline passes), and the causes seen and the starts are recorded the same way. With a
//! `$records` sink, each operation's loop hands it the records of its attempts and result,
//! and an operation the deadline kept from starting has a result record of its own (given up,
//! `cancelled`, no attempt).

use std::time::{Duration, Instant};

use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::array::ArrayKey;
use ext_php_rs::types::{ZendHashTable, Zval};
use ext_php_rs::zend::BailoutGuard;
use recuo::{CancelToken, LazyJitterRng, StatsRecorder};

use crate::convert::{seed as seed_arg, type_name};
use crate::driver::{self, BatchPart, Callbacks, Ended, Halt, Judge, Nesting, Records};
use crate::errors::{config_error, guarded, type_error};
use crate::limits::Gate;
use crate::policy::Policy;
use crate::record::{self, RequestLine, Sink};
use crate::stats::Stats;

/// How one operation of a batch ended: `status` is `"succeeded"` (with its `value`),
/// `"gave_up"` (with its last failure, the very object it threw, as `error`, and the
/// `reason`) or `"not_started"` (the deadline came first); `attempts` counts its calls.
#[php_class]
#[php(name = "Recuo\\BatchResult")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct BatchResult {
    status: &'static str,
    value: Option<Zval>,
    error: Option<Zval>,
    reason: Option<&'static str>,
    attempts: u32,
}

impl BatchResult {
    fn not_started() -> Self {
        BatchResult {
            status: "not_started",
            value: None,
            error: None,
            reason: None,
            attempts: 0,
        }
    }
}

#[php_impl]
impl BatchResult {
    /// `"succeeded"`, `"gave_up"` or `"not_started"`.
    #[php(getter)]
    pub fn get_status(&self) -> &'static str {
        self.status
    }

    /// What the operation returned; null unless it succeeded.
    #[php(getter)]
    pub fn get_value(&self) -> Option<Zval> {
        self.value.as_ref().map(Zval::shallow_clone)
    }

    /// The operation's last failure, the very object it threw; null unless it gave up.
    #[php(getter)]
    pub fn get_error(&self) -> Option<Zval> {
        self.error.as_ref().map(Zval::shallow_clone)
    }

    /// Why it gave up (`permanent`, `attempts_exhausted`, `wait_exceeds_deadline`,
    /// `budget_exhausted`, `cancelled`); null unless it gave up.
    #[php(getter)]
    pub fn get_reason(&self) -> Option<&'static str> {
        self.reason
    }

    /// How many times the operation was called.
    #[php(getter)]
    pub fn get_attempts(&self) -> i64 {
        i64::from(self.attempts)
    }
}

/// What `Recuo\runBatch` did: one `Recuo\BatchResult` per operation, under the same keys
/// and in the same order, the batch's `stats`, and its `elapsedMs`.
#[php_class]
#[php(name = "Recuo\\BatchReport")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct BatchReport {
    results: Zval,
    stats: recuo::Stats,
    elapsed: Duration,
}

#[php_impl]
impl BatchReport {
    /// `array<array-key, Recuo\BatchResult>`: one per operation, under its key.
    #[php(getter)]
    pub fn get_results(&self) -> Zval {
        self.results.shallow_clone()
    }

    /// The batch's stats.
    #[php(getter)]
    pub fn get_stats(&self) -> Stats {
        self.stats.clone().into()
    }

    /// How long the batch took, in milliseconds.
    #[php(getter)]
    pub fn get_elapsed_ms(&self) -> f64 {
        self.elapsed.as_secs_f64() * 1e3
    }
}

/// Cancels the batch when its deadline passes, from a thread of its own (no PHP code runs
/// there): a wait for the gate's place or start slot wakes at once. Dropping it ends the
/// thread.
struct DeadlineTimer {
    finished: CancelToken,
}

impl DeadlineTimer {
    fn start(function: &str, deadline: Duration, stop: &CancelToken) -> PhpResult<Self> {
        let finished = CancelToken::new();
        let (done, stop) = (finished.clone(), stop.clone());
        std::thread::Builder::new()
            .name("recuo-deadline".to_string())
            .spawn(move || {
                if !done.sleep(deadline) {
                    stop.cancel();
                }
            })
            .map_err(|e| {
                PhpException::new(
                    format!("{function}(): cannot start the deadline's timer: {e}"),
                    0,
                    ext_php_rs::zend::ce::error(),
                )
            })?;
        Ok(DeadlineTimer { finished })
    }
}

impl Drop for DeadlineTimer {
    fn drop(&mut self) {
        self.finished.cancel();
    }
}

/// One operation of the batch: its key and the callable.
struct Operation<'z> {
    key: Zval,
    callable: ZendCallable<'z>,
}

/// Inserts `value` under `key` (an int or a string key of the operations' array).
fn insert(table: &mut ZendHashTable, key: &Zval, value: BatchResult) -> PhpResult<()> {
    let key = match (key.long(), key.zend_str()) {
        (Some(index), _) => ArrayKey::Long(index),
        (None, Some(name)) => ArrayKey::ZendString(name),
        (None, None) => ArrayKey::Long(0),
    };
    table.insert(key, value)?;
    Ok(())
}

/// Runs `$operations` (callables taking a `Recuo\Attempt`) one after the other, each until it
/// succeeds or `$policy` (guide A's when null) gives up, every attempt through `$gate`, all
/// within `$deadline` seconds: what has not started by then is not started, and no operation
/// waits past it. `$classify` judges failures as in `Recuo\retry`; `$seed` fixes the jitter
/// and the idempotency keys of the whole batch; `$sleep(int $ms)` replaces the real sleep.
/// `$records(array $record)` receives the records of every attempt and of every operation's
/// result, redacted; each operation says what it sends with `Recuo\Attempt::recordRequest`.
#[php_function]
#[php(name = "Recuo\\runBatch")]
#[allow(clippy::too_many_arguments)]
pub fn run_batch(
    operations: &ZendHashTable,
    policy: Option<&Policy>,
    gate: Option<&Gate>,
    deadline: Option<f64>,
    classify: Option<ZendCallable>,
    seed: Option<i64>,
    sleep: Option<ZendCallable>,
    records: Option<ZendCallable>,
) -> PhpResult<BatchReport> {
    const F: &str = "Recuo\\runBatch";
    guarded(F, || {
        let deadline = deadline
            .map(|s| {
                recuo::units::ms_from_secs_f64(s)
                    .map(Duration::from_millis)
                    .map_err(|e| config_error(F, Some((4, "deadline")), e))
            })
            .transpose()?;
        let seed = seed_arg(F, 6, seed)?;
        let mut ops = Vec::with_capacity(operations.len());
        let mut entries = operations.iter();
        while let Some((key, value)) = entries.next_zval() {
            let callable = ZendCallable::new(value.dereference()).map_err(|_| {
                let label = key
                    .long()
                    .map(|i| format!("index {i}"))
                    .unwrap_or_else(|| format!("key {:?}", key.string().unwrap_or_default()));
                type_error(format!(
                    "{F}(): Argument #1 ($operations) must hold callables; {label} holds {}",
                    type_name(value)
                ))
            })?;
            ops.push(Operation { key, callable });
        }
        let policy = policy.map_or_else(Policy::default_policy, |p| p.inner.clone());
        let gate = gate.map(|g| &g.inner);
        let judge = match &classify {
            Some(classifier) => Judge::Classifier(classifier),
            None => Judge::RetryAll,
        };
        let started = Instant::now();
        let recorder = StatsRecorder::new();
        let stop = CancelToken::new();
        // Dropped at the end, or by the engine if PHP code bails out: the timer ends either way.
        let _timer = deadline
            .map(|d| DeadlineTimer::start(F, d, &stop).map(BailoutGuard::new))
            .transpose()?;
        let mut rng = LazyJitterRng::new(seed);
        let mut results = ZendHashTable::with_capacity(u32::try_from(ops.len()).unwrap_or(0));
        for op in &ops {
            let remaining = deadline.map(|d| d.saturating_sub(started.elapsed()));
            if stop.is_cancelled() || remaining.is_some_and(|r| r.is_zero()) {
                recorder.not_started();
                if let Some(sink) = &records {
                    Sink { callable: sink }
                        .send(F, &record::not_started(recuo::unix_now_ms()))
                        .map_err(|e| {
                            e.unwrap_or_else(|| {
                                driver::take_failure(F, "$records").into_exception()
                            })
                        })?;
                }
                insert(&mut results, &op.key, BatchResult::not_started())?;
                continue;
            }
            // No operation may wait past the batch's deadline.
            let own = policy.deadline_ms().map(Duration::from_millis);
            let cut = match (own, remaining) {
                (Some(own), Some(left)) => Some(own.min(left)),
                (own, left) => own.or(left),
            };
            let policy = policy
                .to_builder()
                .deadline(cut)
                .build()
                .unwrap_or_else(|_| policy.clone());
            let callbacks = Callbacks {
                function: F,
                operation: (&op.callable, "$operations"),
                pass_attempt: true,
                judge: (judge, "$classify"),
                on_retry: None,
                on_give_up: None,
                sleep: sleep.as_ref(),
                sleep_false_cancels: true,
                gate,
                batch: Some(BatchPart {
                    recorder: &recorder,
                    stop: &stop,
                }),
                records: records.as_ref().map(|sink| Records {
                    sink,
                    request: RequestLine::default(),
                }),
            };
            let result = match driver::drive_php(&policy, &mut rng, callbacks, Nesting::Own)? {
                (Ended::Value(value), attempts) => {
                    recorder.finished(true);
                    BatchResult {
                        status: "succeeded",
                        value: Some(value),
                        error: None,
                        reason: None,
                        attempts,
                    }
                }
                (Ended::GaveUp { error: None, .. }, _) => {
                    recorder.not_started();
                    BatchResult::not_started()
                }
                (
                    Ended::GaveUp {
                        error: Some(Halt::Thrown(error)),
                        reason,
                    },
                    attempts,
                ) => {
                    recorder.finished(false);
                    BatchResult {
                        status: "gave_up",
                        value: None,
                        error: Some(error),
                        reason: Some(reason.name()),
                        attempts,
                    }
                }
                // Not a failure of the operation (`exit()`, a failed call): it ends the batch.
                (
                    Ended::GaveUp {
                        error: Some(other), ..
                    },
                    _,
                ) => return Err(other.into_exception()),
            };
            insert(&mut results, &op.key, result)?;
        }
        let mut table = Zval::new();
        table.set_hashtable(results);
        Ok(BatchReport {
            results: table,
            stats: recorder.snapshot(),
            elapsed: started.elapsed(),
        })
    })
}

/// `Recuo\\runBatch`, for the module's registration (the macros keep the function's wrapper
/// private to this module).
pub fn run_batch_function() -> ext_php_rs::builders::FunctionBuilder<'static> {
    wrap_function!(run_batch)
}
