//! Shell errors naming a script line: bash `./script.sh: line 3: foo: command not found` and
//! dash `script.sh: 3: foo: not found`. When the name is the shell itself (`sh: 1: ...`,
//! `bash: line 3: ...` from `sh -c`) there is no file, so nothing is reported.

use super::loc::{self, Loc};

/// Names a shell prints for itself when it runs a `-c` string or standard input.
const SHELLS: [&str; 8] = ["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox"];

pub(crate) fn scan<'a>(line: &'a str, out: &mut Vec<Loc<'a>>) {
    let Some((name, rest)) = line.split_once(": ") else {
        return;
    };
    if name.is_empty() || name.contains(char::is_whitespace) {
        return;
    }
    let base = name.rsplit('/').next().unwrap_or(name);
    if SHELLS.contains(&base) || SHELLS.contains(&base.trim_start_matches('-')) {
        return;
    }
    let rest = rest.strip_prefix("line ").unwrap_or(rest);
    let Some((num, _)) = rest.split_once(": ") else {
        return;
    };
    if let Some(n) = loc::number(num) {
        out.push(Loc::new(name, Some(n), None));
    }
}

#[cfg(test)]
mod tests {
    use super::super::loc::Loc;

    fn scan(line: &str) -> Vec<Loc<'_>> {
        super::super::loc::collect(super::scan, line)
    }

    #[test]
    fn recorded_shell_lines() {
        let table = [
            ("./script.sh: line 3: foo: command not found", "./script.sh"),
            ("s.sh: line 3: nosuchcmd_x: command not found", "s.sh"),
            ("script.sh: 3: foo: not found", "script.sh"),
            ("./s.sh: 3: nosuchcmd_x: not found", "./s.sh"),
            ("/ws/run: line 3: syntax error near unexpected token `fi'", "/ws/run"),
        ];
        for (line, path) in table {
            assert_eq!(scan(line), [Loc::new(path, Some(3), None)], "{line}");
        }
    }

    #[test]
    fn the_shell_itself_is_not_a_file() {
        for line in [
            "sh: 1: nosuchcmd: not found",
            "bash: line 3: nosuchcmd: command not found",
            "/bin/sh: 1: x: not found",
            "-bash: line 1: x: command not found",
            "bash: nosuchcmd: command not found",
            "ValueError: x",
            "Warning: 12 items",
            "error: 0: nope",
            "an error: 3: spaced name",
        ] {
            assert_eq!(scan(line), [], "{line}");
        }
    }
}
