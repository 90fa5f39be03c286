//! A generator of small policy texts and requests from fragments.
//!
//! The fragments are drawn from vocabularies of words that real policies and commands use,
//! plus arbitrary strings, so that both "the rule matches" and "the text is odd" are reached.
//! Rendering is total: every generated value renders to some text, valid or not; the oracle
//! skips what does not compile.

use arbitrary::Arbitrary;

/// Command and argument words of both policies and command strings.
const WORDS: &[&str] = &[
    "rm",
    "git",
    "push",
    "status",
    "ls",
    "cat",
    "curl",
    "wget",
    "sh",
    "bash",
    "python",
    "-c",
    "-rf",
    "-i",
    "--force",
    "--output=x",
    "find",
    "-delete",
    "-exec",
    "sed",
    "sudo",
    "env",
    "xargs",
    "cargo",
    "build",
    "test",
    "echo",
    "*",
    "ssh",
    "~/.ssh/id_rsa",
    ".env",
    "/etc/shadow",
    "eval",
    "timeout",
    "5",
    "make",
    "npm",
    "publish",
    "-C",
    "x",
    "origin",
    "--hard",
    "reset",
    "tee",
    "chmod",
    "+x",
    "dd",
    "/usr/bin/rm",
    "./rm",
    "src/main.rs",
    "{}",
    ";",
    "-ni",
    "--in-place",
    "-",
    "--",
    "a=b",
    "git*",
    "?",
    "node",
    "-e",
];

/// Separators and constructs between command words.
const SEPS: &[&str] = &[
    " ",
    " | ",
    " && ",
    " || ",
    "; ",
    "\n",
    " & ",
    " |& ",
    "$(",
    ")",
    "`",
    "( ",
    " )",
    "{ ",
    "; }",
    "'",
    "\"",
    " > ",
    " >> ",
    " < ",
    " 2>&1 ",
    "bash -c '",
    "sh -c \"",
    " <<< ",
    "=",
    "$x",
    "${HOME}",
    " -- ",
    "sudo ",
    "env A=1 ",
    "xargs ",
    "find . -exec ",
    " \\;",
    "eval ",
    "<(",
    "\\",
    "#",
    " <<EOF\n",
    "\nEOF\n",
    "function f { ",
    "f; ",
];

/// Path patterns (already quoted) and path-set names.
const PATHS: &[&str] = &[
    "\"~/.ssh/**\"",
    "\"${workspace}/**\"",
    "\"/tmp/**\"",
    "\"**/.env\"",
    "\"/etc/**\"",
    "\"**/*.pem\"",
    "\"${home}/x\"",
    "\"/usr/**\"",
    "\"src/*.rs\"",
    "\"/**\"",
    "\"**\"",
    "\"/workspace/.git/**\"",
    "\"?\"",
    "\"${other}\"",
    "\"/\"",
    "\"../x\"",
];

/// Names of tiers, path sets and agents.
const NAMES: &[&str] = &[
    "read",
    "write",
    "dangerous",
    "secrets",
    "reviewer",
    "builder",
    "ci",
];

/// Tool names.
const TOOLS: &[&str] = &[
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "search",
    "\"mcp__*\"",
    "exec",
    "x",
];

/// Request paths for tool calls.
const TOOL_PATHS: &[&str] = &[
    "src/main.rs",
    "/etc/shadow",
    "~/.ssh/id_rsa",
    ".env",
    "/tmp/x",
    "../../etc/passwd",
    "/workspace/.git/hooks/pre-commit",
    "",
    ".",
    "/",
    "a/../../b",
];

