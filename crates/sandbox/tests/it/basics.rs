//! The sandbox runs commands and reports their outcome.

use std::time::Duration;

use crate::support::{TempDir, sh};
use warden_sandbox::{Access, Mount};

#[test]
fn true_runs_and_exits_zero() {
    let t = TempDir::new("true");
    let run = warden_sandbox::run(&sh(t.path(), "true")).unwrap();
    assert_eq!(run.exit_code, Some(0), "{run:?}");
    assert!(run.sandbox.landlock_abi.unwrap() >= 1);
}

#[test]
fn output_and_exit_code_come_back() {
    let t = TempDir::new("out");
    let run = warden_sandbox::run(&sh(t.path(), "echo hello; echo oops >&2; exit 3")).unwrap();
    assert_eq!(run.exit_code, Some(3), "{run:?}");
    assert_eq!(run.stdout.text, "hello\n");
    assert_eq!(run.stderr.text, "oops\n");
}

#[test]
fn workspace_is_writable_and_system_is_not() {
    let t = TempDir::new("rw");
    let run = warden_sandbox::run(&sh(t.path(), "echo hi > f.txt && cat f.txt; echo x > /etc/warden-test-x; echo $?")).unwrap();
    assert_eq!(std::fs::read_to_string(t.path().join("f.txt")).unwrap(), "hi\n");
    assert!(run.stdout.text.ends_with("2\n") || run.stdout.text.ends_with("1\n"), "{run:?}");
    assert!(!std::path::Path::new("/etc/warden-test-x").exists());
}

#[test]
fn the_command_is_pid_two_under_an_init_and_sees_no_host_process() {
    let t = TempDir::new("pid");
    let run = warden_sandbox::run(&sh(t.path(), "echo $$; for p in /proc/[0-9]*; do echo ${p#/proc/}; done")).unwrap();
    let pids: Vec<u32> = run.stdout.text.lines().map(|l| l.parse().unwrap()).collect();
    // The shell is pid 2 under the sandbox's init (pid 1, not listed: the command may not
    // trace it); everything else listed is the shell's own children (a handful at most),
    // nothing of the host.
    assert_eq!(pids.first(), Some(&2), "{run:?}");
    assert!(!pids[1..].contains(&1), "{run:?}");
    assert!(pids.iter().all(|p| *p < 16), "{run:?}");
}

/// A spec that runs `argv` directly (no shell in between), under `sh`'s grants.
fn direct(ws: &std::path::Path, argv: &[&str]) -> warden_sandbox::Spec {
    let mut spec = sh(ws, "");
    spec.argv = argv.iter().map(|a| (*a).into()).collect();
    spec
}

#[test]
fn a_signal_the_command_sends_itself_ends_it_and_is_reported() {
    // As a namespace's pid 1 the command would not receive these: `kill` would be dropped and
    // `abort()` end in a fault reported as SIGSEGV.
    let t = TempDir::new("selfsig");
    let run = warden_sandbox::run(&direct(t.path(), &["/bin/sh", "-c", "kill -TERM $$; echo survived"])).unwrap();
    assert_eq!((run.exit_code, run.signal.as_deref()), (None, Some("SIGTERM")), "{run:?}");
    assert!(!run.stdout.text.contains("survived"), "{run:?}");
    let run = warden_sandbox::run(&direct(t.path(), &["/usr/bin/python3", "-c", "import os; os.abort()"])).unwrap();
    assert_eq!((run.exit_code, run.signal.as_deref()), (None, Some("SIGABRT")), "{run:?}");
    let run = warden_sandbox::run(&direct(t.path(), &["/bin/sh", "-c", "exit 7"])).unwrap();
    assert_eq!(run.exit_code, Some(7), "{run:?}");
}

#[test]
fn a_command_reading_its_input_sees_it_end() {
    // The sandbox's init keeps no copy of the input pipe's write end: `cat` ends at its end.
    let t = TempDir::new("stdin");
    let mut spec = sh(t.path(), "cat; echo done");
    spec.stdin = b"hello\n".to_vec();
    spec.limits.timeout = Duration::from_secs(20);
    let run = warden_sandbox::run(&spec).unwrap();
    assert!(!run.timed_out, "{run:?}");
    assert_eq!(run.stdout.text, "hello\ndone\n", "{run:?}");
}

