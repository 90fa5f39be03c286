//! The broken-policy corpus: each file in `tests/fixtures/broken/` holds one error and names the
//! first diagnostic expected in its first line, `# expect: CODE LINE:COLUMN` (the line counts
//! that first line).

use std::path::PathBuf;

use warden_policy::{Diagnostic, LayerKind, LayerSource, SourceFile};

/// Codes the parser itself reports; every other code is the validator's or the compiler's.
const PARSER_CODES: [&str; 4] = [
    "warden::parse",
    "warden::bad-value",
    "warden::source",
    "warden::version",
];

struct Case {
    name: String,
    text: String,
    code: String,
    line: u32,
    column: u32,
}

fn cases() -> Vec<Case> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/broken");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap_or_default();
        let expect = first.strip_prefix("# expect: ").unwrap_or_else(|| {
            panic!("{name}: the first line must be `# expect: CODE LINE:COLUMN`")
        });
        let (code, place) = expect.split_once(' ').unwrap();
        let (line, column) = place.trim().split_once(':').unwrap();
        out.push(Case {
            name,
            code: code.to_string(),
            line: line.parse().unwrap(),
            column: column.parse().unwrap(),
            text,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn matches(case: &Case, d: &Diagnostic) -> bool {
    d.code.as_str() == case.code && d.line == case.line && d.column == case.column
}

fn show(d: &Diagnostic) -> String {
    format!("{} (help: {})", d.short(), d.help.as_deref().unwrap_or("-"))
}

#[test]
fn the_corpus_is_large_and_well_formed() {
    let cases = cases();
    assert!(cases.len() >= 60, "only {} broken policies", cases.len());
    for case in &cases {
        assert!(case.name.ends_with(".policy"), "{}", case.name);
        assert!(case.line >= 1 && case.column >= 1, "{}", case.name);
    }
}

/// Syntax errors are found by `parse` at the expected place; the validation cases parse.
#[test]
fn parse_reports_syntax_errors_where_expected() {
    let mut wrong = Vec::new();
    for case in cases() {
        match warden_policy::parse(&case.name, &case.text) {
            Err(diags) => {
                let first = diags.0.first().expect("diagnostics are never empty");
                assert!(first.short().starts_with(&case.name), "{}", first.short());
                if !matches(&case, first) {
                    wrong.push(format!(
                        "{}: wanted {} {}:{}, got {}",
                        case.name,
                        case.code,
                        case.line,
                        case.column,
                        show(first)
                    ));
                }
            }
            Ok(_)
                if PARSER_CODES.contains(&case.code.as_str()) && case.code != "warden::version" =>
            {
                wrong.push(format!(
                    "{}: parsed, but {} was expected",
                    case.name, case.code
                ));
            }
            Ok(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "{} misreported:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Every case through `compile`: the first diagnostic has the expected code and place.
#[test]
fn compile_reports_every_broken_policy_where_expected() {
    let mut wrong = Vec::new();
    let cases = cases();
    for case in &cases {
        let layer = LayerSource {
            kind: LayerKind::Cli,
            files: vec![SourceFile {
                name: case.name.clone(),
                text: case.text.clone(),
            }],
        };
        match warden_policy::compile(&[layer]) {
            Ok(_) => wrong.push(format!("{}: compiled", case.name)),
            Err(diags) => {
                let first = diags.0.first().expect("diagnostics are never empty");
                if !first.short().starts_with(&case.name) || !matches(case, first) {
                    wrong.push(format!(
                        "{}: wanted {} {}:{}, got {}",
                        case.name,
                        case.code,
                        case.line,
                        case.column,
                        show(first)
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} misreported:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// Every diagnostic `parse` gives on the corpus, with its advice: a snapshot to review wording.
#[test]
fn parse_diagnostics_snapshot() {
    let mut lines = Vec::new();
    for case in cases() {
        if let Err(diags) = warden_policy::parse(&case.name, &case.text) {
            for d in &diags.0 {
                lines.push(d.short());
                if let Some(help) = &d.help {
                    lines.push(format!("    help: {help}"));
                }
            }
        }
    }
    insta::assert_snapshot!(lines.join("\n"));
}
