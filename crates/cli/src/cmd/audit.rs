//! `warden audit`: verify an audit log's chain, query it, count it, export it as OCSF.
//!
//! Exit codes: 0 done (for `verify`: the log verifies, a torn tail allowed); 1 `verify` found
//! problems; 2 the log cannot be read (or, for `query`/`stats`/`export`, a line is not a
//! record: run `verify`).

use crate::output::CliError;
use warden_feedback::shown::escaped;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use warden_audit::{ClientFilter, ClientRec, Counts, Filter, Kind, Record, RuleFilter, VerifyReport};

/// Arguments of `warden audit`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Debug, clap::Subcommand)]
enum Verb {
    /// Check every record's hash, the chain, the sequence and the head checkpoint; name the
    /// first bad record. Exit 1 on any problem.
    Verify(VerifyArgs),
    /// List the records that match every filter given (a table, or JSON lines with --json). In
    /// the table, an outcome's verdict column says how it ended (`exit N`, `signal`, `timeout`,
    /// `refused`).
    Query(Box<QueryArgs>),
    /// Per agent and overall: commands, verdicts, manual interventions, approvals, sandbox
    /// denials, failed runs, retries, time per command.
    Stats(StatsArgs),
    /// Print the records as OCSF events (JSON lines), for a SIEM.
    Export(ExportArgs),
}

#[derive(Debug, clap::Args)]
struct VerifyArgs {
    /// The audit log.
    log: PathBuf,
    /// A head checkpoint kept elsewhere (e.g. off-host), as printed by `verify`: SEQ:HASH.
    #[arg(long, value_name = "SEQ:HASH")]
    head: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct QueryArgs {
    /// The audit log.
    log: PathBuf,
    /// Only decisions with this verdict (allow, ask, deny).
    #[arg(long)]
    verdict: Option<String>,
    /// Only decisions in this tier.
    #[arg(long)]
    tier: Option<String>,
    /// Only this agent's records.
    #[arg(long)]
    agent: Option<String>,
    /// Only this tool's records (exec, read_file, an MCP tool).
    #[arg(long)]
    tool: Option<String>,
    /// Only decisions by this rule: a policy file (or its trailing components), optionally :LINE.
    #[arg(long, value_name = "FILE[:LINE]")]
    rule: Option<String>,
    /// Only records of this kind (decision, approval, outcome, reload, session).
    #[arg(long)]
    kind: Option<String>,
    /// Only this session's records.
    #[arg(long)]
    session: Option<String>,
    /// Only requests from this network client (`warden serve --mcp --http`): its address
    /// (IP, any port), one connection (IP:PORT, [IPv6]:PORT), or the uid owning a loopback
    /// client's socket (uid=N).
    #[arg(long, value_name = "IP|IP:PORT|uid=N")]
    client: Option<String>,
    /// Only records at or after this RFC 3339 time.
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only records before this RFC 3339 time.
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Only records whose command, argv, path, reason or note contains this text.
    #[arg(long)]
    text: Option<String>,
    /// Print the records as JSON lines (as in the log).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct StatsArgs {
    /// The audit log.
    log: PathBuf,
    /// Print the statistics as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ExportArgs {
    /// The output format.
    #[arg(long, value_enum)]
    format: Format,
    /// The audit log.
    log: PathBuf,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// OCSF 1.3 JSON lines (Process Activity for commands, API Activity for tool calls).
    Ocsf,
}

/// Runs one `warden audit` verb.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    match &args.verb {
        Verb::Verify(a) => verify(a),
        Verb::Query(a) => query(a),
        Verb::Stats(a) => stats(a),
        Verb::Export(a) => export(a),
    }
}

