//! The rules every HTTP adapter follows for one request, held once: which
//! idempotency header it sends and whether the request counts as idempotent
//! ([`RequestPlan`]), how an operation that ended surfaces to the caller ([`Ending`]), and the
//! one message of a give-up ([`give_up_message`]). An adapter reads its client's request and
//! answer, asks these, and does what they say.
//!
//! Guide A, named below, is the guide (in Portuguese)
//! [“Como repetir requisições com backoff exponencial (retry)”](https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff);
//! its `buscarComRetry` is the one adapter that ends in its own way ([`Style::Guide`]).
//!
//! ```
//! use recuo::http::{Ending, Last, RequestPlan, Style};
//! use recuo::{GiveUpReason, Policy};
//!
//! let policy = Policy::adapters();
//! let plan = RequestPlan::new(&policy, "POST", false, None);
//! assert!(plan.sends_recuos_key() && !plan.idempotent());
//! // A guide-A function throws after a final 503; a client adapter returns it.
//! let end = |style| recuo::http::ending(style, Some(GiveUpReason::AttemptsExhausted), Last::Status(503));
//! assert_eq!((end(Style::Guide), end(Style::Client)), (Ending::GiveUp, Ending::Response));
//! ```

use std::fmt::Write;

use crate::attempts::GiveUpReason;
use crate::classify::Transport;
use crate::Policy;

/// The header an idempotency key travels in unless a policy names another.
pub const DEFAULT_IDEMPOTENCY_HEADER: &str = "Idempotency-Key";

/// Which idempotency key an attempt carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyToSend {
    /// None.
    Nothing,
    /// The caller's own, already on the request: sent as it is.
    Callers,
    /// recuo's key for the operation ([`Operation::key`](crate::Operation::key)), the same on
    /// every attempt: the adapter adds it in the policy's header.
    Recuos,
}

impl KeyToSend {
    /// `none`, `caller` or `recuo`.
    pub const fn name(self) -> &'static str {
        match self {
            KeyToSend::Nothing => "none",
            KeyToSend::Callers => "caller",
            KeyToSend::Recuos => "recuo",
        }
    }
}

/// What one request is to its operation: the key it carries and whether it counts as
/// idempotent when its outcome is unknown (a timeout, a reset, a 500).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestPlan {
    key: KeyToSend,
    idempotent: bool,
}

impl RequestPlan {
    /// The plan of a `method` request under `policy`. `callers_key`: the request already
    /// carries the policy's idempotency header. `send_keys`: the caller's choice of whether
    /// recuo adds its own key — `None` adds one to methods that are not idempotent.
    ///
    /// The caller's key makes the request idempotent (the caller vouches for it); recuo's own
    /// key does so only when the policy says the server honours keys; otherwise the method
    /// decides (GET, HEAD, OPTIONS, TRACE, PUT and DELETE by default).
    pub fn new(policy: &Policy, method: &str, callers_key: bool, send_keys: Option<bool>) -> Self {
        let by_method = policy.rules().idempotent_methods.contains(method);
        if callers_key {
            return RequestPlan {
                key: KeyToSend::Callers,
                idempotent: true,
            };
        }
        let send = send_keys.unwrap_or(!by_method);
        RequestPlan {
            key: if send {
                KeyToSend::Recuos
            } else {
                KeyToSend::Nothing
            },
            idempotent: by_method || (send && policy.server_honours_keys()),
        }
    }

    /// As [`new`](Self::new), finding the caller's key among the request's `headers` by the
    /// policy's header name (without regard to ASCII case).
    pub fn for_headers<K: AsRef<str>, V>(
        policy: &Policy,
        method: &str,
        headers: impl IntoIterator<Item = (K, V)>,
        send_keys: Option<bool>,
    ) -> Self {
        let name = policy.idempotency_header();
        let callers = headers
            .into_iter()
            .any(|(k, _)| k.as_ref().eq_ignore_ascii_case(name));
        Self::new(policy, method, callers, send_keys)
    }

