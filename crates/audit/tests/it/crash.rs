//! The crash test: a child process appends records in a loop and is killed with SIGKILL at
//! random points; after each kill the log verifies (a torn tail allowed), and a fresh
//! `Log::open` + `append` verifies clean. The child is this test binary run again with
//! `WARDEN_AUDIT_CRASH_CHILD` naming the log. Seeded, bounded (200 kills, 0–20 ms each).


use crate::common::{Rng, decision, tempdir};
use std::process::{Command, Stdio};
use std::time::Duration;
use warden_audit::{Log, verify};

const CHILD_ENV: &str = "WARDEN_AUDIT_CRASH_CHILD";
const KILLS: usize = 200;
/// Kills per log file: verifying after each kill reads the whole log, so a log is kept short.
const KILLS_PER_LOG: usize = 20;

/// The child's side: append until killed (bounded, in case nobody kills it).
#[test]
fn crash_child() {
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let mut log = Log::open(std::path::Path::new(&path)).unwrap();
    for i in 0..200_000 {
        let mut entry = decision("child", Some("bob"), &format!("cargo test --case {i}"), "allow", None);
        entry.note = Some("x".repeat(i % 500));
        log.append(&entry).unwrap();
    }
}

#[test]
fn sigkill_at_random_points_leaves_a_log_that_verifies() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = tempdir("crash");
    let mut rng = Rng(2026);
    let mut appended_by_parent = 0;
    let mut records = 0;
    for kill in 0..KILLS {
        let path = dir.join(format!("audit-{}.jsonl", kill / KILLS_PER_LOG));
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "crash::crash_child", "--test-threads=1", "--nocapture"])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(20_000)));
        child.kill().unwrap();
        child.wait().unwrap();
        // Killed before it created the log: nothing to verify yet.
        if path.exists() {
            let report = verify(&path).unwrap_or_else(|e| panic!("kill {kill}: {e}"));
            assert!(report.ok(), "kill {kill}: {:#?}", report.problems);
        }
        Log::open(&path).unwrap().append(&decision("parent", None, "ls", "allow", None)).unwrap();
        appended_by_parent += 1;
        let report = verify(&path).unwrap();
        assert!(report.ok() && !report.torn_tail, "kill {kill} then append: {report:#?}");
        if kill % KILLS_PER_LOG == KILLS_PER_LOG - 1 {
            records += report.records;
        }
    }
    assert!(records > appended_by_parent, "the child never appended: {records} records");
    let _ = std::fs::remove_dir_all(dir);
}