fn usage(message: impl Into<String>) -> CliError {
    CliError::Usage { message: message.into() }
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, CliError> {
    serde_json::to_string(value).map_err(|e| usage(format!("cannot print JSON: {e}")))
}

fn read(log: &Path) -> Result<Vec<Record>, CliError> {
    warden_audit::read(log).map_err(|e| usage(e.to_string()))
}

fn verify(args: &VerifyArgs) -> Result<ExitCode, CliError> {
    let head = args.head.as_deref().map(warden_audit::parse_checkpoint).transpose().map_err(|e| usage(format!("--head: {e}")))?;
    let report = warden_audit::verify_with(&args.log, head.as_ref()).map_err(|e| usage(e.to_string()))?;
    if args.json {
        println!("{}", json(&report)?);
    } else {
        for warning in &report.warnings {
            eprintln!("warning: {}", escaped(warning));
        }
        print!("{}", render_verify(&args.log, &report));
    }
    Ok(if report.ok() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn render_verify(log: &Path, report: &VerifyReport) -> String {
    let mut out = String::new();
    let head = report.head.as_ref().map_or_else(|| String::from("none"), |h| format!("{}:{}", h.seq, h.hash));
    if report.ok() {
        let _ = writeln!(out, "ok: `{}`: {} records verify; head {head}", log.display(), report.records);
        for cp in &report.checkpoints {
            let _ = writeln!(out, "  matches the checkpoint `{}` ({}:{})", cp.source, cp.head.seq, cp.head.hash);
        }
        return out;
    }
    let first = report.first_bad_seq().map_or_else(|| String::from("-"), |s| s.to_string());
    let _ = writeln!(out, "FAILED: `{}`: first bad record: seq {first} ({} problem(s))", log.display(), report.problems.len());
    for p in &report.problems {
        let seq = p.seq.map_or_else(String::new, |s| format!("seq {s}: "));
        let line = p.line.map_or_else(String::new, |l| format!("line {l}: "));
        // A problem quotes the record's bytes, which anyone who could edit the log chose.
        let _ = writeln!(out, "  {seq}{line}{}", escaped(&p.what));
    }
    out
}

fn filter(args: &QueryArgs) -> Result<Filter, CliError> {
    let time = |t: &Option<String>, flag: &str| {
        t.as_deref().map(warden_audit::parse_time).transpose().map_err(|e| usage(format!("{flag}: {e}")))
    };
    let kind = match args.kind.as_deref() {
        None => None,
        Some("decision") => Some(Kind::Decision),
        Some("approval") => Some(Kind::Approval),
        Some("outcome") => Some(Kind::Outcome),
        Some("reload") => Some(Kind::Reload),
        Some("session") => Some(Kind::Session),
        Some(other) => {
            return Err(usage(format!("--kind: `{other}` is not one of decision, approval, outcome, reload, session")));
        }
    };
    Ok(Filter {
        verdict: args.verdict.clone(),
        tier: args.tier.clone(),
        agent: args.agent.clone(),
        tool: args.tool.clone(),
        rule: args.rule.as_deref().map(RuleFilter::parse).transpose().map_err(|e| usage(format!("--rule: {e}")))?,
        kind,
        session: args.session.clone(),
        client: args.client.as_deref().map(ClientFilter::parse).transpose().map_err(|e| usage(format!("--client: {e}")))?,
        since: time(&args.since, "--since")?,
        until: time(&args.until, "--until")?,
        text: args.text.clone(),
    })
}

fn query(args: &QueryArgs) -> Result<ExitCode, CliError> {
    let filter = filter(args)?;
    let records = read(&args.log)?;
    let found = warden_audit::query(&records, &filter);
    if args.json {
        for r in found {
            println!("{}", json(r)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:>6}  {:<27}  {:<10}  {:<22}  {:<10}  {:<7}  {:<10}  {:<28}  COMMAND",
        "SEQ", "TIME", "AGENT", "CLIENT", "TOOL", "VERDICT", "TIER", "RULE"
    );
    for r in found {
        let e = &r.entry;
        let d = e.decision.as_ref();
        let verdict = match (d, &e.outcome) {
            (Some(d), _) => d.verdict.clone(),
            (None, Some(o)) if o.timed_out => String::from("timeout"),
            (None, Some(o)) if o.signal.is_some() => String::from("signal"),
            (None, Some(o)) if o.ran => format!("exit {}", o.exit_code.map_or_else(|| String::from("?"), |c| c.to_string())),
            (None, Some(_)) => String::from("refused"),
            (None, None) => e.kind.as_str().to_owned(),
        };
        let rule = d.and_then(|d| d.rules.first()).map_or_else(|| String::from("-"), |r| format!("{}:{}", r.file, r.line));
        let argv = e.input.argv.as_ref().map(|a| a.join(" "));
        let what = e.input.command.as_deref().or(argv.as_deref()).or(e.input.path.as_deref()).unwrap_or("-");
        // The command is the model's text: escaped, it cannot redraw the rows around it.
        println!(
            "{:>6}  {:<27}  {:<10}  {:<22}  {:<10}  {:<7}  {:<10}  {:<28}  {}",
            r.seq,
            escaped(&r.time),
            escaped(e.agent.as_deref().unwrap_or("-")),
            e.client.as_ref().map_or_else(|| String::from("-"), client_cell),
            escaped(&e.tool),
            escaped(&verdict),
            escaped(d.and_then(|d| d.tier.as_deref()).unwrap_or("-")),
            escaped(&rule),
            escaped(what)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A network client in the table: its address, the uid owning its socket when known, and
/// `+token` when a bearer token authenticated it.
fn client_cell(c: &ClientRec) -> String {
    let uid = c.uid.map(|u| format!(" uid={u}")).unwrap_or_default();
    let token = if c.bearer { " +token" } else { "" };
    escaped(&format!("{}{uid}{token}", c.addr)).into_owned()
}

fn stats(args: &StatsArgs) -> Result<ExitCode, CliError> {
    let stats = warden_audit::stats(&read(&args.log)?);
    if args.json {
        println!("{}", json(&stats)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<12} {:>8} {:>6} {:>6} {:>6} {:>7} {:>8} {:>8} {:>8} {:>6} {:>6} {:>7} {:>9} {:>9} {:>9}",
        "AGENT", "COMMANDS", "ALLOW", "ASK", "DENY", "MANUAL", "GRANTED", "REFUSED", "DENIALS", "RUNS", "FAILED", "RETRIES", "MEAN_MS", "P50_MS", "P95_MS"
    );
    for (agent, c) in stats.agents.iter().map(|(a, c)| (a.as_str(), c)).chain([("(all)", &stats.overall)]) {
        println!("{}", stats_row(&escaped(agent), c));
    }
    Ok(ExitCode::SUCCESS)
}

fn stats_row(agent: &str, c: &Counts) -> String {
    format!(
        "{agent:<12} {:>8} {:>6} {:>6} {:>6} {:>6.1}% {:>8} {:>8} {:>8} {:>6} {:>6} {:>7} {:>9.1} {:>9.1} {:>9.1}",
        c.commands,
        c.allow,
        c.ask,
        c.deny,
        c.manual_intervention_ratio * 100.0,
        c.approvals_granted,
        c.approvals_refused,
        c.sandbox_denials,
        c.runs,
        c.failed_runs,
        c.retries_after_failure,
        c.time_ms.mean,
        c.time_ms.p50,
        c.time_ms.p95
    )
}

fn export(args: &ExportArgs) -> Result<ExitCode, CliError> {
    let records = read(&args.log)?;
    match args.format {
        Format::Ocsf => {
            for event in warden_audit::export_ocsf(&records) {
                println!("{}", json(&event)?);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
