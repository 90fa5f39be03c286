//! `find` end to end on recorded output, against a scratch workspace on disk.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{MAX_LINE, MAX_PATHS, MAX_SCAN, find, find_in};
use crate::SourcePath;

/// A unique scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(files: &[&str]) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("warden-feedback-unit-{}-{n}", std::process::id()));
        let ws = root.join("ws");
        fs::create_dir_all(&ws).unwrap();
        fs::write(root.join("outside.py"), "x\n").unwrap();
        for f in files {
            let p = ws.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "x\n").unwrap();
        }
        Scratch(root)
    }
    fn ws(&self) -> PathBuf {
        self.0.join("ws")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn sp(path: &str, line: Option<u32>, column: Option<u32>) -> SourcePath {
    SourcePath { path: path.to_owned(), line, column }
}

fn run(s: &Scratch, cwd: &Path, output: &str) -> Vec<SourcePath> {
    find(output, &s.ws(), cwd)
}

#[test]
fn every_family_on_recorded_output() {
    let s = Scratch::new(&[
        "src/main.rs",
        "a.c",
        "x.h",
        "sub/mod.py",
        "tests/test_x.py",
        "a.js",
        "a.mjs",
        "src/a.ts",
        "main.go",
        "A.java",
        "script.sh",
    ]);
    let ws = s.ws();
    let w = ws.display();
    let output = format!(
        "error[E0308]: mismatched types\n \u{1b}[1m\u{1b}[94m--> \u{1b}[0msrc/main.rs:3:20\n\
         thread 'main' panicked at src/main.rs:10:5:\n\
         In file included from x.h:2,\n\u{1b}[01m\u{1b}[Ka.c:3:5:\u{1b}[m\u{1b}[K error: boom\n\
         Traceback (most recent call last):\n  File \"{w}/sub/mod.py\", line 4, in f\n\
         tests/test_x.py:12: AssertionError\ntests/test_x.py::test_name FAILED\n\
         {w}/a.js:3\n    at f ({w}/a.js:3:9)\n    at {w}/a.js:4:1\n    at file://{w}/a.mjs:5:2\n\
         src/a.ts(3,5): error TS2322: x\nsrc/a.ts:3:6 - error TS2322: x\n\
         ./main.go:5:2: undefined: x\nA.java:3: error: incompatible types\n\
         ./script.sh: line 3: foo: command not found\nscript.sh: 4: foo: not found\n\
         see the note at x.h:9 for more\n"
    );
    let expected = vec![
        sp("src/main.rs", Some(3), Some(20)),
        sp("src/main.rs", Some(10), Some(5)),
        sp("x.h", Some(2), None),
        sp("a.c", Some(3), Some(5)),
        sp("sub/mod.py", Some(4), None),
        sp("tests/test_x.py", Some(12), None),
        sp("tests/test_x.py", None, None),
        sp("a.js", Some(3), None),
        sp("a.js", Some(3), Some(9)),
        sp("a.js", Some(4), Some(1)),
        sp("a.mjs", Some(5), Some(2)),
        sp("src/a.ts", Some(3), Some(5)),
        sp("src/a.ts", Some(3), Some(6)),
        sp("main.go", Some(5), Some(2)),
        sp("A.java", Some(3), None),
        sp("script.sh", Some(3), None),
        sp("script.sh", Some(4), None),
        sp("x.h", Some(9), None),
    ];
    assert_eq!(run(&s, &ws, &output), expected);
}

#[test]
fn relative_paths_resolve_against_cwd() {
    let s = Scratch::new(&["pkg/src/a.c"]);
    let cwd = s.ws().join("pkg");
    assert_eq!(run(&s, &cwd, "src/a.c:1:2: error: x"), [sp("pkg/src/a.c", Some(1), Some(2))]);
    assert_eq!(run(&s, &s.ws(), "src/a.c:1:2: error: x"), []);
}

#[test]
fn duplicates_are_reported_once_in_first_order() {
    let s = Scratch::new(&["a.c", "b.c"]);
    let out = "b.c:2:1: error: x\na.c:1:1: error: y\nb.c:2:1: note: z\n./b.c:2:1: again\nb.c:2: no column\n";
    let expected = [sp("b.c", Some(2), Some(1)), sp("a.c", Some(1), Some(1)), sp("b.c", Some(2), None)];
    assert_eq!(run(&s, &s.ws(), out), expected);
}

#[test]
fn hostile_paths_are_dropped() {
    let s = Scratch::new(&["in.py", "dir/x.c"]);
    let ws = s.ws();
    std::os::unix::fs::symlink(s.0.join("outside.py"), ws.join("link.py")).unwrap();
    std::os::unix::fs::symlink(&s.0, ws.join("up")).unwrap();
    let outside = s.0.join("outside.py");
    let output = format!(
        "../outside.py:1: error: escape by dotdot\n\
         dir/../../outside.py:1: error: escape deeper\n\
         link.py:1: error: symlink to a file outside\n\
         up/outside.py:1: error: symlinked dir outside\n\
         {}:1: error: absolute outside\n\
         /etc/passwd:1: error: system file\n\
         missing.py:3: error: no such file\n\
         dir:1: error: a directory\n\
         dir/x.c:0: error: line zero\n\
         dir/x.c:4294967296: error: line overflow\n\
         \0in.py:1: nul\n  File \"{}\", line 2\n",
        outside.display(),
        outside.display()
    );
    assert_eq!(run(&s, &ws, &output), []);
    assert_eq!(run(&s, &ws, "dir/../in.py:5: error: ok"), [sp("in.py", Some(5), None)]);
}

#[test]
fn workspace_that_does_not_exist_gives_nothing() {
    let s = Scratch::new(&["a.c"]);
    let gone = s.0.join("nope");
    assert_eq!(find("a.c:1: error: x", &gone, &gone), []);
}

#[test]
fn shell_names_are_not_files_even_when_present() {
    let s = Scratch::new(&["sh", "bash"]);
    assert_eq!(run(&s, &s.ws(), "sh: 1: nosuchcmd: not found\nbash: line 3: x: command not found\n"), []);
}

#[test]
fn long_lines_are_skipped_and_scanning_is_bounded() {
    let s = Scratch::new(&["a.c", "late.c"]);
    let long = format!("a.c:1: error: {}", "x".repeat(MAX_LINE));
    assert_eq!(run(&s, &s.ws(), &long), []);
    let filler = "y\n".repeat(MAX_SCAN / 2);
    assert_eq!(run(&s, &s.ws(), &format!("{filler}late.c:1: error: x\n")), []);
    assert_eq!(run(&s, &s.ws(), &format!("late.c:1: error: x\n{filler}")), [sp("late.c", Some(1), None)]);
}

#[test]
fn each_stream_is_scanned_at_its_head_and_tail_whatever_the_other_holds() {
    let s = Scratch::new(&["run.py", "lib/mod.py", "last.c"]);
    let ws = s.ws();
    // A long log on stderr, with the final error at its end; a location on stdout.
    let stderr = format!("lib/mod.py:2:3: y\n{}last.c:9: error: x\n", "1234567\n".repeat(MAX_SCAN / 4));
    let stdout = "run.py:1:1: x\n";
    let found = find_in(&[&stderr, stdout], &ws, &ws);
    for want in [sp("lib/mod.py", Some(2), Some(3)), sp("last.c", Some(9), None), sp("run.py", Some(1), Some(1))] {
        assert!(found.contains(&want), "{want:?} in {found:?}");
    }
    // Under its share, a stream is scanned whole.
    assert_eq!(find_in(&["last.c:1: error: x\n", ""], &ws, &ws), [sp("last.c", Some(1), None)]);
}

#[test]
fn relative_paths_after_make_enters_a_folder_are_relative_to_it() {
    let s = Scratch::new(&["csrc/a.c", "b.c", "lib/sub/c.c"]);
    let ws = s.ws();
    let out = format!(
        "make: Entering directory '{ws}/csrc'\na.c:3:13: error: x\nmake[1]: Entering directory `{ws}/lib/sub'\nc.c:1:2: error: y\n\
         make[1]: Leaving directory '{ws}/lib/sub'\nmake: Leaving directory '{ws}/csrc'\nb.c:4:5: error: z\n",
        ws = ws.display()
    );
    assert_eq!(run(&s, &ws, &out), [sp("csrc/a.c", Some(3), Some(13)), sp("lib/sub/c.c", Some(1), Some(2)), sp("b.c", Some(4), Some(5))]);
    // A line that only looks like make's does not move the base.
    assert_eq!(run(&s, &ws, "echo: Entering directory 'csrc'\nb.c:1: error: x\n"), [sp("b.c", Some(1), None)]);
}

#[test]
fn at_most_max_paths() {
    let s = Scratch::new(&["a.c"]);
    let output: String = (1..=200).map(|n| format!("a.c:{n}: error: x\n")).collect();
    let found = run(&s, &s.ws(), &output);
    assert_eq!(found.len(), MAX_PATHS);
    assert_eq!(found.last(), Some(&sp("a.c", Some(MAX_PATHS as u32), None)));
}

#[test]
fn file_urls_are_decoded() {
    let s = Scratch::new(&["a b.mjs"]);
    let out = format!("    at file://{}/a%20b.mjs:2:3\n", s.ws().display());
    assert_eq!(run(&s, &s.ws(), &out), [sp("a b.mjs", Some(2), Some(3))]);
}

#[test]
fn generic_fallback_only_when_no_family_matched() {
    let s = Scratch::new(&["a.c", "b.c", "Makefile"]);
    let out = "a.c:1: error: see b.c:2\nsomething at b.c:3:4 here\nMakefile:5: *** stop\nnear Makefile:6\n";
    let expected = [sp("a.c", Some(1), None), sp("b.c", Some(3), Some(4)), sp("Makefile", Some(5), None)];
    assert_eq!(run(&s, &s.ws(), out), expected);
}
