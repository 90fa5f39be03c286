//! Oracle for `policy_decide`: compile a generated policy, analyse and decide a request, and
//! check that a deny rule or a lower layer never loosens the decision.
//!
//! The policy starts from a compact base policy ([`generate::BASE`]) in one case in two;
//! otherwise it is generated statements alone.

pub mod generate;

use arbitrary::Arbitrary;
use warden_policy::ast::Verdict;
use warden_policy::{
    Action, Context, Decision, LayerKind, LayerSource, Request, SourceFile, compile,
};
use warden_shell::Analysis;

use generate::{PolicyGen, RequestGen};

/// One fuzz case: a policy, an optional lower layer, an optional agent, a request.
#[derive(Arbitrary, Debug)]
pub struct DecideInput {
    /// The policy.
    pub policy: PolicyGen,
    /// A project layer stacked under the policy, for the lower-layer oracle.
    pub lower: Option<PolicyGen>,
    /// Index into the agent names, if the request names an agent.
    pub agent: Option<u8>,
    /// The request.
    pub request: RequestGen,
}

/// The context of `example` checks: workspace `/workspace`, home `/home/user`.
fn ctx() -> Context {
    Context {
        workspace: String::from("/workspace"),
        home: String::from("/home/user"),
        cwd: String::from("/workspace"),
    }
}

fn file(kind: LayerKind, name: &str, text: &str) -> LayerSource {
    LayerSource {
        kind,
        files: vec![SourceFile {
            name: name.to_owned(),
            text: text.to_owned(),
        }],
    }
}

/// A name the policy language can take bare, so a rule naming it must match it exactly.
fn plain(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Runs the case and checks the oracles. Panics when one does not hold.
pub fn check(input: &DecideInput) {
    crate::panics::contain_brush_panics();
    let text = input.policy.render();
    let Ok(set) = compile(&[file(LayerKind::Cli, crate::FILE, &text)]) else {
        return;
    };
    let command;
    let analysis: Analysis;
    let tool;
    let action = match &input.request {
        RequestGen::Exec(toks) => {
            command = generate::command(toks);
            analysis = crate::panics::analyse_checked(&command);
            Action::Exec(&analysis)
        }
        RequestGen::Tool { name, path } => {
            tool = generate::tool_name(*name);
            Action::Tool {
                name: &tool,
                path: path.map(generate::tool_path),
            }
        }
    };
    let request = Request {
        agent: input.agent.map(generate::agent),
        action,
    };
    let before = set.decide(&request, &ctx());
    check_deny_rule(&text, &request, &before);
    if let Some(lower) = &input.lower {
        check_lower_layer(&text, &lower.render_own(), &request, &before);
    }
}

/// Adding `deny exec <first program>` (or `deny tools <name>`) never loosens the verdict, and
/// for a plain name makes it `deny`.
fn check_deny_rule(text: &str, request: &Request<'_>, before: &Decision) {
    let name = match request.action {
        Action::Exec(a) => match a.commands.first() {
            Some(c) if !c.program.is_empty() => c.program.clone(),
            _ => return,
        },
        Action::Tool { name, .. } => name.to_owned(),
    };
    let kind = if matches!(request.action, Action::Exec(_)) {
        "exec"
    } else {
        "tools"
    };
    let rule = format!("deny {kind} {}", generate::quote(&name));
    let with_rule = format!("{text}\n{rule}\n");
    let Ok(set) = compile(&[file(LayerKind::Cli, crate::FILE, &with_rule)]) else {
        return;
    };
    let after = set.decide(request, &ctx());
    assert!(
        after.verdict >= before.verdict,
        "adding `{rule}` loosened {:?} to {:?}\n--- request ---\n{request:#?}\n--- policy ---\n{with_rule}\n--- before ---\n{before:#?}\n--- after ---\n{after:#?}",
        before.verdict,
        after.verdict
    );
    assert!(
        !plain(&name) || after.verdict == Verdict::Deny,
        "`{rule}` did not deny its own {kind} `{name}`: {:?}\n--- request ---\n{request:#?}\n--- policy ---\n{with_rule}\n--- after ---\n{after:#?}",
        after.verdict
    );
}

/// Stacking a project layer under the policy never loosens what the policy alone decides.
fn check_lower_layer(top: &str, lower: &str, request: &Request<'_>, alone: &Decision) {
    let layers = [
        file(LayerKind::Cli, crate::FILE, top),
        file(LayerKind::Project, "lower.policy", lower),
    ];
    let Ok(stacked) = compile(&layers) else {
        return;
    };
    let under = stacked.decide(request, &ctx());
    assert!(
        under.verdict >= alone.verdict,
        "a project layer loosened {:?} to {:?}\n--- request ---\n{request:#?}\n--- policy ---\n{top}\n--- project layer ---\n{lower}\n--- policy alone ---\n{alone:#?}\n--- stacked ---\n{under:#?}",
        alone.verdict,
        under.verdict
    );
}
