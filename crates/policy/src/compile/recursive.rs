//! Commands that read every file beneath a folder they are given (`grep -r`, `rg`, `cp -r`,
//! `tar c`, `zip -r`, `rsync -a`, `7z a`, `diff`, `git diff --no-index`): such a folder reads
//! what the `fs` rules deny beneath it too. `grep -r AKIA ~` reads `~/.aws/credentials`; the sandbox would not show it, but an
//! agent's hook (`warden hook`) decides for a command that runs unconfined.
//!
//! Only denied paths with a fixed folder are looked for beneath the argument (`~/.ssh/**`,
//! `/etc/shadow`, `/run/secrets/**`): a pattern that matches anywhere (`**/.env`) would make
//! every recursive search a denial, and the sandbox hides such files in the folders it shows.

use super::glob::Glob;
use super::paths::{Anchors, PathPattern, Root, Seg};
use warden_shell::SimpleCommand;

/// The folders whose whole tree `cmd` reads, as written (absolute, `~`, or relative to the
/// working directory), and whether it reads the working directory itself when it names none.
pub(crate) fn trees(cmd: &SimpleCommand) -> Option<(Vec<&str>, bool)> {
    let args: Vec<&str> = cmd.argv.iter().skip(1).filter(|w| w.known).map(|w| w.text.as_str()).collect();
    let flags = || args.iter().copied().filter(|a| a.starts_with('-') && a.len() > 1);
    let short = |letters: &str| flags().any(|a| !a.starts_with("--") && a.chars().skip(1).any(|c| letters.contains(c)));
    let long = |names: &[&str]| flags().any(|a| names.iter().any(|n| a == *n || a.starts_with(&format!("{n}="))));
    // Short options that take the next word as their value (`-e AKIA`, `-A 3`, `-g '*.rs'`).
    let valued = match cmd.program.as_str() {
        "rg" | "ag" | "ack" | "ack-grep" | "pt" => "efgtTABCmjMErG",
        "tar" => "fCTXgKLNV",
        "zip" => "bntix",
        "rsync" => "ebBfTM",
        "cp" | "scp" => "tSciFlPoJ",
        "diff" | "colordiff" => "CFIxXSDLUW",
        "git" => "Cc",
        _ => "efABCmdDX",
    };
    let mut positional: Vec<&str> = Vec::new();
    let mut skip = false;
    for a in args.iter().copied() {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 {
            skip = a.chars().last().is_some_and(|c| valued.contains(c));
        } else if !a.starts_with("--") || a == "--" {
            positional.push(a);
        }
    }
    positional.retain(|a| *a != "--");
    // A search's first positional word is the pattern, unless one was given by option.
    let pattern_given = short("ef") || long(&["--regexp", "--file"]);
    let searched = positional.iter().copied().skip(usize::from(!pattern_given)).collect::<Vec<&str>>();
    // A word that cannot be known may be the folder (`grep -r KEY $dir`): then the working
    // directory is not assumed (the word is judged opaque as an argument).
    let unknown = cmd.argv.iter().skip(1).any(|w| !w.known);
    let search = Some((searched.clone(), searched.is_empty() && !unknown));
    match cmd.program.as_str() {
        "grep" | "egrep" | "fgrep" | "zgrep" | "ugrep"
            if short("rR") || long(&["--recursive", "--dereference-recursive"]) || directories_recurse(&args) =>
        {
            search
        }
        "rg" | "ag" | "ack" | "ack-grep" | "pt" => search,
        "cp" | "rsync" | "scp" if short("rRa") || long(&["--recursive", "--archive"]) => Some((positional, false)),
        "zip" if short("r") || long(&["--recurse-paths"]) => Some((positional, false)),
        "tar" if creates(&args) => Some((positional, false)),
        "7z" | "7za" | "7zz" if positional.first() == Some(&"a") => Some((positional, false)),
        // Two folders are compared by the names in them (`diff -N`, `-r`: every file beneath);
        // an operand that is a file has nothing beneath it.
        "diff" | "colordiff" => {
            // `--from-file=DIR` and `--to-file=DIR` name a folder compared with every operand.
            let named = args.iter().filter_map(|a| a.strip_prefix("--from-file=").or_else(|| a.strip_prefix("--to-file=")));
            Some((positional.into_iter().chain(named).collect(), false))
        }
        "git" => git_diff_paths(&positional, long(&["--no-index"])).map(|p| (p, false)),
        _ => None,
    }
}

