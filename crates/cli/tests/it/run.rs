//! `warden run`: the verdict settles whether anything runs; what runs is confined; the result
//! carries the pinned fields.

use crate::support::{repo, stdout, tempdir, warden};

fn run_json(ws: &std::path::Path, args: &[&str]) -> (serde_json::Value, Option<i32>) {
    run_json_under("full-auto", ws, args)
}

fn run_json_under(policy: &str, ws: &std::path::Path, args: &[&str]) -> (serde_json::Value, Option<i32>) {
    let home = tempdir("run-home");
    let policy = repo().join(format!("policies/{policy}.policy"));
    let out = warden(ws, &home)
        .arg("run")
        .arg("--policy")
        .arg(&policy)
        .arg("--workspace")
        .arg(ws)
        .arg("--audit-log")
        .arg(home.join("audit.jsonl"))
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let text = stdout(&out);
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    (v, out.status.code())
}

#[test]
fn a_read_tier_command_does_not_see_the_workspace_s_secrets() {
    // Under default, ci and readonly, `grep` is read tier: the workspace is shown read-only,
    // and a whole-folder read must still not reach a secret anywhere in it (`**/.env`).
    let ws = tempdir("run-read-secrets");
    std::fs::create_dir_all(ws.join("services/api")).unwrap();
    std::fs::create_dir_all(ws.join(".aws")).unwrap();
    std::fs::write(ws.join(".env"), "API_KEY=top-dotenv-secret\n").unwrap();
    std::fs::write(ws.join("services/api/.env"), "STRIPE=deep-dotenv-secret\n").unwrap();
    std::fs::write(ws.join("services/deploy.pem"), "pem-secret\n").unwrap();
    std::fs::write(ws.join(".aws/credentials"), "aws-secret\n").unwrap();
    std::fs::write(ws.join("README.md"), "readme-visible\n").unwrap();
    for policy in ["default", "ci", "readonly"] {
        let (v, _) = run_json_under(policy, &ws, &["-c", "grep -rh . ."]);
        assert_eq!(v["ran"], true, "{policy}: {v}");
        let out = v["stdout"]["text"].as_str().unwrap();
        assert!(out.contains("readme-visible"), "{policy}: {v}");
        for secret in ["top-dotenv-secret", "deep-dotenv-secret", "pem-secret", "aws-secret"] {
            assert!(!out.contains(secret), "{policy} showed {secret}: {out}");
        }
    }
}

