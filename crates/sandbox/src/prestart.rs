//! A one-shot caller's command process, started while the caller still loads its policy.
//!
//! A one-shot `warden run` spends about a millisecond compiling its policy before it knows
//! what the command may see, and the sandbox's kernel work (the clone into new user, mount,
//! pid, ipc, uts, cgroup and net namespaces, the id maps, the first mounts) then came after
//! it, on the caller's path. [`prestart`] moves the part that does not depend on the plan
//! ahead, onto a thread of its own: the process is cloned into its namespaces, its id maps
//! are written, and it sets up its descriptors and signals and builds what every view begins
//! with ([`crate::plan::base`]: the staging tmpfs, the new root, `/dev`), then waits.
//!
//! The run that takes it ([`take`], from [`crate::run_gated`]) sends it the [`Child`] the
//! one-shot child would have been given (by address: the process shares the caller's memory
//! until it execs) with the run's detached trees (`SCM_RIGHTS`); it builds the rest of the
//! plan and goes on exactly as that child would. A run it does not fit (network granted,
//! input to pass, another staging directory, other base steps, another caller identity) ends
//! it unused and starts its own process as before.
//!
//! What the command gets is what a process cloned for it would have had: the namespaces are
//! new and used by no other process, the mounts made ahead are the plan's own first steps
//! (checked step by step before the plan is sent), and nothing of the policy's grants is
//! shown before the plan arrives. The thread that cloned it waits until the run is over: a
//! process's parent-death signal follows the thread that made it.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex, PoisonError};

use crate::child::{Child, Staging, Stdio};
use crate::plan::{Plan, Step};
use crate::memory::ChildMemory;
use crate::spawn::{Launch, NAMESPACES, Reaper, Started, go, null_stdin, pipe, seqpacket, write_id_maps};
use crate::{Error, Spec, idmap};

/// At most this many detached trees are passed to a process started ahead.
pub(crate) const MAX_TREES: usize = 8;

/// The process started ahead: being made, waiting to be taken, or none.
static SLOT: Mutex<Slot> = Mutex::new(Slot::Empty);
/// Signalled when a process being made is made (or could not be).
static MADE: Condvar = Condvar::new();

enum Slot {
    Empty,
    /// Set before the thread that makes it starts: a run asking meanwhile waits for it. No
    /// process may be cloned once the run has its own pipes (it would hold copies of their
    /// write ends, and the run would wait for their end forever).
    Making,
    Ready(Prestart),
}

/// What the process started ahead reads until its plan arrives (see
/// [`crate::prestart_child::enter`]).
pub(crate) struct Early {
    pub stdio: Stdio,
    /// The go pipe's write end: the parent's (the process closes its copy first, with every
    /// descriptor it does not keep).
    pub sync_w: RawFd,
    /// Where the [`Child`] arrives.
    pub ctl: RawFd,
    pub stage: Staging,
    /// The steps every plan begins with.
    pub base: Vec<Step>,
    /// The processor set the process takes back first (it starts on its maker's processor:
    /// [`crate::apart::here`]).
    pub cpus: Option<libc::cpu_set_t>,
}

/// A process started ahead and the parent's ends of its pipes. Dropped unused: killed and
/// reaped (fields drop in order: the process before its memory).
pub(crate) struct Prestart {
    reaper: Option<Reaper>,
    /// Its stack and thread-local area, and what it reads: alive until it has exec'd or died.
    _memory: ChildMemory,
    early: Box<Early>,
    ctl: OwnedFd,
    pipes: Option<(OwnedFd, OwnedFd, OwnedFd, OwnedFd, OwnedFd)>,
    root: bool,
    /// Dropped last: the thread that cloned the process then ends.
    _keep: mpsc::Sender<()>,
}