/// A compact policy in the shape of the shipped ones (tiers, path sets, a pipe rule, a lock,
/// agents). The embedded default policy is ten times larger and compiling it dominated the
/// cost of a case (under 10 executions per second); `policy_parse` covers it instead.
pub const BASE: &str = r#"version 1
default ask
opaque ask
paths secrets = "~/.ssh/**", "**/.env", "**/*.pem"
paths guarded = "${workspace}/.git/hooks/**", "${workspace}/.warden/**"
tier read: allow {
    tools read_file, list_dir, search
    exec ls, cat, grep, echo, pwd
    exec find unless (-delete | -exec | -execdir)
    exec git (status | diff | log) unless (-c | --output*)
    fs read "${workspace}/**", "/usr/**"
}
tier write: ask {
    tools write_file, edit_file
    exec cargo (build | test), make, mkdir, touch
    exec sed with (-i | --in-place*)
    fs write "${workspace}/**", "/tmp/**" except guarded
}
tier dangerous: deny "deletion and push" {
    exec rm, find with -delete, git push, git (reset --hard | clean)
    pipe (curl | wget) into (sh | bash)
    net any
}
deny "secrets" fs read secrets
lock deny exec sudo
agent reviewer { tiers read }
agent builder { tiers read, write; limits { timeout 10m } }
"#;

/// How many of each repeated fragment are rendered.
const MAX_ITEMS: usize = 6;

fn pick<'a>(list: &[&'a str], i: u8) -> &'a str {
    list.get(usize::from(i) % list.len())
        .copied()
        .unwrap_or_default()
}

/// A policy string literal of `s`, with the language's escapes.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `allow`, `ask` or `deny`.
#[derive(Arbitrary, Debug, Clone, Copy)]
#[allow(missing_docs)]
pub enum V {
    Allow,
    Ask,
    Deny,
}

impl V {
    fn as_str(self) -> &'static str {
        match self {
            V::Allow => "allow",
            V::Ask => "ask",
            V::Deny => "deny",
        }
    }
}

/// A pattern token: a vocabulary word or any string (quoted).
#[derive(Arbitrary, Debug)]
pub enum Tok {
    /// A word of [`WORDS`].
    Word(u8),
    /// Any text, as a string literal.
    Str(String),
}

impl Tok {
    fn render(&self) -> String {
        match self {
            Tok::Word(i) => quote_if_needed(pick(WORDS, *i)),
            Tok::Str(s) => quote(s),
        }
    }
}

/// Bare words stay bare when the grammar allows it.
fn quote_if_needed(w: &str) -> String {
    let bare = w
        .chars()
        .all(|c| c.is_alphanumeric() || "_./+@%:=^~-*?".contains(c));
    if bare { w.to_owned() } else { quote(w) }
}

/// One token or an alternative `( a | b ... )`.
#[derive(Arbitrary, Debug)]
pub enum Alt {
    /// One token.
    One(Tok),
    /// `( SEQ | SEQ ... )`.
    Many(Vec<Vec<Tok>>),
}

impl Alt {
    fn render(&self) -> String {
        match self {
            Alt::One(t) => t.render(),
            Alt::Many(alts) => {
                let seqs: Vec<String> = alts
                    .iter()
                    .take(MAX_ITEMS)
                    .map(|seq| join(seq.iter().take(3).map(Tok::render), " "))
                    .collect();
                format!("({})", seqs.join(" | "))
            }
        }
    }
}

fn join(items: impl Iterator<Item = String>, sep: &str) -> String {
    items.collect::<Vec<_>>().join(sep)
}

fn flags(toks: &[Tok]) -> String {
    match toks {
        [one] => one.render(),
        many => format!(
            "({})",
            join(many.iter().take(MAX_ITEMS).map(Tok::render), " | ")
        ),
    }
}

/// `COMMAND [ARG...] [unless FLAGS] [with FLAGS]`.
#[derive(Arbitrary, Debug)]
pub struct Pattern {
    cmd: Alt,
    args: Vec<Alt>,
    unless: Vec<Tok>,
    with: Vec<Tok>,
}

impl Pattern {
    fn render(&self) -> String {
        let mut out = self.cmd.render();
        for a in self.args.iter().take(3) {
            out.push(' ');
            out.push_str(&a.render());
        }
        if !self.unless.is_empty() {
            out.push_str(" unless ");
            out.push_str(&flags(&self.unless));
        }
        if !self.with.is_empty() {
            out.push_str(" with ");
            out.push_str(&flags(&self.with));
        }
        out
    }
}

/// A path pattern, a set name, or any string.
#[derive(Arbitrary, Debug)]
pub enum PathTok {
    /// One of [`PATHS`].
    Pattern(u8),
    /// One of [`NAMES`], as a path set name.
    Set(u8),
    /// Any text, as a string literal.
    Str(String),
}

