//! `warden-bench spawn`: what the native sandbox costs, beside bubblewrap and a bare spawn.
//!
//! Rows, all measured in one run:
//! - `process`: the whole `warden run --policy policies/full-auto.policy -- /bin/true` process
//!   (start, policy load and check, decision, sandbox, exit) beside
//!   `bwrap --unshare-all ... /bin/true` showing the same view (every path of the view warden
//!   builds for the command, `warden_sandbox::shown`, at the same access: read-only and
//!   read-write binds, covered files and folders, recreated links, scratch tmpfs, `/proc`,
//!   `/dev`), measured one after the other and again alternating (one run of each in turn,
//!   which this machine's drift over seconds cannot favour one side in), beside bwrap with a
//!   minimal view (`/usr`, `/etc`, the workspace), and the bare
//!   `/bin/true`; and the same `warden run` in a workspace of about 22,000 entries, which each
//!   run walks for the `**` denials, beside bwrap's minimal view of it. The notes give what
//!   each of the first three costs per run besides wall time: CPU and minor page faults
//!   (`usage.rs`).
//! - `in-process`: inside a long-lived process, `warden_sandbox::run` of `/bin/true` with the
//!   full-auto view (setup, spawn, wait) beside a bare `std::process::Command` spawn and wait:
//!   as a long-lived warden runs it (a prepared view, from its second run on: see
//!   `crates/sandbox/src/view.rs`), measured one after the other and again alternating, and
//!   with every run building its own view; and the engine's whole path (decide + confine +
//!   run) on a loaded policy.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use warden_engine::{Engine, Environment, Job, Query, RunOptions};
use warden_policy::Context;

use crate::Options;
use crate::stats::{Cell, Report, Row, Summary, measure, measure_alternating, measure_alternating_settled};
use crate::usage::{Cost, measure_costed};

/// Why the spawn bench could not run.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// Setting up the bench failed.
    #[error("{0}")]
    Setup(String),
}

fn setup(e: impl std::fmt::Display) -> SpawnError {
    SpawnError::Setup(e.to_string())
}

