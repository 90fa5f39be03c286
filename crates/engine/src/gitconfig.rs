//! A git config file read as git reads it, to tell whether it sets only what git itself writes
//! when it makes a repository (`git init`, `git clone`, `git submodule add`) or more.
//!
//! Git runs programs named in a repository's config (`core.fsmonitor`, `core.hooksPath`,
//! `core.sshCommand`, `diff.*.textconv`, `filter.*.process`, ...), and takes more config from
//! files it names (`include.path`). The list of such keys grows with each git release, so the
//! test is the other way round: every key must be one of a short list git writes itself or
//! that only changes how git stores or shows things ([`harmless`]). A text git would refuse,
//! or that this reader cannot follow exactly, fails the test too.

/// One key of a config file: section and name lowercased (git compares them so), the
/// subsection as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    pub section: String,
    pub subsection: Option<String>,
    pub name: String,
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.subsection {
            Some(sub) => write!(f, "{}.{sub}.{}", self.section, self.name),
            None => write!(f, "{}.{}", self.section, self.name),
        }
    }
}

/// The first key of `text` that is not [`harmless`], or why `text` cannot be read as git
/// reads it (then git refuses it too, or this reader might see other keys than git).
pub(crate) fn first_unsafe(text: &[u8]) -> Option<String> {
    match entries(text) {
        Ok(entries) => entries.iter().find(|(k, v)| !harmless(k) && !builtin(k, v.as_deref())).map(|(k, _)| format!("sets {k}")),
        Err(e) => Some(format!("cannot be read as git reads it ({e})")),
    }
}

/// `core.fsmonitor` set to a boolean: git's own daemon (`true`) or none; any other value is
/// a program git runs.
fn builtin(key: &Key, value: Option<&str>) -> bool {
    let boolean = |v: &str| ["true", "false", "yes", "no", "on", "off", "1", "0", ""].iter().any(|b| v.eq_ignore_ascii_case(b));
    key.section == "core" && key.subsection.is_none() && key.name == "fsmonitor" && value.is_none_or(boolean)
}

/// Whether a key only records what git wrote or changes how it stores or shows things: never
/// a program, a command, or another file to read.
pub(crate) fn harmless(key: &Key) -> bool {
    let name = key.name.as_str();
    match (key.section.as_str(), key.subsection.as_deref()) {
        ("remote", Some(_)) => matches!(
            name,
            "url" | "pushurl" | "fetch" | "push" | "tagopt" | "mirror" | "prune" | "promisor" | "partialclonefilter" | "skipdefaultupdate"
        ),
        ("branch", Some(_)) => matches!(name, "remote" | "merge" | "rebase" | "pushremote" | "description"),
        // Not `update`, which may be `!command`.
        ("submodule", Some(_)) => matches!(name, "url" | "active" | "branch"),
        (_, Some(_)) => false,
        ("core", None) => matches!(
            name,
            "repositoryformatversion"
                | "filemode"
                | "bare"
                | "logallrefupdates"
                | "ignorecase"
                | "precomposeunicode"
                | "symlinks"
                | "autocrlf"
                | "eol"
                | "safecrlf"
                | "worktree"
                | "quotepath"
                | "checkstat"
                | "trustctime"
                | "abbrev"
                | "sparsecheckout"
                | "sparsecheckoutcone"
                | "untrackedcache"
                | "commentchar"
        ),
        ("extensions", None) => matches!(name, "objectformat" | "refstorage" | "worktreeconfig" | "partialclone"),
        ("user", None) => matches!(name, "name" | "email" | "signingkey"),
        ("init", None) => name == "defaultbranch",
        ("commit" | "tag", None) => name == "gpgsign",
        ("pull", None) => matches!(name, "rebase" | "ff"),
        ("push", None) => matches!(name, "default" | "autosetupremote"),
        ("fetch", None) => name == "prune",
        ("gc", None) => name == "auto",
        ("merge", None) => matches!(name, "conflictstyle" | "ff"),
        ("index" | "protocol" | "lfs", None) => matches!(name, "version" | "repositoryformatversion"),
        ("advice", None) => true,
        ("color", None) => name == "ui",
        ("status", None) => name == "showuntrackedfiles",
        ("clean", None) => name == "requireforce",
        _ => false,
    }
}

