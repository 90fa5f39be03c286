//! `warden-bench`: warden's benchmarks, each a side-by-side table against a peer measured in
//! the same run.
//!
//! One module per subcommand (`policy`, later `spawn`, `wasi`, `audit`, `mcp`); `stats` holds
//! what they share: sampling with warm-up, percentiles, the table and the JSON lines.
#![forbid(unsafe_code)]

mod audit;
mod mcp;
mod policy;
mod spawn;
mod stats;
mod usage;
mod wasi;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// warden's benchmarks: side-by-side tables against peers measured in the same run.
#[derive(Debug, Parser)]
#[command(name = "warden-bench", version)]
struct Cli {
    #[command(subcommand)]
    bench: Bench,
}

#[derive(Debug, Subcommand)]
enum Bench {
    /// Policy decision, shell analysis and compile latency, beside cedar-policy.
    Policy(Options),
    /// The WASI backend: cold compile, cached load, warm `toolbox ls` beside a bare `ls`.
    Wasi(Options),
    /// The native sandbox's cost: whole `warden run` beside bwrap, and in-process setup.
    Spawn(Options),
    /// `exec` of /bin/true through `warden serve --mcp`, beside `warden run` per call.
    Mcp(Options),
    /// Audit log records per second with fsync on: one writer, two contending, verify.
    Audit(Options),
    /// One `decide` request in a plain loop, for profilers (instruction counts).
    DecideLoop(policy::decide_loop::LoopArgs),
}

/// Flags every subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct Options {
    /// Print one JSON object per line instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Short time budgets: checks the harness end to end, numbers are rough.
    #[arg(long)]
    pub quick: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Bench::DecideLoop(args) = &cli.bench {
        return match policy::decide_loop::run(args) {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("warden-bench: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let (opts, report) = match &cli.bench {
        Bench::Policy(opts) => (opts, policy::run(opts).map_err(|e| e.to_string())),
        Bench::Wasi(opts) => (opts, wasi::run(opts).map_err(|e| e.to_string())),
        Bench::Spawn(opts) => (opts, spawn::run(opts).map_err(|e| e.to_string())),
        Bench::Mcp(opts) => (opts, mcp::run(opts).map_err(|e| e.to_string())),
        Bench::Audit(opts) => (opts, audit::run(opts)),
        Bench::DecideLoop(_) => return ExitCode::SUCCESS,
    };
    match report {
        Ok(report) => {
            if opts.json {
                print!("{}", stats::json_lines(&report));
            } else {
                print!("{}", stats::table(&report));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("warden-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
