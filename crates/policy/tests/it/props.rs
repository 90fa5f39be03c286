//! Invariants, over random policies and requests:
//! 1. adding a deny rule never makes a decision less severe;
//! 2. adding a lower layer never makes a decision less severe than the upper layers alone,
//!    including for agents only the lower layer defines;
//! 3. `decide` never panics, whatever the analysis and the context.

use crate::decide::{MAIN, compile_texts};
use proptest::prelude::*;
use warden_policy::{Action, Context, PolicySet, Request};
use warden_shell::{Access, Analysis, Opaque, OpaqueReason, PipelinePos, Redirect, SimpleCommand, Word};

const COMMANDS: &[&str] =
    &["ls", "cat", "rm", "git", "sed", "find", "curl", "sh", "cargo", "/usr/bin/rm", "./rm", "make", "x"];
const ARGS: &[&str] = &[
    "status", "push", "-i", "-ni", "--in-place=.b", "--in", "-delete", ".", "src/main.rs",
    "~/.ssh/id_rsa", "/etc/passwd", "key.pem", "../x", "-C", "--output=x", "-c", "build", "reset",
    "--hard", ".git/hooks/pre-commit", "/workspace/../etc/x", "-rf", "/",
];
const TOOLS: &[&str] = &["read_file", "write_file", "edit_file", "list_dir", "mcp__github__x", "other"];
const PATHS: &[&str] = &[
    "/etc/**", "~/.ssh/**", "**/*.pem", "${workspace}/src/**", "${workspace}/**", "/tmp/*", "**",
    "${home}/x", "src/*.rs", "/usr/**",
];
const AGENTS: &[Option<&str>] =
    &[None, Some("reviewer"), Some("builder"), Some("strict"), Some("lower_only")];

fn word() -> impl Strategy<Value = Word> {
    prop_oneof![
        4 => prop::sample::select(ARGS).prop_map(|t| Word { text: t.to_string(), known: true }),
        1 => Just(Word { text: "$x".to_string(), known: false }),
    ]
}

fn command() -> impl Strategy<Value = SimpleCommand> {
    (
        prop_oneof![
            6 => prop::sample::select(COMMANDS).prop_map(|t| Word { text: t.to_string(), known: true }),
            1 => Just(Word { text: "$c".to_string(), known: false }),
        ],
        prop::collection::vec(word(), 0..5),
        prop::collection::vec((0..3u8, word()), 0..2),
        prop::option::of((0..2usize, 0..3usize)),
        prop::bool::ANY,
    )
        .prop_map(|(first, mut args, redirects, pipe, sudo)| {
            let program = if first.known { first.text.rsplit('/').next().unwrap().to_string() } else { String::new() };
            args.insert(0, first);
            SimpleCommand {
                argv: args,
                program,
                assignments: vec![],
                redirects: redirects
                    .into_iter()
                    .map(|(k, target)| Redirect {
                        access: [Access::Read, Access::Write, Access::Append][k as usize],
                        target,
                    })
                    .collect(),
                via: if sudo { vec!["sudo".to_string()] } else { vec![] },
                pipeline: pipe.map(|(id, stage)| PipelinePos { id, stage }),
                span: 0..1,
            }
        })
}

/// A request: an analysed command string or a tool call.
#[derive(Debug, Clone)]
enum Req {
    Exec(Analysis),
    Tool(String, Option<String>),
}

fn request() -> impl Strategy<Value = Req> {
    prop_oneof![
        3 => (prop::collection::vec(command(), 1..4), prop::bool::weighted(0.1)).prop_map(|(commands, opaque)| {
            let opaque = if opaque {
                vec![Opaque { reason: OpaqueReason::InlineCode, text: "python -c x".into(), span: 0..1 }]
            } else {
                vec![]
            };
            Req::Exec(Analysis { commands, opaque })
        }),
        1 => (prop::sample::select(TOOLS), prop::option::of(prop::sample::select(ARGS)))
            .prop_map(|(t, p)| Req::Tool(t.to_string(), p.map(str::to_string))),
    ]
}

fn ctx() -> Context {
    crate::decide::ctx()
}

fn verdicts(set: &PolicySet, req: &Req) -> Vec<warden_policy::ast::Verdict> {
    AGENTS
        .iter()
        .map(|agent| {
            let action = match req {
                Req::Exec(a) => Action::Exec(a),
                Req::Tool(n, p) => Action::Tool { name: n, path: p.as_deref() },
            };
            set.decide(&Request { agent: *agent, action }, &ctx()).verdict
        })
        .collect()
}

fn verdict_word() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&["allow", "ask", "deny"][..])
}

