//! `recuo_transport`: how a request failed before an HTTP status came back, as
//! the policy's rules and the classification name it.

use recuo::Transport;

use crate::prelude::*;

/// How a request failed before an HTTP status came back.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum recuo_transport {
    /// The request was never sent: DNS failure, connection refused, connect timeout.
    RECUO_TRANSPORT_CONNECT = 1,
    /// The server's certificate failed verification.
    RECUO_TRANSPORT_TLS = 2,
    /// No answer in time, after the request was sent.
    RECUO_TRANSPORT_TIMEOUT = 3,
    /// The connection dropped after the request was sent.
    RECUO_TRANSPORT_RESET = 4,
    /// Any other failure.
    RECUO_TRANSPORT_OTHER = 5,
}

c_enum!(recuo_transport: Transport {
    RECUO_TRANSPORT_CONNECT = [Transport::Connect] => c"connect",
    RECUO_TRANSPORT_TLS = [Transport::Tls] => c"tls",
    RECUO_TRANSPORT_TIMEOUT = [Transport::Timeout] => c"timeout",
    RECUO_TRANSPORT_RESET = [Transport::Reset] => c"reset",
    RECUO_TRANSPORT_OTHER = [Transport::Other] => c"other",
});

/// The name of the `recuo_transport` constant `transport` (`"connect"`, `"tls"`,
/// `"timeout"`, `"reset"`, `"other"`), or `"unknown"`. Static. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_transport_name(transport: u32) -> *const c_char {
    recuo_transport::name_of(transport)
}

crate::panic::fallbacks!(recuo_transport => recuo_transport::RECUO_TRANSPORT_OTHER);

/// What a libcurl transfer that failed with the `CURLcode` `code` (not `CURLE_OK`) means for
/// the request, `request_sent` saying whether any byte of it went out
/// (`CURLINFO_REQUEST_SIZE` above 0): never sent (DNS, refused, a TLS handshake that failed, a
/// connect timeout) is `RECUO_TRANSPORT_CONNECT`; a certificate refused
/// `RECUO_TRANSPORT_TLS`; a timeout after sending `RECUO_TRANSPORT_TIMEOUT`; a connection
/// lost after sending (a body cut short included) `RECUO_TRANSPORT_RESET`; any other code
/// `RECUO_TRANSPORT_OTHER`. The one table `recuo_curl.h` and PHP's `buscarComRetry` use;
/// `RECUO_TRANSPORT_OTHER` only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_curl_code_transport(code: u32, request_sent: bool) -> recuo_transport {
    boundary(|| recuo_transport::from_core(recuo::curl_transport(code, request_sent)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curls_table_through_the_c_function() {
        assert_eq!(
            recuo_curl_code_transport(35, false),
            recuo_transport::RECUO_TRANSPORT_CONNECT
        );
        assert_eq!(
            recuo_curl_code_transport(60, true),
            recuo_transport::RECUO_TRANSPORT_TLS
        );
        assert_eq!(
            recuo_curl_code_transport(28, false),
            recuo_transport::RECUO_TRANSPORT_CONNECT
        );
    }
}
