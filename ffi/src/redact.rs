//! Redaction for C: a URL, or one header's value, redacted by the core into the
//! caller's buffer. The rules are the core's (`recuo::redact_url`, `recuo::redact_headers`);
//! this file only converts, and decides what bytes that are not UTF-8 become.

use std::borrow::Cow;

use recuo::redact::{is_sensitive_name, REDACTED};

use crate::prelude::*;

/// Bytes from C as text: UTF-8 as it is; anything else with each invalid sequence replaced by
/// U+FFFD, so that no raw byte passes through. The flag says a replacement happened.
pub(crate) fn lossy(bytes: &[u8]) -> (Cow<'_, str>, bool) {
    let text = String::from_utf8_lossy(bytes);
    let replaced = matches!(text, Cow::Owned(_));
    (text, replaced)
}

/// A URL read from C as the core redacts it: the redacted text, and whether the URL was
/// malformed — also when its bytes were not UTF-8 (a URL is text; such bytes are replaced by
/// U+FFFD before redaction, so none reaches the output).
pub(crate) fn redacted_url(bytes: &[u8]) -> (String, bool) {
    let (text, replaced) = lossy(bytes);
    let r = recuo::redact_url(&text);
    (r.url, r.malformed || replaced)
}

/// One header's value as the core redacts it. A name that is not UTF-8 cannot be judged, so
/// its value is taken for a secret (`[redacted]`): over-redaction is the safe side.
pub(crate) fn redacted_header_value(name: &[u8], value: &[u8]) -> String {
    let (name, replaced) = lossy(name);
    if replaced {
        return REDACTED.to_string();
    }
    let (value, _) = lossy(value);
    recuo::redact_headers(&[(name, value)])
        .pop()
        .map_or_else(|| REDACTED.to_string(), |(_, v)| v)
}

/// Redacts the URL `url` (`url_len` bytes) and writes the result into `buf` (`buf_len`
/// bytes), NUL-terminated; `*written` (when not NULL) receives its length without the NUL,
/// and `*malformed_out` (when not NULL) whether the URL was malformed.
///
/// The rules are the core's, the same in every language: userinfo (`user:password@`)
/// removed; the values of sensitive query parameters (`api_key`, `access_token`,
/// `X-Amz-Signature`, … — any name containing token, secret, password, key, auth, session,
/// signature, credential, and a few more) replaced by `[redacted]`; e-mail addresses
/// (`[email]`) and numbers of 11 or more digits once separators are removed (CPF, CNPJ, card
/// and phone numbers: `[number]`) masked in the path and query values. The host is never
/// touched. A malformed URL (spaces or control characters, an odd scheme, no host after
/// `://`) is redacted as far as it can be read and reported as malformed, never shown as it
/// came.
///
/// Bytes that are not UTF-8 are replaced by U+FFFD before redaction (no raw byte reaches the
/// output) and make the URL malformed. `url` may contain NUL bytes; it may be NULL only with
/// `url_len` 0 (the empty URL).
///
/// A buffer of `3 * url_len + 11` bytes always suffices (redaction can make a URL longer:
/// `?sid=` becomes `?sid=[redacted]`).
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` — what fits is written, cut at a
/// character boundary and NUL-terminated (a cut redacted URL still holds no secret), and
/// `*malformed_out` is written; `RECUO_ERR_NULL_ARGUMENT` (`buf`, or `url` with a non-zero
/// length) and `RECUO_ERR_LENGTH_TOO_LARGE`, with nothing written.
///
/// # Safety
/// `url` must be NULL or point to `url_len` readable bytes; `buf` must point to `buf_len`
/// writable bytes; `written` NULL or a writable `size_t`; `malformed_out` NULL or a writable
/// `bool`.
#[no_mangle]
pub unsafe extern "C" fn recuo_redact_url(
    url: *const c_char,
    url_len: usize,
    buf: *mut c_char,
    buf_len: usize,
    written: *mut usize,
    malformed_out: *mut bool,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for `url_len` readable bytes at a non-NULL `url`.
        let (text, malformed) = redacted_url(unsafe { ptr::bytes(url, url_len) }?);
        // SAFETY: the caller vouches for `buf`, `buf_len` and `written`.
        let status = unsafe { write_text(buf, buf_len, written, &text) };
        if matches!(status, RECUO_OK | RECUO_ERR_BUFFER_TOO_SMALL) {
            // SAFETY: the caller vouches for a writable bool.
            unsafe { ptr::put(malformed_out, malformed) };
        }
        Ok(status)
    })
}

/// Redacts the value of one header, named `name` (`name_len` bytes), whose value is `value`
/// (`value_len` bytes), and writes the result into `buf` (`buf_len` bytes), NUL-terminated;
/// `*written` (when not NULL) receives its length without the NUL. Call it for each header
/// you print or log: the name itself stays as it is.
///
/// The rules are the core's: the value of a sensitive header (`Authorization`,
/// `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and every name containing token, secret,
/// password, passwd, key, auth, session, signature or credential, in any case) becomes
/// `[redacted]`; in other values, URLs (`Location`, `Link`, …) are redacted as
/// `recuo_redact_url` does, and e-mail addresses and long numbers are masked.
///
/// Header bytes come from a server, so they are never refused: bytes of a value that are not
/// UTF-8 are replaced by U+FFFD (no raw byte reaches the output); a name that is not UTF-8
/// cannot be judged, so its value is taken for a secret and becomes `[redacted]`.
/// `name` and `value` may contain NUL bytes, and be NULL only with a length of 0.
///
/// A buffer of `3 * value_len + 11` bytes always suffices.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written, cut at a character
/// boundary and NUL-terminated); `RECUO_ERR_NULL_ARGUMENT` (`buf`, or `name` or `value` with
/// a non-zero length) and `RECUO_ERR_LENGTH_TOO_LARGE`, with nothing written.
///
/// # Safety
/// `name` and `value` must be NULL or point to their lengths of readable bytes; `buf` must
/// point to `buf_len` writable bytes; `written` NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_redact_header_value(
    name: *const c_char,
    name_len: usize,
    value: *const c_char,
    value_len: usize,
    buf: *mut c_char,
    buf_len: usize,
    written: *mut usize,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for the bytes of a non-NULL `name` and `value`.
        let (name, value) = unsafe { (ptr::bytes(name, name_len)?, ptr::bytes(value, value_len)?) };
        let text = redacted_header_value(name, value);
        // SAFETY: the caller vouches for `buf`, `buf_len` and `written`.
        Ok(unsafe { write_text(buf, buf_len, written, &text) })
    })
}

