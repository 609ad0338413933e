//! The retry policy: an opaque handle with setters and getters.
//!
//! Guide A, named below, is “Como repetir requisições com backoff exponencial (retry)”
//! (<https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff>); guide B is
//! “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”.
//!
//! The handle keeps the values as the caller set them (so that `cap` may be set before `base`)
//! and, after every change, asks the core to build a [`recuo::Policy`] from them. The functions
//! that use a policy (`recuo_classify`, `recuo_attempts_new`, `recuo_retry`) answer the
//! core's configuration error when that build failed; `recuo_policy_validate` answers it on
//! demand. No rule is decided here: the defaults are the core's presets, the validation is the
//! core's `PolicyBuilder::build`.

use std::time::Duration;

use recuo::{ConfigError, Jitter, Policy, PolicyBuilder, PolicyValue, RetryRule, Rules};

use crate::prelude::*;

/// How backoff delays are drawn from the window `w = min(cap, base · 2^n)`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_jitter {
    /// Uniform in `[0, w]` (the default; guides A and B).
    RECUO_JITTER_FULL = 1,
    /// `w/2` plus uniform in `[0, w − w/2]`.
    RECUO_JITTER_EQUAL = 2,
    /// `min(cap, uniform[base, 3 · previous])`, `previous` starting at `base` (AWS).
    RECUO_JITTER_DECORRELATED = 3,
    /// Exactly `w`: for tests, and for callers who add their own spread.
    RECUO_JITTER_NONE = 4,
}

c_enum!(recuo_jitter: Jitter {
    RECUO_JITTER_FULL = [Jitter::Full] => c"full",
    RECUO_JITTER_EQUAL = [Jitter::Equal] => c"equal",
    RECUO_JITTER_DECORRELATED = [Jitter::Decorrelated] => c"decorrelated",
    RECUO_JITTER_NONE = [Jitter::None] => c"none",
});

/// When an HTTP status or a transport failure is retried (the classification's sets).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_status_rule {
    /// Never retried: the verdict gives up (`permanent`, or `tls` for a TLS failure).
    RECUO_RULE_NEVER = 1,
    /// Retried when the request is idempotent (an idempotent method, or an idempotency key);
    /// otherwise the verdict gives up with `not_idempotent`. Default for 500, 502, 504, other
    /// 5xx and for the `timeout`, `reset` and `other` transport failures.
    RECUO_RULE_IF_IDEMPOTENT = 2,
    /// Retried for any method: the request was refused or never sent. Default for 429, 503
    /// and `connect`.
    RECUO_RULE_ALWAYS = 3,
}

c_enum!(recuo_status_rule: RetryRule {
    RECUO_RULE_NEVER = [RetryRule::Never] => c"never",
    RECUO_RULE_IF_IDEMPOTENT = [RetryRule::IfIdempotent] => c"if_idempotent",
    RECUO_RULE_ALWAYS = [RetryRule::Always] => c"always",
});

/// A retry policy: attempts, backoff, deadline, server-wait spread, the classification and
/// the idempotency header. An opaque handle backed by the values as set plus the
/// `recuo::Policy` the core builds from them.
///
/// Create it with `recuo_policy_new` (guide A's defaults), `recuo_policy_new_guide_b` or
/// `recuo_policy_new_adapters` (the HTTP adapters' default),
/// change it with the `recuo_policy_set_*` functions, release it with `recuo_policy_free`.
/// Every function that uses a policy reads it during the call only (the state machine and
/// `recuo_retry` keep their own copy), so a policy may be changed or freed afterwards. Several
/// threads may use one policy at once, as long as no setter runs meanwhile.
#[derive(Debug, Clone)]
pub struct recuo_policy {
    /// The values as set, each accepted by the core — but for the backoff's base and cap,
    /// which may be refused together (they are checked where the policy is used), and the
    /// classification, changed in place: both kept below.
    set: Policy,
    base_ms: u64,
    cap_ms: u64,
    rules: Rules,
    built: Result<Policy, ConfigError>,
}

impl recuo_policy {
    /// The handle of the core's policy `p`.
    pub(crate) fn from_core(p: Policy) -> Self {
        recuo_policy {
            base_ms: p.backoff().base_ms(),
            cap_ms: p.backoff().cap_ms(),
            rules: *p.rules(),
            set: p.clone(),
            built: Ok(p),
        }
    }

    /// The core's policy, or its configuration error.
    pub(crate) fn policy(&self) -> Result<&Policy, recuo_status> {
        self.built.as_ref().map_err(|e| (*e).into())
    }

    /// Changes the values with `change`, then has the core build (and so validate) them.
    fn update(&mut self, change: impl FnOnce(&mut Self)) -> recuo_status {
        change(self);
        let ms = Duration::from_millis;
        let set = self.set.to_builder().rules(self.rules);
        self.built = set.base(ms(self.base_ms)).cap(ms(self.cap_ms)).build();
        RECUO_OK
    }

    /// Changes the values that the core checks one by one with `change`: refused as the core
    /// refuses them (then nothing changes), else [`update`](Self::update)d.
    fn change(&mut self, change: impl FnOnce(PolicyBuilder) -> PolicyBuilder) -> recuo_status {
        match change(self.set.to_builder()).build() {
            Ok(set) => self.update(|p| p.set = set),
            Err(e) => e.into(),
        }
    }
}

/// Reads the policy behind `policy` with `body`; `fallback` when `policy` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle.
unsafe fn read_policy<R: crate::panic::PanicFallback>(
    policy: *const recuo_policy,
    fallback: R,
    body: impl FnOnce(&recuo_policy) -> R,
) -> R {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { policy.as_ref() }.map_or(fallback, body))
}

