//! Helper threads (and processes) that start on another processor than the thread that starts
//! them.
//!
//! Linux places a new thread on its creator's processor, and while the creator keeps working
//! the new one waits there for the creator's time slice to end or for a load balance: measured
//! on the 2-processor machines warden is tested on, a thread started beside a busy one first ran
//! after 2.2 ms (median), with the other processor idle all along. A helper meant to work
//! *while* the caller works (making the command's process, opening the audit log) then works
//! after it instead. [`spawn`] starts the thread allowed only the other processors, which moves
//! it to one of them at once (about 0.14 ms, waking it included); the thread then takes back the
//! caller's whole set before it runs its function, so what it starts (the command's process
//! inherits its set) may run anywhere the caller may. Processes are placed the same way: a
//! prepared view's command process is moved off warden's processor by the hop that clones it
//! ([`place`]) and takes back the whole set itself.

use std::os::unix::thread::JoinHandleExt;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{Builder, JoinHandle};

/// Starts `f` on a thread made by `builder`, placed on a processor other than the caller's when
/// the caller may use another one (see the module docs). The same as `builder.spawn(f)`
/// otherwise: placing it is best effort and never fails the spawn.
///
/// # Errors
/// The thread could not be started.
pub fn spawn<F, T>(builder: Builder, f: F) -> std::io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let allowed = affinity();
    // The thread takes its set back only once it has been moved: held until then.
    let placing = Arc::new(Mutex::new(()));
    let held = placing.lock().unwrap_or_else(PoisonError::into_inner);
    let placed = Arc::clone(&placing);
    let handle = builder.spawn(move || {
        drop(placed.lock().unwrap_or_else(PoisonError::into_inner));
        if let Some(set) = &allowed {
            set_own(set);
        }
        f()
    })?;
    if let Some(set) = &allowed {
        move_away(handle.as_pthread_t(), set);
    }
    drop(held);
    Ok(handle)
}

/// Runs `make` (which clones a process) with the calling thread narrowed to the processor it
/// is on, then gives the thread its set back. Linux places a new process where it sees the
/// least load, and with both processors busy at the clone (the caller's policy load on one,
/// this thread on the other) it often chose the caller's: measured there, the process made
/// ahead first ran 1.0 ms later, while this thread's processor was idle. The thread calling
/// this waits (or blocks) right after; the process takes back [`whole`] itself ([`set_own`]).
pub(crate) fn here<T>(make: impl FnOnce() -> T) -> T {
    let Some(set) = whole() else { return make() };
    let Ok(cpu) = usize::try_from(current()) else { return make() };
    if cpu >= libc::CPU_SETSIZE as usize {
        return make();
    }
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut one) };
    set_own(&one);
    let made = make();
    set_own(&set);
    made
}

/// The calling thread's processor set, when it has more than one processor.
pub(crate) fn whole() -> Option<libc::cpu_set_t> {
    affinity().filter(|s| count(s) > 1)
}

/// The calling thread's processor set.
fn affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a cpu_set_t of the size passed.
    let got = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw mut set) };
    (got == 0).then_some(set)
}

/// Sets the calling thread's (or a just-cloned process's) processor set (best effort): one raw
/// system call, async-signal-safe.
pub(crate) fn set_own(set: &libc::cpu_set_t) {
    // SAFETY: the raw system call reads `set`, a cpu_set_t of the size passed.
    unsafe { libc::syscall(libc::SYS_sched_setaffinity, 0, std::mem::size_of::<libc::cpu_set_t>(), std::ptr::from_ref(set)) };
}

/// `allowed` without the caller's current processor, when that leaves any.
fn others(allowed: &libc::cpu_set_t) -> Option<libc::cpu_set_t> {
    let here = usize::try_from(current()).ok()?;
    let mut others = *allowed;
    if here < libc::CPU_SETSIZE as usize {
        // SAFETY: `here` is below CPU_SETSIZE, the number of processors a cpu_set_t holds.
        unsafe { libc::CPU_CLR(here, &mut others) };
    }
    (count(&others) > 0).then_some(others)
}

