//! Sub-agents: a request of a sub-agent is decided for it and for every agent above it, and
//! the result is never more than any of them would get. The verdict is the most severe; the
//! grants are the intersection (paths both grant, denials of either, the smaller network and
//! limits).
//!
//! Path intersection works on the shapes the sandbox can show: a pattern's coverage is its
//! literal root, as one path (`/a/b`) or a tree (`/a/b/**`). Of two patterns, the one inside
//! the other is their intersection; patterns with wildcards elsewhere only count as inside a
//! tree that holds their literal prefix, and never as holding anything (fail closed).

use std::path::{Path, PathBuf};

use warden_policy::ast::Verdict;
use warden_policy::{Decision, Grants, Limits, Network};

use crate::confine::{Shape, shape};

/// The most severe of `child` and `parents`' decisions, with the intersection of their grants.
pub(crate) fn combine(mut child: Decision, parents: &[(String, Decision)]) -> Decision {
    let mut grants = (*child.grants).clone();
    for (name, p) in parents {
        grants = intersect(&grants, &p.grants);
        if p.verdict > child.verdict {
            // The parent's decision (its tier, rules and parts) with a reason naming it; the
            // grants are set below.
            let reason = format!("the parent agent {name} is not allowed this: {}", p.reason());
            child = p.clone();
            child.set_reason(reason);
        }
    }
    if child.verdict == Verdict::Deny {
        grants = Grants::default();
    }
    child.grants = std::sync::Arc::new(grants);
    child
}

/// What both `a` and `b` grant.
pub(crate) fn intersect(a: &Grants, b: &Grants) -> Grants {
    let mut deny = a.deny.clone();
    deny.extend(b.deny.iter().filter(|d| !a.deny.contains(d)).cloned());
    let mut deny_write = a.deny_write.clone();
    deny_write.extend(b.deny_write.iter().filter(|d| !a.deny_write.contains(d)).cloned());
    Grants {
        read: paths(&a.read, &b.read),
        write: paths(&a.write, &b.write),
        deny,
        deny_write,
        network: network(&a.network, &b.network),
        limits: limits(&a.limits, &b.limits),
        env: a.env.iter().filter(|e| b.env.contains(e)).cloned().collect(),
        sandbox: a.sandbox.clone(),
    }
}

/// A pattern's coverage: one path, or a whole tree. Wildcards elsewhere: `Partial(prefix)`.
enum Cover {
    One(PathBuf),
    Tree(PathBuf),
    Partial(PathBuf),
}

fn cover(pattern: &str) -> Cover {
    match shape(pattern) {
        Shape::Exact(p) => Cover::One(p),
        Shape::Tree(p) => Cover::Tree(p),
        Shape::Last(p) | Shape::Deep(p) => Cover::Partial(p),
    }
}

/// Whether everything `inner` covers, `outer` covers too.
fn inside(inner: &str, outer: &str) -> bool {
    let under = |p: &Path, root: &Path| p.starts_with(root);
    match (cover(inner), cover(outer)) {
        (Cover::One(p) | Cover::Tree(p) | Cover::Partial(p), Cover::Tree(root)) => under(&p, &root),
        (Cover::One(p), Cover::One(q)) => p == q,
        _ => false,
    }
}

fn paths(a: &[String], b: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in a {
        for q in b {
            let keep = if inside(p, q) {
                Some(p)
            } else if inside(q, p) {
                Some(q)
            } else {
                None
            };
            if let Some(k) = keep.filter(|k| !out.contains(k)) {
                out.push(k.clone());
            }
        }
    }
    out
}

fn network(a: &Network, b: &Network) -> Network {
    match (a, b) {
        (Network::None, _) | (_, Network::None) => Network::None,
        (Network::Any, other) | (other, Network::Any) => other.clone(),
        (Network::Hosts(x), Network::Hosts(y)) => {
            let both: Vec<String> = x.iter().filter(|h| y.contains(h)).cloned().collect();
            if both.is_empty() { Network::None } else { Network::Hosts(both) }
        }
    }
}

fn limits(a: &Limits, b: &Limits) -> Limits {
    let m = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    Limits {
        timeout_ms: m(a.timeout_ms, b.timeout_ms),
        memory: m(a.memory, b.memory),
        processes: m(a.processes, b.processes),
        output: m(a.output, b.output),
        file_size: m(a.file_size, b.file_size),
        files: m(a.files, b.files),
        commands: m(a.commands, b.commands),
        total_time_ms: m(a.total_time_ms, b.total_time_ms),
        total_output: m(a.total_output, b.total_output),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_string()).collect()
    }

    #[test]
    fn paths_keep_only_what_both_grant() {
        assert_eq!(paths(&s(&["/w/**"]), &s(&["/w/src/**", "/etc/**"])), s(&["/w/src/**"]));
        assert_eq!(paths(&s(&["/w/src/**", "/home/**"]), &s(&["/w/**"])), s(&["/w/src/**"]));
        assert_eq!(paths(&s(&["/w/a.txt"]), &s(&["/w/a.txt", "/x/**"])), s(&["/w/a.txt"]));
        // A wildcard pattern is never taken as holding anything.
        assert!(paths(&s(&["/w/**"]), &s(&["/**/x.md"])).is_empty());
        assert_eq!(paths(&s(&["/w/*.md"]), &s(&["/w/**"])), s(&["/w/*.md"]));
        assert!(paths(&s(&["/w/**"]), &[]).is_empty());
    }

    #[test]
    fn network_and_limits_take_the_smaller() {
        assert_eq!(network(&Network::Any, &Network::None), Network::None);
        assert_eq!(network(&Network::Any, &Network::Hosts(s(&["a"]))), Network::Hosts(s(&["a"])));
        assert_eq!(network(&Network::Hosts(s(&["a", "b"])), &Network::Hosts(s(&["b"]))), Network::Hosts(s(&["b"])));
        let a = Limits { timeout_ms: Some(10), commands: None, ..Limits::default() };
        let b = Limits { timeout_ms: Some(5), commands: Some(3), ..Limits::default() };
        let l = limits(&a, &b);
        assert_eq!((l.timeout_ms, l.commands), (Some(5), Some(3)));
    }
}