/// Changes the values of the policy behind `policy` with `change`, then has the core build
/// them: `RECUO_OK`, or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
unsafe fn set(policy: *mut recuo_policy, change: impl FnOnce(&mut recuo_policy)) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with(policy, |p| p.update(change)) }
}

/// [`recuo_policy::change`] on the policy behind `policy`, or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// As [`set`].
unsafe fn change(
    policy: *mut recuo_policy,
    change: impl FnOnce(PolicyBuilder) -> PolicyBuilder,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with(policy, |p| p.change(change)) }
}

/// A new policy with guide A's defaults: 5 attempts, base 200 ms, cap 5000 ms, full jitter,
/// no deadline, server waits spread by `uniform[0, min(window(n), 1000 ms)]`, the
/// default classification table, the key sent as `Idempotency-Key`, the response's `Date`
/// not used as "now". Free it with `recuo_policy_free`. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_policy_new() -> *mut recuo_policy {
    boundary(|| Box::into_raw(Box::new(recuo_policy::from_core(Policy::guide_a()))))
}

/// A new policy with guide B's values: guide A's, but base 1000 ms, cap 8000 ms and a
/// 30000 ms deadline (5 attempts: at most 4 retries). Free it with `recuo_policy_free`. NULL
/// only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_policy_new_guide_b() -> *mut recuo_policy {
    boundary(|| Box::into_raw(Box::new(recuo_policy::from_core(Policy::guide_b()))))
}

/// A new policy with the HTTP adapters' default (what `recuo_curl_perform` users get when
/// they have no policy of their own in mind): guide B's values (5 attempts, base 1000 ms, cap
/// 8000 ms, a 30000 ms deadline, so that `Retry-After: 3600` gives up at once), with the
/// response's valid `Date` header taken as "now" for its server waits, so that a client whose
/// clock is wrong still waits what the server meant. Free it with `recuo_policy_free`. NULL
/// only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_policy_new_adapters() -> *mut recuo_policy {
    boundary(|| Box::into_raw(Box::new(recuo_policy::from_core(Policy::adapters()))))
}

/// A new policy for one request a person waits on: the adapters' default (guide B's values,
/// the response's `Date` taken as "now"), whose 30000 ms deadline gives up at once on a server
/// wait that would not fit, saying when a retry would be allowed. Free it with
/// `recuo_policy_free`. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_policy_new_interactive() -> *mut recuo_policy {
    boundary(|| Box::into_raw(Box::new(recuo_policy::from_core(Policy::interactive()))))
}

/// A new policy for the requests of a batch: the adapters' default with no deadline of its
/// own, so that the batch's deadline (`recuo_batch_run`'s `deadline_ms`, or the queue's) is
/// the one that counts — each request gets what is left of it, and a per-minute limiter's
/// `Retry-After: 60` is waited rather than given up on. Outside a batch, give it a deadline.
/// Free it with `recuo_policy_free`. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_policy_new_batch() -> *mut recuo_policy {
    boundary(|| Box::into_raw(Box::new(recuo_policy::from_core(Policy::batch()))))
}

/// The most bytes of JSON `recuo_policy_from_json` reads: 64 KiB.
pub const RECUO_POLICY_JSON_MAX: usize = 65536;

/// A policy as one value: its plain form, JSON text, read by the core (every language reads
/// and writes the same form). For a policy that comes from a file, another process or another
/// language; in C code, the setters are the typed way.
///
/// The `len` bytes at `json` must be one JSON object (UTF-8, at most
/// `RECUO_POLICY_JSON_MAX` bytes; no NUL terminator needed). Every field is optional: a field
/// left out takes guide A's value.
///
/// * `max_attempts`: attempts in all, the first included (at least 1; default 5).
/// * `base_ms`, `cap_ms`: the first and the largest backoff window, in milliseconds (defaults
///   200 and 5000; the cap not below the base).
/// * `jitter`: `"full"` (the default), `"equal"`, `"decorrelated"` or `"none"`.
/// * `deadline_ms`: the operation's whole time from the start of its first attempt, in
///   milliseconds; `null` (the default): no deadline.
/// * `spread_ms`: the most added at random to a server's wait, in milliseconds; `null` (the
///   default): the smaller of the backoff window and 1000 ms.
/// * `idempotency_header`: the header that carries the idempotency key (default
///   `"Idempotency-Key"`).
/// * `use_date_header` (default false): measure an HTTP-date wait from the response's own
///   `Date`. `server_honours_keys` (default false): a request sent with recuo's own key
///   counts as idempotent. `quota_403_as_rate_limit` (default true): a 403 whose rate-limit
///   headers say the quota is spent counts as a 429.
/// * `status_retry`: statuses (400–599, written as strings) whose rule changes, each to
///   `"never"`, `"if_idempotent"` or `"always"`, e.g. `{"408": "always"}`.
/// * `transport_retry`: transport failures (`"connect"`, `"tls"`, `"timeout"`, `"reset"`,
///   `"other"`) whose rule changes, to the same rules.
/// * `idempotent_methods`: methods whose idempotency changes, e.g. `{"POST": true}` (any
///   ASCII case).
///
/// For example `{"max_attempts": 3, "base_ms": 500, "deadline_ms": 10000}`.
///
/// On success `*out` receives a new policy (free it with `recuo_policy_free`). Returns
/// `RECUO_OK`; with `*out` left untouched: `RECUO_ERR_INVALID_VALUE` (not JSON, not an object, a
/// field recuo does not know, a value of the wrong type: a string for a number, a negative
/// or fractional number, `null` where a number must be), `RECUO_ERR_UNKNOWN_NAME` (a jitter,
/// rule, transport failure, method or status that is no name recuo knows),
/// `RECUO_ERR_STATUS_OUT_OF_RANGE` (a status outside 400–599), the setters' errors
/// (`RECUO_ERR_ZERO_ATTEMPTS`, `RECUO_ERR_CAP_BELOW_BASE`, `RECUO_ERR_INVALID_HEADER_NAME`),
/// `RECUO_ERR_NOT_UTF8`, `RECUO_ERR_LENGTH_TOO_LARGE` (above `RECUO_POLICY_JSON_MAX`),
/// `RECUO_ERR_NULL_ARGUMENT` (`out`, or `json` with `len > 0`).
///
/// # Safety
/// `json` must point to `len` readable bytes (or be NULL with `len == 0`); `out` must be NULL
/// or point to a writable `recuo_policy *`.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_from_json(
    json: *const c_char,
    len: usize,
    out: *mut *mut recuo_policy,
) -> recuo_status {
    // SAFETY: the caller vouches for `len` readable bytes at `json`, and for `out`.
    unsafe {
        ptr::make(out, || {
            if len > RECUO_POLICY_JSON_MAX {
                return Err(RECUO_ERR_LENGTH_TOO_LARGE);
            }
            // JSON that is no `PolicyValue` is an invalid value; then the core's checks.
            let value: PolicyValue =
                serde_json::from_str(ptr::text(json, len)?).map_err(|_| RECUO_ERR_INVALID_VALUE)?;
            Ok(recuo_policy::from_core(Policy::from_value(&value)?))
        })
    }
}

