//! `warden run` with its audit log and approvers, `warden replay` and `warden suggest`, driven
//! through the real binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{repo, stderr, stdout, tempdir, warden};

struct Fx {
    ws: PathBuf,
    home: PathBuf,
    log: PathBuf,
}

fn fx(name: &str) -> Fx {
    let root = tempdir(name);
    let ws = root.join("ws");
    let home = root.join("home");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    Fx { log: root.join("audit/log.jsonl"), ws, home }
}

fn run(fx: &Fx, policy: &str, extra: &[&str], command: &str) -> (serde_json::Value, Option<i32>) {
    let out = warden(&fx.ws, &fx.home)
        .arg("run")
        .arg("--policy")
        .arg(repo().join("policies").join(policy))
        .arg("--workspace")
        .arg(&fx.ws)
        .arg("--audit-log")
        .arg(&fx.log)
        .arg("--json")
        .args(extra)
        .arg("-c")
        .arg(command)
        .output()
        .unwrap();
    let text = stdout(&out);
    let v = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text} {}", stderr(&out)));
    (v, out.status.code())
}

fn records(log: &Path) -> Vec<warden_audit::Record> {
    warden_audit::read(log).unwrap()
}

fn verify(log: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_warden")).args(["audit", "verify"]).arg(log).output().unwrap()
}

#[test]
fn every_run_leaves_a_decision_and_an_outcome_record() {
    let fx = fx("sess-records");
    let (v, code) = run(&fx, "full-auto.policy", &[], "echo hi > out.txt");
    assert_eq!(code, Some(0), "{v}");
    let (d, _) = run(&fx, "full-auto.policy", &[], "rm out.txt");
    assert_eq!(d["ran"], false);
    let recs = records(&fx.log);
    let kinds: Vec<String> = recs.iter().map(|r| serde_json::to_value(&r.entry.kind).unwrap().as_str().unwrap().to_string()).collect();
    assert_eq!(kinds, ["decision", "outcome", "decision", "outcome"], "{recs:?}");
    assert_eq!(recs[0].entry.input.command.as_deref(), Some("echo hi > out.txt"));
    assert_eq!(recs[0].entry.decision.as_ref().unwrap().verdict, "allow");
    assert_eq!(recs[1].entry.refers_to, Some(recs[0].seq));
    assert_eq!(recs[1].entry.outcome.as_ref().unwrap().exit_code, Some(0));
    assert_eq!(recs[2].entry.decision.as_ref().unwrap().verdict, "deny");
    assert!(!recs[2].entry.decision.as_ref().unwrap().rules.is_empty());
    assert!(!recs[3].entry.outcome.as_ref().unwrap().ran);
    // The result names its record.
    assert_eq!(v["audit"]["seq"], recs[1].seq, "{v}");
    assert_eq!(v["audit"]["hash"], recs[1].hash.as_str());
    assert!(verify(&fx.log).status.success());
}

#[test]
fn secrets_are_redacted_in_the_log() {
    let fx = fx("sess-redact");
    run(&fx, "full-auto.policy", &[], "echo --token=hunter2hunter2 AKIAIOSFODNN7EXAMPLE");
    let text = std::fs::read_to_string(&fx.log).unwrap();
    assert!(!text.contains("hunter2hunter2") && !text.contains("AKIAIOSFODNN7EXAMPLE"), "{text}");
    assert!(text.contains("[REDACTED]"));
}

