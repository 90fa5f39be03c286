//! Grant boundaries: read-only preopens, `..`, symlinks, undeclared paths, the network.

use warden_feedback::DenialSource;

use crate::{ro, run, rw, spec, tree};

fn has_denial(r: &warden_feedback::Run, op: &str, target: &str) -> bool {
    r.denials.iter().any(|d| d.op == op && d.target == target && d.source == DenialSource::Wasi)
}

#[test]
fn read_only_preopen_refuses_write_and_edit() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[("a.txt", "one\ntwo\n")]);
    let mut s = spec(&["write", "/work/new.txt"], vec![ro(dir.path(), "/work")], "/work");
    s.stdin = b"hello".to_vec();
    let r = run(&s);
    assert_eq!(r.exit_code, Some(1), "{r:?}");
    assert!(!dir.path().join("new.txt").exists());
    assert!(has_denial(&r, "fs.write", "/work/new.txt"), "{:?}", r.denials);

    let r = run(&spec(&["edit", "a.txt", "one", "uno"], vec![ro(dir.path(), "/work")], "/work"));
    assert_eq!(r.exit_code, Some(1), "{r:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "one\ntwo\n");
    assert!(has_denial(&r, "fs.write", "/work/a.txt"), "{:?}", r.denials);
}

#[test]
fn writable_preopen_allows_write_and_edit() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(&["write", "notes/../new.txt"], vec![rw(dir.path(), "/work")], "/work");
    s.stdin = b"alpha\nbeta\nalpha beta\n".to_vec();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    let r = run(&s);
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert!(r.denials.is_empty());
    let e = |old: &str, new: &str| run(&spec(&["edit", "new.txt", old, new], vec![rw(dir.path(), "/work")], "/work"));
    let r = e("alpha beta", "alpha gamma");
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("new.txt")).unwrap(), "alpha\nbeta\nalpha gamma\n");
    let r = e("alpha", "x");
    assert_eq!(r.exit_code, Some(1));
    assert!(r.stderr.text.contains("found 2 times"), "{}", r.stderr.text);
    let r = e("delta", "x");
    assert_eq!(r.exit_code, Some(1));
    assert!(r.stderr.text.contains("not found"), "{}", r.stderr.text);
}

#[test]
fn dotdot_out_of_a_preopen_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[("secret.txt", "TOPSECRET\n"), ("ws/a.txt", "a\n")]);
    let ws = dir.path().join("ws");
    for argv in [["cat", "../secret.txt"], ["cat", "/work/../secret.txt"], ["ls", ".."]] {
        let r = run(&spec(&argv, vec![ro(&ws, "/work")], "/work"));
        assert_ne!(r.exit_code, Some(0), "{argv:?}: {r:?}");
        assert!(!r.stdout.text.contains("TOPSECRET") && !r.stdout.text.contains("secret.txt"), "{argv:?}: {r:?}");
        assert!(!r.denials.is_empty(), "{argv:?}: {r:?}");
        assert!(r.denials.iter().all(|d| d.op == "fs.read" && d.source == DenialSource::Wasi));
    }
    // A nested preopen's `..` does not reach its host parent either.
    let r = run(&spec(&["cat", "../secret.txt"], vec![ro(&ws, "/a/b")], "/a/b"));
    assert!(!r.stdout.text.contains("TOPSECRET"), "{r:?}");
    assert!(has_denial(&r, "fs.read", "/a/secret.txt"), "{:?}", r.denials);
}

