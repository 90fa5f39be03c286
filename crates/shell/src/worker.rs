//! The threads every analysis runs on: long-lived, each with a large stack, reused.
//!
//! Why a separate thread: `brush-parser` recurses once per nesting level. The guard caps the
//! nesting, and the parse also runs on a [`STACK`]-byte stack so that a shape the guard misses
//! cannot overflow a caller's smaller stack; and a parse still running after the deadline is
//! abandoned (the caller gets an opaque part) instead of holding the caller.
//!
//! Why reuse: starting a thread with a 256 MiB stack (mapping it, the guard page, `clone`,
//! unmapping it at exit) costs tens of microseconds, several times the analysis of a typical
//! command. Idle workers wait in a pool; a caller takes one, or starts one when none is idle,
//! so concurrent callers never queue behind each other. A worker whose caller stopped waiting
//! is retired: it finishes its parse, drops the answer and exits; it never takes another job.
//! At most [`MAX_IDLE`] idle workers are kept; one returned to a full pool exits.
//!
//! Only `Mutex` and `Condvar` (no channels): waiting on a channel with a timeout registers a
//! thread-local in the caller, which leak checkers report.

use crate::model::Analysis;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Stack size of an analysis thread (virtual: pages are committed only as the parser uses
/// them).
pub(crate) const STACK: usize = 256 * 1024 * 1024;

/// Idle workers kept for the next callers.
pub(crate) const MAX_IDLE: usize = 4;

/// What a worker and its current caller share.
#[derive(Default)]
struct Slot {
    /// The string to analyse and how, set by the caller.
    job: Option<(String, Analyser)>,
    /// The result, set by the worker.
    answer: Option<Analysis>,
    /// Set by the caller (timed out, or the pool is full): exit instead of waiting for a job.
    retired: bool,
}

#[derive(Default)]
struct Shared {
    slot: Mutex<Slot>,
    changed: Condvar,
}

impl Shared {
    /// The slot; a poisoned lock is taken over (nothing panics while holding it, and the slot
    /// holds plain data).
    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The analysis a worker runs (a parameter so tests can stand in slow or deep ones).
pub(crate) type Analyser = fn(&str) -> Analysis;

/// A handle on one worker thread.
struct Worker(Arc<Shared>);

/// Idle workers, most recently used last.
static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

/// How one run on a worker ended.
pub(crate) enum Outcome {
    /// The analysis.
    Done(Analysis),
    /// The worker did not answer within the deadline (it was retired).
    TimedOut,
    /// No thread could be started.
    NoThread,
}

/// Runs `analyse` on `input` on a worker thread, waiting at most `deadline`.
pub(crate) fn run(input: &str, analyse: Analyser, deadline: Duration) -> Outcome {
    let Some(worker) = take_idle().or_else(Worker::start) else {
        return Outcome::NoThread;
    };
    let shared = &worker.0;
    let mut slot = shared.lock();
    slot.answer = None;
    slot.job = Some((input.to_owned(), analyse));
    shared.changed.notify_all();
    let (mut slot, _) = shared
        .changed
        .wait_timeout_while(slot, deadline, |s| s.answer.is_none())
        .unwrap_or_else(PoisonError::into_inner);
    match slot.answer.take() {
        Some(analysis) => {
            drop(slot);
            give_back(worker);
            Outcome::Done(analysis)
        }
        None => {
            // Still parsing: it may finish later, but never serves anyone again.
            slot.retired = true;
            slot.job = None;
            shared.changed.notify_all();
            Outcome::TimedOut
        }
    }
}

fn take_idle() -> Option<Worker> {
    IDLE.lock().unwrap_or_else(PoisonError::into_inner).pop()
}

fn give_back(worker: Worker) {
    let mut idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner);
    if idle.len() < MAX_IDLE {
        idle.push(worker);
        return;
    }
    drop(idle);
    let mut slot = worker.0.lock();
    slot.retired = true;
    worker.0.changed.notify_all();
}

impl Worker {
    fn start() -> Option<Worker> {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("warden-shell".to_owned())
            .stack_size(STACK)
            .spawn(move || serve(&theirs))
            .ok()?;
        Some(Worker(shared))
    }
}

/// The worker's loop: wait for a job or retirement, analyse outside the lock, post the answer.
fn serve(shared: &Shared) {
    loop {
        let job = {
            let slot = shared.lock();
            let mut slot = shared
                .changed
                .wait_while(slot, |s| s.job.is_none() && !s.retired)
                .unwrap_or_else(PoisonError::into_inner);
            if slot.retired {
                return;
            }
            match slot.job.take() {
                Some(job) => job,
                None => continue,
            }
        };
        let (input, analyse) = job;
        let analysis = analyse(&input);
        let mut slot = shared.lock();
        if slot.retired {
            return;
        }
        slot.answer = Some(analysis);
        shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Opaque, OpaqueReason};

    fn echo(input: &str) -> Analysis {
        Analysis {
            commands: vec![],
            opaque: vec![Opaque { reason: OpaqueReason::Unsupported, text: input.to_owned(), span: 0..0 }],
        }
    }

    fn slow(input: &str) -> Analysis {
        std::thread::sleep(Duration::from_millis(300));
        echo(input)
    }

    fn text(o: Outcome) -> Option<String> {
        match o {
            Outcome::Done(a) => a.opaque.first().map(|o| o.text.clone()),
            Outcome::TimedOut | Outcome::NoThread => None,
        }
    }

    #[test]
    fn each_caller_gets_its_own_answer() {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                std::thread::spawn(move || {
                    (0..50)
                        .map(|j| text(run(&format!("{i}-{j}"), echo, Duration::from_secs(30))))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            let got = h.join().unwrap();
            let want: Vec<_> = (0..50).map(|j| Some(format!("{i}-{j}"))).collect();
            assert_eq!(got, want);
        }
        assert!(IDLE.lock().unwrap().len() <= MAX_IDLE);
    }

    #[test]
    fn a_late_worker_is_retired_and_its_answer_never_reaches_anyone() {
        assert!(matches!(run("late", slow, Duration::from_millis(1)), Outcome::TimedOut));
        // Whatever worker serves the next calls, they get their own answers, not `late`.
        for i in 0..5 {
            assert_eq!(text(run(&i.to_string(), slow, Duration::from_secs(30))), Some(i.to_string()));
        }
    }

    #[test]
    fn the_stack_is_large() {
        fn deep(n: usize) -> usize {
            // About 8 KiB of stack per level, 8 MiB in all: more than a default thread has.
            let buf = std::hint::black_box([0u8; 8192]);
            if n == 0 { usize::from(buf[0]) } else { deep(n - 1) + usize::from(buf[n % 8192]) }
        }
        fn probe(_: &str) -> Analysis {
            echo(&deep(1024).to_string())
        }
        assert_eq!(text(run("x", probe, Duration::from_secs(30))), Some("0".into()));
    }
}
