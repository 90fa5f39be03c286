//! Links a run plants for the next run's plan (`planted.rs`): a command that may write the
//! workspace moves a folder aside and puts a link where a grant of the spec lies beneath it.
//! The next run of the same spec must not show or open what the link points to.

use warden_sandbox::{Access, Mount, Spec};

use crate::support::{TempDir, sh};

/// The first run's script: `a` moved aside, and a new `a` holding a link `a/name` to `target`.
fn plant(target: &std::path::Path, name: &str) -> String {
    format!("mv a a2 && mkdir a && ln -s {} a/{name} && echo planted", target.display())
}

/// `sh -c script` in `ws` (writable) with `extra` granted too.
fn spec(ws: &std::path::Path, script: &str, extra: &[(&str, Access)]) -> Spec {
    let mut s = sh(ws, script);
    for (p, a) in extra {
        s.mounts.push(Mount { path: ws.join(p), access: *a });
    }
    s
}

#[test]
fn a_read_grant_a_run_redirects_shows_nothing_outside_in_the_next() {
    let t = TempDir::new("planted-read");
    let outside = TempDir::new("planted-read-outside");
    std::fs::write(outside.path().join("secret"), "k-52e1").unwrap();
    std::fs::create_dir_all(t.path().join("a/vendor")).unwrap();
    let grants = [("a/vendor", Access::Read)];
    let plant = plant(outside.path(), "vendor");
    let first = warden_sandbox::run(&spec(t.path(), &plant, &grants)).unwrap();
    assert_eq!(first.stdout.text, "planted\n", "{first:?}");
    let second = warden_sandbox::run(&spec(t.path(), "cat a/vendor/secret; ls a/vendor/; echo end", &grants)).unwrap();
    assert!(!second.stdout.text.contains("k-52e1") && !second.stdout.text.contains("secret"), "{second:?}");
    assert!(second.stdout.text.ends_with("end\n"), "{second:?}");
    assert!(second.sandbox.notes.iter().any(|n| n.contains("a/vendor not shown")), "{second:?}");
}

#[test]
fn a_write_grant_a_run_redirects_writes_nothing_outside_in_the_next() {
    let t = TempDir::new("planted-write");
    let outside = TempDir::new("planted-write-outside");
    std::fs::create_dir_all(t.path().join("a/out")).unwrap();
    let grants = [("a/out", Access::Write)];
    let plant = plant(outside.path(), "out");
    let first = warden_sandbox::run(&spec(t.path(), &plant, &grants)).unwrap();
    assert_eq!(first.stdout.text, "planted\n", "{first:?}");
    let second = warden_sandbox::run(&spec(t.path(), "echo x > a/out/dropped; echo end", &grants)).unwrap();
    assert!(second.stdout.text.ends_with("end\n"), "{second:?}");
    assert!(!outside.path().join("dropped").exists(), "the run wrote through the planted link: {second:?}");
}

#[test]
fn a_link_outside_the_workspace_leading_to_a_planted_one_is_not_followed() {
    // `via` is the host's own link (the command cannot touch it) into the workspace, where
    // the first run plants the second link.
    let t = TempDir::new("planted-chain");
    let ws = t.path().join("ws");
    let outside = TempDir::new("planted-chain-outside");
    std::fs::write(outside.path().join("secret"), "k-9b07").unwrap();
    std::fs::create_dir_all(ws.join("a/vendor")).unwrap();
    std::os::unix::fs::symlink(ws.join("a"), t.path().join("via")).unwrap();
    let with_via = |script: &str| {
        let mut s = sh(&ws, script);
        s.mounts.push(Mount { path: t.path().join("via/vendor"), access: Access::Read });
        s
    };
    let plant = plant(outside.path(), "vendor");
    assert_eq!(warden_sandbox::run(&with_via(&plant)).unwrap().stdout.text, "planted\n");
    let secret = outside.path().join("secret");
    let second = warden_sandbox::run(&with_via(&format!("cat {}; echo end", secret.display()))).unwrap();
    assert!(!second.stdout.text.contains("k-9b07"), "{second:?}");
}

#[test]
fn a_grant_through_a_link_outside_every_writable_grant_is_still_followed() {
    // Under the scratch /tmp: the link is recreated on the run's tmpfs.
    let t = TempDir::new("planted-host-link");
    let ws = t.path().join("ws");
    let data = t.path().join("data");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("file"), "shown-3c4d").unwrap();
    std::os::unix::fs::symlink(&data, t.path().join("data-link")).unwrap();
    let mut s = sh(&ws, &format!("cat {}/file", data.display()));
    s.mounts.push(Mount { path: t.path().join("data-link"), access: Access::Read });
    let run = warden_sandbox::run(&s).unwrap();
    assert_eq!(run.stdout.text, "shown-3c4d", "{run:?}");
}
