//! The mutation test: a real log of a few hundred records, then many changes to it (a byte
//! flipped in each kind of field, records deleted, duplicated, swapped, forged, the tail cut):
//! `verify` must fail each one and name the right first bad sequence number. Seeded, bounded.


use crate::common::{Rng, approval, decision, outcome, tempdir};
use std::path::{Path, PathBuf};
use warden_audit::{Log, Receipt, head_path, sha256_hex, verify, verify_with};

const RECORDS: usize = 300;
const FIELDS: [&str; 16] = [
    "seq", "time", "prev", "kind", "session", "agent", "parents", "tool", "input", "decision", "decided_by",
    "policy_hash", "outcome", "refers_to", "note", "hash",
];

/// Builds the log once: decisions, approvals and outcomes, some with notes.
fn build(dir: &Path) -> (Vec<Vec<u8>>, Vec<u8>) {
    let path = dir.join("audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    let mut rng = Rng(7);
    let mut n = 0;
    while n < RECORDS {
        let verdict = ["allow", "ask", "deny"][rng.below(3) as usize];
        let mut d = decision("s1", Some(["bob", "eve"][rng.below(2) as usize]), &format!("make t{}", rng.below(50)), verdict, None);
        if n % 7 == 0 {
            d.note = Some(format!("note {n}"));
        }
        let r = log.append(&d).unwrap();
        n += 1;
        if verdict == "ask" {
            log.append(&approval(&d, r.seq, rng.below(2) == 0, "alice")).unwrap();
            n += 1;
        }
        log.append(&outcome(&d, r.seq, (rng.below(3) == 0).into(), rng.below(900) as f64, rng.below(2) as usize)).unwrap();
        n += 1;
    }
    let text = std::fs::read(&path).unwrap();
    let lines = text.split_inclusive(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    (lines, std::fs::read(head_path(&path)).unwrap())
}

struct Case {
    dir: PathBuf,
    head: Vec<u8>,
    n: usize,
}

impl Case {
    /// Writes the mutated lines beside the original head checkpoint, verifies, and checks
    /// that verification fails at `seq`.
    fn expect(&mut self, what: &str, lines: &[Vec<u8>], seq: u64) {
        self.n += 1;
        let path = self.dir.join(format!("m{}.jsonl", self.n));
        std::fs::write(&path, lines.concat()).unwrap();
        std::fs::write(head_path(&path), &self.head).unwrap();
        let report = verify(&path).unwrap();
        assert!(!report.ok(), "{what}: verify passed");
        assert_eq!(report.first_bad_seq(), Some(seq), "{what}: {:#?}", report.problems);
        std::fs::remove_file(&path).unwrap();
    }
}

/// The byte range of a member's value in a line (up to the next member at the same depth).
fn value_range(line: &[u8], field: &str) -> std::ops::Range<usize> {
    let key = format!("\"{field}\":");
    let at = line.windows(key.len()).position(|w| w == key.as_bytes()).unwrap() + key.len();
    let mut depth = 0i32;
    let mut in_string = false;
    for (i, &b) in line[at..].iter().enumerate() {
        match b {
            b'"' if line[at + i - 1] != b'\\' => in_string = !in_string,
            b'{' | b'[' if !in_string => depth += 1,
            b'}' | b']' if !in_string && depth == 0 => return at..at + i,
            b'}' | b']' if !in_string => depth -= 1,
            b',' if !in_string && depth == 0 => return at..at + i,
            _ => {}
        }
    }
    unreachable!("no end for {field}")
}

fn flip(byte: u8) -> u8 {
    match byte {
        b'0'..=b'8' | b'a'..=b'y' | b'A'..=b'Y' => byte + 1,
        b'9' => b'0',
        b'z' | b'Z' => byte - 1,
        other => other ^ 1,
    }
}

/// A line rewritten by `edit`, with its own hash recomputed (a forger's move).
fn forge(line: &[u8], edit: impl Fn(&str) -> String) -> Vec<u8> {
    let text = std::str::from_utf8(line).unwrap().trim_end_matches('\n');
    let body = edit(&text[..text.len() - 75]);
    format!("{body},\"hash\":\"{}\"}}\n", sha256_hex(body.as_bytes())).into_bytes()
}

#[test]
fn verify_finds_and_locates_every_mutation() {
    let dir = tempdir("mutation");
    let (lines, head) = build(&dir);
    let n = lines.len();
    assert!(n >= RECORDS);
    let mut case = Case { dir: dir.clone(), head, n: 0 };
    let mut rng = Rng(42);
    let pick = |rng: &mut Rng| rng.below(n as u64) as usize;

    // A byte flipped in each kind of field, in several records each.
    for field in FIELDS {
        let mut done = 0;
        for _ in 0..200 {
            let k = pick(&mut rng);
            let range = value_range(&lines[k], field);
            if &lines[k][range.clone()] == b"null" {
                continue;
            }
            let at = range.start + rng.below(range.len().min(8) as u64) as usize;
            let mut m = lines.clone();
            m[k][at] = flip(m[k][at]);
            case.expect(&format!("flip {field} of record {}", k + 1), &m, k as u64 + 1);
            done += 1;
            if done == 6 {
                break;
            }
        }
        assert_eq!(done, 6, "too few records with a {field}");
    }
    for _ in 0..15 {
        let k = pick(&mut rng);
        // Deleted.
        let mut m = lines.clone();
        m.remove(k);
        case.expect(&format!("delete {}", k + 1), &m, k as u64 + 1);
        // Duplicated (the copy follows the original).
        let mut m = lines.clone();
        m.insert(k + 1, lines[k].clone());
        case.expect(&format!("duplicate {}", k + 1), &m, k as u64 + 2);
        // Two adjacent ones swapped.
        let k = k.min(n - 2);
        let mut m = lines.clone();
        m.swap(k, k + 1);
        case.expect(&format!("swap {} and {}", k + 1, k + 2), &m, k as u64 + 1);
        // Two distant ones swapped.
        let (a, b) = (rng.below(n as u64 / 2) as usize, n / 2 + pick(&mut rng) / 2);
        let mut m = lines.clone();
        m.swap(a, b);
        case.expect(&format!("swap {} and {}", a + 1, b + 1), &m, a as u64 + 1);
        // A forged record with a recomputed hash but a wrong prev, inserted before record k.
        let k = pick(&mut rng);
        let mut m = lines.clone();
        let wrong = sha256_hex(format!("wrong {k}").as_bytes());
        let forged = forge(&lines[k], |body| {
            let r = value_range(body.as_bytes(), "prev");
            format!("{}\"{wrong}\"{}", &body[..r.start], &body[r.end..])
        });
        m.insert(k, forged);
        case.expect(&format!("forged insert before {}", k + 1), &m, k as u64 + 1);
        // An unknown or a duplicated field, with the record's hash recomputed.
        let k = pick(&mut rng);
        let mut m = lines.clone();
        m[k] = forge(&lines[k], |body| body.replacen("\"tool\":", "\"extra\":1,\"tool\":", 1));
        case.expect(&format!("unknown field in {}", k + 1), &m, k as u64 + 1);
        let mut m = lines.clone();
        m[k] = forge(&lines[k], |body| body.replacen("\"tool\":\"exec\"", "\"tool\":\"exec\",\"tool\":\"read_file\"", 1));
        case.expect(&format!("duplicate field in {}", k + 1), &m, k as u64 + 1);
    }
    // The tail cut at a record boundary (only the head checkpoint can see this).
    for cut in [1, 2, 17] {
        case.expect(&format!("cut {cut}"), &lines[..n - cut], (n - cut) as u64 + 1);
    }
    // The last record rewritten with a recomputed hash: only the checkpoint can see this too.
    let mut m = lines.clone();
    m[n - 1] = forge(&lines[n - 1], |body| body.replacen("make t", "make evil", 1));
    case.expect("rewrite the last record", &m, n as u64);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_checkpoint_kept_elsewhere_catches_a_rewritten_head_file() {
    let dir = tempdir("offhost");
    let (lines, head) = build(&dir);
    let head: Receipt = serde_json::from_slice(&head).unwrap();
    let path = dir.join("cut.jsonl");
    let n = lines.len();
    std::fs::write(&path, lines[..n - 3].concat()).unwrap();
    // An attacker who rewrites the local head to match the cut log passes the local check...
    let last: serde_json::Value = serde_json::from_slice(&lines[n - 4]).unwrap();
    let forged = Receipt { seq: n as u64 - 3, hash: last["hash"].as_str().unwrap().to_owned() };
    std::fs::write(head_path(&path), serde_json::to_vec(&forged).unwrap()).unwrap();
    assert!(verify(&path).unwrap().ok());
    // ...but not the copy kept off-host.
    let report = verify_with(&path, Some(&head)).unwrap();
    assert_eq!(report.first_bad_seq(), Some(n as u64 - 2), "{:#?}", report.problems);
    assert!(report.problems[0].what.contains("are missing"), "{:#?}", report.problems);
    let _ = std::fs::remove_dir_all(dir);
}
