//! Streamable HTTP: rmcp's service behind a small hyper server that checks the bearer token.
//!
//! Binds loopback by default. An address off loopback is refused unless a token is configured;
//! with a token, every request must carry `Authorization: Bearer TOKEN` (compared in constant
//! time) or it gets 401 before reaching MCP. On loopback, rmcp's Host check (DNS rebinding
//! protection) stays on. A request with an `Origin` header (a browser's) is served only when
//! it is the server's own origin ([`origin_allowed`]); otherwise it gets 403, as the streamable
//! HTTP transport says a server MUST. Requests without one (clients that are not browsers)
//! are served.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use crate::Error;
use crate::gate::Shared;
use crate::server::Warden;

/// The bearer token clients must present. Its `Debug` never shows it.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// Reads the token from `path` (surrounding whitespace trimmed).
    ///
    /// # Errors
    /// When the file cannot be read, or holds no token.
    pub fn from_file(path: &Path) -> Result<Token, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Token { path: path.display().to_string(), source })?;
        let token = text.trim();
        if token.is_empty() || token.len() > 4096 {
            return Err(Error::TokenEmpty { path: path.display().to_string() });
        }
        Ok(Token(token.to_string()))
    }

    /// Whether `header` (an `Authorization` value) carries this token.
    fn admits(&self, header: Option<&[u8]>) -> bool {
        let Some(given) = header.and_then(|h| h.strip_prefix(b"Bearer ")) else { return false };
        let want = self.0.as_bytes();
        // Constant time over the token's bytes (the length is not secret enough to hide).
        given.len() == want.len() && given.iter().zip(want).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

/// How to serve over HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The bearer token; required off loopback.
    pub token: Option<Token>,
}

/// The header naming a streamable HTTP session.
pub(crate) const SESSION_ID: &str = "mcp-session-id";

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// Serves `server` on `opts.addr` until the process ends.
///
/// # Errors
/// An address off loopback without a token; a port that cannot be bound.
pub async fn serve_http(server: Warden, opts: HttpOptions) -> Result<(), Error> {
    let loopback = opts.addr.ip().is_loopback();
    if !loopback && opts.token.is_none() {
        return Err(Error::TokenRequired { addr: opts.addr.to_string() });
    }
    let mut config = StreamableHttpServerConfig::default().with_max_request_body_bytes(crate::stdio::LINE_CAP);
    if !loopback {
        // Clients name this host however they reach it; the token is the guard here.
        config = config.disable_allowed_hosts();
    }
    server.start_reloading();
    let shared = Arc::clone(&server.shared);
    let service = StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    let listener = TcpListener::bind(opts.addr).await.map_err(|source| Error::Bind { addr: opts.addr.to_string(), source })?;
    let local = listener.local_addr().map_err(|source| Error::Bind { addr: opts.addr.to_string(), source })?;
    eprintln!("warden: serving MCP at http://{local}/mcp");
    let token = opts.token.map(Arc::new);
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let service = service.clone();
        let token = token.clone();
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
                let service = service.clone();
                let token = token.clone();
                let shared = Arc::clone(&shared);
                async move { Ok::<_, Infallible>(route(&service, &shared, token.as_deref(), local, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), handler).await;
        });
    }
}

async fn route(
    service: &StreamableHttpService<Warden, LocalSessionManager>,
    shared: &Shared,
    token: Option<&Token>,
    local: SocketAddr,
    req: Request<Incoming>,
) -> Response<Body> {
    if let Some(origin) = req.headers().get(hyper::header::ORIGIN) {
        let host = req.headers().get(hyper::header::HOST).and_then(|h| h.to_str().ok());
        if !origin_allowed(origin.as_bytes(), local, host) {
            return plain(StatusCode::FORBIDDEN, "the Origin is not this server's own: cross-origin requests are refused");
        }
    }
    if let Some(token) = token
        && !token.admits(req.headers().get(hyper::header::AUTHORIZATION).map(|v| v.as_bytes()))
    {
        return plain(StatusCode::UNAUTHORIZED, "a bearer token is required (Authorization: Bearer TOKEN)");
    }
    if req.uri().path() != "/mcp" {
        return plain(StatusCode::NOT_FOUND, "the MCP endpoint is /mcp");
    }
    let ended = (req.method() == hyper::Method::DELETE)
        .then(|| req.headers().get(SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_string))
        .flatten();
    let mut response = service.handle(req).await;
    if let Some(id) = ended
        && response.status().is_success()
    {
        // rmcp stops the session's handlers only after draining their responses (5 s):
        // the calls of a session the client ended stop now.
        shared.end_session(&id);
        // The spec names no success status; rmcp answers 202, the SDKs expect 200 (or 204).
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// Whether `origin` (an `Origin` header) is the server's own: `http://` and, at the port
/// the server listens on, a loopback name (`localhost`, `127.0.0.1`, `[::1]`) or the address
/// it is bound to; off loopback also the `Host` the request names (a page from the same
/// server). Anything else, `null` included, is a page of another site.
pub(crate) fn origin_allowed(origin: &[u8], local: SocketAddr, host: Option<&str>) -> bool {
    let Some(authority) = std::str::from_utf8(origin).ok().and_then(|o| o.strip_prefix("http://")) else { return false };
    let authority = authority.to_ascii_lowercase();
    let port = local.port();
    let own = |name: &str| authority == format!("{name}:{port}");
    let bound = match local.ip() {
        std::net::IpAddr::V4(ip) => ip.to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
    };
    if own("localhost") || own("127.0.0.1") || own("[::1]") || own(&bound) {
        return true;
    }
    !local.ip().is_loopback() && host.is_some_and(|h| h.to_ascii_lowercase() == authority)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(hyper::header::WWW_AUTHENTICATE, hyper::header::HeaderValue::from_static("Bearer"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_must_match_exactly() {
        let t = Token("s3cret".into());
        assert!(t.admits(Some(b"Bearer s3cret")));
        for bad in [&b"Bearer s3cre"[..], b"Bearer s3cretx", b"bearer s3cret", b"s3cret", b""] {
            assert!(!t.admits(Some(bad)), "{}", String::from_utf8_lossy(bad));
        }
        assert!(!t.admits(None));
        assert_eq!(format!("{t:?}"), "Token(<redacted>)");
    }

    #[test]
    fn only_the_server_s_own_origin_is_allowed() {
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        for ok in ["http://127.0.0.1:8080", "http://localhost:8080", "http://LOCALHOST:8080", "http://[::1]:8080"] {
            assert!(origin_allowed(ok.as_bytes(), local, Some("127.0.0.1:8080")), "{ok}");
        }
        let bad = ["http://evil.example.com", "null", "", "http://127.0.0.1:8081", "https://127.0.0.1:8080", "http://127.0.0.1:8080.evil.example", "http://127.0.0.1", "http://127.0.0.1:8080/"];
        for no in bad {
            assert!(!origin_allowed(no.as_bytes(), local, Some("127.0.0.1:8080")), "{no}");
        }
        // On loopback the Host proves nothing (DNS rebinding); off loopback it names the server.
        assert!(!origin_allowed(b"http://evil.example.com:8080", local, Some("evil.example.com:8080")));
        let off: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(origin_allowed(b"http://host.lan:8080", off, Some("host.lan:8080")));
        assert!(!origin_allowed(b"http://evil.example.com", off, Some("host.lan:8080")));
    }
}
