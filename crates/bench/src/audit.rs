//! `warden-bench audit`: how many records per second the audit log takes with fsync on.
//!
//! Rows: one writer appending (`Log::append`: flock, tail check, one write, `fdatasync`, head
//! checkpoint by rename) beside the floor of the same line written and `fdatasync`ed to a plain
//! file (no lock, no chain, no checkpoint); two writers contending for one log; and `verify`
//! over the log written. The two writers are two `Log`s, each its own open file description, so
//! they take turns on the `flock` exactly as two warden processes do. The outcome column is
//! records per second (for the contending row: both writers together).

use crate::Options;
use crate::stats::{Cell, Report, Row, Summary, measure, summarise};
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};
use warden_audit::{DecidedBy, DecisionRec, Entry, Input, Kind, Log, RuleRef};

/// Runs the audit benchmarks in a fresh folder under the temp dir.
///
/// # Errors
///
/// The folder or a log cannot be created, or an append fails.
pub fn run(opts: &Options) -> Result<Report, String> {
    let budget = if opts.quick { Duration::from_millis(300) } else { Duration::from_secs(3) };
    let dir = std::env::temp_dir().join(format!("warden-bench-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    let result = rows(&dir, budget);
    let _ = std::fs::remove_dir_all(&dir);
    let (rows, mut notes) = result?;
    notes.insert(0, format!("logs under {} (fsync cost depends on that file system)", dir.display()));
    Ok(Report { bench: "audit", ours: "warden-audit", peer: "write+fdatasync", notes, rows })
}

fn rows(dir: &Path, budget: Duration) -> Result<(Vec<Row>, Vec<String>), String> {
    let entry = entry();
    let path = dir.join("one.jsonl");
    let open = |p: &Path| Log::open(p).map_err(|e| e.to_string());
    let mut log = open(&path)?;
    let one_entry = entry.clone();
    let one = sustained(budget, vec![move || log.append(&one_entry).map(|_| ()).map_err(|e| e.to_string())])?;
    let text = std::fs::read(&path).map_err(|e| e.to_string())?;
    let line_len = text.iter().position(|b| *b == b'\n').map_or(text.len(), |i| i + 1);
    let line = text.get(..line_len).unwrap_or_default().to_vec();
    let floor_path = dir.join("floor.jsonl");
    let mut f = std::fs::OpenOptions::new().append(true).create(true).open(&floor_path).map_err(|e| e.to_string())?;
    let floor = sustained(budget, vec![move || f.write_all(&line).and_then(|()| f.sync_data()).map_err(|e| e.to_string())])?;
    let mut rows = vec![Row {
        group: "append".into(),
        case: format!("one writer, fsync, {line_len}-byte record"),
        rules: None,
        ours: rate_cell(one),
        peer: rate_cell(floor),
        impls: None,
    }];
    let two_path = dir.join("two.jsonl");
    let writers = (0..2)
        .map(|_| {
            let mut log = open(&two_path)?;
            let entry = entry.clone();
            Ok(move || log.append(&entry).map(|_| ()).map_err(|e| e.to_string()))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let two = sustained(budget, writers)?;
    let report = warden_audit::verify(&two_path).map_err(|e| e.to_string())?;
    if !report.ok() || report.records != two.0.samples as u64 {
        return Err(format!("two writers left a log that does not verify: {:?}", report.problems));
    }
    rows.push(Row { group: "append".into(), case: "two writers on one log, fsync".into(), rules: None, ours: rate_cell(two), peer: Cell::None, impls: None });
    let records = warden_audit::verify(&path).map_err(|e| e.to_string())?.records;
    let verify = measure(budget, || warden_audit::verify(&path).map(|r| r.records).unwrap_or(0));
    rows.push(Row {
        group: "verify".into(),
        case: format!("{records} records"),
        rules: None,
        ours: Cell::Measured { summary: verify, outcome: Some(format!("{:.0} rec/s", 1e9 / verify.p50_ns.max(1) as f64 * records as f64)) },
        peer: Cell::None,
        impls: None,
    });
    let notes = vec![String::from("rec/s: records appended by all writers / wall time (sustained, includes the slow tail); p50/p99: one append")];
    Ok((rows, notes))
}

fn rate_cell((summary, rate): (Summary, f64)) -> Cell {
    Cell::Measured { summary, outcome: Some(format!("{rate:.0} rec/s")) }
}

/// Runs each writer in its own thread for `budget` (at least 5 calls each): every call timed,
/// and calls per second for all writers together.
fn sustained<W>(budget: Duration, writers: Vec<W>) -> Result<(Summary, f64), String>
where
    W: FnMut() -> Result<(), String> + Send,
{
    let start = Instant::now();
    let results: Vec<Result<Vec<u64>, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = writers
            .into_iter()
            .map(|mut write| {
                scope.spawn(move || {
                    let mut samples = Vec::new();
                    while start.elapsed() < budget || samples.len() < 5 {
                        let t = Instant::now();
                        write()?;
                        samples.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
                    }
                    Ok(samples)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(String::from("a writer panicked")))).collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let mut samples = Vec::new();
    for r in results {
        samples.extend(r?);
    }
    let rate = samples.len() as f64 / elapsed;
    Ok((summarise(&mut samples, 1), rate))
}

/// A typical decision record.
fn entry() -> Entry {
    Entry {
        kind: Kind::Decision,
        session: String::from("bench-session-0001"),
        agent: Some(String::from("claude-code/worker-1")),
        parents: vec![String::from("claude-code")],
        client: None,
        tool: String::from("exec"),
        input: Input {
            command: Some(String::from("cargo test --workspace -- --nocapture")),
            argv: Some(["cargo", "test", "--workspace", "--", "--nocapture"].map(String::from).to_vec()),
            path: None,
            cwd: String::from("/home/dev/project"),
            workspace: String::from("/home/dev/project"),
            home: String::from("/home/dev"),
        },
        decision: Some(DecisionRec {
            verdict: String::from("allow"),
            tier: Some(String::from("build")),
            reason: String::from("cargo test is allowed in the workspace"),
            rules: vec![RuleRef { file: String::from("policies/default.policy"), line: 42, column: 5, layer: String::from("builtin") }],
        }),
        decided_by: Some(DecidedBy { kind: String::from("policy"), name: None }),
        policy_hash: warden_audit::sha256_hex(b"policy"),
        outcome: None,
        refers_to: None,
        note: None,
    }
}
