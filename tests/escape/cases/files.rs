//! Changes to files the sandbox may not write: `outside/` (not granted at all), `readable/`
//! (granted read-only) and the guarded workspace paths. The suite's snapshot of those trees is
//! the check: content, mode, owner, inode, link count, mtime and ctime (xattrs) must not move.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{Attack, Case, case, py, reached};

/// Files below `dir` (named with `marker`) that carry a set-id bit, or belong to anyone but
/// `owner` (uid, gid): the command may create files, never privileged or foreign ones.
fn foreign_or_setid(dir: &Path, owner: (u32, u32), marker: &str, out: &mut Vec<String>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let Ok(md) = e.path().symlink_metadata() else {
            continue;
        };
        let mine = e.path().to_string_lossy().contains(marker);
        if mine && (md.mode() & 0o6000 != 0 || (md.uid(), md.gid()) != owner) {
            out.push(format!(
                "{} (uid {}, gid {}, mode {:o}; the workspace is {}:{})",
                e.path().display(),
                md.uid(),
                md.gid(),
                md.mode(),
                owner.0,
                owner.1
            ));
        }
        if md.is_dir() {
            foreign_or_setid(&e.path(), owner, marker, out);
        }
    }
}

/// The paths of the entries of `dir` (none when it is missing): what an attack planted there.
fn entries(dir: &Path) -> Vec<String> {
    fs::read_dir(dir).map(|rd| rd.flatten().map(|e| e.path().display().to_string()).collect()).unwrap_or_default()
}

/// The workspace's owner (uid, gid), as the run left it.
fn ws_owner(fx: &crate::fixture::Fixture) -> Result<(u32, u32), String> {
    let md = fs::metadata(&fx.ws).map_err(|e| format!("{}: {e}", fx.ws.display()))?;
    Ok((md.uid(), md.gid()))
}

/// A mutation of a planted file, denied as `op` on a target containing `target`.
macro_rules! mutation {
    ($name:literal, $script:literal, $op:literal, $target:literal) => {
        case($name, |_| Ok(Attack::new($script).deny($op, $target)))
    };
    (hidden $name:literal, $script:literal, $op:literal, $target:literal) => {
        case($name, |_| Ok(Attack::hidden($script).deny($op, $target)))
    };
    ($name:literal, $script:expr, $op:literal, $target:literal, $op2:literal, $target2:literal) => {
        case($name, |_| {
            Ok(Attack::new(&$script)
                .deny($op, $target)
                .deny($op2, $target2))
        })
    };
}

/// Fails unless the workspace file `rel` still holds `planted`.
fn unchanged(fx: &crate::fixture::Fixture, rel: &str, planted: &str) -> Result<(), String> {
    let now = fs::read_to_string(fx.ws.join(rel)).unwrap_or_default();
    if now == planted { Ok(()) } else { Err(format!("{rel} is now {now:?}")) }
}

