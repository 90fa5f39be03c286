//! The one place that reads the process environment.

use std::ffi::OsString;
use std::path::PathBuf;

/// What the engine needs from the process environment, read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// The home directory (`$HOME`; `/` when unset).
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`, else `$HOME/.config`.
    pub config_home: PathBuf,
    /// `$XDG_CACHE_HOME`, else `$HOME/.cache` (the WASI module cache lives beneath).
    pub cache_home: PathBuf,
    /// `$XDG_STATE_HOME`, else `$HOME/.local/state` (the audit log lives beneath).
    pub state_home: PathBuf,
    /// Whether the process runs as root (effective uid 0).
    pub is_root: bool,
    /// The enterprise policy folder (`/etc/warden`).
    pub enterprise_dir: PathBuf,
    /// The working directory.
    pub cwd: PathBuf,
    /// Every variable, for the sandbox's allowlist (nothing passes unless allowed).
    pub vars: Vec<(OsString, OsString)>,
}

impl Environment {
    /// Reads `HOME`, `XDG_CONFIG_HOME`, the working directory and the variables.
    ///
    /// # Errors
    /// When the working directory cannot be determined.
    pub fn from_process() -> std::io::Result<Self> {
        let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from);
        let config_home = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".config"));
        let cache_home = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".cache"));
        let state_home = std::env::var_os("XDG_STATE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".local/state"));
        // /proc/self belongs to the effective uid.
        let is_root = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self")?) == 0;
        Ok(Environment {
            cache_home,
            state_home,
            is_root,
            home,
            config_home,
            enterprise_dir: PathBuf::from("/etc/warden"),
            cwd: std::env::current_dir()?,
            vars: std::env::vars_os().collect(),
        })
    }
}

impl Environment {
    /// A variable's value, when set and UTF-8.
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars.iter().find(|(k, _)| k == name).and_then(|(_, v)| v.to_str().map(str::to_string))
    }

    /// Where the audit log goes when none is named: `/var/log/warden/audit.jsonl` for root,
    /// else `$XDG_STATE_HOME/warden/audit.jsonl`. Both are outside any workspace a sandbox
    /// shows by default, and the session hides the log's folder from every sandbox anyway.
    pub fn default_audit_log(&self) -> PathBuf {
        if self.is_root { PathBuf::from("/var/log/warden/audit.jsonl") } else { self.state_home.join("warden/audit.jsonl") }
    }
}
