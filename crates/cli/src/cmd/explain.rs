//! `warden explain`: the verdict, the tier, every deciding rule, which part decided, and the
//! layers that were loaded. Runs nothing.

use crate::load::{PolicyArgs, engine};
use crate::output::CliError;
use std::process::ExitCode;
use warden_engine::{Explanation, Query};
use warden_policy::{Part, RuleRef, Subject};

/// Arguments of `warden explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    policy: PolicyArgs,
    /// The agent identity to decide for.
    #[arg(long)]
    agent: Option<String>,
    /// Print the explanation as JSON (pinned field names).
    #[arg(long)]
    json: bool,
    /// A command string, as the agent would run it with `sh -c`.
    #[arg(short = 'c', value_name = "STRING", conflicts_with_all = ["tool", "argv"])]
    command: Option<String>,
    /// A tool call instead of a command (`read_file`, `write_file`, an MCP tool, ...).
    #[arg(long, value_name = "NAME", conflicts_with = "argv")]
    tool: Option<String>,
    /// The tool call's path argument.
    #[arg(long, value_name = "PATH", requires = "tool")]
    path: Option<String>,
    /// The command as argv (after `--`).
    #[arg(last = true, value_name = "ARGV")]
    argv: Vec<String>,
}

/// Explains one request.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    let quoted;
    let query = if let Some(command) = &args.command {
        Query::Command(command)
    } else if let Some(name) = &args.tool {
        Query::Tool { name, path: args.path.as_deref() }
    } else if !args.argv.is_empty() {
        quoted = warden_engine::quote_argv(&args.argv);
        Query::Command(&quoted)
    } else {
        return Err(CliError::Usage {
            message: String::from("nothing to explain: give `-c STRING`, `--tool NAME` or `-- ARGV...`"),
        });
    };
    let engine = engine(&args.policy)?;
    let explanation = engine.explain(args.agent.as_deref(), query);
    if args.json {
        let json = serde_json::to_string_pretty(&explanation).map_err(|e| CliError::Usage {
            message: format!("cannot print the explanation as JSON: {e}"),
        })?;
        println!("{json}");
    } else {
        print!("{}", render(&explanation));
    }
    // The process ends next: the kernel frees the compiled policy faster than its destructors.
    std::mem::forget(engine);
    Ok(ExitCode::SUCCESS)
}

/// The human form of an explanation.
fn render(x: &Explanation) -> String {
    let d = &x.decision;
    let mut out = String::new();
    let tier = d.tier().map(|t| format!(" (tier {t})")).unwrap_or_default();
    out.push_str(&format!("verdict: {}{tier}\n", d.verdict.as_str()));
    out.push_str(&format!("reason:  {}\n", d.reason()));
    if let Some(agent) = &x.agent {
        out.push_str(&format!("agent:   {agent}\n"));
    }
    if !d.rules().is_empty() {
        out.push_str("decided by:\n");
        for rule in d.rules().iter() {
            out.push_str(&format!("  {}\n", rule_line(rule)));
        }
    }
    if d.parts().len() > 1 || d.rules().is_empty() {
        out.push_str("parts:\n");
        for part in d.parts() {
            out.push_str(&format!("  {}\n", part_line(part)));
        }
    }
    out.push_str("layers:\n");
    for layer in &x.layers {
        let kind = serde_json::to_value(layer.kind).ok();
        let kind = kind.as_ref().and_then(|k| k.as_str()).unwrap_or("?");
        out.push_str(&format!("  {kind:<10} {}\n", layer.files.join(", ")));
    }
    out
}

fn rule_line(rule: &RuleRef) -> String {
    let layer = serde_json::to_value(rule.layer).ok();
    let layer = layer.as_ref().and_then(|k| k.as_str()).unwrap_or("?");
    format!("{}:{}:{} [{layer}]  {}", rule.file, rule.line, rule.column, rule.text)
}

fn part_line(part: &Part) -> String {
    let what = match &part.subject {
        Subject::Command { argv } => argv.join(" "),
        Subject::Pipe { from, into } => format!("{from} | ... | {into}"),
        Subject::Path { access, path } => format!("{access} {path}"),
        Subject::Tool { name } => format!("tool {name}"),
        Subject::Opaque { reason, text } => format!("opaque ({reason}): {text}"),
        Subject::Request { problem } => format!("request: {problem}"),
    };
    let by = part.rules().first().map(|r| format!("  <- {}:{}", r.file, r.line)).unwrap_or_default();
    let tier = part.tier().unwrap_or("-");
    format!("{:<5}  {what}  [{tier}]{by}", part.verdict.as_str())
}
