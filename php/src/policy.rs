//! `Recuo\Policy`: the core's [`recuo::Policy`], built with named arguments and changed by
//! `with*` methods that answer new instances. Validation is the core's
//! ([`recuo::PolicyBuilder::build`]); this module converts PHP values and names the argument
//! at fault.
//!
//! A policy is also one plain value, the core's [`recuo::PolicyValue`]: `fromArray()` walks
//! a PHP array into JSON data ([`crate::values::plain_table`]), serde reads it as a
//! `PolicyValue` and the core checks it ([`recuo::Policy::from_value`]); `toArray()`,
//! `jsonSerialize()` and `__serialize()` write [`recuo::Policy::to_value`] back as PHP values.
//!
//! Guide A, as these docs call it, is
//! “Como repetir requisições com backoff exponencial (retry)”
//! (<https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff>), the guide that
//! writes `comRetry` and `buscarComRetry`. Guide B is
//! “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”, which reads
//! `Retry-After` and runs a batch under a rate limit.

use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::class::RegisteredClass;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::ZendHashTable;
use ext_php_rs::zend::ClassEntry;
use recuo::{ComRetry, ConfigError, Jitter, PolicyValue, RetryRule, Transport};

use crate::convert::{attempts, json_decode, millis, named, optional_millis, php_int, Bytes};
use crate::errors::{config_error, config_error_detail, php_error, value_error};
use crate::values::{plain_table, Reading};

/// Guide A's attempts (5), as the default of `$maxAttempts`.
pub const DEFAULT_MAX_ATTEMPTS: i64 = ComRetry::GUIDE_A.tentativas() as i64;
/// Guide A's base window in milliseconds (200), as the default of `$baseMs`.
pub const DEFAULT_BASE_MS: i64 = ComRetry::GUIDE_A.backoff().base_ms() as i64;
/// Guide A's largest window in milliseconds (5000), as the default of `$capMs`.
pub const DEFAULT_CAP_MS: i64 = ComRetry::GUIDE_A.backoff().cap_ms() as i64;
/// The default jitter mode's name (`full`).
const DEFAULT_JITTER: &str = Jitter::Full.name();
/// The default idempotency header, the core's.
const DEFAULT_IDEMPOTENCY_HEADER: &str = recuo::http::DEFAULT_IDEMPOTENCY_HEADER;

/// How an operation is retried: attempts, backoff, deadline, the spread added to server
/// waits, which outcomes are worth another attempt, and the idempotency header. Immutable:
/// the `with*` methods answer a changed copy.
#[php_class]
#[php(name = "Recuo\\Policy", flags = ClassFlags::Final)]
#[php(implements(ce = json_serializable, stub = "\\JsonSerializable"))]
#[derive(Debug, Clone)]
pub struct Policy {
    pub(crate) inner: recuo::Policy,
    /// Only the object `unserialize()` makes (without a constructor) is blank until
    /// `__unserialize()` fills it: every other policy is immutable.
    pub(crate) blank: bool,
}

// Blank: guide A's policy. `unserialize()` makes the object without its constructor, then
// hands the data to `__unserialize()`: the object holds this policy until then, never
// nothing. From the core's: a policy made by this module (never blank).
blank_or_from!(Policy(recuo::Policy) = recuo::Policy::guide_a());

// ext/json's interface, which PHP exports to extensions (ext/json is always built in and
// started before any extension loaded with `extension=`).
extern "C" {
    static php_json_serializable_ce: *mut ClassEntry;
}

/// `\JsonSerializable`.
pub(crate) fn json_serializable() -> &'static ClassEntry {
    // SAFETY: a pointer PHP sets at ext/json's startup, before this extension's; it is null
    // or a class entry that lives as long as the engine.
    unsafe { php_json_serializable_ce.as_ref() }
        .expect("ext/json is part of every PHP 8 build and starts before extensions")
}

