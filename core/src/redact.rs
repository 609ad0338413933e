//! Redaction, applied before anything is recorded, printed or handed to a hook:
//! credentials and personal data never leave recuo, while host, path and status do.
//!
//! - URLs lose their userinfo (`user:pass@`); the values of sensitive query parameters become
//!   `[redacted]`; in paths and query values, e-mail addresses become `[email]` and numbers
//!   that look like personal identifiers — 11 or more digits once `.`, `-`, `/` and spaces
//!   are removed: CPF, CNPJ, card and phone numbers — become `[number]`.
//! - Headers keep their names; the values of sensitive ones become `[redacted]`, and URLs in
//!   the values of the others (`Location`, `Link`, …) are redacted as above.
//!
//! - Path parameters (`/cart;jsessionid=…`) and `name=value` pieces of a path whose name is
//!   sensitive lose their value too.
//! - In free text (a header value), every word that holds a URL or a URI reference — `://`,
//!   a scheme-relative `//host`, a leading `/`, a `?`, `#`, `;` or `@` — is redacted as a
//!   URL, whole: a URL in a header value does not end at `;`, `,` or `'`. Words end only at
//!   white space and `"`; `<…>` references are redacted whole.
//!
//! A name is sensitive when it is `Authorization`, `Proxy-Authorization`, `Cookie`,
//! `Set-Cookie`, `sid` or `sig` (Azure's and others' signatures), `code` (OAuth's
//! authorization code, RFC 6749 §4.1.2), or contains (in any case, after percent-decoding)
//! `token`, `secret`, `password`, `passwd`, `pwd`, `pass`, `key`, `auth`, `session`, `sessid`
//! (PHP's `PHPSESSID`), `signature`, `credential`, `jwt`, `bearer` or `csrf`.

/// What a secret's value becomes.
pub const REDACTED: &str = "[redacted]";
/// What an e-mail address becomes.
pub const EMAIL: &str = "[email]";
/// What a long number (CPF, CNPJ, card, phone) becomes.
pub const NUMBER: &str = "[number]";

const SENSITIVE_NAMES: [&str; 7] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "sid",
    "sig",
    "code",
];
const SENSITIVE_PARTS: [&str; 15] = [
    "pwd",
    "pass",
    "jwt",
    "bearer",
    "csrf",
    "sessid",
    "token",
    "secret",
    "password",
    "passwd",
    "key",
    "auth",
    "session",
    "signature",
    "credential",
];

/// Whether a header or query parameter called `name` holds a secret.
pub fn is_sensitive_name(name: &str) -> bool {
    let decoded = percent_decode(name.trim()).to_ascii_lowercase();
    SENSITIVE_NAMES.contains(&decoded.as_str())
        || SENSITIVE_PARTS.iter().any(|p| decoded.contains(p))
}

/// A redacted URL, and whether the URL was malformed (then redacted as far as it could be
/// read: never shown as it came).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactedUrl {
    /// The URL with secrets and personal data replaced.
    pub url: String,
    /// The input was not a well-formed absolute or relative URL.
    pub malformed: bool,
}

