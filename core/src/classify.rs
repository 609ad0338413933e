//! Outcomes → verdicts: what is worth another attempt, and what is safe to repeat.

use crate::server_wait::{quota_spent, server_wait, ServerWait};

/// How a request failed before an HTTP status came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// The request was never sent: DNS failure, connection refused, connect timeout.
    Connect,
    /// The server's certificate failed verification.
    Tls,
    /// No answer in time, after the request was sent.
    Timeout,
    /// The connection dropped after the request was sent.
    Reset,
    /// Any other failure.
    Other,
}

impl Transport {
    /// Every kind, in the order of [`Transport::name`]'s documentation.
    pub const ALL: [Transport; 5] = [
        Transport::Connect,
        Transport::Tls,
        Transport::Timeout,
        Transport::Reset,
        Transport::Other,
    ];

    /// The kind's name: `connect`, `tls`, `timeout`, `reset` or `other`.
    pub const fn name(self) -> &'static str {
        match self {
            Transport::Connect => "connect",
            Transport::Tls => "tls",
            Transport::Timeout => "timeout",
            Transport::Reset => "reset",
            Transport::Other => "other",
        }
    }

    /// The kind named `name`, as [`Transport::name`] spells it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// What one attempt came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The operation succeeded (for tasks with no HTTP meaning).
    Success,
    /// An HTTP response with this status code.
    Status(u16),
    /// A transport failure.
    Transport(Transport),
}

/// A set of HTTP status codes (0–639).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StatusSet([u64; 10]);

impl StatusSet {
    /// The empty set.
    pub const EMPTY: StatusSet = StatusSet([0; 10]);

    /// The codes `lo..=hi` (clamped to 0–639).
    pub const fn range(lo: u16, hi: u16) -> Self {
        let mut set = Self::EMPTY;
        let mut c = lo;
        while c <= hi && c < 640 {
            set = set.with(c);
            c += 1;
        }
        set
    }

    /// The set with `code` added (codes from 640 up are ignored).
    pub const fn with(mut self, code: u16) -> Self {
        if code < 640 {
            self.0[(code / 64) as usize] |= 1 << (code % 64);
        }
        self
    }

    /// The set with `code` removed.
    pub const fn without(mut self, code: u16) -> Self {
        if code < 640 {
            self.0[(code / 64) as usize] &= !(1 << (code % 64));
        }
        self
    }

    /// Whether `code` is in the set.
    pub const fn contains(&self, code: u16) -> bool {
        code < 640 && self.0[(code / 64) as usize] & (1 << (code % 64)) != 0
    }
}

/// A set of transport failure kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TransportSet(u8);

impl TransportSet {
    /// The empty set.
    pub const EMPTY: TransportSet = TransportSet(0);

    /// The set with `t` added.
    pub const fn with(self, t: Transport) -> Self {
        TransportSet(self.0 | t.bit())
    }

    /// The set with `t` removed.
    pub const fn without(self, t: Transport) -> Self {
        TransportSet(self.0 & !t.bit())
    }

    /// Whether `t` is in the set.
    pub const fn contains(&self, t: Transport) -> bool {
        self.0 & t.bit() != 0
    }
}

/// The standard methods recuo knows, by position in [`MethodSet`].
pub const METHODS: [&str; 9] = [
    "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE", "POST", "PATCH", "CONNECT",
];

/// A set of HTTP methods among GET, HEAD, OPTIONS, TRACE, PUT, DELETE, POST, PATCH and
/// CONNECT, matched without regard to ASCII case. Other methods are never members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MethodSet(u16);

impl MethodSet {
    /// GET, HEAD, OPTIONS, TRACE, PUT and DELETE: the idempotent methods of RFC 9110 §9.2.2.
    pub const IDEMPOTENT: MethodSet = MethodSet(0b11_1111);

    /// The set with `method` added; `None` when recuo does not know the method.
    pub fn with(self, method: &str) -> Option<Self> {
        Self::index(method).map(|i| MethodSet(self.0 | 1 << i))
    }

    /// The set with `method` removed (unknown methods change nothing).
    pub fn without(self, method: &str) -> Self {
        Self::index(method).map_or(self, |i| MethodSet(self.0 & !(1 << i)))
    }

    /// Whether `method` is in the set.
    pub fn contains(&self, method: &str) -> bool {
        Self::index(method).is_some_and(|i| self.0 & (1 << i) != 0)
    }

    fn index(method: &str) -> Option<usize> {
        METHODS.iter().position(|m| m.eq_ignore_ascii_case(method))
    }
}

