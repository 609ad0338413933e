//! `Recuo\Stats` (the core's [`recuo::Stats`], spacings in milliseconds) and
//! `Recuo\StatsRecorder` (the core's [`recuo::StatsRecorder`]) for PHP code with loops of its
//! own. `Recuo\runBatch` answers its stats as a `Recuo\Stats`.

use ext_php_rs::boxed::ZBox;
use ext_php_rs::class::RegisteredClass;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use crate::convert::{count, optional_non_negative, php_int, Bytes};
use crate::errors::overflow;
use crate::policy::json_serializable;
use crate::values::{php_table, read_data};
use crate::verdict::cause_arg;

/// What a batch did: attempts started, operations ended, 429s and 503s seen, the
/// spacing between starts and the most in flight. Read-only; `merge()` adds two up.
#[php_class]
#[php(name = "Recuo\\Stats", flags = ClassFlags::Final)]
#[php(implements(ce = json_serializable, stub = "\\JsonSerializable"))]
#[derive(Debug, Clone)]
pub struct Stats {
    pub(crate) inner: recuo::Stats,
    /// Whether this is the empty object `unserialize()` makes before `__unserialize()` fills
    /// it: every other `Stats` is immutable.
    blank: bool,
}

// Empty stats, as `unserialize()` makes the object before `__unserialize()`.
blank_or_from!(Stats(recuo::Stats) = recuo::Stats::default());

/// What `value` says when it is not the plain form of stats.
const NOT_STATS: &str = "is not a stats value";

/// Nanoseconds as (fractional) milliseconds.
#[allow(clippy::cast_precision_loss)]
fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

php_impl!({
    impl Stats {
        /// First attempts started.
        getter!(get_initial(self) -> i64 = php_int(self.inner.initial));
        /// Retries started.
        getter!(get_retries(self) -> i64 = php_int(self.inner.retries));
        /// Attempts started: first attempts and retries.
        getter!(get_starts(self) -> i64 = php_int(self.inner.starts()));
        /// Operations that succeeded.
        getter!(get_successes(self) -> i64 = php_int(self.inner.successes));
        /// Operations that gave up.
        getter!(get_failures(self) -> i64 = php_int(self.inner.failures));
        /// Operations never started: the deadline came first.
        getter!(get_not_started(self) -> i64 = php_int(self.inner.not_started));
        /// Rate-limited answers seen (429, or a 403 with a spent quota), as classified.
        getter!(get_throttled(self) -> i64 = php_int(self.inner.throttled));
        /// 503 answers seen, as classified.
        getter!(get_unavailable(self) -> i64 = php_int(self.inner.unavailable));
        /// The shortest time between two consecutive starts, in milliseconds; null with fewer
        /// than two starts.
        getter!(get_min_spacing_ms(self) -> Option<f64> = self.inner.min_spacing_ns.map(ms));
        /// The mean time between consecutive starts, in milliseconds; null with fewer than two
        /// starts.
        getter!(get_mean_spacing_ms(self) -> Option<f64> =
            self.inner.mean_spacing_ns().map(|ns| ns / 1e6));
        /// The first start, on the monotonic clock (`Recuo\monotonicNs()`); null with none.
        getter!(get_first_start_ns(self) -> Option<i64> = self.inner.first_start_ns.map(php_int));
        /// The last start, on the monotonic clock; null with none.
        getter!(get_last_start_ns(self) -> Option<i64> = self.inner.last_start_ns.map(php_int));
        /// The most attempts in flight at once.
        getter!(get_max_in_flight(self) -> i64 = php_int(self.inner.max_in_flight));

        /// Empty stats: nothing started, nothing seen (what `merge()` adds up from).
        pub fn __construct() -> Self {
            recuo::Stats::default().into()
        }

        /// The stats whose plain form is `$value` (what `toValue()` answers): `\ValueError` for
        /// a missing or unknown field or a value of the wrong type.
        pub fn from_value(value: &ZendHashTable) -> PhpResult<Stats> {
            guard!("Recuo\\Stats::fromValue");
            Ok(read_data::<recuo::Stats>(F, (1, "value"), NOT_STATS, value)?.into())
        }

        /// The plain form every language shares (snake_case, spacings in nanoseconds): `initial`,
        /// `retries`, `successes`, `failures`, `not_started`, `throttled`, `unavailable`,
        /// `min_spacing_ns`, `first_start_ns`, `last_start_ns`, `max_in_flight` — for
        /// `json_encode()`, a file, or another process.
        pub fn to_value(&self) -> PhpResult<ZBox<ZendHashTable>> {
            guarded!("Recuo\\Stats::toValue", php_table(F, &self.inner))
        }

        /// The plain form (`toValue()`), for `json_encode()`.
        pub fn json_serialize(&self) -> PhpResult<ZBox<ZendHashTable>> {
            self.to_value()
        }

        /// The plain form (`toValue()`), for `serialize()`.
        pub fn __serialize(&self) -> PhpResult<ZBox<ZendHashTable>> {
            self.to_value()
        }

        /// The stats `$data` describes, read as `fromValue()` reads it, for `unserialize()`.
        pub fn __unserialize(&mut self, data: &ZendHashTable) -> PhpResult<()> {
            guard!("Recuo\\Stats::__unserialize");
            crate::errors::only_blank(F, self.blank, "stats are")?;
            *self = read_data::<recuo::Stats>(F, (1, "value"), NOT_STATS, data)?.into();
            Ok(())
        }

        /// Every property, by name: `initial`, `retries`, `starts`, `successes`, `failures`,
        /// `notStarted`, `throttled`, `unavailable`, `minSpacingMs`, `meanSpacingMs`,
        /// `firstStartNs`, `lastStartNs`, `maxInFlight`.
        pub fn to_array(&self) -> PhpResult<ZBox<ZendHashTable>> {
            guard!("Recuo\\Stats::toArray");
            let mut out = ZendHashTable::new();
            for prop in Self::get_metadata().method_properties() {
                let mut value = Zval::new();
                if let Some(get) = prop.get {
                    get(self, &mut value)?;
                }
                out.insert(prop.name, value)?;
            }
            Ok(out)
        }

        /// These stats and `$other`'s added up, as the core merges them: counts add up; the
        /// shortest spacing of either and the span of both; `maxInFlight` adds up (an upper
        /// bound when both ran at once). Neither is changed. A count that would pass
        /// 2**64 - 1 throws `OverflowException`.
        pub fn merge(&self, other: &Stats) -> PhpResult<Stats> {
            guard!("Recuo\\Stats::merge");
            let merged = self.inner.merge(&other.inner).map(Stats::from);
            merged.ok_or_else(|| {
                overflow("these stats cannot be merged: a count would pass 2**64 - 1")
            })
        }
    }
});

