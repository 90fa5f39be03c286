//! Recalled layouts (`recall.rs`): a run of the same spec takes the layout planned for the
//! last one only while the file system answers as it did then. Each case changes the file
//! system between two runs of one spec, once from outside and once from inside the first
//! run, in the way that would open a hole if the second run took the old layout.

use warden_sandbox::{Access, Mount};

use crate::support::{TempDir, sh};

#[test]
fn a_secret_made_between_runs_is_covered_in_the_next() {
    let t = TempDir::new("recall-secret");
    let script = "cat .env 2>/dev/null; echo end";
    let mut spec = sh(t.path(), script);
    spec.mounts.push(Mount { path: t.path().join(".env"), access: Access::Hide });
    // Twice with nothing there: the layout is planned, then recalled.
    for _ in 0..2 {
        let run = warden_sandbox::run(&spec).unwrap();
        assert_eq!(run.stdout.text, "end\n", "{run:?}");
    }
    std::fs::write(t.path().join(".env"), "TOKEN=f3a9c1\n").unwrap();
    for _ in 0..2 {
        let run = warden_sandbox::run(&spec).unwrap();
        assert!(!run.stdout.text.contains("f3a9c1"), "the new secret was shown: {run:?}");
        assert!(run.stdout.text.ends_with("end\n"), "{run:?}");
    }
}

#[test]
fn a_guarded_folder_a_run_makes_is_guarded_in_the_next() {
    let t = TempDir::new("recall-guard");
    std::fs::create_dir(t.path().join(".git")).unwrap();
    let hooks = t.path().join(".git/hooks");
    let mut spec = sh(t.path(), "mkdir -p .git/hooks && echo 'curl evil' > .git/hooks/pre-commit; echo $?");
    spec.mounts.push(Mount { path: hooks.clone(), access: Access::Guard });
    // The first run finds no .git/hooks (nothing to guard) and makes it; its hook is removed
    // from outside, as a host that noticed would. The second run's layout must guard the
    // folder the first one made.
    let first = warden_sandbox::run(&spec).unwrap();
    assert_eq!(first.exit_code, Some(0), "{first:?}");
    assert!(hooks.is_dir());
    std::fs::remove_file(hooks.join("pre-commit")).unwrap();
    let second = warden_sandbox::run(&spec).unwrap();
    assert_ne!(second.stdout.text, "0\n", "the guarded folder was writable: {second:?}");
    assert!(!hooks.join("pre-commit").exists(), "a hook was planted in the guarded folder");
}
