//! The shared limits for Python: `recuo.Regulator`, `recuo.ConcurrencyLimit` and its
//! `recuo.Permit`, `recuo.RetryBudget`, the `recuo.Gate` that holds them, and
//! `recuo.monotonic_ns()`.
//!
//! Every rule is the core's (`recuo::Regulator`, `recuo::ConcurrencyLimit`,
//! `recuo::RetryBudget`, `recuo::Gate`); this module converts arguments and errors, and does
//! the waiting at the edge: a blocking wait releases the GIL and runs Python's signal handlers
//! at least every 50 ms (Ctrl-C raises `KeyboardInterrupt` promptly), and an `async` wait
//! awaits `asyncio.sleep` in the Python glue (`recuo/_limits.py`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::call::PyCallArgs;
use pyo3::exceptions::{PyConnectionError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyFloat, PyString};

use recuo::{
    monotonic_ns as core_monotonic_ns, BudgetError, CancelToken, ConcurrencyLimit, Gate, Permit,
    Rate, Regulator, RegulatorError, Reservation, RetryBudget, SharedError,
};

use crate::args::{
    bool_repr, clock_arg, int_arg, int_in, locked, methods, must_be, opt, opt_repr, readers,
    require_bool, require_int, secs_arg, Int,
};
use crate::errors::SharedFileError;
use crate::sleep::{interruptible_sleep, SLEEP_SLICE};

/// A rate: text the core parses (`"90/min"`, `"1.5/s"`, `"5000/h"`, `"86400/day"`, a bare
/// number per second) or a number of events per second (an int or a float, not a bool).
/// A rate the core refuses raises `ValueError` with the core's message.
pub(crate) fn rate_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Rate> {
    let rate = match value.cast::<PyString>() {
        Ok(text) => text.to_string_lossy().parse::<Rate>(),
        Err(_) => Rate::per_second(secs_arg(value, what).map_err(|_| {
            must_be(
                value,
                what,
                "a rate such as '90/min' or a number per second",
            )
        })?),
    };
    rate.map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

/// An int that fits in a `u32` (`what` names it); a negative or larger one is a `ValueError`.
fn u32_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u32> {
    int_in(value, what, 0..=u32::MAX, "must be between 0 and 2**32 - 1")
}

readers! {
    fn burst_arg -> u32 = u32_arg("burst");
    fn cost_arg -> u32 = u32_arg("cost");
    fn adaptive_arg -> bool = require_bool("adaptive");
    /// A reading of the monotonic clock in nanoseconds: an int from 0 to 2^64 − 1.
    fn now_ns_arg -> u64 = clock_arg("now_ns");
    fn ratio_arg -> f64 = number_arg("ratio");
    fn floor_arg -> f64 = number_arg("floor_per_s");
    /// `None` (now), or a reading of the monotonic clock in nanoseconds.
    pub(crate) fn opt_now_ns_arg -> Option<u64> = clock_arg("now_ns") or None;
}

/// A timeout in seconds: `None` (wait as long as it takes) or a number ≥ 0; `math.inf` is no
/// limit. NaN and negative numbers are a `ValueError`.
pub(crate) fn timeout_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<Duration>> {
    let seconds = opt(value, |v| secs_arg(v, "timeout"))?;
    match seconds {
        Some(s) if s.is_nan() || s < 0.0 => Err(PyValueError::new_err(format!(
            "timeout must be None or a number of seconds, 0 or more, not {s}"
        ))),
        Some(s) => Ok(Duration::try_from_secs_f64(s).ok()),
        None => Ok(None),
    }
}

/// Nanoseconds of an optional timeout, `u64::MAX` for none.
fn timeout_ns(timeout: Option<Duration>) -> u64 {
    timeout.map_or(u64::MAX, |t| {
        u64::try_from(t.as_nanos()).unwrap_or(u64::MAX)
    })
}

/// A number (int or float, not a bool) for a setting the core checks (`what` names it).
pub(crate) fn number_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    if value.is_instance_of::<PyFloat>() {
        return value.extract::<f64>();
    }
    let int =
        require_int(value, what).map_err(|_| must_be(value, what, "a number (int or float)"))?;
    Ok(int.extract::<f64>().unwrap_or(f64::INFINITY))
}

/// A file path: `str`, `bytes` or `os.PathLike`, as the operating system's bytes.
fn path_arg(value: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let os = value.py().import(pyo3::intern!(value.py(), "os"))?;
    let encoded = os
        .call_method1(pyo3::intern!(value.py(), "fsencode"), (value,))
        .map_err(|_| must_be(value, "path", "str, bytes or os.PathLike"))?;
    let bytes = encoded.cast::<PyBytes>()?.as_bytes();
    if bytes.is_empty() || bytes.contains(&0) {
        return Err(PyValueError::new_err(
            "path must be a non-empty file name without NUL bytes",
        ));
    }
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
}

/// A `str` argument (`what` names it): a `TypeError` for anything else.
pub(crate) fn text_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if !value.is_instance_of::<PyString>() {
        return Err(must_be(value, what, "str"));
    }
    value.extract::<String>()
}

