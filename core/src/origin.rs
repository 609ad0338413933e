//! Who answered: the API itself, a proxy, or a CDN — with the evidence, and a
//! confidence that is never high on a brand alone ("an error page with a brand does not
//! prove where it came from").

use crate::headers::header;

/// Where an answer most likely came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Origin {
    /// The API the request was for.
    Api,
    /// A proxy or gateway in between.
    Proxy,
    /// A content delivery network in front of the API.
    Cdn,
    /// Nothing points anywhere.
    Unknown,
}

impl Origin {
    /// `api`, `proxy`, `cdn` or `unknown`.
    pub const fn name(self) -> &'static str {
        match self {
            Origin::Api => "api",
            Origin::Proxy => "proxy",
            Origin::Cdn => "cdn",
            Origin::Unknown => "unknown",
        }
    }
}

/// How sure the answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Confidence {
    /// One weak hint.
    Low,
    /// A clear signal, or several hints that agree.
    Medium,
    /// Independent signals that agree, one of them more than a brand.
    High,
}

impl Confidence {
    /// `low`, `medium` or `high`.
    pub const fn name(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// The answer to "who answered?".
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct WhoAnswered {
    /// The most likely origin.
    pub origin: Origin,
    /// What points there (and what points elsewhere), one line each.
    pub evidence: Vec<String>,
    /// How sure.
    pub confidence: Confidence,
}

/// Response headers that only a CDN sets, and the CDN.
const CDN_HEADERS: [(&str, &str); 11] = [
    ("cf-ray", "Cloudflare"),
    ("cf-cache-status", "Cloudflare"),
    ("x-amz-cf-id", "CloudFront"),
    ("x-amz-cf-pop", "CloudFront"),
    ("x-fastly-request-id", "Fastly"),
    ("fastly-debug-digest", "Fastly"),
    ("x-akamai-transformed", "Akamai"),
    ("x-akamai-request-id", "Akamai"),
    ("akamai-grn", "Akamai"),
    ("x-azure-ref", "Azure Front Door"),
    ("x-msedge-ref", "Azure CDN"),
];

/// Headers an API sets for its own requests.
const API_HEADERS: [&str; 7] = [
    "x-request-id",
    "x-amzn-requestid",
    "x-amz-request-id",
    "x-correlation-id",
    "x-ratelimit-remaining",
    "ratelimit",
    "ratelimit-remaining",
];

/// `server` values that name a CDN, and the CDN.
const CDN_SERVERS: [(&str, &str); 4] = [
    ("cloudflare", "Cloudflare"),
    ("cloudfront", "CloudFront"),
    ("akamaighost", "Akamai"),
    ("ecacc", "Edgecast"),
];

/// `server` values that name a proxy or gateway.
const PROXY_SERVERS: [&str; 7] = [
    "nginx",
    "envoy",
    "haproxy",
    "varnish",
    "squid",
    "apache traffic server",
    "awselb",
];

/// Judges where an answer came from by its headers (case-insensitive names), and — when
/// `expected_content_type` is given — by whether its content type is what the API sends.
pub fn who_answered<K, V>(headers: &[(K, V)], expected_content_type: Option<&str>) -> WhoAnswered
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut evidence = Vec::new();
    let mut cdn = 0u32;
    let mut proxy = 0u32;
    let mut api = 0u32;

    for (name, vendor) in CDN_HEADERS {
        if header(headers, name).is_some() {
            evidence.push(format!("{name} → {vendor}"));
            cdn += 2;
        }
    }
    if let Some(v) = header(headers, "x-served-by") {
        if v.to_ascii_lowercase().contains("cache-") {
            evidence.push(format!("x-served-by: {} → Fastly", shown(v)));
            cdn += 2;
        } else {
            evidence.push(format!("x-served-by: {} → a proxy", shown(v)));
            proxy += 1;
        }
    }
    if let Some(v) = header(headers, "via") {
        let lower = v.to_ascii_lowercase();
        if lower.contains("cloudfront") {
            evidence.push(format!("via: {} → CloudFront", shown(v)));
            cdn += 2;
        } else if lower.contains("varnish") || lower.contains("google") {
            evidence.push(format!("via: {} → a caching proxy or CDN", shown(v)));
            cdn += 1;
        } else {
            evidence.push(format!("via: {} → a proxy on the path", shown(v)));
            proxy += 1;
        }
    }
    if let Some(v) = header(headers, "x-cache") {
        evidence.push(format!("x-cache: {} → a cache on the path", shown(v)));
        if v.to_ascii_lowercase().contains("hit") {
            cdn += 1;
        }
    }
    if let Some(v) = header(headers, "server") {
        let lower = v.to_ascii_lowercase();
        if let Some((_, vendor)) = CDN_SERVERS.iter().find(|(s, _)| lower.contains(s)) {
            // A brand alone proves little: counted once, never enough for high confidence.
            evidence.push(format!(
                "server: {} → {vendor} (a brand, weak evidence)",
                shown(v)
            ));
            cdn += 1;
        } else if PROXY_SERVERS.iter().any(|s| lower.contains(s)) {
            evidence.push(format!(
                "server: {} → a proxy or gateway (weak evidence)",
                shown(v)
            ));
            proxy += 1;
        }
    }
    for name in API_HEADERS {
        if header(headers, name).is_some() {
            evidence.push(format!("{name} → set by the API"));
            api += 1;
        }
    }
    let mut mismatch = false;
    if let Some(expected) = expected_content_type {
        let want = media_type(expected);
        match header(headers, "content-type").map(media_type) {
            Some(got) if got == want => {
                evidence.push(format!("content-type {} as the API sends", shown(&got)));
                api += 2;
            }
            Some(got) => {
                evidence.push(format!(
                    "content-type {}, not the {want} the API sends",
                    shown(&got)
                ));
                mismatch = true;
            }
            None => evidence.push("no content-type".to_string()),
        }
    }

    let (origin, confidence) = if mismatch && cdn > 0 {
        (
            Origin::Cdn,
            if cdn >= 2 {
                Confidence::High
            } else {
                Confidence::Medium
            },
        )
    } else if mismatch && proxy > 0 {
        (Origin::Proxy, Confidence::Medium)
    } else if mismatch {
        (Origin::Unknown, Confidence::Low)
    } else if api > 0 {
        let c = match api {
            1 => Confidence::Low,
            2 => Confidence::Medium,
            _ => Confidence::High,
        };
        (Origin::Api, c)
    } else if cdn > 0 {
        (
            Origin::Cdn,
            if cdn >= 2 {
                Confidence::Medium
            } else {
                Confidence::Low
            },
        )
    } else if proxy > 0 {
        (Origin::Proxy, Confidence::Low)
    } else {
        (Origin::Unknown, Confidence::Low)
    };
    WhoAnswered {
        origin,
        evidence,
        confidence,
    }
}

/// A header value as evidence may quote it: redacted, and short.
fn shown(v: &str) -> String {
    crate::redact::redact_urls_in(v).chars().take(100).collect()
}

/// `application/json; charset=utf-8` → `application/json`.
fn media_type(v: &str) -> String {
    v.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(h: &[(&str, &str)], expected: Option<&str>) -> (Origin, Confidence) {
        let w = who_answered(h, expected);
        (w.origin, w.confidence)
    }

    #[test]
    fn each_cdn_is_recognised() {
        for (h, v) in [
            (("CF-Ray", "8a1b2c3d4e5f-GRU"), "Cloudflare"),
            (("X-Amz-Cf-Id", "abc=="), "CloudFront"),
            (("X-Fastly-Request-ID", "f00"), "Fastly"),
            (("Akamai-GRN", "0.1.2"), "Akamai"),
            (("X-Azure-Ref", "0abc"), "Azure Front Door"),
        ] {
            let w = who_answered(
                &[h, ("Content-Type", "text/html")],
                Some("application/json"),
            );
            assert_eq!(
                (w.origin, w.confidence),
                (Origin::Cdn, Confidence::High),
                "{h:?}"
            );
            assert!(w.evidence.iter().any(|e| e.contains(v)), "{:?}", w.evidence);
        }
        assert_eq!(
            who(&[("X-Served-By", "cache-gru1234-GRU")], None),
            (Origin::Cdn, Confidence::Medium)
        );
        assert_eq!(
            who(&[("Via", "1.1 abc.cloudfront.net (CloudFront)")], None),
            (Origin::Cdn, Confidence::Medium)
        );
    }

    #[test]
    fn a_brand_alone_is_never_certain() {
        let w = who_answered(
            &[("Server", "cloudflare"), ("Content-Type", "text/html")],
            Some("application/json"),
        );
        assert_eq!((w.origin, w.confidence), (Origin::Cdn, Confidence::Medium));
        assert_eq!(
            who(&[("Server", "cloudflare")], None),
            (Origin::Cdn, Confidence::Low)
        );
    }

    #[test]
    fn the_api_passing_through_a_cdn_is_still_the_api() {
        let h = [
            ("CF-Ray", "x"),
            ("Content-Type", "application/json; charset=utf-8"),
            ("X-Request-Id", "r-1"),
        ];
        assert_eq!(
            who(&h, Some("application/json")),
            (Origin::Api, Confidence::High)
        );
    }

    #[test]
    fn proxies_and_nothing() {
        assert_eq!(
            who(
                &[("Via", "1.1 squid"), ("Content-Type", "text/html")],
                Some("application/json")
            ),
            (Origin::Proxy, Confidence::Medium)
        );
        assert_eq!(
            who(&[("Server", "nginx")], None),
            (Origin::Proxy, Confidence::Low)
        );
        assert_eq!(
            who(&[("Date", "x")], None),
            (Origin::Unknown, Confidence::Low)
        );
        assert_eq!(
            who(&[("Content-Type", "text/html")], Some("application/json")),
            (Origin::Unknown, Confidence::Low)
        );
        let none: [(&str, &str); 0] = [];
        assert_eq!(who_answered(&none, None).evidence.len(), 0);
    }
}
