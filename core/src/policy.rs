//! The retry policy and its validation.
//!
//! Two presets are named after the guides (in Portuguese) whose figures they take: guide A is
//! [“Como repetir requisições com backoff exponencial (retry)”](https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff),
//! guide B is “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”.

use std::borrow::Cow;
use std::time::Duration;

use crate::classify::{Outcome, Request, Rules, Verdict};
use crate::{Backoff, ConfigError, Jitter};

/// Everything that decides how an operation is retried. Build one with
/// [`Policy::builder`], or start from a preset ([`Policy::guide_a`], [`Policy::guide_b`]).
///
/// # Defaults
/// 5 attempts; base 200 ms, cap 5000 ms, full jitter; no deadline; a server wait is spread by
/// `uniform[0, min(window(n), 1000 ms)]`; the classification
/// ([`Rules::DEFAULT`]); the idempotency key travels as `Idempotency-Key`; the response's
/// `Date` header is not used as "now"; the server is not known to honour idempotency keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    max_attempts: u32,
    backoff: Backoff,
    deadline_ms: Option<u64>,
    spread_ms: Option<u64>,
    rules: Rules,
    idempotency_header: Cow<'static, str>,
    use_date_header: bool,
    server_honours_keys: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Self::guide_a()
    }
}

impl Policy {
    /// The default spread cap for server waits: 1000 ms.
    pub const DEFAULT_SPREAD_CAP_MS: u64 = 1000;

    /// Guide A: 5 attempts, 200 ms base, 5 s cap, full jitter, no deadline.
    pub const fn guide_a() -> Self {
        Policy {
            max_attempts: 5,
            backoff: Backoff::new(),
            deadline_ms: None,
            spread_ms: None,
            rules: Rules::DEFAULT,
            idempotency_header: Cow::Borrowed("Idempotency-Key"),
            use_date_header: false,
            server_honours_keys: false,
        }
    }

    /// Guide B: 5 attempts (at most 4 retries), 1 s base, 8 s cap, full jitter, 30 s deadline.
    pub const fn guide_b() -> Self {
        let mut p = Self::guide_a();
        p.backoff = Backoff::new().with_base_ms(1000).with_cap_ms(8000);
        p.deadline_ms = Some(30_000);
        p
    }

    /// The HTTP adapters' default: guide B's policy (5 attempts, 1 s to 8 s of full jitter, a
    /// 30 s deadline, so that `Retry-After: 3600` gives up at once), with an HTTP-date wait
    /// measured from the response's own `Date` (a client whose clock is wrong still waits
    /// what the server meant).
    pub const fn adapters() -> Self {
        let mut p = Self::guide_b();
        p.use_date_header = true;
        p
    }

    /// For one request a person waits on: the adapters' policy, whose 30 s deadline gives up
    /// at once on a server wait that would not fit (`Retry-After: 3600`), saying when a retry
    /// would be allowed.
    pub const fn interactive() -> Self {
        Self::adapters()
    }

    /// For a request inside a batch: the adapters' policy with no deadline of its own, so
    /// that the batch's deadline is the one that counts — a batch runner gives each request
    /// what is left of the batch's time, and a routine `Retry-After: 60` from a per-minute
    /// limiter is waited rather than given up on. Outside a batch runner, give it a deadline.
    pub const fn batch() -> Self {
        let mut p = Self::adapters();
        p.deadline_ms = None;
        p
    }

    /// Guide A's policy with these attempts, backoff and deadline (already validated).
    pub(crate) const fn with_parts(
        max_attempts: u32,
        backoff: Backoff,
        deadline_ms: Option<u64>,
    ) -> Self {
        let mut p = Self::guide_a();
        p.max_attempts = max_attempts;
        p.backoff = backoff;
        p.deadline_ms = deadline_ms;
        p
    }

    /// A builder starting from [`Policy::guide_a`].
    pub fn builder() -> PolicyBuilder {
        PolicyBuilder {
            policy: Self::guide_a(),
            error: None,
        }
    }