/// The paths `git diff` compares as files and folders (the positional words after `diff`):
/// every one with `--no-index`, and otherwise those outside the working tree (absolute, `~`,
/// `../`), which make git compare the two paths as `--no-index` does (`git diff /tmp/e ~`).
fn git_diff_paths<'a>(positional: &[&'a str], no_index: bool) -> Option<Vec<&'a str>> {
    let (first, rest) = positional.split_first()?;
    let outside = |p: &&str| p.starts_with(['/', '~']) || p.starts_with("../");
    (*first == "diff").then(|| rest.iter().copied().filter(|p| no_index || outside(p)).collect())
}

/// grep's `-d recurse` in any spelling: `-d recurse`, `-drecurse`, `-nd recurse`,
/// `--directories=recurse`, `--directories recurse`, and the abbreviations getopt_long and
/// argmatch accept (`--dir=rec`).
fn directories_recurse(args: &[&str]) -> bool {
    let recurse = |v: &str| v.len() >= 3 && "recurse".starts_with(v);
    args.iter().enumerate().any(|(i, a)| {
        let next = || args.get(i + 1).copied().unwrap_or_default();
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            return name.len() >= 3 && "directories".starts_with(name) && recurse(value.unwrap_or_else(next));
        }
        let Some(cluster) = a.strip_prefix('-') else { return false };
        // The first letter that takes a value ends the cluster; only `d` is the one here.
        match cluster.find(|c: char| "efABCmdDX".contains(c)) {
            Some(k) if cluster.get(k..=k) == Some("d") => {
                let rest = cluster.get(k + 1..).unwrap_or_default();
                recurse(if rest.is_empty() { next() } else { rest })
            }
            _ => false,
        }
    })
}

/// `tar` creating or adding to an archive: `tar czf`, `tar -cf`, `tar --create`, `-r`/`-u`.
fn creates(args: &[&str]) -> bool {
    let old_style = args.first().is_some_and(|a| !a.starts_with('-') && a.chars().all(|c| c.is_ascii_alphabetic()) && a.contains(['c', 'r', 'u']));
    old_style
        || args.iter().any(|a| {
            matches!(*a, "--create" | "--append" | "--update")
                || (a.starts_with('-') && !a.starts_with("--") && a.chars().skip(1).all(|c| c.is_ascii_alphanumeric()) && a.contains(['c', 'r', 'u']))
        })
}

/// The fixed folder a pattern's matches lie beneath (`~/.ssh/**` -> `/home/u/.ssh`,
/// `/etc/ssh/ssh_host_*` -> `/etc/ssh`); `None` for a pattern that matches anywhere.
pub(crate) fn base(p: &PathPattern, anchors: &Anchors<'_>) -> Option<String> {
    let mut out = anchors.root(p.root).trim_end_matches('/').to_string();
    let mut literal = 0;
    for seg in p.segs.iter() {
        match seg {
            Seg::Word(Glob::Literal(s)) => {
                out.push('/');
                out.push_str(s);
                literal += 1;
            }
            _ => break,
        }
    }
    // `/**`, `/*.pem`, `**/.env`: nothing fixed to look beneath.
    (p.root != Root::Absolute || literal > 0).then_some(out)
}

