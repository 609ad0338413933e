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
}