/// The body of a random rule (without verdict).
fn rule_body() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            prop::sample::select(COMMANDS),
            prop::collection::vec(prop::sample::select(&ARGS[..17]), 0..3),
            prop::option::of((prop::bool::ANY, prop::sample::select(&["-i", "-delete", "--output*", "-c"][..]))),
        )
            .prop_map(|(c, args, cond)| {
                let args: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
                let cond = match cond {
                    Some((true, f)) => format!(" unless {f}"),
                    Some((false, f)) => format!(" with {f}"),
                    None => String::new(),
                };
                format!("exec \"{c}\" {}{cond}", args.join(" "))
            }),
        (prop::bool::ANY, prop::sample::select(PATHS))
            .prop_map(|(w, p)| format!("fs {} \"{p}\"", if w { "write" } else { "read" })),
        prop::sample::select(&["read_file", "write_file", "\"mcp__*\"", "other", "\"*\""][..])
            .prop_map(|t| format!("tools {t}")),
        (prop::sample::select(COMMANDS), prop::sample::select(COMMANDS))
            .prop_map(|(a, b)| format!("pipe \"{a}\" into \"{b}\"")),
    ]
}

/// A random lower layer: rules of any verdict, a tier, with or without `default`/`opaque`.
fn lower_layer() -> impl Strategy<Value = String> {
    (
        prop::option::of(verdict_word()),
        prop::option::of(verdict_word()),
        prop::collection::vec((prop::bool::weighted(0.2), verdict_word(), rule_body()), 0..6),
        prop::option::of((verdict_word(), prop::collection::vec(rule_body(), 1..3))),
    )
        .prop_map(|(default, opaque, rules, tier)| {
            let mut s = String::from("version 1\n");
            if let Some(d) = default {
                s += &format!("default {d}\n");
            }
            if let Some(o) = opaque {
                s += &format!("opaque {o}\n");
            }
            for (lock, v, body) in rules {
                s += &format!("{}{v} {body}\n", if lock { "lock " } else { "" });
            }
            if let Some((v, bodies)) = tier {
                s += &format!("tier t: {v} {{\n");
                for b in bodies {
                    s += &format!("    {b}\n");
                }
                s += "}\n";
            }
            s += "agent reviewer { deny exec make }\n";
            s += "agent lower_only { deny exec zzz }\n";
            s
        })
}

fn must_compile(texts: &[&str]) -> PolicySet {
    compile_texts(texts).unwrap_or_else(|e| {
        panic!("{}\n{:?}", texts.join("\n----\n"), e.0.iter().map(|d| d.short()).collect::<Vec<_>>())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn adding_a_deny_rule_never_loosens(
        lock in prop::bool::ANY,
        body in rule_body(),
        reqs in prop::collection::vec(request(), 1..12),
    ) {
        let before = must_compile(&[MAIN]);
        let text = format!("{MAIN}{}deny {body}\n", if lock { "lock " } else { "" });
        let after = must_compile(&[&text]);
        for req in &reqs {
            let (b, a) = (verdicts(&before, req), verdicts(&after, req));
            for (x, y) in b.iter().zip(&a) {
                prop_assert!(y >= x, "{req:?}: {x:?} became {y:?} after `deny {body}`");
            }
        }
    }

    #[test]
    fn adding_a_lower_layer_never_loosens(
        lower in lower_layer(),
        reqs in prop::collection::vec(request(), 1..12),
    ) {
        let upper = must_compile(&[MAIN]);
        let both = must_compile(&[MAIN, &lower]);
        for req in &reqs {
            let (b, a) = (verdicts(&upper, req), verdicts(&both, req));
            for (x, y) in b.iter().zip(&a) {
                prop_assert!(y >= x, "{req:?}: {x:?} became {y:?} with the lower layer\n{lower}");
            }
        }
    }

    #[test]
    fn decide_never_panics(
        words in prop::collection::vec((any::<String>(), any::<bool>()), 0..8),
        redirects in prop::collection::vec((any::<String>(), any::<bool>()), 0..3),
        via in prop::collection::vec(any::<String>(), 0..2),
        pipe in prop::option::of((any::<usize>(), any::<usize>())),
        span in (any::<usize>(), any::<usize>()),
        workspace in prop_oneof![Just(String::from("/workspace")), any::<String>()],
        home in any::<String>(),
        cwd in any::<String>(),
        tool in any::<String>(),
        agent in prop::option::of(prop_oneof![Just(String::from("reviewer")), any::<String>()]),
    ) {
        let set = must_compile(&[MAIN]);
        let argv: Vec<Word> = words.into_iter().map(|(text, known)| Word { text, known }).collect();
        let command = SimpleCommand {
            program: argv.first().map(|w| w.text.clone()).unwrap_or_default(),
            argv,
            assignments: vec![],
            redirects: redirects
                .into_iter()
                .map(|(text, known)| Redirect { access: Access::Write, target: Word { text, known } })
                .collect(),
            via,
            pipeline: pipe.map(|(id, stage)| PipelinePos { id, stage }),
            span: span.0..span.1,
        };
        let analysis = Analysis {
            commands: vec![command.clone(), command],
            opaque: vec![Opaque { reason: OpaqueReason::ParseError, text: tool.clone(), span: span.1..span.0 }],
        };
        let ctx = Context { workspace, home, cwd };
        let agent = agent.as_deref();
        let d = set.decide(&Request { agent, action: Action::Exec(&analysis) }, &ctx);
        prop_assert!(!d.parts().is_empty());
        let d = set.decide(&Request { agent, action: Action::Tool { name: &tool, path: Some(&tool) } }, &ctx);
        prop_assert!(!d.parts().is_empty());
    }
}
