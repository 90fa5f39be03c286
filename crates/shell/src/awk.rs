//! awk command lines (POSIX awk, gawk, mawk, busybox): every program text is found and scanned
//! for what runs commands or writes files (`system(`, `| getline`, `print >`, `@load`).
//! Options the analyser cannot see through are dangerous: an extension load (`-l`, `--load`),
//! a program file given as the last option (`-E`, `--exec`, mawk's `-W exec`), gawk's
//! `-W`-spelled long options, and the options that write a file of their own (`--profile`,
//! `--dump-variables`, `--pretty-print`, `--debug`). A program file (`-f`, `--include`) is the
//! policy's to refuse (`unless (-f* | --file* | ...)`), as before. An option it does not know
//! is dangerous, never guessed.

use crate::model::Word;

/// What a long option does, for the scan.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Long {
    /// `--source=TEXT`: a program text.
    Source,
    /// `--file=FILE`, `--include=FILE`: a program file (refused by the policies).
    File,
    /// Takes a value, harmless (`--assign`, `--field-separator`).
    Value,
    /// No value, or an optional attached one, harmless (`--posix`, `--lint=fatal`).
    Flag,
    /// Loads code or writes a file the analyser does not see.
    Dangerous,
}

/// gawk's long options (mawk and busybox have a subset).
const LONG: &[(&str, Long)] = &[
    ("source", Long::Source),
    ("file", Long::File),
    ("include", Long::File),
    ("assign", Long::Value),
    ("field-separator", Long::Value),
    ("exec", Long::Dangerous),
    ("load", Long::Dangerous),
    ("dump-variables", Long::Dangerous),
    ("debug", Long::Dangerous),
    ("pretty-print", Long::Dangerous),
    ("profile", Long::Dangerous),
    ("characters-as-bytes", Long::Flag),
    ("traditional", Long::Flag),
    ("copyright", Long::Flag),
    ("csv", Long::Flag),
    ("gen-pot", Long::Flag),
    ("help", Long::Flag),
    ("lint", Long::Flag),
    ("lint-old", Long::Flag),
    ("bignum", Long::Flag),
    ("use-lc-numeric", Long::Flag),
    ("non-decimal-data", Long::Flag),
    ("optimize", Long::Flag),
    ("no-optimize", Long::Flag),
    ("posix", Long::Flag),
    ("re-interval", Long::Flag),
    ("sandbox", Long::Flag),
    ("trace", Long::Flag),
    ("version", Long::Flag),
];

/// The long option `name` stands for: itself or its unique abbreviation (getopt_long accepts
/// any unambiguous prefix). An ambiguous prefix whose candidates differ in kind is dangerous.
fn long_kind(name: &str) -> Long {
    if let Some((_, k)) = LONG.iter().find(|(n, _)| *n == name) {
        return *k;
    }
    let mut kinds = LONG.iter().filter(|(n, _)| !name.is_empty() && n.starts_with(name)).map(|(_, k)| *k);
    match kinds.next() {
        Some(first) if kinds.all(|k| k == first) => first,
        _ => Long::Dangerous,
    }
}

/// Short options that take a value, attached or in the next word.
const SHORT_VALUE: &str = "fFveiW";
/// Short options without a value (`-L` and `-M`... take an optional attached one, see below).
const SHORT_FLAG: &str = "bcCghkMnNOPrsStVI";

