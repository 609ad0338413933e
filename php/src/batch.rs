//! `Recuo\runBatch`: a queue of operations through one policy and one gate, with a deadline
//! for the whole queue, and what it did (`Recuo\BatchReport`,
//! `Recuo\BatchResult`, and the core's [`recuo::Stats`] as a `Recuo\Stats`).
//!
//! PHP callables must run on the PHP thread, so this runner takes the operations one after
//! the other from the core's sans-IO [`BatchQueue`] (which clips each operation's deadline,
//! says which are not started and why, counts them and makes their records), each through the
//! core's one loop ([`crate::driver`]) with the core's [`recuo::Gate`] and
//! [`recuo::StatsRecorder`]; how each ended for the batch is the core's [`BatchEnd`].
//!
//! Guide A, as these docs call it, is
//! “Como repetir requisições com backoff exponencial (retry)”
//! (<https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff>), the guide that
//! writes `comRetry` and `buscarComRetry`.

use std::time::Instant;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::array::ArrayKey;
use ext_php_rs::types::{ZendHashTable, Zval};
use recuo::{
    BatchEnd, BatchQueue, BatchReportValue, BatchResultValue, GiveUpReason, Next, RetryError,
    StatsRecorder,
};

use crate::convert::{entry_holds, optional_secs, seed as seed_arg};
use crate::driver::{self, Callbacks, Halt, Judge};
use crate::errors::{type_error, value_error};
use crate::limits::Gate;
use crate::policy::json_serializable;
use crate::policy::Policy;
use crate::stats::Stats;
use crate::values::{instance, php_table, read_data, Instance};

/// How one operation of a batch ended: `status` is `"succeeded"` (with its `value`),
/// `"gave_up"` (with its last failure, the very object it threw, as `error`, the `reason`
/// and the `report`) or `"not_started"` (with the `reason`: the deadline came first, or the
/// queue stopped on another operation's `stoppedBy`); `attempts` counts its calls.
#[php_class]
#[php(name = "Recuo\\BatchResult", flags = ClassFlags::Final)]
#[php(implements(ce = json_serializable, stub = "\\JsonSerializable"))]
#[derive(Debug)]
pub struct BatchResult {
    /// The core's plain form: how it ended, why, the attempts and the report.
    plain: BatchResultValue,
    value: Option<Zval>,
    error: Option<Zval>,
    /// Whether this is the object `unserialize()` makes before `__unserialize()` fills it.
    blank: bool,
}

// What `unserialize()` makes before `__unserialize()`: an operation not started; a result of
// its plain form alone has its value and error null.
blank_or_from!(BatchResult(plain: BatchResultValue, value, error) =
    BatchResultValue::of(BatchEnd::UNREACHED, 0, None));

impl BatchResult {
    fn of(end: BatchEnd, attempts: u32, report: Option<recuo::Report>) -> Self {
        BatchResultValue::of(end, attempts, report).into()
    }

    fn not_started(reason: GiveUpReason, stopped_by: Option<GiveUpReason>) -> Self {
        Self::of(BatchEnd::NotStarted { reason, stopped_by }, 0, None)
    }

    /// How the operation ended, as the batch's queue counts it.
    fn end(&self) -> BatchEnd {
        self.plain.end().unwrap_or(BatchEnd::UNREACHED)
    }
}

/// The array `data` holds under `key`: `\\ValueError` `$data` `{missing}` otherwise.
fn array_at<'a>(
    function: &str,
    data: &'a ZendHashTable,
    key: &str,
    missing: &str,
) -> PhpResult<&'a ZendHashTable> {
    let found = data.get(key).and_then(|v| v.array());
    found.ok_or_else(|| value_error(function, 1, "data", missing))
}

/// A result's plain form, read for `function`'s argument `position`.
fn result_value(
    function: &str,
    position: u32,
    value: &ZendHashTable,
) -> PhpResult<BatchResultValue> {
    let plain: BatchResultValue = read_data(
        function,
        (position, "value"),
        "is not a batch result's value",
        value,
    )?;
    if plain.end().is_none() {
        return Err(value_error(
            function,
            position,
            "value",
            "is not a batch result's value: a give-up or an operation not started needs its reason",
        ));
    }
    Ok(plain)
}

