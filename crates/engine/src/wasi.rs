//! Running a decided argv in the WASI sandbox: the grants' folders as preopens at their own
//! paths (read-only or read-write as granted), nothing else visible, no network.
//!
//! What a preopen cannot do is hide one file inside a folder it hands over, so a denied path
//! that exists inside a granted folder refuses the run (fail closed) rather than expose it.
//!
//! The runtime itself runs in the helper process `warden-wasi`, installed beside `warden`
//! (see `warden_wasi::Client`): this process never links it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use warden_feedback::Run;
use warden_policy::{Backend, Grants, Network};
use warden_wasi::{Call, Client, Limits, Preopen};

use crate::confine::{self, Shape};
use crate::{Environment, RunError};

/// One helper per process, shared by every call (its compiled images stay loaded).
fn client(env: &Environment) -> &'static Client {
    static CLIENT: OnceLock<Client> = OnceLock::new();
    CLIENT.get_or_init(|| Client::new(&helper_program(), &env.cache_home.join("warden").join("wasi")))
}

/// `warden-wasi` beside the running executable; beside its folder when that is cargo's
/// `deps` (a test binary of this workspace).
fn helper_program() -> PathBuf {
    const NAME: &str = "warden-wasi";
    let Some(dir) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)) else {
        return PathBuf::from(NAME);
    };
    let beside = dir.join(NAME);
    match dir.parent() {
        Some(up) if !beside.is_file() && dir.file_name().is_some_and(|n| n == "deps") => up.join(NAME),
        _ => beside,
    }
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
    let image = image_name(grants);
    let manifest = warden_wasi::manifest(image).map_err(|e| RunError::Unenforceable(e.to_string()))?;
    let tool = argv.first().map(String::as_str).unwrap_or_default();
    if !manifest.tools.iter().any(|t| t == tool) {
        return Err(RunError::Unenforceable(format!("`{tool}` is not a tool of the `{image}` image (it has: {})", manifest.tools.join(", "))));
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
    tree.cuts = grants.deny.iter().chain(&grants.deny_write).map(|p| confine::NameCut::of(p)).collect();
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
    // What the denials could not be matched in cannot be handed over either.
    let (opaque, cut) = tree.unmatched();
    if let Some(p) = opaque.first() {
        return Err(RunError::Unenforceable(format!(
            "the name of `{}` is not UTF-8, so the denials cannot be matched beneath it, and the WASI backend cannot hide it; \
             run natively or narrow the grant",
            p.display()
        )));
    }
    if cut {
        return Err(RunError::Unenforceable(format!(
            "more than {} entries in the granted folders: the denials cannot all be matched; run natively or narrow the grant",
            confine::SPARSE_LIMIT
        )));
    }
    // What git runs or reads its config from (`gitguard.rs`) is guarded like the rest.
    let (present, missing) = crate::gitguard::guards(&mut tree, env, &grants.deny_write);
    if let Some(p) = present.iter().find(|g| preopens.iter().any(|o| o.writable && g.starts_with(&o.host))) {
        return Err(RunError::Unenforceable(format!(
            "`{}` must stay read-only, and the WASI backend cannot carve it out of a granted folder; \
             run natively or narrow the grant",
            p.display()
        )));
    }
    let mut guards = grants.deny_write.clone();
    guards.extend(missing);
    // Guarded paths missing now: whatever the tool makes there is moved aside after the run.
    let writable: Vec<PathBuf> = preopens.iter().filter(|p| p.writable).map(|p| p.host.clone()).collect();
    let mut tree = confine::Tree::new(writable);
    let mut missing = confine::missing_guarded(&guards, &mut tree);
    // And the git folders there are, to find the ones it makes (`newrepo.rs`).
    let repos = crate::newrepo::before(&mut tree, &guards);
    if let Some(before) = &repos {
        before.claim(&mut missing);
    }
    let limits = confine::limits(&grants.limits, opts.timeout);
    let defaults = Limits::default();
    let call = Call {
        image: image.to_string(),
        argv: argv.to_vec(),
        preopens,
        cwd: cwd.to_string_lossy().into_owned(),
        env: confine::environment(grants, env)
            .iter()
            .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v.to_str()?.to_string())))
            .collect(),
        stdin: opts.stdin.clone(),
        limits: Limits {
            timeout: limits.timeout,
            output_bytes: limits.output_bytes,
            memory_bytes: grants.limits.memory.unwrap_or(defaults.memory_bytes),
            ..defaults
        },
        network: false,
    };
    let cancelled = || opts.cancel.as_ref().is_some_and(warden_sandbox::Cancel::is_cancelled);
    if cancelled() {
        return Err(RunError::Sandbox(warden_sandbox::Error::Cancelled));
    }
    let mut run = client(env).run_until(&call, &cancelled).map_err(|e| RunError::Unenforceable(e.to_string()))?;
    crate::run::swept(&mut run, &missing);
    if let Some(before) = &repos {
        crate::newrepo::report(&mut run, before, env);
    }
    Ok(run)
}