/// Lets `serialize()` and `unserialize()` take a `T` (`Recuo\Policy`, `Recuo\Stats`,
/// `Recuo\BatchResult`, `Recuo\BatchReport`): ext-php-rs marks every class backed by Rust
/// data as not serializable, as PHP's default would write only its properties; these have
/// `__serialize()` and `__unserialize()`, which carry the whole value. Called once per
/// process, at the first request's startup: module startup runs before ext-php-rs registers
/// the class (and sets the flag).
pub fn allow_serialization<T: RegisteredClass>() {
    let class = std::ptr::from_ref(T::get_metadata().ce()).cast_mut();
    // SAFETY: at a request's startup, on the engine's thread, once, before any PHP code of
    // this process runs: the class entry this extension registered is only read by the
    // engine, which reads the flag when it serializes an object.
    unsafe { (*class).ce_flags &= !ClassFlags::NotSerializable.bits() };
}

/// The policy a PHP array describes: the array as JSON data, read by serde as the core's
/// [`PolicyValue`] (`INVALID_VALUE` when it cannot be, with serde's words), then checked by
/// the core.
fn policy_of(function: &str, arg: (u32, &str), table: &ZendHashTable) -> PhpResult<recuo::Policy> {
    let invalid =
        |detail: &str| config_error_detail(function, Some(arg), ConfigError::InvalidValue, detail);
    let data = plain_table(table, Reading::Policy, 0).map_err(|e| invalid(&e.message()))?;
    let value: PolicyValue = serde_json::from_value(data).map_err(|e| invalid(&e.to_string()))?;
    recuo::Policy::from_value(&value).map_err(|e| config_error(function, Some(arg), e))
}

/// A policy's plain form as PHP reads it: the core's [`recuo::Policy::to_value`] as JSON
/// text (its fields in their declared order), decoded by PHP's own `json_decode()`, with
/// `$associative` (objects as arrays, `"418"` as the integer key 418) or without (objects as
/// `\stdClass`); the top-level object as a PHP array of its own either way (for a declared
/// `array` return type).
fn decoded_table(
    function: &str,
    policy: &recuo::Policy,
    associative: bool,
) -> PhpResult<ZBox<ZendHashTable>> {
    let failed =
        |what: &str| php_error(format!("{function}(): cannot {what} a policy's plain form"));
    let json = serde_json::to_string(&policy.to_value()).map_err(|_| failed("write"))?;
    let value = json_decode(&json, associative).ok_or_else(|| failed("decode"))?;
    let table = if associative {
        value.array()
    } else {
        value.object().and_then(|o| o.get_properties().ok())
    };
    table.map(ToOwned::to_owned).ok_or_else(|| {
        php_error(format!(
            "{function}(): a policy's plain form is not an object"
        ))
    })
}

impl Policy {
    /// The policy `Recuo\retry` and `Recuo\classify` use when given none: guide A's.
    pub fn default_policy() -> recuo::Policy {
        recuo::Policy::guide_a()
    }

    /// A copy of this policy with `change` made to its settings. The rest of the policy was
    /// checked when it was built; the change alone cannot make it invalid, but the core's
    /// answer is still the one that counts.
    fn changed(
        &self,
        function: &str,
        change: impl FnOnce(recuo::PolicyBuilder) -> recuo::PolicyBuilder,
    ) -> PhpResult<Self> {
        change(self.inner.to_builder())
            .build()
            .map(Policy::from)
            .map_err(|e| config_error(function, None, e))
    }
}

fn rule_arg(function: &str, position: u32, value: Bytes<'_>) -> PhpResult<RetryRule> {
    named(function, (position, "rule"), &value.text(), "")
}

/// A transport failure's kind named by PHP code: argument `position` (`$error`) of
/// `function`, which may be null when `nullable` (and the message says so).
pub(crate) fn transport_arg(
    function: &str,
    position: u32,
    value: Bytes<'_>,
    nullable: bool,
) -> PhpResult<Transport> {
    let null = if nullable { "null or " } else { "" };
    named(function, (position, "error"), &value.text(), null)
}

