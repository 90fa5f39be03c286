//! The child's half of the setup, between `clone` and `execve`.
//!
//! Everything here runs in a freshly cloned process of a possibly multi-threaded parent, so it
//! is async-signal-safe: raw system calls on memory the parent prepared, no allocation, no
//! locks, no printing. It shares the parent's memory until execve (`CLONE_VM`, on its own
//! stack and thread-local area), so it writes nothing but its own stack. A failure writes `(stage, step, errno)` to the error pipe and exits.
//!
//! Order: stdio, wait for the parent's go (uid/gid maps written), no controlling terminal and
//! a process group of its own, mount view, pivot_root, hostname, cwd, no_new_privs + Landlock,
//! drop every capability (for a root caller: after switching to the unprivileged uid and gid,
//! with no supplementary group), rlimits, descriptors above 2 marked close-on-exec, seccomp
//! (last), then the command started as pid 2 under this process as its init (`init.rs`). In a prepared view (`view.rs`) the mount view, pivot_root and id maps are
//! the view's: the run mounts only its fresh parts, and waits for the go just before execve.
//!
//! Credentials change through raw system calls: glibc's `setresuid` and friends signal every
//! thread the parent had, which the child does not.

use std::ffi::{CStr, CString, c_char};
use std::os::fd::RawFd;

use crate::landlock::Masks;
use crate::plan::{Plan, Step};
use crate::seccomp::Program;

/// Where the setup failed (sent to the parent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Stage {
    Stdio = 1,
    Sync,
    Private,
    Staging,
    Step,
    Pivot,
    Hostname,
    Cwd,
    NoNewPrivs,
    Landlock,
    Caps,
    Rlimit,
    Session,
    Fds,
    Seccomp,
    Exec,
    View,
    /// The init could not start the command process (`init.rs`).
    Init,
    /// Not a failure: the command has exec'd, as pid 2 (`init.rs`).
    Running,
    /// Not a failure: the command's wait status (`init.rs`).
    Ended,
}

impl Stage {
    pub(crate) fn from_u32(v: u32) -> Option<Stage> {
        use Stage::*;
        [Stdio, Sync, Private, Staging, Step, Pivot, Hostname, Cwd, NoNewPrivs, Landlock, Caps, Rlimit, Session, Fds, Seccomp, Exec, View, Init, Running, Ended]
            .into_iter()
            .find(|s| *s as u32 == v)
    }
}

/// What the child needs; all of it prepared by the parent before `clone`.
pub(crate) struct Child<'a> {
    pub plan: &'a Plan,
    pub masks: &'a Masks,
    pub programs: &'a [Program],
    pub rlimits: &'a [(libc::__rlimit_resource_t, u64)],
    /// The parent's detached trees that `Step::Attach` names.
    pub trees: &'a [RawFd],
    /// Running in a prepared view (see `view.rs`): only these per-run mounts are made, the
    /// view already holds the rest.
    pub fresh: Option<&'a [crate::view::Fresh]>,
    /// Root caller: the unprivileged uid and gid the command runs as.
    pub drop_to: Option<(u32, u32)>,
    pub argv: &'a [*const c_char],
    pub env: &'a [*const c_char],
    pub io: Stdio,
    /// The go pipe's write end: this process's copy is closed first, so that the read sees the
    /// end of the pipe when the parent gives up (instead of waiting on its own copy).
    pub sync_w: RawFd,
    /// The processor set to take back first: the process was placed away from the parent's
    /// processor (`apart::place`).
    pub cpus: Option<libc::cpu_set_t>,
}

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
const CAP_VERSION_3: u32 = 0x2008_0522;
/// NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE, each locked, and KEEP_CAPS locked off.
const SECUREBITS: libc::c_ulong = 0b1110_1111;
const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
const SECCOMP_SET_MODE_FILTER: libc::c_uint = 1;
pub(crate) const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;

pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Reports the failure to the parent and exits. Never returns.
pub(crate) fn fail(err: RawFd, stage: Stage, step: usize, code: i32) -> ! {
    let mut msg = [0u8; 12];
    msg[..4].copy_from_slice(&(stage as u32).to_ne_bytes());
    msg[4..8].copy_from_slice(&u32::try_from(step).unwrap_or(u32::MAX).to_ne_bytes());
    msg[8..].copy_from_slice(&code.to_ne_bytes());
    // SAFETY: writes 12 bytes from a stack buffer to a descriptor we own, then exits without
    // running any destructor or atexit handler of the copied parent state.
    unsafe {
        libc::write(err, msg.as_ptr().cast(), msg.len());
        libc::_exit(126)
    }
}

pub(crate) fn p(c: &CStr) -> *const c_char {
    c.as_ptr()
}

/// Runs the child's setup and execs the command. Never returns.
///
/// # Safety
/// Must be called only in the child right after `clone`, with every pointer in `c` valid
/// (they point into the parent's memory, which the child shares until execve).
pub(crate) unsafe fn enter(c: &Child) -> ! {
    // SAFETY: the caller's contract, passed on.
    unsafe {
        if let Some(cpus) = &c.cpus {
            crate::apart::set_own(cpus);
        }
        // The first go says the id maps are written. In a prepared view they exist already:
        // the only go is the last one (see `finish`), so the setup overlaps the parent's work.
        start(&[c.sync_w], &c.io, c.fresh.is_none());
        match c.fresh {
            None => build(c.plan, c.trees, c.io.err),
            Some(ops) => crate::view_child::fresh(ops, c.io.err),
        }
        finish(c)
    }
}

/// Checks a raw system call's result: a negative one reports `(stage, step, errno)` and exits.
macro_rules! check {
    ($err:expr, $e:expr, $stage:expr) => {
        if ($e) < 0 {
            fail($err, $stage, 0, errno())
        }
    };
    ($err:expr, $e:expr, $stage:expr, $step:expr) => {
        if ($e) < 0 {
            fail($err, $stage, $step, errno())
        }
    };
}
pub(crate) use check;

/// The command's standard descriptors, and the pipes the parent talks to it through.
#[derive(Clone, Copy)]
pub(crate) struct Stdio {
    pub stdin: RawFd,
    pub stdout: RawFd,
    pub stderr: RawFd,
    /// The go pipe's read end.
    pub sync: RawFd,
    /// The error pipe's write end.
    pub err: RawFd,
    /// Where the seccomp listener is sent (`notify.rs`).
    pub notify: RawFd,
}

