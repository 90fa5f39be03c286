//! The printer: round-trips and idempotence over the valid fixtures, and over random ASTs.

use std::path::PathBuf;

fn valid_fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "policy") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    out.sort();
    assert!(!out.is_empty());
    out
}

#[test]
fn fixtures_round_trip_and_are_idempotent() {
    for (name, text) in valid_fixtures() {
        let policy = warden_policy::parse(&name, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let printed = warden_policy::format(&policy);
        let reparsed = warden_policy::parse(&name, &printed)
            .unwrap_or_else(|e| panic!("{name}: printed text does not parse: {e}\n{printed}"));
        assert!(
            policy.same_meaning(&reparsed),
            "{name}: meaning changed\n{printed}"
        );
        let again = warden_policy::format(&reparsed);
        assert_eq!(printed, again, "{name}: format is not idempotent");
    }
}

/// The canonical form of every valid fixture, as a snapshot to review layout.
#[test]
fn fixtures_canonical_form() {
    for (name, text) in valid_fixtures() {
        let printed = warden_policy::format_source(&name, &text).unwrap();
        insta::assert_snapshot!(name.trim_end_matches(".policy"), printed);
    }
}

/// A miette report of a parse error, as a person sees it.
#[test]
fn a_rendered_diagnostic() {
    let text = "version 1\ntier read: alow {\n    exec ls\n}\n";
    let diags = warden_policy::parse("p.policy", text).unwrap_err();
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor());
    let mut out = String::new();
    handler.render_report(&mut out, &diags.0[0]).unwrap();
    insta::assert_snapshot!(out);
}

mod generated {
    //! Random ASTs: print, parse back, same meaning; printing is idempotent.

    use proptest::prelude::*;
    use warden_policy::ast::*;

    fn sp<T>(node: T) -> Spanned<T> {
        Spanned { node, span: 0..0 }
    }

    fn name() -> impl Strategy<Value = String> {
        "[a-z_][a-z0-9_.-]{0,6}".prop_filter("reserved after a path list", |s| s != "except")
    }

