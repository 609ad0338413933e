//! The shared limits for PHP: `Recuo\Regulator` (the core's [`recuo::Regulator`]),
//! `Recuo\ConcurrencyLimit` and `Recuo\Permit` ([`recuo::ConcurrencyLimit`],
//! [`recuo::Permit`]), `Recuo\RetryBudget` ([`recuo::RetryBudget`]) and `Recuo\Gate`
//! ([`recuo::Gate`]), and `Recuo\monotonicNs()` ([`recuo::monotonic_ns`]). Every rule is the
//! core's; this module converts PHP values and errors.
//!
//! PHP runs one request on one thread, and its objects never leave that thread: a place of
//! a concurrency limit can only be given back by the thread that waits for one. So a wait
//! that nothing could ever end — every place taken, no timeout — throws a `\LogicException`
//! at once instead of hanging.

use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::convert::FromZval;
use ext_php_rs::flags::{ClassFlags, DataType};
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};
use recuo::budget::MAX_WINDOW_S;
use recuo::{Rate, RegulatorError};

use crate::convert::{count, given, non_negative, optional_secs, php_int, Bytes};
use crate::errors::{logic_error, shared_file_error, value_error, value_error_message};

/// A rate argument: a string such as `"90/min"`, or a number of events per second. Declared
/// `string|float` (see [`crate::properties`]).
#[derive(Debug, Clone, Copy)]
pub enum RateArg<'a> {
    /// `"90/min"`, `"1.5/s"`, `"5000/h"`, `"86400/day"`, or a bare number (per second).
    Text(Bytes<'a>),
    /// Events per second.
    PerSecond(f64),
}

impl<'a> FromZval<'a> for RateArg<'a> {
    // Narrowed to `string|float` once registered (crate::properties).
    const TYPE: DataType = DataType::Mixed;

    fn from_zval(zval: &'a Zval) -> Option<Self> {
        if let Some(text) = zval.zend_str() {
            Some(RateArg::Text(Bytes(text.as_bytes())))
        } else if zval.is_double() || zval.is_long() {
            f64::from_zval(zval).map(RateArg::PerSecond)
        } else {
            None
        }
    }
}

/// The core's rate for a rate argument: `\ValueError` with the core's message otherwise.
pub fn rate(function: &str, position: u32, name: &str, value: RateArg<'_>) -> PhpResult<Rate> {
    let parsed = match value {
        RateArg::Text(text) => text.text().parse::<Rate>(),
        RateArg::PerSecond(n) => Rate::per_second(n),
    };
    parsed.map_err(|e| value_error(function, position, name, &format!("is not valid: {e}")))
}

/// A regulator's error as PHP's: a bad burst or cost is a `\ValueError` (naming `arg`, when
/// given), a shared file that cannot be used — or a Redis key set up otherwise, or its server
/// out of reach — a `Recuo\Exception\SharedFileError`, a regulator's queue of starts full an
/// `\OverflowException`.
pub(crate) fn regulator_error(
    function: &str,
    arg: Option<(u32, &str)>,
    error: RegulatorError,
) -> PhpException {
    match (error, arg) {
        (RegulatorError::Shared(e), _) => shared_file_error(function, &e),
        (e @ RegulatorError::QueueFull { .. }, _) => crate::errors::queue_full_error(function, &e),
        (other, Some((position, name))) => {
            value_error(function, position, name, &format!("is not valid: {other}"))
        }
        (other, None) => value_error_message(format!("{function}(): {other}")),
    }
}

php_functions!({
    /// The system's monotonic clock in nanoseconds (`CLOCK_MONOTONIC`): the clock every
    /// regulator and budget counts in, the same for every process on the machine.
    #[php(name = "Recuo\\monotonicNs")]
    pub fn monotonic_ns() -> PhpResult<i64> {
        Ok(php_int(recuo::monotonic_ns()))
    }

    /// The same clock in whole milliseconds, rounded down: the one reading every
    /// `Recuo\Operation` is told its instants in (the `$nowMs` of its steps).
    #[php(name = "Recuo\\monotonicMs")]
    pub fn monotonic_ms() -> PhpResult<i64> {
        Ok(php_int(recuo::monotonic_ms()))
    }

    /// A wait of `$ns` nanoseconds in whole milliseconds, rounded up: a wait never ends before
    /// what it was asked to wait (`Recuo\Regulator::tryAcquire()`'s seconds, say, as a sleep).
    #[php(name = "Recuo\\waitMsFromNs")]
    pub fn wait_ms_from_ns(ns: i64) -> PhpResult<i64> {
        let ns = non_negative(F, 1, "ns", ns)?;
        Ok(php_int(recuo::wait_ms_from_ns(ns)))
    }
});

