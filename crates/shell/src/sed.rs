//! sed command lines: the options, and a small scanner for the scripts. It finds the commands
//! that run programs (`e`, the `e` flag of `s`), which are dangerous, and the files a script
//! names: `r`/`R` read them, `w`/`W` and the `w` flag of `s` write them (writing also stays
//! dangerous). A script file (`-f`) cannot be read statically, so it is dangerous too; anything
//! the scanner does not understand counts as dangerous.

use crate::model::Word;

/// What a sed command line does beyond reading its input files.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Sed {
    /// It can execute a command or write a file, or it cannot be known.
    pub dangerous: bool,
    /// Files read by `r` and `R`.
    pub reads: Vec<String>,
    /// Files written by `w`, `W` and the `w` flag of `s`.
    pub writes: Vec<String>,
}

/// GNU sed's long options, for abbreviations: (name, takes a value).
const LONG: &[(&str, bool)] = &[
    ("expression", true),
    ("file", true),
    ("line-length", true),
    ("in-place", false),
    ("quiet", false),
    ("silent", false),
    ("debug", false),
    ("follow-symlinks", false),
    ("posix", false),
    ("regexp-extended", false),
    ("separate", false),
    ("sandbox", false),
    ("unbuffered", false),
    ("null-data", false),
    ("zero-terminated", false),
    ("binary", false),
    ("help", false),
    ("version", false),
];

/// Scans a sed command line (`argv[0]` is `sed`).
pub(crate) fn command(argv: &[Word]) -> Sed {
    let mut out = Sed::default();
    let mut scripts: Vec<&str> = vec![];
    let mut explicit = false;
    let mut i = 1;
    while let Some(w) = argv.get(i) {
        i += 1;
        let t = w.text.as_str();
        if !w.known {
            out.dangerous = true;
            return out;
        }
        if t == "--" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let found: Vec<&(&str, bool)> = LONG.iter().filter(|(n, _)| !name.is_empty() && n.starts_with(name)).collect();
            let exact = LONG.iter().find(|(n, _)| *n == name);
            let unique = if found.len() == 1 { found.first().copied() } else { None };
            let Some(&(full, value)) = exact.or(unique) else {
                out.dangerous = true;
                return out;
            };
            let value = match (value, inline) {
                (true, Some(v)) => Some(v),
                (true, None) => match crate::words::option_value(argv, &mut i) {
                    Ok(v) => v,
                    Err(_) => {
                        out.dangerous = true;
                        return out;
                    }
                },
                (false, _) => None,
            };
            match full {
                "expression" => {
                    explicit = true;
                    scripts.extend(value);
                }
                "file" => {
                    out.dangerous = true;
                    return out;
                }
                _ => {}
            }
            continue;
        }
        let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) else {
            if !explicit && scripts.is_empty() {
                scripts.push(t);
                explicit = true;
            }
            continue;
        };
        for (k, c) in cluster.char_indices() {
            let rest = cluster.get(k + c.len_utf8()..).unwrap_or_default();
            match c {
                'e' | 'f' | 'l' => {
                    let value = if rest.is_empty() {
                        match crate::words::option_value(argv, &mut i) {
                            Ok(v) => v,
                            Err(_) => {
                                out.dangerous = true;
                                return out;
                            }
                        }
                    } else {
                        Some(rest)
                    };
                    if c == 'f' {
                        out.dangerous = true;
                        return out;
                    }
                    if c == 'e' {
                        explicit = true;
                        scripts.extend(value);
                    }
                    break;
                }
                // `-i[SUFFIX]`: the suffix is the rest of the word (the policies decide `-i`).
                'i' => break,
                'n' | 'r' | 'E' | 's' | 'u' | 'z' | 'b' => {}
                _ => {
                    out.dangerous = true;
                    return out;
                }
            }
        }
    }
    // GNU sed joins the -e scripts with newlines.
    let script = scripts.join("\n");
    let found = scan(&script);
    out.dangerous |= found.dangerous;
    out.reads = found.reads;
    out.writes = found.writes;
    out
}

/// True when the sed script can execute a command or write a file.
#[cfg(test)]
pub(crate) fn dangerous(script: &str) -> bool {
    scan(script).dangerous
}

