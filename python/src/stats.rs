//! Batch stats for Python (SPEC §7): `recuo.Stats`, the core's [`recuo::Stats`], and
//! `recuo.StatsRecorder`, the core's [`recuo::StatsRecorder`] — one timeline recorded from any
//! number of threads. `recuo.run_batch` answers its stats as a `recuo.Stats`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use recuo::{monotonic_ns, Cause, Stats, StatsRecorder, Transport};

use crate::args::{int_arg, quoted, require_bool, require_str, type_name, Int};
use crate::verdict::PyVerdict;

/// What a batch did, with the core's names: first attempts (``initial``),
/// ``retries`` and both (``starts``), operations that succeeded (``successes``), gave up
/// (``failures``) or never started (``not_started``), 429s (``throttled``) and 503s
/// (``unavailable``) seen, the shortest and the mean time between consecutive starts in
/// milliseconds (``None`` with fewer than two starts), the most attempts in flight at once,
/// and the first and last start on the monotonic clock (``recuo.monotonic_ns()``).
///
/// ``Stats()`` is empty. ``a.merge(b)`` (or ``a + b``) adds up two recorders' stats: counts
/// add up, the spacing is that of the merged timeline as far as it can be known (the
/// shortest of either, the span of both), and ``max_in_flight`` adds up — an upper bound when
/// the two ran at the same time. ``sum(parts)`` merges many. ``to_dict()``
/// answers the fields as a ``dict``. Immutable and comparable.
#[pyclass(name = "Stats", module = "recuo", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyStats(pub(crate) Stats);

fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

#[pymethods]
impl PyStats {
    #[new]
    fn new() -> Self {
        PyStats(Stats::default())
    }

    /// Stats of ``retries`` retries and nothing else. Private: the tests of a merge that
    /// would overflow use it.
    #[staticmethod]
    fn _with_retries(retries: u64) -> Self {
        PyStats(Stats {
            retries,
            ..Stats::default()
        })
    }

    /// First attempts started.
    #[getter]
    fn initial(&self) -> u64 {
        self.0.initial
    }

    /// Retries started.
    #[getter]
    fn retries(&self) -> u64 {
        self.0.retries
    }

    /// All attempts started: ``initial + retries``.
    #[getter]
    fn starts(&self) -> u64 {
        self.0.starts()
    }

    /// Operations that succeeded.
    #[getter]
    fn successes(&self) -> u64 {
        self.0.successes
    }

    /// Operations that gave up.
    #[getter]
    fn failures(&self) -> u64 {
        self.0.failures
    }

    /// Operations never started (the deadline came first).
    #[getter]
    fn not_started(&self) -> u64 {
        self.0.not_started
    }

    /// Rate-limited answers seen (429, or a 403 whose quota is spent).
    #[getter]
    fn throttled(&self) -> u64 {
        self.0.throttled
    }

    /// 503 answers seen.
    #[getter]
    fn unavailable(&self) -> u64 {
        self.0.unavailable
    }

    /// The shortest time between two consecutive starts, in milliseconds, or ``None``.
    #[getter]
    fn min_spacing_ms(&self) -> Option<f64> {
        self.0.min_spacing_ns.map(ns_to_ms)
    }

    /// The mean time between consecutive starts, in milliseconds, or ``None``.
    #[getter]
    fn mean_spacing_ms(&self) -> Option<f64> {
        self.0.mean_spacing_ns().map(|ns| ns / 1e6)
    }

    /// The most attempts in flight at once.
    #[getter]
    fn max_in_flight(&self) -> u64 {
        self.0.max_in_flight
    }

    /// The first start on the monotonic clock (``recuo.monotonic_ns()``), or ``None``.
    #[getter]
    fn first_start_ns(&self) -> Option<u64> {
        self.0.first_start_ns
    }

    /// The last start on the monotonic clock, or ``None``.
    #[getter]
    fn last_start_ns(&self) -> Option<u64> {
        self.0.last_start_ns
    }

    /// These stats and ``other``'s added up (the core's ``Stats::merge``); ``OverflowError``
    /// when a count would pass 2**64 - 1.
    fn merge(&self, other: PyRef<'_, PyStats>) -> PyResult<PyStats> {
        merged(&self.0, &other.0)
    }

    /// ``self.merge(other)``.
    fn __add__(&self, other: PyRef<'_, PyStats>) -> PyResult<PyStats> {
        self.merge(other)
    }

    /// ``other.merge(self)``; ``0 + stats`` is ``stats``, so ``sum(parts)`` works.
    fn __radd__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        if let Ok(stats) = other.cast::<PyStats>() {
            return Ok(Bound::new(py, merged(&stats.get().0, &self.0)?)?
                .into_any()
                .unbind());
        }
        let zero = other.is_instance_of::<pyo3::types::PyInt>()
            && !other.is_instance_of::<pyo3::types::PyBool>()
            && other.eq(0)?;
        if zero {
            return Ok(Bound::new(py, self.clone())?.into_any().unbind());
        }
        Ok(py.NotImplemented())
    }

    /// The fields as a ``dict``, in the order of ``repr``.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("initial", self.0.initial)?;
        d.set_item("retries", self.0.retries)?;
        d.set_item("starts", self.0.starts())?;
        d.set_item("successes", self.0.successes)?;
        d.set_item("failures", self.0.failures)?;
        d.set_item("not_started", self.0.not_started)?;
        d.set_item("throttled", self.0.throttled)?;
        d.set_item("unavailable", self.0.unavailable)?;
        d.set_item("min_spacing_ms", self.min_spacing_ms())?;
        d.set_item("mean_spacing_ms", self.mean_spacing_ms())?;
        d.set_item("max_in_flight", self.0.max_in_flight)?;
        d.set_item("first_start_ns", self.0.first_start_ns)?;
        d.set_item("last_start_ns", self.0.last_start_ns)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let opt = |v: Option<f64>| v.map_or_else(|| "None".to_owned(), |x| format!("{x:.3}"));
        format!(
            "Stats(initial={}, retries={}, successes={}, failures={}, not_started={}, \
             throttled={}, unavailable={}, min_spacing_ms={}, mean_spacing_ms={}, \
             max_in_flight={})",
            self.0.initial,
            self.0.retries,
            self.0.successes,
            self.0.failures,
            self.0.not_started,
            self.0.throttled,
            self.0.unavailable,
            opt(self.min_spacing_ms()),
            opt(self.mean_spacing_ms()),
            self.0.max_in_flight
        )
    }
}