    /// A builder starting from this policy.
    pub fn to_builder(&self) -> PolicyBuilder {
        PolicyBuilder {
            policy: self.clone(),
            error: None,
        }
    }

    /// The most attempts an operation gets, the first included (≥ 1).
    pub const fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The backoff schedule.
    pub const fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// The limit on an operation's total time, from the start of its first attempt.
    pub const fn deadline_ms(&self) -> Option<u64> {
        self.deadline_ms
    }

    /// The fixed spread added to server waits, or `None` for `min(window(n), 1000 ms)`.
    pub const fn spread_ms(&self) -> Option<u64> {
        self.spread_ms
    }

    /// The classification rules.
    pub const fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The header the idempotency key is sent in.
    pub fn idempotency_header(&self) -> &str {
        &self.idempotency_header
    }

    /// The header's name as the policy keeps it (a copy costs nothing for the default).
    pub(crate) fn idempotency_header_name(&self) -> Cow<'static, str> {
        self.idempotency_header.clone()
    }

    /// Whether the response's `Date` header is "now" for server waits.
    pub const fn use_date_header(&self) -> bool {
        self.use_date_header
    }

    /// Whether the server is known to honour idempotency keys: a request sent with recuo's own
    /// key then counts as idempotent, so a failure whose outcome is unknown (a timeout, a
    /// reset, a 500) is retried even for a POST. Off by default: a server may ignore the
    /// header.
    pub const fn server_honours_keys(&self) -> bool {
        self.server_honours_keys
    }

    /// This policy with at most one attempt (a request whose body cannot be sent twice).
    pub(crate) fn one_attempt(&mut self) {
        self.max_attempts = 1;
    }

    /// The spread cap for retry index `n`: the fixed spread, or `min(window(n), 1000)`.
    pub const fn spread_cap_ms(&self, n: u32) -> u64 {
        match self.spread_ms {
            Some(ms) => ms,
            None => {
                let w = self.backoff.window_ms(n);
                if w < Self::DEFAULT_SPREAD_CAP_MS {
                    w
                } else {
                    Self::DEFAULT_SPREAD_CAP_MS
                }
            }
        }
    }

    /// The verdict on an HTTP outcome under this policy's rules, reading server
    /// waits from `headers` as of `now_unix_ms`.
    pub fn classify<K, V>(
        &self,
        outcome: Outcome,
        request: Request<'_>,
        headers: &[(K, V)],
        now_unix_ms: i64,
    ) -> Verdict
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        self.rules
            .classify(outcome, request, headers, now_unix_ms, self.use_date_header)
    }
}

/// Builds a [`Policy`]; [`build`](PolicyBuilder::build) checks it.
#[derive(Debug, Clone)]
#[must_use]
pub struct PolicyBuilder {
    policy: Policy,
    error: Option<ConfigError>,
}

impl PolicyBuilder {
    fn ms(&mut self, d: Duration) -> u64 {
        match u64::try_from(d.as_millis()) {
            Ok(ms) => ms,
            Err(_) => {
                self.error.get_or_insert(ConfigError::DurationTooLarge);
                u64::MAX
            }
        }
    }

