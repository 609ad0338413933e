//! The panic boundary every `extern "C"` function runs inside.
//!
//! A panic must never unwind into C (that is undefined behaviour, and with `extern "C"` Rust
//! aborts the process). Each entry point passes its body, as a closure, to [`boundary`], which
//! catches the panic and answers a fallback chosen by the return type (STYLE.md habit 2):
//!
//! | returns | after a panic |
//! |---|---|
//! | `recuo_status` | `RECUO_ERR_PANIC` |
//! | a pointer | `NULL` |
//! | `double` | NaN |
//! | an integer (`int64_t`, `uint64_t`, `uint32_t`) | `0` |
//! | `bool` | `false` |
//! | nothing | nothing |
//!
//! The callbacks C hands in (task, predicate, sleep, operation, hooks) are called *from* Rust closures that run
//! inside the same boundary, so a panic in the Rust code around a callback is caught there too;
//! no Rust frame is ever entered from C except through an entry point.
//!
//! No process-wide panic hook is installed: the default hook still prints the panic message on
//! standard error, which is what a C developer needs to report the bug.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{null, null_mut};

use crate::status::recuo_status;

/// What an entry point answers when the code inside it panicked.
pub trait PanicFallback {
    /// The fallback value for this return type.
    fn panic_fallback() -> Self;
}

/// Gives each plain return type its fallback value.
macro_rules! fallbacks {
    ($($ty:ty => $value:expr),+ $(,)?) => {
        $(impl crate::panic::PanicFallback for $ty {
            fn panic_fallback() -> Self {
                $value
            }
        })+
    };
}

pub(crate) use fallbacks;

fallbacks!(f64 => f64::NAN, i64 => 0, u64 => 0, u32 => 0, bool => false, () => ());

impl<T> PanicFallback for *const T {
    fn panic_fallback() -> Self {
        null()
    }
}

impl<T> PanicFallback for *mut T {
    fn panic_fallback() -> Self {
        null_mut()
    }
}

/// Runs `body`, turning a panic into the return type's [`PanicFallback`].
///
/// `AssertUnwindSafe` is sound here: after a panic nothing the body touched is looked at
/// again — its state is local, or owned by the C caller, who receives an error.
pub fn boundary<R: PanicFallback>(body: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| R::panic_fallback())
}

/// [`boundary`] for a body written with `?`: the status it answers, or the first error it
/// met (a refused argument, or a core error converted by its `From`).
pub(crate) fn checked<A: Answer>(body: impl FnOnce() -> Result<A, recuo_status>) -> recuo_status {
    boundary(|| body().status())
}

/// What a shim's body answers, as the status C receives: `()` is `RECUO_OK`, a status is
/// itself, a result is its value's status or its error's.
pub(crate) trait Answer {
    /// The status C receives.
    fn status(self) -> recuo_status;
}

impl Answer for () {
    fn status(self) -> recuo_status {
        recuo_status::RECUO_OK
    }
}

impl Answer for recuo_status {
    fn status(self) -> recuo_status {
        self
    }
}

impl<A: Answer, E: Into<recuo_status>> Answer for Result<A, E> {
    fn status(self) -> recuo_status {
        self.map_or_else(Into::into, Answer::status)
    }
}

/// For recuo's own tests only: panics inside the boundary, so that a test can see a panic
/// arrive as a status. Always returns `RECUO_ERR_PANIC` (the default panic hook prints the
/// panic message on standard error).
#[no_mangle]
pub extern "C" fn recuo_test_force_panic() -> recuo_status {
    boundary(|| -> recuo_status {
        panic!("recuo_test_force_panic: a deliberate panic at the boundary, for a test")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::recuo_status;

    fn panics<R>() -> R {
        panic!("deliberate panic in a test of the boundary")
    }

    #[test]
    fn each_return_type_has_its_fallback() {
        assert_eq!(
            boundary(panics::<recuo_status>),
            recuo_status::RECUO_ERR_PANIC
        );
        assert!(boundary(panics::<f64>).is_nan());
        assert_eq!(boundary(panics::<i64>), 0);
        assert_eq!(boundary(panics::<u64>), 0);
        assert_eq!(boundary(panics::<u32>), 0);
        assert!(!boundary(panics::<bool>));
        assert!(boundary(panics::<*const u8>).is_null());
        assert!(boundary(panics::<*mut u8>).is_null());
        boundary(panics::<()>);
    }

    #[test]
    fn without_a_panic_the_value_passes_through() {
        assert_eq!(boundary(|| recuo_status::RECUO_OK), recuo_status::RECUO_OK);
        assert_eq!(boundary(|| 2.5), 2.5);
        assert_eq!(boundary(|| 7i64), 7);
        assert!(boundary(|| true));
    }
}