/// Redacts a URL: userinfo removed (of a scheme-relative `//user:pw@host/` too), sensitive
/// query and path parameter values `[redacted]`, e-mails and long numbers masked in the path
/// and query values. Never panics, whatever the input.
pub fn redact_url(url: &str) -> RedactedUrl {
    let mut malformed = url.chars().any(|c| c.is_control() || c == ' ');
    let (before_fragment, fragment) = match url.split_once('#') {
        Some((a, f)) => (a, Some(f)),
        None => (url, None),
    };
    let (before_query, query) = match before_fragment.split_once('?') {
        Some((a, q)) => (a, Some(q)),
        None => (before_fragment, None),
    };
    let mut out = String::with_capacity(url.len());
    // scheme://authority/path, //authority/path — or a relative path.
    let authority_at = match before_query.find("://") {
        _ if before_query.starts_with("//") => Some(2),
        Some(i) => {
            // An odd scheme makes the URL malformed, but its userinfo still goes.
            if !is_scheme(&before_query[..i]) {
                malformed = true;
            }
            Some(i + 3)
        }
        None => None,
    };
    let rest = match authority_at {
        Some(i) => {
            // What stands before `://` when it is no scheme (`x;token=s://h`) may hold a
            // secret: redacted as a path, and anything up to an `@` dropped as userinfo.
            let lead = &before_query[..i];
            if malformed {
                let lead = lead.rfind('@').map_or(lead, |at| &lead[at + 1..]);
                out.push_str(&mask_personal(&redact_path_params(lead), true));
            } else {
                out.push_str(&mask_personal(lead, false));
            }
            let after = &before_query[i..];
            let (authority, path) = match after.find('/') {
                Some(j) => (&after[..j], &after[j..]),
                None => (after, ""),
            };
            let host = match authority.rfind('@') {
                Some(at) => &authority[at + 1..],
                None => authority,
            };
            if host.is_empty() {
                malformed = true;
            }
            out.push_str(&mask_personal(&redact_path_params(host), false));
            path
        }
        None => before_query,
    };
    out.push_str(&mask_personal(&redact_path_params(rest), true));
    if let Some(q) = query {
        out.push('?');
        out.push_str(&redact_query(q));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(&redact_query(f));
    }
    RedactedUrl {
        url: out,
        malformed,
    }
}

fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// `/cart;jsessionid=x/y` → `/cart;jsessionid=[redacted]/y`: every `name=value` piece of a
/// path (between `/`, `;` and `&`) whose name is sensitive loses its value.
fn redact_path_params(path: &str) -> String {
    if !path.contains('=') {
        return path.to_string();
    }
    let mut out = String::with_capacity(path.len());
    let mut start = 0;
    for (i, sep) in path
        .match_indices(['/', ';', '&'])
        .chain(std::iter::once((path.len(), "")))
    {
        let piece = &path[start..i];
        match piece.split_once('=') {
            Some((name, _)) if is_sensitive_name(name) => {
                out.push_str(name);
                out.push('=');
                out.push_str(REDACTED);
            }
            _ => out.push_str(piece),
        }
        out.push_str(sep);
        start = i + sep.len();
    }
    out
}

/// `a=1&token=x&b` → `a=1&token=[redacted]&b`, with personal data masked in every value.
/// Pairs are split at `&`, `;` and a stray `?`, so that no server's way of reading the query
/// can find a secret that recuo left in.
fn redact_query(q: &str) -> String {
    let mut out = String::with_capacity(q.len());
    let mut start = 0;
    for (i, sep) in q
        .match_indices(['&', ';', '?', '#'])
        .chain(std::iter::once((q.len(), "")))
    {
        redact_pair(&q[start..i], &mut out);
        out.push_str(sep);
        start = i + sep.len();
    }
    out
}

fn redact_pair(pair: &str, out: &mut String) {
    match pair.split_once('=') {
        Some((name, _)) if is_sensitive_name(name) => {
            out.push_str(name);
            out.push('=');
            out.push_str(REDACTED);
        }
        Some((name, value)) => {
            out.push_str(&mask_personal(name, false));
            out.push('=');
            if value.contains("://") {
                // A URL as a value (`?next=https://u:pw@h/`): redacted as a URL.
                out.push_str(&redact_url(value).url);
            } else {
                out.push_str(&mask_personal(value, true));
            }
        }
        None => out.push_str(&mask_personal(pair, true)),
    }
}

/// Redacts header values: secrets `[redacted]`; URLs inside other values redacted.
pub fn redact_headers<K: AsRef<str>, V: AsRef<str>>(headers: &[(K, V)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            let (name, value) = (k.as_ref(), v.as_ref());
            let value = if is_sensitive_name(name) {
                REDACTED.to_string()
            } else {
                redact_urls_in(value)
            };
            (name.to_string(), value)
        })
        .collect()
}

