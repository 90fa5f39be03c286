//! What a command writes inside a folder it names: `cp -r hooks .git` writes `.git/hooks`,
//! and `unzip x.zip -d .git` writes names the archive holds into `.git`. Judged only by their
//! operands, both looked like writes to `.git` itself, which no guarded pattern names, and
//! under a hook (no sandbox) they planted git hooks unprompted.
//!
//! - A copy, move, install or link into a folder writes the folder's entry of each source's
//!   own name ([`Written::Path`]), judged like that path named as an argument.
//! - A write whose names are not known here ([`Written::Folder`]: an archive extracted into a
//!   folder, `cp -r x/. DIR`, `cp x/* DIR`, `cp -rT x DIR`), and the target of a symbolic link
//!   made (`ln -s .git g`: `g/hooks/x` is then `.git/hooks/x`), is judged by the patterns that
//!   reach into that folder by name (see [`super::paths::PathPattern::reaches_into`]).
//! - A folder moved away or made anew whole ([`Written::Named`]: `mv .git g`, `mv g .git`,
//!   `cp -r g .git`) is judged by the patterns that name it.
//!
//! Extraction into the working directory (`tar xf x.tar` with no `-C`) is not judged here: any
//! workspace may hold a `.git`, so that would judge every extraction. The sandbox keeps
//! guarded paths read-only for it under `warden run`; under a hook it is a known limit.

use std::borrow::Cow;

use warden_shell::SimpleCommand;

/// A path written by a command, beyond the operands it names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Written<'a> {
    /// A path of known name (relative to the working directory, or absolute, or `~/...`).
    Path(String),
    /// A folder written into with names not known here (or reached by another name: the
    /// target of a symbolic link made).
    Folder(Cow<'a, str>),
    /// A path that may be made anew, or taken away, whole with contents not known here: the
    /// source of a move (`mv .git g` takes `.git/hooks` out of its guard) and the destination
    /// of a folder's copy or move (`mv g .git` when there is no `.git`). Judged by the patterns
    /// that name it, not by those of an anchor folder (`mv x ~` makes `~/x`).
    Named(&'a str),
}

/// The paths `cmd` writes inside folders it names (empty for other commands).
pub(crate) fn written(cmd: &SimpleCommand) -> Vec<Written<'_>> {
    let words: Vec<Option<&str>> = cmd.argv.iter().skip(1).map(|w| w.known.then_some(w.text.as_str())).collect();
    match cmd.program.as_str() {
        "cp" | "mv" | "install" | "ln" => into_folder(&cmd.program, &words),
        "tar" | "bsdtar" => tar(&words),
        "unzip" => valued_anywhere(&words, 'd', &[]),
        "cpio" if extracts_cpio(&words) => valued_anywhere(&words, 'D', &["--directory"]),
        "7z" | "7za" | "7zz" if matches!(words.iter().flatten().find(|w| !w.starts_with('-')), Some(&("x" | "e"))) => {
            words.iter().flatten().filter_map(|w| w.strip_prefix("-o")).filter(|d| !d.is_empty()).map(|d| Written::Folder(Cow::Borrowed(d))).collect()
        }
        _ => Vec::new(),
    }
}

/// Whether `long` (without `--`) abbreviates `name` (with `--`), as getopt_long accepts: at
/// least `min` characters of it.
fn abbreviates(long: &str, name: &str, min: usize) -> bool {
    long.len() >= min && name.trim_start_matches('-').starts_with(long)
}

/// A long option's name and attached value (`directory=DIR`).
fn name_value(long: &str) -> (&str, Option<&str>) {
    match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    }
}

