//! What a copy or an extraction writes inside a folder it names, with the real shell
//! analyser: `cp -r hooks .git` writes `.git/hooks`, `unzip x.zip -d .git` writes into `.git`.
//! Judged by their operands alone, both were writes to `.git` and planted git hooks under a
//! hook, where no sandbox stands behind the decision.

use crate::decide::{compile_texts, ctx};
use warden_policy::Action;
use warden_policy::Request;
use warden_policy::ast::Verdict::{self, Allow as A, Deny as D};

const POLICY: &str = r#"version 1
default deny
paths guarded = "${workspace}/.git/hooks/**", "**/.git/hooks/**", "**/.git/config", "**/.claude/settings.json", "${workspace}/.warden/**"
paths startup = "~/.bashrc", "~/.profile"
paths keys = "~/.ssh/**", "**/.env", "**/*.pem", "/etc/shadow"
paths system_targets = "/etc/cron.d/**", "/etc/profile.d/**"
tier build: allow {
    exec cp, mv, install, ln, tar, unzip, 7z, cpio
    fs write "${workspace}/**", "/tmp/**"
}
deny "guarded paths are never written" fs write guarded, startup, system_targets
deny "secrets are never read" fs read keys
"#;

fn verdict(cmd: &str) -> Verdict {
    let set = compile_texts(&[POLICY]).unwrap();
    let a = warden_shell::analyse(cmd);
    set.decide(&Request { agent: None, action: Action::Exec(&a) }, &ctx()).verdict
}

#[test]
fn a_source_copied_into_a_folder_is_judged_by_the_name_it_gets_there() {
    for cmd in [
        "cp -r hooks .git",
        "cp -r /tmp/x/hooks/ .git/",
        "mv hooks .git",
        "cp -t .git -r hooks",
        "cp --target-directory=.git -r hooks",
        "install -m 755 pre-commit .git/hooks",
        "ln -s /tmp/hooks .git",
        "cd .git && cp -r /tmp/hooks .",
        "cp settings.json .claude/",
        "cp -r ssh ~/.ssh",
        "cp id_rsa ~/.ssh",
        "cp x.bashrc ~/ && cp .bashrc ~",
    ] {
        assert_eq!(verdict(cmd), D, "{cmd}");
    }
}

#[test]
fn a_folder_written_with_names_not_known_is_judged_by_the_patterns_that_reach_into_it() {
    for cmd in [
        "unzip x.zip -d .git",
        "unzip -o -d .git/hooks x.zip",
        "tar -xf x.tar -C .git",
        "tar xzfC x.tgz .git",
        "tar --extract --file=x.tar --directory .git",
        "7z x a.7z -o.git",
        "cpio -idm -D .git",
        "cp -r x/. .git",
        "cp /tmp/x/* .git",
        "cp -rT /tmp/x .git",
        "unzip x.zip -d sub/.git",
        "unzip -d ~ dotfiles.zip",
        "tar -xf x.tar -C /",
        "tar -xf x.tar -C /etc",
        "unzip x.zip -d /etc/cron.d",
        "unzip x.zip -d .warden",
        "ln -s .git g",
        "ln -sf ../.git sub/g",
        "ln -s ~/.ssh keys",
        "ln -s /etc e",
        "ln -s -t links ../../workspace/.git",
        // Moved out of their guard, or made anew whole where there is none.
        "mv .git g",
        "mv .claude c",
        "cp -r /tmp/crafted .git",
        "mv /tmp/crafted .git",
        "ln -s /tmp/evil .git",
        "cp -rT /tmp/crafted sub/.git",
    ] {
        assert_eq!(verdict(cmd), D, "{cmd}");
    }
}

#[test]
fn ordinary_copies_and_extractions_stay_allowed() {
    for cmd in [
        "cp a.txt b.txt dest/",
        "cp -r src build/",
        "mv old.rs new.rs",
        "tar -xzf node.tgz -C build",
        "tar -cf x.tar -C .git hooks",
        "unzip x.zip -d vendor",
        "unzip x.zip",
        "tar xf x.tar",
        "cp x .claude",
        "cp -r x/. build",
        "7z x a.7z -obuild",
        "install -d build/bin",
        "cp -r hooks /tmp/x",
        "ln -s src/main.rs m.rs",
        "ln -s /usr/bin/python3 py",
        "ln -s ../node_modules/.bin/tsc bin/tsc",
        "ln -s .git/../src s",
        "mv old.rs new.rs",
        "mv notes.txt ~",
        "cp notes.txt ~",
        "mv src lib",
        "cp -r src backup",
    ] {
        assert_eq!(verdict(cmd), A, "{cmd}");
    }
}
