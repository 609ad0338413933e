//! The types ext-php-rs cannot declare, set once the engine has registered everything: the
//! getter classes' properties and the rate parameters.
//!
//! ## Properties
//!
//! The getter classes' properties as PHP declares its own: typed and `readonly` as
//! `php/recuo.stub.php` says (through the table `make faces` writes from it,
//! [`crate::faces::STUB_PROPERTIES`]; no stub is read at run time), a
//! write an `Error` in PHP's own words (`Cannot modify readonly property
//! Recuo\Policy::$maxAttempts`), and no dynamic properties (`Cannot create dynamic property`).
//!
//! `Recuo\Report`, `Recuo\WhoAnswered` and `Recuo\Plan` are not among them: their properties
//! are real ones, declared from the core's declarations (see [`crate::values`]).
//!
//! ext-php-rs declares a getter's property untyped and answers a write with a plain
//! `Exception: No setter available for this property.`; every property of this extension is
//! a getter without a setter. So once the engine has registered every class (at the first
//! request, as for the rate parameters below), each property's declared
//! type and flags are set from that table, each class refuses dynamic properties, and the
//! classes' `write_property` handler answers a write to a declared property with PHP's error
//! before ext-php-rs's handler would. Reads still go through ext-php-rs's getters; the types
//! change what Reflection, `php --re recuo` and var_export show, not what a getter answers.
//!
//! ## Union parameter types that ext-php-rs cannot declare
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

use std::ffi::{c_char, c_void};
use std::sync::Mutex;

use ext_php_rs::class::RegisteredClass;
use ext_php_rs::ffi::{
    zend_class_entry, zend_function, zend_hash_str_find, zend_hash_str_find_ptr_lc, zend_object,
    zend_property_info, zend_string, zend_throw_error, zend_type, zval, HashTable,
    _ZEND_TYPE_NAME_BIT, IS_ARRAY, IS_DOUBLE, IS_LONG, IS_STRING, IS_UNDEF, MAY_BE_ANY,
    MAY_BE_BOOL, ZEND_ACC_NO_DYNAMIC_PROPERTIES, ZEND_INTERNAL_FUNCTION,
};
use ext_php_rs::types::ZendStr;
use ext_php_rs::zend::ExecutorGlobals;

use crate::faces::STUB_PROPERTIES;

/// `ZEND_ACC_READONLY` (PHP 8.1 and later), which the bindings do not export.
pub(crate) const ZEND_ACC_READONLY: u32 = 1 << 7;

/// `MAY_BE_NULL`.
const MAY_BE_NULL: u32 = 1 << 1;

/// A class's `write_property` handler, as ext-php-rs installed it.
type WriteProperty = unsafe extern "C" fn(
    *mut zend_object,
    *mut zend_string,
    *mut zval,
    *mut *mut c_void,
) -> *mut zval;

/// The classes' own `write_property` handlers, by class entry (its address).
static ORIGINALS: Mutex<Vec<(usize, WriteProperty)>> = Mutex::new(Vec::new());

/// The Zend type of a stub type (the name of a class type is kept for the process).
pub(crate) fn zend_type_of(ty: &str) -> zend_type {
    let (null, base) = match ty.strip_prefix('?') {
        Some(base) => (MAY_BE_NULL, base),
        None => (0, ty),
    };
    let (ptr, mask) = match base {
        "int" => (std::ptr::null_mut(), 1 << IS_LONG),
        "string" => (std::ptr::null_mut(), 1 << IS_STRING),
        "float" => (std::ptr::null_mut(), 1 << IS_DOUBLE),
        "bool" => (std::ptr::null_mut(), MAY_BE_BOOL),
        "array" => (std::ptr::null_mut(), 1 << IS_ARRAY),
        "mixed" => (std::ptr::null_mut(), MAY_BE_ANY),
        // A persistent string, never freed: the class entry outlives every request.
        class => (
            ZendStr::new(class, true).into_raw().cast::<c_void>(),
            _ZEND_TYPE_NAME_BIT,
        ),
    };
    zend_type {
        ptr,
        type_mask: mask | null,
    }
}

/// Declares the properties as the stub says and the rate parameters `string|float`. Called
/// once per process, at the first request (when every function and class is registered).
pub fn declare_types() {
    for (class, name, ty) in STUB_PROPERTIES {
        // SAFETY: on the engine's thread, at a request's startup, after module startup
        // registered the classes; see `declare`.
        unsafe { declare(class, name, ty) };
    }
    for (class, function, positions) in RATE_PARAMETERS {
        // SAFETY: as above; see `narrow`.
        unsafe { narrow(class, function, positions) };
    }
}

/// The property `name` that `class` declares: its entry in the class's property table.
///
/// # Safety
/// `class` is a live class entry.
pub(crate) unsafe fn property_info(
    class: *const zend_class_entry,
    name: &str,
) -> Option<*mut zend_property_info> {
    // SAFETY: the class's property table holds `zend_property_info` pointers.
    let found = unsafe {
        zend_hash_str_find(
            &raw const (*class).properties_info,
            name.as_ptr().cast::<c_char>(),
            name.len(),
        )
    };
    // SAFETY: a pointer zval of the property table.
    let info = unsafe { found.as_ref()?.value.ptr }.cast::<zend_property_info>();
    (!info.is_null()).then_some(info)
}

