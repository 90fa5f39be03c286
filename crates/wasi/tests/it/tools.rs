//! The toolbox's tools against the GNU ones on the same tree (sorted where traversal order
//! may differ: GNU tools walk directories in readdir order, the toolbox sorts).

use std::path::Path;
use std::process::Command;

use crate::{ro, run, sorted, spec, tree};

/// Copies `src` into `dst` (files and folders only).
fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// The GNU tool's stdout and exit code, run in `dir` in the C locale.
fn gnu(tool: &str, args: &[&str], dir: &Path) -> Option<(String, i32)> {
    let out = Command::new(tool).args(args).current_dir(dir).env("LC_ALL", "C").output().ok()?;
    Some((String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code().unwrap_or(-1)))
}

/// The feedback crate's sources, copied to a fresh temp dir.
fn source_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../feedback/src"), dir.path());
    dir
}

#[test]
fn grep_rn_matches_gnu_grep_on_a_source_tree() {
    let dir = source_tree();
    let cases: &[&[&str]] = &[
        &["-rn", "main", "."],
        &["-rn", "main"],
        &["-rn", "fn [a-z_]*(", "."],
        &["-rnE", "fn [a-z_]+\\(", "src", "."],
        &["-rni", "CAPTURE", "."],
        &["-rl", "Stream", "."],
        &["-rc", "pub", "."],
        &["-rnw", "Run", "."],
        &["-rnF", "a.b", "."],
        &["-rnv", "[a-z]", "."],
        &["-rn", "^use \\(std\\|crate\\)::", "."],
        &["-n", "pub", "lib.rs"],
        &["-rh", "Denial", "."],
    ];
    for args in cases {
        let Some((want, want_code)) = gnu("grep", args, dir.path()) else {
            eprintln!("no GNU grep here: skipped");
            return;
        };
        let mut argv = vec!["grep"];
        argv.extend_from_slice(args);
        let r = run(&spec(&argv, vec![ro(dir.path(), "/src")], "/src"));
        assert_eq!(sorted(&r.stdout.text), sorted(&want), "grep {args:?}\nstderr: {}", r.stderr.text);
        assert_eq!(r.exit_code, Some(want_code), "grep {args:?}");
    }
    // The same tree at the same path on both sides: absolute operands match too.
    let host = dir.path().to_str().unwrap();
    let (want, _) = gnu("grep", &["-rn", "main", host], dir.path()).unwrap();
    let r = run(&spec(&["grep", "-rn", "main", host], vec![ro(dir.path(), host)], host));
    assert_eq!(sorted(&r.stdout.text), sorted(&want));
    assert!(want.lines().count() > 3, "{want}");
}

