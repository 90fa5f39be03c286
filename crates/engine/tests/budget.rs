//! A session's budgets (`commands`, `total-time`, `total-output`): once spent, further commands
//! are refused with the budget named, and the refusal is audited.

use warden_engine::{Engine, Environment, Job, Query, RefuseAll, RunOptions, Session, SessionConfig};
use warden_policy::{Context, LayerKind, LayerSource, SourceFile};

fn session(policy: &str, name: &str) -> (Session, std::path::PathBuf) {
    let root = warden_testdir::make("budget", name);
    std::fs::create_dir_all(root.join("ws")).unwrap();
    let layers = vec![LayerSource { kind: LayerKind::Cli, files: vec![SourceFile { name: "b.policy".into(), text: policy.into() }] }];
    let ws = root.join("ws").display().to_string();
    let ctx = Context { workspace: ws.clone(), home: ws.clone(), cwd: ws };
    let engine = Engine::new(&layers, ctx).unwrap();
    let log = root.join("audit.jsonl");
    let config = SessionConfig { audit: Some(log.clone()), ..SessionConfig::default() };
    let env = Environment::from_process().unwrap();
    (Session::new(engine, &layers, env, config, Box::new(RefuseAll::default())).unwrap(), log)
}

const BASE: &str = "version 1\ndefault deny\ntier read: allow {\n    exec true, echo, sleep\n    fs read \"${workspace}/**\", \"/usr/**\", \"/lib/**\", \"/lib64/**\", \"/bin/**\", \"/etc/**\"\n}\n";

#[test]
fn a_spent_command_budget_refuses_the_next_command_and_says_which_budget() {
    let (mut s, log) = session(&format!("{BASE}limits {{ commands 2 }}\n"), "commands");
    let argv = vec!["/bin/true".to_string()];
    for _ in 0..2 {
        let o = s.exec(Query::Command("true"), Job::Argv(&argv), &RunOptions::default()).unwrap();
        assert!(o.ran, "{:?}", o.refused);
    }
    let o = s.exec(Query::Command("true"), Job::Argv(&argv), &RunOptions::default()).unwrap();
    assert!(!o.ran);
    let why = o.refused.unwrap_or_default();
    assert!(why.contains("budget of 2 commands"), "{why}");
    assert_eq!(s.spent().commands, 2);
    let last = warden_audit::read(&log).unwrap().pop().unwrap();
    assert!(last.entry.outcome.unwrap().refused.unwrap_or_default().contains("budget"));
}

#[test]
fn the_time_budget_caps_each_command_and_then_refuses() {
    let (mut s, _) = session(&format!("{BASE}limits {{ total-time 1s }}\n"), "time");
    let argv: Vec<String> = ["/bin/sleep", "5"].map(String::from).to_vec();
    let o = s.exec(Query::Command("sleep 5"), Job::Argv(&argv), &RunOptions::default()).unwrap();
    assert!(o.ran && o.run.timed_out, "the command should have been cut at the budget: {:?}", o.run);
    let o = s.exec(Query::Command("sleep 5"), Job::Argv(&argv), &RunOptions::default()).unwrap();
    assert!(!o.ran, "{:?}", o.run);
    assert!(o.refused.unwrap_or_default().contains("time budget"));
}

#[test]
fn the_output_budget_counts_both_streams() {
    let (mut s, _) = session(&format!("{BASE}limits {{ total-output 10 }}\n"), "output");
    let argv: Vec<String> = ["/bin/echo", "0123456789abc"].map(String::from).to_vec();
    assert!(s.exec(Query::Command("echo 0123456789abc"), Job::Argv(&argv), &RunOptions::default()).unwrap().ran);
    let o = s.exec(Query::Command("echo 0123456789abc"), Job::Argv(&argv), &RunOptions::default()).unwrap();
    assert!(o.refused.unwrap_or_default().contains("output budget"));
}
