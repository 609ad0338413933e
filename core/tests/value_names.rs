//! The plain form of every named value (serde, the `serde` feature) spells each variant as
//! the core's `name()` does, so that a value read back from any language is the same value.

use recuo::{Confidence, GiveUpReason, Origin, RetryAfter, RetryAfterValue};

fn serde_name<T: serde::Serialize>(value: T) -> String {
    serde_json::to_value(value)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn serde_names_are_the_core_names() {
    for r in GiveUpReason::ALL {
        assert_eq!(serde_name(r), r.name());
    }
    for o in [Origin::Api, Origin::Proxy, Origin::Cdn, Origin::Unknown] {
        assert_eq!(serde_name(o), o.name());
    }
    for c in [Confidence::Low, Confidence::Medium, Confidence::High] {
        assert_eq!(serde_name(c), c.name());
    }
    for r in [
        RetryAfter::Seconds { wait_ms: 1 },
        RetryAfter::Date { wait_ms: 1 },
        RetryAfter::Unbounded,
        RetryAfter::Invalid,
    ] {
        assert_eq!(serde_name(RetryAfterValue::from(r).kind), r.kind());
    }
}
