//! Oracle for `policy_parse`: one policy file through parse, format and compile.

use warden_policy::ast::Policy;
use warden_policy::{LayerKind, LayerSource, SourceFile};

use crate::FILE;

/// One layer of one file, named [`FILE`].
pub fn layer(kind: LayerKind, text: &str) -> LayerSource {
    LayerSource {
        kind,
        files: vec![SourceFile {
            name: FILE.to_owned(),
            text: text.to_owned(),
        }],
    }
}

/// Parses `text`; when it parses, the canonical print must re-parse to the same meaning and be
/// a fixed point of `format`. The fast parser must give exactly what pest and the tree builder
/// give. Compiling it as a `--policy` layer (which analyses its examples) must not panic.
pub fn check_policy_text(text: &str) {
    crate::panics::contain_brush_panics();
    check_fast_parser(text);
    if let Ok(ast) = warden_policy::parse(FILE, text) {
        check_format_round_trip(text, &ast);
    }
    let _ = warden_policy::compile(&[layer(LayerKind::Cli, text)]);
}

/// `parse(format(ast))` succeeds, means the same as `ast`, and prints the same again.
fn check_format_round_trip(text: &str, ast: &Policy) {
    let printed = warden_policy::format(ast);
    let reparsed = match warden_policy::parse(FILE, &printed) {
        Ok(p) => p,
        Err(d) => panic!(
            "the formatted policy does not parse: {d:?}\n--- input ---\n{text}\n--- formatted ---\n{printed}"
        ),
    };
    assert!(
        ast.same_meaning(&reparsed),
        "the formatted policy means something else\n--- input ---\n{text}\n--- formatted ---\n{printed}\n--- parsed ---\n{ast:#?}\n--- re-parsed ---\n{reparsed:#?}"
    );
    let again = warden_policy::format(&reparsed);
    assert!(
        printed == again,
        "format is not a fixed point\n--- input ---\n{text}\n--- formatted ---\n{printed}\n--- formatted twice ---\n{again}"
    );
}

/// The fast parser and pest agree: both `None`, or both `Some` of the same policy (spans and
/// comments included).
fn check_fast_parser(text: &str) {
    use warden_policy::differential;
    let pest = differential::pest(FILE, text);
    let fast = differential::fast(FILE, text);
    assert!(
        fast == pest,
        "the fast parser and pest disagree\n--- input ---\n{text:?}\n--- fast ---\n{fast:#?}\n--- pest ---\n{pest:#?}"
    );
}
