//! `warden-bench policy`: warden's policy engine beside Cedar, on equivalent rule sets.
//!
//! Rows, all measured in one run:
//! - `decide`: one decision on a pre-analysed exec request (warden `PolicySet::decide`; Cedar
//!   `Authorizer::is_authorized` on a pre-built request and entity), for 10, 1,000 and 10,000
//!   rules and three requests (a hit near the end of the list, a miss, a deny).
//! - `analyse+decide`: the same requests from the command string (warden only: Cedar has no
//!   shell analyser).
//! - `compile`: warden `compile` of the generated files vs Cedar `PolicySet::from_str` plus
//!   strict validation against a schema.
//! - `load`: a shipped policy parsed, compiled with its examples checked, and then one command
//!   decided: what a one-shot `warden` process pays before it runs anything (no peer).
//! - `analyse`: `warden_shell::analyse` on typical agent command strings (no peer).
//!
//! Before any timing, every request is decided once on both engines and the run stops if they
//! disagree on let-through (warden allow/ask, Cedar permit) vs refused.

mod cedar_side;
mod commands;
pub mod decide_loop;
mod load;
mod rules;
mod warden_side;

use std::hint::black_box;
use std::time::Duration;

use cedar_policy::{Authorizer, Validator};
use warden_policy::PolicySet;
use warden_policy::ast::Verdict as WVerdict;

use crate::Options;
use crate::stats::{Cell, Report, Row, Summary, measure};
use commands::Case;
use warden_side::AnalysisSource;

/// Rule-set sizes measured.
pub const SIZES: [usize; 3] = [10, 1_000, 10_000];

/// Why the policy bench could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Cedar refused the generated input (a generator bug).
    #[error("cedar: {0}")]
    Cedar(String),
    /// The generator did not produce a rule a request needs.
    #[error("generator: {0}")]
    Generator(&'static str),
    /// The engines (or one engine and the expectation) disagree on a request.
    #[error(
        "`{case}` with {rules} rules (`{command}`): expected {expected}, warden {warden}, cedar {cedar}"
    )]
    Mismatch {
        /// The request's name.
        case: &'static str,
        /// The rule-set size.
        rules: usize,
        /// The command string.
        command: String,
        /// `permit` or `refuse`.
        expected: &'static str,
        /// warden's verdict (or `not compiled`).
        warden: String,
        /// Cedar's decision.
        cedar: &'static str,
    },
    /// warden refused the generated rules (a generator bug).
    #[error("warden: {0}")]
    Compile(String),
}

/// Time budgets per measurement.
struct Budgets {
    call: Duration,
    compile: Duration,
}

/// What every size shares: engines' fixed parts and budgets.
struct Env {
    validator: Validator,
    schema: cedar_policy::Schema,
    authorizer: Authorizer,
    ctx: warden_policy::Context,
    budgets: Budgets,
}

/// Rows and notes collected over the sizes.
#[derive(Default)]
struct Collected {
    decide: Vec<Row>,
    end_to_end: Vec<Row>,
    compile: Vec<Row>,
    hand_built: bool,
    e2e_differs: Vec<String>,
    compile_errors: Vec<String>,
}

/// Runs every row and returns the report.
///
/// # Errors
/// Cedar setup failures, and any disagreement between the engines on a request.
pub fn run(opts: &Options) -> Result<Report, BenchError> {
    let budgets = if opts.quick {
        Budgets {
            call: Duration::from_millis(20),
            compile: Duration::from_millis(50),
        }
    } else {
        Budgets {
            call: Duration::from_millis(300),
            compile: Duration::from_millis(1_500),
        }
    };
    let (validator, schema) = cedar_side::validator()?;
    let env = Env {
        validator,
        schema,
        authorizer: Authorizer::new(),
        ctx: warden_side::context(),
        budgets,
    };
    let mut got = Collected::default();
    for n in SIZES {
        one_size(n, &env, &mut got)?;
    }

    let mut notes = header_notes(opts);
    if got.hand_built {
        notes.push(String::from(
            "NOTE: `decide` rows use a hand-built one-command analysis: warden_shell::analyse did \
             not return the expected single command (analyser not built yet?)",
        ));
    }
    if !got.e2e_differs.is_empty() {
        notes.push(format!(
            "NOTE: analyse+decide decided otherwise than decide on the pre-analysed request: {}",
            got.e2e_differs.join(", ")
        ));
    }
    for e in &got.compile_errors {
        notes.push(format!("NOTE: warden compile failed, {e}"));
    }
    if !notes.last().is_some_and(String::is_empty) {
        notes.push(String::new());
    }
    let mut rows = got.decide;
    rows.extend(got.end_to_end);
    rows.extend(got.compile);
    rows.extend(load::rows(&env.budgets, &env.ctx));
    rows.extend(analyse_rows(&env.budgets));
    Ok(Report {
        bench: "policy",
        ours: "warden",
        peer: "cedar",
        notes,
        rows,
    })
}

