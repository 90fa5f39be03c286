//! Streamable HTTP: rmcp's service behind a small hyper server that checks the bearer token.
//!
//! Binds loopback by default. An address off loopback is refused unless a token is configured;
//! with a token, every request must carry `Authorization: Bearer TOKEN` (compared in constant
//! time) or it gets 401 before reaching MCP. On loopback, rmcp's Host check (DNS rebinding
//! protection) stays on. A request with an `Origin` header (a browser's) is served only when
//! it is the server's own origin ([`origin_allowed`]); otherwise it gets 403, as the streamable
//! HTTP transport says a server MUST. Requests without one (clients that are not browsers)
//! are served.
//!
//! Each request reaching MCP carries the client it came from ([`ClientRec`]: the peer address,
//! on loopback the uid owning the client's socket, whether a token authenticated it), which
//! the audit records of its calls name. At most [`MAX_SESSIONS`] sessions live at once; an idle
//! one ends ([`crate::sessions`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use warden_engine::ClientRec;

use crate::Error;
use crate::gate::Shared;
use crate::server::Warden;
use crate::sessions::{MAX_SESSIONS, REAP_EVERY, Sessions};

/// The bearer token clients must present, and the file it was read from. Its `Debug` never
/// shows it.
#[derive(Clone)]
pub struct Token(String, std::path::PathBuf);

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
    /// When the file cannot be read, holds no token, or others may read it (group or other
    /// permission bits): a token anyone on the machine can read guards nothing.
    pub fn from_file(path: &Path) -> Result<Token, Error> {
        use std::os::unix::fs::MetadataExt as _;
        let text = std::fs::read_to_string(path).map_err(|source| Error::Token { path: path.display().to_string(), source })?;
        let mode = std::fs::metadata(path).map_err(|source| Error::Token { path: path.display().to_string(), source })?.mode();
        if mode & 0o077 != 0 {
            return Err(Error::TokenShared { path: path.display().to_string(), mode: mode & 0o777 });
        }
        let token = text.trim();
        if token.is_empty() || token.len() > 4096 {
            return Err(Error::TokenEmpty { path: path.display().to_string() });
        }
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Ok(Token(token.to_string(), real))
    }

    /// Whether `header` (an `Authorization` value) carries this token. The scheme is matched
    /// without regard to case (RFC 9110).
    fn admits(&self, header: Option<&[u8]>) -> bool {
        let Some(given) = header.filter(|h| h.get(..7).is_some_and(|s| s.eq_ignore_ascii_case(b"bearer "))).and_then(|h| h.get(7..)) else {
            return false;
        };
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
    match &opts.token {
        // Commands never see the token (a confined one with a network grant could call in).
        Some(token) => shared.hidden.lock().map(|mut h| h.push(token.1.clone())).unwrap_or_default(),
        None => shared.anyone_can_answer.store(true, std::sync::atomic::Ordering::Relaxed),
    }
    // warden ends idle sessions itself (`sessions.rs`): rmcp's idle clock does not see a call
    // in flight, and would end the session of a command that runs longer.
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = None;
    let manager = Arc::new(manager);
    tokio::spawn(reap_every(Arc::clone(&manager), Arc::clone(&shared)));
    let service = StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&manager), config);
    let listener = TcpListener::bind(opts.addr).await.map_err(|source| Error::Bind { addr: opts.addr.to_string(), source })?;
    let local = listener.local_addr().map_err(|source| Error::Bind { addr: opts.addr.to_string(), source })?;
    eprintln!("warden: serving MCP at http://{local}/mcp");
    let token = opts.token.map(Arc::new);
    let me = std::fs::metadata("/proc/self").ok().map(|m| std::os::unix::fs::MetadataExt::uid(&m));
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            // Out of descriptors (or another passing error): wait rather than spin.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        // A client past the cap is dropped: the connections held open are bounded.
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else { continue };
        // The uid owning a client's socket on this machine, as the kernel lists it.
        let owner = if peer.ip().to_canonical().is_loopback() { stream.local_addr().ok().and_then(|l| socket_owner(peer, l)) } else { None };
        // Without a token only this user's processes are served; with one, the token decides.
        let admitted = token.is_some() || (me.is_some() && owner == me);
        let client = ClientRec { transport: "http".into(), addr: peer.to_string(), uid: owner, bearer: token.is_some() };
        let service = service.clone();
        let token = token.clone();
        let shared = Arc::clone(&shared);
        let manager = Arc::clone(&manager);
        tokio::spawn(async move {
            let _permit = permit;
            let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
                let service = service.clone();
                let token = token.clone();
                let shared = Arc::clone(&shared);
                let manager = Arc::clone(&manager);
                let client = client.clone();
                async move {
                    if !admitted {
                        return Ok::<_, Infallible>(plain(StatusCode::FORBIDDEN, "without a token, only the user running warden is served"));
                    }
                    let server = Server { service: &service, manager: &manager, shared: &shared, token: token.as_deref(), local };
                    Ok::<_, Infallible>(route(&server, client, req).await)
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), handler)
                .await;
        });
    }
}

