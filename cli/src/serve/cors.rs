//! `recuo serve --cors`: what a browser needs to see the simulated API's answers, in three
//! modes, so that a page can be tested against each thing a real API may do. Only headers
//! are added; the answers themselves are the server's.

use std::future::Future;
use std::pin::Pin;

use clap::ValueEnum;
use hyper::body::Incoming;
use hyper::header::{
    HeaderMap, HeaderValue, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS,
    ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE,
    ACCESS_CONTROL_REQUEST_HEADERS, ACCESS_CONTROL_REQUEST_METHOD, ORIGIN,
};
use hyper::service::Service;
use hyper::{Method, Request, Response, StatusCode};

/// Which cross-origin answers the server gives a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Cors {
    /// None: a page on another origin cannot read any answer (a 429 reaches it as a
    /// failure of `fetch`).
    #[default]
    None,
    /// Any origin may read the answers, and the waits are exposed: `Retry-After`, `Date`, the
    /// `RateLimit` fields, the `X-RateLimit-*` fields and `X-Request-Id`.
    Full,
    /// Any origin may read the answers, and no header is exposed: a page sees the status,
    /// never the wait.
    OriginOnly,
}

/// The response headers a page may read when the server exposes them (`--cors full`).
pub const EXPOSED: &str = "Retry-After, Date, RateLimit, RateLimit-Policy, X-RateLimit-Limit, \
                           X-RateLimit-Remaining, X-RateLimit-Reset, X-Request-Id";

/// How long a browser may keep a preflight's answer, seconds.
const PREFLIGHT_MAX_AGE: u32 = 600;

/// The methods a preflight allows.
const METHODS: &str = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";

/// A server's service with `mode`'s cross-origin headers on every answer, and preflights
/// answered (204) before the service sees them.
#[derive(Debug, Clone)]
pub struct WithCors<S> {
    mode: Cors,
    inner: S,
}

impl<S> WithCors<S> {
    /// `inner`, answering as `mode` says.
    pub fn new(mode: Cors, inner: S) -> Self {
        Self { mode, inner }
    }
}

impl<S, B> Service<Request<Incoming>> for WithCors<S>
where
    S: Service<Request<Incoming>, Response = Response<B>>,
    S::Future: Send + 'static,
    B: Default + Send + 'static,
{
    type Response = Response<B>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<B>, S::Error>> + Send>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let mode = self.mode;
        if mode != Cors::None && is_preflight(&req) {
            let mut r = Response::new(B::default());
            *r.status_mut() = StatusCode::NO_CONTENT;
            preflight_headers(req.headers(), r.headers_mut());
            return Box::pin(async move { Ok(r) });
        }
        let answer = self.inner.call(req);
        Box::pin(async move {
            let mut r = answer.await?;
            add_headers(mode, r.headers_mut());
            Ok(r)
        })
    }
}

/// Whether `req` is a browser's preflight (OPTIONS with `Access-Control-Request-Method`).
fn is_preflight<T>(req: &Request<T>) -> bool {
    req.method() == Method::OPTIONS
        && req.headers().contains_key(ACCESS_CONTROL_REQUEST_METHOD)
        && req.headers().contains_key(ORIGIN)
}

/// A preflight's answer: the methods, and the request headers the page asked for
/// (`Idempotency-Key`, `Content-Type`, …) allowed.
fn preflight_headers(request: &HeaderMap, out: &mut HeaderMap) {
    out.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    out.insert(
        ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(METHODS),
    );
    if let Some(asked) = request.get(ACCESS_CONTROL_REQUEST_HEADERS) {
        out.insert(ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
    }
    out.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from(PREFLIGHT_MAX_AGE));
}

/// The cross-origin headers of an answer in `mode`.
fn add_headers(mode: Cors, out: &mut HeaderMap) {
    if mode == Cors::None {
        return;
    }
    out.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    if mode == Cors::Full {
        out.insert(
            ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSED),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_adds_its_headers() {
        let mut h = HeaderMap::new();
        add_headers(Cors::None, &mut h);
        assert!(h.is_empty());
        add_headers(Cors::OriginOnly, &mut h);
        assert_eq!(h[ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        assert!(!h.contains_key(ACCESS_CONTROL_EXPOSE_HEADERS));
        add_headers(Cors::Full, &mut h);
        let exposed = h[ACCESS_CONTROL_EXPOSE_HEADERS].to_str().unwrap();
        for name in [
            "Retry-After",
            "Date",
            "RateLimit-Policy",
            "X-RateLimit-Reset",
            "X-Request-Id",
        ] {
            assert!(exposed.split(", ").any(|n| n == name), "{name}");
        }
    }

    #[test]
    fn a_preflight_allows_the_headers_asked_for() {
        let mut asked = HeaderMap::new();
        asked.insert(
            ACCESS_CONTROL_REQUEST_HEADERS,
            HeaderValue::from_static("idempotency-key, content-type"),
        );
        let mut h = HeaderMap::new();
        preflight_headers(&asked, &mut h);
        assert_eq!(
            h[ACCESS_CONTROL_ALLOW_HEADERS],
            "idempotency-key, content-type"
        );
        assert_eq!(h[ACCESS_CONTROL_ALLOW_METHODS], METHODS);
        assert_eq!(h[ACCESS_CONTROL_MAX_AGE], "600");
    }
}