/// Generates `n` rules, checks the engines agree on every request, then measures.
fn one_size(n: usize, env: &Env, got: &mut Collected) -> Result<(), BenchError> {
    let generated = rules::generate(n);
    let files = rules::warden_files(&generated);
    let cedar_text = rules::cedar_text(&generated);
    let cedar_set = cedar_side::policy_set(&cedar_text, &env.validator)?;
    let layers = warden_side::layers(&files);
    let warden = warden_side::try_compile(&layers);
    if let Err(e) = &warden {
        got.compile_errors.push(format!("{n} rules: {e}"));
    }
    for case in commands::cases(&generated)? {
        let request = cedar_side::exec_request(&case.argv, &env.schema)?;
        let cedar_permits = cedar_side::checked_decide(&env.authorizer, &cedar_set, &request)?;
        let (analysis, source) = warden_side::analysis_for(&case.argv);
        got.hand_built |= source == AnalysisSource::HandBuilt;
        let warden_verdict = warden
            .as_ref()
            .ok()
            .map(|set| warden_side::verdict(set, &analysis, &env.ctx));
        check(&case, n, warden_verdict, cedar_permits)?;

        let ours = match &warden {
            Ok(set) => measured(
                measure(env.budgets.call, || {
                    warden_side::decide(set, black_box(&analysis), &env.ctx)
                }),
                warden_verdict.map(WVerdict::as_str),
            ),
            Err(_) => Cell::Missing(String::from("no compile")),
        };
        let peer = measured(
            measure(env.budgets.call, || {
                env.authorizer
                    .is_authorized(black_box(&request.request), &cedar_set, &request.entities)
                    .decision()
            }),
            Some(if cedar_permits { "allow" } else { "deny" }),
        );
        got.decide
            .push(row("decide", case.name, Some(n), ours, peer));
        got.end_to_end
            .push(end_to_end(&warden, &case, n, &env.ctx, &env.budgets));
    }
    got.compile.push(compile_row(
        &layers,
        &cedar_text,
        &env.validator,
        n,
        &env.budgets,
    ));
    got.compile
        .push(cedar_parse_row(&cedar_text, n, &env.budgets));
    Ok(())
}

fn header_notes(opts: &Options) -> Vec<String> {
    // Other work on the machine inflates wall-clock samples; say how busy it was.
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| String::from("unknown"));
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let build = if cfg!(debug_assertions) {
        "DEBUG build (numbers meaningless)"
    } else {
        "release"
    };
    let notes = vec![
        format!(
            "warden-bench policy: {build}, cedar-policy {}, {cpus} cpus, load {load} at start, \
             rule sets from one generator (seed {:#x}){}",
            env!("CEDAR_VERSION"),
            rules::SEED,
            if opts.quick { ", --quick budgets" } else { "" },
        ),
        format!(
            "latency per call; rows with batch > 1 time batches of that many calls and report \
             p50/p99 of the batch means (calls under {} µs; reading the clock costs {} ns here)",
            crate::stats::BATCH_BELOW.as_micros(),
            crate::stats::timer_cost().as_nanos(),
        ),
        String::from(
            "ratio = warden p50 / cedar p50 (below 1: warden faster); outcome = warden/cedar; \
             cedar maps deny -> forbid and allow, ask -> permit (in cedar's favour)",
        ),
        String::from(
            "decide: pre-analysed request (cedar: pre-built request + entity); compile: warden \
             compile vs cedar PolicySet::from_str + strict validation",
        ),
    ];
    notes
}

