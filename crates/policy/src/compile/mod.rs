//! Validation and compilation of layers into an immutable [`PolicySet`], and `decide`.
//!
//! Files: `sets` (parsed input, `paths` sets), `validate` (diagnostics), `build` (lowering),
//! `glob`, `paths`, `exec`, `argglob` (matchers), `model` (compiled form and indexes), `judge`
//! (one part across layers), `decide` (a request into parts), `grants` (the decision and its
//! grants), `examples` (checked per file).
//!
//! Semantics chosen where the reference is silent (fail closed):
//! - Exec rules are indexed by literal command word; `decide` never scans all rules.
//! - `fs write` implies read only as a grant: an ask/deny `fs write` restricts writes only; an
//!   ask or deny `fs read` covers every access.
//! - Argument paths are checked as reads against ask/deny rules and as possible writes against
//!   deny rules; globs and `$HOME`/`$PWD` words by overlap; other parameters make the part at
//!   least opaque when they could name a covered path. Relative paths follow `cd`.
//! - A tool other than the built-in read/write tools touching a path is a write of it.
//! - An assignment that changes what code runs (`LD_*`, `PATH`, `GIT_*`, pagers, ...) keeps
//!   allow rules from matching the command (it takes the opaque verdict).
//! - Grants come from the base layer's tier only (a lower layer never grants); every layer's
//!   deny rules and the agent narrow them; a denied request is granted nothing.
//! - `deny net hosts ...` against a grant of `net any` leaves no network (it cannot be carved).

mod argglob;
mod attached;
mod shglob;
mod build;
mod decide;
mod examples;
mod exec;
mod glob;
mod grants;
mod implied;
mod into;
mod judge;
mod model;
mod operands;
mod paths;
mod recursive;
mod refs;
mod sets;
mod stored;
mod validate;

pub use decide::Links;
pub use paths::{GrantGlob, grant_matches};

use crate::ast::Verdict;
use crate::decision::{Context, Decision, LayerKind, LayerSource, Request, RuleRef};
use crate::error::{Code, Diagnostic, Diagnostics};
use model::{AgentProfile, LayerC};
use sets::{FileAst, LayerAst};
use std::collections::HashMap;

/// What was loaded for one layer, for `explain`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LayerInfo {
    /// The layer.
    pub kind: LayerKind,
    /// Its files' display names.
    pub files: Vec<String>,
}

/// Compiled, immutable layers. Cheap to share between threads (`Send + Sync`, no interior
/// mutability).
#[derive(Debug, Clone)]
pub struct PolicySet {
    infos: Vec<LayerInfo>,
    rules: refs::Refs,
    /// What a part decided by one rule alone states (tier, reason, the rule), by rule id.
    why: Vec<std::sync::OnceLock<std::sync::Arc<crate::decision::RuleWhy>>>,
    layers: Vec<LayerC>,
    agents: HashMap<String, AgentProfile>,
    /// The policy-wide opaque verdict (the most severe any layer sets; ask when unset, and for
    /// a lower layer that sets `default` without `opaque`).
    opaque: Verdict,
    /// Grants per base tier, unexpanded.
    plans: grants::Plans,
    /// Grants expanded per context (workspace, home), shared by clones.
    cache: std::sync::Arc<grants::Cache>,
}

/// Parses, validates and compiles layers (top first), then checks every file's examples.
///
/// Each file is parsed with [`crate::parse`]. Files of one layer merge into one layer; the first
/// layer is the base (its `default` answers what no rule matches).
///
/// # Errors
/// Every diagnostic of every file, sorted by file then position; nothing compiles if any file
/// has an error. An empty `layers` slice is an error (`warden::source`).
pub fn compile(layers: &[LayerSource]) -> Result<PolicySet, Diagnostics> {
    compile_with(layers, Examples::Check)
}

/// What [`compile_with`] does with the files' `example` statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Examples {
    /// Each is decided, and one that does not hold is an error ([`compile`]).
    Check,
    /// Not decided: the caller knows these exact layers passed [`Examples::Check`] under this
    /// build (`warden_engine`'s record of policies known to pass). Everything else is checked.
    Passed,
}

/// [`compile`], with the examples checked or not (`examples`).
///
/// # Errors
/// As [`compile`], without the examples' errors under [`Examples::Passed`].
pub fn compile_with(layers: &[LayerSource], examples: Examples) -> Result<PolicySet, Diagnostics> {
    if layers.is_empty() || layers.iter().all(|l| l.files.is_empty()) {
        return Err(Diagnostics(vec![
            Diagnostic::new(Code::Source, "-", "", 0..0, "no policy layer to compile")
                .with_help("pass at least one policy file"),
        ]));
    }
    let mut found: Vec<validate::Found> = Vec::new();
    let mut parsed: Vec<LayerAst> = Vec::new();
    let mut order = 0usize;
    let mut parse_failed = false;
    let mut clean = parse_side_by_side(layers).into_iter();
    for layer in layers {
        let mut files = Vec::new();
        for f in &layer.files {
            let result = match clean.next().flatten() {
                Some(policy) => Ok(policy),
                None => crate::parse(&f.name, &f.text),
            };
            match result {
                Ok(policy) => files.push(FileAst {
                    name: f.name.clone(),
                    text: f.text.clone(),
                    policy,
                    order,
                    starts: sets::line_starts(&f.text),
                }),
                Err(Diagnostics(ds)) => {
                    parse_failed = true;
                    found.extend(ds.into_iter().map(|d| (order, d)));
                }
            }
            order += 1;
        }
        parsed.push(LayerAst { kind: layer.kind, files });
    }
    compile_parsed(parsed, found, parse_failed, examples)
}

