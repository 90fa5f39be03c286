//! A process started ahead (`warden_sandbox::prestart`): the run that fits it starts in it and
//! sees exactly the view a process of its own would have; a run it does not fit, or a gate that
//! refuses, ends it; nothing of it outlives the run. Its own test binary: the process started
//! ahead is one per process, and these tests count this process's children.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use warden_sandbox::Error;

// The integration tests' helpers (temp dirs, the usual `sh` spec).
#[allow(dead_code)]
#[path = "it/support.rs"]
mod support;

use support::{TempDir, sh};

const AHEAD: &str = "sandbox process started ahead";

/// One test at a time: they share the process's one slot and count its children.
static SERIAL: Mutex<()> = Mutex::new(());

fn ahead(run: &warden_feedback::Run) -> bool {
    run.sandbox.notes.iter().any(|n| n.starts_with(AHEAD))
}

/// The pids of this process's children (every thread's), waiting up to two seconds for them to
/// be gone when `gone`.
fn children(gone: bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let mut pids = Vec::new();
        for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                pids.extend(text.split_whitespace().map(str::to_string));
            }
        }
        if !gone || pids.is_empty() || Instant::now() >= deadline {
            return pids;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What the command sees of its sandbox: every mount (where, options, type, source; sorted, as
/// the order of `mountinfo` is the order the mounts were made in, which differs: a process
/// started ahead makes its first mounts before the parent clones the workspace's tree), its
/// network interfaces, who it is, its host name, `/dev`, a file it writes in the workspace, and
/// the processors it may run on (the thread that clones it ahead starts on another processor
/// than its caller's, `apart.rs`, and must have taken the caller's whole set back).
const PROBE: &str = "awk '{ for (i = 7; $i != \"-\"; i++); print $5, $6, $(i+1), $(i+2) }' /proc/self/mountinfo | sort; \
    tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; id -u; id -g; hostname; ls -la /dev | awk '{print $1, $NF}'; echo made > made; ls -ln made | awk '{print $3, $4}'; rm made; \
    grep Cpus_allowed_list /proc/self/status";

#[test]
fn a_run_starts_in_the_process_started_ahead_and_sees_the_view_of_its_own() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let t = TempDir::new("same-view");
    let own = warden_sandbox::run(&sh(&t.0, PROBE)).unwrap();
    assert!(!ahead(&own), "nothing was started ahead: {:?}", own.sandbox.notes);
    warden_sandbox::prestart(&t.0);
    let started = warden_sandbox::run(&sh(&t.0, PROBE)).unwrap();
    assert!(ahead(&started), "the run did not use the process started ahead: {:?}", started.sandbox.notes);
    assert_eq!(own.exit_code, Some(0), "{own:?}");
    assert_eq!(started.exit_code, Some(0), "{started:?}");
    assert!(own.stdout.text.contains(" tmpfs "), "{}", own.stdout.text);
    // A network namespace of its own: loopback only.
    assert!(own.stdout.text.contains("\nlo\n"), "{}", own.stdout.text);
    assert!(own.stdout.text.contains("Cpus_allowed_list:"), "{}", own.stdout.text);
    assert_eq!(started.stdout.text, own.stdout.text, "the view differs from a process of its own");
    assert_eq!(started.stderr.text, own.stderr.text);
    assert_eq!(started.sandbox.namespaces, own.sandbox.namespaces);
    // Taken once: the next run starts its own.
    let next = warden_sandbox::run(&sh(&t.0, "true")).unwrap();
    assert!(!ahead(&next));
    assert!(children(true).is_empty(), "a process outlived its run: {:?}", children(false));
}

#[test]
fn a_run_it_does_not_fit_starts_its_own_and_ends_it() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let t = TempDir::new("misfit");
    warden_sandbox::prestart(&t.0);
    // Made ahead without network: a run granted network cannot use it.
    let mut spec = sh(&t.0, "cat /proc/net/dev | wc -l");
    spec.network = true;
    let run = warden_sandbox::run(&spec).unwrap();
    assert!(!ahead(&run), "{:?}", run.sandbox.notes);
    assert_eq!(run.exit_code, Some(0), "{run:?}");
    assert!(!run.sandbox.namespaces.contains(&"net".to_string()));
    // Input to pass on: the process started ahead reads /dev/null.
    warden_sandbox::prestart(&t.0);
    let mut spec = sh(&t.0, "cat");
    spec.stdin = b"given".to_vec();
    let run = warden_sandbox::run(&spec).unwrap();
    assert!(!ahead(&run), "{:?}", run.sandbox.notes);
    assert_eq!(run.stdout.text, "given");
    assert!(children(true).is_empty(), "the process started ahead outlived the run: {:?}", children(false));
}

#[test]
fn a_refusing_gate_starts_nothing_in_the_process_started_ahead() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let t = TempDir::new("gate");
    warden_sandbox::prestart(&t.0);
    let mut calls = 0;
    let mut gate = || {
        calls += 1;
        // Time enough for a command that did not wait to have run.
        std::thread::sleep(Duration::from_millis(300));
        if t.0.join("marker").exists() { Ok(()) } else { Err("the record could not be written".to_string()) }
    };
    match warden_sandbox::run_gated(&sh(&t.0, "touch marker"), &mut gate) {
        Err(Error::Gate(why)) => assert_eq!(why, "the record could not be written"),
        other => panic!("expected the gate's refusal, got {other:?}"),
    }
    assert_eq!(calls, 1);
    assert!(children(true).is_empty(), "the refused process outlived the run: {:?}", children(false));
    assert!(!t.0.join("marker").exists(), "a refused command ran");
    // A passing gate: the command runs after it, in the process started ahead.
    warden_sandbox::prestart(&t.0);
    let mut gate = || if t.0.join("marker").exists() { Err("ran before its gate".to_string()) } else { Ok(()) };
    let run = warden_sandbox::run_gated(&sh(&t.0, "touch marker"), &mut gate).unwrap();
    assert!(ahead(&run), "{:?}", run.sandbox.notes);
    assert!(t.0.join("marker").exists(), "{run:?}");
}

#[test]
fn a_process_started_ahead_holds_no_descriptor_of_its_caller() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let t = TempDir::new("fds");
    // A pipe of the caller's, open (not close-on-exec) while the process is started ahead.
    let (reader, writer) = std::io::pipe().unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&writer);
    // SAFETY: fcntl on a descriptor we own.
    unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
    warden_sandbox::prestart(&t.0);
    // Once the process is made (a run waits for it), the caller's write end is closed: its
    // reader must see the end of the pipe although the process started ahead still waits.
    std::thread::sleep(Duration::from_millis(200));
    drop(writer);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = reader;
        let mut buf = Vec::new();
        tx.send(std::io::Read::read_to_end(&mut reader, &mut buf).map(|_| buf.len()).ok()).ok();
    });
    let got = rx.recv_timeout(Duration::from_secs(5));
    assert_eq!(got, Ok(Some(0)), "the process started ahead held a copy of the caller's pipe");
    let run = warden_sandbox::run(&sh(&t.0, "ls /proc/self/fd")).unwrap();
    assert!(ahead(&run), "{:?}", run.sandbox.notes);
    assert_eq!(run.stdout.text.split_whitespace().collect::<Vec<_>>(), ["0", "1", "2", "3"], "{run:?}");
}