/// Limits request starts to a rate with a burst (GCRA): after a quiet spell up to `burst`
/// starts may go at once, then one per interval. Shared by every process that opens the
/// same file with [`Regulator::shared`], and by every machine that uses the same Redis key
/// with `recuo_redis::regulator`.
#[php_class]
#[php(name = "Recuo\\Regulator", flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct Regulator {
    pub(crate) inner: recuo::Regulator,
}

php_impl!({
    impl Regulator {
        /// The rate in force, in starts per second (below the configured one while an adaptive
        /// regulator slows down).
        getter!(get_rate(self) -> f64 = self.inner.rate().as_per_second());
        /// How many starts may go at once after a quiet spell.
        getter!(get_burst(self) -> i64 = i64::from(self.inner.burst()));

        /// A regulator for this process: `$rate` starts (`"90/min"`, or a number per second), up
        /// to `$burst` at once; `$adaptive` halves the rate on each `onThrottled()` and gives it
        /// back bit by bit on each `onSuccess()`.
        #[php(defaults(burst = 1, adaptive = false))]
        pub fn __construct(rate: RateArg<'_>, burst: i64, adaptive: bool) -> PhpResult<Self> {
            guard!("Recuo\\Regulator::__construct");
            let rate = self::rate(F, 1, "rate", rate)?;
            let burst = count(F, 2, "burst", burst)?;
            let inner = recuo::Regulator::new(rate, burst)
                .map_err(|e| regulator_error(F, Some((2, "burst")), e))?
                .with_adaptive(adaptive);
            Ok(Regulator { inner })
        }

        /// A regulator in the file at `$path` (created when missing), shared by every process
        /// that opens it: PHP-FPM workers, CLI jobs, Python and C programs alike. `$adaptive`
        /// sets the file up adaptive: a 429 reported by any process halves the rate for all of
        /// them. Throws `Recuo\Exception\SharedFileError` when the file cannot be used, holds
        /// something else, or was set up with another rate, burst or adaptive setting.
        #[php(defaults(burst = 1, adaptive = false))]
        pub fn shared(
            path: Bytes<'_>,
            rate: RateArg<'_>,
            burst: i64,
            adaptive: bool,
        ) -> PhpResult<Regulator> {
            guard!("Recuo\\Regulator::shared");
            let path = file_path(F, path)?;
            let rate = self::rate(F, 2, "rate", rate)?;
            let burst = count(F, 3, "burst", burst)?;
            recuo::Regulator::shared_with(path, rate, burst, adaptive)
                .map(|inner| Regulator { inner })
                .map_err(|e| regulator_error(F, Some((3, "burst")), e))
        }

        /// A regulator on the Redis server at `$url` (`redis://[[user]:password@]host[:port][/db]`,
        /// `rediss://…` for TLS, or `host:port`; `redis+cluster://host:port,host:port/` for a
        /// Redis Cluster, named by seed nodes, `rediss+cluster://…` for TLS) under `$key`, shared
        /// by every process on every machine that uses the same server and key. Each check is one
        /// atomic script on the server, timed by the server's clock. `$adaptive` sets the key up
        /// adaptive: the interval in force lives on the server, and a 429 reported by any holder
        /// halves the rate for all of them. Throws `Recuo\Exception\SharedFileError` when the key
        /// was set up with another rate, burst or adaptive setting, or the server cannot be
        /// reached or used.
        #[php(defaults(burst = 1, adaptive = false))]
        pub fn redis(
            url: Bytes<'_>,
            key: Bytes<'_>,
            rate: RateArg<'_>,
            burst: i64,
            adaptive: bool,
        ) -> PhpResult<Regulator> {
            guard!("Recuo\\Regulator::redis");
            let url = utf8(F, 1, "url", url)?;
            let key = utf8(F, 2, "key", key)?;
            let rate = self::rate(F, 3, "rate", rate)?;
            let burst = count(F, 4, "burst", burst)?;
            recuo_redis::regulator_with(url, key, rate, burst, adaptive)
                .map(|inner| Regulator { inner })
                .map_err(|e| regulator_error(F, Some((4, "burst")), e))
        }

        /// Answers at once: 0.0 when a start of weight `$cost` may go now (and takes it), else
        /// the seconds to wait before it could — on the regulator's own clock: the monotonic
        /// clock, or a Redis regulator's server's.
        #[php(defaults(cost = 1))]
        pub fn try_acquire(&self, cost: i64) -> PhpResult<f64> {
            guard!("Recuo\\Regulator::tryAcquire");
            let cost = count(F, 1, "cost", cost)?;
            match self.inner.reserve_now(cost, 0) {
                Ok(_) => Ok(0.0),
                Err(Ok(wait)) => Ok(Duration::from_nanos(wait).as_secs_f64()),
                Err(Err(e)) => Err(regulator_error(F, Some((1, "cost")), e)),
            }
        }

        /// As `tryAcquire()`, at `$nowNs` on the monotonic clock (`Recuo\monotonicNs()`, or a
        /// fake clock in tests): 0 when the start may go (and takes it), else the nanoseconds to
        /// wait. Every user of one regulator must use the same clock: for a Redis regulator
        /// shared between machines, one they all share (the server counts whole microseconds).
        #[php(defaults(cost = 1))]
        pub fn try_acquire_at(&self, nowNs: i64, cost: i64) -> PhpResult<i64> {
            guard!("Recuo\\Regulator::tryAcquireAt");
            let now = non_negative(F, 1, "nowNs", nowNs)?;
            let cost = count(F, 2, "cost", cost)?;
            match self.inner.try_acquire_at(now, cost) {
                Ok(()) => Ok(0),
                Err(Ok(wait)) => Ok(php_int(u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX))),
                Err(Err(e)) => Err(regulator_error(F, Some((2, "cost")), e)),
            }
        }

        /// Waits for a start slot of weight `$cost` and takes it: true. With a `$timeout` (in
        /// seconds), waits only if the slot comes in time; false (and nothing taken) when it
        /// would not. Slots are handed out in the order they are asked for; one that would come
        /// after the 4096 starts the regulator queues ahead throws `\OverflowException` (nothing
        /// taken).
        #[php(defaults(cost = 1))]
        pub fn acquire(&self, timeout: Option<f64>, cost: i64) -> PhpResult<bool> {
            guard!("Recuo\\Regulator::acquire");
            let timeout = optional_secs(F, (1, "timeout"), timeout)?.map(Duration::from_millis);
            let cost = count(F, 2, "cost", cost)?;
            // Nothing cancels a PHP wait but the end of the process.
            let never = recuo::CancelToken::new();
            let taken = match timeout {
                None => self.inner.acquire(cost, &never),
                Some(t) => self
                    .inner
                    .acquire_until(cost, t, &never)
                    .map(|r| r == Some(true)),
            };
            taken.map_err(|e| regulator_error(F, Some((2, "cost")), e))
        }

        /// A 429 was seen: an adaptive regulator halves its rate (down to 1/64 of the configured
        /// one) — for every process of a shared file or a Redis key; any other does nothing.
        pub fn on_throttled(&self) -> PhpResult<()> {
            guard!("Recuo\\Regulator::onThrottled");
            self.inner.on_throttled();
            Ok(())
        }

        /// A start succeeded: an adaptive regulator gives back 1/16 of the configured rate, up
        /// to it — for every process of a shared file or a Redis key; any other does nothing.
        pub fn on_success(&self) -> PhpResult<()> {
            guard!("Recuo\\Regulator::onSuccess");
            self.inner.on_success();
            Ok(())
        }
    }
});

