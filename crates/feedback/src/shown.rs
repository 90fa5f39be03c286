//! Text the command (or the model) chose, shown to a person: every character that a terminal
//! or a dialog would not show as itself is written as an escape.
//!
//! What is escaped: C0 and C1 controls and DEL (escape sequences, carriage return, backspace),
//! bidirectional controls (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C), zero-width
//! and other invisible format characters (U+200B..U+200D, U+2060..U+2064, U+FEFF, U+00AD,
//! U+180E, variation selectors, tag characters), line and paragraph separators, and every
//! whitespace but the ASCII space (U+00A0, U+3000, ...) and the Hangul fillers, which look
//! like one. `\n`, `\t` and `\r` are written so; the rest as `\u{202e}`.

use std::borrow::Cow;

/// Whether `c` is not shown as itself.
pub fn hidden(c: char) -> bool {
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(
            c,
            '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}' | '\u{180b}'..='\u{180f}'
                | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{ffa0}' | '\u{fff9}'..='\u{fffb}' | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}' | '\u{e0000}'..='\u{e0fff}'
        )
}

/// How `c` is written when [`hidden`].
pub fn escape(c: char) -> String {
    match c {
        '\n' => "\\n".into(),
        '\t' => "\\t".into(),
        '\r' => "\\r".into(),
        c => format!("\\u{{{:x}}}", u32::from(c)),
    }
}

/// `text` with every [`hidden`] character escaped (borrowed when there is none).
///
/// ```
/// assert_eq!(warden_feedback::shown::escaped("a\u{1b}[2Kb\u{202e}c\n"), "a\\u{1b}[2Kb\\u{202e}c\\n");
/// assert_eq!(warden_feedback::shown::escaped("café ok"), "café ok");
/// ```
pub fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            out.push_str(&escape(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_bidi_and_invisible_characters_are_escaped() {
        for c in ['\u{0}', '\u{7}', '\u{1b}', '\u{7f}', '\u{85}', '\u{9b}', '\u{a0}', '\u{ad}', '\u{200b}', '\u{202e}', '\u{2066}', '\u{2028}', '\u{3000}', '\u{3164}', '\u{feff}', '\u{e0041}'] {
            assert!(hidden(c), "{c:?}");
            assert!(!escaped(&format!("a{c}b")).contains(c), "{c:?}");
        }
        for c in ['a', ' ', 'é', '中', '→', '\\'] {
            assert!(!hidden(c), "{c:?}");
        }
    }
}