/// Connections served at once, at most.
const MAX_CONNECTIONS: usize = 64;

/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// The uid owning the client's end of a loopback TCP connection from `peer` to `local`, as
/// `/proc/net/tcp` (or `tcp6`) lists it; `None` when it is not listed.
fn socket_owner(peer: SocketAddr, local: SocketAddr) -> Option<u32> {
    let (table, ours, theirs) = match (peer, local) {
        (SocketAddr::V4(p), SocketAddr::V4(l)) => ("/proc/net/tcp", hex_v4(*p.ip(), p.port()), hex_v4(*l.ip(), l.port())),
        (SocketAddr::V6(p), SocketAddr::V6(l)) => ("/proc/net/tcp6", hex_v6(p.ip(), p.port()), hex_v6(l.ip(), l.port())),
        _ => return None,
    };
    let text = std::fs::read_to_string(table).ok()?;
    text.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (f.get(1) == Some(&ours.as_str()) && f.get(2) == Some(&theirs.as_str())).then(|| f.get(7)?.parse().ok()).flatten()
    })
}

/// An IPv4 socket address as `/proc/net/tcp` prints it: the address's bytes read as a
/// native-endian word, then the port, in upper-case hex.
fn hex_v4(ip: std::net::Ipv4Addr, port: u16) -> String {
    format!("{:08X}:{port:04X}", u32::from_ne_bytes(ip.octets()))
}

/// [`hex_v4`] for `/proc/net/tcp6`: four native-endian words.
fn hex_v6(ip: &std::net::Ipv6Addr, port: u16) -> String {
    let o = ip.octets();
    let words: String = o.chunks_exact(4).map(|w| format!("{:08X}", u32::from_ne_bytes(w.try_into().unwrap_or_default()))).collect();
    format!("{words}:{port:04X}")
}

/// Ends idle sessions, every [`REAP_EVERY`], and forgets the clients of ended ones, until the
/// process ends.
async fn reap_every(manager: Arc<LocalSessionManager>, shared: Arc<Shared>) {
    loop {
        tokio::time::sleep(REAP_EVERY).await;
        reap(&manager, &shared.sessions).await;
        let mut peers = shared.peers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        peers.retain(|p| !p.is_transport_closed());
    }
}

/// Follows rmcp's sessions and closes the idle ones.
async fn reap(manager: &LocalSessionManager, sessions: &Sessions) {
    let held: Vec<String> = manager.sessions.read().await.keys().map(|id| id.to_string()).collect();
    sessions.sync(held.iter().map(String::as_str));
    for id in sessions.reap(std::time::Instant::now()) {
        let _ = manager.close_session(&id.into()).await;
    }
}

/// What serves a request.
struct Server<'a> {
    service: &'a StreamableHttpService<Warden, LocalSessionManager>,
    manager: &'a LocalSessionManager,
    shared: &'a Shared,
    token: Option<&'a Token>,
    local: SocketAddr,
}