/// `cp`, `mv`, `install`, `ln`: the sources' names inside the target folder (`-t DIR`, or the
/// last operand when there are several), what a move takes away or a folder's copy makes anew,
/// and the folders a symbolic link reaches.
fn into_folder<'a>(program: &str, words: &[Option<&'a str>]) -> Vec<Written<'a>> {
    let valued = match program {
        "install" => "gmoSt",
        _ => "St",
    };
    let long_valued: &[&str] = match program {
        "install" => &["--suffix", "--group", "--mode", "--owner", "--strip-program", "--target-directory"],
        _ => &["--suffix", "--target-directory"],
    };
    let (mut target, mut whole, mut recursive, mut symbolic) = (None, false, program == "mv", false);
    // An operand that cannot be known (a glob, `$x`) is a source of a name not known here.
    let mut operands: Vec<Option<&str>> = Vec::new();
    let mut options = true;
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let Some(t) = *w else {
            operands.push(None);
            continue;
        };
        if !options || t == "-" || !t.starts_with('-') {
            operands.push(Some(t));
        } else if t == "--" {
            options = false;
        } else if let Some(long) = t.strip_prefix("--") {
            let (name, value) = name_value(long);
            let is_target = abbreviates(name, "--target-directory", 2);
            let value = match value {
                Some(v) => Some(v),
                None if long_valued.iter().any(|l| abbreviates(name, l, 2)) => it.next().copied().flatten(),
                None => None,
            };
            if is_target {
                target = value;
            }
            whole |= abbreviates(name, "--no-target-directory", 2);
            symbolic |= program == "ln" && abbreviates(name, "--symbolic", 4);
            recursive |= abbreviates(name, "--recursive", 3) || abbreviates(name, "--archive", 2);
        } else {
            let cluster = t.get(1..).unwrap_or_default();
            for (k, c) in cluster.char_indices() {
                if valued.contains(c) {
                    let rest = cluster.get(k + 1..).unwrap_or_default();
                    let value = if rest.is_empty() { it.next().copied().flatten() } else { Some(rest) };
                    if c == 't' {
                        target = value;
                    }
                    break;
                }
                whole |= c == 'T';
                recursive |= matches!(c, 'r' | 'R' | 'a');
                symbolic |= program == "ln" && c == 's';
            }
        }
    }
    let (folder, sources) = match target {
        Some(dir) => (dir, &operands[..]),
        // `ln -s TARGET`: the link is made in the working directory.
        None if program == "ln" && operands.len() == 1 => (".", &operands[..]),
        None => match operands.split_last() {
            Some((Some(last), rest)) if !rest.is_empty() => (*last, rest),
            // No folder, or one not known (judged opaque as an argument).
            _ => return Vec::new(),
        },
    };
    let mut out = Vec::new();
    if program == "mv" {
        out.extend(sources.iter().flatten().map(|s| Written::Named(s)));
    }
    // One source and no `-t`: the last operand may be made anew as the source's copy, move or
    // link, a folder of contents not known here (`cp -r g .git`, `mv g .git`, `ln -s /tmp/evil
    // .git` where there is no `.git`). A plain file copied there is the operand itself.
    let whole_folder = recursive || symbolic;
    if whole_folder && target.is_none() && sources.len() == 1 && !(program == "ln" && operands.len() == 1) {
        out.push(Written::Named(folder));
    }
    if symbolic {
        linked(folder, sources, target.is_some() || operands.len() > 2, &mut out);
    }
    if whole {
        // `cp -rT x DIR`: DIR gets the source's contents, of names not known here.
        if recursive {
            out.push(Written::Folder(Cow::Borrowed(folder)));
        }
        return out;
    }
    for src in sources {
        let name = src.map_or("*", |s| s.trim_end_matches('/').rsplit('/').next().unwrap_or_default());
        if name.is_empty() || name == "." || name == ".." || name.contains(['*', '?', '[']) {
            // `cp -r x/. DIR` copies what `x` holds; `cp x/* DIR` names it by a glob.
            if !out.contains(&Written::Folder(Cow::Borrowed(folder))) {
                out.push(Written::Folder(Cow::Borrowed(folder)));
            }
        } else {
            out.push(Written::Path(format!("{}/{name}", folder.trim_end_matches('/'))));
        }
    }
    out
}

/// `ln -s TARGET... NAME`: each target, resolved as the link will resolve it (a relative one
/// from the link's own folder), is a folder reached by another name: whatever its patterns
/// guard becomes writable through the link (`ln -s .git g`, then `g/hooks/pre-commit`). The
/// link is `folder/TARGET's name` when `into` (several targets, `-t`), else `folder` itself
/// or, when that is an existing folder, inside it: both are taken.
fn linked<'a>(folder: &'a str, targets: &[Option<&'a str>], into: bool, out: &mut Vec<Written<'a>>) {
    let folder = folder.trim_end_matches('/');
    let parent = match folder.rsplit_once('/') {
        Some(("", _)) => "/",
        Some((p, _)) => p,
        None => ".",
    };
    for target in targets.iter().flatten() {
        if target.starts_with('/') || target.starts_with('~') {
            out.push(Written::Folder(Cow::Borrowed(target)));
            continue;
        }
        let bases: &[&str] = if into || folder == "." { &[folder] } else { &[parent, folder] };
        for base in bases {
            out.push(Written::Folder(Cow::Owned(format!("{base}/{target}"))));
        }
    }
}

