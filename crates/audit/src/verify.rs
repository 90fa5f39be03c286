//! Verifying a log: every line against its own hash, the chain of `prev`, the sequence
//! numbers, strict parsing, and the head checkpoint(s). Also [`read`], which parses whole
//! records without checking the chain.

use crate::line::{self, Lines, ZERO_HASH};
use crate::log::head_path;
use crate::record::{Receipt, Record};
use crate::AuditError;
use serde::Serialize;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

/// Problems listed before verification stops.
const MAX_PROBLEMS: usize = 50;

/// What verification found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyReport {
    /// Whole lines read (records, good or bad).
    pub records: u64,
    /// The last whole record's place in the chain.
    pub head: Option<Receipt>,
    /// The log ends in a partial line (a crash mid-write): not an error, but reported.
    pub torn_tail: bool,
    /// The torn tail's length in bytes.
    pub torn_bytes: u64,
    /// The checkpoints compared against (the `<log>.head` file, and any given).
    pub checkpoints: Vec<Checkpoint>,
    /// What is wrong, first bad record first. Empty: the log verifies.
    pub problems: Vec<Problem>,
    /// What is not wrong but weakens what verification proves.
    pub warnings: Vec<String>,
}

/// A head checkpoint and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checkpoint {
    /// `<log>.head` or `--head`.
    pub source: String,
    /// The seq and hash it names.
    pub head: Receipt,
}

/// One thing wrong with a log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    /// The sequence number of the first record that is not what a valid chain has there
    /// (the record at that position, or the first missing one); none for a problem with a
    /// checkpoint file itself.
    pub seq: Option<u64>,
    /// The 1-based line in the file, when the problem is on a line.
    pub line: Option<u64>,
    /// What is wrong.
    pub what: String,
}

impl VerifyReport {
    /// Whether the log verifies (a torn tail and warnings allowed).
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// The first bad sequence number, if any problem has one.
    pub fn first_bad_seq(&self) -> Option<u64> {
        self.problems.iter().find_map(|p| p.seq)
    }
}

/// Verifies a log, and against its `<log>.head` checkpoint when there is one.
///
/// # Errors
///
/// The log cannot be opened or read (a problem in its contents is a [`Problem`], not an error).
pub fn verify(path: &Path) -> Result<VerifyReport, AuditError> {
    verify_with(path, None)
}