/// Scans one script.
fn scan(script: &str) -> Sed {
    let mut out = Sed::default();
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    loop {
        while b
            .get(i)
            .is_some_and(|c| c.is_whitespace() || matches!(c, ';' | '{' | '}'))
        {
            i += 1;
        }
        let Some(_) = b.get(i) else {
            return out;
        };
        i = skip_address(&b, i);
        let Some(&cmd) = b.get(i) else {
            out.dangerous = true;
            return out;
        };
        i += 1;
        match cmd {
            'e' => {
                out.dangerous = true;
                return out;
            }
            'r' | 'R' | 'w' | 'W' => {
                let end = skip_to(&b, i, &['\n']);
                let name: String = b.get(i..end).unwrap_or_default().iter().collect();
                let name = name.trim_start().to_owned();
                i = end;
                if matches!(cmd, 'w' | 'W') {
                    out.dangerous = true;
                    out.writes.push(name);
                } else {
                    out.reads.push(name);
                }
            }
            '#' | 'a' | 'i' | 'c' => i = skip_to(&b, i, &['\n']),
            ':' | 'b' | 't' | 'T' => i = skip_to(&b, i, &['\n', ';']),
            // A block opens after an address (`/re/{p;q}`) and closes like a command.
            '{' | '}' => {}
            's' => {
                let Some(&delim) = b.get(i) else {
                    out.dangerous = true;
                    return out;
                };
                if delim == '\n' || delim == '\\' {
                    out.dangerous = true;
                    return out;
                }
                i = skip_delimited(&b, i + 1, delim);
                i = skip_delimited(&b, i, delim);
                // Flags: `e` executes the pattern space; `w FILE` writes, the name running to
                // the end of the line.
                while let Some(&c) = b.get(i) {
                    if matches!(c, '\n' | ';' | '}') {
                        break;
                    }
                    i += 1;
                    if c == 'w' {
                        let end = skip_to(&b, i, &['\n']);
                        let name: String = b.get(i..end).unwrap_or_default().iter().collect();
                        out.writes.push(name.trim_start().to_owned());
                        out.dangerous = true;
                        i = end;
                        break;
                    }
                    if matches!(c, 'e' | 'W') {
                        out.dangerous = true;
                        return out;
                    }
                }
            }
            'y' => {
                let Some(&delim) = b.get(i) else {
                    out.dangerous = true;
                    return out;
                };
                i = skip_delimited(&b, i + 1, delim);
                i = skip_delimited(&b, i, delim);
            }
            'q' | 'Q' | 'l' | 'L' => {
                while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == ' ') {
                    i += 1;
                }
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            _ => {
                out.dangerous = true;
                return out;
            }
        }
    }
}

fn skip_to(b: &[char], mut i: usize, stops: &[char]) -> usize {
    while b.get(i).is_some_and(|c| !stops.contains(c)) {
        i += 1;
    }
    i
}

/// Skips to just past the next unescaped `delim`.
fn skip_delimited(b: &[char], mut i: usize, delim: char) -> usize {
    while let Some(&c) = b.get(i) {
        i += 1;
        if c == '\\' {
            i += 1;
        } else if c == delim {
            break;
        }
    }
    i
}

fn skip_address(b: &[char], mut i: usize) -> usize {
    loop {
        match b.get(i) {
            Some(c) if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!' | ' ') => {
                i += 1;
            }
            Some('/') => i = skip_delimited(b, i + 1, '/'),
            Some('\\') => match b.get(i + 1) {
                Some(&d) => i = skip_delimited(b, i + 2, d),
                None => return i + 1,
            },
            _ => return i,
        }
        // GNU `I`/`M` address flags after a regex
        while b.get(i).is_some_and(|c| matches!(c, 'I' | 'M'))
            && b.get(i.saturating_sub(1)) == Some(&'/')
        {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::dangerous;

    #[test]
    fn sed_execute_and_write_are_found() {
        for s in [
            "e",
            "1e rm x",
            "s/a/b/e",
            "s/a/b/w out",
            "w out",
            "/x/W out",
            "s|a|b|ge",
            "1d;e id",
        ] {
            assert!(dangerous(s), "{s}");
        }
        for s in [
            "s/a/b/g",
            "/re/{p;q}",
            "1{/x/d}",
            "1r .env",
            "s/e/w/",
            "1d",
            "/^#/d",
            "s/\\/e/x/g",
            "y/abc/xyz/",
            "$p",
            "3q",
        ] {
            assert!(!dangerous(s), "{s}");
        }
    }

    fn argv(words: &[&str]) -> Vec<crate::model::Word> {
        words.iter().map(|w| crate::model::Word { text: (*w).to_owned(), known: true }).collect()
    }

    /// Red team: `sed '1r .env' README.md` read a secret unseen; `-ne` and `{p;q}` were
    /// opaque; a script file (`-f`) was not scanned at all.
    #[test]
    fn files_named_by_the_script_and_the_options() {
        let r = super::command(&argv(&["sed", "1r .env", "README.md"]));
        assert_eq!((r.dangerous, r.reads.as_slice()), (false, &[".env".to_owned()][..]));
        let r = super::command(&argv(&["sed", "-e", "$R /etc/shadow", "-e", "s/a/b/w .git/config", "f"]));
        assert!(r.dangerous);
        assert_eq!(r.reads, ["/etc/shadow"]);
        assert_eq!(r.writes, [".git/config"]);
        for ok in [
            vec!["sed", "-n", "/re/{p;q}", "f"],
            vec!["sed", "-ne", "/x/p", "f"],
            vec!["sed", "-nE", "s/ *$//p", "f"],
            vec!["sed", "--expr=s/a/b/", "f"],
            vec!["sed", "-i", "s/a/b/", "f"],
            vec!["sed", "-e", "s/a/b/", "--", "-f"],
        ] {
            assert!(!super::command(&argv(&ok)).dangerous, "{ok:?}");
        }
        for bad in [
            vec!["sed", "-f", "script.sed", "f"],
            vec!["sed", "-nf", "/dev/stdin", "f"],
            vec!["sed", "--file=x", "f"],
            vec!["sed", "-ne", "1e id", "f"],
            vec!["sed", "--frobnicate", "p", "f"],
            vec!["sed", "-n", "1!e id"],
        ] {
            assert!(super::command(&argv(&bad)).dangerous, "{bad:?}");
        }
    }
}
