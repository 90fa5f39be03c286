//! An allowed command is built in its sandbox while its decision is recorded, and starts only
//! once the record is on disk: a decision that cannot be recorded runs nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;

use warden_engine::{Engine, Environment, Job, Query, RefuseAll, RunOptions, Session, SessionConfig, SessionError};
use warden_policy::{Context, LayerKind, LayerSource, SourceFile};

const POLICY: &str = "version 1\ndefault deny\ntier write: allow {\n    exec touch\n    fs read \"/usr/**\", \"/lib/**\", \"/lib64/**\", \"/bin/**\", \"/etc/**\"\n    fs write \"${workspace}/**\"\n}\n";

struct Setup {
    root: std::path::PathBuf,
    ws: std::path::PathBuf,
    log: std::path::PathBuf,
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn session(name: &str) -> (Session, Setup) {
    let root = std::env::temp_dir().join(format!("warden-record-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("ws")).unwrap();
    let layers = vec![LayerSource { kind: LayerKind::Cli, files: vec![SourceFile { name: "r.policy".into(), text: POLICY.into() }] }];
    let ws = root.join("ws");
    let w = ws.display().to_string();
    let engine = Engine::new(&layers, Context { workspace: w.clone(), home: w.clone(), cwd: w }).unwrap();
    let log = root.join("audit").join("audit.jsonl");
    let config = SessionConfig { audit: Some(log.clone()), ..SessionConfig::default() };
    let env = Environment::from_process().unwrap();
    let session = Session::new(engine, &layers, env, config, Box::new(RefuseAll::default())).unwrap();
    (session, Setup { root, ws, log })
}

fn touch(s: &mut Session, ws: &std::path::Path, name: &str) -> Result<warden_engine::Outcome, SessionError> {
    let argv = vec!["touch".to_string(), ws.join(name).display().to_string()];
    s.exec(Query::Command(&format!("touch {name}")), Job::Argv(&argv), &RunOptions::default())
}

#[test]
fn the_decision_is_recorded_before_the_outcome_and_the_outcome_refers_to_it() {
    let (mut s, t) = session("order");
    let o = touch(&mut s, &t.ws, "one").unwrap();
    assert!(o.ran && o.run.exit_code == Some(0), "{o:?}");
    assert!(t.ws.join("one").exists());
    let records = warden_audit::read(&t.log).unwrap();
    let [decision, outcome] = records.as_slice() else { panic!("expected a decision and an outcome: {records:?}") };
    assert_eq!(decision.entry.kind, warden_audit::Kind::Decision);
    assert_eq!(decision.entry.decision.as_ref().map(|d| d.verdict.as_str()), Some("allow"));
    assert_eq!(outcome.entry.kind, warden_audit::Kind::Outcome);
    assert_eq!(outcome.entry.refers_to, Some(decision.seq));
    assert_eq!(o.audit.map(|r| r.seq), Some(outcome.seq));
}

#[test]
fn a_decision_that_cannot_be_recorded_runs_nothing() {
    let (mut s, t) = session("unrecorded");
    assert!(touch(&mut s, &t.ws, "before").unwrap().ran);
    // A damaged last record: the log refuses to continue the chain, so the next decision
    // cannot be recorded.
    std::fs::OpenOptions::new().append(true).open(&t.log).unwrap().write_all(b"{\"not\": \"a record\"}\n").unwrap();
    match touch(&mut s, &t.ws, "after") {
        Err(SessionError::Audit(why)) => assert!(why.contains("run `warden audit verify`"), "{why}"),
        other => panic!("expected an audit error, got {other:?}"),
    }
    assert!(!t.ws.join("after").exists(), "a command whose decision was not recorded ran");
}

/// A file tool acts outside any sandbox: the audit log (its head, its folder) and the record of
/// passed examples are refused to it however the path is spelled, whatever the policy allows.
#[test]
fn file_tools_are_refused_the_audit_log_and_the_record_of_passed_examples() {
    let root = std::env::temp_dir().join(format!("warden-record-kept-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let ws = root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let layers = vec![LayerSource { kind: LayerKind::Cli, files: vec![SourceFile { name: "k.policy".into(), text: "version 1\ndefault allow\n".into() }] }];
    let w = ws.display().to_string();
    let engine = Engine::new(&layers, Context { workspace: w.clone(), home: w.clone(), cwd: w }).unwrap();
    // The log inside the workspace, where the policy allows every tool.
    let log = ws.join(".audit/log.jsonl");
    let config = SessionConfig { audit: Some(log.clone()), ..SessionConfig::default() };
    let mut env = Environment::from_process().unwrap();
    env.cache_home = root.join("cache");
    let passed = root.join("cache/warden/compiled");
    std::fs::create_dir_all(&passed).unwrap();
    let s = Session::new(engine, &layers, env, config, Box::new(RefuseAll::default())).unwrap();
    std::os::unix::fs::symlink(".audit", ws.join("lk")).unwrap();
    let verdict = |tool: &str, path: &str| {
        let x = s.explain(Query::Tool { name: tool, path: Some(path) });
        (x.decision.verdict.as_str().to_string(), x.decision.reason().to_string(), x.decision.rules().len())
    };
    let log_text = log.display().to_string();
    for (tool, path) in [
        ("write_file", log_text.as_str()),
        ("edit_file", &format!("{log_text}.head")),
        ("write_file", ".audit/new"),
        ("read_file", "src/../.audit/log.jsonl"),
        ("write_file", "lk/log.jsonl"),
        ("write_file", &passed.join("forged").display().to_string()),
        // The compiled WASI modules, which warden loads as machine code.
        ("write_file", &root.join("cache/warden/wasi/x.cwasm").display().to_string()),
    ] {
        let (v, why, rules) = verdict(tool, path);
        assert_eq!(v, "deny", "{tool} {path}: {why}");
        assert!(why.ends_with("is never read or written by a tool or a command"), "{why}");
        assert_eq!(rules, 0, "no rule decided it");
    }
    assert_eq!(verdict("write_file", "src/main.rs").0, "allow");
    assert_eq!(verdict("write_file", ".auditor/x").0, "allow");
    // A command naming them where the analyser sees a path (a redirect; for an agent's own
    // shell, which a hook decides for).
    for command in ["echo forged >> .audit/log.jsonl", "echo x > lk/log.jsonl", &format!("cat < {log_text}.head")] {
        let x = s.explain(Query::Command(command));
        assert_eq!(x.decision.verdict.as_str(), "deny", "{command}: {}", x.decision.reason());
        assert!(x.decision.reason().contains("the audit log"), "{}", x.decision.reason());
    }
    assert_eq!(s.explain(Query::Command("echo x >> notes.txt")).decision.verdict.as_str(), "allow");
    let _ = std::fs::remove_dir_all(&root);
}

/// Regression: the records of a request that came over HTTP did not say which client sent it.
#[test]
fn a_network_client_is_named_on_every_record_of_its_request_and_only_there() {
    let (mut s, t) = session("client");
    let client = warden_engine::ClientRec { transport: "http".into(), addr: "127.0.0.1:50312".into(), uid: Some(1000), bearer: false };
    let argv = vec!["touch".to_string(), t.ws.join("c").display().to_string()];
    let gate = s.begin_exec_from(Some(client.clone()), Query::Command("touch c"), Job::Argv(&argv)).unwrap();
    let cleared = s.clear(gate, &RunOptions::default()).unwrap().unwrap();
    let engine = s.engine().clone();
    let result = cleared.run(&engine, &Environment::from_process().unwrap(), Job::Argv(&argv));
    assert!(s.complete(cleared, result).unwrap().ran);
    let path = t.ws.join("secret.txt").display().to_string();
    let mut gate = s.begin_tool_from(Some(client.clone()), "write_file", Some(&path)).unwrap();
    s.answer(&mut gate, warden_engine::Answer::Refused { by: "mcp-client".into(), why: "no".into() }).unwrap();
    s.finish(&gate, &warden_engine::Outcome::refused(&gate.explanation, "no")).unwrap();
    assert!(touch(&mut s, &t.ws, "local").unwrap().ran);
    let records = warden_audit::read(&t.log).unwrap();
    let kinds: Vec<(&str, bool)> = records.iter().map(|r| (r.entry.kind.as_str(), r.entry.client.as_ref() == Some(&client))).collect();
    assert_eq!(
        kinds,
        [("decision", true), ("outcome", true), ("decision", true), ("approval", true), ("outcome", true), ("decision", false), ("outcome", false)],
        "{records:?}"
    );
    assert!(records.iter().skip(5).all(|r| r.entry.client.is_none()));
    assert!(warden_audit::verify(&t.log).unwrap().ok());
}

/// Regression: a request refused because the policy did not load left no record.
#[test]
fn a_request_refused_because_the_policy_does_not_load_is_recorded_redacted() {
    let root = warden_testdir::make("engine", "unloaded");
    let log = root.join("audit.jsonl");
    let broken = vec![LayerSource { kind: LayerKind::Cli, files: vec![SourceFile { name: "b.policy".into(), text: "version 1\ntier {\n".into() }] }];
    let config = SessionConfig { agent: Some("builder".into()), audit: Some(log.clone()), ..SessionConfig::default() };
    let w = root.display().to_string();
    let context = Context { workspace: w.clone(), home: w.clone(), cwd: w.clone() };
    let argv: Vec<String> = ["mycli", "--token", "ABCSECRET123", "deploy"].iter().map(|s| (*s).to_string()).collect();
    let quoted = warden_engine::quote_argv(&argv);
    let why = "the policy does not load (1 error): b.policy:2:6: expected a tier name";
    let requests = [
        warden_engine::Unloaded { query: Query::Command(&quoted), job: Some(Job::Argv(&argv)), via: None },
        warden_engine::Unloaded { query: Query::Tool { name: "Read", path: Some("/w/.env") }, job: None, via: Some("claude-code") },
    ];
    let opened = warden_engine::AuditLog::open(Some(&log)).unwrap();
    let receipts = warden_engine::record_unloaded(opened, &config, &broken, &context, &requests, why).unwrap();
    assert_eq!(receipts.len(), 3);
    let records = warden_audit::read(&log).unwrap();
    let [decision, outcome, hook] = records.as_slice() else { panic!("{records:?}") };
    let d = decision.entry.decision.as_ref().unwrap();
    assert_eq!((d.verdict.as_str(), d.reason.as_str(), d.rules.len()), ("deny", why, 0));
    assert_eq!(decision.entry.tool, "exec");
    assert_eq!(decision.entry.agent.as_deref(), Some("builder"));
    assert_eq!(decision.entry.policy_hash, warden_engine::policy_hash(&broken));
    assert_eq!(decision.entry.input.argv.as_deref().unwrap(), ["mycli", "--token", "[REDACTED]", "deploy"]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("ABCSECRET123"), "the secret reached the log: {text}");
    let o = outcome.entry.outcome.as_ref().unwrap();
    assert_eq!((o.ran, o.refused.as_deref(), outcome.entry.refers_to), (false, Some(why), Some(decision.seq)));
    assert_eq!(outcome.entry.session, decision.entry.session);
    assert_eq!((hook.entry.tool.as_str(), hook.entry.input.path.as_deref()), ("Read", Some("/w/.env")));
    assert_eq!(hook.entry.decided_by.as_ref().and_then(|b| b.name.as_deref()), Some("claude-code"));
    assert!(hook.entry.outcome.is_none(), "a hook runs nothing: only its decision is recorded");
    assert!(warden_audit::verify(&log).unwrap().ok());
    // Without a log configured, nothing is written and nothing fails.
    let none = warden_engine::AuditLog::open(None).unwrap();
    assert!(warden_engine::record_unloaded(none, &config, &broken, &context, &requests, why).unwrap().is_empty());
}
