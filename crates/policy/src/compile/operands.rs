//! Operands that name no file: the pattern of a search (`grep PATTERN FILE...`, `rg PATTERN`)
//! and the script of `sed` and `awk` (`sed 's/ *$//' f`). They are text for the program, so
//! they are not checked as paths (`grep '.*' f` reads `f`, not a file named `.*` or `.env`).
//! Only the first operand, and only when no option gave the pattern or script (`grep -e P f`,
//! `sed -f s f`, `awk -f p f`): then every operand is a file and stays checked. A long option
//! whose value may be the next word (`--ignore-file F`), or a word that cannot be known, before
//! the operand makes the operand unknown, and nothing is skipped.

use warden_shell::SimpleCommand;

/// Short options whose value is the next word when they end a cluster, and the options that
/// give the pattern or script themselves.
fn syntax(program: &str) -> Option<(&'static str, &'static str, &'static [&'static str])> {
    Some(match program {
        "grep" | "egrep" | "fgrep" => ("efmABCdD", "ef", &["--regexp", "--file"]),
        "rg" => ("efgtTABCmjMErG", "ef", &["--regexp", "--file"]),
        "sed" | "gsed" => ("efl", "ef", &["--expression", "--file"]),
        "awk" | "gawk" | "mawk" | "nawk" => ("fFvEilWe", "fEe", &["--file", "--source", "--exec", "--include"]),
        _ => return None,
    })
}

/// The argv index of the operand that is a pattern or script, not a path.
pub(crate) fn pattern_operand(cmd: &SimpleCommand) -> Option<usize> {
    let (valued, gives, long_gives) = syntax(&cmd.program)?;
    let mut skip_value = false;
    for (i, w) in cmd.argv.iter().enumerate().skip(1) {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if !w.known {
            return None;
        }
        let t = w.text.as_str();
        if t == "--" {
            return cmd.argv.get(i + 1).filter(|w| w.known).map(|_| i + 1);
        }
        if let Some(long) = t.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            // `--regexp=P`, `--file F`, and their abbreviations: every operand is a file.
            if long_gives.iter().any(|g| g.trim_start_matches('-').starts_with(name)) {
                return None;
            }
            // `--max-count=5` is whole; `--ignore-file F` may take the next word, which would
            // then be taken for the pattern: do not guess.
            if !long.contains('=') {
                return None;
            }
            continue;
        }
        if let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) {
            for (k, c) in cluster.char_indices() {
                if gives.contains(c) {
                    return None;
                }
                if valued.contains(c) {
                    skip_value = cluster.get(k + c.len_utf8()..).unwrap_or_default().is_empty();
                    break;
                }
            }
            continue;
        }
        return Some(i);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::pattern_operand;

    fn at(line: &str) -> Option<usize> {
        let c = warden_shell::analyse(line).commands.into_iter().next().unwrap();
        pattern_operand(&c)
    }

    #[test]
    fn the_pattern_or_script_operand() {
        assert_eq!(at("grep '.*' f"), Some(1));
        assert_eq!(at("grep -n '[a-z]*$' f"), Some(2));
        assert_eq!(at("grep -A 3 -i x f"), Some(4));
        assert_eq!(at("grep -- -x f"), Some(2));
        assert_eq!(at("sed 's/ *$//' f"), Some(1));
        assert_eq!(at("sed -E 's/[[:space:]]+$//' f"), Some(2));
        assert_eq!(at("awk -F: '{print $1}' f"), Some(2));
        assert_eq!(at("rg -g '*.rs' TODO src"), Some(3));
        // The pattern or script given by an option: every operand is a file.
        assert_eq!(at("grep -e x .env"), None);
        assert_eq!(at("grep -f .env f"), None);
        assert_eq!(at("grep --regexp=x .env"), None);
        assert_eq!(at("sed -e p .env"), None);
        assert_eq!(at("sed -ne p .env"), None);
        assert_eq!(at("awk -f p.awk .env"), None);
        assert_eq!(at("grep $P .env"), None);
        assert_eq!(at("rg --ignore-file .env x"), None);
        assert_eq!(at("grep --max-count=5 '.*' f"), Some(2));
        assert_eq!(at("cat .env"), None);
    }
}