/// Closes this process's copies of the parent's ends (`close`: then a read sees the end of a
/// pipe the parent gave up), standard descriptors, default signal dispositions, the parent's
/// first go when `wait`, no controlling terminal and a process group of its own.
///
/// # Safety
/// Same as [`enter`].
pub(crate) unsafe fn start(close: &[RawFd], io: &Stdio, wait: bool) {
    // SAFETY: (the whole block) raw system calls on descriptors and buffers the parent prepared
    // (see module docs).
    unsafe {
        for fd in close {
            libc::close(*fd);
        }
        check!(io.err, libc::dup2(io.stdin, 0), Stage::Stdio);
        check!(io.err, libc::dup2(io.stdout, 1), Stage::Stdio);
        check!(io.err, libc::dup2(io.stderr, 2), Stage::Stdio);
        // Signals: an ignored disposition survives exec (Rust ignores SIGPIPE): reset them all.
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        for sig in 1..libc::SIGRTMIN() {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        if wait {
            wait_go(io.sync, io.err);
        }
        // No controlling terminal, own process group. Not setsid: a new session costs a
        // scheduler autogroup (0.5-2 ms here). TIOCNOTTY from a process that is not a session
        // leader only clears its own terminal; /dev/tty (the host's, before the view replaces
        // it) then fails with ENXIO, for its children too, and the group is not the terminal's
        // foreground one.
        let tty = libc::open(c"/dev/tty".as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if tty >= 0 {
            let r = libc::ioctl(tty, libc::TIOCNOTTY);
            libc::close(tty);
            check!(io.err, r, Stage::Session);
        }
        check!(io.err, libc::setpgid(0, 0), Stage::Session);
    }
}

/// Blocks until the parent writes its go byte on `sync`.
///
/// # Safety
/// Same as [`enter`].
pub(crate) unsafe fn wait_go(sync: RawFd, err: RawFd) {
    let mut go = 0u8;
    // SAFETY: reads one byte into a stack variable.
    if unsafe { libc::read(sync, (&raw mut go).cast(), 1) } != 1 {
        fail(err, Stage::Sync, 0, errno());
    }
}

/// Where a plan's view is built: the staging directory, its cover file and folder, and the
/// new root beneath it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Staging {
    pub dir: CString,
    pub cover_file: CString,
    pub cover_dir: CString,
    pub root: CString,
}

/// Builds the mount view of `plan` and makes it the root: private propagation, the staging
/// tmpfs, every step, pivot_root, the old root detached, the new root read-only.
///
/// # Safety
/// Same as [`enter`]; `trees` are the descriptors [`Step::Attach`] names.
pub(crate) unsafe fn build(plan: &Plan, trees: &[RawFd], err: RawFd) {
    // SAFETY: the caller's contract, passed on.
    unsafe {
        stage(&plan.staging, err);
        steps(&plan.steps, 0, trees, err);
        pivot(&plan.staging.root, err);
    }
}

/// Private propagation, the staging tmpfs with the cover file and folder, the new root's
/// tmpfs.
///
/// # Safety
/// Same as [`enter`].
pub(crate) unsafe fn stage(s: &Staging, err: RawFd) {
    let null = std::ptr::null::<c_char>();
    // SAFETY: (the whole block) raw system calls on C strings the parent prepared.
    unsafe {
        check!(err, libc::mount(null, c"/".as_ptr(), null, libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()), Stage::Private);
        let tmpfs = c"tmpfs".as_ptr();
        let setup = libc::MS_NOSUID | libc::MS_NODEV;
        check!(err, libc::mount(tmpfs, p(&s.dir), tmpfs, setup, c"mode=0755,size=1m".as_ptr().cast()), Stage::Staging);
        let fd = libc::open(p(&s.cover_file), libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0);
        check!(err, fd, Stage::Staging);
        libc::close(fd);
        check!(err, libc::mkdir(p(&s.cover_dir), 0), Stage::Staging);
        check!(err, libc::mkdir(p(&s.root), 0o755), Stage::Staging);
        check!(err, libc::mount(tmpfs, p(&s.root), tmpfs, setup, c"mode=0755".as_ptr().cast()), Stage::Staging);
    }
}

/// Makes `steps` (numbered from `first` in failure reports); `trees` are the descriptors
/// [`Step::Attach`] names.
///
/// # Safety
/// Same as [`enter`].
pub(crate) unsafe fn steps(steps: &[Step], first: usize, trees: &[RawFd], err: RawFd) {
    let null = std::ptr::null::<c_char>();
    let tmpfs = c"tmpfs".as_ptr();
    let setup = libc::MS_NOSUID | libc::MS_NODEV;
    // SAFETY: (the whole block) raw system calls on C strings the parent prepared.
    unsafe {
        for (i, step) in steps.iter().enumerate() {
            let r = match step {
                Step::Mkdir(d) => mkdir(d),
                Step::Touch(f) => touch(f),
                Step::Symlink { target, link } => libc::symlink(p(target), p(link)),
                Step::Bind { src, dst, attrs } => {
                    let r = libc::mount(p(src), p(dst), null, libc::MS_BIND, std::ptr::null());
                    match attrs {
                        Some(set) if r == 0 => crate::attr::add(p(dst), *set),
                        _ => r,
                    }
                }
                Step::Tmpfs { dst, data } => libc::mount(tmpfs, p(dst), tmpfs, setup, data.as_ptr().cast()),
                Step::Attach { tree, dst } => {
                    let fd = trees.get(*tree).copied().unwrap_or(-1);
                    libc::syscall(libc::SYS_move_mount, fd, c"".as_ptr(), libc::AT_FDCWD, p(dst), MOVE_MOUNT_F_EMPTY_PATH) as libc::c_int
                }
                Step::Proc(dst) => proc_mount(dst),
            };
            check!(err, r, Stage::Step, first + i);
        }
    }
}

/// Makes `root` the root: pivot_root, the old root detached, the new root read-only.
///
/// # Safety
/// Same as [`enter`].
pub(crate) unsafe fn pivot(root: &CStr, err: RawFd) {
    let null = std::ptr::null::<c_char>();
    // SAFETY: (the whole block) raw system calls on C strings the parent prepared.
    unsafe {
        check!(err, libc::chdir(p(root)), Stage::Pivot);
        check!(err, libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()), Stage::Pivot);
        check!(err, libc::umount2(c".".as_ptr(), libc::MNT_DETACH), Stage::Pivot);
        check!(err, libc::chdir(c"/".as_ptr()), Stage::Pivot);
        let ro_root = libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
        check!(err, libc::mount(null, c"/".as_ptr(), null, ro_root, std::ptr::null()), Stage::Pivot);
    }
}