/// The cause names ``StatsRecorder.saw`` takes: a ``Verdict``'s reasons.
fn cause_names() -> Vec<&'static str> {
    Cause::ALL
        .iter()
        .filter(|c| **c != Cause::Transport(Transport::Tls))
        .map(|c| c.name())
        .collect()
}

/// `cause`: a `Verdict` (its cause) or a cause's name, as `Verdict.reason` spells it.
fn cause_arg(value: &Bound<'_, PyAny>) -> PyResult<Cause> {
    if let Ok(v) = value.cast::<PyVerdict>() {
        return Ok(v.get().0.cause());
    }
    let name = require_str(value, "cause").map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "cause must be a str or a recuo.Verdict, not {}",
            type_name(value)
        ))
    })?;
    Cause::from_name(&name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "cause must be one of {}, not {name:?}",
            quoted(&cause_names())
        ))
    })
}

fn attempt_number_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    match int_arg(value, "attempt")? {
        Int::Fits(n) => u32::try_from(n)
            .map_err(|_| PyValueError::new_err("attempt must be at most 4294967295")),
        Int::Negative => Err(PyValueError::new_err("attempt must not be negative")),
        Int::TooLarge => Err(PyValueError::new_err("attempt must be at most 4294967295")),
    }
}

fn opt_now_ns_arg(value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    if value.is_none() {
        return Ok(None);
    }
    match int_arg(value, "now_ns")? {
        Int::Fits(ns) => Ok(Some(ns)),
        Int::Negative | Int::TooLarge => Err(PyValueError::new_err(
            "now_ns (a monotonic clock reading) must be between 0 and 2**64 - 1",
        )),
    }
}

fn success_arg(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    require_bool(value, "success")
}

/// Records a batch's stats from any number of threads, in one timeline (the core's
/// ``StatsRecorder``, behind a lock). ``start(attempt)`` when an attempt (numbered from 0)
/// starts and ``end()`` when it is over; ``saw(cause)`` for the verdict on a failure (429s
/// and 503s are counted); ``finished(success)`` when an operation ends; ``not_started()`` for
/// one never started; ``snapshot()`` answers the ``Stats`` so far.
///
/// ``start`` reads ``recuo.monotonic_ns()`` unless given ``now_ns`` (a reading of a clock
/// that does not go back, for tests). Thread-safe: share one recorder, or give each thread
/// its own and ``merge`` their snapshots.
#[pyclass(name = "StatsRecorder", module = "recuo", frozen)]
pub(crate) struct PyStatsRecorder(pub(crate) StatsRecorder);

#[pymethods]
impl PyStatsRecorder {
    #[new]
    fn new() -> Self {
        PyStatsRecorder(StatsRecorder::new())
    }

    /// Attempt number ``attempt`` (0: a first attempt; more: a retry) starts now, or at
    /// ``now_ns`` on the monotonic clock (``recuo.monotonic_ns()``).
    ///
    /// Call ``end()`` when it is over: the attempts started and not ended are the ones in
    /// flight. Starts must be recorded on a clock that does not go back.
    #[pyo3(signature = (attempt, now_ns = None))]
    fn start(
        &self,
        #[pyo3(from_py_with = attempt_number_arg)] attempt: u32,
        #[pyo3(from_py_with = opt_now_ns_arg)] now_ns: Option<u64>,
    ) {
        self.0.start(attempt, now_ns.unwrap_or_else(monotonic_ns));
    }

    /// The attempt started last by this caller is over.
    fn end(&self) {
        self.0.end();
    }

    /// A failure was judged ``cause``: a ``Verdict`` or its ``reason``.
    ///
    /// ``"rate_limited"`` (a 429, or a 403 whose quota is spent) counts as ``throttled``,
    /// ``"unavailable"`` (a 503) as ``unavailable``; the other causes count nothing.
    /// ``ValueError`` for an unknown name.
    fn saw(&self, #[pyo3(from_py_with = cause_arg)] cause: Cause) {
        self.0.saw(cause);
    }

    /// An operation ended: it succeeded (``True``) or gave up (``False``).
    fn finished(&self, #[pyo3(from_py_with = success_arg)] success: bool) {
        self.0.finished(success);
    }

    /// An operation was never started.
    fn not_started(&self) {
        self.0.not_started();
    }

    /// The stats so far.
    fn snapshot(&self) -> PyStats {
        PyStats(self.0.snapshot())
    }

    fn __repr__(&self) -> String {
        let s = self.0.snapshot();
        format!(
            "<recuo.StatsRecorder: {} starts, {} succeeded, {} gave up>",
            s.starts(),
            s.successes,
            s.failures
        )
    }
}

/// `a` and `b` added up, or `OverflowError` when a count would not fit.
fn merged(a: &recuo::Stats, b: &recuo::Stats) -> PyResult<PyStats> {
    a.merge(b).map(PyStats).ok_or_else(|| {
        pyo3::exceptions::PyOverflowError::new_err(
            "these stats cannot be merged: a count would pass 2**64 - 1",
        )
    })
}