/// Every URL inside free text, redacted: URI references in angle brackets (`Link:
/// </v1/items?page=2&token=x>; rel="next"`) whole, and every word (up to white space or `"`)
/// that holds a URL or a URI reference — `scheme://…`, `//host/…`, `/path`, `v2/items?…`,
/// `?token=…`, `url=/login?…`, `/cart;jsessionid=…`, `user@host` — as one URL, so that a
/// URL never ends early at `;`, `,` or `'`. Other words keep their text, with e-mail
/// addresses and long numbers masked.
pub fn redact_urls_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        let Some(len) = rest[open..].find('>') else {
            break;
        };
        out.push_str(&redact_words(&rest[..open]));
        out.push('<');
        // A URI reference holds no blank or quote: what does is text, read word by word.
        let inner = &rest[open + 1..open + len];
        if inner.contains(|c: char| c.is_whitespace() || c == '"') {
            out.push_str(&redact_words(inner));
        } else {
            out.push_str(&redact_url(inner).url);
        }
        out.push('>');
        rest = &rest[open + len + 1..];
    }
    out.push_str(&redact_words(rest));
    out
}

/// [`redact_urls_in`] for text with no angle-bracketed references: word by word.
fn redact_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = 0;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() || c == '"' {
            out.push_str(&redact_word(&text[word..i]));
            out.push(c);
            word = i + c.len_utf8();
        }
    }
    out.push_str(&redact_word(&text[word..]));
    out
}

fn redact_word(word: &str) -> String {
    let url_like = word.contains("://")
        || word.starts_with('/')
        || word.contains(['?', '#', ';', '@'])
        || (word.contains('=') && word.contains(['/', '&']));
    if url_like {
        redact_url(word).url
    } else {
        mask_personal(word, true)
    }
}

/// Masks e-mail addresses and, when `numbers`, long digit runs.
fn mask_personal(s: &str, numbers: bool) -> String {
    let emails = mask_emails(s);
    if numbers {
        mask_numbers(&emails)
    } else {
        emails
    }
}

fn is_email_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-')
}

/// Masks e-mail addresses (`local@domain.tld`, also with `@` as `%40`) in one pass.
fn mask_emails(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0; // everything before this is in `out`
    let mut run_start = 0; // where the current run of local-part characters began
    let mut i = 0;
    while i < bytes.len() {
        let at_len = if bytes[i] == b'@' {
            1
        } else if bytes[i..].starts_with(b"%40") {
            3
        } else {
            0
        };
        if at_len == 0 {
            let c = s[i..].chars().next().unwrap_or('\0');
            if !is_email_char(c) {
                run_start = i + c.len_utf8();
            }
            i += c.len_utf8().max(1);
            continue;
        }
        let domain_start = i + at_len;
        let domain_len = bytes[domain_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
            .count();
        let domain = &s[domain_start..domain_start + domain_len];
        if run_start < i && domain.contains('.') && !domain.starts_with('.') {
            out.push_str(&s[copied..run_start]);
            out.push_str(EMAIL);
            copied = domain_start + domain_len;
            i = copied;
        } else {
            i = domain_start;
        }
        run_start = i;
    }
    out.push_str(&s[copied..]);
    out
}

fn is_separator(b: u8) -> bool {
    matches!(b, b'.' | b'-' | b'/' | b' ' | b'+')
}

/// Masks runs of digits and single separators that hold 11 or more digits.
fn mask_numbers(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        // A run: digits, each separator followed by a digit. "%20" counts as a space.
        let start = i;
        let mut digits = 0;
        let mut end = i;
        let mut j = i;
        while j < bytes.len() {
            if bytes[j].is_ascii_digit() {
                digits += 1;
                j += 1;
                end = j;
            } else if is_separator(bytes[j]) && bytes.get(j + 1).is_some_and(u8::is_ascii_digit) {
                j += 1;
            } else if bytes[j..].starts_with(b"%20")
                && bytes.get(j + 3).is_some_and(u8::is_ascii_digit)
            {
                j += 3;
            } else {
                break;
            }
        }
        if digits >= 11 {
            out.push_str(&s[copied..start]);
            out.push_str(NUMBER);
            copied = end;
        }
        i = end.max(i + 1);
    }
    out.push_str(&s[copied..]);
    out
}

