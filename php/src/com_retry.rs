//! Guide A's loop for PHP: the core's [`recuo::ComRetry::run_with`] with PHP callables for
//! the task, the predicate and the sleep.
//!
//! When a PHP callable throws, the engine leaves the exception pending in the executor
//! globals. The loop takes it out (so PHP code can run again: the predicate, the next
//! attempt) and keeps the object itself, with its reference count, as the loop's error. When
//! the loop gives up, that very object is thrown again with `zend_throw_exception_object`,
//! which neither copies it nor touches its trace: `$caught === $thrown` in PHP, and
//! `getTrace()` still points into the task.

use ext_php_rs::convert::IntoZval;
use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;
use ext_php_rs::zend::{ce, ExecutorGlobals};
use recuo::{ComRetry, LazyJitterRng};

use crate::convert::php_int;

/// Why the loop stopped without a value.
enum Halt {
    /// A `Throwable` from the task, the predicate or the sleep, owned here until it is
    /// thrown again.
    Thrown(Zval),
    /// The engine holds something that is not a `Throwable` (PHP's `exit()` unwinds this
    /// way). It stays pending and propagates on its own; nothing else may run.
    Pending,
    /// A failure of the call itself, with no exception from PHP.
    Raise(PhpException),
}

/// After a PHP callable failed: the exception it left pending, taken out of the engine.
fn take_failure(function: &str, role: &str) -> Halt {
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

/// Runs guide A's loop: returns the task's value, or throws its last `Throwable` (the same
/// object), or whatever the predicate or the sleep threw.
pub fn run(
    function: &str,
    policy: ComRetry,
    seed: Option<u64>,
    tarefa: &ZendCallable,
    repetir_se: Option<&ZendCallable>,
    sleep: Option<&ZendCallable>,
) -> PhpResult<Zval> {
    // Seeded at the first draw only: a first-attempt success costs no getrandom call.
    let mut rng = LazyJitterRng::new(seed);
    let outcome = policy.run_with(
        &mut rng,
        || {
            tarefa
                .try_call(vec![])
                .map_err(|_| take_failure(function, "$tarefa"))
        },
        |halt| match (halt, repetir_se) {
            (Halt::Thrown(thrown), Some(predicate)) => match predicate.try_call(vec![thrown]) {
                // `if ($repetirSe($e))`: PHP's truthiness, as guide A's PHP code reads it.
                Ok(answer) => Ok(answer.coerce_to_bool()),
                Err(_) => Err(take_failure(function, "$repetirSe")),
            },
            (Halt::Thrown(_), None) => Ok(true),
            // Not the task's own failure: never retried.
            (Halt::Pending | Halt::Raise(_), _) => Ok(false),
        },
        |delay| match sleep {
            Some(sleep) => {
                let ms = php_int(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
                sleep
                    .try_call(vec![&ms])
                    .map(drop)
                    .map_err(|_| take_failure(function, "$sleep"))
            }
            None => {
                std::thread::sleep(delay);
                Ok(())
            }
        },
    );
    match outcome {
        Ok(value) => Ok(value),
        // Throwing an object rethrows that object: no copy, no new trace.
        Err(Halt::Thrown(object)) => {
            Err(PhpException::new(String::new(), 0, ce::exception()).with_object(object))
        }
        // The engine's own exception is pending: `throw()` leaves it alone.
        Err(Halt::Pending) => Err(PhpException::new(String::new(), 0, ce::error())),
        Err(Halt::Raise(e)) => Err(e),
    }
}
