//! Property tests: no input makes the analyser fail internally, and wrapping a simple command
//! keeps its program and argv.

use proptest::prelude::*;
use warden_shell::analyse;

fn no_internal_error(input: &str) -> Result<(), TestCaseError> {
    let a = analyse(input);
    for o in &a.opaque {
        prop_assert!(!o.text.starts_with("internal error"), "{input:?}: {o:?}");
        prop_assert!(o.span.end <= input.len());
    }
    for c in &a.commands {
        prop_assert!(
            c.span.start <= c.span.end && c.span.end <= input.len(),
            "{input:?}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_strings_never_fail(input in "\\PC{0,200}") {
        no_internal_error(&input)?;
    }

    #[test]
    fn shellish_strings_never_fail(
        input in proptest::collection::vec(
            prop::sample::select(vec![
                "$(", ")", "(", "<<", "<<-", "EOF", "\n", "{", "}", ";", "|", "&", "'", "\"",
                "`", "$((", "))", "${", "case", " in ", "esac", "for ", " do ", "done", "if ",
                "then ", "fi", "a", " ", "\\", "<(", ">(", "[[", "]]", "=", "!", "#", "$'",
                "coproc ", "<<<", ">&", "2>", "*", "?", "@(", ";;", "x", "$", "-", "sh -c ",
                "sudo ", "env ", "eval ", "xargs ", "find -exec ", "f() ", "bash <<< ",
            ]),
            0..24,
        )
    ) {
        no_internal_error(&input.concat())?;
    }

    #[test]
    fn wrapping_keeps_program_and_argv(
        head in "w_[a-z]{0,6}",
        args in proptest::collection::vec("[a-z0-9_./][a-z0-9_./-]{0,7}", 0..5),
        wrapper in 0usize..7,
    ) {
        let plain = std::iter::once(head.clone()).chain(args.iter().cloned()).collect::<Vec<_>>().join(" ");
        let wrapped = match wrapper {
            0 => format!("bash -c '{plain}'"),
            1 => format!("sudo {plain}"),
            2 => format!("env {plain}"),
            3 => format!("( {plain} )"),
            4 => format!("echo $({plain})"),
            5 => format!("sudo -u root env A=1 timeout 5 sh -c \"{plain}\""),
            _ => format!("eval '{plain}'"),
        };
        let want = analyse(&plain);
        prop_assert_eq!(want.commands.len(), 1);
        let want = &want.commands[0];
        let got = analyse(&wrapped);
        let found = got.commands.iter().find(|c| c.program == want.program);
        prop_assert!(found.is_some(), "{wrapped}: {:?}", got.commands);
        prop_assert_eq!(&found.unwrap().argv, &want.argv, "{}", wrapped);
        prop_assert!(got.opaque.is_empty(), "{wrapped}: {:?}", got.opaque);
    }
}