/// A text argument: the bytes PHP holds, as UTF-8 (a `\ValueError` otherwise).
fn utf8<'a>(function: &str, position: u32, name: &str, text: Bytes<'a>) -> PhpResult<&'a str> {
    std::str::from_utf8(text.0)
        .map_err(|_| value_error(function, position, name, "must be valid UTF-8"))
}

/// A path argument: the bytes PHP holds, as a file name.
fn file_path<'a>(function: &str, path: Bytes<'a>) -> PhpResult<&'a std::path::Path> {
    use std::os::unix::ffi::OsStrExt;
    if path.0.is_empty() || path.0.contains(&0) {
        return Err(value_error(
            function,
            1,
            "path",
            "must be a file name: not empty, without NUL bytes",
        ));
    }
    Ok(std::path::Path::new(std::ffi::OsStr::from_bytes(path.0)))
}

/// At most `limit` operations in flight at once: `tryAcquire()` or `acquire()` take a place
/// (a `Recuo\Permit`), and the permit gives it back when released or destroyed.
#[php_class]
#[php(name = "Recuo\\ConcurrencyLimit", flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct ConcurrencyLimit {
    pub(crate) inner: recuo::ConcurrencyLimit,
}

/// Whether every place is taken. In PHP only this thread holds them, so a wait for one
/// without a timeout could never end.
pub(crate) fn would_wait_forever(limit: &recuo::ConcurrencyLimit, function: &str) -> PhpResult<()> {
    // (Of a shared file, only this process's places: the others' come back on their own.)
    if limit.held_here() >= limit.limit() {
        return Err(logic_error(format!(
            "{function}(): every place of the concurrency limit ({} of {}) is taken by \
             this PHP thread, and only it could give one back: waiting would never end \
             (release a Recuo\\Permit first, or use tryAcquire() or a timeout)",
            limit.held_here(),
            limit.limit()
        )));
    }
    Ok(())
}