/// Records what a loop of your own does, in one timeline (the core's recorder, the one
/// `Recuo\runBatch` uses): `start()` and `end()` each attempt, `saw()` each failure's cause,
/// `finished()` each operation; `snapshot()` answers the `Recuo\Stats` so far.
#[php_class]
#[php(name = "Recuo\\StatsRecorder", flags = ClassFlags::Final)]
#[derive(Debug, Default)]
pub struct StatsRecorder {
    pub(crate) inner: recuo::StatsRecorder,
}

php_impl!({
    impl StatsRecorder {
        /// An empty recorder.
        pub fn __construct() -> Self {
            StatsRecorder::default()
        }

        /// Attempt number `$attempt` (0 for an operation's first, then its retries) starts at
        /// `$nowNs` on the monotonic clock (`Recuo\monotonicNs()` when null; a clock of your
        /// own must never go back). Call `end()` when it is over.
        pub fn start(&self, attempt: i64, nowNs: Option<i64>) -> PhpResult<()> {
            guard!("Recuo\\StatsRecorder::start");
            let attempt = count(F, 1, "attempt", attempt)?;
            let now = optional_non_negative(F, 2, "nowNs", nowNs)?;
            self.inner
                .start(attempt, now.unwrap_or_else(recuo::monotonic_ns));
            Ok(())
        }

        /// An attempt started earlier is over.
        pub fn end(&self) -> PhpResult<()> {
            guard!("Recuo\\StatsRecorder::end");
            self.inner.end();
            Ok(())
        }

        /// An attempt failed for `$cause`, a verdict's reason (`rate_limited` and `unavailable`
        /// are counted).
        pub fn saw(&self, cause: Bytes<'_>) -> PhpResult<()> {
            guard!("Recuo\\StatsRecorder::saw");
            self.inner.saw(cause_arg(F, (1, "cause"), cause, true)?);
            Ok(())
        }

        /// An operation ended: it succeeded, or it gave up.
        pub fn finished(&self, success: bool) -> PhpResult<()> {
            guard!("Recuo\\StatsRecorder::finished");
            self.inner.finished(success);
            Ok(())
        }

        /// An operation was never started.
        pub fn not_started(&self) -> PhpResult<()> {
            guard!("Recuo\\StatsRecorder::notStarted");
            self.inner.not_started();
            Ok(())
        }

        /// The stats so far.
        pub fn snapshot(&self) -> PhpResult<Stats> {
            guard!("Recuo\\StatsRecorder::snapshot");
            Ok(self.inner.snapshot().into())
        }
    }
});