/// `mkdir` (mode 0755); an existing directory is fine.
///
/// # Safety
/// `d` is a valid C string.
pub(crate) unsafe fn mkdir(d: &CStr) -> libc::c_int {
    // SAFETY: the caller's contract.
    let r = unsafe { libc::mkdir(p(d), 0o755) };
    if r < 0 && errno() == libc::EEXIST { 0 } else { r }
}

/// Creates an empty file (mode 0644) without following a symlink; an existing one is fine.
///
/// # Safety
/// `f` is a valid C string.
pub(crate) unsafe fn touch(f: &CStr) -> libc::c_int {
    // SAFETY: the caller's contract; closes only the descriptor it opened.
    unsafe {
        let fd = libc::open(p(f), libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW, 0o644);
        if fd >= 0 {
            libc::close(fd);
        }
        fd
    }
}

/// Mounts the current pid namespace's proc at `dst` (nosuid, nodev, noexec).
///
/// # Safety
/// `dst` is a valid C string.
pub(crate) unsafe fn proc_mount(dst: &CStr) -> libc::c_int {
    let proc_ = c"proc".as_ptr();
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    // Only the processes the viewer may trace: not the sandbox's init (`init.rs`).
    let data = c"hidepid=ptraceable";
    // SAFETY: the caller's contract; the other strings are literals.
    unsafe { libc::mount(proc_, p(dst), proc_, flags, data.as_ptr().cast()) }
}