fn measured(summary: Summary, outcome: Option<&str>) -> Cell {
    Cell::Measured {
        summary,
        outcome: outcome.map(String::from),
    }
}

fn row(group: &str, case: &str, rules: Option<usize>, ours: Cell, peer: Cell) -> Row {
    Row {
        group: group.to_string(),
        case: case.to_string(),
        rules,
        ours,
        peer,
        impls: None,
    }
}

/// The untimed honesty check: both engines, and the expectation, agree on let-through.
fn check(
    case: &Case,
    n: usize,
    warden: Option<WVerdict>,
    cedar_permits: bool,
) -> Result<(), BenchError> {
    let warden_permits = warden.map(|v| v != WVerdict::Deny);
    let agree =
        cedar_permits == case.permitted && warden_permits.is_none_or(|w| w == case.permitted);
    if agree {
        return Ok(());
    }
    Err(BenchError::Mismatch {
        case: case.name,
        rules: n,
        command: case.argv.join(" "),
        expected: if case.permitted { "permit" } else { "refuse" },
        warden: warden.map_or_else(|| String::from("not compiled"), |v| v.as_str().to_string()),
        cedar: if cedar_permits { "permit" } else { "refuse" },
    })
}

fn end_to_end(
    warden: &Result<PolicySet, String>,
    case: &Case,
    n: usize,
    ctx: &warden_policy::Context,
    budgets: &Budgets,
) -> Row {
    let line = case.argv.join(" ");
    let ours = match warden {
        Ok(set) => {
            let outcome = warden_side::analyse_and_decide(set, &line, ctx).as_str();
            measured(
                measure(budgets.call, || {
                    warden_side::analyse_and_decide(set, black_box(&line), ctx)
                }),
                Some(outcome),
            )
        }
        Err(_) => Cell::Missing(String::from("no compile")),
    };
    row("analyse+decide", case.name, Some(n), ours, Cell::None)
}

fn compile_row(
    layers: &[warden_policy::LayerSource],
    cedar_text: &str,
    validator: &Validator,
    n: usize,
    budgets: &Budgets,
) -> Row {
    let ours = match warden_side::try_compile(layers) {
        Ok(_) => measured(
            measure(budgets.compile, || {
                warden_policy::compile(black_box(layers)).is_ok()
            }),
            None,
        ),
        Err(_) => Cell::Missing(String::from("compile error")),
    };
    let peer = measured(
        measure(budgets.compile, || {
            cedar_side::parse_and_validate(black_box(cedar_text), validator).unwrap_or(false)
        }),
        None,
    );
    row("compile", "parse+validate+compile", Some(n), ours, peer)
}

/// Cedar's parse alone, to show what its validation costs.
fn cedar_parse_row(cedar_text: &str, n: usize, budgets: &Budgets) -> Row {
    let peer = measured(
        measure(budgets.compile, || {
            <cedar_policy::PolicySet as std::str::FromStr>::from_str(black_box(cedar_text)).is_ok()
        }),
        None,
    );
    row("compile", "cedar parse only", Some(n), Cell::None, peer)
}

/// Stack size `warden_shell::analyse` gives its parsing thread (a private constant there).
const ANALYSER_STACK: usize = 256 * 1024 * 1024;

