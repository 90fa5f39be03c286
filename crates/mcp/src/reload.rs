//! Live policy: the server polls its policy files (and the project's `.warden/`) for changes
//! and swaps in the new policy only when it compiles; a broken edit keeps the old policy. Each
//! outcome goes to every connected client as an MCP logging notification (and to stderr).
// MCP logging is how a server tells its client; SEP-2577 deprecates it with no successor yet.
#![allow(deprecated)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use warden_engine::Engine;

use crate::gate::Shared;

/// How often the files are looked at.
pub const INTERVAL: Duration = Duration::from_millis(500);

/// What a file looked like: its path, and its modification time and size if it exists.
type Print = Vec<(PathBuf, Option<(SystemTime, u64)>)>;

/// The files whose change means a reload.
fn watched(shared: &Shared) -> Vec<PathBuf> {
    let mut files = shared.policies.clone();
    if files.is_empty() {
        // Discovered layers: the files that are on disk, and the project's folder (a file
        // added there is a change too).
        if let Ok(layers) = warden_engine::discover(&shared.env) {
            files.extend(layers.iter().flat_map(|l| l.files.iter()).map(|f| PathBuf::from(&f.name)).filter(|p| p.is_absolute()));
        }
        let project = shared.workspace.join(".warden");
        if let Ok(entries) = std::fs::read_dir(&project) {
            files.extend(entries.filter_map(Result::ok).map(|e| e.path()));
        }
        files.push(project);
    }
    files.sort();
    files.dedup();
    files
}

fn print(files: &[PathBuf]) -> Print {
    files.iter().map(|p| (p.clone(), stamp(p))).collect()
}

fn stamp(p: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(p).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// Loads and compiles the policy again, in the current context.
fn load(shared: &Shared) -> Result<(Engine, Vec<warden_policy::LayerSource>), String> {
    let layers = if shared.policies.is_empty() {
        warden_engine::discover(&shared.env)
    } else {
        warden_engine::load_files(&shared.policies)
    }
    .map_err(|e| e.to_string())?;
    let context = shared.engine().context().clone();
    let engine = Engine::new(&layers, context).map_err(|d| d.0.iter().map(|d| d.short()).collect::<Vec<_>>().join("; "))?;
    Ok((engine, layers))
}

/// Hands the new policy to the session (which audits the reload with the new hash), then to
/// the explaining side.
fn swap(shared: &Shared, engine: Engine, layers: &[warden_policy::LayerSource]) -> Result<(), String> {
    let mut session = match shared.session.lock() {
        Ok(s) => s,
        Err(poisoned) => poisoned.into_inner(),
    };
    session.reload(engine.clone(), layers).map_err(|e| format!("the reload could not be recorded, so the previous policy stays in force: {e}"))?;
    drop(session);
    match shared.engine.write() {
        Ok(mut e) => *e = Arc::new(engine),
        Err(poisoned) => *poisoned.into_inner() = Arc::new(engine),
    }
    Ok(())
}

/// Checks once; swaps the policy when it changed and compiles. `Some((level, message))` when
/// something happened.
pub fn check(shared: &Shared, last: &mut Print) -> Option<(LoggingLevel, String)> {
    let now = print(&watched(shared));
    if now == *last {
        return None;
    }
    *last = now;
    Some(match load(shared).and_then(|(engine, layers)| swap(shared, engine, &layers)) {
        Ok(()) => (LoggingLevel::Info, "warden: the policy changed on disk and was reloaded".to_string()),
        Err(why) => (LoggingLevel::Error, format!("warden: the changed policy does not load, so the previous one stays in force: {why}")),
    })
}

/// Polls until the process ends, telling every connected client what happened.
pub async fn watch(shared: Arc<Shared>) {
    let mut last = print(&watched(&shared));
    loop {
        tokio::time::sleep(INTERVAL).await;
        let Some((level, message)) = check(&shared, &mut last) else { continue };
        eprintln!("{message}");
        let peers = match shared.peers.lock() {
            Ok(p) => p.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        for peer in peers.iter().filter(|p| !p.is_transport_closed()) {
            let note = LoggingMessageNotificationParam::new(level, serde_json::Value::String(message.clone()));
            let _ = peer.notify_logging_message(note).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_changes_size_changes_the_print() {
        let dir = warden_testdir::make("mcp", "reload");
        let f = dir.join("p.policy");
        std::fs::write(&f, "a").unwrap();
        let before = print(std::slice::from_ref(&f));
        std::fs::write(&f, "ab").unwrap();
        assert_ne!(before, print(std::slice::from_ref(&f)));
        std::fs::remove_file(&f).unwrap();
        assert_eq!(print(std::slice::from_ref(&f))[0].1, None);
    }
}
