//! `grep` with GNU grep's output: `path:line:text`, paths as given, `-r` without operands
//! searching `.` and printing paths without `./`.

use std::io::Write as _;

use regex::bytes::{Regex, RegexBuilder};

use crate::fsx;

struct Opts {
    re: Regex,
    invert: bool,
    number: bool,
    list: bool,
    count: bool,
    quiet: bool,
    silent: bool,
    recursive: bool,
    follow: bool,
    /// `Some(true)`: always print names; `Some(false)`: never; `None`: only under a directory.
    names: Option<bool>,
}

#[derive(Default)]
struct State {
    matched: bool,
    error: bool,
}

/// `grep [-rRnivlcEFqsHhw] [-e PATTERN] PATTERN [FILE...]`.
pub fn run(ctx: &mut crate::Ctx, args: &[String]) -> i32 {
    let long = [
        ("recursive", 'r'),
        ("dereference-recursive", 'R'),
        ("line-number", 'n'),
        ("ignore-case", 'i'),
        ("invert-match", 'v'),
        ("files-with-matches", 'l'),
        ("count", 'c'),
        ("extended-regexp", 'E'),
        ("fixed-strings", 'F'),
        ("quiet", 'q'),
        ("silent", 'q'),
        ("no-messages", 's'),
        ("with-filename", 'H'),
        ("no-filename", 'h'),
        ("word-regexp", 'w'),
        ("regexp", 'e'),
    ];
    let p = match crate::args::parse(args, "rRnivlcEFGqsHhwx", "e", &long) {
        Ok(p) => p,
        Err(e) => {
            ctx.err(e);
            return 2;
        }
    };
    let mut operands = p.operands.clone();
    let mut patterns: Vec<String> = p.all_values.iter().filter(|(c, _)| *c == 'e').map(|(_, v)| v.clone()).collect();
    if patterns.is_empty() {
        if operands.is_empty() {
            ctx.err("usage: grep [OPTION]... PATTERNS [FILE]...");
            return 2;
        }
        patterns.push(operands.remove(0));
    }
    let patterns: Vec<String> = patterns.iter().flat_map(|p| p.split('\n').map(String::from).collect::<Vec<_>>()).collect();
    let translated: Vec<String> = patterns
        .iter()
        .map(|pat| {
            let body = if p.has('F') { regex::escape(pat) } else { translate(pat, p.has('E')) };
            let body = if p.has('w') { format!(r"\b(?:{body})\b") } else { body };
            if p.has('x') { format!("^(?:{body})$") } else { format!("(?:{body})") }
        })
        .collect();
    let re = match RegexBuilder::new(&translated.join("|")).case_insensitive(p.has('i')).build() {
        Ok(re) => re,
        Err(e) => {
            ctx.err(format_args!("invalid regular expression: {e}"));
            return 2;
        }
    };
    let recursive = p.has('r') || p.has('R');
    let names = if p.has('h') {
        Some(false)
    } else if p.has('H') || operands.len() > 1 {
        Some(true)
    } else if recursive {
        None
    } else {
        Some(false)
    };
    let o = Opts {
        re,
        invert: p.has('v'),
        number: p.has('n'),
        list: p.has('l'),
        count: p.has('c'),
        quiet: p.has('q'),
        silent: p.has('s'),
        recursive,
        follow: p.has('R'),
        names,
    };
    let mut st = State::default();
    if operands.is_empty() {
        if recursive {
            walk(ctx, &o, &mut st, "", ".", true);
        } else {
            search(ctx, &o, &mut st, "(standard input)", "-", false);
        }
    } else {
        for op in &operands {
            if op == "-" {
                search(ctx, &o, &mut st, "(standard input)", "-", false);
            } else {
                walk(ctx, &o, &mut st, op, op, true);
            }
        }
    }
    if st.error && !(o.quiet && st.matched) {
        2
    } else if st.matched {
        0
    } else {
        1
    }
}

/// Searches `path` (shown as `shown`): a file, or with `-r` a directory's tree.
fn walk(ctx: &mut crate::Ctx, o: &Opts, st: &mut State, shown: &str, path: &str, top: bool) {
    let meta = if top || o.follow { std::fs::metadata(path) } else { std::fs::symlink_metadata(path) };
    let meta = match meta {
        Ok(m) => m,
        Err(e) => {
            if !o.silent {
                fsx::report(ctx, shown_or(shown, path), &e, "fs.read");
            } else {
                fsx::mark_denied(&e, "fs.read", std::path::Path::new(path));
            }
            st.error = true;
            return;
        }
    };
    if meta.file_type().is_symlink() {
        return;
    }
    if meta.is_dir() {
        if !o.recursive {
            if !o.silent {
                ctx.err(format_args!("{}: Is a directory", shown_or(shown, path)));
            }
            st.error = true;
            return;
        }
        let names = match fsx::entries(path, true) {
            Ok(n) => n,
            Err(e) => {
                if !o.silent {
                    fsx::report(ctx, shown_or(shown, path), &e, "fs.read");
                }
                st.error = true;
                return;
            }
        };
        for n in names {
            walk(ctx, o, st, &fsx::join(shown, &n), &fsx::join(path, &n), false);
        }
        return;
    }
    search(ctx, o, st, shown_or(shown, path), path, o.names.unwrap_or(!top));
}

