//! Other processes and what this one inherits: signals and ptrace against a `sleep` the test
//! started, its `/proc` entries, the environment and descriptors warden was started with.

use super::{Attack, Case, case, py, reached};
use crate::procs::Victim;

fn victim(fx: &crate::fixture::Fixture) -> Result<Victim, String> {
    Victim::start(
        &format!("victim-{}", fx.secret("cmdline")),
        &fx.secret("environ"),
    )
}

pub fn cases() -> Vec<Case> {
    vec![
        case("signal-kill-9", |fx| {
            let mut v = victim(fx)?;
            let pid = v.pid().to_string();
            Ok(
                Attack::new(&"kill -9 PID; kill -KILL PID; echo END".replace("PID", &pid))
                    .deny("proc.signal", &pid)
                    .settle(100)
                    .check(move |_, out| reached(out, "END").and(v.assert_untouched())),
            )
        }),
        case("signal-stop", |fx| {
            let mut v = victim(fx)?;
            let pid = v.pid().to_string();
            Ok(Attack::new(
                &"kill -STOP PID; kill -TERM PID; kill -HUP PID; echo END".replace("PID", &pid),
            )
            .deny("proc.signal", &pid)
            .settle(100)
            .check(move |_, out| reached(out, "END").and(v.assert_untouched())))
        }),
        case("ptrace-attach", |fx| {
            let mut v = victim(fx)?;
            let pid = v.pid().to_string();
            let code = r#"import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
r = libc.ptrace(16, PID, None, None)
print("attach", r, ctypes.get_errno())
if r == 0:
    os.waitpid(PID, 0)
    os.kill(PID, signal.SIGKILL)
r = libc.ptrace(0x4206, PID, None, None)
print("seize", r, ctypes.get_errno())
print("END")"#
                .replace("PID", &pid);
            Ok(Attack::new(&format!("{}; timeout 5 gdb -p {pid} -batch -ex kill </dev/null >/dev/null 2>&1; echo gdb $?", py(&code)))
                .deny("proc.ptrace", &pid)
                .deny("syscall", "ptrace")
                .settle(100)
                .check(move |_, out| reached(out, "END").and(v.assert_untouched())))
        }),
        case("process-vm-readv", |fx| {
            let mut v = victim(fx)?;
            let pid = v.pid().to_string();
            let code = r#"import ctypes
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(64)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
remote = iovec(0x400000, 64)
r = libc.process_vm_readv(PID, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
print("readv", r, ctypes.get_errno())
print("END")"#
                .replace("PID", &pid);
            Ok(Attack::new(&py(&code))
                .deny("proc.ptrace", &pid)
                .deny("syscall", "process_vm_readv")
                .check(move |_, out| {
                    reached(out, "END")?;
                    if out
                        .stdout
                        .lines()
                        .any(|l| l.starts_with("readv ") && !l.starts_with("readv -1"))
                    {
                        return Err(format!(
                            "process_vm_readv on the host victim succeeded: {}",
                            out.excerpt()
                        ));
                    }
                    v.assert_untouched()
                }))
        }),
        case("proc-victim-environ", |fx| {
            let mut v = victim(fx)?;
            let pid = v.pid().to_string();
            Ok(Attack::new(
                &"cat /proc/PID/environ; tr '\\0' '\\n' < /proc/PID/environ > {ws}/loot.txt; cat /proc/PID/cmdline; echo END"
                    .replace("PID", &pid),
            )
            .deny("fs.read", &format!("/proc/{pid}"))
            .check(move |_, out| reached(out, "END").and(v.assert_untouched())))
        }),
        case("proc-scan-all", |fx| {
            let mut v = victim(fx)?;
            Ok(Attack::new(
                "for p in /proc/[0-9]*; do cat $p/cmdline $p/environ 2>/dev/null; echo; done; ps -eo pid,args 2>/dev/null; ls /proc/*/fd 2>/dev/null | head -c 0; echo END",
            )
            .deny("fs.read", "/proc/")
            .check(move |_, out| reached(out, "END").and(v.assert_untouched())))
        }),
        // The sandbox's init (pid 1) shares warden's memory: the command must neither see it
        // nor read its environment, arguments or memory, nor end it (then END is not reached).
        case("sandbox-init", |_| {
            Ok(Attack::new(&py(r#"import os, signal, time
def t(name, f):
    try:
        r = f()
        print("RESULT", name, "ok", repr(r)[:60])
    except Exception as e:
        print("RESULT", name, "blocked", type(e).__name__)
def mem():
    with open("/proc/1/mem", "rb", buffering=0) as f:
        for line in open("/proc/1/maps"):
            a, perms = line.split()[:2]
            if perms.startswith("rw"):
                f.seek(int(a.split("-")[0], 16))
                return f.read(8)
t("listed", lambda: [p for p in os.listdir("/proc") if p == "1"][0])
t("environ", lambda: open("/proc/1/environ", "rb").read(64))
t("cmdline", lambda: open("/proc/1/cmdline", "rb").read(64))
t("status", lambda: open("/proc/1/status").read(64))
t("mem", mem)
for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM, signal.SIGINT):
    try:
        os.kill(1, sig)
    except OSError:
        pass
time.sleep(0.2)
print("END")"#))
            .check(|_, out| super::kernel::all_blocked_or(out, "the sandbox's init was within reach")))
        }),
        case("env-secret", |_| {
            Ok(Attack::new("env; cat /proc/self/environ; cat /proc/$PPID/environ; echo \"$WARDEN_TEST_SECRET\"; echo END")
                .check(|_, out| reached(out, "END")))
        }),
        case("descriptor-leak", |fx| {
            let read = fx
                .plant(
                    "outside/leak-read.txt",
                    &format!("{}\n", fx.secret("fd")),
                    0o644,
                )
                .map_err(|e| e.to_string())?;
            let write = fx
                .plant("outside/leak-append.txt", "append target\n", 0o644)
                .map_err(|e| e.to_string())?;
            let mut attack = Attack::new(
                "echo FDS $(ls /proc/self/fd); ls -l /proc/self/fd; for fd in 3 4 5 6 7 8 9 10; do cat /proc/self/fd/$fd 2>/dev/null; done; \
                 cat <&7; echo pwned >&9; ls -la /proc/self/fd/8/ 2>&1; echo pwned > /proc/self/fd/8/victim.txt; \
                 cat /proc/self/fd/8/victim.txt; echo END",
            )
            .deny("fs.read", "/proc/self/fd")
            .deny("fs.write", "/proc/self/fd")
            .check(|_, out| {
                reached(out, "END")?;
                if out.stdout.contains("victim content") {
                    return Err("a leaked directory descriptor showed outside/".into());
                }
                // `ls` sees the shell's descriptors plus the one it reads the folder with.
                let fds: Vec<&str> = out
                    .stdout
                    .lines()
                    .filter_map(|l| l.strip_prefix("FDS "))
                    .flat_map(|l| l.split_whitespace())
                    .filter(|fd| !["0", "1", "2", "3"].contains(fd))
                    .collect();
                if fds.is_empty() { Ok(()) } else { Err(format!("descriptors beyond 0-2 reached the command: {fds:?}")) }
            });
            attack.leak_fds = Some((
                read.to_string_lossy().into_owned(),
                write.to_string_lossy().into_owned(),
            ));
            Ok(attack)
        }),
        case("ptrace-own-child", |_| {
            let code = r#"import ctypes, os, time, signal
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
pid = os.fork()
if pid == 0:
    time.sleep(3); os._exit(0)
r = libc.ptrace(16, pid, None, None)
print("RESULT attach", "ok" if r == 0 else "blocked", ctypes.get_errno())
os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0)
child = os.fork()
if child == 0:
    os._exit(0 if libc.ptrace(0, 0, None, None) == 0 else 1)
_, status = os.waitpid(child, 0)
print("RESULT traceme", "ok" if os.WEXITSTATUS(status) == 0 else "blocked", os.WEXITSTATUS(status))
print("END")"#;
            Ok(Attack::new(&py(code))
                .deny("syscall", "ptrace")
                .deny("proc.ptrace", "")
                .check(|_, out| super::kernel::all_blocked_or(out, "ptrace works inside the sandbox")))
        }),
    ]
}
