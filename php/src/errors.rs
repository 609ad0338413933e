//! The exceptions the extension throws, and the panic boundary.
//!
//! `Recuo\Exception\ConfigError` is a plain subclass of `\ValueError` registered by hand with
//! [`ClassBuilder`] at module startup. It carries no Rust state, so PHP creates its objects
//! the way it creates every `\ValueError` (file, line and trace included) and user code may
//! construct one too. Its code is the core's stable [`recuo::ConfigError::code`], and the class
//! declares one constant per code (named after [`recuo::ConfigError::name`]) so PHP code
//! never hard-codes the numbers.
//!
//! Two more are registered the same way, one per error type of the core that is not a bad
//! argument: `Recuo\Exception\PlanError` (a `\ValueError`: the core's [`recuo::PlanError`],
//! a plan that cannot be made) and `Recuo\Exception\SharedFileError` (a `\RuntimeException`:
//! the core's [`recuo::SharedError`], a shared state file that cannot be used, holds
//! something else, or was set up with other settings — or a Redis regulator's key set up
//! otherwise, or its server out of reach). Their code is 0.

use std::any::Any;
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use ext_php_rs::args::ArgInfoTables;
use ext_php_rs::builders::ClassBuilder;
use ext_php_rs::class::ClassEntryInfo;
use ext_php_rs::flags::ConstantFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::zend::{ce, ClassEntry};

/// Every [`recuo::ConfigError`] the core defines, for the class constants.
const CONFIG_ERRORS: [recuo::ConfigError; 9] = [
    recuo::ConfigError::ZeroAttempts,
    recuo::ConfigError::NegativeDuration,
    recuo::ConfigError::NotANumber,
    recuo::ConfigError::DurationTooLarge,
    recuo::ConfigError::CapBelowBase {
        base_ms: 0,
        cap_ms: 0,
    },
    recuo::ConfigError::EmptyHeaderName,
    recuo::ConfigError::StatusOutOfRange { status: 0 },
    recuo::ConfigError::UnknownName { what: "" },
    recuo::ConfigError::InvalidValue,
];

/// The exception code of an internal error: C's `RECUO_ERR_PANIC`.
pub const INTERNAL_ERROR_CODE: i32 = 900;

/// The class entry of `Recuo\Exception\InternalError`, set once at module startup.
static INTERNAL_CE: AtomicPtr<ClassEntry> = AtomicPtr::new(ptr::null_mut());

/// The class entry of `Recuo\Exception\ConfigError`, set once at module startup.
static CONFIG_CE: AtomicPtr<ClassEntry> = AtomicPtr::new(ptr::null_mut());
/// The class entry of `Recuo\Exception\PlanError`, set once at module startup.
static PLAN_CE: AtomicPtr<ClassEntry> = AtomicPtr::new(ptr::null_mut());
/// The class entry of `Recuo\Exception\SharedFileError`, set once at module startup.
static SHARED_CE: AtomicPtr<ClassEntry> = AtomicPtr::new(ptr::null_mut());

/// The parents of the exception classes registered by hand.
const VALUE_ERROR: ClassEntryInfo = (ce::value_error, "\\ValueError");
const RUNTIME: ClassEntryInfo = (runtime_exception, "\\RuntimeException");

/// The exception classes registered by hand: each one's name, parent, and the place its
/// class entry is kept.
static EXCEPTION_CLASSES: [(&str, ClassEntryInfo, &AtomicPtr<ClassEntry>); 4] = [
    // Configuration errors; plans that cannot be made; shared state files that cannot be
    // used; a bug inside recuo (a Rust panic caught at the boundary).
    ("Recuo\\Exception\\ConfigError", VALUE_ERROR, &CONFIG_CE),
    ("Recuo\\Exception\\PlanError", VALUE_ERROR, &PLAN_CE),
    ("Recuo\\Exception\\SharedFileError", RUNTIME, &SHARED_CE),
    ("Recuo\\Exception\\InternalError", RUNTIME, &INTERNAL_CE),
];

// SPL's exception classes, which PHP exports to extensions (SPL is always built in and
// started before any extension loaded with `extension=`).
extern "C" {
    static spl_ce_RuntimeException: *mut ClassEntry;
    static spl_ce_LogicException: *mut ClassEntry;
    static spl_ce_OverflowException: *mut ClassEntry;
}

