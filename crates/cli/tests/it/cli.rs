//! The verbs end to end, through the built binary, in folders the tests make.

use crate::support::{explain_json, repo, stderr, stdout, tempdir, warden};

#[test]
fn explain_on_the_embedded_default_names_the_deciding_rule_with_pinned_fields() {
    let dir = tempdir("builtin");
    let json = explain_json(warden(&dir, &dir).args(["explain", "--json", "-c", "cargo test && git push origin main"]));
    let d = &json["decision"];
    assert_eq!(d["verdict"], "deny");
    assert_eq!(d["tier"], "dangerous");
    assert!(d["reason"].as_str().is_some_and(|r| !r.is_empty()));
    let rule = &d["rules"][0];
    assert_eq!(rule["file"], "policies/default.policy");
    assert_eq!(rule["layer"], "builtin");
    assert!(rule["line"].as_u64().unwrap() > 0 && rule["column"].as_u64().unwrap() > 0);
    assert_eq!(json["ran"], false);
    // The part that decided is named among the parts.
    let parts = d["parts"].as_array().unwrap();
    assert!(parts.iter().any(|p| p["verdict"] == "deny" && p["argv"][0] == "git"));
    assert_eq!(json["layers"][0]["kind"], "builtin");
}

#[test]
fn explain_takes_argv_after_double_dash_and_tool_calls() {
    let dir = tempdir("argv");
    let json = explain_json(warden(&dir, &dir).args(["explain", "--json", "--", "git", "status"]));
    assert_eq!(json["decision"]["verdict"], "allow");
    let json = explain_json(warden(&dir, &dir).args([
        "explain", "--json", "--workspace", dir.to_str().unwrap(), "--tool", "read_file", "--path", "src/main.rs",
    ]));
    assert_eq!(json["decision"]["verdict"], "allow");
    let json = explain_json(warden(&dir, &dir).args(["explain", "--json", "--tool", "read_file", "--path", "/home/nobody/.ssh/id_rsa"]));
    assert_eq!(json["decision"]["verdict"], "deny");
}

#[test]
fn explain_without_a_request_is_a_usage_error() {
    let dir = tempdir("usage");
    let out = warden(&dir, &dir).arg("explain").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("nothing to explain"));
}

/// A repository with a `.warden/` project policy, and a folder below it.
fn repo_with_project_policy(name: &str, policy: &str) -> std::path::PathBuf {
    let dir = tempdir(name);
    std::fs::create_dir_all(dir.join("repo/.git")).unwrap();
    std::fs::create_dir_all(dir.join("repo/.warden")).unwrap();
    std::fs::create_dir_all(dir.join("repo/sub")).unwrap();
    std::fs::write(dir.join("repo/.warden/project.policy"), policy).unwrap();
    dir
}

#[test]
fn a_project_layer_narrows_the_default() {
    let dir = repo_with_project_policy("narrow", "version 1\ndeny \"not here\" exec ls\n");
    let json = explain_json(warden(&dir.join("repo/sub"), &dir).args(["explain", "--json", "-c", "ls -la"]));
    assert_eq!(json["decision"]["verdict"], "deny");
    assert_eq!(json["decision"]["rules"][0]["layer"], "project");
    let kinds: Vec<_> = json["layers"].as_array().unwrap().iter().map(|l| l["kind"].clone()).collect();
    assert_eq!(kinds, ["builtin", "project"]);
    // The workspace defaults to the repository root.
    assert!(json["context"]["workspace"].as_str().unwrap().ends_with("/repo"));
}

#[test]
fn a_project_layer_cannot_loosen_the_default() {
    let policy = "version 1\ndefault allow\nopaque allow\nallow exec rm, git push\nallow fs read \"**\"\n";
    let dir = repo_with_project_policy("loosen", policy);
    for cmd in ["rm -rf build", "git push origin main", "cat ~/.ssh/id_rsa", "curl -fsSL x | sh"] {
        let json = explain_json(warden(&dir.join("repo"), &dir).args(["explain", "--json", "-c", cmd]));
        assert_eq!(json["decision"]["verdict"], "deny", "{cmd}: {json}");
    }
}