/// Releases a policy. NULL is accepted and ignored. State machines made from it keep their
/// own copy and stay usable.
///
/// # Safety
/// `policy` must be NULL or come from `recuo_policy_new*` and not have been freed; it must not
/// be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_free(policy: *mut recuo_policy) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(policy) })
}

/// Checks the policy as the core will when it is used: `RECUO_OK`, or the configuration
/// error (`RECUO_ERR_CAP_BELOW_BASE` when the cap is below the base), or
/// `RECUO_ERR_NULL_ARGUMENT`. A setter that refuses its own value already said so; what only
/// shows once every value is set (the cap against the base) shows here, and in every function
/// that uses the policy.
///
/// # Safety
/// `policy` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_validate(policy: *const recuo_policy) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_ref(policy, |p| p.policy().map(drop)) }
}

/// Sets the most attempts an operation gets, the first included. Returns `RECUO_OK`;
/// `RECUO_ERR_ZERO_ATTEMPTS` for 0 (the policy is left unchanged); `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_max_attempts(
    policy: *mut recuo_policy,
    max_attempts: u32,
) -> recuo_status {
    // SAFETY: forwarded from the caller. The core decides what is a valid number of attempts.
    unsafe { change(policy, |b| b.max_attempts(max_attempts)) }
}

/// Sets the first backoff window, in milliseconds. Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`; a base above the cap is reported by `recuo_policy_validate`
/// and where the policy is used.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_base_ms(
    policy: *mut recuo_policy,
    base_ms: u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { set(policy, |p| p.base_ms = base_ms) }
}

/// Sets the largest backoff window (the cap), in milliseconds. It never shortens a server's
/// wait. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`; a cap below the base is
/// reported by `recuo_policy_validate` and where the policy is used.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_cap_ms(
    policy: *mut recuo_policy,
    cap_ms: u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { set(policy, |p| p.cap_ms = cap_ms) }
}

/// Sets the jitter mode: one of the `recuo_jitter` constants. Returns `RECUO_OK`;
/// `RECUO_ERR_INVALID_ENUM` for another number (the policy is left unchanged);
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_jitter(
    policy: *mut recuo_policy,
    jitter: u32,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with(policy, |p| {
            recuo_jitter::core_of(jitter).map(|j| p.change(|b| b.jitter(j)))
        })
    }
}

/// Limits the operation's total time to `deadline_ms` milliseconds from the start of its
/// first attempt: a retry whose delay would end after it is not made (the operation gives up
/// with `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE`). Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_deadline_ms(
    policy: *mut recuo_policy,
    deadline_ms: u64,
) -> recuo_status {
    let deadline = Duration::from_millis(deadline_ms);
    // SAFETY: forwarded from the caller.
    unsafe { change(policy, |b| b.deadline(Some(deadline))) }
}

/// Removes the deadline (the default of guide A). Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_clear_deadline(policy: *mut recuo_policy) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { change(policy, |b| b.deadline(None)) }
}

/// Fixes the spread added to a server's wait: the delay is `W + uniform[0, spread_ms]`.
/// Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_spread_ms(
    policy: *mut recuo_policy,
    spread_ms: u64,
) -> recuo_status {
    let spread = Duration::from_millis(spread_ms);
    // SAFETY: forwarded from the caller.
    unsafe { change(policy, |b| b.spread(Some(spread))) }
}

/// Restores the default spread, `min(window(n), 1000 ms)` for retry index `n`. Returns
/// `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_clear_spread(policy: *mut recuo_policy) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { change(policy, |b| b.spread(None)) }
}

/// Whether a valid `Date` header in the response is "now" when server waits are computed
/// (which makes them immune to the client's clock skew). Default false. Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_use_date_header(
    policy: *mut recuo_policy,
    use_date_header: bool,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { change(policy, |b| b.use_date_header(use_date_header)) }
}

/// Says whether the server honours idempotency keys (default false): when it does, a request
/// that carries recuo's own key counts as idempotent whatever its method, so a POST whose
/// outcome is unknown (a timeout, a reset, a 500) may be retried; when it does not, only the
/// method (or a key of the caller's own) makes a request idempotent. Read by
/// `recuo_plan_request` and `recuo_attempts_set_plan`. Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_server_honours_keys(
    policy: *mut recuo_policy,
    yes: bool,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { change(policy, |b| b.server_honours_keys(yes)) }
}

