//! Secrets that only the position of a word reveals: a tool's password option that takes its
//! value in the next word or glued to a short flag (`mysql -pPW`, `sshpass -p PW`,
//! `curl -u user:PW`, `htpasswd -b FILE USER PW`, `aws configure set KEY VALUE`, ...), and the
//! word a here-string feeds to `--with-token` / `--password-stdin`.
//!
//! The text is cut into words as a shell would roughly see it (quotes kept together, command
//! separators ending a command); no full parse: a word the rules reach is redacted, however
//! it was quoted. Errs wide: a tool's name anywhere in a command (`sudo mysql`, `echo mysql`)
//! starts its rules.

use std::ops::Range;

/// One word: its byte range in the text.
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    start: usize,
}

impl Word<'_> {
    /// The range of the word past its first `skip` bytes, without surrounding quotes.
    fn value(&self, skip: usize) -> Option<Range<usize>> {
        let rest = self.text.get(skip..)?;
        let (mut s, mut e) = (self.start + skip, self.start + self.text.len());
        let b = rest.as_bytes();
        if let (Some(&q @ (b'"' | b'\'')), Some(&last), true) = (b.first(), b.last(), b.len() >= 2)
            && last == q
        {
            s += 1;
            e -= 1;
        }
        (e > s).then_some(s..e)
    }

    /// The range after the first `sep` in the word's value (`user:PW`, `user%PW`).
    fn after(&self, skip: usize, sep: char) -> Option<Range<usize>> {
        let r = self.value(skip)?;
        let i = self.text.get(r.start - self.start..r.end - self.start)?.find(sep)?;
        let s = r.start + i + sep.len_utf8();
        (r.end > s).then_some(s..r.end)
    }

    /// The command name this word would be: its last path component, unquoted.
    fn name(&self) -> &str {
        let w = self.text.trim_matches(['"', '\'']);
        w.rsplit('/').next().unwrap_or(w)
    }

    fn is(&self, s: &str) -> bool {
        self.text == s
    }

    /// A short flag `flag` with its value glued on (`-pPW`): the value's range.
    fn glued(&self, flag: &str) -> Option<Range<usize>> {
        (self.text.len() > flag.len() && self.text.starts_with(flag) && !self.text.starts_with("--")).then(|| self.value(flag.len())).flatten()
    }
}

/// Byte ranges of `text` that are secrets by their position.
pub(super) fn secrets(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for command in commands(text) {
        for (i, w) in command.iter().enumerate() {
            let rest = command.get(i + 1..).unwrap_or_default();
            rules(w.name(), rest, &mut out);
            here_string(w, rest, &mut out);
        }
    }
    out
}

