//! Prepared views: from the second run of the same view on, a run joins a view built once
//! (`view.rs`). Each run must still be fresh and as confined as a run without a view.

use std::time::{Duration, Instant};

use warden_feedback::Run;
use warden_sandbox::{Access, Mount, Spec};

use crate::support::{TempDir, sh};

const PREPARED: &str = "mount view prepared once and reused";

fn prepared(run: &Run) -> bool {
    run.sandbox.notes.iter().any(|n| n.starts_with(PREPARED))
}

/// Runs `spec` once to have its view seen, then returns the second (prepared) run of `script`.
fn in_view(spec: &Spec) -> Run {
    let first = warden_sandbox::run(spec).unwrap();
    assert!(!prepared(&first), "the first run of a view builds no template: {first:?}");
    let run = warden_sandbox::run(spec).unwrap();
    assert!(prepared(&run), "{run:?}");
    run
}

#[test]
fn runs_in_a_view_start_with_an_empty_tmp_and_keep_workspace_writes() {
    let t = TempDir::new("view-fresh");
    // The workspace lies under /tmp, the scratch directory: the view moves it onto each run's
    // new tmpfs.
    assert!(t.path().starts_with("/tmp"), "{:?}", t.path());
    let script = "ls -A /tmp | grep -v \"^$(basename $PWD)\\$\" | grep -c . ; \
                  echo mark > /tmp/left-behind; n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count; cat count";
    let spec = sh(t.path(), script);
    let runs: Vec<Run> = (0..4).map(|_| warden_sandbox::run(&spec).unwrap()).collect();
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(run.exit_code, Some(0), "{run:?}");
        assert_eq!(prepared(run), i > 0, "run {i}: {run:?}");
        // Nothing in /tmp but the way to the workspace, and the workspace counter went on.
        assert_eq!(run.stdout.text, format!("0\n{}\n", i + 1), "run {i}: {run:?}");
    }
    assert_eq!(std::fs::read_to_string(t.path().join("count")).unwrap(), "4\n");
}

#[test]
fn a_run_in_a_view_is_pid_two_under_its_init_with_its_own_proc_and_hostname() {
    let t = TempDir::new("view-pid");
    let run = in_view(&sh(
        t.path(),
        "echo $$; hostname 2>/dev/null || cat /proc/sys/kernel/hostname; for p in /proc/[0-9]*; do echo ${p#/proc/}; done",
    ));
    let mut lines = run.stdout.text.lines();
    assert_eq!(lines.next(), Some("2"), "{run:?}");
    assert_eq!(lines.next(), Some("warden"), "{run:?}");
    let pids: Vec<u32> = lines.map(|l| l.parse().unwrap()).collect();
    assert!(pids.iter().all(|p| *p < 16), "{run:?}");
}

#[test]
fn a_run_in_a_view_cannot_write_outside_its_grants_or_read_hidden_paths() {
    let t = TempDir::new("view-confine");
    let outside = TempDir::new("view-outside");
    let secret = t.path().join("secret.txt");
    std::fs::write(&secret, "token-8d1c").unwrap();
    let mut spec = sh(
        t.path(),
        &format!(
            "cat secret.txt; echo x > /etc/warden-view-x; echo x > {o}/planted; ls {o}; mount -t tmpfs none /mnt; \
             umount /proc; echo done",
            o = outside.path().display()
        ),
    );
    spec.mounts.push(Mount { path: secret.clone(), access: Access::Hide });
    let run = in_view(&spec);
    assert!(run.stdout.text.ends_with("done\n"), "{run:?}");
    assert!(!run.stdout.text.contains("token-8d1c"), "{run:?}");
    assert!(!std::path::Path::new("/etc/warden-view-x").exists());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "{run:?}");
}

#[test]
fn no_process_of_a_run_in_a_view_outlives_it() {
    let t = TempDir::new("view-orphans");
    let marker = format!("{}", 7_000_000 + std::process::id() % 1_000_000);
    let spec = sh(t.path(), &format!("(sleep {marker} &) ; sleep {marker} & echo started"));
    let run = in_view(&spec);
    assert_eq!(run.stdout.text, "started\n", "{run:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    let alive = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker)))
    };
    while alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "a sleep of the run is still alive");
}

#[test]
fn concurrent_runs_in_one_view_do_not_share_tmp() {
    let t = TempDir::new("view-concurrent");
    let spec = sh(t.path(), "echo $RANDOM$RANDOM > /tmp/mine; sleep 0.2; cat /tmp/mine; ls /tmp | grep -c mine");
    in_view(&spec);
    let runs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3).map(|_| s.spawn(|| warden_sandbox::run(&spec).unwrap())).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &runs {
        assert!(prepared(run), "{run:?}");
        assert_eq!(run.stdout.text.lines().nth(1), Some("1"), "{run:?}");
    }
}

#[test]
fn a_replaced_workspace_gets_a_new_view() {
    let t = TempDir::new("view-replace");
    let ws = t.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("which"), "old\n").unwrap();
    let spec = sh(&ws, "cat which");
    assert_eq!(in_view(&spec).stdout.text, "old\n");
    let other = t.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("which"), "new\n").unwrap();
    std::fs::rename(&ws, t.path().join("old-ws")).unwrap();
    std::fs::rename(&other, &ws).unwrap();
    let run = warden_sandbox::run(&spec).unwrap();
    assert_eq!(run.stdout.text, "new\n", "{run:?}");
}
