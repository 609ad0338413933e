//! # recuo for PHP
//!
//! The PHP extension `recuo`, built with ext-php-rs. Every function is a thin shim over the
//! core crate [`recuo`]: it converts PHP values, calls the core once, and turns the core's
//! errors into PHP exceptions. No retry rule lives here.
//!
//! | PHP | core |
//! |---|---|
//! | `Recuo\comRetry(callable $tarefa, int $tentativas = 5, int $baseMs = 200, int $maxMs = 5000, ?callable $repetirSe = null, ?int $seed = null, ?callable $sleep = null): mixed` | [`recuo::ComRetry::run_with`] |
//! | `Recuo\retryDelayMs(?string $retryAfter, int $attempt, ?int $nowMs = null, ?int $seed = null): float` | [`recuo::parse_retry_after`] + [`recuo::RetryAfter::guide_b_delay_ms`] |
//! | `Recuo\parseRetryAfter(string $value, ?int $nowMs = null): Recuo\RetryAfter` | [`recuo::parse_retry_after`] |
//! | `Recuo\backoffWindowMs(int $attempt, int $baseMs = 200, int $capMs = 5000): int` | [`recuo::Backoff::window_ms`] |
//! | `Recuo\VERSION` | [`recuo::VERSION`] |
//!
//! Bad configuration throws `Recuo\Exception\ConfigError` (a `\ValueError` whose code is
//! [`recuo::ConfigError::code`]); a negative retry index or seed throws `\ValueError`; an
//! argument of the wrong type throws `\TypeError`. Every entry point catches Rust panics
//! itself and throws `\Error` instead. `php/recuo.stub.php` describes the API for IDEs.

// The functions' Rust parameter names are their PHP names ($baseMs, $repetirSe), and the
// handlers #[php_function] generates from them bind variables of the same names.
#![allow(non_snake_case)]
#![warn(missing_docs)]

mod com_retry;
mod convert;
mod errors;

use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;
use recuo::{Backoff, ComRetry};

use crate::convert::{millis, now_ms, php_int, retry_index, seed as seed_arg, Bytes};
use crate::errors::{config_error, guarded, value_error};

/// Guide A's default number of attempts (5), as a PHP default value.
const DEFAULT_TENTATIVAS: i64 = ComRetry::GUIDE_A.tentativas() as i64;
/// Guide A's default base window in milliseconds (200).
const DEFAULT_BASE_MS: i64 = ComRetry::GUIDE_A.backoff().base_ms() as i64;
/// Guide A's default largest window in milliseconds (5000).
const DEFAULT_MAX_MS: i64 = ComRetry::GUIDE_A.backoff().cap_ms() as i64;

/// Calls `$tarefa` until it returns, at most `$tentativas` times, sleeping a full-jitter
/// delay drawn from `[0, min($maxMs, $baseMs * 2^i)]` milliseconds between attempts.
///
/// Every `Throwable` from the task is caught; `$repetirSe($e)` decides whether to try again
/// (null: always). Giving up rethrows the task's last `Throwable`, the very same object.
/// A `Throwable` from `$repetirSe` or `$sleep` ends the loop and propagates. `$seed` fixes
/// the jitter; `$sleep(int $ms)` replaces the real sleep, and a zero delay sleeps not at all.
#[php_function]
#[php(name = "Recuo\\comRetry")]
#[php(defaults(tentativas = DEFAULT_TENTATIVAS, baseMs = DEFAULT_BASE_MS, maxMs = DEFAULT_MAX_MS))]
pub fn com_retry(
    tarefa: ZendCallable,
    tentativas: i64,
    baseMs: i64,
    maxMs: i64,
    repetirSe: Option<ZendCallable>,
    seed: Option<i64>,
    sleep: Option<ZendCallable>,
) -> PhpResult<Zval> {
    const F: &str = "Recuo\\comRetry";
    guarded(F, || {
        let tentativas = match u32::try_from(tentativas) {
            Ok(n) => n,
            Err(_) if tentativas < 0 => 0, // the core refuses it: ZERO_ATTEMPTS
            Err(_) => {
                return Err(value_error(
                    F,
                    2,
                    "tentativas",
                    "must be less than or equal to 4294967295",
                ))
            }
        };
        let base = millis(F, 3, "baseMs", baseMs)?;
        let max = millis(F, 4, "maxMs", maxMs)?;
        let seed = seed_arg(F, 6, seed)?;
        let policy = ComRetry::new(tentativas, base, max).map_err(|e| match e {
            recuo::ConfigError::ZeroAttempts => config_error(F, Some((2, "tentativas")), e),
            _ => config_error(F, None, e),
        })?;
        com_retry::run(F, policy, seed, &tarefa, repetirSe.as_ref(), sleep.as_ref())
    })
}

