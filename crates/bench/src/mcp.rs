//! `warden-bench mcp`: `exec` of `/bin/true` through `warden serve --mcp` over stdio (one server,
//! raw JSON-RPC lines, audit log on), beside `warden run /bin/true` spawned once per call, both
//! measured in the same run. Calls per second are 1 / p50.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use crate::Options;
use crate::stats::{Cell, Report, Row, Summary, measure};

/// Why the mcp bench could not run.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// Setting up the bench failed.
    #[error("{0}")]
    Setup(String),
}

fn setup(e: impl std::fmt::Display) -> McpError {
    McpError::Setup(e.to_string())
}

/// A `warden serve --mcp` child driven line by line.
struct Driver {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Driver {
    fn start(warden: &Path, policy: &Path, ws: &Path, audit: &Path) -> Result<Driver, McpError> {
        let mut child = Command::new(warden)
            .args(["serve", "--mcp", "--policy"])
            .arg(policy)
            .arg("--workspace")
            .arg(ws)
            .arg("--audit-log")
            .arg(audit)
            .current_dir(ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| setup(format!("cannot start {}: {e}", warden.display())))?;
        let stdin = child.stdin.take().ok_or_else(|| setup("no stdin"))?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(|| setup("no stdout"))?);
        let mut d = Driver { child, stdin, stdout, next: 1 };
        d.request(r#""method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"warden-bench","version":"1"}}"#)?;
        d.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        Ok(d)
    }

    fn send(&mut self, line: &str) -> Result<(), McpError> {
        self.stdin.write_all(line.as_bytes()).map_err(setup)?;
        self.stdin.write_all(b"\n").map_err(setup)?;
        self.stdin.flush().map_err(setup)
    }

    /// Sends a request (`"method":...` fields) and returns its answer.
    fn request(&mut self, fields: &str) -> Result<serde_json::Value, McpError> {
        let id = self.next;
        self.next += 1;
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},{fields}}}"#))?;
        for _ in 0..100 {
            let mut line = String::new();
            if self.stdout.read_line(&mut line).map_err(setup)? == 0 {
                return Err(setup("the server closed its stdout"));
            }
            let v: serde_json::Value = serde_json::from_str(&line).map_err(setup)?;
            if v.get("id") == Some(&id.into()) {
                return Ok(v);
            }
        }
        Err(setup(format!("no answer to request {id}")))
    }

    /// One `exec` of `/bin/true`; true when it ran and exited 0.
    fn exec_true(&mut self) -> bool {
        let v = self.request(r#""method":"tools/call","params":{"name":"exec","arguments":{"argv":["/bin/true"]}}"#);
        v.is_ok_and(|v| v.pointer("/result/structuredContent/exit_code") == Some(&0.into()))
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn cell(summary: Summary) -> Cell {
    Cell::Measured { summary, outcome: Some("exit 0".into()) }
}

fn per_second(c: &Cell, label: &str) -> Option<String> {
    match c {
        Cell::Measured { summary, .. } if summary.p50_ns > 0 => {
            Some(format!("{label}: {:.0} calls/s (p50 {:.2} ms)", 1e9 / summary.p50_ns as f64, summary.p50_ns as f64 / 1e6))
        }
        _ => None,
    }
}

/// `warden run /bin/true`, quiet.
fn warden_run(warden: &Path, policy: &Path, ws: &Path, audit: Option<&Path>) -> Command {
    let mut c = Command::new(warden);
    c.arg("run").arg("--policy").arg(policy).arg("--workspace").arg(ws);
    if let Some(a) = audit {
        c.arg("--audit-log").arg(a);
    }
    c.arg("--").arg("/bin/true").current_dir(ws).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    c
}

/// Runs the mcp bench.
pub fn run(opts: &Options) -> Result<Report, McpError> {
    let budget = if opts.quick { Duration::from_millis(500) } else { Duration::from_secs(5) };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).ok_or_else(|| setup("cannot find the repository root"))?;
    let policy = root.join("policies/full-auto.policy");
    let ws = std::env::temp_dir().join(format!("warden-bench-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&ws).map_err(setup)?;
    let ws = ws.canonicalize().map_err(setup)?;
    let audit = std::env::temp_dir().join(format!("warden-bench-mcp-{}.audit", std::process::id()));
    let warden = std::env::current_exe().map_err(setup)?.with_file_name("warden");
    if !warden.exists() {
        return Err(setup(format!("{} is missing: cargo build --release -p warden", warden.display())));
    }

    let mut driver = Driver::start(&warden, &policy, &ws, &audit)?;
    let ours = if driver.exec_true() {
        cell(measure(budget, || driver.exec_true()))
    } else {
        Cell::Missing("exec of /bin/true through the server failed".into())
    };
    drop(driver);

    let mut notes = vec![format!("workspace {}; policy {}; audit log {}", ws.display(), policy.display(), audit.display())];
    let mut per_call = warden_run(&warden, &policy, &ws, Some(&audit));
    if !per_call.status().is_ok_and(|s| s.success()) {
        notes.push("warden run takes no --audit-log in this build: its row runs without one".into());
        per_call = warden_run(&warden, &policy, &ws, None);
    }
    let mut spawn = || per_call.status().is_ok_and(|s| s.success());
    let peer = if spawn() { cell(measure(budget, &mut spawn)) } else { Cell::Missing("warden run /bin/true failed".into()) };

    notes.extend(per_second(&ours, "mcp exec over stdio"));
    notes.extend(per_second(&peer, "warden run per call"));
    let _ = std::fs::remove_dir_all(&ws);
    let _ = std::fs::remove_file(&audit);
    let rows = vec![Row {
        group: "exec".into(),
        case: "/bin/true: tools/call exec on one server vs one warden run process per call".into(),
        rules: None,
        ours,
        peer,
        impls: Some(("warden-mcp", "warden-run")),
    }];
    Ok(Report { bench: "mcp", ours: "warden-mcp", peer: "warden-run", notes, rows })
}