/// tar's extraction folders: `-C DIR`, `-CDIR`, `--directory[=]DIR`, `--one-top-level=DIR`, and the old style's
/// `xfC a.tar DIR` (its letters take their values in order). Only when it extracts.
fn tar<'a>(words: &[Option<&'a str>]) -> Vec<Written<'a>> {
    // Letters whose value is the next word (GNU tar's short options with an argument).
    const VALUED: &str = "bCfFgHIKLNTVX";
    let mut extracts = false;
    let mut folders = Vec::new();
    let mut it = words.iter().enumerate();
    while let Some((i, w)) = it.next() {
        let Some(t) = *w else { continue };
        if t == "--" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = name_value(long);
            extracts |= abbreviates(name, "--extract", 3) || name == "get";
            if abbreviates(name, "--directory", 3)
                && let Some(d) = value.or_else(|| it.next().and_then(|(_, w)| *w))
            {
                folders.push(Written::Folder(Cow::Borrowed(d)));
            }
            // `--one-top-level=DIR` extracts into DIR (its value is attached or absent).
            if abbreviates(name, "--one-top-level", 3)
                && let Some(d) = value
            {
                folders.push(Written::Folder(Cow::Borrowed(d)));
            }
        } else if let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) {
            for (k, c) in cluster.char_indices() {
                extracts |= c == 'x';
                if VALUED.contains(c) {
                    let rest = cluster.get(k + 1..).unwrap_or_default();
                    let value = if rest.is_empty() { it.next().and_then(|(_, w)| *w) } else { Some(rest) };
                    if c == 'C' && let Some(d) = value {
                        folders.push(Written::Folder(Cow::Borrowed(d)));
                    }
                    break;
                }
            }
        } else if i == 0 {
            // Old style: `tar xzfC a.tgz DIR`, each valued letter takes the next word.
            for c in t.chars() {
                extracts |= c == 'x';
                if VALUED.contains(c) {
                    let value = it.next().and_then(|(_, w)| *w);
                    if c == 'C' && let Some(d) = value {
                        folders.push(Written::Folder(Cow::Borrowed(d)));
                    }
                }
            }
        }
    }
    if extracts { folders } else { Vec::new() }
}

/// cpio extracts with `-i` (also in a cluster) or `--extract`.
fn extracts_cpio(words: &[Option<&str>]) -> bool {
    words.iter().flatten().any(|w| match w.strip_prefix("--") {
        Some(long) => abbreviates(long, "--extract", 3),
        None => w.strip_prefix('-').is_some_and(|c| c.contains('i')),
    })
}

