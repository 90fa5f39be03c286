//! A set read back from its bytes decides exactly as the set compiled from the text: every
//! command of the corpus, tool calls and agents, under every shipped policy and under layers
//! stacked on them; and bytes that are not a whole set of this format are refused.

use std::path::PathBuf;

use warden_policy::{Action, Context, LayerKind, LayerSource, PolicySet, Request, SourceFile};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shipped(name: &str) -> SourceFile {
    let path = root().join("policies").join(name);
    SourceFile { name: path.display().to_string(), text: std::fs::read_to_string(&path).unwrap() }
}

/// The corpus's commands (everything after the first ` | ` of each verdict line).
fn commands() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("tests/corpus/commands.txt")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(" | ").map(|(_, c)| c.to_string()))
        .collect()
}

/// Everything a decision says, as text (rules, reasons, parts, grants).
fn decided(set: &PolicySet, agent: Option<&str>, action: Action<'_>, ctx: &Context) -> String {
    format!("{:?}", set.decide(&Request { agent, action }, ctx))
}

fn round_trip(layers: &[LayerSource]) -> (PolicySet, PolicySet) {
    let compiled = warden_policy::compile(layers).unwrap();
    let bytes = compiled.to_bytes();
    let read = PolicySet::from_bytes(&bytes).expect("a set's own bytes read back");
    assert_eq!(read.to_bytes(), bytes, "the bytes of the set read back are the bytes it was read from");
    (compiled, read)
}

#[test]
fn a_stored_set_decides_the_corpus_as_the_compiled_one() {
    let ctx = Context { workspace: "/work/repo".into(), home: "/home/dev".into(), cwd: "/work/repo/src".into() };
    let analyses: Vec<_> = commands().iter().map(|c| warden_shell::analyse(c)).collect();
    assert!(analyses.len() > 900, "the corpus is read");
    let tools = [
        ("read_file", Some("src/main.rs")),
        ("read_file", Some("/home/dev/.ssh/id_rsa")),
        ("write_file", Some(".git/hooks/pre-commit")),
        ("write_file", Some("src/lib.rs")),
        ("edit_file", Some("../../etc/passwd")),
        ("list_directory", Some(".")),
        ("mcp__github__delete_repository", None),
        ("web_fetch", None),
    ];
    let extra = SourceFile {
        name: "/work/repo/.warden/project.policy".into(),
        text: "version 1\ndeny fs read \"**/*.key\"\nask exec make deploy\n".into(),
    };
    for name in ["default.policy", "ci.policy", "full-auto.policy", "readonly.policy"] {
        let alone = vec![LayerSource { kind: LayerKind::Cli, files: vec![shipped(name)] }];
        let stacked = vec![
            LayerSource { kind: LayerKind::Cli, files: vec![shipped(name)] },
            LayerSource { kind: LayerKind::Project, files: vec![extra.clone()] },
        ];
        for layers in [alone, stacked] {
            let (compiled, read) = round_trip(&layers);
            assert_eq!(read.agents(), compiled.agents(), "{name}");
            assert_eq!(format!("{:?}", read.tiers()), format!("{:?}", compiled.tiers()), "{name}");
            let mut agents: Vec<Option<String>> = vec![None];
            agents.extend(compiled.agents().into_iter().map(Some));
            for agent in &agents {
                for a in &analyses {
                    let want = decided(&compiled, agent.as_deref(), Action::Exec(a), &ctx);
                    assert_eq!(decided(&read, agent.as_deref(), Action::Exec(a), &ctx), want, "{name} {agent:?}");
                }
                for (tool, path) in tools {
                    let action = Action::Tool { name: tool, path };
                    assert_eq!(decided(&read, agent.as_deref(), action, &ctx), decided(&compiled, agent.as_deref(), action, &ctx));
                }
            }
            assert_eq!(format!("{:?}", read.rules()), format!("{:?}", compiled.rules()), "{name}");
        }
    }
}

#[test]
fn bytes_that_are_not_a_whole_stored_set_are_refused() {
    let layers = vec![LayerSource { kind: LayerKind::Cli, files: vec![shipped("ci.policy")] }];
    let bytes = warden_policy::compile(&layers).unwrap().to_bytes();
    assert!(PolicySet::from_bytes(&[]).is_none());
    assert!(PolicySet::from_bytes(b"version 1\ndefault allow\n").is_none(), "policy text is not a stored set");
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(PolicySet::from_bytes(&longer).is_none(), "bytes left over");
    let mut other_tag = bytes.clone();
    other_tag[7] ^= 1;
    assert!(PolicySet::from_bytes(&other_tag).is_none(), "another tag");
    // Cut anywhere: never a set, never a panic (every 97th length, and the last 64).
    let lengths = (0..bytes.len()).step_by(97).chain(bytes.len().saturating_sub(64)..bytes.len());
    for n in lengths {
        assert!(PolicySet::from_bytes(&bytes[..n]).is_none(), "cut at {n} of {}", bytes.len());
    }
}
