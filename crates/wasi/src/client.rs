//! The caller's side of the helper process (see [`crate::helper`]): one helper per client,
//! started at the first call and again after it ends, shared by calls side by side.
//!
//! Nothing here touches the runtime: a binary that only uses the client does not link it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use warden_feedback::Run;

use crate::helper::{Answer, Request};
use crate::{Call, Error};

/// How long past a call's own timeout the helper may take to answer before it is killed.
pub const GRACE: Duration = Duration::from_secs(10);

/// How often a waiting call asks whether it was cancelled.
pub const POLL: Duration = Duration::from_millis(20);

/// Who waits for which answer; `None` once the helper's stdout has ended.
type Waiting = Arc<Mutex<Option<HashMap<u64, SyncSender<Result<Run, String>>>>>>;

/// Runs [`Call`]s in a helper process (`warden-wasi`).
#[derive(Debug)]
pub struct Client {
    program: PathBuf,
    cache_dir: PathBuf,
    helper: Mutex<Option<Helper>>,
    next_id: AtomicU64,
    grace: Duration,
}

#[derive(Debug)]
struct Helper {
    child: Child,
    stdin: ChildStdin,
    waiting: Waiting,
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Helper {
    fn gone(&self) -> bool {
        lock(&self.waiting).is_none()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Client {
    /// A client of the helper `program`, which keeps compiled images in `cache_dir`.
    pub fn new(program: &Path, cache_dir: &Path) -> Client {
        Client {
            program: program.to_owned(),
            cache_dir: cache_dir.to_owned(),
            helper: Mutex::new(None),
            next_id: AtomicU64::new(1),
            grace: GRACE,
        }
    }

    /// The same client, waiting `grace` (not [`GRACE`]) past a call's timeout.
    #[must_use]
    pub fn with_grace(mut self, grace: Duration) -> Client {
        self.grace = grace;
        self
    }

    /// Runs one call in the helper and waits for its result.
    ///
    /// # Errors
    /// [`Error::Relayed`]: the helper's own refusal (an unknown tool, a preopen that cannot be
    /// opened, a runtime that cannot start, ...); or
    /// [`Error::Helper`]: it is missing, cannot start, exited, or did not answer within the
    /// call's timeout and its grace ([`GRACE`]; it is then killed, and every run in it ends).
    pub fn run(&self, call: &Call) -> Result<Run, Error> {
        self.run_until(call, &|| false)
    }

    /// [`Client::run`], asking the helper to stop the run once `cancelled` says so (asked
    /// every [`POLL`]): the run then ends `cancelled`, within a tick of the helper's clock.
    ///
    /// # Errors
    /// As [`Client::run`].
    pub fn run_until(&self, call: &Call, cancelled: &dyn Fn() -> bool) -> Result<Run, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::sync_channel(1);
        let line = serde_json::to_string(&Request { id, call: call.clone() })
            .map_err(|e| Error::Helper(format!("the call cannot be encoded: {e}")))?;
        {
            let mut helper = lock(&self.helper);
            if helper.as_ref().is_none_or(Helper::gone) {
                *helper = None;
                *helper = Some(self.start()?);
            }
            let Some(h) = helper.as_mut() else { return Err(Error::Helper("not running".into())) };
            match lock(&h.waiting).as_mut() {
                Some(waiting) => waiting.insert(id, tx),
                None => return Err(Error::Helper("it exited".into())),
            };
            if let Err(e) = writeln!(h.stdin, "{line}").and_then(|()| h.stdin.flush()) {
                *helper = None;
                return Err(Error::Helper(format!("cannot send it the call: {e}")));
            }
        }
        let deadline = Instant::now() + call.limits.timeout.saturating_add(self.grace);
        let mut asked = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(if asked { left } else { left.min(POLL) }) {
                Ok(result) => return result.map_err(Error::Relayed),
                Err(RecvTimeoutError::Disconnected) => return Err(Error::Helper("it exited before answering".into())),
                Err(RecvTimeoutError::Timeout) if Instant::now() >= deadline => {
                    *lock(&self.helper) = None;
                    return Err(Error::Helper(format!("no answer within the timeout and {:?} more: it was killed", self.grace)));
                }
                Err(RecvTimeoutError::Timeout) => {
                    if !asked && cancelled() {
                        asked = true;
                        self.cancel(id);
                    }
                }
            }
        }
    }

    /// Asks the helper to stop run `id`. A helper gone or replaced meanwhile has no such run
    /// (ids are never reused): the caller still waits for its answer or the end of the helper.
    fn cancel(&self, id: u64) {
        let mut helper = lock(&self.helper);
        if let Some(h) = helper.as_mut()
            && writeln!(h.stdin, "{{\"cancel\":{id}}}").and_then(|()| h.stdin.flush()).is_err()
        {
            *helper = None;
        }
    }

    fn start(&self) -> Result<Helper, Error> {
        if !self.program.is_file() {
            return Err(Error::Helper(format!(
                "`{}` is missing (it is built and installed beside `warden`: cargo build -p warden)",
                self.program.display()
            )));
        }
        let mut child = Command::new(&self.program)
            .arg("--cache")
            .arg(&self.cache_dir)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| Error::Helper(format!("cannot start `{}`: {e}", self.program.display())))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::Helper("no pipes to it".into()));
        };
        let waiting: Waiting = Arc::new(Mutex::new(Some(HashMap::new())));
        let routes = Arc::clone(&waiting);
        let reader = std::thread::Builder::new().name("warden-wasi-answers".into()).spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(answer) = serde_json::from_str::<Answer>(&line) else { break };
                let tx = lock(&routes).as_mut().and_then(|w| w.remove(&answer.id));
                if let Some(tx) = tx {
                    let _ = tx.send(answer.result);
                }
            }
            // Every caller still waiting hears that the helper is gone.
            lock(&routes).take();
        });
        let helper = Helper { child, stdin, waiting };
        reader.map_err(|e| Error::Helper(format!("cannot start the thread that reads its answers: {e}")))?;
        Ok(helper)
    }
}