/// Sets the name of the header the idempotency key is sent in (default `Idempotency-Key`):
/// the `len` bytes at `name`, which must form an HTTP token (RFC 9110 section 5.6.2). recuo
/// does not send headers itself; read the name back with `recuo_policy_idempotency_header`.
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_HEADER_NAME` for an empty name or one that is not a
/// token, `RECUO_ERR_NOT_UTF8` for bytes that are not UTF-8 (the policy is left unchanged in
/// both cases); `RECUO_ERR_NULL_ARGUMENT` when `policy` is NULL, or `name` is NULL with
/// `len > 0`; `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread; `name` must point to
/// `len` readable bytes (or be NULL with `len == 0`).
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_idempotency_header(
    policy: *mut recuo_policy,
    name: *const c_char,
    len: usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with(policy, |p| -> Result<_, recuo_status> {
            // SAFETY: the caller vouches for `len` readable bytes at `name`.
            let name = ptr::text(name, len)?.to_owned();
            // The core decides what a header name may be.
            Ok(p.change(|b| b.idempotency_header(name)))
        })
    }
}

/// Sets when the HTTP status `status` (400–599) is retried: `rule` is one of the
/// `recuo_status_rule` constants. The defaults: 429 and 503 ALWAYS; 500,
/// 502, 504 and the other 5xx but 501 and 505 IF_IDEMPOTENT; everything else NEVER. Statuses
/// below 400 are successes whatever their rule; a 403 whose rate-limit headers say the quota
/// is spent is a 429 while `recuo_policy_set_quota_403_is_rate_limit` is on.
///
/// Returns `RECUO_OK`; `RECUO_ERR_STATUS_OUT_OF_RANGE` for a status outside 400–599 (the same
/// range in every language),
/// `RECUO_ERR_INVALID_ENUM` for an unknown rule (the policy is left unchanged in both cases);
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_status_retry(
    policy: *mut recuo_policy,
    status: u16,
    rule: u32,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with(policy, |p| -> Result<_, recuo_status> {
            let (rule, mut rules) = (recuo_status_rule::core_of(rule)?, p.rules);
            let set = rules.set_status_rule(u32::from(status), rule);
            set.map_err(|_| RECUO_ERR_STATUS_OUT_OF_RANGE)?;
            Ok(p.update(|p| p.rules = rules))
        })
    }
}

/// Sets when the transport failure `transport` (a `recuo_transport` constant) is retried:
/// `rule` is one of the `recuo_status_rule` constants. The defaults: `connect` ALWAYS (the
/// request was never sent); `timeout`, `reset`, `other` IF_IDEMPOTENT; `tls` NEVER (retrying
/// cannot fix a certificate, and would hide an interception).
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` for an unknown transport or rule (the policy
/// is left unchanged); `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_transport_retry(
    policy: *mut recuo_policy,
    transport: u32,
    rule: u32,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with(policy, |p| -> Result<_, recuo_status> {
            let t = recuo_transport::core_of(transport)?;
            let rule = recuo_status_rule::core_of(rule)?;
            Ok(p.update(|p| p.rules.set_transport_rule(t, rule)))
        })
    }
}

/// Sets whether requests with the HTTP method named by the `len` bytes at `method` are
/// idempotent (safe to repeat without an idempotency key). The method is one of GET, HEAD,
/// OPTIONS, TRACE, PUT, DELETE, POST, PATCH, CONNECT, in any ASCII case; by default the first
/// six are idempotent. Any other method is never idempotent unless the request carries a key.
///
/// Returns `RECUO_OK`; `RECUO_ERR_UNKNOWN_METHOD` for another method, `RECUO_ERR_NOT_UTF8`
/// (the policy is left unchanged in both cases); `RECUO_ERR_NULL_ARGUMENT`;
/// `RECUO_ERR_LENGTH_TOO_LARGE`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread; `method` must point
/// to `len` readable bytes (or be NULL with `len == 0`).
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_method_idempotent(
    policy: *mut recuo_policy,
    method: *const c_char,
    len: usize,
    idempotent: bool,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with(policy, |p| -> Result<_, recuo_status> {
            // SAFETY: the caller vouches for `len` readable bytes at `method`.
            let method = ptr::text(method, len)?;
            let methods = p.rules.idempotent_methods;
            let with = methods.with(method).ok_or(RECUO_ERR_UNKNOWN_METHOD)?;
            let without = methods.without(method);
            let set = if idempotent { with } else { without };
            Ok(p.update(|p| p.rules.idempotent_methods = set))
        })
    }
}

/// Whether a 403 whose rate-limit headers say the quota is spent (`X-RateLimit-Remaining: 0`,
/// or `RateLimit` with `r=0`) is treated as a 429, with its reset as the server's wait
/// (default true: GitHub answers so). Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `policy` must be NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_set_quota_403_is_rate_limit(
    policy: *mut recuo_policy,
    yes: bool,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { set(policy, |p| p.rules.quota_403_is_rate_limit = yes) }
}

/// The most attempts (as set). 0 when `policy` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_max_attempts(policy: *const recuo_policy) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe { read_policy(policy, 0, |p| p.set.max_attempts()) }
}

/// The base, in milliseconds (as set). 0 when `policy` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_base_ms(policy: *const recuo_policy) -> u64 {
    // SAFETY: forwarded from the caller.
    unsafe { read_policy(policy, 0, |p| p.base_ms) }
}

