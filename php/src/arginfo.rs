//! Union parameter types that ext-php-rs cannot declare.
//!
//! A rate may be given as a string (`"90/min"`) or as a number per second, so the parameters
//! that take one are `string|float $rate`. ext-php-rs declares one type per parameter, so
//! those parameters are registered as `mixed` (their values are checked by [`RateArg`]) and
//! their declared type is narrowed to `string|float` once the engine has registered every
//! function and class: what Reflection, `php --re recuo` and the IDE stub show. The engine
//! does not check the types of an internal function's arguments itself (ext-php-rs does), so
//! the narrowing changes what PHP reports, not what it accepts.
//!
//! [`RateArg`]: crate::limits::RateArg

use std::ffi::c_char;
use std::sync::Once;

use ext_php_rs::ffi::{
    zend_class_entry, zend_function, zend_hash_str_find_ptr_lc, HashTable, IS_DOUBLE, IS_STRING,
    MAY_BE_ANY, ZEND_INTERNAL_FUNCTION,
};
use ext_php_rs::zend::ExecutorGlobals;

/// `string|float`, as a Zend type mask.
const STRING_OR_FLOAT: u32 = (1 << IS_STRING) | (1 << IS_DOUBLE);

/// The parameters declared `string|float`: (class, function or method, 0-based positions).
const RATE_PARAMETERS: [(Option<&str>, &str, &[usize]); 4] = [
    (None, "Recuo\\plan", &[1, 2]),
    (Some("Recuo\\Regulator"), "__construct", &[0]),
    (Some("Recuo\\Regulator"), "shared", &[1]),
    (Some("Recuo\\Regulator"), "redis", &[2]),
];

/// Declares the rate parameters `string|float`. Runs once per process, at the first request
/// (when every function and class is registered); later calls do nothing.
pub fn declare_rate_parameters() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for (class, function, positions) in RATE_PARAMETERS {
            // SAFETY: called from a request startup, on the engine's thread, after module
            // startup registered the functions and classes; see `narrow`.
            unsafe { narrow(class, function, positions) };
        }
    });
}

/// Looks `name` up, ignoring case, in a function or class table (of `T`s).
///
/// # Safety
/// `table` must be null or a live function or class table of the engine.
pub(crate) unsafe fn find<T>(table: *const HashTable, name: &str) -> *mut T {
    if table.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a live hash table and a (pointer, length) pair that describes `name`.
    unsafe { zend_hash_str_find_ptr_lc(table, name.as_ptr().cast::<c_char>(), name.len()) }
        .cast::<T>()
}

/// Sets the type of the parameters at `positions` of a function (or of a method of `class`)
/// to `string|float`, keeping every other bit of their type (by reference, variadic).
///
/// # Safety
/// Must run on the engine's thread while no PHP code runs, after module startup.
unsafe fn narrow(class: Option<&str>, function: &str, positions: &[usize]) {
    let globals = ExecutorGlobals::get();
    let table: *const HashTable = match class {
        None => globals.function_table,
        Some(class) => {
            // SAFETY: during a request, the executor's class table is the engine's.
            let entry = unsafe { find::<zend_class_entry>(globals.class_table, class) };
            if entry.is_null() {
                return;
            }
            // SAFETY: a live class entry; its method table lives as long as the class.
            unsafe { &raw const (*entry).function_table }
        }
    };
    // SAFETY: a live function table.
    let found = unsafe { find::<zend_function>(table, function) };
    if found.is_null() {
        return;
    }
    // SAFETY: a live function; only internal functions (ours) are changed.
    let internal = unsafe { &mut (*found).internal_function };
    if u32::from(internal.type_) != ZEND_INTERNAL_FUNCTION || internal.arg_info.is_null() {
        return;
    }
    for &position in positions {
        if position >= internal.num_args as usize {
            continue;
        }
        // SAFETY: `arg_info` points to `num_args` parameters (the return type is at -1).
        let arg = unsafe { &mut *internal.arg_info.add(position) };
        arg.type_.type_mask = (arg.type_.type_mask & !MAY_BE_ANY) | STRING_OR_FLOAT;
    }
}