/// A number of places: 1 to 4294967295 (the core's rule: 0 would let nothing run).
fn places(function: &str, position: u32, limit: i64) -> PhpResult<u32> {
    u32::try_from(limit)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| places_error(function, position))
}

fn places_error(function: &str, position: u32) -> PhpException {
    value_error(
        function,
        position,
        "limit",
        "must be between 1 and 4294967295",
    )
}

php_impl!({
    impl ConcurrencyLimit {
        /// The number of places.
        getter!(get_limit(self) -> i64 = i64::from(self.inner.limit()));
        /// Places taken now (of a shared file: by every process).
        getter!(get_in_flight(self) -> i64 = i64::from(self.inner.in_flight()));
        /// The most places that were ever taken at once.
        getter!(get_max_in_flight(self) -> i64 = i64::from(self.inner.max_in_flight()));

        /// A limit of `$limit` places (at least 1).
        pub fn __construct(limit: i64) -> PhpResult<Self> {
            guard!("Recuo\\ConcurrencyLimit::__construct");
            recuo::ConcurrencyLimit::new(places(F, 1, limit)?)
                .map(|inner| ConcurrencyLimit { inner })
                .ok_or_else(|| places_error(F, 1))
        }

        /// A limit in the file at `$path` (created with mode 0600 when missing): at most `$limit`
        /// operations in flight for every process of this machine that opens the same file —
        /// PHP-FPM workers, CLI jobs, Python and C programs alike. Each place is a lock the
        /// kernel releases when its holder's process ends (`kill -9` included): the place comes
        /// back at once, and a waiter in another process takes it within 10 ms. Throws
        /// `Recuo\Exception\SharedFileError` when the file cannot be used, holds something else,
        /// or was set up with another limit.
        pub fn shared(path: Bytes<'_>, limit: i64) -> PhpResult<Self> {
            guard!("Recuo\\ConcurrencyLimit::shared");
            let path = file_path(F, path)?;
            let limit = places(F, 2, limit)?;
            let inner = recuo::ConcurrencyLimit::shared(path, limit).map_err(|e| match e {
                recuo::LimitError::ZeroLimit => places_error(F, 2),
                recuo::LimitError::Shared(e) => shared_file_error(F, &e),
            });
            inner.map(|inner| ConcurrencyLimit { inner })
        }

        /// A limit on the Redis server (or Redis Cluster) at `$url` (the URLs of
        /// `Regulator::redis()`) under `$key`: at most `$limit` operations in flight for every
        /// process on every machine that uses the same server and key, each place a lease of
        /// `$lease` seconds on the server's clock (a holder that dies frees its place when its
        /// lease expires; `Permit::renew()` extends one). Throws `Recuo\Exception\SharedFileError`
        /// when the key was set up with another limit or lease, or the server cannot be reached
        /// or used — then, or later from `tryAcquire()`, `acquire()`, `renew()` and a gate's
        /// loop.
        pub fn redis(url: Bytes<'_>, key: Bytes<'_>, limit: i64, lease: f64) -> PhpResult<Self> {
            guard!("Recuo\\ConcurrencyLimit::redis");
            let url = utf8(F, 1, "url", url)?;
            let key = utf8(F, 2, "key", key)?;
            let limit = places(F, 3, limit)?;
            let lease = recuo::limit::lease_of_secs(lease)
                .ok_or_else(|| value_error(F, 4, "lease", "must be from 0.001 to 86400 seconds"))?;
            recuo_redis::limit(url, key, limit, lease)
                .map(|inner| ConcurrencyLimit { inner })
                .map_err(|e| shared_file_error(F, &e))
        }

        /// A place now, or null when every place is taken.
        pub fn try_acquire(&self) -> PhpResult<Option<Permit>> {
            guard!("Recuo\\ConcurrencyLimit::tryAcquire");
            let permit = counted(F, self.inner.try_acquire())?;
            Ok(permit.map(|p| Permit { inner: Some(p) }))
        }

        /// A place, waiting at most `$timeout` seconds for one (null when none came). Without a
        /// timeout and with every place taken, throws `\LogicException`: only this PHP thread
        /// holds the places, so the wait could never end.
        pub fn acquire(&self, timeout: Option<f64>) -> PhpResult<Option<Permit>> {
            guard!("Recuo\\ConcurrencyLimit::acquire");
            let timeout = optional_secs(F, (1, "timeout"), timeout)?.map(Duration::from_millis);
            if timeout.is_none() {
                would_wait_forever(&self.inner, F)?;
            }
            let never = recuo::CancelToken::new();
            let permit = counted(F, self.inner.acquire(timeout, &never))?;
            Ok(permit.map(|p| Permit { inner: Some(p) }))
        }
    }
});

