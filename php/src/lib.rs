//! # recuo for PHP
//!
//! The PHP extension `recuo`, built with ext-php-rs. Every function is a thin shim over the
//! core crate [`recuo`]: it converts PHP values, calls the core, and turns the core's errors
//! into PHP exceptions. No retry rule lives here: every loop is the core's machine,
//! [`recuo::Operation`], driven by [`recuo::drive()`] with PHP callables as its effects; a
//! batch is the core's [`recuo::BatchQueue`].
//!
//! | PHP | core |
//! |---|---|
//! | `Recuo\comRetry(callable $tarefa, int $tentativas = 5, int $baseMs = 200, int $maxMs = 5000, ?callable $repetirSe = null, ?int $seed = null, ?callable $sleep = null, ?int $prazoMs = null, ?callable $aoRepetir = null, ?Gate $gate = null, ?callable $records = null, string $method = '', string $url = ''): mixed` | [`recuo::ComRetry::operation`] + [`recuo::drive()`] |
//! | `Recuo\retry(callable $operation, ?Policy $policy = null, ?callable $classify = null, ?callable $onRetry = null, ?callable $onGiveUp = null, ?int $seed = null, ?callable $sleep = null, ?Gate $gate = null, ?callable $records = null, string $method = '', string $url = ''): mixed` | [`recuo::drive()`] |
//! | `Recuo\classify(?int $status = null, ?string $error = null, string $method = 'GET', bool $idempotencyKey = false, array $headers = [], ?int $nowMs = null, ?Policy $policy = null): Verdict` | [`recuo::Policy::classify`] |
//! | `Recuo\Policy`, `Recuo\Verdict`, `Recuo\Report`, `Recuo\Attempt` | [`recuo::Policy`], [`recuo::Verdict`], [`recuo::Report`], [`recuo::AttemptContext`] |
//! | `Recuo\Operation`, `Recuo\Step` | [`recuo::Operation`], [`recuo::Step`], [`recuo::GatePoll`] |
//! | `Recuo\LoopPool` | [`recuo::LoopPool`] |
//! | `Recuo\BatchQueue`, `Recuo\Next` | [`recuo::BatchQueue`], [`recuo::Next`] |
//! | `Recuo\retryDelayMs(?string $retryAfter, int $attempt, ?int $nowMs = null, ?int $seed = null): float` | [`recuo::parse_retry_after`] + [`recuo::RetryAfter::guide_b_delay_ms`] |
//! | `Recuo\parseRetryAfter(string $value, ?int $nowMs = null): Recuo\RetryAfter` | [`recuo::parse_retry_after`] |
//! | `Recuo\backoffWindowMs(int $attempt, int $baseMs = 200, int $capMs = 5000): int` | [`recuo::Backoff::window_ms`] |
//! | `Recuo\curlTransport(int $errno, bool $requestSent): string` | [`recuo::curl_transport`] |
//! | `Recuo\httpEnding(string $style, ?string $reason = null, ?int $status = null, ?string $error = null, bool $late = false): string`, `Recuo\giveUpMessage(string $reason, int $attempts, ?int $status = null, ?string $error = null, bool $late = false, ?int $retryInMs = null): string`; `Recuo\Operation`'s `keySent`, `idempotent`, `ending()`, `giveUpMessage()` | [`recuo::http::ending`], [`recuo::http::give_up_message`], [`recuo::http::RequestPlan`] |
//! | `Recuo\plan(int $requests, string\|float $allowance, string\|float $target, float $latencyS, float $retryFraction = 0.0): Plan` | [`recuo::plan()`] |
//! | `Recuo\Regulator`, `Recuo\ConcurrencyLimit`, `Recuo\Permit`, `Recuo\RetryBudget`, `Recuo\Gate`, `Recuo\monotonicNs()`, `Recuo\monotonicMs()`, `Recuo\waitMsFromNs()` | [`recuo::Regulator`], [`recuo::ConcurrencyLimit`], [`recuo::Permit`], [`recuo::RetryBudget`], [`recuo::Gate`], [`recuo::monotonic_ns`], [`recuo::monotonic_ms`], [`recuo::wait_ms_from_ns`] |
//! | `Recuo\runBatch(array $operations, ?Policy $policy = null, ?Gate $gate = null, ?float $deadline = null, ?callable $classify = null, ?int $seed = null, ?callable $sleep = null, ?callable $records = null, bool $stopOnUnreachableWait = false, ?callable $onProgress = null): BatchReport` | [`recuo::BatchQueue`] + [`recuo::drive()`] + [`recuo::StatsRecorder`] |
//! | `Recuo\redactUrl(string $url): string`, `Recuo\redactUrlDetailed(string $url): array`, `Recuo\redactHeaders(array $headers): array` | [`recuo::redact_url`], [`recuo::redact_headers`] |
//! | `Recuo\whoAnswered(array $headers, ?string $expectedContentType = null): WhoAnswered` | [`recuo::who_answered`] |
//! | the `$records` sink, `Recuo\Record::attempt()`/`result()` (and `…Json()`), `Recuo\Attempt::recordRequest()`/`recordResponse()` | [`recuo::AttemptRecord`], [`recuo::FinalRecord`], [`recuo::Record::to_json_line`] |
//! | `Recuo\Stats`, `Recuo\StatsRecorder` | [`recuo::Stats`], [`recuo::StatsRecorder`] |
//! | `Recuo\VERSION` | [`recuo::VERSION`] |
//!
//! Bad configuration throws `Recuo\Exception\ConfigError` (a `\ValueError` whose code is
//! [`recuo::ConfigError::code`]); a plan that cannot be made `Recuo\Exception\PlanError` (a
//! `\ValueError`); a shared state file that cannot be used `Recuo\Exception\SharedFileError`
//! (a `\RuntimeException`); an out-of-range or unknown value throws `\ValueError`; an
//! argument of the wrong type throws `\TypeError`. Every entry point catches Rust panics
//! itself and throws `Recuo\Exception\InternalError` (a `\RuntimeException`, code 900)
//! instead. `php/recuo.stub.php` describes the API for IDEs, and `docs/php.md` documents it.
//!
//! Guide A, as these docs call it, is
//! “Como repetir requisições com backoff exponencial (retry)”
//! (<https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff>), the guide that
//! writes `comRetry` and `buscarComRetry`. Guide B is
//! “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”, which reads
//! `Retry-After` and runs a batch under a rate limit.