fn status_ok(cmd: &mut Command) -> bool {
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn cell(summary: Summary, outcome: &str) -> Cell {
    Cell::Measured { summary, outcome: Some(outcome.to_string()) }
}

/// Runs the spawn bench.
pub fn run(opts: &Options) -> Result<Report, SpawnError> {
    let budget = if opts.quick { Duration::from_millis(300) } else { Duration::from_secs(3) };
    let root = repo_root()?;
    let policy = root.join("policies/full-auto.policy");
    let ws = std::env::temp_dir().join(format!("warden-bench-spawn-{}", std::process::id()));
    std::fs::create_dir_all(&ws).map_err(setup)?;
    let ws = ws.canonicalize().map_err(setup)?;
    let mut notes = vec![format!("workspace {}; policy {}", ws.display(), policy.display())];
    let mut rows = Vec::new();

    // The spec warden builds for `/bin/true` under the policy: what the same-view bwrap shows.
    let env = Environment::from_process().map_err(setup)?;
    let layers = warden_engine::load_files(std::slice::from_ref(&policy)).map_err(setup)?;
    let ctx = Context { workspace: ws.display().to_string(), home: env.home.display().to_string(), cwd: ws.display().to_string() };
    let engine = Engine::new(&layers, ctx).map_err(|d| setup(format!("policy: {} error(s)", d.0.len())))?;
    let argv = ["/bin/true".to_string()];
    let query = Query::Command("/bin/true");
    let x = engine.explain(None, query);
    let spec = engine.sandbox_spec(&x, Job::Argv(&argv), &env, &RunOptions::default());

    // Whole processes. Both programs run from copies written just now: how long a program
    // takes to start depends on how long its file has sat in the page cache (here a fresh
    // copy of the same warden ran 0.3 ms faster than the build an hour older), and a fresh
    // build of warden beside an installed bwrap would be compared in different states.
    let bin = ws.with_file_name(format!("warden-bench-spawn-bin-{}", std::process::id()));
    std::fs::create_dir_all(&bin).map_err(setup)?;
    let warden = fresh_copy(&std::env::current_exe().map_err(setup)?.with_file_name("warden"), &bin);
    let bwrap_program = on_path("bwrap").map_or_else(|| PathBuf::from("bwrap"), |p| fresh_copy(&p, &bin));
    notes.push(format!("warden and bwrap run from copies made at the start of the bench in {}", bin.display()));
    let (ours, ours_cost) = warden_cell(&warden, &policy, &ws, budget);
    let mut bwrap = bwrap_same_view(&bwrap_program, &spec);
    let (peer, same_cost) = bwrap_cell(&mut bwrap, budget);
    rows.push(Row { group: "process".into(), case: "warden run /bin/true vs bwrap --unshare-all, same view".into(), rules: None, ours: ours.clone(), peer, impls: Some(("warden", "bwrap")) });
    // The same two, one run of each in turn: the machine's drift over the seconds of the
    // rows above hits both alike.
    if status_ok(&mut bwrap) {
        let mut ours_cmd = warden_command(&warden, &policy, &ws);
        let (a, b) = measure_alternating(budget, || status_ok(&mut ours_cmd), || status_ok(&mut bwrap));
        rows.push(Row {
            group: "process".into(),
            case: "the same, warden and bwrap runs alternating".into(),
            rules: None,
            ours: cell(a, "exit 0"),
            peer: cell(b, "exit 0"),
            impls: Some(("warden", "bwrap")),
        });
    }
    let mut minimal = bwrap_command(&bwrap_program, &ws);
    let (peer, minimal_cost) = bwrap_cell(&mut minimal, budget);
    rows.push(Row { group: "process".into(), case: "warden run /bin/true vs bwrap --unshare-all, minimal view".into(), rules: None, ours, peer, impls: Some(("warden", "bwrap")) });
    notes.push(format!("bwrap, same view: {}", describe(&bwrap)));
    for (who, cost) in [("warden run", ours_cost), ("bwrap, same view", same_cost), ("bwrap, minimal view", minimal_cost)] {
        if let Some(cost) = cost {
            notes.push(format!("{who}: {cost} (the process and what it waited for; /proc/self/stat, 10 ms ticks)"));
        }
    }
    // A workspace the size of a real checkout with its build output: every run walks it to
    // cover the `**` denials (`**/.env`, `**/*.pem`, ...); bwrap walks nothing.
    let big = ws.with_file_name(format!("warden-bench-spawn-big-{}", std::process::id()));
    let files = big_workspace(&big).map_err(setup)?;
    let (ours_big, _) = warden_cell(&warden, &policy, &big, budget);
    let (peer_big, _) = bwrap_cell(&mut bwrap_command(&bwrap_program, &big), budget);
    rows.push(Row { group: "process".into(), case: format!("the same in a {files}-entry workspace vs bwrap, minimal view"), rules: None, ours: ours_big, peer: peer_big, impls: Some(("warden", "bwrap")) });
    let _ = std::fs::remove_dir_all(&big);
    let _ = std::fs::remove_dir_all(&bin);
    let mut bare = Command::new("/bin/true");
    let bare_cell = cell(measure(budget, || status_ok(&mut bare)), "exit 0");
    rows.push(Row { group: "process".into(), case: "bare /bin/true".into(), rules: None, ours: bare_cell.clone(), peer: Cell::None, impls: Some(("bare", "-")) });

    // Inside a long-lived process.
    let first = engine.run(&x, Job::Argv(&argv), &env, &RunOptions::default()).map_err(setup)?;
    if first.run.exit_code != Some(0) {
        return Err(setup(format!("sandboxed /bin/true failed: {:?}", first.run)));
    }
    // Every run building its own view: what the one-shot `warden run` pays inside its process.
    warden_sandbox::set_views(warden_sandbox::Views::Off);
    let unprepared = cell(measure(budget, || warden_sandbox::run(&spec).map(|r| r.exit_code)), "exit 0");
    // A long-lived process: from the second run of the same view on, runs join a prepared view.
    warden_sandbox::set_views(warden_sandbox::Views::Reuse);
    let prepared = warden_sandbox::run(&spec).map_err(setup)?;
    if !prepared.sandbox.notes.iter().any(|n| n.starts_with("mount view prepared once")) {
        notes.push(format!("the sandbox did not reuse a prepared view: {:?}", prepared.sandbox.notes));
    }
    let sandbox = cell(
        measure(budget, || warden_sandbox::run(&spec).map(|r| r.exit_code)),
        "exit 0",
    );
    let mut bare = Command::new("/bin/true");
    let bare_in = cell(measure(budget, || status_ok(&mut bare)), "exit 0");
    if let (Cell::Measured { summary: s, .. }, Cell::Measured { summary: b, .. }) = (&sandbox, &bare_in) {
        let over = s.p50_ns.saturating_sub(b.p50_ns);
        notes.push(format!("sandbox setup over a bare spawn, prepared view (p50): {:.3} ms", over as f64 / 1e6));
    }
    if let (Cell::Measured { summary: u, .. }, Cell::Measured { summary: b, .. }) = (&unprepared, &bare_in) {
        let over = u.p50_ns.saturating_sub(b.p50_ns);
        notes.push(format!("without a prepared view (every run builds its own, as a one-shot process does): {:.3} ms over a bare spawn (p50)", over as f64 / 1e6));
    }
    rows.push(Row { group: "in-process".into(), case: "sandbox run /bin/true vs bare spawn".into(), rules: None, ours: sandbox, peer: bare_in.clone(), impls: Some(("warden-sandbox", "bare")) });
    // The same two, one run of each in turn: the machine's drift over the seconds between the
    // two loops above (a bare spawn here took from 0.53 to 0.73 ms from one bench to the
    // next) hits both alike. Each is timed after a pause: the namespaces a sandbox run leaves
    // to be released in the background would otherwise slow the bare spawn timed next (by
    // about 0.1 ms here), which a run back to back with the last one pays in the rows above.
    let settle = Duration::from_millis(2);
    let (s, b) = measure_alternating_settled(budget, settle, || warden_sandbox::run(&spec).map(|r| r.exit_code), || status_ok(&mut bare));
    notes.push(format!(
        "sandbox setup over a bare spawn, prepared view, runs alternating after a 2 ms pause (p50): {:.3} ms",
        s.p50_ns.saturating_sub(b.p50_ns) as f64 / 1e6
    ));
    rows.push(Row {
        group: "in-process".into(),
        case: "the same, alternating, each after a 2 ms pause".into(),
        rules: None,
        ours: cell(s, "exit 0"),
        peer: cell(b, "exit 0"),
        impls: Some(("warden-sandbox", "bare")),
    });
    rows.push(Row { group: "in-process".into(), case: "sandbox run, no prepared view, vs bare".into(), rules: None, ours: unprepared, peer: bare_in, impls: Some(("warden-sandbox", "bare")) });
    let whole = cell(
        measure(budget, || {
            let x = engine.explain(None, query);
            engine.run(&x, Job::Argv(&argv), &env, &RunOptions::default()).map(|o| o.run.exit_code).ok()
        }),
        "exit 0",
    );
    rows.push(Row { group: "in-process".into(), case: "decide + confine + run /bin/true".into(), rules: None, ours: whole, peer: Cell::None, impls: None });
    let _ = std::fs::remove_dir_all(&ws);
    Ok(Report { bench: "spawn", ours: "warden", peer: "peer", notes, rows })
}

/// `warden run --policy POLICY --workspace WS -- /bin/true`.
fn warden_command(warden: &Path, policy: &Path, ws: &Path) -> Command {
    let mut cmd = Command::new(warden);
    cmd.arg("run").arg("--policy").arg(policy).arg("--workspace").arg(ws).arg("--").arg("/bin/true");
    cmd
}

/// The whole `warden run --policy POLICY --workspace WS -- /bin/true` process.
fn warden_cell(warden: &Path, policy: &Path, ws: &Path, budget: Duration) -> (Cell, Option<Cost>) {
    let mut cmd = warden_command(warden, policy, ws);
    if warden.exists() && status_ok(&mut cmd) {
        let (summary, cost) = measure_costed(budget, &mut cmd, status_ok);
        (cell(summary, "exit 0"), cost)
    } else {
        (Cell::Missing(format!("{} missing or failing: cargo build --release -p warden", warden.display())), None)
    }
}

/// Fills `dir` with 50 folders of 40 folders of 10 files (and a `.env` in one of them);
/// returns the number of entries.
fn big_workspace(dir: &Path) -> std::io::Result<usize> {
    const PKGS: usize = 50;
    const SRCS: usize = 40;
    const FILES: usize = 10;
    let _ = std::fs::remove_dir_all(dir);
    for p in 0..PKGS {
        for s in 0..SRCS {
            let sub = dir.join(format!("pkg{p}/src{s}"));
            std::fs::create_dir_all(&sub)?;
            for f in 0..FILES {
                std::fs::write(sub.join(format!("m{f}.rs")), "")?;
            }
        }
    }
    std::fs::write(dir.join("pkg7/src3/.env"), "SECRET=1")?;
    Ok(PKGS * (1 + SRCS * (1 + FILES)) + 1)
}

/// `program` copied into `dir` (same name, same mode); the original when it cannot be copied.
fn fresh_copy(program: &Path, dir: &Path) -> PathBuf {
    let Some(name) = program.file_name() else { return program.to_path_buf() };
    let copy = dir.join(name);
    if std::fs::copy(program, &copy).is_ok() { copy } else { program.to_path_buf() }
}

/// `name` looked up in `PATH`, as `Command` would.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

fn repo_root() -> Result<PathBuf, SpawnError> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors().nth(2).map(Path::to_path_buf).ok_or_else(|| setup("cannot find the repository root"))
}