/// Which outcomes are retried. [`Rules::DEFAULT`] is recuo's default table; every
/// set can be changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Statuses retried for any method: the server refused the request (429, 503).
    pub retry_any_method: StatusSet,
    /// Statuses retried only when the request is idempotent (other 5xx but 501, 505).
    pub retry_if_idempotent: StatusSet,
    /// Transport failures retried for any method (`connect`: nothing was sent).
    pub transport_any_method: TransportSet,
    /// Transport failures retried only when idempotent (`timeout`, `reset`, `other`).
    pub transport_if_idempotent: TransportSet,
    /// Methods that are safe to repeat without an idempotency key.
    pub idempotent_methods: MethodSet,
    /// Treat a 403 whose rate-limit headers say the quota is spent as a 429.
    pub quota_403_is_rate_limit: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// When an outcome is retried: one rule for every surface's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetryRule {
    /// Never: give up (`permanent`).
    Never,
    /// Only when the request is idempotent (its method, or a key the caller supplied).
    IfIdempotent,
    /// For any method: the request was refused, or never sent.
    Always,
}

impl RetryRule {
    /// Every rule.
    pub const ALL: [RetryRule; 3] = [RetryRule::Never, RetryRule::IfIdempotent, RetryRule::Always];

    /// `never`, `if_idempotent` or `always`.
    pub const fn name(self) -> &'static str {
        match self {
            RetryRule::Never => "never",
            RetryRule::IfIdempotent => "if_idempotent",
            RetryRule::Always => "always",
        }
    }

    /// The rule named `name`, as [`name`](Self::name) spells it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }
}

impl Rules {
    /// The lowest and highest status a rule may be set for (1xx–3xx are never
    /// failures).
    pub const STATUS_RANGE: (u16, u16) = (400, 599);

    /// The rule for `status` (any code; one outside 400–599 is never retried by a rule).
    pub const fn status_rule(&self, status: u16) -> RetryRule {
        if self.retry_any_method.contains(status) {
            RetryRule::Always
        } else if self.retry_if_idempotent.contains(status) {
            RetryRule::IfIdempotent
        } else {
            RetryRule::Never
        }
    }

    /// `status` as a code a rule may be set for (and read by [`rule_of`](Self::rule_of)).
    ///
    /// # Errors
    /// [`crate::ConfigError::StatusOutOfRange`] for a status outside 400–599: the same range in
    /// every language.
    pub fn settable(status: u32) -> Result<u16, crate::ConfigError> {
        let (lo, hi) = Self::STATUS_RANGE;
        u16::try_from(status)
            .ok()
            .filter(|c| (lo..=hi).contains(c))
            .ok_or(crate::ConfigError::StatusOutOfRange { status })
    }

    /// The rule for `status`, as the bindings answer it: only for a status a rule may be set
    /// for ([`settable`](Self::settable)).
    ///
    /// # Errors
    /// [`crate::ConfigError::StatusOutOfRange`] for a status outside 400–599.
    pub fn rule_of(&self, status: u32) -> Result<RetryRule, crate::ConfigError> {
        Self::settable(status).map(|code| self.status_rule(code))
    }

    /// Sets the rule for `status`.
    ///
    /// # Errors
    /// [`crate::ConfigError::StatusOutOfRange`] for a status outside 400–599: the same range in every
    /// language.
    pub fn set_status_rule(
        &mut self,
        status: u32,
        rule: RetryRule,
    ) -> Result<(), crate::ConfigError> {
        let code = Self::settable(status)?;
        self.retry_any_method = self.retry_any_method.without(code);
        self.retry_if_idempotent = self.retry_if_idempotent.without(code);
        match rule {
            RetryRule::Never => {}
            RetryRule::IfIdempotent => {
                self.retry_if_idempotent = self.retry_if_idempotent.with(code)
            }
            RetryRule::Always => self.retry_any_method = self.retry_any_method.with(code),
        }
        Ok(())
    }

    /// The rule for the transport failure `kind`.
    pub const fn transport_rule(&self, kind: Transport) -> RetryRule {
        if self.transport_any_method.contains(kind) {
            RetryRule::Always
        } else if self.transport_if_idempotent.contains(kind) {
            RetryRule::IfIdempotent
        } else {
            RetryRule::Never
        }
    }

    /// Sets the rule for the transport failure `kind`.
    pub fn set_transport_rule(&mut self, kind: Transport, rule: RetryRule) {
        self.transport_any_method = self.transport_any_method.without(kind);
        self.transport_if_idempotent = self.transport_if_idempotent.without(kind);
        match rule {
            RetryRule::Never => {}
            RetryRule::IfIdempotent => {
                self.transport_if_idempotent = self.transport_if_idempotent.with(kind)
            }
            RetryRule::Always => self.transport_any_method = self.transport_any_method.with(kind),
        }
    }

