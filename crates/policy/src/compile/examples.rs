//! `example` statements: checked against their file alone (plus the `paths` sets of the layers
//! above it), with the workspace `/workspace`, the home `/home/user` and the working directory
//! at the workspace.

use super::sets::{FileAst, LayerAst};
use super::validate::Found;
use crate::ast::{ExampleRequest, Policy, StatementKind};
use crate::decision::{Action, Context, Decision, Request};
use crate::error::{Code, Diagnostic};

/// The context examples are decided in.
pub(crate) fn example_context() -> Context {
    Context {
        workspace: "/workspace".to_string(),
        home: "/home/user".to_string(),
        cwd: "/workspace".to_string(),
    }
}

/// Checks the examples of every file that has none of its own errors. `whole` is the set
/// compiled from `layers` when they are one layer of one file (that file alone).
pub(crate) fn check(layers: &[LayerAst], bad_files: &[usize], whole: Option<&super::PolicySet>) -> Vec<Found> {
    let mut out = Vec::new();
    for (li, layer) in layers.iter().enumerate() {
        for file in &layer.files {
            if bad_files.contains(&file.order) || !has_examples(&file.policy) {
                continue;
            }
            if let Some(set) = whole {
                check_file(set, file, &mut out);
                continue;
            }
            let alone = alone(layers, li, file);
            let set = super::assemble(&alone);
            check_file(&set, file, &mut out);
        }
    }
    out
}

fn has_examples(p: &Policy) -> bool {
    p.statements.iter().any(|s| matches!(s.kind, StatementKind::Example(_)))
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

fn check_file(set: &super::PolicySet, file: &FileAst, out: &mut Vec<Found>) {
    let ctx = example_context();
    let examples = file.policy.statements.iter().filter_map(|st| match &st.kind {
        StatementKind::Example(ex) => Some(ex),
        _ => None,
    });
    // Every command of the file analysed at once: one hand-over to the analyser's thread.
    let commands: Vec<&str> = examples
        .clone()
        .filter_map(|ex| match &ex.request {
            ExampleRequest::Command(cmd) => Some(cmd.node.as_str()),
            ExampleRequest::Tool { .. } => None,
        })
        .collect();
    let mut analyses = warden_shell::analyse_all(&commands).into_iter();
    for ex in examples {
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