/// Sets the type `ty` and the `readonly` flag of the property `name` on `class`, and makes
/// the class refuse dynamic properties.
///
/// # Safety
/// Must run on the engine's thread while no PHP code runs, after module startup.
unsafe fn declare(class: &str, name: &str, ty: &str) {
    // SAFETY: see the function's contract: the executor's class table is the engine's, and
    // holds null or a live class entry of this extension under the name (ignoring case).
    let table = ExecutorGlobals::get().class_table;
    let Some(entry) = (unsafe { find::<zend_class_entry>(table, class).as_mut() }) else {
        return;
    };
    entry.ce_flags |= ZEND_ACC_NO_DYNAMIC_PROPERTIES;
    // SAFETY: a live class entry.
    let Some(info) = (unsafe { property_info(entry, name) }) else {
        return;
    };
    // SAFETY: a live property info of this class.
    unsafe {
        (*info).type_ = zend_type_of(ty);
        (*info).flags |= ZEND_ACC_READONLY;
    }
    // No default, as a readonly property has none: the slot starts uninitialised (a
    // getter answers every read; the slot itself is never read or written).
    // SAFETY: `offset` is the property's place in an object, and the class's default
    // table holds `default_properties_count` zvals in that order.
    unsafe {
        let slot = ((*info).offset as usize)
            .saturating_sub(std::mem::offset_of!(zend_object, properties_table))
            / std::mem::size_of::<zval>();
        if slot < usize::try_from(entry.default_properties_count).unwrap_or(0) {
            let default = &mut *entry.default_properties_table.add(slot);
            if default.u1.v.type_ == 1 {
                // IS_NULL, as ext-php-rs declared it: a null owns nothing.
                default.u1.type_info = IS_UNDEF;
            }
        }
    }
}

/// Makes a write to a declared property of `T` PHP's readonly error. Call once per class,
/// at the first request.
pub fn seal<T: RegisteredClass>() {
    let handlers = T::get_metadata().handlers();
    let Some(original) = handlers.write_property else {
        return;
    };
    if std::ptr::eq(original as *const (), write_property as *const ()) {
        return;
    }
    // SAFETY: at a request's startup, on the engine's thread, once: the class's handlers
    // (a process-wide table ext-php-rs made) are changed before any object uses them in
    // this process' later requests; objects of this request already point at the same table.
    let class =
        unsafe { find::<zend_class_entry>(ExecutorGlobals::get().class_table, T::CLASS_NAME) };
    if class.is_null() {
        return;
    }
    if let Ok(mut originals) = ORIGINALS.lock() {
        originals.push((class as usize, original));
    }
    let handlers = std::ptr::from_ref(handlers).cast_mut();
    // SAFETY: see above; the table is written by this thread only.
    unsafe { (*handlers).write_property = Some(write_property) };
}

/// The classes' `write_property`: a declared property is read-only (PHP's `Error`); any
/// other name goes to ext-php-rs's handler (which refuses a dynamic property).
unsafe extern "C" fn write_property(
    object: *mut zend_object,
    member: *mut zend_string,
    value: *mut zval,
    cache_slot: *mut *mut c_void,
) -> *mut zval {
    // SAFETY: the engine passes a live object and a property name.
    let class = unsafe { (*object).ce };
    let name = unsafe { member.as_ref() }.and_then(|m| m.as_str().ok());
    if let (Some(name), false) = (name, class.is_null()) {
        // SAFETY: a live class entry.
        if unsafe { property_info(class, name) }.is_some() {
            // SAFETY: a live class entry; its name is a zend_string.
            let class_name = unsafe { (*class).name.as_ref() }
                .and_then(|n| n.as_str().ok())
                .unwrap_or("");
            let message = format!("Cannot modify readonly property {class_name}::${name}\0");
            // SAFETY: a NUL-terminated format with no conversion ("%s" with the message).
            unsafe {
                zend_throw_error(
                    std::ptr::null_mut(),
                    c"%s".as_ptr(),
                    message.as_ptr().cast::<c_char>(),
                );
            }
            return value;
        }
    }
    let original = ORIGINALS.lock().ok().and_then(|originals| {
        let found = originals.iter().find(|(entry, _)| *entry == class as usize);
        found.map(|&(_, original)| original)
    });
    match original {
        // SAFETY: the handler ext-php-rs installed for this class, with the engine's arguments.
        Some(original) => unsafe { original(object, member, value, cache_slot) },
        None => value,
    }
}

/// `string|float`, as a Zend type mask.
const STRING_OR_FLOAT: u32 = (1 << IS_STRING) | (1 << IS_DOUBLE);

/// The parameters declared `string|float`: (class, function or method, 0-based positions).
const RATE_PARAMETERS: [(Option<&str>, &str, &[usize]); 4] = [
    (None, "Recuo\\plan", &[1, 2]),
    (Some("Recuo\\Regulator"), "__construct", &[0]),
    (Some("Recuo\\Regulator"), "shared", &[1]),
    (Some("Recuo\\Regulator"), "redis", &[2]),
];

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
