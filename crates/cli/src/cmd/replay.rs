//! `warden replay LOG --policy NEW...`: what a policy change would do to recorded requests.
//! `warden suggest LOG`: allow rules for asks that were always approved.
//!
//! Both read only the log's whole records (a log that does not verify is still read, with a
//! warning: run `warden audit verify` to know whether to trust it). They run nothing.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::output::{CliError, policy_error};

/// Arguments of `warden replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The audit log.
    #[arg(value_name = "LOG")]
    log: PathBuf,
    /// The policy to replay under; repeat to stack layers, top first.
    #[arg(long = "policy", value_name = "FILE", required = true)]
    policies: Vec<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// List at most this many changed requests (the counts cover all).
    #[arg(long, default_value_t = 50)]
    limit: usize,
}

/// Arguments of `warden suggest`.
#[derive(Debug, clap::Args)]
pub struct SuggestArgs {
    /// The audit log.
    #[arg(value_name = "LOG")]
    log: PathBuf,
    /// Propose a rule only after this many approvals (and no refusal).
    #[arg(long, default_value_t = 3)]
    min: usize,
    /// Print the suggestions as JSON instead of policy text.
    #[arg(long)]
    json: bool,
}

/// The log's whole records; a warning on stderr first when the log does not verify (its
/// records may be forged: an approval that never happened would make a suggestion).
fn records(log: &std::path::Path) -> Result<Vec<warden_audit::Record>, CliError> {
    match warden_audit::verify(log) {
        Ok(report) if report.ok() => {}
        Ok(report) => eprintln!(
            "warning: the audit log {} does not verify ({} problem(s), the first at record {}): what follows rests on records \
             that may have been changed or forged; run `warden audit verify`",
            log.display(),
            report.problems.len(),
            report.first_bad_seq().map_or_else(|| String::from("-"), |s| s.to_string())
        ),
        Err(e) => eprintln!("warning: the audit log {} could not be verified: {e}", log.display()),
    }
    warden_audit::read(log).map_err(|e| CliError::Usage { message: format!("cannot read the audit log {}: {e}", log.display()) })
}

fn json<T: serde::Serialize>(value: &T) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| CliError::Usage { message: format!("cannot print JSON: {e}") })?;
    println!("{text}");
    Ok(())
}

/// Replays a log under another policy. Exit 0 when nothing changes, 1 when something does.
pub fn replay(args: &ReplayArgs) -> Result<ExitCode, CliError> {
    let layers = warden_engine::load_files(&args.policies)?;
    let policy = warden_policy::compile(&layers).map_err(|d| policy_error(&d))?;
    let report = warden_engine::replay(&records(&args.log)?, &policy);
    if args.json {
        json(&report)?;
    } else {
        println!("{} requests replayed: {} unchanged, {} changed", report.requests, report.unchanged, report.changes.len());
        for (kind, n) in &report.by_kind {
            println!("  {kind:<12} {n}");
        }
        if !report.by_rule.is_empty() {
            println!("by deciding rule (new policy):");
            for (rule, kinds) in &report.by_rule {
                let counts: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
                println!("  {rule}: {}", counts.join(", "));
            }
        }
        for c in report.changes.iter().take(args.limit) {
            let agent = c.agent.as_deref().map(|a| format!(" [{a}]")).unwrap_or_default();
            // The subject (and the reason quoting it) is the model's text from the log.
            let line = format!("{} -> {}{agent} {} `{}` ({}: {})", c.before, c.after, c.tool, c.subject, c.rule, c.reason);
            println!("  #{} {}", c.seq, warden_feedback::shown::escaped(&line));
        }
        if report.changes.len() > args.limit {
            println!("  ... {} more (use --limit or --json)", report.changes.len() - args.limit);
        }
        if report.redacted > 0 {
            println!("note: {} replayed commands carry redacted secrets and were decided as recorded", report.redacted);
        }
    }
    Ok(if report.changes.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Proposes allow rules from approvals.
pub fn suggest(args: &SuggestArgs) -> Result<ExitCode, CliError> {
    let s = warden_engine::suggest(&records(&args.log)?, args.min.max(1));
    if args.json {
        json(&s)?;
    } else if s.rules.is_empty() {
        println!(
            "# nothing to suggest: {} asks, {} approved; {} command shapes left out (refused at least once, dangerous tier, or not analysable)",
            s.asked, s.approved, s.excluded
        );
    } else {
        print!("{}", warden_engine::suggestion_text(&s, &args.log.display().to_string()));
    }
    Ok(ExitCode::SUCCESS)
}
