//! A tiny random fuzzer for brush-parser itself (program parser and word parser). Prints each
//! input before parsing it, so when the process dies (run it under `ulimit -v`) the last line
//! printed is the culprit. Usage: `brush_fuzz SEED COUNT [guarded]`; with `guarded`, each input
//! goes through `warden_shell::analyse` (guard included) instead of the bare parser.
use std::io::Write;

const TOKENS: &[&str] = &[
    "$(",
    ")",
    "(",
    "<<",
    "<<-",
    "EOF",
    "\n",
    "{",
    "}",
    ";",
    "|",
    "&",
    "'",
    "\"",
    "`",
    "$((",
    "))",
    "${",
    "case",
    " in ",
    "esac",
    "for ",
    " do ",
    "done",
    "if ",
    "then ",
    "fi",
    "a",
    " ",
    "\\",
    "<(",
    ">(",
    "[[",
    "]]",
    "=",
    "!",
    "#",
    "$'",
    "function ",
    "coproc ",
    "<<<",
    ">&",
    "2>",
    "*",
    "?",
    "[",
    "]",
    "@(",
    "+(",
    "!(",
    "*(",
    "?(",
    ";;",
    "x",
    "$",
    "-",
    ":",
    "{a,b}",
    "..",
    "1",
    "0",
    "=(",
    "x=",
    "#",
    "%",
    "/",
    "^",
    ",",
    "@",
    "[@]",
    "${#",
    "${!",
    "}}",
    "~",
    "$\"",
    "-(",
    "&&",
    "||",
    "|&",
    ">",
    "<",
    "<>",
    ">|",
    "&>",
    "<&-",
    "((",
    "$[",
    "+",
    "'\\''",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut seed: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let count: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let guarded = args.get(3).is_some_and(|a| a == "guarded");
    let opts = brush_parser::ParserOptions::default();
    let mut out = std::io::stdout();
    for _ in 0..count {
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let n = 1 + next() % 14;
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(
                TOKENS
                    .get((next() % TOKENS.len() as u64) as usize)
                    .unwrap_or(&""),
            );
        }
        if !guarded && s.matches('(').count() > 12 {
            continue;
        }
        let _ = writeln!(out, "{s:?}");
        let _ = out.flush();
        if guarded {
            let _ = warden_shell::analyse(&s);
            continue;
        }
        let _ = brush_parser::word::parse(&s, &opts);
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(s.as_bytes()), &opts);
        if let Ok(p) = parser.parse_program() {
            let _ = format!("{p:?}");
        }
    }
    let _ = writeln!(out, "DONE");
}
