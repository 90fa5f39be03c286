//! `compile_deferred`: the set at once and its examples checked later give exactly what
//! `compile` gives, errors and all.

use warden_policy::{Diagnostics, LayerKind, LayerSource, SourceFile, compile, compile_deferred};

use crate::decide::decide;

const GOOD: &str = "version 1\ndefault ask\ntier read: allow { exec ls, cat }\ndeny exec rm\nexample allow \"ls -l\"\nexample deny \"rm -rf x\"\n";
const WRONG: &str = "version 1\ndefault ask\ntier read: allow { exec ls }\nexample allow \"cat x\"\nexample deny \"ls\"\n";
const BROKEN: &str = "version 1\ndefault ask\ntier read: allow { exec ls\nexample allow \"cat x\"\n";
const LOWER_WRONG: &str = "version 1\ndeny exec cat\nexample allow \"cat x\"\n";

fn layers(files: &[&[&str]]) -> Vec<LayerSource> {
    let kinds = [LayerKind::Enterprise, LayerKind::User, LayerKind::Project];
    files
        .iter()
        .enumerate()
        .map(|(i, texts)| LayerSource {
            kind: kinds.get(i).copied().unwrap_or(LayerKind::Directory),
            files: texts.iter().enumerate().map(|(j, t)| SourceFile { name: format!("l{i}f{j}.policy"), text: t.to_string() }).collect(),
        })
        .collect()
}

fn shown(d: &Diagnostics) -> Vec<String> {
    d.0.iter().map(|d| format!("{d:?}")).collect()
}

#[test]
fn deferred_examples_give_what_compile_gives() {
    let cases: &[&[&[&str]]] = &[&[&[GOOD]], &[&[WRONG]], &[&[BROKEN]], &[&[GOOD], &[LOWER_WRONG]], &[&[GOOD, WRONG]], &[&[WRONG], &[BROKEN]]];
    for (i, case) in cases.iter().enumerate() {
        let l = layers(case);
        let whole = compile(&l);
        let deferred = compile_deferred(&l).and_then(|(set, examples)| examples.check(&set).map(|()| set));
        match (&whole, &deferred) {
            (Ok(a), Ok(b)) => {
                for req in ["ls", "cat x", "rm -rf x", "echo hi"] {
                    assert_eq!(decide(a, None, req).verdict, decide(b, None, req).verdict, "case {i}: {req}");
                }
            }
            (Err(a), Err(b)) => assert_eq!(shown(a), shown(b), "case {i}"),
            _ => panic!("case {i}: compile gave {:?}, the deferred check {:?}", whole.is_ok(), deferred.is_ok()),
        }
    }
    // The cases cover both outcomes, and a failing example is found only by the check.
    assert!(compile(&layers(&[&[GOOD]])).is_ok());
    let (set, examples) = compile_deferred(&layers(&[&[WRONG]])).unwrap();
    let failed = examples.check(&set).unwrap_err();
    assert_eq!(failed.0.len(), 2, "{failed:?}");
    assert!(compile_deferred(&layers(&[&[BROKEN]])).is_err(), "an invalid policy is refused at once");
}
