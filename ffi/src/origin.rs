//! Who answered for C: the API itself, a proxy or a CDN, judged by the core
//! (`recuo::who_answered`) from the response headers; the evidence lines are copied into the
//! caller's buffer one at a time.

use recuo::{Confidence, Origin, WhoAnswered};

use crate::prelude::*;

/// Where an answer most likely came from.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_origin {
    /// The API the request was for.
    RECUO_ORIGIN_API = 1,
    /// A proxy or gateway in between.
    RECUO_ORIGIN_PROXY = 2,
    /// A content delivery network in front of the API.
    RECUO_ORIGIN_CDN = 3,
    /// Nothing points anywhere.
    RECUO_ORIGIN_UNKNOWN = 4,
}

c_enum!(recuo_origin: Origin {
    RECUO_ORIGIN_API = [Origin::Api] => c"api",
    RECUO_ORIGIN_PROXY = [Origin::Proxy] => c"proxy",
    RECUO_ORIGIN_CDN = [Origin::Cdn] => c"cdn",
    RECUO_ORIGIN_UNKNOWN = [Origin::Unknown] => c"unknown",
});

/// How sure a `recuo_who_answered` answer is. A brand alone (`Server: cloudflare`, a branded
/// error page) is never enough for `RECUO_CONFIDENCE_HIGH`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_confidence {
    /// One weak hint.
    RECUO_CONFIDENCE_LOW = 1,
    /// A clear signal, or several hints that agree.
    RECUO_CONFIDENCE_MEDIUM = 2,
    /// Independent signals that agree, one of them more than a brand.
    RECUO_CONFIDENCE_HIGH = 3,
}

c_enum!(recuo_confidence: Confidence {
    RECUO_CONFIDENCE_LOW = [Confidence::Low] => c"low",
    RECUO_CONFIDENCE_MEDIUM = [Confidence::Medium] => c"medium",
    RECUO_CONFIDENCE_HIGH = [Confidence::High] => c"high",
});

/// The answer of `recuo_who_answered`: a plain struct recuo fills in. The evidence lines
/// themselves are copied into a buffer of yours by `recuo_who_answered_evidence`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct recuo_who_answered_result {
    /// A `recuo_origin` constant: the most likely origin.
    pub origin: recuo_origin,
    /// A `recuo_confidence` constant: how sure.
    pub confidence: recuo_confidence,
    /// How many evidence lines there are (what points there, and what points elsewhere).
    pub evidence_count: usize,
}

/// Reads the arguments both functions take and asks the core.
///
/// # Safety
/// As `recuo_who_answered`.
unsafe fn judge(
    headers: *const recuo_header,
    header_count: usize,
    expected_content_type: *const c_char,
    expected_len: usize,
) -> Result<WhoAnswered, recuo_status> {
    // SAFETY: forwarded from the caller.
    let (headers, expected) = unsafe {
        let expected = (!expected_content_type.is_null())
            .then(|| ptr::text(expected_content_type, expected_len));
        (read_headers(headers, header_count)?, expected.transpose()?)
    };
    Ok(recuo::who_answered(&headers, expected))
}

