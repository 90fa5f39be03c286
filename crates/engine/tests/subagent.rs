//! A sub-agent's session: every request is decided for it and for the agents above it, and it
//! never gets more than any of them; its records name its parents.

use warden_engine::{Engine, Environment, Job, Query, RefuseAll, RunOptions, Session, SessionConfig};
use warden_policy::ast::Verdict;
use warden_policy::{Context, LayerKind, LayerSource, SourceFile};

const POLICY: &str = r#"version 1
default deny
tier read: allow {
    exec cat, ls, true
    fs read "${workspace}/**", "/usr/**", "/lib/**", "/lib64/**", "/bin/**", "/etc/**"
}
tier write: allow {
    exec touch, mkdir
    fs write "${workspace}/**"
}
agent coder {
    tiers read, write
}
agent planner {
    tiers read
}
"#;

fn session(name: &str, agent: &str, parents: &[&str]) -> (Session, std::path::PathBuf) {
    let root = warden_testdir::make("sub", name);
    std::fs::create_dir_all(root.join("ws")).unwrap();
    let layers = vec![LayerSource { kind: LayerKind::Cli, files: vec![SourceFile { name: "s.policy".into(), text: POLICY.into() }] }];
    let ws = root.join("ws").display().to_string();
    let engine = Engine::new(&layers, Context { workspace: ws.clone(), home: ws.clone(), cwd: ws }).unwrap();
    let config = SessionConfig {
        agent: Some(agent.into()),
        parents: parents.iter().map(|p| (*p).to_string()).collect(),
        audit: Some(root.join("audit.jsonl")),
        ..SessionConfig::default()
    };
    let s = Session::new(engine, &layers, Environment::from_process().unwrap(), config, Box::new(RefuseAll::default())).unwrap();
    (s, root)
}

#[test]
fn a_sub_agent_gets_no_more_than_its_parent() {
    // coder may write; started from planner's session, it may not.
    let (alone, _) = session("alone", "coder", &[]);
    assert_eq!(alone.explain(Query::Command("touch a")).decision.verdict, Verdict::Allow);
    let (mut sub, root) = session("sub", "coder", &["planner@s-1"]);
    let x = sub.explain(Query::Command("touch a"));
    assert_eq!(x.decision.verdict, Verdict::Deny);
    assert!(x.decision.reason().contains("parent agent planner"), "{}", x.decision.reason());
    // What both allow runs, with the parent's (read-only) grants: the sandbox refuses a write
    // the analyser cannot see.
    let argv: Vec<String> = ["/bin/sh", "-c", "cat /dev/null; true"].map(String::from).to_vec();
    let x = sub.explain(Query::Command("cat x"));
    assert_eq!(x.decision.verdict, Verdict::Allow);
    assert!(x.decision.grants.write.is_empty(), "{:?}", x.decision.grants.write);
    let o = sub.exec(Query::Command("true"), Job::Argv(&argv), &RunOptions::default()).unwrap();
    assert!(o.ran);
    let records = warden_audit::read(&root.join("audit.jsonl")).unwrap();
    assert!(records.iter().all(|r| r.entry.parents == ["planner@s-1"] && r.entry.agent.as_deref() == Some("coder")));
}

#[test]
fn an_unknown_parent_denies_everything() {
    let (sub, _) = session("unknown", "coder", &["nobody-knows"]);
    assert_eq!(sub.explain(Query::Command("ls")).decision.verdict, Verdict::Deny);
}
