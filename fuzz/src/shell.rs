//! Oracle for `shell_analyse`: spans, and `bash -c` nesting.

use std::collections::BTreeSet;
use std::ops::Range;

use warden_shell::{Analysis, OpaqueReason};

/// Analyses `input`; checks every span, and that wrapping the input in `bash -c '...'` finds
/// at least the same programs, unless the wrapped string is opaque as a whole (parse error,
/// too deep, too large).
pub fn check_analysis(input: &str) {
    crate::panics::contain_brush_panics();
    let analysis = crate::panics::analyse_checked(input);
    check_spans(input, &analysis);
    let Some(wrapped) = bash_c(input, &analysis) else {
        return;
    };
    let outer = crate::panics::analyse_checked(&wrapped);
    check_spans(&wrapped, &outer);
    // The nested string was not followed (too deep), or the outer string was refused as a
    // whole (warden-shell's guard is lexical and does not see the single quotes): both fail
    // closed, so losing the inner programs there is a loss of precision, not a hole.
    if outer.opaque.iter().any(|o| {
        matches!(
            o.reason,
            OpaqueReason::TooDeep | OpaqueReason::TooLarge | OpaqueReason::ParseError
        )
    }) {
        return;
    }
    let inner = programs(&analysis);
    let found = programs(&outer);
    let missing: Vec<&&str> = inner.difference(&found).collect();
    assert!(
        missing.is_empty(),
        "`bash -c` of a command string lost programs {missing:?}\n--- input ---\n{input:?}\n--- inner ---\n{analysis:#?}\n--- wrapped ---\n{outer:#?}"
    );
}

/// Every command and opaque span lies within `input` and on char boundaries.
pub fn check_spans(input: &str, analysis: &Analysis) {
    let commands = analysis.commands.iter().map(|c| &c.span);
    let opaque = analysis.opaque.iter().map(|o| &o.span);
    for span in commands.chain(opaque) {
        assert!(
            span_ok(input, span),
            "span {span:?} is outside the input ({} bytes) or not on a char boundary\n--- input ---\n{input:?}\n--- analysis ---\n{analysis:#?}",
            input.len()
        );
    }
}

fn span_ok(input: &str, span: &Range<usize>) -> bool {
    span.start <= span.end
        && span.end <= input.len()
        && input.is_char_boundary(span.start)
        && input.is_char_boundary(span.end)
}

/// `bash -c '<input>'`, when the nesting oracle applies: the input has commands, parsed
/// completely (no parse error, nothing too deep or too large), has no single quote to escape,
/// no NUL (not representable in an argv) and does not start like a shell option.
fn bash_c(input: &str, analysis: &Analysis) -> Option<String> {
    let applies = !analysis.commands.is_empty()
        && !input.contains(['\'', '\0'])
        && !input.trim_start().starts_with(['-', '+'])
        && !analysis.opaque.iter().any(|o| {
            matches!(
                o.reason,
                OpaqueReason::ParseError | OpaqueReason::TooDeep | OpaqueReason::TooLarge
            )
        });
    applies.then(|| format!("bash -c '{input}'"))
}

fn programs(analysis: &Analysis) -> BTreeSet<&str> {
    analysis
        .commands
        .iter()
        .map(|c| c.program.as_str())
        .collect()
}
