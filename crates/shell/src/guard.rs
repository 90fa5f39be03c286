//! Checks run on every string before it reaches `brush-parser`.
//!
//! `brush-parser` 0.4.0 has inputs that do not fail politely, and an allocation failure or a
//! stack overflow aborts the whole process (`catch_unwind` cannot stop either). Each shape
//! below was reproduced here in a child process under `ulimit -v`:
//!
//! - **Empty here-document delimiter** (`$(<<  ` — six bytes): a here-document operator whose
//!   delimiter comes out empty (two blanks after `<<` inside `$( )`, `<<` followed by an
//!   operator such as `;;`, `]]`, `@`, ...) and the input ending before the body. The
//!   tokenizer's `remove_here_end_tag` matches the empty tag forever and pushes tokens until
//!   it allocates about 1 GB and aborts. The guard accepts a here-document operator only when
//!   its delimiter is a plain word (`EOF`, `'EOF'`, `"EOF"`, `\EOF`, at most one blank
//!   before it) followed by a separator; anything else is refused.
//! - **Unclosed `(` runs** (`((((((((((((((((((((((((((((((((`, 33 bytes): the PEG grammar
//!   backtracks between `((` arithmetic and `(` subshells, doubling its work with each `(`. The
//!   guard refuses a parenthesis depth above [`MAX_PAREN_DEPTH`].
//! - **Deep nesting** (`{ ` a thousand times): the grammar recurses once per level and
//!   overflows the stack. The guard refuses a structural depth above [`MAX_NESTING`]; the parse
//!   also runs on a thread with a large stack.
//! - **Subscripts left open inside `${`** (`a"${u[t[[-y9|p[; a"${u[t[[...`, found by fuzzing):
//!   the word parser backtracks over every unclosed `[` of a parameter expansion; 97 bytes take
//!   3 s, 199 bytes ran for over 100 s at 1.5 GB. The guard refuses a parameter expansion with
//!   more than [`MAX_OPEN_SUBSCRIPTS`] unclosed `[`.
//! - **Redirect numbers beyond `i32`** (`5555555554>`, found by fuzzing): brush panics on an
//!   `unwrap`. The guard refuses a descriptor number of ten or more digits.
//!
//! Whatever shape a guard misses, [`crate::analyse`] also stops waiting after a deadline.

/// The deepest run of unclosed `(` accepted (work doubles with each level).
pub const MAX_PAREN_DEPTH: usize = 12;
/// The deepest structural nesting accepted (`(`, `{`, `[[`, `if`, `case`, loops).
pub const MAX_NESTING: usize = 100;

/// The most unclosed `[` accepted inside one `${ }` (legitimate subscripts nest one or two).
pub const MAX_OPEN_SUBSCRIPTS: usize = 2;
/// The longest descriptor number accepted before `<` or `>`.
pub const MAX_FD_DIGITS: usize = 9;

/// Why a string was refused before parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A here-document operator whose delimiter is not a plain word.
    HereDocDelimiter,
    /// Too many unclosed parentheses.
    ParenDepth,
    /// Too deeply nested.
    Nesting,
    /// Too many unclosed `[` inside a parameter expansion.
    Subscripts,
    /// A redirect's descriptor number that does not fit brush-parser's `i32`.
    FdNumber,
}

/// Checks `input` for the shapes known to make `brush-parser` 0.4.0 blow up.
///
/// # Errors
///
/// Returns the [`Refusal`] for the first pathological shape found.
pub fn check(input: &str) -> Result<(), Refusal> {
    check_heredocs(input)?;
    check_parens(input)?;
    check_nesting(input)?;
    check_subscripts(input)?;
    check_fd_numbers(input)
}

