//! `warden replay` and `warden suggest`: what a recorded session says about a policy.
//!
//! Replay re-decides every recorded decision under another policy, in the context it was
//! recorded in (workspace, home, working directory, agent), and reports what would change.
//! Suggest reads which asks were always approved and proposes allow rules for them, never for
//! the dangerous tier. Both read only decision and approval records; they run nothing.
//!
//! A command recorded with a secret redacted is replayed as recorded (the secret is gone from
//! the log on purpose); a redaction can change how it parses, which the report counts.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use warden_audit::{Kind, Record};
use warden_policy::{Action, Context, Decision, PolicySet, Request};

use crate::layers::quote_argv;

/// One request whose decision changes.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The decision record's sequence number.
    pub seq: u64,
    /// The agent it was decided for.
    pub agent: Option<String>,
    /// The tool.
    pub tool: String,
    /// The command string or the tool's path.
    pub subject: String,
    /// The recorded verdict.
    pub before: String,
    /// The verdict under the new policy.
    pub after: String,
    /// The rule that decides under the new policy (`file:line`), or `default`/`opaque`.
    pub rule: String,
    /// The new reason.
    pub reason: String,
}

/// What replay found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplayReport {
    /// Decision records replayed.
    pub requests: usize,
    /// Requests decided the same.
    pub unchanged: usize,
    /// Requests decided differently, in log order.
    pub changes: Vec<Change>,
    /// Counts per kind of change (`allow->deny`, `ask->allow`, ...).
    pub by_kind: BTreeMap<String, usize>,
    /// Counts per deciding rule of the new decision, per kind of change.
    pub by_rule: BTreeMap<String, BTreeMap<String, usize>>,
    /// Replayed commands that carry a redaction mark.
    pub redacted: usize,
}

/// Re-decides a decision record's request under `policy`.
pub fn decide_record(policy: &PolicySet, r: &Record) -> Option<Decision> {
    let i = &r.entry.input;
    let ctx = Context { workspace: i.workspace.clone(), home: i.home.clone(), cwd: i.cwd.clone() };
    let agent = r.entry.agent.as_deref();
    if r.entry.tool == "exec" {
        let text = match (&i.command, &i.argv) {
            (Some(c), _) => c.clone(),
            (None, Some(argv)) => quote_argv(argv),
            (None, None) => return None,
        };
        let analysis = warden_shell::analyse(&text);
        Some(policy.decide(&Request { agent, action: Action::Exec(&analysis) }, &ctx))
    } else {
        let action = Action::Tool { name: &r.entry.tool, path: i.path.as_deref() };
        Some(policy.decide(&Request { agent, action }, &ctx))
    }
}

fn subject(r: &Record) -> String {
    let i = &r.entry.input;
    i.command.clone().or_else(|| i.argv.as_ref().map(|a| quote_argv(a))).or_else(|| i.path.clone()).unwrap_or_default()
}

fn rule_name(d: &Decision) -> String {
    d.rules().first().map_or_else(|| "default or opaque verdict".to_string(), |r| format!("{}:{}", r.file, r.line))
}

/// Replays every decision record of `records` under `policy`.
pub fn replay(records: &[Record], policy: &PolicySet) -> ReplayReport {
    let mut report = ReplayReport::default();
    for r in records.iter().filter(|r| matches!(r.entry.kind, Kind::Decision)) {
        let Some(before) = r.entry.decision.as_ref().map(|d| d.verdict.clone()) else { continue };
        let Some(d) = decide_record(policy, r) else { continue };
        report.requests += 1;
        let subject = subject(r);
        if subject.contains(crate::redact::MARK) {
            report.redacted += 1;
        }
        let after = d.verdict.as_str().to_string();
        if after == before {
            report.unchanged += 1;
            continue;
        }
        let kind = format!("{before}->{after}");
        let rule = rule_name(&d);
        *report.by_kind.entry(kind.clone()).or_default() += 1;
        *report.by_rule.entry(rule.clone()).or_default().entry(kind).or_default() += 1;
        report.changes.push(Change {
            seq: r.seq,
            agent: r.entry.agent.clone(),
            tool: r.entry.tool.clone(),
            subject,
            before,
            after,
            rule,
            reason: d.reason().to_string(),
        });
    }
    report
}

