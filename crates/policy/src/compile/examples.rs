//! `example` statements: checked against their file alone (plus the `paths` sets of the layers
//! above it), with the workspace `/workspace`, the home `/home/user` and the working directory
//! at the workspace.

use super::sets::{FileAst, LayerAst};
use super::validate::Found;
use crate::ast::{Example, ExampleRequest, Policy, StatementKind};
use crate::decision::{Action, Context, Decision, Request};
use crate::error::{Code, Diagnostic};
use warden_shell::Analysis;

/// The context examples are decided in.
pub(crate) fn example_context() -> Context {
    Context {
        workspace: "/workspace".to_string(),
        home: "/home/user".to_string(),
        cwd: "/workspace".to_string(),
    }
}

/// The examples' commands, handed to the shell analyser ([`begin`]) before the files are
/// validated and compiled, so that they are parsed on its thread meanwhile.
pub(crate) struct Analysing {
    later: warden_shell::Later,
}

/// Starts analysing the command of every `example` of every file, in file order.
pub(crate) fn begin(layers: &[LayerAst]) -> Analysing {
    let commands: Vec<&str> = files(layers).flat_map(commands).collect();
    Analysing { later: warden_shell::analyse_all_later(&commands) }
}

fn files(layers: &[LayerAst]) -> impl Iterator<Item = &FileAst> {
    layers.iter().flat_map(|l| &l.files)
}

fn examples(p: &Policy) -> impl Iterator<Item = &Example> {
    p.statements.iter().filter_map(|st| match &st.kind {
        StatementKind::Example(ex) => Some(ex),
        _ => None,
    })
}

fn commands(file: &FileAst) -> impl Iterator<Item = &str> {
    examples(&file.policy).filter_map(|ex| match &ex.request {
        ExampleRequest::Command(cmd) => Some(cmd.node.as_str()),
        ExampleRequest::Tool { .. } => None,
    })
}

/// Checks the examples of every file that has none of its own errors. `whole` is the set
/// compiled from `layers` when they are one layer of one file (that file alone). `analysing`
/// is [`begin`] of the same `layers`.
pub(crate) fn check(
    layers: &[LayerAst],
    bad_files: &[usize],
    whole: Option<&super::PolicySet>,
    analysing: Analysing,
) -> Vec<Found> {
    let mut analyses = analysing.later.collect().into_iter();
    let mut out = Vec::new();
    for (li, layer) in layers.iter().enumerate() {
        for file in &layer.files {
            // This file's analyses, taken whether or not its examples are checked.
            let mine: Vec<Analysis> = analyses.by_ref().take(commands(file).count()).collect();
            if bad_files.contains(&file.order) || !has_examples(&file.policy) {
                continue;
            }
            if let Some(set) = whole {
                check_file(set, file, mine, &mut out);
                continue;
            }
            let alone = alone(layers, li, file);
            let set = super::assemble(&alone);
            check_file(&set, file, mine, &mut out);
        }
    }
    out
}

fn has_examples(p: &Policy) -> bool {
    examples(p).next().is_some()
}

/// One layer with the file alone, plus (as a second file with nothing but `paths` statements)
/// the sets of the layers above, so the file's references resolve.
fn alone(layers: &[LayerAst], li: usize, file: &FileAst) -> Vec<LayerAst> {
    let mut sets = Policy { statements: Vec::new(), trailing_comments: Vec::new() };
    for upper in layers.iter().take(li + 1).rev() {
        for f in &upper.files {
            if std::ptr::eq(f, file) {
                continue;
            }
            let paths = f.policy.statements.iter().filter(|s| matches!(s.kind, StatementKind::Paths { .. }));
            sets.statements.extend(paths.cloned());
        }
    }
    let mut files = vec![file.clone()];
    if !sets.statements.is_empty() {
        files.push(FileAst {
            name: file.name.clone(),
            text: String::new(),
            policy: sets,
            order: file.order,
            starts: vec![0],
        });
    }
    vec![LayerAst { kind: layers.get(li).map_or(crate::LayerKind::Cli, |l| l.kind), files }]
}

fn check_file(set: &super::PolicySet, file: &FileAst, analyses: Vec<Analysis>, out: &mut Vec<Found>) {
    let ctx = example_context();
    let mut analyses = analyses.into_iter();
    for ex in examples(&file.policy) {
        let agent = ex.agent.as_ref().map(|a| a.node.as_str());
        let decision = match &ex.request {
            ExampleRequest::Command(cmd) => {
                let analysis = analyses.next().unwrap_or_else(|| warden_shell::analyse(&cmd.node));
                set.decide_without_grants(&Request { agent, action: Action::Exec(&analysis) }, &ctx)
            }
            ExampleRequest::Tool { name, path } => {
                let action = Action::Tool { name: &name.node, path: path.as_ref().map(|p| p.node.as_str()) };
                set.decide_without_grants(&Request { agent, action }, &ctx)
            }
        };
        if decision.verdict == ex.verdict.node {
            continue;
        }
        let what = match &ex.request {
            ExampleRequest::Command(c) => format!("`{}`", c.node),
            ExampleRequest::Tool { name, path: Some(p) } => format!("tool `{}` on `{}`", name.node, p.node),
            ExampleRequest::Tool { name, path: None } => format!("tool `{}`", name.node),
        };
        let message = format!(
            "example expects {what} to be `{}` but the policy decides `{}` {}",
            ex.verdict.node.as_str(),
            decision.verdict.as_str(),
            by(&decision)
        );
        let d = Diagnostic::new(Code::ExampleFailed, &file.name, &file.text, ex.verdict.span.clone(), message)
            .with_help("fix the rules, or the example if the policy is right")
            .with_label(format!("decided {}", decision.verdict.as_str()));
        out.push((file.order, d));
    }
}

/// "by rule `...` at line N (reason)" or "by the default/opaque verdict (reason)".
fn by(d: &Decision) -> String {
    match d.rules().first() {
        Some(r) => format!("by `{}` at line {}: {}", r.text, r.line, d.reason()),
        None => format!("({})", d.reason()),
    }
}
