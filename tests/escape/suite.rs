//! Runs every case under every runner, prints the comparison table, fails on warden failures.
//!
//! `ESCAPE_VERBOSE=1` prints every run's outcome; `ESCAPE_KEEP=1` keeps the folders of failed
//! runs; `ESCAPE_JOBS=N` runs N cases at once (2 by default).

use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use crate::cases::{self, Case};
use crate::check::{Snapshot, contains, loot_in_workspace};
use crate::fixture::Fixture;
use crate::procs::survivors;
use crate::runner::{Build, Outcome, Runner, User};

/// One case under one runner: pass, or the reasons it failed.
type Verdict = Result<(), Vec<String>>;

fn selected_runners() -> Vec<Runner> {
    let root = fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false);
    let mut all = vec![
        Runner::Warden(User::Caller, Build::OneShot),
        Runner::Warden(User::Caller, Build::View),
    ];
    if root {
        all.push(Runner::Warden(User::Unprivileged, Build::OneShot));
        all.push(Runner::Warden(User::Unprivileged, Build::View));
    }
    all.push(Runner::Bwrap);
    match std::env::var("ESCAPE_RUNNERS") {
        Ok(list) => all
            .into_iter()
            .filter(|r| list.split(',').any(|n| n.trim() == r.name()))
            .collect(),
        Err(_) => all,
    }
}

fn selected_cases() -> Vec<Case> {
    let all = cases::all();
    match std::env::var("ESCAPE_CASES") {
        Ok(list) => all
            .into_iter()
            .filter(|c| {
                list.split(',')
                    .any(|n| !n.trim().is_empty() && c.name.contains(n.trim()))
            })
            .collect(),
        Err(_) => all,
    }
}

