//! One case's folder: the workspace, the targets outside it, the read-only grant, the policy.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The uid and gid the unprivileged runner uses (`nobody`).
pub const NOBODY: u32 = 65534;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh folder for one case under one runner.
pub struct Fixture {
    /// The folder holding everything below (its path marks the case's processes).
    pub root: PathBuf,
    /// The workspace (`ws/`): writable, with guarded `.git/hooks`, `.git/config`, `.warden/`.
    pub ws: PathBuf,
    /// Targets the sandbox must not touch at all (`outside/`).
    pub outside: PathBuf,
    /// Granted read-only (`readable/`), except `readable/secret.txt`.
    pub readable: PathBuf,
    /// The policy file.
    pub policy: PathBuf,
    /// A unique short name for sockets and the like (never secret).
    pub id: String,
    /// Every planted secret contains this; it must never show up where the sandbox could put it.
    token: String,
}

impl Fixture {
    /// Creates the folder for `case` under `runner`, with the standard plants and policy.
    pub fn new(case: &str, runner: &str, timeout_secs: Option<u32>) -> io::Result<Fixture> {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let id = format!("{pid}-{n}");
        let root = std::env::temp_dir().join(format!("warden-escape-{id}-{case}-{runner}"));
        if root.exists() {
            fs::remove_dir_all(&root)?;
        }
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let token = format!(
            "tok{:x}{:x}",
            nanos ^ (u128::from(pid) << 40),
            n * 7919 + 13
        );
        let fx = Fixture {
            ws: root.join("ws"),
            outside: root.join("outside"),
            readable: root.join("readable"),
            policy: root.join("policy.policy"),
            root,
            id,
            token,
        };
        fx.plant_standard()?;
        fs::write(&fx.policy, fx.policy_text(timeout_secs))?;
        Ok(fx)
    }

    /// A secret value of some kind; every one contains the fixture's token.
    pub fn secret(&self, kind: &str) -> String {
        format!("SECRET-{}-{kind}", self.token)
    }

    /// The token every secret contains.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Replaces `{ws}`, `{out}`, `{rd}` and `{root}` in a script.
    pub fn expand(&self, script: &str) -> String {
        script
            .replace("{ws}", &self.ws.to_string_lossy())
            .replace("{out}", &self.outside.to_string_lossy())
            .replace("{rd}", &self.readable.to_string_lossy())
            .replace("{root}", &self.root.to_string_lossy())
            .replace("{id}", &self.id)
    }

    /// Writes `content` at `rel` below the fixture root, creating folders, with `mode`.
    pub fn plant(&self, rel: &str, content: &str, mode: u32) -> io::Result<PathBuf> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, content)?;
        fs::set_permissions(&path, fs::Permissions::from_mode(mode))?;
        Ok(path)
    }

    fn plant_standard(&self) -> io::Result<()> {
        fs::create_dir_all(&self.root)?;
        fs::set_permissions(&self.root, fs::Permissions::from_mode(0o755))?;
        self.plant("ws/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755)?;
        self.plant(
            "ws/.git/config",
            "[core]\n\trepositoryformatversion = 0\n",
            0o644,
        )?;
        self.plant("ws/.git/HEAD", "ref: refs/heads/main\n", 0o644)?;
        fs::create_dir_all(self.ws.join(".git/objects"))?;
        fs::create_dir_all(self.ws.join(".git/refs/heads"))?;
        self.plant("ws/.warden/notes.txt", "project notes\n", 0o644)?;
        self.plant(
            "ws/.env",
            &format!("API_KEY={}\n", self.secret("dotenv")),
            0o644,
        )?;
        self.plant("ws/src/main.rs", "fn main() {}\n", 0o644)?;
        self.plant("outside/victim.txt", "victim content\n", 0o644)?;
        self.plant("outside/dir/inner.txt", "inner content\n", 0o644)?;
        self.plant("readable/public.txt", "public content\n", 0o644)?;
        self.plant(
            "readable/secret.txt",
            &format!("{}\n", self.secret("readable")),
            0o644,
        )?;
        for dir in [&self.ws, &self.outside, &self.readable] {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o755))?;
        }
        // warden's audit log for the case lives here: made before the snapshot, so only what
        // the attack does to it counts.
        fs::create_dir_all(self.root.join("audit"))?;
        Ok(())
    }

    fn policy_text(&self, timeout_secs: Option<u32>) -> String {
        let timeout = timeout_secs.unwrap_or(10);
        let rd = self.readable.to_string_lossy();
        format!(
            "version 1\n\
             default allow\n\
             opaque allow\n\
             limits {{ timeout {timeout}s, processes 64, memory 1GiB, output 1MiB, filesize 64MiB, files 256 }}\n\
             paths system = \"/usr/**\", \"/lib/**\", \"/lib64/**\", \"/bin/**\", \"/sbin/**\", \"/etc/**\"\n\
             allow fs read \"${{workspace}}/**\", system, \"{rd}/**\"\n\
             allow fs write \"${{workspace}}/**\"\n\
             deny fs read \"{rd}/secret.txt\", \"${{workspace}}/.env\", \"/etc/shadow\"\n\
             deny fs write \"${{workspace}}/.git/hooks/**\", \"${{workspace}}/.git/config\", \"${{workspace}}/.warden/**\", \
             \"**/.git/modules/**/config\", \"**/.git/modules/**/hooks/**\", \"**/.git/commondir\", \"**/.claude/settings.json\", \
             \"**/.mcp.json\", \"**/.hg/hgrc\"\n"
        )
    }

    /// The audit log warden keeps for this case (outside everything the sandbox is granted).
    pub fn audit_log(&self) -> PathBuf {
        self.root.join("audit/log.jsonl")
    }

    /// Hands the workspace and the audit folder to `nobody` (the unprivileged runner);
    /// everything else stays root's.
    pub fn give_workspace_to_nobody(&self) -> Result<(), String> {
        let audit = self.root.join("audit");
        std::fs::create_dir_all(&audit).map_err(|e| format!("{}: {e}", audit.display()))?;
        let status = Command::new("chown")
            .arg("-R")
            .arg(format!("{NOBODY}:{NOBODY}"))
            .arg(&self.ws)
            .arg(&audit)
            .status()
            .map_err(|e| format!("chown: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("chown -R {NOBODY} {} failed", self.ws.display()))
        }
    }

    /// Path of `rel` below the fixture root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Removes the folder (best effort: the sandbox may have left odd modes behind).
    pub fn remove(&self) {
        let _ = Command::new("chmod")
            .arg("-R")
            .arg("u+rwx")
            .arg(&self.root)
            .status();
        let _ = fs::remove_dir_all(&self.root);
    }
}