/// A shared state's error as Python's, with the core's message: for a file at `path`, the
/// system's refusal as the matching `OSError` (`FileNotFoundError`, `PermissionError`, ...
/// with `errno` and `filename`); for a Redis server (`path`: `None`), one that cannot be
/// reached or used as `ConnectionError` (an `OSError`); a file or key set up otherwise
/// (another rate, burst or budget, another kind of state, the wrong size) as
/// `recuo.SharedFileError` (a `ValueError`).
pub(crate) fn store_error(error: &SharedError, path: Option<&Path>) -> PyErr {
    let message = error.to_string();
    match (error, path) {
        (SharedError::Io(io), Some(path)) => match io.raw_os_error() {
            Some(errno) => {
                PyOSError::new_err((errno, message, path.to_string_lossy().into_owned()))
            }
            None => PyOSError::new_err(message),
        },
        (SharedError::Io(_), None) => PyConnectionError::new_err(message),
        (SharedError::WrongKind { .. } | SharedError::Mismatch(_), _) => {
            SharedFileError::new_err(message)
        }
    }
}

/// Where a limit's `new`, `shared` or `redis` opens it (see `methods!`'s `opens!`), and where
/// its state then lives (for `repr`): in this process, in the file at a path, or on the Redis
/// server at a URL under a key (with `R`, the redis constructor's extra arguments).
pub(crate) enum At<R = ()> {
    Local,
    File(PathBuf),
    Redis(String, String, R),
}

impl<R> At<R> {
    /// The same place, a Redis server's URL without its password: what the limit keeps.
    fn redacted(self) -> Self {
        match self {
            At::Redis(url, key, extra) => At::Redis(recuo::redact_url(&url).url, key, extra),
            at => at,
        }
    }

    /// The file's path (`None`: in this process, or on a Redis server).
    fn path(&self) -> Option<&Path> {
        match self {
            At::File(path) => Some(path),
            _ => None,
        }
    }

    /// The `repr` of an object of `class` with `settings` kept here: as the call that makes it
    /// (a path as `os.fsdecode` reads it; a Redis server's URL, already without its password,
    /// and key as Python writes them: `'redis://host:port', 'key'`).
    fn repr(&self, py: Python<'_>, class: &str, settings: &str) -> PyResult<String> {
        let text = |s: &str| PyString::new(py, s).repr();
        Ok(match self {
            At::File(path) => {
                let os = py.import(pyo3::intern!(py, "os"))?;
                let path = os.call_method1(pyo3::intern!(py, "fsdecode"), (path,))?;
                format!("{class}.shared({}, {settings})", path.repr()?)
            }
            At::Redis(url, key, _) => {
                format!("{class}.redis({}, {}, {settings})", text(url)?, text(key)?)
            }
            At::Local => format!("{class}({settings})"),
        })
    }
}

/// Runs `f` with the GIL released when it asks a Redis server (`remote`: a round trip on the
/// network), holding it otherwise (a few atomic operations).
pub(crate) fn detach_if<T: Send>(py: Python<'_>, remote: bool, f: impl FnOnce() -> T + Send) -> T {
    if remote {
        py.detach(f)
    } else {
        f()
    }
}

/// A regulator's error as Python's: a zero burst or a cost above the burst is a
/// `ValueError` with the core's message, a start that would wait past its queue a
/// `recuo.QueueFullError`; its shared state's (in a file or on a Redis server) as
/// [`store_error`].
fn regulator_error(error: RegulatorError, home: &At) -> PyErr {
    match &error {
        RegulatorError::Shared(e) => store_error(e, home.path()),
        _ => regulator_use_error(&error),
    }
}

/// The error of a regulator in use (a gate's, say) as Python's: a Redis server that cannot be
/// used is a `ConnectionError`, a start that would wait past the queue a
/// `recuo.QueueFullError`, anything else a `ValueError` with the core's message.
pub(crate) fn regulator_use_error(error: &RegulatorError) -> PyErr {
    match error {
        RegulatorError::Shared(e @ SharedError::Io(_)) => store_error(e, None),
        RegulatorError::QueueFull { .. } => {
            crate::errors::QueueFullError::new_err(error.to_string())
        }
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// `recuo._limits.{name}(*args)`: an async wait of the Python glue (`recuo/_limits.py`,
/// imported at first use).
fn glue<'py>(
    py: Python<'py>,
    name: &str,
    args: impl PyCallArgs<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    static GLUE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let glue = GLUE.get_or_try_init(py, || py.import("recuo._limits").map(Bound::unbind))?;
    glue.bind(py).call_method1(name, args)
}

/// Nanoseconds on the system's monotonic clock (``CLOCK_MONOTONIC``): the clock regulators and
/// budgets count in, the same in every process on the machine (and the one
/// ``time.monotonic_ns()`` reads on Linux). Pass readings of it, or of a fake clock of your
/// own, to ``try_acquire_at``.
#[pyfunction]
pub(crate) fn monotonic_ns() -> u64 {
    core_monotonic_ns()
}

/// A start reserved by ``Regulator._reserve``, for the asyncio glue (private).
#[pyclass(name = "_Reservation", module = "recuo", frozen)]
pub(crate) struct PyReservation(Reservation);

methods!({
    impl PyReservation {
        /// The wait before the start may go, in nanoseconds (0: now).
        getter!(wait_ns(self) -> u64 = self.0.wait_ns());
    }
});

/// Limits request *starts* to a rate with a burst (GCRA: one "theoretical arrival time" moved
/// with a compare-and-swap; no lock, no timer thread).
///
/// ``rate`` is text such as ``"90/min"``, ``"1.5/s"``, ``"5000/h"`` or ``"86400/day"``, or a
/// number of starts per second. After a quiet spell up to ``burst`` starts may go at once;
/// then one per interval. In any window of ``w`` seconds there are at most
/// ``burst + rate * w`` starts. ``adaptive=True`` makes the rate halve on each
/// ``on_throttled()`` (down to 1/64 of ``rate``) and come back by 1/16 of ``rate`` on each
/// ``on_success()``. Safe to share between threads; ``Regulator.shared(path, ...)`` shares
/// one allowance between processes, ``Regulator.redis(url, key, ...)`` between machines.
///
/// ``ValueError`` for a rate the core refuses (0, negative, not a rate) or a burst of 0;
/// ``TypeError`` for a wrong type.
#[pyclass(name = "Regulator", module = "recuo", frozen)]
pub(crate) struct PyRegulator {
    pub(crate) inner: Regulator,
    /// The rate asked for (the regulator keeps it as an interval in whole nanoseconds).
    configured: Rate,
    home: At,
    adaptive: bool,
}

impl PyRegulator {
    /// The regulator at `at` with `rate`, `burst` and `adaptive`, or its error as Python's.
    fn open(
        py: Python<'_>,
        at: At,
        rate: &Bound<'_, PyAny>,
        burst: u32,
        adaptive: bool,
    ) -> PyResult<Self> {
        let rate = rate_arg(rate, "rate")?;
        let made = match &at {
            At::Local => Regulator::new(rate, burst).map(|r| r.with_adaptive(adaptive)),
            At::File(path) => Regulator::shared_with(path, rate, burst, adaptive),
            At::Redis(url, key, ()) => {
                py.detach(|| redis_regulator(url, key, rate, burst, adaptive))
            }
        };
        let home = at.redacted();
        Ok(PyRegulator {
            inner: made.map_err(|e| regulator_error(e, &home))?,
            configured: rate,
            home,
            adaptive,
        })
    }

    /// Runs `f` on the regulator: with the GIL released when it asks a Redis server.
    fn ask<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&Regulator) -> T + Send) -> T {
        let remote = matches!(self.home, At::Redis(..));
        detach_if(py, remote, || f(&self.inner))
    }

    /// Asks the regulator for a start (`f`) as [`ask`](Self::ask) does: `Ok` when it was
    /// taken, `Err(wait_ns)` when it was not; the regulator's refusal as Python's error.
    fn start<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Regulator) -> Result<T, Result<u64, RegulatorError>> + Send,
    ) -> PyResult<Result<T, u64>> {
        match self.ask(py, f) {
            Ok(taken) => Ok(Ok(taken)),
            Err(Ok(wait_ns)) => Ok(Err(wait_ns)),
            Err(Err(e)) => Err(regulator_error(e, &self.home)),
        }
    }
}

