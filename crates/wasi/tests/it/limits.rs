//! Limits: wall timeout, fuel, memory, output, exit codes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use warden_feedback::DenialSource;

use crate::{run, spec};

#[test]
fn infinite_loop_hits_the_wall_timeout() {
    let mut s = spec(&["__spin"], vec![], "/");
    s.limits.timeout = Duration::from_millis(300);
    let t = Instant::now();
    let r = run(&s);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(r.timed_out, "{r:?}");
    assert_eq!((r.exit_code, r.signal.as_deref()), (None, None));
    assert!(r.duration_ms >= 290.0, "{}", r.duration_ms);
    assert!(r.sandbox.notes.iter().any(|n| n.contains("interrupt")), "{:?}", r.sandbox.notes);
    assert!(r.stderr.text.contains("wall timeout"), "{}", r.stderr.text);
}

#[test]
fn a_cancelled_run_stops_within_a_tick_and_says_so() {
    let mut s = spec(&["__spin"], vec![], "/");
    s.limits.timeout = Duration::from_secs(20);
    let cancel = Arc::new(AtomicBool::new(false));
    let t = Instant::now();
    let r = std::thread::scope(|scope| {
        let flag = Arc::clone(&cancel);
        scope.spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            flag.store(true, Ordering::Relaxed);
        });
        crate::runner().run_cancellable(&s, Arc::clone(&cancel)).expect("run")
    });
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(r.cancelled && !r.timed_out, "{r:?}");
    assert_eq!((r.exit_code, r.signal.as_deref()), (None, None));
    assert!(r.stderr.text.contains("cancelled"), "{}", r.stderr.text);
}

#[test]
fn fuel_budget_stops_a_loop() {
    let mut s = spec(&["__spin"], vec![], "/");
    s.limits.fuel = Some(5_000_000);
    let r = run(&s);
    assert!(!r.timed_out, "{r:?}");
    assert_eq!((r.exit_code, r.signal.as_deref()), (None, None));
    assert!(r.sandbox.notes.iter().any(|n| n.contains("out of fuel")), "{:?}", r.sandbox.notes);
    assert!(r.stderr.text.contains("fuel budget"), "{}", r.stderr.text);
}

#[test]
fn a_fuel_budget_that_suffices_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    crate::tree(dir.path(), &[("a.txt", "a\n")]);
    let mut s = spec(&["ls"], vec![crate::ro(dir.path(), "/w")], "/w");
    s.limits.fuel = Some(100_000_000);
    let r = run(&s);
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert_eq!(r.stdout.text, "a.txt\n");
}

#[test]
fn memory_bomb_is_stopped_at_the_limit() {
    let mut s = spec(&["__alloc", "1024"], vec![], "/");
    s.limits.memory_bytes = 64 << 20;
    let r = run(&s);
    assert_eq!((r.exit_code, r.signal.as_deref(), r.timed_out), (None, None, false), "{r:?}");
    assert!(r.sandbox.notes.iter().any(|n| n.contains("memory limit")), "{:?}", r.sandbox.notes);
    assert!(r.denials.iter().any(|d| d.op == "limit.memory" && d.source == DenialSource::Limit), "{:?}", r.denials);
    assert!(!r.stdout.text.contains("allocated"));
    // Under the limit it runs.
    let mut s = spec(&["__alloc", "16"], vec![], "/");
    s.limits.memory_bytes = 64 << 20;
    let r = run(&s);
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert_eq!(r.stdout.text, "allocated 16 MiB\n");
}

#[test]
fn output_flood_is_capped_and_marked_truncated() {
    let mut s = spec(&["__flood", "10000000"], vec![], "/");
    s.limits.output_bytes = 4096;
    let r = run(&s);
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert!(r.stdout.truncated);
    assert_eq!(r.stdout.bytes, 10_000_000);
    assert!(r.stdout.text.len() < 4096 + 100, "{}", r.stdout.text.len());
    assert!(r.stdout.text.starts_with("line 0000000000\n"));
    assert!(r.stdout.text.contains("bytes dropped by warden"));
    let mut s = spec(&["__flood", "1000000", "err"], vec![], "/");
    s.limits.output_bytes = 1024;
    let r = run(&s);
    assert!(r.stderr.truncated && r.stderr.bytes == 1_000_000 && !r.stdout.truncated, "{r:?}");
}

#[test]
fn exit_codes_come_through() {
    let dir = tempfile::tempdir().unwrap();
    crate::tree(dir.path(), &[("a.txt", "hello\n")]);
    let w = || vec![crate::ro(dir.path(), "/w")];
    for (argv, code) in [
        (vec!["__exit", "0"], 0),
        (vec!["__exit", "3"], 3),
        (vec!["__exit", "125"], 125),
        (vec!["grep", "hello", "a.txt"], 0),
        (vec!["grep", "absent", "a.txt"], 1),
        (vec!["grep", "x", "missing.txt"], 2),
        (vec!["ls", "missing"], 2),
        (vec!["cat", "missing"], 1),
        (vec!["diff", "a.txt", "a.txt"], 0),
    ] {
        let r = run(&spec(&argv, w(), "/w"));
        assert_eq!(r.exit_code, Some(code), "{argv:?}: {r:?}");
        assert_eq!((r.signal.as_deref(), r.timed_out), (None, false));
    }
}

#[test]
fn the_module_cache_is_reused_by_a_new_runner() {
    let image = crate::toolbox();
    crate::runner().prepare(&image).unwrap();
    let second = warden_wasi::Runner::new(&crate::cache_dir()).unwrap();
    assert_eq!(second.prepare(&image).unwrap(), Some(warden_wasi::Fetched::Disk));
    assert_eq!(second.prepare(&image).unwrap(), None);
    second.load_from_disk(&image).unwrap();
}

#[test]
fn a_cached_module_this_user_did_not_write_alone_is_compiled_again_not_loaded() {
    // A cached module is machine code warden runs unchecked: one with a second name (another
    // user's hard link), or one another user owns, is not loaded.
    use std::os::unix::fs::MetadataExt as _;
    let image = crate::toolbox();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    warden_wasi::Runner::new(&cache).unwrap().prepare(&image).unwrap();
    let file = std::fs::read_dir(&cache).unwrap().filter_map(Result::ok).map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "cwasm")).unwrap();
    std::fs::hard_link(&file, dir.path().join("other-name")).unwrap();
    assert_eq!(warden_wasi::Runner::new(&cache).unwrap().prepare(&image).unwrap(), Some(warden_wasi::Fetched::Compiled));
    assert_eq!(std::fs::metadata(&file).unwrap().nlink(), 1, "replaced, not written through");
    assert_eq!(warden_wasi::Runner::new(&cache).unwrap().prepare(&image).unwrap(), Some(warden_wasi::Fetched::Disk));
    if std::fs::metadata("/proc/self").unwrap().uid() == 0 {
        // Another user's file, and a folder above the cache that another user owns.
        std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
        assert_eq!(warden_wasi::Runner::new(&cache).unwrap().prepare(&image).unwrap(), Some(warden_wasi::Fetched::Compiled));
        std::os::unix::fs::chown(dir.path(), Some(65534), None).unwrap();
        assert_eq!(warden_wasi::Runner::new(&cache).unwrap_err().code(), "wasi::cache");
    }
}

#[test]
fn a_cache_dir_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("cache");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = warden_wasi::Runner::new(&open).unwrap_err();
    assert_eq!(e.code(), "wasi::cache");
}
