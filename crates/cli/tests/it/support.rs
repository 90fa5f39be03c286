//! Running the built `warden` binary in tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// A `warden` command with a controlled environment: HOME and XDG_CONFIG_HOME inside `home`,
/// run from `cwd`.
pub fn warden(cwd: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"));
    cmd
}

/// A fresh empty folder for one test, removed when the test ends.
pub fn tempdir(name: &str) -> PathBuf {
    warden_testdir::make("cli", name)
}

/// stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `explain --json` and parses the output.
pub fn explain_json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "explain failed: {}\n{}", stdout(&out), stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}
