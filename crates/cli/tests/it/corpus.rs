//! The command corpus (`tests/corpus/commands.txt`): every agent command string in it is
//! explained under each shipped policy by the built binary, and the verdict compared with the
//! one written for it. All mismatches are collected and reported together.

use crate::support::{repo, stderr, stdout, warden};
use std::collections::BTreeMap;
use std::path::Path;

/// The shipped policies, in the column order of the corpus.
const POLICIES: [&str; 4] = ["default", "ci", "full-auto", "readonly"];

/// The categories and the fewest lines each must have.
const MINIMUM: [(&str, usize); 5] =
    [("read", 80), ("write", 60), ("dangerous", 120), ("opaque", 30), ("secret", 20)];

/// One corpus line.
#[derive(Debug, Clone)]
struct Entry {
    line: usize,
    category: String,
    expected: [String; 4],
    command: String,
}

/// One verdict that differs from the corpus.
#[derive(Debug)]
struct Outcome {
    entry: usize,
    policy: usize,
    verdict: String,
    reason: String,
}

fn load() -> Vec<Entry> {
    let path = repo().join("tests/corpus/commands.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut entries = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let (head, command) = raw
            .split_once(" | ")
            .unwrap_or_else(|| panic!("commands.txt:{line}: no ` | ` separator: {raw}"));
        let fields: Vec<&str> = head.split_whitespace().collect();
        assert_eq!(fields.len(), 5, "commands.txt:{line}: want CATEGORY and 4 verdicts: {raw}");
        let category = fields[0].to_string();
        assert!(
            MINIMUM.iter().any(|(c, _)| *c == category),
            "commands.txt:{line}: unknown category `{category}`"
        );
        for v in &fields[1..] {
            assert!(["allow", "ask", "deny"].contains(v), "commands.txt:{line}: bad verdict `{v}`");
        }
        assert!(!command.is_empty(), "commands.txt:{line}: empty command");
        let expected = [1, 2, 3, 4].map(|k| fields[k].to_string());
        entries.push(Entry { line, category, expected, command: command.to_string() });
    }
    entries
}

#[test]
fn corpus_is_large_enough_in_every_category() {
    let entries = load();
    assert!(entries.len() >= 300, "the corpus has {} lines, want at least 300", entries.len());
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &entries {
        *counts.entry(e.category.as_str()).or_default() += 1;
    }
    for (category, minimum) in MINIMUM {
        let n = counts.get(category).copied().unwrap_or(0);
        assert!(n >= minimum, "the corpus has {n} `{category}` lines, want at least {minimum}");
    }
    let mut seen = BTreeMap::new();
    for e in &entries {
        if let Some(first) = seen.insert(e.command.as_str(), e.line) {
            panic!("commands.txt:{}: duplicate of line {first}: {}", e.line, e.command);
        }
    }
}

/// Explains one command under one policy; the verdict (or `error`) and the reason.
fn explain(root: &Path, policy: &str, command: &str) -> (String, String) {
    let out = warden(root, Path::new("/home/user"))
        .arg("explain")
        .arg("--policy")
        .arg(format!("policies/{policy}.policy"))
        .args(["--workspace", "/workspace", "--cwd", "/workspace", "--json", "-c", command])
        .output()
        .unwrap();
    if !out.status.success() {
        return (String::from("error"), format!("exit {:?}: {}", out.status.code(), stderr(&out)));
    }
    let json: serde_json::Value = match serde_json::from_slice(&out.stdout) {
        Ok(json) => json,
        Err(e) => return (String::from("error"), format!("not JSON ({e}): {}", stdout(&out))),
    };
    let decision = &json["decision"];
    let verdict = decision["verdict"].as_str().unwrap_or("missing").to_string();
    let reason = decision["reason"].as_str().unwrap_or("").to_string();
    (verdict, reason)
}

/// Runs every (entry, policy) pair on a few threads.
fn run_all(entries: &[Entry]) -> Vec<Outcome> {
    let root = repo();
    let jobs: Vec<(usize, usize)> =
        (0..entries.len()).flat_map(|e| (0..POLICIES.len()).map(move |p| (e, p))).collect();
    let workers = 4;
    let chunk = jobs.len().div_ceil(workers).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(chunk)
            .map(|part| {
                let root = &root;
                s.spawn(move || {
                    part.iter()
                        .map(|&(entry, policy)| {
                            let (verdict, reason) =
                                explain(root, POLICIES[policy], &entries[entry].command);
                            Outcome { entry, policy, verdict, reason }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn corpus_verdicts_match_every_shipped_policy() {
    let entries = load();
    let outcomes = run_all(&entries);
    assert_eq!(outcomes.len(), entries.len() * POLICIES.len());

    let mut report = String::new();
    let dangerous_allowed: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.policy == 0 && o.verdict == "allow")
        .filter(|o| entries[o.entry].category == "dangerous")
        .collect();
    if !dangerous_allowed.is_empty() {
        report.push_str(&format!(
            "{} DANGEROUS command(s) ALLOWED by the default policy:\n",
            dangerous_allowed.len()
        ));
        for o in &dangerous_allowed {
            let e = &entries[o.entry];
            report.push_str(&format!("  commands.txt:{}: {}\n", e.line, e.command));
        }
        report.push('\n');
    }

    let mut per_policy = [(0usize, 0usize); 4];
    let mut mismatches = Vec::new();
    for o in &outcomes {
        let e = &entries[o.entry];
        if o.verdict == e.expected[o.policy] {
            per_policy[o.policy].0 += 1;
        } else {
            per_policy[o.policy].1 += 1;
            mismatches.push(o);
        }
    }
    mismatches.sort_by_key(|o| (o.entry, o.policy));
    if !mismatches.is_empty() {
        report.push_str(&format!("{} mismatch(es):\n", mismatches.len()));
        for o in &mismatches {
            let e = &entries[o.entry];
            report.push_str(&format!(
                "  commands.txt:{} [{}] {:<9} want {:<5} got {:<5} | {}\n      reason: {}\n",
                e.line,
                e.category,
                POLICIES[o.policy],
                e.expected[o.policy],
                o.verdict,
                e.command,
                o.reason.trim()
            ));
        }
        report.push('\n');
    }
    let summary: Vec<String> = POLICIES
        .iter()
        .zip(per_policy)
        .map(|(p, (pass, fail))| format!("{p}: {pass} pass, {fail} fail"))
        .collect();
    assert!(report.is_empty(), "{report}{}", summary.join("; "));
}
