//! What the sandbox refused, attributed from the command's error output and the view.
//!
//! Landlock's audit records would be the ground truth, but they reach only the kernel audit
//! log (off on most machines, and reading it needs CAP_AUDIT_READ). So this reads the error
//! lines that shells, coreutils, python and node print, and keeps a denial only when the view
//! explains it: the target is hidden, guarded, read-only, or outside the view. A line the view
//! does not explain (a plain permission error inside a writable grant, a missing file inside
//! the view) gives nothing: no invented entries.
//!
//! Only the view is consulted, never the host: a path outside the view is a refused read
//! whether or not it exists there, so printed lines cannot probe which host paths exist.
//!
//! The command chooses what it prints, so every entry made here is
//! [`Evidence::Output`](warden_feedback::Evidence::Output), named after the layer that would
//! have refused: `mount`, `landlock`, `namespace` for a connection without a network grant (the
//! network namespace is empty), `limit` for a printed fork or file-size failure. Never
//! `seccomp`: that source is the listener's (`notify.rs`), which warden sees itself. The one
//! entry made here from what warden saw is the file size limit's signal (`SIGXFSZ`).

use std::path::{Component, Path, PathBuf};

use warden_feedback::{Denial, DenialSource, Run};

use crate::{Access, Spec};

/// Error kinds recognised in a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// EACCES.
    Denied,
    /// EROFS.
    ReadOnly,
    /// ENOENT.
    Missing,
    /// EPERM.
    NotPermitted,
    /// EBUSY: a mount point (a guarded path, or a folder holding one) moved or removed.
    Busy,
}

/// At most this many denials are reported.
const MAX: usize = 32;

/// Denials found in `run`'s stderr (and stdout) that the view of `spec` explains.
pub(crate) fn infer(spec: &Spec, run: &Run) -> Vec<Denial> {
    let mut out: Vec<Denial> = Vec::new();
    // What warden saw itself comes first, and a printed line saying the same adds nothing.
    if run.signal.as_deref() == Some("SIGXFSZ") {
        out.push(Denial::observed("limit.file_size", "file size limit", DenialSource::Limit));
    }
    let mut push = |d: Denial| {
        if out.len() < MAX && !out.iter().any(|o| (&o.op, &o.target, o.source) == (&d.op, &d.target, d.source)) {
            out.push(d);
        }
    };
    for line in run.stderr.text.lines().chain(run.stdout.text.lines()).take(10_000) {
        if line.len() > 4096 {
            continue;
        }
        if let Some(d) = network(spec, line) {
            push(d);
            continue;
        }
        if let Some(d) = limit(line) {
            push(d);
            continue;
        }
        let Some(kind) = kind(line) else { continue };
        let Some((target, write_hint)) = target(line) else { continue };
        // A relative path in an error message is relative to wherever the command had
        // `cd`-ed to, which the output does not say: only absolute paths are attributed.
        if !target.starts_with('/') {
            continue;
        }
        let path = resolve(&spec.cwd, &target);
        if let Some(d) = attribute(spec, &path, kind, write_hint || writes(line)) {
            push(d);
        }
    }
    out
}

fn kind(line: &str) -> Option<Kind> {
    let l = line.to_ascii_lowercase();
    if l.contains("read-only file system") || l.contains("erofs") {
        Some(Kind::ReadOnly)
    } else if l.contains("permission denied") || l.contains("eacces") {
        Some(Kind::Denied)
    } else if l.contains("operation not permitted") || l.contains("eperm") {
        Some(Kind::NotPermitted)
    } else if l.contains("no such file or directory") || l.contains("enoent") {
        Some(Kind::Missing)
    } else if l.contains("device or resource busy") || l.contains("ebusy") {
        Some(Kind::Busy)
    } else {
        None
    }
}

/// Whether the message describes a modification.
fn writes(line: &str) -> bool {
    const VERBS: &[&str] = &[
        "cannot create", "cannot touch", "for writing", "cannot remove", "cannot move", "cannot make", "cannot overwrite",
        "changing permissions", "changing ownership", "setting times", "failed to create", "cannot create directory",
        "cannot open '", "mkdir", "rename", "unlink", "chmod", "chown", "utime", "truncate", "setxattr", "symlink", "link",
        "errno 30", "open '", "write",
    ];
    let l = line.to_ascii_lowercase();
    VERBS.iter().any(|v| l.contains(v)) && !l.contains("cannot open directory") && !l.contains("for reading")
}

