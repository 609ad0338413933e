//! Conversions from PHP arguments to the core's numbers. Validation of durations is the
//! core's ([`recuo::units`]); this module only says which argument was at fault.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use ext_php_rs::convert::{FromZval, StubLiteral};
use ext_php_rs::flags::DataType;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use recuo::Named;

use crate::errors::{config_error, type_error, value_error};

/// A PHP `string` argument read as the bytes it holds: PHP strings are byte strings, and a
/// `Retry-After` value that is not UTF-8 is simply invalid, never a `TypeError`.
#[derive(Debug, Clone, Copy)]
pub struct Bytes<'a>(pub &'a [u8]);

impl<'a> FromZval<'a> for Bytes<'a> {
    const TYPE: DataType = DataType::String;

    fn from_zval(zval: &'a Zval) -> Option<Self> {
        zval.zend_str().map(|s| Bytes(s.as_bytes()))
    }
}

impl Bytes<'_> {
    /// The bytes as text; anything that is not UTF-8 becomes U+FFFD, which no name recuo
    /// knows and no valid header value contains.
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.0)
    }

    /// The bytes of a URL as text: bytes that are not UTF-8 are percent-encoded (`%FF`), as
    /// a URL parser would encode them. Redaction then reads them as part of the URL (an
    /// e-mail address or a secret with such a byte in it is still found), and they never
    /// reach a record raw.
    pub fn url_text(&self) -> Cow<'_, str> {
        match std::str::from_utf8(self.0) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => {
                let mut out = String::with_capacity(self.0.len() + 16);
                for chunk in self.0.utf8_chunks() {
                    out.push_str(chunk.valid());
                    for byte in chunk.invalid() {
                        let _ = write!(out, "%{byte:02X}");
                    }
                }
                Cow::Owned(out)
            }
        }
    }
}

/// A default value for a `string` parameter (`string $method = 'GET'`).
impl From<&'static str> for Bytes<'_> {
    fn from(s: &'static str) -> Self {
        Bytes(s.as_bytes())
    }
}

impl StubLiteral for Bytes<'_> {
    fn stub_literal(&self) -> String {
        self.text().stub_literal()
    }
}

/// An `array` parameter that defaults to `[]`: a PHP array, borrowed, or none at all.
#[derive(Debug, Clone, Copy)]
pub struct Array<'a>(pub Option<&'a ZendHashTable>);

impl Array<'_> {
    /// The default: an empty array.
    pub const EMPTY: Self = Array(None);
}

impl<'a> FromZval<'a> for Array<'a> {
    const TYPE: DataType = DataType::Array;

    fn from_zval(zval: &'a Zval) -> Option<Self> {
        zval.array().map(|a| Array(Some(a)))
    }
}

impl StubLiteral for Array<'_> {
    fn stub_literal(&self) -> String {
        "[]".to_string()
    }
}

