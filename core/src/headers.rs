//! Reading response headers given as name–value pairs, as every binding can hand them over.

/// The value of the first header named `name` (ASCII case-insensitive), trimmed of blanks.
pub fn header<'h, K, V>(headers: &'h [(K, V)], name: &str) -> Option<&'h str>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    headers
        .iter()
        .find(|(k, _)| k.as_ref().trim().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_ref().trim_matches([' ', '\t']))
}

/// Every value of the headers named `name` (ASCII case-insensitive), trimmed of blanks, in
/// order.
pub fn header_values<'h, K, V>(
    headers: &'h [(K, V)],
    name: &'h str,
) -> impl Iterator<Item = &'h str>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    headers
        .iter()
        .filter(move |(k, _)| k.as_ref().trim().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_ref().trim_matches([' ', '\t']))
}

/// The value of a singleton field (RFC 9110 §5.3): its one value, or the value every line
/// repeats; `None` when absent, or given twice with different values (malformed).
pub fn singleton<'h, K, V>(headers: &'h [(K, V)], name: &'h str) -> Option<&'h str>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut values = header_values(headers, name);
    let first = values.next()?;
    values.all(|v| v == first).then_some(first)
}

/// The lines of a list-valued field combined into one value, as RFC 9110 §5.3 says: joined
/// with `", "`, empty lines left out; `None` when absent.
pub fn combined<K, V>(headers: &[(K, V)], name: &str) -> Option<String>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut out: Option<String> = None;
    for v in header_values(headers, name).filter(|v| !v.is_empty()) {
        match &mut out {
            Some(s) => {
                s.push_str(", ");
                s.push_str(v);
            }
            None => out = Some(v.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_case_insensitive_and_values_trimmed() {
        let h = [("retry-after", " 12\t"), ("Retry-After", "99")];
        assert_eq!(header(&h, "Retry-After"), Some("12"));
        assert_eq!(header(&h, "date"), None);
        let owned = vec![("X-A".to_string(), "b".to_string())];
        assert_eq!(header(&owned, "x-a"), Some("b"));
    }

    #[test]
    fn singletons_repeated_alike_are_one_value_and_otherwise_malformed() {
        let same = [("Retry-After", "5"), ("retry-after", " 5")];
        assert_eq!(singleton(&same, "Retry-After"), Some("5"));
        let differ = [("Retry-After", "5"), ("Retry-After", "10")];
        assert_eq!(singleton(&differ, "Retry-After"), None);
        assert_eq!(singleton(&differ, "Date"), None);
    }

    #[test]
    fn list_fields_are_combined_with_a_comma() {
        let h = [
            ("RateLimit", "\"a\";r=1;t=2"),
            ("X", "y"),
            ("ratelimit", ""),
            ("RATELIMIT", "\"b\";r=0;t=9 "),
        ];
        assert_eq!(
            combined(&h, "RateLimit").as_deref(),
            Some("\"a\";r=1;t=2, \"b\";r=0;t=9")
        );
        assert_eq!(combined(&h, "RateLimit-Policy"), None);
    }
}
