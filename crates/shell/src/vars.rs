//! Variables assigned in the string itself: `f=~/.ssh/id_rsa; cat $f`, `for f in .env; do cat
//! $f; done`, `cat ${x:-.env}`. Every value a variable is given anywhere in the string (an
//! assignment, a `for` word) is a *candidate*: the candidates are collected, never replaced, so
//! a branch or a loop cannot hide one (`if a; then f=x; else f=.env; fi` has both). A word made
//! of literal text and such variables is judged once for every combination of candidates.
//!
//! A variable assigned in a way not followed (`read f`, `f=$(cmd)`) has an unknown candidate;
//! a word using it stays unknown. Only simple forms are substituted: `$name`, `${name}`,
//! `${name:-lit}`, `${name-lit}`, `${name:=lit}`, `${name=lit}`, in or out of double quotes;
//! anything else (single quotes, backslashes, `$( )`, arrays, other operators) leaves the word
//! unknown.

use crate::model::Word;
use std::collections::HashMap;

/// The most combinations a word (or a command's words together) is expanded into.
pub(crate) const MAX_COMBINATIONS: usize = 16;

/// The candidates of each variable assigned so far.
pub(crate) type Vars = HashMap<String, Vec<Word>>;

/// Records `value` as one more candidate of `name`.
pub(crate) fn assign(vars: &mut Vars, name: &str, value: Word) {
    let list = vars.entry(name.to_owned()).or_default();
    if !list.contains(&value) && list.len() <= MAX_COMBINATIONS {
        list.push(value);
    }
}

/// One piece of a word.
enum Part {
    Lit(String),
    Var { name: String, default: Option<String>, quoted: bool },
}

/// Splits the raw text of a word into literal text and variables; `None` for any other form.
fn parts(raw: &str) -> Option<Vec<Part>> {
    let chars: Vec<char> = raw.chars().collect();
    let mut parts = Vec::new();
    let mut lit = String::new();
    let mut quoted = false;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '"' => quoted = !quoted,
            '\'' | '\\' | '`' => return None,
            '*' | '?' | '[' | '{' | '}' if !quoted => return None,
            '$' => {
                if !lit.is_empty() {
                    parts.push(Part::Lit(std::mem::take(&mut lit)));
                }
                let (name, default, next) = variable(&chars, i)?;
                parts.push(Part::Var { name, default, quoted });
                i = next;
            }
            c => lit.push(c),
        }
    }
    if quoted {
        return None;
    }
    if !lit.is_empty() {
        parts.push(Part::Lit(lit));
    }
    Some(parts)
}

/// `$name`, `${name}`, `${name:-lit}` (and `-`, `:=`, `=`) starting after the `$` at `start`.
fn variable(chars: &[char], start: usize) -> Option<(String, Option<String>, usize)> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if chars.get(start) != Some(&'{') {
        let end = (start..=chars.len()).find(|&k| !chars.get(k).is_some_and(|c| is_name(*c)))?;
        let name: String = chars.get(start..end)?.iter().collect();
        return crate::wrappers::is_name(&name).then_some((name, None, end));
    }
    let close = (start..chars.len()).find(|&k| chars.get(k) == Some(&'}'))?;
    let inner: String = chars.get(start + 1..close)?.iter().collect();
    let cut = inner.find(|c: char| !is_name(c)).unwrap_or(inner.len());
    let (name, op) = inner.split_at(cut);
    if !crate::wrappers::is_name(name) {
        return None;
    }
    let default = match op {
        "" => None,
        _ => {
            let lit = [":-", ":=", "-", "="].iter().find_map(|p| op.strip_prefix(p))?;
            if lit.contains(['$', '`', '\'', '"', '\\', '{']) {
                return None;
            }
            Some(lit.to_owned())
        }
    };
    Some((name.to_owned(), default, close + 1))
}

/// Marks a value known only at run time while the combinations are built.
const RUN_TIME: &str = "$\u{0}";

/// A glob with nothing else unknown in it (`src/*.rs` from `for f in src/*.rs`).
fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '[']) && !text.contains(['$', '`', '(', '\'', '"', '\\', '{'])
}