/// Below this much policy text, parsing on threads costs more than it saves.
const PARALLEL_BYTES: usize = 128 * 1024;

/// For large multi-file inputs: every file parsed on one of a few threads, in file order, each
/// `Some` when it parsed without error ([`crate::parser::parse_clean`]). Empty (parse each file
/// in turn) for small inputs. A `None` is parsed again by [`crate::parse`] for its diagnostics,
/// so what is reported never depends on the threads.
fn parse_side_by_side(layers: &[LayerSource]) -> Vec<Option<crate::ast::Policy>> {
    let files: Vec<&crate::decision::SourceFile> = layers.iter().flat_map(|l| &l.files).collect();
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    // Checked first: asking for the parallelism reads cgroup files (about half a millisecond).
    if bytes < PARALLEL_BYTES || files.len() < 2 {
        return Vec::new();
    }
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(files.len()).min(8);
    if threads < 2 {
        return Vec::new();
    }
    let chunk = files.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                std::thread::Builder::new()
                    .name("warden-policy-parse".into())
                    .stack_size(8 << 20)
                    .spawn_scoped(scope, move || part.iter().map(|f| crate::parser::parse_clean(&f.name, &f.text)).collect::<Vec<_>>())
            })
            .collect();
        let mut out = Vec::with_capacity(files.len());
        for (handle, part) in handles.into_iter().zip(files.chunks(chunk)) {
            // A thread that could not start or that panicked: those files are parsed in turn.
            let got = handle.ok().and_then(|h| h.join().ok()).unwrap_or_else(|| vec![None; part.len()]);
            out.extend(got);
        }
        out
    })
}

/// Validates, compiles and (under [`Examples::Check`]) checks the examples of parsed layers.
pub(crate) fn compile_parsed(
    parsed: Vec<LayerAst>,
    mut found: Vec<validate::Found>,
    parse_failed: bool,
    checked: Examples,
) -> Result<PolicySet, Diagnostics> {
    // The examples' commands are parsed on the analyser's thread while this one validates
    // and compiles.
    let analysing = (checked == Examples::Check).then(|| examples::begin(&parsed));
    let mut invalid = validate::validate(&parsed);
    if parse_failed {
        // Names defined in a file that did not parse are missing: do not report them as unknown.
        invalid.retain(|(_, d)| {
            !matches!(d.code, Code::UnknownTier | Code::UnknownAgent | Code::UnknownPathSet)
        });
    }
    let bad_files: Vec<usize> = invalid.iter().map(|(o, _)| *o).collect();
    found.extend(invalid);
    // One file alone is the whole set: its examples are checked against the set itself
    // instead of a second compile of the same file.
    let single = parsed.len() == 1 && parsed.iter().all(|l| l.files.len() == 1);
    let whole = (single && found.is_empty()).then(|| assemble(&parsed));
    if let Some(analysing) = analysing {
        found.extend(examples::check(&parsed, &bad_files, whole.as_ref(), analysing));
    }
    if !found.is_empty() {
        found.sort_by_key(|(o, d)| (*o, d.span.start, d.span.end));
        return Err(Diagnostics(found.into_iter().map(|(_, d)| d).collect()));
    }
    Ok(whole.unwrap_or_else(|| assemble(&parsed)))
}

/// Builds the set from validated layers (no examples checked).
pub(crate) fn assemble(parsed: &[LayerAst]) -> PolicySet {
    let built = build::build(parsed);
    let infos = parsed
        .iter()
        .map(|l| LayerInfo { kind: l.kind, files: l.files.iter().map(|f| f.name.clone()).collect() })
        .collect();
    let base_opaque = built.layers.first().and_then(|l| l.opaque).unwrap_or(Verdict::Ask);
    // A lower layer that sets its `default` but not `opaque` has ask for it, as a policy of its
    // own would: `default deny` there does not leave what cannot be analysed to the layers above.
    let lower = |l: &model::LayerC| l.opaque.or(l.default.map(|_| Verdict::Ask));
    let opaque = built.layers.iter().skip(1).filter_map(lower).fold(base_opaque, Verdict::max);
    let plans = grants::Plans::new(&built.layers);
    PolicySet {
        infos,
        why: std::iter::repeat_with(std::sync::OnceLock::new).take(built.rules.len()).collect(),
        rules: built.rules,
        layers: built.layers,
        agents: built.agents,
        opaque,
        plans,
        cache: std::sync::Arc::default(),
    }
}