methods!({
    impl PyRegulator {
        /// Whether the rate adapts to 429s: for a shared file or a Redis key, the setting it was
        /// set up with.
        getter!(adaptive(self) -> bool = self.inner.is_adaptive());
        /// How many starts may go at once after a quiet spell.
        getter!(burst(self) -> u32 = self.inner.burst());
        /// Whether the regulator is kept on a Redis server: the async glue asks it off the event
        /// loop. Private.
        #[pyo3(name = "_remote")]
        getter!(remote(self) -> bool = matches!(self.home, At::Redis(..)));
        opens!((
            rate: &Bound<'_, PyAny>,
            #[pyo3(from_py_with = burst_arg)] burst: u32,
            #[pyo3(from_py_with = adaptive_arg)] adaptive: bool
        ) = (rate, burst = 1, *, adaptive = false));
        /// A regulator in the file at ``path`` (created if missing), shared by every thread and
        /// process that opens the same file with the same ``rate``, ``burst`` and ``adaptive``:
        /// one allowance for ``multiprocessing`` workers, PHP-FPM workers and C programs alike.
        ///
        /// ``adaptive=True`` sets the file up adaptive: a 429 reported by any process
        /// (``on_throttled()``) halves the rate for every process on the file, and each success
        /// reported by any of them gives back 1/16 of ``rate``. The setting is recorded with the
        /// rate and burst when the file is set up; every process that opens it must agree.
        ///
        /// ``recuo.SharedFileError`` (a ``ValueError``) when the file was set up with another
        /// rate, burst or adaptive setting, holds another kind of state or has the wrong size;
        /// ``OSError`` when it cannot be opened, sized or mapped.
        fn shared();
        /// A regulator on the Redis server at ``url``
        /// (``redis://[[user]:password@]host[:port][/db]``, ``rediss://…`` for TLS, or
        /// ``host:port``; or ``redis+cluster://host:port,host:port/`` for a Redis Cluster: its
        /// seed nodes, ``rediss+cluster://…`` for TLS) under ``key``, shared by every process on
        /// every machine that uses the same server and key with the same ``rate`` and ``burst``.
        /// Each check is one atomic script on the server, timed by the server's clock:
        /// ``try_acquire`` and ``acquire`` need no clock of yours (``try_acquire_at`` stays for
        /// tests, with a fake clock every user of the key shares). Talking to the server releases
        /// the GIL.
        ///
        /// ``adaptive=True`` sets the key up adaptive: the interval in force lives on the server,
        /// a 429 reported by any holder (``on_throttled()``, one round trip) halves the rate for
        /// every holder on every machine, and successes give back 1/16 of ``rate`` each (a
        /// holder tells the server of a success only while the rate it last heard of is cut).
        /// The setting is recorded with the rate and burst when the key is set up; every process
        /// that uses the key must agree.
        ///
        /// ``recuo.SharedFileError`` (a ``ValueError``) when the key was set up with another
        /// rate, burst or adaptive setting; ``ConnectionError`` (an ``OSError``) when the server
        /// cannot be reached or used — then, or later (the server lost), nothing is taken.
        fn redis();

        /// The rate in force, in starts per second (below the configured rate while an adaptive
        /// regulator is slowed down).
        #[getter]
        fn rate(&self) -> f64 {
            match self.inner.rate() {
                // Not slowed down: the rate as given, not as rounded to a whole-ns interval.
                same if same.interval_ns() == self.configured.interval_ns() => {
                    self.configured.as_per_second()
                }
                in_force => in_force.as_per_second(),
            }
        }

        /// Waits for a start slot of weight ``cost`` and takes it: ``True``. With a ``timeout``
        /// (seconds), a slot that would not come in time is not waited for and nothing is
        /// reserved: ``False`` at once.
        ///
        /// Slots are handed out in the order they are asked for. The wait releases the GIL and
        /// runs signal handlers at least every 50 ms: Ctrl-C raises ``KeyboardInterrupt`` promptly
        /// (the reserved slot is then given back when no later start was reserved behind it, and
        /// otherwise delays the later ones by one interval at most). ``ValueError`` when ``cost``
        /// is 0 or above the burst; ``recuo.QueueFullError`` (nothing reserved) when the slot
        /// would come after the 4096 starts the regulator queues ahead and within the timeout.
        #[pyo3(signature = (timeout = None, *, cost = 1))]
        fn acquire(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = timeout_arg)] timeout: Option<Duration>,
            #[pyo3(from_py_with = cost_arg)] cost: u32,
        ) -> PyResult<bool> {
            // Reserved now, on the regulator's own clock (the monotonic clock, or a Redis
            // server's), if it comes within the timeout.
            match self.start(py, |r| r.reserve_start(cost, timeout_ns(timeout)))? {
                Ok(reservation) => {
                    let wait = Duration::from_nanos(reservation.wait_ns());
                    if let Err(e) = interruptible_sleep(py, wait, None) {
                        let _ = self.inner.give_back(reservation);
                        return Err(e);
                    }
                    Ok(true)
                }
                Err(_) => Ok(false),
            }
        }

        /// ``acquire`` for asyncio: ``await regulator.acquire_async(timeout=None, cost=1)``
        /// reserves the slot when awaited and waits with ``asyncio.sleep``. Cancelling the task
        /// gives the slot back when no later start was reserved behind it (otherwise it delays
        /// the later ones by one interval at most).
        #[pyo3(signature = (timeout = None, *, cost = 1))]
        fn acquire_async<'py>(
            slf: &Bound<'py, Self>,
            #[pyo3(from_py_with = timeout_arg)] timeout: Option<Duration>,
            #[pyo3(from_py_with = cost_arg)] cost: u32,
        ) -> PyResult<Bound<'py, PyAny>> {
            glue(
                slf.py(),
                "acquire_regulator",
                (slf, timeout_ns(timeout), cost),
            )
        }

        /// Answers at once: ``0.0`` when a start of weight ``cost`` may go now (and takes it),
        /// else the seconds to wait before it could (nothing is taken).
        ///
        /// Never waits for a slot (a Redis regulator asks its server, and answers by its
        /// clock). ``ValueError`` when ``cost`` is above the burst; ``ConnectionError`` when a
        /// Redis regulator's server cannot be used (nothing is taken).
        #[pyo3(signature = (*, cost = 1))]
        fn try_acquire(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = cost_arg)] cost: u32,
        ) -> PyResult<f64> {
            let wait_ns = self.start(py, |r| r.reserve_now(cost, 0))?.err();
            Ok(wait_ns.map_or(0.0, |wait| Duration::from_nanos(wait).as_secs_f64()))
        }

        /// ``try_acquire`` at ``now_ns``, a reading of your own clock in nanoseconds (a fake
        /// clock in tests; ``monotonic_ns()`` for the real one): ``0`` when the start was taken,
        /// else the wait needed in nanoseconds. Every user of one regulator must use the same
        /// clock — for a Redis regulator shared between machines, one they all share (a Redis
        /// server counts whole microseconds).
        #[pyo3(signature = (now_ns, *, cost = 1))]
        fn try_acquire_at(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = now_ns_arg)] now_ns: u64,
            #[pyo3(from_py_with = cost_arg)] cost: u32,
        ) -> PyResult<u64> {
            Ok(self
                .start(py, |r| r.reserve_at(now_ns, cost, 0))?
                .err()
                .unwrap_or(0))
        }

        /// The server said "slow down" (a 429): an adaptive regulator halves its rate — for
        /// every process of a shared file or a Redis key. Does nothing otherwise. ``recuo.retry``
        /// calls it for ``"rate_limited"`` verdicts.
        fn on_throttled(&self, py: Python<'_>) {
            self.ask(py, Regulator::on_throttled);
        }

        /// A start succeeded: an adaptive regulator gives back 1/16 of its configured rate, up to
        /// it — for every process of a shared file or a Redis key. ``recuo.retry`` calls it for
        /// each success.
        fn on_success(&self, py: Python<'_>) {
            self.ask(py, Regulator::on_success);
        }

        /// Reserves a start now if it comes within ``max_wait_ns``: the reservation (its
        /// ``wait_ns``), or ``None`` (nothing reserved). Private: the async glue uses it.
        #[pyo3(signature = (max_wait_ns, cost, /))]
        fn _reserve(
            &self,
            py: Python<'_>,
            max_wait_ns: u64,
            cost: u32,
        ) -> PyResult<Option<PyReservation>> {
            let reserved = self.start(py, |r| r.reserve_start(cost, max_wait_ns))?;
            Ok(reserved.ok().map(PyReservation))
        }

        /// Gives back a reservation whose wait was cancelled: ``True`` when its slot is free
        /// again (no later start was reserved behind it). Private: the async glue uses it.
        #[pyo3(signature = (reservation, /))]
        fn _give_back(&self, reservation: &PyReservation) -> bool {
            self.inner.give_back(reservation.0)
        }

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            let settings = format!(
                "'{}', burst={}{}",
                self.configured,
                self.inner.burst(),
                if self.adaptive { ", adaptive=True" } else { "" }
            );
            self.home.repr(py, "Regulator", &settings)
        }
    }
});