/// Every `${ ... }` (nested ones included): at most [`MAX_OPEN_SUBSCRIPTS`] unclosed `[`.
fn check_subscripts(input: &str) -> Result<(), Refusal> {
    let b = input.as_bytes();
    // One open-bracket count per open `${`.
    let mut frames: Vec<usize> = Vec::new();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'$' if b.get(i + 1) == Some(&b'{') => {
                frames.push(0);
                i += 1;
            }
            b'}' => {
                frames.pop();
            }
            b'[' => {
                if let Some(open) = frames.last_mut() {
                    *open += 1;
                    if *open > MAX_OPEN_SUBSCRIPTS {
                        return Err(Refusal::Subscripts);
                    }
                }
            }
            b']' => {
                if let Some(open) = frames.last_mut() {
                    *open = open.saturating_sub(1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// A run of digits directly before `<` or `>` is a descriptor number: at most
/// [`MAX_FD_DIGITS`] digits.
fn check_fd_numbers(input: &str) -> Result<(), Refusal> {
    let mut run = 0usize;
    for c in input.bytes() {
        if c.is_ascii_digit() {
            run += 1;
        } else {
            if (c == b'<' || c == b'>') && run > MAX_FD_DIGITS {
                return Err(Refusal::FdNumber);
            }
            run = 0;
        }
    }
    Ok(())
}

fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn is_tag_char(c: u8) -> bool {
    is_word_char(c) || c == b'.' || c == b'-'
}

fn is_after_tag(c: Option<&u8>) -> bool {
    match c {
        None => true,
        Some(c) => matches!(
            c,
            b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b')' | b'<' | b'>'
        ),
    }
}

/// Every run of `<`: a run of three is a here-string, a run of two must be followed by a plain
/// delimiter word, anything longer is refused.
fn check_heredocs(input: &str) -> Result<(), Refusal> {
    let b = input.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b.get(i) != Some(&b'<') {
            i += 1;
            continue;
        }
        let start = i;
        while b.get(i) == Some(&b'<') {
            i += 1;
        }
        match i - start {
            1 | 3 => {}
            2 => heredoc_tag_ok(b, i)?,
            _ => return Err(Refusal::HereDocDelimiter),
        }
    }
    Ok(())
}

fn heredoc_tag_ok(b: &[u8], mut i: usize) -> Result<(), Refusal> {
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    if matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let quote = match b.get(i) {
        Some(q @ (b'\'' | b'"')) => {
            i += 1;
            Some(*q)
        }
        Some(b'\\') => {
            i += 1;
            None
        }
        _ => None,
    };
    if !b.get(i).copied().is_some_and(is_word_char) {
        return Err(Refusal::HereDocDelimiter);
    }
    while b.get(i).copied().is_some_and(is_tag_char) {
        i += 1;
    }
    if let Some(q) = quote {
        if b.get(i) != Some(&q) {
            return Err(Refusal::HereDocDelimiter);
        }
        i += 1;
    }
    if is_after_tag(b.get(i)) {
        Ok(())
    } else {
        Err(Refusal::HereDocDelimiter)
    }
}

fn check_parens(input: &str) -> Result<(), Refusal> {
    let mut depth = 0usize;
    for c in input.bytes() {
        match c {
            b'(' => {
                depth += 1;
                if depth > MAX_PAREN_DEPTH {
                    return Err(Refusal::ParenDepth);
                }
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn check_nesting(input: &str) -> Result<(), Refusal> {
    let mut depth = 0usize;
    let words = input.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|'));
    for word in words {
        let keyword_open = matches!(
            word,
            "if" | "case" | "for" | "while" | "until" | "select" | "[[" | "coproc" | "function"
        );
        let keyword_close = matches!(word, "fi" | "esac" | "done" | "]]");
        depth += usize::from(keyword_open);
        for c in word.bytes() {
            match c {
                b'(' | b'{' => depth += 1,
                b')' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth > MAX_NESTING {
                return Err(Refusal::Nesting);
            }
        }
        if depth > MAX_NESTING {
            return Err(Refusal::Nesting);
        }
        depth = depth.saturating_sub(usize::from(keyword_close));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brush_heredoc_empty_delimiter_blowup_is_refused() {
        for input in [
            "$(<<  ",
            "$(\n<<-  do ",
            "$(<<\t\t",
            "$(<< \\\n ",
            "\"$(<<  ",
            ">&;;$(for ;\n<<-  do ",
            "=&>+<<]]$(( |&${$[",
            "$(x=then >|:,<<- ;;<<<<#",
            " do ?-(<<done$( <<@/?|&$((",
        ] {
            assert_eq!(check(input), Err(Refusal::HereDocDelimiter), "{input:?}");
        }
    }

    #[test]
    fn brush_open_subscripts_in_parameter_expansion_blowup_is_refused() {
        let found = "a\"${u[t[[-y9|p[; a\"${ugt[[-|p[; a\"${u[t[[x}\"-reisv -on -_udss}\"-ry";
        assert_eq!(check(found), Err(Refusal::Subscripts));
        assert_eq!(check("echo ${a[${b[0]}]} ${c[1]} \"${d[@]}\""), Ok(()));
        assert_eq!(check("grep '[[:space:]]' f; [ -n \"${x}\" ]"), Ok(()));
    }

    #[test]
    fn brush_io_number_overflow_panic_is_refused() {
        assert_eq!(check("5555555554>"), Err(Refusal::FdNumber));
        assert_eq!(check("echo 2>&1 10>f 123456789<g"), Ok(()));
    }

    #[test]
    fn brush_unclosed_paren_run_exponential_time_is_refused() {
        assert_eq!(check(&"(".repeat(33)), Err(Refusal::ParenDepth));
        assert_eq!(check(&"(( ".repeat(10)), Err(Refusal::ParenDepth));
    }

    #[test]
    fn brush_deep_nesting_stack_overflow_is_refused() {
        let input = format!("{} true; {}", "{ ".repeat(1000), "} ".repeat(1000));
        assert_eq!(check(&input), Err(Refusal::Nesting));
        let input = format!(
            "{} true {}",
            "if true; then ".repeat(200),
            "; fi".repeat(200)
        );
        assert_eq!(check(&input), Err(Refusal::Nesting));
    }

    #[test]
    fn ordinary_heredocs_and_shifts_pass() {
        for input in [
            "cat <<EOF\nhi\nEOF\n",
            "cat <<'EOF'\nhi\nEOF\n",
            "cat <<\"EOF\"\nhi\nEOF\n",
            "cat <<-EOF\n\thi\n\tEOF\n",
            "cat << EOF\nhi\nEOF\n",
            "cat <<\\EOF\nhi\nEOF\n",
            "echo $((1<<2))",
            "echo $(( 1 << 2 ))",
            "bash <<< 'rm -rf x'",
            "$(cat <<EOF\nx\nEOF\n)",
            "echo ((1)) (a) {b}",
        ] {
            assert_eq!(check(input), Ok(()), "{input:?}");
        }
    }
}
