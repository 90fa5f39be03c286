//! Tests of path patterns, their index and resolution.

use super::*;

#[test]
fn malformed_patterns_are_refused_and_near_misses_are_not() {
    let err = |t: &str| parse_pattern(t).err().map(|b| b.message).unwrap_or_default();
    assert!(err("/a/b**/c").contains("must be a whole path segment"), "{}", err("/a/b**/c"));
    assert!(err("/a/**x").contains("must be a whole path segment"));
    assert!(err("${workspace}/a/${home}/b").contains("may only start a pattern"));
    assert!(err("/a/${workspace}").contains("may only start a pattern"));
    for ok in ["/a/*/b", "/a/**/b", "/a/*.pem", "/a/$/{b}", "/a/$x/b{", "/**", "${workspace}/**", "a/b/", "/a//b"] {
        assert!(parse_pattern(ok).is_ok(), "{ok}: {}", err(ok));
    }
    let p = parse_pattern("/a//b/**/**/c").unwrap();
    assert_eq!(p.segs.len(), 4, "{p:?}");
}

#[test]
fn index_finds_what_a_scan_finds() {
    let pats = [
        "/**/.ssh/**", "/**/*.pem", "/**/.git/hooks/**", "/usr/**", "/**", "~/.aws/**",
        "${workspace}/**/x", "${workspace}/.env", "/**/id_rsa*", "/a/**/b/c",
    ];
    let mut index = PathIndex::default();
    let compiled: Vec<PathPattern> = pats.iter().map(|p| parse_pattern(p).unwrap()).collect();
    for (i, p) in compiled.iter().enumerate() {
        index.insert(p.clone(), i);
    }
    let a = anchors();
    for path in [
        "/", "/home/user/.ssh/id", "/x/.ssh", "/k.pem", "/workspace/.git/hooks/pre-commit",
        "/usr/bin/ls", "/home/user/.aws/credentials", "/workspace/q/x", "/workspace/.env",
        "/a/id_rsa.pub", "/a/z/b/c", "/.ssh/.ssh", "/workspace/x",
    ] {
        let segs = segments(path);
        let mut scan: Vec<usize> =
            (0..compiled.len()).filter(|i| compiled[*i].matches(&segs, &a)).collect();
        let mut found = Vec::new();
        index.for_each_match(&segs, &a, |v| found.push(*v));
        scan.sort_unstable();
        found.sort_unstable();
        assert_eq!(found, scan, "{path}");
    }
}

#[test]
fn bitmask_and_long_matchers_agree() {
    let pats = ["/**", "/a/**", "/**/b", "/**/b/**/c", "/a/*/c", "/**/*.pem", "/a/**/**/z", "/x"];
    let paths = ["/", "/a", "/a/b", "/a/b/c", "/q/b", "/a/x/y/b/c/c", "/k/id.pem", "/a/z", "/x/y"];
    for pat in pats {
        let p = parse_pattern(pat).unwrap();
        for path in paths {
            let segs = segments(path);
            assert_eq!(match_segs_bits(&p.segs, &segs), match_segs_long(&p.segs, &segs), "{pat} {path}");
        }
    }
    let long: Vec<&str> = std::iter::repeat_n("d", 200).collect();
    let p = parse_pattern("/**/d").unwrap();
    assert!(match_segs(&p.segs, &long));
}

fn anchors() -> Anchors<'static> {
    Anchors {
        workspace: Cow::Borrowed("/workspace"),
        home: Cow::Borrowed("/home/user"),
        cwd: Cow::Borrowed("/workspace"),
    }
}

fn m(pattern: &str, path: &str) -> bool {
    let p = parse_pattern(pattern).unwrap();
    let a = anchors();
    let path = resolve(path, &a.cwd, &a.home);
    p.matches(&segments(&path), &a)
}

#[test]
fn matching() {
    assert!(m("/usr/**", "/usr"));
    assert!(m("/usr/**", "/usr/bin/ls"));
    assert!(!m("/usr/**", "/usrx"));
    assert!(m("${workspace}/**", "src/main.rs"));
    assert!(!m("${workspace}/**", "/workspace/../etc/passwd"));
    assert!(!m("${workspace}/**", "../etc/passwd"));
    assert!(m("~/.ssh/**", "~/.ssh/id_rsa"));
    assert!(m("~/.ssh/**", "/home/user/.ssh/id_rsa"));
    assert!(m("**/*.pem", "/etc/ssl/x.pem"));
    assert!(m("**/*.pem", "key.pem"));
    assert!(m("${workspace}/.env", ".//./.env"));
    assert!(m(".git/hooks/**", "/workspace/src/../.git/hooks/pre-commit"));
    assert!(m("/a/*/c", "/a/b/c"));
    assert!(!m("/a/*/c", "/a/b/x/c"));
    assert!(m("/a/**/c/**/e", "/a/b/c/d/e"));
    assert!(m("/a?c", "/abc"));
}

#[test]
fn errors() {
    assert!(parse_pattern("${foo}/x").is_err());
    assert!(parse_pattern("").is_err());
    assert!(parse_pattern("~root/x").is_err());
    assert!(parse_pattern("/a/${home}").is_err());
    assert!(parse_pattern("/a/../b").is_err());
    assert!(parse_pattern("/a/b**").is_err());
    assert!(parse_pattern("${workspace").is_err());
    assert!(parse_pattern("${workspace}x").is_err());
}