/// A place of a ``ConcurrencyLimit``, held until ``release()`` (or the end of a ``with``
/// block, or the permit's collection). Releasing twice is harmless.
#[pyclass(name = "Permit", module = "recuo", frozen)]
pub(crate) struct PyPermit(Mutex<Option<Permit>>);

impl PyPermit {
    fn new(permit: Permit) -> Self {
        PyPermit(Mutex::new(Some(permit)))
    }

    fn take(&self) -> Option<Permit> {
        locked(&self.0).take()
    }
}

methods!({
    impl PyPermit {
        /// Whether the place was given back.
        getter!(released(self) -> bool = locked(&self.0).is_none());

        /// Gives the place back (once; later calls do nothing).
        fn release(&self) {
            drop(self.take());
        }

        /// Extends the place's lease from now, for a ``ConcurrencyLimit.redis`` place (a long
        /// request does this before its lease ends): ``True``; ``False`` when the lease had
        /// already expired (the place may be someone else's now, and is not taken back) or the
        /// permit was released. A local place has no lease: ``True`` until released.
        /// ``ConnectionError`` when the server cannot be used.
        fn renew(&self, py: Python<'_>) -> PyResult<bool> {
            match locked(&self.0).as_ref() {
                Some(permit) => py
                    .detach(|| permit.renew())
                    .map_err(|e| store_error(&e, None)),
                None => Ok(false),
            }
        }

        fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
            slf
        }

        #[pyo3(signature = (*_exc))]
        fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) {
            self.release();
        }

        fn __repr__(&self) -> String {
            format!("<recuo.Permit released={}>", bool_repr(self.released()))
        }
    }
});

