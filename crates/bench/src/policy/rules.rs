//! One deterministic generator of N rules, rendered for both engines.
//!
//! Every rule is generated once as plain data ([`Rule`]) and then rendered twice: as warden
//! policy text and as one Cedar `permit`/`forbid` policy. Cedar has only permit and forbid, so
//! `deny` becomes `forbid` and both `allow` and `ask` become `permit`: an approximation in
//! Cedar's favour (it does not have to tell ask from allow).
//!
//! The shapes are restricted to what both engines express identically: no wildcards in flags
//! (Cedar's `like` does not apply to a set), only long flags (warden's short-flag clusters have
//! no Cedar twin), and fs patterns that no exec request's arguments can name.

use std::fmt::Write as _;

/// allow < ask < deny, as in warden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Runs at once.
    Allow,
    /// Waits for a person (Cedar: `permit`).
    Ask,
    /// Refused (Cedar: `forbid`).
    Deny,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }

    fn cedar_effect(self) -> &'static str {
        match self {
            Verdict::Deny => "forbid",
            Verdict::Allow | Verdict::Ask => "permit",
        }
    }
}

/// What one generated rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `exec PROGRAM [(SUB | ...)] [unless (FLAG | ...)]`
    Exec {
        /// The program's base name.
        program: String,
        /// Alternatives for the first argument (empty: any arguments).
        subs: Vec<&'static str>,
        /// Flags that stop the rule from matching (allow rules only).
        unless: Vec<&'static str>,
    },
    /// `tools NAME`
    Tool(String),
    /// `fs read|write "${workspace}/DIR/**"`
    Fs {
        /// `true` for `fs write`.
        write: bool,
        /// The folder under the workspace.
        dir: String,
    },
}

/// One generated rule with the verdict of the tier it sits in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The tier's verdict.
    pub verdict: Verdict,
    /// The tier's index.
    pub tier: usize,
    /// What it matches.
    pub kind: Kind,
}

/// Subcommand words drawn from.
const SUBS: [&str; 15] = [
    "status", "diff", "log", "show", "build", "test", "check", "run", "install", "push", "publish",
    "clean", "fmt", "add", "commit",
];
/// Long flags drawn from for `unless`.
const FLAGS: [&str; 6] = [
    "--force",
    "--dry-run",
    "--output",
    "--exec",
    "--global",
    "--all",
];
/// Verdicts of consecutive tiers: 60% allow, 20% ask, 20% deny.
const TIER_VERDICTS: [Verdict; 10] = [
    Verdict::Allow,
    Verdict::Ask,
    Verdict::Allow,
    Verdict::Deny,
    Verdict::Allow,
    Verdict::Allow,
    Verdict::Ask,
    Verdict::Deny,
    Verdict::Allow,
    Verdict::Allow,
];
/// Tiers in a generated policy (fewer if there are fewer rules).
const MAX_TIERS: usize = 40;
/// The fixed seed: every run and both engines see the same rules.
pub const SEED: u64 = 0x5741_5244_454e_0001;

/// splitmix64: tiny, deterministic, good enough to spread choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        let n64 = u64::try_from(n.max(1)).unwrap_or(u64::MAX);
        usize::try_from(self.next() % n64).unwrap_or(0)
    }

    /// `k` distinct picks from `pool`.
    fn pick<const N: usize>(&mut self, pool: &[&'static str; N], k: usize) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::with_capacity(k);
        while out.len() < k.min(N) {
            if let Some(&w) = pool.get(self.below(N))
                && !out.contains(&w)
            {
                out.push(w);
            }
        }
        out
    }
}

/// Generates `n` rules (deterministic for a given `n`).
pub fn generate(n: usize) -> Vec<Rule> {
    let mut rng = Rng(SEED ^ u64::try_from(n).unwrap_or(0));
    let tiers = n.clamp(1, MAX_TIERS);
    let per_tier = n.div_ceil(tiers).max(1);
    let programs = n / 2 + 1;
    (0..n)
        .map(|i| {
            let tier = i / per_tier;
            let verdict = TIER_VERDICTS
                .get(tier % TIER_VERDICTS.len())
                .copied()
                .unwrap_or(Verdict::Deny);
            let kind = match i % 20 {
                7 | 17 => Kind::Tool(format!("mcp_fn{i}")),
                13 => Kind::Fs {
                    write: verdict == Verdict::Ask,
                    dir: format!("area{i}"),
                },
                _ => exec_rule(&mut rng, verdict, programs),
            };
            Rule {
                verdict,
                tier,
                kind,
            }
        })
        .collect()
}

