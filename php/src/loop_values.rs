//! `Recuo\Attempt`, what an operation knows about the attempt it is making (what happened to
//! it, `Recuo\Report`, is one of the core's values: see [`crate::values`]).

use std::borrow::Cow;
use std::cell::OnceCell;

use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use recuo::{IdempotencyKey, RequestLine, Seen};

use crate::convert::{header_pairs, Array, Bytes};
use crate::record::{record_status, request_line};

/// What `Recuo\retry`'s operation knows about the attempt it is making: its `number` (from
/// 0), the operation's `idempotencyKey` (a UUID v4, the same on every attempt) and the
/// `idempotencyHeader` to send it in. The operation may tell the attempt's record what it
/// sent (`recordRequest()`) and what it received (`recordResponse()`).
#[php_class]
#[php(name = "Recuo\\Attempt", flags = ClassFlags::Final)]
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

php_impl!({
    impl Attempt {
        /// Not constructible from PHP: `Recuo\retry` makes one per attempt.
        private_constructor!();
        /// The attempt's number: 0 for the first.
        getter!(get_number(self) -> i64 = i64::from(self.number));
        /// The operation's idempotency key: a UUID v4, the same on every attempt.
        getter!(get_idempotency_key(self) -> String = self.key().to_string());
        /// The header to send the key in (the policy's; `Idempotency-Key` by default).
        getter!(get_idempotency_header(self) -> String = self.idempotency_header.to_string());

        /// For the records: this attempt sends `$method` to `$url` (redacted in every record;
        /// it replaces the loop's `method:` and `url:` for this attempt and the result).
        pub fn record_request(&mut self, method: Bytes<'_>, url: Bytes<'_>) -> PhpResult<()> {
            guard!("Recuo\\Attempt::recordRequest");
            self.request = Some(request_line(method, url));
            Ok(())
        }

        /// For the records: this attempt received `$status` with `$headers` (any shape
        /// `Recuo\classify` takes; the records keep only the request id and the wait headers).
        /// Without it, a failure's record takes the status and headers `Recuo\classify` judged.
        #[php(defaults(headers = Array::EMPTY))]
        pub fn record_response(&mut self, status: i64, headers: Array<'_>) -> PhpResult<()> {
            guard!("Recuo\\Attempt::recordResponse");
            let status = record_status(F, 1, status)?;
            let headers = header_pairs(F, 2, "headers", headers)?;
            self.response = Some(Seen::new(recuo::Outcome::Status(status), &headers));
            Ok(())
        }
    }
});
