//! The trial's HTTP client: one blocking request at a time per caller, on the shared tokio
//! runtime (hyper-util's pooled client over hyper-rustls: HTTP/1.1, plain or over TLS). It
//! reports what came back; the core decides what it means.

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue, USER_AGENT};
use hyper::{Method, Request, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use recuo::Transport;
use tokio::runtime::Handle;

use crate::error::CliError;

/// What came back from one request.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The response headers that are text.
    pub headers: Vec<(String, String)>,
}

/// One read: the method, the URL and the body sent on every attempt.
#[derive(Debug, Clone)]
pub struct Read {
    /// The method.
    pub method: Method,
    /// The URL.
    pub uri: Uri,
    /// The body (empty without `--data`).
    pub body: Bytes,
}

/// A blocking HTTP client for the trial's worker threads.
#[derive(Debug, Clone)]
pub struct HttpClient {
    rt: Handle,
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    timeout: Duration,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl HttpClient {
    /// A client whose requests run on `rt`, each limited to `timeout`, sending `headers` on
    /// every request and speaking TLS with `tls` to `https://` URLs.
    pub fn new(
        rt: Handle,
        timeout: Duration,
        headers: Vec<(HeaderName, HeaderValue)>,
        tls: rustls::ClientConfig,
    ) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(timeout));
        connector.enforce_http(false);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector);
        let client = {
            let _guard = rt.enter();
            Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(30))
                .build(https)
        };
        HttpClient {
            rt,
            client,
            timeout,
            headers,
        }
    }

    /// Sends `read` with `key`, `(header, value)`, if any, and waits for the whole answer —
    /// its body too: a body that fails after the headers is the transport failure it is —
    /// at most the client's timeout or `left` (what is left of the deadline), whichever is
    /// shorter. Call it from a thread outside the runtime.
    ///
    /// # Errors
    /// The transport failure's kind (`connect`, `tls`, `timeout`, `reset`, `other`).
    pub fn send(
        &self,
        read: &Read,
        key: Option<(&str, &str)>,
        left: Option<Duration>,
    ) -> Result<Reply, Transport> {
        let mut req = Request::builder()
            .method(read.method.clone())
            .uri(read.uri.clone())
            .header(USER_AGENT, concat!("recuo/", env!("CARGO_PKG_VERSION")))
            .body(Full::new(read.body.clone()))
            .map_err(|_| Transport::Other)?;
        for (name, value) in &self.headers {
            req.headers_mut().append(name.clone(), value.clone());
        }
        if let Some((Ok(name), Ok(value))) = key.map(|(header, key)| {
            (
                HeaderName::from_bytes(header.as_bytes()),
                HeaderValue::from_str(key),
            )
        }) {
            req.headers_mut().insert(name, value);
        }
        let client = self.client.clone();
        let exchange = async move {
            let response = client
                .request(req)
                .await
                .map_err(|e| match transport_of(&e) {
                    Transport::Tls => Transport::Tls,
                    _ if e.is_connect() => Transport::Connect,
                    other => other,
                })?;
            let (parts, body) = response.into_parts();
            // Read the body to the end, so the connection can serve the next request.
            body.collect().await.map_err(|e| transport_of(&e))?;
            let headers = parts
                .headers
                .iter()
                .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
                .collect();
            Ok(Reply {
                status: parts.status.as_u16(),
                headers,
            })
        };
        let timeout = left.map_or(self.timeout, |l| l.min(self.timeout));
        self.rt.block_on(async move {
            tokio::time::timeout(timeout, exchange)
                .await
                .unwrap_or(Err(Transport::Timeout))
        })
    }
}

/// The kind of a failure: a TLS failure (a certificate that failed verification, a
/// handshake refused) is `tls`, a dropped connection `reset`, a timed-out socket `timeout`,
/// anything else `other`.
fn transport_of(e: &(dyn std::error::Error + 'static)) -> Transport {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.downcast_ref::<rustls::Error>().is_some() {
            return Transport::Tls;
        }
        if let Some(h) = err.downcast_ref::<hyper::Error>() {
            if h.is_timeout() {
                return Transport::Timeout;
            }
            if h.is_incomplete_message() || h.is_closed() || h.is_canceled() {
                return Transport::Reset;
            }
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            match io.kind() {
                TimedOut => return Transport::Timeout,
                ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => {
                    return Transport::Reset
                }
                ConnectionRefused => return Transport::Connect,
                _ => {}
            }
            // An io::Error's source() skips the error it wraps (tokio-rustls wraps rustls's
            // error, hyper-rustls wraps that again): look inside.
            if let Some(inner) = io.get_ref() {
                source = Some(inner as &(dyn std::error::Error + 'static));
                continue;
            }
        }
        source = err.source();
    }
    Transport::Other
}

/// Checks a trial URL: `http://` or `https://` with a host.
///
/// # Errors
/// [`CliError::Usage`] for anything else.
pub fn check_url(text: &str) -> Result<Uri, CliError> {
    let uri: Uri = text
        .parse()
        .map_err(|_| CliError::Usage(format!("{:?} is not a URL", redact_url(text))))?;
    match uri.scheme_str() {
        Some("http" | "https") if uri.host().is_some_and(|h| !h.is_empty()) => Ok(uri),
        _ => Err(CliError::Usage(format!(
            "{:?} is not an http:// or https:// URL with a host",
            redact_url(text)
        ))),
    }
}

/// A URL fit to print, by the core's redaction: no user information, sensitive
/// query values as `[redacted]`, e-mails and long numbers masked.
pub fn redact_url(text: &str) -> String {
    recuo::redact_url(text).url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_redacted() {
        assert!(check_url(
            "http://127.0.0.1:8080/items/{i}"
                .replace("{i}", "1")
                .as_str()
        )
        .is_ok());
        assert!(check_url("https://example.com/").is_ok());
        assert!(check_url("ftp://x/").is_err());
        assert!(check_url("not a url").is_err());
        assert_eq!(
            redact_url("http://user:pw@host:1/p?id=3&api_key=abc&Token=x"),
            "http://host:1/p?id=3&api_key=[redacted]&Token=[redacted]"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:8080/items/{i}"),
            "http://127.0.0.1:8080/items/{i}"
        );
    }

    #[test]
    fn transport_kinds() {
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "x");
        assert_eq!(transport_of(&reset), Transport::Reset);
        let other = std::io::Error::other("x");
        assert_eq!(transport_of(&other), Transport::Other);
        let tls = std::io::Error::other(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        ));
        assert_eq!(transport_of(&tls), Transport::Tls);
    }
}