impl PolicySet {
    /// Decides one request. Never panics; what cannot be decided is denied with the reason.
    ///
    /// A request naming an agent no layer defines is denied.
    pub fn decide(&self, request: &Request<'_>, ctx: &Context) -> Decision {
        decide::decide(self, request, ctx, true, None)
    }

    /// [`PolicySet::decide`], judging every file a command names (redirects, arguments, the
    /// folders it writes into) also where it leads: `links` maps an absolute path to where it
    /// leads through symbolic links on the host, when that is elsewhere. For a decision that
    /// nothing confines afterwards (a hook): `echo x > lk/hooks/pre-commit` with `lk -> .git`
    /// writes `.git/hooks/pre-commit`.
    pub fn decide_through_links(&self, request: &Request<'_>, ctx: &Context, links: Links<'_>) -> Decision {
        decide::decide(self, request, ctx, true, Some(links))
    }

    /// [`PolicySet::decide`] without the grants (left empty): for the `example` checks, which
    /// need the verdict and its rules only. Expanding grants for the examples' context would
    /// also take the slot the grant cache keeps for the first context without a lock.
    pub(crate) fn decide_without_grants(&self, request: &Request<'_>, ctx: &Context) -> Decision {
        decide::decide(self, request, ctx, false, None)
    }

    /// Every rule of every layer, indexed by [`RuleRef::id`]. Each reference is written the
    /// first time it is asked for (here, or by a decision the rule takes part in).
    pub fn rules(&self) -> Vec<&RuleRef> {
        (0..self.rules.len()).filter_map(|id| self.rules.get(id)).collect()
    }

    /// The layers, top first.
    pub fn layers(&self) -> &[LayerInfo] {
        &self.infos
    }

    /// The names of every agent any layer defines, sorted.
    pub fn agents(&self) -> Vec<String> {
        let mut v: Vec<String> = self.agents.keys().cloned().collect();
        v.sort();
        v
    }

    /// The verdict for parts the analyser cannot know, for requests without an agent: the most
    /// severe `opaque` any layer sets, ask when none does.
    pub fn opaque_verdict(&self) -> Verdict {
        self.opaque
    }

    /// The base layer's `default` (deny when unset): the verdict when no rule matches.
    pub fn default_verdict(&self) -> Verdict {
        self.base_default()
    }

    /// The tiers of every layer, top layer first, in declaration order, with their verdicts.
    pub fn tiers(&self) -> Vec<(LayerKind, String, Verdict)> {
        self.layers
            .iter()
            .flat_map(|l| l.tiers.iter().map(move |t| (l.kind, t.name.to_string(), t.verdict)))
            .collect()
    }

    pub(crate) fn base_default(&self) -> Verdict {
        self.layers.first().and_then(|l| l.default).unwrap_or(Verdict::Deny)
    }
}

#[cfg(test)]
mod side_by_side_tests {
    use super::*;
    use crate::decision::SourceFile;

    fn big_file(i: usize, broken: bool) -> SourceFile {
        let mut text = String::from(if i == 0 { "version 1\ndefault deny\n" } else { "version 1\n" });
        text.push_str(&format!("tier t{i}: allow {{\n"));
        for r in 0..2_500 {
            text.push_str(&format!("    exec prog{i}x{r} (sub{r} | other)\n"));
        }
        if broken {
            text.push_str("    exec \"unterminated\n");
        }
        text.push_str("}\n");
        SourceFile { name: format!("f{i}.policy"), text }
    }

    /// Files parsed on threads give the same trees as one by one; a broken file comes back
    /// `None`, and the compile reports exactly what parsing it alone reports.
    #[test]
    fn threads_parse_what_a_single_parse_parses() {
        let files: Vec<SourceFile> = (0..4).map(|i| big_file(i, i == 2)).collect();
        assert!(files.iter().map(|f| f.text.len()).sum::<usize>() >= PARALLEL_BYTES);
        let layers = vec![LayerSource { kind: crate::LayerKind::Cli, files: files.clone() }];
        let got = parse_side_by_side(&layers);
        if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
            assert!(got.is_empty());
            return;
        }
        assert_eq!(got.len(), 4);
        for (f, g) in files.iter().zip(&got) {
            assert_eq!(g.as_ref(), crate::parse(&f.name, &f.text).ok().as_ref(), "{}", f.name);
        }
        assert!(got.get(2).is_some_and(Option::is_none));
        let Err(all) = compile(&layers) else { panic!("a broken file compiled") };
        let Err(alone) = crate::parse(&files[2].name, &files[2].text) else { panic!("the broken file parsed") };
        assert_eq!(all.0.iter().map(|d| (d.code, d.span.clone(), d.message.clone())).collect::<Vec<_>>(),
            alone.0.iter().map(|d| (d.code, d.span.clone(), d.message.clone())).collect::<Vec<_>>());
    }
}