/// Restricts `thread` to `allowed` without the caller's current processor, when that leaves
/// any (best effort).
fn move_away(thread: libc::pthread_t, allowed: &libc::cpu_set_t) {
    let Some(others) = others(allowed) else { return };
    // SAFETY: `thread` is a live thread (its handle is held by the caller and it cannot end
    // before `placing` is released); `others` is a cpu_set_t of the size passed.
    unsafe { libc::pthread_setaffinity_np(thread, std::mem::size_of::<libc::cpu_set_t>(), &raw const others) };
}

/// `allowed` without the calling thread's current processor, when that leaves any: where a
/// process it starts may set itself up while it goes on (see [`place`]).
pub(crate) fn elsewhere(allowed: &libc::cpu_set_t) -> Option<libc::cpu_set_t> {
    others(allowed)
}

/// Restricts the process `pid` to `set` (best effort): one raw system call, async-signal-safe.
///
/// Linux places a clone on its maker's processor. The process a prepared view's hop clones
/// for the command (`view_child.rs`) then set itself up there while warden, woken when the
/// hop ended, waited behind it for the same processor, the other one idle (seen in a
/// scheduler trace: the whole setup ran on one processor). The hop places it
/// [`elsewhere`] than warden's processor; what it clones inherits the set, so the command's
/// process takes back warden's whole set first ([`set_own`], `child.rs`).
pub(crate) fn place(pid: libc::pid_t, set: &libc::cpu_set_t) {
    // SAFETY: the raw system call reads `set`, a cpu_set_t of the size passed.
    unsafe { libc::syscall(libc::SYS_sched_setaffinity, pid, std::mem::size_of::<libc::cpu_set_t>(), std::ptr::from_ref(set)) };
}

/// How many processors `set` holds.
fn count(set: &libc::cpu_set_t) -> i32 {
    // SAFETY: CPU_COUNT only reads the set.
    unsafe { libc::CPU_COUNT(set) }
}

/// The processor the calling thread is on.
fn current() -> i32 {
    // SAFETY: sched_getcpu has no preconditions.
    unsafe { libc::sched_getcpu() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn the_thread_runs_its_function_with_the_callers_whole_set() {
        let mine = affinity().map(|s| count(&s));
        let theirs = spawn(Builder::new(), || affinity().map(|s| count(&s))).map(|h| h.join());
        assert!(matches!(theirs, Ok(Ok(t)) if t == mine), "{theirs:?} != {mine:?}");
    }

    /// The case the module is for: the other processors are busy when the thread is made (so
    /// the kernel leaves it on the caller's) and free right after, while the caller keeps
    /// working. Made with `Builder::spawn`, the thread mostly first ran about 2.9 ms later, on
    /// the caller's processor (this test then fails); made with [`spawn`], on another one.
    #[test]
    fn the_thread_starts_beside_a_busy_caller() {
        let Some(allowed) = affinity().filter(|s| count(s) >= 2) else { return };
        let mut apart = 0;
        for _ in 0..20 {
            let here = current();
            let mut others = allowed;
            if let Ok(cpu) = usize::try_from(here) {
                // SAFETY: `cpu` comes from sched_getcpu, below CPU_SETSIZE.
                unsafe { libc::CPU_CLR(cpu, &mut others) };
            }
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let spinning = Arc::clone(&stop);
            let spinner = std::thread::spawn(move || {
                set_own(&others);
                let began = Instant::now();
                while !spinning.load(std::sync::atomic::Ordering::Relaxed) && began.elapsed() < Duration::from_secs(2) {
                    std::hint::spin_loop();
                }
            });
            std::thread::sleep(Duration::from_millis(5));
            let here = current();
            let thread = spawn(Builder::new(), current);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let busy = Instant::now();
            while thread.as_ref().is_ok_and(|t| !t.is_finished()) && busy.elapsed() < Duration::from_secs(2) {
                std::hint::spin_loop();
            }
            apart += usize::from(thread.is_ok_and(|t| t.join().is_ok_and(|cpu| cpu != here)));
            let _ = spinner.join();
        }
        assert!(apart >= 15, "only {apart} of 20 threads started on another processor");
    }
}
