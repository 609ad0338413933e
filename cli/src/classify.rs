//! `recuo classify`: the core's verdict on a status or a transport failure.

use recuo::{unix_now_ms, Outcome, Policy, Request, ServerWait, Transport};
use serde::Serialize;

use crate::args::ClassifyArgs;
use crate::error::CliError;

/// The verdict as `--json` prints it (the shape of `tests/vectors/classify.json`).
#[derive(Debug, Serialize, PartialEq)]
struct ClassifyJson {
    /// `success`, `retry` or `give_up`.
    verdict: &'static str,
    /// The cause's name (`rate_limited`, `not_idempotent`, …).
    reason: &'static str,
    /// The server's finite wait, or `None`.
    wait_ms: Option<u64>,
    /// Whether the server's wait is too long to count.
    wait_unbounded: bool,
}

/// Runs `recuo classify`.
///
/// # Errors
/// [`CliError::Usage`] when the outcome is neither a status code nor a transport kind.
pub fn run(a: &ClassifyArgs) -> Result<(), CliError> {
    let outcome = parse_outcome(&a.outcome)?;
    let request = Request {
        method: &a.method,
        has_idempotency_key: a.idempotency_key,
    };
    let now = a.now_ms.unwrap_or_else(unix_now_ms);
    let v = Policy::guide_b().classify(outcome, request, a.headers.as_slice(), now);
    let wait = v.server_wait();
    let out = ClassifyJson {
        verdict: v.name(),
        reason: v.cause().name(),
        wait_ms: wait.and_then(ServerWait::ms),
        wait_unbounded: wait == Some(ServerWait::Unbounded),
    };
    if a.json {
        crate::table::print_json(&out);
        return Ok(());
    }
    let wait = match wait {
        Some(ServerWait::Ms(ms)) => format!(", the server asks to wait {ms} ms"),
        Some(ServerWait::Unbounded) => {
            ", the server's wait is too long to count: give up and reschedule".to_string()
        }
        None => String::new(),
    };
    println!("{} ({}){wait}", out.verdict, out.reason);
    Ok(())
}

/// A status code (0–65535; the core reads codes outside 100–599 as 500) or a transport kind.
fn parse_outcome(text: &str) -> Result<Outcome, CliError> {
    let t = text.trim();
    if let Some(kind) = Transport::from_name(&t.to_ascii_lowercase()) {
        return Ok(Outcome::Transport(kind));
    }
    match t.parse::<u16>() {
        Ok(code) if !t.starts_with('+') => Ok(Outcome::Status(code)),
        _ => Err(CliError::Usage(format!(
            "{text:?} is neither a status code nor one of connect, tls, timeout, reset, other"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes() {
        assert_eq!(parse_outcome("429").unwrap(), Outcome::Status(429));
        assert_eq!(
            parse_outcome("Timeout").unwrap(),
            Outcome::Transport(Transport::Timeout)
        );
        for bad in ["", "+429", "4290000", "oops", "-1"] {
            assert!(parse_outcome(bad).is_err(), "{bad:?}");
        }
    }
}
