//! Running a decided argv in the WASI sandbox: the grants' folders as preopens at their own
//! paths (read-only or read-write as granted), nothing else visible, no network.
//!
//! What a preopen cannot do is hide one file inside a folder it hands over, so a denied path
//! that exists inside a granted folder refuses the run (fail closed) rather than expose it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use warden_feedback::Run;
use warden_policy::{Backend, Grants, Network};
use warden_wasi::{Preopen, Runner, Spec};

use crate::confine::{self, Shape};
use crate::{Environment, RunError};

/// One runner per process: its engine, module cache and pool are shared by every call.
fn runner(env: &Environment) -> Result<&'static Runner, RunError> {
    static RUNNER: OnceLock<Result<Runner, String>> = OnceLock::new();
    RUNNER
        .get_or_init(|| {
            let cache = env.cache_home.join("warden").join("wasi");
            std::fs::create_dir_all(&cache).map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
            Runner::new(&cache).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| RunError::Unenforceable(format!("the WASI runtime cannot start: {e}")))
}

/// The image the grants (or the caller) name; `toolbox` by default.
fn image_name(grants: &Grants) -> &str {
    match &grants.sandbox {
        Backend::Wasi { image: Some(name) } => name,
        _ => "toolbox",
    }
}

/// Runs `argv` (a tool of the image and its arguments) under `grants`.
pub(crate) fn run(grants: &Grants, workspace: &Path, cwd: &Path, env: &Environment, argv: &[String], opts: &crate::RunOptions) -> Result<Run, RunError> {
    if grants.network != Network::None {
        return Err(RunError::Unenforceable("the WASI backend has no network; the policy grants one".into()));
    }
    let image = warden_wasi::image(image_name(grants)).map_err(|e| RunError::Unenforceable(e.to_string()))?;
    let tool = argv.first().map(String::as_str).unwrap_or_default();
    if !image.manifest().tools.iter().any(|t| t == tool) {
        return Err(RunError::Unenforceable(format!(
            "`{tool}` is not a tool of the `{}` image (it has: {})",
            image.name(),
            image.manifest().tools.join(", ")
        )));
    }
    let mut preopens: Vec<Preopen> = Vec::new();
    for (patterns, writable) in [(&grants.read, false), (&grants.write, true)] {
        for pattern in patterns {
            let dir: PathBuf = match confine::shape(pattern) {
                Shape::Tree(p) | Shape::Exact(p) if p.is_dir() => p,
                _ => continue,
            };
            // A WASI tool needs no system folder (no loader, no libraries): only the grants
            // around the workspace are handed over, which narrows and never widens.
            // The host's scratch folders (/tmp) are never handed over whole.
            if confine::is_scratch(&dir).is_some() || !(workspace.starts_with(&dir) || dir.starts_with(workspace)) {
                continue;
            }
            preopens.retain(|p| !(p.host == dir && !p.writable && writable));
            if !preopens.iter().any(|p| p.host == dir) {
                preopens.push(Preopen { guest: dir.to_string_lossy().into_owned(), host: dir, writable });
            }
        }
    }
    let roots: Vec<PathBuf> = preopens.iter().map(|p| p.host.clone()).collect();
    let mut tree = confine::Tree::new(roots);
    for (patterns, what) in [(&grants.deny, "hidden"), (&grants.deny_write, "read-only")] {
        for pattern in patterns {
            for path in confine::expand(pattern, &mut tree) {
                let inside = preopens.iter().find(|p| path.starts_with(&p.host));
                let matters = match inside {
                    Some(p) => what == "hidden" || p.writable,
                    None => false,
                };
                if matters {
                    return Err(RunError::Unenforceable(format!(
                        "`{}` must stay {what}, and the WASI backend cannot carve it out of a granted folder; \
                         run natively or narrow the grant",
                        path.display()
                    )));
                }
            }
        }
    }
    let limits = confine::limits(&grants.limits, opts.timeout);
    let mut spec = Spec::new(image, argv.iter().cloned());
    spec.preopens = preopens;
    spec.cwd = cwd.to_string_lossy().into_owned();
    spec.env = confine::environment(grants, env)
        .iter()
        .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v.to_str()?.to_string())))
        .collect();
    spec.stdin = opts.stdin.clone();
    spec.limits.timeout = limits.timeout;
    spec.limits.output_bytes = limits.output_bytes;
    if let Some(m) = grants.limits.memory {
        spec.limits.memory_bytes = m;
    }
    runner(env)?.run(&spec).map_err(|e| RunError::Unenforceable(e.to_string()))
}
