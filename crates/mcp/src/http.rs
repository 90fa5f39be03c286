//! Streamable HTTP: rmcp's service behind a small hyper server that checks the bearer token.
//!
//! Binds loopback by default. An address off loopback is refused unless a token is configured;
//! with a token, every request must carry `Authorization: Bearer TOKEN` (compared in constant
//! time) or it gets 401 before reaching MCP. On loopback, rmcp's Host check (DNS rebinding
//! protection) stays on.

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
                async move { Ok::<_, Infallible>(route(&service, &shared, token.as_deref(), req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), handler).await;
        });
    }
}

async fn route(
    service: &StreamableHttpService<Warden, LocalSessionManager>,
    shared: &Shared,
    token: Option<&Token>,
    req: Request<Incoming>,
) -> Response<Body> {
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
    let response = service.handle(req).await;
    if let Some(id) = ended
        && response.status().is_success()
    {
        // rmcp stops the session's handlers only after draining their responses (5 s):
        // the calls of a session the client ended stop now.
        shared.end_session(&id);
    }
    response
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
}
