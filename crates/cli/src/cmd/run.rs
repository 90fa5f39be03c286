//! `warden run`: decide, then run confined, and report the structured result.
//!
//! Exit code: the command's own when it ran (128 + signal when a signal ended it, 124 on
//! timeout); 126 when it did not run because of the verdict (deny, or ask without a terminal
//! or refused at the prompt); 2 when warden could not do its job (a policy that does not load,
//! a sandbox that cannot be built). With `--json` the result object is the authority.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::load::{PolicyArgs, SessionArgs, context, environment, layers};
use crate::output::{CliError, policy_error};
use warden_engine::{
    Approver, AuditLog, BackendChoice, Engine, Environment, Job, Outcome, PreApprovals, Query, RefuseAll, RunOptions, Session,
    SessionError,
};

/// Arguments of `warden run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    session: SessionArgs,
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
    /// Settle `ask` from a pre-approval file instead of a terminal prompt (unattended runs).
    #[arg(long, value_name = "FILE")]
    approvals: Option<PathBuf>,
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
        if command.trim().is_empty() {
            return Err(CliError::Usage { message: "nothing to run: the command string is empty".into() });
        }
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
    let context = context(&args.policy, &env)?;
    crate::load::existing_folders(&context)?;
    // What the sandbox can make ahead is made while the policy loads: the command's process,
    // in its namespaces with the first part of its view (and a root caller's idmap of the
    // workspace). A run it does not fit (network granted) starts its own.
    if !matches!(args.backend, Some(BackendArg::Wasi)) {
        warden_engine::prestart_sandbox(std::path::Path::new(&context.workspace));
    }
    let config = args.session.config(&env);
    let layers = match layers(&args.policy, &env) {
        Ok(layers) => layers,
        Err(e) => {
            let log = AuditLog::open(config.audit.as_deref());
            record_unloaded(log, &config, &[], &context, query, job, &format!("the policy does not load: {e}"));
            return Err(e);
        }
    };
    // The audit log opens (a lock, its tail read and checked) while the policy compiles, on a
    // thread on another processor that first starts the shell analyser's (the policy's
    // examples are analysed on it).
    let path = config.audit.clone();
    let open = move || {
        warden_shell::warm(1);
        AuditLog::open(path.as_deref())
    };
    let opening = warden_engine::spawn_apart(std::thread::Builder::new().name("warden-audit-open".into()), open);
    let engine = Engine::load(&layers, context.clone(), &env.cache_home);
    let log = match opening {
        Ok(thread) => thread.join().unwrap_or_else(|_| Err(SessionError::Audit("opening the log panicked".into()))),
        Err(_) => AuditLog::open(config.audit.as_deref()),
    };
    let engine = match engine {
        Ok(engine) => engine,
        Err(d) => {
            // Refused (fail closed), and recorded like any refusal when the log opened.
            record_unloaded(log, &config, &layers, &context, query, job, &crate::output::unloaded(&d));
            return Err(policy_error(&d));
        }
    };
    let log = log.map_err(session_error)?;
    let approver = approver(args, &env)?;
    let mut session = Session::with_log(engine, &layers, env, config, approver, log).map_err(session_error)?;
    let opts = RunOptions {
        timeout,
        backend: args.backend.map(|b| match b {
            BackendArg::Native => BackendChoice::Native,
            BackendArg::Wasi => BackendChoice::Wasi,
        }),
        ..RunOptions::default()
    };
    let outcome = session.exec(query, job, &opts).map_err(session_error)?;
    report(&outcome, args.json)?;
    // The process ends next: the kernel frees the compiled policy and the session faster than
    // their destructors would (everything is on disk: the audit log is synced per record).
    std::mem::forget(session);
    Ok(exit_code(&outcome))
}