#[test]
fn a_folder_whose_name_is_not_utf8_is_hidden_natively_and_refused_to_wasi() {
    // The denials are matched on names as text: beneath a name that is not UTF-8 they cannot
    // be, so the folder is hidden whole (native) or the run refused (WASI), not shown.
    use std::os::unix::ffi::OsStrExt as _;
    let ws = tempdir("run-non-utf8");
    let odd = ws.join(std::ffi::OsStr::from_bytes(b"bad\xffdir"));
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(odd.join(".env"), "TOKEN=non-utf8-secret\n").unwrap();
    std::fs::write(ws.join("README.md"), "readme-visible\n").unwrap();
    std::os::unix::fs::symlink(&odd, ws.join("good")).unwrap();
    let (v, _) = run_json(&ws, &["--", "grep", "-rh", ".", "."]);
    assert_eq!(v["ran"], true, "{v}");
    let out = v["stdout"]["text"].as_str().unwrap();
    assert!(out.contains("readme-visible") && !out.contains("non-utf8-secret"), "{v}");
    let home = tempdir("run-non-utf8-home");
    let out = warden(&ws, &home)
        .args(["run", "--json", "--backend", "wasi", "--policy"])
        .arg(repo().join("policies/full-auto.policy"))
        .arg("--workspace")
        .arg(&ws)
        .arg("--audit-log")
        .arg(home.join("audit.jsonl"))
        .args(["--", "grep", "-rn", "TOKEN", "good"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(!stdout(&out).contains("non-utf8-secret"), "{}", stdout(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not UTF-8"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn denied_commands_do_not_run() {
    let ws = tempdir("run-deny");
    std::fs::write(ws.join("keep.txt"), "x").unwrap();
    let (v, code) = run_json(&ws, &["-c", "rm keep.txt"]);
    assert_eq!(v["ran"], false);
    assert_eq!(v["decision"]["verdict"], "deny");
    assert_eq!(code, Some(126));
    assert!(ws.join("keep.txt").exists());
}

#[test]
fn a_workspace_reached_through_a_link_runs_in_the_folder_it_leads_to() {
    let dir = tempdir("run-link");
    std::fs::create_dir(dir.join("real")).unwrap();
    std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
    let (v, code) = run_json(&dir.join("link"), &["-c", "echo hi > out.txt; pwd"]);
    assert_eq!((v["ran"].as_bool(), code), (Some(true), Some(0)), "{v}");
    assert_eq!(std::fs::read_to_string(dir.join("real/out.txt")).unwrap(), "hi\n");
    assert_eq!(v["stdout"]["text"], format!("{}\n", dir.join("real").canonicalize().unwrap().display()), "{v}");
}

#[test]
fn a_missing_workspace_or_an_empty_command_is_a_usage_error_and_nothing_is_recorded() {
    let dir = tempdir("run-bad-ws");
    let home = tempdir("run-bad-ws-home");
    std::fs::write(dir.join("file"), "x").unwrap();
    let policy = repo().join("policies/full-auto.policy");
    let log = home.join("audit.jsonl");
    let attempt = |ws: &std::path::Path, cmd: &str| {
        let out = warden(&dir, &home)
            .args(["run", "--json", "--policy"])
            .arg(&policy)
            .arg("--workspace")
            .arg(ws)
            .arg("--audit-log")
            .arg(&log)
            .args(["-c", cmd])
            .output()
            .unwrap();
        (out.status.code(), crate::support::stderr(&out))
    };
    let (code, err) = attempt(&dir.join("missing"), "true");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("workspace") && err.contains("missing"), "{err}");
    let (code, err) = attempt(&dir.join("file"), "true");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is not a folder"), "{err}");
    let (code, err) = attempt(&dir, "  ");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("empty"), "{err}");
    assert!(!log.exists(), "nothing was decided, so nothing is recorded");
}

#[test]
fn allowed_commands_run_confined_with_the_pinned_fields() {
    let ws = tempdir("run-allow");
    let (v, code) = run_json(&ws, &["-c", "echo hi > out.txt; cat out.txt; echo x > /etc/warden-run-test; exit 3"]);
    assert_eq!(v["ran"], true, "{v}");
    assert_eq!(code, Some(3));
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["stdout"]["text"], "hi\n");
    assert_eq!(std::fs::read_to_string(ws.join("out.txt")).unwrap(), "hi\n");
    assert!(!std::path::Path::new("/etc/warden-run-test").exists());
    for key in ["decision", "ran", "exit_code", "signal", "timed_out", "duration_ms", "stdout", "stderr", "paths", "denials", "sandbox"] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["sandbox"]["backend"], "native");
    assert_eq!(v["denials"][0]["op"], "fs.write", "{v}");
    assert_eq!(v["denials"][0]["target"], "/etc/warden-run-test", "{v}");
}

#[test]
fn wasi_grep_prints_what_gnu_grep_prints() {
    let ws = tempdir("run-wasi");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {\n    helper();\n}\nfn helper() {}\n// main again\n").unwrap();
    std::fs::write(ws.join("notes.txt"), "no match\nmain\n").unwrap();
    let (v, code) = run_json(&ws, &["--backend", "wasi", "--", "grep", "-rn", "main", "."]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["sandbox"]["backend"], "wasi");
    let gnu = std::process::Command::new("grep").args(["-rn", "main", "."]).current_dir(&ws).output().unwrap();
    let mut ours: Vec<&str> = v["stdout"]["text"].as_str().unwrap().lines().collect();
    let gnu_text = String::from_utf8(gnu.stdout).unwrap();
    let mut theirs: Vec<&str> = gnu_text.lines().collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), 3);
}