/// True when an awk command line can run a command, write a file or load code the analyser
/// does not see. A word that cannot be known statically counts as dangerous.
pub(crate) fn dangerous(argv: &[Word]) -> bool {
    let mut programs: Vec<&str> = vec![];
    let mut from_file = false;
    let mut i = 1;
    while let Some(w) = argv.get(i) {
        let t = w.text.as_str();
        if !w.known {
            return true;
        }
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        i += 1;
        if let Some(long) = t.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let kind = long_kind(name);
            let needs_value = matches!(kind, Long::Source | Long::File | Long::Value);
            let value = match inline {
                Some(v) => Some(v),
                None if needs_value => match crate::words::option_value(argv, &mut i) {
                    Ok(v) => v,
                    Err(_) => return true,
                },
                None => None,
            };
            match kind {
                Long::Dangerous => return true,
                Long::Source => programs.extend(value),
                Long::File => from_file = true,
                Long::Value | Long::Flag => {}
            }
            continue;
        }
        let cluster = t.get(1..).unwrap_or_default();
        for (k, c) in cluster.char_indices() {
            let rest = cluster.get(k + c.len_utf8()..).unwrap_or_default();
            if SHORT_VALUE.contains(c) {
                let value = if rest.is_empty() {
                    match crate::words::option_value(argv, &mut i) {
                        Ok(v) => v,
                        Err(_) => return true,
                    }
                } else {
                    Some(rest)
                };
                match c {
                    'e' => programs.extend(value),
                    'f' | 'i' => from_file = true,
                    // mawk's `-W exec FILE`, `-W dump`, ...; gawk's `-W` long options.
                    'W' if !value.is_some_and(|v| matches!(v, "version" | "v" | "usage" | "help")) => {
                        return true;
                    }
                    _ => {}
                }
                break;
            }
            // `-L[fatal|invalid]` (lint): an optional attached value.
            if c == 'L' {
                break;
            }
            if SHORT_FLAG.contains(c) {
                continue;
            }
            // `-E FILE`, `-l LIB`, `-d[FILE]`, `-D[FILE]`, `-o[FILE]`, `-p[FILE]`, and any
            // letter it does not know.
            return true;
        }
    }
    if programs.is_empty() && !from_file {
        match argv.get(i) {
            Some(w) if !w.known => return true,
            Some(w) => programs.push(w.text.as_str()),
            None => {}
        }
    }
    programs.iter().any(|p| program_is_dangerous(p))
}