impl PathTok {
    fn render(&self) -> String {
        match self {
            PathTok::Pattern(i) => pick(PATHS, *i).to_owned(),
            PathTok::Set(i) => pick(NAMES, *i).to_owned(),
            PathTok::Str(s) => quote(s),
        }
    }
}

fn path_list(paths: &[PathTok]) -> String {
    if paths.is_empty() {
        return String::from("\"**\"");
    }
    join(paths.iter().take(MAX_ITEMS).map(PathTok::render), ", ")
}

/// One rule form.
#[derive(Arbitrary, Debug)]
pub enum RuleGen {
    /// `exec PATTERN, ...`
    Exec(Vec<Pattern>),
    /// `pipe PATTERN into PATTERN`
    Pipe(Pattern, Pattern),
    /// `fs read|write PATHS [except PATHS]`
    Fs {
        /// `write` rather than `read`.
        write: bool,
        /// The paths.
        paths: Vec<PathTok>,
        /// The exceptions.
        except: Vec<PathTok>,
    },
    /// `tools NAME, ...`
    Tools(Vec<u8>),
    /// `net none | any | hosts ...`
    Net(u8),
}

impl RuleGen {
    fn render(&self) -> String {
        match self {
            RuleGen::Exec(pats) if pats.is_empty() => String::from("exec rm"),
            RuleGen::Exec(pats) => {
                format!(
                    "exec {}",
                    join(pats.iter().take(MAX_ITEMS).map(Pattern::render), ", ")
                )
            }
            RuleGen::Pipe(a, b) => format!("pipe {} into {}", a.render(), b.render()),
            RuleGen::Fs {
                write,
                paths,
                except,
            } => {
                let access = if *write { "write" } else { "read" };
                let mut out = format!("fs {access} {}", path_list(paths));
                if !except.is_empty() {
                    out.push_str(" except ");
                    out.push_str(&path_list(except));
                }
                out
            }
            RuleGen::Tools(names) => {
                let names = join(
                    names
                        .iter()
                        .take(MAX_ITEMS)
                        .map(|i| pick(TOOLS, *i).to_owned()),
                    ", ",
                );
                format!(
                    "tools {}",
                    if names.is_empty() {
                        "read_file".to_owned()
                    } else {
                        names
                    }
                )
            }
            RuleGen::Net(i) => match i % 3 {
                0 => String::from("net none"),
                1 => String::from("net any"),
                _ => String::from("net hosts \"example.com:443\", \"*.github.com\""),
            },
        }
    }
}

/// One top-level statement.
#[derive(Arbitrary, Debug)]
pub enum Stmt {
    /// `[lock] VERDICT ["reason"] RULE`
    Rule {
        /// `lock`.
        lock: bool,
        /// The verdict.
        verdict: V,
        /// The rule.
        rule: RuleGen,
    },
    /// `[lock] tier NAME: VERDICT { RULE... }`
    Tier {
        /// `lock`.
        lock: bool,
        /// Index into [`NAMES`].
        name: u8,
        /// The verdict.
        verdict: V,
        /// The rules.
        rules: Vec<RuleGen>,
    },
    /// `paths NAME = PATHS`
    Paths(u8, Vec<PathTok>),
    /// `agent NAME { tiers ...; deny RULE }`
    Agent {
        /// Index into [`NAMES`].
        name: u8,
        /// Tier names.
        tiers: Vec<u8>,
        /// A narrowing rule.
        rule: Option<(V, RuleGen)>,
    },
    /// `limits { timeout 1s }`
    Limits,
}