fn bwrap_available() -> bool {
    Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs the whole suite.
pub fn run_all() {
    let cases = selected_cases();
    let runners = selected_runners();
    let bwrap = bwrap_available();
    let mut names = std::collections::BTreeSet::new();
    for c in cases::all() {
        assert!(names.insert(c.name), "two cases are named {}", c.name);
    }
    let jobs: Vec<(usize, Runner)> = (0..cases.len())
        .flat_map(|i| {
            runners
                .iter()
                .copied()
                .filter(|r| *r != Runner::Bwrap || bwrap)
                .map(move |r| (i, r))
        })
        .collect();
    let results: Mutex<Vec<(usize, Runner, Verdict)>> = Mutex::new(Vec::new());
    let next = Mutex::new(0usize);
    let workers = std::env::var("ESCAPE_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .unwrap_or(2usize);
    thread::scope(|s| {
        for _ in 0..workers.max(1) {
            s.spawn(|| {
                loop {
                    let job = {
                        let mut n = next.lock().unwrap_or_else(|e| e.into_inner());
                        let job = jobs.get(*n).copied();
                        *n += 1;
                        job
                    };
                    let Some((i, runner)) = job else { break };
                    let Some(case) = cases.get(i) else { break };
                    let verdict = run_one(case, runner);
                    if let Err(why) = &verdict {
                        eprintln!(
                            "FAIL {} under {}: {}",
                            case.name,
                            runner.name(),
                            why.join(" | ")
                        );
                    }
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((i, runner, verdict));
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    report(&cases, &runners, bwrap, &results);
}

fn report(cases: &[Case], runners: &[Runner], bwrap: bool, results: &[(usize, Runner, Verdict)]) {
    let cell = |i: usize, r: Runner| -> &'static str {
        if !runners.contains(&r) || (r == Runner::Bwrap && !bwrap) {
            return "-";
        }
        match results.iter().find(|(j, rr, _)| *j == i && *rr == r) {
            Some((_, _, Ok(()))) => "pass",
            Some((_, _, Err(_))) => "FAIL",
            None => "?",
        }
    };
    let columns: Vec<(String, Runner)> = runners
        .iter()
        .filter(|r| **r != Runner::Bwrap)
        .chain(std::iter::once(&Runner::Bwrap))
        .map(|r| {
            (
                if *r == Runner::Bwrap {
                    "bwrap".to_string()
                } else {
                    format!("warden({})", r.name())
                },
                *r,
            )
        })
        .collect();
    let width = cases.iter().map(|c| c.name.len()).max().unwrap_or(4).max(4);
    let mut table = format!("{:width$}", "case");
    for (name, _) in &columns {
        table.push_str(&format!(" | {name}"));
    }
    table.push('\n');
    table.push_str(&"-".repeat(width));
    for (name, _) in &columns {
        table.push_str(&format!("-+-{}", "-".repeat(name.len())));
    }
    table.push('\n');
    for (i, c) in cases.iter().enumerate() {
        table.push_str(&format!("{:width$}", c.name));
        for (name, r) in &columns {
            table.push_str(&format!(" | {:w$}", cell(i, *r), w = name.len()));
        }
        table.push('\n');
    }
    let n = cases.len();
    let passed = |r: Runner| (0..n).filter(|&i| cell(i, r) == "pass").count();
    let warden_runners: Vec<Runner> = runners
        .iter()
        .copied()
        .filter(|r| *r != Runner::Bwrap)
        .collect();
    let warden_all = (0..n)
        .filter(|&i| {
            !warden_runners.is_empty() && warden_runners.iter().all(|r| cell(i, *r) == "pass")
        })
        .count();
    let mut per_user = Vec::new();
    for r in &warden_runners {
        per_user.push(format!("{} {}/{n}", r.name(), passed(*r)));
    }
    let bwrap_count = if bwrap && runners.contains(&Runner::Bwrap) {
        format!("{}/{n}", passed(Runner::Bwrap))
    } else {
        "not run".to_string()
    };
    table.push_str(&format!(
        "escape suite: warden {warden_all}/{n} ({}), bwrap {bwrap_count}\n",
        per_user.join(", ")
    ));
    let mut failures = Vec::new();
    for (i, r, v) in results {
        let Some(c) = cases.get(*i) else { continue };
        let root = fs::metadata("/proc/self")
            .map(|m| m.uid() == 0)
            .unwrap_or(false);
        let known = root
            && *r != Runner::Bwrap
            && KNOWN_GAPS
                .iter()
                .any(|(name, runner)| *name == c.name && *runner == r.name());
        match v {
            Err(why) => {
                let line = format!("  {} under {}: {}", c.name, r.name(), why.join(" | "));
                if *r == Runner::Bwrap {
                    table.push_str(&format!("bwrap (reference, not asserted):{}\n", line));
                } else if known {
                    table.push_str(&format!(
                        "KNOWN GAP (issue 3 stays open until it passes):{}\n",
                        line
                    ));
                } else {
                    failures.push(line);
                }
            }
            Ok(_) if known => failures.push(format!(
                "  {} under {}: passes now; remove it from KNOWN_GAPS",
                c.name,
                r.name()
            )),
            Ok(_) => {}
        }
    }
    // Straight to the descriptor: the test harness captures `print!`, and the table is the
    // point of the run whether it passes or fails.
    let _ = std::io::stderr().write_all(format!("\n{table}").as_bytes());
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} warden escape case runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Warden failures that are known and tracked, not hidden: printed as KNOWN GAP in every run,
/// and a failure of the suite as soon as one of them passes (so the list only shrinks).
const KNOWN_GAPS: &[(&str, &str)] = &[];

/// Plants, runs and judges one case under one runner.
fn run_one(case: &Case, runner: Runner) -> Verdict {
    let fx = Fixture::new(case.name, runner.name(), case.timeout)
        .map_err(|e| vec![format!("fixture: {e}")])?;
    let verdict = judge(case, runner, &fx);
    if verdict.is_ok() || std::env::var_os("ESCAPE_KEEP").is_none() {
        fx.remove();
    } else {
        eprintln!("kept {}", fx.root.display());
    }
    verdict
}

fn judge(case: &Case, runner: Runner, fx: &Fixture) -> Verdict {
    let mut attack = (case.plant)(fx).map_err(|e| vec![format!("plant: {e}")])?;
    attack.timeout = case.timeout;
    if matches!(runner, Runner::Warden(User::Unprivileged, _)) {
        fx.give_workspace_to_nobody().map_err(|e| vec![e])?;
    }
    let before = Snapshot::take(fx);
    let outcome = runner.run(fx, &attack);
    if !attack.settle.is_zero() {
        thread::sleep(attack.settle);
    }
    let mut why = Vec::new();
    // Survivors first: they may still be acting.
    let grace = Duration::from_millis(if attack.settle.is_zero() { 1000 } else { 300 });
    for (pid, cmd) in survivors(&fx.root, grace) {
        why.push(format!("process {pid} outlived the run: {cmd:?}"));
    }
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            why.insert(0, e);
            return Err(why);
        }
    };
    if std::env::var_os("ESCAPE_VERBOSE").is_some() {
        eprintln!(
            "{} under {}: {}",
            case.name,
            runner.name(),
            outcome.excerpt()
        );
    }
    why.extend(Snapshot::diff(&before, &Snapshot::take(fx)));
    if contains(outcome.output().as_bytes(), fx.token().as_bytes()) {
        why.push(format!(
            "a planted secret reached the output: {}",
            outcome.excerpt()
        ));
    }
    why.extend(loot_in_workspace(fx));
    let check = std::mem::replace(&mut attack.check, Box::new(|_, _| Ok(())));
    if let Err(e) = check(fx, &outcome) {
        why.push(e);
    }
    if let Runner::Warden(_, build) = runner {
        why.extend(wrong_denials(fx, &attack.expect, &outcome));
        // The view columns prove nothing unless the run really joined a prepared view.
        let in_view = outcome
            .sandbox
            .as_deref()
            .is_some_and(|s| s.contains("mount view prepared once"));
        if in_view != (build == Build::View) {
            why.push(format!(
                "ran in a prepared view: {in_view}, expected {}",
                build == Build::View
            ));
        }
        // A one-shot run without network starts in the process made while its policy loaded:
        // that is the process these cases attack.
        let ahead = outcome
            .sandbox
            .as_deref()
            .is_some_and(|s| s.contains("sandbox process started ahead"));
        let no_net = outcome.sandbox.as_deref().is_some_and(|s| s.contains("\"net\""));
        if build == Build::OneShot && no_net && !ahead {
            why.push("a one-shot run without network did not use the process started ahead".into());
        }
    }
    if why.is_empty() { Ok(()) } else { Err(why) }
}

/// Every reported denial must match one the case expects (missing ones are allowed), and say
/// how warden knows in a way its source allows: `seccomp` and `sweep` only from what warden saw
/// itself (`observed`), the layers attributed from the command's printed errors (`mount`,
/// `landlock`, `namespace`) only as `output`; `limit` either (a signal, or a printed error).
fn wrong_denials(fx: &Fixture, expect: &[(&'static str, String)], out: &Outcome) -> Vec<String> {
    let expect: Vec<(&str, String)> = expect.iter().map(|(op, t)| (*op, fx.expand(t))).collect();
    let consistent = |source: &str, evidence: &str| match source {
        "seccomp" | "sweep" => evidence == "observed",
        "landlock" | "mount" | "namespace" => evidence == "output",
        "limit" => matches!(evidence, "observed" | "output"),
        _ => false,
    };
    out.denials
        .iter()
        .filter(|d| {
            !consistent(&d.source, &d.evidence)
                || !expect
                    .iter()
                    .any(|(op, t)| d.op == *op && d.target.contains(t.as_str()))
        })
        .map(|d| {
            format!(
                "unexpected denial {{op: {}, target: {}, source: {}, evidence: {}}}; expected one of {expect:?}",
                d.op, d.target, d.source, d.evidence
            )
        })
        .collect()
}
