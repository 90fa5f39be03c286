//! `warden serve --mcp`: raw JSON-RPC over the binary's stdio (malformed input, unknown tools,
//! wrong argument types, huge input: each a JSON-RPC error, and the server goes on), the official
//! Python client (tests/mcp/client_test.py) and the conformance suite (tests/mcp/conformance.sh).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

use crate::support::{repo, tempdir, warden};

/// A server on the other end of a pipe, answering line by line.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// The workspace it serves.
    ws: std::path::PathBuf,
    /// Its audit log, unless the test named one.
    log: std::path::PathBuf,
}

impl Server {
    fn start(policy: &str) -> Server {
        Server::start_at(&repo().join("policies").join(policy))
    }

    fn start_at(policy: &std::path::Path) -> Server {
        Server::start_with(policy, &[])
    }

    fn start_with(policy: &std::path::Path, extra: &[&std::ffi::OsStr]) -> Server {
        let mut s = Server::spawn(policy, extra);
        s.initialize();
        s
    }

    /// A server not initialised yet.
    fn spawn(policy: &std::path::Path, extra: &[&std::ffi::OsStr]) -> Server {
        let ws = tempdir("mcp-raw");
        std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();
        let home = tempdir("mcp-home");
        // Each server keeps its own log unless the test names one.
        let log = home.join("audit.jsonl");
        let own_log: Vec<&std::ffi::OsStr> =
            if extra.iter().any(|a| *a == "--audit-log") { Vec::new() } else { vec!["--audit-log".as_ref(), log.as_os_str()] };
        let mut child = warden(&ws, &home)
            .args(["serve", "--mcp", "--workspace"])
            .arg(&ws)
            .args(&own_log)
            .arg("--policy")
            .arg(policy)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server { child, stdin: Some(stdin), lines, ws, log }
    }

