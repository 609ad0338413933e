//! recuo's own Python exceptions: `recuo.ConfigError`, `PlanError`, `SharedFileError`,
//! `QueueFullError`, and `InternalError`, the class a Rust panic arrives as.
//!
//! Each class is declared here once; the module's initialisation adds them to `recuo._recuo`
//! (with `QueueFullError`'s stable `code` and `name`), and [`crate::args::config_error`]
//! sets a `ConfigError`'s on each instance.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// `pyo3::create_exception!(recuo, Name, Base, doc)` for each `Name(Base): doc;`: the
/// exception classes of the module `recuo`.
macro_rules! exceptions {
    ($($name:ident($base:ty): $doc:expr;)*) => {
        $(pyo3::create_exception!(recuo, $name, $base, $doc);)*
    };
}

exceptions! {
    ConfigError(PyValueError):
    "A configuration recuo refuses: attempts below 1, a negative or NaN duration, a maximum\n\
     below the base, an idempotency header name that is not an HTTP token, a status rule\n\
     outside 400-599, or a policy's plain form (``Policy.from_dict``) with an unknown name or\n\
     that is not plain data of the known keys.\n\n\
     A subclass of ValueError. ``code`` is the core's stable number for the error (the same in\n\
     C, Python and PHP) and ``name`` its stable lower-case name (``\"zero_attempts\"``,\n\
     ``\"negative_duration\"``, ``\"not_a_number\"``, ``\"duration_too_large\"``,\n\
     ``\"cap_below_base\"``, ``\"invalid_header_name\"``, ``\"status_out_of_range\"``,\n\
     ``\"unknown_name\"``, ``\"invalid_value\"``); the message is for humans.";

    PlanError(PyValueError):
    "A plan recuo cannot make (``recuo.plan``): the target rate is above the allowance, the\n\
     retry fraction is not in [0, 1), or the latency is negative or not a number.\n\n\
     A subclass of ValueError. ``name`` is its stable lower-case name\n\
     (``\"target_above_allowance\"``, ``\"invalid_retry_fraction\"``, ``\"invalid_latency\"``);\n\
     the message is the core's, for humans.";

    SharedFileError(PyValueError):
    "A shared state file recuo refuses to use: it was set up with other settings (another\n\
     rate or burst, another budget), holds another kind of recuo state, or has the wrong\n\
     size; or a Redis key set up with other settings (a regulator's, a limit's or a\n\
     budget's). Processes sharing it would disagree about the allowance, so the second\n\
     opener is refused with the settings in force and its own. A subclass of ValueError; a\n\
     file that cannot be opened or mapped at all raises OSError instead, and a Redis server\n\
     that cannot be reached ConnectionError.";

    QueueFullError(pyo3::exceptions::PyRuntimeError):
    "A regulator refused a start because it would wait beyond the 4096 starts the regulator\n\
     queues ahead (at its configured rate): nothing was reserved, so ask again later. A\n\
     regulator never lets more than its burst plus its rate over any span of time start,\n\
     however many wait; past its queue it refuses rather than start anyone early.\n\n\
     A subclass of RuntimeError. ``code`` is 114 and ``name`` ``\"queue_full\"``, as C's\n\
     ``RECUO_QUEUE_FULL``; the message says how long the start would have waited.";
}

/// The docstring of `recuo.InternalError`.
const INTERNAL_ERROR_DOC: &str = "A bug inside recuo: a Rust panic, caught at the boundary.\n\n\
     A subclass of Exception (never a BaseException: ``except Exception`` catches it), with\n\
     ``code`` 900 and ``name`` ``\"panic\"``, as C's ``RECUO_ERR_PANIC``. The message is the\n\
     panic's; please report it. The exception raised is pyo3's ``PanicException``, made a\n\
     subclass of this class when recuo is imported.";

/// Makes `recuo.InternalError` (an `Exception`, with no instance layout of its own) and
/// makes pyo3's `PanicException`, a `BaseException`, a subclass of it: every panic any entry
/// point turns into a `PanicException` is then an ordinary `Exception`, at no cost per call.
pub(crate) fn internal_error(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    use pyo3::types::{PyDict, PyTuple, PyType};
    let namespace = PyDict::new(py);
    namespace.set_item("__slots__", PyTuple::empty(py))?;
    namespace.set_item("__module__", "recuo")?;
    namespace.set_item("__doc__", INTERNAL_ERROR_DOC)?;
    namespace.set_item("code", 900)?;
    namespace.set_item("name", "panic")?;
    let bases = (py.get_type::<pyo3::exceptions::PyException>(),);
    let class = py
        .get_type::<PyType>()
        .call1(("InternalError", bases, namespace))?;
    py.get_type::<pyo3::panic::PanicException>()
        .setattr("__bases__", (class.clone(),))?;
    Ok(class)
}
