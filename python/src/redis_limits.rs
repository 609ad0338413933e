//! `recuo.RedisLimit`, `recuo.Lease` and `recuo.RedisBudget`: the concurrency limit with
//! leases and the retry budget on Redis (recuo-redis). Conversion only: the rules are in
//! recuo-redis's scripts and the core.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use recuo::CancelToken;
use recuo_redis::{Lease, RedisBudget, RedisLimit};

use crate::limits::{limit_arg, number_arg, redis_error, text_arg, timeout_arg};
use crate::runner::SLEEP_SLICE;

fn lease_arg(value: &Bound<'_, PyAny>) -> PyResult<Duration> {
    let s = number_arg(value, "lease")?;
    if !(0.001..=86_400.0).contains(&s) {
        return Err(PyValueError::new_err(format!(
            "lease must be from 0.001 to 86400 seconds, not {s}"
        )));
    }
    Ok(Duration::from_secs_f64(s))
}

/// At most ``limit`` requests in flight for every process that uses the same Redis server and
/// key, each place a lease of ``lease`` seconds: a holder that dies frees its place when its
/// lease expires. ``acquire(timeout=None)`` and ``try_acquire()`` answer a ``Lease`` (a
/// context manager) or ``None``. ``recuo.SharedFileError`` for a key set up otherwise,
/// ``ConnectionError`` for a server out of reach (then or later: no place is ever given
/// without the server's word).
#[pyclass(name = "RedisLimit", module = "recuo", frozen)]
pub(crate) struct PyRedisLimit {
    inner: RedisLimit,
}

#[pymethods]
impl PyRedisLimit {
    #[new]
    #[pyo3(signature = (url, key, limit, lease))]
    fn new(
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = limit_arg)] limit: u32,
        #[pyo3(from_py_with = lease_arg)] lease: Duration,
    ) -> PyResult<Self> {
        let (url, key) = (text_arg(url, "url")?, text_arg(key, "key")?);
        let inner = py
            .detach(|| RedisLimit::open(&url, &key, limit, lease))
            .map_err(|e| redis_error(&e))?;
        Ok(PyRedisLimit { inner })
    }

    /// A lease now, or ``None`` when the limit is full.
    fn try_acquire(&self, py: Python<'_>) -> PyResult<Option<PyLease>> {
        match py.detach(|| self.inner.try_acquire()) {
            Ok(Ok(lease)) => Ok(Some(PyLease::new(lease))),
            Ok(Err(_)) => Ok(None),
            Err(e) => Err(redis_error(&e)),
        }
    }

    /// Waits for a lease (at most ``timeout`` seconds; ``None``: no limit), with the GIL
    /// released and Ctrl-C answered promptly; ``None`` when the timeout passed.
    #[pyo3(signature = (timeout = None))]
    fn acquire(
        &self,
        py: Python<'_>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<PyLease>> {
        let timeout = match timeout {
            Some(t) => timeout_arg(t)?,
            None => None,
        };
        let until = timeout.and_then(|t| Instant::now().checked_add(t));
        let never = CancelToken::new();
        loop {
            let slice = until.map_or(SLEEP_SLICE, |u| {
                u.saturating_duration_since(Instant::now()).min(SLEEP_SLICE)
            });
            match py.detach(|| self.inner.acquire(Some(slice), &never)) {
                Ok(Some(lease)) => return Ok(Some(PyLease::new(lease))),
                Ok(None) => {}
                Err(e) => return Err(redis_error(&e)),
            }
            py.check_signals()?;
            if until.is_some_and(|u| Instant::now() >= u) {
                return Ok(None);
            }
        }
    }

    /// Leases held now.
    fn in_flight(&self, py: Python<'_>) -> PyResult<u32> {
        py.detach(|| self.inner.in_flight())
            .map_err(|e| redis_error(&e))
    }

    /// The most requests in flight.
    #[getter]
    fn limit(&self) -> u32 {
        self.inner.max()
    }

    /// How long a lease lasts unless renewed, in seconds.
    #[getter]
    fn lease(&self) -> f64 {
        self.inner.lease().as_secs_f64()
    }
}

/// One place of a ``RedisLimit``: ``renew()`` extends it, ``release()`` (or leaving its
/// ``with`` block) gives it back; both answer ``False`` when it had already expired.
#[pyclass(name = "Lease", module = "recuo", frozen)]
pub(crate) struct PyLease {
    lease: Mutex<Option<Lease>>,
    token: String,
}

impl PyLease {
    fn new(lease: Lease) -> Self {
        PyLease {
            token: lease.token().to_owned(),
            lease: Mutex::new(Some(lease)),
        }
    }
}

#[pymethods]
impl PyLease {
    /// Extends the lease from now; ``False`` when it had expired or was released.
    fn renew(&self, py: Python<'_>) -> PyResult<bool> {
        let guard = self.lease.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(lease) => py.detach(|| lease.renew()).map_err(|e| redis_error(&e)),
            None => Ok(false),
        }
    }

    /// Gives the place back; ``False`` when it had expired or was released already.
    fn release(&self, py: Python<'_>) -> PyResult<bool> {
        let taken = self.lease.lock().unwrap_or_else(|e| e.into_inner()).take();
        match taken {
            Some(lease) => py.detach(|| lease.release()).map_err(|e| redis_error(&e)),
            None => Ok(false),
        }
    }

    /// The owner token kept on the server.
    #[getter]
    fn token(&self) -> &str {
        &self.token
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<()> {
        self.release(py).map(|_| ())
    }
}

/// The retry budget on Redis, shared by every process that uses the same server and key:
/// retries in the last ``window`` seconds stay within ``ratio × requests + floor × window``
/// (the local ``RetryBudget``'s rule). ``ValueError`` for invalid settings,
/// ``recuo.SharedFileError`` for a key set up otherwise, ``ConnectionError`` for a server out
/// of reach.
#[pyclass(name = "RedisBudget", module = "recuo", frozen)]
pub(crate) struct PyRedisBudget {
    inner: RedisBudget,
}

#[pymethods]
impl PyRedisBudget {
    #[new]
    #[pyo3(signature = (url, key, ratio = 0.1, floor = 1.0, window = 10))]
    fn new(
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        ratio: f64,
        floor: f64,
        window: u32,
    ) -> PyResult<Self> {
        let (url, key) = (text_arg(url, "url")?, text_arg(key, "key")?);
        recuo::RetryBudget::new(ratio, floor, window)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let inner = py
            .detach(|| RedisBudget::open(&url, &key, ratio, floor, window))
            .map_err(|e| redis_error(&e))?;
        Ok(PyRedisBudget { inner })
    }

    /// Counts a first attempt: it earns retries.
    fn record_request(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.record_request())
            .map_err(|e| redis_error(&e))
    }

    /// Takes one retry: ``True``, or ``False`` when the budget is spent.
    fn withdraw(&self, py: Python<'_>) -> PyResult<bool> {
        py.detach(|| self.inner.withdraw())
            .map_err(|e| redis_error(&e))
    }

    /// Requests and retries counted in the window.
    fn counts(&self, py: Python<'_>) -> PyResult<(u64, u64)> {
        py.detach(|| self.inner.counts())
            .map_err(|e| redis_error(&e))
    }
}
