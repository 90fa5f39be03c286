//! `warden`: a thin front-end over `warden-engine` and `warden-policy`.
//!
//! Exit codes: 0 success; 1 the check, test or format check found problems; 2 the command
//! could not do its job (bad usage, a policy that does not load). `warden run` passes the
//! command's own exit code through (see `cmd/run.rs`).
#![forbid(unsafe_code)]

mod approve;
mod cmd;
mod load;
mod output;
mod testfile;

use clap::{Parser, Subcommand};
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
    Check(cmd::check::Args),
    /// Print policy files in canonical form, keeping comments.
    Fmt(cmd::fmt::Args),
    /// Say what the policy decides for a command or tool call, and why. Runs nothing.
    Explain(cmd::explain::Args),
    /// Verify, query, count or export an audit log.
    Audit(cmd::audit::Args),
    /// Decide a command, then run it confined in the sandbox; report the structured result.
    Run(cmd::run::Args),
    /// Re-decide every request of an audit log under another policy; report what changes.
    Replay(cmd::replay::ReplayArgs),
    /// Propose allow rules for asks an audit log shows were always approved.
    Suggest(cmd::replay::SuggestArgs),
    /// Run policy test files (request -> expected verdict and rule); report rule coverage.
    Test(cmd::test::Args),
    /// Serve the tools to an agent over MCP (stdio, or streamable HTTP with --http).
    Serve(cmd::serve::Args),
    /// Answer an agent's pre-tool hook (Claude Code, Gemini CLI) from the policy; fail closed.
    Hook(cmd::hook::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => cmd::check::run(&args),
        Command::Fmt(args) => cmd::fmt::run(&args),
        Command::Explain(args) => cmd::explain::run(&args),
        Command::Audit(args) => cmd::audit::run(&args),
        Command::Test(args) => cmd::test::run(&args),
        Command::Run(args) => cmd::run::run(&args),
        Command::Serve(args) => cmd::serve::run(&args),
        Command::Hook(args) => cmd::hook::run(&args),
        Command::Replay(args) => cmd::replay::replay(&args),
        Command::Suggest(args) => cmd::replay::suggest(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{:?}", miette::Report::new(err));
            ExitCode::from(2)
        }
    }
}