/// One place of a `Recuo\ConcurrencyLimit`, given back by `release()` or when the object is
/// destroyed, whichever comes first.
#[php_class]
#[php(name = "Recuo\\Permit", flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct Permit {
    inner: Option<recuo::Permit>,
}

php_impl!({
    impl Permit {
        /// Not constructible from PHP: `Recuo\ConcurrencyLimit::tryAcquire` and `acquire` hand
        /// one out.
        private_constructor!();
        /// Whether the place was given back.
        getter!(get_released(self) -> bool = self.inner.is_none());

        /// Gives the place back. Releasing twice does nothing.
        pub fn release(&mut self) -> PhpResult<()> {
            guard!("Recuo\\Permit::release");
            self.inner = None;
            Ok(())
        }

        /// Extends the lease of a `ConcurrencyLimit::redis()` place from now (a long operation
        /// does this before its lease ends): true; false when the lease had already expired (the
        /// place may be someone else's now, and is not taken back) or the permit was released. A
        /// local place has no lease: true until released. Throws
        /// `Recuo\Exception\SharedFileError` when the server cannot be used.
        pub fn renew(&self) -> PhpResult<bool> {
            guard!("Recuo\\Permit::renew");
            match &self.inner {
                Some(permit) => permit.renew().map_err(|e| shared_file_error(F, &e)),
                None => Ok(false),
            }
        }
    }
});

/// The settings of a budget, as given (the core keeps them in its own units).
#[derive(Debug, Clone, Copy)]
struct BudgetSettings {
    ratio: f64,
    floor_per_s: f64,
    window_s: u32,
}

/// Retries may be at most `ratio` of the requests of the last `windowS` seconds, plus
/// `floorPerS` retries per second: when it is spent, the loop gives up
/// (`budget_exhausted`) instead of adding load.
#[php_class]
#[php(name = "Recuo\\RetryBudget", flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct RetryBudget {
    pub(crate) inner: recuo::RetryBudget,
    settings: BudgetSettings,
}

/// What `function` answers: the budget the core `made` with these settings, or its error as
/// PHP's — bad settings are a `\ValueError`, a shared file that cannot be used a
/// `Recuo\Exception\SharedFileError`.
fn budget_made(
    function: &str,
    made: Result<recuo::RetryBudget, recuo::BudgetError>,
    (ratio, floor_per_s, window_s): (f64, f64, u32),
) -> PhpResult<RetryBudget> {
    let inner = made.map_err(|e| match e {
        recuo::BudgetError::Shared(e) => shared_file_error(function, &e),
        recuo::BudgetError::Invalid(why) => value_error_message(format!("{function}(): {why}")),
    })?;
    let settings = BudgetSettings {
        ratio,
        floor_per_s,
        window_s,
    };
    Ok(RetryBudget { inner, settings })
}

