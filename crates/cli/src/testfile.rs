//! The policy test file format (`*.wtest`), one request per line:
//!
//! ```text
//! policy ../default.policy          # relative to this file; repeat for layers, top first
//! agent reviewer                    # or `agent none`; applies to the lines after it
//! workspace /workspace              # also `home PATH`, `cwd PATH`
//! deny "git push origin main" tier dangerous rule default.policy:42
//! ask tool write_file "src/main.rs"
//! ```

use warden_policy::ast::Verdict;

/// One parsed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// `policy PATH`
    Policy(String),
    /// `agent NAME` / `agent none`
    Agent(Option<String>),
    /// `workspace PATH`
    Workspace(String),
    /// `home PATH`
    Home(String),
    /// `cwd PATH`
    Cwd(String),
    /// An expectation.
    Case(Case),
}

/// An expected decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// 1-based line in the test file.
    pub line: usize,
    /// The expected verdict.
    pub verdict: Verdict,
    /// The request.
    pub request: CaseRequest,
    /// `tier NAME`
    pub tier: Option<String>,
    /// `rule FILE:LINE`
    pub rule: Option<(String, u32)>,
}

/// What a case asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseRequest {
    /// A command string.
    Command(String),
    /// `tool NAME ["PATH"]`
    Tool(String, Option<String>),
}

/// A line that is not of the format, with its 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Line.
    pub line: usize,
    /// Column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses a whole test file.
///
/// # Errors
/// The first line that does not follow the format.
pub fn parse(text: &str) -> Result<Vec<Line>, SyntaxError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let tokens = tokenize(raw).map_err(|(column, message)| SyntaxError { line, column, message })?;
        if tokens.is_empty() {
            continue;
        }
        lines.push(parse_line(line, &tokens)?);
    }
    Ok(lines)
}

/// A token and the 1-based column it starts at.
type Token = (usize, String, bool);

fn parse_line(line: usize, tokens: &[Token]) -> Result<Line, SyntaxError> {
    let err = |column: usize, message: String| SyntaxError { line, column, message };
    let mut it = tokens.iter();
    let Some((col, head, _)) = it.next() else { return Err(err(1, "empty line".into())) };
    let one_arg = |it: &mut std::slice::Iter<'_, Token>| -> Result<String, SyntaxError> {
        let value = it.next().map(|t| t.1.clone()).ok_or_else(|| err(*col, format!("`{head}` needs a value")))?;
        match it.next() {
            Some((c, extra, _)) => Err(err(*c, format!("unexpected `{extra}` after `{head}`"))),
            None => Ok(value),
        }
    };
    match head.as_str() {
        "policy" => return Ok(Line::Policy(one_arg(&mut it)?)),
        "agent" => {
            let name = one_arg(&mut it)?;
            return Ok(Line::Agent((name != "none").then_some(name)));
        }
        "workspace" => return Ok(Line::Workspace(one_arg(&mut it)?)),
        "home" => return Ok(Line::Home(one_arg(&mut it)?)),
        "cwd" => return Ok(Line::Cwd(one_arg(&mut it)?)),
        _ => {}
    }
    let verdict = match head.as_str() {
        "allow" => Verdict::Allow,
        "ask" => Verdict::Ask,
        "deny" => Verdict::Deny,
        other => {
            return Err(err(*col, format!(
                "expected `allow`, `ask`, `deny`, `policy`, `agent`, `workspace`, `home` or `cwd`, found `{other}`"
            )));
        }
    };
    let request = match it.next() {
        Some((_, text, true)) => CaseRequest::Command(text.clone()),
        Some((_, tool, false)) if tool == "tool" => {
            let Some((_, name, _)) = it.next() else { return Err(err(*col, "`tool` needs a name".into())) };
            let mut rest = it.clone().peekable();
            let path = match rest.peek() {
                Some((_, p, true)) => {
                    it.next();
                    Some(p.clone())
                }
                _ => None,
            };
            CaseRequest::Tool(name.clone(), path)
        }
        Some((c, other, false)) => {
            return Err(err(*c, format!("expected a quoted command or `tool`, found `{other}`")));
        }
        None => return Err(err(*col, "a verdict needs a quoted command or `tool NAME`".into())),
    };
    let mut case = Case { line, verdict, request, tier: None, rule: None };
    while let Some((c, key, _)) = it.next() {
        let Some((vc, value, _)) = it.next() else {
            return Err(err(*c, format!("`{key}` needs a value")));
        };
        match key.as_str() {
            "tier" => case.tier = Some(value.clone()),
            "rule" => {
                let parsed = value
                    .rsplit_once(':')
                    .and_then(|(f, l)| l.parse::<u32>().ok().map(|l| (f.to_string(), l)));
                let Some(rule) = parsed else {
                    return Err(err(*vc, format!("expected `FILE:LINE`, found `{value}`")));
                };
                case.rule = Some(rule);
            }
            other => return Err(err(*c, format!("expected `tier` or `rule`, found `{other}`"))),
        }
    }
    Ok(Line::Case(case))
}

