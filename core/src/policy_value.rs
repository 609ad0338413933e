//! A policy as one plain value: the form in which a policy crosses a language boundary, goes
//! to another process or sits in a file, and the shape of the test vectors' `policy`.
//!
//! Every binding turns its own data (a Python `dict`, a PHP array, a JavaScript object, a C
//! string of JSON) into a [`PolicyValue`] and asks the core for the [`Policy`]; the checks and
//! the defaults live here only. With the `serde` feature a [`PolicyValue`] reads and writes
//! as a JSON object with its field names, and unknown fields are refused. Each language's face
//! of it (a Python `TypedDict`, a TypeScript interface, a PHP array shape) is generated from
//! this declaration by `make faces`.

use std::collections::BTreeMap;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::backoff::Jitter;
use crate::classify::{RetryRule, Rules, Transport, METHODS};
use crate::{ConfigError, Policy};

/// A policy's settings as plain data. A field left out takes its default value (5 attempts,
/// 200 ms base, 5 s cap, full jitter, no deadline, the default spread, `Idempotency-Key`, the
/// default classification). The three maps list only what differs from the default
/// classification. A field recuo does not know is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
// `remote = "Self"` makes the derived code inherent functions, so that the trait impls below
// can refuse a sequence: serde's derive would read `[3, 100]` as the first two fields.
#[cfg_attr(
    feature = "serde",
    derive(Serialize, Deserialize),
    serde(remote = "Self", default, deny_unknown_fields)
)]
pub struct PolicyValue {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The first backoff window, in milliseconds.
    pub base_ms: u64,
    /// The largest backoff window, in milliseconds (not below `base_ms`).
    pub cap_ms: u64,
    /// `full`, `equal`, `decorrelated` or `none`.
    pub jitter: String,
    /// The operation's whole time from the start of its first attempt, in milliseconds; null
    /// for no limit.
    pub deadline_ms: Option<u64>,
    /// The most added at random to a server's wait, in milliseconds; null for the smaller of
    /// the backoff window and 1 s.
    pub spread_ms: Option<u64>,
    /// The header that carries the idempotency key (an HTTP token).
    pub idempotency_header: String,
    /// Whether an HTTP-date wait is measured from the response's own `Date`.
    pub use_date_header: bool,
    /// Whether the server honours idempotency keys, so that a request sent with recuo's own
    /// key counts as idempotent.
    pub server_honours_keys: bool,
    /// Whether a 403 whose rate-limit headers say the quota is spent counts as a 429.
    pub quota_403_as_rate_limit: bool,
    /// Statuses (400–599, as decimal strings) whose rule differs from the default: `never`,
    /// `if_idempotent` or `always`.
    pub status_retry: BTreeMap<String, String>,
    /// Transport failures (`connect`, `tls`, `timeout`, `reset`, `other`) whose rule differs
    /// from the default.
    pub transport_retry: BTreeMap<String, String>,
    /// Methods whose idempotency differs from the default (GET, HEAD, OPTIONS, TRACE, PUT and
    /// DELETE are; POST, PATCH and CONNECT are not).
    pub idempotent_methods: BTreeMap<String, bool>,
}

#[cfg(feature = "serde")]
impl Serialize for PolicyValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        PolicyValue::serialize(self, serializer)
    }
}

#[cfg(feature = "serde")]
impl<'de> Deserialize<'de> for PolicyValue {
    /// Reads an object (a map) only.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OnlyAnObject;
        impl<'de> serde::de::Visitor<'de> for OnlyAnObject {
            type Value = PolicyValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of a policy's fields")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<PolicyValue, A::Error> {
                PolicyValue::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer.deserialize_map(OnlyAnObject)
    }
}

impl Default for PolicyValue {
    /// The default policy ([`Policy::guide_a`]).
    fn default() -> Self {
        Policy::guide_a().to_value()
    }
}

