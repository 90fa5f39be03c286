//! The fallback: any white-space-delimited token `path:line[:col]` whose path has a file
//! extension, anywhere in a line. Used only for lines where no tool-specific form named an
//! existing file.

use super::loc::{self, Loc};

/// Characters that end a token besides white space.
const DELIMITERS: &str = "()[]{}<>\"'`,;|=";

pub(crate) fn scan<'a>(line: &'a str, out: &mut Vec<Loc<'a>>) {
    for token in line.split(|c: char| c.is_whitespace() || DELIMITERS.contains(c)) {
        let token = token.trim_end_matches([':', '.']);
        if let Some(found) = loc::tail(token)
            && loc::has_extension(found.path)
        {
            out.push(found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::loc::Loc;

    fn scan(line: &str) -> Vec<Loc<'_>> {
        super::super::loc::collect(super::scan, line)
    }

    #[test]
    fn finds_tokens_anywhere() {
        assert_eq!(scan("error at src/x.c:3:4 somewhere"), [Loc::new("src/x.c", Some(3), Some(4))]);
        assert_eq!(
            scan("see (a.py:7) and [b.rb:9:2]."),
            [Loc::new("a.py", Some(7), None), Loc::new("b.rb", Some(9), Some(2))]
        );
        assert_eq!(scan("warning: 'x.h:2:'"), [Loc::new("x.h", Some(2), None)]);
    }

    #[test]
    fn needs_an_extension_and_positive_numbers() {
        for line in ["at Makefile:3", "host:8080", "12:30:01", "x.c:0", "x.c:", "http://h.com:80/x", "a.py:-1"] {
            assert_eq!(scan(line), [], "{line}");
        }
    }
}
