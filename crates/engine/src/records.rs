//! What the session writes to the audit log, and how it keeps the log out of reach: record
//! fields from decisions, the policy hash, the log's opening checks, the paths no sandbox shows.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use warden_audit::{DecisionRec, Log, RuleRef};
use warden_policy::{Decision, LayerSource};

use crate::SessionError;

/// The hex SHA-256 of the layers: kind, file names and texts, in order.
pub fn policy_hash(layers: &[LayerSource]) -> String {
    let mut h = Sha256::new();
    for layer in layers {
        h.update(format!("layer {:?}\n", layer.kind).as_bytes());
        for file in &layer.files {
            h.update(format!("file {} {}\n", file.name, file.text.len()).as_bytes());
            h.update(file.text.as_bytes());
        }
    }
    hex(&h.finalize())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn decision_rec(d: &Decision) -> DecisionRec {
    DecisionRec {
        verdict: d.verdict.as_str().into(),
        tier: d.tier().map(str::to_string),
        reason: d.reason().to_string(),
        rules: d
            .rules()
            .iter()
            .map(|r| RuleRef { file: r.file.to_string(), line: r.line, column: r.column, layer: format!("{:?}", r.layer).to_lowercase() })
            .collect(),
    }
}

/// Opens the log, refusing one with more than one name.
pub(crate) fn open_log(path: &Path) -> Result<Log, SessionError> {
    let log = Log::open(path).map_err(|e| SessionError::Audit(e.to_string()))?;
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).map_err(|e| SessionError::Audit(format!("{}: {e}", path.display())))?;
    if meta.nlink() != 1 {
        return Err(SessionError::Audit(format!(
            "{} has {} hard links; a sandboxed command could write it through another name, so warden refuses to use it",
            path.display(),
            meta.nlink()
        )));
    }
    Ok(log)
}

/// warden's own cache folder (`CACHE_HOME/warden`: the record of passed examples, the
/// compiled WASI modules warden loads as machine code), and where it leads when it is there.
pub(crate) fn own_cache(cache_home: &Path) -> (PathBuf, Option<PathBuf>) {
    let dir = cache_home.join("warden");
    let real = std::fs::canonicalize(&dir).ok();
    (dir, real)
}

/// [`own_cache`], made first (0700) when missing, for a run: a sandbox can hide only what is
/// there (a mount needs it), and a command must not be able to make it.
pub(crate) fn own_cache_made(cache_home: &Path) -> (PathBuf, Option<PathBuf>) {
    use std::os::unix::fs::DirBuilderExt as _;
    let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(cache_home.join("warden"));
    own_cache(cache_home)
}

/// What a sandbox must never show: the log and its head checkpoint, and their folder too
/// unless the folder holds the workspace (a log kept inside a project hides only its files).
pub(crate) fn protected(log: &Path, ctx: &warden_policy::Context) -> Vec<PathBuf> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let file = canon(log);
    let mut head = file.clone().into_os_string();
    head.push(".head");
    let mut out = vec![file.clone(), PathBuf::from(head)];
    if let Some(dir) = file.parent() {
        let holds = |p: &str| Path::new(p).starts_with(dir) || canon(Path::new(p)).starts_with(dir);
        if !holds(&ctx.workspace) && !holds(&ctx.cwd) && dir != Path::new("/") {
            out.push(dir.to_path_buf());
        }
    }
    out
}

/// A fresh session id: time and process id, hashed (unique enough across a fleet's logs).
pub(crate) fn session_id() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut h = Sha256::new();
    h.update(now.as_nanos().to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    if let Ok(bytes) = std::fs::read("/proc/sys/kernel/random/uuid") {
        h.update(bytes);
    }
    hex(&h.finalize()).chars().take(16).collect()
}
