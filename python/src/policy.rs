//! `recuo.Policy`: the core's `Policy`, built and validated by the core's `PolicyBuilder`.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;

use recuo::classify::METHODS;
use recuo::{Jitter, MethodSet, Policy, PolicyBuilder, PolicyValue, RetryRule, Rules, Transport};

use crate::args::{
    bool_repr, config_error, config_error_saying, count_arg, deadline_arg, header_arg, methods,
    ms_to_secs, named, not_one_of, readers, require_bool, require_str, secs_to_ms, transport_arg,
};

/// A status a rule can be set for: the core's range, 400–599 (below 400 is a success;
/// outside 100–599 counts as 500); the core refuses the rest.
fn status_arg(value: &Bound<'_, PyAny>) -> PyResult<u32> {
    let int = crate::args::require_int(value, "status")?;
    int.extract::<u32>().map_err(|_| {
        let (lo, hi) = Rules::STATUS_RANGE;
        PyValueError::new_err(format!("status must be from {lo} to {hi}, not {int}"))
    })
}

fn method_name_arg(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let method = require_str(value, "method")?;
    if MethodSet::IDEMPOTENT.with(&method).is_some() {
        Ok(method.to_ascii_uppercase())
    } else {
        Err(not_one_of("method", METHODS, &method))
    }
}

readers! {
    fn max_attempts_arg -> u32 = count_arg("max_attempts");
    fn base_arg -> u64 = secs_to_ms("base");
    fn cap_arg -> u64 = secs_to_ms("cap");
    fn spread_arg -> Option<u64> = secs_to_ms("spread") or None;
    fn use_date_header_arg -> bool = require_bool("use_date_header");
    fn server_honours_keys_arg -> bool = require_bool("server_honours_keys");
    fn idempotent_arg -> bool = require_bool("idempotent");
    fn enabled_arg -> bool = require_bool("enabled");
    fn rule_arg -> RetryRule = named("rule");
    fn jitter_arg -> Jitter = named("jitter");
}

/// How a policy retries: attempts, backoff, deadline, the spread added to server waits, the
/// classification sets (which statuses and failures are retried, which methods are
/// idempotent), the idempotency-key header and whether the server honours those keys.
///
/// Durations are seconds (int or float), kept as whole milliseconds. ``max_attempts`` counts
/// every attempt, the first included (at least 1). ``jitter`` is ``"full"``, ``"equal"``,
/// ``"decorrelated"`` or ``"none"``. ``deadline`` limits the operation's total time from the
/// start of its first attempt (``None``: no limit). ``spread`` is the most added at random to
/// a server's wait (``None``: ``min(window, 1 s)``). ``use_date_header`` measures server
/// waits from the response's ``Date``. ``server_honours_keys`` says the server honours
/// idempotency keys: a request sent with recuo's own key then counts as idempotent, so a
/// POST's timeout, dropped connection or 500 is retried (off by default: a server may ignore
/// the header).
///
/// Immutable, comparable, hashable and picklable; the ``with_*`` methods answer a new
/// policy. ``Policy.from_dict(value)`` and ``policy.to_dict()`` read and write a policy as one
/// plain value, durations in milliseconds.
/// Raises ``recuo.ConfigError`` for a policy the core refuses (``zero_attempts``,
/// ``negative_duration``, ``not_a_number``, ``duration_too_large``, ``cap_below_base``,
/// ``invalid_header_name``), ``TypeError`` for a wrong type, ``ValueError`` for an unknown
/// jitter.
#[pyclass(name = "Policy", module = "recuo", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyPolicy(pub(crate) Policy);

impl PyPolicy {
    /// The policy `builder` builds, or the core's refusal as `recuo.ConfigError`.
    fn built(py: Python<'_>, builder: PolicyBuilder) -> PyResult<Self> {
        builder
            .build()
            .map(PyPolicy)
            .map_err(|e| config_error(py, e))
    }

