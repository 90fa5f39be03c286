//! The helper process that runs images: `warden-wasi --cache DIR` reads [`Call`]s from its
//! stdin and answers each on its stdout, one JSON object per line.
//!
//! Why a separate process: the runtime (Cranelift, the pooling allocator, wasmtime-wasi) is
//! most of a binary that links it, and a process pays for all of it at every start, so the
//! `warden` binary, which starts once per native command, does not link it. A guest that
//! broke out of wasmtime would also find itself in this process, which holds neither the
//! policy nor the audit log.
//!
//! Protocol: a request is `{"id": N, "call": Call}`; its answer is `{"id": N, "result":
//! {"Ok": Run}}` or `{"id": N, "result": {"Err": "message"}}`, in the order runs end. Calls
//! run side by side, one thread each. `{"cancel": N}` stops run N within a tick: its answer
//! then says `cancelled`. End of stdin ends the process at once, and every run
//! still going with it: the helper never outlives the caller that started it.

use std::io::{BufRead, Write};
use std::path::Path;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use warden_feedback::Run;

use crate::{Call, Runner};

/// One request line.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    pub(crate) id: u64,
    pub(crate) call: Call,
}

/// A control line: stop the run of request `cancel` (ignored once it has ended).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Cancel {
    pub(crate) cancel: u64,
}

/// One answer line.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Answer {
    pub(crate) id: u64,
    pub(crate) result: Result<Run, String>,
}

/// Serves calls from stdin until it ends, then exits the process. `cache_dir` holds the
/// compiled images (created 0700 when missing).
///
/// A request that does not parse ends the helper (its caller is broken, and an answer could
/// not be routed); a runtime that cannot start answers every call with the reason.
pub fn serve(cache_dir: &Path) -> ! {
    let runner: Arc<Result<Runner, String>> = Arc::new(Runner::new(cache_dir).map_err(|e| e.to_string()));
    let out = Arc::new(Mutex::new(std::io::stdout()));
    // The cancel flag of each run still going, by request id.
    let going: Arc<Mutex<HashMap<u64, Arc<AtomicBool>>>> = Arc::default();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let request: Request = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                if let Ok(Cancel { cancel }) = serde_json::from_str(&line) {
                    if let Some(flag) = lock(&going).get(&cancel) {
                        flag.store(true, Ordering::Relaxed);
                    }
                    continue;
                }
                eprintln!("warden-wasi: a request that does not parse ({e}): stopping");
                std::process::exit(2);
            }
        };
        let (runner, to, ended) = (Arc::clone(&runner), Arc::clone(&out), Arc::clone(&going));
        let id = request.id;
        let flag = Arc::new(AtomicBool::new(false));
        lock(&going).insert(id, Arc::clone(&flag));
        let spawned = std::thread::Builder::new().name(format!("warden-wasi-{id}")).spawn(move || {
            let result = run(&runner, request.call, flag);
            lock(&ended).remove(&id);
            answer(&to, id, result);
        });
        if let Err(e) = spawned {
            lock(&going).remove(&id);
            answer(&out, id, Err(format!("cannot start a thread for the run: {e}")));
        }
    }
    std::process::exit(0)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn run(runner: &Result<Runner, String>, call: Call, cancel: Arc<AtomicBool>) -> Result<Run, String> {
    let runner = runner.as_ref().map_err(|e| format!("the WASI runtime cannot start: {e}"))?;
    let spec = call.spec().map_err(|e| e.to_string())?;
    runner.run_cancellable(&spec, cancel).map_err(|e| e.to_string())
}

fn answer(out: &Mutex<std::io::Stdout>, id: u64, result: Result<Run, String>) {
    let line = match serde_json::to_string(&Answer { id, result }) {
        Ok(l) => l,
        Err(e) => format!("{{\"id\":{id},\"result\":{{\"Err\":\"the answer cannot be encoded: {}\"}}}}", e.to_string().replace(['"', '\\'], "'")),
    };
    let mut out = lock(out);
    // The caller gone: the next read of stdin ends the process.
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}
