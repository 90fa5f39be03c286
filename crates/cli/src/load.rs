//! The options every deciding verb shares, and turning them into an [`Engine`].

use crate::output::{CliError, policy_error};
use std::path::{Component, Path, PathBuf};
use warden_engine::{Engine, Environment};
use warden_policy::{Context, LayerSource};

/// `--policy`, `--workspace`, `--cwd`.
#[derive(Debug, Clone, clap::Args)]
pub struct PolicyArgs {
    /// A policy file; repeat to stack layers, top first. Without it, warden discovers the
    /// layers (/etc/warden, the user's config, the project's .warden/) over the embedded default.
    #[arg(long = "policy", value_name = "FILE")]
    pub policies: Vec<PathBuf>,
    /// The workspace (`${workspace}`); default: the repository root, else the working directory.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The working directory relative paths resolve against; default: the current one.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

/// `--agent`, `--parent`, `--audit-log`: who a session decides for and where it records.
#[derive(Debug, Clone, clap::Args)]
pub struct SessionArgs {
    /// The agent identity to decide for.
    #[arg(long)]
    pub agent: Option<String>,
    /// An agent above this one, `AGENT[@SESSION]` (repeat, nearest first; `@SESSION` alone is
    /// the top level): nothing gets more than each of them would, and the records name them.
    #[arg(long = "parent", value_name = "AGENT[@SESSION]", requires = "agent")]
    pub parents: Vec<String>,
    /// The audit log every decision, approval and outcome is appended to (default:
    /// /var/log/warden/audit.jsonl as root, else $XDG_STATE_HOME/warden/audit.jsonl). Nothing
    /// runs when it cannot be written.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
}

impl SessionArgs {
    /// The session's configuration, the log defaulting by `env`.
    pub fn config(&self, env: &Environment) -> warden_engine::SessionConfig {
        warden_engine::SessionConfig {
            agent: self.agent.clone(),
            parents: self.parents.clone(),
            audit: Some(self.audit_log.clone().unwrap_or_else(|| env.default_audit_log())),
            ..warden_engine::SessionConfig::default()
        }
    }
}

/// Reads the layers the options name (or discovers them).
pub fn layers(args: &PolicyArgs, env: &Environment) -> Result<Vec<LayerSource>, CliError> {
    let layers = if !args.policies.is_empty() {
        warden_engine::load_files(&args.policies)?
    } else if let Some(workspace) = &args.workspace {
        // The workspace is the project: its layers, whatever the working directory.
        warden_engine::discover_for(env, &real(&env.cwd, workspace))?
    } else {
        warden_engine::discover(env)?
    };
    Ok(layers)
}

/// The decision context from the options and the environment.
pub fn context(args: &PolicyArgs, env: &Environment) -> Result<Context, CliError> {
    let mut cwd = real(&env.cwd, args.cwd.as_deref().unwrap_or(&env.cwd));
    let workspace = match &args.workspace {
        Some(dir) => real(&env.cwd, dir),
        None => warden_engine::repository_root(&cwd).unwrap_or_else(|| cwd.clone()),
    };
    // A workspace given elsewhere than here: commands start in it, not in a folder the
    // sandbox does not show.
    if args.cwd.is_none() && !cwd.starts_with(&workspace) {
        cwd = workspace.clone();
    }
    Ok(Context {
        workspace: utf8(&workspace, "workspace")?,
        home: utf8(&env.home, "home directory")?,
        cwd: utf8(&cwd, "working directory")?,
    })
}

/// Loads and compiles everything for a deciding verb.
pub fn engine(args: &PolicyArgs) -> Result<Engine, CliError> {
    let env = environment()?;
    let layers = layers(args, &env)?;
    let context = context(args, &env)?;
    Engine::new(&layers, context).map_err(|d| policy_error(&d))
}

/// The process environment, read once.
pub fn environment() -> Result<Environment, CliError> {
    Environment::from_process().map_err(|source| CliError::Io {
        action: "determine",
        path: String::from("the working directory"),
        source,
    })
}

/// `path` against `base` as the kernel resolves it (links followed: the sandbox binds what the
/// path leads to, and a working folder is compared with the workspace by their real paths);
/// a path that does not exist (a context `explain` is asked about) lexically, by [`absolute`].
fn real(base: &Path, path: &Path) -> PathBuf {
    std::fs::canonicalize(base.join(path)).unwrap_or_else(|_| absolute(base, path))
}

/// Refuses to run in a workspace or working folder that is not an existing folder, before
/// anything is decided or recorded.
pub fn existing_folders(context: &Context) -> Result<(), CliError> {
    for (what, dir) in [("workspace", &context.workspace), ("working directory", &context.cwd)] {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(CliError::Usage { message: format!("the {what} `{dir}` is not a folder") }),
            Err(e) => return Err(CliError::Usage { message: format!("the {what} `{dir}` cannot be used: {e}") }),
        }
    }
    Ok(())
}

/// `path` made absolute against `base` and normalised lexically (no file system access).
pub fn absolute(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

fn utf8(path: &Path, what: &str) -> Result<String, CliError> {
    path.to_str().map(str::to_string).ok_or_else(|| CliError::Usage {
        message: format!("the {what} `{}` is not valid UTF-8", path.display()),
    })
}
