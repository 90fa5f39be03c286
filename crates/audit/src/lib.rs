//! The audit log: a hash-chained, append-only JSON-lines record of every decision, approval
//! and outcome, and the tools that read it (verify, query, stats, OCSF export).
//!
//! What it does: [`Log::append`] writes one [`Record`] per line (seq, UTC time, prev, the
//! [`Entry`] fields, hash), durable (fsync) before it returns, safe for several processes
//! appending to one file; [`verify`] finds and locates any changed, removed, inserted,
//! duplicated or reordered record, and a tail cut short of the `<log>.head` checkpoint.
//!
//! What it does not: it knows nothing of the policy language (its types are its own), it
//! redacts nothing (the engine hands over redacted input), and it cannot stop someone who can
//! rewrite both the whole file and its head checkpoint: keep a copy of the head elsewhere
//! (`warden audit verify --head SEQ:HASH`). See README.md.
#![forbid(unsafe_code)]

mod line;
mod log;
mod ocsf;
mod query;
mod record;
mod stats;
mod time;
mod verify;

pub use line::{MAX_LINE, ZERO_HASH, sha256_hex};
pub use log::{Log, default_path, head_path};
pub use ocsf::export_ocsf;
pub use query::{ClientFilter, Filter, RuleFilter, parse_time, query};
pub use record::{ClientRec, DecidedBy, DecisionRec, DenialRec, Entry, Input, Kind, OutcomeRec, Receipt, Record, RuleRef};
pub use stats::{Counts, NO_AGENT, Stats, Timing, stats};
pub use time::{format_micros, parse_micros};
pub use verify::{Checkpoint, Problem, VerifyReport, parse_checkpoint, read, verify, verify_with};

use std::path::Path;

/// Why the log could not be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// An I/O error on a named path.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        /// open, read, write, sync, ...
        action: &'static str,
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is over the 1 MiB bound.
    #[error("`{path}` line {line}: longer than 1 MiB; not an audit record")]
    LineTooLong {
        /// The log.
        path: String,
        /// 1-based line.
        line: u64,
    },
    /// A line is not a record.
    #[error("`{path}` line {line}: not an audit record: {message}")]
    Malformed {
        /// The log.
        path: String,
        /// 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// The log cannot be appended to as it is.
    #[error("{message}")]
    Damaged {
        /// What is wrong.
        message: String,
    },
    /// A record would be longer than 1 MiB.
    #[error("a record of {bytes} bytes is over the 1 MiB bound")]
    RecordTooLong {
        /// Its length.
        bytes: usize,
    },
    /// A record could not be serialized.
    #[error("cannot serialize a record: {0}")]
    Encode(serde_json::Error),
}

impl AuditError {
    fn io(action: &'static str, path: &Path, source: std::io::Error) -> AuditError {
        AuditError::Io { action, path: path.display().to_string(), source }
    }
}