fn analyse_rows(budgets: &Budgets) -> Vec<Row> {
    // What `analyse` no longer pays per call: a fresh thread with a large stack (it reuses
    // long-lived workers).
    let floor = measure(budgets.call, || {
        std::thread::Builder::new()
            .stack_size(ANALYSER_STACK)
            .spawn(|| black_box(1u8))
            .map(std::thread::JoinHandle::join)
            .is_ok()
    });
    let floor_row = row(
        "analyse",
        "(thread spawn, 256 MiB stack: avoided)",
        None,
        measured(floor, None),
        Cell::None,
    );
    let mut rows = vec![floor_row];
    rows.extend(commands::TYPICAL.iter().map(|cmd| {
        let a = warden_shell::analyse(cmd);
        let outcome = format!(
            "{} cmd{}",
            a.commands.len(),
            if a.opaque.is_empty() {
                String::new()
            } else {
                format!(" +{} opaque", a.opaque.len())
            }
        );
        let summary = measure(budgets.call, || warden_shell::analyse(black_box(cmd)));
        row(
            "analyse",
            &commands::label(cmd, 40),
            None,
            measured(summary, Some(&outcome)),
            Cell::None,
        )
    }));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The untimed honesty check, as a test: both engines agree on every request.
    #[test]
    fn engines_agree_on_every_request() {
        let (validator, schema) = cedar_side::validator().unwrap();
        let authorizer = Authorizer::new();
        let ctx = warden_side::context();
        for n in [10, 1_000] {
            let generated = rules::generate(n);
            let cedar_set =
                cedar_side::policy_set(&rules::cedar_text(&generated), &validator).unwrap();
            let layers = warden_side::layers(&rules::warden_files(&generated));
            let set = warden_side::try_compile(&layers).unwrap();
            for case in commands::cases(&generated).unwrap() {
                let request = cedar_side::exec_request(&case.argv, &schema).unwrap();
                let cedar = cedar_side::checked_decide(&authorizer, &cedar_set, &request).unwrap();
                let (analysis, source) = warden_side::analysis_for(&case.argv);
                assert_eq!(source, AnalysisSource::Analyser, "{:?}", case.argv);
                let warden = warden_side::verdict(&set, &analysis, &ctx);
                check(&case, n, Some(warden), cedar).unwrap();
                let line = case.argv.join(" ");
                assert_eq!(warden_side::analyse_and_decide(&set, &line, &ctx), warden);
            }
        }
    }

    /// Wider than the three timed requests: for every exec rule of a 200-rule set, requests that
    /// hit it at the front, hit it further back, and trip its `unless`, decided by both.
    #[test]
    fn engines_agree_on_requests_around_every_exec_rule() {
        let (validator, schema) = cedar_side::validator().unwrap();
        let authorizer = Authorizer::new();
        let ctx = warden_side::context();
        let generated = rules::generate(200);
        let cedar_set = cedar_side::policy_set(&rules::cedar_text(&generated), &validator).unwrap();
        let set = warden_side::try_compile(&warden_side::layers(&rules::warden_files(&generated)))
            .unwrap();
        let mut checked = 0;
        for rule in &generated {
            let rules::Kind::Exec {
                program,
                subs,
                unless,
            } = &rule.kind
            else {
                continue;
            };
            let sub = subs.first().copied().unwrap_or("run");
            let flag = unless.first().copied().unwrap_or("--all");
            for tail in [
                vec![sub, "--verbose"],
                vec!["-q", sub],
                vec![sub, flag],
                vec![],
            ] {
                let mut argv = vec![program.clone()];
                argv.extend(tail.iter().map(|t| (*t).to_string()));
                let request = cedar_side::exec_request(&argv, &schema).unwrap();
                let cedar = cedar_side::checked_decide(&authorizer, &cedar_set, &request).unwrap();
                let (analysis, _) = warden_side::analysis_for(&argv);
                let warden = warden_side::verdict(&set, &analysis, &ctx);
                assert_eq!(
                    warden != WVerdict::Deny,
                    cedar,
                    "{argv:?}: warden {warden:?}"
                );
                checked += 1;
            }
        }
        assert!(checked > 400, "{checked}");
    }

    #[test]
    fn check_refuses_a_disagreement() {
        let case = Case {
            name: "hit-end",
            argv: vec!["x".into()],
            permitted: true,
        };
        assert!(check(&case, 10, Some(WVerdict::Ask), true).is_ok());
        assert!(check(&case, 10, Some(WVerdict::Deny), true).is_err());
        assert!(check(&case, 10, Some(WVerdict::Allow), false).is_err());
        assert!(check(&case, 10, None, true).is_ok());
    }
}
