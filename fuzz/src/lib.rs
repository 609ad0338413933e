//! The checks of every fuzz target, one function per target (issue 11). Each takes the raw
//! bytes a stranger could send and panics only when recuo breaks a promise of the SPEC: a
//! panic inside recuo itself, a wait that is neither exact nor unbounded, a secret that
//! survives redaction. `fuzz_targets/*.rs` hand these to libFuzzer; `tests/corpora.rs`
//! replays the committed corpora through them as ordinary tests.

use recuo::{
    parse_http_date, parse_retry_after, quota_spent, server_wait, Outcome, Request, RetryAfter,
    Rules, ServerWait, Verdict, MAX_SAFE_MS,
};

/// The secret every redaction check injects; inputs that already hold it are skipped.
const SECRET: &str = "S3CR3TZQ";

/// After a first byte 0xff, reads 8 bytes as the clock (epoch ms); otherwise the clock says
/// 2023-11-14T22:13:20Z. Answers the clock and the rest of the input.
fn split_now(data: &[u8]) -> (i64, &[u8]) {
    if data.len() < 9 || data[0] != 0xff {
        return (1_700_000_000_000, data);
    }
    let (now, rest) = data[1..].split_at(8);
    let now = i64::from_le_bytes(now.try_into().unwrap_or([0; 8]));
    // Keep "now" within ±10,000 years of 1970, as a real clock is.
    (now % 315_576_000_000_000, rest)
}

/// Header lines `name: value`, one per line, from the bytes read as UTF-8 (lossily).
fn header_lines(data: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(data)
        .split('\n')
        .filter_map(|line| {
            let (k, v) = line.split_once(':')?;
            Some((k.to_string(), v.trim_end_matches('\r').to_string()))
        })
        .collect()
}

/// `Retry-After` and the HTTP-date parser (SPEC §3): never a panic; digits are seconds, and
/// every finite wait is at most 2^53 − 1 ms.
pub fn retry_after(data: &[u8]) {
    let (now, value) = split_now(data);
    let _ = parse_http_date(value, now);
    let answer = parse_retry_after(value, now);
    let trimmed = value
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t'))
        .map_or(&value[..0], |s| {
            let e = value.iter().rposition(|b| !matches!(b, b' ' | b'\t'));
            &value[s..=e.unwrap_or(s)]
        });
    match answer {
        RetryAfter::Seconds { wait_ms } => {
            assert!(!trimmed.is_empty() && trimmed.iter().all(u8::is_ascii_digit));
            assert!(wait_ms <= MAX_SAFE_MS && wait_ms % 1000 == 0);
            let digits = std::str::from_utf8(trimmed).unwrap_or("");
            let digits = digits.trim_start_matches('0');
            assert_eq!(wait_ms / 1000, digits.parse::<u64>().unwrap_or(0));
        }
        RetryAfter::Date { wait_ms } => {
            assert!(wait_ms <= MAX_SAFE_MS);
            let date_s = parse_http_date(trimmed, now).expect("a date answer parses as a date");
            let expected = (i128::from(date_s) * 1000 - i128::from(now)).max(0);
            assert_eq!(i128::from(wait_ms), expected);
        }
        RetryAfter::Unbounded => {
            let is_digits = !trimmed.is_empty() && trimmed.iter().all(u8::is_ascii_digit);
            assert!(is_digits || parse_http_date(trimmed, now).is_some());
        }
        RetryAfter::Invalid => {
            assert!(trimmed.is_empty() || !trimmed.iter().all(u8::is_ascii_digit));
        }
    }
    // The same value as text answers alike.
    if let Ok(text) = std::str::from_utf8(value) {
        assert_eq!(parse_retry_after(text, now), answer);
    }
}

/// Rate-limit hints and classification (SPEC §3, §5): never a panic; a finite wait is at
/// most 2^53 − 1 ms; a 429's verdict carries exactly the server wait of its headers; a 403
/// is a rate limit exactly when the headers say the quota is spent.
pub fn rate_limit(data: &[u8]) {
    let (now, rest) = split_now(data);
    let headers = header_lines(rest);
    let wait = server_wait(&headers, now, true);
    if let Some(ServerWait::Ms(ms)) = wait {
        assert!(ms <= MAX_SAFE_MS);
    }
    let _ = server_wait(&headers, now, false);
    let rules = Rules::default();
    let post = Request {
        method: "POST",
        has_idempotency_key: false,
    };
    for status in [403, 429, 503, 500, 200, 0, 1000] {
        let v = rules.classify(Outcome::Status(status), post, &headers, now, true);
        match (status, v) {
            (429 | 503, Verdict::Retry { server_wait, .. }) => assert_eq!(server_wait, wait),
            (429 | 503, other) => panic!("{status} must be retried, not {other:?}"),
            (403, v) => assert_eq!(
                matches!(v, Verdict::Retry { .. }),
                quota_spent(&headers),
                "{v:?}"
            ),
            _ => {}
        }
    }
}

