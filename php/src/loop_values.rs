//! The small read-only values the loops hand to PHP: `Recuo\Attempt` (what an operation
//! knows about the attempt it is making) and `Recuo\Report` (what happened to it).

use std::borrow::Cow;
use std::cell::OnceCell;

use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use recuo::{IdempotencyKey, RequestLine, Seen};

use crate::convert::{header_pairs, php_int, Array, Bytes};
use crate::errors::{guarded, not_constructible};
use crate::record::{record_status, request_line};

/// What `Recuo\retry`'s operation knows about the attempt it is making: its `number` (from
/// 0), the operation's `idempotencyKey` (a UUID v4, the same on every attempt) and the
/// `idempotencyHeader` to send it in. The operation may tell the attempt's record what it
/// sent (`recordRequest()`) and what it received (`recordResponse()`).
#[php_class]
#[php(name = "Recuo\\Attempt")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Attempt {
    pub(crate) number: u32,
    /// The operation's key, made at the first ask (a first attempt that never asks for it
    /// makes none); the loop fills it before any later attempt, so that every attempt's
    /// object, this one's too, answers the same key.
    pub(crate) idempotency_key: OnceCell<IdempotencyKey>,
    pub(crate) idempotency_header: Cow<'static, str>,
    /// What the operation said it sent, for the records.
    pub(crate) request: Option<RequestLine>,
    /// What the operation said it received, for the records.
    pub(crate) response: Option<Seen>,
}

impl Attempt {
    /// The attempt `number` of an operation whose key is `idempotency_key` (made at the
    /// first ask when `None`), sent in `idempotency_header`.
    pub fn new(
        number: u32,
        idempotency_key: Option<IdempotencyKey>,
        idempotency_header: Cow<'static, str>,
    ) -> Self {
        Attempt {
            number,
            idempotency_key: idempotency_key.map_or_else(OnceCell::new, OnceCell::from),
            idempotency_header,
            request: None,
            response: None,
        }
    }

    /// The operation's key: this attempt's, made now if nobody asked for it yet.
    pub fn key(&self) -> IdempotencyKey {
        *self.idempotency_key.get_or_init(IdempotencyKey::random)
    }
}

#[php_impl]
impl Attempt {
    /// Not constructible from PHP: `Recuo\retry` makes one per attempt.
    #[php(vis = "private")]
    pub fn __construct() -> PhpResult<Self> {
        not_constructible("Recuo\\Attempt")
    }

    /// For the records: this attempt sends `$method` to `$url` (redacted in every record;
    /// it replaces the loop's `method:` and `url:` for this attempt and the result).
    pub fn record_request(&mut self, method: Bytes<'_>, url: Bytes<'_>) -> PhpResult<()> {
        guarded("Recuo\\Attempt::recordRequest", || {
            self.request = Some(request_line(method, url));
            Ok(())
        })
    }

    /// For the records: this attempt received `$status` with `$headers` (any shape
    /// `Recuo\classify` takes; the records keep only the request id and the wait headers).
    /// Without it, a failure's record takes the status and headers `Recuo\classify` judged.
    #[php(defaults(headers = Array::EMPTY))]
    pub fn record_response(&mut self, status: i64, headers: Array<'_>) -> PhpResult<()> {
        const F: &str = "Recuo\\Attempt::recordResponse";
        guarded(F, || {
            let status = record_status(F, 1, status)?;
            let headers = header_pairs(F, 2, "headers", headers)?;
            self.response = Some(Seen::new(recuo::Outcome::Status(status), &headers));
            Ok(())
        })
    }

    /// The attempt's number: 0 for the first.
    #[php(getter)]
    pub fn get_number(&self) -> i64 {
        i64::from(self.number)
    }

    /// The operation's idempotency key: a UUID v4, the same on every attempt.
    #[php(getter)]
    pub fn get_idempotency_key(&self) -> String {
        self.key().to_string()
    }

    /// The header to send the key in (the policy's; `Idempotency-Key` by default).
    #[php(getter)]
    pub fn get_idempotency_header(&self) -> String {
        self.idempotency_header.to_string()
    }
}

/// What happened to one operation: `attempts` made, the `reason` it gave up (null when it
/// succeeded or has not stopped), `elapsedMs` from the start of the first attempt to the
/// last decision, and the `delaysMs` decided between attempts.
#[php_class]
#[php(name = "Recuo\\Report")]
#[php(flags = ClassFlags::Final)]
#[derive(Debug, Clone)]
pub struct Report {
    pub(crate) inner: recuo::Report,
}

impl From<recuo::Report> for Report {
    fn from(inner: recuo::Report) -> Self {
        Report { inner }
    }
}

#[php_impl]
impl Report {
    /// Not constructible from PHP: `Recuo\retry`'s `$onGiveUp`, `Recuo\Operation::report`
    /// and the machine's last step hand one out.
    #[php(vis = "private")]
    pub fn __construct() -> PhpResult<Self> {
        not_constructible("Recuo\\Report")
    }

    /// Attempts made.
    #[php(getter)]
    pub fn get_attempts(&self) -> i64 {
        i64::from(self.inner.attempts)
    }

    /// Why the operation gave up: `permanent`, `attempts_exhausted`,
    /// `wait_exceeds_deadline`, `budget_exhausted` or `cancelled`; null otherwise.
    #[php(getter)]
    pub fn get_reason(&self) -> Option<&'static str> {
        self.inner.reason.map(recuo::GiveUpReason::name)
    }

    /// Milliseconds from the start of the first attempt to the last decision.
    #[php(getter)]
    pub fn get_elapsed_ms(&self) -> i64 {
        php_int(self.inner.elapsed_ms)
    }

    /// The delays decided between attempts, in milliseconds, in order.
    #[php(getter)]
    pub fn get_delays_ms(&self) -> Vec<i64> {
        self.inner.delays_ms.iter().copied().map(php_int).collect()
    }

    /// For `queue_stopped`: the reason of the operation that stopped the queue.
    #[php(getter)]
    pub fn get_stopped_by(&self) -> Option<&'static str> {
        self.inner.stopped_by.map(recuo::GiveUpReason::name)
    }

    /// For `wait_exceeds_deadline`: when the server would accept a retry, in milliseconds
    /// since the Unix epoch; null when unbounded, or for another reason.
    #[php(getter)]
    pub fn get_retry_at_unix_ms(&self) -> Option<i64> {
        self.inner.retry_at_unix_ms
    }
}
