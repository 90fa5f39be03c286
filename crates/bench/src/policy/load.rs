//! The `load` rows: what a one-shot `warden` process pays for its policy before it runs
//! anything. Parse, then parse + validate + compile + check the inline `example` lines, then
//! all of that plus analysing and deciding one command (`warden run -- /bin/true` in small),
//! and the compiled set read back from its bytes (what a one-shot load takes from warden's
//! compiled-policy cache instead of compiling: `warden_engine`'s `compiled.rs`). Measured on the embedded default and on `full-auto.policy` (the policy `spawn` runs).
//! No peer: Cedar has neither examples nor a shell analyser.

use std::hint::black_box;

use warden_policy::{Action, LayerKind, LayerSource, Request, SourceFile};

use super::{Budgets, measured, row};
use crate::stats::{Cell, Row, measure};

/// The shipped policies measured, with the layer they load as.
const POLICIES: [(&str, &str, LayerKind); 2] = [
    ("default", warden_policy::DEFAULT_POLICY, LayerKind::Builtin),
    (
        "full-auto",
        include_str!("../../../../policies/full-auto.policy"),
        LayerKind::Cli,
    ),
];

/// The command decided in the last row.
const COMMAND: &str = "/bin/true";

fn layers(name: &str, text: &str, kind: LayerKind) -> Vec<LayerSource> {
    vec![LayerSource {
        kind,
        files: vec![SourceFile {
            name: format!("policies/{name}.policy"),
            text: text.to_string(),
        }],
    }]
}

/// Compiles and decides [`COMMAND`]: the verdict, or why there is none.
fn load_and_decide(layers: &[LayerSource], ctx: &warden_policy::Context) -> Option<&'static str> {
    let set = warden_policy::compile(layers).ok()?;
    let analysis = warden_shell::analyse(COMMAND);
    let request = Request {
        agent: None,
        action: Action::Exec(&analysis),
    };
    Some(set.decide(&request, ctx).verdict.as_str())
}

/// The rows for every shipped policy measured.
pub(super) fn rows(budgets: &Budgets, ctx: &warden_policy::Context) -> Vec<Row> {
    let mut rows = Vec::new();
    for (name, text, kind) in POLICIES {
        let file = format!("policies/{name}.policy");
        let parse = match warden_policy::parse(&file, text) {
            Ok(_) => measured(
                measure(budgets.compile, || {
                    warden_policy::parse(black_box(&file), black_box(text)).is_ok()
                }),
                None,
            ),
            Err(_) => Cell::Missing(String::from("parse error")),
        };
        rows.push(row("load", &format!("{name}: parse"), None, parse, Cell::None));

        let layers = layers(name, text, kind);
        let compile = match warden_policy::compile(&layers) {
            Ok(_) => measured(
                measure(budgets.compile, || {
                    warden_policy::compile(black_box(&layers)).is_ok()
                }),
                None,
            ),
            Err(_) => Cell::Missing(String::from("compile error")),
        };
        rows.push(row(
            "load",
            &format!("{name}: parse+compile+examples"),
            None,
            compile,
            Cell::None,
        ));

        match warden_policy::compile(&layers) {
            Ok(set) => {
                let bytes = set.to_bytes();
                let cell = measured(
                    measure(budgets.compile, || warden_policy::PolicySet::from_bytes(black_box(&bytes)).is_some()),
                    None,
                );
                rows.push(row("load", &format!("{name}: compiled set read back ({} bytes)", bytes.len()), None, cell, Cell::None));
            }
            Err(_) => rows.push(row("load", &format!("{name}: compiled set read back"), None, Cell::Missing(String::from("compile error")), Cell::None)),
        }

        let whole = match load_and_decide(&layers, ctx) {
            Some(verdict) => measured(
                measure(budgets.compile, || load_and_decide(black_box(&layers), ctx)),
                Some(verdict),
            ),
            None => Cell::Missing(String::from("compile error")),
        };
        rows.push(row(
            "load",
            &format!("{name}: load + analyse + decide {COMMAND}"),
            None,
            whole,
            Cell::None,
        ));
    }
    rows
}