#[test]
fn timeout_kills_the_tree() {
    let t = TempDir::new("timeout");
    let mut spec = sh(t.path(), "trap '' TERM; sleep 30 & sleep 30");
    spec.limits.timeout = Duration::from_millis(300);
    let run = warden_sandbox::run(&spec).unwrap();
    assert!(run.timed_out, "{run:?}");
    assert_eq!(run.signal.as_deref(), Some("SIGKILL"));
    assert!(run.duration_ms < 5000.0, "{run:?}");
}

#[test]
fn cancel_kills_the_tree_and_a_cancelled_run_does_not_start() {
    let t = TempDir::new("cancel");
    let mut spec = sh(t.path(), "trap '' TERM; sleep 30 & sleep 30; touch after");
    let cancel = warden_sandbox::Cancel::new().unwrap();
    spec.cancel = Some(cancel.clone());
    let firing = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let run = warden_sandbox::run(&spec).unwrap();
    firing.join().unwrap();
    assert!(run.cancelled && !run.timed_out, "{run:?}");
    assert_eq!(run.signal.as_deref(), Some("SIGKILL"));
    assert!(run.duration_ms < 5000.0, "{run:?}");
    // Fired before the run: nothing starts.
    let mut spec = sh(t.path(), "touch started");
    let cancel = warden_sandbox::Cancel::new().unwrap();
    cancel.cancel();
    spec.cancel = Some(cancel);
    assert!(matches!(warden_sandbox::run(&spec), Err(warden_sandbox::Error::Cancelled)));
    assert!(!t.path().join("started").exists() && !t.path().join("after").exists());
}

#[test]
fn missing_program_is_127() {
    let t = TempDir::new("missing");
    let mut spec = sh(t.path(), "");
    spec.argv = vec!["no-such-program-warden".into()];
    let run = warden_sandbox::run(&spec).unwrap();
    assert_eq!(run.exit_code, Some(127), "{run:?}");
}

#[test]
fn no_setuid_bit_can_be_set() {
    let t = TempDir::new("suid");
    let script = "cp /bin/sh ./s; chmod 4755 ./s; chmod g+s ./s; python3 -c 'import os; os.close(os.open(\"p\", os.O_CREAT|os.O_WRONLY, 0o4755))' 2>/dev/null; true";
    let run = warden_sandbox::run(&sh(t.path(), script)).unwrap();
    assert_eq!(run.exit_code, Some(0), "{run:?}");
    use std::os::unix::fs::PermissionsExt;
    for f in ["s", "p"] {
        if let Ok(m) = std::fs::metadata(t.path().join(f)) {
            assert_eq!(m.permissions().mode() & 0o6000, 0, "{f}: {:o}", m.permissions().mode());
        }
    }
}

#[test]
fn output_limit_covers_both_streams() {
    let t = TempDir::new("flood");
    let mut spec = sh(t.path(), "head -c 100000 /dev/zero; head -c 100000 /dev/zero >&2");
    spec.limits.output_bytes = 1000;
    let run = warden_sandbox::run(&spec).unwrap();
    assert_eq!((run.stdout.bytes, run.stderr.bytes), (100_000, 100_000));
    assert!(run.stdout.truncated && run.stderr.truncated);
    assert!(run.stdout.text.len() + run.stderr.text.len() < 1000 + 200, "{}", run.stdout.text.len());
}

