//! Removes terminal escape sequences (colours, hyperlinks) so the scanners see plain text.

/// `text` without ANSI escape sequences: CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL` or
/// `ESC ] ... ESC \`) and two-byte escapes. An unterminated sequence is dropped to the end.
pub(crate) fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn strips_gcc_and_rustc_colours() {
        let gcc = "\u{1b}[01m\u{1b}[Ka.c:3:3:\u{1b}[m\u{1b}[K \u{1b}[01;31m\u{1b}[Kerror: \u{1b}[m\u{1b}[Kx";
        assert_eq!(strip(gcc), "a.c:3:3: error: x");
        let rustc = " \u{1b}[1m\u{1b}[94m--> \u{1b}[0mm.rs:2:18";
        assert_eq!(strip(rustc), " --> m.rs:2:18");
    }

    #[test]
    fn strips_hyperlinks_and_unterminated_sequences() {
        let link = "\u{1b}]8;;file:///x\u{1b}\\a.rs\u{1b}]8;;\u{7}:1";
        assert_eq!(strip(link), "a.rs:1");
        assert_eq!(strip("ok\u{1b}[31"), "ok");
        assert_eq!(strip("é\u{1b}=ü"), "éü");
    }
}