/// A budget's or a limit's answer, or its shared state's error (a file, a Redis server) thrown
/// as `SharedFileError`.
fn counted<T>(function: &str, done: Result<T, recuo::SharedError>) -> PhpResult<T> {
    done.map_err(|e| shared_file_error(function, &e))
}

/// The default ratio of [`recuo::RetryBudget::default`]: 10%.
const DEFAULT_RATIO: f64 = 0.1;
/// The default floor of [`recuo::RetryBudget::default`]: 1 retry per second.
const DEFAULT_FLOOR_PER_S: f64 = 1.0;
/// The default window of [`recuo::RetryBudget::default`]: 10 s.
const DEFAULT_WINDOW_S: i64 = 10;

fn window(function: &str, position: u32, value: i64) -> PhpResult<u32> {
    u32::try_from(value).map_err(|_| {
        value_error(
            function,
            position,
            "windowS",
            &format!("must be between 1 and {MAX_WINDOW_S}"),
        )
    })
}

php_impl!({
    impl RetryBudget {
        /// Retries allowed per request (0.1: 10%).
        getter!(get_ratio(self) -> f64 = self.settings.ratio);
        /// Retries allowed per second whatever the requests.
        getter!(get_floor_per_s(self) -> f64 = self.settings.floor_per_s);
        /// The window the budget remembers, in seconds.
        getter!(get_window_s(self) -> i64 = i64::from(self.settings.window_s));

        /// A budget for this process; the defaults are the core's (10%, 1 retry per second, a
        /// 10 s window).
        #[php(defaults(ratio = DEFAULT_RATIO, floorPerS = DEFAULT_FLOOR_PER_S, windowS = DEFAULT_WINDOW_S))]
        pub fn __construct(ratio: f64, floorPerS: f64, windowS: i64) -> PhpResult<Self> {
            guard!("Recuo\\RetryBudget::__construct");
            let window_s = window(F, 3, windowS)?;
            let made = recuo::RetryBudget::new(ratio, floorPerS, window_s);
            budget_made(F, made, (ratio, floorPerS, window_s))
        }

        /// A budget in the file at `$path` (created when missing), shared by every process that
        /// opens it. Throws `Recuo\Exception\SharedFileError` when the file cannot be used, holds
        /// something else, or was set up with other settings.
        #[php(defaults(ratio = DEFAULT_RATIO, floorPerS = DEFAULT_FLOOR_PER_S, windowS = DEFAULT_WINDOW_S))]
        pub fn shared(
            path: Bytes<'_>,
            ratio: f64,
            floorPerS: f64,
            windowS: i64,
        ) -> PhpResult<RetryBudget> {
            guard!("Recuo\\RetryBudget::shared");
            let path = file_path(F, path)?;
            let window_s = window(F, 4, windowS)?;
            let made = recuo::RetryBudget::shared(path, ratio, floorPerS, window_s);
            budget_made(F, made, (ratio, floorPerS, window_s))
        }

        /// A budget on the Redis server (or Redis Cluster) at `$url` (the URLs of
        /// `Regulator::redis()`) under `$key`, shared by every process on every machine that uses
        /// the same server and key with the same settings (checked as the constructor checks
        /// them), counted per second on the server's clock. In a gate it fails closed (no retry
        /// while the server cannot be used); its own methods throw
        /// `Recuo\Exception\SharedFileError` then, as they do for a key set up otherwise or a
        /// server out of reach here.
        #[php(defaults(ratio = DEFAULT_RATIO, floorPerS = DEFAULT_FLOOR_PER_S, windowS = DEFAULT_WINDOW_S))]
        pub fn redis(
            url: Bytes<'_>,
            key: Bytes<'_>,
            ratio: f64,
            floorPerS: f64,
            windowS: i64,
        ) -> PhpResult<RetryBudget> {
            guard!("Recuo\\RetryBudget::redis");
            let url = utf8(F, 1, "url", url)?;
            let key = utf8(F, 2, "key", key)?;
            let window_s = window(F, 5, windowS)?;
            let made = recuo_redis::budget(url, key, ratio, floorPerS, window_s);
            budget_made(F, made, (ratio, floorPerS, window_s))
        }

        /// Counts a first attempt: it earns retries. (`Recuo\retry` and `Recuo\runBatch` count
        /// their first attempts themselves when the budget is in their gate.)
        pub fn record_request(&self) -> PhpResult<()> {
            guard!("Recuo\\RetryBudget::recordRequest");
            counted(F, self.inner.record_request_checked(None))
        }

        /// As `recordRequest()`, at `$nowNs` on the monotonic clock (or a fake clock in tests; a
        /// Redis budget's: one every user of the key shares, counted in whole seconds).
        pub fn record_request_at(&self, nowNs: i64) -> PhpResult<()> {
            guard!("Recuo\\RetryBudget::recordRequestAt");
            let now = non_negative(F, 1, "nowNs", nowNs)?;
            counted(F, self.inner.record_request_checked(Some(now)))
        }

        /// Takes one retry if the budget allows it: true; false when it is spent.
        pub fn try_withdraw(&self) -> PhpResult<bool> {
            guard!("Recuo\\RetryBudget::tryWithdraw");
            counted(F, self.inner.withdraw_checked(None))
        }

        /// As `tryWithdraw()`, at `$nowNs` on the monotonic clock (or a fake clock in tests; a
        /// Redis budget's: one every user of the key shares, counted in whole seconds).
        pub fn try_withdraw_at(&self, nowNs: i64) -> PhpResult<bool> {
            guard!("Recuo\\RetryBudget::tryWithdrawAt");
            let now = non_negative(F, 1, "nowNs", nowNs)?;
            counted(F, self.inner.withdraw_checked(Some(now)))
        }

        /// The requests and the retries counted in the window ending at `$nowNs` (now when
        /// null), as `['requests' => int, 'retries' => int]`.
        pub fn counts(&self, nowNs: Option<i64>) -> PhpResult<ZBox<ZendHashTable>> {
            guard!("Recuo\\RetryBudget::counts");
            let now = nowNs
                .map(|ns| non_negative(F, 1, "nowNs", ns))
                .transpose()?;
            let (requests, retries) = counted(F, self.inner.counts_checked(now))?;
            let mut counts = ZendHashTable::with_capacity(2);
            counts.insert("requests", php_int(requests))?;
            counts.insert("retries", php_int(retries))?;
            Ok(counts)
        }
    }
});

