//! `warden serve --mcp`: the MCP server over stdio (default) or streamable HTTP.
//!
//! Exit code: 0 when the client hung up; 2 when the server could not start (a policy that does
//! not load, an address off loopback without a token, a port that cannot be bound).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::load::{PolicyArgs, SessionArgs, context, environment, layers};
use crate::output::{CliError, policy_error};
use warden_engine::Engine;

/// Arguments of `warden serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Serve the Model Context Protocol (the only protocol served so far).
    #[arg(long)]
    mcp: bool,
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    session: SessionArgs,
    /// Serve streamable HTTP at ADDR (`127.0.0.1:8080`, or a bare port on 127.0.0.1) at `/mcp`
    /// instead of stdio. An address off loopback needs --token-file.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Do not watch the policy files (and the project's .warden/) for changes. By default a
    /// changed policy that compiles replaces the old one; a broken edit keeps the old one.
    #[arg(long)]
    no_reload: bool,
    /// A file holding the bearer token HTTP clients must present.
    #[arg(long, value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
}

/// Becomes the server: `exec`s `warden-serve` (installed beside `warden`) with the arguments
/// that followed `serve`, which clap has already checked. Returns only when that fails.
pub fn become_server() -> Result<ExitCode, CliError> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().map_err(|e| CliError::Usage { message: format!("cannot find the running executable: {e}") })?;
    let program = exe.with_file_name("warden-serve");
    let args = std::env::args_os().skip(1).skip_while(|a| a != "serve").skip(1);
    let e = std::process::Command::new(&program).args(args).exec();
    Err(CliError::Usage {
        message: format!("cannot start `{}` (it is built and installed beside `warden`): {e}", program.display()),
    })
}

/// Serves until the client hangs up (stdio) or the process is stopped (HTTP).
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    if !args.mcp {
        return Err(CliError::Usage { message: "say what to serve: `warden serve --mcp`".into() });
    }
    let env = environment()?;
    let layers = layers(&args.policy, &env)?;
    let engine = Engine::new(&layers, context(&args.policy, &env)?).map_err(|d| policy_error(&d))?;
    let config = args.session.config(&env);
    let opts = warden_mcp::Options {
        engine,
        layers,
        env,
        agent: config.agent,
        parents: config.parents,
        audit_log: config.audit,
        policies: args.policy.policies.clone(),
        reload: !args.no_reload,
    };
    let server = warden_mcp::Warden::new(opts).map_err(usage)?;
    match &args.http {
        None => warden_mcp::serve_stdio(server).map_err(usage)?,
        Some(addr) => {
            let addr = parse_addr(addr)?;
            let token = args.token_file.as_deref().map(warden_mcp::Token::from_file).transpose().map_err(usage)?;
            warden_mcp::block_on(warden_mcp::serve_http(server, warden_mcp::HttpOptions { addr, token })).map_err(usage)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_addr(text: &str) -> Result<SocketAddr, CliError> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    text.parse().map_err(|e| CliError::Usage { message: format!("--http `{text}` is not an address like 127.0.0.1:8080: {e}") })
}

fn usage(e: warden_mcp::Error) -> CliError {
    CliError::Usage { message: e.to_string() }
}
