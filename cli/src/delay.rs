//! `recuo delay`: `recuo::retry_delay_ms` for one Retry-After value — the `retryDelayMs` of
//! guide B, “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”.

use recuo::{parse_http_date, parse_retry_after, unix_now_ms, JitterRng, RetryAfter};
use recuo::{GUIDE_B_BASE_MS, GUIDE_B_CAP_MS};
use serde::Serialize;

use crate::args::DelayArgs;
use crate::error::CliError;

/// The answer as `--json` prints it.
#[derive(Debug, Serialize, PartialEq)]
struct DelayJson {
    /// `seconds`, `date`, `unbounded` or `invalid`.
    kind: &'static str,
    /// The finite server wait, or `None`.
    wait_ms: Option<u64>,
    /// The delay, or `None` when unbounded.
    delay_ms: Option<f64>,
}

/// Runs `recuo delay`.
///
/// # Errors
/// [`CliError::Usage`] when `--date` is not an HTTP-date.
pub fn run(a: &DelayArgs) -> Result<(), CliError> {
    let now_ms = now_ms(a)?;
    let value = a.retry_after.as_deref();
    let parsed = parse_retry_after(value.unwrap_or(""), now_ms);
    let mut rng = JitterRng::from_seed_option(a.seed);
    let delay = recuo::retry_delay_ms(value, a.attempt, now_ms, &mut rng);
    let out = DelayJson {
        kind: parsed.kind(),
        wait_ms: parsed.wait_ms(),
        delay_ms: delay.is_finite().then_some(delay),
    };
    if a.json {
        crate::table::print_json(&out);
    } else {
        println!("{}", describe(&parsed, value.is_some(), a.attempt, delay));
    }
    Ok(())
}

/// "Now": `--now-ms`, the response's `--date`, or the system clock.
fn now_ms(a: &DelayArgs) -> Result<i64, CliError> {
    if let Some(ms) = a.now_ms {
        return Ok(ms);
    }
    let clock = unix_now_ms();
    match &a.date {
        None => Ok(clock),
        Some(date) => parse_http_date(date.trim().as_bytes(), clock)
            .map(|s| s.saturating_mul(1000))
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "--date {date:?} is not an HTTP-date (e.g. 'Sun, 06 Nov 1994 08:49:37 GMT')"
                ))
            }),
    }
}

/// One line: the delay first (`inf` when unbounded), then why.
fn describe(parsed: &RetryAfter, given: bool, attempt: u32, delay: f64) -> String {
    let window = recuo::window_ms(GUIDE_B_BASE_MS, GUIDE_B_CAP_MS, attempt);
    match parsed {
        RetryAfter::Seconds { .. } => {
            format!("{delay:.0} ms (Retry-After in seconds: the server's wait, exactly)")
        }
        RetryAfter::Date { .. } => {
            format!("{delay:.0} ms (Retry-After as an HTTP-date: until then, 0 if it has passed)")
        }
        RetryAfter::Unbounded => "inf (Retry-After too far to count: give up and reschedule, \
                                  never treat it as short)"
            .to_string(),
        RetryAfter::Invalid if given => {
            format!("{delay:.0} ms (not a valid Retry-After: full jitter in [0, {window}] ms)")
        }
        RetryAfter::Invalid => {
            format!("{delay:.0} ms (no Retry-After: full jitter in [0, {window}] ms)")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Option<&str>, attempt: u32) -> DelayArgs {
        DelayArgs {
            retry_after: value.map(str::to_string),
            attempt,
            now_ms: Some(784_111_777_000),
            date: None,
            seed: Some(1),
            json: true,
        }
    }

    #[test]
    fn now_comes_from_the_flags() {
        assert_eq!(now_ms(&args(None, 0)).unwrap(), 784_111_777_000);
        let mut a = args(None, 0);
        a.now_ms = None;
        a.date = Some("Sun, 06 Nov 1994 08:49:37 GMT".into());
        assert_eq!(now_ms(&a).unwrap(), 784_111_777_000);
        a.date = Some("yesterday".into());
        assert!(matches!(now_ms(&a), Err(CliError::Usage(_))));
    }

    #[test]
    fn descriptions_start_with_the_delay() {
        let p = parse_retry_after("12", 0);
        assert!(describe(&p, true, 0, 12_000.0).starts_with("12000 ms"));
        assert!(describe(&RetryAfter::Unbounded, true, 0, f64::INFINITY).starts_with("inf "));
        assert!(describe(&RetryAfter::Invalid, false, 3, 10.0).contains("[0, 8000]"));
        assert!(run(&args(Some("12"), 0)).is_ok());
    }
}
