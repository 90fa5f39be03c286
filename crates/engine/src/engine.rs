//! The engine proper: compiled layers plus the context requests are decided in.

use std::path::Path;

use serde::Serialize;
use warden_policy::{
    Action, Context, Decision, Diagnostics, LayerInfo, LayerSource, PolicySet, Request,
};
use warden_shell::Analysis;

/// Compiled policy layers and the context requests are decided in.
#[derive(Debug, Clone)]
pub struct Engine {
    policy: PolicySet,
    context: Context,
    /// Judge a command's files also where they lead through links on the host.
    follow_links: bool,
}

/// What is asked of the engine.
#[derive(Debug, Clone, Copy)]
pub enum Query<'a> {
    /// A command string, as an agent would run it with `sh -c`.
    Command(&'a str),
    /// A tool call with its optional path.
    Tool {
        /// The tool's name.
        name: &'a str,
        /// Its path argument.
        path: Option<&'a str>,
    },
}

/// Everything `warden explain` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// The decision (pinned field names: verdict, tier, reason, rules).
    pub decision: Decision,
    /// Always false: explaining runs nothing.
    pub ran: bool,
    /// The agent the request was decided for.
    pub agent: Option<String>,
    /// What the shell analyser found, for command strings.
    pub analysis: Option<Analysis>,
    /// The layers that were loaded, top first.
    pub layers: Vec<LayerInfo>,
    /// The workspace, home and working directory used.
    pub context: ContextView,
}

/// The context, for display.
#[derive(Debug, Clone, Serialize)]
pub struct ContextView {
    /// `${workspace}`.
    pub workspace: String,
    /// `~`.
    pub home: String,
    /// Where relative paths resolve.
    pub cwd: String,
}

impl Engine {
    /// Compiles `layers` (top first) for `context`.
    ///
    /// # Errors
    /// Every diagnostic of every file; nothing is decided under a policy with errors.
    pub fn new(layers: &[LayerSource], context: Context) -> Result<Self, Diagnostics> {
        Ok(Engine { policy: warden_policy::compile(layers)?, context, follow_links: false })
    }

    /// [`Engine::new`] for a one-shot load (`warden run`, `warden hook`): when a file under
    /// `cache_home` says that these exact layers compiled and passed their examples under this
    /// binary, the set compiled then is taken as it was (or, under an enterprise layer and not
    /// root, only the examples are not decided again); a load that compiles and passes leaves
    /// that file (`compiled.rs`).
    ///
    /// # Errors
    /// As [`Engine::new`].
    pub fn load(layers: &[LayerSource], context: Context, cache_home: &std::path::Path) -> Result<Self, Diagnostics> {
        use crate::compiled::{self, Known};
        let dir = compiled::folder(cache_home);
        let Some(key) = compiled::key(layers) else { return Engine::new(layers, context) };
        let (policy, write) = match compiled::known(&dir, &key, layers) {
            Known::Compiled(set) => return Ok(Engine { policy: *set, context, follow_links: false }),
            Known::Passed { rewrite } => (warden_policy::compile_with(layers, warden_policy::Examples::Passed)?, rewrite),
            Known::Nothing => (warden_policy::compile(layers)?, true),
        };
        if write {
            compiled::remember(&dir, &key, &policy);
        }
        Ok(Engine { policy, context, follow_links: false })
    }

    /// The same policy, judging every file a command names also where it leads through
    /// symbolic links on the host (`echo x > lk/hooks/pre-commit` with `lk -> .git`): for
    /// decisions nothing confines afterwards (a hook). A run in the sandbox needs none: the
    /// kernel resolves links inside the view, whose guard mounts hold.
    #[must_use]
    pub fn following_links(mut self) -> Self {
        self.follow_links = true;
        self
    }

    /// The same policy decided in another context.
    pub fn with_context(mut self, context: Context) -> Self {
        self.context = context;
        self
    }

    /// The compiled policy.
    pub fn policy(&self) -> &PolicySet {
        &self.policy
    }

    /// The context requests are decided in.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Decides `query` for `agent` started under `parents` (nearest first, each
    /// `AGENT[@SESSION]`, an empty AGENT being the top level): the most severe of their
    /// decisions, with the intersection of their grants. Runs nothing.
    pub fn explain_under(&self, agent: Option<&str>, parents: &[String], query: Query<'_>) -> Explanation {
        let mut x = self.explain(agent, query);
        if !parents.is_empty() {
            let decided: Vec<(String, Decision)> = parents
                .iter()
                .map(|p| {
                    let agent = p.split_once('@').map_or(p.as_str(), |(a, _)| a);
                    let name = if agent.is_empty() { "(top level)".to_string() } else { agent.to_string() };
                    (name, self.explain((!agent.is_empty()).then_some(agent), query).decision)
                })
                .collect();
            x.decision = crate::narrow::combine(x.decision, &decided);
        }
        x
    }

    /// Decides `query` for `agent` and says why. Runs nothing.
    pub fn explain(&self, agent: Option<&str>, query: Query<'_>) -> Explanation {
        let (decision, analysis) = match query {
            Query::Command(text) => {
                let analysis = warden_shell::analyse(text);
                let request = Request { agent, action: Action::Exec(&analysis) };
                let decision = if self.follow_links {
                    let bases = [Path::new(&self.context.workspace), Path::new(&self.context.home)];
                    let links = |p: &str| crate::leads::elsewhere(Path::new(p), &bases);
                    let mut d = self.policy.decide_through_links(&request, &self.context, &links);
                    // Nothing confines what follows either: git in a repository whose git folder
                    // escapes the guards' names runs what that folder's config names.
                    let cwd = Path::new(&self.context.workspace).join(&self.context.cwd);
                    if d.verdict != warden_policy::ast::Verdict::Deny
                        && let Some(why) = crate::gitrepo::unsafe_repository(&analysis, &cwd, Path::new(&self.context.home))
                    {
                        d.overrule(format!("{why}; a hook confines nothing, so git is not run there"));
                    }
                    d
                } else {
                    self.policy.decide(&request, &self.context)
                };
                (decision, Some(analysis))
            }
            Query::Tool { name, path } => {
                let request = Request { agent, action: Action::Tool { name, path } };
                let mut d = self.policy.decide(&request, &self.context);
                // Under a hook the agent's own tool writes the host: a repository made through
                // it (`x/HEAD` beside `x/config` setting `core.fsmonitor`, a `.git` file) would
                // run its config on the host's next git, and nothing reads it after.
                if self.follow_links
                    && matches!(name, "write_file" | "edit_file")
                    && d.verdict != warden_policy::ast::Verdict::Deny
                    && let Some(path) = path
                {
                    let at = Path::new(&self.context.workspace).join(&self.context.cwd).join(path);
                    if let Some(why) = crate::gitrepo::git_own(&crate::leads::lexical(&at)) {
                        d.overrule(format!("{why}; a hook confines nothing, so the agent's file tools do not write it"));
                    }
                }
                (d, None)
            }
        };
        Explanation {
            decision,
            ran: false,
            agent: agent.map(str::to_string),
            analysis,
            layers: self.policy.layers().to_vec(),
            context: ContextView {
                workspace: self.context.workspace.clone(),
                home: self.context.home.clone(),
                cwd: self.context.cwd.clone(),
            },
        }
    }
}
