//! Shared by the audit crate's integration tests: fresh folders, entries, a seeded generator.


use std::path::PathBuf;
use warden_audit::{DecidedBy, DecisionRec, DenialRec, Entry, Input, Kind, OutcomeRec, RuleRef};

/// A fresh empty folder for one test, removed when the test ends.
pub fn tempdir(name: &str) -> PathBuf {
    warden_testdir::make("audit", name)
}

/// A small deterministic generator (splitmix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A decision record for a command.
pub fn decision(session: &str, agent: Option<&str>, command: &str, verdict: &str, tier: Option<&str>) -> Entry {
    Entry {
        kind: Kind::Decision,
        session: session.to_owned(),
        agent: agent.map(str::to_owned),
        parents: agent.map(|_| vec![String::from("lead")]).unwrap_or_default(),
        client: None,
        tool: String::from("exec"),
        input: Input {
            command: Some(command.to_owned()),
            argv: Some(command.split(' ').map(str::to_owned).collect()),
            path: None,
            cwd: String::from("/w"),
            workspace: String::from("/w"),
            home: String::from("/home/u"),
        },
        decision: Some(DecisionRec {
            verdict: verdict.to_owned(),
            tier: tier.map(str::to_owned),
            reason: format!("rule says {verdict}"),
            rules: vec![RuleRef { file: String::from("policies/default.policy"), line: 21, column: 5, layer: String::from("builtin") }],
        }),
        decided_by: Some(DecidedBy { kind: String::from("policy"), name: None }),
        policy_hash: "ab".repeat(32),
        outcome: None,
        refers_to: None,
        note: None,
    }
}

/// An approval answering the decision at `refers_to`.
pub fn approval(of: &Entry, refers_to: u64, granted: bool, approver: &str) -> Entry {
    let mut e = of.clone();
    e.kind = Kind::Approval;
    e.refers_to = Some(refers_to);
    e.decided_by = Some(DecidedBy { kind: String::from("approver"), name: Some(approver.to_owned()) });
    if let Some(d) = &mut e.decision {
        d.verdict = String::from(if granted { "allow" } else { "deny" });
        d.reason = String::from("answered at the terminal");
    }
    e
}

/// The outcome of the decision at `refers_to`.
pub fn outcome(of: &Entry, refers_to: u64, exit_code: i32, duration_ms: f64, denials: usize) -> Entry {
    let mut e = of.clone();
    e.kind = Kind::Outcome;
    e.refers_to = Some(refers_to);
    e.decision = None;
    e.decided_by = None;
    e.outcome = Some(OutcomeRec {
        ran: true,
        exit_code: Some(exit_code),
        signal: None,
        timed_out: false,
        cancelled: false,
        duration_ms,
        denials: (0..denials)
            .map(|i| DenialRec { op: String::from("fs.write"), target: format!("/etc/x{i}"), source: String::from("landlock"), evidence: None })
            .collect(),
        refused: None,
    });
    e
}