pub(crate) fn limit_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    let n = u32_arg(value, "limit")?;
    if n == 0 {
        Err(PyValueError::new_err(
            "the concurrency limit must be at least 1 (0 would let nothing run)",
        ))
    } else {
        Ok(n)
    }
}

/// Waits for a place of `limit` (at most `timeout`), with the GIL released and Python's signal
/// handlers run at least every 50 ms.
pub(crate) fn acquire_place(
    py: Python<'_>,
    limit: &ConcurrencyLimit,
    timeout: Option<Duration>,
) -> PyResult<Option<Permit>> {
    let until = timeout.and_then(|t| Instant::now().checked_add(t));
    let never = CancelToken::new();
    loop {
        let slice = until.map_or(SLEEP_SLICE, |u| {
            u.saturating_duration_since(Instant::now()).min(SLEEP_SLICE)
        });
        if let Some(permit) = py
            .detach(|| limit.acquire_slice(Some(slice), until, &never))
            .map_err(|e| store_error(&e, limit.path()))?
        {
            return Ok(Some(permit));
        }
        py.check_signals()?;
        if until.is_some_and(|u| Instant::now() >= u) {
            return Ok(None);
        }
    }
}

/// At most ``limit`` requests in flight at once: a semaphore, safe to share between threads;
/// ``ConcurrencyLimit.shared(path, limit)`` shares it between the processes of one machine,
/// ``ConcurrencyLimit.redis(url, key, limit, lease)`` between machines.
///
/// ``with limit:`` (and ``async with limit:``) holds a place for the block.
/// ``acquire(timeout=None)`` and ``try_acquire()`` answer a ``Permit`` (a context manager)
/// or ``None``. Blocking waits release the GIL and answer Ctrl-C promptly. ``ValueError`` for
/// a limit of 0.
#[pyclass(name = "ConcurrencyLimit", module = "recuo", frozen)]
pub(crate) struct PyConcurrencyLimit {
    pub(crate) inner: ConcurrencyLimit,
    /// The places taken by `with` / `async with`, given back by the matching exit (places are
    /// interchangeable, so any one will do).
    held: Mutex<Vec<Permit>>,
    /// Where the places are kept, and a Redis limit's lease, for `repr`.
    home: At<Duration>,
}

impl PyConcurrencyLimit {
    /// The limit at `at` (a Redis limit with its lease) of `limit` places, none of them held by
    /// `with`, or its error as Python's.
    fn open(py: Python<'_>, at: At<Duration>, limit: u32) -> PyResult<Self> {
        let inner = match &at {
            At::Local => ConcurrencyLimit::new(limit)
                .ok_or_else(|| PyValueError::new_err("the concurrency limit must be at least 1")),
            At::File(path) => ConcurrencyLimit::shared(path, limit).map_err(|e| match e {
                recuo::LimitError::ZeroLimit => PyValueError::new_err(e.to_string()),
                recuo::LimitError::Shared(e) => store_error(&e, Some(path)),
            }),
            At::Redis(url, key, lease) => py
                .detach(|| recuo_redis::limit(url, key, limit, *lease))
                .map_err(|e| store_error(&e, None)),
        }?;
        Ok(PyConcurrencyLimit {
            inner,
            held: Mutex::new(Vec::new()),
            home: at.redacted(),
        })
    }

    fn hold(&self, permit: Permit) {
        locked(&self.held).push(permit);
    }
}

