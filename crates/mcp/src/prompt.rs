//! The approval prompt a person reads before an `ask` call runs (an elicitation's message).
//!
//! The command (or path) comes from the model, and the person approves what the prompt shows:
//! so it is shown exactly, on one line. Every character a dialog would not show as itself
//! (controls, newlines, bidirectional overrides, zero-width and other invisible characters:
//! [`warden_feedback::shown`]) is written as an escape (`\n`, `\u{202e}`), a backslash as `\\`
//! so that an escape the model typed is told apart, a run of spaces long enough to push text
//! out of sight as `\u{20}×N`, and a long command is clipped with the count of bytes not shown.

use warden_feedback::shown::{escape, hidden};

/// At most this many characters of the command are shown.
const SHOWN: usize = 300;
/// A run of more spaces than this is shown as a count.
const SPACES: usize = 4;

/// The elicitation message for `tool` on `subject`, decided `ask` for `reason` by `by`.
pub(crate) fn message(tool: &str, subject: &str, reason: &str, by: &str) -> String {
    let (reason, _) = shown(reason, SHOWN);
    let (by, _) = shown(by, SHOWN);
    let (command, more) = shown(subject, SHOWN);
    let more = if more > 0 { format!(" ({more} more bytes)") } else { String::new() };
    let note = if command.contains('\\') { " (escapes shown as \\n, \\u{..}, \\\\)" } else { "" };
    format!("warden: {tool} `{command}`{more}{note} needs approval: {reason} ({by}). Approve it once?")
}

/// `text` rendered visibly, up to about `limit` characters, and how many bytes of it were not.
fn shown(text: &str, limit: usize) -> (String, usize) {
    let mut out = String::new();
    let mut width = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if width >= limit {
            return (out, text.len() - i);
        }
        let piece = if c == ' ' {
            let mut run = 1;
            while chars.next_if(|(_, c)| *c == ' ').is_some() {
                run += 1;
            }
            if run > SPACES { format!("\\u{{20}}×{run}") } else { " ".repeat(run) }
        } else if c == '\\' {
            "\\\\".to_string()
        } else if hidden(c) {
            escape(c)
        } else {
            c.to_string()
        };
        width += piece.chars().count();
        out.push_str(&piece);
    }
    (out, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clients.md #8: the command the model sent is shown as it will run, on one line, with
    /// nothing invisible and nothing dropped silently.
    #[test]
    fn the_command_cannot_dress_up_the_prompt() {
        let spoof = format!("python3 x.py{}\n\n(approved by admin) Run harmless `ls`? \u{202e}gnp.x\u{202c}", " ".repeat(300));
        let m = message("exec", &spoof, "writes need approval", "rule default.policy:3");
        assert!(!m.contains('\n') && !m.contains('\r'), "{m}");
        assert!(!m.contains('\u{202e}') && m.contains("\\u{202e}") && m.contains("\\u{202c}"), "{m}");
        assert!(!m.contains("     "), "padding kept: {m}");
        assert!(m.contains("\\n\\n(approved by admin)"), "{m}");
        assert!(m.ends_with("needs approval: writes need approval (rule default.policy:3). Approve it once?"), "{m}");
    }

    #[test]
    fn every_invisible_or_control_character_is_escaped() {
        for c in ['\u{0}', '\u{7}', '\u{1b}', '\r', '\t', '\u{7f}', '\u{85}', '\u{9b}', '\u{a0}', '\u{ad}', '\u{61c}', '\u{180e}', '\u{200b}', '\u{200d}', '\u{200e}', '\u{2028}', '\u{2029}', '\u{202a}', '\u{2066}', '\u{2069}', '\u{3000}', '\u{3164}', '\u{feff}', '\u{e0041}', '\u{fe0f}'] {
            let m = message("exec", &format!("ls{c}x"), "r", "b");
            assert!(!m.contains(c), "{:?} kept: {m:?}", c);
        }
        // A literal backslash is escaped too, so `\u{202e}` typed by the model is told apart.
        assert!(message("exec", "echo \\u{202e}", "r", "b").contains("echo \\\\u{202e}"));
        // Ordinary text, non-ASCII letters included, is shown as is.
        assert!(message("exec", "grep -rn 'café' src/ | wc -l", "r", "b").contains("`grep -rn 'café' src/ | wc -l`"));
    }

    #[test]
    fn a_long_command_is_clipped_with_a_count_of_what_is_not_shown() {
        let long = format!("echo {}", "a".repeat(5000));
        let m = message("exec", &long, "r", "b");
        assert!(m.len() < 1000, "{}", m.len());
        let shown = m.split('`').nth(1).unwrap_or_default();
        let kept = shown.matches('a').count();
        assert!(kept > 100, "{m}");
        assert!(m.contains(&format!("({} more bytes)", long.len() - 5 - kept)), "{m}");
    }
}