/// The values of option letter `letter` anywhere in a short cluster (`-d DIR`, `-qd DIR`,
/// `-dDIR`) and of the long options `long` (`--directory=DIR`, `--directory DIR`): folders
/// written into.
fn valued_anywhere<'a>(words: &[Option<&'a str>], letter: char, long: &[&str]) -> Vec<Written<'a>> {
    let mut out = Vec::new();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let Some(t) = *w else { continue };
        if t == "--" {
            break;
        }
        if let Some(l) = t.strip_prefix("--") {
            let (name, value) = name_value(l);
            if long.iter().any(|x| abbreviates(name, x, 3))
                && let Some(d) = value.or_else(|| it.next().copied().flatten())
            {
                out.push(Written::Folder(Cow::Borrowed(d)));
            }
        } else if let Some(cluster) = t.strip_prefix('-')
            && let Some(k) = cluster.find(letter)
        {
            let rest = cluster.get(k + 1..).unwrap_or_default();
            if let Some(d) = if rest.is_empty() { it.next().copied().flatten() } else { Some(rest) } {
                out.push(Written::Folder(Cow::Borrowed(d)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use warden_shell::Word;

    fn cmd(line: &str) -> SimpleCommand {
        // `$x` stands for a word that cannot be known.
        let argv: Vec<Word> = line.split_whitespace().map(|t| Word { text: t.into(), known: !t.starts_with('$') }).collect();
        let program = argv.first().map(|w| w.text.rsplit('/').next().unwrap_or_default().to_string()).unwrap_or_default();
        SimpleCommand { argv, program, assignments: Vec::new(), redirects: Vec::new(), via: Vec::new(), pipeline: None, span: 0..0 }
    }

    fn of(line: &str) -> Vec<String> {
        written(&cmd(line))
            .into_iter()
            .map(|w| match w {
                Written::Path(p) => p,
                Written::Folder(f) => format!("{f}/*"),
                Written::Named(n) => format!("{n}!"),
            })
            .collect()
    }

    #[test]
    fn copies_into_a_folder_write_each_sources_name_there() {
        assert_eq!(of("cp -r hooks .git"), [".git!", ".git/hooks"], "`.git` is made a copy of `hooks` when it is not there");
        assert_eq!(of("cp a b"), ["b/a"], "two operands: b may be a folder");
        assert_eq!(of("cp -r tmp/hooks/ .git/"), [".git/!", ".git/hooks"]);
        assert_eq!(of("mv a b dest"), ["a!", "b!", "dest/a", "dest/b"]);
        assert_eq!(of("mv .git g"), [".git!", "g!", "g/.git"], "the source moves whole, and may become `g`");
        assert_eq!(of("cp -t .git -r hooks"), [".git/hooks"], "into `-t`: the folder is there");
        assert_eq!(of("cp --target-directory=.git hooks"), [".git/hooks"]);
        assert_eq!(of("cp --targ .git hooks"), [".git/hooks"]);
        assert_eq!(of("install -m 755 pre-commit .git/hooks"), [".git/hooks/pre-commit"]);
        assert_eq!(of("ln -s /tmp/evil .git/"), [".git/!", "/tmp/evil/*", ".git/evil"]);
        assert_eq!(of("ln -s /tmp/hooks"), ["/tmp/hooks/*", "./hooks"]);
        assert_eq!(of("cp -S .bak a dest"), ["dest/a"]);
        assert_eq!(of("cp -- -r dest"), ["dest/-r"]);
    }

    #[test]
    fn names_not_known_here_make_the_folder_written() {
        assert_eq!(of("cp -r x/. .git"), [".git!", ".git/*"]);
        assert_eq!(of("cp x/* y/* .git"), [".git/*"]);
        assert_eq!(of("cp -rT x .git"), [".git!", ".git/*"]);
        assert_eq!(of("cp $x .git"), [".git/*"]);
        assert!(of("cp x $dir").is_empty(), "a folder not known is judged opaque");
        assert_eq!(of("mv -T x .git"), ["x!", ".git!", ".git/*"]);
        assert_eq!(of("cp -T a b"), Vec::<String>::new(), "a plain file copied onto b: b is the operand");
    }

    #[test]
    fn a_symbolic_link_s_target_is_a_folder_reached_by_another_name() {
        assert_eq!(of("ln -s .git g"), ["g!", "./.git/*", "g/.git/*", "g/.git"]);
        assert_eq!(of("ln -sf ../.git sub/g"), ["sub/g!", "sub/../.git/*", "sub/g/../.git/*", "sub/g/.git"]);
        assert_eq!(of("ln -s /etc e"), ["e!", "/etc/*", "e/etc"]);
        assert_eq!(of("ln --symbolic ~/.ssh"), ["~/.ssh/*", "./.ssh"]);
        assert_eq!(of("ln -s -t links ../.git"), ["links/../.git/*", "links/.git"]);
        assert_eq!(of("ln .git/config c"), ["c/config"], "a hard link names its source, judged as an argument");
    }

    #[test]
    fn archives_extracted_into_a_named_folder() {
        assert_eq!(of("unzip x.zip -d .git"), [".git/*"]);
        assert_eq!(of("unzip -qd .git x.zip"), [".git/*"]);
        assert_eq!(of("unzip -o -d.git x.zip"), [".git/*"]);
        assert_eq!(of("tar -xf x.tar -C .git"), [".git/*"]);
        assert_eq!(of("tar -C .git -xzf x.tgz"), [".git/*"]);
        assert_eq!(of("tar xfC x.tar .git"), [".git/*"]);
        assert_eq!(of("tar --extract --file x.tar --directory=.git"), [".git/*"]);
        assert_eq!(of("tar --extract --file x.tar --dir .git"), [".git/*"]);
        assert_eq!(of("tar -xf x.tar --one-top-level=.git"), [".git/*"]);
        assert_eq!(of("tar -xvC .git -f x.tar"), [".git/*"]);
        assert_eq!(of("7z x a.7z -o.git"), [".git/*"]);
        assert_eq!(of("cpio -idm -D .git"), [".git/*"]);
    }

    #[test]
    fn other_forms_write_no_folder() {
        assert!(of("tar -cf x.tar -C .git hooks").is_empty(), "creating reads the folder");
        assert!(of("tar xf x.tar").is_empty(), "extracting into the working directory");
        assert!(of("unzip -l x.zip").is_empty());
        assert!(of("7z a a.7z -o.git").is_empty());
        assert!(of("cp a").is_empty());
        assert!(of("cat a b").is_empty());
    }
}