/// What every attempt of `Recuo\retry`, `Recuo\comRetry` and `Recuo\runBatch` passes: a
/// place among the operations in flight, then a start slot from the regulator; retries draw
/// on the budget. Each part is optional; the gate shares them with whoever else holds them.
#[php_class]
#[php(name = "Recuo\\Gate", flags = ClassFlags::Final)]
#[derive(Debug)]
pub struct Gate {
    pub(crate) inner: recuo::Gate,
    /// The budget's settings as given.
    budget: Option<BudgetSettings>,
}

php_impl!({
    impl Gate {
        /// The regulator (another handle on the same one), or null.
        getter!(get_regulator(self) -> Option<Regulator> = self.inner
            .regulator()
            .map(|r| Regulator { inner: r.clone() }));
        /// The concurrency limit (another handle on the same one), or null.
        getter!(get_limit(self) -> Option<ConcurrencyLimit> = self.inner
            .limit()
            .map(|l| ConcurrencyLimit { inner: l.clone() }));
        /// The retry budget (another handle on the same one), or null.
        getter!(get_budget(self) -> Option<RetryBudget> = self.inner.budget().zip(self.budget).map(
            |(inner, settings)| RetryBudget { inner: inner.clone(), settings }
        ));

        /// A gate of any of the three; with none, it lets everything through.
        pub fn __construct(
            regulator: Option<&Regulator>,
            limit: Option<&ConcurrencyLimit>,
            budget: Option<&RetryBudget>,
        ) -> PhpResult<Self> {
            guard!("Recuo\\Gate::__construct");
            let inner = given(recuo::Gate::new(), regulator, |g, r| {
                g.with_regulator(r.inner.clone())
            });
            let inner = given(inner, limit, |g, l| g.with_limit(l.inner.clone()));
            let inner = given(inner, budget, |g, b| g.with_budget(b.inner.clone()));
            Ok(Gate {
                inner,
                budget: budget.map(|b| b.settings),
            })
        }
    }
});
