//! Type errors in PHP's own words.
//!
//! ext-php-rs answers an argument it cannot convert with a `TypeError` that names neither the
//! function nor the expected type (``Invalid value given for argument `tentativas`.``). PHP's
//! own functions say `Recuo\comRetry(): Argument #2 ($tentativas) must be of type int, string
//! given`. An exception hook (chained with any other) rewrites the message of such a
//! `TypeError`, thrown by a function or method of this extension, into PHP's wording: the
//! function, the argument's place and name, its declared type (as Reflection shows it) and
//! the type of the value given — all read from the call frame the error was thrown in.

use std::ffi::{c_char, CStr};
use std::sync::Once;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::ffi::{
    zend_ce_error, zend_ce_type_error, zend_class_entry, zend_execute_data, zend_object,
    zend_read_property, zend_string, zend_throw_exception_hook, zend_type, zval,
    ZEND_INTERNAL_FUNCTION,
};
use ext_php_rs::types::ZendStr;
use ext_php_rs::zend::ExecutorGlobals;

unsafe extern "C" {
    fn zend_type_to_string(type_: zend_type) -> *mut zend_string;
    fn zend_zval_type_name(arg: *const zval) -> *const c_char;
    fn zend_update_property_string(
        scope: *mut zend_class_entry,
        object: *mut zend_object,
        name: *const c_char,
        name_length: usize,
        value: *const c_char,
    );
}

/// What ext-php-rs says, around the argument's name.
const PREFIX: &str = "Invalid value given for argument `";
const SUFFIX: &str = "`.";

/// The hook that was there before ours, called after it.
static mut PREVIOUS: Option<unsafe extern "C" fn(*mut zend_object)> = None;

/// Installs the hook, once per process (at module startup).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: module startup, on the engine's thread, before any PHP code runs.
        unsafe {
            PREVIOUS = zend_throw_exception_hook;
            zend_throw_exception_hook = Some(hook);
        }
    });
}

/// The engine calls it for every exception thrown: a `TypeError` ext-php-rs threw for an
/// argument of one of this extension's functions gets PHP's wording; anything else is left
/// alone.
unsafe extern "C" fn hook(exception: *mut zend_object) {
    // SAFETY: the engine passes the live exception it is throwing, on its thread.
    if let Ok(Some(wording)) = std::panic::catch_unwind(|| unsafe { wording(exception) }) {
        // SAFETY: `message` is a property of Error; written with Error's scope.
        unsafe {
            zend_update_property_string(
                zend_ce_error,
                exception,
                c"message".as_ptr(),
                7,
                wording.as_ptr().cast::<c_char>(),
            );
        }
    }
    // SAFETY: the earlier hook, with the engine's argument.
    if let Some(previous) = unsafe { PREVIOUS } {
        unsafe { previous(exception) };
    }
}

/// A zend_string's text.
///
/// # Safety
/// `s` is null or a live zend_string.
unsafe fn text<'a>(s: *const zend_string) -> Option<&'a str> {
    unsafe { s.as_ref() }.and_then(|s| s.as_str().ok())
}

/// PHP's wording of the `TypeError` `exception` (NUL-terminated), when ext-php-rs threw it
/// for an argument of one of this extension's functions.
///
/// # Safety
/// `exception` is the live exception being thrown, on the engine's thread.
unsafe fn wording(exception: *mut zend_object) -> Option<String> {
    // SAFETY: a live object; the class entry of TypeError is the engine's.
    if exception.is_null() || unsafe { (*exception).ce != zend_ce_type_error } {
        return None;
    }
    let mut rv: zval = unsafe { std::mem::zeroed() };
    // SAFETY: `message` is a property of Error; read with Error's scope.
    let message = unsafe {
        zend_read_property(
            zend_ce_error,
            exception,
            c"message".as_ptr(),
            7,
            true,
            &raw mut rv,
        )
    };
    // SAFETY: a live zval; a string's value is a zend_string.
    let message = (unsafe { message.as_ref() })
        .filter(|m| unsafe { m.u1.v.type_ } == 6)
        .and_then(|m| unsafe { text(m.value.str_) })?;
    let name = message.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    let call: *mut zend_execute_data = ExecutorGlobals::get().current_execute_data;
    // SAFETY: the frame of the function running now (the one that threw).
    let call = unsafe { call.as_ref() }?;
    let func = unsafe { call.func.as_ref() }?;
    // SAFETY: every zend_function starts with its type.
    let internal = unsafe { &func.internal_function };
    if u32::from(internal.type_) != ZEND_INTERNAL_FUNCTION || internal.arg_info.is_null() {
        return None;
    }
    let function = unsafe { text(internal.function_name) }?;
    let class = unsafe { internal.scope.as_ref() }.and_then(|c| unsafe { text(c.name) });
    let full = match class {
        Some(class) => format!("{class}::{function}"),
        None => function.to_string(),
    };
    if !full.starts_with("Recuo\\") {
        return None;
    }
    let position = (0..internal.num_args as usize).find(|&position| {
        // SAFETY: `arg_info` points to `num_args` parameters.
        let arg = unsafe { &*internal.arg_info.add(position) };
        let arg_name = unsafe { arg.name.as_ref() }.map(|n| unsafe { CStr::from_ptr(n) });
        arg_name.is_some_and(|n| n.to_bytes() == name.as_bytes())
    })?;
    // SAFETY: as above.
    let arg = unsafe { &*internal.arg_info.add(position) };
    // SAFETY: the declared type; the engine makes a new string of it.
    let declared = unsafe { zend_type_to_string(arg.type_) };
    let declared = if declared.is_null() {
        "mixed".to_string()
    } else {
        // SAFETY: a new string the engine made for us: ours to release.
        let declared = unsafe { ZBox::<ZendStr>::from_raw(declared) };
        declared.as_str().unwrap_or("mixed").to_string()
    };
    // SAFETY: the frame's arguments follow it, one zval each, from ZEND_CALL_FRAME_SLOT.
    let given = unsafe {
        let passed = call.This.u2.num_args as usize;
        if position >= passed {
            return None;
        }
        let slot = std::mem::size_of::<zend_execute_data>().div_ceil(std::mem::size_of::<zval>());
        let value = std::ptr::from_ref(call).cast::<zval>().add(slot + position);
        CStr::from_ptr(zend_zval_type_name(value))
            .to_string_lossy()
            .into_owned()
    };
    Some(format!(
        "{full}(): Argument #{} (${name}) must be of type {declared}, {given} given\0",
        position + 1
    ))
}