fn shown_or<'a>(shown: &'a str, path: &'a str) -> &'a str {
    if shown.is_empty() { path } else { shown }
}

/// Searches one file (or stdin for `-`).
fn search(ctx: &mut crate::Ctx, o: &Opts, st: &mut State, shown: &str, path: &str, names: bool) {
    let data = match fsx::read_input(path) {
        Ok(d) => d,
        Err(e) => {
            if !o.silent {
                fsx::report(ctx, shown, &e, "fs.read");
            } else {
                fsx::mark_denied(&e, "fs.read", std::path::Path::new(path));
            }
            st.error = true;
            return;
        }
    };
    let binary = data.contains(&0);
    let mut count = 0u64;
    for (i, line) in fsx::lines(&data).into_iter().enumerate() {
        if o.re.is_match(line) == o.invert {
            continue;
        }
        count += 1;
        st.matched = true;
        if o.quiet {
            return;
        }
        if o.list {
            let _ = writeln!(ctx.out, "{shown}");
            return;
        }
        if o.count {
            continue;
        }
        if binary {
            let _ = ctx.out.flush();
            eprintln!("grep: {shown}: binary file matches");
            return;
        }
        if names {
            let _ = write!(ctx.out, "{shown}:");
        }
        if o.number {
            let _ = write!(ctx.out, "{}:", i + 1);
        }
        let _ = ctx.out.write_all(line);
        let _ = ctx.out.write_all(b"\n");
    }
    if o.count && !o.quiet {
        if names {
            let _ = write!(ctx.out, "{shown}:");
        }
        let _ = writeln!(ctx.out, "{count}");
    }
}

/// A POSIX basic (or extended) regular expression in the `regex` crate's syntax.
fn translate(pat: &str, extended: bool) -> String {
    let chars: Vec<char> = pat.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    // Whether the next `*` would be at the start of an expression (literal in a BRE).
    let mut at_start = true;
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        let was_start = at_start;
        at_start = false;
        match c {
            '\\' => {
                i += 1;
                match next {
                    Some(n @ ('(' | ')' | '{' | '}' | '|' | '+' | '?')) if !extended => {
                        out.push(n);
                        at_start = n == '(' || n == '|';
                    }
                    Some('<' | '>') => out.push_str(r"\b"),
                    Some(n @ ('w' | 'W' | 's' | 'S' | 'b' | 'B')) => {
                        out.push('\\');
                        out.push(n);
                    }
                    Some(n) => out.push_str(&regex::escape(&n.to_string())),
                    None => out.push_str(r"\\"),
                }
            }
            '(' | ')' | '{' | '}' | '|' | '+' | '?' if !extended => {
                out.push('\\');
                out.push(c);
            }
            '(' | '|' if extended => {
                out.push(c);
                at_start = true;
            }
            '*' if was_start => out.push_str(r"\*"),
            '^' if !was_start && !extended => out.push_str(r"\^"),
            '$' if !extended && !(next.is_none() || (next == Some('\\') && matches!(chars.get(i + 2), Some(')' | '|')))) => {
                out.push_str(r"\$")
            }
            '[' => {
                i = bracket(&chars, i, &mut out);
                continue;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// Copies a POSIX bracket expression starting at `chars[start] == '['`; returns the index
/// after it. Backslashes and `[`, `&`, `~` inside are literal in POSIX, escaped here.
fn bracket(chars: &[char], start: usize, out: &mut String) -> usize {
    let mut i = start + 1;
    let mut body = String::from("[");
    if chars.get(i) == Some(&'^') {
        body.push('^');
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        body.push_str(r"\]");
        i += 1;
    }
    while let Some(&c) = chars.get(i) {
        match c {
            ']' => {
                body.push(']');
                out.push_str(&body);
                return i + 1;
            }
            '[' if matches!(chars.get(i + 1), Some(':' | '=' | '.')) => {
                let close = chars.get(i + 1).copied().unwrap_or(':');
                let mut j = i + 2;
                while j + 1 < chars.len() && !(chars.get(j) == Some(&close) && chars.get(j + 1) == Some(&']')) {
                    j += 1;
                }
                let inner: String = chars.get(i..(j + 2).min(chars.len())).unwrap_or_default().iter().collect();
                body.push_str(&inner);
                i = j + 2;
                continue;
            }
            '\\' | '[' | '&' | '~' => {
                body.push('\\');
                body.push(c);
            }
            _ => body.push(c),
        }
        i += 1;
    }
    // Unclosed: a literal `[` and the rest as text.
    out.push_str(r"\[");
    let rest: String = chars.get(start + 1..).unwrap_or_default().iter().collect();
    out.push_str(&regex::escape(&rest));
    chars.len()
}