/// Sensitive names a secret is injected under (SPEC §7).
const NAMES: [&str; 16] = [
    "token",
    "access_token",
    "api_key",
    "password",
    "pwd",
    "pass",
    "jwt",
    "bearer",
    "code",
    "session",
    "jsessionid",
    "X-Amz-Signature",
    "client_secret",
    "csrf",
    "sig",
    "auth",
];

/// Where the secret goes: as a query or path parameter, in userinfo.
fn inject(prefix: &str, how: u8, suffix: &str) -> String {
    let name = NAMES[usize::from(how >> 3) % NAMES.len()];
    match how & 7 {
        0 => format!("{prefix}?{name}={SECRET}{suffix}"),
        1 => format!("{prefix}&{name}={SECRET}{suffix}"),
        2 => format!("{prefix};{name}={SECRET}{suffix}"),
        3 => format!("{prefix}#{name}={SECRET}{suffix}"),
        4 => format!("https://user:{SECRET}@{prefix}{suffix}"),
        5 => format!("//{SECRET}@{prefix}{suffix}"),
        6 => format!("{prefix}/a;{name}={SECRET}?x=1{suffix}"),
        _ => format!("{prefix}?a=1&{name}={SECRET}{suffix}"),
    }
}

/// A suffix may continue the secret's value, or end it where a URL can end.
fn safe_suffix(s: &str) -> &str {
    match s.chars().next() {
        Some(c) if c.is_ascii_alphanumeric() || matches!(c, '&' | '#' | ' ' | '>' | '"') => s,
        _ => "",
    }
}

/// Redaction (SPEC §7): a secret injected under a sensitive name — a query or path
/// parameter, userinfo — never survives redaction, in a URL or in a header value (whatever
/// the header is called), and a sensitive header's value never survives at all.
pub fn redaction(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if text.contains(SECRET) || text.contains("S3CR3") {
        return;
    }
    let _ = recuo::redact_url(&text);
    let mut parts = text.splitn(4, '\u{1}');
    let prefix = parts.next().unwrap_or("");
    let how = parts.next().and_then(|s| s.bytes().next()).unwrap_or(0);
    let suffix = safe_suffix(parts.next().unwrap_or(""));
    let header_name = parts.next().unwrap_or("X-Note");
    // A prefix with an unmatched '<' may swallow the secret into a bracketed reference:
    // redacted too, so no exception is needed.
    let url = inject(prefix, how, suffix);
    let out = recuo::redact_url(&url).url;
    assert!(!out.contains(SECRET), "{url:?} → {out:?}");
    let value = format!("{prefix} {url}");
    let headers = [
        (header_name.to_string(), value.clone()),
        ("Location".to_string(), url.clone()),
        ("Authorization".to_string(), format!("Bearer {SECRET}")),
        (format!("X-{}-Token", header_name), SECRET.to_string()),
    ];
    for (name, redacted) in recuo::redact_headers(&headers) {
        assert!(
            !redacted.contains(SECRET),
            "{name}: {value:?} → {redacted:?}"
        );
    }
    let _ = recuo::redact::redact_urls_in(&text);
}

/// Who answered (SPEC §7): never a panic; every evidence line quotes at most 100 characters
/// of a header value (so a line is at most 160), and a secret in a URL of a header value
/// never appears in it.
pub fn who_answered(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if text.contains("S3CR3") {
        return;
    }
    let mut headers = header_lines(text.as_bytes());
    let _ = recuo::who_answered(&headers, None);
    let _ = recuo::who_answered(&headers, Some("application/json"));
    let how = data.first().copied().unwrap_or(0);
    for name in ["Server", "Via", "X-Served-By", "X-Cache", "Content-Type"] {
        headers.push((name.to_string(), inject("nginx ", how, "")));
    }
    let w = recuo::who_answered(&headers, Some("application/json"));
    for line in &w.evidence {
        assert!(!line.contains(SECRET), "{line:?}");
        // A line quotes at most 100 characters of one header around a short text of its
        // own (the longest: "content-type …, not the application/json the API sends").
        assert!(line.chars().count() <= 100 + 60, "{line:?}");
    }
}

/// The shared file (SPEC §9): any contents give a clear error or a state whose every value is
/// clamped to the settings — never a panic, never a wait longer than the settings allow.
pub fn shared_file(data: &[u8]) {
    recuo::fuzzing::shared_file(data);
}