fn bwrap_cell(cmd: &mut Command, budget: Duration) -> (Cell, Option<Cost>) {
    if status_ok(cmd) {
        let (summary, cost) = measure_costed(budget, cmd, status_ok);
        (cell(summary, "exit 0"), cost)
    } else {
        (Cell::Missing("bwrap not installed or failing (apt-get install bubblewrap)".into()), None)
    }
}

/// The command line, for the notes.
fn describe(cmd: &Command) -> String {
    let mut out = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        out.push(' ');
        out.push_str(&a.to_string_lossy());
    }
    out
}

/// bubblewrap showing the command the view warden builds for `spec`
/// ([`warden_sandbox::shown`]): the same paths at the same access, the same recreated links,
/// the same scratch folders, in path order (a folder before what is mounted inside it), with
/// the same environment, working folder and namespaces (all, network too: the spec grants
/// none). `/proc` and `/dev` are bwrap's own (a new `/proc`, a `/dev` of the safe nodes), as
/// warden's are.
fn bwrap_same_view(program: &Path, spec: &warden_sandbox::Spec) -> Command {
    use warden_sandbox::Access;
    let mut c = Command::new(program);
    c.args(["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]);
    for (k, v) in &spec.env {
        c.arg("--setenv").arg(k).arg(v);
    }
    c.args(["--proc", "/proc", "--dev", "/dev"]);
    let shown = warden_sandbox::shown(spec);
    let mut steps: Vec<(PathBuf, Option<Access>, Option<PathBuf>)> = shown.paths.into_iter().map(|(p, a)| (p, Some(a), None)).collect();
    steps.extend(shown.links.into_iter().map(|(link, text)| (link, None, Some(text))));
    steps.extend(spec.scratch.iter().map(|p| (p.clone(), None, None)));
    steps.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, access, link) in steps {
        // Paths that are not there are skipped, as warden skips them.
        if path.starts_with("/proc") || path.starts_with("/dev") || (access.is_some() && path.symlink_metadata().is_err()) {
            continue;
        }
        let dir = path.is_dir();
        match (access, link) {
            (_, Some(text)) => c.arg("--symlink").arg(text).arg(&path),
            (None, None) => c.arg("--tmpfs").arg(&path),
            (Some(Access::Read | Access::Guard), _) => c.arg("--ro-bind").arg(&path).arg(&path),
            (Some(Access::Write), _) => c.arg("--bind").arg(&path).arg(&path),
            (Some(Access::Hide), _) if dir => c.arg("--tmpfs").arg(&path).arg("--remount-ro").arg(&path),
            (Some(Access::Hide), _) => c.arg("--ro-bind").arg("/dev/null").arg(&path),
        };
    }
    c.arg("--chdir").arg(&spec.cwd);
    c.args(&spec.argv);
    c
}

/// A careful bubblewrap profile with a minimal view: `/usr`, `/etc` and the workspace.
fn bwrap_command(program: &Path, ws: &Path) -> Command {
    let mut c = Command::new(program);
    c.args(["--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]);
    c.args(["--cap-drop", "ALL", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]);
    for (link, target) in [("/bin", "usr/bin"), ("/sbin", "usr/sbin"), ("/lib", "usr/lib"), ("/lib64", "usr/lib64")] {
        c.args(["--symlink", target, link]);
    }
    c.args(["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]);
    c.arg("--bind").arg(ws).arg(ws).arg("--chdir").arg(ws);
    c.arg("/bin/true");
    c
}
