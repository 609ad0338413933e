//! The first attempt that pays only for itself: `Recuo\comRetry($f)` and
//! `Recuo\retry($f)` called with their operation alone — no deadline, no gate, no records,
//! nothing that needs the machine before the operation runs — call it at once, with one clock
//! read and one entry for the loops nested in it. A success returns its value: no machine,
//! no allocation, no key (`Recuo\retry`'s `Recuo\Attempt` makes its key at the first ask).
//! A failure hands the attempt to the machine ([`crate::driver::First`]): it starts at the
//! attempt's start, sees the failure at its end and goes on as if it had made the attempt
//! itself — the same decisions, counts, pool and key.
//!
//! Every other call (more arguments, a callable that is not an object with a closure, such
//! as a function's name) takes the function's own handler, as before: the fast path is a
//! handler put in front of it once the module has registered its functions.
//!
//! Guide A, as these docs call it, is
//! “Como repetir requisições com backoff exponencial (retry)”
//! (<https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff>), the guide that
//! writes `comRetry` and `buscarComRetry`.

use std::borrow::Cow;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::ptr;
use std::sync::OnceLock;

use ext_php_rs::convert::{FromZval, IntoZval};
use ext_php_rs::ffi::{
    ext_php_rs_compiler_globals, ext_php_rs_executor_globals, zend_call_known_function,
    zend_class_entry, zend_execute_data, zend_function, zend_hash_str_find_ptr_lc, zend_object,
    zval, ZEND_ACC_CALL_VIA_TRAMPOLINE,
};
use ext_php_rs::flags::ZvalTypeFlags;
use ext_php_rs::types::{ZendClassObject, Zval};
use ext_php_rs::zend::{bailout, try_catch, CatchError};

use crate::driver::{take_failure, First};
use crate::loop_values::Attempt;
use crate::pool::{fast_enter, fast_leave};

/// The attempts of both functions called with their operation alone: guide A's policy's.
const MAX_ATTEMPTS: u32 = {
    let policy = recuo::Policy::guide_a();
    let n = policy.max_attempts();
    // Nothing of it is allocated (a constant's drop cannot run at compile time).
    std::mem::forget(policy);
    n
};
// `Recuo\comRetry`'s default `$tentativas` is that very number.
const _: () = assert!(recuo::ComRetry::GUIDE_A.tentativas() == MAX_ATTEMPTS);

/// An internal function's handler, as the engine calls it.
type Handler = unsafe extern "C" fn(*mut zend_execute_data, *mut zval);

/// The handlers the macros generated, which the fast paths fall back to.
static COM_RETRY: OnceLock<Handler> = OnceLock::new();
static RETRY: OnceLock<Handler> = OnceLock::new();

/// Puts the fast paths in front of `Recuo\comRetry` and `Recuo\retry` (module startup, once
/// the module's functions are registered) — when, as the core decides it once for a loop
/// with no gate, no stats and no records, a success needs no machine.
pub fn install() {
    if recuo::Operation::success_needs_machine(None, false, None) {
        return;
    }
    let fast: [(&str, Handler, &OnceLock<Handler>); 2] = [
        ("recuo\\comretry", com_retry_fast, &COM_RETRY),
        ("recuo\\retry", retry_fast, &RETRY),
    ];
    for (name, handler, slow) in fast {
        // SAFETY: at module startup the compiler globals' function table holds the module's
        // functions, each an internal function the engine copied at registration; only this
        // thread runs.
        unsafe {
            let table = (*ext_php_rs_compiler_globals()).function_table;
            let function = zend_hash_str_find_ptr_lc(table, name.as_ptr().cast(), name.len())
                .cast::<zend_function>();
            if function.is_null() {
                continue;
            }
            let internal = &mut (*function).internal_function;
            if let Some(generated) = internal.handler {
                if slow.set(generated).is_ok() {
                    internal.handler = Some(handler);
                }
            }
        }
    }
}

/// The operation, when the call passed it alone and it is an object with a closure: the
/// function to call, its object and scope.
struct Callee {
    function: *mut zend_function,
    object: *mut zend_object,
    scope: *mut zend_class_entry,
}

/// `ZEND_CALL_FRAME_SLOT`: where a call's arguments start, in zvals after its frame.
const FRAME_SLOT: usize =
    std::mem::size_of::<zend_execute_data>().div_ceil(std::mem::size_of::<zval>());

