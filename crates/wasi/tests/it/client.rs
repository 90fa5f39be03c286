//! The client of the helper process, against stand-in helpers (shell scripts) that answer,
//! refuse, exit, garble or stay silent: every failure is an error, and nothing hangs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use warden_wasi::{Call, Client, Error, Limits};

/// A stand-in helper: `body` runs for each request line, with `$id` set to its id.
///
/// A child `sh` writes the file, never this process: tests run on threads side by side, and a
/// descriptor this process held open for writing would be inherited by a helper another test
/// forks at that moment, so starting this one would fail with "Text file busy" (ETXTBSY).
fn helper(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\n[ \"$1\" = --cache ] || exit 9\nwhile IFS= read -r line; do\n  id=$(printf '%s' \"$line\" | sed 's/^{{\"id\":\\([0-9]*\\).*/\\1/')\n  {body}\ndone\n"
    );
    let written = std::process::Command::new("/bin/sh")
        .args(["-c", r#"printf '%s' "$1" > "$2" && chmod 755 "$2""#, "sh", &script])
        .arg(&path)
        .status()
        .unwrap();
    assert!(written.success(), "cannot write {}", path.display());
    path
}

const RUN: &str = r#"{"exit_code":0,"signal":null,"timed_out":false,"duration_ms":1.5,"stdout":{"text":"hi","truncated":false,"bytes":2},"stderr":{"text":"","truncated":false,"bytes":0},"denials":[],"sandbox":{"backend":"wasi","landlock_abi":null,"seccomp":false,"namespaces":[]}}"#;

fn call(timeout: Duration) -> Call {
    Call {
        image: "toolbox".into(),
        argv: vec!["cat".into(), "a b\n\"c\"".into()],
        preopens: Vec::new(),
        cwd: "/".into(),
        env: vec![("K".into(), "v".into())],
        stdin: b"in\n".to_vec(),
        limits: Limits { timeout, ..Limits::default() },
        network: false,
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("client-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn answers_come_back_to_their_callers_side_by_side() {
    let dir = scratch("answers");
    let program = helper(&dir, "ok", &format!("printf '{{\"id\":%s,\"result\":{{\"Ok\":{RUN}}}}}\\n' \"$id\""));
    let client = Client::new(&program, &dir);
    let runs: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(|| client.run(&call(Duration::from_secs(5))))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in runs {
        let run = run.unwrap();
        assert_eq!((run.exit_code, run.stdout.text.as_str(), run.sandbox.backend.as_str()), (Some(0), "hi", "wasi"));
    }
    // The same helper serves the next call.
    assert!(client.run(&call(Duration::from_secs(5))).is_ok());
}

#[test]
fn a_refusal_is_relayed_as_the_helpers_own_words() {
    let dir = scratch("refuse");
    let program = helper(&dir, "refuse", r#"printf '{"id":%s,"result":{"Err":"image `toolbox` has no tool `cat`"}}\n' "$id""#);
    let err = Client::new(&program, &dir).run(&call(Duration::from_secs(5))).unwrap_err();
    assert!(matches!(&err, Error::Relayed(m) if m.contains("no tool `cat`")), "{err:?}");
}

#[test]
fn a_missing_helper_is_named() {
    let dir = scratch("missing");
    let err = Client::new(&dir.join("warden-wasi"), &dir).run(&call(Duration::from_secs(5))).unwrap_err();
    assert!(matches!(&err, Error::Helper(m) if m.contains("warden-wasi") && m.contains("missing")), "{err:?}");
}

#[test]
fn a_helper_that_exits_or_garbles_is_an_error_and_is_started_again() {
    let dir = scratch("exits");
    for (name, body) in [("exits", "exit 3"), ("garbles", "echo 'not json'"), ("wrong-id", r#"printf '{"id":999999,"result":{"Err":"x"}}\n'; exit 0"#)] {
        let client = Client::new(&helper(&dir, name, body), &dir);
        for _ in 0..2 {
            let err = client.run(&call(Duration::from_secs(5))).unwrap_err();
            assert!(matches!(err, Error::Helper(_)), "{name}: {err:?}");
        }
    }
}

#[test]
fn a_silent_helper_is_killed_after_the_timeout_and_its_grace() {
    let dir = scratch("silent");
    let client = Client::new(&helper(&dir, "silent", ":"), &dir).with_grace(Duration::from_millis(300));
    let started = Instant::now();
    let err = client.run(&call(Duration::from_millis(200))).unwrap_err();
    assert!(matches!(&err, Error::Helper(m) if m.contains("killed")), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(20), "waited {:?}", started.elapsed());
}

#[test]
fn a_cancelled_call_asks_the_helper_to_stop_it_and_gets_its_answer() {
    let dir = scratch("cancel");
    // Answers a request only once it was asked to cancel it, with a run that says so.
    let cancelled = RUN.replace("\"timed_out\":false", "\"timed_out\":false,\"cancelled\":true");
    let body = format!(
        "case \"$line\" in *'\"cancel\":'*) id=$(printf '%s' \"$line\" | tr -dc 0-9); printf '{{\"id\":%s,\"result\":{{\"Ok\":{cancelled}}}}}\\n' \"$id\";; esac"
    );
    let client = Client::new(&helper(&dir, "cancel", &body), &dir);
    let asked = Instant::now();
    let when = asked + Duration::from_millis(200);
    let run = client.run_until(&call(Duration::from_secs(30)), &|| Instant::now() >= when).unwrap();
    assert!(run.cancelled, "{run:?}");
    assert!(asked.elapsed() < Duration::from_secs(5), "{:?}", asked.elapsed());
    // Not cancelled: the same helper is never asked, and the call waits for its timeout.
    let silent = Client::new(&helper(&dir, "never", ":"), &dir).with_grace(Duration::from_millis(100));
    let t = Instant::now();
    assert!(silent.run_until(&call(Duration::from_millis(300)), &|| false).is_err());
    assert!(t.elapsed() >= Duration::from_millis(400), "{:?}", t.elapsed());
}