php_impl!({
    impl Policy {
        /// Attempts in all, the first included.
        getter!(get_max_attempts(self) -> i64 = i64::from(self.inner.max_attempts()));
        /// The first backoff window, in milliseconds.
        getter!(get_base_ms(self) -> i64 = php_int(self.inner.backoff().base_ms()));
        /// The largest backoff window, in milliseconds.
        getter!(get_cap_ms(self) -> i64 = php_int(self.inner.backoff().cap_ms()));
        /// The jitter mode: `"full"`, `"equal"`, `"decorrelated"` or `"none"`.
        getter!(get_jitter(self) -> &'static str = self.inner.backoff().jitter().name());
        /// The limit on an operation's total time in milliseconds, from the start of its first
        /// attempt; null for none.
        getter!(get_deadline_ms(self) -> Option<i64> = self.inner.deadline_ms().map(php_int));
        /// The fixed spread added to server waits in milliseconds; null for the default,
        /// `min(window(n), 1000)`.
        getter!(get_spread_ms(self) -> Option<i64> = self.inner.spread_ms().map(php_int));
        /// The header the idempotency key is sent in.
        getter!(get_idempotency_header(self) -> String =
            self.inner.idempotency_header().to_string());
        /// Whether a response's `Date` header is "now" when server waits are measured.
        getter!(get_use_date_header(self) -> bool = self.inner.use_date_header());
        /// Whether the server honours idempotency keys: a request sent with recuo's own key
        /// then
        /// counts as idempotent.
        getter!(get_server_honours_keys(self) -> bool = self.inner.server_honours_keys());
        /// Whether a 403 whose rate-limit headers say the quota is spent counts as a 429.
        #[php(name = "quota403IsRateLimit")]
        getter!(get_quota_403_is_rate_limit(self) -> bool =
            self.inner.rules().quota_403_is_rate_limit);

        /// A policy from named arguments; the defaults are guide A's (5 attempts, 200 ms, 5 s,
        /// full jitter, no deadline). Throws `Recuo\Exception\ConfigError` for attempts below 1,
        /// a negative duration, a cap below the base or an idempotency header that is not an
        /// HTTP token; `\ValueError` for an unknown jitter mode.
        #[php(defaults(
            maxAttempts = DEFAULT_MAX_ATTEMPTS,
            baseMs = DEFAULT_BASE_MS,
            capMs = DEFAULT_CAP_MS,
            jitter = DEFAULT_JITTER,
            idempotencyHeader = DEFAULT_IDEMPOTENCY_HEADER,
            useDateHeader = false,
            serverHonoursKeys = false
        ))]
        pub fn __construct(
            maxAttempts: i64,
            baseMs: i64,
            capMs: i64,
            jitter: Bytes<'_>,
            deadlineMs: Option<i64>,
            spreadMs: Option<i64>,
            idempotencyHeader: Bytes<'_>,
            useDateHeader: bool,
            serverHonoursKeys: bool,
        ) -> PhpResult<Self> {
            guard!("Recuo\\Policy::__construct");
            let max_attempts = attempts(F, 1, "maxAttempts", maxAttempts)?;
            let base = millis(F, 2, "baseMs", baseMs)?;
            let cap = millis(F, 3, "capMs", capMs)?;
            let jitter: Jitter = named(F, (4, "jitter"), &jitter.text(), "")?;
            let deadline = optional_millis(F, 5, "deadlineMs", deadlineMs)?;
            let spread = optional_millis(F, 6, "spreadMs", spreadMs)?;
            recuo::Policy::builder()
                .max_attempts(max_attempts)
                .base(Duration::from_millis(base))
                .cap(Duration::from_millis(cap))
                .jitter(jitter)
                .deadline(deadline.map(Duration::from_millis))
                .spread(spread.map(Duration::from_millis))
                .idempotency_header(idempotencyHeader.text().into_owned())
                .use_date_header(useDateHeader)
                .server_honours_keys(serverHonoursKeys)
                .build()
                .map(Policy::from)
                .map_err(|e| {
                    let arg = match e {
                        ConfigError::ZeroAttempts => Some((1, "maxAttempts")),
                        ConfigError::EmptyHeaderName => Some((7, "idempotencyHeader")),
                        _ => None,
                    };
                    config_error(F, arg, e)
                })
        }

        /// Guide A: 5 attempts, 200 ms base, 5 s cap, full jitter, no deadline.
        pub fn guide_a() -> Policy {
            recuo::Policy::guide_a().into()
        }

        /// Guide B: 5 attempts (at most 4 retries), 1 s base, 8 s cap, full jitter, a 30 s
        /// deadline.
        pub fn guide_b() -> Policy {
            recuo::Policy::guide_b().into()
        }

        /// The HTTP adapters' default: guide B's (5 attempts, 1 s to 8 s, a 30 s deadline), with
        /// an HTTP-date wait measured from the response's own `Date`.
        pub fn adapters() -> Policy {
            recuo::Policy::adapters().into()
        }

        /// For one request a person waits on: the adapters' policy, whose 30 s deadline gives up
        /// at once on a server wait that would not fit, saying when a retry would be allowed.
        pub fn interactive() -> Policy {
            recuo::Policy::interactive().into()
        }

        /// For the requests of a batch: the adapters' policy with no deadline of its own, so
        /// that the batch's deadline is the one that counts (`Recuo\runBatch()` gives each
        /// request what is left of it). Outside a batch, give it a deadline.
        pub fn batch() -> Policy {
            recuo::Policy::batch().into()
        }

        /// The policy `$value` describes, in the plain form `toArray()` answers: `max_attempts`,
        /// `base_ms`, `cap_ms`, `jitter`, `deadline_ms`, `spread_ms`, `idempotency_header`,
        /// `use_date_header`, `server_honours_keys`, `quota_403_as_rate_limit`, and the maps
        /// `status_retry` (`[418 => 'always']`), `transport_retry` (`['timeout' => 'never']`) and
        /// `idempotent_methods` (`['POST' => true]`). A field left out takes guide A's value; `[]`
        /// is guide A's policy. Throws `Recuo\Exception\ConfigError`: `INVALID_VALUE` for an
        /// unknown field or a value of the wrong type (`'3'` for a number, a negative duration, a
        /// float), `UNKNOWN_NAME` for a jitter, rule, transport failure, method or status recuo
        /// does not know, and the constructor's errors.
        pub fn from_array(value: &ZendHashTable) -> PhpResult<Policy> {
            guard!("Recuo\\Policy::fromArray");
            policy_of(F, (1, "value"), value).map(Policy::from)
        }

        /// This policy as plain data, the form `fromArray()` reads: every setting written out
        /// (`null` for no deadline or the default spread), and in the three maps only the rules
        /// that differ from the default classification (statuses as integer keys, methods in
        /// capitals). `Policy::fromArray($p->toArray()) == $p`.
        pub fn to_array(&self) -> PhpResult<ZBox<ZendHashTable>> {
            guard!("Recuo\\Policy::toArray");
            decoded_table(F, &self.inner, true)
        }

        /// The plain form, for `json_encode()`: as `toArray()`, with the three maps as
        /// `\stdClass` objects, so that an empty one encodes as `{}`.
        pub fn json_serialize(&self) -> PhpResult<ZBox<ZendHashTable>> {
            guard!("Recuo\\Policy::jsonSerialize");
            decoded_table(F, &self.inner, false)
        }

        /// The plain form (`toArray()`), for `serialize()`.
        pub fn __serialize(&self) -> PhpResult<ZBox<ZendHashTable>> {
            guard!("Recuo\\Policy::__serialize");
            decoded_table(F, &self.inner, true)
        }

        /// The policy `$data` describes, read as `fromArray()` reads it, for `unserialize()`.
        pub fn __unserialize(&mut self, data: &ZendHashTable) -> PhpResult<()> {
            guard!("Recuo\\Policy::__unserialize");
            crate::errors::only_blank(F, self.blank, "a policy is")?;
            *self = policy_of(F, (1, "data"), data)?.into();
            Ok(())
        }

        /// When a status (400-599) is retried: `"never"`, `"if_idempotent"` or `"always"`.
        pub fn status_retry(&self, status: i64) -> PhpResult<&'static str> {
            guard!("Recuo\\Policy::statusRetry");
            let status = u32::try_from(status).unwrap_or(u32::MAX);
            let rule = self.inner.rules().rule_of(status);
            rule.map(RetryRule::name)
                .map_err(|e| config_error(F, Some((1, "status")), e))
        }

        /// A copy of this policy in which `$status` (400-599) is retried `$rule`: `"never"`,
        /// `"if_idempotent"` or `"always"`.
        pub fn with_status_retry(&self, status: i64, rule: Bytes<'_>) -> PhpResult<Policy> {
            guard!("Recuo\\Policy::withStatusRetry");
            let rule = rule_arg(F, 2, rule)?;
            let mut rules = *self.inner.rules();
            rules
                .set_status_rule(u32::try_from(status).unwrap_or(u32::MAX), rule)
                .map_err(|e| config_error(F, Some((1, "status")), e))?;
            self.changed(F, |b| b.rules(rules))
        }

        /// When a transport failure (`"connect"`, `"tls"`, `"timeout"`, `"reset"`, `"other"`)
        /// is retried: `"never"`, `"if_idempotent"` or `"always"`.
        pub fn transport_retry(&self, error: Bytes<'_>) -> PhpResult<&'static str> {
            guard!("Recuo\\Policy::transportRetry");
            let kind = transport_arg(F, 1, error, false)?;
            Ok(self.inner.rules().transport_rule(kind).name())
        }

        /// A copy of this policy in which the transport failure `$error` is retried `$rule`.
        pub fn with_transport_retry(&self, error: Bytes<'_>, rule: Bytes<'_>) -> PhpResult<Policy> {
            guard!("Recuo\\Policy::withTransportRetry");
            let kind = transport_arg(F, 1, error, false)?;
            let rule = rule_arg(F, 2, rule)?;
            let mut rules = *self.inner.rules();
            rules.set_transport_rule(kind, rule);
            self.changed(F, |b| b.rules(rules))
        }

        /// Whether requests with this method are safe to repeat without an idempotency key
        /// (matched without regard to case; methods recuo does not know never are).
        pub fn is_method_idempotent(&self, method: Bytes<'_>) -> PhpResult<bool> {
            guard!("Recuo\\Policy::isMethodIdempotent");
            Ok(self
                .inner
                .rules()
                .idempotent_methods
                .contains(&method.text()))
        }

        /// A copy of this policy in which `$method` is (or, with `false`, is not) idempotent.
        /// Known methods: GET, HEAD, OPTIONS, TRACE, PUT, DELETE, POST, PATCH, CONNECT.
        #[php(defaults(idempotent = true))]
        pub fn with_method_idempotent(
            &self,
            method: Bytes<'_>,
            idempotent: bool,
        ) -> PhpResult<Policy> {
            guard!("Recuo\\Policy::withMethodIdempotent");
            let name = method.text();
            let mut rules = *self.inner.rules();
            rules.idempotent_methods = if idempotent {
                rules.idempotent_methods.with(&name).ok_or_else(|| {
                    value_error(
                        F,
                        1,
                        "method",
                        "must be GET, HEAD, OPTIONS, TRACE, PUT, DELETE, POST, PATCH or CONNECT",
                    )
                })?
            } else {
                rules.idempotent_methods.without(&name)
            };
            self.changed(F, |b| b.rules(rules))
        }

        /// A copy of this policy in which the server honours (or, with `false`, does not honour)
        /// idempotency keys.
        #[php(defaults(honoured = true))]
        pub fn with_server_honours_keys(&self, honoured: bool) -> PhpResult<Policy> {
            guard!("Recuo\\Policy::withServerHonoursKeys");
            self.changed(F, |b| b.server_honours_keys(honoured))
        }

        /// A copy of this policy in which a 403 whose rate-limit headers say the quota is spent
        /// counts (or, with `false`, does not count) as a 429.
        #[php(name = "withQuota403IsRateLimit")]
        pub fn with_quota_403_is_rate_limit(&self, enabled: bool) -> PhpResult<Policy> {
            guard!("Recuo\\Policy::withQuota403IsRateLimit");
            let mut rules = *self.inner.rules();
            rules.quota_403_is_rate_limit = enabled;
            self.changed(F, |b| b.rules(rules))
        }
    }
});