    fn initialize(&mut self) {
        let init = self.request(
            1,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"it","version":"1"}}}"#,
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "warden", "{init}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the server's stdin.
    fn hang_up(&mut self) {
        self.stdin.take();
    }

    /// Every line until the one answering `id` (a minute at most).
    fn lines_until(&mut self, id: serde_json::Value) -> Vec<serde_json::Value> {
        let mut seen = Vec::new();
        loop {
            let line = self.lines.recv_timeout(std::time::Duration::from_secs(60)).expect("no answer within a minute");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            let done = v["id"] == id;
            seen.push(v);
            if done {
                return seen;
            }
        }
    }

    /// Waits (`secs` at most) for the server to exit; whether it did.
    fn exits_within(&mut self, secs: u64) -> bool {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        while std::time::Instant::now() < end {
            if self.child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        false
    }

    /// The next message answering `id` (messages for other ids in between are skipped, at most 20).
    fn answer(&mut self, id: serde_json::Value) -> serde_json::Value {
        for _ in 0..20 {
            let line = self.lines.recv_timeout(std::time::Duration::from_secs(120)).expect("no answer within two minutes");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if v["id"] == id {
                return v;
            }
        }
        panic!("no answer to id {id}");
    }

    /// The next logging notification whose text contains `text` (other lines skipped, at most 50).
    fn notification(&mut self, text: &str) -> String {
        for _ in 0..50 {
            let line = self.lines.recv_timeout(std::time::Duration::from_secs(60)).expect("no notification within a minute");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["method"] == "notifications/message" && v["params"]["data"].as_str().unwrap_or("").contains(text) {
                return v["params"]["data"].as_str().unwrap().to_string();
            }
        }
        panic!("no notification saying `{text}`");
    }

    fn request(&mut self, id: i64, line: &str) -> serde_json::Value {
        self.send(line);
        self.answer(id.into())
    }

    fn call(&mut self, id: i64, tool: &str, args: &str) -> serde_json::Value {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#);
        self.request(id, &line)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn error_code(v: &serde_json::Value) -> i64 {
    v["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {v}"))
}

#[test]
fn malformed_input_gets_json_rpc_errors_and_the_server_goes_on() {
    let mut s = Server::start("full-auto.policy");
    // Text that is not JSON: a parse error with a null id.
    s.send("{this is not json");
    let v = s.answer(serde_json::Value::Null);
    assert_eq!(error_code(&v), -32700, "{v}");
    // JSON that is not a JSON-RPC message, and a batch: invalid request.
    s.send(r#"{"jsonrpc":"2.0","id":2}"#);
    assert_eq!(error_code(&s.answer(2.into())), -32600);
    s.send("[1, 2, 3]");
    assert_eq!(error_code(&s.answer(serde_json::Value::Null)), -32600);
    // Unknown method, unknown tool, wrong argument types, a malformed tools/call.
    assert_eq!(error_code(&s.request(3, r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method"}"#)), -32601);
    let v = s.call(4, "no_such_tool", "{}");
    assert_eq!(error_code(&v), -32602);
    assert!(v["error"]["message"].as_str().unwrap().contains("unknown tool `no_such_tool`"), "{v}");
    let v = s.call(5, "read_file", r#"{"path": 5}"#);
    assert_eq!(error_code(&v), -32602);
    assert!(v["error"]["message"].as_str().unwrap().contains("invalid type"), "{v}");
    assert_eq!(error_code(&s.call(6, "exec", r#"{"command": "ls", "timeout_secs": "soon"}"#)), -32602);
    assert_eq!(error_code(&s.call(7, "exec", r#"{"command": "ls", "argv": ["ls"]}"#)), -32602);
    assert_eq!(error_code(&s.call(8, "read_file", r#"{"path": "a.txt", "extra": 1}"#)), -32602);
    assert_eq!(error_code(&s.request(9, r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":7}}"#)), -32602);
    assert_eq!(error_code(&s.request(10, r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"x"}"#)), -32602);
    // Huge input: an argument over the argument cap, and a line over the line cap.
    let big = "x".repeat(9 << 20);
    let v = s.call(11, "write_file", &format!(r#"{{"path": "big.txt", "content": "{big}"}}"#));
    assert_eq!(error_code(&v), -32602);
    assert!(v["error"]["message"].as_str().unwrap().contains("the cap is"), "{}", &v.to_string()[..200]);
    let huge = format!(r#"{{"jsonrpc":"2.0","id":12,"method":"ping","params":{{"pad":"{}"}}}}"#, "y".repeat(17 << 20));
    s.send(&huge);
    let v = s.answer(serde_json::Value::Null);
    assert_eq!(error_code(&v), -32600);
    assert!(v["error"]["message"].as_str().unwrap().contains("longer than the cap"), "{v}");
    // Still serving: a ping and a tool call work.
    assert!(s.request(13, r#"{"jsonrpc":"2.0","id":13,"method":"ping"}"#)["result"].is_object());
    let v = s.call(14, "read_file", r#"{"path": "a.txt"}"#);
    assert_eq!(v["result"]["structuredContent"]["result"]["content"], "alpha\n", "{v}");
}

/// Regression (red team): a notification before `initialize` ended the server ("expect
/// initialized request"); requests with an id that is not a string or a number got no answer;
/// a bad `logging/setLevel` got -32601; `initialize` without `protocolVersion` a message about
/// `_meta`.
#[test]
fn protocol_errors_get_the_codes_the_spec_says() {
    let mut s = Server::spawn(&repo().join("policies/full-auto.policy"), &[]);
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let v = s.request(1, r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"it","version":"1"}}}"#);
    assert_eq!(error_code(&v), -32602, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("protocolVersion"), "{v}");
    s.initialize();
    for id in [r#"{"a":1}"#, "null", "true", "[1]"] {
        s.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        let v = s.answer(serde_json::Value::Null);
        assert_eq!(error_code(&v), -32600, "id {id}: {v}");
    }
    for params in [r#"{"level":"loud"}"#, "{}"] {
        let v = s.request(3, &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{params}}}"#));
        assert_eq!(error_code(&v), -32602, "{params}: {v}");
    }
    assert!(s.request(4, r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"debug"}}"#)["result"].is_object());
    assert!(s.request(5, r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#)["result"].is_object());
}

#[test]
fn tools_list_exec_and_a_deny_with_its_rule() {
    let mut s = Server::start("full-auto.policy");
    let v = s.request(2, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let names: Vec<&str> = v["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read_file", "list_dir", "search", "write_file", "edit_file", "exec", "explain"]);
    for t in v["result"]["tools"].as_array().unwrap() {
        assert_eq!(t["outputSchema"]["type"], "object", "{t}");
    }
    let v = s.call(3, "exec", r#"{"command": "cat a.txt"}"#);
    let sc = &v["result"]["structuredContent"];
    assert_eq!((sc["ran"].as_bool(), sc["exit_code"].as_i64()), (Some(true), Some(0)), "{v}");
    assert_eq!(sc["stdout"]["text"], "alpha\n");
    let v = s.call(4, "exec", r#"{"command": "rm a.txt"}"#);
    let sc = &v["result"]["structuredContent"];
    assert_eq!(sc["decision"]["verdict"], "deny", "{v}");
    assert_eq!(sc["decision"]["rules"][0]["text"], "exec rm");
    assert_eq!(v["result"]["isError"], true);
}

#[test]
fn readonly_hides_the_write_tools_and_refuses_them() {
    let mut s = Server::start("readonly.policy");
    let v = s.request(2, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let names: Vec<&str> = v["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"write_file") && !names.contains(&"edit_file") && names.contains(&"read_file"), "{names:?}");
    let v = s.call(3, "write_file", r#"{"path": "b.txt", "content": "x"}"#);
    assert!(v["error"]["message"].as_str().unwrap().contains("denied to this agent"), "{v}");
}

/// Runs scripts/mcp-setup; `None` (with the reason printed) when it reports being offline.
fn setup() -> Option<std::path::PathBuf> {
    let out = Command::new(repo().join("scripts/mcp-setup")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        eprintln!("skipped: {err}");
        return None;
    }
    assert!(out.status.success(), "scripts/mcp-setup failed: {err}");
    Some(std::env::var_os("WARDEN_MCP_DEPS").map_or_else(|| repo().join("target/mcp-deps"), Into::into))
}

#[test]
fn the_official_python_client_passes_its_checks() {
    let Some(deps) = setup() else { return };
    let out = Command::new(deps.join("venv/bin/python"))
        .arg(repo().join("tests/mcp/client_test.py"))
        .arg(env!("CARGO_BIN_EXE_warden"))
        .arg(repo())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("checks passed"), "{text}");
}

#[test]
fn the_conformance_suite_passes_every_applicable_scenario() {
    if setup().is_none() {
        return;
    }
    let out = Command::new(repo().join("tests/mcp/conformance.sh")).arg(env!("CARGO_BIN_EXE_warden")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("all failures are expected"), "{text}");
}

#[test]
fn a_changed_policy_is_reloaded_and_a_broken_edit_keeps_the_old_one() {
    let dir = tempdir("mcp-reload");
    let policy = dir.join("p.policy");
    std::fs::write(&policy, "version 1\ndefault deny\n\ntier read: allow {\n    exec echo\n}\n").unwrap();
    let mut s = Server::start_at(&policy);
    let verdict = |s: &mut Server, id| s.call(id, "explain", r#"{"command": "cat a.txt"}"#)["result"]["structuredContent"]["decision"]["verdict"].clone();
    assert_eq!(verdict(&mut s, 2), "deny");
    std::fs::write(&policy, "version 1\ndefault deny\n\ntier read: allow {\n    exec echo, cat\n}\n").unwrap();
    s.notification("reloaded");
    assert_eq!(verdict(&mut s, 3), "allow");
    std::fs::write(&policy, "version 1\nthis is not a policy\n").unwrap();
    let note = s.notification("does not load");
    assert!(note.contains("p.policy:2"), "{note}");
    assert_eq!(verdict(&mut s, 4), "allow");
}

/// A server process, killed and reaped when dropped (also when the test fails).
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `warden serve --mcp --http 127.0.0.1:0` with `extra` flags; returns it and its address.
fn http_server(extra: &[&str]) -> (Reaped, String) {
    http_server_in(&tempdir("mcp-http"), extra)
}

/// [`http_server`] serving the workspace `ws`.
fn http_server_in(ws: &std::path::Path, extra: &[&str]) -> (Reaped, String) {
    http_server_under("full-auto", ws, extra)
}

/// [`http_server_in`] under the shipped policy `policy`.
fn http_server_under(policy: &str, ws: &std::path::Path, extra: &[&str]) -> (Reaped, String) {
    let home = tempdir("mcp-home");
    let mut child = warden(ws, &home)
        .args(["serve", "--mcp", "--no-reload", "--workspace"])
        .arg(ws)
        .arg("--policy")
        .arg(repo().join(format!("policies/{policy}.policy")))
        .args(["--http", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("warden: serving MCP at http://").and_then(|a| a.strip_suffix("/mcp")).unwrap_or_else(|| panic!("{line}"));
    (Reaped(child), addr.to_string())
}

/// One HTTP/1.1 POST of an `initialize` request; the status code and the response text.
fn post_initialize(addr: &str, auth: Option<&str>) -> (u16, String) {
    use std::io::Read;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"it","version":"1"}}}"#;
    let auth = auth.map(|a| format!("Authorization: {a}\r\n")).unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, response)
}

#[test]
fn http_with_a_token_answers_401_without_it() {
    let dir = tempdir("mcp-token");
    let token = dir.join("token");
    std::fs::write(&token, "s3cret-token\n").unwrap();
    // A token file others may read guards nothing: refused.
    let ws = tempdir("mcp-token-ws");
    let out = warden(&ws, &dir)
        .args(["serve", "--mcp", "--no-reload", "--policy"])
        .arg(repo().join("policies/full-auto.policy"))
        .args(["--http", "127.0.0.1:0", "--token-file", token.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("may be read by"), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let (_server, addr) = http_server(&["--token-file", token.to_str().unwrap()]);
    assert_eq!(post_initialize(&addr, None).0, 401);
    assert_eq!(post_initialize(&addr, Some("Bearer wrong-token")).0, 401);
    assert_eq!(post_initialize(&addr, Some("Bearer s3cret-token!")).0, 401);
    let (status, text) = post_initialize(&addr, Some("Bearer s3cret-token"));
    assert_eq!(status, 200, "{text}");
    assert!(text.contains(r#""serverInfo":{"name":"warden""#), "{text}");
    assert_eq!(post_initialize(&addr, Some("bearer s3cret-token")).0, 200, "the scheme is case-insensitive");
}

/// Regression (red team): without a token, any local user's process was served (it read a
/// root-only file through `read_file`) and approved its own `ask`.
#[test]
fn http_without_a_token_serves_only_this_user_and_settles_no_ask() {
    let ws = tempdir("mcp-http-user");
    std::fs::write(ws.join("notes.txt"), "x\n").unwrap();
    let (_server, addr) = http_server_in(&ws, &[]);
    assert_eq!(post_initialize(&addr, None).0, 200);
    if std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m)).ok() == Some(0) {
        // Another user's process: `nobody`, through setpriv and python's socket.
        let code = format!(
            "import socket; s=socket.create_connection(('{}', {})); s.sendall(b'POST /mcp HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n'); print(s.recv(100).decode().split()[1])",
            addr.rsplit_once(':').unwrap().0,
            addr.rsplit_once(':').unwrap().1
        );
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/python3", "-c", &code])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "403", "{}", String::from_utf8_lossy(&out.stderr));
    }
    // An ask (default.policy asks for writes) is refused, not put to whoever connected.
    let (_server, addr) = http_server_under("default", &ws, &[]);
    let sid = http_session(&addr);
    let headers = [("Mcp-Session-Id", sid.as_str()), ("Mcp-Protocol-Version", "2025-06-18")];
    let body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"w.txt","content":"x"}}}"#;
    let (status, text) = http_request(&addr, "POST", &headers, body);
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("without a token"), "{text}");
    assert!(!ws.join("w.txt").exists());
}

#[test]
fn http_off_loopback_without_a_token_refuses_to_start() {
    let ws = tempdir("mcp-http-refuse");
    let home = tempdir("mcp-home");
    let out = warden(&ws, &home)
        .args(["serve", "--mcp", "--no-reload", "--policy"])
        .arg(repo().join("policies/full-auto.policy"))
        .args(["--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs --token-file"), "{err}");
}

#[test]
fn every_call_is_audited_and_the_log_verifies() {
    let dir = tempdir("mcp-audit");
    let log = dir.join("audit.jsonl");
    let mut s = Server::start_with(&repo().join("policies/full-auto.policy"), &["--audit-log".as_ref(), log.as_os_str()]);
    let v = s.call(2, "exec", r#"{"command": "echo audited"}"#);
    assert_eq!(v["result"]["structuredContent"]["ran"], true, "{v}");
    assert!(v["result"]["structuredContent"]["audit"]["seq"].is_u64(), "{v}");
    s.call(3, "exec", r#"{"command": "rm -rf ."}"#);
    s.call(4, "write_file", r#"{"path": "w.txt", "content": "x"}"#);
    let text = std::fs::read_to_string(&log).unwrap();
    let entries: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let tools: Vec<&str> = entries.iter().filter_map(|e| e["tool"].as_str()).collect();
    assert!(tools.contains(&"exec") && tools.contains(&"write_file"), "{text}");
    assert!(text.contains("rm -rf ."), "the denied command is recorded: {text}");
    let out = warden(&dir, &dir).args(["audit", "verify"]).arg(&log).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_sub_agent_server_gets_no_more_than_its_parent() {
    let dir = tempdir("mcp-sub");
    let policy = dir.join("agents.policy");
    std::fs::write(
        &policy,
        "version 1\ndefault deny\n\
         tier read: allow {\n    tools read_file, list_dir, search\n    exec cat, ls\n    fs read \"${workspace}/**\", \"/usr/**\", \"/lib/**\", \"/lib64/**\", \"/bin/**\", \"/etc/**\"\n}\n\
         tier write: allow {\n    tools write_file, edit_file\n    exec touch\n    fs write \"${workspace}/**\"\n}\n\
         agent coder {\n    tiers read, write\n}\nagent planner {\n    tiers read\n}\n",
    )
    .unwrap();
    let tools = |s: &mut Server| {
        let v = s.request(2, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
        v["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let mut alone = Server::start_with(&policy, &["--agent".as_ref(), "coder".as_ref()]);
    assert!(tools(&mut alone).contains(&"write_file".to_string()));
    let mut sub = Server::start_with(&policy, &["--agent".as_ref(), "coder".as_ref(), "--parent".as_ref(), "planner@s1".as_ref()]);
    let names = tools(&mut sub);
    assert!(!names.contains(&"write_file".to_string()) && names.contains(&"read_file".to_string()), "{names:?}");
    let v = sub.call(3, "exec", r#"{"command": "touch b.txt"}"#);
    let sc = &v["result"]["structuredContent"];
    assert_eq!(sc["decision"]["verdict"], "deny", "{v}");
    assert!(sc["decision"]["reason"].as_str().unwrap().contains("parent agent planner"), "{v}");
    let v = sub.call(4, "exec", r#"{"command": "cat a.txt"}"#);
    assert_eq!(v["result"]["structuredContent"]["stdout"]["text"], "alpha\n", "{v}");
}

#[test]
fn a_long_exec_does_not_hold_back_other_calls() {
    let mut s = Server::start("full-auto.policy");
    s.send(r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 3; echo slept"}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}"#);
    let first = s.lines.recv_timeout(std::time::Duration::from_secs(60)).expect("no answer");
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["id"], 11, "read_file waited for the exec: {v}");
    let v = s.answer(10.into());
    assert_eq!(v["result"]["structuredContent"]["stdout"]["text"], "slept\n", "{v}");
}

/// The outcome records of `exec` in an audit log.
fn exec_outcomes(log: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let entries = text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    entries.filter(|e| e["tool"] == "exec" && e["outcome"].is_object()).map(|e| e["outcome"].clone()).collect()
}

/// Regression (red team): `notifications/cancelled` left the command running; it made its
/// marker, was audited as run, and its result was sent.
#[test]
fn a_cancelled_exec_is_killed_audited_as_cancelled_and_not_answered() {
    let mut s = Server::start("full-auto.policy");
    let started = std::time::Instant::now();
    s.send(r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 3; touch cancelled-marker"}}}"#);
    std::thread::sleep(std::time::Duration::from_secs(1));
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":20,"reason":"user cancelled"}}"#);
    // Past the command's own end: it would have made the marker by now.
    std::thread::sleep(std::time::Duration::from_secs(4).saturating_sub(started.elapsed()) + std::time::Duration::from_millis(1500));
    assert!(!s.ws.join("cancelled-marker").exists(), "the cancelled command ran to its end");
    s.send(r#"{"jsonrpc":"2.0","id":21,"method":"ping"}"#);
    let seen = s.lines_until(21.into());
    assert!(seen.iter().all(|v| v["id"] != 20), "the cancelled call was answered: {seen:?}");
    let outcomes = exec_outcomes(&s.log);
    let last = outcomes.last().expect("an exec outcome is recorded");
    assert_eq!(last["cancelled"], true, "{last}");
}

/// A cancelled call on the WASI backend ran its tool to its end (or its timeout): the helper
/// now stops it at its next clock tick.
#[test]
fn a_cancelled_wasi_exec_is_stopped_and_audited_as_cancelled() {
    let dir = tempdir("mcp-wasi-cancel");
    let policy = dir.join("p.policy");
    let text = "version 1\ndefault deny\n\ntier read: allow {\n    exec cat\n    fs read \"${workspace}/**\"\n    sandbox wasi image toolbox\n    limits { timeout 20s }\n}\n";
    std::fs::write(&policy, text).unwrap();
    let mut s = Server::start_at(&policy);
    // 64 MiB of zeros taking no disk, read 400 times: far past the timeout.
    std::fs::File::create(s.ws.join("z")).unwrap().set_len(64 << 20).unwrap();
    let argv: Vec<&str> = std::iter::once("cat").chain(std::iter::repeat_n("z", 400)).collect();
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 40, "method": "tools/call", "params": {"name": "exec", "arguments": {"argv": argv}}});
    s.send(&call.to_string());
    std::thread::sleep(std::time::Duration::from_secs(1));
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":40,"reason":"user cancelled"}}"#);
    // The outcome is recorded when the run ends: within seconds, not at the 20 s timeout.
    let asked = std::time::Instant::now();
    let mut outcomes = exec_outcomes(&s.log);
    while outcomes.is_empty() && asked.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(100));
        outcomes = exec_outcomes(&s.log);
    }
    let last = outcomes.last().expect("an exec outcome is recorded");
    assert!(asked.elapsed() < std::time::Duration::from_secs(5), "the run ended {:?} after the cancel", asked.elapsed());
    assert_eq!((last["cancelled"].clone(), last["timed_out"].clone()), (true.into(), false.into()), "{last}");
    s.send(r#"{"jsonrpc":"2.0","id":41,"method":"ping"}"#);
    let seen = s.lines_until(41.into());
    assert!(seen.iter().all(|v| v["id"] != 40), "the cancelled call was answered: {seen:?}");
}

/// Regression (red team): with stdin closed, the server lived on until a running command ended.
#[test]
fn closing_stdin_cancels_a_running_exec_and_the_server_exits() {
    let mut s = Server::start("full-auto.policy");
    s.send(r#"{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 60"}}}"#);
    std::thread::sleep(std::time::Duration::from_secs(1));
    let closed = std::time::Instant::now();
    s.hang_up();
    assert!(s.exits_within(20), "the server outlived its stdin by 20 s");
    eprintln!("exited {:.1} s after stdin closed", closed.elapsed().as_secs_f64());
    assert!(closed.elapsed() < std::time::Duration::from_secs(3), "the server took {:?} to exit", closed.elapsed());
    let outcomes = exec_outcomes(&s.log);
    assert_eq!(outcomes.last().map(|o| o["cancelled"].clone()), Some(true.into()), "{outcomes:?}");
}

/// One HTTP/1.1 request to `/mcp` (30 s at most); the status code and the response text.
fn http_request(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    use std::io::Read;
    let mut head = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()));
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, response)
}

/// An initialized HTTP session on `addr`: its `Mcp-Session-Id`.
fn http_session(addr: &str) -> String {
    http_session_with(addr, &[])
}

/// [`http_session`] with `extra` headers on each request (a bearer token).
fn http_session_with(addr: &str, extra: &[(&str, &str)]) -> String {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"it","version":"1"}}}"#;
    let (status, text) = http_request(addr, "POST", extra, init);
    assert_eq!(status, 200, "{text}");
    let sid = text.lines().find_map(|l| l.to_ascii_lowercase().strip_prefix("mcp-session-id:").map(|_| l[15..].trim().to_string()));
    let sid = sid.unwrap_or_else(|| panic!("no session id: {text}"));
    let mut headers = vec![("Mcp-Session-Id", sid.as_str()), ("Mcp-Protocol-Version", "2025-06-18")];
    headers.extend_from_slice(extra);
    let (status, text) = http_request(addr, "POST", &headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(status, 202, "{text}");
    sid
}

/// Regression: the audit records of a call that came over HTTP did not say which client sent
/// it. Each record of the call names the peer, the uid owning its socket (loopback) and
/// whether a bearer token authenticated it, never the token; `warden audit query --client`
/// finds them.
#[test]
fn http_records_name_the_client_of_each_call_and_audit_query_finds_them() {
    let dir = tempdir("mcp-client");
    let token = dir.join("token");
    std::fs::write(&token, "client-s3cret-token\n").unwrap();
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let me = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m)).unwrap();
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"command":"echo from-http"}}}"#;
    for (name, with_token) in [("with-token", true), ("without", false)] {
        let log = dir.join(format!("{name}.jsonl"));
        let mut extra = vec!["--audit-log", log.to_str().unwrap()];
        if with_token {
            extra.extend(["--token-file", token.to_str().unwrap()]);
        }
        let (server, addr) = http_server_in(&tempdir("mcp-client-ws"), &extra);
        let auth: &[(&str, &str)] = if with_token { &[("Authorization", "Bearer client-s3cret-token")] } else { &[] };
        let sid = http_session_with(&addr, auth);
        let mut headers = vec![("Mcp-Session-Id", sid.as_str()), ("Mcp-Protocol-Version", "2025-06-18")];
        headers.extend_from_slice(auth);
        let (status, text) = http_request(&addr, "POST", &headers, call);
        assert!(status == 200 && text.contains("from-http"), "{text}");
        drop(server);
        let records = warden_audit::read(&log).unwrap();
        let calls: Vec<_> = records.iter().filter(|r| r.entry.tool == "exec").collect();
        assert_eq!(calls.len(), 2, "a decision and an outcome: {records:?}");
        for r in &calls {
            let c = r.entry.client.as_ref().unwrap_or_else(|| panic!("no client on {r:?}"));
            assert_eq!((c.transport.as_str(), c.uid, c.bearer), ("http", Some(me), with_token), "{c:?}");
            assert!(c.addr.starts_with("127.0.0.1:"), "{c:?}");
        }
        assert!(!std::fs::read_to_string(&log).unwrap().contains("client-s3cret-token"), "the token reached the log");
        let query = |filter: &str| {
            let out = warden(&dir, &dir).args(["audit", "query", "--json", "--client", filter]).arg(&log).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).lines().count()
        };
        assert_eq!((query(&format!("uid={me}")), query("127.0.0.1"), query("10.0.0.1")), (2, 2, 0));
        let out = warden(&dir, &dir).args(["audit", "query"]).arg(&log).output().unwrap();
        let table = String::from_utf8_lossy(&out.stdout);
        assert!(table.lines().next().unwrap_or_default().contains("CLIENT"), "{table}");
        assert_eq!(table.contains(&format!("uid={me} +token")), with_token, "{table}");
    }
}

/// Regression: a client could open MCP sessions over HTTP without bound, each held until it
/// had been idle 5 minutes. At most 64 live at once; one past the cap gets HTTP 503 with a
/// JSON-RPC error, the live ones are still served, and ending one makes room.
#[test]
fn http_sessions_are_capped_and_one_past_the_cap_gets_a_json_rpc_error() {
    let (_server, addr) = http_server(&[]);
    let sids: Vec<String> = (0..64).map(|_| http_session(&addr)).collect();
    let (status, text) = post_initialize(&addr, None);
    assert_eq!(status, 503, "{text}");
    assert!(text.contains(r#""code":-32000"#) && text.contains("too many MCP sessions"), "{text}");
    assert!(text.to_ascii_lowercase().contains("retry-after:"), "{text}");
    let live = [("Mcp-Session-Id", sids[63].as_str()), ("Mcp-Protocol-Version", "2025-06-18")];
    let (status, text) = http_request(&addr, "POST", &live, r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    assert_eq!(status, 200, "a live session is still served: {text}");
    let (status, text) = http_request(&addr, "DELETE", &[("Mcp-Session-Id", sids[0].as_str()), ("Mcp-Protocol-Version", "2025-06-18")], "");
    assert_eq!(status, 200, "{text}");
    assert_eq!(post_initialize(&addr, None).0, 200, "ending a session makes room");
}

/// Regression (red team): ending an HTTP session (DELETE) left its running exec running.
#[test]
fn ending_an_http_session_cancels_its_running_exec() {
    let ws = tempdir("mcp-http-delete");
    let (_server, addr) = http_server_in(&ws, &[]);
    let sid = http_session(&addr);
    let started = std::time::Instant::now();
    let call = {
        let (addr, sid) = (addr.clone(), sid.clone());
        std::thread::spawn(move || {
            let headers = [("Mcp-Session-Id", sid.as_str()), ("Mcp-Protocol-Version", "2025-06-18")];
            let body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 3; touch http-marker"}}}"#;
            http_request(&addr, "POST", &headers, body)
        })
    };
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (status, text) = http_request(&addr, "DELETE", &[("Mcp-Session-Id", sid.as_str()), ("Mcp-Protocol-Version", "2025-06-18")], "");
    assert!((200..300).contains(&status), "{text}");
    std::thread::sleep(std::time::Duration::from_secs(4).saturating_sub(started.elapsed()) + std::time::Duration::from_millis(1500));
    assert!(!ws.join("http-marker").exists(), "the exec of the ended session ran to its end");
    let _ = call.join();
}

/// Regression (red team): a request from any web page's Origin was served (the spec says a
/// server MUST validate Origin and answer 403 to one that is not allowed); a session DELETE
/// answered 202, where the Python SDK expects 200 or 204.
#[test]
fn http_refuses_a_foreign_origin_and_a_delete_answers_200() {
    let (_server, addr) = http_server(&[]);
    let port = addr.rsplit(':').next().unwrap().to_string();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"it","version":"1"}}}"#;
    for origin in ["http://evil.example.com", "null", "http://127.0.0.1:1", &format!("https://127.0.0.1:{port}"), &format!("http://127.0.0.1:{port}.evil.example")] {
        let (status, text) = http_request(&addr, "POST", &[("Origin", origin)], init);
        assert_eq!(status, 403, "{origin}: {text}");
    }
    for origin in [format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")] {
        let (status, text) = http_request(&addr, "POST", &[("Origin", &origin)], init);
        assert_eq!(status, 200, "{origin}: {text}");
    }
    let sid = http_session(&addr);
    let (status, text) = http_request(&addr, "DELETE", &[("Mcp-Session-Id", sid.as_str()), ("Mcp-Protocol-Version", "2025-06-18")], "");
    assert_eq!(status, 200, "{text}");
}
