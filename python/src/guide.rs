//! The two guides' functions for Python: the `com_retry` loop of guide A
//! (“Como repetir requisições com backoff exponencial (retry)”) and the `retry_delay_ms` of guide B
//! (“HTTP 429: interpretar Retry-After e repetir pedidos com segurança”), with the Retry-After reader and the
//! backoff window beside them.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use recuo::{units, Backoff, ComRetry, LazyJitterRng, RetryAfter};

use crate::args::{
    attempt_arg, base_arg, base_ms_arg, cap_ms_arg, config_error, maximo_arg, must_be, now_ms_arg,
    opt_callable, prazo_arg, require_callable, seed_arg, tentativas_arg,
};
use crate::call::{Call, Effects};
use crate::limits::gate_arg;
use crate::machine::Build;
use crate::runner::{run_blocking, Shape};

/// Reads a `Retry-After` value given as `str`, `bytes` or `None` (absent).
///
/// `bytes` go to the core as they are. A `str` goes as UTF-8; one that cannot be encoded
/// (lone surrogates) goes with its surrogates encoded, so the core sees non-ASCII bytes and
/// answers for them as it does for any other.
fn read_retry_after(value: &Bound<'_, PyAny>, now_ms: Option<i64>) -> PyResult<RetryAfter> {
    let now = now_ms.unwrap_or_else(recuo::unix_now_ms);
    if value.is_none() {
        return Ok(recuo::parse_retry_after("", now));
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(recuo::parse_retry_after(bytes.as_bytes(), now));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(match text.to_cow() {
            Ok(utf8) => recuo::parse_retry_after(utf8.as_bytes(), now),
            Err(_) => {
                let encoded = text.call_method1(
                    pyo3::intern!(value.py(), "encode"),
                    ("utf-8", "surrogatepass"),
                )?;
                recuo::parse_retry_after(encoded.cast::<PyBytes>()?.as_bytes(), now)
            }
        });
    }
    Err(must_be(value, "retry_after", "str, bytes or None"))
}

/// The retry loop of “Como repetir requisições com backoff exponencial (retry)”: call
/// ``tarefa()`` up to ``tentativas`` times and return its value.
///
/// When ``tarefa`` raises an ``Exception`` and ``repetir_se(erro)`` is true (``repetir_se=None``
/// retries every ``Exception``), wait a delay drawn uniformly from
/// ``[0, min(maximo, base * 2**i)]`` seconds (full jitter; ``i`` counts retries from 0) and
/// call it again. When the attempts are spent or ``repetir_se`` answers false, the task's
/// exception is re-raised: the very same object, with its traceback. ``repetir_se`` may also
/// answer a ``recuo.Verdict`` (from ``recuo.classify``), whose server wait is then honoured.
///
/// ``prazo`` (seconds) limits the total time from the start of the first attempt: a wait that
/// would pass it is not slept, and the task's exception is re-raised at once. ``ao_repetir``
/// is called before each wait as ``ao_repetir(attempt, erro, delay_seconds)``, ``attempt``
/// being the number (from 0) of the attempt that failed.
///
/// A ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``, ``SystemExit``)
/// is never retried: it propagates at once. So does an exception raised by ``repetir_se``,
/// ``ao_repetir`` or ``sleep``.
///
/// ``base``, ``maximo`` and ``prazo`` are seconds (int or float). ``seed`` (an int) makes the
/// jitter reproducible. ``sleep(seconds)`` replaces the real wait, for tests; a zero delay
/// calls no sleep at all. The real wait releases the GIL and answers Ctrl-C within about
/// 50 ms. ``gate`` (a ``recuo.Gate``) is passed by every attempt: a place in flight and a
/// start slot before it, its budget for every retry. Inside the task,
/// ``recuo.current_attempt()`` gives the attempt's number and the operation's idempotency
/// key; inside another retry loop, the attempts are shared.
///
/// Each attempt and the result are logged to the ``recuo`` logger as redacted records (see
/// ``recuo.retry``); ``request=("GET", url)`` names the request they describe.
///
/// Raises ``recuo.ConfigError`` (a ``ValueError``) when ``tentativas < 1``, a duration is
/// negative, NaN or infinite, or ``maximo < base``; ``TypeError`` when ``tarefa``,
/// ``repetir_se``, ``ao_repetir`` or ``sleep`` is not callable or an argument has the wrong
/// type (a ``bool`` is refused where an int is expected).
#[pyfunction]
#[pyo3(
    signature = (tarefa, tentativas = 5, base = 0.2, maximo = 5.0, repetir_se = None, *, prazo = None, ao_repetir = None, seed = None, sleep = None, gate = None, request = None),
    text_signature = "(tarefa, tentativas=5, base=0.2, maximo=5.0, repetir_se=None, *, prazo=None, ao_repetir=None, seed=None, sleep=None, gate=None, request=None)"
)]
pub(crate) fn com_retry(
    py: Python<'_>,
    tarefa: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = tentativas_arg)] tentativas: u32,
    #[pyo3(from_py_with = base_arg)] base: f64,
    #[pyo3(from_py_with = maximo_arg)] maximo: f64,
    repetir_se: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = prazo_arg)] prazo: Option<u64>,
    ao_repetir: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
    sleep: Option<&Bound<'_, PyAny>>,
    gate: Option<&Bound<'_, PyAny>>,
    request: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    require_callable(tarefa, "tarefa")?;
    let gate = gate_arg(gate)?;
    let request = crate::record::request_arg(request)?;
    // The core's answer: with this gate, a success needs no machine (guide A's loop counts
    // no stats), so the first attempt is made before it.
    let first_before =
        !recuo::Operation::success_needs_machine(gate.map(|g| &g.get().inner), false, None);
    let build = move || Build {
        gate: gate.map(|g| g.get().inner.clone()),
        request,
        guide: true,
        ..Build::default()
    };
    let effects = Effects {
        classify: opt_callable(repetir_se, "repetir_se")?,
        on_retry: opt_callable(ao_repetir, "ao_repetir")?,
        on_give_up: None,
        sleep: opt_callable(sleep, "sleep")?,
    };
    let base_ms = units::ms_from_secs_f64(base).map_err(|e| config_error(py, e))?;
    let maximo_ms = units::ms_from_secs_f64(maximo).map_err(|e| config_error(py, e))?;
    let guide = ComRetry::new(tentativas, base_ms, maximo_ms)
        .map_err(|e| config_error(py, e))?
        .with_deadline_ms(prazo);
    let make = || guide.operation(seed);
    let shape = Shape {
        make: &make,
        max_attempts: tentativas,
        // Guide A's loop sends the default policy's header.
        header: None,
    };
    run_blocking(
        py,
        &shape,
        first_before,
        build,
        Call::Tarefa(tarefa),
        &effects,
        &|_| Ok(None),
    )
}