    /// The policy's plain form (the core's `PolicyValue`) as JSON text.
    fn plain_text(&self) -> PyResult<String> {
        serde_json::to_string(&self.0.to_value())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    fn with_rules(&self, py: Python<'_>, rules: Rules) -> PyResult<Self> {
        Self::built(py, self.0.to_builder().rules(rules))
    }

    /// The `with_*` calls that turn the default sets into this policy's, for `repr`: the
    /// rules the plain form lists (those that differ from the default), in the core's order.
    fn rule_changes(&self) -> String {
        let value = self.0.to_value();
        let mut out = String::new();
        for (code, rule) in &value.status_retry {
            out += &format!(".with_status_retry({code}, '{rule}')");
        }
        for kind in Transport::ALL.map(Transport::name) {
            if let Some(rule) = value.transport_retry.get(kind) {
                out += &format!(".with_transport_retry('{kind}', '{rule}')");
            }
        }
        for method in METHODS {
            if let Some(&yes) = value.idempotent_methods.get(method) {
                let yes = bool_repr(yes);
                out += &format!(".with_method_idempotent('{method}', {yes})");
            }
        }
        if !value.quota_403_as_rate_limit {
            out += ".with_quota_403_as_rate_limit(False)";
        }
        out
    }
}

fn opt_secs_repr(ms: Option<u64>) -> String {
    ms.map_or_else(|| "None".to_owned(), |ms| format!("{:?}", ms_to_secs(ms)))
}

methods!({
    impl PyPolicy {
        /// Attempts in all, the first included.
        getter!(max_attempts(self) -> u32 = self.0.max_attempts());
        /// The first backoff window, in seconds.
        getter!(base(self) -> f64 = ms_to_secs(self.0.backoff().base_ms()));
        /// The largest backoff window, in seconds.
        getter!(cap(self) -> f64 = ms_to_secs(self.0.backoff().cap_ms()));
        /// ``"full"``, ``"equal"``, ``"decorrelated"`` or ``"none"``.
        getter!(jitter(self) -> &'static str = self.0.backoff().jitter().name());
        /// The limit on the operation's total time in seconds, or ``None``.
        getter!(deadline(self) -> Option<f64> = self.0.deadline_ms().map(ms_to_secs));
        /// The most added at random to a server's wait, in seconds, or ``None`` for
        /// ``min(window, 1 s)``.
        getter!(spread(self) -> Option<f64> = self.0.spread_ms().map(ms_to_secs));
        /// The header the idempotency key is sent in.
        getter!(idempotency_header(self) -> &str = self.0.idempotency_header());
        /// Whether server waits are measured from the response's ``Date``.
        getter!(use_date_header(self) -> bool = self.0.use_date_header());
        /// Whether the server honours idempotency keys (a request sent with recuo's own key then
        /// counts as idempotent).
        getter!(server_honours_keys(self) -> bool = self.0.server_honours_keys());
        /// Whether a 403 whose rate-limit headers say the quota is spent counts as a 429.
        getter!(quota_403_as_rate_limit(self) -> bool = self.0.rules().quota_403_is_rate_limit);
        /// The policy of “Como repetir requisições com backoff exponencial (retry)”: 5 attempts,
        /// 0.2 s base, 5 s cap, full jitter, no deadline.
        preset!(guide_a = PyPolicy(Policy::guide_a()));
        /// The policy of “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”: 5 attempts
        /// (at most 4 retries), 1 s base, 8 s cap, full jitter, 30 s deadline.
        preset!(guide_b = PyPolicy(Policy::guide_b()));
        /// The HTTP adapters' default: ``guide_b()``'s policy (5 attempts, 1 s base, 8 s cap, full
        /// jitter, a 30 s deadline, so that ``Retry-After: 3600`` gives up at once), with an
        /// HTTP-date wait measured from the response's own ``Date``.
        preset!(adapters = PyPolicy(Policy::adapters()));
        /// For one request a person waits on: the adapters' policy, whose 30 s deadline gives up
        /// at once on a server wait that would not fit, saying when a retry would be allowed.
        preset!(interactive = PyPolicy(Policy::interactive()));
        /// For the requests of a batch: the adapters' policy with no deadline of its own, so
        /// that the batch's deadline is the one that counts (``run_batch`` gives each request
        /// what is left of it) and a per-minute limiter's ``Retry-After: 60`` is waited. Outside
        /// a batch, give it a deadline.
        preset!(batch = PyPolicy(Policy::batch()));

        #[new]
        #[pyo3(
            signature = (*, max_attempts = 5, base = 200, cap = 5000, jitter = Jitter::Full, deadline = None, spread = None, idempotency_header = "Idempotency-Key".to_owned(), use_date_header = false, server_honours_keys = false),
            text_signature = "(*, max_attempts=5, base=0.2, cap=5.0, jitter='full', deadline=None, spread=None, idempotency_header='Idempotency-Key', use_date_header=False, server_honours_keys=False)"
        )]
        fn new(
            py: Python<'_>,
            #[pyo3(from_py_with = max_attempts_arg)] max_attempts: u32,
            #[pyo3(from_py_with = base_arg)] base: u64,
            #[pyo3(from_py_with = cap_arg)] cap: u64,
            #[pyo3(from_py_with = jitter_arg)] jitter: Jitter,
            #[pyo3(from_py_with = deadline_arg)] deadline: Option<u64>,
            #[pyo3(from_py_with = spread_arg)] spread: Option<u64>,
            #[pyo3(from_py_with = header_arg)] idempotency_header: String,
            #[pyo3(from_py_with = use_date_header_arg)] use_date_header: bool,
            #[pyo3(from_py_with = server_honours_keys_arg)] server_honours_keys: bool,
        ) -> PyResult<Self> {
            let builder = Policy::builder()
                .max_attempts(max_attempts)
                .base(Duration::from_millis(base))
                .cap(Duration::from_millis(cap))
                .jitter(jitter)
                .deadline(deadline.map(Duration::from_millis))
                .spread(spread.map(Duration::from_millis))
                .idempotency_header(idempotency_header)
                .use_date_header(use_date_header)
                .server_honours_keys(server_honours_keys);
            Self::built(py, builder)
        }

        /// The policy a plain value describes: a mapping with the keys ``to_dict`` answers
        /// (``max_attempts``, ``base_ms``, ``cap_ms``, ``jitter``, ``deadline_ms``, ``spread_ms``,
        /// ``idempotency_header``, ``use_date_header``, ``server_honours_keys``,
        /// ``quota_403_as_rate_limit``, ``status_retry``, ``transport_retry``,
        /// ``idempotent_methods``), durations in whole milliseconds. A key left out takes
        /// ``Policy.guide_a()``'s value; the three maps list only rules that differ from the default (a status as an int
        /// or a decimal string).
        ///
        /// Raises ``TypeError`` when ``value`` is not a mapping and ``recuo.ConfigError``
        /// otherwise: ``invalid_value`` for an unknown key or a value of the wrong type (a string
        /// for a number, a negative or fractional duration), ``unknown_name`` for an unknown
        /// jitter, rule, transport failure, method or status, and the errors of ``Policy(...)``.
        #[classmethod]
        #[pyo3(signature = (value, /))]
        fn from_dict(_cls: &Bound<'_, PyType>, value: &Bound<'_, PyAny>) -> PyResult<Self> {
            // Read here rather than through `from_py_with`, whose errors would name the argument:
            // `TypeError` unless a mapping, else `invalid_value` with the core's message and why
            // for humans.
            let py = value.py();
            let plain: PolicyValue = crate::values::read_plain(value)?.map_err(|why| {
                let error = recuo::ConfigError::InvalidValue;
                config_error_saying(py, error, format!("{error} ({why})"))
            })?;
            Policy::from_value(&plain)
                .map(PyPolicy)
                .map_err(|e| config_error(py, e))
        }

        /// This policy as one plain value, every key written out (durations in milliseconds,
        /// ``None`` for no deadline or the default spread); the three maps list only rules that
        /// differ from the default, statuses as decimal strings and methods in capitals.
        /// ``Policy.from_dict(p.to_dict()) == p``.
        fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            crate::values::loads(py, &self.plain_text()?)
        }

        /// Pickles as ``Policy.from_dict(policy.to_dict())``.
        fn __reduce__<'py>(
            slf: &Bound<'py, Self>,
        ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
            let py = slf.py();
            let from_dict = py
                .get_type::<PyPolicy>()
                .getattr(pyo3::intern!(py, "from_dict"))?;
            Ok((from_dict, (slf.get().to_dict(py)?,)))
        }

