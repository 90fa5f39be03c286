//! What a request looks like and what a decision says. Field names follow the result pinned in
//! `ARCHITECTURE.md` (`verdict`, `tier`, `reason`, `rules[].file/line/column/layer`).

use crate::ast::Verdict;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::Arc;
use warden_shell::Analysis;

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let word = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        match &*word {
            "allow" => Ok(Verdict::Allow),
            "ask" => Ok(Verdict::Ask),
            "deny" => Ok(Verdict::Deny),
            other => Err(serde::de::Error::unknown_variant(other, &["allow", "ask", "deny"])),
        }
    }
}

impl Verdict {
    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

/// Where a policy file came from. Ordered top (most authoritative) first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerKind {
    /// `/etc/warden/`
    Enterprise,
    /// `$XDG_CONFIG_HOME/warden/`
    User,
    /// The policy embedded in the binary.
    Builtin,
    /// A `--policy` flag.
    Cli,
    /// `.warden/` at the repository root.
    Project,
    /// `.warden/` between the root and the working directory.
    Directory,
}

/// One source file of a layer.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Display name (a path, or `builtin:default.policy`).
    pub name: String,
    /// The full text.
    pub text: String,
}

/// One layer: one or more files that form it. Layers are passed top first.
#[derive(Debug, Clone)]
pub struct LayerSource {
    /// Where it came from.
    pub kind: LayerKind,
    /// Its files (merged into one layer).
    pub files: Vec<SourceFile>,
}

/// The places a request's paths are resolved against. Plain strings: this crate does no I/O.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// Absolute path of the workspace (`${workspace}`).
    pub workspace: String,
    /// Absolute path of the home directory (`~`, `${home}`).
    pub home: String,
    /// Absolute working directory; relative paths in requests resolve against it.
    pub cwd: String,
}

/// One request to decide.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The agent identity, if any (`--agent`).
    pub agent: Option<&'a str>,
    /// What is asked.
    pub action: Action<'a>,
}

/// What is asked.
#[derive(Debug, Clone, Copy)]
pub enum Action<'a> {
    /// Run a command string, already analysed by `warden-shell`.
    Exec(&'a Analysis),
    /// Call a named tool, with the path it touches if any.
    Tool {
        /// `read_file`, `write_file`, an MCP tool name, ...
        name: &'a str,
        /// The path argument (relative paths resolve against `Context::cwd`).
        path: Option<&'a str>,
    },
}

/// A reference to a rule in a policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleRef {
    /// The file's display name.
    pub file: Arc<str>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The layer the file belongs to.
    pub layer: LayerKind,
    /// The rule's source text (one line).
    pub text: Arc<str>,
    /// Index of the rule in [`crate::PolicySet::rules`], for coverage.
    #[serde(skip)]
    pub id: usize,
}

/// The decision for one request.
///
/// What decided it (tier, reason, rules) is read through methods: a decision refers to the
/// parts that decided it instead of holding copies, so deciding touches no reference count it
/// does not need.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The combined verdict: the most severe of all parts.
    pub verdict: Verdict,
    /// Every part that was judged, with its own verdict.
    parts: Parts,
    /// What the sandbox grants if the request runs. Shared: decisions in the same tier and
    /// context point at one expanded copy.
    pub grants: Arc<Grants>,
    /// Index of the part whose tier the decision reports.
    tier_of: Option<usize>,
    /// Index of the first part with the combined verdict: its reason is the decision's.
    deciding: usize,
    /// A reason given in place of the deciding part's ([`Decision::set_reason`]).
    reason: Option<Box<str>>,
    /// The deciding rules.
    rules: Rules,
}

/// The parts of a decision, the first held inline: most requests are one part, and a decision
/// then needs no list of its own on the heap.
pub(crate) type Parts = smallvec::SmallVec<[Part; 1]>;

/// Where a decision's rules are.
#[derive(Debug, Clone)]
enum Rules {
    /// No rule decided.
    None,
    /// One part's rules hold them all (the usual case).
    Part(usize),
    /// Several parts' rules, merged.
    Merged(Box<[RuleRef]>),
}

