//! The GNU convention `path:line[:col]: message` at the start of a line, shared by gcc,
//! clang, go (`./main.go:5:2: undefined: x`), javac (`A.java:3: error: ...`), pytest
//! (`tests/test_x.py:12: AssertionError`) and tsc's pretty form (`src/a.ts:3:5 - error`),
//! plus a bare `path:line` line (node's first line of an uncaught error, go panic frames
//! `/ws/main.go:5 +0x1d`). Also gcc's include chain: `In file included from x.h:2,` and the
//! indented `from y.c:3:` lines after it.

use super::loc::{self, Loc};

pub(crate) fn scan<'a>(line: &'a str, out: &mut Vec<Loc<'a>>) {
    let trimmed = line.trim_start();
    let included = trimmed
        .strip_prefix("In file included from ")
        .or_else(|| trimmed.strip_prefix("from ").filter(|_| line.starts_with(' ')));
    if let Some(rest) = included {
        out.extend(loc::head(rest).map(|(l, _)| l));
        return;
    }
    let Some((found, rest)) = loc::head(trimmed) else {
        return;
    };
    let message = rest.starts_with(':') || rest.starts_with(char::is_whitespace);
    let bare = rest.is_empty() && (loc::has_extension(found.path) || found.path.starts_with(['/', '.']));
    if message || bare {
        out.push(found);
    }
}

#[cfg(test)]
mod tests {
    use super::super::loc::Loc;

    fn scan(line: &str) -> Vec<Loc<'_>> {
        super::super::loc::collect(super::scan, line)
    }

    #[test]
    fn recorded_compiler_lines() {
        let table = [
            ("a.c:3:3: error: expected ',' or ';' before 'return'", "a.c", 3, Some(3)),
            ("./a.c:2:11: error: expected expression", "./a.c", 2, Some(11)),
            ("bad.h:2:1: warning: x", "bad.h", 2, Some(1)),
            ("./main.go:5:2: undefined: x", "./main.go", 5, Some(2)),
            ("    main_test.go:12: got 1, want 2", "main_test.go", 12, None),
            ("A.java:3: error: incompatible types", "A.java", 3, None),
            ("tests/test_x.py:12: AssertionError", "tests/test_x.py", 12, None),
            ("src/a.ts:3:5 - error TS2322: Type 'string'", "src/a.ts", 3, Some(5)),
            ("/ws/a.js:3", "/ws/a.js", 3, None),
            ("file:///ws/a.mjs:3", "file:///ws/a.mjs", 3, None),
            ("\t/ws/main.go:5 +0x1d", "/ws/main.go", 5, None),
            ("In file included from x.h:2,", "x.h", 2, None),
            ("In file included from a.c:1:", "a.c", 1, None),
            ("                 from y.c:3:", "y.c", 3, None),
        ];
        for (line, path, l, c) in table {
            assert_eq!(scan(line), [Loc::new(path, Some(l), c)], "{line}");
        }
    }

    #[test]
    fn non_locations_are_ignored() {
        for line in [
            "a.c: In function 'main':",
            "sh: 1: nosuchcmd: not found",
            "localhost:8080",
            "12:30:01 started",
            "from y.c:3:",
            "    3 |   return x;",
            "a.c:3x: nope",
            "a.c:0: nope",
        ] {
            assert_eq!(scan(line), [], "{line}");
        }
    }
}