/// The cap, in milliseconds (as set). 0 when `policy` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_cap_ms(policy: *const recuo_policy) -> u64 {
    // SAFETY: forwarded from the caller.
    unsafe { read_policy(policy, 0, |p| p.cap_ms) }
}

/// The jitter mode: a `recuo_jitter` constant. 0 when `policy` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_jitter(policy: *const recuo_policy) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe {
        read_policy(policy, 0, |p| {
            recuo_jitter::from_core(p.set.backoff().jitter()) as u32
        })
    }
}

/// Whether the policy has a deadline; when it has, and `deadline_ms_out` is not NULL, stores
/// it there. False when `policy` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle; `deadline_ms_out` NULL or a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_deadline_ms(
    policy: *const recuo_policy,
    deadline_ms_out: *mut u64,
) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { optional_ms(policy, deadline_ms_out, Policy::deadline_ms) }
}

/// Whether the policy has a fixed spread (`recuo_policy_set_spread_ms`); when it has, and
/// `spread_ms_out` is not NULL, stores it there. False when `policy` is NULL, and for the
/// default spread `min(window(n), 1000 ms)`.
///
/// # Safety
/// `policy` must be NULL or a live handle; `spread_ms_out` NULL or a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_spread_ms(
    policy: *const recuo_policy,
    spread_ms_out: *mut u64,
) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { optional_ms(policy, spread_ms_out, Policy::spread_ms) }
}

/// Whether the policy behind `policy` has the value `value` reads; when it has, stores it in
/// `out` (when not NULL). False when `policy` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle; `out` NULL or a writable `uint64_t`.
unsafe fn optional_ms(
    policy: *const recuo_policy,
    out: *mut u64,
    value: impl FnOnce(&Policy) -> Option<u64>,
) -> bool {
    // SAFETY: the caller vouches for NULL or a writable u64.
    let put = |ms: &u64| unsafe { ptr::put(out, *ms) };
    // SAFETY: forwarded from the caller.
    unsafe { read_policy(policy, false, |p| value(&p.set).inspect(put).is_some()) }
}

/// Whether the response's `Date` is "now" for server waits. False when `policy` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_use_date_header(policy: *const recuo_policy) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { read_policy(policy, false, |p| p.set.use_date_header()) }
}

/// Whether the server honours idempotency keys (`recuo_policy_set_server_honours_keys`).
/// False when `policy` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_server_honours_keys(policy: *const recuo_policy) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { read_policy(policy, false, |p| p.set.server_honours_keys()) }
}

/// Whether a 403 with a spent quota is a 429. False when `policy` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_quota_403_is_rate_limit(policy: *const recuo_policy) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe { read_policy(policy, false, |p| p.rules.quota_403_is_rate_limit) }
}

/// Writes the idempotency header's name into `buf` (`len` bytes), as `recuo_status_message`
/// writes text: NUL-terminated, `*written` (when not NULL) = its length without the NUL.
/// Returns `RECUO_OK`, `RECUO_ERR_BUFFER_TOO_SMALL` (truncated, still terminated),
/// `RECUO_ERR_NULL_ARGUMENT` when `policy` or `buf` is NULL.
///
/// # Safety
/// `policy` must be NULL or a live handle; `buf` must point to `len` writable bytes;
/// `written` must be NULL or point to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_idempotency_header(
    policy: *const recuo_policy,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        read_policy(policy, recuo_status::RECUO_ERR_NULL_ARGUMENT, |p| {
            // SAFETY: forwarded from the caller.
            write_text(buf, len, written, p.set.idempotency_header())
        })
    }
}

/// Writes the policy as one value — its plain form, one JSON object on one line — into `buf`
/// (`buf_len` bytes), NUL-terminated; `*written` (when not NULL) receives its length without
/// the NUL. What `recuo_policy_from_json` reads back into the same policy, and what every
/// language writes for it.
///
/// Every field is written (see `recuo_policy_from_json` for their meaning): `max_attempts`,
/// `base_ms`, `cap_ms`, `jitter`, `deadline_ms` and `spread_ms` (`null` when none),
/// `idempotency_header`, `use_date_header`, `server_honours_keys`, `quota_403_as_rate_limit`;
/// the three maps `status_retry`, `transport_retry` and `idempotent_methods` list only the
/// rules that differ from the default classification (statuses as strings, methods in
/// capitals), so guide A's policy writes them empty.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written, cut at a character
/// boundary and NUL-terminated: no longer a JSON object — call again with a larger buffer);
/// with nothing written: `RECUO_ERR_NULL_ARGUMENT` (`policy` or `buf`),
/// `RECUO_ERR_LENGTH_TOO_LARGE`, or the policy's configuration error (a cap set below the
/// base: `RECUO_ERR_CAP_BELOW_BASE`).
///
/// # Safety
/// `policy` must be NULL or a live handle; `buf` must point to `buf_len` writable bytes;
/// `written` must be NULL or point to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_to_json(
    policy: *const recuo_policy,
    buf: *mut c_char,
    buf_len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_ref(policy, |p| {
            if buf.is_null() {
                return Err(RECUO_ERR_NULL_ARGUMENT);
            }
            if buf_len > isize::MAX as usize {
                return Err(RECUO_ERR_LENGTH_TOO_LARGE);
            }
            // A struct of numbers, strings, booleans and maps keyed by strings: always JSON.
            let json = serde_json::to_string(&p.policy()?.to_value())
                .expect("a PolicyValue is always JSON");
            // SAFETY: forwarded from the caller.
            Ok(write_text(buf, buf_len, written, &json))
        })
    }
}