    /// The key the request's attempts carry.
    pub const fn key(&self) -> KeyToSend {
        self.key
    }

    /// Whether the adapter adds recuo's key (in the policy's header) to every attempt.
    pub const fn sends_recuos_key(&self) -> bool {
        matches!(self.key, KeyToSend::Recuos)
    }

    /// Whether a failure whose outcome is unknown may be retried.
    pub const fn idempotent(&self) -> bool {
        self.idempotent
    }
}

/// What the last attempt of an operation came to, as the adapter saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last {
    /// No attempt was made (the gate, the deadline or a cancellation stopped it first).
    Nothing,
    /// A response with this status (its headers read; a body that failed is a transport
    /// failure, not a response).
    Status(u16),
    /// A transport failure of this kind, the client's own error in hand.
    Transport(Transport),
    /// The deadline cut the attempt while the server was still answering: the client's
    /// error is an artefact of recuo's own cut.
    Late,
}

/// Which contract an adapter keeps with its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A client adapter (requests, httpx, aiohttp, Guzzle, Symfony, `fetch` through `retry`):
    /// the last response is returned, as the client would have without recuo.
    Client,
    /// Guide A's `buscarComRetry`: after the last attempt, a 429 or 5xx is thrown, as the
    /// guide's function does; other statuses are returned.
    Guide,
}

impl Style {
    /// Both styles.
    pub const ALL: [Style; 2] = [Style::Client, Style::Guide];

    /// `client` or `guide`.
    pub const fn name(self) -> &'static str {
        match self {
            Style::Client => "client",
            Style::Guide => "guide",
        }
    }

    /// The style named `name` (as [`name`](Self::name) spells it).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// How an operation's end reaches the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The last response is returned.
    Response,
    /// The client's transport error is raised again, unchanged.
    Error,
    /// recuo's give-up error is raised, carrying the reason, `retry_at`, the report and the
    /// last response if there is one, with [`give_up_message`] as its message.
    GiveUp,
}

impl Ending {
    /// `response`, `error` or `give_up`.
    pub const fn name(self) -> &'static str {
        match self {
            Ending::Response => "response",
            Ending::Error => "error",
            Ending::GiveUp => "give_up",
        }
    }
}

/// How an operation that ended for `reason` (`None`: it succeeded) surfaces, its last attempt
/// having come to `last`.
///
/// A success returns its response. Otherwise: no attempt made, or an attempt cut by the
/// deadline, gives up; a transport failure is raised again; a response is returned — but
/// a wait past the deadline gives up carrying it (the caller learns when to come back), and
/// guide A's function gives up on a final 429 or 5xx.
pub const fn ending(style: Style, reason: Option<GiveUpReason>, last: Last) -> Ending {
    let Some(reason) = reason else {
        return Ending::Response;
    };
    match last {
        Last::Nothing | Last::Late => Ending::GiveUp,
        Last::Transport(_) => Ending::Error,
        Last::Status(_) if matches!(reason, GiveUpReason::WaitExceedsDeadline) => Ending::GiveUp,
        Last::Status(s) if matches!(style, Style::Guide) && (s == 429 || s >= 500) => {
            Ending::GiveUp
        }
        Last::Status(_) => Ending::Response,
    }
}

