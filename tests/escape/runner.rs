//! The ways the suite runs an attack: warden (as the caller or as `nobody`) and bubblewrap.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cases::Attack;
use crate::fixture::{Fixture, NOBODY};

/// What the output limit of the policy is (1 MiB); bubblewrap's capture uses the same cap.
pub const OUTPUT_CAP: usize = 1 << 20;

/// Who runs warden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum User {
    /// The user running the test.
    Caller,
    /// `nobody`, through `setpriv`, owning the workspace (only when the test runs as root).
    Unprivileged,
}

/// How warden builds the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// Every run builds its own namespaces and mount view (what a one-shot `warden run` does).
    OneShot,
    /// The run joins a prepared view (what a long-lived warden does from a view's second run on),
    /// forced from the first run with `WARDEN_SANDBOX_VIEWS=always`.
    View,
}

/// A way to run a sandboxed command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// `warden run --json`.
    Warden(User, Build),
    /// The bubblewrap reference profile.
    Bwrap,
}

/// A denial as warden reported it.
#[derive(Debug, Clone)]
pub struct Denial {
    pub op: String,
    pub target: String,
    pub source: String,
    /// How warden knows: `observed` or `output` (inferred from the command's printed text).
    pub evidence: String,
}

/// What came back from one run, whichever runner.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub stdout_truncated: bool,
    pub stdout_bytes: u64,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration: Duration,
    pub denials: Vec<Denial>,
    /// warden's `sandbox` object (what it says it built), as JSON text.
    pub sandbox: Option<String>,
}

impl Outcome {
    /// Both streams, for searching.
    pub fn output(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }

    /// A short excerpt for failure messages.
    pub fn excerpt(&self) -> String {
        let cut = |s: &str| -> String {
            let s = s.trim();
            if s.chars().count() > 300 {
                format!("{}...", s.chars().take(300).collect::<String>())
            } else {
                s.to_string()
            }
        };
        let mut s = format!(
            "exit {:?}, timed_out {}, {} ms, stdout {:?}, stderr {:?}",
            self.exit_code,
            self.timed_out,
            self.duration.as_millis(),
            cut(&self.stdout),
            cut(&self.stderr)
        );
        if !self.denials.is_empty() {
            let d: Vec<String> = self
                .denials
                .iter()
                .map(|d| format!("{} {} ({}, {})", d.op, d.target, d.source, d.evidence))
                .collect();
            s.push_str(&format!(", denials [{}]", d.join("; ")));
        }
        if let Some(sandbox) = &self.sandbox {
            s.push_str(&format!(", sandbox {sandbox}"));
        }
        s
    }
}

