//! The numbers a security team decides by, per agent and overall.

use crate::record::{Kind, Record};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// The agent key used for records without an agent identity.
pub const NO_AGENT: &str = "(none)";

/// Counts over one set of records.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    /// Decision records of `exec`.
    pub commands: u64,
    /// Decision records of any tool.
    pub decisions: u64,
    /// Decisions that allowed.
    pub allow: u64,
    /// Decisions that asked.
    pub ask: u64,
    /// Decisions that denied.
    pub deny: u64,
    /// asks / decisions (0 when there are none).
    pub manual_intervention_ratio: f64,
    /// Approval records by an approver that allowed.
    pub approvals_granted: u64,
    /// Approval records by an approver that denied.
    pub approvals_refused: u64,
    /// Operations the sandbox refused (summed over outcomes).
    pub sandbox_denials: u64,
    /// Outcomes where the request ran.
    pub runs: u64,
    /// Runs that exited non-zero, by a signal, or at the time limit.
    pub failed_runs: u64,
    /// The same command (same session and agent) decided again after a failed run.
    pub retries_after_failure: u64,
    /// Wall time of the runs, in milliseconds.
    pub time_ms: Timing,
}

/// Mean and percentiles (nearest rank) of a set of durations.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Timing {
    /// How many durations.
    pub count: u64,
    /// Their mean.
    pub mean: f64,
    /// The median.
    pub p50: f64,
    /// The 95th percentile.
    pub p95: f64,
}

/// Per agent (records without one under [`NO_AGENT`]) and overall.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Over all records.
    pub overall: Counts,
    /// Per agent identity, sorted.
    pub agents: BTreeMap<String, Counts>,
}

#[derive(Default)]
struct Acc {
    counts: Counts,
    durations: Vec<f64>,
}

/// Computes the statistics of a log's records.
pub fn stats(records: &[Record]) -> Stats {
    let by_seq: HashMap<u64, &Record> = records.iter().map(|r| (r.seq, r)).collect();
    let mut overall = Acc::default();
    let mut agents: BTreeMap<String, Acc> = BTreeMap::new();
    // (session, agent, command) -> its last run failed and no retry has been counted since.
    let mut failed: HashMap<(&str, Option<&str>, &str), bool> = HashMap::new();
    for r in records {
        let e = &r.entry;
        let agent = agents.entry(e.agent.clone().unwrap_or_else(|| NO_AGENT.to_owned())).or_default();
        let mut retry = false;
        if e.kind == Kind::Decision
            && let Some(command) = e.input.command.as_deref()
            && let Some(flag) = failed.get_mut(&(e.session.as_str(), e.agent.as_deref(), command))
            && *flag
        {
            *flag = false;
            retry = true;
        }
        let mut run_failed = false;
        if e.kind == Kind::Outcome
            && let Some(o) = &e.outcome
            && o.ran
            && (o.exit_code.is_some_and(|c| c != 0) || o.signal.is_some() || o.timed_out)
        {
            run_failed = true;
            // The command is the decision's (the outcome's own input as a fallback).
            let decided = e.refers_to.and_then(|s| by_seq.get(&s)).copied().unwrap_or(r);
            if let Some(command) = decided.entry.input.command.as_deref() {
                failed.insert((decided.entry.session.as_str(), decided.entry.agent.as_deref(), command), true);
            }
        }
        for acc in [&mut overall, agent] {
            add(acc, r, retry, run_failed);
        }
    }
    Stats { overall: finish(overall), agents: agents.into_iter().map(|(k, v)| (k, finish(v))).collect() }
}

fn add(acc: &mut Acc, r: &Record, retry: bool, run_failed: bool) {
    let e = &r.entry;
    let c = &mut acc.counts;
    let verdict = e.decision.as_ref().map(|d| d.verdict.as_str());
    match e.kind {
        Kind::Decision => {
            c.decisions += 1;
            c.commands += u64::from(e.tool == "exec");
            match verdict {
                Some("allow") => c.allow += 1,
                Some("ask") => c.ask += 1,
                Some("deny") => c.deny += 1,
                _ => {}
            }
            c.retries_after_failure += u64::from(retry);
        }
        Kind::Approval if e.decided_by.as_ref().is_some_and(|d| d.kind == "approver") => match verdict {
            Some("allow") => c.approvals_granted += 1,
            Some("deny") => c.approvals_refused += 1,
            _ => {}
        },
        Kind::Outcome => {
            if let Some(o) = &e.outcome {
                c.sandbox_denials += o.denials.len() as u64;
                if o.ran {
                    c.runs += 1;
                    acc.durations.push(o.duration_ms);
                }
            }
            c.failed_runs += u64::from(run_failed);
        }
        _ => {}
    }
}

fn finish(mut acc: Acc) -> Counts {
    let c = &mut acc.counts;
    c.manual_intervention_ratio = if c.decisions == 0 { 0.0 } else { c.ask as f64 / c.decisions as f64 };
    let d = &mut acc.durations;
    d.sort_by(f64::total_cmp);
    let rank = |p: f64| -> f64 {
        let n = d.len();
        let i = ((p * n as f64).ceil() as usize).clamp(1, n.max(1)) - 1;
        d.get(i).copied().unwrap_or(0.0)
    };
    c.time_ms = Timing {
        count: d.len() as u64,
        mean: if d.is_empty() { 0.0 } else { d.iter().sum::<f64>() / d.len() as f64 },
        p50: rank(0.5),
        p95: rank(0.95),
    };
    acc.counts
}