/// The call's only argument as a [`Callee`], or `None` (another call: the slow path).
///
/// # Safety
/// `ex` is the frame of an internal function's call.
unsafe fn only_operation(ex: *mut zend_execute_data) -> Option<Callee> {
    // SAFETY: the caller's frame; its arguments follow it.
    unsafe {
        if (*ex).This.u2.num_args != 1 {
            return None;
        }
        let arg = &*ex.cast::<zval>().add(FRAME_SLOT);
        let object = arg.object()?;
        let get_closure = (*object.handlers).get_closure?;
        let mut callee = Callee {
            function: ptr::null_mut(),
            object: ptr::null_mut(),
            scope: ptr::null_mut(),
        };
        let object_ptr = ptr::from_ref(object).cast_mut();
        let found = get_closure(
            object_ptr,
            &raw mut callee.scope,
            &raw mut callee.function,
            &raw mut callee.object,
            true,
        );
        if found != 0 || callee.function.is_null() {
            return None;
        }
        // A trampoline (`__call`) is freed by whoever calls it: leave it to the slow path.
        if (*callee.function).common.fn_flags & ZEND_ACC_CALL_VIA_TRAMPOLINE != 0 {
            return None;
        }
        Some(callee)
    }
}

/// Whether an exception is pending in the engine.
fn exception_pending() -> bool {
    // SAFETY: the engine's globals are valid for the life of the process.
    unsafe { !(*ext_php_rs_executor_globals()).exception.is_null() }
}

/// Calls `callee` with `args` into `retval`, within one loop's entry among the nested loops'
/// pools (of `max_attempts`, when it is the outermost of its fiber): whether it is the
/// outermost, and the attempt's start and end on the monotonic clock; `None` once it
/// succeeded (its entry gone). A fatal error inside removes the entry and goes on.
///
/// # Safety
/// `retval` is the call's return value; `args` point to `len` zvals.
unsafe fn first_attempt(
    callee: &Callee,
    max_attempts: u32,
    args: *mut zval,
    len: u32,
    retval: *mut zval,
) -> Option<(bool, u64, u64)> {
    let outermost = fast_enter(max_attempts);
    // Taken as cheaply as the host allows (the coarse clock): nothing the fast path's calls
    // can see depends on it — they have no deadline, records, stats or report — and a
    // failure's time is read precisely.
    let started_ms = recuo::coarse_monotonic_ms();
    // SAFETY: a function the engine resolved from the operation, called as the engine's
    // `call_user_func` calls it; `try_catch` catches a fatal error's `longjmp`.
    let called = try_catch(AssertUnwindSafe(|| unsafe {
        zend_call_known_function(
            callee.function,
            callee.object,
            callee.scope,
            retval,
            len,
            args,
            ptr::null_mut(),
        );
    }));
    if let Err(e) = called {
        if outermost {
            fast_leave();
        }
        match e {
            // SAFETY: the fatal error goes on to the engine's own catch point.
            CatchError::Bailout => unsafe { bailout() },
            other => {
                crate::errors::php_error(format!("Recuo: {other}")).throw();
                return None;
            }
        }
    }
    if !exception_pending() {
        if outermost {
            fast_leave();
        }
        return None;
    }
    Some((outermost, started_ms, recuo::monotonic_ms()))
}

thread_local! {
    /// The first attempt the fast path made, for the function body its generated handler
    /// runs next ([`handed_over`]).
    static HANDED: Cell<Option<First>> = const { Cell::new(None) };
}

/// The first attempt the fast path made and failed, when this call of `Recuo\comRetry` or
/// `Recuo\retry` is the one it handed it to (called at the start of their bodies): the
/// machine goes on from it. `None` for every other call.
pub fn handed_over() -> Option<First> {
    HANDED.take()
}

/// After a failed first attempt: the function's generated handler `slow`, on the same call
/// (the operation alone, every other argument its default), with the first attempt handed
/// over to its body.
///
/// # Safety
/// `ex` and `retval` are the call's frame and return value.
unsafe fn hand_over(
    slow: &OnceLock<Handler>,
    ex: *mut zend_execute_data,
    retval: *mut zval,
    (outermost, started_ms, failed_ms): (bool, u64, u64),
    failure: crate::driver::Halt,
    key: Option<recuo::IdempotencyKey>,
) {
    HANDED.set(Some(First {
        started_ms,
        failed_ms,
        failure,
        key,
        outermost,
    }));
    // SAFETY: as the caller says; the handler the macros generated for this function.
    unsafe { (slow.get().expect("installed with the handler"))(ex, retval) };
    // Its body takes the attempt first thing: only a call refused before it (its arguments)
    // leaves it, and with it the pool's entry the fast path left for the machine.
    if HANDED.take().is_some_and(|left| left.outermost) {
        fast_leave();
    }
}

