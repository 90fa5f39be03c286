//! Node.js stack frames: `    at f (/ws/a.js:3:9)`, `    at /ws/a.js:3:9`,
//! `    at async file:///ws/a.mjs:3:9`, and `file:///` URLs anywhere in a line. (Node's first
//! line, `/ws/a.js:3` above the caret, is a bare `path:line`: see `colon`.) Rust backtrace
//! frames (`      at ./src/main.rs:5:5`) have the same shape.

use super::loc::{self, Loc};

pub(crate) fn scan<'a>(line: &'a str, out: &mut Vec<Loc<'a>>) {
    if let Some(frame) = line.trim_start().strip_prefix("at ") {
        let frame = frame.trim_end();
        let target = match frame.strip_suffix(')').and_then(|f| f.rsplit_once('(')) {
            Some((_, inside)) => inside,
            None => frame.rsplit(char::is_whitespace).next().unwrap_or(frame),
        };
        if let Some(found) = loc::tail(target) {
            out.push(found);
            return;
        }
    }
    let mut from = 0;
    while let Some(at) = line.get(from..).and_then(|rest| rest.find("file://")) {
        let start = from + at;
        let rest = line.get(start..).unwrap_or("");
        let end = rest.find(|c: char| c.is_whitespace() || "()[]<>\"'`,".contains(c)).unwrap_or(rest.len());
        let token = rest.get(..end).unwrap_or("").trim_end_matches([':', '.']);
        out.extend(loc::tail(token));
        from = start + end.max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::super::loc::Loc;

    fn scan(line: &str) -> Vec<Loc<'_>> {
        super::super::loc::collect(super::scan, line)
    }

    #[test]
    fn recorded_stack_frames() {
        let table = [
            ("    at f (/tmp/fbx/a.js:2:9)", "/tmp/fbx/a.js", 2, Some(9)),
            ("    at Object.<anonymous> (/tmp/fbx/a.js:4:1)", "/tmp/fbx/a.js", 4, Some(1)),
            ("    at /ws/a.js:3:9", "/ws/a.js", 3, Some(9)),
            ("    at new Foo (lib/a b.js:3:9)", "lib/a b.js", 3, Some(9)),
            ("    at async file:///ws/a.mjs:3:9", "file:///ws/a.mjs", 3, Some(9)),
            ("    at g (file:///ws/a.mjs:5:3)", "file:///ws/a.mjs", 5, Some(3)),
            ("             at ./src/main.rs:5:5", "./src/main.rs", 5, Some(5)),
            ("Error [ERR_X]: in file:///ws/a.mjs:7:2.", "file:///ws/a.mjs", 7, Some(2)),
        ];
        for (line, path, l, c) in table {
            assert_eq!(scan(line), [Loc::new(path, Some(l), c)], "{line}");
        }
    }

    #[test]
    fn internal_frames_parse_but_name_no_file() {
        // `node:internal/...` is dropped later because no such file exists.
        assert_eq!(
            scan("    at Module._compile (node:internal/modules/cjs/loader:1521:14)"),
            [Loc::new("node:internal/modules/cjs/loader", Some(1521), Some(14))]
        );
        for line in
            ["    at new Promise (<anonymous>)", "    at async Promise.all (index 0)", "file://", "look at this"]
        {
            assert_eq!(scan(line), [], "{line}");
        }
    }
}
