//! The parent's side of a run: clone into new namespaces, write the id maps, release the child,
//! then capture its output, enforce the wall timeout and reap it.

use std::ffi::c_char;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use warden_feedback::{Capture, Run, SandboxInfo, Stream};

use crate::child::{Child, Stage, Stdio};
use crate::memory::ChildMemory;
use crate::landlock::{self, Masks};
use crate::plan::Plan;
use crate::prestart;
use crate::view_child::Hop;
use crate::{Error, Spec, denials, idmap, seccomp, view};

/// The namespaces every run gets (`net` too unless the network is granted).
pub(crate) const NAMESPACES: &[(libc::c_int, &str)] = &[
    (libc::CLONE_NEWUSER, "user"),
    (libc::CLONE_NEWNS, "mnt"),
    (libc::CLONE_NEWPID, "pid"),
    (libc::CLONE_NEWIPC, "ipc"),
    (libc::CLONE_NEWUTS, "uts"),
    (libc::CLONE_NEWCGROUP, "cgroup"),
];

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A close-on-exec pipe: (read end, write end).
pub(crate) fn pipe() -> Result<(OwnedFd, OwnedFd), Error> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two-element array on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(Error::Io(std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A `SOCK_SEQPACKET` pair, close-on-exec: (this side, the process's side).
pub(crate) fn seqpacket() -> Result<(OwnedFd, OwnedFd), Error> {
    let mut fds = [0; 2];
    let kind = libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC;
    // SAFETY: socketpair fills the two-element array on success.
    if unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) } < 0 {
        return Err(Error::Io(std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

pub(crate) fn null_stdin() -> Result<OwnedFd, Error> {
    let f = std::fs::File::open("/dev/null").map_err(Error::Io)?;
    Ok(OwnedFd::from(f))
}

/// Runs `spec` in the sandbox.
pub fn run(spec: &Spec) -> Result<Run, Error> {
    run_gated(spec, &mut || Ok(()))
}

/// Runs `spec` in the sandbox, calling `gate` while the sandbox is being built: the command
/// starts only once `gate` returns `Ok`. On `Err` the half-built sandbox is killed and
/// [`Error::Gate`] returned; nothing of the command ran. `gate` is called at most once, and not
/// at all when the run ends before a process was started (a program that is not there).
///
/// The caller's work in `gate` (warden writes its durable decision record there) overlaps the
/// kernel's (the namespaces, the mounts, Landlock) instead of coming before it.
///
/// # Errors
/// See [`Error`].
pub fn run_gated(spec: &Spec, gate: &mut dyn FnMut() -> Result<(), String>) -> Result<Run, Error> {
    let started = Instant::now();
    let (mut recalled, mut gated) = (false, false);
    let run = attempt(spec, started, true, &mut recalled, &mut || {
        gated = true;
        gate()
    });
    // A run on a recalled layout (`recall.rs`) that ended before its gate was called (the
    // layout no longer holds, or a step of it failed) is planned afresh and made again:
    // nothing of it has run.
    if recalled && !gated && run.is_err() {
        return attempt(spec, started, false, &mut recalled, gate);
    }
    run
}

/// One try at a run; `recall`: on the layout planned last for such a spec, if any (then
/// `recalled` is set), checked before `gate` is called.
fn attempt(spec: &Spec, started: Instant, recall: bool, recalled: &mut bool, gate: &mut dyn FnMut() -> Result<(), String>) -> Result<Run, Error> {
    let abi = landlock::abi();
    if abi < spec.min_landlock_abi.max(1) {
        return Err(Error::Landlock { have: abi, need: spec.min_landlock_abi.max(1) });
    }
    let masks = Masks::new(abi, spec.network);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let Some(plan) = Plan::new(spec, &masks, root, recall)? else {
        return Ok(not_found(spec, started));
    };
    *recalled = plan.recalled.is_some();
    let gate = &mut || {
        if !plan.holds() {
            return Err("the recalled layout no longer holds".to_string());
        }
        gate()
    };
    let programs = seccomp::programs(spec.network)?;
    let rlimits = rlimits(spec);
    // A process started ahead for this run (`prestart.rs`) has its namespaces and the first
    // part of the view already; one that does not fit the plan is ended unused.
    let ahead = if view::mode() == view::Views::Always { None } else { prestart::take() };
    if let Some(mut early) = ahead.filter(|p| p.fits(spec, &plan, root)) {
        let trees = plan.trees.iter().map(|p| idmap::write_tree(p)).collect::<Result<Vec<OwnedFd>, Error>>()?;
        let tree_fds: Vec<RawFd> = trees.iter().map(AsRawFd::as_raw_fd).collect();
        let (argv, env) = (pointers(&plan.argv), pointers(&plan.env));
        let launch = Launch { plan: &plan, masks: &masks, programs, rlimits: &rlimits, root };
        // On this stack until `complete` has reaped the process, as are the plan and `early`.
        let child = early.child(&launch, &argv, &env);
        let mut process = early.launch(&child, &tree_fds)?;
        process.notes.extend(plan.notes.iter().cloned());
        drop(trees);
        return complete(spec, abi, root, started, process, gate);
    }
    let view = view::get(&plan, spec.network, masks.scoped, root);
    let trees = match view {
        Some(_) => Vec::new(),
        None => plan.trees.iter().map(|p| idmap::write_tree(p)).collect::<Result<Vec<OwnedFd>, Error>>()?,
    };
    let tree_fds: Vec<RawFd> = trees.iter().map(AsRawFd::as_raw_fd).collect();

    let (sync_r, sync_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let (out_r, out_w) = pipe()?;
    let (errp_r, errp_w) = pipe()?;
    let (notify, notify_child) = seqpacket()?;
    let (stdin_child, stdin_parent) = if spec.stdin.is_empty() {
        (null_stdin()?, None)
    } else {
        let (r, w) = pipe()?;
        (r, Some(w))
    };
    let (argv, env) = (pointers(&plan.argv), pointers(&plan.env));
    let child = Child {
        plan: &plan,
        masks: &masks,
        programs,
        rlimits: &rlimits,
        trees: &tree_fds,
        fresh: view.as_deref().map(|v| v.fresh.as_slice()),
        drop_to: root.then_some((idmap::UID, idmap::GID)),
        argv: &argv,
        env: &env,
        io: Stdio {
            stdin: stdin_child.as_raw_fd(),
            stdout: out_w.as_raw_fd(),
            stderr: errp_w.as_raw_fd(),
            sync: sync_r.as_raw_fd(),
            err: err_w.as_raw_fd(),
            notify: notify_child.as_raw_fd(),
        },
        sync_w: sync_w.as_raw_fd(),
        cpus: if view.is_some() { crate::apart::whole() } else { None },
    };
    // The child shares our memory until its execve (like posix_spawn: copying a large
    // parent's page tables and tearing the copy down at exec cost milliseconds), on a stack and
    // thread-local area of its own. Dropped after `reaper` (declared below), so after the child
    // is gone on every path.
    let memory = ChildMemory::new()?;
    let hop_memory = if view.is_some() { Some(ChildMemory::new()?) } else { None };
    let pid = match (&view, &hop_memory) {
        (Some(v), Some(hop_memory)) => {
            let pid = AtomicI32::new(0);
            let hop = Hop {
                child: &child,
                user: v.user.as_raw_fd(),
                mnt: v.mnt.as_raw_fd(),
                net: v.net.as_ref().map(AsRawFd::as_raw_fd),
                flags: v.clone_flags(spec.network),
                stack_top: memory.stack_top(),
                tls: memory.tls(),
                pid: &pid,
                away: child.cpus.as_ref().and_then(crate::apart::elsewhere),
            };
            let arg: *mut libc::c_void = (&raw const hop).cast_mut().cast();
            let flags = libc::CLONE_VM | libc::CLONE_SETTLS | libc::SIGCHLD;
            // SAFETY: the hop runs `hop_main` on its own stack and TLS and only reads `hop`
            // and what it points to, alive until it is reaped right here; the command process
            // it clones uses `memory`, which outlives the command (see above).
            let hop_pid = unsafe { libc::clone(hop_main, hop_memory.stack_top(), flags, arg, null_pid(), hop_memory.tls(), null_pid()) };
            if hop_pid < 0 {
                return Err(Error::Namespaces(std::io::Error::from_raw_os_error(errno())));
            }
            let status = Reaper::new(hop_pid).wait();
            if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
                // A command the hop cloned before it failed is killed and reaped; one it cloned
                // without saying so sees the go pipe end and fails at once.
                drop((err_w, out_w, errp_w, sync_w));
                let cloned = pid.load(Ordering::SeqCst);
                if cloned > 0 {
                    drop(Reaper::new(cloned));
                }
                let (stage, step, code) = read_failure(&err_r).unwrap_or((None, 0, 0));
                return Err(Error::Setup { stage: format!("{:?}", stage.unwrap_or(Stage::View)).to_lowercase(), step, errno: code });
            }
            pid.load(Ordering::SeqCst)
        }
        _ => {
            let mut flags = NAMESPACES.iter().fold(0, |f, (flag, _)| f | flag);
            if !spec.network {
                flags |= libc::CLONE_NEWNET;
            }
            let flags = flags | libc::CLONE_VM | libc::CLONE_SETTLS | libc::SIGCHLD;
            let arg: *mut libc::c_void = (&raw const child).cast_mut().cast();
            // SAFETY: the child runs `child_main` on its own stack and TLS and only reads
            // `child` and what it points to, all alive and unmodified until it has exec'd or
            // exited (the parent waits for that on the error pipe, or kills and reaps it
            // through `Reaper`).
            let pid = unsafe { libc::clone(child_main, memory.stack_top(), flags, arg, null_pid(), memory.tls(), null_pid()) };
            if pid < 0 {
                return Err(Error::Namespaces(std::io::Error::from_raw_os_error(errno())));
            }
            pid
        }
    };
    drop((sync_r, err_w, out_w, errp_w, stdin_child, notify_child, trees));
    let reaper = Reaper::new(pid);
    drop(hop_memory);
    let mut notes = plan.notes.clone();
    if let Some(v) = &view {
        notes.push(if v.net.is_some() {
            "mount view prepared once and reused; network namespace (loopback only) shared with other runs of this view".to_string()
        } else {
            "mount view prepared once and reused".to_string()
        });
    }
    let process = Started { reaper, sync_w, err_r, out_r, errp_r, notify, stdin: stdin_parent, maps: view.is_none(), notes };
    complete(spec, abi, root, started, process, gate)
}

/// The pointers of `strings`, then a null: an `execve` argument list.
fn pointers(strings: &[std::ffi::CString]) -> Vec<*const c_char> {
    strings.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect()
}

/// What a process started ahead is given for its run ([`prestart::Prestart::child`]): the
/// plan and the rest the one-shot child would get.
pub(crate) struct Launch<'a> {
    pub plan: &'a Plan,
    pub masks: &'a Masks,
    pub programs: &'a [seccomp::Program],
    pub rlimits: &'a [(libc::__rlimit_resource_t, u64)],
    pub root: bool,
}

/// A command process being set up, and the parent's ends of its pipes.
pub(crate) struct Started {
    pub reaper: Reaper,
    pub sync_w: OwnedFd,
    pub err_r: OwnedFd,
    pub out_r: OwnedFd,
    pub errp_r: OwnedFd,
    /// Where the child sends its seccomp listener (`notify.rs`).
    pub notify: OwnedFd,
    pub stdin: Option<OwnedFd>,
    /// Its id maps are still to be written, then the first go given.
    pub maps: bool,
    pub notes: Vec<String>,
}

/// The rest of a run once its process is started: the id maps if still to be written, the
/// gate, the last go, then the run supervised to its end and reported.
fn complete(spec: &Spec, abi: u32, root: bool, started: Instant, process: Started, gate: &mut dyn FnMut() -> Result<(), String>) -> Result<Run, Error> {
    let Started { mut reaper, sync_w, err_r, out_r, errp_r, notify, stdin: stdin_parent, maps, notes } = process;
    let pid = reaper.pid;
    if maps {
        write_id_maps(pid, root)?;
    }
    // Held until the run is over, then released off the caller's path (see `release_later`).
    let mount_ns = std::fs::File::open(format!("/proc/{pid}/ns/mnt")).ok();
    // Two go bytes: the id maps are written (a one-shot child waits for them before it
    // builds), then the gate passed (every child waits for it under its seccomp filters,
    // just before exec).
    if maps {
        go(&sync_w)?;
    }
    if let Err(why) = gate() {
        // The child reads end-of-file instead of its go and exits; the reaper makes sure.
        drop(sync_w);
        drop(reaper);
        return Err(Error::Gate(why));
    }
    if spec.cancel.as_ref().is_some_and(crate::Cancel::is_cancelled) {
        // As for a refusing gate: the child reads end-of-file and exits without starting.
        drop(sync_w);
        drop(reaper);
        return Err(Error::Cancelled);
    }
    go(&sync_w)?;
    drop(sync_w);

    // The init (`init.rs`) says the command is running, or why it is not; end of file: it
    // was killed before it could say (the run then reports how it ended).
    match read_failure(&err_r) {
        None | Some((Some(Stage::Running), ..)) => {}
        Some((stage, step, code)) => {
            reaper.wait();
            if stage == Some(Stage::Exec) && (code == libc::ENOENT || code == libc::EACCES || code == libc::ENOEXEC) {
                return Ok(exec_failed(spec, code, started));
            }
            return Err(Error::Setup { stage: format!("{:?}", stage.unwrap_or(Stage::Stdio)).to_lowercase(), step, errno: code });
        }
    }

    // Sent before the child waited for its last go: here now that the command has started.
    let listener = crate::notify::receive(&notify);
    drop(notify);
    let deadline = started + spec.limits.timeout;
    let pipes = Pipes { out: out_r, err: errp_r, stdin: stdin_parent, listener };
    let watch = supervise(pid, pipes, &spec.stdin, deadline, spec.cancel.as_ref(), spec.limits.output_bytes)?;
    let init = reaper.wait();
    // The command's own status, as its init saw it; the init's when it was killed first.
    let status = match read_failure(&err_r) {
        Some((Some(Stage::Ended), status, _)) => status as libc::c_int,
        _ => init,
    };
    drop(err_r);
    if let Some(ns) = mount_ns {
        release_later(OwnedFd::from(ns));
    }
    let (exit_code, signal) = decode(status);
    let mut namespaces: Vec<String> = NAMESPACES.iter().map(|(_, n)| (*n).to_string()).collect();
    if !spec.network {
        namespaces.push("net".into());
    }
    let mut run = Run {
        exit_code,
        signal,
        timed_out: watch.timed_out,
        cancelled: watch.cancelled,
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        stdout: watch.stdout,
        stderr: watch.stderr,
        denials: Vec::new(),
        sandbox: SandboxInfo {
            backend: "native".into(),
            landlock_abi: Some(abi),
            seccomp: true,
            namespaces,
            uid: Some(command_uid(root)),
            notes,
        },
    };
    run.denials = watch.refusals.denials();
    run.denials.extend(denials::infer(spec, &run));
    Ok(run)
}

/// Drops a finished run's namespace descriptor on a background thread. Tearing a mount
/// namespace down waits for an RCU grace period; holding the namespace until the command has
/// been reaped moves that wait off the command's exit and the caller's path. Without the
/// thread, the descriptor is dropped here.
fn release_later(fd: OwnedFd) {
    if let Some(tx) = releaser()
        && let Err(mpsc::SendError(fd)) = tx.send(fd)
    {
        drop(fd);
    }
}

/// The thread that [`release_later`] hands descriptors to, started on first use (a one-shot
/// caller starts it ahead, off its path: `prestart.rs`).
pub(crate) fn releaser() -> Option<&'static mpsc::Sender<OwnedFd>> {
    static RELEASER: OnceLock<Option<mpsc::Sender<OwnedFd>>> = OnceLock::new();
    RELEASER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<OwnedFd>();
            let spawned = std::thread::Builder::new().name("warden-ns-release".into()).spawn(move || rx.into_iter().for_each(drop));
            spawned.ok().map(|_| tx)
        })
        .as_ref()
}

/// The host uid the command runs as.
fn command_uid(root: bool) -> u32 {
    if root {
        return idmap::UID;
    }
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() }
}

