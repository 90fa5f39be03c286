//! `warden run`: decide, then run confined, and report the structured result.
//!
//! Exit code: the command's own when it ran (128 + signal when a signal ended it, 124 on
//! timeout); 126 when it did not run because of the verdict (deny, or ask without a terminal
//! or refused at the prompt); 2 when warden could not do its job (a policy that does not load,
//! a sandbox that cannot be built). With `--json` the result object is the authority.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use crate::load::{PolicyArgs, context, environment, layers};
use crate::output::{CliError, policy_error};
use warden_engine::{BackendChoice, Engine, Explanation, Job, Outcome, Query, RunOptions};
use warden_policy::ast::Verdict;

/// Arguments of `warden run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    policy: PolicyArgs,
    /// The agent identity to decide for.
    #[arg(long)]
    agent: Option<String>,
    /// Wall timeout in seconds (only shortens the policy's).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Print the result as one JSON object (pinned field names).
    #[arg(long)]
    json: bool,
    /// The sandbox: `native` (Linux namespaces, Landlock, seccomp) or `wasi` (a tool of the
    /// WASI toolbox image). Default: what the policy selects (native unless it says wasi).
    #[arg(long, value_enum, value_name = "BACKEND")]
    backend: Option<BackendArg>,
    /// A command string: judged part by part, then run with `/bin/sh -c` in the sandbox.
    #[arg(short = 'c', value_name = "STRING", conflicts_with = "argv")]
    command: Option<String>,
    /// The command as argv (after `--`).
    #[arg(last = true, value_name = "ARGV")]
    argv: Vec<String>,
}

/// `--backend` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum BackendArg {
    Native,
    Wasi,
}

/// Decides and runs one command.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    let quoted;
    let (query, job) = if let Some(command) = &args.command {
        (Query::Command(command), Job::Shell(command))
    } else if !args.argv.is_empty() {
        quoted = warden_engine::quote_argv(&args.argv);
        (Query::Command(&quoted), Job::Argv(&args.argv))
    } else {
        return Err(CliError::Usage { message: "nothing to run: give `-c STRING` or `-- ARGV...`".into() });
    };
    let timeout = match args.timeout {
        Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t.min(1e9))),
        Some(t) => return Err(CliError::Usage { message: format!("--timeout must be a positive number of seconds, not {t}") }),
        None => None,
    };
    let env = environment()?;
    let layers = layers(&args.policy, &env)?;
    let engine = Engine::new(&layers, context(&args.policy, &env)?).map_err(|d| policy_error(&d))?;
    let explanation = engine.explain(args.agent.as_deref(), query);
    let outcome = match approve(&explanation) {
        Err(why) => Outcome::refused(&explanation, why),
        Ok(()) => engine.run(&explanation, job, &env, &RunOptions {
                timeout,
                stdin: Vec::new(),
                backend: args.backend.map(|b| match b {
                    BackendArg::Native => BackendChoice::Native,
                    BackendArg::Wasi => BackendChoice::Wasi,
                }),
            })?,
    };
    report(&outcome, args.json)?;
    Ok(exit_code(&outcome))
}

/// Settles the verdict: allow passes, deny refuses, ask asks a person at the terminal.
fn approve(x: &Explanation) -> Result<(), String> {
    let d = &x.decision;
    match d.verdict {
        Verdict::Allow => Ok(()),
        Verdict::Deny => Err(format!("denied: {}", d.reason)),
        Verdict::Ask => {
            if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
                return Err(format!("needs approval ({}), and there is no terminal to ask at", d.reason));
            }
            let mut err = std::io::stderr();
            let rule = d.rules.first().map(|r| format!(" [{}:{}]", r.file, r.line)).unwrap_or_default();
            let _ = write!(err, "warden: ask: {}{rule}\nRun it? [y/N] ", d.reason);
            let _ = err.flush();
            let mut line = String::new();
            let _ = std::io::stdin().lock().read_line(&mut line);
            if matches!(line.trim(), "y" | "Y" | "yes") { Ok(()) } else { Err("refused at the prompt".into()) }
        }
    }
}

fn report(o: &Outcome, json: bool) -> Result<(), CliError> {
    if json {
        let text = serde_json::to_string(o).map_err(|e| CliError::Usage { message: format!("cannot print the result as JSON: {e}") })?;
        println!("{text}");
        return Ok(());
    }
    print!("{}", o.run.stdout.text);
    eprint!("{}", o.run.stderr.text);
    let _ = std::io::stdout().flush();
    let d = &o.decision;
    let rule = d.rules.first().map(|r| format!(" by {}:{}:{}", r.file, r.line, r.column)).unwrap_or_default();
    let tier = d.tier.as_deref().map(|t| format!(" (tier {t})")).unwrap_or_default();
    if let Some(why) = &o.refused {
        eprintln!("warden: not run: {why}{rule}");
        return Ok(());
    }
    let end = if o.run.timed_out {
        "timed out".to_string()
    } else if let Some(sig) = &o.run.signal {
        format!("killed by {sig}")
    } else {
        format!("exit {}", o.run.exit_code.unwrap_or(-1))
    };
    eprintln!("warden: {}{tier}{rule}; {end} in {:.0} ms", d.verdict.as_str(), o.run.duration_ms);
    for den in &o.run.denials {
        eprintln!("warden: refused {} {} ({:?})", den.op, den.target, den.source);
    }
    Ok(())
}

fn exit_code(o: &Outcome) -> ExitCode {
    if !o.ran {
        return ExitCode::from(126);
    }
    if o.run.timed_out {
        return ExitCode::from(124);
    }
    match (&o.run.exit_code, &o.run.signal) {
        (Some(c), _) => ExitCode::from(u8::try_from(*c & 0xff).unwrap_or(1)),
        (None, Some(sig)) => ExitCode::from(128u8.saturating_add(signal_number(sig))),
        _ => ExitCode::from(1),
    }
}

fn signal_number(name: &str) -> u8 {
    const NAMES: &[&str] = &[
        "", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV",
        "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM",
    ];
    NAMES.iter().position(|n| *n == name).and_then(|i| u8::try_from(i).ok()).unwrap_or(0)
}
