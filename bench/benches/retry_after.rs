//! Reading a `Retry-After` value, on each of its forms, beside what a Rust program would use
//! instead: `httpdate::parse_http_date` for the three HTTP-date forms, and `str::parse` for
//! delta-seconds (httpdate reads no seconds).
//!
//! Every contender answers the same thing, the wait in milliseconds as of `NOW_MS`: recuo's
//! `parse_retry_after` and guide B's `retry_delay_ms` by themselves, the peers with the
//! subtraction a caller would write after them.

use std::hint::black_box;
use std::time::UNIX_EPOCH;

use criterion::{criterion_group, criterion_main, Criterion};
use recuo::{parse_retry_after, retry_delay_ms, JitterRng};
use recuo_bench::peers::std_seconds_ms;
use recuo_bench::{sides, Side};

/// 1994-11-06 08:00:00 UTC in Unix milliseconds: the dates below are 49 min 37 s later.
const NOW_MS: i64 = 784_108_800_000;

/// (form, value): RFC 9110 §5.6.7's three date forms, and delta-seconds.
const FORMS: [(&str, &str); 4] = [
    ("IMF-fixdate", "Sun, 06 Nov 1994 08:49:37 GMT"),
    ("RFC 850", "Sunday, 06-Nov-94 08:49:37 GMT"),
    ("asctime", "Sun Nov  6 08:49:37 1994"),
    ("seconds", "120"),
];

/// The peer for a date: httpdate, then the wait a caller computes from its `SystemTime`.
fn httpdate_wait_ms(value: &str) -> Option<i64> {
    let at = httpdate::parse_http_date(value).ok()?;
    let at_ms = at.duration_since(UNIX_EPOCH).ok()?.as_millis() as i64;
    Some((at_ms - NOW_MS).max(0))
}

fn forms(c: &mut Criterion) {
    for (form, value) in FORMS {
        let mut g = c.benchmark_group(format!("retry_after/{form}"));
        for side in sides() {
            match side {
                Side::Recuo => {
                    g.bench_function("recuo parse_retry_after", |b| {
                        b.iter(|| parse_retry_after(black_box(value), NOW_MS).wait_ms())
                    });
                    g.bench_function("recuo retry_delay_ms", |b| {
                        // A date or seconds value draws nothing from the generator.
                        let mut rng = JitterRng::seeded(1);
                        b.iter(|| retry_delay_ms(Some(black_box(value)), 0, NOW_MS, &mut rng))
                    });
                }
                Side::Peer if form == "seconds" => {
                    g.bench_function("peer", |b| b.iter(|| std_seconds_ms(black_box(value))));
                }
                Side::Peer => {
                    g.bench_function("peer", |b| b.iter(|| httpdate_wait_ms(black_box(value))));
                }
            }
        }
        g.finish();
    }
}

/// The contenders must agree before their costs are compared.
fn agree() {
    for (form, value) in FORMS {
        let recuo = parse_retry_after(value, NOW_MS).wait_ms();
        let peer = if form == "seconds" {
            std_seconds_ms(value)
        } else {
            httpdate_wait_ms(value).map(|w| w as u64)
        };
        assert_eq!(
            recuo, peer,
            "{form}: recuo and its peer disagree on {value:?}"
        );
    }
}

fn benches(c: &mut Criterion) {
    agree();
    forms(c);
}

criterion_group!(retry_after, benches);
criterion_main!(retry_after);