/// Splits a line into words and `"strings"` (escapes `\"`, `\\`, `\n`, `\t`); `#` outside a
/// string starts a comment. Each token is (column, text, was_quoted).
fn tokenize(raw: &str) -> Result<Vec<Token>, (usize, String)> {
    let mut tokens = Vec::new();
    let mut chars = raw.chars().enumerate().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '#' {
            break;
        } else if c == '"' {
            chars.next();
            let mut text = String::new();
            loop {
                match chars.next() {
                    None => return Err((i + 1, "unclosed string".into())),
                    Some((_, '"')) => break,
                    Some((j, '\\')) => match chars.next() {
                        Some((_, '"')) => text.push('"'),
                        Some((_, '\\')) => text.push('\\'),
                        Some((_, 'n')) => text.push('\n'),
                        Some((_, 't')) => text.push('\t'),
                        _ => return Err((j + 1, "unknown escape; use \\\" \\\\ \\n or \\t".into())),
                    },
                    Some((_, ch)) => text.push(ch),
                }
            }
            tokens.push((i + 1, text, true));
        } else {
            let mut text = String::new();
            while let Some(&(_, ch)) = chars.peek() {
                if ch.is_whitespace() || ch == '"' || ch == '#' {
                    break;
                }
                text.push(ch);
                chars.next();
            }
            tokens.push((i + 1, text, false));
        }
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let text = "policy ../default.policy\nagent none\nagent reviewer # c\n\
                    deny \"git push \\\"x\\\"\" tier dangerous rule default.policy:42\n\
                    ask tool write_file \"src/main.rs\"\nallow tool list_dir\n";
        let lines = parse(text).unwrap();
        assert_eq!(lines[0], Line::Policy("../default.policy".into()));
        assert_eq!(lines[1], Line::Agent(None));
        assert_eq!(lines[2], Line::Agent(Some("reviewer".into())));
        let Line::Case(case) = &lines[3] else { panic!() };
        assert_eq!(case.request, CaseRequest::Command("git push \"x\"".into()));
        assert_eq!(case.tier.as_deref(), Some("dangerous"));
        assert_eq!(case.rule, Some(("default.policy".into(), 42)));
        let Line::Case(case) = &lines[4] else { panic!() };
        assert_eq!(case.request, CaseRequest::Tool("write_file".into(), Some("src/main.rs".into())));
        let Line::Case(case) = &lines[5] else { panic!() };
        assert_eq!(case.request, CaseRequest::Tool("list_dir".into(), None));
    }

    #[test]
    fn errors_name_line_and_column() {
        let err = parse("allow \"ls\"\nalow \"ls\"\n").unwrap_err();
        assert_eq!((err.line, err.column), (2, 1));
        let err = parse("deny \"ls\" rule nope\n").unwrap_err();
        assert_eq!((err.line, err.column), (1, 16));
        let err = parse("deny \"ls\n").unwrap_err();
        assert_eq!((err.line, err.column), (1, 6));
    }
}