/// Starts, on a thread of its own, a command process for the next run (see the module docs),
/// and for a root caller the user namespace that idmaps `workspace` (`idmap.rs`).
/// For a one-shot caller that runs one command after loading its policy; a failure leaves
/// nothing, and the run starts its own process. Nothing when runs join prepared views from the
/// first on (`WARDEN_SANDBOX_VIEWS=always`, [`crate::set_views`]).
pub fn prestart(workspace: &std::path::Path) {
    // Runs that join a prepared view from the first on do not start their own process.
    if crate::view::mode() == crate::Views::Always {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let owner = if root { idmap::owner(workspace) } else { None };
    {
        let mut slot = lock();
        if !matches!(*slot, Slot::Empty) {
            return;
        }
        *slot = Slot::Making;
    }
    let (keep, done) = mpsc::channel::<()>();
    // On another processor at once: its work overlaps the caller's policy load only if it
    // does not wait for the caller's time slice to end (`apart.rs`).
    let spawned = crate::apart::spawn(std::thread::Builder::new().name("warden-prestart".into()), move || {
        // Whatever happens on this thread (a panic included), a run waiting for the slot is
        // released: it finds the process, or nothing and starts its own.
        let settled = Settle;
        let holder = owner.and_then(|(uid, gid)| idmap::warm_owner(uid, gid));
        let made = Prestart::make(root, keep);
        *lock() = made.map_or(Slot::Empty, Slot::Ready);
        drop(settled);
        // The thread that ends the run's mount namespace after it (`spawn::release_later`).
        crate::spawn::releaser();
        // Reaped once the process is made (see `warm_owner`).
        drop(holder);
        // Until the process is reaped (or the caller exits).
        let _ = done.recv();
    });
    if spawned.is_err() {
        drop(Settle);
    }
}

/// On drop: a slot still being made is left empty, and the runs waiting for it are woken.
struct Settle;

impl Drop for Settle {
    fn drop(&mut self) {
        let mut slot = lock();
        if matches!(*slot, Slot::Making) {
            *slot = Slot::Empty;
        }
        drop(slot);
        MADE.notify_all();
    }
}

fn lock() -> std::sync::MutexGuard<'static, Slot> {
    SLOT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The process started ahead, if one is waiting (or being made: then once it is made), for
/// one run.
pub(crate) fn take() -> Option<Prestart> {
    let mut slot = lock();
    while matches!(*slot, Slot::Making) {
        slot = MADE.wait(slot).unwrap_or_else(PoisonError::into_inner);
    }
    match std::mem::replace(&mut *slot, Slot::Empty) {
        Slot::Ready(p) => Some(p),
        _ => None,
    }
}

impl Prestart {
    fn make(root: bool, keep: mpsc::Sender<()>) -> Result<Prestart, Error> {
        let (stage, base) = crate::plan::base()?;
        let (sync_r, sync_w) = pipe()?;
        let (err_r, err_w) = pipe()?;
        let (out_r, out_w) = pipe()?;
        let (errp_r, errp_w) = pipe()?;
        let stdin = null_stdin()?;
        let (ctl, ctl_child) = seqpacket()?;
        let (notify, notify_child) = seqpacket()?;
        let early = Box::new(Early {
            stdio: Stdio {
                stdin: stdin.as_raw_fd(),
                stdout: out_w.as_raw_fd(),
                stderr: errp_w.as_raw_fd(),
                sync: sync_r.as_raw_fd(),
                err: err_w.as_raw_fd(),
                notify: notify_child.as_raw_fd(),
            },
            sync_w: sync_w.as_raw_fd(),
            ctl: ctl_child.as_raw_fd(),
            stage,
            base,
            cpus: crate::apart::whole(),
        });
        let memory = ChildMemory::new()?;
        let flags = NAMESPACES.iter().fold(libc::CLONE_NEWNET, |f, (flag, _)| f | flag);
        let flags = flags | libc::CLONE_VM | libc::CLONE_SETTLS | libc::SIGCHLD;
        let arg: *mut libc::c_void = (&raw const *early).cast_mut().cast();
        let clone = || {
            // SAFETY: the process runs `early_main` on its own stack and TLS and reads `early`,
            // then the `Child` it is sent; `early` and `memory` live in the `Prestart` until it
            // has exec'd or been reaped (field order), and a sent `Child` until the run reaps it.
            let pid = unsafe { libc::clone(early_main, memory.stack_top(), flags, arg, std::ptr::null_mut::<libc::pid_t>(), memory.tls(), std::ptr::null_mut::<libc::pid_t>()) };
            (pid, std::io::Error::last_os_error())
        };
        // Started on this thread's processor, which is free once this thread waits.
        let (pid, failed) = crate::apart::here(clone);
        if pid < 0 {
            return Err(Error::Namespaces(failed));
        }
        let mut made = Prestart { reaper: Some(Reaper::new(pid)), _memory: memory, early, ctl, pipes: None, root, _keep: keep };
        drop((sync_r, err_w, out_w, errp_w, stdin, ctl_child, notify_child));
        write_id_maps(pid, root)?;
        go(&sync_w)?;
        made.pipes = Some((sync_w, err_r, out_r, errp_r, notify));
        Ok(made)
    }

    /// Whether the run of `spec` with `plan` can use this process.
    pub(crate) fn fits(&self, spec: &Spec, plan: &Plan, root: bool) -> bool {
        !spec.network
            && spec.stdin.is_empty()
            && root == self.root
            && plan.staging == self.early.stage
            && plan.steps.starts_with(&self.early.base)
            && plan.trees.len() <= MAX_TREES
            && self.reaper.is_some()
            && self.pipes.is_some()
    }

    /// The [`Child`] of the run `l` in this process: its plan and the rest as the one-shot
    /// child would get them, with this process's descriptors.
    pub(crate) fn child<'a>(&self, l: &Launch<'a>, argv: &'a [*const std::ffi::c_char], env: &'a [*const std::ffi::c_char]) -> Child<'a> {
        let e = &self.early;
        Child {
            plan: l.plan,
            masks: l.masks,
            programs: l.programs,
            rlimits: l.rlimits,
            trees: &[],
            fresh: None,
            drop_to: l.root.then_some((idmap::UID, idmap::GID)),
            argv,
            env,
            io: e.stdio,
            sync_w: e.sync_w,
            cpus: None,
        }
    }

    /// Sends the process `child` (by address) and the detached trees `trees`; it builds the
    /// rest of the plan and waits for the last go. The caller keeps `child` and what it points
    /// to, and `self`, alive until the returned process is reaped.
    pub(crate) fn launch(&mut self, child: &Child<'_>, trees: &[RawFd]) -> Result<Started, Error> {
        let (Some(reaper), Some((sync_w, err_r, out_r, errp_r, notify))) = (self.reaper.take(), self.pipes.take()) else {
            return Err(Error::Spec("the process started ahead was already used".into()));
        };
        send(&self.ctl, (&raw const *child) as usize, trees).map_err(Error::Io)?;
        let notes = vec!["sandbox process started ahead, while the policy loaded".to_string()];
        Ok(Started { reaper, sync_w, err_r, out_r, errp_r, notify, stdin: None, maps: false, notes })
    }
}

extern "C" fn early_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Early` that `make` passed to clone; it outlives this process's use
    // of the shared memory (see the clone call).
    unsafe { crate::prestart_child::enter(&*(arg as *const Early)) }
}

/// Sends `address` and the descriptors `fds` in one message.
fn send(ctl: &OwnedFd, address: usize, fds: &[RawFd]) -> std::io::Result<()> {
    let bytes = address.to_ne_bytes();
    // SAFETY: our socket and descriptors, and buffers we own.
    if unsafe { crate::notify::send_fds(ctl.as_raw_fd(), &bytes, fds) } != bytes.len() as isize {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
