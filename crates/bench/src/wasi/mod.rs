//! `warden-bench wasi`: the WASI backend's costs, beside a bare spawn of the same tool.
//!
//! Rows, all measured in one run:
//! - `compile`: a cold Cranelift compile of the toolbox module (no cache at all).
//! - `load`: loading the compiled toolbox from the on-disk cache (deserialize, mmap): what a
//!   new warden process pays before its first WASI call.
//! - `call`: one warm `Runner::run` (fresh store from the pool, WASI context, preopen,
//!   instantiate, run `_start`, capture): `toolbox ls` on a small directory beside a bare `ls`
//!   spawned with `std::process::Command` on the same directory, and a do-nothing tool
//!   (`__exit 0`) beside a bare `true`: the fixed cost of a call.
//!
//! Before timing, `toolbox ls` and `ls` are run once and must list the same names.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use warden_wasi::{Image, Limits, Preopen, Runner, Spec};

use crate::Options;
use crate::stats::{Cell, Report, Row, Summary, measure};

/// Why the wasi bench could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The backend refused (image not built, cache, compile).
    #[error("{0}")]
    Wasi(#[from] warden_wasi::Error),
    /// Setting up the temporary directories.
    #[error("setup: {0}")]
    Io(#[from] std::io::Error),
    /// The two sides disagree on the listing.
    #[error("`toolbox ls` and `ls` disagree: {0}")]
    Mismatch(String),
}

/// Files in the listed directory.
const FILES: usize = 12;

struct Budgets {
    compile: Duration,
    load: Duration,
    call: Duration,
}

/// A temporary folder (the cache and the listed directory), removed at the end.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the bench.
///
/// # Errors
/// [`BenchError`] when the toolbox is not built, the runner cannot start, or the sides
/// disagree.
pub fn run(opts: &Options) -> Result<Report, BenchError> {
    let b = if opts.quick {
        Budgets { compile: Duration::from_millis(600), load: Duration::from_millis(200), call: Duration::from_millis(200) }
    } else {
        Budgets { compile: Duration::from_secs(4), load: Duration::from_secs(2), call: Duration::from_secs(3) }
    };
    let scratch = Scratch(std::env::temp_dir().join(format!("warden-bench-wasi-{}", std::process::id())));
    let listed = scratch.0.join("dir");
    std::fs::create_dir_all(&listed)?;
    for i in 0..FILES {
        std::fs::write(listed.join(format!("file{i:02}.txt")), format!("{i}\n"))?;
    }
    let image = warden_wasi::image("toolbox")?;
    let runner = Runner::new(&scratch.0.join("cache"))?;
    runner.prepare(&image)?;
    let ls = ls_spec(&image, &listed);
    check(&runner, &ls, &listed)?;
    let noop = Spec::new(image.clone(), ["__exit", "0"]);

    let mut rows = Vec::new();
    let compile = measure(b.compile, || runner.compile_uncached(&image).is_ok());
    rows.push(row("compile", "toolbox cold compile (Cranelift)", ours(compile, &image), Cell::None));
    let load = measure(b.load, || runner.load_from_disk(&image).is_ok());
    rows.push(row("load", "toolbox cached load (deserialize)", ours(load, &image), Cell::None));

    let wasi_ls = measure(b.call, || runner.run(black_box(&ls)).map(|r| r.exit_code));
    let bare_ls = measure(b.call, || Command::new("ls").arg(black_box(&listed)).output().map(|o| o.status.code()));
    rows.push(row("call", &format!("ls, {FILES} files (warm)"), measured(wasi_ls), measured(bare_ls)));
    // The native sandbox on the same directory: `ls DIR` with a read grant on it and the system.
    let native = native_ls_spec(&listed);
    let native_ls = match warden_sandbox::run(&native) {
        Ok(r) if r.exit_code == Some(0) => measured(measure(b.call, || warden_sandbox::run(black_box(&native)).map(|r| r.exit_code))),
        Ok(r) => Cell::Missing(format!("native sandboxed ls failed: {:?} {}", r.exit_code, r.stderr.text.trim())),
        Err(e) => Cell::Missing(format!("native sandbox: {e}")),
    };
    rows.push(Row {
        group: "call".into(),
        case: format!("ls, {FILES} files (warm): wasi vs native sandbox"),
        rules: None,
        ours: measured(wasi_ls),
        peer: native_ls,
        impls: Some(("warden-wasi", "warden-native")),
    });
    let wasi_noop = measure(b.call, || runner.run(black_box(&noop)).map(|r| r.exit_code));
    let bare_true = measure(b.call, || Command::new("true").output().map(|o| o.status.code()));
    rows.push(row("call", "no-op tool (__exit 0 / true)", measured(wasi_noop), measured(bare_true)));

    Ok(Report { bench: "wasi", ours: "warden-wasi", peer: "bare", notes: notes(opts, &image), rows })
}

/// The native sandbox's `ls DIR`: the system and `dir` read-only, nothing else.
fn native_ls_spec(dir: &Path) -> warden_sandbox::Spec {
    use warden_sandbox::{Access, Mount};
    let mut s = warden_sandbox::Spec::new(vec!["ls".into(), dir.as_os_str().to_owned()], dir.to_path_buf());
    for p in ["/usr", "/bin", "/lib", "/lib64", "/etc"] {
        s.mounts.push(Mount { path: p.into(), access: Access::Read });
    }
    s.mounts.push(Mount { path: dir.to_path_buf(), access: Access::Read });
    s.scratch.push("/tmp".into());
    s.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    s
}

fn ls_spec(image: &Image, dir: &Path) -> Spec {
    let guest = "/work";
    let mut s = Spec::new(image.clone(), ["ls", guest]);
    s.preopens = vec![Preopen { host: dir.to_path_buf(), guest: guest.to_string(), writable: false }];
    s.cwd = guest.to_string();
    s.limits = Limits { timeout: Duration::from_secs(10), ..Limits::default() };
    s
}

/// Both sides list the same names.
fn check(runner: &Runner, ls: &Spec, dir: &Path) -> Result<(), BenchError> {
    let ours = runner.run(ls)?;
    let bare = Command::new("ls").arg(dir).env("LC_ALL", "C").output()?;
    let bare = String::from_utf8_lossy(&bare.stdout);
    if ours.exit_code != Some(0) || ours.stdout.text != bare {
        return Err(BenchError::Mismatch(format!(
            "exit {:?}, toolbox {:?} vs ls {:?}; stderr {:?}",
            ours.exit_code, ours.stdout.text, bare, ours.stderr.text
        )));
    }
    Ok(())
}

fn row(group: &str, case: &str, ours: Cell, peer: Cell) -> Row {
    Row { group: group.to_string(), case: case.to_string(), rules: None, ours, peer, impls: None }
}

fn measured(summary: Summary) -> Cell {
    Cell::Measured { summary, outcome: None }
}

fn ours(summary: Summary, image: &Image) -> Cell {
    Cell::Measured { summary, outcome: Some(format!("{} KiB wasm", image.wasm().len() / 1024)) }
}

fn notes(opts: &Options, image: &Image) -> Vec<String> {
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| String::from("unknown"));
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let build = if cfg!(debug_assertions) { "DEBUG build (numbers meaningless)" } else { "release" };
    vec![
        format!(
            "warden-bench wasi: {build}, wasmtime 48 (Cranelift, pooling allocator, epoch + fuel), {cpus} cpus, load {load} at start{}",
            if opts.quick { ", --quick budgets" } else { "" },
        ),
        format!("toolbox image sha256 {}…, {} bytes", image.digest_hex().get(..12).unwrap_or(""), image.wasm().len()),
        String::from(
            "call rows: warden-wasi = one warm Runner::run (store, WASI ctx, preopen, instantiate, run, capture); \
             bare = std::process::Command spawn + wait, no sandbox; ratio = warden-wasi p50 / bare p50",
        ),
    ]
}