/// One proposed allow rule, with its evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Suggestion {
    /// The agent the approvals were for (`None`: the top-level policy).
    pub agent: Option<String>,
    /// The rule's words (`cargo build`), or the tool's name for `tools` rules.
    pub words: Vec<String>,
    /// Whether it is a tool rule (`tools NAME`) rather than an exec rule.
    pub tool: bool,
    /// Approvals seen.
    pub approved: usize,
    /// Sessions they came from.
    pub sessions: usize,
}

/// What suggest found, and the policy text it proposes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Suggestions {
    /// Proposed rules, most approved first.
    pub rules: Vec<Suggestion>,
    /// Asked requests seen, approved, refused.
    pub asked: usize,
    /// Of those, approved.
    pub approved: usize,
    /// Keys left out because some request under them was refused or is in the dangerous tier.
    pub excluded: usize,
}

#[derive(Default)]
struct Evidence {
    approved: usize,
    refused: usize,
    dangerous: bool,
    sessions: BTreeSet<String>,
}

/// Programs whose second word is a subcommand: an approval of `git commit` says nothing of
/// `git push`, so their rules name both words.
const SUBCOMMANDS: &[&str] = &[
    "git", "cargo", "npm", "pnpm", "yarn", "bun", "deno", "go", "docker", "podman", "kubectl", "helm", "terraform", "pip", "pip3",
    "uv", "poetry", "gh", "dotnet", "mvn", "gradle", "rustup", "make", "just", "npx", "conda", "brew", "apt", "apt-get", "systemctl",
];

/// Programs that run whatever their arguments say (a script, code, another command): an
/// allow rule naming one would allow everything, whatever was approved through it.
const RUNS_ANYTHING: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "node", "nodejs", "perl", "ruby", "php", "lua", "env", "xargs", "sudo", "doas",
    "su", "nohup", "timeout", "nice", "setsid", "stdbuf", "busybox", "eval", "exec", "command", "osascript", "pwsh",
];