// The functions' Rust parameter names are their PHP names ($baseMs, $repetirSe), and the
// handlers #[php_function] generates from them bind variables of the same names.
#![allow(non_snake_case)]
// PHP functions take named arguments, many of them optional: one parameter each.
#![allow(clippy::too_many_arguments)]
#![warn(missing_docs)]

/// A `#[php_impl]` block whose head may declare, each under its doc comment,
/// `private_constructor!();` (the private constructor of a class whose objects only recuo
/// makes: an `\Error`, as PHP says it, should Reflection call it) and then
/// `getter!(get_name(self) -> Type = expression);` for each read-only property (`$name` in
/// camelCase), the expression reading it from `self`. The block's other items are its
/// methods, as written; a method whose body opens with `guard!("Recuo\\C::m");` runs as
/// that entry point (see [`guarded!`]).
macro_rules! php_impl {
    ({ impl $class:ident { $($body:tt)* } }) => {
        php_impl!(@head $class [] $($body)*);
    };
    (@head $class:ident [$($done:tt)*]
        $(#[$($doc:tt)*])* private_constructor!(); $($rest:tt)*) => {
        php_impl!(@head $class [$($done)*
            $(#[$($doc)*])*
            #[php(vis = "private")]
            pub fn __construct() -> PhpResult<Self> {
                $crate::errors::not_constructible(
                    <Self as ext_php_rs::class::RegisteredClass>::CLASS_NAME,
                )
            }
        ] $($rest)*);
    };
    (@head $class:ident [$($done:tt)*]
        $(#[$($doc:tt)*])* getter!($getter:ident($self:ident) -> $ty:ty = $value:expr);
        $($rest:tt)*) => {
        php_impl!(@head $class [$($done)*
            $(#[$($doc)*])*
            #[php(getter)]
            pub fn $getter(&$self) -> $ty {
                $value
            }
        ] $($rest)*);
    };
    (@head $class:ident [$($done:tt)*]
        $(#[$($attr:tt)*])* pub fn $method:ident $params:tt -> $ret:ty {
            guard!($function:literal); $($body:tt)*
        } $($rest:tt)*) => {
        php_impl!(@head $class [$($done)*
            $(#[$($attr)*])*
            pub fn $method $params -> $ret {
                guarded!($function, { $($body)* })
            }
        ] $($rest)*);
    };
    (@head $class:ident [$($done:tt)*]
        $(#[$($attr:tt)*])* pub fn $method:ident $params:tt $(-> $ret:ty)? $body:block
        $($rest:tt)*) => {
        php_impl!(@head $class [$($done)* $(#[$($attr)*])* pub fn $method $params $(-> $ret)? $body]
            $($rest)*);
    };
    (@head $class:ident [$($done:tt)*]) => {
        #[php_impl]
        impl $class {
            $($done)*
        }
    };
}

/// `guarded!("Recuo\\f", body)`: runs `body` as the entry point `Recuo\f` with
/// [`errors::guarded`] (a panic thrown as `Recuo\Exception\InternalError`), `F` naming the
/// function for the body's messages.
macro_rules! guarded {
    ($function:literal, $body:expr) => {{
        const F: &str = $function;
        $crate::errors::guarded(F, || $body)
    }};
}

/// `php_functions!({ … })`: a module's PHP functions, each under its doc comment with its
/// `#[php(name = "Recuo\\f", …)]` first: each a `#[php_function]` run as the entry point of
/// that name ([`guarded!`]), and `functions()` listing them for the module's registration
/// (the macros keep each function's wrapper private to its module).
macro_rules! php_functions {
    ({ $(
        $(#[doc = $doc:literal])*
        #[php(name = $name:literal $($php:tt)*)]
        $(#[$attr:meta])*
        pub fn $function:ident $params:tt -> $ret:ty $body:block
    )* }) => {
        $(
            $(#[doc = $doc])*
            #[php_function]
            #[php(name = $name $($php)*)]
            $(#[$attr])*
            pub fn $function $params -> $ret {
                guarded!($name, $body)
            }
        )*

        /// The PHP functions of this module, for the module's registration.
        pub fn functions() -> Vec<ext_php_rs::builders::FunctionBuilder<'static>> {
            vec![$(wrap_function!($function)),*]
        }
    };
}

/// `blank_or_from!(Class(Core) = default)`, for a class `{ inner: Core, blank: bool }`:
/// `Default` is the object `unserialize()` makes before `__unserialize()` fills it (`blank`,
/// holding `default`), and `From<Core>` a value made by recuo (never blank: immutable).
/// `blank_or_from!(Class(field: Core, other, …) = default)` names the field holding the
/// core's value, and the others, which both leave at their `Default`.
macro_rules! blank_or_from {
    ($class:ident($field:ident: $core:ty $(, $other:ident)*) = $default:expr) => {
        impl Default for $class {
            fn default() -> Self {
                $class {
                    $field: $default,
                    $($other: Default::default(),)*
                    blank: true,
                }
            }
        }

        impl From<$core> for $class {
            fn from($field: $core) -> Self {
                $class {
                    $field,
                    $($other: Default::default(),)*
                    blank: false,
                }
            }
        }
    };
    ($class:ident($core:ty) = $default:expr) => {
        blank_or_from!($class(inner: $core) = $default);
    };
}

mod arg_errors;
mod batch;
mod convert;
mod driver;
mod errors;
mod faces;
mod fast;
mod limits;
mod loop_values;
mod machine;
mod plan;
mod policy;
mod pool;
mod properties;
mod record;
mod redact;
mod stats;
mod values;
mod verdict;

use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;
use recuo::{Backoff, ComRetry};

use crate::batch::{BatchReport, BatchResult};
use crate::convert::{
    attempts as attempts_arg, millis, now_ms, optional_millis, php_int, retry_index,
    seed as seed_arg, Bytes,
};
use crate::driver::{Callbacks, Judge};
use crate::errors::config_error;
use crate::limits::{ConcurrencyLimit, Gate, Permit, Regulator, RetryBudget};
use crate::loop_values::Attempt;
use crate::machine::{BatchQueue, Next, Operation, Step, NONE};
use crate::policy::{Policy, DEFAULT_BASE_MS, DEFAULT_CAP_MS, DEFAULT_MAX_ATTEMPTS};
use crate::pool::LoopPool;
use crate::record::RecordFactory;
use crate::stats::{Stats, StatsRecorder};
use crate::verdict::Verdict;

/// Calls `$tarefa` until it returns, at most `$tentativas` times, sleeping a full-jitter
/// delay drawn from `[0, min($maxMs, $baseMs * 2^i)]` milliseconds between attempts.
///
/// Every `Throwable` from the task is caught; `$repetirSe($e)` decides whether to try again
/// (null: always): a bool, any PHP condition, or a `Recuo\Verdict` whose give-up stops and
/// whose server wait is honoured; it is never asked after the last attempt. Giving up rethrows the task's last `Throwable`, the very same object.
/// `$prazoMs` limits the total time: a delay that would pass it gives up at once, without
/// sleeping. `$aoRepetir($attempt, $e, $delayMs)` is called before each sleep. A
/// `Throwable` from `$repetirSe`, `$aoRepetir` or `$sleep` ends the loop and propagates.
/// `$seed` fixes the jitter; `$sleep(int $ms)` replaces the real sleep, and a zero delay
/// sleeps not at all. Inside another `Recuo\retry` or `Recuo\comRetry`, the attempts are
/// drawn from the enclosing loop's. Every attempt passes `$gate` when given.
/// `$records(array $record)` receives a record of each attempt and one of the result,
/// redacted, describing the request `$method` `$url`; `$metrics(string $name, float $value,
/// array $labels)` each metric point those records mean, under its Prometheus name.
#[php_function]
#[php(name = "Recuo\\comRetry")]
#[php(defaults(tentativas = DEFAULT_MAX_ATTEMPTS, baseMs = DEFAULT_BASE_MS, maxMs = DEFAULT_CAP_MS, method = NONE, url = NONE))]
pub fn com_retry(
    tarefa: ZendCallable,
    tentativas: i64,
    baseMs: i64,
    maxMs: i64,
    repetirSe: Option<ZendCallable>,
    seed: Option<i64>,
    sleep: Option<ZendCallable>,
    prazoMs: Option<i64>,
    aoRepetir: Option<ZendCallable>,
    gate: Option<&Gate>,
    records: Option<ZendCallable>,
    method: Bytes,
    url: Bytes,
    metrics: Option<ZendCallable>,
) -> PhpResult<Zval> {
    // The first attempt, made and failed already when the fast path called this (see `fast`).
    let first = fast::handed_over();
    guarded!("Recuo\\comRetry", {
        let tentativas = attempts_arg(F, 2, "tentativas", tentativas)?;
        let base = millis(F, 3, "baseMs", baseMs)?;
        let max = millis(F, 4, "maxMs", maxMs)?;
        let seed = seed_arg(F, 6, seed)?;
        let prazo = optional_millis(F, 8, "prazoMs", prazoMs)?;
        let loop_ = ComRetry::new(tentativas, base, max).map_err(|e| match e {
            recuo::ConfigError::ZeroAttempts => config_error(F, Some((2, "tentativas")), e),
            _ => config_error(F, None, e),
        })?;
        let judge = repetirSe.as_ref().map_or(Judge::RetryAll, Judge::Predicate);
        let (method, url) = (method.text(), url.url_text());
        driver::run(
            tentativas,
            // Guide A's machine: `$repetirSe` is never asked after the last attempt.
            |pool| {
                loop_
                    .with_deadline_ms(prazo)
                    .operation(seed)
                    .loop_pool(pool)
            },
            Callbacks {
                function: F,
                operation: (&tarefa, "$tarefa"),
                pass_attempt: false,
                judge: (judge, "$repetirSe"),
                on_retry: aoRepetir.as_ref().map(|hook| (hook, "$aoRepetir")),
                on_give_up: None,
                sleep: sleep.as_ref(),
                sleep_false_cancels: false,
                gate: gate.map(|g| &g.inner),
                records: records.as_ref().map(|sink| (sink, &*method, &*url)),
                metrics: metrics.as_ref().map(|sink| (sink, &*method, &*url)),
            },
            first,
        )
    })
}

/// Runs `$operation(Recuo\Attempt $attempt)` under `$policy` (guide A's when null) until it
/// returns or the policy gives up.
///
/// A `Throwable` from the operation is a failure; `$classify($e)` judges it with a
/// `Recuo\Verdict` (from `Recuo\classify`, server waits included) or a bool (null: retry
/// every failure). Giving up rethrows the operation's last `Throwable`, the very same
/// object, after `$onGiveUp(Recuo\Report $report)`; `$onRetry($attempt, $e, $delayMs)` is
/// called before each sleep. `$sleep(int $ms)` replaces the real sleep, and cancels the
/// loop by answering `false`. Inside another `Recuo\retry` or `Recuo\comRetry`, the attempts
/// are drawn from the enclosing loop's. Every attempt, first or retry, passes `$gate` when
/// given (its place given back before any sleep), and retries spend its budget.
/// `$records(array $record)` receives a record of each attempt and one of the result,
/// redacted, describing the request `$method` `$url` (or what the attempt says it sent);
/// `$metrics(string $name, float $value, array $labels)` each metric point those records
/// mean, under its Prometheus name.
#[php_function]
#[php(name = "Recuo\\retry", defaults(method = NONE, url = NONE))]
pub fn retry(
    operation: ZendCallable,
    policy: Option<&Policy>,
    classify: Option<ZendCallable>,
    onRetry: Option<ZendCallable>,
    onGiveUp: Option<ZendCallable>,
    seed: Option<i64>,
    sleep: Option<ZendCallable>,
    gate: Option<&Gate>,
    records: Option<ZendCallable>,
    method: Bytes,
    url: Bytes,
    metrics: Option<ZendCallable>,
) -> PhpResult<Zval> {
    // The first attempt, made and failed already when the fast path called this (see `fast`).
    let first = fast::handed_over();
    guarded!("Recuo\\retry", {
        let seed = seed_arg(F, 6, seed)?;
        let policy = policy.map_or_else(Policy::default_policy, |p| p.inner.clone());
        let judge = classify.as_ref().map_or(Judge::RetryAll, Judge::Classifier);
        let (method, url) = (method.text(), url.url_text());
        driver::run(
            policy.max_attempts(),
            |pool| recuo::Operation::new(&policy).seed(seed).loop_pool(pool),
            Callbacks {
                function: F,
                operation: (&operation, "$operation"),
                pass_attempt: true,
                judge: (judge, "$classify"),
                on_retry: onRetry.as_ref().map(|hook| (hook, "$onRetry")),
                on_give_up: onGiveUp.as_ref(),
                sleep: sleep.as_ref(),
                sleep_false_cancels: true,
                gate: gate.map(|g| &g.inner),
                records: records.as_ref().map(|sink| (sink, &*method, &*url)),
                metrics: metrics.as_ref().map(|sink| (sink, &*method, &*url)),
            },
            first,
        )
    })
}

php_functions!({
    /// Guide B: how long to wait before retry index `$attempt`, in milliseconds.
    ///
    /// A `Retry-After` of seconds or an HTTP-date gives the server's wait exactly (a past date is
    /// 0); a wait beyond 2^53 - 1 ms gives `INF`; null or an invalid value gives a full-jitter
    /// draw from `[0, min(8000, 1000 * 2^$attempt)]`. `$nowMs` (milliseconds since the Unix
    /// epoch) defaults to the system clock; `$seed` fixes the jitter.
    #[php(name = "Recuo\\retryDelayMs")]
    pub fn retry_delay_ms(
        retryAfter: Option<Bytes>,
        attempt: i64,
        nowMs: Option<i64>,
        seed: Option<i64>,
    ) -> PhpResult<f64> {
        let attempt = retry_index(F, 2, "attempt", attempt)?;
        let seed = seed_arg(F, 4, seed)?;
        let value = retryAfter.map_or(&b""[..], |b| b.0);
        let parsed = recuo::parse_retry_after(value, now_ms(nowMs));
        Ok(parsed.guide_b_delay_ms(attempt, &mut recuo::LazyJitterRng::new(seed)))
    }

    /// Reads a `Retry-After` value (seconds or an HTTP-date) as of `$nowMs` (milliseconds since
    /// the Unix epoch; the system clock when null).
    #[php(name = "Recuo\\parseRetryAfter")]
    pub fn parse_retry_after(
        value: Bytes,
        nowMs: Option<i64>,
    ) -> PhpResult<values::Instance<recuo::RetryAfterValue>> {
        let parsed = recuo::parse_retry_after(value.0, now_ms(nowMs));
        values::instance(&recuo::RetryAfterValue::from(parsed))
    }

    /// The backoff window `min($capMs, $baseMs * 2^$attempt)` in milliseconds, saturating.
    #[php(name = "Recuo\\backoffWindowMs")]
    #[php(defaults(baseMs = DEFAULT_BASE_MS, capMs = DEFAULT_CAP_MS))]
    pub fn backoff_window_ms(attempt: i64, baseMs: i64, capMs: i64) -> PhpResult<i64> {
        let attempt = retry_index(F, 1, "attempt", attempt)?;
        let backoff = Backoff::new()
            .with_base_ms(millis(F, 2, "baseMs", baseMs)?)
            .with_cap_ms(millis(F, 3, "capMs", capMs)?)
            .validate()
            .map_err(|e| config_error(F, None, e))?;
        Ok(php_int(backoff.window_ms(attempt)))
    }

    /// What a curl transfer that failed with `$errno` (curl's error number, not 0) means for the
    /// request, `$requestSent` saying whether any byte of it went out (`curl_getinfo()`'s
    /// `request_size` above 0): `"connect"`, `"tls"`, `"timeout"`, `"reset"` or `"other"` — the
    /// one table `buscarComRetry` and C's `recuo_curl.h` read.
    #[php(name = "Recuo\\curlTransport")]
    pub fn curl_transport(errno: i64, requestSent: bool) -> PhpResult<&'static str> {
        let code = u32::try_from(errno).unwrap_or(u32::MAX);
        Ok(recuo::curl_transport(code, requestSent).name())
    }

    /// For recuo's own tests only: panics inside the extension, so that a test can see a panic
    /// arrive as a `Recuo\Exception\InternalError` (an `\Exception`, code 900).
    #[php(name = "Recuo\\Testing\\forcePanic")]
    pub fn force_panic() -> PhpResult<()> {
        panic!("a deliberate panic at the boundary, for a test")
    }

    /// For recuo's own tests only: stats whose retries are 2**64 - 1, a count no PHP code can
    /// reach, so that a test can see a merge that would overflow refused.
    #[php(name = "Recuo\\Testing\\fullStats")]
    pub fn full_stats() -> PhpResult<Stats> {
        Ok(recuo::Stats {
            retries: u64::MAX,
            ..recuo::Stats::default()
        }
        .into())
    }
});

/// What a module's startup and shutdown functions answer: PHP's `SUCCESS` and `FAILURE`.
const SUCCESS: i32 = 0;
const FAILURE: i32 = -1;

/// Request shutdown: no attempt pool of nested loops outlives a request.
extern "C" fn request_shutdown(_type: i32, _module_number: i32) -> i32 {
    // Never fails a request: at worst a pool is left for the next one to clear.
    let _ = std::panic::catch_unwind(pool::reset_pools);
    let _ = std::panic::catch_unwind(fast::release_spare);
    SUCCESS
}

/// Request startup: no attempt pool is left from an earlier request, and (once per process,
/// when every function and class is registered) the rate parameters are declared
/// `string|float`, the properties as the stub says, and the classes sealed.
extern "C" fn request_startup(_type: i32, _module_number: i32) -> i32 {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let _ = std::panic::catch_unwind(|| {
        pool::reset_pools();
        fast::forget_spare();
        ONCE.call_once(|| {
            properties::declare_types();
            seal_classes();
        });
    });
    SUCCESS
}

/// The classes the macros declare, in the order they are registered: [`add_classes`] adds
/// them to the module, [`seal_classes`] seals each (and lets the `serializable` ones be
/// serialized).
macro_rules! classes {
    ($($class:ty),*; serializable: $($serializable:ty),*) => {
        /// Adds every class to the module.
        fn add_classes(module: ModuleBuilder) -> ModuleBuilder {
            module$(.class::<$class>())*
        }

        /// Every class's properties are read-only, as PHP says it (see [`properties`]), and
        /// the serializable ones may be serialized; once per process.
        fn seal_classes() {
            $(properties::seal::<$class>();)*
            $(policy::allow_serialization::<$serializable>();)*
        }
    };
}

classes! {
    Policy, Verdict, Attempt, Step, Operation, LoopPool, Next, BatchQueue, Regulator,
    ConcurrencyLimit, Permit, RetryBudget, Gate, BatchResult, Stats, StatsRecorder, BatchReport,
    RecordFactory; serializable: Policy, Stats, BatchResult, BatchReport
}

/// Module startup: registers the exception classes the macros do not declare, and the value
/// classes the core declares (see [`values`]).
extern "C" fn startup(_type: i32, _module_number: i32) -> i32 {
    let _ = std::panic::catch_unwind(arg_errors::install);
    // After the functions are registered (before this startup): their fast paths.
    let _ = std::panic::catch_unwind(fast::install);
    let registered = std::panic::catch_unwind(|| {
        errors::register_classes()?;
        values::register()
    });
    match registered {
        Ok(Ok(())) => SUCCESS,
        Ok(Err(message)) => {
            eprintln!("recuo: cannot register a class: {message}");
            FAILURE
        }
        Err(_) => FAILURE,
    }
}

/// The module entry PHP looks up (`get_module`). It sits in a private module because
/// `#[php_module]` generates exported helpers without doc comments of their own.
mod entry {
    use super::*;

    /// The extension's entry: the functions, the classes and `Recuo\VERSION`.
    #[php_module]
    pub fn get_module(module: ModuleBuilder) -> ModuleBuilder {
        let module = module
            .name("recuo")
            .version(recuo::VERSION)
            .startup_function(startup)
            .request_startup_function(request_startup)
            .request_shutdown_function(request_shutdown)
            .constant(("Recuo\\VERSION", recuo::VERSION, &[]));
        let functions = [wrap_function!(com_retry), wrap_function!(retry)]
            .into_iter()
            .chain(verdict::functions())
            .chain(functions())
            .chain(plan::functions())
            .chain(batch::functions())
            .chain(redact::functions())
            .chain(machine::functions())
            .chain(limits::functions());
        functions.fold(add_classes(module), ModuleBuilder::function)
    }
}
