//! Hostile inputs: size, depth, the shapes that make brush-parser 0.4.0 abort, parse errors.

use crate::opaque;
use warden_shell::{MAX_INPUT, OpaqueReason, analyse};

#[test]
fn one_megabyte_is_too_large() {
    let input = "a".repeat(1 << 20);
    let a = analyse(&input);
    assert!(a.commands.is_empty());
    assert_eq!(a.opaque.len(), 1);
    assert_eq!(a.opaque[0].reason, OpaqueReason::TooLarge);
    assert_eq!(a.opaque[0].span, 0..input.len());
}

#[test]
fn just_over_the_limit_is_too_large() {
    let input = format!("echo {}", "a".repeat(MAX_INPUT));
    assert_eq!(opaque(&input), [OpaqueReason::TooLarge]);
}

#[test]
fn many_commands_are_capped_and_reported() {
    let input = "a;".repeat(MAX_INPUT / 2 - 1);
    let a = analyse(&input);
    assert_eq!(a.commands.len(), warden_shell::MAX_COMMANDS);
    assert!(a.opaque.iter().any(|o| o.reason == OpaqueReason::TooLarge));
}

#[test]
fn many_nested_strings_are_capped() {
    let input = "echo $(a) ".repeat(2000);
    let a = analyse(&input);
    assert!(a.opaque.iter().any(|o| o.reason == OpaqueReason::TooLarge));
}

#[test]
fn brush_heredoc_empty_delimiter_blowup_is_refused() {
    // `$(<<  ` made brush-parser 0.4.0 allocate until the process aborted.
    for input in [
        "$(<<  ",
        "echo \"$(cat <<  \"",
        "x=$(<<\t\t",
        "$(\n<<-  do ",
    ] {
        assert_eq!(opaque(input), [OpaqueReason::ParseError], "{input:?}");
    }
}

#[test]
fn brush_heredoc_blowup_inside_nested_strings_is_refused() {
    assert_eq!(opaque("bash -c '$(<<  '"), [OpaqueReason::ParseError]);
    assert_eq!(opaque("eval '$(<<  '"), [OpaqueReason::ParseError]);
}

#[test]
fn brush_unclosed_paren_run_is_refused_quickly() {
    assert_eq!(opaque(&"(".repeat(33)), [OpaqueReason::ParseError]);
    assert_eq!(opaque(&"(( ".repeat(40)), [OpaqueReason::ParseError]);
}

#[test]
fn deep_nesting_is_too_deep_not_a_stack_overflow() {
    let input = format!("{} true; {}", "{ ".repeat(5000), "} ".repeat(5000));
    assert_eq!(opaque(&input), [OpaqueReason::TooDeep]);
    let input = format!(
        "{} true {}",
        "while true; do ".repeat(2000),
        "; done".repeat(2000)
    );
    assert_eq!(opaque(&input), [OpaqueReason::TooDeep]);
}

#[test]
fn nesting_within_limits_is_walked() {
    let input = format!("{} rm x; {}", "{ ".repeat(60), "} ".repeat(60));
    let a = analyse(&input);
    assert_eq!(a.commands.len(), 1);
    let input = format!(
        "echo {}\"$(rm x)\"{}",
        "\"$(echo ".repeat(9),
        ")\"".repeat(9)
    );
    let a = analyse(&input);
    assert!(a.commands.iter().any(|c| c.program == "rm"));
}

#[test]
fn invalid_syntax_is_one_parse_error_never_empty() {
    for input in [
        "if then fi",
        "echo \"x",
        "a && ",
        "case",
        "for in do",
        "} {",
        "`unclosed",
    ] {
        let a = analyse(input);
        assert!(a.commands.is_empty(), "{input:?}");
        assert_eq!(a.opaque.len(), 1, "{input:?}");
        assert_eq!(a.opaque[0].reason, OpaqueReason::ParseError, "{input:?}");
        assert_eq!(a.opaque[0].span, 0..input.len());
    }
}

#[test]
fn control_characters_and_nul_do_not_break_the_analysis() {
    let a = analyse("echo \u{0}\u{7}\u{1b}[31m; rm x");
    assert!(a.commands.iter().any(|c| c.program == "rm") || !a.opaque.is_empty());
}

#[test]
fn exponential_function_fan_out_is_capped() {
    let mut input: String = (1..200)
        .map(|i| format!("f{i}() {{ f{n}; f{n}; }}; ", n = i + 1))
        .collect();
    input.push_str("f1");
    let a = analyse(&input);
    assert!(
        a.opaque.iter().any(|o| o.reason == OpaqueReason::TooLarge),
        "{:?}",
        a.opaque
    );
    assert!(
        a.opaque.len() < 10,
        "opaque parts are deduplicated: {}",
        a.opaque.len()
    );
}

#[test]
fn many_balanced_parens_in_one_word_are_not_deep() {
    let input = format!("echo {}", "$(a)".repeat(50));
    let a = analyse(&input);
    assert_eq!(a.commands.len(), 51);
    assert!(a.opaque.is_empty(), "{:?}", a.opaque);
}

#[test]
fn long_pipelines_are_capped_not_slow_to_fail() {
    let input = format!("{}a", "a|".repeat(20_000));
    let a = analyse(&input);
    assert_eq!(a.commands.len(), warden_shell::MAX_COMMANDS);
    assert!(a.opaque.iter().any(|o| o.reason == OpaqueReason::TooLarge));
}

/// Every input the fuzzer saved under `fuzz/regressions/shell_analyse/` is refused by the
/// guard before brush-parser sees it (a `parse_error` part), not rescued by the deadline.
#[test]
fn fuzz_regressions_are_refused_by_the_guard() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/shell_analyse");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("regressions folder") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let bytes = std::fs::read(&path).expect("read");
        let input = String::from_utf8_lossy(&bytes);
        let a = warden_shell::analyse(&input);
        assert!(
            a.opaque.iter().any(|o| o.reason == warden_shell::OpaqueReason::ParseError),
            "{}: {:?}",
            path.display(),
            a.opaque.iter().map(|o| o.reason).collect::<Vec<_>>()
        );
        seen += 1;
    }
    assert!(seen >= 3, "only {seen} regressions");
}