    /// The most attempts, the first included (must be ≥ 1).
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.policy.max_attempts = n;
        self
    }

    /// The first backoff window.
    pub fn base(mut self, d: Duration) -> Self {
        let ms = self.ms(d);
        self.policy.backoff = self.policy.backoff.with_base_ms(ms);
        self
    }

    /// The largest backoff window (must not be below the base).
    pub fn cap(mut self, d: Duration) -> Self {
        let ms = self.ms(d);
        self.policy.backoff = self.policy.backoff.with_cap_ms(ms);
        self
    }

    /// The jitter mode.
    pub fn jitter(mut self, j: Jitter) -> Self {
        self.policy.backoff = self.policy.backoff.with_jitter(j);
        self
    }

    /// A limit on the operation's total time (`None`: no limit).
    pub fn deadline(mut self, d: Option<Duration>) -> Self {
        self.policy.deadline_ms = d.map(|d| self.ms(d));
        self
    }

    /// A fixed spread added to server waits (`None`: `min(window(n), 1000 ms)`).
    pub fn spread(mut self, d: Option<Duration>) -> Self {
        self.policy.spread_ms = d.map(|d| self.ms(d));
        self
    }

    /// The classification rules.
    pub fn rules(mut self, rules: Rules) -> Self {
        self.policy.rules = rules;
        self
    }

    /// The header the idempotency key is sent in.
    pub fn idempotency_header(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.policy.idempotency_header = name.into();
        self
    }

    /// Whether the response's `Date` header is "now" for server waits.
    pub fn use_date_header(mut self, yes: bool) -> Self {
        self.policy.use_date_header = yes;
        self
    }

    /// Whether the server honours idempotency keys (see [`Policy::server_honours_keys`]).
    pub fn server_honours_keys(mut self, yes: bool) -> Self {
        self.policy.server_honours_keys = yes;
        self
    }

    /// The policy, when it is usable.
    ///
    /// # Errors
    /// [`ConfigError::ZeroAttempts`], [`ConfigError::CapBelowBase`],
    /// [`ConfigError::DurationTooLarge`], or [`ConfigError::EmptyHeaderName`] for an
    /// idempotency header name that is empty or not a valid token.
    pub fn build(self) -> Result<Policy, ConfigError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let p = self.policy;
        if p.max_attempts == 0 {
            return Err(ConfigError::ZeroAttempts);
        }
        p.backoff.validate()?;
        if !is_token(&p.idempotency_header) {
            return Err(ConfigError::EmptyHeaderName);
        }
        Ok(p)
    }
}

/// An HTTP token (RFC 9110 §5.6.2): what a header name may be.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets() {
        let a = Policy::guide_a();
        assert_eq!(
            (
                a.max_attempts(),
                a.backoff().base_ms(),
                a.backoff().cap_ms()
            ),
            (5, 200, 5000)
        );
        assert_eq!(a.deadline_ms(), None);
        let b = Policy::guide_b();
        assert_eq!(
            (
                b.max_attempts(),
                b.backoff().base_ms(),
                b.backoff().cap_ms()
            ),
            (5, 1000, 8000)
        );
        assert_eq!(b.deadline_ms(), Some(30_000));
        assert_eq!(Policy::default(), a);
    }

    #[test]
    fn the_spread_defaults_to_the_window_up_to_a_second() {
        let p = Policy::guide_a();
        assert_eq!(
            [p.spread_cap_ms(0), p.spread_cap_ms(2), p.spread_cap_ms(9)],
            [200, 800, 1000]
        );
        let fixed = Policy::builder()
            .spread(Some(Duration::from_millis(50)))
            .build()
            .unwrap();
        assert_eq!(fixed.spread_cap_ms(9), 50);
    }

    #[test]
    fn validation() {
        assert_eq!(
            Policy::builder().max_attempts(0).build(),
            Err(ConfigError::ZeroAttempts)
        );
        assert_eq!(
            Policy::builder()
                .base(Duration::from_secs(2))
                .cap(Duration::from_secs(1))
                .build(),
            Err(ConfigError::CapBelowBase {
                base_ms: 2000,
                cap_ms: 1000
            })
        );
        assert_eq!(
            Policy::builder().deadline(Some(Duration::MAX)).build(),
            Err(ConfigError::DurationTooLarge)
        );
        assert_eq!(
            Policy::builder().idempotency_header("").build(),
            Err(ConfigError::EmptyHeaderName)
        );
        assert_eq!(
            Policy::builder().idempotency_header("Bad Name").build(),
            Err(ConfigError::EmptyHeaderName)
        );
        let p = Policy::builder()
            .idempotency_header("X-Request-Key")
            .build()
            .unwrap();
        assert_eq!(p.idempotency_header(), "X-Request-Key");
    }
}