/// The path a message names, and whether the form itself implies a write.
fn target(line: &str) -> Option<(String, bool)> {
    // python: `...: [Errno 13] Permission denied: '/x'`; node: `EACCES: ..., open '/x'`.
    for marker in ["denied: '", "system: '", "permitted: '", "directory: '", ", open '", ", mkdir '", ", unlink '", ", rename '"] {
        if let Some(i) = line.find(marker) {
            let rest = line.get(i + marker.len()..)?;
            let end = rest.find('\'')?;
            return Some((rest.get(..end)?.to_string(), marker == ", open '" && line.contains("EROFS")));
        }
    }
    // dash: `sh: 1: cannot create /x: Permission denied`
    if let Some(i) = line.find("cannot create ") {
        let rest = line.get(i + "cannot create ".len()..)?;
        let rest = rest.trim_start_matches("directory ").trim_start_matches("regular file ");
        let end = rest.rfind(": ")?;
        return Some((unquote(rest.get(..end)?), true));
    }
    // coreutils: `touch: cannot touch '/x': ...`, `cat: /x: Permission denied`,
    // bash: `bash: line 1: /x: Read-only file system`.
    let quoted = line.find(['\'', '‘']).and_then(|i| {
        let rest = line.get(i + line.get(i..)?.chars().next()?.len_utf8()..)?;
        let end = rest.find(['\'', '’'])?;
        rest.get(..end).map(str::to_string)
    });
    if let Some(q) = quoted.filter(|q| q.starts_with('/') || q.starts_with('.') || !q.contains(' ')) {
        return Some((q, false));
    }
    let fields: Vec<&str> = line.split(": ").collect();
    let n = fields.len();
    if n >= 3 {
        let candidate = fields.get(n - 2)?.trim();
        if !candidate.contains(' ') && (candidate.contains('/') || candidate.contains('.')) {
            return Some((candidate.to_string(), false));
        }
    }
    None
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches(['\'', '"', '‘', '’']).to_string()
}

/// `target` made absolute against `cwd`, `.` and `..` resolved lexically.
fn resolve(cwd: &Path, target: &str) -> PathBuf {
    let joined = if target.starts_with('/') { PathBuf::from(target) } else { cwd.join(target) };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(p) => out.push(p),
            _ => {}
        }
    }
    out
}

/// The access the view gives `path`: the nearest mount's (None: not in the view).
fn access(spec: &Spec, path: &Path) -> Option<Access> {
    if spec.scratch.iter().any(|s| path.starts_with(s))
        && !spec.mounts.iter().any(|m| path.starts_with(&m.path) && m.path.components().count() > 2)
    {
        return Some(Access::Write);
    }
    if ["/dev", "/proc"].iter().any(|o| path.starts_with(o)) {
        return Some(Access::Read);
    }
    spec.mounts.iter().filter(|m| path.starts_with(&m.path)).max_by_key(|m| m.path.as_os_str().len()).map(|m| m.access)
}

fn attribute(spec: &Spec, path: &Path, kind: Kind, write: bool) -> Option<Denial> {
    let target = path.to_string_lossy().into_owned();
    let op = if write || kind == Kind::ReadOnly { "fs.write" } else { "fs.read" };
    let denial = |op: &str, source| Some(Denial::output(op, target.clone(), source));
    if kind == Kind::Busy {
        // Guarded paths and the folders that hold them are mount points: they stay in place.
        let holds = spec.mounts.iter().any(|m| m.access == Access::Guard && m.path.starts_with(path));
        let writable = matches!(access(spec, path), Some(Access::Write | Access::Guard));
        return (holds && writable).then(|| denial("fs.write", DenialSource::Mount)).flatten();
    }
    match access(spec, path) {
        // Not in the view: the view refused it, whether or not it exists on the host. The host
        // is never consulted: a printed "No such file or directory" line must not tell the
        // command which host paths exist (sandbox.md #5).
        None => match kind {
            Kind::Missing | Kind::Denied | Kind::ReadOnly => denial(op, DenialSource::Mount),
            _ => None,
        },
        Some(Access::Hide) if kind != Kind::Missing => denial(op, DenialSource::Mount),
        Some(Access::Guard) if kind == Kind::ReadOnly || (write && kind != Kind::Missing) => {
            denial("fs.write", DenialSource::Mount)
        }
        Some(Access::Read) if kind == Kind::ReadOnly => denial("fs.write", DenialSource::Mount),
        Some(Access::Read) if write && matches!(kind, Kind::Denied | Kind::NotPermitted) => {
            denial("fs.write", DenialSource::Landlock)
        }
        _ => None,
    }
}