/// The child's entry on its own stack: sets up the sandbox and execs. Never returns.
/// The hop's entry on its own stack (see `view_child::hop`). Never returns.
extern "C" fn hop_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Hop` that `run` passed to clone; `run` reaps the hop before it
    // drops it.
    unsafe { crate::view_child::hop(&*(arg as *const Hop<'_>)) }
}

/// Writes one go byte to the child.
pub(crate) fn go(sync_w: &OwnedFd) -> Result<(), Error> {
    // SAFETY: writes one byte from a static buffer to our pipe.
    if unsafe { libc::write(sync_w.as_raw_fd(), b"1".as_ptr().cast(), 1) } != 1 {
        return Err(Error::Io(std::io::Error::last_os_error()));
    }
    Ok(())
}

fn null_pid() -> *mut libc::pid_t {
    std::ptr::null_mut()
}

extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Child` that `run` passed to clone; it outlives this process's use
    // of the shared memory (see the clone call).
    unsafe { crate::child::enter(&*(arg as *const Child<'_>)) }
}

/// Kills and reaps the child if the run is abandoned on an error path.
pub(crate) struct Reaper {
    pub(crate) pid: libc::pid_t,
    reaped: bool,
}

impl Reaper {
    pub(crate) fn new(pid: libc::pid_t) -> Reaper {
        Reaper { pid, reaped: false }
    }

    pub(crate) fn wait(&mut self) -> libc::c_int {
        let mut status = 0;
        loop {
            // SAFETY: waits for our own child; `status` is a valid out-pointer.
            let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if r >= 0 || errno() != libc::EINTR {
                break;
            }
        }
        self.reaped = true;
        status
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if !self.reaped {
            // SAFETY: signals and reaps our own child.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
            self.wait();
        }
    }
}

/// The command's rlimits. RLIMIT_NPROC holds for every caller: a root caller's command runs
/// as an unprivileged uid in its own user namespace, where the kernel counts its processes.
fn rlimits(spec: &Spec) -> Vec<(libc::__rlimit_resource_t, u64)> {
    let l = &spec.limits;
    let mut v = vec![(libc::RLIMIT_CORE, 0)];
    if let Some(m) = l.memory {
        v.push((libc::RLIMIT_DATA, m));
    }
    if let Some(f) = l.file_size {
        v.push((libc::RLIMIT_FSIZE, f));
    }
    if let Some(n) = l.open_files {
        v.push((libc::RLIMIT_NOFILE, n));
    }
    if let Some(p) = l.processes {
        v.push((libc::RLIMIT_NPROC, p));
    }
    v
}

/// Maps the caller's uid and gid to themselves in the child's user namespace. For a root
/// caller (`root`), also the unprivileged uid and gid the child switches to before exec; the
/// child then drops its supplementary groups, so `setgroups` stays allowed.
pub(crate) fn write_id_maps(pid: libc::pid_t, root: bool) -> Result<(), Error> {
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let base = format!("/proc/{pid}");
    let w = |file: &str, text: String| {
        std::fs::write(format!("{base}/{file}"), text).map_err(|e| Error::Setup { stage: format!("{file}: {e}"), step: 0, errno: e.raw_os_error().unwrap_or(0) })
    };
    let map = |id: u32, to: u32| if root && id != to { format!("{id} {id} 1\n{to} {to} 1\n") } else { format!("{id} {id} 1\n") };
    if !root {
        w("setgroups", "deny".into())?;
    }
    w("uid_map", map(uid, idmap::UID))?;
    w("gid_map", map(gid, idmap::GID))?;
    Ok(())
}

/// Reads the child's failure report; `None` when the pipe closed on a successful exec.
pub(crate) fn read_failure(err: &OwnedFd) -> Option<(Option<Stage>, usize, i32)> {
    let mut buf = [0u8; 12];
    let mut got = 0;
    while got < buf.len() {
        let rest = buf.get_mut(got..)?;
        // SAFETY: reads into the unfilled tail of a stack buffer.
        let n = unsafe { libc::read(err.as_raw_fd(), rest.as_mut_ptr().cast(), rest.len()) };
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    if got < buf.len() {
        return None;
    }
    let word = |i: usize| buf.get(i..i + 4).and_then(|b| b.try_into().ok()).map(u32::from_ne_bytes).unwrap_or(0);
    Some((Stage::from_u32(word(0)), word(4) as usize, word(8) as i32))
}

fn decode(status: libc::c_int) -> (Option<i32>, Option<String>) {
    if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(signal_name(libc::WTERMSIG(status))))
    } else {
        (None, None)
    }
}

/// `SIGKILL`, `SIGSEGV`, ... (or `SIG<n>`).
pub(crate) fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("SIG{sig}"),
    };
    name.to_string()
}

