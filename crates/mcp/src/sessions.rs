//! The live MCP sessions over HTTP: how many there may be, when an idle one ends, and what
//! ends the calls of one that ended.
//!
//! rmcp keeps each session (its worker task, channels and caches) until the client DELETEs it
//! or it is idle for its `keep_alive`, and opens as many as clients ask for. Its idle clock
//! does not see a call in flight (its worker waits for the next message with the clock
//! running), so a command that ran longer than that would lose its session and be cancelled.
//! warden turns rmcp's clock off and keeps its own here: a session is idle when
//! no request named it for [`IDLE`] and none of its calls is running; the reaper
//! ([`crate::http`]) closes it then. At most [`MAX_SESSIONS`] live at once: a request that
//! would open another is refused with a JSON-RPC error (HTTP 503) until one ends.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

/// Live HTTP sessions, at most.
pub const MAX_SESSIONS: usize = 64;

/// How long a session may go without a request (and no call of it running) before it ends.
pub const IDLE: Duration = Duration::from_secs(300);

/// How often idle sessions are looked for.
pub const REAP_EVERY: Duration = Duration::from_secs(15);

/// One live session as warden sees it.
#[derive(Debug)]
struct Live {
    /// Fired when the session ends: its running calls stop.
    hangup: CancellationToken,
    /// When a request last named it (or a call of it ended).
    last: Instant,
    /// Its calls running now.
    calls: usize,
}

impl Live {
    fn new(now: Instant) -> Live {
        Live { hangup: CancellationToken::new(), last: now, calls: 0 }
    }
}

/// The sessions, by `Mcp-Session-Id`. Only ids rmcp created are ever added ([`Sessions::opened`],
/// [`Sessions::sync`], and calls, which rmcp routes only to its sessions), so a client naming
/// ids of its own adds nothing.
#[derive(Debug)]
pub struct Sessions {
    live: Mutex<HashMap<String, Live>>,
    idle: Duration,
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions::new(IDLE)
    }
}

impl Sessions {
    /// Sessions that end after `idle` without a request or a running call.
    pub fn new(idle: Duration) -> Sessions {
        Sessions { live: Mutex::new(HashMap::new()), idle }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<String, Live>> {
        self.live.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// rmcp opened session `id` (its `initialize` was answered).
    pub fn opened(&self, id: &str) {
        self.live().entry(id.to_string()).or_insert_with(|| Live::new(Instant::now()));
    }

    /// A request named session `id`: it is not idle. An id warden does not know is ignored.
    pub fn touch(&self, id: &str) {
        if let Some(s) = self.live().get_mut(id) {
            s.last = Instant::now();
        }
    }

    /// A call of session `id` (one rmcp routed, so a session it holds) starts: the session is
    /// not idle until the returned guard drops. The token ends the call when the session ends.
    pub fn call(self: &std::sync::Arc<Self>, id: &str) -> (CancellationToken, Calling) {
        let mut live = self.live();
        let s = live.entry(id.to_string()).or_insert_with(|| Live::new(Instant::now()));
        s.calls += 1;
        s.last = Instant::now();
        (s.hangup.clone(), Calling { sessions: std::sync::Arc::clone(self), id: id.to_string() })
    }

    /// Session `id` ended (a DELETE, or rmcp closed it): its calls stop.
    pub fn end(&self, id: &str) {
        if let Some(s) = self.live().remove(id) {
            s.hangup.cancel();
        }
    }

    /// Follows rmcp's list of its sessions: one warden does not know yet is counted from now,
    /// one rmcp no longer holds has ended (its calls stop).
    pub fn sync<'a>(&self, held: impl IntoIterator<Item = &'a str>) {
        let now = Instant::now();
        let held: std::collections::HashSet<&str> = held.into_iter().collect();
        let mut live = self.live();
        live.retain(|id, s| {
            let keep = held.contains(id.as_str());
            if !keep {
                s.hangup.cancel();
            }
            keep
        });
        for id in held {
            live.entry(id.to_string()).or_insert_with(|| Live::new(now));
        }
    }

    /// Ends the sessions idle at `now` (no request for the idle time, no call running) and
    /// returns their ids, for rmcp to close.
    pub fn reap(&self, now: Instant) -> Vec<String> {
        let mut live = self.live();
        let idle: Vec<String> =
            live.iter().filter(|(_, s)| s.calls == 0 && now.saturating_duration_since(s.last) >= self.idle).map(|(id, _)| id.clone()).collect();
        for id in &idle {
            if let Some(s) = live.remove(id) {
                s.hangup.cancel();
            }
        }
        idle
    }

    /// How many sessions warden knows of.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.live().len()
    }
}

/// A running call of a session: while it lives, the session is not idle.
#[derive(Debug)]
pub struct Calling {
    sessions: std::sync::Arc<Sessions>,
    id: String,
}

impl Drop for Calling {
    fn drop(&mut self) {
        if let Some(s) = self.sessions.live().get_mut(&self.id) {
            s.calls = s.calls.saturating_sub(1);
            s.last = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_session_is_idle_only_without_requests_and_running_calls() {
        let s = Arc::new(Sessions::new(Duration::from_secs(60)));
        s.opened("a");
        s.opened("b");
        let later = Instant::now() + Duration::from_secs(61);
        let (hangup, calling) = s.call("b");
        assert_eq!(s.reap(later), ["a"], "a running call keeps its session");
        assert!(!hangup.is_cancelled());
        drop(calling);
        assert_eq!(s.reap(Instant::now() + Duration::from_secs(61)), ["b"]);
        assert!(hangup.is_cancelled(), "the calls of a reaped session stop");
        assert_eq!(s.len(), 0);
    }

    #[test]
    fn only_ids_rmcp_holds_are_kept() {
        let s = Arc::new(Sessions::default());
        s.touch("made-up");
        assert_eq!(s.len(), 0, "a request naming an unknown id adds nothing");
        s.opened("a");
        let (hangup, _calling) = s.call("a");
        s.sync(["b"]);
        assert!(hangup.is_cancelled(), "a session rmcp closed ends its calls");
        assert_eq!(s.len(), 1);
        s.end("b");
        assert_eq!(s.len(), 0);
    }
}