impl Policy {
    /// This policy as plain data: every setting written out, and only the classification
    /// rules that differ from the default. `Policy::from_value(&p.to_value()) == Ok(p)`.
    pub fn to_value(&self) -> PolicyValue {
        let (rules, default) = (self.rules(), Rules::DEFAULT);
        let (lo, hi) = Rules::STATUS_RANGE;
        // Filled by `insert`, not `collect`: a `BTreeMap` collected sorts a vector first, and
        // each sort instantiated costs the WebAssembly module kilobytes (three of them, 11 kB).
        let mut status_retry = BTreeMap::new();
        for c in (lo..=hi).filter(|&c| rules.status_rule(c) != default.status_rule(c)) {
            status_retry.insert(c.to_string(), rules.status_rule(c).name().to_owned());
        }
        let mut transport_retry = BTreeMap::new();
        for t in Transport::ALL {
            if rules.transport_rule(t) != default.transport_rule(t) {
                transport_retry.insert(
                    t.name().to_owned(),
                    rules.transport_rule(t).name().to_owned(),
                );
            }
        }
        let mut idempotent_methods = BTreeMap::new();
        for m in METHODS {
            let on = rules.idempotent_methods.contains(m);
            if on != default.idempotent_methods.contains(m) {
                idempotent_methods.insert((*m).to_owned(), on);
            }
        }
        let backoff = self.backoff();
        PolicyValue {
            max_attempts: self.max_attempts(),
            base_ms: backoff.base_ms(),
            cap_ms: backoff.cap_ms(),
            jitter: backoff.jitter().name().to_owned(),
            deadline_ms: self.deadline_ms(),
            spread_ms: self.spread_ms(),
            idempotency_header: self.idempotency_header().to_owned(),
            use_date_header: self.use_date_header(),
            server_honours_keys: self.server_honours_keys(),
            quota_403_as_rate_limit: rules.quota_403_is_rate_limit,
            status_retry,
            transport_retry,
            idempotent_methods,
        }
    }

    /// The policy `value` describes, checked as the builder checks it, plus
    /// [`ConfigError::UnknownName`] for a jitter, rule, transport, method or status the core
    /// does not know and [`ConfigError::StatusOutOfRange`] for a status outside 400–599.
    pub fn from_value(value: &PolicyValue) -> Result<Policy, ConfigError> {
        let unknown = |what| ConfigError::UnknownName { what };
        let rule = |name: &str| RetryRule::from_name(name).ok_or(unknown("retry rule"));
        let mut rules = Rules::DEFAULT;
        rules.quota_403_is_rate_limit = value.quota_403_as_rate_limit;
        for (status, name) in &value.status_retry {
            let code = parse_status(status).ok_or(unknown("status"))?;
            rules.set_status_rule(code, rule(name)?)?;
        }
        for (kind, name) in &value.transport_retry {
            let kind = Transport::from_name(kind).ok_or(unknown("transport"))?;
            rules.set_transport_rule(kind, rule(name)?);
        }
        let mut seen = Vec::new();
        for (method, &yes) in &value.idempotent_methods {
            // `post` and `POST` name one method: which one would win is not the caller's.
            let upper = method.to_ascii_uppercase();
            if seen.contains(&upper) {
                return Err(ConfigError::InvalidValue);
            }
            seen.push(upper);
            rules.idempotent_methods = if yes {
                rules
                    .idempotent_methods
                    .with(method)
                    .ok_or(unknown("method"))?
            } else if METHODS.iter().any(|m| m.eq_ignore_ascii_case(method)) {
                rules.idempotent_methods.without(method)
            } else {
                return Err(unknown("method"));
            };
        }
        let jitter = Jitter::from_name(&value.jitter).ok_or(unknown("jitter"))?;
        Policy::builder()
            .max_attempts(value.max_attempts)
            .base(std::time::Duration::from_millis(value.base_ms))
            .cap(std::time::Duration::from_millis(value.cap_ms))
            .jitter(jitter)
            .deadline(value.deadline_ms.map(std::time::Duration::from_millis))
            .spread(value.spread_ms.map(std::time::Duration::from_millis))
            .rules(rules)
            .idempotency_header(value.idempotency_header.clone())
            .use_date_header(value.use_date_header)
            .server_honours_keys(value.server_honours_keys)
            .build()
    }
}

/// A status written in decimal digits only (at most 3 of them), as a number.
fn parse_status(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_round_trips() {
        for p in [Policy::guide_a(), Policy::guide_b(), Policy::adapters()] {
            assert_eq!(Policy::from_value(&p.to_value()), Ok(p));
        }
    }

    #[test]
    fn the_default_value_is_guide_a_with_empty_maps() {
        let v = PolicyValue::default();
        assert_eq!((v.max_attempts, v.base_ms, v.cap_ms), (5, 200, 5000));
        assert!(v.status_retry.is_empty() && v.transport_retry.is_empty());
        assert!(v.idempotent_methods.is_empty());
    }

    #[test]
    fn rule_changes_are_listed_and_kept() {
        let mut v = PolicyValue::default();
        v.status_retry.insert("418".into(), "always".into());
        v.transport_retry.insert("connect".into(), "never".into());
        v.idempotent_methods.insert("post".into(), true);
        let p = Policy::from_value(&v).unwrap();
        let back = p.to_value();
        assert_eq!(
            back.status_retry.get("418").map(String::as_str),
            Some("always")
        );
        assert_eq!(
            back.transport_retry.get("connect").map(String::as_str),
            Some("never")
        );
        assert_eq!(back.idempotent_methods.get("POST"), Some(&true));
    }
}
