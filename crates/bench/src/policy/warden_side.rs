//! The warden side: compile the generated files as one `--policy` layer, analyse command
//! strings, decide.

use warden_policy::ast::Verdict;
use warden_policy::{
    Action, Context, LayerKind, LayerSource, PolicySet, Request, SourceFile, compile,
};
use warden_shell::{Analysis, SimpleCommand, Word};

use super::rules::WORKSPACE;

/// The context every request is decided in.
pub fn context() -> Context {
    Context {
        workspace: String::from(WORKSPACE),
        home: String::from("/home/user"),
        cwd: String::from(WORKSPACE),
    }
}

/// The generated files as one layer (built once, outside timing).
pub fn layers(files: &[String]) -> Vec<LayerSource> {
    vec![LayerSource {
        kind: LayerKind::Cli,
        files: files
            .iter()
            .enumerate()
            .map(|(i, text)| SourceFile {
                name: format!("bench{i}.policy"),
                text: text.clone(),
            })
            .collect(),
    }]
}

/// Compiles, turning diagnostics into one line (how many, and the first).
pub fn try_compile(layers: &[LayerSource]) -> Result<PolicySet, String> {
    compile(layers).map_err(|d| d.to_string().chars().take(200).collect())
}

/// How the analysis used for the decide-only rows was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalysisSource {
    /// `warden_shell::analyse` found exactly the one simple command expected.
    Analyser,
    /// The analyser did not (not built yet, or disagrees): a hand-built one-command analysis.
    HandBuilt,
}

/// The analysis of `argv` (a plain simple command): the analyser's if it found exactly this
/// command, else a hand-built one so that `decide` can still be measured on its own.
pub fn analysis_for(argv: &[String]) -> (Analysis, AnalysisSource) {
    let line = argv.join(" ");
    let a = warden_shell::analyse(&line);
    let found = a.opaque.is_empty()
        && a.commands.len() == 1
        && a.commands.first().is_some_and(|c| {
            c.argv
                .iter()
                .map(|w| w.text.as_str())
                .eq(argv.iter().map(String::as_str))
                && c.argv.iter().all(|w| w.known)
        });
    if found {
        return (a, AnalysisSource::Analyser);
    }
    let hand = Analysis {
        commands: vec![SimpleCommand {
            argv: argv
                .iter()
                .map(|t| Word {
                    text: t.clone(),
                    known: true,
                })
                .collect(),
            program: argv.first().cloned().unwrap_or_default(),
            assignments: vec![],
            redirects: vec![],
            via: vec![],
            pipeline: None,
            span: 0..line.len(),
        }],
        opaque: vec![],
    };
    (hand, AnalysisSource::HandBuilt)
}

/// Decides an exec of `analysis` (for the untimed checks and the outcome column).
pub fn verdict(set: &PolicySet, analysis: &Analysis, ctx: &Context) -> Verdict {
    set.decide(
        &Request {
            agent: None,
            action: Action::Exec(analysis),
        },
        ctx,
    )
    .verdict
}

/// The timed call: decide one pre-analysed exec.
#[inline]
pub fn decide(set: &PolicySet, analysis: &Analysis, ctx: &Context) -> Verdict {
    verdict(set, analysis, ctx)
}

/// The timed end-to-end call: analyse the string, then decide.
#[inline]
pub fn analyse_and_decide(set: &PolicySet, line: &str, ctx: &Context) -> Verdict {
    let analysis = warden_shell::analyse(line);
    verdict(set, &analysis, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::rules::{generate, warden_files};

    #[test]
    fn generated_files_parse() {
        for n in [10, 1_000, 10_000] {
            for (i, text) in warden_files(&generate(n)).iter().enumerate() {
                if let Err(d) = warden_policy::parse(&format!("bench{i}.policy"), text) {
                    panic!("{n} rules, file {i}: {d}");
                }
            }
        }
    }

    #[test]
    fn hand_built_analysis_is_one_known_command() {
        let argv = vec![String::from("git"), String::from("status")];
        let (a, _) = analysis_for(&argv);
        assert_eq!(a.commands.len(), 1);
        assert!(a.opaque.is_empty());
        assert_eq!(a.commands[0].program, "git");
        assert_eq!(a.commands[0].argv.len(), 2);
    }
}