/// Hostname, working directory, no_new_privs, Landlock, capabilities and credentials,
/// rlimits, descriptors, seccomp, then execve.
///
/// # Safety
/// Same as [`enter`].
pub(crate) unsafe fn finish(c: &Child) -> ! {
    // SAFETY: (the whole block) raw system calls on C strings and buffers the parent prepared and
    // the child's copy of memory keeps alive; no allocation, no locks (see module docs).
    unsafe {
        let plan = c.plan;
        check!(c.io.err, libc::sethostname(c"warden".as_ptr(), 6), Stage::Hostname);
        check!(c.io.err, libc::chdir(p(&plan.cwd)), Stage::Cwd);

        check!(c.io.err, libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), Stage::NoNewPrivs);
        landlock(c);

        check!(c.io.err, libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0), Stage::Caps);
        // Capabilities are numbered from 0 without gaps: EINVAL means past the kernel's last.
        for cap in 0..64 {
            let r = libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
            if r < 0 && errno() == libc::EINVAL && cap > 0 {
                break;
            }
            if r < 0 {
                fail(c.io.err, Stage::Caps, cap as usize, errno());
            }
        }
        check!(c.io.err, libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), Stage::Caps);
        if let Some((uid, gid)) = c.drop_to {
            check!(c.io.err, libc::syscall(libc::SYS_setgroups, 0usize, std::ptr::null::<libc::gid_t>()), Stage::Caps, 100);
            check!(c.io.err, libc::syscall(libc::SYS_setresgid, gid, gid, gid), Stage::Caps, 101);
            check!(c.io.err, libc::syscall(libc::SYS_setresuid, uid, uid, uid), Stage::Caps, 102);
        }
        // The command dies with warden: a killed warden cannot enforce the timeout or reap it.
        // Set after the last credential change (which would clear it); a parent that died
        // before this line has closed its end of the error pipe, which poll reports.
        check!(c.io.err, libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0), Stage::Caps, 103);
        let mut pfd = libc::pollfd { fd: c.io.err, events: 0, revents: 0 };
        if libc::poll(&raw mut pfd, 1, 0) > 0 && pfd.revents & libc::POLLERR != 0 {
            libc::_exit(126);
        }
        let mut header = CapHeader { version: CAP_VERSION_3, pid: 0 };
        let data = [CapData { effective: 0, permitted: 0, inheritable: 0 }; 2];
        check!(c.io.err, libc::syscall(libc::SYS_capset, &raw mut header, data.as_ptr()), Stage::Caps);

        for (i, (resource, value)) in c.rlimits.iter().enumerate() {
            let lim = libc::rlimit { rlim_cur: *value, rlim_max: *value };
            check!(c.io.err, libc::setrlimit(*resource, &lim), Stage::Rlimit, i);
        }
        check!(c.io.err, libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC), Stage::Fds);

        for (i, prog) in c.programs.iter().enumerate() {
            let fprog = libc::sock_fprog { len: u16::try_from(prog.len()).unwrap_or(0), filter: prog.as_ptr().cast_mut() };
            // The first filter's refusals go to a listener, which the parent answers (and
            // reports: `notify.rs`); this process keeps no copy of it, nor does the command.
            let flags = if i == 0 { libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32 } else { 0 };
            let r = libc::syscall(libc::SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &raw const fprog);
            check!(c.io.err, r, Stage::Seccomp, i);
            if i == 0 {
                let listener = r as libc::c_int;
                check!(c.io.err, crate::notify::send(c.io.notify, listener), Stage::Seccomp, NOTIFY);
                libc::close(listener);
                libc::close(c.io.notify);
            }
        }
        // The last go, under the filters already (their loading and JIT overlap the parent's
        // gate; the wait needs only read, write and exit): the parent's gate passed (its
        // decision record is on disk) and it holds the run's mount namespace (see
        // `spawn::release_later`). End of file instead: exit. Nothing but the command follows,
        // started as pid 2 under this process as its init.
        wait_go(c.io.sync, c.io.err);
        crate::init::run(c)
    }
}

/// The step a failure to hand the seccomp listener to the parent is reported at.
const NOTIFY: usize = 100;

/// Creates the Landlock ruleset, adds the plan's rules and restricts the process.
///
/// # Safety
/// Same as [`enter`].
unsafe fn landlock(c: &Child) {
    let m = c.masks;
    let attr = RulesetAttr { handled_access_fs: m.handled_fs, handled_access_net: m.handled_net, scoped: m.scoped };
    // SAFETY: raw Landlock system calls on a stack struct whose size we pass explicitly (the
    // ABI's size), and on C strings the parent prepared.
    unsafe {
        let ruleset = libc::syscall(libc::SYS_landlock_create_ruleset, &raw const attr, m.attr_size(), 0u32);
        if ruleset < 0 {
            fail(c.io.err, Stage::Landlock, 0, errno());
        }
        let ruleset = ruleset as libc::c_int;
        for (i, rule) in c.plan.rules.iter().enumerate() {
            let fd = libc::open(rule.path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            if fd < 0 {
                if errno() == libc::ENOENT {
                    continue;
                }
                fail(c.io.err, Stage::Landlock, i + 1, errno());
            }
            let beneath = PathBeneath { allowed_access: rule.access, parent_fd: fd };
            let r = libc::syscall(libc::SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &raw const beneath, 0u32);
            if r < 0 {
                fail(c.io.err, Stage::Landlock, i + 1, errno());
            }
            libc::close(fd);
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) < 0 {
            fail(c.io.err, Stage::Landlock, usize::MAX, errno());
        }
        libc::close(ruleset);
    }
}

