//! warden-wasi integration tests: the toolbox image under the runner.
//!
//! Every test makes its own temporary directories; one runner (one engine, one module cache
//! under the target's tmp dir) is shared by the whole binary. No test uses the network.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod boundaries;
mod client;
mod limits;
mod shape;
mod tools;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use warden_feedback::Run;
use warden_wasi::{Image, Limits, Preopen, Runner, Spec};

/// The runner every test shares.
pub fn runner() -> &'static Runner {
    static R: OnceLock<Runner> = OnceLock::new();
    R.get_or_init(|| Runner::new(&cache_dir()).expect("runner"))
}

/// The module cache of this test binary.
pub fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("warden-wasi-cache")
}

/// The toolbox image (the build script builds it; the tests need the wasm32-wasip1 target).
pub fn toolbox() -> Image {
    warden_wasi::image("toolbox").expect("toolbox image (needs `rustup target add wasm32-wasip1`)")
}

/// A read-only preopen.
pub fn ro(host: &Path, guest: &str) -> Preopen {
    Preopen { host: host.to_path_buf(), guest: guest.to_string(), writable: false }
}

/// A read-write preopen.
pub fn rw(host: &Path, guest: &str) -> Preopen {
    Preopen { host: host.to_path_buf(), guest: guest.to_string(), writable: true }
}

/// A spec for the toolbox with these preopens, cwd and a 20 s timeout.
pub fn spec(argv: &[&str], preopens: Vec<Preopen>, cwd: &str) -> Spec {
    let mut s = Spec::new(toolbox(), argv.iter().copied());
    s.preopens = preopens;
    s.cwd = cwd.to_string();
    s.limits = Limits { timeout: Duration::from_secs(20), ..Limits::default() };
    s
}

/// Runs and returns the result (panics when nothing ran).
pub fn run(s: &Spec) -> Run {
    runner().run(s).expect("run")
}

/// Writes `files` (path, contents) under `root`, creating folders.
pub fn tree(root: &Path, files: &[(&str, &str)]) {
    for (p, c) in files {
        let path = root.join(p);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, c).expect("write");
    }
}

/// The lines of a text, sorted.
pub fn sorted(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text.lines().map(String::from).collect();
    v.sort();
    v
}