/// The words an allow rule for `argv` would name: the program and, for programs with
/// subcommands, the subcommand (when it is a plain word, not a flag or a path). None for a
/// program that runs whatever its arguments say (`bash deploy.sh`, `python3 x.py`).
fn key_words(argv: &[String]) -> Vec<String> {
    let mut words = Vec::new();
    let Some(p) = argv.first() else { return words };
    let program = p.rsplit('/').next().unwrap_or(p).to_string();
    if RUNS_ANYTHING.contains(&program.as_str()) || program.starts_with("python") {
        return words;
    }
    // Only a plain name is proposed as a policy word (a recorded one is the model's text).
    if program.is_empty() || !program.chars().all(|c| c.is_ascii_alphanumeric() || "._+-@".contains(c)) {
        return words;
    }
    let sub = argv.get(1).filter(|s| !s.is_empty() && !s.starts_with('-') && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
    let multi = SUBCOMMANDS.contains(&program.as_str());
    words.push(program);
    if multi {
        match sub {
            Some(sub) => words.push(sub.clone()),
            // `git -C x commit`: too varied to name safely; leave it out.
            None => return Vec::new(),
        }
    }
    words
}

/// Proposes allow rules from asks that were always approved (at least `min` times).
pub fn suggest(records: &[Record], min: usize) -> Suggestions {
    let decisions: BTreeMap<u64, &Record> = records.iter().filter(|r| matches!(r.entry.kind, Kind::Decision)).map(|r| (r.seq, r)).collect();
    let mut evidence: BTreeMap<(Option<String>, bool, Vec<String>), Evidence> = BTreeMap::new();
    let mut out = Suggestions::default();
    for a in records.iter().filter(|r| matches!(r.entry.kind, Kind::Approval)) {
        let Some(d) = a.entry.refers_to.and_then(|s| decisions.get(&s)) else { continue };
        let Some(rec) = &d.entry.decision else { continue };
        let granted = a.entry.decision.as_ref().is_some_and(|x| x.verdict == "allow");
        out.asked += 1;
        out.approved += usize::from(granted);
        let dangerous = rec.tier.as_deref() == Some("dangerous");
        let keys: Vec<(bool, Vec<String>)> = if d.entry.tool == "exec" {
            let text = subject(d);
            let analysis = warden_shell::analyse(&text);
            let mut keys: Vec<(bool, Vec<String>)> = analysis
                .commands
                .iter()
                .map(|c| {
                    let known: Option<Vec<String>> = c.argv.iter().take(2).map(|w| w.known.then(|| w.text.clone())).collect();
                    (false, known.map(|k| key_words(&k)).unwrap_or_default())
                })
                .filter(|(_, w)| !w.is_empty())
                .collect();
            // Anything opaque is never suggested: mark the whole request as excluded.
            if !analysis.opaque.is_empty() || text.contains(crate::redact::MARK) {
                keys.iter_mut().for_each(|k| k.1.insert(0, String::from("\u{0}opaque")));
            }
            keys
        } else {
            vec![(true, vec![d.entry.tool.clone()])]
        };
        for (tool, words) in keys {
            let e = evidence.entry((d.entry.agent.clone(), tool, words)).or_default();
            if granted { e.approved += 1 } else { e.refused += 1 }
            e.dangerous |= dangerous;
            e.sessions.insert(a.entry.session.clone());
        }
    }
    for ((agent, tool, words), e) in evidence {
        let opaque = words.first().is_some_and(|w| w.starts_with('\u{0}'));
        if e.refused > 0 || e.dangerous || opaque {
            out.excluded += 1;
            continue;
        }
        if e.approved >= min {
            out.rules.push(Suggestion { agent, words, tool, approved: e.approved, sessions: e.sessions.len() });
        }
    }
    out.rules.sort_by(|a, b| b.approved.cmp(&a.approved).then_with(|| a.words.cmp(&b.words)));
    out
}

/// The suggestions as policy text: one `tier approved: allow` block per agent.
pub fn suggestion_text(s: &Suggestions, log: &str) -> String {
    let mut text = format!(
        "# Proposed by `warden suggest` from {log}: asks that were always approved.\n\
         # Review each line; add the block to the layer whose `ask` decided these requests.\n\
         # An allow rule runs with the tier's grants: read-only unless you give the tier a write grant.\n"
    );
    let agents: BTreeSet<Option<String>> = s.rules.iter().map(|r| r.agent.clone()).collect();
    for agent in agents {
        let (open, indent, close) = match &agent {
            Some(a) => (format!("agent {a} {{\n"), "    ", "}\n"),
            None => (String::new(), "", ""),
        };
        text.push_str(&open);
        text.push_str(&format!("{indent}tier approved: allow {{\n"));
        for r in s.rules.iter().filter(|r| r.agent == agent) {
            let kw = if r.tool { "tools" } else { "exec" };
            text.push_str(&format!(
                "{indent}    {kw} {}    # approved {} times in {} session(s), never refused\n",
                r.words.join(" "),
                r.approved,
                r.sessions
            ));
        }
        text.push_str(&format!("{indent}}}\n{close}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interpreter_or_a_wrapper_is_never_suggested_whole() {
        let words = |w: &[&str]| key_words(&w.iter().map(|s| (*s).to_string()).collect::<Vec<_>>());
        for argv in [&["bash", "deploy.sh"][..], &["python3", "x.py"], &["/usr/bin/python3.12", "-m", "x"], &["env", "A=1", "make"], &["sudo", "ls"]] {
            assert!(words(argv).is_empty(), "{argv:?}");
        }
        assert!(words(&["mk\u{1b}[2Kdir", "d"]).is_empty());
        assert_eq!(words(&["mkdir", "d"]), ["mkdir"]);
        assert_eq!(words(&["cargo", "build"]), ["cargo", "build"]);
    }
}