impl Runner {
    /// The column name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Runner::Warden(User::Caller, Build::OneShot) => "caller",
            Runner::Warden(User::Unprivileged, Build::OneShot) => "unprivileged",
            Runner::Warden(User::Caller, Build::View) => "caller+view",
            Runner::Warden(User::Unprivileged, Build::View) => "unprivileged+view",
            Runner::Bwrap => "bwrap",
        }
    }

    /// Runs `attack` in `fx`. An error means the run itself went wrong (for warden: it did not
    /// run the command, or its result is malformed).
    pub fn run(self, fx: &Fixture, attack: &Attack) -> Result<Outcome, String> {
        // The trailing comment marks every shell of the case with its folder, so the census
        // and the survivor scan can find them on the host.
        let script = format!("{}\n# {}", fx.expand(&attack.script), fx.root.display());
        let timeout = Duration::from_secs(u64::from(attack.timeout.unwrap_or(10)));
        let mut cmd = match self {
            Runner::Warden(user, build) => warden_command(fx, attack, &script, user, build),
            Runner::Bwrap => bwrap_command(fx, attack, &script),
        };
        cmd.current_dir(&fx.ws)
            .env("WARDEN_TEST_SECRET", fx.secret("env"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().map_err(|e| format!("spawn {self:?}: {e}"))?;
        let stdout = reader(
            child.stdout.take(),
            if self == Runner::Bwrap {
                OUTPUT_CAP
            } else {
                64 << 20
            },
        );
        let stderr = reader(child.stderr.take(), OUTPUT_CAP);
        // warden enforces the timeout itself; the harness only bounds its own wait.
        let limit = match self {
            Runner::Bwrap => timeout,
            Runner::Warden(..) => timeout + Duration::from_secs(20),
        };
        let (status, killed) = wait_bounded(&mut child, limit)?;
        let duration = started.elapsed();
        let (out, out_bytes) = collect(stdout);
        let (err, _) = collect(stderr);
        match self {
            Runner::Bwrap => Ok(Outcome {
                stdout: String::from_utf8_lossy(&out).into_owned(),
                stderr: String::from_utf8_lossy(&err).into_owned(),
                stdout_truncated: out_bytes > out.len() as u64,
                stdout_bytes: out_bytes,
                exit_code: status,
                timed_out: killed,
                duration,
                denials: Vec::new(),
                sandbox: None,
            }),
            Runner::Warden(..) => {
                if killed {
                    return Err(format!(
                        "warden did not return within {} s (the harness killed it); stderr {:?}",
                        limit.as_secs(),
                        String::from_utf8_lossy(&err)
                    ));
                }
                parse_warden(&out, &err, status)
            }
        }
    }
}

fn warden_command(
    fx: &Fixture,
    attack: &Attack,
    script: &str,
    user: User,
    build: Build,
) -> Command {
    let warden = env!("CARGO_BIN_EXE_warden");
    let mut argv: Vec<String> = Vec::new();
    if user == User::Unprivileged {
        argv.extend(
            [
                "setpriv",
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
                "--",
            ]
            .map(String::from),
        );
    }
    argv.extend([warden, "run", "--policy"].map(String::from));
    argv.push(fx.policy.to_string_lossy().into_owned());
    argv.push("--workspace".into());
    argv.push(fx.ws.to_string_lossy().into_owned());
    argv.push("--audit-log".into());
    argv.push(fx.audit_log().to_string_lossy().into_owned());
    argv.push("--json".into());
    if let Some(t) = attack.timeout {
        argv.push("--timeout".into());
        argv.push(t.to_string());
    }
    argv.extend(["--", "/bin/sh", "-c"].map(String::from));
    argv.push(script.to_string());
    let mut cmd = launcher(attack, argv);
    cmd.env(
        "WARDEN_SANDBOX_VIEWS",
        if build == Build::View {
            "always"
        } else {
            "off"
        },
    );
    cmd
}

/// Runs `argv` directly, or through bash holding the attack's descriptors open on 7, 8 and 9.
fn launcher(attack: &Attack, argv: Vec<String>) -> Command {
    match &attack.leak_fds {
        None => {
            let (program, args) = argv
                .split_first()
                .map_or(("true", &[][..]), |(p, a)| (p.as_str(), a));
            let mut cmd = Command::new(program);
            cmd.args(args);
            cmd
        }
        Some((read, write)) => {
            let mut cmd = Command::new("bash");
            cmd.arg("-c")
                .arg("exec 7<\"$1\" 8<\"$(dirname \"$1\")\" 9>>\"$2\"; shift 2; exec \"$@\"")
                .arg("launcher")
                .arg(read)
                .arg(write)
                .args(&argv);
            cmd
        }
    }
}

fn bwrap_command(fx: &Fixture, attack: &Attack, script: &str) -> Command {
    let mut argv: Vec<String> = [
        "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "--cap-drop",
        "ALL",
    ]
    .map(String::from)
    .to_vec();
    argv.push("--setenv".into());
    argv.push("HOME".into());
    argv.push(fx.ws.to_string_lossy().into_owned());
    for dir in ["/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc"] {
        let p = Path::new(dir);
        if !p.exists() {
            continue;
        }
        match std::fs::read_link(p) {
            Ok(target) => argv.extend([
                "--symlink".into(),
                target.to_string_lossy().into_owned(),
                dir.into(),
            ]),
            Err(_) => argv.extend(["--ro-bind".into(), dir.into(), dir.into()]),
        }
    }
    let s = |p: &Path| p.to_string_lossy().into_owned();
    argv.extend(["--ro-bind", "/dev/null", "/etc/shadow"].map(String::from));
    argv.extend(["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"].map(String::from));
    argv.extend(["--bind".into(), s(&fx.ws), s(&fx.ws)]);
    for guarded in [".git/hooks", ".git/config", ".warden"] {
        // bwrap can only bind what exists (a case may remove one).
        let p = fx.ws.join(guarded);
        if p.exists() {
            argv.extend(["--ro-bind".into(), s(&p), s(&p)]);
        }
    }
    argv.extend([
        "--ro-bind".into(),
        "/dev/null".into(),
        s(&fx.ws.join(".env")),
    ]);
    argv.extend(["--ro-bind".into(), s(&fx.readable), s(&fx.readable)]);
    argv.extend([
        "--ro-bind".into(),
        "/dev/null".into(),
        s(&fx.readable.join("secret.txt")),
    ]);
    argv.extend([
        "--chdir".into(),
        s(&fx.ws),
        "--".into(),
        "/bin/sh".into(),
        "-c".into(),
        script.into(),
    ]);
    launcher(attack, argv)
}

type Captured = mpsc::Receiver<(Vec<u8>, u64)>;

/// Reads a pipe on a thread, keeping the first `cap` bytes and counting all of them.
fn reader(pipe: Option<impl Read + Send + 'static>, cap: usize) -> Option<Captured> {
    let mut pipe = pipe?;
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut total = 0u64;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    total += n as u64;
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(buf.get(..n.min(room)).unwrap_or_default());
                }
            }
        }
        let _ = tx.send((kept, total));
    });
    Some(rx)
}

