//! Scratch workspaces and tool runs with a timeout, for the real-tool tests.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use warden_feedback::SourcePath;

/// How long a tool may run before it is killed.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A unique scratch workspace under the system temp dir, removed on drop.
pub struct Workspace {
    pub root: PathBuf,
}

impl Workspace {
    pub fn new(tag: &str) -> Workspace {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("warden-feedback-it-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        Workspace { root }
    }

    /// Writes `text` to `rel`, creating parent directories.
    pub fn write(&self, rel: &str, text: &str) -> &Self {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    /// Runs `program args` in `self.root/cwd` (must fail) and returns the locations
    /// [`warden_feedback::paths::find`] reports for stdout and stderr together.
    pub fn fail(&self, cwd: &str, program: &str, args: &[&str]) -> Vec<SourcePath> {
        let dir = self.root.join(cwd);
        let (ok, output) = run(&dir, program, args);
        assert!(!ok, "`{program}` was expected to fail:\n{output}");
        let found = warden_feedback::paths::find(&output, &self.root, &dir);
        eprintln!("--- {program} output ---\n{output}--- found: {found:?}");
        found
    }
}

impl Workspace {
    /// Runs `program args` in `self.root/cwd` and asserts that it succeeds.
    pub fn succeed(&self, cwd: &str, program: &str, args: &[&str]) {
        let (ok, output) = run(&self.root.join(cwd), program, args);
        assert!(ok, "`{program}` failed:\n{output}");
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Whether `program` is an executable file on PATH.
pub fn on_path(program: &str) -> bool {
    let found = std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()));
    if !found {
        println!("note: `{program}` not found on PATH, test skipped");
    }
    found
}

/// Runs the tool with a clean stdin, kills it after [`TIMEOUT`]; returns success and the
/// stdout followed by the stderr.
fn run(dir: &Path, program: &str, args: &[&str]) -> (bool, String) {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn `{program}`: {e}"));
    let readers = [child.stdout.take().map(drain), child.stderr.take().map(drain)];
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{program}` ran longer than {TIMEOUT:?} and was killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut text = String::new();
    for reader in readers.into_iter().flatten() {
        text.push_str(&reader.join().unwrap());
    }
    (status.success(), text)
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Shorthand for an expected location.
pub fn at(path: &str, line: u32, column: Option<u32>) -> SourcePath {
    SourcePath { path: path.to_owned(), line: Some(line), column }
}