impl Decision {
    /// A decision from judged parts: the tier of part `tier_of`, the reason of part `deciding`,
    /// and the rules of every part with `verdict`, each once.
    #[inline]
    pub(crate) fn from_parts(
        verdict: Verdict,
        parts: Parts,
        grants: Arc<Grants>,
        tier_of: Option<usize>,
    ) -> Decision {
        let deciding = parts.iter().position(|p| p.verdict == verdict).unwrap_or(0);
        let with_rules = parts.iter().enumerate().skip(deciding).filter(|(_, p)| p.verdict == verdict);
        let mut with_rules = with_rules.filter(|(_, p)| !p.rules().is_empty());
        let rules = match with_rules.next() {
            None => Rules::None,
            Some((first, p)) => {
                let mut merged: Option<Vec<RuleRef>> = None;
                for (_, other) in with_rules {
                    let held = merged.as_deref().unwrap_or(p.rules());
                    if other.rules().iter().all(|r| held.iter().any(|x| x.id == r.id)) {
                        continue;
                    }
                    let m = merged.get_or_insert_with(|| p.rules().to_vec());
                    for r in other.rules() {
                        if !m.iter().any(|x| x.id == r.id) {
                            m.push(r.clone());
                        }
                    }
                }
                merged.map_or(Rules::Part(first), |m| Rules::Merged(m.into()))
            }
        };
        Decision { verdict, parts, grants, tier_of, deciding, reason: None, rules }
    }

    /// The tier the request runs in (highest-ranked among the parts), if any rule of a tier
    /// decided.
    pub fn tier(&self) -> Option<&str> {
        self.tier_of.and_then(|i| self.parts.get(i)).and_then(Part::tier)
    }

    /// Why, in one sentence a model can act on.
    pub fn reason(&self) -> &str {
        match &self.reason {
            Some(r) => r,
            None => self.parts.get(self.deciding).map_or("", Part::reason),
        }
    }

    /// The rules that decided the verdict (those of the parts with the combined verdict).
    pub fn rules(&self) -> &[RuleRef] {
        match &self.rules {
            Rules::None => &[],
            Rules::Part(i) => self.parts.get(*i).map_or(&[], Part::rules),
            Rules::Merged(list) => list,
        }
    }

    /// Every part that was judged, with its own verdict.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// Gives the decision another reason (the rest stays as decided).
    pub fn set_reason(&mut self, reason: impl Into<Box<str>>) {
        self.reason = Some(reason.into());
    }

    /// Makes this a deny that no rule made, for `reason`: the caller refuses what the policy
    /// allowed or asked (a path warden keeps from every tool, whatever the policy says). No rule
    /// and no tier decided it, and it grants nothing; the parts stay as the policy judged them.
    pub fn overrule(&mut self, reason: impl Into<Box<str>>) {
        self.verdict = Verdict::Deny;
        self.reason = Some(reason.into());
        self.rules = Rules::None;
        self.tier_of = None;
        self.grants = Arc::new(Grants::default());
    }
}

impl Serialize for Decision {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The decision as it has always been written out.
        #[derive(Serialize)]
        #[serde(rename = "Decision")]
        struct Shown<'a> {
            verdict: Verdict,
            tier: Option<&'a str>,
            reason: &'a str,
            rules: &'a [RuleRef],
            parts: &'a [Part],
            grants: &'a Grants,
        }
        Shown {
            verdict: self.verdict,
            tier: self.tier(),
            reason: self.reason(),
            rules: self.rules(),
            parts: &self.parts,
            grants: &self.grants,
        }
        .serialize(s)
    }
}

/// One judged part of a request.
#[derive(Debug, Clone)]
pub struct Part {
    /// What was judged.
    pub subject: Subject,
    /// Its verdict.
    pub verdict: Verdict,
    /// Byte range in the command string, for commands and opaque parts.
    pub span: Option<std::ops::Range<usize>>,
    /// Its tier, reason and rules.
    why: Why,
}