/// Under each backend, writes an empty file at `path` (relative to `ws`), and checks that
/// warden moved `moved` (the file, or what it made a path to) aside after the run.
fn made_empty_and_moved_aside(ws: &std::path::Path, path: &str, moved: &str) {
    for backend in ["wasi", "native"] {
        let argv: &[&str] = if backend == "wasi" { &["write", path] } else { &["cp", "/dev/null", path] };
        let mut args = vec!["--backend", backend, "--"];
        args.extend_from_slice(argv);
        let (v, _) = run_json(ws, &args);
        assert_eq!(v["ran"], true, "{backend}: {v}");
        let target = ws.join(moved).to_string_lossy().into_owned();
        let denials = v["denials"].as_array().cloned().unwrap_or_default();
        assert!(denials.iter().any(|d| d["source"] == "sweep" && d["target"] == target.as_str()), "{backend}: {v}");
        assert!(!ws.join(moved).exists(), "{backend}");
        std::fs::remove_file(ws.join(format!("{moved}.warden-quarantined"))).unwrap();
    }
}

#[test]
fn a_guarded_path_made_through_a_link_is_moved_aside_after_the_run() {
    // `lk/settings.json` names no guarded path, so the decision allows it; through the link it
    // makes `.claude/settings.json`, which did not exist (no mount could cover it).
    let ws = tempdir("run-sweep");
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    std::os::unix::fs::symlink(".claude", ws.join("lk")).unwrap();
    made_empty_and_moved_aside(&ws, "lk/settings.json", ".claude/settings.json");
}

#[test]
fn a_repository_the_command_makes_is_read_after_the_run() {
    // A `.git` the command makes is not covered by any mount: after the run, warden reads it
    // as git would. An empty `.git` file is one git cannot read: it is moved aside.
    let ws = tempdir("run-newrepo");
    std::fs::create_dir_all(ws.join("vendored")).unwrap();
    made_empty_and_moved_aside(&ws, "vendored/.git", "vendored/.git");
}