/// The delay before retry number ``attempt`` (from 0), in milliseconds, as a float, as
/// “HTTP 429: interpretar Retry-After e repetir pedidos com segurança” computes it.
///
/// ``retry_after`` is the Retry-After header's value: ``str``, ``bytes`` (passed through as
/// they are) or ``None`` when absent. Seconds (``"12"`` is 12000.0) and HTTP-dates (a past
/// date is 0.0) give the server's wait exactly; a wait beyond 2**53 - 1 ms gives
/// ``math.inf``; a missing or invalid value gives a full-jitter draw from
/// ``[0, min(8000, 1000 * 2**attempt)]``.
///
/// ``now_ms`` is the current time in ms since the Unix epoch (``None``: the system clock;
/// pass the response's Date header to be immune to clock skew). ``seed`` makes the jitter
/// reproducible. Raises ``ValueError`` for a negative ``attempt`` and ``TypeError`` for a
/// wrong type.
#[pyfunction]
#[pyo3(signature = (retry_after, attempt, now_ms = None, *, seed = None))]
pub(crate) fn retry_delay_ms(
    retry_after: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = attempt_arg)] attempt: u32,
    #[pyo3(from_py_with = now_ms_arg)] now_ms: Option<i64>,
    #[pyo3(from_py_with = seed_arg)] seed: Option<u64>,
) -> PyResult<f64> {
    // Seeded at the first draw only: a seconds or date value draws nothing.
    let mut rng = LazyJitterRng::new(seed);
    if let Ok(text) = retry_after.cast::<PyString>() {
        if let Ok(utf8) = text.to_cow() {
            let now = now_ms.unwrap_or_else(recuo::unix_now_ms);
            return Ok(recuo::retry_delay_ms(Some(&utf8), attempt, now, &mut rng));
        }
    }
    Ok(read_retry_after(retry_after, now_ms)?.guide_b_delay_ms(attempt, &mut rng))
}

/// Reads a Retry-After value (``str``, ``bytes`` or ``None``) as of ``now_ms`` (ms since the
/// Unix epoch; ``None``: the system clock) and answers a ``RetryAfter``.
///
/// Spaces and tabs around the value are ignored. ASCII digits are seconds; an HTTP-date in
/// any of RFC 9110's three forms is a date (a past date waits 0); a wait beyond 2**53 - 1 ms
/// is unbounded; anything else is invalid.
#[pyfunction]
#[pyo3(signature = (value, now_ms = None))]
pub(crate) fn parse_retry_after(
    value: &Bound<'_, PyAny>,
    #[pyo3(from_py_with = now_ms_arg)] now_ms: Option<i64>,
) -> PyResult<Py<PyAny>> {
    let parsed = read_retry_after(value, now_ms)?;
    crate::values::instance(
        value.py(),
        "RetryAfter",
        &recuo::RetryAfterValue::from(parsed),
    )
}

/// The backoff window before retry number ``attempt`` (from 0), in whole milliseconds:
/// ``min(cap_ms, base_ms * 2**attempt)``, exact for every int (no overflow).
///
/// Raises ``recuo.ConfigError`` when ``cap_ms < base_ms`` or a duration is negative or above
/// 2**64 - 1, ``ValueError`` for a negative ``attempt``, ``TypeError`` for a non-int.
#[pyfunction]
#[pyo3(signature = (attempt, base_ms = 200, cap_ms = 5000))]
pub(crate) fn backoff_window_ms(
    py: Python<'_>,
    #[pyo3(from_py_with = attempt_arg)] attempt: u32,
    #[pyo3(from_py_with = base_ms_arg)] base_ms: u64,
    #[pyo3(from_py_with = cap_ms_arg)] cap_ms: u64,
) -> PyResult<u64> {
    let backoff = Backoff::new()
        .with_base_ms(base_ms)
        .with_cap_ms(cap_ms)
        .validate()
        .map_err(|e| config_error(py, e))?;
    Ok(backoff.window_ms(attempt))
}
