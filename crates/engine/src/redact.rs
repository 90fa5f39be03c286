//! Secrets out of the audit log: what a command string or argv carries that must not be
//! written down (tokens, passwords, keys), replaced by `[REDACTED]` before a record is made.
//!
//! Built-in patterns cover the common credential shapes; a policy's `redact` patterns (when the
//! policy language has them) are added on top. Redaction errs wide: a false positive costs an
//! auditor a few characters, a false negative leaks a credential into a file that is kept.

use std::sync::OnceLock;

use regex::Regex;

mod argv;

/// The replacement text.
pub const MARK: &str = "[REDACTED]";

/// Patterns whose first capture group (or whole match, without a group) is a secret, each with
/// the lowercase literals one of which every match contains: a pattern is compiled (once) only
/// when a text holds one of them, so ordinary commands cost no regex compilation at all.
const BUILTIN: &[(&[&str], &str)] = &[
    // key=value and key: value for secret-looking keys, the key quoted or not (JSON
    // `"password": "..."`); a quoted value whole, else up to whitespace, a quote, `&` or `,`.
    (
        &["pass", "pwd", "secret", "token", "api", "access", "private", "credential"],
        r#"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)[A-Za-z0-9_]*["']?\s*[=:]\s*(?:"([^"]+)"|'([^']+)'|([^\s"'&,}]{3,}))"#,
    ),
    // NAME=value where the name is or ends in PASS, PASSWD, PASSWORD, PWD, TOKEN, SECRET or AUTH
    // (`DB_PASS=x`, `pass=x`): any value, however short (`bypass=`, `compass=` are not names).
    (
        &["pass", "pwd", "token", "secret", "auth"],
        r#"(?i)(?:^|[^A-Za-z0-9_])(?:[A-Za-z0-9_]*_)?(?:pass|passwd|password|pwd|token|secret|auth)\s*=\s*(?:"([^"]+)"|'([^']+)'|([^\s"'&;|]+))"#,
    ),
    // --password VALUE, --token=VALUE, -pass pass:VALUE: a flag that starts a word, and a value
    // that is not a shell operator (`--with-token <<< T` is not `--token <<<`: see `argv`).
    (
        &["pass", "token", "api", "secret", "access"],
        r#"(?i)(?:^|[\s"'(])--?(?:password|passwd|pass|passin|passout|token|auth-token|api-key|apikey|secret|client-secret|access-key)(?:=|\s+)(?:"([^"]+)"|'([^']+)'|([^\s"'<>|;&][^\s"']*))"#,
    ),
    // HTTP authorization headers.
    (&["authorization"], r"(?i)authorization:\s*(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=-]+)"),
    // Credentials inside URLs: scheme://user:password@host
    (&["://"], r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@"),
    // Well-known token shapes.
    (&["akia"], r"\b(AKIA[0-9A-Z]{16})\b"),
    (&["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], r"\b(gh[pousr]_[A-Za-z0-9]{30,})\b"),
    (&["github_pat_"], r"\b(github_pat_[A-Za-z0-9_]{40,})\b"),
    (&["xox"], r"\b(xox[abprs]-[A-Za-z0-9-]{10,})\b"),
    (&["sk-"], r"\b(sk-[A-Za-z0-9_-]{20,})\b"),
    (&["glpat-"], r"\b(glpat-[A-Za-z0-9_-]{20,})\b"),
    (&["aiza"], r"\b(AIza[0-9A-Za-z_-]{35})\b"),
    (&["npm_"], r"\b(npm_[A-Za-z0-9]{36})\b"),
    (&["eyj"], r"\b(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})\b"),
    // PEM private key bodies.
    (&["-----begin"], r"(?s)(-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$))"),
];

/// One pattern, compiled on first need.
#[derive(Debug, Clone)]
struct Pattern {
    /// Lowercase literals one of which every match contains; empty: always tried.
    triggers: &'static [&'static str],
    source: String,
    compiled: OnceLock<Option<Regex>>,
}

impl Pattern {
    fn regex(&self) -> Option<&Regex> {
        self.compiled.get_or_init(|| Regex::new(&self.source).ok()).as_ref()
    }
}

/// A set of redaction patterns (built-in ones compiled lazily, on a text that could match).
#[derive(Debug, Clone)]
pub struct Redactor {
    patterns: Vec<Pattern>,
}

impl Redactor {
    /// The built-in patterns plus `extra` (regular expressions; a capture group marks the
    /// secret, else the whole match is).
    ///
    /// # Errors
    /// An `extra` pattern that is not a valid regular expression, with the pattern.
    pub fn new(extra: &[String]) -> Result<Self, String> {
        let mut patterns = Vec::with_capacity(BUILTIN.len() + extra.len());
        for (triggers, source) in BUILTIN {
            patterns.push(Pattern { triggers, source: (*source).to_string(), compiled: OnceLock::new() });
        }
        for p in extra {
            let re = Regex::new(p).map_err(|e| format!("redaction pattern `{p}`: {e}"))?;
            patterns.push(Pattern { triggers: &[], source: p.clone(), compiled: OnceLock::from(Some(re)) });
        }
        Ok(Redactor { patterns })
    }

    /// `text` with every secret replaced by [`MARK`].
    pub fn redact(&self, text: &str) -> String {
        let mut out = by_position(text);
        let mut lower = out.to_ascii_lowercase();
        for pattern in &self.patterns {
            if !pattern.triggers.is_empty() && !pattern.triggers.iter().any(|t| lower.contains(t)) {
                continue;
            }
            // A built-in pattern always compiles (a test holds them); were one not to, redact
            // the whole text rather than keep a secret.
            let Some(re) = pattern.regex() else { return MARK.to_string() };
            if !re.is_match(&out) {
                continue;
            }
            let mut next = String::with_capacity(out.len());
            let mut last = 0;
            for caps in re.captures_iter(&out) {
                // The first group that took part (a pattern's alternatives each have one).
                let Some(m) = caps.iter().skip(1).flatten().next().or_else(|| caps.get(0)) else { continue };
                if m.start() < last {
                    continue;
                }
                next.push_str(out.get(last..m.start()).unwrap_or_default());
                next.push_str(MARK);
                last = m.end();
            }
            next.push_str(out.get(last..).unwrap_or_default());
            out = next;
            lower = out.to_ascii_lowercase();
        }
        out
    }

    /// How many patterns have been compiled so far (tests: ordinary text compiles none).
    #[cfg(test)]
    fn compiled(&self) -> usize {
        self.patterns.iter().filter(|p| p.compiled.get().is_some()).count()
    }
}

/// `text` with the secrets that only a word's position reveals (`argv`) replaced by [`MARK`].
fn by_position(text: &str) -> String {
    let mut ranges = argv::secrets(text);
    if ranges.is_empty() {
        return text.to_string();
    }
    ranges.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for r in ranges {
        if r.start < last {
            continue;
        }
        out.push_str(text.get(last..r.start).unwrap_or_default());
        out.push_str(MARK);
        last = r.end;
    }
    out.push_str(text.get(last..).unwrap_or_default());
    out
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

    /// clients.md #7: each shape below kept its secret in the audit log.
    #[test]
    fn password_options_of_common_tools_are_redacted() {
        let cases = [
            ("mysql -u root -pS3cretPw1 db", "mysql -u root -p[REDACTED] db"),
            ("mysqldump -uroot -p'S3cret Pw' db", "mysqldump -uroot -p'[REDACTED]' db"),
            ("curl -u admin:S3cretPw3 http://x", "curl -u admin:[REDACTED] http://x"),
            ("curl --user=admin:S3cretPw3 http://x", "curl --user=admin:[REDACTED] http://x"),
            ("curl -uadmin:S3cretPw3 http://x", "curl -uadmin:[REDACTED] http://x"),
            ("sshpass -p S3cretPw4 ssh host", "sshpass -p [REDACTED] ssh host"),
            ("sshpass -pS3cretPw4 ssh host", "sshpass -p[REDACTED] ssh host"),
            ("docker login -u me -p S3cretPw5 reg", "docker login -u me -p [REDACTED] reg"),
            ("az login -u me -p S3cretPw11", "az login -u me -p [REDACTED]"),
            ("htpasswd -b .htp user S3cretPw12", "htpasswd -b .htp user [REDACTED]"),
            ("htpasswd -nb user S3cretPw12 > out", "htpasswd -nb user [REDACTED] > out"),
            ("redis-cli -a S3cretPw14 ping", "redis-cli -a [REDACTED] ping"),
            ("redis-cli --pass S3cretPw14 ping", "redis-cli --pass [REDACTED] ping"),
            ("aws configure set aws_secret_access_key S3cretPw16", "aws configure set aws_secret_access_key [REDACTED]"),
            ("openssl enc -k S3cretPw19 -in a", "openssl enc -k [REDACTED] -in a"),
            ("openssl enc -pass pass:S3cretPw19 -in a", "openssl enc -pass [REDACTED] -in a"),
            ("zip -P S3cretPw20 a.zip f", "zip -P [REDACTED] a.zip f"),
            ("7z a -pS3cretPw21 a.7z f", "7z a -p[REDACTED] a.7z f"),
            ("ldapsearch -w S3cretPw31 -D cn=x", "ldapsearch -w [REDACTED] -D cn=x"),
            ("smbclient //h/s -U user%S3cretPw32", "smbclient //h/s -U user%[REDACTED]"),
            ("npm config set //registry.npmjs.org/:_authToken S3cretPw30", "npm config set //registry.npmjs.org/:_authToken [REDACTED]"),
            ("gh auth login --with-token <<< S3cretPw22", "gh auth login --with-token <<< [REDACTED]"),
            ("docker login --password-stdin <<<'S3cretPw23'", "docker login --password-stdin <<<'[REDACTED]'"),
        ];
        for (input, want) in cases {
            assert_eq!(r(input), want, "{input}");
        }
    }

    #[test]
    fn credential_assignments_and_json_fields_are_redacted() {
        let cases = [
            ("heroku config:set DB_PASS=S3cretPw26", "heroku config:set DB_PASS=[REDACTED]"),
            ("NAME_PASS=x ./run", "NAME_PASS=[REDACTED] ./run"),
            ("MY_PASSWD=ab ./run", "MY_PASSWD=[REDACTED] ./run"),
            ("GH_TOKEN=ab gh pr list", "GH_TOKEN=[REDACTED] gh pr list"),
            (r#"echo '{"password":"S3cretPw18"}' > c.json"#, r#"echo '{"password":"[REDACTED]"}' > c.json"#),
            (r#"echo '{"api_token": "S3cret Pw18", "user": "bob"}'"#, r#"echo '{"api_token": "[REDACTED]", "user": "bob"}'"#),
        ];
        for (input, want) in cases {
            assert_eq!(r(input), want, "{input}");
        }
    }

    #[test]
    fn ordinary_commands_are_kept() {
        for s in [
            "cargo test --workspace",
            "git commit -m 'fix token parsing'",
            "grep -rn password src/",
            "ls -la /tmp",
            // `-p` alone prompts; the next word is the database.
            "mysql -u root -p shop",
            "mysqldump --single-transaction -p shop > dump.sql",
            "gh auth login --with-token < token.txt",
            "docker run -u 1000:1000 -p 8080:80 img",
            "curl -u admin https://x",
            "mkdir -p src/bin",
            "tar -xzf a.tgz -C out",
            "npm config set registry https://r.example",
            "aws configure set region eu-west-1",
            "cp bypass=1 compass=2",
            "htpasswd -c .htp user",
            "ssh -p 2222 host",
        ] {
            assert_eq!(r(s), s);
        }
    }

    #[test]
    fn every_builtin_pattern_compiles_and_holds_its_triggers() {
        for (triggers, source) in BUILTIN {
            assert!(Regex::new(source).is_ok(), "{source}");
            assert!(!triggers.is_empty() && triggers.iter().all(|t| *t == t.to_ascii_lowercase()), "{source}");
        }
    }

    #[test]
    fn ordinary_text_compiles_no_pattern_and_mixed_case_secrets_still_match() {
        let x = Redactor::new(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(x.redact("cargo build --release && ls -la"), "cargo build --release && ls -la");
        assert_eq!(x.compiled(), 0);
        assert_eq!(x.redact("run --PassWord=Hunter22x"), "run --PassWord=[REDACTED]");
        assert_eq!(x.redact("curl -H 'AUTHORIZATION: BEARER abcdef'"), "curl -H 'AUTHORIZATION: BEARER [REDACTED]'");
        assert!(x.compiled() >= 2);
    }

    #[test]
    fn policy_patterns_add_to_the_builtin_ones() {
        let x = Redactor::new(&["(?i)acme-([0-9]{6})".into()]).map(|x| x.redact("login acme-123456 now")).unwrap_or_default();
        assert_eq!(x, "login acme-[REDACTED] now");
        assert!(Redactor::new(&["(".into()]).is_err());
    }
}