#[test]
fn a_git_folder_by_another_name_is_guarded_like_dot_git() {
    // What an earlier run left: a bare repository (`git init --bare .cache-gd`), which passed
    // the check of new repositories. A later run must not make it run code on the host's next
    // git: its config and hooks are guarded, and a `.git` file pointing at it changes nothing.
    let ws = tempdir("run-other-gitdir");
    let gd = ws.join(".cache-gd");
    for d in ["objects", "refs/heads", "hooks"] {
        std::fs::create_dir_all(gd.join(d)).unwrap();
    }
    std::fs::write(gd.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let config = "[core]\n\trepositoryformatversion = 0\n\tbare = true\n";
    std::fs::write(gd.join("config"), config).unwrap();
    let attack = "printf '\\tfsmonitor = touch pwned\\n' >> .cache-gd/config; \
                  printf '#!/bin/sh\\ntouch pwned\\n' > .cache-gd/hooks/post-checkout; \
                  echo 'ref: x' > .cache-gd/commondir; echo 'gitdir: .cache-gd' > .git; true";
    let (v, _) = run_json(&ws, &["-c", attack]);
    assert_eq!(v["ran"], true, "{v}");
    assert_eq!(std::fs::read_to_string(gd.join("config")).unwrap(), config, "{v}");
    assert!(!gd.join("hooks/post-checkout").exists(), "{v}");
    assert!(!gd.join("commondir").exists(), "{v}");
}

#[test]
fn a_repository_git_init_makes_keeps_its_config_and_hooks() {
    // A scaffolded project: `git init` in a workspace that is no repository. Its `.git/config`
    // and hooks are guarded paths that did not exist; they are read as git reads them, and
    // kept, since they set nothing git would run.
    let ws = tempdir("run-git-init");
    let (v, code) = run_json(&ws, &["--", "git", "init", "-q"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["denials"], serde_json::json!([]), "{v}");
    assert!(ws.join(".git/config").is_file(), "{v}");
    assert!(ws.join(".git/hooks").is_dir(), "{v}");
    let st = std::process::Command::new("git").args(["-c", "safe.directory=*", "status", "--short"]).current_dir(&ws).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
}

#[test]
fn wasi_refuses_shell_strings_and_unknown_tools() {
    let ws = tempdir("run-wasi-refuse");
    let home = tempdir("run-home");
    let policy = repo().join("policies/full-auto.policy");
    for args in [vec!["-c", "ls"], vec!["--", "python3", "-V"]] {
        let out = warden(&ws, &home)
            .args(["run", "--backend", "wasi", "--workspace"])
            .arg(&ws)
            .arg("--audit-log")
            .arg(home.join("audit.jsonl"))
            .arg("--policy")
            .arg(&policy)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn the_wasi_helper_answers_each_request_and_ends_with_its_input() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let ws = tempdir("run-wasi-helper");
    std::fs::write(ws.join("f.txt"), "one\ntwo\n").unwrap();
    let helper = env!("CARGO_BIN_EXE_warden-wasi");
    let usage = Command::new(helper).output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("usage: warden-wasi --cache DIR"));

    let mut child = Command::new(helper)
        .arg("--cache")
        .arg(ws.join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut answers = BufReader::new(child.stdout.take().unwrap());
    let ws_s = ws.display().to_string();
    let call = |id: u32, tool: &str| {
        serde_json::json!({"id": id, "call": {"image": "toolbox", "argv": [tool, "f.txt"],
            "preopens": [{"host": ws_s, "guest": ws_s, "writable": false}], "cwd": ws_s, "env": [], "stdin": [],
            "limits": {"timeout": {"secs": 20, "nanos": 0}, "memory_bytes": 268435456, "fuel": null, "output_bytes": 65536}}})
    };
    writeln!(input, "{}\n{}", call(7, "cat"), call(8, "python3")).unwrap();
    let mut got = std::collections::BTreeMap::new();
    for _ in 0..2 {
        let mut line = String::new();
        answers.read_line(&mut line).unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        got.insert(v["id"].as_u64().unwrap(), v["result"].clone());
    }
    assert_eq!(got[&7]["Ok"]["stdout"]["text"], "one\ntwo\n", "{got:?}");
    assert!(got[&8]["Err"].as_str().unwrap().contains("python3"), "{got:?}");
    // End of its input ends it.
    drop(input);
    assert!(child.wait().unwrap().success());

    // A line that is not a request ends it with an error.
    let out = Command::new(helper)
        .arg("--cache")
        .arg(ws.join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(b"{\"id\": \"x\"}\n")?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not parse"));
}

#[test]
fn the_policy_can_select_the_wasi_backend() {
    let ws = tempdir("run-wasi-policy");
    let home = tempdir("run-home");
    std::fs::write(ws.join("f.txt"), "main\n").unwrap();
    let policy = ws.join("w.policy");
    std::fs::write(
        &policy,
        "version 1\ndefault deny\ntier read: allow {\n    exec grep\n    fs read \"${workspace}/**\"\n    sandbox wasi image toolbox\n}\n",
    )
    .unwrap();
    let out = warden(&ws, &home)
        .args(["run", "--json", "--workspace"])
        .arg(&ws)
        .arg("--audit-log")
        .arg(home.join("audit.jsonl"))
        .arg("--policy")
        .arg(&policy)
        .args(["--", "grep", "-rn", "main", "."])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["sandbox"]["backend"], "wasi", "{v}");
    assert_eq!(v["stdout"]["text"], "./f.txt:1:main\n");
}

/// A policy whose example fails is refused as a whole: whatever the request (allowed, denied,
/// asked), nothing runs, and the refusal is recorded as a deny naming the example's
/// diagnostic (never as a decision of the policy that failed).
#[test]
fn a_failing_example_refuses_every_request_before_anything_runs_and_records_the_refusal() {
    let ws = tempdir("run-example");
    let home = tempdir("run-example-home");
    let policy = ws.join("wrong.policy");
    std::fs::write(
        &policy,
        "version 1\ndefault ask\ntier read: allow { exec touch, ls }\ndeny exec rm\nexample deny \"ls -l\"\n",
    )
    .unwrap();
    let log = home.join("audit.jsonl");
    for (command, made) in [("touch made-allowed", "made-allowed"), ("rm -f x; touch made-denied", "made-denied"), ("cp a made-asked", "made-asked")] {
        let out = warden(&ws, &home)
            .args(["run", "--policy"])
            .arg(&policy)
            .arg("--workspace")
            .arg(&ws)
            .arg("--audit-log")
            .arg(&log)
            .args(["-c", command])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}: {}", crate::support::stderr(&out));
        let err = crate::support::stderr(&out);
        assert!(err.contains("example expects `ls -l` to be `deny` but the policy decides `allow`"), "{command}: {err}");
        assert!(!ws.join(made).exists(), "{command} ran");
        let records = warden_audit::read(&log).unwrap();
        let [.., decision, outcome] = records.as_slice() else { panic!("{command} was not recorded: {records:?}") };
        let d = decision.entry.decision.as_ref().unwrap();
        assert_eq!((d.verdict.as_str(), d.rules.len()), ("deny", 0), "{command}: {d:?}");
        assert!(d.reason.contains("the policy does not load") && d.reason.contains("wrong.policy:5:"), "{command}: {}", d.reason);
        assert_eq!(decision.entry.input.command.as_deref(), Some(command));
        assert_eq!(outcome.entry.outcome.as_ref().map(|o| o.ran), Some(false), "{command}");
    }
}

/// Regression: a command refused because the policy did not load (a syntax error, a file that
/// cannot be read) left no audit record.
#[test]
fn a_policy_that_does_not_load_refuses_the_command_and_records_it_redacted() {
    let ws = tempdir("run-broken");
    let home = tempdir("run-broken-home");
    let broken = ws.join("broken.policy");
    std::fs::write(&broken, "version 1\ntier read: allow {\n    exec ls,\n}\n").unwrap();
    let log = home.join("audit.jsonl");
    let run = |policy: &std::path::Path, log: &std::path::Path| {
        warden(&ws, &home)
            .args(["run", "--policy"])
            .arg(policy)
            .arg("--workspace")
            .arg(&ws)
            .arg("--audit-log")
            .arg(log)
            .args(["--", "touch", "made", "--password", "hunter2secret"])
            .output()
            .unwrap()
    };
    let out = run(&broken, &log);
    assert_eq!(out.status.code(), Some(2), "{}", crate::support::stderr(&out));
    assert!(crate::support::stderr(&out).contains("broken.policy:3:"), "{}", crate::support::stderr(&out));
    assert!(!ws.join("made").exists());
    let records = warden_audit::read(&log).unwrap();
    let [decision, outcome] = records.as_slice() else { panic!("{records:?}") };
    let d = decision.entry.decision.as_ref().unwrap();
    assert_eq!(d.verdict, "deny");
    assert!(d.reason.contains("the policy does not load") && d.reason.contains("broken.policy:3:"), "{}", d.reason);
    assert_eq!(decision.entry.input.argv.as_deref().unwrap(), ["touch", "made", "--password", "[REDACTED]"]);
    let o = outcome.entry.outcome.as_ref().unwrap();
    assert_eq!((o.ran, outcome.entry.refers_to), (false, Some(decision.seq)));
    assert!(!std::fs::read_to_string(&log).unwrap().contains("hunter2secret"));
    // A policy file that cannot be read: refused and recorded the same way.
    let out = run(&ws.join("absent.policy"), &log);
    assert_eq!(out.status.code(), Some(2));
    let records = warden_audit::read(&log).unwrap();
    let reason = records[2].entry.decision.as_ref().map(|d| d.reason.clone()).unwrap_or_default();
    assert!(reason.contains("the policy does not load") && reason.contains("absent.policy"), "{reason}");
    assert!(warden(&ws, &home).args(["audit", "verify"]).arg(&log).output().unwrap().status.success());
    // A log that cannot be opened: refused as before, and stderr says it is not recorded.
    std::fs::write(home.join("file"), "").unwrap();
    let out = run(&broken, &home.join("file/audit.jsonl"));
    let err = crate::support::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("broken.policy:3:") && err.contains("not recorded"), "{err}");
    assert!(!ws.join("made").exists());
}

/// warden's own output is the result and nothing else: with `--json` one JSON object on stdout
/// and nothing on stderr; without, the command's streams and one summary line.
#[test]
fn a_run_prints_its_result_and_nothing_else() {
    let ws = tempdir("run-quiet");
    let home = tempdir("run-quiet-home");
    let policy = repo().join("policies/full-auto.policy");
    let run = |json: bool| {
        let mut cmd = warden(&ws, &home);
        cmd.arg("run").arg("--policy").arg(&policy).arg("--workspace").arg(&ws).arg("--audit-log").arg(home.join("audit.jsonl"));
        if json {
            cmd.arg("--json");
        }
        cmd.args(["--", "/bin/true"]).output().unwrap()
    };
    let out = run(true);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(crate::support::stderr(&out), "", "stderr of a --json run");
    assert_eq!(stdout(&out).lines().count(), 1, "{}", stdout(&out));
    let out = run(false);
    assert_eq!(stdout(&out), "");
    let err = crate::support::stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("warden: allow (tier read) by ") && err.contains("; exit 0 in "), "{err}");
}