fn exec_rule(rng: &mut Rng, verdict: Verdict, programs: usize) -> Kind {
    let program = format!("tool{}", rng.below(programs));
    let (subs, unless) = match verdict {
        Verdict::Allow => {
            let subs = rng.below(4);
            let unless = if rng.below(10) < 4 {
                1 + rng.below(2)
            } else {
                0
            };
            (rng.pick(&SUBS, subs), rng.pick(&FLAGS, unless))
        }
        Verdict::Ask | Verdict::Deny => {
            let subs = rng.below(2);
            (rng.pick(&SUBS, subs), vec![])
        }
    };
    Kind::Exec {
        program,
        subs,
        unless,
    }
}

/// Rules per warden file: keeps every file well under the parser's size cap.
pub const RULES_PER_FILE: usize = 2_500;

/// warden policy text, split into files of at most [`RULES_PER_FILE`] rules (tiers never
/// straddle files). The first file also states `default deny` and `opaque ask`.
pub fn warden_files(rules: &[Rule]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    let mut cur = String::from("version 1\ndefault deny\nopaque ask\n");
    let mut in_file = 0usize;
    let mut open_tier: Option<usize> = None;
    for rule in rules {
        if open_tier != Some(rule.tier) {
            if open_tier.is_some() {
                cur.push_str("}\n");
                if in_file >= RULES_PER_FILE {
                    files.push(std::mem::replace(&mut cur, String::from("version 1\n")));
                    in_file = 0;
                }
            }
            let reason = if rule.verdict == Verdict::Deny {
                " \"generated deny tier\""
            } else {
                ""
            };
            let _ = writeln!(
                cur,
                "tier t{}: {}{} {{",
                rule.tier,
                rule.verdict.word(),
                reason
            );
            open_tier = Some(rule.tier);
        }
        let _ = writeln!(cur, "    {}", warden_rule(&rule.kind));
        in_file += 1;
    }
    if open_tier.is_some() {
        cur.push_str("}\n");
    }
    files.push(cur);
    files
}

fn alternatives(words: &[&str]) -> String {
    match words {
        [one] => (*one).to_string(),
        _ => format!("({})", words.join(" | ")),
    }
}

fn warden_rule(kind: &Kind) -> String {
    match kind {
        Kind::Exec {
            program,
            subs,
            unless,
        } => {
            let mut s = format!("exec {program}");
            if !subs.is_empty() {
                let _ = write!(s, " {}", alternatives(subs));
            }
            if !unless.is_empty() {
                let _ = write!(s, " unless {}", alternatives(unless));
            }
            s
        }
        Kind::Tool(name) => format!("tools {name}"),
        Kind::Fs { write, dir } => {
            let access = if *write { "write" } else { "read" };
            format!("fs {access} \"${{workspace}}/{dir}/**\"")
        }
    }
}

/// The Cedar schema the policies are validated against.
pub const CEDAR_SCHEMA: &str = r#"
entity Agent;
entity Command = { program: String, sub: String, args: Set<String> };
entity Tool = { name: String };
entity File = { path: String };
action exec appliesTo { principal: Agent, resource: Command };
action tool appliesTo { principal: Agent, resource: Tool };
action read, write appliesTo { principal: Agent, resource: File };
"#;

/// The workspace the fs rules and the Cedar paths are resolved against.
pub const WORKSPACE: &str = "/workspace";

