//! Layers: base default, lower layers that only narrow, lock, agents across layers.

use crate::decide::{compile_texts, decide, line_of};
use warden_policy::LayerKind;
use warden_policy::ast::Verdict::{self, Allow as A, Ask as Q, Deny as D};

const BASE: &str = r#"version 1
tier read: allow {
    exec ls, cat, npm test
    fs read "${workspace}/**"
}
tier write: ask {
    exec cargo build, touch
    fs write "${workspace}/**"
}
lock tier ci: allow {
    exec make check
}
tier dangerous: deny {
    exec rm
}
lock deny exec sudo
agent reviewer { tiers read }
"#;

/// A lower layer that tries to loosen and narrows.
const PROJECT: &str = r#"version 1
tier mine: allow {
    exec cargo build, unknown-tool, make
    fs write "/**"
    net any
}
deny "no cat in this project" exec cat
ask exec npm
allow exec sudo
deny exec make
deny fs read "${workspace}/secret/**"
agent reviewer { deny exec ls }
agent helper { tiers mine }
"#;

/// A lower layer with its own default.
const STRICT_DIR: &str = r#"version 1
default ask
opaque deny
allow exec ls
"#;

const ALLOW_BASE: &str = r#"version 1
default allow
opaque allow
"#;

/// (layers, request, agent, verdict, snippet of the deciding rule and the layer it is in).
type Row = (&'static [&'static str], &'static str, Option<&'static str>, Verdict, Option<(usize, &'static str)>);

const ROWS: &[Row] = &[
    // The base alone.
    (&[BASE], "ls", None, A, Some((0, "exec ls, cat"))),
    (&[BASE], "unknown-tool", None, D, None),
    // A lower deny narrows; a lower allow never loosens.
    (&[BASE, PROJECT], "cat x", None, D, Some((1, "no cat in this project"))),
    (&[BASE, PROJECT], "cargo build", None, Q, Some((0, "exec cargo build"))),
    (&[BASE, PROJECT], "unknown-tool", None, D, None),
    (&[BASE, PROJECT], "npm test", None, Q, Some((1, "ask exec npm"))),
    (&[BASE, PROJECT], "ls", None, A, Some((0, "exec ls, cat"))),
    // lock: the locked verdict is final; layers below are not consulted.
    (&[BASE, PROJECT], "sudo ls", None, D, Some((0, "lock deny exec sudo"))),
    (&[BASE, PROJECT], "make check", None, A, Some((0, "exec make check"))),
    (&[BASE, PROJECT], "make all", None, D, Some((1, "deny exec make"))),
    // Lower-layer deny fs rules check argument paths.
    (&[BASE, PROJECT], "ls secret/x", None, D, Some((1, "deny fs read"))),
    // Agents defined in several layers narrow together.
    (&[BASE, PROJECT], "ls", Some("reviewer"), D, Some((1, "agent reviewer"))),
    (&[BASE, PROJECT], "cat x", Some("reviewer"), D, Some((1, "no cat in this project"))),
    // An agent only a lower layer defines is unknown: the base alone would deny it.
    (&[BASE, PROJECT], "cargo build", Some("helper"), D, None),
    (&[ALLOW_BASE, PROJECT], "anything", Some("helper"), D, None),
    (&[BASE, PROJECT], "cargo build", Some("reviewer"), D, Some((0, "exec cargo build"))),
    // A lower layer's default applies only where its rules do not match.
    (&[BASE, STRICT_DIR], "ls", None, A, Some((0, "exec ls, cat"))),
    (&[BASE, STRICT_DIR], "cat x", None, Q, None),
    (&[BASE, STRICT_DIR], "cargo build", None, Q, Some((0, "exec cargo build"))),
    (&[BASE, STRICT_DIR], "$x", None, D, None),
    (&[BASE, STRICT_DIR], "rm x", None, D, Some((0, "exec rm"))),
    // Only the base's default answers when a lower layer sets none.
    (&[ALLOW_BASE], "anything", None, A, None),
    (&[ALLOW_BASE, PROJECT], "anything", None, A, None),
    (&[ALLOW_BASE, PROJECT], "cat x", None, D, Some((1, "no cat in this project"))),
    (&[ALLOW_BASE, STRICT_DIR], "anything", None, Q, None),
    (&[ALLOW_BASE, STRICT_DIR], "ls", None, A, None),
    (&[ALLOW_BASE, STRICT_DIR], "$x y", None, D, None),
    (&[ALLOW_BASE, STRICT_DIR, PROJECT], "ls", None, A, None),
    (&[ALLOW_BASE, STRICT_DIR, PROJECT], "npm x", None, Q, Some((2, "ask exec npm"))),
];

#[test]
fn layer_table() {
    let mut wrong = Vec::new();
    for (texts, req, agent, verdict, rule) in ROWS {
        let set = compile_texts(texts).unwrap_or_else(|e| panic!("{:?}", e.0.iter().map(|d| d.short()).collect::<Vec<_>>()));
        let d = decide(&set, *agent, req);
        let want = rule.map(|(l, snippet)| (format!("layer{l}.policy"), line_of(texts[l], snippet)));
        let got = d.rules().first().map(|r| (r.file.to_string(), r.line));
        if d.verdict != *verdict || got != want {
            wrong.push(format!("{} layers, {req:?} agent {agent:?}: wanted {verdict:?} {want:?}, got {:?} {got:?} ({})", texts.len(), d.verdict, d.reason()));
        }
    }
    assert!(wrong.is_empty(), "{} of {} wrong:\n{}", wrong.len(), ROWS.len(), wrong.join("\n"));
}

#[test]
fn lower_layers_never_widen_grants() {
    let set = compile_texts(&[BASE, PROJECT]).unwrap();
    let d = decide(&set, None, "cargo build");
    assert_eq!(d.grants.write, vec!["/workspace/**"]);
    assert_eq!(d.grants.network, warden_policy::Network::None);
    assert!(d.grants.deny.contains(&"/workspace/secret/**".to_string()));
    let d = decide(&set, None, "ls");
    assert!(d.grants.write.is_empty());
    assert_eq!(d.tier(), Some("read"));
    assert_eq!(set.layers()[1].kind, LayerKind::User);
    // `helper` is defined only by the lower layer: it stays unknown.
    assert_eq!(set.agents(), vec!["reviewer".to_string()]);
}

#[test]
fn empty_input_is_an_error() {
    let e = warden_policy::compile(&[]).unwrap_err();
    assert_eq!(e.0[0].code, warden_policy::Code::Source);
}


/// Prints where the shipped policies decide the command corpus differently from what it
/// expects (a report, not a gate: most differences are the analyser's). Run with
/// `cargo test -p warden-policy --test it shipped_corpus_report -- --ignored --nocapture`.
#[test]
#[ignore]
fn shipped_corpus_report() {
    use warden_policy::{Action, Request};
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let names = ["default", "ci", "full-auto", "readonly"];
    let sets: Vec<_> = names.iter().map(|n| {
        let text = std::fs::read_to_string(format!("{root}/policies/{n}.policy")).unwrap();
        compile_texts(&[&text]).unwrap()
    }).collect();
    let corpus = std::fs::read_to_string(format!("{root}/tests/corpus/commands.txt")).unwrap();
    let (mut bad, mut total) = (0, 0);
    for line in corpus.lines() {
        if line.trim().is_empty() || line.starts_with('#') { continue; }
        let (head, cmd) = line.split_once(" | ").unwrap();
        let f: Vec<&str> = head.split_whitespace().collect();
        let a = warden_shell::analyse(cmd);
        for (i, set) in sets.iter().enumerate() {
            total += 1;
            let d = set.decide(&Request { agent: None, action: Action::Exec(&a) }, &crate::decide::ctx());
            if d.verdict.as_str() != f[i + 1] {
                bad += 1;
                println!("{:10} want {:5} got {:5} | {cmd} | {}", names[i], f[i + 1], d.verdict.as_str(), d.reason());
            }
        }
    }
    println!("{bad} of {total} differ");
}

#[test]
fn many_tiers_accumulate_grants() {
    let mut text = String::from("version 1\n");
    for t in 0..3000 {
        text.push_str(&format!("tier t{t}: allow {{ exec cmd{t}; fs read \"/d{t}/**\" }}\n"));
    }
    let set = compile_texts(&[&text]).unwrap();
    let d = decide(&set, None, "cmd2999");
    assert_eq!(d.verdict, A);
    assert_eq!(d.grants.read.len(), 3000);
    let d = decide(&set, None, "cmd0");
    assert_eq!(d.grants.read, vec!["/d0/**"]);
}

#[test]
fn policy_sets_are_shared_between_threads() {
    fn send_sync<T: Send + Sync + Clone>() {}
    send_sync::<warden_policy::PolicySet>();
    let set = compile_texts(&[BASE]).unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let set = set.clone();
            std::thread::spawn(move || decide(&set, None, "cargo build").verdict)
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), Q);
    }
}
