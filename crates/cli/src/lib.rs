//! `warden`: a thin front-end over `warden-engine` and `warden-policy`, as a library for its
//! two binaries: `warden` ([`main`]) and `warden-serve` ([`serve_main`]), the MCP server,
//! which `warden serve` becomes (an `exec`), so that `warden` itself does not link the MCP
//! stack that every one-shot `warden run` would otherwise load and relocate.
//!
//! Exit codes: 0 success; 1 the check, test or format check found problems; 2 the command
//! could not do its job (bad usage, a policy that does not load). `warden run` passes the
//! command's own exit code through (see `cmd/run.rs`).
#![forbid(unsafe_code)]

mod approve;
mod cmd;
mod lazy;
mod load;
mod output;
mod testfile;

use clap::{Parser, Subcommand};
use lazy::Lazy;
use std::process::ExitCode;

/// The sandboxed tool-execution engine for AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "warden", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check policy files: syntax, names, examples. Non-zero on any error.
    Check(Lazy<cmd::check::Args>),
    /// Print policy files in canonical form, keeping comments.
    Fmt(Lazy<cmd::fmt::Args>),
    /// Say what the policy decides for a command or tool call, and why. Runs nothing.
    Explain(Lazy<cmd::explain::Args>),
    /// Verify, query, count or export an audit log.
    Audit(Lazy<cmd::audit::Args>),
    /// Decide a command, then run it confined in the sandbox; report the structured result.
    Run(Lazy<cmd::run::Args>),
    /// Re-decide every request of an audit log under another policy; report what changes.
    Replay(Lazy<cmd::replay::ReplayArgs>),
    /// Propose allow rules for asks an audit log shows were always approved.
    Suggest(Lazy<cmd::replay::SuggestArgs>),
    /// Run policy test files (request -> expected verdict and rule); report rule coverage.
    Test(Lazy<cmd::test::Args>),
    /// Serve the tools to an agent over MCP (stdio, or streamable HTTP with --http).
    Serve(Lazy<cmd::serve::Args>),
    /// Answer an agent's pre-tool hook (Claude Code, Gemini CLI) from the policy; fail closed.
    Hook(Lazy<cmd::hook::Args>),
}

/// The `warden` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(Lazy(args)) => cmd::check::run(&args),
        Command::Fmt(Lazy(args)) => cmd::fmt::run(&args),
        Command::Explain(Lazy(args)) => cmd::explain::run(&args),
        Command::Audit(Lazy(args)) => cmd::audit::run(&args),
        Command::Test(Lazy(args)) => cmd::test::run(&args),
        Command::Run(Lazy(args)) => cmd::run::run(&args),
        Command::Serve(Lazy(_)) => cmd::serve::become_server(),
        Command::Hook(Lazy(args)) => cmd::hook::run(&args),
        Command::Replay(Lazy(args)) => cmd::replay::replay(&args),
        Command::Suggest(Lazy(args)) => cmd::replay::suggest(&args),
    };
    finish(result)
}

/// The `warden-serve` binary: `warden serve`'s arguments, served.
pub fn serve_main() -> ExitCode {
    /// The MCP server of `warden serve` (started by it; run `warden serve --help`).
    #[derive(Debug, Parser)]
    #[command(name = "warden serve", version)]
    struct Serve {
        #[command(flatten)]
        args: cmd::serve::Args,
    }
    finish(cmd::serve::run(&Serve::parse().args))
}

fn finish(result: Result<ExitCode, output::CliError>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{:?}", miette::Report::new(err));
            ExitCode::from(2)
        }
    }
}
