//! The names of the core's enums as every binding reads and lists them: one list per enum
//! (its `ALL`), one spelling (its `name`), one way of listing them in a message.

use crate::attempts::GiveUpReason;
use crate::backoff::Jitter;
use crate::classify::{RetryRule, Transport};
use crate::http::Style;
use crate::journal::Level;
use crate::queue::BatchStatus;
use crate::record::AttemptDecision;

/// `names` as every binding's messages list them, each between `quote`s, the last after
/// "or": `"a", "b" or "c"` (`'a', 'b' or 'c'` with `'`); one name alone, or nothing.
pub fn one_of<'a>(names: impl IntoIterator<Item = &'a str>, quote: char) -> String {
    let quoted: Vec<String> = names
        .into_iter()
        .map(|n| format!("{quote}{n}{quote}"))
        .collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// An enum whose values a binding takes by name: the type's own `ALL`, `name` and
/// `from_name`, for code generic over them (a binding's one reader of a named argument).
pub trait Named: Copy + 'static {
    /// Every value, in the order messages list them.
    const ALL: &'static [Self];

    /// The value's name.
    fn name(self) -> &'static str;

    /// The value named `name`, as [`name`](Named::name) spells it.
    fn from_name(name: &str) -> Option<Self>;

    /// Every name, as a message lists them ([`one_of`]).
    fn one_of(quote: char) -> String {
        one_of(Self::ALL.iter().map(|v| v.name()), quote)
    }
}

macro_rules! named {
    ($($t:ident),+) => {$(
        impl Named for $t {
            const ALL: &'static [Self] = &$t::ALL;

            fn name(self) -> &'static str {
                $t::name(self)
            }

            fn from_name(name: &str) -> Option<Self> {
                $t::from_name(name)
            }
        }
    )+};
}

named!(
    AttemptDecision,
    BatchStatus,
    GiveUpReason,
    Jitter,
    Level,
    RetryRule,
    Style,
    Transport
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_of_lists_names_as_messages_do() {
        assert_eq!(one_of(["a", "b", "c"], '"'), r#""a", "b" or "c""#);
        assert_eq!(one_of(["a", "b"], '\''), "'a' or 'b'");
        assert_eq!(one_of(["a"], '"'), r#""a""#);
        assert_eq!(one_of([], '"'), "");
    }

    fn reads_back<T: Named + PartialEq + std::fmt::Debug>() {
        for &v in T::ALL {
            assert_eq!(<T as Named>::from_name(v.name()), Some(v));
        }
        assert_eq!(<T as Named>::from_name("?"), None);
    }

    #[test]
    fn every_named_value_reads_back_by_its_name() {
        reads_back::<AttemptDecision>();
        reads_back::<BatchStatus>();
        reads_back::<GiveUpReason>();
        reads_back::<Jitter>();
        reads_back::<Level>();
        reads_back::<RetryRule>();
        reads_back::<Style>();
        reads_back::<Transport>();
        assert_eq!(
            Jitter::one_of('"'),
            r#""full", "equal", "decorrelated" or "none""#
        );
        assert_eq!(Level::one_of('\''), "'debug', 'info' or 'warning'");
    }
}