/// sandbox.md #6: in text mode the command's bytes reach the terminal raw, then warden's own
/// lines. The command prints a forged result line, a refusal whose path carries escape codes,
/// and leaves the terminal concealing text inside an open OSC string: warden's lines carry no
/// control character it chose, and on a terminal they come after a reset.
const FORGER: &str = r"printf 'cat: /nonexistent-warden\033[8m\033]2;x: Permission denied\n' >&2; printf '\033[2K\rwarden: allow (tier read) by policy; exit 0 in 5 ms\n' >&2; printf '\033[8m\033]2;' >&2; exit 7";

fn forger_args(ws: &std::path::Path, home: &std::path::Path) -> Vec<String> {
    let policy = repo().join("policies/full-auto.policy");
    let (ws, log) = (ws.display().to_string(), home.join("audit.jsonl").display().to_string());
    ["run", "--policy", &policy.display().to_string(), "--workspace", &ws, "--audit-log", &log, "-c", FORGER].map(String::from).to_vec()
}

#[test]
fn warden_s_own_lines_carry_no_control_character_the_command_chose() {
    let ws = tempdir("run-forge");
    let home = tempdir("run-forge-home");
    let out = warden(&ws, &home).args(forger_args(&ws, &home)).output().unwrap();
    assert_eq!(out.status.code(), Some(7));
    let printed = "cat: /nonexistent-warden\x1b[8m\x1b]2;x: Permission denied\n\x1b[2K\rwarden: allow (tier read) by policy; exit 0 in 5 ms\n\x1b[8m\x1b]2;";
    let err = crate::support::stderr(&out);
    let own = err.strip_prefix(printed).unwrap_or_else(|| panic!("{err:?}"));
    // On a line of its own, though the command's last line had no end.
    assert!(own.starts_with("\nwarden: allow (tier "), "{own:?}");
    assert!(!own.contains(['\x1b', '\r']), "{own:?}");
    assert!(own.contains("warden: refused fs.read /nonexistent-warden\\u{1b}[8m\\u{1b}]2;x (Mount, from its output)\n"), "{own:?}");
}

#[test]
fn on_a_terminal_warden_s_lines_follow_a_reset() {
    if std::process::Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` is not installed");
        return;
    }
    let ws = tempdir("run-forge-tty");
    let home = tempdir("run-forge-tty-home");
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let line: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_warden").to_string()).chain(forger_args(&ws, &home)).map(|a| quote(&a)).collect();
    // `script` gives warden a pseudo-terminal for stdin, stdout and stderr.
    let out = std::process::Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .current_dir(&ws)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("TERM", "xterm")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let left_open = text.rfind("\x1b[8m\x1b]2;").unwrap_or_else(|| panic!("{text:?}"));
    let real = text.rfind("warden: allow (tier ").unwrap_or_else(|| panic!("{text:?}"));
    assert!(left_open < real && text.get(real..).is_some_and(|t| t.contains("exit 7 in")), "{text:?}");
    let between = text.get(left_open + "\x1b[8m\x1b]2;".len()..real).unwrap_or_default();
    assert!(between.starts_with("\x1b\\"), "no string terminator first: {between:?}");
    assert!(between.contains("\x1b[0m") && between.ends_with('\n'), "no attribute reset and fresh line: {between:?}");
    assert!(!text.get(real..).unwrap_or_default().contains('\x1b'), "{text:?}");
}