struct Watch {
    stdout: Stream,
    stderr: Stream,
    timed_out: bool,
    cancelled: bool,
    refusals: crate::notify::Refusals,
}

/// The parent's ends of a command's standard streams.
struct Pipes {
    out: OwnedFd,
    err: OwnedFd,
    stdin: Option<OwnedFd>,
    /// The seccomp listener, answered as its notifications come (`notify.rs`).
    listener: Option<OwnedFd>,
}

/// Pumps stdin, captures stdout/stderr, and kills the whole pid namespace at the deadline or
/// when `cancel` fires (its descriptor is polled with the rest: no wakeups of its own).
fn supervise(pid: libc::pid_t, pipes: Pipes, input: &[u8], deadline: Instant, cancel: Option<&crate::Cancel>, cap: usize) -> Result<Watch, Error> {
    let Pipes { out, err, mut stdin, mut listener } = pipes;
    let mut refusals = crate::notify::Refusals::default();
    // SAFETY: pidfd_open on our own child.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0u32) };
    if pidfd < 0 {
        return Err(Error::Io(std::io::Error::last_os_error()));
    }
    // SAFETY: a fresh descriptor we own.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) };
    // The output limit covers both streams together: half each.
    let mut caps = [Capture::new(cap / 2), Capture::new(cap - cap / 2)];
    let mut open = [Some(out), Some(err)];
    let mut written = 0usize;
    let mut exited = false;
    let mut timed_out = false;
    let mut cancelled = false;
    let mut grace: Option<Instant> = None;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let now = Instant::now();
        let running = !exited && !timed_out && !cancelled;
        if running && now >= deadline {
            // SAFETY: SIGKILL to our child, pid 1 of its namespace: the kernel kills the rest.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            timed_out = true;
        } else if running && cancel.is_some_and(crate::Cancel::is_cancelled) {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            cancelled = true;
        }
        if exited && open.iter().all(Option::is_none) {
            break;
        }
        // Once the command has exited, its pipes close as the namespace is torn down; do not
        // wait forever on a writer that escaped (there should be none).
        if exited && grace.is_some_and(|g| now >= g) {
            break;
        }
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(4);
        let mut kinds: Vec<usize> = Vec::with_capacity(4);
        for (i, fd) in open.iter().enumerate() {
            if let Some(fd) = fd {
                fds.push(libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 });
                kinds.push(i);
            }
        }
        if !exited {
            fds.push(libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 });
            kinds.push(2);
        }
        if let Some(w) = &stdin {
            fds.push(libc::pollfd { fd: w.as_raw_fd(), events: libc::POLLOUT, revents: 0 });
            kinds.push(3);
        }
        if let Some(c) = cancel
            && !exited
            && !timed_out
            && !cancelled
        {
            fds.push(libc::pollfd { fd: c.fd(), events: libc::POLLIN, revents: 0 });
            kinds.push(4);
        }
        if let Some(l) = &listener {
            fds.push(libc::pollfd { fd: l.as_raw_fd(), events: libc::POLLIN, revents: 0 });
            kinds.push(5);
        }
        let until = if exited {
            grace.unwrap_or(now)
        } else if timed_out || cancelled {
            now + Duration::from_secs(5)
        } else {
            deadline
        };
        let wait = until.saturating_duration_since(now).as_millis().min(1000) as libc::c_int;
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait.max(1)) };
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return Err(Error::Io(std::io::Error::last_os_error()));
        }
        for (pfd, kind) in fds.iter().zip(&kinds) {
            if pfd.revents == 0 {
                continue;
            }
            match kind {
                0 | 1 => {
                    // SAFETY: reads into our buffer from a pipe we own.
                    let r = unsafe { libc::read(pfd.fd, buf.as_mut_ptr().cast(), buf.len()) };
                    if r > 0 {
                        if let (Some(c), Some(b)) = (caps.get_mut(*kind), buf.get(..r as usize)) {
                            c.push(b);
                        }
                    } else if (r == 0 || errno() != libc::EINTR)
                        && let Some(slot) = open.get_mut(*kind)
                    {
                        *slot = None;
                    }
                }
                2 => {
                    exited = true;
                    grace = Some(Instant::now() + Duration::from_millis(500));
                }
                // The handle fired: the top of the loop kills.
                4 => {}
                // A refused system call waits for its answer; hung up: no process is left
                // under the filter.
                5 => {
                    let answered = pfd.revents & libc::POLLIN != 0 && listener.as_ref().is_some_and(|l| refusals.answer(l));
                    if !answered {
                        listener = None;
                    }
                }
                _ => {
                    let rest = input.get(written..).unwrap_or_default();
                    let r = if rest.is_empty() {
                        -1
                    } else {
                        // SAFETY: writes from the caller's buffer to a pipe we own.
                        unsafe { libc::write(pfd.fd, rest.as_ptr().cast(), rest.len().min(64 * 1024)) }
                    };
                    if r > 0 {
                        written += r as usize;
                    }
                    if r <= 0 || written >= input.len() {
                        stdin = None;
                    }
                }
            }
        }
    }
    let [o, e] = caps;
    Ok(Watch { stdout: o.finish(), stderr: e.finish(), timed_out, cancelled, refusals })
}

fn not_found(spec: &Spec, started: Instant) -> Run {
    let name = spec.argv.first().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default();
    failed_run(format!("warden: {name}: command not found in the sandbox's view\n"), 127, started)
}

fn exec_failed(spec: &Spec, code: i32, started: Instant) -> Run {
    let name = spec.argv.first().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default();
    let err = std::io::Error::from_raw_os_error(code);
    failed_run(format!("warden: {name}: {err}\n"), if code == libc::ENOENT { 127 } else { 126 }, started)
}

fn failed_run(text: String, code: i32, started: Instant) -> Run {
    Run {
        exit_code: Some(code),
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        stderr: Stream { bytes: text.len() as u64, text, truncated: false },
        sandbox: SandboxInfo { backend: "native".into(), ..SandboxInfo::default() },
        ..Run::default()
    }
}