impl Stmt {
    fn render(&self) -> String {
        match self {
            Stmt::Rule {
                lock,
                verdict,
                rule,
            } => {
                format!(
                    "{}{} \"fuzz\" {}",
                    lock_kw(*lock),
                    verdict.as_str(),
                    rule.render()
                )
            }
            Stmt::Tier {
                lock,
                name,
                verdict,
                rules,
            } => {
                let body = join(
                    rules
                        .iter()
                        .take(MAX_ITEMS)
                        .map(|r| format!("    {}\n", r.render())),
                    "",
                );
                format!(
                    "{}tier {}: {} {{\n{body}}}",
                    lock_kw(*lock),
                    pick(NAMES, *name),
                    verdict.as_str()
                )
            }
            Stmt::Paths(name, paths) => {
                format!("paths {} = {}", pick(NAMES, *name), path_list(paths))
            }
            Stmt::Agent { name, tiers, rule } => {
                let mut items = Vec::new();
                if !tiers.is_empty() {
                    let names = join(
                        tiers
                            .iter()
                            .take(MAX_ITEMS)
                            .map(|i| pick(NAMES, *i).to_owned()),
                        ", ",
                    );
                    items.push(format!("tiers {names}"));
                }
                if let Some((v, r)) = rule {
                    items.push(format!("{} {}", v.as_str(), r.render()));
                }
                format!("agent {} {{ {} }}", pick(NAMES, *name), items.join("; "))
            }
            Stmt::Limits => String::from("limits { timeout 1s, memory 1MiB }"),
        }
    }
}

fn lock_kw(lock: bool) -> &'static str {
    if lock { "lock " } else { "" }
}

/// A generated policy: optionally [`BASE`], then statements.
#[derive(Arbitrary, Debug)]
pub struct PolicyGen {
    /// Start from [`BASE`] when even.
    pub base: u8,
    /// `default VERDICT`.
    pub default: Option<V>,
    /// `opaque VERDICT`.
    pub opaque: Option<V>,
    /// Further statements.
    pub statements: Vec<Stmt>,
}

impl PolicyGen {
    /// The policy file: [`BASE`] (if chosen) followed by the statements.
    pub fn render(&self) -> String {
        if self.with_base() {
            format!("{BASE}{}", self.render_statements())
        } else {
            self.render_own()
        }
    }

    /// Whether the policy starts from [`BASE`].
    pub fn with_base(&self) -> bool {
        self.base % 2 == 0
    }

    /// The generated header and statements alone (no [`BASE`]), as a file.
    pub fn render_own(&self) -> String {
        let mut out = String::from("version 1\n");
        if let Some(v) = self.default {
            out.push_str(&format!("default {}\n", v.as_str()));
        }
        if let Some(v) = self.opaque {
            out.push_str(&format!("opaque {}\n", v.as_str()));
        }
        out.push_str(&self.render_statements());
        out
    }

    /// The statements only.
    fn render_statements(&self) -> String {
        let mut out = String::new();
        for s in self.statements.iter().take(MAX_ITEMS * 2) {
            out.push_str(&s.render());
            out.push('\n');
        }
        out
    }
}

/// One command-string token.
#[derive(Arbitrary, Debug)]
pub enum CmdTok {
    /// A word of [`WORDS`], followed by a space.
    Word(u8),
    /// A separator of [`SEPS`].
    Sep(u8),
    /// Any text.
    Raw(String),
}

/// What is requested.
#[derive(Arbitrary, Debug)]
pub enum RequestGen {
    /// A command string, from tokens.
    Exec(Vec<CmdTok>),
    /// A tool call.
    Tool {
        /// Index into [`TOOLS`] (unquoted).
        name: u8,
        /// Index into [`TOOL_PATHS`], if any.
        path: Option<u8>,
    },
}

/// A tool name as requested (without policy quoting).
pub fn tool_name(i: u8) -> String {
    pick(TOOLS, i).trim_matches('"').to_owned()
}

/// A tool call path.
pub fn tool_path(i: u8) -> &'static str {
    pick(TOOL_PATHS, i)
}

/// The command string of `toks`.
pub fn command(toks: &[CmdTok]) -> String {
    let mut out = String::new();
    for t in toks.iter().take(24) {
        match t {
            CmdTok::Word(i) => {
                out.push_str(pick(WORDS, *i));
                out.push(' ');
            }
            CmdTok::Sep(i) => out.push_str(pick(SEPS, *i)),
            CmdTok::Raw(s) => out.push_str(s),
        }
    }
    out
}

/// Index into the agent names the request may carry.
pub fn agent(i: u8) -> &'static str {
    pick(NAMES, i)
}