/// Why a part has its verdict.
#[derive(Debug, Clone)]
enum Why {
    /// One rule decided alone: what the compiled rule states, shared.
    Rule(Arc<RuleWhy>),
    /// Anything else.
    Own {
        tier: Option<Arc<str>>,
        reason: Text,
        rules: Vec<RuleRef>,
    },
}

/// A part's own reason: a rule's (shared) or one written for the part.
#[derive(Debug, Clone)]
pub(crate) enum Text {
    Shared(Arc<str>),
    Written(String),
}

impl Text {
    fn as_str(&self) -> &str {
        match self {
            Text::Shared(s) => s,
            Text::Written(s) => s,
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::Written(s)
    }
}

impl From<Arc<str>> for Text {
    fn from(s: Arc<str>) -> Text {
        Text::Shared(s)
    }
}

/// What a part decided by one rule alone states: made once per rule, the first time a decision
/// needs it (see `compile::decide::rule_why`).
#[derive(Debug)]
pub(crate) struct RuleWhy {
    tier: Option<Arc<str>>,
    reason: Arc<str>,
    rule: [RuleRef; 1],
}

impl RuleWhy {
    /// The tier, reason and rule of a part `rule` decides alone.
    pub(crate) fn new(tier: Option<Arc<str>>, reason: Arc<str>, rule: RuleRef) -> RuleWhy {
        RuleWhy { tier, reason, rule: [rule] }
    }
}

impl Part {
    /// A part one rule decided alone.
    pub(crate) fn by_rule(
        subject: Subject,
        verdict: Verdict,
        why: &Arc<RuleWhy>,
        span: Option<std::ops::Range<usize>>,
    ) -> Part {
        Part { subject, verdict, span, why: Why::Rule(Arc::clone(why)) }
    }

    /// A part with its own tier, reason and rules.
    pub(crate) fn new(
        subject: Subject,
        verdict: Verdict,
        tier: Option<Arc<str>>,
        reason: impl Into<Text>,
        rules: Vec<RuleRef>,
        span: Option<std::ops::Range<usize>>,
    ) -> Part {
        Part { subject, verdict, span, why: Why::Own { tier, reason: reason.into(), rules } }
    }

    /// The tier of the deciding rule.
    pub fn tier(&self) -> Option<&str> {
        match &self.why {
            Why::Rule(w) => w.tier.as_deref(),
            Why::Own { tier, .. } => tier.as_deref(),
        }
    }

    /// Why.
    pub fn reason(&self) -> &str {
        match &self.why {
            Why::Rule(w) => &w.reason,
            Why::Own { reason, .. } => reason.as_str(),
        }
    }

    /// The deciding rules (empty when the default or the opaque verdict decided).
    pub fn rules(&self) -> &[RuleRef] {
        match &self.why {
            Why::Rule(w) => &w.rule,
            Why::Own { rules, .. } => rules,
        }
    }

    /// Gives the part another reason (its tier and rules stay).
    pub(crate) fn set_reason(&mut self, reason: String) {
        match &mut self.why {
            Why::Own { reason: r, .. } => *r = Text::Written(reason),
            Why::Rule(w) => {
                let (tier, rules) = (w.tier.clone(), w.rule.to_vec());
                self.why = Why::Own { tier, reason: Text::Written(reason), rules };
            }
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The part as it has always been written out.
        #[derive(Serialize)]
        #[serde(rename = "Part")]
        struct Shown<'a> {
            #[serde(flatten)]
            subject: &'a Subject,
            verdict: Verdict,
            tier: Option<&'a str>,
            reason: &'a str,
            rules: &'a [RuleRef],
            span: &'a Option<std::ops::Range<usize>>,
        }
        Shown {
            subject: &self.subject,
            verdict: self.verdict,
            tier: self.tier(),
            reason: self.reason(),
            rules: self.rules(),
            span: &self.span,
        }
        .serialize(s)
    }
}

/// What a part is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Subject {
    /// A simple command (argv as resolved; unknown words shown as written).
    Command {
        /// The argv.
        argv: crate::Argv,
    },
    /// A pipeline rule's match (`curl ... | sh`).
    Pipe {
        /// The two commands' argv[0].
        from: String,
        /// The receiving command.
        into: String,
    },
    /// A file access (redirect, argument path, or tool path), resolved to an absolute path.
    Path {
        /// `read` or `write`.
        access: &'static str,
        /// The absolute, lexically normalised path.
        path: String,
    },
    /// A tool call.
    Tool {
        /// The tool's name.
        name: String,
    },
    /// Something the analyser could not know.
    Opaque {
        /// The analyser's reason (snake_case).
        reason: String,
        /// The source text.
        text: String,
    },
    /// The request itself could not be judged (unknown agent, ...).
    Request {
        /// What was wrong.
        problem: String,
    },
}

