//! The gate of `run_gated`: the command starts only once the caller's gate passes (warden
//! writes its durable decision record there), and a refusing gate starts nothing. Checked for
//! a run that builds its own view and for a run in a prepared view.

use std::path::Path;
use std::time::Duration;

use warden_sandbox::Error;

use crate::support::{TempDir, sh};

const PREPARED: &str = "mount view prepared once and reused";

/// Runs `touch marker` gated by a gate that waits, sees no marker yet, and lets it start.
/// Returns whether the run went through a prepared view.
fn passes_after_the_gate(ws: &Path) -> bool {
    let marker = ws.join("marker");
    let mut calls = 0;
    let mut gate = || {
        calls += 1;
        // Time enough for a command that did not wait to have run.
        std::thread::sleep(Duration::from_millis(300));
        if marker.exists() { Err("the command ran before its gate passed".to_string()) } else { Ok(()) }
    };
    let run = warden_sandbox::run_gated(&sh(ws, "touch marker"), &mut gate).unwrap();
    assert_eq!(calls, 1);
    assert_eq!(run.exit_code, Some(0), "{run:?}");
    assert!(marker.exists(), "the command did not run once its gate passed: {run:?}");
    std::fs::remove_file(&marker).unwrap();
    run.sandbox.notes.iter().any(|n| n.starts_with(PREPARED))
}

/// Runs `touch marker` gated by a gate that refuses: an error, and no marker.
fn refused_by_the_gate(ws: &Path) {
    let mut calls = 0;
    let mut gate = || {
        calls += 1;
        // Time enough for a command that did not wait to have run.
        std::thread::sleep(Duration::from_millis(300));
        Err("the record could not be written".to_string())
    };
    match warden_sandbox::run_gated(&sh(ws, "touch marker"), &mut gate) {
        Err(Error::Gate(why)) => assert_eq!(why, "the record could not be written"),
        other => panic!("expected the gate's refusal, got {other:?}"),
    }
    assert_eq!(calls, 1);
    // The half-built sandbox was killed and reaped before `run_gated` returned.
    std::thread::sleep(Duration::from_millis(100));
    assert!(!ws.join("marker").exists(), "a refused command ran");
}

#[test]
fn the_command_waits_for_its_gate_with_and_without_a_prepared_view() {
    // The first run of a view builds its own; from the second on, runs join a prepared one.
    let t = TempDir::new("gate-pass");
    assert!(!passes_after_the_gate(t.path()), "the first run should build its own view");
    assert!(passes_after_the_gate(t.path()), "the second run should join the prepared view");
}

#[test]
fn a_refusing_gate_starts_nothing_with_and_without_a_prepared_view() {
    let t = TempDir::new("gate-refuse");
    refused_by_the_gate(t.path());
    refused_by_the_gate(t.path());
    // The same view, after two refusals: a prepared one, and it still works.
    assert!(passes_after_the_gate(t.path()));
}

#[test]
fn a_missing_program_never_reaches_the_gate() {
    let t = TempDir::new("gate-missing");
    let mut spec = sh(t.path(), "");
    spec.argv = vec!["no-such-program-here".into()];
    let mut calls = 0;
    let run = warden_sandbox::run_gated(&spec, &mut || {
        calls += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(run.exit_code, Some(127), "{run:?}");
    assert_eq!(calls, 0);
}