/// `Recuo\comRetry($tarefa)`: the fast path, else the generated handler.
unsafe extern "C" fn com_retry_fast(ex: *mut zend_execute_data, retval: *mut zval) {
    const F: &str = "Recuo\\comRetry";
    // SAFETY: the engine calls this handler with the call's frame and return value.
    unsafe {
        let Some(callee) = only_operation(ex) else {
            return (COM_RETRY.get().expect("installed with the handler"))(ex, retval);
        };
        let Some(failed) = first_attempt(&callee, MAX_ATTEMPTS, ptr::null_mut(), 0, retval) else {
            return;
        };
        let failure = take_failure(F, "$tarefa");
        hand_over(&COM_RETRY, ex, retval, failed, failure, None);
    }
}

thread_local! {
    /// A first attempt's `Recuo\Attempt` that nobody kept (one reference, the fast path's):
    /// the next first attempt's, reset, rather than an object made and freed for each call.
    /// Emptied at the end of every request ([`reset`]).
    static SPARE: Cell<*mut zend_object> = const { Cell::new(ptr::null_mut()) };
}

/// `GC_PERSISTENT`, which an object's flags reuse for `IS_OBJ_WEAKLY_REFERENCED`.
const WEAKLY_REFERENCED: u32 = 1 << 7;

/// A `Recuo\Attempt` for a first attempt (number 0, the default header, its key made at the
/// first ask), as a zval that owns one reference: the spare one, else a new one.
fn first_attempt_object() -> Option<Zval> {
    let spare = SPARE.with(|slot| slot.replace(ptr::null_mut()));
    if spare.is_null() {
        return Attempt::new(0, None, Cow::Borrowed("Idempotency-Key"))
            .into_zval(false)
            .ok();
    }
    Some(owning(spare))
}

/// A zval that owns one reference to `object` (released when it is dropped).
fn owning(object: *mut zend_object) -> Zval {
    let mut zv = Zval::new();
    zv.value.obj = object;
    zv.u1.type_info = ZvalTypeFlags::ObjectEx.bits();
    zv
}

/// Gives back a first attempt's object: kept as the spare, made as new again, when only this
/// zval holds it (nobody kept it, not even weakly, and it has no properties of its own);
/// else released.
fn give_back(attempt: Zval) {
    if !attempt.is_object() {
        return;
    }
    // SAFETY: a live object of the request, held by `attempt`; a spare is one of the same
    // request (emptied at its end).
    unsafe {
        let object = attempt.value.obj;
        let alone = (*object).gc.refcount == 1
            && (*object).gc.u.type_info & WEAKLY_REFERENCED == 0
            && (*object).properties.is_null();
        if !alone || !SPARE.with(|slot| slot.get().is_null()) {
            return drop(attempt);
        }
        let Some(inner) = ZendClassObject::<Attempt>::from_zend_obj_mut(&mut *object) else {
            return drop(attempt);
        };
        **inner = Attempt::new(0, None, Cow::Borrowed("Idempotency-Key"));
        std::mem::forget(attempt);
        SPARE.with(|slot| slot.set(object));
    }
}

/// The end of a request: the spare object goes with the request's other objects.
pub fn release_spare() {
    let spare = SPARE.with(|slot| slot.replace(ptr::null_mut()));
    if !spare.is_null() {
        // The objects' store is still there when a request's modules shut down.
        drop(owning(spare));
    }
}

/// The start of a request: no spare from an earlier one (gone with its objects), not even
/// if that request never shut down.
pub fn forget_spare() {
    SPARE.with(|slot| slot.set(ptr::null_mut()));
}

/// `Recuo\retry($operation)`: the fast path, else the generated handler.
unsafe extern "C" fn retry_fast(ex: *mut zend_execute_data, retval: *mut zval) {
    const F: &str = "Recuo\\retry";
    // SAFETY: the engine calls this handler with the call's frame and return value.
    unsafe {
        let Some(callee) = only_operation(ex) else {
            return (RETRY.get().expect("installed with the handler"))(ex, retval);
        };
        let Some(mut attempt) = first_attempt_object() else {
            return (RETRY.get().expect("installed with the handler"))(ex, retval);
        };
        let Some(failed) = first_attempt(
            &callee,
            MAX_ATTEMPTS,
            ptr::from_mut(&mut attempt).cast(),
            1,
            retval,
        ) else {
            give_back(attempt);
            return;
        };
        let failure = take_failure(F, "$operation");
        // The key the first attempt's object made, or one made now: a later attempt's is
        // the same, and so is what that object answers if it is kept.
        let key = <&Attempt>::from_zval(&attempt).map(Attempt::key);
        drop(attempt);
        hand_over(&RETRY, ex, retval, failed, failure, key);
    }
}