/// Whether a header or query parameter called `name` (`name_len` bytes) holds a secret, so
/// that its value is redacted: the core's rule (see `recuo_redact_header_value`), matched in
/// any case and after percent-decoding (`api%5Fkey` is `api_key`). A name that is not UTF-8
/// cannot be judged: true. False when `name` is NULL with a non-zero length (and for the
/// empty name), or if recuo panicked.
///
/// # Safety
/// `name` must be NULL or point to `name_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn recuo_is_sensitive_name(name: *const c_char, name_len: usize) -> bool {
    // SAFETY: the caller vouches for the bytes of a non-NULL `name`.
    let name = || unsafe { ptr::bytes(name, name_len) }.map(lossy);
    boundary(|| name().is_ok_and(|(text, replaced)| replaced || is_sensitive_name(&text)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::recuo_status::RECUO_ERR_LENGTH_TOO_LARGE;

    /// Calls `recuo_redact_url` with a buffer of `cap` bytes.
    fn url(input: &[u8], cap: usize) -> (recuo_status, String, usize, bool) {
        let mut buf = vec![0xAAu8; cap.max(1)];
        let (mut written, mut malformed) = (usize::MAX, false);
        // SAFETY: live slices and outputs.
        let rc = unsafe {
            recuo_redact_url(
                input.as_ptr().cast(),
                input.len(),
                buf.as_mut_ptr().cast(),
                cap,
                &mut written,
                &mut malformed,
            )
        };
        let nul = buf.iter().position(|&b| b == 0).unwrap_or(0);
        let text = String::from_utf8(buf[..nul].to_vec()).unwrap();
        (rc, text, written, malformed)
    }

    fn header(name: &[u8], value: &[u8]) -> String {
        let mut buf = vec![0u8; 3 * value.len() + 11];
        let mut written = 0;
        // SAFETY: live slices and outputs.
        let rc = unsafe {
            recuo_redact_header_value(
                name.as_ptr().cast(),
                name.len(),
                value.as_ptr().cast(),
                value.len(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            )
        };
        assert_eq!(rc, RECUO_OK);
        String::from_utf8(buf[..written].to_vec()).unwrap()
    }

    #[test]
    fn urls_are_the_core_redaction() {
        let raw = "https://alice:pw@api.example.com/users/ana@example.com?api_key=k&page=2";
        let (rc, text, written, malformed) = url(raw.as_bytes(), 256);
        assert_eq!(rc, RECUO_OK);
        assert_eq!(text, recuo::redact_url(raw).url);
        assert_eq!((written, malformed), (text.len(), false));
        let (rc, text, _, malformed) = url(b"ht!tp://u:p@h/a b?token=x", 256);
        assert_eq!(rc, RECUO_OK);
        assert!(malformed && !text.contains("token=x") && !text.contains("u:p"));
    }

    #[test]
    fn bytes_that_are_not_utf8_never_pass_through() {
        let (rc, text, _, malformed) = url(b"https://h.io/a\xff\xfeb?token=\xff", 256);
        assert_eq!(rc, RECUO_OK);
        assert_eq!(text, "https://h.io/a\u{fffd}\u{fffd}b?token=[redacted]");
        assert!(malformed);
        assert_eq!(header(b"Authorizati\xffon", b"Bearer x"), REDACTED);
        assert_eq!(
            header(b"Location", b"https://u:p@h.io/\xff"),
            "https://h.io/\u{fffd}"
        );
        assert_eq!(header(b"X-Api-Key", b"k"), REDACTED);
        assert_eq!(header(b"Content-Type", b"text/html"), "text/html");
        // SAFETY: live slices.
        unsafe {
            assert!(recuo_is_sensitive_name(c"Cook\xffie".as_ptr(), 7));
            assert!(recuo_is_sensitive_name(c"api%5Fkey".as_ptr(), 9));
            assert!(!recuo_is_sensitive_name(c"Location".as_ptr(), 8));
            assert!(!recuo_is_sensitive_name(std::ptr::null(), 3));
        }
    }

    #[test]
    fn truncation_null_and_length_checks() {
        let raw = b"https://api.example.com/v1?token=abc";
        let (rc, text, written, malformed) = url(raw, 12);
        assert_eq!(
            (rc, text.as_str(), written),
            (RECUO_ERR_BUFFER_TOO_SMALL, "https://api", 11)
        );
        assert!(!malformed);
        let (rc, _, written, _) = url(raw, 0);
        assert_eq!((rc, written), (RECUO_ERR_BUFFER_TOO_SMALL, 0));
        let mut buf = [0u8; 8];
        let mut malformed = true;
        // SAFETY: the NULL and length checks come before any read or write.
        unsafe {
            let rc = recuo_redact_url(
                std::ptr::null(),
                3,
                buf.as_mut_ptr().cast(),
                8,
                std::ptr::null_mut(),
                &mut malformed,
            );
            assert_eq!(rc, RECUO_ERR_NULL_ARGUMENT);
            assert!(malformed, "written on an error");
            let rc = recuo_redact_url(
                c"x".as_ptr(),
                1,
                std::ptr::null_mut(),
                8,
                std::ptr::null_mut(),
                &mut malformed,
            );
            assert_eq!(rc, RECUO_ERR_NULL_ARGUMENT);
            let rc = recuo_redact_url(
                c"x".as_ptr(),
                usize::MAX,
                buf.as_mut_ptr().cast(),
                8,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            assert_eq!(rc, RECUO_ERR_LENGTH_TOO_LARGE);
            let rc = recuo_redact_header_value(
                std::ptr::null(),
                0,
                std::ptr::null(),
                0,
                buf.as_mut_ptr().cast(),
                8,
                std::ptr::null_mut(),
            );
            assert_eq!((rc, buf[0]), (RECUO_OK, 0));
        }
    }

    /// The documented buffer size, `3 * len + 11`, holds for inputs built to grow the most:
    /// short secret names with empty values, e-mails, bytes that are not UTF-8.
    #[test]
    fn three_times_the_input_always_suffices() {
        let pieces: [&[u8]; 16] = [
            b"?", b"&", b";", b"#", b"sid=", b"key=", b"a@b.c", b"@", b".", b"1", b"-", b"\xff",
            b"://", b"/", b"u:p@", b"%40",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let n = (next() % 24) as usize;
            let mut input = Vec::new();
            for _ in 0..n {
                input.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
            }
            let (u, _) = redacted_url(&input);
            assert!(u.len() < 3 * input.len() + 11, "{input:?} → {u}");
            let h = redacted_header_value(b"Location", &input);
            assert!(h.len() < 3 * input.len() + 11, "{input:?} → {h}");
        }
        assert!(redacted_header_value(b"Cookie", b"").len() < 11);
    }
}
