//! `warden hook claude-code` and `warden hook gemini` on recorded hook inputs
//! (tests/data/hooks/<protocol>/*.json: the field sets each agent sends), under each shipped
//! policy, and on the inputs that must fail closed.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use crate::support::{repo, stderr, tempdir, warden};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// Each recorded input with its expected verdict under default.policy, ci.policy and
/// readonly.policy, in that order.
const CLAUDE: &[(&str, [&str; 3])] = &[
    ("bash-git-status", ["allow", "allow", "allow"]),
    ("bash-compound-push", ["deny", "deny", "deny"]),
    ("bash-cargo-build", ["ask", "allow", "deny"]),
    ("bash-background-server", ["ask", "allow", "deny"]),
    ("bash-cat-env", ["deny", "deny", "deny"]),
    ("bash-curl-sh", ["deny", "deny", "deny"]),
    ("read-src", ["allow", "allow", "allow"]),
    ("read-range", ["allow", "allow", "allow"]),
    ("read-ssh-key", ["deny", "deny", "deny"]),
    ("write-src", ["ask", "allow", "deny"]),
    ("write-git-hook", ["deny", "deny", "deny"]),
    ("edit-src", ["ask", "allow", "deny"]),
    ("edit-replace-all", ["ask", "allow", "deny"]),
    ("multiedit-src", ["ask", "allow", "deny"]),
    ("notebook-edit", ["ask", "allow", "deny"]),
    ("glob", ["allow", "allow", "allow"]),
    ("grep", ["allow", "allow", "allow"]),
    ("ls", ["allow", "allow", "allow"]),
    ("webfetch", ["ask", "deny", "deny"]),
    ("websearch", ["ask", "deny", "deny"]),
    ("mcp-create-issue", ["ask", "deny", "deny"]),
    ("mcp-delete-branch", ["deny", "deny", "deny"]),
    ("todowrite", ["ask", "deny", "deny"]),
];

/// As [`CLAUDE`], for Gemini CLI.
const GEMINI: &[(&str, [&str; 3])] = &[
    ("run-shell-ls", ["allow", "allow", "allow"]),
    ("run-shell-dir-path", ["ask", "allow", "deny"]),
    ("run-shell-rm", ["deny", "deny", "deny"]),
    ("run-shell-compound-push", ["deny", "deny", "deny"]),
    ("read-file", ["allow", "allow", "allow"]),
    ("read-file-legacy", ["allow", "allow", "allow"]),
    ("read-env", ["deny", "deny", "deny"]),
    ("write-file", ["ask", "allow", "deny"]),
    ("replace", ["ask", "allow", "deny"]),
    ("replace-guarded", ["deny", "deny", "deny"]),
    ("list-directory", ["allow", "allow", "allow"]),
    ("glob", ["allow", "allow", "allow"]),
    ("grep-search", ["allow", "allow", "allow"]),
    ("search-file-content-legacy", ["allow", "allow", "allow"]),
    ("read-many-files", ["allow", "allow", "allow"]),
    ("read-many-files-env", ["deny", "deny", "deny"]),
    ("web-fetch", ["ask", "deny", "deny"]),
    ("google-web-search", ["ask", "deny", "deny"]),
    ("save-memory", ["ask", "deny", "deny"]),
    ("mcp-create-pull-request", ["ask", "deny", "deny"]),
    ("mcp-merge-pull-request", ["deny", "deny", "deny"]),
];

const POLICIES: [&str; 3] = ["default", "ci", "readonly"];

fn data(protocol: &str) -> PathBuf {
    repo().join("crates/cli/tests/data/hooks").join(protocol)
}

/// Runs `warden hook PROTOCOL ARGS...` with `input` on stdin, from an empty folder.
fn hook(protocol: &str, args: &[&str], input: &[u8]) -> Output {
    let dir = tempdir("hook");
    hook_in(&dir, &dir, protocol, args, input)
}

