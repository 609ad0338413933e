//! The exceptions the extension throws, and the panic boundary.
//!
//! `Recuo\Exception\ConfigError` is a plain subclass of `\ValueError` registered by hand with
//! [`ClassBuilder`] at module startup. It carries no Rust state, so PHP creates its objects
//! the way it creates every `\ValueError` (file, line and trace included) and user code may
//! construct one too. Its code is the core's stable [`recuo::ConfigError::code`], and the class
//! declares one constant per code (named after [`recuo::ConfigError::name`]) so PHP code
//! never hard-codes the numbers.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use ext_php_rs::builders::ClassBuilder;
use ext_php_rs::flags::ConstantFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::zend::{ce, ClassEntry};

/// The PHP name of the configuration error class.
pub const CONFIG_ERROR_CLASS: &str = "Recuo\\Exception\\ConfigError";

/// Every [`recuo::ConfigError`] the core defines, for the class constants.
const CONFIG_ERRORS: [recuo::ConfigError; 6] = [
    recuo::ConfigError::ZeroAttempts,
    recuo::ConfigError::NegativeDuration,
    recuo::ConfigError::NotANumber,
    recuo::ConfigError::DurationTooLarge,
    recuo::ConfigError::CapBelowBase {
        base_ms: 0,
        cap_ms: 0,
    },
    recuo::ConfigError::EmptyHeaderName,
];

/// The class entry of `Recuo\Exception\ConfigError`, set once at module startup.
static CONFIG_ERROR_CE: AtomicPtr<ClassEntry> = AtomicPtr::new(ptr::null_mut());

/// Registers `Recuo\Exception\ConfigError` (a `\ValueError`). Called from module startup.
///
/// # Errors
/// The message of the registration failure; PHP then refuses to load the extension.
pub fn register_classes() -> Result<(), String> {
    let mut builder = ClassBuilder::new(CONFIG_ERROR_CLASS)
        .extends((ce::value_error, "\\ValueError"))
        .registration(|class, arg_info| {
            CONFIG_ERROR_CE.store(class, Ordering::Release);
            // The class has no methods of its own, but the engine may keep pointers into
            // these tables for the life of the process: keep them alive.
            std::mem::forget(arg_info);
        });
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
    builder.register().map_err(|e| e.to_string())
}

fn config_error_class() -> &'static ClassEntry {
    let class = CONFIG_ERROR_CE.load(Ordering::Acquire);
    // SAFETY: the pointer is null or the class entry the engine registered at startup,
    // which lives as long as the module.
    unsafe { class.as_ref() }.unwrap_or_else(ce::value_error)
}

/// A `Recuo\Exception\ConfigError` whose code is the core's and whose message names the
/// function and, when there is one, the argument at fault.
pub fn config_error(
    function: &str,
    arg: Option<(u32, &str)>,
    error: recuo::ConfigError,
) -> PhpException {
    let message = match arg {
        Some((position, name)) => format!("{function}(): Argument #{position} (${name}): {error}"),
        None => format!("{function}(): {error}"),
    };
    let code = i32::try_from(error.code()).unwrap_or(i32::MAX);
    PhpException::new(message, code, config_error_class())
}

/// A `\ValueError` worded like PHP's own: `f(): Argument #2 ($attempt) must be ...`.
pub fn value_error(function: &str, position: u32, name: &str, must: &str) -> PhpException {
    PhpException::new(
        format!("{function}(): Argument #{position} (${name}) {must}"),
        0,
        ce::value_error(),
    )
}

/// Runs one entry point, turning a Rust panic into a PHP `\Error` instead of letting it
/// unwind into the engine.
pub fn guarded<T>(function: &str, body: impl FnOnce() -> PhpResult<T>) -> PhpResult<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        Err(PhpException::new(
            format!(
                "{function}(): internal error in recuo (Rust panic: {}); please report it",
                panic_message(payload.as_ref())
            ),
            0,
            ce::error(),
        ))
    })
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "non-string payload"
    }
}

/// A `\TypeError` with this message (`f(): Argument #5 ($headers) must ...`).
pub fn type_error(message: String) -> PhpException {
    PhpException::new(message, 0, ce::type_error())
}

/// A `\ValueError` with this message, for values no single argument is to blame for.
pub fn value_error_message(message: String) -> PhpException {
    PhpException::new(message, 0, ce::value_error())
}