/// Read grants and guarded paths are read-only, nosuid and nodev binds; a hidden path's cover
/// is also noexec (the per-mount options of `/proc/self/mountinfo`, seen from inside).
#[test]
fn read_only_binds_carry_their_mount_attributes() {
    let t = TempDir::new("attrs");
    std::fs::create_dir_all(t.path().join(".git/hooks")).unwrap();
    std::fs::write(t.path().join("secret.txt"), "s").unwrap();
    let mut spec = sh(t.path(), "cat /proc/self/mountinfo");
    spec.mounts.push(Mount { path: t.path().join(".git/hooks"), access: Access::Guard });
    spec.mounts.push(Mount { path: t.path().join("secret.txt"), access: Access::Hide });
    let run = warden_sandbox::run(&spec).unwrap();
    assert_eq!(run.exit_code, Some(0), "{run:?}");
    let options = |point: &std::path::Path| -> Vec<String> {
        let line = run.stdout.text.lines().find(|l| l.split(' ').nth(4) == point.to_str());
        let line = line.unwrap_or_else(|| panic!("no mount at {}: {}", point.display(), run.stdout.text));
        line.split(' ').nth(5).unwrap_or_default().split(',').map(str::to_string).collect()
    };
    for point in [std::path::PathBuf::from("/usr"), std::path::PathBuf::from("/etc"), t.path().join(".git/hooks"), t.path().join("secret.txt")] {
        let o = options(&point);
        for want in ["ro", "nosuid", "nodev"] {
            assert!(o.iter().any(|x| x == want), "{}: {o:?}", point.display());
        }
    }
    assert!(options(&t.path().join("secret.txt")).iter().any(|x| x == "noexec"));
    assert!(options(t.path()).iter().any(|x| x == "rw"), "the workspace stays writable");
}

/// Ground truth for seccomp refusals: each refused call is answered EPERM by the supervisor,
/// as the kernel's own refusal was, and reported once as a `syscall` denial naming it.
#[test]
fn seccomp_refusals_fail_with_eperm_and_are_reported() {
    let t = TempDir::new("notify");
    let script = r#"
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *args)
    print(r, ctypes.get_errno())
for _ in range(50):
    sc(101, 0, 0, 0, 0)
sc(165, b"none", b"/tmp", b"tmpfs", 0, None)
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
except OSError as e:
    print("socket", e.errno)
os.chmod(".", 0o755)
print("done")
"#;
    let run = warden_sandbox::run(&direct(t.path(), &["/usr/bin/python3", "-c", script])).unwrap();
    assert_eq!(run.exit_code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.text.lines().collect();
    assert_eq!(lines.iter().filter(|l| **l == "-1 1").count(), 51, "{run:?}");
    assert!(lines.contains(&"socket 1") && lines.contains(&"done"), "{run:?}");
    let seccomp: Vec<(&str, &str)> = run
        .denials
        .iter()
        .filter(|d| d.source == warden_feedback::DenialSource::Seccomp)
        .map(|d| (d.op.as_str(), d.target.as_str()))
        .collect();
    assert_eq!(seccomp, [("syscall", "ptrace"), ("syscall", "mount"), ("syscall", "socket (AF_INET)")], "{run:?}");
    // Nothing refused, nothing reported.
    let run = warden_sandbox::run(&sh(t.path(), "true")).unwrap();
    assert!(run.denials.is_empty(), "{run:?}");
}

/// A command making refused calls without end, from several threads, neither starves the
/// supervisor (its output still comes back) nor outlives its timeout.
#[test]
fn a_flood_of_refused_calls_is_answered_and_timed_out() {
    let t = TempDir::new("notify-flood");
    let script = r#"
import ctypes, sys, threading
libc = ctypes.CDLL(None)
libc.syscall.restype = ctypes.c_long
def flood():
    while True:
        libc.syscall(101, 0, 0, 0, 0)
for _ in range(4):
    threading.Thread(target=flood, daemon=True).start()
print("flooding", flush=True)
threading.Event().wait()
"#;
    let mut spec = direct(t.path(), &["/usr/bin/python3", "-c", script]);
    // Long enough for Python to start and print on a loaded machine (0.8 s was not, once,
    // beside a build on both processors).
    spec.limits.timeout = Duration::from_secs(2);
    let run = warden_sandbox::run(&spec).unwrap();
    assert!(run.timed_out, "{run:?}");
    assert!(run.duration_ms < 6000.0, "{run:?}");
    assert_eq!(run.stdout.text, "flooding\n", "{run:?}");
    let seccomp: Vec<&str> = run.denials.iter().filter(|d| d.source == warden_feedback::DenialSource::Seccomp).map(|d| d.target.as_str()).collect();
    assert_eq!(seccomp, ["ptrace"], "{run:?}");
}