/// One program text: `system(`, `getline` (from a command or a file), a directive or an
/// indirect call (`@load`, `@f()`), a pipe (`print | "cmd"`, `"cmd" | getline`, `|&`), or an
/// output redirection (`print > "f"`, `printf … >> f`). A `>` is a redirection only in a `print`
/// or `printf` statement outside parentheses; elsewhere (`$3 > 100`, `print (a > b)`) it is a
/// comparison. `||` is a logical or. Strings and regular expressions are skipped for `>` and
/// `|`; the words are looked for everywhere.
fn program_is_dangerous(text: &str) -> bool {
    if ["system", "getline", "@"].iter().any(|k| text.contains(k)) {
        return true;
    }
    let b: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut printing = false;
    let mut depth = 0usize;
    // The last significant character, to tell a regular expression from a division.
    let mut last: Option<char> = None;
    while let Some(&c) = b.get(i) {
        i += 1;
        match c {
            '"' => {
                while let Some(&d) = b.get(i) {
                    i += 1;
                    if d == '\\' {
                        i += 1;
                    } else if d == '"' {
                        break;
                    }
                }
            }
            '/' if last.is_none_or(|l| "(,{};!~&|?:\n".contains(l)) => {
                while let Some(&d) = b.get(i) {
                    i += 1;
                    if d == '\\' {
                        i += 1;
                    } else if d == '/' {
                        break;
                    }
                }
            }
            '#' => {
                while b.get(i).is_some_and(|d| *d != '\n') {
                    i += 1;
                }
            }
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ';' | '{' | '}' | '\n' => {
                printing = false;
                depth = 0;
            }
            '|' => {
                if b.get(i) == Some(&'|') {
                    i += 1;
                } else {
                    return true;
                }
            }
            '>' if printing && depth == 0 => return true,
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i - 1;
                while b.get(i).is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_') {
                    i += 1;
                }
                let word: String = b.get(start..i).unwrap_or_default().iter().collect();
                if word == "print" || word == "printf" {
                    printing = true;
                    depth = 0;
                }
            }
            _ => {}
        }
        if !c.is_whitespace() || c == '\n' {
            last = Some(c);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::dangerous;
    use crate::model::Word;

    fn argv(words: &[&str]) -> Vec<Word> {
        words.iter().map(|w| Word { text: (*w).to_owned(), known: true }).collect()
    }

    /// Red team: only the first `-e` was scanned, glued forms (`-e'…'`, `--source=…`) were not
    /// seen as programs, `-l LIB` was scanned instead of the program, and program files from
    /// `-E`, `--exec` and `-W exec` were allowed.
    #[test]
    fn every_program_and_every_hidden_program_is_found() {
        let sys = r#"BEGIN{system("touch PWN")}"#;
        for line in [
            vec!["awk", "-e", "BEGIN{print 1}", "-e", sys],
            vec!["awk", "--source", sys],
            vec!["awk", &format!("--source={sys}")],
            vec!["awk", &format!("--sou={sys}")],
            vec!["awk", &format!("-e{sys}")],
            vec!["awk", "-l", "ordchr", sys],
            vec!["awk", "-lordchr", "{print}"],
            vec!["awk", "--load", "ordchr", "{print}"],
            vec!["awk", "-E", "/dev/stdin"],
            vec!["gawk", "--exec=prog.awk", "f"],
            vec!["gawk", "--ex", "prog.awk"],
            vec!["mawk", "-W", "exec", "/dev/stdin"],
            vec!["mawk", "-Wexec", "/dev/stdin"],
            vec!["gawk", "-o/tmp/x", "{print}"],
            vec!["gawk", "--profile=x", "{print}"],
            vec!["gawk", "-v", "x=1", "-F:", "-e", "{print}", "-e", "END{print > \"f\"}"],
            vec!["awk", "-F", ":", sys],
            vec!["awk", "--frobnicate", "{print}"],
            vec!["awk", "{print | \"sh\"}"],
            vec!["awk", "{print > \"out\"}"],
            vec!["awk", "{print $1 >> $2}"],
            vec!["awk", "$3 > 100 {printf \"%s\", $1 > \"f\"}"],
            vec!["awk", "{print $1, $2 > \"f\"}"],
            vec!["awk", "{\"date\" |& getline d}"],
            vec!["awk", "BEGIN{while ((\"ls\" | getline l) > 0) print l}"],
        ] {
            assert!(dangerous(&argv(&line)), "{line:?}");
        }
        let mut unknown = argv(&["awk", "-e", "{print}"]);
        unknown.push(Word { text: "$p".to_owned(), known: false });
        assert!(dangerous(&unknown));
    }

    #[test]
    fn plain_programs_are_not_dangerous() {
        for line in [
            vec!["awk", "{print $1}", "f"],
            vec!["awk", "-F:", "{print $1}", "/etc/passwd"],
            vec!["awk", "-F", ":", "-v", "OFS=,", "{print $1}"],
            vec!["awk", "-e", "{print}", "-e", "END{print NR}", "f"],
            vec!["gawk", "--source={print}", "--posix", "f"],
            vec!["awk", "-f", "prog.awk", "f"],
            vec!["awk", "--", "{print}", "-f"],
            vec!["awk", "--version"],
            vec!["mawk", "-W", "version"],
            // Comparisons, not redirections (lower-priority red-team finding).
            vec!["awk", "$3 > 100", "f"],
            vec!["awk", "NR>1{s+=$2} END{print s}", "f"],
            vec!["awk", "{print ($1 > $2)}", "f"],
            vec!["awk", "$1 > 0 || $2 ~ /a|b/ {print}", "f"],
            vec!["awk", "{print \"a > b\"}", "f"],
            vec!["awk", "{x = $1 / 2; if (x > 3) print x}", "f"],
        ] {
            assert!(!dangerous(&argv(&line)), "{line:?}");
        }
    }
}
