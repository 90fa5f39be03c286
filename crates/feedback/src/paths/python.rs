//! Python tracebacks (`  File "/abs/or/rel/x.py", line 4, in f`) and pytest node ids
//! (`tests/test_x.py::test_name FAILED`, `FAILED tests/test_x.py::test_name - Error`).
//! pytest's `tests/test_x.py:12: AssertionError` is the colon convention (see `colon`).

use super::loc::{self, Loc};

/// Words pytest prints before or after a node id.
const OUTCOMES: [&str; 6] = ["FAILED", "ERROR", "PASSED", "SKIPPED", "XFAIL", "XPASS"];

pub(crate) fn scan<'a>(line: &'a str, out: &mut Vec<Loc<'a>>) {
    let trimmed = line.trim_start();
    if let Some(rest) = trimmed.strip_prefix("File \"") {
        if let Some((path, after)) = rest.split_once("\", line ") {
            let num = after.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("");
            if let Some(n) = loc::number(num) {
                out.push(Loc::new(path, Some(n), None));
            }
        }
        return;
    }
    let mut words = trimmed.split_whitespace();
    let first = words.next().unwrap_or("");
    let id = if OUTCOMES.contains(&first) { words.next().unwrap_or("") } else { first };
    if let Some((path, _)) = id.split_once("::")
        && loc::has_extension(path)
    {
        out.push(Loc::new(path, None, None));
    }
}

#[cfg(test)]
mod tests {
    use super::super::loc::Loc;

    fn scan(line: &str) -> Vec<Loc<'_>> {
        super::super::loc::collect(super::scan, line)
    }

    #[test]
    fn recorded_traceback_lines() {
        assert_eq!(scan("  File \"/tmp/fbx/mod.py\", line 2, in f"), [Loc::new("/tmp/fbx/mod.py", Some(2), None)]);
        assert_eq!(scan("  File \"pkg/x.py\", line 4, in <module>"), [Loc::new("pkg/x.py", Some(4), None)]);
        assert_eq!(scan("  File \"a b.py\", line 7"), [Loc::new("a b.py", Some(7), None)]);
    }

    #[test]
    fn recorded_pytest_lines() {
        assert_eq!(scan("tests/test_x.py::test_name FAILED"), [Loc::new("tests/test_x.py", None, None)]);
        assert_eq!(
            scan("FAILED tests/test_x.py::test_name - AssertionError: assert 1 == 2"),
            [Loc::new("tests/test_x.py", None, None)]
        );
        assert_eq!(scan("ERROR t.py::TestA::test_b"), [Loc::new("t.py", None, None)]);
    }

    #[test]
    fn non_locations_are_ignored() {
        for line in [
            "  File \"<stdin>\", line 0, in <module>",
            "  File \"x.py\", line abc",
            "  File \"x.py\"",
            "std::vector<int> v;",
            "FAILED",
            "Traceback (most recent call last):",
        ] {
            assert_eq!(scan(line), [], "{line}");
        }
    }
}
