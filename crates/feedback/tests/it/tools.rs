//! One test per tool: a real failure on a known line, and the exact locations expected.
//! rustc, gcc, g++, python3, node, javac, sh and bash must be installed; pytest, tsc and go
//! are skipped with a note when absent.

use crate::support::{Workspace, at, on_path};

#[test]
fn rustc_type_error() {
    let ws = Workspace::new("rustc");
    ws.write("src/lib.rs", "pub fn f() {\n    let x: i32 = \"a\";\n}\n");
    let args =
        ["--color=always", "--edition=2021", "--crate-type=lib", "--emit=metadata", "--out-dir", ".", "src/lib.rs"];
    assert_eq!(ws.fail(".", "rustc", &args), [at("src/lib.rs", 2, Some(18))]);
}

#[test]
fn rustc_panic_at_run_time() {
    let ws = Workspace::new("panic");
    ws.write("p.rs", "fn main() {\n    let v: Vec<u8> = Vec::new();\n    let _ = v[3];\n}\n");
    ws.succeed(".", "rustc", &["-o", "p", "p.rs"]);
    let prog = ws.root.join("p");
    assert_eq!(ws.fail(".", prog.to_str().unwrap(), &[]), [at("p.rs", 3, Some(14))]);
}

#[test]
fn gcc_syntax_error_from_a_subdirectory() {
    let ws = Workspace::new("gcc");
    ws.write("src/b.c", "int main(void) {\n  int x = ;\n  return x;\n}\n");
    let found = ws.fail("src", "gcc", &["-fdiagnostics-color=always", "-fsyntax-only", "b.c"]);
    assert_eq!(found, [at("src/b.c", 2, Some(11))]);
}

#[test]
fn gcc_error_in_an_included_header() {
    let ws = Workspace::new("gcc-inc");
    ws.write("bad.h", "int y = ;\n").write("inc.c", "#include \"bad.h\"\nint main(void) { return 0; }\n");
    let found = ws.fail(".", "gcc", &["-fsyntax-only", "inc.c"]);
    assert_eq!(found, [at("inc.c", 1, None), at("bad.h", 1, Some(9))]);
}

#[test]
fn gxx_syntax_error() {
    let ws = Workspace::new("gxx");
    ws.write("b.cpp", "int main() {\n  int x = ;\n  return x;\n}\n");
    assert_eq!(ws.fail(".", "g++", &["-fsyntax-only", "b.cpp"]), [at("b.cpp", 2, Some(11))]);
}

#[test]
fn python_exception_raised_in_a_module() {
    let ws = Workspace::new("python");
    ws.write("pkg/mod.py", "def f():\n    raise ValueError(\"x\")\n");
    ws.write("main.py", "from pkg import mod\nmod.f()\n");
    let found = ws.fail(".", "python3", &["-B", "main.py"]);
    assert_eq!(found, [at("main.py", 2, None), at("pkg/mod.py", 2, None)]);
}

#[test]
fn python_module_symlinked_from_outside_is_dropped() {
    let ws = Workspace::new("python-link");
    let outside = Workspace::new("python-outside");
    outside.write("evil.py", "def f():\n    raise ValueError(\"x\")\n");
    std::os::unix::fs::symlink(outside.root.join("evil.py"), ws.root.join("evil.py")).unwrap();
    ws.write("main.py", "import evil\n\nevil.f()\n");
    let found = ws.fail(".", "python3", &["-B", "main.py"]);
    assert_eq!(found, [at("main.py", 3, None)]);
}

#[test]
fn node_thrown_error() {
    let ws = Workspace::new("node");
    ws.write("a.js", "function f() {\n  throw new Error(\"boom\");\n}\nf();\n");
    let found = ws.fail(".", "node", &["a.js"]);
    assert_eq!(found, [at("a.js", 2, None), at("a.js", 2, Some(9)), at("a.js", 4, Some(1))]);
}

#[test]
fn node_es_module_thrown_error() {
    let ws = Workspace::new("node-esm");
    ws.write("lib/b.mjs", "export function g() {\n  throw new Error(\"boom\");\n}\n");
    ws.write("a.mjs", "import { g } from \"./lib/b.mjs\";\n\ng();\n");
    let found = ws.fail(".", "node", &["a.mjs"]);
    assert_eq!(found, [at("lib/b.mjs", 2, None), at("lib/b.mjs", 2, Some(9)), at("a.mjs", 3, Some(1))]);
}

#[test]
fn javac_type_error() {
    let ws = Workspace::new("javac");
    ws.write("A.java", "class A {\n  int x = \"s\";\n}\n");
    assert_eq!(ws.fail(".", "javac", &["-d", "out", "A.java"]), [at("A.java", 2, None)]);
}

#[test]
fn sh_and_bash_bad_command() {
    let ws = Workspace::new("shell");
    ws.write("s.sh", "echo hi\n\nnosuchcmd_warden_x\nexit 3\n");
    assert_eq!(ws.fail(".", "sh", &["s.sh"]), [at("s.sh", 3, None)]);
    assert_eq!(ws.fail(".", "bash", &["./s.sh"]), [at("s.sh", 3, None)]);
    assert_eq!(ws.fail(".", "dash", &["./s.sh"]), [at("s.sh", 3, None)]);
    ws.write("sh", "not the shell\n");
    assert_eq!(ws.fail(".", "sh", &["-c", "nosuchcmd_warden_x"]), []);
    assert_eq!(ws.fail(".", "bash", &["-c", "nosuchcmd_warden_x"]), []);
}

#[test]
fn pytest_failing_assertion() {
    if !on_path("pytest") {
        return;
    }
    let ws = Workspace::new("pytest");
    ws.write("tests/test_x.py", "def test_one():\n    x = 1\n    assert x == 2\n");
    let found = ws.fail(".", "pytest", &["-q", "-p", "no:cacheprovider", "tests/test_x.py"]);
    assert!(found.contains(&at("tests/test_x.py", 3, None)), "{found:?}");
}

#[test]
fn tsc_type_error() {
    if !on_path("tsc") {
        return;
    }
    let ws = Workspace::new("tsc");
    ws.write("src/a.ts", "let n: number = 1;\nn = \"s\";\n");
    let found = ws.fail(".", "tsc", &["--noEmit", "--pretty", "false", "src/a.ts"]);
    assert_eq!(found, [at("src/a.ts", 2, Some(1))]);
}

#[test]
fn go_undefined_name() {
    if !on_path("go") {
        return;
    }
    let ws = Workspace::new("go");
    ws.write("main.go", "package main\n\nfunc main() {\n\tprintln(y)\n}\n");
    let found = ws.fail(".", "go", &["build", "-o", "prog", "./main.go"]);
    assert!(found.contains(&at("main.go", 4, Some(10))), "{found:?}");
}
