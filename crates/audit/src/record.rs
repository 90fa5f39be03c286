//! The record types: what the engine hands over ([`Entry`]) and what is on disk ([`Record`]).
//!
//! Field names are pinned: they are the log format. Every field is always written (absent
//! values as `null`, empty lists as `[]`), and reading is strict: an unknown or duplicated
//! field is an error, never silently dropped.

use serde::{Deserialize, Serialize};

/// What a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The policy (or a hook) decided a request.
    Decision,
    /// Someone answered an `ask`.
    Approval,
    /// What happened when the request ran (or why it did not).
    Outcome,
    /// The policy was reloaded.
    Reload,
    /// A session started or ended.
    Session,
}

impl Kind {
    /// The name as written in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Decision => "decision",
            Kind::Approval => "approval",
            Kind::Outcome => "outcome",
            Kind::Reload => "reload",
            Kind::Session => "session",
        }
    }
}

/// One thing to record, as the engine hands it over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// What the record is about.
    pub kind: Kind,
    /// The session the request belongs to.
    pub session: String,
    /// The agent identity, when one was given.
    pub agent: Option<String>,
    /// The agent's parent chain, nearest first.
    pub parents: Vec<String>,
    /// Who sent the request, when it came over the network (`warden serve --mcp --http`);
    /// only written when known, so records without it read and hash as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRec>,
    /// `exec`, `read_file`, ... or an MCP tool name.
    pub tool: String,
    /// The request (secrets already redacted by the engine).
    pub input: Input,
    /// The decision, on decision and approval records.
    pub decision: Option<DecisionRec>,
    /// Who decided.
    pub decided_by: Option<DecidedBy>,
    /// Hex SHA-256 of the loaded policy layers.
    pub policy_hash: String,
    /// What happened, on outcome records.
    pub outcome: Option<OutcomeRec>,
    /// For approval and outcome records: the seq of their decision record.
    pub refers_to: Option<u64>,
    /// Free text (e.g. that a torn tail was dropped before this record).
    pub note: Option<String>,
}

/// The client a request came from over the network, as the server saw the connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientRec {
    /// How it came: `http` (MCP over streamable HTTP).
    pub transport: String,
    /// The client's address and port (`127.0.0.1:50312`, `[::1]:50312`).
    pub addr: String,
    /// The uid owning the client's socket, as the kernel lists it (`/proc/net/tcp`): known
    /// only for a client on this machine (loopback).
    pub uid: Option<u32>,
    /// Whether a bearer token authenticated the request. The token itself is never recorded.
    pub bearer: bool,
}

/// The request as recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The command string, for `exec`.
    pub command: Option<String>,
    /// The parsed argv, when it could be known.
    pub argv: Option<Vec<String>>,
    /// The path argument of a tool call.
    pub path: Option<String>,
    /// The working directory.
    pub cwd: String,
    /// The workspace root.
    pub workspace: String,
    /// The home directory the policy saw.
    pub home: String,
}

/// A decision as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionRec {
    /// `allow`, `ask` or `deny`.
    pub verdict: String,
    /// The tier, when a rule named one.
    pub tier: Option<String>,
    /// Why, in words.
    pub reason: String,
    /// The deciding rules.
    pub rules: Vec<RuleRef>,
}

/// Where a deciding rule is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleRef {
    /// The policy file.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The layer the file belongs to.
    pub layer: String,
}

/// Who decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecidedBy {
    /// `policy`, `approver` or `hook`.
    pub kind: String,
    /// The approver's or hook's name.
    pub name: Option<String>,
}

/// What happened when a request ran (or why it did not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeRec {
    /// Whether the command started.
    pub ran: bool,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<String>,
    /// Whether it was killed at its time limit.
    pub timed_out: bool,
    /// Whether it was cancelled (killed, or never started, at the client's request); only
    /// written when it was, so records without it read and hash as before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
    /// What the sandbox refused.
    pub denials: Vec<DenialRec>,
    /// Why nothing ran, when nothing did.
    pub refused: Option<String>,
}

/// One operation the sandbox refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DenialRec {
    /// `fs.write`, `net.connect`, ...
    pub op: String,
    /// The path or address.
    pub target: String,
    /// Which layer refused (`landlock`, `seccomp`, ...).
    pub source: String,
    /// How warden knows: `observed` (it saw the refusal itself) or `output` (inferred from an
    /// error line the command printed, which the command could have forged). Only written
    /// when known, so records without it read and hash as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// One record as it is on disk: seq (1-based), time (RFC 3339 UTC, microseconds), prev (hex
/// hash of the previous record, 64 zeros for the first), the entry's fields, hash.
///
/// Reading is strict (through a flat private struct): `#[serde(flatten)]` cannot reject unknown fields, so
/// deserializing goes through a flat struct that can.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Wire")]
pub struct Record {
    /// 1-based, no gaps.
    pub seq: u64,
    /// When it was appended (RFC 3339 UTC with microseconds).
    pub time: String,
    /// Hex SHA-256 of the previous record's line.
    pub prev: String,
    /// What was recorded.
    #[serde(flatten)]
    pub entry: Entry,
    /// Hex SHA-256 of this record's line up to (not including) `,"hash":`.
    pub hash: String,
}

/// The flat form a record is read through: every field named, unknown or duplicated ones
/// rejected.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    seq: u64,
    time: String,
    prev: String,
    kind: Kind,
    session: String,
    agent: Option<String>,
    parents: Vec<String>,
    #[serde(default)]
    client: Option<ClientRec>,
    tool: String,
    input: Input,
    decision: Option<DecisionRec>,
    decided_by: Option<DecidedBy>,
    policy_hash: String,
    outcome: Option<OutcomeRec>,
    refers_to: Option<u64>,
    note: Option<String>,
    hash: String,
}

impl TryFrom<Wire> for Record {
    type Error = String;

    fn try_from(w: Wire) -> Result<Record, String> {
        if crate::time::parse_micros(&w.time).is_none() {
            return Err(format!("`time` is not an RFC 3339 time: `{}`", w.time));
        }
        Ok(Record {
            seq: w.seq,
            time: w.time,
            prev: w.prev,
            entry: Entry {
                kind: w.kind,
                session: w.session,
                agent: w.agent,
                parents: w.parents,
                client: w.client,
                tool: w.tool,
                input: w.input,
                decision: w.decision,
                decided_by: w.decided_by,
                policy_hash: w.policy_hash,
                outcome: w.outcome,
                refers_to: w.refers_to,
                note: w.note,
            },
            hash: w.hash,
        })
    }
}

/// What `append` returns: the record's place in the chain. Goes into a run's result as
/// `"audit": {"seq": .., "hash": ".."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// The record's seq.
    pub seq: u64,
    /// The record's hash.
    pub hash: String,
}

/// The body written before the hash: seq, time, prev, then the entry's fields.
#[derive(Serialize)]
pub(crate) struct Body<'a> {
    pub seq: u64,
    pub time: &'a str,
    pub prev: &'a str,
    #[serde(flatten)]
    pub entry: &'a Entry,
}
