//! `make` with code written in the command itself: `--eval`/`-E` text, or a makefile read from
//! standard input (`-f -`, `-f /dev/stdin`, fed by a here-string or a pipe). Its recipes run
//! shell commands the analyser never sees, so such a `make` is inline code. A makefile on disk
//! is the build's own code and stays a plain `make`. A word that cannot be known statically
//! (`make $FLAGS`) may be any of these, so it counts as inline code too.

use crate::model::Word;

/// Short options of GNU make that take an argument (the rest of the cluster, or the next word).
const WITH_ARGUMENT: &str = "CfIoW";

/// Short options of GNU make whose argument is optional: the rest of the cluster, or the next
/// word only when it is a number (`-j 4`, `-l 2.5`; make looks at its first character), so
/// `make -j -f -` reads the makefile from standard input. `-O[TYPE]` takes only the rest.
const OPTIONAL_NUMBER: &str = "jl";

/// True when `argv` (a `make` command) runs code written in the command string itself.
pub(crate) fn takes_inline_code(argv: &[Word]) -> bool {
    let mut words = argv.iter().skip(1);
    while let Some(w) = words.next() {
        if !w.known {
            return true;
        }
        let t = w.text.as_str();
        if t == "--" {
            return false;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            match name {
                "eval" => return true,
                "file" | "makefile" => {
                    let value = value.or_else(|| words.next().map(|n| n.text.as_str()));
                    if value.is_some_and(is_stdin) {
                        return true;
                    }
                }
                "jobs" | "load-average" | "max-load"
                    if value.is_none() && words.clone().next().is_some_and(|n| n.known && is_number(&n.text)) =>
                {
                    words.next();
                }
                _ => {}
            }
            continue;
        }
        let Some(cluster) = t.strip_prefix('-') else { continue };
        for (i, c) in cluster.char_indices() {
            if c == 'E' {
                return true;
            }
            let rest = cluster.get(i + c.len_utf8()..).unwrap_or_default();
            if OPTIONAL_NUMBER.contains(c) {
                if rest.is_empty() && words.clone().next().is_some_and(|n| n.known && is_number(&n.text)) {
                    words.next();
                }
                break;
            }
            if c == 'O' {
                break;
            }
            if WITH_ARGUMENT.contains(c) {
                let value = if rest.is_empty() { words.next().map(|n| n.text.as_str()) } else { Some(rest) };
                if c == 'f' && value.is_some_and(is_stdin) {
                    return true;
                }
                break;
            }
        }
    }
    false
}

/// A makefile read from standard input (`-`) or from a descriptor (`/dev/stdin`, `/dev/fd/3`,
/// `/proc/self/fd/3`): its text comes from a redirect of the command itself.
fn is_stdin(path: &str) -> bool {
    path == "-" || crate::walk::fd_path(path).is_some()
}

/// Whether GNU make takes `word` as the value of `-j`/`-l`: it starts with a digit or a dot.
fn is_number(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::test_words as argv;

    #[test]
    fn code_in_the_command_is_found() {
        for line in [
            "make --eval=x:=1",
            "make --eval x:=1",
            "make -E x:=1",
            "make -kEx:=1",
            "make -f -",
            "make -f-",
            "make -f /dev/stdin all",
            "make --file=-",
            "make --makefile /dev/fd/0",
            "make -j4 -f /proc/self/fd/0",
            "make -kf -",
            // Red team: any descriptor, and -j/-l take the next word only when it is a number.
            "make -f /dev/fd/3",
            "make --file=/proc/self/fd/5",
            "make -j -f -",
            "make -l -f -",
            "make --jobs -f -",
            "make -j 4 -f -",
            "make -l 2.5 -f /dev/stdin",
            "make -Oline -f -",
            "make $FLAGS",
            "make all $TARGET",
        ] {
            assert!(takes_inline_code(&argv(line)), "{line}");
        }
    }

    #[test]
    fn a_makefile_on_disk_is_not_inline_code() {
        for line in [
            "make",
            "make test",
            "make -j4 build",
            "make -j 4 build",
            "make -j build -",
            "make -f Makefile.ci all",
            "make -C sub -f -x",
            "make -o - all",
            "make -- -E",
            "make --file=build.mk",
            "make -I - all",
            "make VAR=-E",
        ] {
            assert!(!takes_inline_code(&argv(line)), "{line}");
        }
    }
}
