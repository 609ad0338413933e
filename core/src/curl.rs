//! What a libcurl error means for a request (retried or not, as docs/c.md says): one table for every host that sends
//! with curl — C's `recuo_curl.h` and PHP's `buscarComRetry` — so that the same failure is
//! retried, or not, alike. The host says the `CURLcode` (its number) and whether any byte of
//! the request was sent (curl's `CURLINFO_REQUEST_SIZE` above 0); the table answers the
//! transport kind.

use crate::classify::Transport;

/// `CURLE_COULDNT_RESOLVE_PROXY`, `_RESOLVE_HOST`, `_CONNECT`, `_SSL_CONNECT_ERROR` (the TLS
/// handshake failed before anything was sent: a reset during it, a protocol no side shares;
/// not a certificate refused), `_INTERFACE_FAILED`: the request was never sent.
const CONNECT: [u32; 5] = [5, 6, 7, 35, 45];

/// The certificate or the TLS set-up was refused: `CURLE_SSL_ENGINE_NOTFOUND` (53),
/// `_SSL_ENGINE_SETFAILED` (54), `_SSL_CERTPROBLEM` (58), `_SSL_CIPHER` (59),
/// `_PEER_FAILED_VERIFICATION` (60; 51 in libcurl before 7.62), `_USE_SSL_FAILED` (64),
/// `_SSL_ENGINE_INITFAILED` (66), `_SSL_CACERT_BADFILE` (77), `_SSL_SHUTDOWN_FAILED` (80),
/// `_SSL_CRL_BADFILE` (82), `_SSL_ISSUER_ERROR` (83), `_SSL_PINNEDPUBKEYNOTMATCH` (90),
/// `_SSL_INVALIDCERTSTATUS` (91), `_SSL_CLIENTCERT` (98). Retrying cannot fix it and would
/// hide an interception.
const TLS: [u32; 15] = [51, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98];

/// The connection was lost after the request was sent: `CURLE_PARTIAL_FILE` (18, a body cut
/// short), `_GOT_NOTHING` (52), `_SEND_ERROR` (55), `_RECV_ERROR` (56), `_HTTP2_STREAM` (92).
const RESET: [u32; 5] = [18, 52, 55, 56, 92];

/// `CURLE_OPERATION_TIMEDOUT`.
const TIMED_OUT: u32 = 28;

/// The transport kind of a libcurl transfer that failed with `code` (a `CURLcode` other than
/// `CURLE_OK`), `request_sent` saying whether any byte of the request went out. A timeout
/// before anything was sent is `connect` (the connect timed out: the request was never sent);
/// a code the table does not name is `other`.
pub fn curl_transport(code: u32, request_sent: bool) -> Transport {
    if CONNECT.contains(&code) {
        Transport::Connect
    } else if TLS.contains(&code) {
        Transport::Tls
    } else if RESET.contains(&code) {
        Transport::Reset
    } else if code == TIMED_OUT {
        if request_sent {
            Transport::Timeout
        } else {
            Transport::Connect
        }
    } else {
        Transport::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codes_the_hosts_disagreed_on() {
        // SSL_CONNECT_ERROR: a handshake that failed, nothing sent: retried as connect.
        assert_eq!(curl_transport(35, false), Transport::Connect);
        assert_eq!(curl_transport(45, false), Transport::Connect);
        assert_eq!(curl_transport(51, true), Transport::Tls);
        assert_eq!(curl_transport(98, false), Transport::Tls);
        assert_eq!(curl_transport(28, true), Transport::Timeout);
        assert_eq!(curl_transport(28, false), Transport::Connect);
        assert_eq!(curl_transport(0xffff, true), Transport::Other);
    }
}
