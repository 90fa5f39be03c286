//! `warden-bench decide-loop`: one of the `decide` rows' requests, decided in a plain loop, for
//! profilers. The machine's speed moves too much between runs to compare two versions of
//! `decide` by time; instruction counts do not move. Count them with:
//!
//! ```sh
//! valgrind --tool=callgrind --collect-atstart=no \
//!     --toggle-collect='warden_bench::policy::decide_loop::decide_once' \
//!     target/x86_64-unknown-linux-gnu/release/warden-bench decide-loop --rules 10000 --case hit-end --calls 20000
//! ```
//!
//! and divide the total by the number of calls (each call decides and drops the decision).

use std::hint::black_box;
use std::time::Instant;

use warden_policy::ast::Verdict;
use warden_policy::{Context, PolicySet};
use warden_shell::Analysis;

use super::{BenchError, commands, rules, warden_side};

/// What to loop over.
#[derive(Debug, Clone, clap::Args)]
pub struct LoopArgs {
    /// Rules in the generated set (the same generator as the `decide` rows).
    #[arg(long, default_value_t = 10_000)]
    pub rules: usize,
    /// `hit-end`, `miss` or `deny-end`.
    #[arg(long, default_value = "hit-end")]
    pub case: String,
    /// Decisions to make.
    #[arg(long, default_value_t = 1_000_000)]
    pub calls: u32,
}

/// One decision, made and dropped: the function a profiler counts.
#[inline(never)]
pub fn decide_once(set: &PolicySet, analysis: &Analysis, ctx: &Context) -> Verdict {
    warden_side::verdict(set, analysis, ctx)
}

/// Runs the loop; returns the line to print.
pub fn run(args: &LoopArgs) -> Result<String, BenchError> {
    let generated = rules::generate(args.rules);
    let layers = warden_side::layers(&rules::warden_files(&generated));
    let set = warden_side::try_compile(&layers).map_err(BenchError::Compile)?;
    let cases = commands::cases(&generated)?;
    let case = cases
        .iter()
        .find(|c| c.name == args.case)
        .ok_or(BenchError::Generator("no such case: hit-end, miss or deny-end"))?;
    let (analysis, _) = warden_side::analysis_for(&case.argv);
    let ctx = warden_side::context();
    let calls = args.calls.max(1);
    let start = Instant::now();
    let mut last = Verdict::Deny;
    for _ in 0..calls {
        last = decide_once(&set, black_box(&analysis), &ctx);
    }
    let per_call = start.elapsed() / calls;
    Ok(format!(
        "{} at {} rules (`{}`): {} ns per call over {calls} calls, verdict {}",
        case.name,
        args.rules,
        case.argv.join(" "),
        per_call.as_nanos(),
        last.as_str()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(case: &str) -> LoopArgs {
        LoopArgs { rules: 10, case: case.to_string(), calls: 3 }
    }

    #[test]
    fn each_case_decides_as_the_table_expects() {
        let hit = run(&args("hit-end")).unwrap();
        assert!(hit.ends_with("verdict allow"), "{hit}");
        for case in ["miss", "deny-end"] {
            let line = run(&args(case)).unwrap();
            assert!(line.ends_with("verdict deny"), "{line}");
        }
    }

    #[test]
    fn an_unknown_case_is_an_error() {
        assert!(run(&args("hit")).is_err());
    }
}