methods!({
    impl PyConcurrencyLimit {
        /// The number of places.
        getter!(limit(self) -> u32 = self.inner.limit());
        /// Places taken now (of a shared file: by every process).
        getter!(in_flight(self) -> u32 = self.inner.in_flight());
        /// The most places that were ever taken at once (of a shared file or a Redis server: by
        /// this process).
        getter!(max_in_flight(self) -> u32 = self.inner.max_in_flight());
        /// Whether the places are kept on a Redis server (each look is a round trip). Private:
        /// the async glue asks from a worker thread then, never blocking the event loop.
        #[pyo3(name = "_remote")]
        getter!(remote(self) -> bool = self.inner.is_remote());

        opens!((#[pyo3(from_py_with = limit_arg)] limit: u32) = (limit));
        /// A limit in the file at ``path`` (created with mode 0600 if missing): at most ``limit``
        /// requests in flight for every process of this machine that opens the same file with
        /// the same ``limit`` (``multiprocessing`` workers, PHP-FPM workers and C programs alike).
        ///
        /// Each place is a lock the kernel holds for its process (Linux 3.15 or later): a holder
        /// that dies — ``kill -9`` included — gives its place back at once, and a waiter in
        /// another process takes it within 10 ms (waiters look again every 1 ms, then less
        /// often, at least every 10 ms). ``in_flight`` counts the places held by every process;
        /// ``max_in_flight`` only this object's. Open the limit in each worker: a process forked
        /// while its parent holds places shares them until it exits or first uses the limit.
        ///
        /// ``ValueError`` for a limit of 0; ``recuo.SharedFileError`` (a ``ValueError``) when the
        /// file holds a limit of another size, another kind of state or no recuo state at all;
        /// ``OSError`` when it cannot be opened or is refused (a symbolic link, another user's,
        /// writable by others).
        fn shared();
        /// A limit on the Redis server at ``url`` (``redis://[[user]:password@]host[:port][/db]``,
        /// ``rediss://…`` for TLS, or ``host:port``; or ``redis+cluster://host:port,host:port/``
        /// for a Redis Cluster: its seed nodes, ``rediss+cluster://…`` for TLS; see
        /// docs/limits.md for what a failover does) under ``key``: at most ``limit`` requests in
        /// flight for every process on every machine that uses the same server and key with the
        /// same ``limit`` and ``lease``. Each place is a lease of ``lease`` seconds (0.001 to
        /// 86400), kept on the server and timed by its clock: a holder that dies frees its place
        /// when its lease expires; ``Permit.renew()`` extends one. Choose a lease longer than your
        /// slowest request (a gate does not renew it). Talking to the server releases the GIL.
        ///
        /// ``ValueError`` for a limit of 0 or a lease out of range; ``recuo.SharedFileError`` (a
        /// ``ValueError``) when the key was set up with another limit or lease;
        /// ``ConnectionError`` (an ``OSError``) when the server cannot be reached or used — then,
        /// or later from ``acquire``, ``try_acquire`` and ``renew`` (no place is ever given
        /// without the server's word). ``in_flight`` and ``max_in_flight`` count this process's
        /// places.
        fn redis(#[pyo3(from_py_with = lease_arg)] lease: Duration);

        /// Waits for a place (at most ``timeout`` seconds; ``None``: as long as it takes) and
        /// answers its ``Permit``, or ``None`` when the timeout passed.
        ///
        /// The wait releases the GIL and runs signal handlers at least every 50 ms: Ctrl-C raises
        /// ``KeyboardInterrupt`` promptly. Use the permit as a context manager, or ``release()``.
        #[pyo3(signature = (timeout = None))]
        fn acquire(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = timeout_arg)] timeout: Option<Duration>,
        ) -> PyResult<Option<PyPermit>> {
            Ok(acquire_place(py, &self.inner, timeout)?.map(PyPermit::new))
        }

        /// ``acquire`` for asyncio: ``await limit.acquire_async(timeout=None)`` answers a
        /// ``Permit`` or ``None``; it looks for a free place every 5 ms.
        #[pyo3(signature = (timeout = None))]
        fn acquire_async<'py>(
            slf: &Bound<'py, Self>,
            #[pyo3(from_py_with = timeout_arg)] timeout: Option<Duration>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let seconds = timeout.map(|t| t.as_secs_f64());
            glue(slf.py(), "acquire_limit", (slf, seconds))
        }

        /// A place now, or ``None`` when all are taken.
        fn try_acquire(&self, py: Python<'_>) -> PyResult<Option<PyPermit>> {
            let placed = detach_if(py, self.inner.is_remote(), || self.inner.try_acquire());
            Ok(placed
                .map_err(|e| store_error(&e, self.inner.path()))?
                .map(PyPermit::new))
        }

        /// Holds the place of ``permit`` until the next ``__exit__``. Private: ``async with``
        /// uses it.
        #[pyo3(signature = (permit, /))]
        fn _hold(&self, permit: PyRef<'_, PyPermit>) {
            if let Some(p) = permit.take() {
                self.hold(p);
            }
        }

        fn __enter__(&self, py: Python<'_>) -> PyResult<()> {
            if let Some(permit) = acquire_place(py, &self.inner, None)? {
                self.hold(permit);
            }
            Ok(())
        }

        #[pyo3(signature = (*_exc))]
        fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<()> {
            // Given back once the lock is released.
            let permit = locked(&self.held).pop();
            permit.map(drop).ok_or_else(|| {
                PyRuntimeError::new_err("ConcurrencyLimit.__exit__ without a matching __enter__")
            })
        }

        fn __aenter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
            glue(slf.py(), "enter_limit", (slf,))
        }

        #[pyo3(signature = (*exc))]
        fn __aexit__<'py>(
            slf: &Bound<'py, Self>,
            exc: &Bound<'py, pyo3::types::PyTuple>,
        ) -> PyResult<Bound<'py, PyAny>> {
            glue(slf.py(), "exit_limit", (slf, exc))
        }

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            let (in_flight, limit) = (self.inner.in_flight(), self.inner.limit());
            let (settings, here) = match &self.home {
                At::Redis(_, _, lease) => (format!("{limit}, {:?}", lease.as_secs_f64()), " here"),
                _ => (limit.to_string(), ""),
            };
            Ok(match self.home {
                At::Local => format!("<recuo.ConcurrencyLimit {in_flight} of {limit} in flight>"),
                _ => {
                    let call = self.home.repr(py, "ConcurrencyLimit", &settings)?;
                    format!("<recuo.{call}: {in_flight} in flight{here}>")
                }
            })
        }
    }
});