/// Response headers as `[name, value]` pairs, from the three shapes PHP code holds them in:
/// `['Retry-After' => '5']`, PSR-7's `getHeaders()` (`['Retry-After' => ['5']]`) and a list
/// of pairs (`[['Retry-After', '5']]`). Values may be strings or ints; bytes that are not
/// UTF-8 become U+FFFD, so such a value is simply invalid.
///
/// # Errors
/// A `\TypeError` naming the entry that has none of these shapes.
pub fn header_pairs(
    function: &str,
    position: u32,
    name: &str,
    headers: Array<'_>,
) -> PhpResult<Vec<(String, String)>> {
    let Some(table) = headers.0 else {
        return Ok(Vec::new());
    };
    let wrong = |key: &str, what: &str| {
        type_error(format!(
            "{function}(): Argument #{position} (${name}) must map header names to strings \
             (or to lists of strings) or list [name, value] pairs; {key} holds {what}"
        ))
    };
    let mut pairs = Vec::with_capacity(table.len());
    // `next_zval` rather than the iterator: it gives the key as a zval, so a key that is
    // not UTF-8 is read as bytes instead of failing.
    let mut entries = table.iter();
    while let Some((key, value)) = entries.next_zval() {
        let value = value.dereference();
        if let Some(header) = lossy(&key) {
            let key_label = || format!("key {:?}", header);
            if let Some(list) = value.array() {
                let mut values = list.iter();
                while let Some((_, item)) = values.next_zval() {
                    let item = header_value(item.dereference()).ok_or_else(|| {
                        wrong(&key_label(), &format!("a list with {}", type_name(item)))
                    })?;
                    pairs.push((header.clone(), item));
                }
            } else {
                let text =
                    header_value(value).ok_or_else(|| wrong(&key_label(), &type_name(value)))?;
                pairs.push((header, text));
            }
        } else {
            let index = key.long().unwrap_or_default();
            let label = format!("index {index}");
            let pair = pair_of(value).ok_or_else(|| wrong(&label, &type_name(value)))?;
            let header = lossy(pair.0.dereference())
                .ok_or_else(|| wrong(&label, "a pair whose name is not a string"))?;
            let text = header_value(pair.1.dereference())
                .ok_or_else(|| wrong(&label, "a pair whose value is not a string"))?;
            pairs.push((header, text));
        }
    }
    Ok(pairs)
}

/// The two entries of a PHP list `[a, b]` (keys 0 and 1), as `value` holds one.
pub fn pair_of(value: &Zval) -> Option<(&Zval, &Zval)> {
    let pair = value.array().filter(|pair| pair.len() == 2)?;
    Some((pair.get_index(0)?, pair.get_index(1)?))
}

/// A string's bytes as text, anything that is not UTF-8 as U+FFFD.
fn lossy(value: &Zval) -> Option<String> {
    value
        .zend_str()
        .map(|s| String::from_utf8_lossy(s.as_bytes()).into_owned())
}

/// A header value: a string (as text) or an int (in decimal).
fn header_value(value: &Zval) -> Option<String> {
    let number = || {
        value
            .long()
            .filter(|_| value.is_long())
            .map(|n| n.to_string())
    };
    lossy(value).or_else(number)
}

/// What an array's entry holds, in messages: `index 2 holds string`, `key "x" holds null`.
pub fn entry_holds(key: &Zval, value: &Zval) -> String {
    let label = key.long().map_or_else(
        || format!("key {:?}", key.string().unwrap_or_default()),
        |i| format!("index {i}"),
    );
    format!("{label} holds {}", type_name(value))
}

/// The core's value named `name`, argument `position` (`$arg`) of `function`; else a
/// `\ValueError`: `must be {before}"a", "b" or "c"`, the core's names in its order.
pub fn named<T: Named>(
    function: &str,
    (position, arg): (u32, &str),
    name: &str,
    before: &str,
) -> PhpResult<T> {
    T::from_name(name).ok_or_else(|| {
        let names = T::one_of('"');
        value_error(function, position, arg, &format!("must be {before}{names}"))
    })
}

/// The type of a PHP value as PHP's own messages name it: `int`, `string`, a class name.
pub fn type_name(value: &Zval) -> String {
    let value = value.dereference();
    if let Some(object) = value.object() {
        return object
            .get_class_name()
            .unwrap_or_else(|_| "object".to_string());
    }
    let kinds = [
        (Zval::is_null as fn(&Zval) -> bool, "null"),
        (Zval::is_bool, "bool"),
        (Zval::is_long, "int"),
        (Zval::is_double, "float"),
        (Zval::is_string, "string"),
        (Zval::is_array, "array"),
    ];
    let kind = kinds.iter().find(|(is, _)| is(value));
    String::from(kind.map_or("a value of another type", |(_, name)| *name))
}

