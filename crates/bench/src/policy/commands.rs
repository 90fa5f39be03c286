//! Typical agent command strings for the shell-analysis rows, and the exec requests decided on
//! both engines.

use super::BenchError;
use super::rules::{Kind, Rule, Verdict};

/// A realistic pipeline of about 400 bytes (log triage, as an agent writes it).
pub const PIPELINE_400: &str = "cat logs/access.log logs/access.log.1 | grep -v healthcheck \
| grep -E '\" (4|5)[0-9]{2} ' | awk '{print $1, $7, $9}' | sed -e 's/?.*$//' -e 's/[0-9]\\{6,\\}/N/g' \
| sort | uniq -c | sort -rn | head -n 50 | tee /tmp/top-errors.txt | awk '$1 > 10 {print $2}' \
| sort -u | xargs -I{} grep -c {} logs/access.log | paste -sd+ - | bc && wc -l /tmp/top-errors.txt \
&& git diff --stat HEAD~3 -- src/ tests/ | tail -n 1";

/// Command strings as coding agents send them, from short to the 400-byte pipeline.
pub const TYPICAL: [&str; 11] = [
    "cargo test --workspace",
    "git status && git diff",
    "ls -la src/",
    "rg -n 'fn main' crates/ | head -20",
    "find . -name '*.rs' -exec grep -n foo {} \\;",
    "bash -c \"rm -rf build\"",
    "git log --oneline -20 -- src/main.rs",
    "cd crates/policy && cargo build 2>&1 | tail -50",
    "sudo env RUST_LOG=debug timeout 30 make -j4 test > build.log 2>&1",
    "echo \"$(git rev-parse HEAD)\" > rev.txt",
    PIPELINE_400,
];

/// Shortened label for a command string: at most `max` characters, then `...`, and the byte
/// length for long ones.
pub fn label(cmd: &str, max: usize) -> String {
    if cmd.chars().count() <= max {
        return cmd.to_string();
    }
    let head: String = cmd.chars().take(max.saturating_sub(12)).collect();
    format!("{head}... ({} B)", cmd.len())
}

/// One exec request decided on both engines.
#[derive(Debug, Clone)]
pub struct Case {
    /// `hit-end`, `miss`, `deny-end`.
    pub name: &'static str,
    /// The argv (also joined with spaces as the command string).
    pub argv: Vec<String>,
    /// Whether the request must be let through (warden allow or ask, Cedar permit).
    pub permitted: bool,
}

/// The three requests for a rule set: the last allow rule whose program no deny rule names (a
/// hit near the end of the list), a program no rule names (a miss: default deny), and the last
/// deny rule.
pub fn cases(rules: &[Rule]) -> Result<Vec<Case>, BenchError> {
    let denied: std::collections::HashSet<&str> = rules
        .iter()
        .filter_map(|r| match &r.kind {
            Kind::Exec { program, .. } if r.verdict == Verdict::Deny => Some(program.as_str()),
            _ => None,
        })
        .collect();
    let last = |want: Verdict| {
        rules.iter().rev().find_map(|r| match &r.kind {
            Kind::Exec { program, subs, .. }
                if r.verdict == want
                    && (want == Verdict::Deny || !denied.contains(program.as_str())) =>
            {
                Some((program.clone(), subs.first().copied().unwrap_or("run")))
            }
            _ => None,
        })
    };
    let (hit_prog, hit_sub) =
        last(Verdict::Allow).ok_or(BenchError::Generator("no allow exec rule to hit"))?;
    let (deny_prog, deny_sub) =
        last(Verdict::Deny).ok_or(BenchError::Generator("no deny exec rule"))?;
    let words = |w: &[&str]| w.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    Ok(vec![
        Case {
            name: "hit-end",
            argv: words(&[&hit_prog, hit_sub, "--verbose"]),
            permitted: true,
        },
        Case {
            name: "miss",
            argv: words(&["unlisted", "--help"]),
            permitted: false,
        },
        Case {
            name: "deny-end",
            argv: words(&[&deny_prog, deny_sub]),
            permitted: false,
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::rules::generate;

    #[test]
    fn the_pipeline_is_about_400_bytes() {
        assert!(
            (380..=420).contains(&PIPELINE_400.len()),
            "{}",
            PIPELINE_400.len()
        );
    }

    #[test]
    fn labels_are_bounded() {
        assert_eq!(label("ls", 10), "ls");
        let l = label(PIPELINE_400, 40);
        assert!(l.chars().count() <= 40, "{l}");
        assert!(l.ends_with(&format!("({} B)", PIPELINE_400.len())));
    }

    #[test]
    fn every_size_has_the_three_cases() {
        for n in [10, 1_000, 10_000] {
            let c = cases(&generate(n)).unwrap();
            assert_eq!(
                c.iter().map(|c| c.name).collect::<Vec<_>>(),
                ["hit-end", "miss", "deny-end"]
            );
        }
    }
}