#[test]
fn secrets_are_redacted_from_every_field_that_quotes_the_request() {
    // The reason repeats the command when no rule matches; an argv splits `--token VALUE`
    // over two words.
    let fx = fx("sess-redact-reason");
    run(&fx, "full-auto.policy", &[], "psql postgresql://admin:S3cretPassw0rd@127.0.0.1/prod -c 'select 1'");
    let out = warden(&fx.ws, &fx.home)
        .args(["run", "--policy"])
        .arg(repo().join("policies/full-auto.policy"))
        .arg("--workspace")
        .arg(&fx.ws)
        .arg("--audit-log")
        .arg(&fx.log)
        .args(["--json", "--", "mycli", "--token", "ABCSECRETTOKEN123", "--password", "hunter2SECRET"])
        .output()
        .unwrap();
    assert!(!stdout(&out).is_empty(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&fx.log).unwrap();
    for secret in ["S3cretPassw0rd", "ABCSECRETTOKEN123", "hunter2SECRET"] {
        assert!(!text.contains(secret), "{secret} is in the log: {text}");
    }
}

#[test]
fn ask_without_a_terminal_is_refused_and_recorded_with_who_refused() {
    let fx = fx("sess-ask");
    let (v, code) = run(&fx, "default.policy", &[], "mkdir build");
    assert_eq!(v["decision"]["verdict"], "ask", "{v}");
    assert_eq!((v["ran"].as_bool(), code), (Some(false), Some(126)));
    let recs = records(&fx.log);
    let approval = recs.iter().find(|r| r.entry.decided_by.as_ref().is_some_and(|b| b.kind == "approver")).expect("approval record");
    assert_eq!(approval.entry.decided_by.as_ref().unwrap().name.as_deref(), Some("refuse-all"));
    assert_eq!(approval.entry.decision.as_ref().unwrap().verdict, "deny");
    assert!(!fx.ws.join("build").exists());
}

#[test]
fn a_pre_approval_file_approves_only_what_it_names() {
    let fx = fx("sess-pre");
    let file = fx.home.join("approvals");
    std::fs::write(&file, "by alice@example.com\nexec mkdir\n").unwrap();
    let args = ["--approvals", file.to_str().unwrap()];
    let (v, code) = run(&fx, "default.policy", &args, "mkdir build");
    assert_eq!((v["ran"].as_bool(), code), (Some(true), Some(0)), "{v}");
    assert!(fx.ws.join("build").is_dir());
    // A second asking part it does not name keeps the whole request from running.
    let (v, _) = run(&fx, "default.policy", &args, "mkdir other && touch other/x");
    assert_eq!(v["ran"], false, "{v}");
    assert!(!fx.ws.join("other").exists());
    let names: Vec<String> = records(&fx.log)
        .iter()
        .filter_map(|r| r.entry.decided_by.as_ref().filter(|b| b.kind == "approver").and_then(|b| b.name.clone()))
        .collect();
    assert_eq!(names, ["pre-approval:alice@example.com", "pre-approval:alice@example.com"]);
    // A broken file refuses to start, with its line.
    std::fs::write(&file, "by bob\nexce mkdir\n").unwrap();
    let out = warden(&fx.ws, &fx.home).args(["run", "--audit-log"]).arg(&fx.log).args(["--approvals"]).arg(&file).args(["-c", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(":2:"), "{}", stderr(&out));
}

#[test]
fn a_log_that_cannot_be_written_means_nothing_runs() {
    let fx = fx("sess-nolog");
    std::fs::write(fx.home.join("file"), "").unwrap();
    let out = warden(&fx.ws, &fx.home)
        .arg("run")
        .arg("--policy")
        .arg(repo().join("policies/full-auto.policy"))
        .arg("--audit-log")
        .arg(fx.home.join("file/log.jsonl"))
        .args(["-c", "touch made"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("audit log"), "{}", stderr(&out));
    assert!(!fx.ws.join("made").exists());
}

#[test]
fn the_sandbox_cannot_touch_the_log_even_when_the_policy_grants_its_folder() {
    let fx = fx("sess-protect");
    // The log inside the workspace, whose folder full-auto grants for writing.
    let log = fx.ws.join(".audit/log.jsonl");
    let fx = Fx { log, ..fx };
    run(&fx, "full-auto.policy", &[], "true");
    let before = std::fs::read(&fx.log).unwrap();
    // The path is computed at run time, so the analyser cannot see it: only the sandbox can stop this.
    let attack = "L=$(printf %s .audit/log.jsonl); cat $L; echo forged >> $L; : > $L; mv $L x; ln $L y; echo x > $L.head; \
                  python3 -c 'import os,sys; [os.remove(p) for p in sys.argv[1:] if os.path.exists(p)]' $L $L.head; ls -la .audit";
    let (v, _) = run(&fx, "full-auto.policy", &[], attack);
    assert_eq!(v["ran"], true, "{v}");
    assert!(!v["stdout"]["text"].as_str().unwrap().contains("\"seq\""), "{v}");
    let after = std::fs::read(&fx.log).unwrap();
    assert!(after.starts_with(&before), "the log was rewritten");
    assert!(verify(&fx.log).status.success(), "{}", stdout(&verify(&fx.log)));
    assert!(!fx.ws.join("y").exists());
}

#[test]
fn the_sandbox_cannot_forge_warden_s_own_cache_even_when_the_policy_grants_its_folder() {
    let fx = fx("sess-passed");
    // The cache inside the workspace, whose folder full-auto grants for writing.
    let run_with_cache = |command: &str| {
        let out = warden(&fx.ws, &fx.home)
            .env("XDG_CACHE_HOME", fx.ws.join(".cache"))
            .args(["run", "--json", "--policy"])
            .arg(repo().join("policies/full-auto.policy"))
            .arg("--workspace")
            .arg(&fx.ws)
            .arg("--audit-log")
            .arg(&fx.log)
            .args(["-c", command])
            .output()
            .unwrap();
        serde_json::from_str::<serde_json::Value>(stdout(&out).trim()).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)))
    };
    run_with_cache("true");
    let dir = fx.ws.join(".cache/warden/compiled");
    let listed = || {
        let mut names: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    let before = listed();
    assert_eq!(before.len(), 1, "one pass recorded: {before:?}");
    // Computed at run time: only the sandbox can stop it.
    let attack = "D=$(printf %s .cache/warden/compiled); touch $D/forged; ls $D; mv $D $D.old; \
                  python3 -c 'import os,sys; d=sys.argv[1]; open(os.path.join(d, \"py\"), \"w\"); [os.remove(os.path.join(d, n)) for n in os.listdir(d)]' $D";
    let v = run_with_cache(attack);
    assert_eq!(v["ran"], true, "{v}");
    assert_eq!(listed(), before, "{v}");
    assert!(!fx.ws.join(".cache/warden/compiled.old").exists());
    // Nor plant a compiled WASI module, which warden would load as machine code.
    let plant = "W=$(printf %s .cache/warden); mkdir -p $W/wasi; echo forged > $W/wasi/x.cwasm; mv $W $W.old; true";
    let v = run_with_cache(plant);
    assert_eq!(v["ran"], true, "{v}");
    assert!(!fx.ws.join(".cache/warden/wasi/x.cwasm").exists(), "{v}");
    assert!(!fx.ws.join(".cache/warden.old").exists(), "{v}");
}

#[test]
fn replay_reports_exactly_the_requests_whose_decision_changes() {
    let fx = fx("sess-replay");
    let commands = ["ls", "cat README", "git status", "mkdir a", "rm -rf a", "cargo build", "curl x | sh", "echo hi"];
    for c in commands {
        run(&fx, "default.policy", &[], c);
    }
    let out = warden(&fx.ws, &fx.home).arg("replay").arg(&fx.log).arg("--policy").arg(repo().join("policies/readonly.policy")).arg("--json").output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_eq!(report["requests"], commands.len());
    // Afresh: explain each command under both policies.
    let mut changed = Vec::new();
    for c in commands {
        let verdict = |p: &str| {
            let o = warden(&fx.ws, &fx.home).arg("explain").arg("--policy").arg(repo().join("policies").join(p)).arg("--workspace").arg(&fx.ws).args(["--json", "-c", c]).output().unwrap();
            serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["decision"]["verdict"].as_str().unwrap().to_string()
        };
        if verdict("default.policy") != verdict("readonly.policy") {
            changed.push(c.to_string());
        }
    }
    let reported: Vec<String> = report["changes"].as_array().unwrap().iter().map(|c| c["subject"].as_str().unwrap().to_string()).collect();
    assert_eq!(reported, changed);
    assert_eq!(out.status.code(), Some(if changed.is_empty() { 0 } else { 1 }));
}

#[test]
fn suggest_proposes_allow_rules_for_asks_always_approved() {
    let fx = fx("sess-suggest");
    let file = fx.home.join("approvals");
    std::fs::write(&file, "by alice\nexec mkdir\nexec touch\n").unwrap();
    let args = ["--approvals", file.to_str().unwrap()];
    for i in 0..3 {
        run(&fx, "default.policy", &args, &format!("mkdir d{i}"));
    }
    run(&fx, "default.policy", &args, "touch t1");
    let out = warden(&fx.ws, &fx.home).arg("suggest").arg(&fx.log).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("exec mkdir"), "{text}");
    assert!(!text.contains("exec touch"), "one approval is below the default minimum: {text}");
    // The proposed text is a policy that compiles.
    let policy = fx.home.join("suggested.policy");
    std::fs::write(&policy, format!("version 1\n{text}")).unwrap();
    let check = warden(&fx.ws, &fx.home).arg("check").arg(&policy).output().unwrap();
    assert!(check.status.success(), "{}{}", stdout(&check), stderr(&check));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    // A log that does not verify is still read, with a warning: its approvals may be forged.
    let text = std::fs::read_to_string(&fx.log).unwrap().replacen("mkdir d0", "mkdir dX", 1);
    std::fs::write(&fx.log, text).unwrap();
    for verb in ["suggest", "replay"] {
        let mut cmd = warden(&fx.ws, &fx.home);
        cmd.arg(verb).arg(&fx.log);
        if verb == "replay" {
            cmd.arg("--policy").arg(repo().join("policies/default.policy"));
        }
        let out = cmd.output().unwrap();
        assert!(stderr(&out).contains("does not verify"), "{verb}: {}", stderr(&out));
    }
}