/// Records a command refused because the policy did not load (`why`: the first error's
/// file:line:column): a deny decision and an outcome that did not run. When the log did not
/// open or the record cannot be written, the command is refused all the same, and stderr says
/// it was not recorded.
fn record_unloaded(
    log: Result<AuditLog, SessionError>,
    config: &warden_engine::SessionConfig,
    layers: &[warden_policy::LayerSource],
    context: &warden_policy::Context,
    query: Query<'_>,
    job: Job<'_>,
    why: &str,
) {
    let request = warden_engine::Unloaded { query, job: Some(job), via: None };
    if let Err(e) = log.and_then(|log| warden_engine::record_unloaded(log, config, layers, context, &[request], why)) {
        eprintln!("warden: the refusal is not recorded: {}", warden_feedback::shown::escaped(&e.to_string()));
    }
}

/// Who settles `ask`: a pre-approval file when given, else the person at the terminal, else
/// nobody (refused).
fn approver(args: &Args, env: &Environment) -> Result<Box<dyn Approver + Send>, CliError> {
    if let Some(file) = &args.approvals {
        let pre = PreApprovals::load(file).map_err(|e| CliError::Usage { message: format!("pre-approvals: {e}") })?;
        return Ok(Box::new(pre));
    }
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        let user = env.var("USER").or_else(|| env.var("LOGNAME")).unwrap_or_else(|| "unknown".into());
        return Ok(Box::new(crate::approve::Terminal { user }));
    }
    Ok(Box::new(RefuseAll { why: "there is no terminal to ask at".into() }))
}

fn session_error(e: SessionError) -> CliError {
    match e {
        SessionError::Policy(d) => policy_error(&d),
        SessionError::Run(e) => e.into(),
        SessionError::Audit(message) => CliError::Audit(message),
    }
}

fn report(o: &Outcome, json: bool) -> Result<(), CliError> {
    if json {
        let text = serde_json::to_string(o).map_err(|e| CliError::Usage { message: format!("cannot print the result as JSON: {e}") })?;
        println!("{text}");
        return Ok(());
    }
    // stdout is flushed before stderr is written, so that warden's lines (on stderr) come after
    // both on a terminal that shows the two.
    print!("{}", o.run.stdout.text);
    let _ = std::io::stdout().flush();
    eprint!("{}", o.run.stderr.text);
    // One write: stderr is unbuffered, and each piece of a format would be a system call.
    eprint!("{}", summary(o, std::io::stderr().is_terminal()));
    Ok(())
}

/// warden's own lines after the command's output: after a reset of what the command's bytes
/// may have left the terminal in (`tty`), with every character of text that comes from the
/// command or the policy that a terminal would not show as itself escaped, so that the
/// command can neither hide nor forge them (sandbox.md #6).
fn summary(o: &Outcome, tty: bool) -> String {
    use warden_feedback::shown::escaped;
    let d = &o.decision;
    let rule = d.rules().first().map(|r| format!(" by {}:{}:{}", escaped(&r.file), r.line, r.column)).unwrap_or_default();
    let tier = d.tier().map(|t| format!(" (tier {})", escaped(t))).unwrap_or_default();
    let mut summary = if tty { RESET.to_string() } else { String::new() };
    // On a line of their own: the command's last line may have no end.
    let last = if o.run.stderr.text.is_empty() { &o.run.stdout.text } else { &o.run.stderr.text };
    if !last.is_empty() && !last.ends_with('\n') {
        summary.push('\n');
    }
    if let Some(why) = &o.refused {
        summary.push_str(&format!("warden: not run: {}{rule}\n", escaped(why)));
        return summary;
    }
    summary.push_str(&format!("warden: {}{tier}{rule}; {} in {:.0} ms\n", d.verdict.as_str(), o.end(), o.run.duration_ms));
    for den in &o.run.denials {
        let how = match den.evidence {
            warden_feedback::Evidence::Observed => "",
            warden_feedback::Evidence::Output => ", from its output",
        };
        summary.push_str(&format!("warden: refused {} {} ({:?}{how})\n", escaped(&den.op), escaped(&den.target), den.source));
    }
    summary
}

/// What puts a terminal back in a known state after the command's bytes: a string terminator
/// (ends an OSC, DCS or APC string left open), a soft reset (scrolling region, insert and
/// origin modes, character sets), plain attributes (no concealed or same-colour text),
/// autowrap, a visible cursor, and the start of the line.
const RESET: &str = "\x1b\\\x1b[!p\x1b[0m\x1b[?7h\x1b[?25h\r";

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