/// A lease's length in seconds: a number from 0.001 to 86400 (one day).
fn lease_arg(value: &Bound<'_, PyAny>) -> PyResult<Duration> {
    let s = number_arg(value, "lease")?;
    recuo::limit::lease_of_secs(s).ok_or_else(|| {
        PyValueError::new_err(format!(
            "lease must be from 0.001 to 86400 seconds, not {s}"
        ))
    })
}

fn window_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    match int_arg(value, "window_s")? {
        Int::Fits(n) => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
        // Below zero the core's own check would see another number: say it here.
        Int::Negative => Err(PyValueError::new_err(format!(
            "the window must be 1 to {} seconds, not {value}",
            recuo::budget::MAX_WINDOW_S
        ))),
        Int::TooLarge => Ok(u32::MAX),
    }
}

/// Retries may be at most ``ratio`` of the first attempts of the last ``window_s`` seconds,
/// plus ``floor_per_s`` retries per second (as Finagle's RetryBudget, gRPC retry throttling
/// and the AWS retry quota): when everything fails, a fleet stops multiplying the load.
///
/// Defaults: 10%, 1 retry per second, 10 s. In a ``recuo.Gate``, first attempts are recorded
/// and every retry withdraws; none left gives up with ``"budget_exhausted"``. Safe to share
/// between threads; ``RetryBudget.shared(path, ...)`` shares it between processes,
/// ``RetryBudget.redis(url, key, ...)`` between machines. ``ValueError`` for a ratio outside
/// 0–1000, a negative or NaN floor, a window outside 1–60 s.
#[pyclass(name = "RetryBudget", module = "recuo", frozen)]
pub(crate) struct PyRetryBudget {
    pub(crate) inner: RetryBudget,
    ratio: f64,
    floor_per_s: f64,
    window_s: u32,
    home: At,
}

impl PyRetryBudget {
    /// The budget at `at` with `ratio`, `floor_per_s` and `window_s`, or its error as Python's.
    fn open(py: Python<'_>, at: At, ratio: f64, floor_per_s: f64, window_s: u32) -> PyResult<Self> {
        let made = match &at {
            At::Local => RetryBudget::new(ratio, floor_per_s, window_s),
            At::File(path) => RetryBudget::shared(path, ratio, floor_per_s, window_s),
            At::Redis(url, key, ()) => {
                py.detach(|| recuo_redis::budget(url, key, ratio, floor_per_s, window_s))
            }
        };
        let home = at.redacted();
        Ok(PyRetryBudget {
            inner: made.map_err(|e| match e {
                BudgetError::Shared(e) => store_error(&e, home.path()),
                e => PyValueError::new_err(e.to_string()),
            })?,
            ratio,
            floor_per_s,
            window_s,
            home,
        })
    }

    /// Runs `op` on the budget — for a Redis budget with the GIL released, raising the
    /// server's error.
    fn counted<T: Send>(
        &self,
        py: Python<'_>,
        op: impl FnOnce(&RetryBudget) -> Result<T, SharedError> + Send,
    ) -> PyResult<T> {
        detach_if(py, self.inner.is_remote(), || op(&self.inner)).map_err(|e| store_error(&e, None))
    }
}