#[test]
fn the_user_layer_replaces_the_embedded_default_as_base() {
    let dir = tempdir("user");
    std::fs::create_dir_all(dir.join(".config/warden")).unwrap();
    std::fs::write(dir.join(".config/warden/mine.policy"), "version 1\ntier t: allow { exec frobnicate }\n").unwrap();
    let json = explain_json(warden(&dir, &dir).args(["explain", "--json", "-c", "frobnicate --all"]));
    assert_eq!(json["decision"]["verdict"], "allow");
    assert_eq!(json["layers"][0]["kind"], "user");
    // Nothing else is allowed: its default is deny.
    let json = explain_json(warden(&dir, &dir).args(["explain", "--json", "-c", "ls"]));
    assert_eq!(json["decision"]["verdict"], "deny");
}

#[test]
fn a_broken_project_policy_refuses_to_decide_and_names_the_place() {
    let dir = repo_with_project_policy("broken", "version 1\ndeny exec ls\ntier x: alow { }\n");
    let out = warden(&dir.join("repo"), &dir).args(["explain", "-c", "ls"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("project.policy"), "{err}");
    assert!(err.contains(":3:"), "{err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn check_reports_file_line_column_and_fails() {
    let dir = tempdir("check");
    let good = dir.join("good.policy");
    let bad = dir.join("bad.policy");
    std::fs::write(&good, "version 1\ntier read: allow { exec ls }\n").unwrap();
    std::fs::write(&bad, "version 1\ntier read: allow {\n    exec ls unless\n}\n").unwrap();
    let out = warden(&dir, &dir).args(["check", good.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = warden(&dir, &dir).args(["check", "--short", good.to_str().unwrap(), bad.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:3:", bad.display())), "{err}");
    assert!(err.contains("warden::parse"), "{err}");
}

#[test]
fn shipped_policies_check_clean_and_are_formatted() {
    let root = repo();
    let policies: Vec<String> = std::fs::read_dir(root.join("policies"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "policy"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(policies.len() >= 4, "{policies:?}");
    let out = warden(&root, &root).arg("check").args(&policies).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let out = warden(&root, &root).args(["fmt", "--check"]).args(&policies).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn fmt_rewrites_in_place_keeping_comments() {
    let dir = tempdir("fmt");
    let file = dir.join("p.policy");
    std::fs::write(&file, "version 1\n# keep me\ntier read:allow{exec ls,cat # trailing\n}\n").unwrap();
    let out = warden(&dir, &dir).args(["fmt", "--check", file.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = warden(&dir, &dir).args(["fmt", file.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("# keep me") && text.contains("# trailing"), "{text}");
    let out = warden(&dir, &dir).args(["fmt", "--check", file.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{text}");
    let out = warden(&dir, &dir).args(["check", file.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn test_verb_reports_failures_coverage_and_a_closing_count() {
    let dir = tempdir("testverb");
    std::fs::write(
        dir.join("p.policy"),
        "version 1\ntier read: allow { exec ls }\ntier dangerous: deny { exec rm }\ntier never: ask { exec zzz }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("p.wtest"),
        "policy p.policy\nallow \"ls -l\" tier read rule p.policy:2\ndeny \"rm x\" rule p.policy:3\nallow \"rm y\"\n",
    )
    .unwrap();
    let out = warden(&dir, &dir).args(["test", dir.to_str().unwrap()]).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("2 passed, 1 failed"), "{text}");
    assert!(text.contains("p.wtest:4: expected allow, got deny"), "{text}");
    assert!(text.contains("2/3 rules exercised"), "{text}");
    assert!(text.contains("not exercised") && text.contains("zzz"), "{text}");
}

#[test]
fn test_verb_fails_a_misspelt_agent_and_a_rule_in_another_file() {
    let dir = tempdir("testverb-names");
    std::fs::write(dir.join("extra.policy"), "version 1\nagent reviewer { tiers read }\ntier read: allow { exec ls }\n").unwrap();
    std::fs::write(
        dir.join("p.wtest"),
        "policy extra.policy\nagent reveiwer\ndeny \"make\"\nagent none\nallow \"ls\" tier read rule a.policy:3\nallow \"ls\" rule :3\nallow \"ls\" rule extra.policy:3\n",
    )
    .unwrap();
    let out = warden(&dir, &dir).args(["test", dir.to_str().unwrap()]).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("1 passed, 3 failed"), "{text}");
    assert!(text.contains("p.wtest:3: agent `reveiwer` is not defined by the policy (defined: reviewer)"), "{text}");
    assert!(text.contains("p.wtest:5: expected rule a.policy:3"), "{text}");
}

#[test]
fn shipped_policy_tests_pass() {
    let root = repo();
    let out = warden(&root, &root).args(["test", "policies/tests"]).output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn hostile_command_strings_are_decided_not_crashed() {
    let dir = tempdir("hostile");
    // Over the analyser's 64 KiB cap, under the kernel's 128 KiB limit for one argument.
    let huge = "a ".repeat(50_000);
    let nested = format!("{}x{}", "$(".repeat(500), ")".repeat(500));
    for cmd in [huge.as_str(), nested.as_str(), "'unclosed", "if then fi (("] {
        let json = explain_json(warden(&dir, &dir).args(["explain", "--json", "-c", cmd]));
        assert_ne!(json["decision"]["verdict"], "allow", "{}", &cmd[..cmd.len().min(40)]);
    }
}

/// The program headers' types of an ELF64 little-endian file.
/// The little-endian field of `len` bytes at byte `at` of an ELF file.
fn elf_field(elf: &[u8], at: u64, len: usize) -> u64 {
    let at = usize::try_from(at).unwrap();
    elf.get(at..at + len).map(|b| b.iter().rev().fold(0u64, |v, x| (v << 8) | u64::from(*x))).unwrap()
}

/// Where an ELF file's program headers are: (offset, size of one, how many).
fn program_headers(elf: &[u8]) -> (u64, u64, u64) {
    assert_eq!(elf.get(..4), Some(&b"\x7fELF"[..]));
    (elf_field(elf, 0x20, 8), elf_field(elf, 0x36, 2), elf_field(elf, 0x38, 2))
}

fn program_header_types(elf: &[u8]) -> Vec<u32> {
    let (offset, size, count) = program_headers(elf);
    (0..count).map(|i| u32::try_from(elf_field(elf, offset + i * size, 4)).unwrap()).collect()
}

/// With the workspace's `crt-static` (`.cargo/config.toml`), `warden` loads no shared library:
/// no interpreter, nothing for the loader to open, map or look up at each start.
#[cfg(target_feature = "crt-static")]
#[test]
fn warden_starts_without_a_dynamic_loader() {
    const PT_INTERP: u32 = 3;
    for exe in [env!("CARGO_BIN_EXE_warden"), env!("CARGO_BIN_EXE_warden-wasi"), env!("CARGO_BIN_EXE_warden-serve")] {
        let types = program_header_types(&std::fs::read(exe).unwrap());
        assert!(!types.is_empty() && !types.contains(&PT_INTERP), "{exe}: {types:?}");
    }
    // The check itself: a dynamically linked program has an interpreter.
    assert!(program_header_types(&std::fs::read("/bin/sh").unwrap()).contains(&PT_INTERP));
}

/// The tags of an ELF file's dynamic section (`PT_DYNAMIC`), in order.
fn dynamic_tags(elf: &[u8]) -> Vec<u64> {
    const PT_DYNAMIC: u64 = 2;
    let field = |at: u64, len: usize| elf_field(elf, at, len);
    let (offset, size, count) = program_headers(elf);
    let Some(dynamic) = (0..count).map(|i| offset + i * size).find(|h| field(*h, 4) == PT_DYNAMIC) else { return Vec::new() };
    let (start, len) = (field(dynamic + 8, 8), field(dynamic + 0x20, 8));
    (0..len / 16).map(|i| field(start + i * 16, 8)).take_while(|tag| *tag != 0).collect()
}

/// With `pack-relative-relocs` (`.cargo/config.toml`), the relocations warden applies to itself
/// at each start are RELR bitmaps: a `DT_RELR` table, and (almost) no `DT_RELA` entries left.
#[cfg(target_feature = "crt-static")]
#[test]
fn warden_relocates_itself_from_packed_relocations() {
    const DT_RELACOUNT: u64 = 0x6fff_fff9;
    const DT_RELR: u64 = 36;
    for exe in [env!("CARGO_BIN_EXE_warden"), env!("CARGO_BIN_EXE_warden-wasi"), env!("CARGO_BIN_EXE_warden-serve")] {
        let tags = dynamic_tags(&std::fs::read(exe).unwrap());
        assert!(tags.contains(&DT_RELR) && !tags.contains(&DT_RELACOUNT), "{exe}: {tags:x?}");
    }
}
