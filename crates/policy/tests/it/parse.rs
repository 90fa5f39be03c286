//! Parsing: every valid fixture parses with spans that point at what they name; targeted checks
//! of each construct; hostile input never panics.

use std::path::PathBuf;

use warden_policy::ast::*;
use warden_policy::{Code, parse};

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/valid")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

fn valid_fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid");
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "policy"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

fn ok(text: &str) -> Policy {
    parse("t.policy", text).unwrap_or_else(|e| panic!("{e}\n{:#?}", e.0))
}

fn first_error(text: &str) -> warden_policy::Diagnostic {
    parse("t.policy", text)
        .expect_err("should not parse")
        .0
        .remove(0)
}

fn at<'a>(text: &'a str, span: &Span) -> &'a str {
    &text[span.clone()]
}

#[test]
fn every_valid_fixture_parses() {
    let fixtures = valid_fixtures();
    assert!(
        fixtures.len() >= 15,
        "only {} valid fixtures",
        fixtures.len()
    );
    for (name, text) in fixtures {
        let policy = parse(&name, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for st in &policy.statements {
            let s = at(&text, &st.span);
            assert!(
                !s.is_empty() && s.trim() == s,
                "{name}: statement span {:?} = {s:?}",
                st.span
            );
            for c in st.leading.iter().chain(st.trailing.iter()) {
                assert_eq!(at(&text, &c.span), format!("#{}", c.text), "{name}");
            }
        }
    }
}

#[test]
fn spans_point_at_names_and_values() {
    let text = fixture("reference.policy");
    let policy = ok(&text);
    let mut tiers = 0;
    for st in &policy.statements {
        match &st.kind {
            StatementKind::Version(v) => assert_eq!(at(&text, &v.span), "1"),
            StatementKind::Tier(t) => {
                tiers += 1;
                assert_eq!(at(&text, &t.name.span), t.name.node);
                assert!(at(&text, &st.span).starts_with("tier "));
                assert!(at(&text, &st.span).ends_with('}'));
                for item in &t.items {
                    let s = at(&text, &item.span);
                    assert!(
                        ["tools ", "exec ", "fs ", "pipe ", "net "]
                            .iter()
                            .any(|k| s.starts_with(k)),
                        "{s}"
                    );
                }
            }
            StatementKind::Paths { name, members } => {
                assert_eq!(at(&text, &name.span), name.node);
                for m in members {
                    if let PathRef::Pattern(p) = m {
                        assert_eq!(at(&text, &p.span), format!("\"{}\"", p.node));
                    }
                }
            }
            _ => {}
        }
    }
    assert_eq!(tiers, 3);
}

#[test]
fn comments_attach_where_they_stand() {
    let text = fixture("comments.policy");
    let p = ok(&text);
    let version = &p.statements[0];
    assert_eq!(version.leading.len(), 2);
    assert_eq!(
        version.trailing.as_ref().unwrap().text,
        " same-line comment after version"
    );
    let opaque = &p.statements[2];
    assert_eq!(
        opaque.trailing.as_ref().unwrap().text,
        "no space before this one"
    );
    let StatementKind::Tier(read) = &p.statements[4].kind else {
        panic!()
    };
    assert_eq!(
        p.statements[4].trailing.as_ref().unwrap().text,
        " on the line of the opening brace"
    );
    assert_eq!(read.items[0].leading[0].text, " leading, first item");
    assert_eq!(
        read.items[0].trailing.as_ref().unwrap().text,
        " trailing on an item"
    );
    assert_eq!(read.items[1].leading[0].text, " leading after a blank line");
    let ends: Vec<&str> = read.end_comments.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(ends, [" at the end of the body", " and a second one"]);
    // The comment after `}` found the same-line slot taken, so it leads the next statement.
    let empty = &p.statements[5];
    assert!(
        empty.leading[0]
            .text
            .starts_with(" after the closing brace")
    );
    let StatementKind::Tier(t) = &empty.kind else {
        panic!()
    };
    assert!(t.items.is_empty());
    assert_eq!(t.end_comments[0].text, " a body with only a comment");
    // Comments inside `limits { }` become leading comments of the block.
    let limits = &p.statements[6];
    assert!(matches!(limits.kind, StatementKind::Limits(ref l) if l.len() == 2));
    assert_eq!(limits.leading.len(), 2);
    let agent = &p.statements[7];
    assert_eq!(agent.trailing.as_ref().unwrap().text, " header comment");
    let trailing: Vec<&str> = p
        .trailing_comments
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(
        trailing,
        [
            " After the last statement, separated by nothing.",
            " And the very end of the file."
        ]
    );
}

#[test]
fn semicolons_and_one_line_bodies() {
    let p = ok(&fixture("semicolons.policy"));
    assert_eq!(p.statements.len(), 9);
    let StatementKind::Agent(y) = &p.statements[6].kind else {
        panic!("{:?}", p.statements[6].kind)
    };
    assert_eq!(y.items.len(), 3);
    assert!(matches!(&y.items[1].kind, ItemKind::Limits(l) if l.len() == 3));
    assert!(matches!(&y.items[2].kind, ItemKind::Standalone(s) if s.verdict.node == Verdict::Deny));
    let p = ok("agent x { tiers read; limits { timeout 1m } }");
    let StatementKind::Agent(x) = &p.statements[0].kind else {
        panic!()
    };
    assert!(matches!(&x.items[1].kind, ItemKind::Limits(l) if l[0].node == Limit::Timeout(60_000)));
}

#[test]
fn exec_patterns_keep_their_structure() {
    let p = ok(
        "deny exec git (reset --hard | clean) unless (-n | --dry-run) with -f*, (curl | wget) \"a b\"\n",
    );
    let StatementKind::Rule(r) = &p.statements[0].kind else {
        panic!()
    };
    let Rule::Exec(patterns) = &r.rule else {
        panic!()
    };
    assert_eq!(patterns.len(), 2);
    let git = &patterns[0];
    assert_eq!(git.command.len(), 1);
    assert_eq!(git.args.len(), 1);
    let alts: Vec<Vec<&str>> = git.args[0]
        .alternatives
        .iter()
        .map(|seq| seq.iter().map(|t| t.node.as_str()).collect())
        .collect();
    assert_eq!(alts, vec![vec!["reset", "--hard"], vec!["clean"]]);
    assert_eq!(git.conditions.len(), 2);
    assert_eq!(git.conditions[0].kind, ConditionKind::Unless);
    assert_eq!(git.conditions[0].flags.len(), 2);
    assert_eq!(git.conditions[1].kind, ConditionKind::With);
    let curl = &patterns[1];
    let cmds: Vec<&str> = curl.command.iter().map(|t| t.node.as_str()).collect();
    assert_eq!(cmds, ["curl", "wget"]);
    assert_eq!(curl.args[0].alternatives[0][0].node, "a b");
}

#[test]
fn quoted_keywords_are_literals() {
    let p = ok("deny exec echo \"unless\" \"with\" \"into\"\n");
    let StatementKind::Rule(r) = &p.statements[0].kind else {
        panic!()
    };
    let Rule::Exec(patterns) = &r.rule else {
        panic!()
    };
    assert_eq!(patterns[0].args.len(), 3);
    assert!(patterns[0].conditions.is_empty());
}

#[test]
fn fs_rules_tell_patterns_from_sets() {
    let p = ok("deny fs write system, \"/etc/**\" except \"/etc/hosts\", local\n");
    let StatementKind::Rule(r) = &p.statements[0].kind else {
        panic!()
    };
    let Rule::Fs {
        access,
        paths,
        except,
    } = &r.rule
    else {
        panic!()
    };
    assert_eq!(access.node, FsAccess::Write);
    assert!(matches!(&paths[0], PathRef::Set(s) if s.node == "system"));
    assert!(matches!(&paths[1], PathRef::Pattern(s) if s.node == "/etc/**"));
    assert!(matches!(&except[1], PathRef::Set(s) if s.node == "local"));
}

#[test]
fn limits_parse_units() {
    let p = ok(&fixture("limits.policy"));
    let StatementKind::Limits(l) = &p.statements[1].kind else {
        panic!()
    };
    let values: Vec<Limit> = l.iter().map(|l| l.node).collect();
    assert_eq!(
        values,
        [
            Limit::Timeout(500),
            Limit::Memory(2 << 30),
            Limit::Processes(128),
            Limit::Output(1 << 20),
            Limit::FileSize(256 << 20),
            Limit::Files(1024)
        ]
    );
    let StatementKind::Limits(l) = &p.statements[2].kind else {
        panic!()
    };
    let values: Vec<Limit> = l.iter().map(|l| l.node).collect();
    assert_eq!(
        values,
        [
            Limit::Timeout(30_000),
            Limit::Memory(512_000_000),
            Limit::Output(64_000),
            Limit::FileSize(1_000_000_000),
            Limit::Memory(17),
            Limit::Output(3)
        ]
    );
}

#[test]
fn strings_unescape() {
    let p = ok(&fixture("examples.policy"));
    let last = p.statements.last().unwrap();
    let StatementKind::Example(e) = &last.kind else {
        panic!()
    };
    let ExampleRequest::Command(c) = &e.request else {
        panic!()
    };
    assert_eq!(c.node, "echo \"quoted\" \\ back\tslash\nnewline");
}

#[test]
fn examples_take_every_form() {
    let p = ok(&fixture("examples.policy"));
    let examples: Vec<&Example> = p
        .statements
        .iter()
        .filter_map(|s| {
            if let StatementKind::Example(e) = &s.kind {
                Some(e)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(examples.len(), 8);
    assert!(
        matches!(&examples[2].request, ExampleRequest::Tool { name, path: Some(p) } if name.node == "write_file" && p.node == "src/main.rs")
    );
    assert!(matches!(
        &examples[3].request,
        ExampleRequest::Tool { path: None, .. }
    ));
    assert_eq!(examples[6].agent.as_ref().unwrap().node, "reviewer");
}

#[test]
fn sandbox_and_lock() {
    let p = ok(&fixture("env_sandbox.policy"));
    let StatementKind::Agent(a) = &p.statements.last().unwrap().kind else {
        panic!()
    };
    assert!(
        matches!(&a.items[0].kind, ItemKind::Sandbox(s) if s.node == Sandbox::Wasi { image: Some(String::from("images/runner v2.wasm")) })
    );
    let p = ok(&fixture("lock.policy"));
    let StatementKind::Tier(t) = &p.statements[1].kind else {
        panic!()
    };
    assert!(t.lock.is_some());
    assert_eq!(t.reason.as_ref().unwrap().node, "what CI may always do");
    let StatementKind::Rule(r) = &p.statements[2].kind else {
        panic!()
    };
    assert!(r.lock.is_some());
}

#[test]
fn crlf_line_endings() {
    let p = ok(&fixture("crlf.policy"));
    assert_eq!(p.statements.len(), 3);
    assert_eq!(p.statements[1].leading[0].text, " windows line endings");
    let StatementKind::Tier(t) = &p.statements[1].kind else {
        panic!()
    };
    assert_eq!(t.items[0].trailing.as_ref().unwrap().text, " listing");
}

#[test]
fn empty_and_comment_only_files_parse() {
    assert!(ok("").statements.is_empty());
    let p = ok(&fixture("only_comments.policy"));
    assert!(p.statements.is_empty());
    assert_eq!(p.trailing_comments.len(), 2);
}

#[test]
fn keywords_need_a_boundary() {
    // `tiering` is not `tier`, `denyx` is not `deny`.
    assert_eq!(first_error("tiering x: allow { }").code, Code::Parse);
    assert_eq!(first_error("denyx exec rm").code, Code::Parse);
}

#[test]
fn errors_name_the_place_and_the_fix() {
    let d = first_error("version 1\ntier read: alow {\n}\n");
    assert_eq!((d.line, d.column), (2, 12));
    assert_eq!(
        d.message,
        "expected a verdict (`allow`, `ask` or `deny`), found `alow`"
    );
    assert_eq!(d.help.as_deref(), Some("did you mean `allow`?"));
    assert_eq!(
        d.short(),
        "t.policy:2:12: warden::parse: expected a verdict (`allow`, `ask` or `deny`), found `alow`"
    );

    let d = first_error("limits { memory 99999999999GiB }");
    assert_eq!(d.code, Code::BadValue);
    let d = first_error("limits { cpus 2 }");
    assert_eq!(d.code, Code::BadValue);
    assert!(d.help.unwrap().contains("`timeout`, `memory`"));
}

#[test]
fn several_value_errors_are_all_reported() {
    let e = parse("t", "limits { timeout 1x, memory 2y }\ndeny exec \"\\q\"\n").unwrap_err();
    let places: Vec<(u32, u32)> = e.0.iter().map(|d| (d.line, d.column)).collect();
    assert_eq!(places, [(1, 19), (1, 30), (2, 12)]);
}

#[test]
fn hostile_input_is_refused_not_crashed() {
    let big = "#".repeat(1024 * 1024 + 1);
    assert_eq!(first_error(&big).code, Code::Source);
    assert_eq!(first_error("version 1\0").code, Code::Source);
    // Long and deep input stays linear and bounded: no recursion in the grammar.
    let parens = format!("deny exec a {}\n", "(".repeat(100_000));
    assert_eq!(first_error(&parens).code, Code::Parse);
    let many = "deny exec rm\n".repeat(20_000);
    assert_eq!(ok(&many).statements.len(), 20_000);
    let wide = format!("deny exec {}\n", vec!["x"; 50_000].join(", "));
    assert_eq!(ok(&wide).statements.len(), 1);
}

mod never_panics {
    use proptest::prelude::*;

    fn fixtures() -> Vec<String> {
        super::valid_fixtures()
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    }

    #[derive(Debug, Clone)]
    enum Edit {
        Insert(usize, char),
        Delete(usize),
        Replace(usize, char),
    }

    fn edit() -> impl Strategy<Value = Edit> {
        let c = prop_oneof![
            Just('{'),
            Just('}'),
            Just('('),
            Just(')'),
            Just('|'),
            Just('"'),
            Just('\\'),
            Just('#'),
            Just('\n'),
            Just(';'),
            Just(','),
            Just(':'),
            Just(' '),
            Just('\0'),
            any::<char>(),
        ];
        prop_oneof![
            (any::<usize>(), c.clone()).prop_map(|(i, c)| Edit::Insert(i, c)),
            any::<usize>().prop_map(Edit::Delete),
            (any::<usize>(), c).prop_map(|(i, c)| Edit::Replace(i, c)),
        ]
    }

    fn apply(text: &str, edits: &[Edit]) -> String {
        let mut chars: Vec<char> = text.chars().collect();
        for e in edits {
            let len = chars.len().max(1);
            match *e {
                Edit::Insert(i, c) => chars.insert(i % (chars.len() + 1), c),
                Edit::Delete(i) if !chars.is_empty() => {
                    chars.remove(i % len);
                }
                Edit::Replace(i, c) if !chars.is_empty() => chars[i % len] = c,
                _ => {}
            }
        }
        chars.into_iter().collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        #[test]
        fn on_arbitrary_strings(text in "\\PC{0,200}") {
            let _ = warden_policy::parse("fuzz.policy", &text);
        }

        #[test]
        fn on_policy_shaped_noise(text in "[a-z {}()|\",:;#\\\\\n=*-]{0,300}") {
            let _ = warden_policy::parse("fuzz.policy", &text);
        }

        #[test]
        fn on_mutated_fixtures(which in any::<usize>(), edits in prop::collection::vec(edit(), 1..6)) {
            let fixtures = fixtures();
            let text = apply(&fixtures[which % fixtures.len()], &edits);
            match warden_policy::parse("fuzz.policy", &text) {
                Ok(policy) => {
                    // Whatever parses also prints and parses back to the same meaning.
                    let printed = warden_policy::format(&policy);
                    let again = warden_policy::parse("fuzz.policy", &printed);
                    prop_assert!(again.is_ok(), "{printed}");
                    prop_assert!(policy.same_meaning(&again.unwrap()));
                }
                Err(diags) => {
                    prop_assert!(!diags.0.is_empty());
                    for d in &diags.0 {
                        prop_assert!(d.span.start <= text.len() && d.span.end <= text.len());
                        prop_assert!(d.short().starts_with("fuzz.policy:"));
                    }
                }
            }
        }
    }
}

#[test]
fn a_byte_order_mark_is_ignored() {
    let p = ok("\u{FEFF}version 1\n");
    assert!(matches!(p.statements[0].kind, StatementKind::Version(ref v) if v.node == 1));
    // Only at the very start.
    assert_eq!(first_error("version 1\n\u{FEFF}deny exec rm\n").line, 2);
}

#[test]
fn into_is_reserved_only_on_the_feeding_side_of_pipe() {
    let p = ok("deny exec merge into main\ndeny pipe cat \"into\" into (sh | bash) into\n");
    let StatementKind::Rule(r) = &p.statements[0].kind else {
        panic!()
    };
    let Rule::Exec(patterns) = &r.rule else {
        panic!()
    };
    assert_eq!(patterns[0].args.len(), 2);
    let StatementKind::Rule(r) = &p.statements[1].kind else {
        panic!()
    };
    let Rule::Pipe { from, into } = &r.rule else {
        panic!()
    };
    assert_eq!(from.args[0].alternatives[0][0].node, "into");
    assert_eq!(into.command.len(), 2);
    assert_eq!(into.args[0].alternatives[0][0].node, "into");
    assert_eq!(first_error("deny pipe cat into\n").code, Code::Parse);
}

#[test]
fn diagnostics_are_capped() {
    // Each diagnostic holds a copy of the text: thousands of errors must not multiply it.
    let values = "limits { timeout 1x }\n".repeat(5_000);
    let e = parse("t", &values).unwrap_err();
    assert_eq!(e.0.len(), 20);
    let escapes = "deny exec \"\\q\"\n".repeat(5_000);
    let e = parse("t", &escapes).unwrap_err();
    assert_eq!(e.0.len(), 20);
    assert!(e.0.windows(2).all(|w| w[0].span.start < w[1].span.start));
}

#[test]
fn several_syntax_errors_are_reported_at_once() {
    let text = "version 1\nalow exec ls\ntier read: allow {\n    exce ls\n    exec cat\n}\ndefault mayb\nlimits { timeout 1x }\n";
    let e = parse("t", text).unwrap_err();
    let got: Vec<String> =
        e.0.iter()
            .map(|d| format!("{}:{} {}", d.line, d.column, d.code))
            .collect();
    assert_eq!(
        got,
        [
            "2:1 warden::parse",
            "4:5 warden::parse",
            "7:9 warden::parse",
            "8:19 warden::bad-value"
        ]
    );
    // A line that opens a body is not skipped: nothing after it is guessed at.
    let e = parse("t", "tier read allow {\n    exce ls\n}\n").unwrap_err();
    assert_eq!(e.0.len(), 1);
}