    /// recuo's default rules (docs/policy.md shows the table).
    pub const DEFAULT: Rules = Rules {
        retry_any_method: StatusSet::EMPTY.with(429).with(503),
        retry_if_idempotent: StatusSet::range(500, 599)
            .without(501)
            .without(503)
            .without(505),
        transport_any_method: TransportSet::EMPTY.with(Transport::Connect),
        transport_if_idempotent: TransportSet::EMPTY
            .with(Transport::Timeout)
            .with(Transport::Reset)
            .with(Transport::Other),
        idempotent_methods: MethodSet::IDEMPOTENT,
        quota_403_is_rate_limit: true,
    };
}

/// The request an outcome belongs to: what decides whether repeating it is safe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    /// The HTTP method (`GET`, `POST`, …); matched without regard to ASCII case.
    pub method: &'a str,
    /// Whether the request carries an idempotency key.
    pub has_idempotency_key: bool,
}

impl Request<'_> {
    /// A GET without a key: the safe default for reads.
    pub const GET: Request<'static> = Request {
        method: "GET",
        has_idempotency_key: false,
    };
}

/// Why a verdict was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// 1xx–3xx, or a task's success.
    Success,
    /// 429, or a 403 whose headers say the quota is spent.
    RateLimited,
    /// 503: the server refused the request.
    Unavailable,
    /// Another status in the retry sets (500, 502, 504, …).
    ServerError,
    /// A transport failure in the retry sets (its kind).
    Transport(Transport),
    /// Retryable, but the request may have taken effect and is not safe to repeat.
    NotIdempotent,
    /// A status that repeating will not change (4xx, 501, 505, …).
    Permanent,
    /// The certificate failed verification: retrying cannot fix it.
    Tls,
}

impl Cause {
    /// Every cause, transport kinds included.
    pub const ALL: [Cause; 12] = [
        Cause::Success,
        Cause::RateLimited,
        Cause::Unavailable,
        Cause::ServerError,
        Cause::Transport(Transport::Connect),
        Cause::Transport(Transport::Tls),
        Cause::Transport(Transport::Timeout),
        Cause::Transport(Transport::Reset),
        Cause::Transport(Transport::Other),
        Cause::NotIdempotent,
        Cause::Permanent,
        Cause::Tls,
    ];

    /// The cause named `name`, as [`Cause::name`] spells it. (`tls` is the verdict's cause,
    /// [`Cause::Tls`], not the transport kind.)
    pub fn from_name(name: &str) -> Option<Self> {
        Self::named_by(name, true)
    }

    /// The cause named `name` that a verdict may name ([`nameable`](Self::nameable)):
    /// `success` only when `success`.
    pub fn named_by(name: &str, success: bool) -> Option<Self> {
        Self::named(success).find(|c| c.name() == name)
    }

    /// The causes a name stands for, in [`ALL`](Self::ALL)'s order: those [`nameable`]
    /// (`success` among them only when `success`).
    ///
    /// [`nameable`]: Self::nameable
    pub fn named(success: bool) -> impl Iterator<Item = Cause> + Clone {
        Self::ALL.into_iter().filter(move |&c| c.nameable(success))
    }

    /// Whether a verdict may name this cause: any cause but the transport kind `tls`, whose
    /// name is [`Cause::Tls`]'s; `success` only when `success` (a verdict that retries or gives
    /// up names any other).
    pub fn nameable(self, success: bool) -> bool {
        self != Cause::Transport(Transport::Tls) && (success || self != Cause::Success)
    }

    /// The cause's name: `success`, `rate_limited`, `unavailable`, `server_error`, the
    /// transport kind (`connect`, `timeout`, `reset`, `other`), `not_idempotent`,
    /// `permanent` or `tls`.
    pub const fn name(self) -> &'static str {
        match self {
            Cause::Success => "success",
            Cause::RateLimited => "rate_limited",
            Cause::Unavailable => "unavailable",
            Cause::ServerError => "server_error",
            Cause::Transport(t) => t.name(),
            Cause::NotIdempotent => "not_idempotent",
            Cause::Permanent => "permanent",
            Cause::Tls => "tls",
        }
    }
}

/// What to do about one outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[must_use]
pub enum Verdict {
    /// Done: nothing to retry.
    Success,
    /// Worth another attempt, after at least the server's wait if it gave one.
    Retry {
        /// Why.
        cause: Cause,
        /// The wait the server asked for, if any.
        server_wait: Option<ServerWait>,
    },
    /// Not worth another attempt.
    GiveUp {
        /// Why.
        cause: Cause,
    },
}

