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
use recuo::{Outcome, Request, ServerWait};

use crate::convert::{header_pairs, now_ms, optional_non_negative, php_int, Array, Bytes};
use crate::errors::{value_error, value_error_message};
use crate::policy::{transport_arg, Policy};

/// What to do about one outcome: `verdict` is `"retry"`, `"give_up"` or `"success"`;
/// `reason` is why (`rate_limited`, `unavailable`, `server_error`, `connect`, `timeout`,
/// `reset`, `other`, `not_idempotent`, `permanent`, `tls`, `success`); `waitMs` is the wait
/// the server asked for, and `waitUnbounded` says it asked for one too long to honour.
#[php_class]
#[php(name = "Recuo\\Verdict", flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Verdict {
    pub(crate) inner: recuo::Verdict,
    /// What `Recuo\classify` judged — the outcome and the response's headers — for the
    /// records of a loop whose `$classify` answers this verdict; none for the verdicts
    /// made directly.
    pub(crate) judged: Option<(Outcome, Vec<(String, String)>)>,
}

/// A verdict made directly, not by `Recuo\classify`.
impl From<recuo::Verdict> for Verdict {
    fn from(inner: recuo::Verdict) -> Self {
        Verdict {
            inner,
            judged: None,
        }
    }
}

/// The cause of a caller's own "yes".
const RETRY_REASON: &str = recuo::Verdict::from_predicate(true).cause().name();
/// The cause of a caller's own "no".
const GIVE_UP_REASON: &str = recuo::Verdict::from_predicate(false).cause().name();

/// A verdict's cause by its name, argument `position` (`$name`) of `function`; the message
/// names `"success"` among them when `success`.
pub(crate) fn cause_arg(
    function: &str,
    (position, name): (u32, &str),
    value: Bytes<'_>,
    success: bool,
) -> PhpResult<recuo::Cause> {
    recuo::Cause::named_by(&value.text(), success).ok_or_else(|| {
        let causes = recuo::one_of(recuo::Cause::named(success).map(recuo::Cause::name), '"');
        value_error(
            function,
            position,
            name,
            &format!("must be a verdict's reason: {causes}"),
        )
    })
}

php_impl!({
    impl Verdict {
        /// Not constructible from PHP: `Recuo\classify` and the static constructors make one.
        private_constructor!();
        /// `"retry"`, `"give_up"` or `"success"`.
        getter!(get_verdict(self) -> &'static str = self.inner.name());
        /// Why: the cause's name (`rate_limited`, `not_idempotent`, `permanent`, …).
        getter!(get_reason(self) -> &'static str = self.inner.cause().name());
        /// The wait the server asked for, in milliseconds; null when it asked for none or for
        /// one too long to count (see `waitUnbounded`).
        getter!(get_wait_ms(self) -> Option<i64> = self.inner
            .server_wait()
            .and_then(ServerWait::ms)
            .map(php_int));
        /// Whether the server asked for a wait too long to honour: a retry gives up
        /// (`wait_exceeds_deadline`).
        getter!(get_wait_unbounded(self) -> bool =
            self.inner.server_wait() == Some(ServerWait::Unbounded));

        /// A success: nothing to retry (for outcomes that are not HTTP).
        pub fn success() -> Verdict {
            recuo::Verdict::Success.into()
        }

        /// Worth another attempt for `$reason` (`server_error` by default, as the core names a
        /// caller's own "yes"), after at least `$waitMs` milliseconds when the other side asked
        /// for a wait.
        #[php(defaults(reason = RETRY_REASON))]
        pub fn retry(waitMs: Option<i64>, reason: Bytes<'_>) -> PhpResult<Verdict> {
            guard!("Recuo\\Verdict::retry");
            let wait = optional_non_negative(F, 1, "waitMs", waitMs)?;
            Ok(recuo::Verdict::Retry {
                cause: cause_arg(F, (2, "reason"), reason, false)?,
                server_wait: wait.map(ServerWait::Ms),
            }
            .into())
        }

        /// Not worth another attempt, for `$reason` (`permanent` by default).
        #[php(defaults(reason = GIVE_UP_REASON))]
        pub fn give_up(reason: Bytes<'_>) -> PhpResult<Verdict> {
            guard!("Recuo\\Verdict::giveUp");
            let cause = cause_arg(F, (1, "reason"), reason, false)?;
            Ok(recuo::Verdict::GiveUp { cause }.into())
        }
    }
});

/// An outcome as PHP code gives it: exactly one of `$status`, argument `position` of
/// `function`, and the transport failure `$error`, the next one.
pub(crate) fn outcome_arg(
    function: &str,
    position: u32,
    status: Option<i64>,
    error: Option<Bytes<'_>>,
) -> PhpResult<Outcome> {
    match (status, error) {
        // The core reads a code outside 100-599 as 500; so does one that is not even a u16.
        (Some(code), None) => Ok(Outcome::Status(u16::try_from(code).unwrap_or(0))),
        (None, Some(kind)) => {
            transport_arg(function, position + 1, kind, true).map(Outcome::Transport)
        }
        _ => Err(value_error_message(format!(
            "{function}(): exactly one of Argument #{position} ($status) and Argument #{} \
             ($error) must be given",
            position + 1
        ))),
    }
}

/// The method `Recuo\classify` assumes: a read.
const DEFAULT_METHOD: &str = Request::GET.method;

php_functions!({
    /// The verdict on one outcome under `$policy` (guide A's rules when null): exactly one of
    /// `$status` (an HTTP status; outside 100-599 counts as 500) and `$error` (`"connect"`,
    /// `"tls"`, `"timeout"`, `"reset"`, `"other"`). `$method` and `$idempotencyKey` say whether
    /// the request is safe to repeat; `$headers` (name => value, name => list of values, or a
    /// list of [name, value] pairs) carry the server's wait, read as of `$nowMs` (milliseconds
    /// since the Unix epoch; the system clock when null).
    #[php(name = "Recuo\\classify")]
    #[php(defaults(method = DEFAULT_METHOD, idempotencyKey = false, headers = Array::EMPTY))]
    pub fn classify(
        status: Option<i64>,
        error: Option<Bytes<'_>>,
        method: Bytes<'_>,
        idempotencyKey: bool,
        headers: Array<'_>,
        nowMs: Option<i64>,
        policy: Option<&Policy>,
    ) -> PhpResult<Verdict> {
        let outcome = outcome_arg(F, 1, status, error)?;
        let headers = header_pairs(F, 5, "headers", headers)?;
        let method = method.text();
        let request = Request {
            method: &method,
            has_idempotency_key: idempotencyKey,
        };
        let now = now_ms(nowMs);
        let inner = match policy {
            Some(p) => p.inner.classify(outcome, request, &headers, now),
            None => Policy::default_policy().classify(outcome, request, &headers, now),
        };
        Ok(Verdict {
            inner,
            judged: Some((outcome, headers)),
        })
    }
});