/// The rule for the HTTP status `status`: a `recuo_status_rule` constant. 0 when `policy` is
/// NULL or `status` is outside 400–599.
///
/// # Safety
/// `policy` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_status_retry(
    policy: *const recuo_policy,
    status: u16,
) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe {
        read_policy(policy, 0, |p| {
            let rule = p.rules.rule_of(status.into());
            rule.map_or(0, |r| recuo_status_rule::from_core(r) as u32)
        })
    }
}

/// The rule for the transport failure `transport` (a `recuo_transport` constant): a
/// `recuo_status_rule` constant. 0 when `policy` is NULL or `transport` is no constant.
///
/// # Safety
/// `policy` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_transport_retry(
    policy: *const recuo_policy,
    transport: u32,
) -> u32 {
    // SAFETY: forwarded from the caller.
    unsafe {
        read_policy(policy, 0, |p| {
            let Some(t) = recuo_transport::from_code(transport) else {
                return 0;
            };
            recuo_status_rule::from_core(p.rules.transport_rule(t.to_core())) as u32
        })
    }
}

/// Whether the method named by the `len` bytes at `method` is idempotent under this policy
/// (ASCII case ignored). False when `policy` is NULL, for NULL `method` with `len > 0`, for
/// text that is not UTF-8 and for methods recuo does not know.
///
/// # Safety
/// `policy` must be NULL or a live handle; `method` must point to `len` readable bytes (or be
/// NULL with `len == 0`).
#[no_mangle]
pub unsafe extern "C" fn recuo_policy_method_idempotent(
    policy: *const recuo_policy,
    method: *const c_char,
    len: usize,
) -> bool {
    // SAFETY: forwarded from the caller.
    unsafe {
        read_policy(policy, false, |p| {
            // SAFETY: the caller vouches for `len` readable bytes at `method`.
            ptr::text(method, len).is_ok_and(|m| p.rules.idempotent_methods.contains(m))
        })
    }
}

/// The name of the `recuo_jitter` constant `jitter` (`"full"`, `"equal"`, `"decorrelated"`,
/// `"none"`), or `"unknown"`. Static: never free it. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_jitter_name(jitter: u32) -> *const c_char {
    recuo_jitter::name_of(jitter)
}

/// The name of the `recuo_status_rule` constant `rule` (`"never"`, `"if_idempotent"`,
/// `"always"`), or `"unknown"`. Static: never free it. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_status_rule_name(rule: u32) -> *const c_char {
    recuo_status_rule::name_of(rule)
}

#[cfg(test)]
mod tests {
    use super::*;
    use recuo::MethodSet;

    fn new() -> *mut recuo_policy {
        recuo_policy_new()
    }

    #[test]
    fn defaults_are_the_core_presets() {
        let a = new();
        let b = recuo_policy_new_guide_b();
        // SAFETY: live handles.
        unsafe {
            assert_eq!((*a).policy(), Ok(&Policy::guide_a()));
            assert_eq!((*b).policy(), Ok(&Policy::guide_b()));
            assert_eq!(recuo_policy_max_attempts(a), 5);
            assert_eq!(
                (recuo_policy_base_ms(b), recuo_policy_cap_ms(b)),
                (1000, 8000)
            );
            let mut d = 0;
            assert!(recuo_policy_deadline_ms(b, &mut d) && d == 30_000);
            assert!(!recuo_policy_deadline_ms(a, &mut d));
            recuo_policy_free(a);
            recuo_policy_free(b);
        }
    }

    #[test]
    fn the_adapters_default_and_the_servers_keys() {
        let p = recuo_policy_new_adapters();
        // SAFETY: a live handle.
        unsafe {
            assert_eq!((*p).policy(), Ok(&Policy::adapters()));
            assert!(recuo_policy_use_date_header(p));
            assert!(!recuo_policy_server_honours_keys(p));
            assert_eq!(recuo_policy_set_server_honours_keys(p, true), RECUO_OK);
            assert!(recuo_policy_server_honours_keys(p));
            let honours = Policy::adapters()
                .to_builder()
                .server_honours_keys(true)
                .build()
                .unwrap();
            assert_eq!((*p).policy(), Ok(&honours));
            assert_eq!(
                recuo_policy_set_server_honours_keys(std::ptr::null_mut(), true),
                RECUO_ERR_NULL_ARGUMENT
            );
            assert!(!recuo_policy_server_honours_keys(std::ptr::null()));
            recuo_policy_free(p);
        }
    }