/// What the sandbox may grant a request. Paths are absolute glob patterns (`**`, `*`, `?`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Grants {
    /// Readable paths.
    pub read: Vec<String>,
    /// Writable (and readable) paths.
    pub write: Vec<String>,
    /// Paths never readable nor writable, even inside the above.
    pub deny: Vec<String>,
    /// Paths never writable, even inside `write` (guarded paths).
    pub deny_write: Vec<String>,
    /// Network reach.
    pub network: Network,
    /// Resource limits (the smallest that applies).
    pub limits: Limits,
    /// Extra environment variables allowed in (patterns).
    pub env: Vec<String>,
    /// The backend to run in.
    pub sandbox: Backend,
}

/// Network reach.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "hosts", rename_all = "snake_case")]
pub enum Network {
    /// Nothing.
    #[default]
    None,
    /// These hosts (`host` or `host:port`, wildcards allowed).
    Hosts(Vec<String>),
    /// Everything.
    Any,
}

/// Resource limits; `None` means no limit set by the policy (the backend applies its own).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Wall-clock limit, milliseconds.
    pub timeout_ms: Option<u64>,
    /// Memory, bytes.
    pub memory: Option<u64>,
    /// Process count.
    pub processes: Option<u64>,
    /// Captured output, bytes.
    pub output: Option<u64>,
    /// Largest file, bytes.
    pub file_size: Option<u64>,
    /// Open descriptors.
    pub files: Option<u64>,
    /// Session budget: commands an agent session may run.
    pub commands: Option<u64>,
    /// Session budget: wall time of all its commands, milliseconds.
    pub total_time_ms: Option<u64>,
    /// Session budget: output captured over all its commands, bytes.
    pub total_output: Option<u64>,
}

/// Which backend runs the request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "backend", rename_all = "snake_case")]
pub enum Backend {
    /// The Linux sandbox.
    #[default]
    Native,
    /// The WASI sandbox.
    Wasi {
        /// The image, if named.
        image: Option<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: usize) -> RuleRef {
        let file: Arc<str> = Arc::from("p.policy");
        let text: Arc<str> = Arc::from(format!("exec r{id}").as_str());
        RuleRef { file, line: 10 + id as u32, column: 5, layer: LayerKind::Cli, text, id }
    }

    fn by_rule(id: usize, verdict: Verdict, tier: &str) -> Part {
        let why = Arc::new(RuleWhy::new(Some(tier.into()), format!("by r{id}").into(), rule(id)));
        Part::by_rule(Subject::Tool { name: format!("t{id}") }, verdict, &why, None)
    }

    fn own(verdict: Verdict, reason: &str, rules: Vec<RuleRef>) -> Part {
        Part::new(Subject::Tool { name: String::from("own") }, verdict, None, reason.to_string(), rules, Some(0..3))
    }

    fn ids(rules: &[RuleRef]) -> Vec<usize> {
        rules.iter().map(|r| r.id).collect()
    }

