//! Secrets out of the audit log: what a command string or argv carries that must not be
//! written down (tokens, passwords, keys), replaced by `[REDACTED]` before a record is made.
//!
//! Built-in patterns cover the common credential shapes; a policy's `redact` patterns (when the
//! policy language has them) are added on top. Redaction errs wide: a false positive costs an
//! auditor a few characters, a false negative leaks a credential into a file that is kept.

use regex::Regex;

/// The replacement text.
pub const MARK: &str = "[REDACTED]";

/// Patterns whose first capture group (or whole match, without a group) is a secret.
const BUILTIN: &[&str] = &[
    // key=value and key: value for secret-looking keys (value up to whitespace or quote).
    r#"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)[A-Za-z0-9_]*\s*[=:]\s*["']?([^\s"'&]{3,})"#,
    // --password VALUE, --token=VALUE, -p VALUE after mysql-like tools is too wide; flags only.
    r#"(?i)--?(?:password|passwd|token|api-key|apikey|secret|client-secret|access-key)(?:=|\s+)["']?([^\s"']+)"#,
    // HTTP authorization headers.
    r"(?i)authorization:\s*(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=-]+)",
    // Credentials inside URLs: scheme://user:password@host
    r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@",
    // Well-known token shapes.
    r"\b(AKIA[0-9A-Z]{16})\b",
    r"\b(gh[pousr]_[A-Za-z0-9]{30,})\b",
    r"\b(github_pat_[A-Za-z0-9_]{40,})\b",
    r"\b(xox[abprs]-[A-Za-z0-9-]{10,})\b",
    r"\b(sk-[A-Za-z0-9_-]{20,})\b",
    r"\b(glpat-[A-Za-z0-9_-]{20,})\b",
    r"\b(AIza[0-9A-Za-z_-]{35})\b",
    r"\b(npm_[A-Za-z0-9]{36})\b",
    r"\b(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})\b",
    // PEM private key bodies.
    r"(?s)(-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$))",
];

/// A compiled set of redaction patterns.
#[derive(Debug, Clone)]
pub struct Redactor {
    patterns: Vec<Regex>,
}

impl Redactor {
    /// The built-in patterns plus `extra` (regular expressions; a capture group marks the
    /// secret, else the whole match is).
    ///
    /// # Errors
    /// An `extra` pattern that is not a valid regular expression, with the pattern.
    pub fn new(extra: &[String]) -> Result<Self, String> {
        let mut patterns = Vec::with_capacity(BUILTIN.len() + extra.len());
        for p in BUILTIN.iter().copied().chain(extra.iter().map(String::as_str)) {
            patterns.push(Regex::new(p).map_err(|e| format!("redaction pattern `{p}`: {e}"))?);
        }
        Ok(Redactor { patterns })
    }

    /// `text` with every secret replaced by [`MARK`].
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for re in &self.patterns {
            if !re.is_match(&out) {
                continue;
            }
            let mut next = String::with_capacity(out.len());
            let mut last = 0;
            for caps in re.captures_iter(&out) {
                let Some(m) = caps.get(1).or_else(|| caps.get(0)) else { continue };
                if m.start() < last {
                    continue;
                }
                next.push_str(out.get(last..m.start()).unwrap_or_default());
                next.push_str(MARK);
                last = m.end();
            }
            next.push_str(out.get(last..).unwrap_or_default());
            out = next;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> String {
        Redactor::new(&[]).map(|x| x.redact(s)).unwrap_or_default()
    }

    #[test]
    fn credentials_are_redacted() {
        assert_eq!(r("curl -H 'Authorization: Bearer abc.def-123' https://x"), "curl -H 'Authorization: Bearer [REDACTED]' https://x");
        assert_eq!(r("git clone https://bob:hunter2@example.com/r.git"), "git clone https://bob:[REDACTED]@example.com/r.git");
        assert_eq!(r("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG"), "export AWS_SECRET_ACCESS_KEY=[REDACTED]");
        assert_eq!(r("deploy --token=s3cr3tvalue"), "deploy --token=[REDACTED]");
        assert_eq!(r("deploy --password hunter22"), "deploy --password [REDACTED]");
        assert_eq!(r("echo AKIAIOSFODNN7EXAMPLE"), "echo [REDACTED]");
        assert_eq!(r("gh auth login --with-token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"), "gh auth login --with-token [REDACTED]");
        assert!(!r("printf '-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----'").contains("MIIE"));
    }

    #[test]
    fn ordinary_commands_are_kept() {
        for s in ["cargo test --workspace", "git commit -m 'fix token parsing'", "grep -rn password src/", "ls -la /tmp"] {
            assert_eq!(r(s), s);
        }
    }

    #[test]
    fn policy_patterns_add_to_the_builtin_ones() {
        let x = Redactor::new(&["(?i)acme-([0-9]{6})".into()]).map(|x| x.redact("login acme-123456 now")).unwrap_or_default();
        assert_eq!(x, "login acme-[REDACTED] now");
        assert!(Redactor::new(&["(".into()]).is_err());
    }
}