#[test]
fn read_tools_match_gnu() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (1..=30).map(|i| format!("line {}\n", (i * 7) % 13)).collect();
    tree(
        dir.path(),
        &[
            ("a.txt", &lines),
            ("b.txt", "one two  three\nfour\n\nfive six\n"),
            ("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n"),
            ("src/lib/mod.rs", "pub mod x;\n"),
            (".hidden", "h\n"),
            ("nums", "10\n9\n100\n-3\n9\nabc\n"),
            ("new.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"),
            ("old.txt", "a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\n"),
        ],
    );
    let sort_out = |tool: &str| matches!(tool, "find");
    let cases: &[(&str, &[&str])] = &[
        ("cat", &["a.txt", "b.txt"]),
        ("head", &["-n", "5", "a.txt"]),
        ("head", &["-3", "a.txt", "b.txt"]),
        ("tail", &["-n", "4", "a.txt"]),
        ("tail", &["-n", "+28", "a.txt"]),
        ("wc", &["-l", "a.txt"]),
        ("wc", &["a.txt", "b.txt"]),
        ("wc", &["-w", "b.txt"]),
        ("sort", &["a.txt"]),
        ("sort", &["-r", "-u", "a.txt"]),
        ("sort", &["-n", "nums"]),
        ("sort", &["-nu", "nums"]),
        ("ls", &[]),
        ("ls", &["-a"]),
        ("ls", &["-1", "src", "a.txt"]),
        ("ls", &["-R"]),
        ("find", &["."]),
        ("find", &[".", "-name", "*.rs"]),
        ("find", &["src", "-type", "d"]),
        ("find", &[".", "-maxdepth", "1", "-type", "f", "-name", "[ab]*"]),
    ];
    for (tool, args) in cases {
        let Some((want, code)) = gnu(tool, args, dir.path()) else { continue };
        let mut argv = vec![*tool];
        argv.extend_from_slice(args);
        let r = run(&spec(&argv, vec![ro(dir.path(), "/w")], "/w"));
        if sort_out(tool) {
            assert_eq!(sorted(&r.stdout.text), sorted(&want), "{tool} {args:?}");
        } else {
            assert_eq!(r.stdout.text, want, "{tool} {args:?}\nstderr: {}", r.stderr.text);
        }
        assert_eq!(r.exit_code, Some(code), "{tool} {args:?}");
    }
    // uniq -c on sorted input.
    let (sorted_a, _) = gnu("sort", &["a.txt"], dir.path()).unwrap();
    let mut s = spec(&["uniq", "-c"], vec![], "/");
    s.stdin = sorted_a.clone().into_bytes();
    let r = run(&s);
    let want = Command::new("uniq").arg("-c").env("LC_ALL", "C").stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().and_then(|mut c| {
        use std::io::Write as _;
        c.stdin.take().unwrap().write_all(sorted_a.as_bytes())?;
        c.wait_with_output()
    });
    if let Ok(w) = want {
        assert_eq!(r.stdout.text, String::from_utf8_lossy(&w.stdout));
    }
    // diff -u: the same hunks (headers carry times).
    let (want, code) = gnu("diff", &["-u", "old.txt", "new.txt"], dir.path()).unwrap_or_default();
    let r = run(&spec(&["diff", "-u", "old.txt", "new.txt"], vec![ro(dir.path(), "/w")], "/w"));
    let body = |t: &str| t.lines().skip(2).map(String::from).collect::<Vec<_>>();
    if !want.is_empty() {
        assert_eq!(body(&r.stdout.text), body(&want), "{}", r.stdout.text);
        assert_eq!(r.exit_code, Some(code));
    }
    assert!(r.stdout.text.starts_with("--- old.txt\t"), "{}", r.stdout.text);
}

#[test]
fn tree_stat_pwd_echo() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[("a/b.txt", "b"), ("a/c/d.txt", "dd"), ("e.txt", "")]);
    let w = || vec![ro(dir.path(), "/w")];
    let r = run(&spec(&["tree"], w(), "/w"));
    assert_eq!(
        r.stdout.text,
        ".\n├── a\n│   ├── b.txt\n│   └── c\n│       └── d.txt\n└── e.txt\n\n2 directories, 3 files\n"
    );
    let r = run(&spec(&["stat", "a/c/d.txt", "e.txt"], w(), "/w"));
    assert!(r.stdout.text.contains("  File: a/c/d.txt\n  Size: 2"), "{}", r.stdout.text);
    assert!(r.stdout.text.contains("regular empty file"), "{}", r.stdout.text);
    let r = run(&spec(&["pwd"], w(), "/w/a"));
    assert_eq!(r.stdout.text, "/w/a\n");
    let r = run(&spec(&["echo", "-n", "x", "y"], vec![], "/"));
    assert_eq!(r.stdout.text, "x y");
    let r = run(&spec(&["ls", "-l", "a"], w(), "/w"));
    assert!(r.stdout.text.lines().any(|l| l.starts_with("- ") && l.ends_with(" b.txt")), "{}", r.stdout.text);
    assert!(r.stdout.text.lines().any(|l| l.starts_with("d ") && l.ends_with(" c")), "{}", r.stdout.text);
}