methods!({
    impl PyRetryBudget {
        /// The most retries per first attempt.
        getter!(ratio(self) -> f64 = self.ratio);
        /// The retries allowed per second whatever the requests.
        getter!(floor_per_s(self) -> f64 = self.floor_per_s);
        /// The window counted, in seconds.
        getter!(window_s(self) -> u32 = self.window_s);

        opens!((
            #[pyo3(from_py_with = ratio_arg)] ratio: f64,
            #[pyo3(from_py_with = floor_arg)] floor_per_s: f64,
            #[pyo3(from_py_with = window_arg)] window_s: u32
        ) = (ratio = 0.1, floor_per_s = 1.0, window_s = 10));
        /// A budget in the file at ``path`` (created if missing), shared by every process that
        /// opens it with the same settings. ``recuo.SharedFileError`` when the file holds other
        /// settings or another kind of state; ``OSError`` when it cannot be used.
        fn shared();
        /// A budget on the Redis server at ``url`` (as ``ConcurrencyLimit.redis``) under ``key``,
        /// shared by every process on every machine that uses the same server and key with the
        /// same settings (checked as ``RetryBudget()`` checks them), counted per second on the
        /// server's clock. In a ``recuo.Gate`` it fails closed: while the server cannot be used a
        /// first attempt earns nothing and no retry is allowed (``"budget_exhausted"``); its own
        /// methods raise ``ConnectionError`` instead. The ``_at`` methods take a clock every user
        /// of the key shares (the server counts whole seconds). Talking to the server releases
        /// the GIL.
        ///
        /// ``ValueError`` for bad settings; ``recuo.SharedFileError`` (a ``ValueError``) when the
        /// key was set up with other settings; ``ConnectionError`` (an ``OSError``) when the
        /// server cannot be reached or used.
        fn redis();

        /// Counts a first attempt now: it earns retries.
        fn record_request(&self, py: Python<'_>) -> PyResult<()> {
            self.counted(py, |b| b.record_request_checked(None))
        }

        /// Counts a first attempt at ``now_ns`` (the monotonic clock, or a fake one).
        fn record_request_at(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = now_ns_arg)] now_ns: u64,
        ) -> PyResult<()> {
            self.counted(py, |b| b.record_request_checked(Some(now_ns)))
        }

        /// Takes one retry now if the budget allows it: ``True``; else ``False``.
        fn try_withdraw(&self, py: Python<'_>) -> PyResult<bool> {
            self.counted(py, |b| b.withdraw_checked(None))
        }

        /// ``try_withdraw`` at ``now_ns``.
        fn try_withdraw_at(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = now_ns_arg)] now_ns: u64,
        ) -> PyResult<bool> {
            self.counted(py, |b| b.withdraw_checked(Some(now_ns)))
        }

        /// ``(requests, retries)`` counted in the window ending at ``now_ns`` (``None``: now).
        #[pyo3(signature = (now_ns = None))]
        fn counts(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = opt_now_ns_arg)] now_ns: Option<u64>,
        ) -> PyResult<(u64, u64)> {
            self.counted(py, |b| b.counts_checked(now_ns))
        }

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            let settings = format!(
                "ratio={:?}, floor_per_s={:?}, window_s={}",
                self.ratio, self.floor_per_s, self.window_s
            );
            self.home.repr(py, "RetryBudget", &settings)
        }
    }
});

/// What every attempt of a loop passes (before it is made): a place among the requests in
/// flight (``limit``), then a start slot (``regulator``); first attempts are recorded by the
/// ``budget`` and every retry withdraws from it. Each part is optional and shared, not
/// copied: one gate, or its parts, may serve many loops, threads and processes.
///
/// Pass it as ``recuo.retry(..., gate=gate)``, ``recuo.com_retry(..., gate=gate)`` or
/// ``recuo.run_batch(..., gate=gate)``. The place is given back right after each attempt,
/// before any backoff sleep. An adaptive regulator slows down on ``"rate_limited"`` verdicts
/// and speeds back up on successes.
#[pyclass(name = "Gate", module = "recuo", frozen)]
pub(crate) struct PyGate {
    pub(crate) inner: Gate,
    /// The regulator (the very object given), or ``None``.
    #[pyo3(get)]
    regulator: Option<Py<PyRegulator>>,
    /// The concurrency limit (the very object given), or ``None``.
    #[pyo3(get)]
    limit: Option<Py<PyConcurrencyLimit>>,
    /// The retry budget (the very object given), or ``None``.
    #[pyo3(get)]
    budget: Option<Py<PyRetryBudget>>,
}

/// An optional argument of the Python class `recuo.{class}` (`None` or absent: none), or
/// `TypeError`.
pub(crate) fn opt_instance<'a, 'py, T: pyo3::PyClass>(
    value: Option<&'a Bound<'py, PyAny>>,
    what: &str,
    class: &str,
) -> PyResult<Option<&'a Bound<'py, T>>> {
    match value.filter(|v| !v.is_none()) {
        None => Ok(None),
        Some(v) => v
            .cast::<T>()
            .map(Some)
            .map_err(|_| must_be(v, what, &format!("a recuo.{class} or None"))),
    }
}

/// The gate argument of the loops: `None` or a `recuo.Gate`.
pub(crate) fn gate_arg<'a, 'py>(
    gate: Option<&'a Bound<'py, PyAny>>,
) -> PyResult<Option<&'a Bound<'py, PyGate>>> {
    opt_instance(gate, "gate", "Gate")
}

methods!({
    impl PyGate {
        #[new]
        #[pyo3(signature = (*, regulator = None, limit = None, budget = None))]
        fn new(
            regulator: Option<&Bound<'_, PyAny>>,
            limit: Option<&Bound<'_, PyAny>>,
            budget: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let regulator = opt_instance::<PyRegulator>(regulator, "regulator", "Regulator")?;
            let limit = opt_instance::<PyConcurrencyLimit>(limit, "limit", "ConcurrencyLimit")?;
            let budget = opt_instance::<PyRetryBudget>(budget, "budget", "RetryBudget")?;
            let mut inner = Gate::new();
            if let Some(r) = &regulator {
                inner = inner.with_regulator(r.get().inner.clone());
            }
            if let Some(l) = &limit {
                inner = inner.with_limit(l.get().inner.clone());
            }
            if let Some(b) = &budget {
                inner = inner.with_budget(b.get().inner.clone());
            }
            Ok(PyGate {
                inner,
                regulator: regulator.map(|r| r.clone().unbind()),
                limit: limit.map(|l| l.clone().unbind()),
                budget: budget.map(|b| b.clone().unbind()),
            })
        }

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            Ok(format!(
                "Gate(regulator={}, limit={}, budget={})",
                opt_repr(py, self.regulator.as_ref())?,
                opt_repr(py, self.limit.as_ref())?,
                opt_repr(py, self.budget.as_ref())?,
            ))
        }
    }
});

/// The regulator on Redis, through `recuo-redis` (without the `redis` feature: the error of a
/// build without Redis support).
use recuo_redis::regulator_with as redis_regulator;