    #[test]
    fn the_built_policy_follows_every_setter() {
        let p = new();
        // SAFETY: a live handle and live strings.
        unsafe {
            assert_eq!(recuo_policy_set_max_attempts(p, 7), RECUO_OK);
            assert_eq!(recuo_policy_set_base_ms(p, 10), RECUO_OK);
            assert_eq!(recuo_policy_set_cap_ms(p, 40), RECUO_OK);
            assert_eq!(recuo_policy_set_jitter(p, 4), RECUO_OK);
            assert_eq!(recuo_policy_set_deadline_ms(p, 900), RECUO_OK);
            assert_eq!(recuo_policy_set_spread_ms(p, 5), RECUO_OK);
            assert_eq!(recuo_policy_set_use_date_header(p, true), RECUO_OK);
            let h = b"X-Key";
            assert_eq!(
                recuo_policy_set_idempotency_header(p, h.as_ptr().cast(), 5),
                RECUO_OK
            );
            assert_eq!(recuo_policy_set_status_retry(p, 408, 3), RECUO_OK);
            assert_eq!(recuo_policy_set_status_retry(p, 503, 2), RECUO_OK);
            assert_eq!(recuo_policy_set_transport_retry(p, 2, 3), RECUO_OK);
            let post = b"post";
            assert_eq!(
                recuo_policy_set_method_idempotent(p, post.as_ptr().cast(), 4, true),
                RECUO_OK
            );
            assert_eq!(recuo_policy_set_quota_403_is_rate_limit(p, false), RECUO_OK);
            let built = (*p).policy().unwrap().clone();
            let rules = Rules {
                retry_any_method: Rules::DEFAULT.retry_any_method.with(408).without(503),
                retry_if_idempotent: Rules::DEFAULT.retry_if_idempotent.with(503),
                transport_any_method: Rules::DEFAULT
                    .transport_any_method
                    .with(recuo::Transport::Tls),
                idempotent_methods: MethodSet::IDEMPOTENT.with("POST").unwrap(),
                quota_403_is_rate_limit: false,
                ..Rules::DEFAULT
            };
            let ms = Duration::from_millis;
            let expected = Policy::builder()
                .max_attempts(7)
                .base(ms(10))
                .cap(ms(40))
                .jitter(Jitter::None)
                .deadline(Some(ms(900)))
                .spread(Some(ms(5)))
                .use_date_header(true)
                .idempotency_header("X-Key")
                .rules(rules)
                .build()
                .unwrap();
            assert_eq!(built, expected);
            assert_eq!(recuo_policy_clear_deadline(p), RECUO_OK);
            assert_eq!(recuo_policy_clear_spread(p), RECUO_OK);
            assert_eq!((*p).policy().unwrap().deadline_ms(), None);
            assert_eq!((*p).policy().unwrap().spread_ms(), None);
            recuo_policy_free(p);
        }
    }

    #[test]
    fn refused_values_leave_the_policy_unchanged() {
        let p = new();
        // SAFETY: a live handle and live strings.
        unsafe {
            assert_eq!(recuo_policy_set_max_attempts(p, 0), RECUO_ERR_ZERO_ATTEMPTS);
            assert_eq!(recuo_policy_set_jitter(p, 0), RECUO_ERR_INVALID_ENUM);
            assert_eq!(
                recuo_policy_set_idempotency_header(p, std::ptr::null(), 0),
                RECUO_ERR_INVALID_HEADER_NAME
            );
            let bad = b"Bad Name";
            assert_eq!(
                recuo_policy_set_idempotency_header(p, bad.as_ptr().cast(), 8),
                RECUO_ERR_INVALID_HEADER_NAME
            );
            assert_eq!(
                recuo_policy_set_status_retry(p, 99, 1),
                RECUO_ERR_STATUS_OUT_OF_RANGE
            );
            assert_eq!(
                recuo_policy_set_status_retry(p, 500, 9),
                RECUO_ERR_INVALID_ENUM
            );
            assert_eq!(
                recuo_policy_set_transport_retry(p, 0, 1),
                RECUO_ERR_INVALID_ENUM
            );
            let brew = b"BREW";
            assert_eq!(
                recuo_policy_set_method_idempotent(p, brew.as_ptr().cast(), 4, true),
                RECUO_ERR_UNKNOWN_METHOD
            );
            assert_eq!((*p).policy(), Ok(&Policy::guide_a()));
            // A cap below the base is stored, and refused where the policy is used.
            assert_eq!(recuo_policy_set_cap_ms(p, 100), RECUO_OK);
            assert_eq!(recuo_policy_validate(p), RECUO_ERR_CAP_BELOW_BASE);
            assert_eq!(recuo_policy_set_base_ms(p, 50), RECUO_OK);
            assert_eq!(recuo_policy_validate(p), RECUO_OK);
            recuo_policy_free(p);
            assert_eq!(
                recuo_policy_validate(std::ptr::null()),
                RECUO_ERR_NULL_ARGUMENT
            );
        }
    }

    /// `recuo_policy_from_json` over `json`: its status and, on success, the policy.
    fn from_json(json: &[u8]) -> (recuo_status, Option<Policy>) {
        let mut out = std::ptr::null_mut();
        // SAFETY: a live slice and a live output.
        let rc = unsafe { recuo_policy_from_json(json.as_ptr().cast(), json.len(), &mut out) };
        if out.is_null() {
            return (rc, None);
        }
        // SAFETY: a handle just made.
        let policy = unsafe { (*out).policy().cloned().ok() };
        // SAFETY: freed once.
        unsafe { recuo_policy_free(out) };
        (rc, policy)
    }

    /// `recuo_policy_to_json` into a buffer of `cap` bytes: status, text, `*written`.
    fn to_json(p: *const recuo_policy, cap: usize) -> (recuo_status, String, usize) {
        let mut buf = vec![0xAAu8; cap.max(1)];
        let mut written = usize::MAX;
        // SAFETY: `buf` holds at least `cap` bytes, `written` is a live usize.
        let rc = unsafe { recuo_policy_to_json(p, buf.as_mut_ptr().cast(), cap, &mut written) };
        let nul = buf.iter().position(|&b| b == 0).unwrap_or(0);
        (rc, String::from_utf8(buf[..nul].to_vec()).unwrap(), written)
    }