#[test]
fn symlinks_out_of_a_preopen_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[("secret.txt", "TOPSECRET\n"), ("outside/s.txt", "TOPSECRET\n"), ("ws/a.txt", "a\n")]);
    let ws = dir.path().join("ws");
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), ws.join("file-link")).unwrap();
    std::os::unix::fs::symlink("../outside", ws.join("dir-link")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", ws.join("abs-link")).unwrap();
    for argv in [["cat", "file-link"], ["cat", "dir-link/s.txt"], ["cat", "abs-link"]] {
        let r = run(&spec(&argv, vec![ro(&ws, "/work")], "/work"));
        assert_ne!(r.exit_code, Some(0), "{argv:?}: {r:?}");
        assert!(!r.stdout.text.contains("TOPSECRET") && !r.stdout.text.contains("root:"), "{argv:?}: {r:?}");
        assert!(!r.denials.is_empty(), "{argv:?}: {r:?}");
    }
    // Writing through a link out of a writable preopen is refused too.
    let mut s = spec(&["write", "dir-link/s.txt"], vec![rw(&ws, "/work")], "/work");
    s.stdin = b"overwritten".to_vec();
    let r = run(&s);
    assert_ne!(r.exit_code, Some(0), "{r:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("outside/s.txt")).unwrap(), "TOPSECRET\n");
    assert!(has_denial(&r, "fs.write", "/work/dir-link/s.txt"), "{:?}", r.denials);
}

#[test]
fn undeclared_paths_are_invisible() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[("a.txt", "a\n")]);
    for (argv, target) in [
        (vec!["cat", "/etc/passwd"], "/etc/passwd"),
        (vec!["ls", "/"], "/"),
        (vec!["ls", "/tmp"], "/tmp"),
        (vec!["grep", "-r", "root", "/etc"], "/etc"),
    ] {
        let r = run(&spec(&argv, vec![ro(dir.path(), "/work")], "/work"));
        assert_ne!(r.exit_code, Some(0), "{argv:?}: {r:?}");
        assert!(!r.stdout.text.contains("root:"), "{argv:?}");
        assert!(has_denial(&r, "fs.read", target), "{argv:?}: {:?} {}", r.denials, r.stderr.text);
    }
    // No preopen at all: even the working directory is refused.
    let r = run(&spec(&["ls"], vec![], "/work"));
    assert_eq!(r.exit_code, Some(2), "{r:?}");
    assert!(has_denial(&r, "fs.read", "/work"), "{:?}", r.denials);
}

#[test]
fn network_is_refused_before_running() {
    let mut s = spec(&["ls"], vec![], "/");
    s.network = true;
    let e = crate::runner().run(&s).unwrap_err();
    assert_eq!(e.code(), "wasi::network");
    assert!(e.to_string().contains("no network"), "{e}");
}

#[test]
fn unknown_tools_and_bad_guest_paths_are_errors() {
    let e = crate::runner().run(&spec(&["rm", "-rf", "/"], vec![], "/")).unwrap_err();
    assert_eq!(e.code(), "wasi::unknown_tool");
    assert!(e.to_string().contains("`rm`"), "{e}");
    let e = crate::runner().run(&spec(&["ls"], vec![], "work")).unwrap_err();
    assert_eq!(e.code(), "wasi::guest_path");
    let e = crate::runner().run(&spec(&[], vec![], "/")).unwrap_err();
    assert_eq!(e.code(), "wasi::empty_argv");
    let missing = std::path::Path::new("/nonexistent/warden-wasi-test");
    let e = crate::runner().run(&spec(&["ls"], vec![ro(missing, "/w")], "/w")).unwrap_err();
    assert_eq!(e.code(), "wasi::preopen");
}

/// Regression: opening a FIFO blocked inside the host, where neither the wall timeout nor a
/// cancel reaches, until the caller killed the whole helper (and every run in it).
#[test]
fn a_fifo_is_refused_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[("a.txt", "a\n")]);
    let fifo = dir.path().join("f");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let cases: [&[&str]; 6] =
        [&["cat", "f"], &["grep", "x", "f"], &["wc", "-l", "f"], &["diff", "f", "a.txt"], &["write", "f"], &["edit", "f", "a", "b"]];
    for argv in cases {
        let s = spec(argv, vec![rw(dir.path(), "/work")], "/work");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(run(&s));
        });
        let r = match rx.recv_timeout(std::time::Duration::from_secs(10)) {
            Ok(r) => r,
            Err(_) => {
                // Unblock the run (a writer, or a reader, that closes at once; `O_NONBLOCK`:
                // never blocks here), then fail.
                use std::os::unix::fs::OpenOptionsExt;
                let _ = std::fs::OpenOptions::new().write(true).custom_flags(0o4000).open(&fifo);
                let _ = std::fs::OpenOptions::new().read(true).custom_flags(0o4000).open(&fifo);
                panic!("{argv:?} blocked on the FIFO");
            }
        };
        assert_ne!(r.exit_code, Some(0), "{argv:?}: {r:?}");
        assert!(r.stderr.text.contains("not a regular file"), "{argv:?}: {}", r.stderr.text);
    }
}
