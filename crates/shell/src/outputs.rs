//! Read commands that write their second operand: `uniq IN OUT`, `xxd IN OUT`. The output is a
//! redirect of the command, judged like `> OUT`: under a hook a read command runs unconfined,
//! and `uniq - ~/.bashrc` writes a startup file as surely as `> ~/.bashrc` does.

use crate::model::Word;

/// Options of `program` that take the next word as their value (when not attached).
fn valued(program: &str) -> &'static [&'static str] {
    match program {
        "uniq" => &["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"],
        "xxd" => &["-c", "-cols", "-g", "-groupsize", "-l", "-len", "-o", "-offset", "-s", "-seek", "-n", "-name", "-R"],
        _ => &[],
    }
}

/// The output operand of `argv` (`argv[0]` is `program`), when it names one (`-` is stdout).
pub(crate) fn output<'a>(program: &str, argv: &'a [Word]) -> Option<&'a Word> {
    let takes = valued(program);
    let mut operands: Vec<&Word> = Vec::new();
    let mut words = argv.iter().skip(1);
    let mut options = true;
    while let Some(w) = words.next() {
        let t = w.text.as_str();
        if options && t == "--" {
            options = false;
        } else if options && t.starts_with('-') && t != "-" {
            if takes.contains(&t) {
                words.next();
            }
        } else {
            operands.push(w);
        }
    }
    operands.get(1).copied().filter(|w| w.text != "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(program: &str, args: &[&str]) -> Option<String> {
        let argv: Vec<Word> = std::iter::once(program).chain(args.iter().copied()).map(|t| Word { text: t.into(), known: true }).collect();
        output(program, &argv).map(|w| w.text.clone())
    }

    #[test]
    fn the_second_operand_is_the_output() {
        assert_eq!(out("uniq", &["-", "~/.bashrc"]), Some("~/.bashrc".into()));
        assert_eq!(out("uniq", &["-c", "-f", "2", "in", "out"]), Some("out".into()));
        assert_eq!(out("uniq", &["--skip-fields=2", "in"]), None);
        assert_eq!(out("uniq", &["in", "-"]), None);
        assert_eq!(out("xxd", &["-c", "8", "in", "out.hex"]), Some("out.hex".into()));
        assert_eq!(out("xxd", &["-c8", "in"]), None);
        assert_eq!(out("xxd", &["--", "-in", "-out"]), Some("-out".into()));
    }
}