/// The words `w` may stand for, when it uses variables assigned in the string (at most
/// [`MAX_COMBINATIONS`]); `None` when it does not, or uses them in a form not followed.
pub(crate) fn expand(w: &Word, vars: &Vars) -> Option<Vec<Word>> {
    if w.known || !w.text.contains('$') {
        return None;
    }
    let parts = parts(&w.text)?;
    let unknown = || Word { text: w.text.clone(), known: false };
    // Each part's choices: (text, known, a glob the shell expands).
    let mut choices: Vec<Vec<(String, bool)>> = Vec::new();
    for part in &parts {
        match part {
            Part::Lit(s) => choices.push(vec![(s.clone(), true)]),
            Part::Var { name, default, quoted } => {
                let mut list: Vec<(String, bool)> = Vec::new();
                // The default may always be what the word expands to (the variable may be
                // empty); without a default, a variable not assigned here is not followed.
                if let Some(d) = default {
                    list.push((d.clone(), true));
                }
                match vars.get(name) {
                    Some(values) => {
                        for v in values {
                            if !v.known && !is_glob(&v.text) {
                                list.push((RUN_TIME.to_owned(), false)); // a run-time value
                            } else if v.known && !*quoted && v.text.contains(|c: char| c.is_whitespace() || "*?[".contains(c)) {
                                return None; // split or expanded by the shell
                            } else {
                                list.push((v.text.clone(), v.known));
                            }
                        }
                    }
                    // Not assigned here: whatever the environment holds.
                    None if default.is_some() => list.push((RUN_TIME.to_owned(), false)),
                    None => return None,
                }
                choices.push(list);
            }
        }
    }
    let total = choices.iter().try_fold(1usize, |n, c| n.checked_mul(c.len()).filter(|n| *n <= MAX_COMBINATIONS))?;
    let mut out: Vec<Word> = Vec::with_capacity(total);
    for k in 0..total {
        let mut rest = k;
        let (mut text, mut known) = (String::new(), true);
        for c in &choices {
            let (t, kn) = c.get(rest % c.len())?;
            rest /= c.len();
            text.push_str(t);
            known &= *kn;
        }
        let word = if known {
            Word { text, known }
        } else if text.contains(RUN_TIME) {
            unknown()
        } else {
            Word { text, known: false } // a glob the shell expands
        };
        if !out.contains(&word) {
            out.push(word);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str, bool)]) -> Vars {
        let mut v = Vars::new();
        for (n, t, k) in list {
            assign(&mut v, n, Word { text: (*t).to_owned(), known: *k });
        }
        v
    }

    fn texts(w: &str, v: &Vars) -> Option<Vec<String>> {
        let w = Word { text: w.to_owned(), known: false };
        expand(&w, v).map(|l| l.into_iter().map(|w| format!("{}{}", if w.known { "" } else { "?" }, w.text)).collect())
    }

    #[test]
    fn variables_assigned_in_the_string_are_substituted() {
        let v = vars(&[("f", "~/.ssh/id_rsa", true), ("x", ".en", true), ("g", "src/*.rs", false)]);
        assert_eq!(texts("$f", &v), Some(vec!["~/.ssh/id_rsa".into()]));
        assert_eq!(texts("\"$f\"", &v), Some(vec!["~/.ssh/id_rsa".into()]));
        assert_eq!(texts("${x}v", &v), Some(vec![".env".into()]));
        assert_eq!(texts("\"$g\"", &v), Some(vec!["?src/*.rs".into()]));
        assert_eq!(texts("${y:-.env}", &v), Some(vec![".env".into(), "?${y:-.env}".into()]));
        assert_eq!(texts("${x:-a}v", &v), Some(vec!["av".into(), ".env".into()]));
        assert_eq!(texts("${y:=.env}", &vars(&[("y", "$y", false)])), Some(vec![".env".into(), "?${y:=.env}".into()]));
        // Not followed: the word stays as it is.
        assert_eq!(texts("$y", &v), None);
        assert_eq!(texts("'$f'", &v), None);
        assert_eq!(texts("${f#x}", &v), None);
        assert_eq!(texts("$(cat x)", &v), None);
    }

    #[test]
    fn every_candidate_is_kept() {
        let mut v = vars(&[("f", "README.md", true)]);
        assign(&mut v, "f", Word { text: ".env".into(), known: true });
        assert_eq!(texts("$f", &v), Some(vec!["README.md".into(), ".env".into()]));
        // A value the shell would split is not guessed.
        let v = vars(&[("f", "a b", true)]);
        assert_eq!(texts("$f", &v), None);
        assert_eq!(texts("\"$f\"", &v), Some(vec!["a b".into()]));
    }
}
