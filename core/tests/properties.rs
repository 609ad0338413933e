//! Properties that hold for every input, not just the vectors.

use proptest::prelude::*;
use recuo::{parse_retry_after, retry_delay_ms, window_ms, Backoff, Jitter, JitterRng, RetryAfter};

fn jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
        Just(Jitter::None)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// No byte string panics the parser, and a finite wait is never above 2^53 − 1.
    #[test]
    fn parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64), now in any::<i64>()) {
        let parsed = parse_retry_after(&bytes, now);
        if let Some(w) = parsed.wait_ms() {
            prop_assert!(w <= recuo::MAX_SAFE_MS);
        }
    }

    /// Digits are always seconds (or unbounded), whatever the blanks around them.
    #[test]
    fn digits_are_seconds(secs in 0u64..9_007_199_254_740, pad in "[ \t]{0,3}", now in any::<i64>()) {
        let text = format!("{pad}{secs}{pad}");
        prop_assert_eq!(parse_retry_after(text, now), RetryAfter::Seconds { wait_ms: secs * 1000 });
    }

    /// A formatted IMF-fixdate is read back as the same instant, in the past as zero.
    #[test]
    fn imf_fixdates_round_trip(secs in 0u64..253_402_300_799, now_s in 0i64..253_402_300_799) {
        let text = httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs));
        let expected = (secs as i64 - now_s).max(0) as u64 * 1000;
        prop_assert_eq!(parse_retry_after(text, now_s * 1000), RetryAfter::Date { wait_ms: expected });
    }

    /// Windows never overflow, never exceed the cap, and never shrink as n grows.
    #[test]
    fn windows_are_monotone_and_capped(base in any::<u64>(), extra in any::<u64>(), n in any::<u32>()) {
        let cap = base.saturating_add(extra);
        let w = window_ms(base, cap, n);
        prop_assert!(w <= cap);
        prop_assert!(w >= base.min(cap));
        prop_assert!(window_ms(base, cap, n.saturating_add(1)) >= w);
    }

    /// Every jitter mode stays within [0, cap] (decorrelated: [base, cap]) for any schedule.
    #[test]
    fn delays_stay_within_the_cap(base in 0u64..1_000_000, extra in 0u64..10_000_000, mode in jitter(), seed in any::<u64>()) {
        let b = Backoff::new().with_base_ms(base).with_cap_ms(base + extra).with_jitter(mode);
        let mut delays = b.with_max_retries(Some(40)).seeded(seed);
        let mut n = 0;
        while let Some(d) = delays.next_ms() {
            prop_assert!(d <= base + extra);
            if mode != Jitter::Decorrelated {
                prop_assert!(d <= b.window_ms(n));
            } else {
                prop_assert!(d >= base);
            }
            n += 1;
        }
    }

    /// Guide B's delay: the exact server wait when there is one, else within the window.
    #[test]
    fn guide_b_delay_is_never_negative(bytes in "[ -~]{0,40}", attempt in any::<u32>(), seed in any::<u64>()) {
        let d = retry_delay_ms(Some(&bytes), attempt, 0, &mut JitterRng::seeded(seed));
        prop_assert!(d >= 0.0);
        match parse_retry_after(&bytes, 0) {
            RetryAfter::Unbounded => prop_assert!(d.is_infinite()),
            RetryAfter::Invalid => prop_assert!(d <= window_ms(1000, 8000, attempt) as f64),
            other => prop_assert_eq!(Some(d as u64), other.wait_ms()),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Redaction never panics, and never lets a secret parameter's value through.
    #[test]
    fn redaction_never_panics_and_hides_tokens(prefix in "\\PC{0,30}", secret in "[a-zA-Z0-9]{6,12}") {
        let url = format!("https://u:p@h.io/{prefix}?access_token={secret}zz&x=1");
        let out = recuo::redact_url(&url);
        prop_assert!(!out.url.contains(&format!("{secret}zz")), "{}", out.url);
        let _ = recuo::redact_url(&prefix);
        let _ = recuo::redact_headers(&[(prefix.as_str(), prefix.as_str()), ("Location", url.as_str())]);
    }
}
