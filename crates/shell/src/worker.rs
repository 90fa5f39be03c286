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
use std::time::{Duration, Instant};

/// Stack size of an analysis thread (virtual: pages are committed only as the parser uses
/// them).
pub(crate) const STACK: usize = 256 * 1024 * 1024;

/// Idle workers kept for the next callers.
pub(crate) const MAX_IDLE: usize = 4;

/// What a worker and its current caller share.
#[derive(Default)]
struct Slot {
    /// The strings to analyse, in order, and how; set by the caller.
    job: Option<(Vec<String>, Analyser)>,
    /// The answers so far, in the order of the job; the worker adds each as it finishes it.
    answers: Vec<Analysis>,
    /// When the worker started the string it is working on (`None` while it waits for a job).
    started: Option<Instant>,
    /// Set by the worker once every string of the job has its answer.
    done: bool,
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
#[cfg(test)]
pub(crate) fn run(input: &str, analyse: Analyser, deadline: Duration) -> Outcome {
    run_all(&[input], analyse, deadline).pop().unwrap_or(Outcome::NoThread)
}

/// Runs `analyse` on each of `inputs` in turn on one worker thread (one hand-over for all of
/// them), waiting at most `deadline` for each; one outcome per input, in order.
///
/// Each input gets exactly what a run of its own would give: when one does not finish within
/// `deadline`, it is [`Outcome::TimedOut`], the worker is retired, and the inputs after it
/// go to another worker.
#[cfg(test)]
pub(crate) fn run_all(inputs: &[&str], analyse: Analyser, deadline: Duration) -> Vec<Outcome> {
    begin_all(inputs.iter().map(|s| (*s).to_owned()).collect(), analyse, deadline).finish()
}

/// [`run_all`] in two steps: the inputs are handed to a worker now, and [`Started::finish`]
/// waits for the outcomes, so the caller can work in the meantime. Dropping a batch unfinished
/// retires its worker.
pub(crate) fn begin_all(inputs: Vec<String>, analyse: Analyser, deadline: Duration) -> Started {
    let worker = if inputs.is_empty() { None } else { take_idle().or_else(Worker::start) };
    if let Some(w) = &worker {
        give(w, &inputs, analyse);
    }
    Started { worker, inputs, analyse, deadline, handed: Instant::now() }
}

/// A batch handed to a worker, its outcomes not yet collected.
pub(crate) struct Started {
    /// The worker it was handed to; `None` when no thread could be started (or once finished).
    worker: Option<Worker>,
    inputs: Vec<String>,
    analyse: Analyser,
    deadline: Duration,
    handed: Instant,
}

impl Started {
    /// Waits for the outcomes, one per input, in order (see [`run_all`]).
    pub(crate) fn finish(mut self) -> Vec<Outcome> {
        let inputs = std::mem::take(&mut self.inputs);
        let mut out = Vec::with_capacity(inputs.len());
        let mut rest = inputs.as_slice();
        let mut handed = self.worker.take().map(|w| (w, self.handed));
        while !rest.is_empty() {
            let (worker, since) = match handed.take() {
                Some(h) => h,
                None => {
                    let Some(worker) = take_idle().or_else(Worker::start) else {
                        out.extend(rest.iter().map(|_| Outcome::NoThread));
                        break;
                    };
                    give(&worker, rest, self.analyse);
                    (worker, Instant::now())
                }
            };
            let (answers, finished) = wait(&worker, self.deadline, since);
            let got = answers.len();
            out.extend(answers.into_iter().map(Outcome::Done));
            if finished {
                give_back(worker);
                break;
            }
            // The input after the last answer did not finish in time.
            out.push(Outcome::TimedOut);
            rest = rest.get(got + 1..).unwrap_or_default();
        }
        out
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.take() {
            retire(&worker);
        }
    }
}

/// Gives `inputs` to `worker` (which is idle or new).
fn give(worker: &Worker, inputs: &[String], analyse: Analyser) {
    let shared = &worker.0;
    let mut slot = shared.lock();
    slot.answers = Vec::with_capacity(inputs.len());
    slot.done = false;
    slot.started = None;
    slot.job = Some((inputs.to_vec(), analyse));
    shared.changed.notify_all();
}

/// Waits for `worker`'s job: the answers it gave, and whether it finished them all (when not,
/// it is retired: the input after the last answer ran past `deadline`). An input's time runs
/// from when the worker started it, or from `handed` while it has started none.
fn wait(worker: &Worker, deadline: Duration, handed: Instant) -> (Vec<Analysis>, bool) {
    let shared = &worker.0;
    let mut slot = shared.lock();
    // The worker posts no wake-up per answer; the deadline is checked against the time it
    // started the input it is on, each time the wait runs out.
    loop {
        let since = slot.started.unwrap_or(handed);
        let left = deadline.saturating_sub(since.elapsed());
        if slot.done || left.is_zero() {
            break;
        }
        slot = shared
            .changed
            .wait_timeout_while(slot, left, |s| !s.done)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
    let answers = std::mem::take(&mut slot.answers);
    if slot.done {
        return (answers, true);
    }
    // Still parsing: it may finish later, but never serves anyone again.
    slot.retired = true;
    slot.job = None;
    shared.changed.notify_all();
    (answers, false)
}

/// Tells `worker` to exit once it is done with what it is on; it serves no one again.
fn retire(worker: &Worker) {
    let mut slot = worker.0.lock();
    slot.retired = true;
    slot.job = None;
    worker.0.changed.notify_all();
}

/// Starts workers ahead until `n` are idle (at most [`MAX_IDLE`]), so that the next analyses
/// do not wait for a thread to start (tens of microseconds each). For a caller with a thread
/// to spare before it analyses (`warden run` does it while it opens its audit log).
pub(crate) fn warm(n: usize) {
    let idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner).len();
    for _ in idle..n.min(MAX_IDLE) {
        match Worker::start() {
            Some(worker) => give_back(worker),
            None => break,
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
    retire(&worker);
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

/// The worker's loop: wait for a job or retirement, analyse each string outside the lock,
/// post each answer, and wake the caller once all are done.
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
        let (inputs, analyse) = job;
        for input in &inputs {
            shared.lock().started = Some(Instant::now());
            let analysis = analyse(input);
            let mut slot = shared.lock();
            if slot.retired {
                return;
            }
            slot.answers.push(analysis);
        }
        let mut slot = shared.lock();
        if slot.retired {
            return;
        }
        slot.done = true;
        slot.started = None;
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

    fn owned(inputs: &[&str]) -> Vec<String> {
        inputs.iter().map(|s| (*s).to_owned()).collect()
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

    fn late_is_slow(input: &str) -> Analysis {
        if input == "late" {
            std::thread::sleep(Duration::from_millis(500));
        }
        echo(input)
    }

    fn tenth_of_a_second(input: &str) -> Analysis {
        std::thread::sleep(Duration::from_millis(100));
        echo(input)
    }

    #[test]
    fn in_a_batch_only_the_late_input_times_out() {
        let got = run_all(&["a", "late", "b"], late_is_slow, Duration::from_millis(200));
        let got: Vec<Option<String>> = got.into_iter().map(text).collect();
        assert_eq!(got, [Some("a".to_owned()), None, Some("b".to_owned())]);
    }

    #[test]
    fn the_deadline_is_per_input_not_per_batch() {
        // 0.4 s in all, each input well within its 0.3 s.
        let got = run_all(&["1", "2", "3", "4"], tenth_of_a_second, Duration::from_millis(300));
        let got: Vec<Option<String>> = got.into_iter().map(text).collect();
        assert_eq!(got, ["1", "2", "3", "4"].map(|s| Some(s.to_owned())));
    }

    #[test]
    fn a_batch_is_parsed_while_the_caller_works_and_its_time_is_not_counted() {
        // Each input takes 0.1 s of its 0.2 s. The caller does not wait: it works (here, polls
        // for at most 10 s) until the worker says the batch is done, then collects; the time
        // it took must not count against any input.
        let started = begin_all(owned(&["1", "2", "3"]), tenth_of_a_second, Duration::from_millis(200));
        let done = || started.worker.as_ref().is_some_and(|w| w.0.lock().done);
        let t = Instant::now();
        while !done() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(done(), "the worker did not finish the batch by itself");
        std::thread::sleep(Duration::from_millis(300));
        let got: Vec<Option<String>> = started.finish().into_iter().map(text).collect();
        assert_eq!(got, ["1", "2", "3"].map(|s| Some(s.to_owned())));
    }

    #[test]
    fn a_batch_dropped_uncollected_retires_its_worker() {
        let started = begin_all(owned(&["dropped"]), slow, Duration::from_secs(30));
        drop(started);
        // The retired worker never answers anyone; these get their own answers.
        for i in 0..3 {
            assert_eq!(text(run(&i.to_string(), echo, Duration::from_secs(30))), Some(i.to_string()));
        }
        assert!(matches!(begin_all(Vec::new(), echo, Duration::from_secs(1)).finish().as_slice(), []));
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
