//! Replay of a real log of more than 1,000 recorded requests against an edited policy reports
//! exactly the requests whose decision changed, checked against deciding each one afresh.

use std::path::PathBuf;

use warden_engine::{Engine, Environment, Query, RefuseAll, Session, SessionConfig};
use warden_policy::{Action, Context, LayerKind, LayerSource, Request, SourceFile};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn layer(name: &str, text: String) -> Vec<LayerSource> {
    vec![LayerSource { kind: LayerKind::Cli, files: vec![SourceFile { name: name.into(), text }] }]
}

#[test]
fn replay_of_a_thousand_requests_reports_exactly_the_changed_ones() {
    let corpus = std::fs::read_to_string(repo().join("tests/corpus/commands.txt")).unwrap();
    let commands: Vec<&str> = corpus.lines().filter(|l| !l.starts_with('#')).filter_map(|l| l.split_once(" | ").map(|x| x.1)).collect();
    assert!(commands.len() > 500);
    let old_text = std::fs::read_to_string(repo().join("policies/default.policy")).unwrap();
    // Edits a security team might make, in both directions: what cannot be analysed is denied,
    // unknown commands too, `cat` leaves the read tier, and the write tier no longer asks.
    let new_text = old_text
        .replacen("\ndefault ask\n", "\ndefault deny\n", 1)
        .replacen("\nopaque ask\n", "\nopaque deny\n", 1)
        .replacen("exec ls, cat, head,", "exec ls, head,", 1)
        .replacen("tier write: ask {", "tier write: allow {", 1)
        .lines()
        // The file's own examples describe the old policy.
        .filter(|l| !l.starts_with("example "))
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(old_text, new_text);
    let old = layer("default.policy", old_text);
    let new = layer("edited.policy", new_text);

    let root = std::env::temp_dir().join(format!("warden-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let log = root.join("audit.jsonl");
    let env = Environment::from_process().unwrap();
    let mut requests = 0;
    // Two working directories and two agents: the context is part of what is replayed.
    for (cwd, agent) in [("/work/app", None), ("/work/app/src", Some("reviewer"))] {
        let ctx = Context { workspace: "/work/app".into(), home: "/home/dev".into(), cwd: cwd.into() };
        let engine = Engine::new(&old, ctx).unwrap();
        let config = SessionConfig { agent: agent.map(str::to_string), audit: Some(log.clone()), ..SessionConfig::default() };
        let mut session = Session::new(engine, &old, env.clone(), config, Box::new(RefuseAll::default())).unwrap();
        for c in &commands {
            session.decide(Query::Command(c), Some("test")).unwrap();
            requests += 1;
        }
        for (tool, path) in [("read_file", "src/main.rs"), ("write_file", "/etc/hosts"), ("write_file", "src/lib.rs"), ("edit_file", ".git/config"), ("deploy", "x")] {
            session.decide(Query::Tool { name: tool, path: Some(path) }, None).unwrap();
            requests += 1;
        }
    }
    assert!(requests >= 1_000, "{requests}");

    let records = warden_audit::read(&log).unwrap();
    let new_policy = warden_policy::compile(&new).unwrap();
    let old_policy = warden_policy::compile(&old).unwrap();
    let report = warden_engine::replay(&records, &new_policy);
    assert_eq!(report.requests, requests);

    // Afresh: decide every recorded request under both policies, from the record's own fields.
    let mut expected = Vec::new();
    for r in records.iter().filter(|r| matches!(r.entry.kind, warden_audit::Kind::Decision)) {
        let i = &r.entry.input;
        let ctx = Context { workspace: i.workspace.clone(), home: i.home.clone(), cwd: i.cwd.clone() };
        let agent = r.entry.agent.as_deref();
        let decide = |p: &warden_policy::PolicySet| {
            if r.entry.tool == "exec" {
                let a = warden_shell::analyse(i.command.as_deref().unwrap());
                p.decide(&Request { agent, action: Action::Exec(&a) }, &ctx).verdict
            } else {
                p.decide(&Request { agent, action: Action::Tool { name: &r.entry.tool, path: i.path.as_deref() } }, &ctx).verdict
            }
        };
        let (before, after) = (decide(&old_policy), decide(&new_policy));
        assert_eq!(before.as_str(), r.entry.decision.as_ref().unwrap().verdict, "#{} recorded differently", r.seq);
        if before != after {
            expected.push((r.seq, before.as_str().to_string(), after.as_str().to_string()));
        }
    }
    let reported: Vec<(u64, String, String)> = report.changes.iter().map(|c| (c.seq, c.before.clone(), c.after.clone())).collect();
    assert_eq!(reported, expected);
    assert!(expected.len() > 20 && expected.iter().any(|(_, _, a)| a == "allow") && expected.iter().any(|(_, _, a)| a == "deny"), "{expected:?}");
    eprintln!("{requests} requests replayed; {} changed: {:?}", expected.len(), report.by_kind);
    let _ = std::fs::remove_dir_all(&root);
}