impl From<bool> for Verdict {
    /// A predicate's answer ([`Verdict::from_predicate`]).
    fn from(retry: bool) -> Self {
        Verdict::from_predicate(retry)
    }
}

impl Verdict {
    /// `success`, `retry` or `give_up`.
    pub const fn name(&self) -> &'static str {
        match self {
            Verdict::Success => "success",
            Verdict::Retry { .. } => "retry",
            Verdict::GiveUp { .. } => "give_up",
        }
    }

    /// The verdict of a caller's own predicate (`com_retry`'s `repetir_se`): `true` retries (with
    /// no server wait), `false` gives up as permanent.
    pub const fn from_predicate(retry: bool) -> Self {
        if retry {
            Verdict::Retry {
                cause: Cause::ServerError,
                server_wait: None,
            }
        } else {
            Verdict::GiveUp {
                cause: Cause::Permanent,
            }
        }
    }

    /// Why the verdict was reached.
    pub const fn cause(&self) -> Cause {
        match *self {
            Verdict::Success => Cause::Success,
            Verdict::Retry { cause, .. } | Verdict::GiveUp { cause } => cause,
        }
    }

    /// The server's wait, for a retry that has one.
    pub const fn server_wait(&self) -> Option<ServerWait> {
        match *self {
            Verdict::Retry { server_wait, .. } => server_wait,
            _ => None,
        }
    }
}

