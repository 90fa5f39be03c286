//! rustc and cargo: `--> src/main.rs:3:20`, `::: path:l:c` and panic messages
//! (`panicked at src/lib.rs:10:5:`, and the older `panicked at 'msg', src/lib.rs:10:5`).

use super::loc::{self, Loc};

pub(crate) fn scan<'a>(line: &'a str, out: &mut Vec<Loc<'a>>) {
    let trimmed = line.trim_start();
    if let Some(rest) = trimmed.strip_prefix("--> ").or_else(|| trimmed.strip_prefix("::: ")) {
        out.extend(loc::head(rest.trim_start()).map(|(l, _)| l));
        return;
    }
    if let Some((_, rest)) = line.split_once("panicked at ") {
        let rest = match rest.strip_prefix('\'') {
            Some(quoted) => match quoted.rsplit_once("', ") {
                Some((_, after)) => after,
                None => return,
            },
            None => rest,
        };
        out.extend(loc::head(rest).map(|(l, _)| l));
    }
}

#[cfg(test)]
mod tests {
    use super::super::loc::Loc;

    fn scan(line: &str) -> Vec<Loc<'_>> {
        super::super::loc::collect(super::scan, line)
    }

    #[test]
    fn recorded_rustc_and_cargo_lines() {
        assert_eq!(scan(" --> m.rs:2:18"), [Loc::new("m.rs", Some(2), Some(18))]);
        assert_eq!(scan("   --> src/main.rs:3:20"), [Loc::new("src/main.rs", Some(3), Some(20))]);
        assert_eq!(scan("  ::: src/lib.rs:10:8"), [Loc::new("src/lib.rs", Some(10), Some(8))]);
        assert_eq!(scan("thread 'main' panicked at src/lib.rs:10:5:"), [Loc::new("src/lib.rs", Some(10), Some(5))]);
        assert_eq!(
            scan("thread 'main' panicked at 'boom', src/main.rs:2:5"),
            [Loc::new("src/main.rs", Some(2), Some(5))]
        );
    }

    #[test]
    fn non_locations_are_ignored() {
        for line in [
            "  |",
            "2 |     let x: i32 = \"a\";",
            "error[E0308]: mismatched types",
            "--> nowhere",
            "panicked at 'no comma",
        ] {
            assert_eq!(scan(line), [], "{line}");
        }
    }
}