/// The keys of a config text, in order, as git's own reader finds them (`config.c`): a
/// section header may be followed by a key on the same line, a value may go on over lines
/// ending in `\`, comments start at `#` or `;` outside quotes. An error says where.
#[cfg(test)]
pub(crate) fn keys(text: &[u8]) -> Result<Vec<Key>, String> {
    Ok(entries(text)?.into_iter().map(|(k, _)| k).collect())
}

/// The keys of a config text with their values as git reads them (quotes removed, escapes
/// decoded, each blank outside quotes between words one space, trimmed; `None` for a key
/// with no `=`).
pub(crate) fn entries(text: &[u8]) -> Result<Vec<(Key, Option<String>)>, String> {
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    let mut r = Reader { text, at: 0, line: 1 };
    let mut out = Vec::new();
    let mut section: Option<(String, Option<String>)> = None;
    let mut comment = false;
    while let Some(c) = r.next() {
        match c {
            b'\n' => comment = false,
            _ if comment || c.is_ascii_whitespace() => {}
            b'#' | b';' => comment = true,
            b'[' => section = Some(r.header()?),
            c if c.is_ascii_alphabetic() => {
                let (name, value) = r.key(c)?;
                let Some((s, sub)) = &section else { return Err(r.at_line("a key before any section")) };
                out.push((Key { section: s.clone(), subsection: sub.clone(), name }, value));
            }
            _ => return Err(r.at_line("not a key, a section or a comment")),
        }
    }
    Ok(out)
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
    line: usize,
}