/// The give-up error's message, the same in every language: `recuo gave up after 2 attempts
/// (wait_exceeds_deadline): HTTP 429; a retry is allowed in 3600 s`. `retry_in_ms` is how
/// long from now until a retry would be allowed, when known (shown in whole seconds, rounded
/// up).
pub fn give_up_message(
    reason: GiveUpReason,
    attempts: u32,
    last: Last,
    retry_in_ms: Option<u64>,
) -> String {
    let mut m = format!(
        "recuo gave up after {attempts} attempt{} ({}): ",
        if attempts == 1 { "" } else { "s" },
        reason.name()
    );
    let _ = match last {
        Last::Nothing => m.write_str("no attempt was made"),
        Last::Status(s) => write!(m, "HTTP {s}"),
        Last::Transport(t) => write!(m, "the connection failed ({})", t.name()),
        Last::Late => m.write_str("the deadline passed while the server was still answering"),
    };
    match retry_in_ms {
        Some(0) => m.push_str("; a retry is allowed now"),
        Some(ms) => {
            let _ = write!(m, "; a retry is allowed in {} s", ms.div_ceil(1000));
        }
        None => {}
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans() {
        let p = Policy::adapters();
        let honours = p.to_builder().server_honours_keys(true).build().unwrap();
        let plan = |p: &Policy, m, c, s| {
            let r = RequestPlan::new(p, m, c, s);
            (r.key(), r.idempotent())
        };
        assert_eq!(plan(&p, "GET", false, None), (KeyToSend::Nothing, true));
        assert_eq!(
            plan(&p, "get", false, Some(true)),
            (KeyToSend::Recuos, true)
        );
        assert_eq!(plan(&p, "POST", false, None), (KeyToSend::Recuos, false));
        assert_eq!(
            plan(&honours, "POST", false, None),
            (KeyToSend::Recuos, true)
        );
        assert_eq!(
            plan(&honours, "POST", false, Some(false)),
            (KeyToSend::Nothing, false)
        );
        assert_eq!(
            plan(&p, "PATCH", true, Some(false)),
            (KeyToSend::Callers, true)
        );
        let found = RequestPlan::for_headers(&p, "POST", [("idempotency-KEY", "k")], None);
        assert_eq!(found.key(), KeyToSend::Callers);
    }

    #[test]
    fn endings() {
        use GiveUpReason::*;
        let e = ending;
        assert_eq!(e(Style::Guide, None, Last::Status(200)), Ending::Response);
        assert_eq!(
            e(Style::Client, Some(AttemptsExhausted), Last::Status(503)),
            Ending::Response
        );
        assert_eq!(
            e(Style::Guide, Some(AttemptsExhausted), Last::Status(503)),
            Ending::GiveUp
        );
        assert_eq!(
            e(Style::Guide, Some(Permanent), Last::Status(404)),
            Ending::Response
        );
        assert_eq!(
            e(Style::Guide, Some(Permanent), Last::Status(501)),
            Ending::GiveUp
        );
        assert_eq!(
            e(Style::Client, Some(WaitExceedsDeadline), Last::Status(429)),
            Ending::GiveUp
        );
        assert_eq!(
            e(
                Style::Client,
                Some(Permanent),
                Last::Transport(Transport::Tls)
            ),
            Ending::Error
        );
        assert_eq!(
            e(Style::Client, Some(Cancelled), Last::Nothing),
            Ending::GiveUp
        );
        assert_eq!(
            e(Style::Client, Some(WaitExceedsDeadline), Last::Late),
            Ending::GiveUp
        );
    }

    #[test]
    fn one_message() {
        use GiveUpReason::*;
        assert_eq!(
            give_up_message(WaitExceedsDeadline, 1, Last::Status(429), Some(3_599_998)),
            "recuo gave up after 1 attempt (wait_exceeds_deadline): HTTP 429; a retry is allowed in 3600 s"
        );
        assert_eq!(
            give_up_message(AttemptsExhausted, 3, Last::Status(503), None),
            "recuo gave up after 3 attempts (attempts_exhausted): HTTP 503"
        );
        assert_eq!(
            give_up_message(WaitExceedsDeadline, 0, Last::Nothing, Some(0)),
            "recuo gave up after 0 attempts (wait_exceeds_deadline): no attempt was made; a retry is allowed now"
        );
        assert_eq!(
            give_up_message(WaitExceedsDeadline, 2, Last::Late, None),
            "recuo gave up after 2 attempts (wait_exceeds_deadline): the deadline passed while the server was still answering"
        );
        assert_eq!(
            give_up_message(Permanent, 1, Last::Transport(Transport::Reset), None),
            "recuo gave up after 1 attempt (permanent): the connection failed (reset)"
        );
    }
}