/// Judges who answered a response — the API, a proxy or a CDN — from its headers, and stores
/// the answer in `*out`: the origin, a confidence, and how many evidence lines support it
/// (read them with `recuo_who_answered_evidence`). The judgement is the core's, the same in
/// every language:
///
/// * headers only a CDN sets point to it: `cf-ray`, `cf-cache-status` (Cloudflare),
///   `x-amz-cf-id`, `x-amz-cf-pop` (CloudFront), `x-fastly-request-id`, `x-served-by:
///   cache-…` (Fastly), `x-akamai-*`, `akamai-grn` (Akamai), `x-azure-ref` (Azure Front
///   Door), `x-msedge-ref`;
/// * `via`, `x-cache`, and a `server` naming a proxy (nginx, envoy, …) point to a proxy or a
///   cache; a `server` naming a CDN is a brand, weak evidence, never enough for
///   `RECUO_CONFIDENCE_HIGH`;
/// * a request id, rate-limit headers and the content type the API sends point to the API —
///   whose answer stays the API's when it merely passed through a CDN.
///
/// * `headers`, `header_count`: the response's headers (names in any case); NULL only with
///   `header_count` 0. Header bytes are never refused: bytes that are not UTF-8 are read as
///   U+FFFD (see `recuo_header`).
/// * `expected_content_type`, `expected_len`: the media type the API sends (e.g.
///   `application/json`), or NULL when you do not say — then the content type is not
///   weighed. A response whose content type is another (HTML where JSON was expected) was
///   made elsewhere. It must be UTF-8.
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`out`, or `headers` or a header's bytes
/// NULL with a non-zero length); `RECUO_ERR_NOT_UTF8` (`expected_content_type`);
/// `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is untouched.
///
/// # Safety
/// `headers` must point to `header_count` readable `recuo_header`s (or be NULL with 0), each
/// pointing to its bytes; `expected_content_type` NULL or `expected_len` readable bytes;
/// `out` NULL or a writable `recuo_who_answered_result`.
#[no_mangle]
pub unsafe extern "C" fn recuo_who_answered(
    headers: *const recuo_header,
    header_count: usize,
    expected_content_type: *const c_char,
    expected_len: usize,
    out: *mut recuo_who_answered_result,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::fill(out, || {
            let w = judge(headers, header_count, expected_content_type, expected_len)?;
            Ok(recuo_who_answered_result {
                origin: recuo_origin::from_core(w.origin),
                confidence: recuo_confidence::from_core(w.confidence),
                evidence_count: w.evidence.len(),
            })
        })
    }
}

/// Copies evidence line number `index` (from 0, below `evidence_count`) of the answer
/// `recuo_who_answered` gives for the same arguments into `buf` (`buf_len` bytes),
/// NUL-terminated; `*written` (when not NULL) receives its length without the NUL. The
/// judgement is made again (it is a pure function of the headers), so the headers must be
/// the same. A line is UTF-8 text for humans (`cf-ray → Cloudflare`, `server: cloudflare →
/// Cloudflare (a brand, weak evidence)`); it may quote a header's value.
///
/// Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written, cut at a character
/// boundary and NUL-terminated); `RECUO_ERR_INDEX_OUT_OF_RANGE` for an `index` at or past the
/// count (nothing written); and the errors of `recuo_who_answered`, or
/// `RECUO_ERR_NULL_ARGUMENT` for `buf`, with nothing written.
///
/// # Safety
/// As `recuo_who_answered`; `buf` must point to `buf_len` writable bytes; `written` NULL or a
/// writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_who_answered_evidence(
    headers: *const recuo_header,
    header_count: usize,
    expected_content_type: *const c_char,
    expected_len: usize,
    index: usize,
    buf: *mut c_char,
    buf_len: usize,
    written: *mut usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        write_made(buf, buf_len, written, || {
            let w = judge(headers, header_count, expected_content_type, expected_len)?;
            w.evidence
                .into_iter()
                .nth(index)
                .ok_or(RECUO_ERR_INDEX_OUT_OF_RANGE)
        })
    }
}

/// The name of the `recuo_origin` constant `origin` (`"api"`, `"proxy"`, `"cdn"`,
/// `"unknown"`: the names every language uses), or `"unknown"` for a number that is no
/// constant. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_origin_name(origin: u32) -> *const c_char {
    recuo_origin::name_of(origin)
}