        /// How ``status`` (400–599) is retried: ``"never"``, ``"if_idempotent"`` or
        /// ``"always"`` (for any method). ``recuo.ConfigError`` (``status_out_of_range``) for
        /// another status.
        fn status_retry(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = status_arg)] status: u32,
        ) -> PyResult<&'static str> {
            let rule = self.0.rules().rule_of(status);
            rule.map(RetryRule::name).map_err(|e| config_error(py, e))
        }

        /// A new policy retrying ``status`` (400–599) ``"never"``, ``"if_idempotent"`` or
        /// ``"always"`` (for any method). ``recuo.ConfigError`` (``status_out_of_range``) for
        /// another status.
        fn with_status_retry(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = status_arg)] status: u32,
            #[pyo3(from_py_with = rule_arg)] rule: RetryRule,
        ) -> PyResult<Self> {
            let mut rules = *self.0.rules();
            rules
                .set_status_rule(status, rule)
                .map_err(|e| config_error(py, e))?;
            self.with_rules(py, rules)
        }

        /// How the transport failure ``kind`` (``"connect"``, ``"tls"``, ``"timeout"``,
        /// ``"reset"`` or ``"other"``) is retried.
        fn transport_retry(&self, kind: &Bound<'_, PyAny>) -> PyResult<&'static str> {
            Ok(self
                .0
                .rules()
                .transport_rule(transport_arg(kind, "kind")?)
                .name())
        }

        /// A new policy retrying the transport failure ``kind`` ``"never"``,
        /// ``"if_idempotent"`` or ``"always"``.
        fn with_transport_retry(
            &self,
            py: Python<'_>,
            kind: &Bound<'_, PyAny>,
            #[pyo3(from_py_with = rule_arg)] rule: RetryRule,
        ) -> PyResult<Self> {
            let mut rules = *self.0.rules();
            rules.set_transport_rule(transport_arg(kind, "kind")?, rule);
            self.with_rules(py, rules)
        }

        /// Whether requests with ``method`` count as idempotent without a key.
        fn method_idempotent(
            &self,
            #[pyo3(from_py_with = method_name_arg)] method: String,
        ) -> bool {
            self.0.rules().idempotent_methods.contains(&method)
        }

        /// A new policy where requests with ``method`` (GET, HEAD, OPTIONS, TRACE, PUT, DELETE,
        /// POST, PATCH or CONNECT, in any case) count as idempotent without a key, or not.
        fn with_method_idempotent(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = method_name_arg)] method: String,
            #[pyo3(from_py_with = idempotent_arg)] idempotent: bool,
        ) -> PyResult<Self> {
            let mut rules = *self.0.rules();
            let methods = rules.idempotent_methods;
            rules.idempotent_methods = if idempotent {
                // `method_name_arg` only lets known methods through.
                methods.with(&method).unwrap_or(methods)
            } else {
                methods.without(&method)
            };
            self.with_rules(py, rules)
        }

        /// A new policy with ``max_attempts`` attempts in all (at least 1), the rest unchanged.
        fn with_max_attempts(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = max_attempts_arg)] max_attempts: u32,
        ) -> PyResult<Self> {
            Self::built(py, self.0.to_builder().max_attempts(max_attempts))
        }

        /// A new policy where a 403 whose rate-limit headers say the quota is spent counts as a
        /// 429 (``True``, the default) or as the permanent error it says it is.
        fn with_quota_403_as_rate_limit(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = enabled_arg)] enabled: bool,
        ) -> PyResult<Self> {
            let mut rules = *self.0.rules();
            rules.quota_403_is_rate_limit = enabled;
            self.with_rules(py, rules)
        }

        /// A new policy saying whether the server honours idempotency keys: ``True`` makes a
        /// request sent with recuo's own key count as idempotent, so that its timeout, dropped
        /// connection or 500 is retried.
        fn with_server_honours_keys(
            &self,
            py: Python<'_>,
            #[pyo3(from_py_with = enabled_arg)] enabled: bool,
        ) -> PyResult<Self> {
            Self::built(py, self.0.to_builder().server_honours_keys(enabled))
        }

        fn __hash__(&self) -> PyResult<u64> {
            // Equal policies have the same plain form.
            let mut h = DefaultHasher::new();
            self.plain_text()?.hash(&mut h);
            Ok(h.finish())
        }

        fn __copy__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
            slf
        }

        fn __deepcopy__<'py>(slf: PyRef<'py, Self>, _memo: &Bound<'py, PyAny>) -> PyRef<'py, Self> {
            slf
        }

        fn __repr__(&self) -> String {
            let p = &self.0;
            format!(
                "Policy(max_attempts={}, base={:?}, cap={:?}, jitter='{}', deadline={}, spread={}, \
                 idempotency_header={}, use_date_header={}{}){}",
                p.max_attempts(),
                ms_to_secs(p.backoff().base_ms()),
                ms_to_secs(p.backoff().cap_ms()),
                p.backoff().jitter().name(),
                opt_secs_repr(p.deadline_ms()),
                opt_secs_repr(p.spread_ms()),
                crate::args::str_repr(p.idempotency_header()),
                bool_repr(p.use_date_header()),
                if p.server_honours_keys() {
                    ", server_honours_keys=True"
                } else {
                    ""
                },
                self.rule_changes(),
            )
        }
    }
});
