//! Seeded random edits of policy texts, for the differential test.

/// SplitMix64: a fixed sequence, so that a failure reproduces.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    pub(super) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const CHARS: &[char] = &[
    ' ', '\t', '\r', '\n', ';', ',', '#', '"', '\\', '(', ')', '|', '{', '}', ':', '=', '-', '.',
    '_', '/', '*', '+', '?', '@', '^', '~', '%', '!', '$', '\'', '`', '[', 'a', 'x', 'Z', '0', '9',
    'é', 'ß', '٣', '²', 'ǅ', 'Ⅻ', '\u{FEFF}', '\u{a0}', '\u{300}', '\u{2028}', '😀', '\0',
];

const SNIPPETS: &[&str] = &[
    "into",
    "unless",
    "with",
    "except",
    "lock",
    "tier",
    "tiers",
    "allow",
    "ask",
    "deny",
    "exec",
    "pipe",
    "fs",
    "net",
    "tools",
    "read",
    "write",
    "paths",
    "limits",
    "env",
    "sandbox",
    "image",
    "extends",
    "agent",
    "example",
    "tool",
    "hosts",
    "none",
    "any",
    "version",
    "default",
    "opaque",
    "wasi",
    "native",
    "timeout 1s",
    "memory 1MiB",
    "files 10",
    "total-time 5x",
    "# c",
    "#",
    "\"s\"",
    "\"a\\qb\"",
    "\"\\\"\"",
    "\"\\\\\"",
    "\"x",
    "{",
    "}",
    "(",
    "|",
    ")",
    "( a | b )",
    "(a b|c)",
    "unless -f",
    "with (-a | -b)",
    "into sh",
    "except x",
    "intox",
    "withé",
    "unless٣",
    "\r\n",
    "\u{FEFF}",
    "lock deny exec rm\n",
    "tier t: ask {\n exec x\n}\n",
    "99999999999",
    "é",
    "ǅ",
];

/// Characters that continue a word, for the token mutations.
fn wordish(c: char) -> bool {
    c.is_alphanumeric() || "_./+@%:=^~-*?".contains(c)
}

/// `text` with one random edit.
pub(super) fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let len = chars.len();
    let at = rng.below(len + 1);
    match rng.below(14) {
        0 if at < len => {
            chars.remove(at);
        }
        1 => chars.insert(at, *rng.pick(CHARS)),
        2 if at < len => chars.insert(at, chars[at]),
        3 => {
            let snippet = *rng.pick(SNIPPETS);
            let (before, after) = [("", ""), (" ", " "), (" ", ""), ("", " ")][rng.below(4)];
            let insert: Vec<char> = format!("{before}{snippet}{after}").chars().collect();
            chars.splice(at..at, insert);
        }
        n @ 4..=6 if at < len && wordish(chars[at]) => {
            let start = (0..at)
                .rev()
                .take_while(|&i| wordish(chars[i]))
                .last()
                .unwrap_or(at);
            let end = (at..len)
                .take_while(|&i| wordish(chars[i]))
                .last()
                .map_or(at, |i| i + 1);
            let token: Vec<char> = chars[start..end].to_vec();
            match n {
                4 => {
                    chars.drain(start..end);
                }
                5 => {
                    let mut twice = token.clone();
                    twice.insert(0, ' ');
                    chars.splice(end..end, twice);
                }
                _ => {
                    let snippet: Vec<char> = rng.pick(SNIPPETS).chars().collect();
                    chars.splice(start..end, snippet);
                }
            }
        }
        n @ 7..=9 => {
            let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
            let i = rng.below(lines.len());
            let j = rng.below(lines.len());
            match n {
                7 => lines.swap(i, j),
                8 => {
                    lines.remove(i);
                }
                _ => lines.insert(i, lines[j].clone()),
            }
            return lines.join("\n");
        }
        10 => {
            return match rng.below(4) {
                0 => text.replace('\n', "\r\n"),
                1 => text.replacen('\n', ";", 1 + rng.below(3)),
                2 => text.replace(';', "\n"),
                _ => format!("\u{FEFF}{text}"),
            };
        }
        11 => chars.truncate(at),
        12 => {
            // A blank before or after something.
            let blank = *rng.pick(&[' ', '\t', '\r']);
            chars.insert(at, blank);
        }
        _ => {
            // A comment from here to the end of the line.
            chars.insert(at, '#');
        }
    }
    chars.into_iter().collect()
}

/// Pieces of a text cut at blank lines, each at most `max` bytes (small ones keep pest, which
/// is slow without optimisation, to a few seconds for the whole test).
pub(super) fn pieces(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for block in text.split("\n\n") {
        if !current.is_empty() && current.len() + block.len() + 2 > max {
            out.push(std::mem::take(&mut current));
        }
        if block.len() <= max {
            current.push_str(block);
            current.push_str("\n\n");
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}
