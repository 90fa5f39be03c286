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
        Ok(Environment {
            cache_home,
            home,
            config_home,
            enterprise_dir: PathBuf::from("/etc/warden"),
            cwd: std::env::current_dir()?,
            vars: std::env::vars_os().collect(),
        })
    }
}