/// `\RuntimeException`, or `\Exception` should SPL not be started.
fn runtime_exception() -> &'static ClassEntry {
    // SAFETY: a pointer PHP sets at SPL's startup, before this extension's; it is null or
    // a class entry that lives as long as the engine.
    unsafe { spl_ce_RuntimeException.as_ref() }.unwrap_or_else(ce::exception)
}

/// `\OverflowException` (SPL's "a full container"), or `\RuntimeException` should SPL not
/// be started.
fn overflow_exception() -> &'static ClassEntry {
    // SAFETY: as for `runtime_exception`.
    unsafe { spl_ce_OverflowException.as_ref() }.unwrap_or_else(runtime_exception)
}

/// `\LogicException`, or `\Exception` should SPL not be started.
fn logic_exception() -> &'static ClassEntry {
    // SAFETY: as for `runtime_exception`.
    unsafe { spl_ce_LogicException.as_ref() }.unwrap_or_else(ce::exception)
}

/// Registers `Recuo\Exception\ConfigError` (a `\ValueError`), `Recuo\Exception\PlanError`
/// (a `\ValueError`), `Recuo\Exception\SharedFileError` and `Recuo\Exception\InternalError`
/// (both `\RuntimeException`s). Called from module startup.
///
/// # Errors
/// The message of the registration failure; PHP then refuses to load the extension.
pub fn register_classes() -> Result<(), String> {
    for &(name, parent, entry) in &EXCEPTION_CLASSES {
        let mut builder = ClassBuilder::new(name).extends(parent).registration(keep);
        if ptr::eq(entry, &CONFIG_CE) {
            for error in CONFIG_ERRORS {
                builder = builder
                    .constant(
                        error.name().to_ascii_uppercase(),
                        i64::from(error.code()),
                        &[],
                        ConstantFlags::Public,
                    )
                    .map_err(|e| e.to_string())?;
            }
        }
        builder.register().map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

/// Keeps the entry of a class registered by hand (an exception class or a value class,
/// [`crate::values`]) in its place, found by its name, once the engine has registered it.
pub fn keep(class: &'static mut ClassEntry, arg_info: ArgInfoTables) {
    // The engine may keep pointers into the methods' tables (a value class's private
    // constructor) for the life of the process: keep them alive.
    std::mem::forget(arg_info);
    let name = class.name();
    let ours = EXCEPTION_CLASSES.iter().find(|c| Some(c.0) == name);
    match ours.map(|c| c.2) {
        Some(entry) => entry.store(class, Ordering::Release),
        None => crate::values::keep(class),
    }
}

/// A registered class entry, or `fallback` before registration.
fn registered(
    class: &AtomicPtr<ClassEntry>,
    fallback: fn() -> &'static ClassEntry,
) -> &'static ClassEntry {
    let class = class.load(Ordering::Acquire);
    // SAFETY: the pointer is null or a class entry the engine registered at startup, which
    // lives as long as the module.
    unsafe { class.as_ref() }.unwrap_or_else(fallback)
}

/// An exception of `class` whose message is the core's `error`, after the function's name.
fn core_error(function: &str, error: impl Display, class: &'static ClassEntry) -> PhpException {
    PhpException::new(format!("{function}(): {error}"), 0, class)
}

/// A `Recuo\Exception\PlanError` with the core's message, after the function's name.
pub fn plan_error(function: &str, error: &recuo::PlanError) -> PhpException {
    core_error(function, error, registered(&PLAN_CE, ce::value_error))
}

/// A `Recuo\Exception\SharedFileError` with the core's message, after the function's name.
pub fn shared_file_error(function: &str, error: &recuo::SharedError) -> PhpException {
    core_error(function, error, registered(&SHARED_CE, runtime_exception))
}

/// An `\OverflowException` whose code is the core's (114): a regulator refused a start that
/// would wait beyond the starts it queues ahead; nothing was reserved.
pub fn queue_full_error(function: &str, error: &recuo::RegulatorError) -> PhpException {
    let code = i32::try_from(error.code()).unwrap_or(0);
    PhpException::new(format!("{function}(): {error}"), code, overflow_exception())
}

/// A `\OverflowException` with this message: a sum that does not fit.
pub fn overflow(message: &str) -> PhpException {
    PhpException::new(message.to_owned(), 0, overflow_exception())
}

/// A `\LogicException`: a call that could never succeed as the program is written (waiting
/// for a place that only this PHP thread could give back).
pub fn logic_error(message: String) -> PhpException {
    PhpException::new(message, 0, logic_exception())
}

/// A `Recuo\Exception\ConfigError` whose code is the core's and whose message names the
/// function and, when there is one, the argument at fault.
pub fn config_error(
    function: &str,
    arg: Option<(u32, &str)>,
    error: recuo::ConfigError,
) -> PhpException {
    config_error_detail(function, arg, error, "")
}

/// As [`config_error`], with `detail` (when not empty) after the core's message: what
/// exactly could not be read (serde's words for a policy's plain form that is not one), for
/// humans.
pub fn config_error_detail(
    function: &str,
    arg: Option<(u32, &str)>,
    error: recuo::ConfigError,
    detail: &str,
) -> PhpException {
    let detail = Some(detail).filter(|d| !d.is_empty());
    let detail = detail.map(|d| format!(" ({d})")).unwrap_or_default();
    let arg = arg.map(|(position, name)| format!("Argument #{position} (${name}): "));
    let message = format!("{function}(): {}{error}{detail}", arg.unwrap_or_default());
    let code = i32::try_from(error.code()).unwrap_or(i32::MAX);
    PhpException::new(message, code, registered(&CONFIG_CE, ce::value_error))
}

/// A `\ValueError` worded like PHP's own: `f(): Argument #2 ($attempt) must be ...`.
pub fn value_error(function: &str, position: u32, name: &str, must: &str) -> PhpException {
    value_error_message(format!(
        "{function}(): Argument #{position} (${name}) {must}"
    ))
}

/// Runs one entry point, turning a Rust panic into a `Recuo\Exception\InternalError` (an
/// `\Exception`, code 900) instead of letting it unwind into the engine.
pub fn guarded<T>(function: &str, body: impl FnOnce() -> PhpResult<T>) -> PhpResult<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        Err(internal(format!(
            "{function}(): internal error in recuo (Rust panic: {}); please report it",
            panic_message(payload.as_ref())
        )))
    })
}

