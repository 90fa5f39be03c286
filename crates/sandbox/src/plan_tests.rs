//! Tests of `plan.rs`.

use super::*;
use crate::Mount;

fn normalise_(s: &Spec) -> BTreeMap<PathBuf, Access> {
    normalise(s, &mut Canon::default())
}

/// The canonical form as `canonicalize` gives it, walking up to the longest existing
/// prefix: what [`Canon`] must agree with.
fn reference(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) => reference(parent).join(name),
        _ => p.to_path_buf(),
    }
}

#[test]
fn remembered_canonical_forms_agree_with_canonicalize() {
    use std::os::unix::fs::symlink;
    let t = std::env::temp_dir().join(format!("warden-canon-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&t);
    std::fs::create_dir_all(t.join("real/sub")).unwrap();
    std::fs::write(t.join("real/file"), "x").unwrap();
    symlink(t.join("real"), t.join("dirlink")).unwrap();
    symlink("real/file", t.join("filelink")).unwrap();
    symlink("dirlink/sub/../sub", t.join("chain")).unwrap();
    symlink(t.join("nowhere/at/all"), t.join("dangling")).unwrap();
    symlink("../", t.join("real/up")).unwrap();
    let names = [
        "", "real", "real/sub", "real/file", "real/file/under", "dirlink", "dirlink/sub", "dirlink/sub/x/y", "filelink",
        "chain", "chain/z", "dangling", "dangling/x", "missing", "missing/a/b", "real/up", "real/up/dirlink/sub",
        "real/./sub", "real/sub/..", "real/sub/../file", "dirlink/up/real",
    ];
    // One `Canon` across all the paths, in an order where links come after what they use.
    let mut canon = Canon::default();
    for round in 0..2 {
        for n in names {
            let p = t.join(n);
            assert_eq!(canon.get(&p), reference(&p), "round {round}: {}", p.display());
        }
    }
    for p in ["/", "/proc/self", "/usr/bin/../lib", "/nonexistent-x/y"] {
        assert_eq!(Canon::default().get(Path::new(p)), reference(Path::new(p)), "{p}");
    }
    let _ = std::fs::remove_dir_all(&t);
}

fn spec(mounts: &[(&str, Access)]) -> Spec {
    let mut s = Spec::new(vec!["true".into()], "/".into());
    s.mounts = mounts.iter().map(|(p, a)| Mount { path: p.into(), access: *a }).collect();
    s
}

#[test]
fn folders_holding_guarded_paths_in_writable_grants_are_pinned() {
    let t = std::env::temp_dir().join(format!("warden-pins-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&t);
    for d in ["ws/.git/hooks", "ws/sub/deep/.git", "ws/.claude", "ro/.git/hooks"] {
        std::fs::create_dir_all(t.join(d)).unwrap();
    }
    for f in ["ws/.git/config", "ws/sub/deep/.git/config", "ws/.claude/settings.json", "ws/.mcp.json"] {
        std::fs::write(t.join(f), "x").unwrap();
    }
    std::os::unix::fs::symlink(t.join("ws/.claude"), t.join("ws/link")).unwrap();
    let p = |rel: &str| t.join(rel).to_string_lossy().into_owned();
    let s = spec(&[
        (&p("ws"), Access::Write),
        (&p("ro"), Access::Read),
        (&p("ws/.git/hooks"), Access::Guard),
        (&p("ws/.git/config"), Access::Guard),
        (&p("ws/sub/deep/.git/config"), Access::Guard),
        (&p("ws/.mcp.json"), Access::Guard),
        (&p("ws/link/settings.json"), Access::Guard),
        (&p("ro/.git/hooks"), Access::Guard),
    ]);
    let mut canon = Canon::default();
    let view = normalise(&s, &mut canon);
    let mut got = pins(&view, &mut canon);
    got.sort();
    // Every folder between the grant and a guarded path, once; the link's guard is pinned
    // where the link leads; nothing for a guard at the top of the grant or in a read-only one.
    let want: Vec<PathBuf> = [".claude", ".git", "sub", "sub/deep", "sub/deep/.git"].iter().map(|r| t.join("ws").join(r)).collect();
    assert_eq!(got, want);
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn children_with_the_same_access_are_dropped() {
    let v = normalise_(&spec(&[("/usr", Access::Read), ("/usr/lib", Access::Read), ("/usr/share", Access::Write)]));
    assert_eq!(v.len(), 2, "{v:?}");
}

#[test]
fn hidden_paths_outside_the_view_are_dropped() {
    let v = normalise_(&spec(&[("/usr", Access::Read), ("/root/.ssh", Access::Hide), ("/usr/x", Access::Write)]));
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(!v.contains_key(Path::new("/root/.ssh")));
}

#[test]
fn the_nearest_path_above_is_the_longest_a_scan_finds() {
    let map: BTreeMap<PathBuf, usize> =
        ["/", "/a", "/a/b", "/a/bc", "/a/b/c/d", "/x/y", "/ab"].iter().enumerate().map(|(i, p)| (PathBuf::from(p), i)).collect();
    for probe in ["/", "/a", "/a/b", "/a/b/c", "/a/b/c/d/e", "/a/bcd", "/ab/c", "/x", "/x/y/z", "/a/./b/c", "/a//bc/d"] {
        let p = Path::new(probe);
        let scan = map.iter().filter(|(q, _)| p.starts_with(q)).max_by_key(|(q, _)| q.as_os_str().len());
        assert_eq!(nearest(&map, p), scan, "{probe}");
    }
}

#[test]
fn guards_under_read_only_grants_are_dropped_but_still_swallow_writes_beneath() {
    let v = normalise_(&spec(&[
        ("/etc", Access::Read),
        ("/etc/cron.d", Access::Guard),
        ("/etc/cron.d/job", Access::Write),
        ("/ws", Access::Write),
        ("/ws/.git/hooks", Access::Guard),
    ]));
    let got: Vec<_> = v.into_iter().collect();
    let want = [("/etc", Access::Read), ("/ws", Access::Write), ("/ws/.git/hooks", Access::Guard)];
    assert_eq!(got, want.map(|(p, a)| (PathBuf::from(p), a)).to_vec());
}

#[test]
fn shown_is_the_normalised_view_and_its_links() {
    let s = spec(&[("/usr", Access::Read), ("/usr/lib", Access::Read), ("/bin/sh", Access::Read), ("/root/.ssh", Access::Hide)]);
    let Shown { paths: view, links } = shown(&s);
    assert_eq!(view, normalise_(&s).into_iter().collect::<Vec<_>>());
    assert!(!view.iter().any(|(p, _)| p == Path::new("/usr/lib") || p == Path::new("/root/.ssh")), "{view:?}");
    // Where `/bin` is a link (merged /usr), it is recreated with its text.
    match std::fs::read_link("/bin") {
        Ok(text) => assert_eq!(links, vec![(PathBuf::from("/bin"), text)]),
        Err(_) => assert!(links.is_empty(), "{links:?}"),
    }
}

#[test]
fn hide_wins_and_swallows_children() {
    let v = normalise_(&spec(&[("/", Access::Read), ("/etc", Access::Hide), ("/etc/ssl", Access::Read)]));
    assert_eq!(v.into_iter().collect::<Vec<_>>(), vec![(PathBuf::from("/"), Access::Read), (PathBuf::from("/etc"), Access::Hide)]);
}

#[test]
fn programs_outside_the_view_are_not_found() {
    let s = spec(&[("/nonexistent-dir", Access::Read)]);
    assert!(resolve_program(&s, &normalise_(&s), &mut Canon::default()).is_none());
    let s = spec(&[("/usr", Access::Read), ("/bin", Access::Read)]);
    assert!(resolve_program(&s, &normalise_(&s), &mut Canon::default()).is_some());
}

#[test]
fn staging_avoids_granted_paths() {
    let s = staging_dir(&[PathBuf::from("/tmp/ws")], &mut Canon::default()).unwrap();
    assert_ne!(s, PathBuf::from("/tmp"));
}