impl Reader<'_> {
    /// The next byte, `\r\n` read as `\n`.
    fn next(&mut self) -> Option<u8> {
        let c = *self.text.get(self.at)?;
        self.at += 1;
        if c == b'\r' && self.text.get(self.at) == Some(&b'\n') {
            self.at += 1;
            return Some(b'\n');
        }
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn at_line(&self, what: &str) -> String {
        format!("line {}: {what}", self.line)
    }

    /// After `[`: `section]`, `section.sub]` (old style, the subsection lowercased) or
    /// `section "sub"]`.
    fn header(&mut self) -> Result<(String, Option<String>), String> {
        let mut name = String::new();
        loop {
            match self.next() {
                Some(b']') => break,
                Some(c) if c.is_ascii_alphanumeric() || c == b'-' || c == b'.' => name.push(c.to_ascii_lowercase() as char),
                Some(b' ' | b'\t') => return Ok((self.checked(name)?, Some(self.subsection()?))),
                _ => return Err(self.at_line("a bad section header")),
            }
        }
        let name = self.checked(name)?;
        Ok(match name.split_once('.') {
            Some((s, sub)) => (s.to_string(), Some(sub.to_string())),
            None => (name, None),
        })
    }

    fn checked(&self, name: String) -> Result<String, String> {
        if name.is_empty() || name.starts_with('.') { Err(self.at_line("an empty section name")) } else { Ok(name) }
    }

    /// After `[section `: ` "sub"]`.
    fn subsection(&mut self) -> Result<String, String> {
        let bad = |r: &Self| r.at_line("a bad subsection");
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.next();
        }
        if self.next() != Some(b'"') {
            return Err(bad(self));
        }
        let mut sub = Vec::new();
        loop {
            match self.next() {
                Some(b'"') => break,
                Some(b'\\') => match self.next() {
                    Some(b'\n') | None => return Err(bad(self)),
                    Some(c) => sub.push(c),
                },
                Some(b'\n') | Some(0) | None => return Err(bad(self)),
                Some(c) => sub.push(c),
            }
        }
        if self.next() != Some(b']') {
            return Err(bad(self));
        }
        String::from_utf8(sub).map_err(|_| bad(self))
    }

    /// A key starting with `first`, then its value if any.
    fn key(&mut self, first: u8) -> Result<(String, Option<String>), String> {
        let mut name = String::from(first.to_ascii_lowercase() as char);
        while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || *c == b'-') {
            self.next();
            name.push(c.to_ascii_lowercase() as char);
        }
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.next();
        }
        match self.next() {
            None | Some(b'\n') => Ok((name, None)),
            Some(b'=') => Ok((name, Some(self.value()?))),
            _ => Err(self.at_line("a key followed by something other than `=`")),
        }
    }

    /// After `=`: the value, to the end of its line (or of the last line it goes on to).
    fn value(&mut self) -> Result<String, String> {
        let (mut quoted, mut comment) = (false, false);
        let (mut out, mut blanks) = (Vec::new(), 0usize);
        loop {
            let c = match self.next() {
                None | Some(b'\n') if quoted => return Err(self.at_line("a quote not closed")),
                None | Some(b'\n') => return String::from_utf8(out).map_err(|_| self.at_line("a value that is not UTF-8")),
                Some(_) if comment => continue,
                Some(c) if c.is_ascii_whitespace() && !quoted => {
                    blanks += usize::from(!out.is_empty());
                    continue;
                }
                Some(b'#' | b';') if !quoted => {
                    comment = true;
                    continue;
                }
                Some(0) => return Err(self.at_line("a NUL byte")),
                Some(c) => c,
            };
            out.extend(std::iter::repeat_n(b' ', blanks));
            blanks = 0;
            match c {
                b'"' => quoted = !quoted,
                b'\\' => match self.next() {
                    Some(b'\n') => {}
                    Some(b't') => out.push(b'\t'),
                    Some(b'b') => out.push(8),
                    Some(b'n') => out.push(b'\n'),
                    Some(c @ (b'\\' | b'"')) => out.push(c),
                    _ => return Err(self.at_line("a bad escape")),
                },
                c => out.push(c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        keys(text.as_bytes()).unwrap().iter().map(Key::to_string).collect()
    }

    #[test]
    fn keys_are_found_where_git_finds_them() {
        let text = "\u{feff}# made by git init\n[core]\n\trepositoryformatversion = 0\n\tFileMode = true ; c\n\
                    [remote \"Origin\"]\n\turl = \"x;y\" # c\n[branch.Main]\n\tmerge = refs/heads/main\n";
        assert_eq!(names(text), ["core.repositoryformatversion", "core.filemode", "remote.Origin.url", "branch.main.merge"]);
        // A key on the header's line; a value going on over lines: its next line is no key.
        assert_eq!(names("[core] fsmonitor = x\n"), ["core.fsmonitor"]);
        assert_eq!(names("[user]\n\tname = a \\\nfsmonitor = b\n\temail\n"), ["user.name", "user.email"]);
        assert_eq!(names("[user]\r\n\tname = \"a # b\"\r\n[core]\r\n\thooksPath = h\r\n"), ["user.name", "core.hookspath"]);
        assert_eq!(names("[a \"s\\\"]\\\\\"]\nk = v\n"), ["a.s\"]\\.k"]);
    }

    #[test]
    fn values_are_read_as_git_reads_them() {
        let text = "[core] hooksPath = \"my  hooks\"  # c\n[include]\n\tpath = a\\\n b ; c\n\tpath =   x\t y  \n\tbare\n";
        let got: Vec<(String, Option<String>)> = entries(text.as_bytes()).unwrap().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let want = [("core.hookspath", Some("my  hooks")), ("include.path", Some("a b")), ("include.path", Some("x  y")), ("include.bare", None)];
        let want: Vec<(String, Option<String>)> = want.iter().map(|(k, v)| (k.to_string(), v.map(String::from))).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn what_git_would_refuse_is_an_error() {
        for bad in [
            "k = v\n",
            "[core]\n\tbare = \"x\n",
            "[core\n",
            "[core \"x]\n",
            "[core \"x\"\n",
            "[]\n",
            "[core]\n\t1k = v\n",
            "[core]\n\tbare x\n",
            "[core]\n\tbare = \\q\n",
            "[core]\n\tbare = a\0b\n",
        ] {
            assert!(keys(bad.as_bytes()).is_err(), "{bad:?}");
            assert!(first_unsafe(bad.as_bytes()).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn only_what_git_writes_itself_is_harmless() {
        let init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
        let clone = format!(
            "{init}[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\
             [branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[submodule \"lib\"]\n\turl = ../lib\n\tactive = true\n\
             [user]\n\tname = Agent\n\temail = a@example.com\n[extensions]\n\tobjectformat = sha256\n"
        );
        assert_eq!(first_unsafe(clone.as_bytes()), None);
        // Git's own file system monitor, or none.
        for on in ["true", "False", "0", ""] {
            assert_eq!(first_unsafe(format!("{init}[core]\n\tfsmonitor = {on}\n").as_bytes()), None, "{on}");
        }
        assert_eq!(first_unsafe(format!("{init}[core]\n\tfsmonitor\n").as_bytes()), None);
        for (text, key) in [
            ("[core]\n\tfsmonitor = touch pwned\n", "core.fsmonitor"),
            ("[core]\n\thooksPath = .husky/_\n", "core.hookspath"),
            ("[core]\n\tsshCommand = x\n", "core.sshcommand"),
            ("[include]\n\tpath = ../x\n", "include.path"),
            ("[includeIf \"gitdir:/\"]\n\tpath = ../x\n", "includeif.gitdir:/.path"),
            ("[diff \"x\"]\n\ttextconv = x\n", "diff.x.textconv"),
            ("[filter \"lfs\"]\n\tprocess = x\n", "filter.lfs.process"),
            ("[submodule \"lib\"]\n\tupdate = !x\n", "submodule.lib.update"),
            ("[remote \"o\"]\n\tuploadpack = x\n", "remote.o.uploadpack"),
            ("[core \"x\"]\n\tbare = true\n", "core.x.bare"),
            ("[alias]\n\tst = !x\n", "alias.st"),
        ] {
            assert_eq!(first_unsafe(format!("{init}{text}").as_bytes()), Some(format!("sets {key}")), "{text:?}");
        }
    }

    /// The keys git itself lists for `text` (`git config --list`), or `None` when git refuses
    /// it.
    fn git_keys(text: &[u8], file: &std::path::Path) -> Option<Vec<String>> {
        std::fs::write(file, text).unwrap();
        let out = std::process::Command::new("git")
            .args(["config", "--no-includes", "--file"])
            .arg(file)
            .args(["--list", "--name-only", "-z"])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git is installed");
        let listed = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| listed.split('\0').filter(|k| !k.is_empty()).map(String::from).collect())
    }

    /// Against git itself: every text git reads, this reads with the same keys, or refuses
    /// (a text git refuses may go either way: git runs nothing from it). Hand-written texts, then
    /// each mutated with the characters that matter to the syntax (a fixed seed, a bounded
    /// count).
    #[test]
    fn keys_are_the_keys_git_lists() {
        let file = std::env::temp_dir().join(format!("warden-gitconfig-{}", std::process::id()));
        let seeds: &[&[u8]] = &[
            b"[core]\n\tbare = false\n\tfsmonitor = \"a b\" # c\n",
            b"[core] hooksPath = h\n[include]path=x\n",
            b"[remote \"o r\"]\n\turl = \"x;y\"\\\n\tfetch = z\n",
            b"[a.B]\n\tk = \"v\\\"w\"\r\n\tk2\n",
            b"\xef\xbb\xbf[x]\n;c\n#c\n\tk = 1 \\\n k3 = 2\n",
            b"[s \"q\\\"\\\\\"]\n\tk = v\n",
        ];
        let alphabet = b"[]\"\\\n =#;a.\r\t-";
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % n as u64).unwrap()
        };
        let (mut agreed, mut refused, mut stricter) = (0, 0, 0);
        for round in 0..seeds.len() * 40 {
            let mut text = seeds[round % seeds.len()].to_vec();
            for _ in 0..round / seeds.len() % 4 {
                let at = next(text.len() + 1);
                text.insert(at, alphabet[next(alphabet.len())]);
            }
            match (git_keys(&text, &file), keys(&text)) {
                (Some(theirs), Ok(ours)) => {
                    let ours: Vec<String> = ours.iter().map(Key::to_string).collect();
                    assert_eq!(ours, theirs, "{:?}", String::from_utf8_lossy(&text));
                    agreed += 1;
                }
                // Read by git, refused here (a key before any section, which git takes): the
                // text fails the test, so nothing of it is trusted.
                (Some(_), Err(_)) => stricter += 1,
                (None, _) => refused += 1,
            }
        }
        assert!(agreed > 100 && refused > 10 && stricter < agreed / 4, "{agreed} read alike, {refused} refused by git, {stricter} only here");
        let _ = std::fs::remove_file(&file);
    }
}
