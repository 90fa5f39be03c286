//! The serialized result has exactly the native backend's shape.

use std::collections::BTreeSet;

use serde_json::Value;
use warden_feedback::Run;

/// Every key path in a JSON value (`sandbox.backend`, `stdout.text`, ...).
fn keys(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let Value::Object(m) = v {
        for (k, v) in m {
            let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            keys(v, &path, out);
            out.insert(path);
        }
    }
}

fn key_set(r: &Run) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    keys(&serde_json::to_value(r).unwrap(), "", &mut s);
    s
}

#[test]
fn run_json_has_the_native_keys() {
    let dir = tempfile::tempdir().unwrap();
    crate::tree(dir.path(), &[("a.txt", "a\n")]);
    let r = crate::run(&crate::spec(&["ls"], vec![crate::ro(dir.path(), "/w")], "/w"));
    assert_eq!(r.sandbox.backend, "wasi");
    assert_eq!(key_set(&r), key_set(&Run::default()));
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["sandbox"]["backend"], "wasi");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["signal"], Value::Null);
}

#[test]
fn a_trapped_run_adds_only_the_optional_notes() {
    let mut s = crate::spec(&["__spin"], vec![], "/");
    s.limits.fuel = Some(1_000_000);
    let r = crate::run(&s);
    let mut native = Run::default();
    native.sandbox.notes.push(String::from("a note"));
    assert_eq!(key_set(&r), key_set(&native));
}