/// Whether `path` is the folder `dir` or lies beneath it (both absolute and normalised): a
/// pattern's fixed folder equal to the folder read (`/etc/ssh` for `/etc/ssh/ssh_host_*`) is
/// read through too.
pub(crate) fn within(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path == dir || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Context;

    fn cmd(line: &str) -> SimpleCommand {
        warden_shell::analyse(line).commands.into_iter().next().unwrap()
    }

    fn of(line: &str) -> Option<(Vec<String>, bool)> {
        let c = cmd(line);
        trees(&c).map(|(v, cwd)| (v.into_iter().map(str::to_string).collect(), cwd))
    }

    #[test]
    fn recursive_readers_and_the_folders_they_read() {
        assert_eq!(of("grep -rn AKIA ~"), Some((vec!["~".into()], false)));
        assert_eq!(of("grep -R -e AKIA /etc /srv"), Some((vec!["/etc".into(), "/srv".into()], false)));
        assert_eq!(of("grep -r TODO"), Some((vec![], true)));
        // Red team: `-d recurse` is `-r`.
        assert_eq!(of("grep -d recurse AKIA ~"), Some((vec!["~".into()], false)));
        assert!(of("grep -drecurse AKIA ~").is_some());
        assert!(of("grep -nd rec AKIA ~").is_some());
        assert!(of("grep --directories recurse AKIA ~").is_some());
        assert!(of("grep --dir=recurse AKIA ~").is_some());
        assert_eq!(of("grep -d skip AKIA f"), None);
        assert_eq!(of("grep -r API_KEY $W"), Some((vec![], false)));
        assert_eq!(of("rg password"), Some((vec![], true)));
        assert_eq!(of("rg -i secret /"), Some((vec!["/".into()], false)));
        assert_eq!(of("cp -a ~ /tmp/home"), Some((vec!["~".into(), "/tmp/home".into()], false)));
        assert_eq!(of("tar czf home.tgz /home"), Some((vec!["czf".into(), "home.tgz".into(), "/home".into()], false)));
        assert_eq!(of("zip -qr all.zip ."), Some((vec!["all.zip".into(), ".".into()], false)));
        assert_eq!(of("7z a x.7z ~"), Some((vec!["a".into(), "x.7z".into(), "~".into()], false)));
        // Red team: a folder compared reads what lies beneath it.
        assert_eq!(of("diff -ru a ~"), Some((vec!["a".into(), "~".into()], false)));
        assert_eq!(of("diff -r -x '*.o' /tmp/x ~/.ssh"), Some((vec!["/tmp/x".into(), "~/.ssh".into()], false)));
        assert_eq!(of("git diff --no-index /tmp/empty ~"), Some((vec!["/tmp/empty".into(), "~".into()], false)));
        assert_eq!(of("git -C . diff /tmp/empty ~"), Some((vec!["/tmp/empty".into(), "~".into()], false)));
        assert_eq!(of("git diff HEAD~1 -- src/"), Some((vec![], false)));
        assert_eq!(of("git log ~"), None);
        assert_eq!(of("diff -r --to-file=~ a"), Some((vec!["a".into(), "~".into()], false)));
        // Not recursive, or not reading contents.
        assert_eq!(of("grep AKIA ~/.bashrc"), None);
        assert_eq!(of("cp a b"), None);
        assert_eq!(of("tar xzf home.tgz"), None);
        assert_eq!(of("tar -tvf x.tar"), None);
        assert_eq!(of("ls -R ~"), None);
        assert_eq!(of("find ~ -name x"), None);
    }

    #[test]
    fn the_fixed_folder_of_a_pattern() {
        let ctx = Context { workspace: "/ws".into(), home: "/home/u".into(), cwd: "/ws".into() };
        let anchors = Anchors::new(&ctx);
        let base_of = |text: &str| base(&super::super::paths::parse_pattern(text).unwrap(), &anchors);
        assert_eq!(base_of("~/.ssh/**").as_deref(), Some("/home/u/.ssh"));
        assert_eq!(base_of("/etc/ssh/ssh_host_*").as_deref(), Some("/etc/ssh"));
        assert_eq!(base_of("/etc/shadow").as_deref(), Some("/etc/shadow"));
        assert_eq!(base_of("${workspace}/.git/config").as_deref(), Some("/ws/.git/config"));
        assert_eq!(base_of("**/.env"), None);
        assert_eq!(base_of("/proc/*/environ").as_deref(), Some("/proc"));
        assert!(within("/home/u/.ssh", "/home/u"));
        assert!(within("/home/u/.ssh", "/"));
        assert!(within("/etc/ssh", "/etc/ssh"));
        assert!(!within("/home/user2/.ssh", "/home/u"));
        assert!(!within("/home", "/home/u"));
    }
}