/// Guide B: how long to wait before retry index `$attempt`, in milliseconds.
///
/// A `Retry-After` of seconds or an HTTP-date gives the server's wait exactly (a past date is
/// 0); a wait beyond 2^53 - 1 ms gives `INF`; null or an invalid value gives a full-jitter
/// draw from `[0, min(8000, 1000 * 2^$attempt)]`. `$nowMs` (milliseconds since the Unix
/// epoch) defaults to the system clock; `$seed` fixes the jitter.
#[php_function]
#[php(name = "Recuo\\retryDelayMs")]
pub fn retry_delay_ms(
    retryAfter: Option<Bytes>,
    attempt: i64,
    nowMs: Option<i64>,
    seed: Option<i64>,
) -> PhpResult<f64> {
    const F: &str = "Recuo\\retryDelayMs";
    guarded(F, || {
        let attempt = retry_index(F, 2, "attempt", attempt)?;
        let seed = seed_arg(F, 4, seed)?;
        let value = retryAfter.map_or(&b""[..], |b| b.0);
        let parsed = recuo::parse_retry_after(value, now_ms(nowMs));
        Ok(parsed.guide_b_delay_ms(attempt, &mut recuo::LazyJitterRng::new(seed)))
    })
}

/// What a `Retry-After` value asks for: `kind` is `"seconds"`, `"date"`, `"unbounded"` or
/// `"invalid"`; `waitMs` is the finite server wait in milliseconds, or null.
#[php_class]
#[php(name = "Recuo\\RetryAfter")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug, Clone, Copy)]
pub struct RetryAfter {
    parsed: recuo::RetryAfter,
}

#[php_impl]
impl RetryAfter {
    /// `"seconds"`, `"date"`, `"unbounded"` or `"invalid"`.
    #[php(getter)]
    pub fn get_kind(&self) -> &'static str {
        self.parsed.kind()
    }

    /// The server's wait in milliseconds; null for `"unbounded"` and `"invalid"`.
    #[php(getter)]
    pub fn get_wait_ms(&self) -> Option<i64> {
        self.parsed.wait_ms().map(php_int)
    }
}

/// Reads a `Retry-After` value (seconds or an HTTP-date) as of `$nowMs` (milliseconds since
/// the Unix epoch; the system clock when null).
#[php_function]
#[php(name = "Recuo\\parseRetryAfter")]
pub fn parse_retry_after(value: Bytes, nowMs: Option<i64>) -> PhpResult<RetryAfter> {
    guarded("Recuo\\parseRetryAfter", || {
        Ok(RetryAfter {
            parsed: recuo::parse_retry_after(value.0, now_ms(nowMs)),
        })
    })
}

/// The backoff window `min($capMs, $baseMs * 2^$attempt)` in milliseconds, saturating.
#[php_function]
#[php(name = "Recuo\\backoffWindowMs")]
#[php(defaults(baseMs = DEFAULT_BASE_MS, capMs = DEFAULT_MAX_MS))]
pub fn backoff_window_ms(attempt: i64, baseMs: i64, capMs: i64) -> PhpResult<i64> {
    const F: &str = "Recuo\\backoffWindowMs";
    guarded(F, || {
        let attempt = retry_index(F, 1, "attempt", attempt)?;
        let backoff = Backoff::new()
            .with_base_ms(millis(F, 2, "baseMs", baseMs)?)
            .with_cap_ms(millis(F, 3, "capMs", capMs)?)
            .validate()
            .map_err(|e| config_error(F, None, e))?;
        Ok(php_int(backoff.window_ms(attempt)))
    })
}

/// Module startup: registers the exception classes the macros do not declare.
extern "C" fn startup(_type: i32, _module_number: i32) -> i32 {
    const SUCCESS: i32 = 0;
    const FAILURE: i32 = -1;
    match std::panic::catch_unwind(errors::register_classes) {
        Ok(Ok(())) => SUCCESS,
        Ok(Err(message)) => {
            eprintln!(
                "recuo: cannot register {}: {message}",
                errors::CONFIG_ERROR_CLASS
            );
            FAILURE
        }
        Err(_) => FAILURE,
    }
}

/// The module entry PHP looks up (`get_module`). It sits in a private module because
/// `#[php_module]` generates exported helpers without doc comments of their own.
mod entry {
    use super::*;

    /// The extension's entry: the functions, the class and `Recuo\VERSION`.
    #[php_module]
    pub fn get_module(module: ModuleBuilder) -> ModuleBuilder {
        module
            .name("recuo")
            .version(recuo::VERSION)
            .startup_function(startup)
            .constant(("Recuo\\VERSION", recuo::VERSION, &[]))
            .class::<RetryAfter>()
            .function(wrap_function!(com_retry))
            .function(wrap_function!(retry_delay_ms))
            .function(wrap_function!(parse_retry_after))
            .function(wrap_function!(backoff_window_ms))
    }
}