/// Percent-decodes what it can (for matching names only).
fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(hi), Some(lo)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(hi * 16 + lo);
                i += 3;
                continue;
            }
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(u: &str) -> String {
        redact_url(u).url
    }

    #[test]
    fn userinfo_and_secret_parameters() {
        assert_eq!(
            r("https://alice:s3cret@api.example.com/v1/items?api_key=abc123&page=2"),
            "https://api.example.com/v1/items?api_key=[redacted]&page=2"
        );
        assert_eq!(
            r("https://h.io/x?X-Amz-Signature=deadbeef&X-Amz-Credential=AKIA"),
            "https://h.io/x?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]"
        );
        assert_eq!(
            r("https://h.io/x?access_token=t&ACCESS_TOKEN=u&sessionId=9"),
            "https://h.io/x?access_token=[redacted]&ACCESS_TOKEN=[redacted]&sessionId=[redacted]"
        );
        assert_eq!(
            r("https://h.io/x?api%5Fkey=abc"),
            "https://h.io/x?api%5Fkey=[redacted]"
        );
    }

    #[test]
    fn personal_data_in_paths_and_values() {
        assert_eq!(
            r("https://h.io/users/ana.souza@example.com/orders"),
            "https://h.io/users/[email]/orders"
        );
        assert_eq!(
            r("https://h.io/cpf/123.456.789-09"),
            "https://h.io/cpf/[number]"
        );
        assert_eq!(
            r("https://h.io/cnpj/12.345.678/0001-95/notas"),
            "https://h.io/cnpj/[number]/notas"
        );
        assert_eq!(
            r("https://h.io/p?phone=%2B55%2011%2091234-5678"),
            "https://h.io/p?phone=%2B[number]"
        );
        assert_eq!(
            r("https://h.io/p?card=4111%201111%201111%201111&n=42"),
            "https://h.io/p?card=[number]&n=42"
        );
        assert_eq!(
            r("https://h.io/p?to=bob%40mail.example.org"),
            "https://h.io/p?to=[email]"
        );
        // Short numbers and versions stay.
        assert_eq!(
            r("https://h.io/v2/orders/12345?page=10"),
            "https://h.io/v2/orders/12345?page=10"
        );
    }

    #[test]
    fn malformed_urls_are_redacted_as_far_as_possible() {
        let x = redact_url("ht!tp://user:pw@host/a b?token=x");
        assert!(x.malformed);
        assert!(!x.url.contains("token=x"));
        for junk in [
            "", "@", "://", "?", "#", "%", "%4", "a@b", "http://", "http://@", "\u{0}",
        ] {
            let _ = redact_url(junk);
        }
        assert!(redact_url("http://").malformed);
    }

    #[test]
    fn fuzzed_placements_of_secrets_are_redacted() {
        // Found by `make fuzz-redaction`: text before `://` that is no scheme.
        let out = redact_urls_in("\0Lecatio:pp;token=S3CR3T\u{e3}://ush/");
        assert_eq!(out, "\0Lecatio:pp;token=[redacted]//ush/");
        // Found by `make fuzz-redaction`: blanks inside angle brackets are no URI reference.
        let out = redact_urls_in("</a?x=1  https://user:S3CR3T@</b>");
        assert_eq!(out, "</a?x=1  https://</b>");
        // A URL as a query value keeps no userinfo.
        assert_eq!(
            r("https://h/login?next=https://u:S3CR3T@h2/x"),
            "https://h/login?next=https://h2/x"
        );
    }

    #[test]
    fn headers() {
        let h = [
            ("Authorization", "Bearer abc"),
            ("cookie", "sid=1"),
            ("X-Api-Key", "k"),
            ("Location", "https://u:p@h.io/next?token=z"),
            ("Content-Type", "application/json"),
        ];
        let out = redact_headers(&h);
        assert_eq!(out[0].1, REDACTED);
        assert_eq!(out[1].1, REDACTED);
        assert_eq!(out[2].1, REDACTED);
        assert_eq!(out[3].1, "https://h.io/next?token=[redacted]");
        assert_eq!(out[4].1, "application/json");
        assert_eq!(out[3].0, "Location");
    }
}