/// The name of the `recuo_confidence` constant `confidence` (`"low"`, `"medium"`, `"high"`),
/// or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_confidence_name(confidence: u32) -> *const c_char {
    recuo_confidence::name_of(confidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::recuo_status::RECUO_OK;
    use crate::status::recuo_status::{RECUO_ERR_BUFFER_TOO_SMALL, RECUO_ERR_NOT_UTF8};

    fn h(name: &'static std::ffi::CStr, value: &'static std::ffi::CStr) -> recuo_header {
        recuo_header {
            name: name.as_ptr(),
            name_len: name.to_bytes().len(),
            value: value.as_ptr(),
            value_len: value.to_bytes().len(),
        }
    }

    #[test]
    fn names_are_the_core_names() {
        for o in [Origin::Api, Origin::Proxy, Origin::Cdn, Origin::Unknown] {
            assert_eq!(recuo_origin::from_core(o).name().to_str(), Ok(o.name()));
        }
        for c in [Confidence::Low, Confidence::Medium, Confidence::High] {
            assert_eq!(recuo_confidence::from_core(c).name().to_str(), Ok(c.name()));
        }
        // SAFETY: static strings.
        let name = |p| unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap();
        assert_eq!(name(recuo_origin_name(3)), "cdn");
        assert_eq!(name(recuo_origin_name(0)), "unknown");
        assert_eq!(name(recuo_confidence_name(3)), "high");
        assert_eq!(name(recuo_confidence_name(9)), "unknown");
    }

    #[test]
    fn the_answer_and_its_evidence_are_the_core_ones() {
        let headers = [
            h(c"CF-Ray", c"8a1b2c3d4e5f-GRU"),
            h(c"Server", c"cloudflare"),
            h(c"Content-Type", c"text/html"),
        ];
        let expected = "application/json";
        let core = recuo::who_answered(
            &[
                ("CF-Ray", "8a1b2c3d4e5f-GRU"),
                ("Server", "cloudflare"),
                ("Content-Type", "text/html"),
            ],
            Some(expected),
        );
        let mut out = recuo_who_answered_result {
            origin: recuo_origin::RECUO_ORIGIN_API,
            confidence: recuo_confidence::RECUO_CONFIDENCE_LOW,
            evidence_count: 0,
        };
        let mut buf = [0u8; 128];
        let mut written = 0;
        // SAFETY: live headers, text and outputs.
        unsafe {
            let rc =
                recuo_who_answered(headers.as_ptr(), 3, expected.as_ptr().cast(), 16, &mut out);
            assert_eq!(rc, RECUO_OK);
            assert_eq!(out.origin, recuo_origin::RECUO_ORIGIN_CDN);
            assert_eq!(out.confidence, recuo_confidence::RECUO_CONFIDENCE_HIGH);
            assert_eq!(out.evidence_count, core.evidence.len());
            for (i, line) in core.evidence.iter().enumerate() {
                let rc = recuo_who_answered_evidence(
                    headers.as_ptr(),
                    3,
                    expected.as_ptr().cast(),
                    16,
                    i,
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    &mut written,
                );
                assert_eq!(rc, RECUO_OK);
                assert_eq!(std::str::from_utf8(&buf[..written]), Ok(line.as_str()));
            }
            let rc = recuo_who_answered_evidence(
                headers.as_ptr(),
                3,
                expected.as_ptr().cast(),
                16,
                core.evidence.len(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            );
            assert_eq!(rc, RECUO_ERR_INDEX_OUT_OF_RANGE);
            let rc = recuo_who_answered_evidence(
                headers.as_ptr(),
                3,
                expected.as_ptr().cast(),
                16,
                0,
                buf.as_mut_ptr().cast(),
                4,
                &mut written,
            );
            assert_eq!((rc, written), (RECUO_ERR_BUFFER_TOO_SMALL, 3));
            let rc = recuo_who_answered(headers.as_ptr(), 3, c"\xff".as_ptr(), 1, &mut out);
            assert_eq!(rc, RECUO_ERR_NOT_UTF8);
            let rc = recuo_who_answered(std::ptr::null(), 0, std::ptr::null(), 0, &mut out);
            assert_eq!(rc, RECUO_OK);
            assert_eq!(
                (out.origin, out.confidence, out.evidence_count),
                (
                    recuo_origin::RECUO_ORIGIN_UNKNOWN,
                    recuo_confidence::RECUO_CONFIDENCE_LOW,
                    0
                )
            );
        }
    }
}
