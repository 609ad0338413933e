//! Redaction and "who answered" for PHP: `Recuo\redactUrl`,
//! `Recuo\redactUrlDetailed`, `Recuo\redactHeaders` (the core's [`recuo::redact_url`] and
//! [`recuo::redact_headers`]) and `Recuo\whoAnswered` ([`recuo::who_answered`]).
//!
//! PHP strings are bytes. A URL's bytes that are not UTF-8 are percent-encoded before the
//! core reads it ([`Bytes::url_text`]); a header's become U+FFFD ([`header_pairs`]). Either
//! way nothing is refused and no such byte comes back raw.

use ext_php_rs::boxed::ZBox;
use ext_php_rs::prelude::*;
use ext_php_rs::types::ZendHashTable;

use crate::convert::{header_pairs, Array, Bytes};
use crate::errors::{value_error, value_error_message};
use crate::values::{instance, Instance};

php_functions!({
    /// What a record, given as JSON (`$record`: the plain form every language's telemetry
    /// vectors use — `{"type": "attempt", …}` or `{"type": "result", …}`), means to telemetry,
    /// as JSON: `{"operation", "span", "points"}`, the core's one mapping. A record recuo cannot
    /// read is a `\ValueError`.
    #[php(name = "Recuo\\telemetryOf")]
    pub fn telemetry_of(record: String) -> PhpResult<String> {
        if record.len() > recuo::telemetry::RECORD_JSON_MAX {
            return Err(value_error(
                F,
                1,
                "record",
                "must be at most 64 KiB of JSON",
            ));
        }
        let value: recuo::telemetry::RecordValue = serde_json::from_str(&record)
            .map_err(|e| value_error_message(format!("{F}(): not a record: {e}")))?;
        value
            .telemetry_json()
            .map_err(|e| value_error_message(format!("{F}(): {e}")))
    }

    /// `$url` with its secrets and personal data replaced: userinfo removed, the values of
    /// sensitive query parameters `[redacted]`, e-mail addresses `[email]` and long numbers
    /// (CPF, CNPJ, card and phone numbers) `[number]` in the path and query values. Never
    /// throws, whatever the bytes; a malformed URL is redacted as far as it can be read.
    #[php(name = "Recuo\\redactUrl")]
    pub fn redact_url(url: Bytes<'_>) -> PhpResult<String> {
        Ok(recuo::redact_url(&url.url_text()).url)
    }

    /// As `Recuo\redactUrl`, and whether the URL was malformed: `['url' => string, 'malformed'
    /// => bool]`.
    #[php(name = "Recuo\\redactUrlDetailed")]
    pub fn redact_url_detailed(url: Bytes<'_>) -> PhpResult<ZBox<ZendHashTable>> {
        let redacted = recuo::redact_url(&url.url_text());
        let mut out = ZendHashTable::with_capacity(2);
        out.insert("url", redacted.url)?;
        out.insert("malformed", redacted.malformed)?;
        Ok(out)
    }

    /// `$headers` (name => value, name => list of values, or a list of `[name, value]` pairs, as
    /// `Recuo\classify` takes them) as a list of `[name, value]` pairs, in order: the values of
    /// sensitive headers `[redacted]`, URLs inside the others redacted.
    #[php(name = "Recuo\\redactHeaders")]
    pub fn redact_headers(headers: Array<'_>) -> PhpResult<Vec<Vec<String>>> {
        let pairs = header_pairs(F, 1, "headers", headers)?;
        Ok(recuo::redact_headers(&pairs)
            .into_iter()
            .map(|(name, value)| vec![name, value])
            .collect())
    }

    /// Who answered, judged from the response's `$headers` (any of the shapes
    /// `Recuo\classify` takes; names in any case) and, when given, whether its content type is
    /// the `$expectedContentType` the API sends.
    #[php(name = "Recuo\\whoAnswered")]
    pub fn who_answered(
        headers: Array<'_>,
        expectedContentType: Option<Bytes<'_>>,
    ) -> PhpResult<Instance<recuo::WhoAnswered>> {
        let pairs = header_pairs(F, 1, "headers", headers)?;
        let expected = expectedContentType.map(|b| b.text().into_owned());
        instance(&recuo::who_answered(&pairs, expected.as_deref()))
    }
});
