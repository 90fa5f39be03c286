//! The fast parser against pest: on every policy text in the repository, every broken fixture,
//! a table of tricky cases and seeded mutants of them all, the fast parser gives exactly what
//! pest and the tree builder give for a clean file (`Some` of the same policy, spans and
//! comments included), and `None` wherever they report anything.

mod mutate;

use std::path::{Path, PathBuf};

use warden_policy::ast::Policy;
use warden_policy::differential;

use mutate::{Rng, mutate, pieces};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` (recursively) whose name ends with `suffix`.
fn files_under(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, suffix, out);
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
}

/// Every policy text of the repository: the policies, the `.policy` files of every crate's
/// tests, the fuzz seeds, and the plain code blocks of the docs.
fn corpus() -> Vec<(String, String)> {
    let root = root();
    let mut paths = Vec::new();
    files_under(&root.join("policies"), ".policy", &mut paths);
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        files_under(&entry.unwrap().path().join("tests"), ".policy", &mut paths);
    }
    files_under(&root.join("fuzz/corpus/seeds/policy_parse"), "", &mut paths);
    paths.sort();
    let mut out: Vec<(String, String)> = paths
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            let name = p.strip_prefix(&root).unwrap_or(p).display().to_string();
            Some((name, text))
        })
        .collect();
    let mut docs = Vec::new();
    files_under(&root.join("docs"), ".md", &mut docs);
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        let mut block: Option<String> = None;
        for line in text.lines() {
            match (&mut block, line.starts_with("```")) {
                (None, true) if line.trim() == "```" => block = Some(String::new()),
                (Some(b), true) => {
                    out.push((format!("{} (code block)", doc.display()), std::mem::take(b)));
                    block = None;
                }
                (Some(b), false) => {
                    b.push_str(line);
                    b.push('\n');
                }
                _ => {}
            }
        }
    }
    assert!(out.len() >= 130, "only {} policy texts found", out.len());
    out
}

/// Texts that probe one rule each: blanks, keyword boundaries, reserved words, comments,
/// separators, the byte order mark, escapes and Unicode classes.
const CASES: &[&str] = &[
    "",
    "\u{FEFF}",
    "\u{FEFF}version 1",
    " \t\u{FEFF} version 1\n",
    "version 1\u{FEFF}",
    "version 1;default deny;opaque ask;",
    "version 1 ; ; \n;;\n",
    "version 01\n",
    "version 4294967295\n",
    "version 4294967296\n",
    "version1\n",
    "deny exec/bin/ls",
    "deny exec rm\r\n\r\ndeny exec ls\r",
    "deny\rexec\rrm",
    "deny exec a unless b c\n",
    "deny exec a unless b unless c with (d | e)\n",
    "deny exec a (b c | d) (e) \"f\" unless\n",
    "deny exec unless\n",
    "deny exec \"unless\" x\n",
    "deny exec unlessx withy intoz\n",
    "deny exec a unless-x\n",
    "deny exec a unlessé b\n",
    "deny exec a with٣\n",
    "deny pipe a into b\n",
    "deny pipe a intox into b\n",
    "deny pipe a into into\n",
    "deny pipe (a | b) c unless d into (e | f) g with h\n",
    "deny pipe a \"into\" into b\n",
    "deny pipe a into b into c\n",
    "deny\"r\"exec rm",
    "deny \"a\\\"b\\\\c\\nd\\te\" exec rm",
    "deny \"a\\qb\" exec rm",
    "deny \"abc exec rm",
    "deny \"é\\é\" exec rm",
    "tier a:allow{exec x}",
    "tier a : allow \"r\" { exec x ; exec y\n}\n",
    "tier a: allow { # head\n # two\n exec x # t\n # lead\n exec y\n # end\n} # after\n",
    "tier a: allow { ; # head\n}",
    "tier a: allow {\n# not head\n}",
    "tier a: allow { exec x }\ntier b: deny { fs read \"/x\" }",
    "tier a: allow { exec x # c }",
    "tier a: allow { exec x # c\n}",
    "lock tier a: deny { exec x }\nlock deny exec y\n",
    "lock exec x\n",
    "tiers a\n",
    "tier tier: allow {}\n",
    "tier ñame٣: allow {}\n",
    "tier ǅx: allow {}\n",
    "tier ²x: allow {}\n",
    "tier _a-b.c: allow {}\n",
    "tier -a: allow {}\n",
    "agent a extends b { tiers r, w; limits { timeout 1s } ; default deny; opaque ask }\n",
    "agent a extends { }\n",
    "agent extends extends extends { }\n",
    "agent a { tiers r, }\n",
    "agent a { deny \"x\" exec y\n lock allow tools t }\n",
    "limits {}\n",
    "limits { timeout 1s }\n",
    "limits {\n # a\n timeout 1s # b\n\n # c\n memory 1MiB, files 3; processes 4\n # d\n}\n",
    "limits { timeout 1s, }\n",
    "limits { timeout 1s,, memory 1MB }\n",
    "limits { timeout 1s memory 1MB }\n",
    "limits { timeout }\n",
    "limits { timeout 1x }\n",
    "limits { tiemout 1s }\n",
    "limits { timeout 1s # c",
    "limits { total-time 2h, total-output 3GB, commands 9, filesize 17 }\n",
    "limits { memory 18446744073709551615GiB }\n",
    "limits{timeout 1s}\n",
    "env A, B, \"C\"\nenv \"\"\n",
    "env A,\n",
    "env A\"B\"\n",
    "sandbox native\nsandbox wasi\nsandbox wasi image x\nsandbox wasi image \"y z\"\n",
    "sandbox native image x\n",
    "sandbox wasm\n",
    "sandbox wasi image:x\n",
    "sandbox wasi imagex\n",
    "paths a = b, \"c\", d\n",
    "paths a = except\n",
    "paths a = exceptional, except-x\n",
    "paths a=b\n",
    "deny fs read a except b, \"c\"\n",
    "deny fs read a, except b\n",
    "deny fs write except\n",
    "deny fs readx a\n",
    "deny fs read \"/a\" except except\n",
    "deny net none\ndeny net any\ndeny net hosts \"a\", \"b:1\"\n",
    "deny net hosts a\n",
    "deny net nonex\n",
    "deny tools a, \"b\", unless, into\n",
    "example allow \"git status\"\nexample deny agent a \"x\"\nexample ask tool t \"p\"\nexample ask tool t\n",
    "example ask tool \"t\"\"p\"\n",
    "example ask tool t\"p\"\n",
    "example ask agent tool x\n",
    "example ask agent \"x\"\n",
    "example ask tool\n",
    "# only\n#\n#\r\n# c\r\r\n",
    "# a\r",
    "version 1 # c\r\n",
    "version 1 #",
    "version 1 # \t\r\n",
    "deny exec a é ٣ ² ǅ Ⅻ\n",
    "deny exec a\u{a0}b\n",
    "deny exec a\u{300}\n",
    "deny exec a\u{2028}\n",
    "deny exec a b,c ,d , e\n",
    "deny exec (a|b) (c d|e) unless (f|g)\n",
    "deny exec ( a ) ( b )\n",
    "deny exec ()\n",
    "deny exec (a|)\n",
    "deny exec a |\n",
    "deny exec a)\n",
    "deny exec \"\" \"\\\\\"\n",
    "deny exec a\tb\r\n",
    "allow ask exec x\n",
    "deny\n",
    "}\n",
    "{\n",
];