/// [`verify`], also against a checkpoint kept elsewhere (e.g. copied off-host).
///
/// # Errors
///
/// As [`verify`].
pub fn verify_with(path: &Path, checkpoint: Option<&Receipt>) -> Result<VerifyReport, AuditError> {
    let file = File::open(path).map_err(|e| AuditError::io("open", path, e))?;
    let mut report = VerifyReport {
        records: 0,
        head: None,
        torn_tail: false,
        torn_bytes: 0,
        checkpoints: Vec::new(),
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    let head_file = head_path(path);
    match read_checkpoint(&head_file) {
        Ok(Some(head)) => report.checkpoints.push(Checkpoint { source: head_file.display().to_string(), head }),
        Ok(None) => {}
        Err(what) => report.problems.push(Problem { seq: None, line: None, what }),
    }
    if let Some(head) = checkpoint {
        report.checkpoints.push(Checkpoint { source: String::from("--head"), head: head.clone() });
    }
    let at_checkpoints = walk(path, file, &mut report)?;
    if report.checkpoints.is_empty() && report.records > 0 && report.problems.is_empty() {
        report.warnings.push(format!(
            "no head checkpoint (`{}` is missing): a tail cut at a record boundary cannot be detected",
            head_file.display()
        ));
    }
    if report.torn_tail {
        report.warnings.push(format!(
            "the log ends in a torn line of {} bytes (a crash mid-write); everything before it verifies",
            report.torn_bytes
        ));
    }
    compare_checkpoints(&mut report, &at_checkpoints);
    past_head(&mut report, &head_file.display().to_string());
    Ok(report)
}

/// A log that runs more than one record past its own `<log>.head`: warden moves that
/// checkpoint with every record it writes (a crash leaves it one behind), so the records past
/// it were not written by warden. (A `--head` kept elsewhere is older by nature: records after
/// it are expected.)
fn past_head(report: &mut VerifyReport, head_file: &str) {
    let Some(cp) = report.checkpoints.iter().find(|c| c.source == head_file) else { return };
    let last = report.head.as_ref().map_or(0, |h| h.seq);
    if last > cp.head.seq + 1 {
        report.warnings.push(format!(
            "records {}..={last} come after the head checkpoint `{head_file}` (record {}), which warden moves with every \
             record it writes: writers killed before their checkpoint, or records appended by something other than warden",
            cp.head.seq + 1,
            cp.head.seq
        ));
    }
}

/// Walks the lines; returns the hashes found at the checkpoints' seqs.
fn walk(path: &Path, file: File, report: &mut VerifyReport) -> Result<Vec<Option<String>>, AuditError> {
    let mut at_checkpoints: Vec<Option<String>> = vec![None; report.checkpoints.len()];
    let mut lines = Lines::new(BufReader::with_capacity(1 << 16, file));
    let mut expected = 1u64;
    let mut prev = ZERO_HASH.to_owned();
    loop {
        let line_no = lines.next_line;
        let piece = match lines.next_piece().map_err(|e| AuditError::io("read", path, e))? {
            Ok(Some(piece)) => piece,
            Ok(None) => break,
            Err(line) => {
                report.problems.push(Problem {
                    seq: Some(expected),
                    line: Some(line),
                    what: format!("line {line} is longer than {} bytes", line::MAX_LINE),
                });
                break;
            }
        };
        if !piece.complete {
            report.torn_tail = true;
            report.torn_bytes = piece.bytes.len() as u64;
            break;
        }
        report.records += 1;
        let (found, hash, what) = check_line(&piece.bytes, expected, &prev);
        if let Some(what) = what {
            report.problems.push(Problem { seq: Some(expected), line: Some(line_no), what });
            if report.problems.len() >= MAX_PROBLEMS {
                report.warnings.push(format!("stopped after {MAX_PROBLEMS} problems"));
                break;
            }
        } else {
            // A writer's note that records before it had no checkpoint (`Log::check_head`).
            if let Some(note) = uncovered_note(&piece.bytes) {
                report.warnings.push(format!("record {expected} notes: {note}"));
            }
            report.head = Some(Receipt { seq: expected, hash: hash.clone() });
            for (cp, at) in report.checkpoints.iter().zip(at_checkpoints.iter_mut()) {
                if cp.head.seq == expected {
                    *at = Some(hash.clone());
                }
            }
        }
        // Resynchronise on what this line says, so one change is reported once.
        expected = found.unwrap_or(expected).saturating_add(1);
        prev = hash;
    }
    Ok(at_checkpoints)
}

/// The part of a record's note saying records before it had no head checkpoint, if any.
fn uncovered_note(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    if !text.contains(crate::log::UNCOVERED) {
        return None;
    }
    let record: Record = serde_json::from_slice(bytes).ok()?;
    let note = record.entry.note?;
    note.split("; ").find(|n| n.starts_with(crate::log::UNCOVERED)).map(str::to_string)
}

/// Checks one line: the seq it states (if it parses), its hash (stated, or computed when it
/// states none), and the first thing wrong with it.
fn check_line(bytes: &[u8], expected: u64, prev: &str) -> (Option<u64>, String, Option<String>) {
    let stated = match line::check(bytes) {
        Ok(hash) => hash,
        Err(what) => {
            // A changed line takes its position: its own seq field is not to be trusted.
            let hash = line::stated_hash(bytes).unwrap_or_else(|_| line::sha256_hex(bytes));
            return (None, hash, Some(format!("record {expected}: {what}")));
        }
    };
    let record: Record = match serde_json::from_slice(bytes) {
        Ok(record) => record,
        Err(e) => return (None, stated, Some(format!("record {expected} does not parse: {e}"))),
    };
    let what = if record.seq < expected {
        Some(format!("record {} appears again where record {expected} belongs (duplicated or moved)", record.seq))
    } else if record.seq > expected {
        let missing = if record.seq == expected + 1 {
            format!("record {expected} is missing")
        } else {
            format!("records {expected}..={} are missing", record.seq - 1)
        };
        Some(format!("{missing} (removed or moved): found record {} in its place", record.seq))
    } else if record.prev != prev {
        Some(format!(
            "record {expected} does not follow the one before it: its prev is `{}`, the previous record's hash is `{prev}`",
            record.prev
        ))
    } else {
        None
    };
    (Some(record.seq), stated, what)
}

fn compare_checkpoints(report: &mut VerifyReport, at_checkpoints: &[Option<String>]) {
    let last = report.head.as_ref().map_or(0, |h| h.seq);
    for (cp, at) in report.checkpoints.iter().zip(at_checkpoints) {
        let what = if cp.head.seq > last {
            let missing = if cp.head.seq == last + 1 {
                format!("record {} is missing", cp.head.seq)
            } else {
                format!("records {}..={} are missing", last + 1, cp.head.seq)
            };
            Some((last + 1, format!("{missing}: the checkpoint `{}` names seq {}, the log ends at {last}", cp.source, cp.head.seq)))
        } else if at.as_deref() != Some(cp.head.hash.as_str()) {
            Some((
                cp.head.seq,
                format!(
                    "record {} is not the one the checkpoint `{}` names: its hash is `{}`, the checkpoint's `{}`",
                    cp.head.seq,
                    cp.source,
                    at.as_deref().unwrap_or("(not verified)"),
                    cp.head.hash
                ),
            ))
        } else {
            None
        };
        if let Some((seq, what)) = what {
            report.problems.push(Problem { seq: Some(seq), line: None, what });
        }
    }
    report.problems.sort_by_key(|p| p.seq.unwrap_or(0));
}

/// Reads a `<log>.head` checkpoint: `None` if there is none, `Err` (what is wrong) if it does
/// not parse.
pub(crate) fn read_checkpoint(path: &Path) -> Result<Option<Receipt>, String> {
    let Some(text) = read_settled(path).map_err(|e| format!("cannot read the head checkpoint `{}`: {e}", path.display()))? else {
        return Ok(None);
    };
    let head: Receipt = serde_json::from_slice(&text)
        .map_err(|e| format!("the head checkpoint `{}` does not parse: {e}", path.display()))?;
    if !line::is_hash(&head.hash) {
        return Err(format!("the head checkpoint `{}` names no valid hash", path.display()));
    }
    Ok(Some(head))
}

/// The head file's bytes once two reads in a row agree (at most five reads): a writer
/// overwrites it in place, and a read racing that write could see part of each. `None` when
/// there is no head file.
fn read_settled(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let read = || match std::fs::read(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    };
    let mut last = read()?;
    for _ in 0..4 {
        let again = read()?;
        if again == last {
            break;
        }
        last = again;
    }
    Ok(last)
}

/// Parses a checkpoint given as `SEQ:HASH`.
///
/// # Errors
///
/// What is wrong with it, in words.
pub fn parse_checkpoint(text: &str) -> Result<Receipt, String> {
    let (seq, hash) = text.split_once(':').ok_or_else(|| format!("`{text}` is not SEQ:HASH"))?;
    let seq = seq.parse::<u64>().ok().filter(|s| *s > 0).ok_or_else(|| format!("`{seq}` is not a sequence number"))?;
    if !line::is_hash(hash) {
        return Err(format!("`{hash}` is not 64 lowercase hex digits"));
    }
    Ok(Receipt { seq, hash: hash.to_owned() })
}

/// Reads every whole record (a torn tail is left out), parsing strictly. Does not check the
/// chain: run [`verify`] for that.
///
/// # Errors
///
/// The file cannot be read, a line is longer than 1 MiB, or a line is not a record.
pub fn read(path: &Path) -> Result<Vec<Record>, AuditError> {
    let file = File::open(path).map_err(|e| AuditError::io("open", path, e))?;
    let mut lines = Lines::new(BufReader::with_capacity(1 << 16, file));
    let mut records = Vec::new();
    loop {
        let line_no = lines.next_line;
        match lines.next_piece().map_err(|e| AuditError::io("read", path, e))? {
            Ok(Some(piece)) if piece.complete => {
                let record = serde_json::from_slice(&piece.bytes).map_err(|e| AuditError::Malformed {
                    path: path.display().to_string(),
                    line: line_no,
                    message: e.to_string(),
                })?;
                records.push(record);
            }
            Ok(_) => return Ok(records),
            Err(line) => return Err(AuditError::LineTooLong { path: path.display().to_string(), line }),
        }
    }
}
