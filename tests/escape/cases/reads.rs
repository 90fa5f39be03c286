//! Reading what the sandbox must not show: the denied secret inside the read grant, the
//! workspace's `.env`, `/etc/shadow`, files outside every grant; directly and through symlinks,
//! hard links, `/proc/*/root` and `..`. The suite checks that no planted secret reaches the
//! output or a workspace file; these checks add what the planted token cannot cover.

use super::{Attack, Case, case, py};
use crate::runner::Outcome;

fn no_shadow(out: &Outcome) -> Result<(), String> {
    match out.output().lines().find(|l| l.starts_with("root:")) {
        Some(line) => Err(format!(
            "/etc/shadow was read: {:?}",
            line.chars().take(12).collect::<String>()
        )),
        None => Ok(()),
    }
}

fn no_text(out: &Outcome, text: &str) -> Result<(), String> {
    if out.output().contains(text) {
        Err(format!(
            "the output shows {text:?}: a file outside the grants was read"
        ))
    } else {
        Ok(())
    }
}

pub fn cases() -> Vec<Case> {
    vec![
        case("read-denied-secret", |_| {
            Ok(Attack::hidden("cat $R/secret.txt; head -c 100 $R/secret.txt > $W/loot.txt; cp $R/secret.txt $W/loot2.txt")
                .deny("fs.read", "{rd}/secret.txt"))
        }),
        case("read-dotenv", |_| {
            Ok(Attack::hidden(
                "cat $W/.env; cp $W/.env $W/loot.txt; grep -r API_KEY $W; cd $W && cat .env",
            )
            .deny("fs.read", "{ws}/.env"))
        }),
        case("read-etc-shadow", |_| {
            Ok(Attack::hidden("E=$(printf %s /etc); cat $E/shadow; cp $E/shadow $W/shadow.txt; cat $W/shadow.txt; cd $E && cat shadow")
                .deny("fs.read", "/etc/shadow")
                .check(|_, out| no_shadow(out)))
        }),
        case("read-outside-file", |_| {
            Ok(
                Attack::new("cat {out}/victim.txt {out}/dir/inner.txt; ls -la {out}")
                    .deny("fs.read", "{out}")
                    .check(|_, out| {
                        no_text(out, "victim content").and(no_text(out, "inner content"))
                    }),
            )
        }),
        case("symlink-read-secret", |_| {
            Ok(Attack::hidden("ln -s $R/secret.txt $W/s; cat $W/s; ln -s $W/.env $W/e; cat $W/e; ln -s $R $W/r; cat $W/r/secret.txt")
                .deny("fs.read", "{rd}/secret.txt")
                .deny("fs.read", "{ws}/s")
                .deny("fs.read", "{ws}/r/secret.txt")
                .deny("fs.read", "{ws}/.env")
                .deny("fs.read", "{ws}/e"))
        }),
        case("symlink-write-outside", |_| {
            Ok(Attack::new(
                "ln -s {out}/victim.txt {ws}/l; echo pwned > {ws}/l; echo pwned >> {ws}/l",
            )
            .deny("fs.write", "{out}/victim.txt")
            .deny("fs.write", "{ws}/l"))
        }),
        case("symlink-dir-outside", |_| {
            Ok(Attack::new("ln -s {out} {ws}/o; echo pwned > {ws}/o/victim.txt; cat {ws}/o/dir/inner.txt; rm -rf {ws}/o/dir")
                .deny("fs.write", "{out}")
                .deny("fs.write", "{ws}/o")
                .deny("fs.read", "{out}")
                .deny("fs.read", "{ws}/o")
                .check(|_, out| no_text(out, "inner content")))
        }),
        case("hardlink-read-secret", |_| {
            Ok(
                Attack::hidden("ln $R/secret.txt $W/h; cat $W/h; ln $W/.env $W/e; cat $W/e")
                    .deny("fs.read", "{rd}/secret.txt")
                    .deny("fs.write", "{ws}/h")
                    .deny("fs.read", "{ws}/h")
                    .deny("fs.read", "{ws}/.env")
                    .deny("fs.write", "{ws}/e")
                    .deny("fs.read", "{ws}/e"),
            )
        }),
        case("hardlink-write-outside", |_| {
            Ok(Attack::new("ln {out}/victim.txt {ws}/h; echo pwned >> {ws}/h; ln {rd}/public.txt {ws}/p; echo pwned >> {ws}/p")
                .deny("fs.write", "{ws}/h")
                .deny("fs.write", "{ws}/p")
                .deny("fs.read", "{out}/victim.txt")
                .deny("fs.write", "{out}/victim.txt")
                .deny("fs.write", "{rd}/public.txt"))
        }),
        case("proc-self-root", |_| {
            Ok(Attack::new(
                // The prefix computed at run time: the analyser sees /proc/self/root/ as the
                // root and would deny the literal paths before the sandbox is tried.
                "R=$(printf %s /proc/self/root); cat $R{rd}/secret.txt; cat $R{ws}/.env; \
                 echo pwned > $R{out}/victim.txt; cat $R/etc/shadow",
            )
            .deny("fs.read", "{rd}/secret.txt")
            .deny("fs.read", "{ws}/.env")
            .deny("fs.write", "{out}/victim.txt")
            .deny("fs.read", "/etc/shadow")
            .check(|_, out| no_shadow(out)))
        }),
        case("proc-1-root", |_| {
            Ok(Attack::new(
                "P=$(printf %s /proc/1); cat $P/root{rd}/secret.txt; cat $P/root{ws}/.env; \
                 echo pwned > $P/root{out}/victim.txt; cat $P/root/etc/shadow; \
                 cat $P/cwd/.env",
            )
            .deny("fs.read", "{rd}/secret.txt")
            .deny("fs.read", "{ws}/.env")
            .deny("fs.write", "{out}/victim.txt")
            .deny("fs.read", "/etc/shadow")
            .deny("fs.read", "/proc/1/")
            .check(|_, out| no_shadow(out)))
        }),
        case("dotdot-read", |_| {
            Ok(Attack::hidden(
                "cd $W/src && cat ../../readable/secret.txt ../.env ../../../../../../../..$R/secret.txt; \
                 cat ../../outside/victim.txt",
            )
            .deny("fs.read", "{rd}/secret.txt")
            .deny("fs.read", "{ws}/.env")
            .deny("fs.read", "{out}/victim.txt")
            .check(|_, out| no_text(out, "victim content")))
        }),
        case("dotdot-write", |_| {
            Ok(Attack::hidden(
                "cd $W/src && echo pwned > ../../outside/victim.txt; echo pwned > ../../readable/public.txt; \
                 echo pwned > ../.git/hooks/pre-commit",
            )
            .deny("fs.write", "{out}/victim.txt")
            .deny("fs.write", "{rd}/public.txt")
            .deny("fs.write", "{ws}/.git/hooks/pre-commit"))
        }),
        case("path-spelling", |_| {
            Ok(Attack::hidden(
                "E=$(printf %s /etc); A=$(printf %s ./.e nv); B=$(printf %s /proc/self/cwd/.e nv); \
                 cat $R/./secret.txt $R//secret.txt $R/../readable/secret.txt $W/./.env $W/src/../.env $E/../etc/shadow; \
                 P=$(printf %s src/../.e nv); cd $W && cat $A $B $P",
            )
            .deny("fs.read", "{rd}/secret.txt")
            .deny("fs.read", "{rd}/./secret.txt")
            .deny("fs.read", "{rd}//secret.txt")
            .deny("fs.read", "{rd}/../readable/secret.txt")
            .deny("fs.read", "{ws}/.env")
            .deny("fs.read", "{ws}/./.env")
            .deny("fs.read", "{ws}/src/../.env")
            .deny("fs.read", "/etc/shadow")
            .deny("fs.read", "/etc/../etc/shadow")
            .deny("fs.read", "/proc/self/cwd/.env")
            .deny("fs.read", "./.env")
            .deny("fs.read", "src/../.env")
            .check(|_, out| no_shadow(out)))
        }),
        case("o-path-reopen", |_| {
            let code = r#"import os, sys
for path in sys.argv[1:]:
    try:
        fd = os.open(path, os.O_PATH)
    except OSError as e:
        print("opath refused", e.errno); continue
    for how in ("/proc/self/fd/%d" % fd,):
        try:
            print(open(how).read())
        except OSError as e:
            print("reopen refused", e.errno)
    try:
        print(os.read(os.open("/proc/self/fd/%d" % fd, os.O_RDONLY), 200))
    except OSError as e:
        print("reopen refused", e.errno)
print("END")"#;
            Ok(Attack::hidden(&format!(
                "E=$(printf %s /etc); {} \"$R/secret.txt\" \"$W/.env\" \"$E/shadow\"",
                py(code)
            ))
            .deny("fs.read", "{rd}/secret.txt")
            .deny("fs.read", "{ws}/.env")
            .deny("fs.read", "/etc/shadow")
            .deny("fs.read", "/proc/self/fd/")
            .check(|_, out| super::reached(out, "END").and(no_shadow(out))))
        }),
    ]
}
