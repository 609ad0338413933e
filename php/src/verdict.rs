//! `Recuo\Verdict` and `Recuo\classify`: an outcome (a status or a transport failure, with
//! the request's method, key and the response's headers) judged by the core's
//! [`recuo::Policy::classify`].
//!
//! Guide A, as these docs call it, is
//! “Como repetir requisições com backoff exponencial (retry)”
//! (<https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff>), the guide that
//! writes `comRetry` and `buscarComRetry`.

use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use recuo::{Outcome, Request, ServerWait, Transport};

use crate::convert::{header_pairs, now_ms, php_int, Array, Bytes};
use crate::errors::{guarded, not_constructible, value_error, value_error_message};
use crate::policy::{Policy, TRANSPORTS};

/// What to do about one outcome: `verdict` is `"retry"`, `"give_up"` or `"success"`;
/// `reason` is why (`rate_limited`, `unavailable`, `server_error`, `connect`, `timeout`,
/// `reset`, `other`, `not_idempotent`, `permanent`, `tls`, `success`); `waitMs` is the wait
/// the server asked for, and `waitUnbounded` says it asked for one too long to honour.
#[php_class]
#[php(name = "Recuo\\Verdict")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Verdict {
    pub(crate) inner: recuo::Verdict,
    /// What `Recuo\classify` judged — the outcome and the response's headers — for the
    /// records of a loop whose `$classify` answers this verdict; none for the verdicts
    /// made directly.
    pub(crate) judged: Option<(Outcome, Vec<(String, String)>)>,
}

/// The cause of a caller's own "yes".
const RETRY_REASON: &str = recuo::Verdict::from_predicate(true).cause().name();
/// The cause of a caller's own "no".
const GIVE_UP_REASON: &str = recuo::Verdict::from_predicate(false).cause().name();

/// A verdict's cause, by its name.
fn cause_arg(function: &str, position: u32, name: Bytes<'_>) -> PhpResult<recuo::Cause> {
    recuo::Cause::from_name(&name.text()).ok_or_else(|| {
        value_error(
            function,
            position,
            "reason",
            "must be a verdict's reason: \"rate_limited\", \"unavailable\", \"server_error\", \
             \"connect\", \"timeout\", \"reset\", \"other\", \"not_idempotent\", \"permanent\" or \
             \"tls\"",
        )
    })
}

#[php_impl]
impl Verdict {
    /// Not constructible from PHP: `Recuo\classify` and the static constructors make one.
    #[php(vis = "private")]
    pub fn __construct() -> PhpResult<Self> {
        not_constructible("Recuo\\Verdict")
    }

    /// A success: nothing to retry (for outcomes that are not HTTP).
    pub fn success() -> Verdict {
        Verdict {
            inner: recuo::Verdict::Success,
            judged: None,
        }
    }

    /// Worth another attempt for `$reason` (`server_error` by default, as the core names a
    /// caller's own "yes"), after at least `$waitMs` milliseconds when the other side asked
    /// for a wait.
    #[php(defaults(reason = RETRY_REASON))]
    pub fn retry(waitMs: Option<i64>, reason: Bytes<'_>) -> PhpResult<Verdict> {
        const F: &str = "Recuo\\Verdict::retry";
        guarded(F, || {
            let wait = waitMs
                .map(|ms| {
                    u64::try_from(ms).map_err(|_| {
                        value_error(F, 1, "waitMs", "must be null or greater than or equal to 0")
                    })
                })
                .transpose()?;
            Ok(Verdict {
                inner: recuo::Verdict::Retry {
                    cause: cause_arg(F, 2, reason)?,
                    server_wait: wait.map(ServerWait::Ms),
                },
                judged: None,
            })
        })
    }

    /// Not worth another attempt, for `$reason` (`permanent` by default).
    #[php(defaults(reason = GIVE_UP_REASON))]
    pub fn give_up(reason: Bytes<'_>) -> PhpResult<Verdict> {
        const F: &str = "Recuo\\Verdict::giveUp";
        guarded(F, || {
            Ok(Verdict {
                inner: recuo::Verdict::GiveUp {
                    cause: cause_arg(F, 1, reason)?,
                },
                judged: None,
            })
        })
    }

    /// `"retry"`, `"give_up"` or `"success"`.
    #[php(getter)]
    pub fn get_verdict(&self) -> &'static str {
        self.inner.name()
    }

    /// Why: the cause's name (`rate_limited`, `not_idempotent`, `permanent`, …).
    #[php(getter)]
    pub fn get_reason(&self) -> &'static str {
        self.inner.cause().name()
    }

    /// The wait the server asked for, in milliseconds; null when it asked for none or for
    /// one too long to count (see `waitUnbounded`).
    #[php(getter)]
    pub fn get_wait_ms(&self) -> Option<i64> {
        self.inner
            .server_wait()
            .and_then(ServerWait::ms)
            .map(php_int)
    }

    /// Whether the server asked for a wait too long to honour: a retry gives up
    /// (`wait_exceeds_deadline`).
    #[php(getter)]
    pub fn get_wait_unbounded(&self) -> bool {
        self.inner.server_wait() == Some(ServerWait::Unbounded)
    }
}

/// `Recuo\classify`: the verdict of `policy` (guide A's rules when null) on one outcome.
#[allow(clippy::too_many_arguments)]
pub fn classify(
    function: &str,
    status: Option<i64>,
    error: Option<Bytes<'_>>,
    method: Bytes<'_>,
    idempotency_key: bool,
    headers: Array<'_>,
    now: Option<i64>,
    policy: Option<&Policy>,
) -> PhpResult<Verdict> {
    let outcome = match (status, error) {
        // The core reads a code outside 100-599 as 500; so does one that is not even a u16.
        (Some(code), None) => Outcome::Status(u16::try_from(code).unwrap_or(0)),
        (None, Some(kind)) => {
            Outcome::Transport(Transport::from_name(&kind.text()).ok_or_else(|| {
                value_error(
                    function,
                    2,
                    "error",
                    &format!("must be null or {TRANSPORTS}"),
                )
            })?)
        }
        _ => {
            return Err(value_error_message(format!(
                "{function}(): exactly one of Argument #1 ($status) and Argument #2 ($error) \
                 must be given"
            )))
        }
    };
    let headers = header_pairs(function, 5, "headers", headers)?;
    let method = method.text();
    let request = Request {
        method: &method,
        has_idempotency_key: idempotency_key,
    };
    let now = now_ms(now);
    let inner = match policy {
        Some(p) => p.inner.classify(outcome, request, &headers, now),
        None => Policy::default_policy().classify(outcome, request, &headers, now),
    };
    Ok(Verdict {
        inner,
        judged: Some((outcome, headers)),
    })
}
