//! `warden test PATH...`: runs policy test files and reports per-rule coverage.

use crate::load::{PolicyArgs, absolute};
use crate::output::{CliError, policy_error};
use crate::testfile::{self, Case, CaseRequest, Line};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use warden_engine::{Engine, Query};
use warden_policy::{Context, Decision};

/// Arguments of `warden test`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Test files (`*.wtest`) or folders holding them.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Policies for test files that name none (`policy` lines take precedence).
    #[command(flatten)]
    policy: PolicyArgs,
}

/// Coverage of one set of layers: which rules some test reached.
struct Coverage {
    engine: Engine,
    hit: BTreeSet<usize>,
}

/// Runs every case of every file; exit 1 on any failure.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    let files = collect(&args.paths)?;
    let mut coverage: BTreeMap<Vec<PathBuf>, Coverage> = BTreeMap::new();
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in &files {
        let text = warden_engine::read_text(file)?;
        let lines = testfile::parse(&text).map_err(|e| CliError::Usage {
            message: format!("{}:{}:{}: {}", file.display(), e.line, e.column, e.message),
        })?;
        let dir = file.parent().unwrap_or(Path::new("."));
        let policies: Vec<PathBuf> = lines
            .iter()
            .filter_map(|l| match l {
                Line::Policy(p) => Some(absolute(dir, Path::new(p))),
                _ => None,
            })
            .collect();
        let policies = if policies.is_empty() { args.policy.policies.clone() } else { policies };
        let entry = match coverage.entry(policies.clone()) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(Coverage { engine: load(&policies, &args.policy)?, hit: BTreeSet::new() })
            }
        };
        let (p, f) = run_file(file, &lines, entry);
        passed += p;
        failed += f;
    }
    for (policies, cov) in &coverage {
        report_coverage(policies, cov);
    }
    println!("{passed} passed, {failed} failed");
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn load(policies: &[PathBuf], args: &PolicyArgs) -> Result<Engine, CliError> {
    let env = crate::load::environment()?;
    let layers = if policies.is_empty() {
        crate::load::layers(args, &env)?
    } else {
        warden_engine::load_files(policies)?
    };
    Engine::new(&layers, default_context()).map_err(|d| policy_error(&d))
}

fn default_context() -> Context {
    Context { workspace: "/workspace".into(), home: "/home/user".into(), cwd: "/workspace".into() }
}

/// Runs one file's cases; returns (passed, failed).
fn run_file(file: &Path, lines: &[Line], cov: &mut Coverage) -> (usize, usize) {
    let mut context = default_context();
    let mut cwd_set = false;
    let mut agent: Option<String> = None;
    let known = cov.engine.policy().agents();
    let (mut passed, mut failed) = (0, 0);
    for line in lines {
        match line {
            Line::Policy(_) => {}
            Line::Agent(a) => agent = a.clone(),
            Line::Workspace(w) => {
                context.workspace = w.clone();
                if !cwd_set {
                    context.cwd = w.clone();
                }
            }
            Line::Home(h) => context.home = h.clone(),
            Line::Cwd(c) => {
                context.cwd = c.clone();
                cwd_set = true;
            }
            Line::Case(case) => {
                // A misspelt agent would be denied everything, and every `deny` case pass.
                if let Some(a) = agent.as_ref().filter(|a| !known.contains(a)) {
                    failed += 1;
                    println!("FAIL {}:{}: agent `{a}` is not defined by the policy (defined: {})", file.display(), case.line, known.join(", "));
                    continue;
                }
                let engine = cov.engine.clone().with_context(context.clone());
                let query = match &case.request {
                    CaseRequest::Command(c) => Query::Command(c),
                    CaseRequest::Tool(name, path) => Query::Tool { name, path: path.as_deref() },
                };
                let decision = engine.explain(agent.as_deref(), query).decision;
                for part in decision.parts() {
                    cov.hit.extend(part.rules().iter().map(|r| r.id));
                }
                match mismatch(case, &decision) {
                    None => passed += 1,
                    Some(why) => {
                        failed += 1;
                        println!("FAIL {}:{}: {why}\n     reason: {}", file.display(), case.line, decision.reason());
                    }
                }
            }
        }
    }
    (passed, failed)
}

/// What differs between the expectation and the decision, if anything.
fn mismatch(case: &Case, decision: &Decision) -> Option<String> {
    if decision.verdict != case.verdict {
        return Some(format!("expected {}, got {}", case.verdict.as_str(), decision.verdict.as_str()));
    }
    if let Some(tier) = &case.tier
        && decision.tier() != Some(tier.as_str())
    {
        return Some(format!("expected tier {tier}, got {}", decision.tier().unwrap_or("none")));
    }
    if let Some((file, line)) = &case.rule {
        // The file as written, or its last components: `a.policy` names `x/a.policy`, never
        // `extra.policy`; an empty name names nothing.
        let named = |f: &str| !file.is_empty() && (f == file || f.ends_with(&format!("/{file}")));
        let found = decision.rules().iter().any(|r| r.line == *line && named(&r.file));
        if !found {
            let got: Vec<String> = decision.rules().iter().map(|r| format!("{}:{}", r.file, r.line)).collect();
            return Some(format!("expected rule {file}:{line}, got [{}]", got.join(", ")));
        }
    }
    None
}

fn report_coverage(policies: &[PathBuf], cov: &Coverage) {
    let rules = cov.engine.policy().rules();
    let names: Vec<String> = if policies.is_empty() {
        cov.engine.policy().layers().iter().flat_map(|l| l.files.clone()).collect()
    } else {
        policies.iter().map(|p| p.display().to_string()).collect()
    };
    println!("coverage of {}: {}/{} rules exercised", names.join(" + "), cov.hit.len(), rules.len());
    for rule in rules.iter().filter(|r| !cov.hit.contains(&r.id)) {
        println!("  not exercised: {}:{}:{}  {}", rule.file, rule.line, rule.column, rule.text);
    }
}

/// The test files named, folders searched for `*.wtest`, sorted.
fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut stack = vec![path.clone()];
            while let Some(dir) = stack.pop() {
                let entries = std::fs::read_dir(&dir).map_err(|source| CliError::Io {
                    action: "read",
                    path: dir.display().to_string(),
                    source,
                })?;
                for entry in entries.flatten() {
                    let p = entry.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.extension().is_some_and(|e| e == "wtest") {
                        files.push(p);
                    }
                }
            }
        } else {
            files.push(path.clone());
        }
    }
    // Policies named in a file resolve against the file's folder, wherever warden runs from.
    let mut files: Vec<PathBuf> = files
        .into_iter()
        .map(|f| std::path::absolute(&f).unwrap_or(f))
        .collect();
    files.sort();
    Ok(files)
}