async fn route(server: &Server<'_>, client: ClientRec, mut req: Request<Incoming>) -> Response<Body> {
    let Server { service, manager, shared, token, local } = *server;
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
    let session = req.headers().get(SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_string);
    match &session {
        Some(id) => shared.sessions.touch(id),
        // A POST without a session may open one (an `initialize`): not past the cap.
        None if req.method() == hyper::Method::POST && !room_for_a_session(manager, shared).await => return too_many_sessions(),
        None => {}
    }
    // The audit records of this request's calls name its client (`server::call_tool`).
    req.extensions_mut().insert(client);
    let ended = (req.method() == hyper::Method::DELETE).then(|| session.clone()).flatten();
    let mut response = service.handle(req).await;
    if session.is_none()
        && let Some(opened) = response.headers().get(SESSION_ID).and_then(|v| v.to_str().ok())
    {
        shared.sessions.opened(opened);
    }
    if let Some(id) = ended
        && response.status().is_success()
    {
        // rmcp stops the session's handlers only after draining their responses (5 s):
        // the calls of a session the client ended stop now.
        shared.sessions.end(&id);
        // The spec names no success status; rmcp answers 202, the SDKs expect 200 (or 204).
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// Whether another session may open: fewer than [`MAX_SESSIONS`] live, after ending the idle
/// ones when there are not.
async fn room_for_a_session(manager: &LocalSessionManager, shared: &Shared) -> bool {
    if manager.sessions.read().await.len() < MAX_SESSIONS {
        return true;
    }
    reap(manager, &shared.sessions).await;
    manager.sessions.read().await.len() < MAX_SESSIONS
}

/// The answer past the session cap: HTTP 503 with a JSON-RPC error (id `null`: the request
/// was not read), and when to try again.
fn too_many_sessions() -> Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": format!(
                "too many MCP sessions: {MAX_SESSIONS} are live, the most this server keeps; end one (DELETE) or retry once an idle one has ended"
            ),
        },
    });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    headers.insert(hyper::header::RETRY_AFTER, hyper::header::HeaderValue::from(REAP_EVERY.as_secs()));
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
        let t = Token("s3cret".into(), std::path::PathBuf::new());
        assert!(t.admits(Some(b"Bearer s3cret")));
        assert!(t.admits(Some(b"bearer s3cret")), "the scheme is case-insensitive");
        for bad in [&b"Bearer s3cre"[..], b"Bearer s3cretx", b"Bearer  s3cret", b"s3cret", b""] {
            assert!(!t.admits(Some(bad)), "{}", String::from_utf8_lossy(bad));
        }
        assert!(!t.admits(None));
        assert_eq!(format!("{t:?}"), "Token(<redacted>)");
    }

    #[test]
    fn a_loopback_client_s_owner_is_found_as_the_kernel_lists_it() {
        let me = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m)).ok();
        for host in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(listener) = std::net::TcpListener::bind(host) else { continue };
            let local = listener.local_addr().unwrap();
            let client = std::net::TcpStream::connect(local).unwrap();
            let (_server_end, peer) = listener.accept().unwrap();
            assert_eq!(peer, client.local_addr().unwrap());
            assert_eq!(socket_owner(peer, local), me, "{host}");
            let elsewhere: SocketAddr = if local.is_ipv4() { "127.0.0.1:1".parse().unwrap() } else { "[::1]:1".parse().unwrap() };
            assert_eq!(socket_owner(elsewhere, local), None);
        }
    }

    /// Regression: rmcp kept every session a client opened until it had been idle 5 minutes
    /// (and its idle clock ignored a running call); warden's reaper closes idle ones in rmcp.
    #[tokio::test]
    async fn the_reaper_closes_idle_sessions_in_rmcp() {
        use rmcp::transport::streamable_http_server::SessionManager;
        let manager = LocalSessionManager::default();
        let (kept, _t1) = manager.create_session().await.unwrap();
        let (idle, _t2) = manager.create_session().await.unwrap();
        let sessions = Arc::new(Sessions::new(std::time::Duration::ZERO));
        let (hangup, _calling) = sessions.call(&kept);
        reap(&manager, &sessions).await;
        let left: Vec<String> = manager.sessions.read().await.keys().map(|k| k.to_string()).collect();
        assert_eq!(left, [kept.to_string()], "the idle session {idle} was not closed");
        assert!(!hangup.is_cancelled(), "a session with a running call is not idle");
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
