//! A strict reader of RFC 9651 structured field lists, enough for the rate-limit hints
//! (`RateLimit`): a value that is not a valid list is rejected as a whole
//! (RFC 9651 §4.2: "fail parsing"), so a malformed field can never give a hint — an integer of more
//! than 15 digits included.

/// A bare item (RFC 9651 §3.3); only integers are kept by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bare {
    /// An integer, at most 15 digits.
    Integer(i64),
    /// Any other valid item: decimal, string, token, byte sequence, boolean, date, display
    /// string.
    Other,
}

/// One list member: its parameters, in order (an inner list's own items are checked and
/// dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) params: Vec<(String, Bare)>,
}

impl Member {
    /// The value of the parameter `key` (the last one given wins, RFC 9651 §3.1.2).
    pub(crate) fn param(&self, key: &str) -> Option<Bare> {
        self.params
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn skip_sp(&mut self) {
        while self.eat(b' ') {}
    }

    fn skip_ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn list(&mut self) -> Option<Vec<Member>> {
        let mut members = Vec::new();
        self.skip_sp();
        if self.peek().is_none() {
            return Some(members);
        }
        loop {
            if self.peek() == Some(b'(') {
                self.inner_list()?;
            } else {
                self.bare_item()?;
            }
            members.push(Member {
                params: self.parameters()?,
            });
            self.skip_ows();
            if self.peek().is_none() {
                return Some(members);
            }
            if !self.eat(b',') {
                return None;
            }
            self.skip_ows();
            self.peek()?; // a trailing comma fails
        }
    }

    fn inner_list(&mut self) -> Option<()> {
        self.eat(b'(');
        loop {
            self.skip_sp();
            if self.eat(b')') {
                return Some(());
            }
            self.bare_item()?;
            self.parameters()?;
            if !matches!(self.peek(), Some(b' ' | b')')) {
                return None;
            }
        }
    }

    fn parameters(&mut self) -> Option<Vec<(String, Bare)>> {
        let mut params = Vec::new();
        while self.eat(b';') {
            self.skip_sp();
            let key = self.key()?;
            let value = if self.eat(b'=') {
                self.bare_item()?
            } else {
                Bare::Other // a boolean true
            };
            params.push((key, value));
        }
        Some(params)
    }

    fn key(&mut self) -> Option<String> {
        let start = self.i;
        match self.peek() {
            Some(b'a'..=b'z' | b'*') => self.i += 1,
            _ => return None,
        }
        while matches!(
            self.peek(),
            Some(b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' | b'*')
        ) {
            self.i += 1;
        }
        Some(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn bare_item(&mut self) -> Option<Bare> {
        match self.peek()? {
            b'-' | b'0'..=b'9' => self.number(),
            b'"' => self.string(),
            b'*' | b'A'..=b'Z' | b'a'..=b'z' => {
                self.i += 1;
                while self.peek().is_some_and(is_token_char) {
                    self.i += 1;
                }
                Some(Bare::Other)
            }
            b':' => {
                self.i += 1;
                while self
                    .peek()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
                {
                    self.i += 1;
                }
                self.eat(b':').then_some(Bare::Other)
            }
            b'?' => {
                self.i += 1;
                (self.eat(b'0') || self.eat(b'1')).then_some(Bare::Other)
            }
            b'@' => {
                self.i += 1;
                matches!(self.number()?, Bare::Integer(_)).then_some(Bare::Other)
            }
            b'%' => {
                self.i += 1;
                self.display_string()
            }
            _ => None,
        }
    }

    /// An integer (at most 15 digits) or a decimal (at most 12 digits, a dot, 1–3 digits).
    fn number(&mut self) -> Option<Bare> {
        let negative = self.eat(b'-');
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        let int_digits = self.i - start;
        if int_digits == 0 {
            return None;
        }
        if self.eat(b'.') {
            let frac_start = self.i;
            while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                self.i += 1;
            }
            let frac = self.i - frac_start;
            return (int_digits <= 12 && (1..=3).contains(&frac)).then_some(Bare::Other);
        }
        if int_digits > 15 {
            return None;
        }
        let n = self.s[start..self.i]
            .iter()
            .fold(0i64, |acc, b| acc * 10 + i64::from(b - b'0'));
        Some(Bare::Integer(if negative { -n } else { n }))
    }

    fn string(&mut self) -> Option<Bare> {
        self.eat(b'"');
        loop {
            match self.peek()? {
                b'\\' => {
                    self.i += 1;
                    if !matches!(self.peek()?, b'"' | b'\\') {
                        return None;
                    }
                    self.i += 1;
                }
                b'"' => {
                    self.i += 1;
                    return Some(Bare::Other);
                }
                0x20..=0x7e => self.i += 1,
                _ => return None,
            }
        }
    }

    fn display_string(&mut self) -> Option<Bare> {
        if !self.eat(b'"') {
            return None;
        }
        let mut bytes = Vec::new();
        loop {
            match self.peek()? {
                b'%' => {
                    let hex = |b: u8| matches!(b, b'0'..=b'9' | b'a'..=b'f');
                    let (h, l) = (*self.s.get(self.i + 1)?, *self.s.get(self.i + 2)?);
                    if !hex(h) || !hex(l) {
                        return None;
                    }
                    let v = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
                    bytes.push(v(h) * 16 + v(l));
                    self.i += 3;
                }
                b'"' => {
                    self.i += 1;
                    return std::str::from_utf8(&bytes).is_ok().then_some(Bare::Other);
                }
                b @ 0x20..=0x7e => {
                    bytes.push(b);
                    self.i += 1;
                }
                _ => return None,
            }
        }
    }
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~:/".contains(&b)
}

/// The members of the structured list `value`, or `None` when it is not a valid list.
pub(crate) fn parse_list(value: &str) -> Option<Vec<Member>> {
    Parser {
        s: value.as_bytes(),
        i: 0,
    }
    .list()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(value: &str) -> Option<Vec<Vec<(String, Bare)>>> {
        parse_list(value).map(|m| m.into_iter().map(|m| m.params).collect())
    }

    #[test]
    fn valid_lists() {
        assert_eq!(
            params("\"minute\";r=0;t=30, day;r=5;t=86400"),
            Some(vec![
                vec![
                    ("r".into(), Bare::Integer(0)),
                    ("t".into(), Bare::Integer(30))
                ],
                vec![
                    ("r".into(), Bare::Integer(5)),
                    ("t".into(), Bare::Integer(86400))
                ],
            ])
        );
        assert_eq!(
            params("(\"a\" b);q=?1, :aGk=:;x=1.5, @17;y, %\"caf%c3%a9\", -3"),
            Some(vec![
                vec![("q".into(), Bare::Other)],
                vec![("x".into(), Bare::Other)],
                vec![("y".into(), Bare::Other)],
                vec![],
                vec![],
            ])
        );
        assert_eq!(params(""), Some(vec![]));
        assert_eq!(
            params("a;t=999999999999999"),
            Some(vec![vec![("t".into(), Bare::Integer(999_999_999_999_999))]])
        );
    }

    #[test]
    fn malformed_lists_fail_as_a_whole() {
        for bad in [
            "a;t=1234567890123456", // 16 digits
            "a;t=1, b;t=",
            "a,",
            "a;T=1",
            "a b",
            "\"open",
            "a;t=1.2345",
            "(a b",
            "%\"%C3%A9\"",
            "a;r=0;t=30,, b",
            "é",
        ] {
            assert_eq!(params(bad), None, "{bad:?}");
        }
    }
}