/// The rules of the tool `name`, on the words after it.
fn rules(name: &str, rest: &[Word<'_>], out: &mut Vec<Range<usize>>) {
    const MYSQL: &[&str] = &["mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mysqlpump", "mariadb", "mariadb-dump", "mariadb-admin"];
    const LOGIN: &[&str] = &["docker", "podman", "buildah", "skopeo", "nerdctl", "helm", "oras", "az", "cf"];
    const SMB: &[&str] = &["smbclient", "rpcclient", "smbcacls", "smbget", "smbmap", "smbcquotas"];
    match name {
        // `-p` alone prompts (and `-p NAME` is then the database): only a glued value is one.
        n if MYSQL.contains(&n) => glued(rest, "-p", out),
        "7z" | "7za" | "7zr" => glued(rest, "-p", out),
        "sshpass" => option(rest, &["-p"], out),
        "redis-cli" => option(rest, &["-a"], out),
        "zip" | "zipcloak" | "unzip" => option(rest, &["-P"], out),
        "openssl" => option(rest, &["-k"], out),
        n if n.starts_with("ldap") => option(rest, &["-w"], out),
        n if LOGIN.contains(&n) && rest.iter().any(|w| w.is("login")) => option(rest, &["-p"], out),
        "curl" => user_secret(rest, &["-u", "-U"], &["--user", "--proxy-user"], ':', out),
        n if SMB.contains(&n) => user_secret(rest, &["-U"], &["--user"], '%', out),
        "htpasswd" => htpasswd(rest, out),
        "config" | "configure" => config_set(rest, out),
        _ => {}
    }
}

/// `FLAG VALUE` and `FLAGVALUE` for each short flag.
fn option(rest: &[Word<'_>], flags: &[&str], out: &mut Vec<Range<usize>>) {
    for (i, w) in rest.iter().enumerate() {
        for flag in flags {
            if w.is(flag) {
                out.extend(rest.get(i + 1).and_then(|v| v.value(0)));
            } else {
                out.extend(w.glued(flag));
            }
        }
    }
}

/// `FLAGVALUE` only.
fn glued(rest: &[Word<'_>], flag: &str, out: &mut Vec<Range<usize>>) {
    out.extend(rest.iter().filter_map(|w| w.glued(flag)));
}

/// `-u user:PW`, `-uuser:PW`, `--user user:PW`, `--user=user:PW`: the part after `sep`.
fn user_secret(rest: &[Word<'_>], short: &[&str], long: &[&str], sep: char, out: &mut Vec<Range<usize>>) {
    for (i, w) in rest.iter().enumerate() {
        for flag in short.iter().chain(long) {
            if w.is(flag) {
                out.extend(rest.get(i + 1).and_then(|v| v.after(0, sep)));
            } else if long.contains(flag) && w.text.starts_with(&format!("{flag}=")) {
                out.extend(w.after(flag.len() + 1, sep));
            } else if short.contains(flag) && w.glued(flag).is_some() {
                out.extend(w.after(flag.len(), sep));
            }
        }
    }
}

/// `htpasswd -b[c] FILE USER PW`, `htpasswd -nb USER PW`: with `b` in a flag, the last
/// argument (before any redirection) is the password.
fn htpasswd(rest: &[Word<'_>], out: &mut Vec<Range<usize>>) {
    let args: Vec<&Word<'_>> = rest.iter().take_while(|w| !w.text.starts_with(['<', '>']) && !w.text.starts_with("2>")).collect();
    if args.iter().any(|w| w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('b')) {
        out.extend(args.last().filter(|w| !w.text.starts_with('-')).and_then(|w| w.value(0)));
    }
}

/// `config set KEY VALUE` (npm, yarn, pnpm, `aws configure set`): the value of a key that
/// names a credential.
fn config_set(rest: &[Word<'_>], out: &mut Vec<Range<usize>>) {
    const KEYS: &[&str] = &["secret", "token", "pass", "pwd", "auth", "key", "credential"];
    let [set, key, value, ..] = rest else { return };
    let k = key.text.to_ascii_lowercase();
    if set.is("set") && !k.contains('=') && KEYS.iter().any(|s| k.contains(s)) {
        out.extend(value.value(0));
    }
}

/// `--with-token <<< TOKEN`, `--password-stdin <<<TOKEN`: the here-string's word.
fn here_string(w: &Word<'_>, rest: &[Word<'_>], out: &mut Vec<Range<usize>>) {
    if !(w.is("--with-token") || w.text.ends_with("-stdin")) {
        return;
    }
    match rest {
        [h, v, ..] if h.is("<<<") => out.extend(v.value(0)),
        [h, ..] if h.text.starts_with("<<<") => out.extend(h.value(3)),
        _ => {}
    }
}

/// The words of each command in `text` (split at `|`, `;`, `&`, newlines, parentheses and
/// backquotes outside quotes).
fn commands<'a>(text: &'a str) -> Vec<Vec<Word<'a>>> {
    let mut commands: Vec<Vec<Word<'a>>> = Vec::new();
    let mut words: Vec<Word<'a>> = Vec::new();
    let mut start: Option<usize> = None;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let end_word = |words: &mut Vec<Word<'a>>, start: &mut Option<usize>, at: usize| {
        if let Some(s) = start.take() {
            words.push(Word { text: text.get(s..at).unwrap_or_default(), start: s });
        }
    };
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => escaped = true,
            (Some(_), _) => {}
            (None, '\\') => {
                start.get_or_insert(i);
                escaped = true;
            }
            (None, '"' | '\'') => {
                start.get_or_insert(i);
                quote = Some(c);
            }
            (None, '|' | ';' | '&' | '\n' | '(' | ')' | '`') => {
                end_word(&mut words, &mut start, i);
                commands.push(std::mem::take(&mut words));
            }
            (None, c) if c.is_whitespace() => end_word(&mut words, &mut start, i),
            (None, _) => {
                start.get_or_insert(i);
            }
        }
    }
    end_word(&mut words, &mut start, text.len());
    commands.push(words);
    commands
}
