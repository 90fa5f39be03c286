//! warden's MCP server: the agent loop's interface to the engine.
//!
//! What it does: serves the tools `read_file`, `list_dir`, `search`, `write_file`, `edit_file`,
//! `exec` and `explain` over stdio or streamable HTTP. Every call is decided by the policy
//! (allow, ask, deny); `ask` goes to the client as an elicitation when it declared that
//! capability, and is refused otherwise. Each result carries `structuredContent` matching the
//! tool's output schema, with the deciding rule, and a short text summary.
//!
//! What it does not: it does not decide by itself (every verdict comes from the engine's
//! `Session`, which also writes the audit log), and it keeps no state between calls but the
//! policy and that session.
//!
//! Invariants it keeps:
//! - File tools reach the workspace only: paths are resolved lexically first, then opened
//!   through a `cap-std` directory, so `..` and symlinks cannot leave it.
//! - A tool the policy denies outright is not listed, and calling it anyway is refused.
//! - Every malformed message gets a JSON-RPC error and the server goes on serving; request
//!   lines, bodies and arguments are capped.
//! - HTTP binds loopback unless a bearer token is configured; at most [`MAX_SESSIONS`] HTTP
//!   sessions live at once, and an idle one (no request for [`SESSION_IDLE`], no call
//!   running) ends. The audit records of an HTTP call name its client.
//! - A changed policy replaces the old one only when it compiles (live reload, see `reload`).
#![forbid(unsafe_code)]

mod beneath;
mod call;
mod files;
mod gate;
mod http;
mod paths;
mod prompt;
mod reload;
mod search;
mod server;
mod sessions;
mod stdio;
mod tools;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use warden_engine::{Engine, Environment, RefuseAll, Session, SessionConfig};
use warden_policy::LayerSource;

pub use http::{HttpOptions, Token, serve_http};
pub use server::Warden;
pub use sessions::{IDLE as SESSION_IDLE, MAX_SESSIONS};
pub use stdio::{LINE_CAP, LineTransport};

/// What the server is built from.
#[derive(Debug)]
pub struct Options {
    /// The compiled policy, in the context of the workspace.
    pub engine: Engine,
    /// The layers it was compiled from (hashed into the audit records).
    pub layers: Vec<LayerSource>,
    /// The process environment, read once.
    pub env: Environment,
    /// The agent identity calls are decided for.
    pub agent: Option<String>,
    /// The agents above it, nearest first (`AGENT[@SESSION]`): calls get no more than theirs.
    pub parents: Vec<String>,
    /// Where the audit log goes.
    pub audit_log: Option<PathBuf>,
    /// The policy files the engine was compiled from (empty: discovered), for live reloads.
    pub policies: Vec<PathBuf>,
    /// Whether to watch the policy files and reload a changed policy that compiles.
    pub reload: bool,
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The workspace cannot be opened.
    #[error("cannot open the workspace `{path}`: {source}")]
    Workspace {
        /// The workspace.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Off loopback without a token.
    #[error("refusing to serve on `{addr}` without a token: an address off loopback needs --token-file")]
    TokenRequired {
        /// The address.
        addr: String,
    },
    /// The token file cannot be read.
    #[error("cannot read the token file `{path}`: {source}")]
    Token {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The token file holds no usable token.
    #[error("the token file `{path}` holds no token (or one over 4096 bytes)")]
    TokenEmpty {
        /// The file.
        path: String,
    },
    /// Others may read the token file.
    #[error("the token file `{path}` may be read by others (mode {mode:o}): chmod 600 it")]
    TokenShared {
        /// The file.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// The address cannot be bound.
    #[error("cannot listen on `{addr}`: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The MCP session failed.
    #[error("the MCP session failed: {0}")]
    Session(String),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

impl Warden {
    /// A server over `opts`.
    ///
    /// # Errors
    /// When the workspace cannot be opened.
    pub fn new(opts: Options) -> Result<Warden, Error> {
        let workspace = PathBuf::from(&opts.engine.context().workspace);
        let root = cap_std::fs::Dir::open_ambient_dir(&workspace, cap_std::ambient_authority())
            .map_err(|source| Error::Workspace { path: workspace.display().to_string(), source })?;
        let config = SessionConfig {
            agent: opts.agent.clone(),
            parents: opts.parents.clone(),
            audit: opts.audit_log.clone(),
            ..SessionConfig::default()
        };
        // `ask` is settled by elicitation in `gate`; the session's own approver is never reached.
        let approver = Box::new(RefuseAll { why: "the MCP client is asked instead".into() });
        let session = Session::new(opts.engine.clone(), &opts.layers, opts.env.clone(), config, approver)
            .map_err(|e| Error::Session(e.to_string()))?;
        let shared = gate::Shared {
            engine: RwLock::new(Arc::new(opts.engine)),
            session: Arc::new(std::sync::Mutex::new(session)),
            env: opts.env,
            agent: opts.agent,
            parents: opts.parents,
            workspace,
            root,
            audit_log: opts.audit_log,
            policies: opts.policies,
            peers: std::sync::Mutex::new(Vec::new()),
            sessions: Arc::new(sessions::Sessions::default()),
            anyone_can_answer: std::sync::atomic::AtomicBool::new(false),
            hidden: std::sync::Mutex::new(Vec::new()),
        };
        let shared = Arc::new(shared);
        Ok(Warden { shared, reload: opts.reload, hangup: tokio_util::sync::CancellationToken::new() })
    }

    /// The audit log the server was given (the engine's session writes it).
    pub fn audit_log(&self) -> Option<&std::path::Path> {
        self.shared.audit_log.as_deref()
    }

    /// Starts watching the policy (once; on the current runtime), when asked to.
    pub(crate) fn start_reloading(&self) {
        if self.reload {
            tokio::spawn(reload::watch(Arc::clone(&self.shared)));
        }
    }

    /// Serves one client over `read`/`write` (stdio) until it hangs up.
    ///
    /// # Errors
    /// When the session cannot start (the client never initialised).
    pub async fn serve_lines<R, W>(self, read: R, write: W) -> Result<(), Error>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        self.start_reloading();
        // This connection's calls end with it: at the end of input, not after rmcp's drain.
        let hangup = tokio_util::sync::CancellationToken::new();
        let server = Warden { hangup: hangup.clone(), ..self };
        let transport = LineTransport::new(read, write, LINE_CAP).on_end(hangup);
        let running = rmcp::serve_server(server, transport).await.map_err(|e| Error::Session(e.to_string()))?;
        running.waiting().await.map_err(|e| Error::Session(e.to_string()))?;
        Ok(())
    }
}

/// Runs `work` on a fresh multi-threaded runtime, blocking until it ends.
///
/// # Errors
/// When the runtime cannot start, or `work`'s error.
pub fn block_on<F: std::future::Future<Output = Result<(), Error>>>(work: F) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(Error::Runtime)?;
    runtime.block_on(work)
}

/// Serves stdio until the client hangs up (blocking).
///
/// # Errors
/// See [`Warden::serve_lines`].
pub fn serve_stdio(server: Warden) -> Result<(), Error> {
    block_on(server.serve_lines(tokio::io::stdin(), tokio::io::stdout()))
}