/// Cedar policy text: one `permit`/`forbid` per rule, in the same order.
///
/// - allow exec: the first argument (`resource.sub`, empty if none) is one of the subs: warden
///   matches an allow's argument tokens at the front.
/// - ask/deny exec: some argument is one of the subs: warden matches them anywhere.
/// - `unless`: no argument is one of the flags.
/// - `fs read` covers reads; `fs write` and a denied `fs read` cover reads and writes.
pub fn cedar_text(rules: &[Rule]) -> String {
    let mut out = String::with_capacity(rules.len() * 160);
    for (i, rule) in rules.iter().enumerate() {
        let effect = rule.verdict.cedar_effect();
        let _ = write!(out, "@id(\"r{i}\")\n{effect}(principal, ");
        match &rule.kind {
            Kind::Exec {
                program,
                subs,
                unless,
            } => {
                let _ = write!(
                    out,
                    "action == Action::\"exec\", resource) when {{ resource.program == \"{program}\""
                );
                if !subs.is_empty() {
                    let tests: Vec<String> = subs
                        .iter()
                        .map(|s| match rule.verdict {
                            Verdict::Allow => format!("resource.sub == \"{s}\""),
                            Verdict::Ask | Verdict::Deny => {
                                format!("resource.args.contains(\"{s}\")")
                            }
                        })
                        .collect();
                    let _ = write!(out, " && ({})", tests.join(" || "));
                }
                if !unless.is_empty() {
                    let flags: Vec<String> = unless.iter().map(|f| format!("\"{f}\"")).collect();
                    let _ = write!(
                        out,
                        " && !resource.args.containsAny([{}])",
                        flags.join(", ")
                    );
                }
                out.push_str(" };\n");
            }
            Kind::Tool(name) => {
                let _ = writeln!(
                    out,
                    "action == Action::\"tool\", resource) when {{ resource.name == \"{name}\" }};"
                );
            }
            Kind::Fs { write, dir } => {
                let actions = if *write || rule.verdict == Verdict::Deny {
                    "action in [Action::\"read\", Action::\"write\"]"
                } else {
                    "action == Action::\"read\""
                };
                let _ = writeln!(
                    out,
                    "{actions}, resource) when {{ resource.path == \"{WORKSPACE}/{dir}\" || resource.path like \"{WORKSPACE}/{dir}/*\" }};"
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_sized() {
        for n in [1, 10, 1_000] {
            let a = generate(n);
            assert_eq!(a.len(), n);
            assert_eq!(a, generate(n));
        }
    }

    #[test]
    fn ten_rules_have_every_verdict_and_kind() {
        let rules = generate(10);
        for v in [Verdict::Allow, Verdict::Ask, Verdict::Deny] {
            assert!(rules.iter().any(|r| r.verdict == v), "{v:?}");
        }
        assert!(rules.iter().any(|r| matches!(r.kind, Kind::Tool(_))));
        let big = generate(1_000);
        assert!(big.iter().any(|r| matches!(r.kind, Kind::Fs { .. })));
        assert!(
            big.iter()
                .any(|r| matches!(&r.kind, Kind::Exec { unless, .. } if !unless.is_empty()))
        );
    }

    #[test]
    fn warden_text_has_one_line_per_rule_and_closes_tiers() {
        let rules = generate(10_000);
        let files = warden_files(&rules);
        assert_eq!(files.len(), 4);
        let rule_lines: usize = files
            .iter()
            .map(|f| f.lines().filter(|l| l.starts_with("    ")).count())
            .sum();
        assert_eq!(rule_lines, 10_000);
        for f in &files {
            assert!(f.starts_with("version 1\n"));
            assert_eq!(f.matches('{').count(), f.matches('}').count());
            assert!(f.len() < 512 * 1024, "{}", f.len());
        }
        assert_eq!(
            files.iter().filter(|f| f.contains("default deny")).count(),
            1
        );
    }

    #[test]
    fn renders_the_documented_forms() {
        let allow = Rule {
            verdict: Verdict::Allow,
            tier: 0,
            kind: Kind::Exec {
                program: "tool17".into(),
                subs: vec!["status", "diff"],
                unless: vec!["--force"],
            },
        };
        let files = warden_files(std::slice::from_ref(&allow));
        assert!(
            files[0]
                .contains("tier t0: allow {\n    exec tool17 (status | diff) unless --force\n}")
        );
        let cedar = cedar_text(&[allow]);
        assert!(cedar.contains(
            "permit(principal, action == Action::\"exec\", resource) when { resource.program == \"tool17\" && (resource.sub == \"status\" || resource.sub == \"diff\") && !resource.args.containsAny([\"--force\"]) };"
        ), "{cedar}");
    }
}
