//! `Recuo\runBatch`: a queue of operations through one policy and one gate, with a deadline
//! for the whole queue (SPEC §6–§9), and what it did (`Recuo\BatchReport`,
//! `Recuo\BatchResult`, and the core's [`recuo::Stats`] as a `Recuo\Stats`).
//!
//! PHP callables must run on the PHP thread, so this runner takes the operations one after
//! the other from the core's sans-IO [`BatchQueue`] (which clips each operation's deadline,
//! says which are not started and why, counts them and makes their records), each through the
//! core's one loop ([`crate::driver`]) with the core's [`recuo::Gate`] and
//! [`recuo::StatsRecorder`]; how each ended for the batch is the core's [`BatchEnd`].

use std::time::Instant;

use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::array::ArrayKey;
use ext_php_rs::types::{ZendHashTable, Zval};
use recuo::{BatchEnd, BatchQueue, GiveUpReason, Next, RetryError, StatsRecorder};

use crate::convert::{seed as seed_arg, type_name};
use crate::driver::{self, Callbacks, Halt, Judge};
use crate::errors::{config_error, guarded, not_constructible, type_error};
use crate::limits::Gate;
use crate::policy::Policy;
use crate::record::record_array;
use crate::stats::Stats;
use crate::values::instance;

/// How one operation of a batch ended: `status` is `"succeeded"` (with its `value`),
/// `"gave_up"` (with its last failure, the very object it threw, as `error`, and the
/// `reason`) or `"not_started"` (with the `reason`: the deadline came first, or the queue
/// stopped on another operation's `stoppedBy`); `attempts` counts its calls.
#[php_class]
#[php(name = "Recuo\\BatchResult")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct BatchResult {
    status: &'static str,
    value: Option<Zval>,
    error: Option<Zval>,
    reason: Option<GiveUpReason>,
    stopped_by: Option<GiveUpReason>,
    attempts: u32,
}

impl BatchResult {
    fn not_started(reason: GiveUpReason, stopped_by: Option<GiveUpReason>) -> Self {
        BatchResult {
            status: "not_started",
            value: None,
            error: None,
            reason: Some(reason),
            stopped_by,
            attempts: 0,
        }
    }

    /// How the operation ended, as the batch's queue counts it.
    fn end(&self) -> BatchEnd {
        let reason = self.reason.unwrap_or(GiveUpReason::Cancelled);
        let stopped_by = self.stopped_by;
        match self.status {
            "succeeded" => BatchEnd::Succeeded,
            "not_started" => BatchEnd::NotStarted { reason, stopped_by },
            _ => BatchEnd::GaveUp { reason, stopped_by },
        }
    }
}

#[php_impl]
impl BatchResult {
    /// Not constructible from PHP: `Recuo\runBatch` makes them.
    #[php(vis = "private")]
    pub fn __construct() -> PhpResult<Self> {
        not_constructible("Recuo\\BatchResult")
    }

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

    /// Why it gave up or was not started (`permanent`, `attempts_exhausted`,
    /// `wait_exceeds_deadline`, `budget_exhausted`, `queue_stopped`, `cancelled`); null
    /// when it succeeded.
    #[php(getter)]
    pub fn get_reason(&self) -> Option<&'static str> {
        self.reason.map(GiveUpReason::name)
    }

    /// For `queue_stopped`: the reason of the operation that stopped the queue.
    #[php(getter)]
    pub fn get_stopped_by(&self) -> Option<&'static str> {
        self.stopped_by.map(GiveUpReason::name)
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
    elapsed_ms: f64,
}