php_impl!({
    impl BatchResult {
        /// Not constructible from PHP: `Recuo\runBatch` makes them.
        private_constructor!();
        /// `"succeeded"`, `"gave_up"` or `"not_started"`.
        getter!(get_status(self) -> &'static str = self.plain.status.name());
        /// What the operation returned; null unless it succeeded.
        getter!(get_value(self) -> Option<Zval> = self.value.as_ref().map(Zval::shallow_clone));
        /// The operation's last failure, the very object it threw; null unless it gave up.
        getter!(get_error(self) -> Option<Zval> = self.error.as_ref().map(Zval::shallow_clone));
        /// Why it gave up or was not started (`permanent`, `attempts_exhausted`,
        /// `wait_exceeds_deadline`, `budget_exhausted`, `queue_stopped`, `cancelled`); null
        /// when it succeeded.
        getter!(get_reason(self) -> Option<&'static str> =
            self.plain.reason.map(GiveUpReason::name));
        /// For `queue_stopped`: the reason of the operation that stopped the queue.
        getter!(get_stopped_by(self) -> Option<&'static str> =
            self.plain.stopped_by.map(GiveUpReason::name));
        /// How many times the operation was called.
        getter!(get_attempts(self) -> i64 = i64::from(self.plain.attempts));
        /// The report of an operation that gave up; null otherwise.
        getter!(get_report(self) -> PhpResult<Option<Instance<recuo::Report>>> =
            self.plain.report.as_ref().map(instance).transpose());

        /// The plain form every language shares: `status`, `reason`, `stopped_by`, `attempts`
        /// and `report` — everything but the operation's own value and error.
        pub fn to_value(&self) -> PhpResult<ZBox<ZendHashTable>> {
            guarded!("Recuo\\BatchResult::toValue", php_table(F, &self.plain))
        }

        /// The plain form (`toValue()`), for `json_encode()`.
        pub fn json_serialize(&self) -> PhpResult<ZBox<ZendHashTable>> {
            self.to_value()
        }

        /// The result whose plain form is `$value` (its value and error null).
        pub fn from_value(value: &ZendHashTable) -> PhpResult<BatchResult> {
            guard!("Recuo\\BatchResult::fromValue");
            result_value(F, 1, value).map(BatchResult::from)
        }

        /// The plain form with the value and the error, for `serialize()` (which serializes them
        /// as it serializes any value).
        pub fn __serialize(&self) -> PhpResult<ZBox<ZendHashTable>> {
            guard!("Recuo\\BatchResult::__serialize");
            let mut out = ZendHashTable::with_capacity(3);
            out.insert("plain", self.to_value()?)?;
            out.insert("value", self.get_value())?;
            out.insert("error", self.get_error())?;
            Ok(out)
        }

        /// The result `$data` describes (`__serialize()`'s form), for `unserialize()`.
        pub fn __unserialize(&mut self, data: &ZendHashTable) -> PhpResult<()> {
            guard!("Recuo\\BatchResult::__unserialize");
            crate::errors::only_blank(F, self.blank, "a batch result is")?;
            self.plain = result_value(F, 1, array_at(F, data, "plain", "has no plain form")?)?;
            let given = |key: &str| {
                data.get(key)
                    .filter(|v| !v.is_null())
                    .map(Zval::shallow_clone)
            };
            self.value = given("value");
            self.error = given("error");
            self.blank = false;
            Ok(())
        }
    }
});

/// What `Recuo\runBatch` did: one `Recuo\BatchResult` per operation, under the same keys
/// and in the same order, the batch's `stats`, and its `elapsedMs`.
#[php_class]
#[php(name = "Recuo\\BatchReport", flags = ClassFlags::Final)]
#[php(implements(ce = json_serializable, stub = "\\JsonSerializable"))]
#[derive(Debug)]
pub struct BatchReport {
    results: Zval,
    stats: recuo::Stats,
    elapsed_ms: f64,
    /// Whether this is the object `unserialize()` makes before `__unserialize()` fills it.
    blank: bool,
}

/// What `unserialize()` makes before `__unserialize()`: an empty batch.
impl Default for BatchReport {
    fn default() -> Self {
        BatchReport {
            blank: true,
            ..BatchReport::of(ZendHashTable::new(), recuo::Stats::default(), 0.0)
        }
    }
}

impl BatchReport {
    /// The report of these `results` (one `Recuo\BatchResult` per operation, under its key).
    fn of(results: ZBox<ZendHashTable>, stats: recuo::Stats, elapsed_ms: f64) -> Self {
        let mut table = Zval::new();
        table.set_hashtable(results);
        BatchReport {
            results: table,
            stats,
            elapsed_ms,
            blank: false,
        }
    }

    /// The core's plain form of this report (the results in order; their keys are PHP's).
    fn plain(&self) -> BatchReportValue {
        let results = self.results.array().into_iter().flat_map(|t| t.values());
        let results = results.filter_map(|v| v.extract::<&BatchResult>());
        BatchReportValue {
            results: results.map(|r| r.plain.clone()).collect(),
            stats: self.stats.clone(),
            // Whole milliseconds, as every language's plain form has it.
            elapsed_ms: self.elapsed_ms.max(0.0).round() as u64,
        }
    }
}

php_impl!({
    impl BatchReport {
        /// Not constructible from PHP: `Recuo\runBatch` makes one.
        private_constructor!();
        /// `array<array-key, Recuo\BatchResult>`: one per operation, under its key.
        getter!(get_results(self) -> Zval = self.results.shallow_clone());
        /// The batch's stats.
        getter!(get_stats(self) -> Stats = self.stats.clone().into());
        /// How long the batch took, in milliseconds.
        getter!(get_elapsed_ms(self) -> f64 = self.elapsed_ms);

        /// The plain form every language shares: `results` (each result's `toValue()`, in order;
        /// the operations' keys are PHP's and stay in `results`), `stats` (`Stats::toValue()`) and
        /// `elapsed_ms` (whole milliseconds) — what a worker process sends back as data.
        pub fn to_value(&self) -> PhpResult<ZBox<ZendHashTable>> {
            guarded!("Recuo\\BatchReport::toValue", php_table(F, &self.plain()))
        }

        /// The plain form (`toValue()`), for `json_encode()`.
        pub fn json_serialize(&self) -> PhpResult<ZBox<ZendHashTable>> {
            self.to_value()
        }

        /// The report whose plain form is `$value`: its results under the keys 0, 1, …, their
        /// values and errors null.
        pub fn from_value(value: &ZendHashTable) -> PhpResult<BatchReport> {
            guard!("Recuo\\BatchReport::fromValue");
            let plain: BatchReportValue =
                read_data(F, (1, "value"), "is not a batch report's value", value)?;
            let mut results =
                ZendHashTable::with_capacity(u32::try_from(plain.results.len()).unwrap_or(0));
            for r in plain.results {
                if r.end().is_none() {
                    return Err(value_error(
                        F,
                        1,
                        "value",
                        "holds a give-up without its reason",
                    ));
                }
                results.push(BatchResult::from(r))?;
            }
            #[allow(clippy::cast_precision_loss)]
            Ok(BatchReport::of(
                results,
                plain.stats,
                plain.elapsed_ms as f64,
            ))
        }

        /// Its results (each serialized with its value and error, under its key), its stats'
        /// plain form and its time, for `serialize()`.
        pub fn __serialize(&self) -> PhpResult<ZBox<ZendHashTable>> {
            guard!("Recuo\\BatchReport::__serialize");
            let mut out = ZendHashTable::with_capacity(3);
            out.insert("results", self.results.shallow_clone())?;
            out.insert("stats", php_table(F, &self.stats)?)?;
            out.insert("elapsed_ms", self.elapsed_ms)?;
            Ok(out)
        }

        /// The report `$data` describes (`__serialize()`'s form), for `unserialize()`.
        pub fn __unserialize(&mut self, data: &ZendHashTable) -> PhpResult<()> {
            guard!("Recuo\\BatchReport::__unserialize");
            crate::errors::only_blank(F, self.blank, "a batch report is")?;
            let results = array_at(F, data, "results", "has no results")?;
            if results
                .values()
                .any(|v| v.extract::<&BatchResult>().is_none())
            {
                return Err(value_error(
                    F,
                    1,
                    "data",
                    "holds a result that is not a Recuo\\BatchResult",
                ));
            }
            let stats = array_at(F, data, "stats", "has no stats")?;
            let stats = read_data(F, (1, "data"), "holds no stats value", stats)?;
            let elapsed_ms = data
                .get("elapsed_ms")
                .and_then(Zval::double)
                .filter(|ms| ms.is_finite() && *ms >= 0.0)
                .ok_or_else(|| value_error(F, 1, "data", "has no elapsed_ms"))?;
            *self = BatchReport::of(results.to_owned(), stats, elapsed_ms);
            Ok(())
        }
    }
});

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

php_functions!({
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
    /// `$metrics(string $name, float $value, array $labels)` receives each metric point the
    /// records mean, under its Prometheus name.
    #[php(name = "Recuo\\runBatch", defaults(stopOnUnreachableWait = false))]
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
        metrics: Option<ZendCallable>,
    ) -> PhpResult<BatchReport> {
        let deadline = optional_secs(F, (4, "deadline"), deadline)?;
        let seed = seed_arg(F, 6, seed)?;
        let mut ops = Vec::with_capacity(operations.len());
        let mut entries = operations.iter();
        while let Some((key, value)) = entries.next_zval() {
            let callable = ZendCallable::new(value.dereference()).map_err(|_| {
                type_error(format!(
                    "{F}(): Argument #1 ($operations) must hold callables; {}",
                    entry_holds(&key, value)
                ))
            })?;
            ops.push(Operation { key, callable });
        }
        let policy = policy.map_or_else(Policy::default_policy, |p| p.inner.clone());
        let gate = gate.map(|g| &g.inner);
        let judge = classify.as_ref().map_or(Judge::RetryAll, Judge::Classifier);
        let started = Instant::now();
        let recorder = StatsRecorder::new();
        let mut queue = BatchQueue::new(&policy, ops.len(), recuo::monotonic_ms(), deadline)
            .stop_when_a_wait_exceeds_the_deadline(stopOnUnreachableWait)
            .stats(recorder.clone());
        if records.is_some() || metrics.is_some() {
            // The operations name their requests themselves (`Recuo\Attempt::recordRequest`):
            // one never started has none.
            queue = queue.records(Vec::new(), recuo::unix_now_ms());
        }
        let mut results = ZendHashTable::with_capacity(u32::try_from(ops.len()).unwrap_or(0));
        loop {
            let next = queue.next(recuo::monotonic_ms());
            while let Some((_, record)) = queue.poll_record() {
                let (records, metrics) = (records.as_ref(), metrics.as_ref());
                driver::deliver(F, &record, records, metrics, |sink, role, args| {
                    sink.try_call(args)
                        .map_err(|_| driver::take_failure(F, role))
                })
                .map_err(Halt::into_exception)?;
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
                        metrics: metrics.as_ref().map(|sink| (sink, "", "")),
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
                            value: Some(value),
                            ..BatchResult::of(BatchEnd::Succeeded, report.attempts, None)
                        },
                        Err(gave_up) => gave_up_result(gave_up)?,
                    };
                    // A sequential runner has nothing else running to stop: the queue
                    // answers `not_started` for the rest.
                    let _ = queue.finished(index, result.plain.reason);
                    (index, result)
                }
            };
            let progress = queue.ended(index, result.end());
            insert(&mut results, &ops[index].key, result)?;
            if let Some(tell) = &onProgress {
                let progress = instance(&progress)?.0;
                tell.try_call(vec![&progress])
                    .map_err(|_| driver::take_failure(F, "$onProgress").into_exception())?;
            }
        }
        let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(BatchReport::of(results, recorder.snapshot(), elapsed_ms))
    }
});

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
    let attempts = gave_up.report.attempts;
    Ok(BatchResult {
        error,
        ..BatchResult::of(
            BatchEnd::GaveUp { reason, stopped_by },
            attempts,
            Some(gave_up.report),
        )
    })
}