/// A number of attempts: below 1 is left for the core to refuse (`ZERO_ATTEMPTS`); above
/// 4294967295 is a `\ValueError`.
pub fn attempts(function: &str, position: u32, name: &str, value: i64) -> PhpResult<u32> {
    match u32::try_from(value) {
        Ok(n) => Ok(n),
        Err(_) if value < 0 => Ok(0),
        Err(_) => Err(value_error(
            function,
            position,
            name,
            "must be less than or equal to 4294967295",
        )),
    }
}

/// An optional duration in milliseconds (null: none), checked like [`millis`].
pub fn optional_millis(
    function: &str,
    position: u32,
    name: &str,
    value: Option<i64>,
) -> PhpResult<Option<u64>> {
    value
        .map(|v| millis(function, position, name, v))
        .transpose()
}

/// An optional number of seconds (null: none) in milliseconds, checked by the core
/// (`Recuo\Exception\ConfigError` when negative or not a number): a timeout, a deadline.
pub fn optional_secs(
    function: &str,
    arg: (u32, &str),
    value: Option<f64>,
) -> PhpResult<Option<u64>> {
    let ms =
        |s| recuo::units::ms_from_secs_f64(s).map_err(|e| config_error(function, Some(arg), e));
    value.map(ms).transpose()
}

/// A number that is never negative: a reading of the caller's monotonic clock (in
/// milliseconds or nanoseconds), a count of milliseconds or of requests.
pub fn non_negative(function: &str, position: u32, name: &str, value: i64) -> PhpResult<u64> {
    u64::try_from(value).map_err(|_| {
        value_error(
            function,
            position,
            name,
            "must be greater than or equal to 0",
        )
    })
}

/// As [`non_negative`], or null.
pub fn optional_non_negative(
    function: &str,
    position: u32,
    name: &str,
    value: Option<i64>,
) -> PhpResult<Option<u64>> {
    let must = "must be null or greater than or equal to 0";
    value
        .map(|v| u64::try_from(v).map_err(|_| value_error(function, position, name, must)))
        .transpose()
}

/// A count that must fit the core's `u32` (attempts, a burst, a cost, a number of places).
pub fn count(function: &str, position: u32, name: &str, value: i64) -> PhpResult<u32> {
    u32::try_from(value)
        .map_err(|_| value_error(function, position, name, "must be between 0 and 4294967295"))
}

/// A retry index (`$attempt`): negative is a `\ValueError`; beyond `u32::MAX` it saturates,
/// which changes no answer because every window has reached its cap long before.
pub fn retry_index(function: &str, position: u32, name: &str, value: i64) -> PhpResult<u32> {
    let index = non_negative(function, position, name, value)?;
    Ok(u32::try_from(index).unwrap_or(u32::MAX))
}

/// A duration in milliseconds, checked by the core (`Recuo\Exception\ConfigError` when
/// negative).
pub fn millis(function: &str, position: u32, name: &str, value: i64) -> PhpResult<u64> {
    recuo::units::ms_from_i64(value).map_err(|e| config_error(function, Some((position, name)), e))
}

/// A jitter seed: any non-negative PHP int.
pub fn seed(function: &str, position: u32, value: Option<i64>) -> PhpResult<Option<u64>> {
    optional_non_negative(function, position, "seed", value)
}

/// `$nowMs`, or the system clock (milliseconds since the Unix epoch) when it is null.
pub fn now_ms(value: Option<i64>) -> i64 {
    value.unwrap_or_else(|| match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    })
}

/// PHP's own `json_decode($json, $associative)`; none should ext/json fail (it is always
/// built in).
pub fn json_decode(json: &str, associative: bool) -> Option<Zval> {
    let decode = ZendCallable::try_from_name("json_decode").ok()?;
    decode.try_call(vec![&json, &associative]).ok()
}

/// `value`, changed by `add` with `option` when given: a builder's optional setting.
pub fn given<T, U>(value: T, option: Option<U>, add: impl FnOnce(T, U) -> T) -> T {
    match option {
        Some(given) => add(value, given),
        None => value,
    }
}

/// A count of milliseconds as a PHP int (saturating; the core's delays never get there).
pub fn php_int(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}
