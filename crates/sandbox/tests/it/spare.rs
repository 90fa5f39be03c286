//! Root callers: a run without network starts in the network namespace `warm` made ahead
//! (`spare.rs`): a new one, empty, used by one run only, and the calling thread stays in its own.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use crate::support::{TempDir, sh};

const NOTE: &str = "network namespace made ahead";

fn net(link: &str) -> String {
    std::fs::read_link(link).unwrap().display().to_string()
}

#[test]
fn a_run_starts_in_a_network_namespace_made_ahead_used_once() {
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        return; // only root callers make one ahead
    }
    let t = TempDir::new("spare");
    let host = net("/proc/thread-self/ns/net");
    // The namespace, then its interfaces (`/proc/net/dev` lists them after two header lines).
    let spec = sh(t.path(), "readlink /proc/self/ns/net; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    let mut ahead = BTreeSet::new();
    // Other tests of this binary may take a spare first: several tries, each bounded.
    for _ in 0..20 {
        warden_sandbox::warm(t.path());
        std::thread::sleep(Duration::from_millis(50));
        let run = warden_sandbox::run(&spec).unwrap();
        assert_eq!(run.exit_code, Some(0), "{run:?}");
        let lines: Vec<&str> = run.stdout.text.lines().collect();
        let (ns, interfaces) = lines.split_first().unwrap();
        assert!(ns.starts_with("net:[") && *ns != host, "{run:?}");
        assert_eq!(interfaces, ["lo"], "{run:?}");
        assert_eq!(net("/proc/thread-self/ns/net"), host, "the calling thread went back to its own namespace");
        if run.sandbox.notes.iter().any(|n| n.starts_with(NOTE)) {
            assert!(ahead.insert(ns.to_string()), "a namespace made ahead was used twice: {ns}");
        }
        if ahead.len() >= 3 {
            break;
        }
    }
    assert!(!ahead.is_empty(), "no run started in a namespace made ahead");
}
