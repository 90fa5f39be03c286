//! How a decision combines what it is made of, with the real shell analyser: the tiers of a
//! compound command's parts, argument paths against fs rules of their own, a lower layer's
//! `default` and `opaque`; and what long chains of sets and agents cost to load.

use crate::decide::{codes, compile_texts, ctx};
use warden_policy::Request;
use warden_policy::Action;
use warden_policy::ast::Verdict::{Allow as A, Ask as Q, Deny as D};

#[test]
fn a_compound_command_runs_under_the_limits_and_backend_of_every_part_s_tier() {
    let text = "version 1\ndefault deny\n\
        tier build: ask {\n exec make\n fs write \"${workspace}/**\"\n limits { timeout 1m, processes 8 }\n sandbox wasi\n}\n\
        tier read: allow {\n exec ls\n fs read \"${workspace}/**\"\n limits { memory 1GiB }\n}\n";
    let set = compile_texts(&[text]).unwrap();
    let ctx = ctx();
    let decide = |cmd: &str| {
        let a = warden_shell::analyse(cmd);
        set.decide(&Request { agent: None, action: Action::Exec(&a) }, &ctx)
    };
    let alone = decide("make");
    assert_eq!((alone.grants.limits.timeout_ms, alone.grants.limits.processes), (Some(60_000), Some(8)));
    assert!(matches!(alone.grants.sandbox, warden_policy::Backend::Wasi { .. }));
    let read = decide("ls");
    assert_eq!((read.grants.limits.timeout_ms, read.grants.limits.memory), (None, Some(1 << 30)));
    assert_eq!(read.grants.sandbox, warden_policy::Backend::Native);
    // A part from the later tier does not take the command out of the earlier tier's limits
    // or backend; the limits of both apply.
    for cmd in ["make; ls", "ls && make", "make | ls"] {
        let d = decide(cmd);
        let l = d.grants.limits;
        assert_eq!((l.timeout_ms, l.processes, l.memory), (Some(60_000), Some(8), Some(1 << 30)), "{cmd}");
        assert!(matches!(d.grants.sandbox, warden_policy::Backend::Wasi { .. }), "{cmd}");
        assert!(d.grants.write.iter().any(|w| w.starts_with("/workspace")), "{cmd}");
    }
}

#[test]
fn an_ask_write_rule_of_its_own_covers_paths_named_as_arguments_but_an_ask_tier_s_grant_does_not() {
    let text = "version 1\ndefault deny\n\
        tier write: ask {\n exec mv\n fs write \"${workspace}/**\"\n}\n\
        tier read: allow {\n exec cat, cp, tee\n fs read \"${workspace}/**\"\n}\n\
        allow fs write \"/tmp/**\"\n\
        ask \"workflows are reviewed\" fs write \"${workspace}/.github/workflows/**\"\n";
    let set = compile_texts(&[text]).unwrap();
    let ctx = ctx();
    let verdict = |cmd: &str| {
        let a = warden_shell::analyse(cmd);
        set.decide(&Request { agent: None, action: Action::Exec(&a) }, &ctx).verdict
    };
    for cmd in ["cp /tmp/x .github/workflows/ci.yml", "tee .github/workflows/ci.yml", "cat .github/workflows/ci.yml"] {
        assert_eq!(verdict(cmd), Q, "{cmd}");
    }
    // The write tier's grant is not a restriction: naming a workspace file does not ask.
    for cmd in ["cat src/main.rs", "cp src/a /tmp/b"] {
        assert_eq!(verdict(cmd), A, "{cmd}");
    }
}

#[test]
fn a_lower_layer_with_a_default_but_no_opaque_makes_what_cannot_be_analysed_ask() {
    let base = "version 1\ndefault allow\nopaque allow\nallow exec ls\n";
    let verdict = |lower: &str, cmd: &str| {
        let set = compile_texts(&[base, lower]).unwrap();
        let a = warden_shell::analyse(cmd);
        set.decide(&Request { agent: None, action: Action::Exec(&a) }, &ctx()).verdict
    };
    let strict = "version 1\ndefault deny\nallow exec ls\n";
    assert_eq!(verdict(strict, "\"$CMD\" -rf src"), Q);
    assert_eq!(verdict(strict, "eval \"$CMD\""), Q);
    assert_eq!(verdict(strict, "rm -rf src"), D);
    assert_eq!(verdict(strict, "ls"), A);
    // Its own `opaque` stands; a layer that sets neither abstains.
    assert_eq!(verdict("version 1\ndefault deny\nopaque deny\n", "eval \"$CMD\""), D);
    assert_eq!(verdict("version 1\ndefault deny\nopaque allow\n", "eval \"$CMD\""), A);
    assert_eq!(verdict("version 1\ndeny exec rm\n", "eval \"$CMD\""), A);
}

#[test]
fn long_chains_of_sets_and_agents_load_or_fail_with_a_location() {
    // A chain of 5,000 sets (checking each for a cycle used to walk the rest of the chain),
    // with a cycle at its far end still found.
    let mut text = String::from("version 1\n");
    for i in 0..5000 {
        text.push_str(&format!("paths p{i} = p{}, \"/a{i}\"\n", i + 1));
    }
    text.push_str("paths p5000 = \"/end\"\ndeny fs read p0\n");
    assert_eq!(codes(&[vec![("sets.policy", &text)]]), Vec::<String>::new());
    let looped = text.replace("paths p5000 = \"/end\"", "paths p5000 = p4990");
    let got = codes(&[vec![("sets.policy", &looped)]]);
    assert_eq!(got.len(), 11, "{got:?}");
    assert!(got.iter().all(|d| d.contains("warden::path-set-cycle")), "{got:?}");
    // An `extends` chain climbs at most 32 agents.
    let chain = |n: usize| {
        let mut t = String::from("version 1\n");
        for i in 0..n {
            t.push_str(&format!("agent a{i} extends a{} {{ }}\n", i + 1));
        }
        t.push_str(&format!("agent a{n} {{ }}\n"));
        t
    };
    assert_eq!(codes(&[vec![("agents.policy", &chain(32))]]), Vec::<String>::new());
    let got = codes(&[vec![("agents.policy", &chain(40))]]);
    assert_eq!(got.len(), 8, "{got:?}");
    assert!(got[0].starts_with("agents.policy:2:") && got[0].contains("climbs more than 32 agents"), "{got:?}");
}
