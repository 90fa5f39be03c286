//! A small scanner for sed scripts: finds the commands that run programs or write files
//! (`e`, `w`, `W`, and the `e`/`w` flags of `s`). Anything it does not understand counts as
//! dangerous.

/// True when the sed script can execute a command or write a file.
pub(crate) fn dangerous(script: &str) -> bool {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    loop {
        while b
            .get(i)
            .is_some_and(|c| c.is_whitespace() || matches!(c, ';' | '{' | '}'))
        {
            i += 1;
        }
        let Some(_) = b.get(i) else {
            return false;
        };
        i = skip_address(&b, i);
        let Some(&cmd) = b.get(i) else {
            return true;
        };
        i += 1;
        match cmd {
            'e' | 'w' | 'W' => return true,
            '#' | 'a' | 'i' | 'c' | 'r' | 'R' => i = skip_to(&b, i, &['\n']),
            ':' | 'b' | 't' | 'T' => i = skip_to(&b, i, &['\n', ';']),
            's' => {
                let Some(&delim) = b.get(i) else {
                    return true;
                };
                if delim == '\n' || delim == '\\' {
                    return true;
                }
                i = skip_delimited(&b, i + 1, delim);
                i = skip_delimited(&b, i, delim);
                let start = i;
                i = skip_to(&b, i, &['\n', ';', '}']);
                let flags: String = b.get(start..i).unwrap_or_default().iter().collect();
                if flags.contains(['e', 'w', 'W']) {
                    return true;
                }
            }
            'y' => {
                let Some(&delim) = b.get(i) else {
                    return true;
                };
                i = skip_delimited(&b, i + 1, delim);
                i = skip_delimited(&b, i, delim);
            }
            'q' | 'Q' | 'l' | 'L' => {
                while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == ' ') {
                    i += 1;
                }
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            _ => return true,
        }
    }
}

fn skip_to(b: &[char], mut i: usize, stops: &[char]) -> usize {
    while b.get(i).is_some_and(|c| !stops.contains(c)) {
        i += 1;
    }
    i
}

/// Skips to just past the next unescaped `delim`.
fn skip_delimited(b: &[char], mut i: usize, delim: char) -> usize {
    while let Some(&c) = b.get(i) {
        i += 1;
        if c == '\\' {
            i += 1;
        } else if c == delim {
            break;
        }
    }
    i
}

fn skip_address(b: &[char], mut i: usize) -> usize {
    loop {
        match b.get(i) {
            Some(c) if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!' | ' ') => {
                i += 1;
            }
            Some('/') => i = skip_delimited(b, i + 1, '/'),
            Some('\\') => match b.get(i + 1) {
                Some(&d) => i = skip_delimited(b, i + 2, d),
                None => return i + 1,
            },
            _ => return i,
        }
        // GNU `I`/`M` address flags after a regex
        while b.get(i).is_some_and(|c| matches!(c, 'I' | 'M'))
            && b.get(i.saturating_sub(1)) == Some(&'/')
        {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::dangerous;

    #[test]
    fn sed_execute_and_write_are_found() {
        for s in [
            "e",
            "1e rm x",
            "s/a/b/e",
            "s/a/b/w out",
            "w out",
            "/x/W out",
            "s|a|b|ge",
            "1d;e id",
        ] {
            assert!(dangerous(s), "{s}");
        }
        for s in [
            "s/a/b/g",
            "s/e/w/",
            "1d",
            "/^#/d",
            "s/\\/e/x/g",
            "y/abc/xyz/",
            "$p",
            "3q",
        ] {
            assert!(!dangerous(s), "{s}");
        }
    }
}