/// Network attempts refused because the network is not granted: the command runs in an empty
/// network namespace, so the refusal is the namespace's (a printed line is never passed off as
/// the seccomp listener's).
fn network(spec: &Spec, line: &str) -> Option<Denial> {
    if spec.network {
        return None;
    }
    let l = line.to_ascii_lowercase();
    let refused = l.contains("operation not permitted") || l.contains("network is unreachable") || l.contains("permission denied");
    if !refused {
        return None;
    }
    // bash: `sh: /dev/tcp/127.0.0.1/8080: ...`
    for proto in ["/dev/tcp/", "/dev/udp/"] {
        if let Some(i) = line.find(proto) {
            let rest = line.get(i + proto.len()..)?;
            let end = rest.find([':', ' ', '\'']).unwrap_or(rest.len());
            let (host, port) = rest.get(..end)?.split_once('/')?;
            return Some(Denial::output("net.connect", format!("{host}:{port}"), DenialSource::Namespace));
        }
    }
    None
}

/// Limits the kernel reports in a recognisable way, as the command printed them.
fn limit(line: &str) -> Option<Denial> {
    let l = line.to_ascii_lowercase();
    let fork = (l.contains("fork") || l.contains("spawn") || l.contains("thread")) && l.contains("resource temporarily unavailable");
    if fork || l.contains("cannot fork") {
        return Some(Denial::output("limit.processes", "fork", DenialSource::Limit));
    }
    if l.contains("file too large") {
        return Some(Denial::output("limit.file_size", "file size limit", DenialSource::Limit));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mount;
    use warden_feedback::{Evidence, Stream};

    fn spec() -> Spec {
        let mut s = Spec::new(vec!["sh".into()], "/ws".into());
        s.mounts = vec![
            Mount { path: "/usr".into(), access: Access::Read },
            Mount { path: "/etc".into(), access: Access::Read },
            Mount { path: "/etc/shadow".into(), access: Access::Hide },
            Mount { path: "/ws".into(), access: Access::Write },
            Mount { path: "/ws/.env".into(), access: Access::Hide },
            Mount { path: "/ws/.git/hooks".into(), access: Access::Guard },
        ];
        s.scratch = vec!["/tmp".into()];
        s
    }

    fn infer_text(text: &str) -> Vec<(String, String, DenialSource)> {
        let run = Run { stderr: Stream { text: text.into(), truncated: false, bytes: 0 }, ..Run::default() };
        infer(&spec(), &run).into_iter().map(|d| (d.op, d.target, d.source)).collect()
    }

    #[test]
    fn hidden_reads_and_guarded_writes() {
        assert_eq!(infer_text("cat: /ws/.env: Permission denied"), vec![("fs.read".into(), "/ws/.env".into(), DenialSource::Mount)]);
        assert_eq!(
            infer_text("attack.sh: 1: cannot create /ws/.git/hooks/pre-commit: Read-only file system"),
            vec![("fs.write".into(), "/ws/.git/hooks/pre-commit".into(), DenialSource::Mount)]
        );
        assert_eq!(
            infer_text("touch: cannot touch '/etc/passwd': Read-only file system"),
            vec![("fs.write".into(), "/etc/passwd".into(), DenialSource::Mount)]
        );
        assert_eq!(
            infer_text("PermissionError: [Errno 13] Permission denied: '/etc/shadow'"),
            vec![("fs.read".into(), "/etc/shadow".into(), DenialSource::Mount)]
        );
    }

    #[test]
    fn what_the_view_does_not_explain_gives_nothing() {
        assert!(infer_text("cat: /ws/missing.txt: No such file or directory").is_empty());
        assert!(infer_text("touch: cannot touch '/ws/x': Permission denied").is_empty());
        assert!(infer_text("error[E0308]: mismatched types").is_empty());
        // Relative: the command may have changed directory.
        assert!(infer_text("cat: ../../readable/secret.txt: Permission denied").is_empty());
    }

    /// sandbox.md #5: whether a "No such file or directory" line naming a path outside the view
    /// becomes a denial must not depend on the host, or printed lines probe which host paths
    /// exist. Outside the view is the view's answer alone: every such path is an `fs.read`
    /// the view refused.
    #[test]
    fn a_missing_path_outside_the_view_says_nothing_of_the_host() {
        let base = std::path::PathBuf::from(format!("/var/tmp/warden-denials-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("there"), "x").unwrap();
        let missing = |p: &str| infer_text(&format!("cat: {}/{p}: No such file or directory", base.display()));
        let there = missing("there");
        let _ = std::fs::remove_dir_all(&base);
        assert_eq!(there, vec![("fs.read".to_string(), format!("{}/there", base.display()), DenialSource::Mount)]);
        assert_eq!(missing("nothing"), vec![("fs.read".to_string(), format!("{}/nothing", base.display()), DenialSource::Mount)]);
        assert_eq!(missing("there").len(), 1, "the host's answer changed the result");
        // Inside the view, a missing file is the command's own business.
        assert!(infer_text("cat: /ws/missing.txt: No such file or directory").is_empty());
        assert!(infer_text("cat: /etc/missing.conf: No such file or directory").is_empty());
    }

    #[test]
    fn moving_a_guarded_path_or_its_folder_is_a_guarded_write() {
        let busy = |path: &str| vec![("fs.write".to_string(), path.to_string(), DenialSource::Mount)];
        assert_eq!(infer_text("mv: cannot move '/ws/.git' to '/ws/.git-old': Device or resource busy"), busy("/ws/.git"));
        assert_eq!(infer_text("rm: cannot remove '/ws/.git/hooks': Device or resource busy"), busy("/ws/.git/hooks"));
        assert_eq!(infer_text("OSError: [Errno 16] Device or resource busy: '/ws/.git' -> '/ws/g'"), busy("/ws/.git"));
        // A busy folder that holds no guarded path, or one outside the writable grants: not ours.
        assert!(infer_text("mv: cannot move '/ws/src' to '/ws/lib': Device or resource busy").is_empty());
        assert!(infer_text("umount: /usr: target is busy: Device or resource busy").is_empty());
    }

    /// sandbox.md #4: a command that only prints refusals gets entries marked as inferred from
    /// its output, never one claiming the seccomp listener or a limit warden saw.
    #[test]
    fn printed_refusals_are_output_evidence_never_seccomp() {
        let text = "cat: /etc/shadow: Permission denied\n\
                    touch: cannot touch '/usr/bin/ls': Read-only file system\n\
                    sh: 1: cannot create /dev/tcp/10.0.0.1/443: Operation not permitted\n\
                    bash: fork: Resource temporarily unavailable\n\
                    cp: error writing '/ws/x': File too large";
        let run = Run { stderr: Stream { text: text.into(), truncated: false, bytes: 0 }, ..Run::default() };
        let found = infer(&spec(), &run);
        assert_eq!(found.len(), 5, "{found:?}");
        for d in &found {
            assert_eq!(d.evidence, Evidence::Output, "{d:?}");
            assert_ne!(d.source, DenialSource::Seccomp, "{d:?}");
        }
        let net = found.iter().find(|d| d.op == "net.connect").unwrap();
        assert_eq!((net.target.as_str(), net.source), ("10.0.0.1:443", DenialSource::Namespace));
        let json = serde_json::to_value(net).unwrap();
        assert_eq!(json["evidence"], "output");
        assert_eq!(json["source"], "namespace");
    }

    #[test]
    fn a_file_size_signal_is_observed() {
        let run = Run { signal: Some("SIGXFSZ".into()), ..Run::default() };
        let found = infer(&spec(), &run);
        assert_eq!(found, vec![Denial::observed("limit.file_size", "file size limit", DenialSource::Limit)]);
        // The same limit printed and then signalled: the observed entry is kept, not hidden
        // behind the printed one.
        let run = Run {
            signal: Some("SIGXFSZ".into()),
            stderr: Stream { text: "cp: error writing '/ws/x': File too large".into(), truncated: false, bytes: 0 },
            ..Run::default()
        };
        assert!(infer(&spec(), &run).iter().any(|d| d.evidence == Evidence::Observed && d.op == "limit.file_size"));
    }

    #[test]
    fn network_and_limits() {
        assert_eq!(
            infer_text("sh: 1: cannot create /dev/tcp/127.0.0.1/9: Operation not permitted")[0].0,
            "net.connect".to_string()
        );
        assert_eq!(infer_text("sh: 1: Cannot fork")[0].0, "limit.processes".to_string());
    }
}