    #[test]
    fn a_policy_from_json_is_the_core_reading() {
        let (rc, p) = from_json(br#"{"max_attempts": 3, "base_ms": 500, "deadline_ms": 10000}"#);
        let expected = Policy::guide_a()
            .to_builder()
            .max_attempts(3)
            .base(Duration::from_millis(500))
            .deadline(Some(Duration::from_millis(10_000)))
            .build()
            .unwrap();
        assert_eq!((rc, p), (RECUO_OK, Some(expected)));
        assert_eq!(from_json(b"{}"), (RECUO_OK, Some(Policy::guide_a())));
        let refused: [(&[u8], recuo_status); 9] = [
            (br#"{"max_attempts": 0}"#, RECUO_ERR_ZERO_ATTEMPTS),
            (
                br#"{"base_ms": 500, "cap_ms": 100}"#,
                RECUO_ERR_CAP_BELOW_BASE,
            ),
            (br#"{"jitter": "wild"}"#, RECUO_ERR_UNKNOWN_NAME),
            (
                br#"{"status_retry": {"302": "always"}}"#,
                RECUO_ERR_STATUS_OUT_OF_RANGE,
            ),
            (
                br#"{"idempotency_header": ""}"#,
                RECUO_ERR_INVALID_HEADER_NAME,
            ),
            (br#"{"maxAttempts": 3}"#, RECUO_ERR_INVALID_VALUE),
            (br#"{"max_attempts": null}"#, RECUO_ERR_INVALID_VALUE),
            (b"{} {}", RECUO_ERR_INVALID_VALUE),
            (b"{\"jitter\": \"\xff\"}", RECUO_ERR_NOT_UTF8),
        ];
        for (json, status) in refused {
            assert_eq!(
                from_json(json),
                (status, None),
                "{}",
                String::from_utf8_lossy(json)
            );
        }
    }

    #[test]
    fn from_json_checks_its_arguments_first() {
        let mut out = std::ptr::null_mut();
        let big = vec![b' '; RECUO_POLICY_JSON_MAX + 1];
        // SAFETY: live slices and outputs; NULL pointers are checked before any read.
        unsafe {
            assert_eq!(
                recuo_policy_from_json(big.as_ptr().cast(), big.len(), &mut out),
                RECUO_ERR_LENGTH_TOO_LARGE
            );
            assert_eq!(
                recuo_policy_from_json(std::ptr::null(), 2, &mut out),
                RECUO_ERR_NULL_ARGUMENT
            );
            assert_eq!(
                recuo_policy_from_json(std::ptr::null(), 0, &mut out),
                RECUO_ERR_INVALID_VALUE
            );
            let json = b"{}";
            assert_eq!(
                recuo_policy_from_json(json.as_ptr().cast(), 2, std::ptr::null_mut()),
                RECUO_ERR_NULL_ARGUMENT
            );
        }
        assert!(out.is_null());
        // Exactly the bound is read: 64 KiB of spaces around an empty object.
        let mut padded = vec![b' '; RECUO_POLICY_JSON_MAX];
        padded[0] = b'{';
        padded[RECUO_POLICY_JSON_MAX - 1] = b'}';
        assert_eq!(from_json(&padded), (RECUO_OK, Some(Policy::guide_a())));
    }

    #[test]
    fn to_json_writes_what_from_json_reads_back() {
        let p = recuo_policy_new_guide_b();
        // SAFETY: a live handle and a live string.
        unsafe {
            let post = b"post";
            recuo_policy_set_method_idempotent(p, post.as_ptr().cast(), 4, true);
            recuo_policy_set_status_retry(p, 408, 3);
        }
        let (rc, json, written) = to_json(p, 1024);
        assert_eq!(
            json,
            concat!(
                r#"{"max_attempts":5,"base_ms":1000,"cap_ms":8000,"jitter":"full","#,
                r#""deadline_ms":30000,"spread_ms":null,"idempotency_header":"Idempotency-Key","#,
                r#""use_date_header":false,"server_honours_keys":false,"#,
                r#""quota_403_as_rate_limit":true,"status_retry":{"408":"always"},"#,
                r#""transport_retry":{},"idempotent_methods":{"POST":true}}"#
            )
        );
        assert_eq!((rc, written), (RECUO_OK, json.len()));
        // SAFETY: a live handle.
        let built = unsafe { (*p).policy().cloned().unwrap() };
        assert_eq!(from_json(json.as_bytes()), (RECUO_OK, Some(built)));
        // Exactly enough room, then one byte short: truncated, terminated, reported.
        let (rc, again, _) = to_json(p, json.len() + 1);
        assert_eq!((rc, again.as_str()), (RECUO_OK, json.as_str()));
        let (rc, cut, written) = to_json(p, json.len());
        assert_eq!(
            (rc, cut.as_str()),
            (RECUO_ERR_BUFFER_TOO_SMALL, &json[..json.len() - 1])
        );
        assert_eq!(written, json.len() - 1);
        // SAFETY: a live handle; NULL pointers are checked before any write.
        unsafe {
            let mut buf = [0u8; 8];
            assert_eq!(
                recuo_policy_to_json(
                    std::ptr::null(),
                    buf.as_mut_ptr().cast(),
                    8,
                    std::ptr::null_mut()
                ),
                RECUO_ERR_NULL_ARGUMENT
            );
            assert_eq!(
                recuo_policy_to_json(p, std::ptr::null_mut(), 8, std::ptr::null_mut()),
                RECUO_ERR_NULL_ARGUMENT
            );
            // A policy whose values the core refuses is no plain form: nothing is written.
            recuo_policy_set_cap_ms(p, 10);
            buf[0] = b'x';
            assert_eq!(
                recuo_policy_to_json(p, buf.as_mut_ptr().cast(), 8, std::ptr::null_mut()),
                RECUO_ERR_CAP_BELOW_BASE
            );
            assert_eq!(buf[0], b'x');
            recuo_policy_free(p);
        }
    }

    #[test]
    fn names_match_the_core() {
        for j in recuo_jitter::ALL {
            assert_eq!(j.name().to_str(), Ok(j.to_core().name()));
            assert_eq!(recuo_jitter::from_core(j.to_core()), *j);
        }
        assert_eq!(recuo_jitter::from_code(0), None);
    }
}
