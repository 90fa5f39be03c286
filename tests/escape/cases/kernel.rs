//! Kernel attack surface and raw devices: system calls a sandboxed command never needs, which
//! must fail; device nodes that must be neither readable nor creatable.

use super::{Attack, Case, case, py, reached};
use crate::runner::Outcome;

/// The python prelude: `sc(name, nr, *args)` makes a raw system call and prints
/// `RESULT name ok|blocked errno`.
const PRELUDE: &str = r#"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(name, nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *args)
    e = ctypes.get_errno()
    print("RESULT", name, "ok" if r >= 0 else "blocked", 0 if r >= 0 else e)
    return r
"#;

/// Every `RESULT` line must say `blocked`; `END` must be reached.
fn all_blocked(out: &Outcome) -> Result<(), String> {
    all_blocked_or(out, "system calls succeeded")
}

/// [`all_blocked`], with `what` naming what succeeded in the failure.
pub(super) fn all_blocked_or(out: &Outcome, what: &str) -> Result<(), String> {
    reached(out, "END")?;
    let ok: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("RESULT ") && l.contains(" ok "))
        .collect();
    if ok.is_empty() {
        Ok(())
    } else {
        Err(format!("{what}: {ok:?}"))
    }
}

fn syscall_case(body: &str) -> String {
    py(&format!("{PRELUDE}{body}\nprint(\"END\")"))
}

macro_rules! syscalls {
    ($name:literal, $body:literal, $($sys:literal),+) => {
        case($name, |_| {
            Ok(Attack::new(&syscall_case($body))
                $(.deny("syscall", $sys))+
                .check(|_, out| all_blocked(out)))
        })
    };
}

pub fn cases() -> Vec<Case> {
    vec![
        syscalls!(
            "syscall-io-uring",
            r#"params = ctypes.create_string_buffer(120)
sc("io_uring_setup", 425, ctypes.c_uint(8), params)"#,
            "io_uring"
        ),
        syscalls!(
            "syscall-bpf",
            r#"attr = ctypes.create_string_buffer(128)
ctypes.memmove(attr, (ctypes.c_uint * 4)(2, 4, 4, 1), 16)
sc("bpf", 321, 0, attr, 128)
sc("bpf-prog-load", 321, 5, ctypes.create_string_buffer(128), 128)"#,
            "bpf"
        ),
        syscalls!(
            "syscall-perf-event-open",
            r#"attr = ctypes.create_string_buffer(128)
ctypes.memmove(attr, (ctypes.c_uint * 2)(1, 128), 8)
ctypes.memmove(ctypes.byref(attr, 40), (ctypes.c_ulonglong * 1)(97), 8)
sc("perf_event_open", 298, attr, 0, -1, -1, 0)"#,
            "perf_event_open"
        ),
        syscalls!(
            "syscall-userfaultfd",
            r#"sc("userfaultfd", 323, 0o2000000 | 0o4000 | 1)
try:
    fd = os.open("/dev/userfaultfd", os.O_RDWR)
    print("RESULT /dev/userfaultfd ok 0")
except OSError as e:
    print("RESULT /dev/userfaultfd blocked", e.errno)"#,
            "userfaultfd"
        ),
        syscalls!(
            "syscall-keyctl",
            r#"sc("keyctl", 250, 0, ctypes.c_int(-3), 1)
sc("add_key", 248, b"user", b"warden-escape", b"x", 1, ctypes.c_int(-3))
sc("request_key", 249, b"user", b"warden-escape", None, 0)"#,
            "keyctl",
            "add_key",
            "request_key"
        ),
        syscalls!(
            "syscall-unshare-userns",
            r#"sc("unshare-user", 272, 0x10000000)
sc("clone-newuser", 56, 0x10000000 | 17, 0, 0, 0, 0) == 0 and os._exit(0)"#,
            "unshare",
            "clone"
        ),
        syscalls!(
            "syscall-mount",
            r#"os.makedirs("{ws}/mnt", exist_ok=True)
sc("mount", 165, b"none", b"{ws}/mnt", b"tmpfs", 0, None)
sc("mount-bind", 165, b"{rd}", b"{ws}/mnt", None, 4096, None)
sc("umount2", 166, b"{ws}/mnt", 2)
sc("pivot_root", 155, b"{ws}/mnt", b"{ws}/mnt")
sc("fsopen", 430, b"tmpfs", 0)
sc("open_tree", 428, -100, b"{ws}", 1)"#,
            "mount",
            "umount",
            "pivot_root",
            "fsopen",
            "open_tree"
        ),
        case("syscall-clone3-enosys", |_| {
            Ok(Attack::new(&syscall_case(
                r#"args = ctypes.create_string_buffer(88)
r = sc("clone3", 435, args, 88)
if r == 0:
    os._exit(0)
print("ERRNO", ctypes.get_errno())"#,
            ))
            .deny("syscall", "clone3")
            .check(|_, out| {
                reached(out, "END")?;
                if out
                    .stdout
                    .lines()
                    .any(|l| l.trim() == "RESULT clone3 blocked 38")
                {
                    Ok(())
                } else {
                    Err(format!(
                        "clone3 must fail with ENOSYS (38) so libc falls back to clone: {}",
                        out.excerpt()
                    ))
                }
            }))
        }),
        syscalls!(
            "ioctl-tiocsti",
            r#"import fcntl, termios
for name in ("/dev/tty", "/dev/console", "/dev/tty0", "/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/fd/2"):
    try:
        fd = os.open(name, os.O_RDWR | os.O_NOCTTY)
    except OSError:
        continue
    for req, arg in ((termios.TIOCSTI, b"x"), (0x541C, bytes([6]))):
        try:
            fcntl.ioctl(fd, req, arg)
            print("RESULT ioctl", req, name, "ok 0")
        except OSError as e:
            print("RESULT ioctl blocked", e.errno)"#,
            "ioctl"
        ),
        syscalls!(
            "syscall-open-by-handle",
            r#"h = ctypes.create_string_buffer(128)
ctypes.memmove(h, (ctypes.c_uint * 1)(120), 4)
mnt = ctypes.c_int(0)
r = libc.name_to_handle_at(-100, b"/", h, ctypes.byref(mnt), 0)
print("handle", r)
fd = os.open("/", os.O_RDONLY)
sc("open_by_handle_at", 304, fd, h, 0)
sc("iopl", 172, 3)"#,
            "open_by_handle_at",
            "name_to_handle_at",
            "iopl"
        ),
        case("raw-device-read", |_| {
            Ok(Attack::new(
                "for d in /dev/vda /dev/sda /dev/nvme0n1 /dev/mem /dev/kmem /dev/port /dev/kmsg /dev/zram0 /dev/loop0 /dev/kvm; do \
                 n=$(timeout 2 head -c 512 $d 2>/dev/null | wc -c); echo \"DEV $d $n\"; done; echo END",
            )
            .deny("fs.read", "/dev/")
            .check(|_, out| {
                reached(out, "END")?;
                let read: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("DEV ") && !l.ends_with(" 0")).collect();
                if read.is_empty() { Ok(()) } else { Err(format!("raw devices were readable: {read:?}")) }
            }))
        }),
        case("raw-device-mknod", |_| {
            Ok(Attack::new(
                "mknod {ws}/vda b 254 0; mknod {ws}/mem c 1 1; mknod {ws}/kmsg c 1 11; \
                 head -c 16 {ws}/vda | wc -c; echo END",
            )
            .deny("fs.write", "{ws}/")
            .deny("syscall", "mknod")
            .check(|_, out| reached(out, "END")))
        }),
    ]
}