/// A `Recuo\Exception\InternalError` (code 900): a bug in recuo, said as one.
pub fn internal_error(what: &str) -> PhpException {
    internal(format!(
        "internal error in recuo ({what}); please report it"
    ))
}

/// A `Recuo\Exception\InternalError` (code 900) with this message.
fn internal(message: String) -> PhpException {
    let class = registered(&INTERNAL_CE, runtime_exception);
    PhpException::new(message, INTERNAL_ERROR_CODE, class)
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    let text = payload.downcast_ref::<&'static str>().copied();
    let text = text.or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    text.unwrap_or("non-string payload")
}

/// What the private constructor of a class whose objects only recuo makes answers: an
/// `\Error` (`Direct instantiation of Recuo\Plan is not allowed`). PHP refuses `new` on a
/// private constructor before reaching it, so only reflection gets this far, and the object
/// it was called on is left as it was.
pub fn not_constructible<T>(class: &str) -> PhpResult<T> {
    Err(php_error(format!(
        "Direct instantiation of {class} is not allowed"
    )))
}

/// An `\Error` with this message: what PHP itself should never refuse did (its JSON
/// extension failed, say).
pub fn php_error(message: String) -> PhpException {
    PhpException::new(message, 0, ce::error())
}

/// A `\TypeError` with this message (`f(): Argument #5 ($headers) must ...`).
pub fn type_error(message: String) -> PhpException {
    PhpException::new(message, 0, ce::type_error())
}

/// A `\ValueError` with this message, for values no single argument is to blame for.
pub fn value_error_message(message: String) -> PhpException {
    PhpException::new(message, 0, ce::value_error())
}

/// The `\ValueError` of `__unserialize()` called on an object already made (`what_is`: `"a
/// policy is"`): only the empty object `unserialize()` makes (`blank`) is filled, every other
/// one is immutable.
pub fn only_blank(function: &str, blank: bool, what_is: &str) -> PhpResult<()> {
    if blank {
        return Ok(());
    }
    Err(value_error_message(format!(
        "{function}(): {what_is} immutable; only the object unserialize() makes is filled"
    )))
}