/// The captured bytes, waiting at most 3 s more (a survivor may hold the pipe open).
fn collect(rx: Option<Captured>) -> (Vec<u8>, u64) {
    rx.and_then(|rx| rx.recv_timeout(Duration::from_secs(3)).ok())
        .unwrap_or_default()
}

/// Waits for `child` at most `limit`, then kills it. Returns its exit code and whether it was
/// killed by the harness.
fn wait_bounded(child: &mut Child, limit: Duration) -> Result<(Option<i32>, bool), String> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok((status.code(), false));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let status = child.wait().map_err(|e| e.to_string())?;
            return Ok((status.code(), true));
        }
        thread::sleep(Duration::from_millis(10));
    }
}

fn parse_warden(out: &[u8], err: &[u8], status: Option<i32>) -> Result<Outcome, String> {
    let text = String::from_utf8_lossy(out);
    let json: Value = serde_json::from_str(text.trim()).map_err(|e| {
        format!(
            "warden (exit {status:?}) printed no JSON result ({e}): stdout {:?}, stderr {:?}",
            text.chars().take(400).collect::<String>(),
            String::from_utf8_lossy(err)
                .chars()
                .take(400)
                .collect::<String>()
        )
    })?;
    for field in [
        "decision",
        "ran",
        "exit_code",
        "signal",
        "timed_out",
        "duration_ms",
        "stdout",
        "stderr",
        "paths",
        "denials",
        "sandbox",
    ] {
        if json.get(field).is_none() {
            return Err(format!("warden's result has no `{field}` field"));
        }
    }
    if at(&json, "/ran").as_bool() != Some(true) {
        let refused: Vec<String> = at(&json, "/decision/parts")
            .as_array()
            .map(|parts| {
                parts
                    .iter()
                    .filter(|p| at(p, "/verdict").as_str() != Some("allow"))
                    .map(|p| {
                        format!(
                            "{} ({})",
                            at(p, "/reason"),
                            at(p, "/path")
                                .as_str()
                                .map_or(at(p, "/argv").to_string(), String::from)
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        return Err(format!(
            "warden did not run the attack (ran {}, verdict {}): {}",
            at(&json, "/ran"),
            at(&json, "/decision/verdict"),
            refused.join("; ")
        ));
    }
    let stream = |name: &str| -> (String, bool, u64) {
        let s = at(&json, name);
        (
            at(s, "/text").as_str().unwrap_or_default().to_string(),
            at(s, "/truncated").as_bool().unwrap_or(false),
            at(s, "/bytes").as_u64().unwrap_or(0),
        )
    };
    let (stdout, stdout_truncated, stdout_bytes) = stream("stdout");
    let (stderr, _, _) = stream("stderr");
    let denials = at(&json, "/denials")
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| Denial {
                    op: at(d, "/op").as_str().unwrap_or_default().to_string(),
                    target: at(d, "/target").as_str().unwrap_or_default().to_string(),
                    source: at(d, "/source").as_str().unwrap_or_default().to_string(),
                    evidence: at(d, "/evidence").as_str().unwrap_or_default().to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Outcome {
        stdout,
        stderr,
        stdout_truncated,
        stdout_bytes,
        exit_code: at(&json, "/exit_code").as_i64().map(|c| c as i32),
        timed_out: at(&json, "/timed_out").as_bool().unwrap_or(false),
        duration: Duration::from_secs_f64(
            at(&json, "/duration_ms").as_f64().unwrap_or(0.0) / 1000.0,
        ),
        denials,
        sandbox: Some(at(&json, "/sandbox").to_string()),
    })
}

static NULL: Value = Value::Null;

/// The value at a JSON pointer (`/a/b`), or null.
fn at<'a>(v: &'a Value, pointer: &str) -> &'a Value {
    let pointer = if pointer.starts_with('/') {
        pointer.to_string()
    } else {
        format!("/{pointer}")
    };
    v.pointer(&pointer).unwrap_or(&NULL)
}