fn hook_in(cwd: &Path, home: &Path, protocol: &str, args: &[&str], input: &[u8]) -> Output {
    let mut child = warden(cwd, home)
        .arg("hook")
        .arg(protocol)
        .arg("--audit-log")
        .arg(home.join("audit/log.jsonl"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The hook may stop reading early (an oversized input): a broken pipe is expected then.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

/// The verdict and reason a hook answered, checked against its protocol's shape: JSON on
/// stdout; allow and ask exit 0, deny exits 2 with the reason on stderr.
fn answer(protocol: &str, out: &Output) -> (String, String) {
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    let (verdict, reason) = if protocol == "claude-code" {
        let h = &json["hookSpecificOutput"];
        assert_eq!(h["hookEventName"], "PreToolUse", "{json}");
        (h["permissionDecision"].as_str(), h["permissionDecisionReason"].as_str())
    } else {
        (json["decision"].as_str(), json["reason"].as_str())
    };
    let (verdict, reason) = (verdict.unwrap().to_string(), reason.unwrap().to_string());
    if verdict == "deny" {
        assert_eq!(out.status.code(), Some(2), "a deny must exit 2 (block): {json}");
        assert_eq!(stderr(out).trim(), reason, "a deny's stderr is its reason");
    } else {
        assert_eq!(out.status.code(), Some(0), "{json}\n{}", stderr(out));
    }
    (verdict, reason)
}

fn recorded(protocol: &str, table: &[(&str, [&str; 3])]) {
    // Every recorded input is in the table, and every table entry has its input.
    let mut files: Vec<String> = std::fs::read_dir(data(protocol))
        .unwrap()
        .map(|e| e.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut named: Vec<String> = table.iter().map(|(f, _)| (*f).to_string()).collect();
    named.sort();
    assert_eq!(files, named, "recorded inputs and expectations differ");
    let mut wrong = Vec::new();
    for (i, policy) in POLICIES.iter().enumerate() {
        let file = repo().join("policies").join(format!("{policy}.policy"));
        for (name, expected) in table {
            let input = std::fs::read(data(protocol).join(format!("{name}.json"))).unwrap();
            let out = hook(protocol, &["--policy", file.to_str().unwrap()], &input);
            let (verdict, reason) = answer(protocol, &out);
            if verdict != expected[i] {
                wrong.push(format!("{policy}/{name}: wanted {}, got {verdict}: {reason}", expected[i]));
            }
            // A decision by a rule names it; a failure to decide is never a verdict here.
            assert!(!reason.contains("could not decide"), "{policy}/{name}: {reason}");
            if !reason.contains("the default is") {
                assert!(reason.contains(&format!("{policy}.policy:")), "{policy}/{name}: no rule in {reason}");
            }
        }
    }
    assert!(wrong.is_empty(), "{} wrong:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn claude_code_recorded_inputs_get_the_policy_s_verdict_in_its_protocol() {
    recorded("claude-code", CLAUDE);
}

#[test]
fn gemini_recorded_inputs_get_the_policy_s_verdict_in_its_protocol() {
    recorded("gemini", GEMINI);
}

#[test]
fn a_compound_command_s_reason_names_the_rule_and_the_part_that_decided() {
    let input = std::fs::read(data("claude-code").join("bash-compound-push.json")).unwrap();
    let (verdict, reason) = answer("claude-code", &hook("claude-code", &[], &input));
    assert_eq!(verdict, "deny");
    assert!(reason.contains("[rule policies/default.policy:"), "{reason}");
    assert!(reason.contains("decided by `git push origin main`"), "{reason}");
    let input = std::fs::read(data("gemini").join("read-many-files-env.json")).unwrap();
    let (verdict, reason) = answer("gemini", &hook("gemini", &[], &input));
    assert_eq!(verdict, "deny");
    assert!(reason.contains("the read of `/home/dev/project/.env`"), "{reason}");
}

#[test]
fn gemini_ask_carries_a_system_message_for_the_prompt() {
    let input = std::fs::read(data("gemini").join("write-file.json")).unwrap();
    let out = hook("gemini", &[], &input);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["decision"], "ask");
    assert_eq!(json["systemMessage"], json["reason"]);
}

/// Input that must be denied, for both protocols, with the reason containing `why`.
fn denied(input: &[u8], args: &[&str], why: &str) {
    for protocol in ["claude-code", "gemini"] {
        let (verdict, reason) = answer(protocol, &hook(protocol, args, input));
        assert_eq!(verdict, "deny", "{protocol}: {reason}");
        assert!(reason.starts_with("warden could not decide, so it denies: "), "{protocol}: {reason}");
        assert!(reason.contains(why), "{protocol}: wanted `{why}` in {reason}");
    }
}

/// A valid input of `protocol` with `fields` replaced.
fn input_with(protocol: &str, file: &str, edit: impl Fn(&mut Value)) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(&std::fs::read(data(protocol).join(file)).unwrap()).unwrap();
    edit(&mut v);
    serde_json::to_vec(&v).unwrap()
}

#[test]
fn garbage_empty_and_huge_input_fail_closed() {
    denied(b"this is not json", &[], "not JSON");
    denied(b"", &[], "the hook input is empty");
    denied(b"[1, 2, 3]", &[], "not a JSON object");
    // Over the 4 MiB cap: a Bash command of 5 MiB.
    let mut huge = br#"{"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": "/w", "tool_input": {"command": ""#.to_vec();
    huge.extend(std::iter::repeat_n(b'a', 5 * 1024 * 1024));
    huge.extend(br#""}}"#);
    denied(&huge, &[], "larger than 4194304 bytes");
}

#[test]
fn missing_fields_and_the_wrong_event_fail_closed() {
    let claude = |edit: &dyn Fn(&mut Value)| input_with("claude-code", "bash-git-status.json", edit);
    let gemini = |edit: &dyn Fn(&mut Value)| input_with("gemini", "run-shell-ls.json", edit);
    let cases: [(&str, Vec<u8>, &str); 6] = [
        ("claude-code", claude(&|v| v["tool_input"] = serde_json::json!({})), "no `tool_input.command`"),
        ("claude-code", claude(&|v| v["hook_event_name"] = "PostToolUse".into()), "not `PostToolUse`"),
        ("claude-code", claude(&|v| v["cwd"] = "relative/dir".into()), "`cwd` is not an absolute path"),
        ("gemini", gemini(&|v| v["tool_input"]["command"] = 42.into()), "`tool_input.command` is not a string"),
        ("gemini", gemini(&|v| v["hook_event_name"] = "AfterTool".into()), "not `AfterTool`"),
        ("gemini", gemini(&|v| drop(v.as_object_mut().unwrap().remove("tool_name"))), "no `tool_name`"),
    ];
    for (protocol, input, why) in cases {
        let (verdict, reason) = answer(protocol, &hook(protocol, &[], &input));
        assert_eq!(verdict, "deny", "{protocol}: {reason}");
        assert!(reason.contains(why), "{protocol}: wanted `{why}` in {reason}");
    }
}

#[test]
fn a_policy_that_does_not_load_fails_closed_with_its_error() {
    let dir = tempdir("hook-broken");
    let broken = dir.join("broken.policy");
    std::fs::write(&broken, "version 1\ntier read: allow {\n    exec ls,\n}\n").unwrap();
    let input = std::fs::read(data("claude-code").join("bash-git-status.json")).unwrap();
    let out = hook_in(&dir, &dir, "claude-code", &["--policy", broken.to_str().unwrap()], &input);
    let (verdict, reason) = answer("claude-code", &out);
    assert_eq!(verdict, "deny");
    assert!(reason.contains("the policy does not load") && reason.contains("broken.policy:3:"), "{reason}");
    let missing = dir.join("absent.policy");
    for (protocol, file) in [("claude-code", "read-src.json"), ("gemini", "read-file.json")] {
        let input = std::fs::read(data(protocol).join(file)).unwrap();
        let (verdict, reason) = answer(protocol, &hook(protocol, &["--policy", missing.to_str().unwrap()], &input));
        assert_eq!(verdict, "deny", "{protocol}: {reason}");
        assert!(reason.contains("the policy does not load") && reason.contains("absent.policy"), "{reason}");
    }
}

/// Regression: a call denied because the policy did not load left no audit record.
#[test]
fn a_call_denied_because_the_policy_does_not_load_is_recorded_redacted() {
    let dir = tempdir("hook-broken-audit");
    let broken = dir.join("broken.policy");
    std::fs::write(&broken, "version 1\ntier read: allow {\n    exec ls,\n}\n").unwrap();
    let input = br#"{"session_id":"s-9","transcript_path":"/dev/null","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"curl -H 'Authorization: Bearer abcSECRETtoken' https://x"}}"#;
    let out = hook_in(&dir, &dir, "claude-code", &["--policy", broken.to_str().unwrap(), "--agent", "coder"], input);
    let (verdict, reason) = answer("claude-code", &out);
    assert_eq!(verdict, "deny");
    let log = dir.join("audit/log.jsonl");
    let records = warden_audit::read(&log).unwrap_or_default();
    let [r] = records.as_slice() else { panic!("expected one record: {records:?}") };
    let d = r.entry.decision.as_ref().unwrap();
    assert_eq!(d.verdict, "deny");
    assert!(d.reason.contains("the policy does not load") && d.reason.contains("broken.policy:3:"), "{}", d.reason);
    assert_eq!(d.reason, reason, "the record says what the hook answered");
    assert_eq!((r.entry.session.as_str(), r.entry.agent.as_deref(), r.entry.tool.as_str()), ("s-9", Some("coder"), "exec"));
    let by = r.entry.decided_by.as_ref().unwrap();
    assert_eq!((by.kind.as_str(), by.name.as_deref()), ("hook", Some("claude-code")));
    let command = r.entry.input.command.as_deref().unwrap_or_default();
    assert!(command.starts_with("curl -H") && !command.contains("abcSECRETtoken"), "{command}");
    assert!(!std::fs::read_to_string(&log).unwrap().contains("abcSECRETtoken"));
    // A file tool, and a policy file that cannot be read.
    let input = std::fs::read(data("gemini").join("read-file.json")).unwrap();
    let missing = dir.join("absent.policy");
    let out = hook_in(&dir, &dir, "gemini", &["--policy", missing.to_str().unwrap()], &input);
    assert_eq!(answer("gemini", &out).0, "deny");
    let records = warden_audit::read(&log).unwrap();
    let r = &records.last().unwrap().entry;
    assert!(r.input.path.is_some() && r.tool != "exec", "{r:?}");
    assert!(r.decision.as_ref().is_some_and(|d| d.verdict == "deny" && d.reason.contains("absent.policy")), "{r:?}");
    // A log that cannot be opened: denied for the policy as before.
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("audit"), "").unwrap();
    let out = hook_in(&dir, &home, "claude-code", &["--policy", broken.to_str().unwrap()], input_with("claude-code", "bash-git-status.json", |_| {}).as_slice());
    let (verdict, reason) = answer("claude-code", &out);
    assert_eq!(verdict, "deny");
    assert!(reason.contains("the policy does not load") && reason.contains("broken.policy:3:"), "{reason}");
}

#[test]
fn an_unknown_tool_takes_the_policy_s_default() {
    let input = input_with("claude-code", "todowrite.json", |v| v["tool_name"] = "SomeFutureTool".into());
    let (verdict, reason) = answer("claude-code", &hook("claude-code", &[], &input));
    assert_eq!((verdict.as_str(), reason.contains("the default is ask")), ("ask", true), "{reason}");
    let ci = repo().join("policies/ci.policy");
    let (verdict, reason) = answer("claude-code", &hook("claude-code", &["--policy", ci.to_str().unwrap()], &input));
    assert_eq!((verdict.as_str(), reason.contains("the default is deny")), ("deny", true), "{reason}");
}

#[test]
fn the_hook_s_cwd_picks_the_project_layer_and_the_workspace() {
    // The project's .warden/ layer is found from the input's `cwd`, not from where the hook
    // process happens to start, and the workspace is that repository's root.
    let dir = tempdir("hook-project");
    std::fs::create_dir_all(dir.join("repo/.git")).unwrap();
    std::fs::create_dir_all(dir.join("repo/.warden")).unwrap();
    std::fs::create_dir_all(dir.join("repo/sub")).unwrap();
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    std::fs::write(dir.join("repo/.warden/project.policy"), "version 1\ndeny \"not in this project\" exec ls\n").unwrap();
    let repo_dir = dir.join("repo");
    let at = |cwd: &Path, command: &str| {
        input_with("claude-code", "bash-git-status.json", |v| {
            v["cwd"] = cwd.to_str().unwrap().into();
            v["tool_input"]["command"] = command.into();
        })
    };
    let run = |input: &[u8]| answer("claude-code", &hook_in(&dir.join("elsewhere"), &dir, "claude-code", &[], input));
    let (verdict, reason) = run(&at(&repo_dir.join("sub"), "ls -la"));
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains("not in this project") && reason.contains(".warden/project.policy"), "{reason}");
    let (verdict, _) = run(&at(&dir.join("elsewhere"), "ls -la"));
    assert_eq!(verdict, "allow");
    // The workspace is the repository root, not the cwd below it.
    let policy = dir.join("workspace.policy");
    std::fs::write(&policy, "version 1\ndefault deny\nallow tools write_file\nallow fs write \"${workspace}/**\"\n").unwrap();
    let write = |path: &Path| {
        let input = input_with("claude-code", "write-src.json", |v| {
            v["cwd"] = repo_dir.join("sub").to_str().unwrap().into();
            v["tool_input"]["file_path"] = path.to_str().unwrap().into();
        });
        answer("claude-code", &hook_in(&dir, &dir, "claude-code", &["--policy", policy.to_str().unwrap()], &input))
    };
    assert_eq!(write(&repo_dir.join("README.md")).0, "allow");
    assert_eq!(write(&dir.join("elsewhere/x.txt")).0, "deny");
}

#[test]
fn the_agent_s_project_folder_keeps_its_layer_wherever_the_model_moves_the_cwd() {
    // The model moves the call's `cwd` (`cd sub`); the agent names the project in
    // CLAUDE_PROJECT_DIR / GEMINI_PROJECT_DIR. A nested repository (a submodule, a `sub/.git`
    // the agent made) or a subfolder of a project without `.git` must not drop its layer.
    let dir = tempdir("hook-anchor");
    for project in ["repo", "plain"] {
        let root = dir.join(project);
        std::fs::create_dir_all(root.join(".warden")).unwrap();
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        std::fs::write(root.join(".warden/project.policy"), "version 1\ndeny \"not in this project\" exec ls\n").unwrap();
    }
    std::fs::create_dir_all(dir.join("repo/.git")).unwrap();
    std::fs::write(dir.join("repo/sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
    let ask = |protocol: &str, project: &Path, cwd: &Path| {
        let (file, var) = match protocol {
            "claude-code" => ("bash-git-status.json", "CLAUDE_PROJECT_DIR"),
            _ => ("run-shell-ls.json", "GEMINI_PROJECT_DIR"),
        };
        let input = input_with(protocol, file, |v| {
            v["cwd"] = cwd.to_str().unwrap().into();
            v["tool_input"]["command"] = "ls -la".into();
            if let Some(o) = v["tool_input"].as_object_mut() {
                o.remove("dir_path");
            }
        });
        let mut child = crate::support::warden(&dir, &dir)
            .env(var, project)
            .args(["hook", protocol, "--audit-log"])
            .arg(dir.join("audit/log.jsonl"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        answer(protocol, &child.wait_with_output().unwrap())
    };
    for protocol in ["claude-code", "gemini"] {
        for (project, cwd) in [("repo", "repo/sub"), ("repo", "repo/sub/deeper"), ("plain", "plain/sub/deeper")] {
            let (verdict, reason) = ask(protocol, &dir.join(project), &dir.join(cwd));
            assert_eq!(verdict, "deny", "{protocol} in {cwd}: {reason}");
            assert!(reason.contains("not in this project"), "{reason}");
        }
    }
}

#[test]
fn the_agent_s_file_tools_do_not_make_a_repository_git_would_run() {
    // Under a hook the agent's Write runs on the host: `x/HEAD` beside `x/config` setting
    // `core.fsmonitor` (or a `.git` file) is a repository the host's next `git status` runs.
    let dir = tempdir("hook-git-own");
    let ws = dir.join("repo");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    for d in ["bare.git/objects", "bare.git/refs", "src"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join("bare.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let policy = repo().join("policies/ci.policy");
    let write = |path: &str| {
        let input = input_with("claude-code", "write-src.json", |v| {
            v["cwd"] = ws.to_str().unwrap().into();
            v["tool_input"]["file_path"] = path.into();
        });
        answer("claude-code", &hook_in(&ws, &dir, "claude-code", &["--policy", policy.to_str().unwrap()], &input))
    };
    for path in ["sub2/HEAD", "sub2/commondir", "sub/.git", "bare.git/config", "bare.git/hooks/post-checkout"] {
        let (verdict, reason) = write(path);
        assert_eq!(verdict, "deny", "{path}: {reason}");
        assert!(reason.contains("git folder"), "{path}: {reason}");
    }
    assert_eq!(write("src/main.rs").0, "allow");
    assert_eq!(write("sub2/config").0, "allow");
}

#[test]
fn gemini_read_many_files_entries_are_judged_by_every_file_they_reach() {
    // Gemini globs each entry with dot files and without regard to case: all of these read
    // `.env` or a key, though none names it as written.
    let dir = tempdir("hook-rmf");
    let ws = dir.join("repo");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::create_dir_all(ws.join("keys")).unwrap();
    std::fs::write(ws.join(".env"), "SECRET=1\n").unwrap();
    std::fs::write(ws.join("keys/server.pem"), "KEY\n").unwrap();
    std::fs::write(ws.join("README.md"), "hi\n").unwrap();
    let call = |include: Value| {
        let input = input_with("gemini", "read-many-files.json", |v| {
            v["cwd"] = ws.to_str().unwrap().into();
            v["tool_input"] = serde_json::json!({ "include": include });
        });
        answer("gemini", &hook_in(&ws, &dir, "gemini", &[], &input))
    };
    for entries in [
        serde_json::json!([".en?"]),
        serde_json::json!([".ENV"]),
        serde_json::json!(["[.]env"]),
        serde_json::json!(["{.env,README.md}"]),
        serde_json::json!(["**/*.PEM"]),
        serde_json::json!(["README.md", "*"]),
        // A trailing `**`, and a folder, reach every file beneath.
        serde_json::json!(["**"]),
        serde_json::json!(["keys/**"]),
        serde_json::json!(["{keys,src}/**"]),
        serde_json::json!(["keys"]),
    ] {
        let (verdict, reason) = call(entries.clone());
        assert_eq!(verdict, "deny", "{entries}: {reason}");
    }
    let (verdict, reason) = call(serde_json::json!(["README.md", "*.md"]));
    assert_ne!(verdict, "deny", "{reason}");
    // No entry at all: the call cannot be judged.
    assert_eq!(call(serde_json::json!([])).0, "deny");
}

/// `dir/repo` with `.git/hooks`, `src/`, a `.env`, and the links an agent's command may have
/// made: `lk -> .git`, `e -> .env`.
fn linked_repo(dir: &Path) -> PathBuf {
    let ws = dir.join("repo");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join(".env"), "SECRET=1\n").unwrap();
    std::os::unix::fs::symlink(".git", ws.join("lk")).unwrap();
    std::os::unix::fs::symlink(".env", ws.join("e")).unwrap();
    ws
}

#[test]
fn a_file_tool_s_path_through_a_link_is_decided_where_it_leads() {
    // The agent's Write and Read follow links; a command may have made `lk -> .git` and
    // `e -> .env`. The path as written names nothing guarded: where it leads does.
    let dir = tempdir("hook-links");
    let ws = linked_repo(&dir);
    let call = |file: &str, path: &str| {
        let input = input_with("claude-code", file, |v| {
            v["cwd"] = ws.to_str().unwrap().into();
            v["tool_input"]["file_path"] = path.into();
        });
        answer("claude-code", &hook_in(&ws, &dir, "claude-code", &[], &input))
    };
    let (verdict, reason) = call("write-src.json", "lk/hooks/pre-commit");
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains(".git/hooks/pre-commit"), "{reason}");
    assert_eq!(call("write-src.json", "lk/hooks/new/x").0, "deny");
    assert_eq!(call("read-src.json", "e").0, "deny");
    // A real path, and one whose `..` only climbs back: decided as they are.
    assert_ne!(call("write-src.json", "src/main.rs").0, "deny");
    assert_ne!(call("read-src.json", "src/../src/main.rs").0, "deny");
    // A workspace named through a link of its own: where a path leads keeps that name (the
    // resolved name would be outside the workspace the policy knows).
    let named = dir.join("named");
    std::os::unix::fs::symlink(&ws, &named).unwrap();
    let input = input_with("claude-code", "write-src.json", |v| {
        v["cwd"] = named.to_str().unwrap().into();
        v["tool_input"]["file_path"] = "src/main.rs".into();
    });
    let policy = dir.join("workspace.policy");
    std::fs::write(&policy, "version 1\ndefault deny\nallow tools write_file\nallow fs write \"${workspace}/**\"\n").unwrap();
    let args = ["--workspace", named.to_str().unwrap(), "--policy", policy.to_str().unwrap()];
    let (verdict, reason) = answer("claude-code", &hook_in(&named, &dir, "claude-code", &args, &input));
    assert_eq!(verdict, "allow", "{reason}");
}

/// A command's files through a link (`lk -> .git`, made by an earlier command) were judged as
/// written: `echo x > lk/hooks/pre-commit` was allowed under a hook, where nothing confines it,
/// and planted a git hook.
#[test]
fn a_command_s_files_through_a_link_are_decided_where_they_lead() {
    let dir = tempdir("hook-cmd-links");
    let ws = linked_repo(&dir);
    std::os::unix::fs::symlink(".git/hooks", ws.join("h")).unwrap();
    let verdict = |policy: &str, command: &str| {
        let input = serde_json::json!({"session_id": "s", "transcript_path": "/dev/null", "cwd": ws, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}});
        let policy = repo().join("policies").join(format!("{policy}.policy"));
        let args = ["--policy", policy.to_str().unwrap()];
        answer("claude-code", &hook_in(&ws, &dir, "claude-code", &args, input.to_string().as_bytes()))
    };
    for command in [
        "echo x > lk/hooks/pre-commit",
        "cp evil lk/hooks/pre-commit",
        "cd lk && cp /tmp/evil hooks/post-checkout",
        "cp evil h/pre-push",
        "unzip -o hooks.zip -d h",
        "cat e",
    ] {
        let (v, reason) = verdict("ci", command);
        assert_eq!(v, "deny", "{command}: {reason}");
    }
    // Real paths, and links that lead nowhere guarded, are decided as before.
    for command in ["echo x > src/a.txt", "cat src/../src/a.txt", "ls lk/refs"] {
        let (v, reason) = verdict("ci", command);
        assert_eq!(v, "allow", "{command}: {reason}");
    }
}

/// A git folder not named `.git` escapes the guards' names: `sub/.git` naming a folder whose
/// config sets `core.fsmonitor` made `cd sub && git status` run it under a hook.
#[test]
fn git_is_not_run_in_a_repository_whose_git_folder_escapes_the_guards() {
    let dir = tempdir("hook-gitdir");
    let ws = linked_repo(&dir);
    let evil = dir.join("evil");
    for d in ["objects", "refs"] {
        std::fs::create_dir_all(evil.join(d)).unwrap();
    }
    std::fs::write(evil.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(evil.join("config"), "[core]\n\tfsmonitor = touch pwned\n").unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/.git"), format!("gitdir: {}\n", evil.display())).unwrap();
    let verdict = |command: &str| {
        let input = serde_json::json!({"session_id": "s", "transcript_path": "/dev/null", "cwd": ws, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}});
        let policy = repo().join("policies/ci.policy");
        let args = ["--policy", policy.to_str().unwrap()];
        answer("claude-code", &hook_in(&ws, &dir, "claude-code", &args, input.to_string().as_bytes()))
    };
    let (v, reason) = verdict("cd sub && git status");
    assert_eq!(v, "deny", "{reason}");
    assert!(reason.contains("core.fsmonitor"), "{reason}");
    assert_eq!(verdict("git status").0, "allow", "the workspace's own repository");
    assert_eq!(verdict("cd sub && ls").0, "allow");
}

#[test]
fn every_hook_decision_is_audited_and_an_unrecordable_one_is_denied() {
    let dir = tempdir("hook-audit");
    let input = br#"{"session_id":"abc-123","transcript_path":"/dev/null","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"}}"#;
    let out = hook_in(&dir, &dir, "claude-code", &[], input);
    assert_eq!(answer("claude-code", &out).0, "allow");
    let records = warden_audit::read(&dir.join("audit/log.jsonl")).unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0].entry;
    assert_eq!((r.session.as_str(), r.tool.as_str(), r.input.command.as_deref()), ("abc-123", "exec", Some("ls -la")));
    let by = r.decided_by.as_ref().unwrap();
    assert_eq!((by.kind.as_str(), by.name.as_deref()), ("hook", Some("claude-code")));
    // A log that cannot be written: the call is denied, never passed.
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("audit"), "").unwrap();
    let out = hook_in(&dir, &home, "claude-code", &[], input);
    let (verdict, reason) = answer("claude-code", &out);
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains("audit log"), "{reason}");
}

#[test]
fn the_agent_s_own_file_tools_are_refused_the_audit_log_even_inside_the_workspace() {
    // The agent's Write and Read run outside any sandbox. The hook's log is `audit/log.jsonl`
    // in the folder that is also the workspace, and the policy allows every file tool there.
    let dir = tempdir("hook-kept");
    let policy = dir.join("tools.policy");
    std::fs::write(&policy, "version 1\ndefault deny\nallow tools write_file, read_file\nallow exec echo\nallow fs write \"${workspace}/**\"\nallow fs read \"${workspace}/**\"\n").unwrap();
    let call = |file: &str, path: &str| {
        let input = input_with("claude-code", file, |v| {
            v["cwd"] = dir.to_str().unwrap().into();
            v["tool_input"]["file_path"] = path.into();
        });
        answer("claude-code", &hook_in(&dir, &dir, "claude-code", &["--policy", policy.to_str().unwrap()], &input))
    };
    assert_eq!(call("write-src.json", "src/main.rs").0, "allow");
    for path in ["audit/log.jsonl", "audit/log.jsonl.head", "./src/../audit/new", dir.join("audit/log.jsonl").to_str().unwrap()] {
        let (verdict, reason) = call("write-src.json", path);
        assert_eq!(verdict, "deny", "{path}: {reason}");
        assert!(reason.contains("the audit log is never read or written by a tool or a command"), "{reason}");
    }
    assert_eq!(call("read-src.json", "audit/log.jsonl").0, "deny");
    // The agent's own shell, which runs outside any sandbox too.
    let bash = |command: &str| {
        let input = input_with("claude-code", "bash-git-status.json", |v| {
            v["cwd"] = dir.to_str().unwrap().into();
            v["tool_input"]["command"] = command.into();
        });
        answer("claude-code", &hook_in(&dir, &dir, "claude-code", &["--policy", policy.to_str().unwrap()], &input))
    };
    assert_eq!(bash("echo note >> notes.txt").0, "allow");
    let (verdict, reason) = bash("echo forged >> audit/log.jsonl");
    assert_eq!(verdict, "deny", "{reason}");
    assert!(reason.contains("the audit log"), "{reason}");
}