    /// Any text a token may hold (no NUL, which a policy file may not contain).
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z][a-z0-9_.*-]{0,8}",
            Just(String::from("unless")),
            Just(String::from("with")),
            Just(String::from("into")),
            "[ -~]{0,10}",
            "[a-z \"\\\\\n\t#,|(){};é✓]{0,8}",
        ]
    }

    fn comment() -> impl Strategy<Value = Comment> {
        "[ -~é]{0,16}".prop_map(|text| Comment { text, span: 0..0 })
    }

    fn comments() -> impl Strategy<Value = Vec<Comment>> {
        prop::collection::vec(comment(), 0..3)
    }

    fn verdict() -> impl Strategy<Value = Verdict> {
        prop_oneof![
            Just(Verdict::Allow),
            Just(Verdict::Ask),
            Just(Verdict::Deny)
        ]
    }

    fn tokens(max: usize) -> impl Strategy<Value = Vec<Spanned<String>>> {
        prop::collection::vec(text().prop_map(sp), 1..max)
    }

    fn path_ref() -> impl Strategy<Value = PathRef> {
        prop_oneof![
            text().prop_map(|s| PathRef::Pattern(sp(s))),
            name().prop_map(|s| PathRef::Set(sp(s))),
        ]
    }

    fn paths() -> impl Strategy<Value = Vec<PathRef>> {
        prop::collection::vec(path_ref(), 1..4)
    }

    fn pattern() -> impl Strategy<Value = ExecPattern> {
        let arg = prop::collection::vec(tokens(3), 1..3).prop_map(|alternatives| ArgAlt {
            alternatives,
            span: 0..0,
        });
        let kind = prop_oneof![Just(ConditionKind::Unless), Just(ConditionKind::With)];
        let condition = (kind, tokens(3)).prop_map(|(kind, flags)| Condition {
            kind,
            flags,
            span: 0..0,
        });
        (
            tokens(3),
            prop::collection::vec(arg, 0..3),
            prop::collection::vec(condition, 0..2),
        )
            .prop_map(|(command, args, conditions)| ExecPattern {
                command: command.into(),
                args,
                conditions,
                span: 0..0,
            })
    }

    fn rule() -> impl Strategy<Value = Rule> {
        let access = prop_oneof![Just(FsAccess::Read), Just(FsAccess::Write)];
        let net = prop_oneof![
            Just(Net::None),
            Just(Net::Any),
            tokens(3).prop_map(Net::Hosts),
        ];
        prop_oneof![
            tokens(4).prop_map(Rule::Tools),
            prop::collection::vec(pattern(), 1..3).prop_map(Rule::Exec),
            (pattern(), pattern()).prop_map(|(from, into)| Rule::Pipe { from, into }),
            (access, paths(), prop::option::of(paths())).prop_map(|(a, paths, except)| Rule::Fs {
                access: sp(a),
                paths,
                except: except.unwrap_or_default(),
            }),
            net.prop_map(|n| Rule::Net(sp(n))),
        ]
    }

    fn standalone() -> impl Strategy<Value = StandaloneRule> {
        (any::<bool>(), verdict(), prop::option::of(text()), rule()).prop_map(
            |(lock, v, reason, rule)| StandaloneRule {
                lock: lock.then_some(0..0),
                verdict: sp(v),
                reason: reason.map(sp),
                rule,
            },
        )
    }

    fn limits() -> impl Strategy<Value = Vec<Spanned<Limit>>> {
        let limit = prop_oneof![
            any::<u64>().prop_map(Limit::Timeout),
            any::<u64>().prop_map(Limit::Memory),
            any::<u64>().prop_map(Limit::Processes),
            (0u64..5000).prop_map(|n| Limit::Output(n * 1024)),
            any::<u64>().prop_map(Limit::FileSize),
            any::<u64>().prop_map(Limit::Files),
            any::<u64>().prop_map(Limit::Commands),
            any::<u64>().prop_map(Limit::TotalTime),
            any::<u64>().prop_map(Limit::TotalOutput),
        ];
        prop::collection::vec(limit.prop_map(sp), 0..3)
    }

    fn sandbox() -> impl Strategy<Value = Sandbox> {
        prop_oneof![
            Just(Sandbox::Native),
            prop::option::of(text()).prop_map(|image| Sandbox::Wasi { image }),
        ]
    }

    fn item() -> impl Strategy<Value = Item> {
        let kind = prop_oneof![
            rule().prop_map(ItemKind::Rule),
            standalone().prop_map(ItemKind::Standalone),
            limits().prop_map(ItemKind::Limits),
            tokens(3).prop_map(ItemKind::Env),
            sandbox().prop_map(|s| ItemKind::Sandbox(sp(s))),
            prop::collection::vec(name().prop_map(sp), 1..3).prop_map(ItemKind::Tiers),
            verdict().prop_map(|v| ItemKind::Default(sp(v))),
            verdict().prop_map(|v| ItemKind::Opaque(sp(v))),
        ];
        (comments(), prop::option::of(comment()), kind).prop_map(|(leading, trailing, kind)| Item {
            leading,
            trailing,
            kind,
            span: 0..0,
        })
    }

    fn statement_kind() -> impl Strategy<Value = StatementKind> {
        let items = || prop::collection::vec(item(), 0..4);
        let tier = (
            any::<bool>(),
            name(),
            verdict(),
            prop::option::of(text()),
            items(),
            comments(),
        )
            .prop_map(|(lock, n, v, reason, items, end_comments)| {
                StatementKind::Tier(Tier {
                    lock: lock.then_some(0..0),
                    name: sp(n),
                    verdict: sp(v),
                    reason: reason.map(sp),
                    items,
                    end_comments,
                })
            });
        let agent = (name(), prop::option::of(name()), items(), comments()).prop_map(
            |(n, extends, items, end_comments)| {
                StatementKind::Agent(Agent {
                    name: sp(n),
                    extends: extends.map(sp),
                    items,
                    end_comments,
                })
            },
        );
        let request = prop_oneof![
            text().prop_map(|c| ExampleRequest::Command(sp(c))),
            (text(), prop::option::of(text())).prop_map(|(n, p)| ExampleRequest::Tool {
                name: sp(n),
                path: p.map(sp)
            }),
        ];
        let example =
            (verdict(), prop::option::of(name()), request).prop_map(|(v, agent, request)| {
                StatementKind::Example(Example {
                    verdict: sp(v),
                    agent: agent.map(sp),
                    request,
                })
            });
        prop_oneof![
            any::<u32>().prop_map(|v| StatementKind::Version(sp(v))),
            verdict().prop_map(|v| StatementKind::Default(sp(v))),
            verdict().prop_map(|v| StatementKind::Opaque(sp(v))),
            (name(), paths()).prop_map(|(n, members)| StatementKind::Paths {
                name: sp(n),
                members
            }),
            tier,
            standalone().prop_map(StatementKind::Rule),
            limits().prop_map(StatementKind::Limits),
            tokens(3).prop_map(StatementKind::Env),
            sandbox().prop_map(|s| StatementKind::Sandbox(sp(s))),
            agent,
            example,
        ]
    }

    fn policy() -> impl Strategy<Value = Policy> {
        let statement = (comments(), prop::option::of(comment()), statement_kind()).prop_map(
            |(leading, trailing, kind)| Statement {
                leading,
                trailing,
                kind,
                span: 0..0,
            },
        );
        (prop::collection::vec(statement, 0..6), comments()).prop_map(
            |(statements, trailing_comments)| Policy {
                statements,
                trailing_comments,
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn print_parse_round_trips(policy in policy()) {
            let printed = warden_policy::format(&policy);
            let parsed = match warden_policy::parse("gen.policy", &printed) {
                Ok(p) => p,
                Err(e) => panic!("printed text does not parse: {e}\n---\n{printed}"),
            };
            prop_assert!(policy.same_meaning(&parsed), "meaning changed:\n{printed}\n{policy:#?}\n{parsed:#?}");
            prop_assert_eq!(warden_policy::format(&parsed), printed);
        }
    }
}