#[test]
fn checking_a_pattern_agrees_with_compiling_it() {
    let texts = [
        "${foo}/x", "", "~", "~/", "~root/x", "/a/${home}", "/a/../b", "/a/b**", "${workspace", "${workspace}x", "${home}",
        "/a/*/b", "/a/**/b", "/**/**", "a/./b", "/a//b", "**/.env", "${workspace}/.git/hooks/**", "/a/$x/b{", "..", ".",
    ];
    for t in texts {
        let compiled = parse_pattern(t).map(|_| ());
        assert_eq!(check_pattern(t), compiled, "{t:?}");
    }
}

#[test]
fn normalising_and_expanding() {
    assert_eq!(normalise("/a/../../b/./c//d/"), "/b/c/d");
    assert_eq!(normalise("/.."), "/");
    let a = anchors();
    assert_eq!(parse_pattern("src/**").unwrap().expand(&a), "/workspace/src/**");
    assert_eq!(parse_pattern("~").unwrap().expand(&a), "/home/user");
    assert_eq!(parse_pattern("**/*.pem").unwrap().expand(&a), "/**/*.pem");
}

/// The plain definition [`resolve`] must agree with: join, then keep a stack of segments.
fn resolve_reference(path: &str, cwd: &str, home: &str) -> String {
    let full = if path == "~" {
        home.to_string()
    } else if let Some(rest) = path.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{cwd}/{path}")
    };
    let mut out: Vec<&str> = Vec::new();
    for seg in full.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    if out.is_empty() { String::from("/") } else { out.iter().map(|s| format!("/{s}")).collect() }
}

#[test]
fn resolving_agrees_with_the_reference() {
    let paths = [
        "", ".", "..", "../..", "/", "//", "/..", "a", "a/b/../c", "./x/", "~", "~/", "~/.ssh/../k",
        "~x", "/a/./b//c/..", "../../../../etc/passwd", "a/../../b", "é/ü/..", "/dev/null",
    ];
    let mut buf = String::new();
    for cwd in ["/", "/workspace", "/w/s/", "/a/../b"] {
        for home in ["/home/user", "/", "/h/./x/"] {
            for p in paths {
                let want = resolve_reference(p, cwd, home);
                assert_eq!(resolve(p, cwd, home), want, "{p} in {cwd}, home {home}");
                resolve_into(&mut buf, p, cwd, home);
                assert_eq!(buf, want, "{p} in {cwd}, home {home} (reused buffer)");
                let segs = with_resolved(p, cwd, home, |s| s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
                assert_eq!(segs, segments(&want), "{p} in {cwd}, home {home} (segments)");
            }
        }
    }
    let odd = ["/", "/a", "/a/b", "a", "/a/", "/a//b", "/a/./b", "/a/../b", "/.", "/..", "", "/a."];
    let more = ["/...", "/a/...", "/.a", "/a/..b", "/a/b.", "//", "/a/.", "/a/..", "/é/ü", "./a", "/a/b/c/d"];
    for p in odd.into_iter().chain(more) {
        assert_eq!(is_normal(p), normalise(p) == p, "{p}");
        assert_eq!(slash_split(p).collect::<Vec<_>>(), p.split('/').collect::<Vec<_>>(), "{p}");
    }
}

#[test]
fn below_agrees_with_splitting_the_base() {
    let reference = |path: &[&str], base: &str| -> Option<Vec<String>> {
        let mut rest = path;
        for seg in base.split('/').filter(|s| !s.is_empty()) {
            match rest.split_first() {
                Some((first, tail)) if *first == seg => rest = tail,
                _ => return None,
            }
        }
        Some(rest.iter().map(|s| s.to_string()).collect())
    };
    let paths: [&[&str]; 6] = [&[], &["w"], &["w", "x"], &["ws", "x"], &["w", "x", "y"], &["home", "u", ".ssh"]];
    for base in ["/", "/w", "/w/x", "/ws", "/w/x/y/z", "/home/u", "/home"] {
        for path in paths {
            let got = below(path, base).map(|r| r.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            assert_eq!(got, reference(path, base), "{path:?} below {base}");
        }
    }
}

#[test]
fn segments_on_the_stack_or_not() {
    let long = "/d".repeat(40);
    for path in ["/", "/a/b", "/a//b/", long.as_str()] {
        assert_eq!(with_segments(path, |s| s.to_vec()), segments(path), "{path}");
        let resolved = with_resolved(path, "/", "/", |s| s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(resolved, segments(path), "{path}");
    }
    let deep = format!("{}{}", "a/".repeat(30), "../".repeat(10));
    let got = with_resolved(&deep, "/w", "/", |s| s.len());
    assert_eq!(got, segments(&resolve(&deep, "/w", "/")).len());
}

#[test]
fn index() {
    let a = anchors();
    let mut idx = PathIndex::default();
    for (i, p) in ["/usr/**", "${workspace}/.env", "**/*.pem", "~/.ssh/**"].iter().enumerate() {
        idx.insert(parse_pattern(p).unwrap(), i);
    }
    let hits = |p: &str| {
        let mut v = vec![];
        idx.for_each_match(&segments(&resolve(p, &a.cwd, &a.home)), &a, |i| v.push(*i));
        v.sort();
        v
    };
    assert_eq!(hits("/usr/bin"), vec![0]);
    assert_eq!(hits(".env"), vec![1]);
    assert_eq!(hits("~/.ssh/k.pem"), vec![2, 3]);
    assert!(hits("/etc/passwd").is_empty());
}

/// Red team: `cd ~root; cat .npmrc` read `~root` as a folder named `~root` in the working
/// directory.
#[test]
fn another_users_home_is_no_relative_path() {
    for p in ["~root", "~root/.npmrc", "~+", "~-/x", "~user/.ssh/id_rsa"] {
        assert!(super::other_home(p), "{p}");
    }
    for p in ["~", "~/", "~/.ssh", "/root", "x~", "./~root"] {
        assert!(!super::other_home(p), "{p}");
    }
}