impl Rules {
    /// The verdict on `outcome` for `request`, reading the server's wait from `headers` as of
    /// `now_unix_ms` (and from the response's `Date` when `use_date_header`).
    ///
    /// Status codes outside 100–599 are treated as 500.
    pub fn classify<K, V>(
        &self,
        outcome: Outcome,
        request: Request<'_>,
        headers: &[(K, V)],
        now_unix_ms: i64,
        use_date_header: bool,
    ) -> Verdict
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let idempotent =
            request.has_idempotency_key || self.idempotent_methods.contains(request.method);
        let retry = |cause| Verdict::Retry {
            cause,
            server_wait: server_wait(headers, now_unix_ms, use_date_header),
        };
        match outcome {
            Outcome::Success => Verdict::Success,
            Outcome::Transport(t) if self.transport_any_method.contains(t) => {
                retry(Cause::Transport(t))
            }
            Outcome::Transport(t) if self.transport_if_idempotent.contains(t) => {
                if idempotent {
                    retry(Cause::Transport(t))
                } else {
                    Verdict::GiveUp {
                        cause: Cause::NotIdempotent,
                    }
                }
            }
            Outcome::Transport(Transport::Tls) => Verdict::GiveUp { cause: Cause::Tls },
            Outcome::Transport(_) => Verdict::GiveUp {
                cause: Cause::Permanent,
            },
            Outcome::Status(code) => {
                let code = if (100..=599).contains(&code) {
                    code
                } else {
                    500
                };
                let cause = match code {
                    429 => Cause::RateLimited,
                    403 if self.quota_403_is_rate_limit && quota_spent(headers) => {
                        return retry(Cause::RateLimited)
                    }
                    503 => Cause::Unavailable,
                    _ => Cause::ServerError,
                };
                if code < 400 {
                    Verdict::Success
                } else if self.retry_any_method.contains(code) {
                    retry(cause)
                } else if self.retry_if_idempotent.contains(code) {
                    if idempotent {
                        retry(cause)
                    } else {
                        Verdict::GiveUp {
                            cause: Cause::NotIdempotent,
                        }
                    }
                } else {
                    Verdict::GiveUp {
                        cause: Cause::Permanent,
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_read_only_where_it_may_be_set() {
        let out = |status| Err(crate::ConfigError::StatusOutOfRange { status });
        assert_eq!(Rules::DEFAULT.rule_of(429), Ok(RetryRule::Always));
        assert_eq!(Rules::DEFAULT.rule_of(404), Ok(RetryRule::Never));
        assert_eq!(Rules::DEFAULT.rule_of(399), out(399));
        assert_eq!(Rules::DEFAULT.rule_of(600), out(600));
        assert_eq!(Rules::DEFAULT.rule_of(65_936), out(65_936));
    }

    #[test]
    fn named_causes_are_all_but_the_transport_tls() {
        assert!(Cause::Success.nameable(true) && !Cause::Success.nameable(false));
        assert!(Cause::Tls.nameable(false) && !Cause::Transport(Transport::Tls).nameable(true));
        assert_eq!(Cause::named_by("success", true), Some(Cause::Success));
        assert_eq!(Cause::named_by("success", false), None);
        assert_eq!(Cause::named_by("tls", false), Some(Cause::Tls));
        let names: Vec<&str> = Cause::named(false).map(Cause::name).collect();
        assert_eq!(
            names,
            [
                "rate_limited",
                "unavailable",
                "server_error",
                "connect",
                "timeout",
                "reset",
                "other",
                "not_idempotent",
                "permanent",
                "tls"
            ]
        );
        assert_eq!(Cause::named(true).next(), Some(Cause::Success));
        for c in Cause::named(true) {
            assert_eq!(Cause::from_name(c.name()), Some(c));
        }
    }

    const NONE: [(&str, &str); 0] = [];

    fn v(outcome: Outcome, method: &str, key: bool) -> (&'static str, &'static str) {
        let r = Request {
            method,
            has_idempotency_key: key,
        };
        let verdict = Rules::DEFAULT.classify(outcome, r, &NONE, 0, false);
        (verdict.name(), verdict.cause().name())
    }

    #[test]
    fn the_table_of_the_spec() {
        use Outcome::{Status as S, Transport as T};
        assert_eq!(v(S(200), "POST", false), ("success", "success"));
        assert_eq!(v(S(304), "GET", false), ("success", "success"));
        assert_eq!(v(S(429), "POST", false), ("retry", "rate_limited"));
        assert_eq!(v(S(503), "POST", false), ("retry", "unavailable"));
        assert_eq!(v(S(500), "GET", false), ("retry", "server_error"));
        assert_eq!(v(S(500), "POST", false), ("give_up", "not_idempotent"));
        assert_eq!(v(S(500), "POST", true), ("retry", "server_error"));
        assert_eq!(v(S(501), "GET", false), ("give_up", "permanent"));
        assert_eq!(v(S(505), "GET", false), ("give_up", "permanent"));
        for c in [400, 401, 403, 404, 408, 422, 451] {
            assert_eq!(v(S(c), "GET", false), ("give_up", "permanent"), "{c}");
        }
        assert_eq!(
            v(T(Transport::Connect), "POST", false),
            ("retry", "connect")
        );
        assert_eq!(v(T(Transport::Tls), "GET", false), ("give_up", "tls"));
        assert_eq!(
            v(T(Transport::Timeout), "POST", false),
            ("give_up", "not_idempotent")
        );
        assert_eq!(
            v(T(Transport::Timeout), "PATCH", true),
            ("retry", "timeout")
        );
        assert_eq!(v(T(Transport::Reset), "put", false), ("retry", "reset"));
        assert_eq!(v(S(0), "GET", false), ("retry", "server_error"));
        assert_eq!(v(S(999), "POST", false), ("give_up", "not_idempotent"));
    }

    #[test]
    fn a_spent_quota_403_is_a_rate_limit_with_its_wait() {
        let h = [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "30")];
        let verdict = Rules::DEFAULT.classify(Outcome::Status(403), Request::GET, &h, 0, false);
        assert_eq!(
            verdict,
            Verdict::Retry {
                cause: Cause::RateLimited,
                server_wait: Some(ServerWait::Ms(30_000))
            }
        );
        let plain = [("X-RateLimit-Remaining", "12")];
        let verdict = Rules::DEFAULT.classify(Outcome::Status(403), Request::GET, &plain, 0, false);
        assert_eq!(
            verdict,
            Verdict::GiveUp {
                cause: Cause::Permanent
            }
        );
    }

    #[test]
    fn cause_names_round_trip() {
        for c in Cause::ALL {
            let back = Cause::from_name(c.name()).unwrap();
            assert_eq!(back.name(), c.name());
        }
        assert_eq!(Cause::from_name("tls"), Some(Cause::Tls));
        assert_eq!(Cause::from_name("nope"), None);
    }

    #[test]
    fn the_sets_can_be_changed() {
        let rules = Rules {
            retry_any_method: Rules::DEFAULT.retry_any_method.with(408),
            idempotent_methods: MethodSet::IDEMPOTENT.with("POST").unwrap(),
            ..Rules::DEFAULT
        };
        let c = |o, m| {
            rules.classify(
                o,
                Request {
                    method: m,
                    has_idempotency_key: false,
                },
                &NONE,
                0,
                false,
            )
        };
        assert_eq!(c(Outcome::Status(408), "POST").name(), "retry");
        assert_eq!(c(Outcome::Status(500), "POST").name(), "retry");
        assert_eq!(MethodSet::IDEMPOTENT.with("BREW"), None);
        assert!(!MethodSet::IDEMPOTENT.without("get").contains("GET"));
    }
}