/// The fast parser and pest agree on `text`: both `None`, or both `Some` of the same policy.
/// Returns whether it parsed.
fn agree(name: &str, text: &str) -> bool {
    let fast = differential::fast("t.policy", text);
    let pest = differential::pest("t.policy", text);
    if fast != pest {
        panic!(
            "{name}: the fast parser and pest disagree\n--- text ---\n{text:?}\n{}",
            difference(fast.as_ref(), pest.as_ref())
        );
    }
    pest.is_some()
}

/// The first line where the two trees differ.
fn difference(fast: Option<&Policy>, pest: Option<&Policy>) -> String {
    let (f, p) = (format!("{fast:#?}"), format!("{pest:#?}"));
    let at = f
        .lines()
        .zip(p.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    let around = |s: &str| {
        s.lines()
            .skip(at.saturating_sub(8))
            .take(12)
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!("--- fast ---\n{}\n--- pest ---\n{}", around(&f), around(&p))
}

#[test]
fn fast_parser_matches_pest_on_every_policy_text() {
    let mut parsed = 0;
    let corpus = corpus();
    for (name, text) in &corpus {
        parsed += usize::from(agree(name, text));
    }
    // Nearly all are clean; the validator's broken fixtures parse too.
    assert!(
        parsed >= 60,
        "only {parsed} of {} texts parsed",
        corpus.len()
    );
    for (i, text) in CASES.iter().enumerate() {
        agree(&format!("case {i}"), text);
    }
}

#[test]
fn fast_parser_gives_up_on_every_broken_fixture_pest_rejects() {
    let dir = root().join("crates/policy/tests/fixtures/broken");
    let mut rejected = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        // Those with a syntax or value error fail in both; the validator's cases parse in both.
        rejected += usize::from(!agree(&path.display().to_string(), &text));
    }
    assert!(
        rejected >= 50,
        "only {rejected} broken fixtures fail to parse"
    );
}

#[test]
fn fast_parser_matches_pest_on_mutants() {
    let mut bases: Vec<String> = CASES.iter().map(|c| c.to_string()).collect();
    for (_, text) in corpus() {
        bases.extend(pieces(&text, 600));
    }
    let mut rng = Rng(0x5EED_F00D);
    let (mut both, mut neither) = (0usize, 0usize);
    for i in 0..20_000 {
        let base = rng.pick(&bases).clone();
        let mut text = mutate(&base, &mut rng);
        for _ in 0..rng.below(3) {
            text = mutate(&text, &mut rng);
        }
        if agree(&format!("mutant {i}"), &text) {
            both += 1;
        } else {
            neither += 1;
        }
    }
    eprintln!("mutants: {both} parsed by both, {neither} by neither");
    assert!(
        both >= 3000 && neither >= 3000,
        "{both} parsed, {neither} did not"
    );
}