pub fn cases() -> Vec<Case> {
    vec![
        // outside/: not in the grants at all.
        mutation!(
            "outside-write",
            "echo pwned > {out}/victim.txt",
            "fs.write",
            "{out}/victim.txt"
        ),
        mutation!(
            "outside-append",
            "echo pwned >> {out}/victim.txt",
            "fs.write",
            "{out}/victim.txt"
        ),
        mutation!(
            "outside-rename",
            "mv {out}/victim.txt {out}/renamed.txt",
            "fs.write",
            "{out}/"
        ),
        mutation!(
            "outside-move-into-workspace",
            "mv {out}/victim.txt {ws}/stolen.txt",
            "fs.write",
            "{out}/victim.txt",
            "fs.read",
            "{out}/victim.txt"
        ),
        mutation!(
            "outside-chmod",
            "chmod 0777 {out}/victim.txt",
            "fs.write",
            "{out}/victim.txt"
        ),
        mutation!(
            "outside-chown",
            "chown 65534:65534 {out}/victim.txt",
            "fs.write",
            "{out}/victim.txt"
        ),
        mutation!(
            "outside-utime",
            "touch -d '2001-01-01 00:00' {out}/victim.txt",
            "fs.write",
            "{out}/victim.txt"
        ),
        mutation!(
            "outside-truncate",
            "truncate -s 0 {out}/victim.txt",
            "fs.write",
            "{out}/victim.txt"
        ),
        mutation!(
            "outside-xattr",
            py(r#"import os; os.setxattr("{out}/victim.txt", "user.pwned", b"1")"#),
            "fs.write",
            "{out}/victim.txt",
            "fs.read",
            "{out}/victim.txt"
        ),
        mutation!(
            "outside-unlink",
            "rm -f {out}/victim.txt",
            "fs.write",
            "{out}/victim.txt"
        ),
        mutation!(
            "outside-remove-tree",
            "rm -rf {out}/dir",
            "fs.write",
            "{out}/dir"
        ),
        mutation!(
            "outside-create",
            "echo pwned > {out}/new.txt; mkdir {out}/newdir; ln -s /etc/passwd {out}/link",
            "fs.write",
            "{out}/"
        ),
        // readable/: granted read-only.
        mutation!(
            "readable-write",
            "echo pwned > {rd}/public.txt",
            "fs.write",
            "{rd}/public.txt"
        ),
        mutation!(
            "readable-append",
            "echo pwned >> {rd}/public.txt",
            "fs.write",
            "{rd}/public.txt"
        ),
        mutation!(
            "readable-rename",
            "mv {rd}/public.txt {rd}/renamed.txt",
            "fs.write",
            "{rd}/"
        ),
        mutation!(
            "readable-chmod",
            "chmod 0777 {rd}/public.txt",
            "fs.write",
            "{rd}/public.txt"
        ),
        mutation!(
            "readable-chown",
            "chown 65534:65534 {rd}/public.txt",
            "fs.write",
            "{rd}/public.txt"
        ),
        mutation!(
            "readable-utime",
            "touch -d '2001-01-01 00:00' {rd}/public.txt",
            "fs.write",
            "{rd}/public.txt"
        ),
        mutation!(
            "readable-truncate",
            "truncate -s 0 {rd}/public.txt",
            "fs.write",
            "{rd}/public.txt"
        ),
        mutation!(
            "readable-xattr",
            py(r#"import os; os.setxattr("{rd}/public.txt", "user.pwned", b"1")"#),
            "fs.write",
            "{rd}/public.txt",
            "fs.read",
            "{rd}/public.txt"
        ),
        mutation!(
            "readable-unlink",
            "rm -f {rd}/public.txt",
            "fs.write",
            "{rd}/public.txt"
        ),
        mutation!(
            "readable-create",
            "echo pwned > {rd}/new.txt; mkdir {rd}/newdir",
            "fs.write",
            "{rd}/new"
        ),
        // Guarded paths inside the writable workspace.
        mutation!(
            hidden "guarded-hook-overwrite",
            "printf '#!/bin/sh\\necho pwned\\n' > $W/.git/hooks/pre-commit",
            "fs.write",
            "{ws}/.git/hooks/pre-commit"
        ),
        mutation!(
            hidden "guarded-hook-create",
            "printf '#!/bin/sh\\necho pwned\\n' > $W/.git/hooks/post-checkout; chmod +x $W/.git/hooks/post-checkout",
            "fs.write",
            "{ws}/.git/hooks/post-checkout"
        ),
        mutation!(
            hidden "guarded-hooks-dir-swap",
            "mv $W/.git/hooks $W/.git/hooks.old; mkdir -p $W/.git/hooks; echo pwned > $W/.git/hooks/pre-commit",
            "fs.write",
            "{ws}/.git/hooks"
        ),
        // A clone without `.git/hooks`: the command could make the folder and plant a hook the
        // host's next `git commit` runs. warden makes the folder (empty) to cover it.
        case("guarded-hooks-dir-missing", |fx| {
            let hooks = fx.ws.join(".git/hooks");
            fs::remove_dir_all(&hooks).map_err(|e| format!("{}: {e}", hooks.display()))?;
            Ok(Attack::hidden(
                "mkdir -p $W/.git/hooks; printf '#!/bin/sh\\necho pwned\\n' > $W/.git/hooks/pre-commit; \
                 chmod +x $W/.git/hooks/pre-commit; echo END",
            )
            .deny("fs.write", "{ws}/.git/hooks")
            .check(|fx, out| {
                reached(out, "END")?;
                let hooks = fx.ws.join(".git/hooks");
                let planted = entries(&hooks);
                if planted.is_empty() { Ok(()) } else { Err(format!("the command planted {planted:?}")) }
            }))
        }),
        // A submodule's git folder lives in the workspace's `.git/modules/`: its `config`
        // (`core.fsmonitor`, `core.hooksPath`) and `hooks/` run on the host like the top ones.
        case("guarded-submodule-config-and-hooks", |fx| {
            let config = "[core]\n\trepositoryformatversion = 0\n";
            fx.plant("ws/.git/modules/lib/config", config, 0o644).map_err(|e| e.to_string())?;
            fs::create_dir_all(fx.ws.join(".git/modules/lib/hooks")).map_err(|e| e.to_string())?;
            Ok(Attack::hidden(
                "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> $W/.git/modules/lib/config; \
                 printf '#!/bin/sh\\necho pwned\\n' > $W/.git/modules/lib/hooks/pre-commit; \
                 mv $W/.git/modules/lib/config $W/.git/modules/lib/config.old; echo END",
            )
            .deny("fs.write", "{ws}/.git/modules/lib/")
            .check(move |fx, out| {
                reached(out, "END")?;
                let lib = fx.ws.join(".git/modules/lib");
                let now = fs::read_to_string(lib.join("config")).unwrap_or_default();
                let planted = entries(&lib.join("hooks"));
                match (now == config, planted.is_empty()) {
                    (true, true) => Ok(()),
                    _ => Err(format!("the submodule's config is now {now:?}; hooks planted: {planted:?}")),
                }
            }))
        }),
        mutation!(
            hidden "guarded-git-config-append",
            "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> $W/.git/config",
            "fs.write",
            "{ws}/.git/config"
        ),
        mutation!(
            hidden "guarded-git-config-replace",
            "printf '[core]\\n\\tfsmonitor = evil\\n' > $W/.git/config.new; mv -f $W/.git/config.new $W/.git/config",
            "fs.write",
            "{ws}/.git/config"
        ),
        mutation!(
            hidden "guarded-git-config-via-git",
            "git -c safe.directory='*' -C $W config core.fsmonitor 'touch /tmp/pwned'; git -c safe.directory='*' -C $W config --get core.fsmonitor; echo END",
            "fs.write",
            "{ws}/.git/config"
        ),
        mutation!(
            hidden "guarded-warden-dir-write",
            "echo 'default allow' > $W/.warden/project.policy; echo pwned >> $W/.warden/notes.txt",
            "fs.write",
            "{ws}/.warden/"
        ),
        mutation!(
            hidden "guarded-warden-dir-swap",
            "mv $W/.warden $W/.warden-old; mkdir -p $W/.warden; echo 'default allow' > $W/.warden/project.policy",
            "fs.write",
            "{ws}/.warden"
        ),
        // The folder that holds guarded paths moved away and made again: the host's next `git`
        // would read the new `config` and run the new hook (each guarded path's read-only bind
        // moves away with its folder). The folder is a mount point too, so it stays.
        mutation!(
            hidden "guarded-parent-swap",
            "mv $W/.git $W/.git-old; mkdir -p $W/.git/hooks; printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > $W/.git/config; \
             printf '#!/bin/sh\\necho pwned\\n' > $W/.git/hooks/pre-commit; chmod +x $W/.git/hooks/pre-commit; \
             mkdir $W/fake-git; mv -T $W/fake-git $W/.git; rm -rf $W/.git",
            "fs.write",
            "{ws}/.git"
        ),
        // A submodule's `.git` is a file naming its git folder: pointed at a folder the command
        // made, the superproject's next `git status` runs that folder's `core.fsmonitor`.
        case("guarded-submodule-pointer", |fx| {
            let pointer = "gitdir: ../.git/modules/lib\n";
            fx.plant("ws/lib/.git", pointer, 0o644).map_err(|e| e.to_string())?;
            fx.plant("ws/.git/modules/lib/config", "[core]\n\trepositoryformatversion = 0\n", 0o644).map_err(|e| e.to_string())?;
            Ok(Attack::hidden(
                "mkdir -p $W/evil; printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > $W/evil/config; \
                 echo 'gitdir: ../evil' > $W/lib/.git; mv $W/lib $W/lib-old; mkdir -p $W/lib; echo 'gitdir: ../evil' > $W/lib/.git; \
                 echo END",
            )
            .deny("fs.write", "{ws}/lib")
            .check(move |fx, out| {
                reached(out, "END")?;
                unchanged(fx, "lib/.git", pointer)
            }))
        }),
        // `core.hooksPath` moves the hooks git runs out of `.git/hooks`: to a folder of the
        // workspace no policy pattern names.
        case("guarded-hooks-path", |fx| {
            fx.plant("ws/.git/config", "[core]\n\trepositoryformatversion = 0\n\thooksPath = tools/hooks\n", 0o644)
                .map_err(|e| e.to_string())?;
            fx.plant("ws/tools/hooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755).map_err(|e| e.to_string())?;
            Ok(Attack::hidden(
                "printf '#!/bin/sh\\necho pwned\\n' > $W/tools/hooks/pre-commit; \
                 printf '#!/bin/sh\\necho pwned\\n' > $W/tools/hooks/post-checkout; chmod +x $W/tools/hooks/post-checkout; \
                 mv $W/tools $W/tools-old; echo END",
            )
            .deny("fs.write", "{ws}/tools")
            .check(|fx, out| {
                reached(out, "END")?;
                let hooks = fx.ws.join("tools/hooks");
                let now = fs::read_to_string(hooks.join("pre-commit")).unwrap_or_default();
                let planted = hooks.join("post-checkout").exists();
                match (now == "#!/bin/sh\nexit 0\n", planted) {
                    (true, false) => Ok(()),
                    _ => Err(format!("pre-commit is now {now:?}; post-checkout planted: {planted}")),
                }
            }))
        }),
        // `include.path` makes a committed file part of the repository's config.
        case("guarded-config-include", |fx| {
            fx.plant("ws/.git/config", "[core]\n\trepositoryformatversion = 0\n[include]\n\tpath = ../.gitconfig\n", 0o644)
                .map_err(|e| e.to_string())?;
            fx.plant("ws/.gitconfig", "[user]\n\tname = n\n", 0o644).map_err(|e| e.to_string())?;
            Ok(Attack::hidden("printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> $W/.gitconfig; echo END")
                .deny("fs.write", "{ws}/.gitconfig")
                .check(|fx, out| {
                    reached(out, "END")?;
                    unchanged(fx, ".gitconfig", "[user]\n\tname = n\n")
                }))
        }),
        // Past the 8 shallowest repositories the sweep notes: git's own files made in a deeper
        // one (a commondir it lacked, hooks where it had none) are read after the run too.
        case("guarded-deep-repository", |fx| {
            let config = "[core]\n\trepositoryformatversion = 0\n";
            for i in 0..9 {
                fx.plant(&format!("ws/r{i}/.git/config"), config, 0o644).map_err(|e| e.to_string())?;
            }
            fx.plant("ws/a/b/c/deep/.git/config", config, 0o644).map_err(|e| e.to_string())?;
            fx.plant("ws/a/b/c/deep/.git/HEAD", "ref: refs/heads/main\n", 0o644).map_err(|e| e.to_string())?;
            Ok(Attack::hidden(
                "sleep 0.3; D=$W/a/b/c/deep/.git; mkdir -p $W/evil $D/hooks; \
                 printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > $W/evil/config; echo ../../../../evil > $D/commondir; \
                 printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > $D/hooks/post-checkout; chmod +x $D/hooks/post-checkout; echo END",
            )
            .deny("fs.write", "{ws}/")
            .check(|fx, out| {
                reached(out, "END")?;
                let deep = fx.ws.join("a/b/c/deep/.git");
                let left: Vec<&str> =
                    ["commondir", "hooks/post-checkout"].into_iter().filter(|p| deep.join(p).symlink_metadata().is_ok()).collect();
                if left.is_empty() { Ok(()) } else { Err(format!("left where git reads it: {left:?}")) }
            }))
        }),
        // Mercurial's per-repository config: `[hooks]` and `[extensions]` run on the host's
        // next `hg` command.
        case("guarded-hgrc", |fx| {
            fx.plant("ws/.hg/hgrc", "[ui]\nusername = u\n", 0o644).map_err(|e| e.to_string())?;
            Ok(Attack::hidden(
                "printf '[hooks]\\npre-commit = touch /tmp/pwned\\n' >> $W/.hg/hgrc; \
                 printf '[extensions]\\nevil = /tmp/evil.py\\n' > $W/.hg/hgrc.new; mv -f $W/.hg/hgrc.new $W/.hg/hgrc; echo END",
            )
            .deny("fs.write", "{ws}/.hg")
            .check(|fx, out| {
                reached(out, "END")?;
                unchanged(fx, ".hg/hgrc", "[ui]\nusername = u\n")
            }))
        }),
        // Guarded paths that do not exist when the run starts: no mount covers them, so warden
        // removes what the command made there once it has ended. A `.git/commondir` sends the
        // host's next `git` to another folder's config (`core.fsmonitor` runs a program).
        case("guarded-missing-made", |_| {
            Ok(Attack::hidden(
                "mkdir -p $W/evil/hooks; printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > $W/evil/config; \
                 echo ../evil > $W/.git/commondir; mkdir -p $W/.claude; echo '{\"hooks\":{}}' > $W/.claude/settings.json; \
                 echo kept > $W/.claude/notes.md; ln -s evil/config $W/.mcp.json; echo END",
            )
            .deny("fs.write", "{ws}/")
            .check(|fx, out| {
                reached(out, "END")?;
                let left: Vec<&str> = [".git/commondir", ".claude/settings.json", ".mcp.json"]
                    .into_iter()
                    .filter(|p| fx.ws.join(p).symlink_metadata().is_ok())
                    .collect();
                let kept = fs::read_to_string(fx.ws.join(".claude/notes.md")).unwrap_or_default();
                match (left.is_empty(), kept.trim() == "kept") {
                    (true, true) => Ok(()),
                    _ => Err(format!("left after the run: {left:?}; the command's other file: {kept:?}")),
                }
            }))
        }),
        // A repository the command makes is its own: no mount covers its config or hooks, and
        // the host's next `git status` runs them once `git add` records it (or as soon as an
        // editor's git view looks into it). So is a folder a new `.git` file names, and one git
        // takes for a bare repository. A clean new repository must stay as it is.
        case("guarded-new-repository", |_| {
            Ok(Attack::hidden(
                "sleep 0.3; for r in sub/.git clean/.git bare.git; do mkdir -p $W/$r/objects $W/$r/refs/heads $W/$r/hooks; \
                 echo 'ref: refs/heads/main' > $W/$r/HEAD; printf '[core]\\n\\trepositoryformatversion = 0\\n' > $W/$r/config; done; \
                 printf '[core] fsmonitor = touch /tmp/pwned\\n' >> $W/sub/.git/config; \
                 printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > $W/sub/.git/hooks/post-checkout; chmod +x $W/sub/.git/hooks/post-checkout; \
                 printf '[core]\\n\\tsshCommand = touch /tmp/pwned\\n' >> $W/bare.git/config; \
                 mkdir -p $W/fake $W/vendored; printf '[include]\\n\\tpath = ../x\\n' > $W/fake/config; \
                 echo 'gitdir: ../fake' > $W/vendored/.git; echo END",
            )
            .deny("fs.write", "{ws}/")
            .check(|fx, out| {
                reached(out, "END")?;
                let unsafe_left: Vec<&str> = ["sub/.git/config", "sub/.git/hooks/post-checkout", "bare.git/config", "fake/config"]
                    .into_iter()
                    .filter(|p| fx.ws.join(p).symlink_metadata().is_ok())
                    .collect();
                let kept = fx.ws.join("sub/.git/config.warden-quarantined").is_file() && fx.ws.join("clean/.git/config").is_file();
                match (unsafe_left.is_empty(), kept) {
                    (true, true) => Ok(()),
                    _ => Err(format!("left where git reads it: {unsafe_left:?}; the rest kept: {kept}")),
                }
            }))
        }),
        mutation!(
            hidden "guarded-via-symlink",
            "ln -s $W/.git/hooks $W/hooks-link; echo pwned > $W/hooks-link/pre-commit; ln -s $W/.git/config $W/cfg; echo pwned >> $W/cfg",
            "fs.write",
            "{ws}/"
        ),
        mutation!(
            hidden "guarded-hook-move-into",
            "printf '#!/bin/sh\\necho pwned\\n' > $W/evil; chmod +x $W/evil; mv $W/evil $W/.git/hooks/pre-push; \
             mv -f $W/evil $W/.git/hooks/pre-commit; ln $W/evil $W/.git/hooks/post-merge; cp $W/evil $W/.git/hooks/",
            "fs.write",
            "{ws}/"
        ),
        mutation!(
            "policy-overwrite",
            "echo 'default allow' >> {root}/policy.policy; echo pwned > {root}/policy.policy; rm -f {root}/policy.policy",
            "fs.write",
            "{root}/policy.policy"
        ),
        // Ownership. A root caller's command runs as nobody; the workspace is an idmapped mount
        // that maps its owner to it. What it creates belongs to the workspace's owner (root's
        // workspace: root), never carries a set-id bit, and cannot be given away.
        case("setuid-root-plant", |_| {
            Ok(Attack::hidden(
                "cp /bin/sh $W/plant-sh; chmod 4755 $W/plant-sh; chown 0:0 $W/plant-sh; chmod 6755 $W/plant-sh; \
                 chown 1:1 $W/plant-sh; chgrp 0 $W/plant-sh; mkdir $W/plant-sgid; chmod 2777 $W/plant-sgid; \
                 python3 -c 'import os; os.close(os.open(\"'$W'/plant-py\", os.O_CREAT|os.O_WRONLY, 0o6755))'; \
                 python3 -c 'import ctypes, os, struct; c = ctypes.CDLL(None, use_errno=True); c.syscall.restype = ctypes.c_long; \
                 how = ctypes.create_string_buffer(struct.pack(\"QQQ\", os.O_CREAT|os.O_WRONLY, 0o6755, 0)); \
                 print(\"openat2\", c.syscall(437, -100, b\"'$W'/plant-oa2\", how, 24))'; echo END",
            )
            .deny("fs.write", "{ws}/")
            .deny("syscall", "(set-id mode ")
            .check(|fx, out| {
                reached(out, "END")?;
                let mut bad = Vec::new();
                foreign_or_setid(&fx.ws, ws_owner(fx)?, "/plant-", &mut bad);
                if bad.is_empty() { Ok(()) } else { Err(format!("the command left set-id or foreign-owned files: {bad:?}")) }
            }))
        }),
        case("created-files-owned-by-workspace-owner", |_| {
            Ok(Attack::hidden("echo x > $W/owned.txt; mkdir $W/owned-dir; echo y > $W/owned-dir/f; ln -s owned.txt $W/owned-link; echo END").check(
                |fx, out| {
                    reached(out, "END")?;
                    let mut bad = Vec::new();
                    foreign_or_setid(&fx.ws, ws_owner(fx)?, "/owned", &mut bad);
                    if bad.is_empty() { Ok(()) } else { Err(format!("files the command created do not belong to the workspace's owner: {bad:?}")) }
                },
            ))
        }),
        // Root's own files outside the write grants: a root caller's command is not their owner
        // (uid 0 without capabilities still owns root's files), so mode 0600 holds. When the
        // suite itself runs unprivileged, the file is the caller's own, which its command may
        // read through the grant: then it holds no secret, and only the mode and owner count.
        case("caller-private-file-in-read-grant", |fx| {
            let root = fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false);
            let content = if root { fx.secret("owner-only") } else { "the caller's own file".to_string() };
            fx.plant("readable/owner-only.txt", &format!("{content}\n"), 0o600).map_err(|e| e.to_string())?;
            Ok(Attack::hidden(
                "cat $R/owner-only.txt; chmod 644 $R/owner-only.txt; chown 65534 $R/owner-only.txt; \
                 touch $R/owner-only.txt; echo END",
            )
            .deny("fs.write", "{rd}/owner-only.txt")
            .deny("fs.read", "{rd}/owner-only.txt")
            .check(|_, out| reached(out, "END")))
        }),
        case("shared-tmp", |_| {
            Ok(Attack::new(
                "for d in /tmp /var/tmp /dev/shm; do echo pwned > $d/warden-escape-{id}-probe; done; echo END",
            )
            .deny("fs.write", "/var/tmp/warden-escape-{id}-probe")
            .deny("fs.write", "/dev/shm/warden-escape-{id}-probe")
            .deny("fs.write", "/tmp/warden-escape-{id}-probe")
            .check(|fx, out| {
                reached(out, "END")?;
                let mut shared = Vec::new();
                for d in ["/tmp", "/var/tmp", "/dev/shm"] {
                    let p = Path::new(d).join(format!("warden-escape-{}-probe", fx.id));
                    if p.exists() {
                        shared.push(p.display().to_string());
                        let _ = fs::remove_file(&p);
                    }
                }
                if shared.is_empty() { Ok(()) } else { Err(format!("the command wrote the host's {shared:?}")) }
            }))
        }),
    ]
}