    #[test]
    fn the_first_part_with_the_verdict_gives_the_reason_and_the_rules_of_all_such_parts_merge() {
        let parts = smallvec::smallvec![
            by_rule(1, Verdict::Allow, "read"),
            own(Verdict::Deny, "default", vec![]),
            by_rule(2, Verdict::Deny, "danger"),
            own(Verdict::Deny, "two rules", vec![rule(2), rule(3)]),
            by_rule(3, Verdict::Deny, "danger"),
        ];
        let d = Decision::from_parts(Verdict::Deny, parts, Arc::default(), Some(2));
        assert_eq!(d.reason(), "default");
        assert_eq!(ids(d.rules()), [2, 3]);
        assert_eq!(d.tier(), Some("danger"));
        assert_eq!(d.parts().len(), 5);
    }

    #[test]
    fn one_part_holding_every_rule_is_the_decisions_list() {
        let parts = smallvec::smallvec![by_rule(4, Verdict::Ask, "write"), by_rule(4, Verdict::Ask, "write")];
        let d = Decision::from_parts(Verdict::Ask, parts, Arc::default(), None);
        assert_eq!(ids(d.rules()), [4]);
        assert_eq!(d.reason(), "by r4");
        assert_eq!(d.tier(), None);
        let none = Decision::from_parts(Verdict::Deny, smallvec::smallvec![own(Verdict::Deny, "x", vec![])], Arc::default(), None);
        assert!(none.rules().is_empty());
    }

    #[test]
    fn a_new_reason_keeps_what_decided() {
        let mut d = Decision::from_parts(Verdict::Ask, smallvec::smallvec![by_rule(5, Verdict::Ask, "write")], Arc::default(), Some(0));
        d.set_reason("asked by the parent");
        assert_eq!((d.reason(), d.tier(), ids(d.rules())), ("asked by the parent", Some("write"), vec![5]));
        let mut p = by_rule(6, Verdict::Deny, "danger");
        p.set_reason(String::from("changed"));
        assert_eq!((p.reason(), p.tier(), ids(p.rules())), ("changed", Some("danger"), vec![6]));
    }

    #[test]
    fn a_part_can_state_a_rules_reason_without_copying_it() {
        let message: Arc<str> = Arc::from("allowed by `exec a`");
        let p = Part::new(Subject::Tool { name: String::from("a") }, Verdict::Allow, None, Arc::clone(&message), vec![rule(1), rule(2)], None);
        assert_eq!((p.reason(), ids(p.rules())), ("allowed by `exec a`", vec![1, 2]));
        assert_eq!(Arc::strong_count(&message), 2);
    }

    /// The field names and their order are pinned (`ARCHITECTURE.md`): the methods change how a
    /// decision is held, not what it shows.
    #[test]
    fn json_shows_the_pinned_fields_in_order() -> Result<(), serde_json::Error> {
        let parts = smallvec::smallvec![by_rule(7, Verdict::Deny, "danger"), own(Verdict::Allow, "fine", vec![])];
        let d = Decision::from_parts(Verdict::Deny, parts, Arc::default(), Some(0));
        let rule = r#"{"file":"p.policy","line":17,"column":5,"layer":"cli","text":"exec r7"}"#;
        let want = format!(
            concat!(
                r#"{{"verdict":"deny","tier":"danger","reason":"by r7","rules":[{rule}],"parts":["#,
                r#"{{"kind":"tool","name":"t7","verdict":"deny","tier":"danger","reason":"by r7","rules":[{rule}],"span":null}},"#,
                r#"{{"kind":"tool","name":"own","verdict":"allow","tier":null,"reason":"fine","rules":[],"span":{{"start":0,"end":3}}}}],"#,
                r#""grants":{{"read":[],"write":[],"deny":[],"deny_write":[],"network":{{"kind":"none"}},"#,
                r#""limits":{{"timeout_ms":null,"memory":null,"processes":null,"output":null,"file_size":null,"files":null,"#,
                r#""commands":null,"total_time_ms":null,"total_output":null}},"env":[],"sandbox":{{"backend":"native"}}}}}}"#
            ),
            rule = rule
        );
        assert_eq!(serde_json::to_string(&d)?, want);
        Ok(())
    }
}