#[php_impl]
impl BatchReport {
    /// Not constructible from PHP: `Recuo\runBatch` makes one.
    #[php(vis = "private")]
    pub fn __construct() -> PhpResult<Self> {
        not_constructible("Recuo\\BatchReport")
    }

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
        self.elapsed_ms
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
/// of every operation; `$sleep(int $ms)` replaces the real sleep. `$records(array $record)`
/// receives the records of every attempt and of every operation's result, redacted; each
/// operation says what it sends with `Recuo\Attempt::recordRequest`. With
/// `$stopOnUnreachableWait`, an operation that gives up `wait_exceeds_deadline` stops the
/// queue: the rest are not started (`queue_stopped`). `$onProgress(Recuo\BatchProgress $p)`
/// is called as each operation ends, started or not: one call per operation, in order.
#[php_function]
#[php(name = "Recuo\\runBatch")]
#[php(defaults(stopOnUnreachableWait = false))]
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
    stopOnUnreachableWait: bool,
    onProgress: Option<ZendCallable>,
) -> PhpResult<BatchReport> {
    const F: &str = "Recuo\\runBatch";
    guarded(F, || {
        let deadline = deadline
            .map(|s| {
                recuo::units::ms_from_secs_f64(s)
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
        let mut queue = BatchQueue::new(&policy, ops.len(), recuo::monotonic_ms(), deadline)
            .stop_when_a_wait_exceeds_the_deadline(stopOnUnreachableWait)
            .stats(recorder.clone());
        if records.is_some() {
            // The operations name their requests themselves (`Recuo\Attempt::recordRequest`):
            // one never started has none.
            queue = queue.records(Vec::new(), recuo::unix_now_ms());
        }
        let mut results = ZendHashTable::with_capacity(u32::try_from(ops.len()).unwrap_or(0));
        loop {
            let next = queue.next(recuo::monotonic_ms());
            if let Some(sink) = &records {
                while let Some((_, record)) = queue.poll_record() {
                    let array = record_array(F, &record)?;
                    sink.try_call(vec![&array])
                        .map_err(|_| driver::take_failure(F, "$records").into_exception())?;
                }
            }
            let (index, result) = match next {
                Next::Finished => break,
                Next::NotStarted {
                    index,
                    reason,
                    stopped_by,
                } => (index, BatchResult::not_started(reason, stopped_by)),
                Next::Start { index, policy } => {
                    let callbacks = Callbacks {
                        function: F,
                        operation: (&ops[index].callable, "$operations"),
                        pass_attempt: true,
                        judge: (judge, "$classify"),
                        on_retry: None,
                        on_give_up: None,
                        sleep: sleep.as_ref(),
                        sleep_false_cancels: true,
                        gate,
                        records: records.as_ref().map(|sink| (sink, "", "")),
                    };
                    let make = |pool| {
                        recuo::Operation::new(&policy)
                            .seed(seed)
                            .stats(recorder.clone())
                            .loop_pool(pool)
                    };
                    let ended =
                        driver::drive_php(policy.max_attempts(), make, callbacks, true, None)
                            .map_err(Halt::into_exception)?;
                    let result = match ended {
                        Ok((value, report)) => BatchResult {
                            status: "succeeded",
                            value: Some(value),
                            error: None,
                            reason: None,
                            stopped_by: None,
                            attempts: report.attempts,
                        },
                        Err(gave_up) => gave_up_result(gave_up)?,
                    };
                    // A sequential runner has nothing else running to stop: the queue
                    // answers `not_started` for the rest.
                    let _ = queue.finished(index, result.reason);
                    (index, result)
                }
            };
            let progress = queue.ended(index, result.end());
            insert(&mut results, &ops[index].key, result)?;
            if let Some(tell) = &onProgress {
                let progress = instance(&progress)?.into_object();
                tell.try_call(vec![&progress])
                    .map_err(|_| driver::take_failure(F, "$onProgress").into_exception())?;
            }
        }
        let mut table = Zval::new();
        table.set_hashtable(results);
        Ok(BatchReport {
            results: table,
            stats: recorder.snapshot(),
            elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        })
    })
}

/// How an operation that gave up ended for the batch (the core's [`BatchEnd`]): never started,
/// or given up with its last failure; a failure that is not the operation's own (`exit()`, a
/// failed call) ends the batch.
fn gave_up_result(gave_up: RetryError<Halt>) -> PhpResult<BatchResult> {
    // A gate that could not be used ended the loop with its own exception: never here.
    let end = BatchEnd::of(&gave_up.report, gave_up.gate_error.is_some());
    let (reason, stopped_by) = match end {
        BatchEnd::NotStarted { reason, stopped_by } => {
            return Ok(BatchResult::not_started(reason, stopped_by))
        }
        BatchEnd::GaveUp { reason, stopped_by } => (reason, stopped_by),
        BatchEnd::Succeeded => (gave_up.reason, gave_up.report.stopped_by),
    };
    let error = match gave_up.error {
        Some(Halt::Thrown(error)) => Some(error),
        Some(other) => return Err(other.into_exception()),
        None => None,
    };
    Ok(BatchResult {
        status: "gave_up",
        value: None,
        error,
        reason: Some(reason),
        stopped_by,
        attempts: gave_up.report.attempts,
    })
}

/// `Recuo\\runBatch`, for the module's registration (the macros keep the function's wrapper
/// private to this module).
pub fn run_batch_function() -> ext_php_rs::builders::FunctionBuilder<'static> {
    wrap_function!(run_batch)
}
