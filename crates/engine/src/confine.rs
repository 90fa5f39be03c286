//! From a decision's grants to the native sandbox's view: which host paths are shown, how,
//! which are hidden, what the environment holds, which limits apply.
//!
//! Grants are absolute globs. A grant shows the longest literal prefix of its pattern only when
//! the rest is `/**` (a tree) or nothing (one path); a grant with a wildcard elsewhere
//! (`/**/*.md`) cannot be shown as a mount and is left out (fail closed), with a note. Denials
//! are the other way round: a pattern with wildcards is expanded against the file system (the
//! last segment by listing its folder; a `**` in the middle by a bounded walk of the writable
//! grants and of a workspace shown read-only), and every match is covered.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::fs::{AtFlags, Mode, OFlags};

use warden_policy::{Context, GrantGlob, Grants, Limits, Network};
use warden_sandbox::{Access, Mount, Spec};

use crate::Environment;
use crate::gitguard;
use crate::sweep;
use crate::walk::Walk;

/// Paths the sandbox provides itself: grants on them are satisfied by its own `/dev`, `/proc`
/// and scratch folders.
const OWN: &[&str] = &["/dev", "/proc", "/sys"];
/// Scratch folders: a fresh empty tmpfs each run, whatever the grants say about the host's.
const SCRATCH: &[&str] = &["/tmp", "/var/tmp"];
/// At most this many entries are visited to expand `**` denials.
pub(crate) const WALK_LIMIT: usize = 50_000;
/// Past [`WALK_LIMIT`], at most this many entries are looked at by name only (`walk::sparse`):
/// a workspace with `node_modules`, or one a command filled on purpose, still has its deep
/// secrets covered.
pub(crate) const SPARSE_LIMIT: usize = 2_000_000;
/// Variables every command gets when the caller has them.
const BASE_ENV: &[&str] =
    &["PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "TZ", "COLORTERM", "NO_COLOR", "SHELL"];
/// Default wall timeout when the policy sets none.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How a grant pattern maps onto the file system.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// One path (no wildcard).
    Exact(PathBuf),
    /// A folder and everything beneath (`dir/**`).
    Tree(PathBuf),
    /// Wildcards only in the last segment (`dir/*.pem`).
    Last(PathBuf),
    /// Wildcards before the last segment: the literal prefix.
    Deep(PathBuf),
}

fn wild(seg: &str) -> bool {
    seg.contains(['*', '?', '['])
}

pub(crate) fn shape(pattern: &str) -> Shape {
    let segs: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let first_wild = segs.iter().position(|s| wild(s));
    let prefix = |n: usize| {
        let mut p = PathBuf::from("/");
        p.extend(segs.iter().take(n));
        p
    };
    match first_wild {
        None => Shape::Exact(prefix(segs.len())),
        Some(i) if i + 1 == segs.len() && segs.get(i) == Some(&"**") => Shape::Tree(prefix(i)),
        Some(i) if i + 1 == segs.len() => Shape::Last(prefix(i)),
        Some(i) => Shape::Deep(prefix(i)),
    }
}

/// Makes a guarded folder (`X/**` in a `deny fs write`) that is missing but could be created by
/// the command: its parent is an existing folder inside the workspace (not the workspace
/// itself), the workspace is writable, and the parent is reached from it without a symlink.
/// Left missing, the command could create it and fill it with what the host runs later
/// (`.git/hooks/pre-commit` in a clone without `hooks`), since a mount can only cover a path
/// that exists and Landlock cannot refuse one name inside a writable folder. It is made empty,
/// owned like its parent, and left in place afterwards (concurrent runs share it), as `git
/// init` would have made it. Nothing is made outside the workspace or at its top level: a
/// workspace without `.warden/` stays without one. Returns whether it made the folder.
fn make_guarded_folder(folder: &Path, workspace: &Path, writable: &[PathBuf]) -> bool {
    let Some(parent) = folder.parent() else { return false };
    let Some(name) = folder.file_name() else { return false };
    if !parent.starts_with(workspace) || parent == workspace || !writable.iter().any(|r| workspace.starts_with(r)) {
        return false;
    }
    if folder.symlink_metadata().is_ok() {
        return false;
    }
    let Ok(below) = parent.strip_prefix(workspace) else { return false };
    // Each folder from the workspace down to the parent is opened without following a
    // symlink, so the folder is made where the check looked even if the tree changes meanwhile.
    let dir = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(mut fd) = rustix::fs::openat(rustix::fs::CWD, workspace, dir, Mode::empty()) else { return false };
    for part in below.components() {
        let std::path::Component::Normal(part) = part else { return false };
        match rustix::fs::openat(&fd, part, dir | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(next) => fd = next,
            Err(_) => return false,
        }
    }
    let Ok(owner) = rustix::fs::fstat(&fd) else { return false };
    if rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o755)).is_err() {
        return false;
    }
    // As root, the folder is the parent's owner's (as the workspace's own files are); a caller
    // that is not root made it its own, which is already the case when the parent is its own.
    let uid = rustix::fs::Uid::from_raw(owner.st_uid);
    let gid = rustix::fs::Gid::from_raw(owner.st_gid);
    let _ = rustix::fs::chownat(&fd, name, Some(uid), Some(gid), AtFlags::SYMLINK_NOFOLLOW);
    true
}

/// The built view plus what could not be honoured.
pub(crate) struct View {
    pub spec: Spec,
    pub notes: Vec<String>,
    /// The walk of the writable grants, and the guarded patterns: what [`missing_guarded`]
    /// needs once the view is built.
    pub tree: Tree,
    pub guards: Vec<String>,
}

fn is_own(p: &Path) -> bool {
    OWN.iter().any(|o| p.starts_with(o))
}

pub(crate) fn is_scratch(p: &Path) -> Option<PathBuf> {
    SCRATCH.iter().map(Path::new).find(|s| p == *s).map(Path::to_path_buf)
}

/// Builds the sandbox spec for `argv` under `grants`.
pub(crate) fn view(grants: &Grants, ctx: &Context, env: &Environment, argv: Vec<OsString>, timeout: Option<Duration>) -> View {
    let mut spec = Spec::new(argv, PathBuf::from(&ctx.cwd));
    let mut notes = Vec::new();
    let mut scratch: Vec<PathBuf> = Vec::new();
    for (patterns, access) in [(&grants.read, Access::Read), (&grants.write, Access::Write)] {
        for pattern in patterns {
            let path = match shape(pattern) {
                Shape::Exact(p) | Shape::Tree(p) => p,
                Shape::Last(_) | Shape::Deep(_) => {
                    notes.push(format!("grant `{pattern}` cannot be shown as a mount and was left out"));
                    continue;
                }
            };
            if let Some(s) = is_scratch(&path) {
                if !scratch.contains(&s) {
                    scratch.push(s);
                }
                continue;
            }
            if is_own(&path) {
                continue;
            }
            spec.mounts.push(Mount { path, access });
        }
    }
    let roots: Vec<PathBuf> = spec.mounts.iter().filter(|m| m.access == Access::Write).map(|m| m.path.clone()).collect();
    // A workspace shown read-only (a read-tier command) is walked too: a secret anywhere in it
    // (`**/.env`) is hidden from `grep -r . .` as it is from a command that may write there.
    let workspace = Path::new(&ctx.workspace);
    let read: Vec<PathBuf> = spec
        .mounts
        .iter()
        .filter(|m| m.access == Access::Read && m.path.starts_with(workspace))
        .filter(|m| !roots.iter().any(|r| m.path.starts_with(r)))
        .map(|m| m.path.clone())
        .collect();
    let mut tree = Tree::with_read(roots, read);
    // The names a deep match may have, for the look by name past the walk's limit.
    tree.cuts = grants.deny.iter().chain(&grants.deny_write).filter(|p| matches!(shape(p), Shape::Deep(_))).map(|p| NameCut::of(p)).collect();
    for (patterns, access) in [(&grants.deny, Access::Hide), (&grants.deny_write, Access::Guard)] {
        for pattern in patterns {
            // What a pattern beneath the sandbox's own folders matches is dropped below anyway:
            // not looked for (listing the host's `/dev` for `/dev/sd*` costs more than the rest).
            let shaped = shape(pattern);
            let (Shape::Exact(base) | Shape::Tree(base) | Shape::Last(base) | Shape::Deep(base)) = &shaped;
            if is_own(base) {
                continue;
            }
            if let (Access::Guard, Shape::Tree(folder)) = (access, &shaped)
                && make_guarded_folder(folder, Path::new(&ctx.workspace), &tree.roots)
            {
                notes.push(format!("made the missing guarded folder {} (empty) so that it is covered", folder.display()));
            }
            for path in expand_shaped(pattern, shaped, &mut tree) {
                if !is_own(&path) && is_scratch(&path).is_none() {
                    spec.mounts.push(Mount { path, access });
                }
            }
        }
    }
    // A unix socket file in a folder shown to the command is a way out to whatever host
    // process listens on it (git's fsmonitor daemon, a language server, a `docker.sock`):
    // Landlock below ABI 9 cannot refuse the connect, so each one the walk finds is covered.
    let sockets: Vec<PathBuf> = tree.walk().sockets().map(PathBuf::from).collect();
    for path in sockets {
        if !spec.mounts.iter().any(|m| m.path == path && m.access == Access::Hide) {
            spec.mounts.push(Mount { path, access: Access::Hide });
        }
    }
    // What git runs or takes its config from, wherever the workspace keeps it: guarded with
    // the policy's git patterns (`gitguard.rs`).
    // Missing ones are noted with the policy's missing guarded paths and swept after the run.
    let (present, missing) = gitguard::guards(&mut tree, env, &grants.deny_write);
    for path in present {
        if !spec.mounts.iter().any(|m| m.path == path) {
            spec.mounts.push(Mount { path, access: Access::Guard });
        }
    }
    let mut guards = grants.deny_write.clone();
    guards.extend(missing);
    let (opaque, cut) = tree.unmatched();
    if cut {
        notes.push(format!(
            "more than {SPARSE_LIMIT} files in the workspace and the writable grants: `**` denials were only partly applied"
        ));
    }
    // A folder whose name is not UTF-8 cannot be matched against the denials: it is hidden
    // whole rather than shown with a secret in it.
    for path in opaque {
        notes.push(format!("hid {}: its name is not UTF-8, so the denials could not be matched beneath it", path.display()));
        spec.mounts.push(Mount { path, access: Access::Hide });
    }
    // Every command gets a fresh private /tmp, granted or not: never the host's.
    if !scratch.iter().any(|s| s == Path::new("/tmp")) {
        scratch.push(PathBuf::from("/tmp"));
    }
    spec.scratch = scratch;
    spec.network = match &grants.network {
        Network::None => false,
        Network::Any => true,
        // Unreachable: `run` refuses host lists before building the view.
        Network::Hosts(_) => false,
    };
    spec.limits = limits(&grants.limits, timeout);
    spec.env = environment(grants, env);
    View { spec, notes, tree, guards }
}

/// The guarded paths below the writable grants that are missing now (`sweep.rs`): noted just
/// before the command starts, so that what it makes there can be moved aside after it.
pub(crate) fn missing_guarded(patterns: &[String], tree: &mut Tree) -> Vec<sweep::Missing> {
    let mut seen = sweep::Seen::default();
    let mut noted = std::collections::HashSet::new();
    let mut missing = Vec::new();
    for pattern in patterns {
        for m in sweep::candidates(pattern, &shape(pattern), tree, &mut seen) {
            if noted.insert(m.clone()) {
                missing.push(m);
            }
        }
    }
    missing
}

/// The entries beneath some roots, walked once (lazily, on the first `**` pattern) and
/// matched against every pattern.
pub(crate) struct Tree {
    /// The writable roots.
    roots: Vec<PathBuf>,
    /// Every root walked: the writable ones, then read-only ones walked for denials only.
    walked: Vec<PathBuf>,
    walk: Option<Walk>,
    /// Folders already listed for last-segment patterns (`/dev/sd*`, `/dev/nvme*`, ...).
    listings: Vec<(PathBuf, Vec<(PathBuf, String)>)>,
    /// The most entries the walk keeps ([`WALK_LIMIT`]; smaller in tests).
    limit: usize,
    /// Whether the walk stopped at its limit.
    pub cut: bool,
    /// The names deep denials may match ([`NameCut`]), for [`Tree::sparse`].
    pub cuts: Vec<NameCut>,
    /// Past the walk's limit: the paths whose names fit [`Tree::cuts`] (taken once, when a
    /// cut walk is first matched).
    pub sparse: Option<crate::walk::Sparse>,
    /// [`Tree::repos`].
    repos: Option<Vec<PathBuf>>,
}

impl Tree {
    pub(crate) fn new(roots: Vec<PathBuf>) -> Tree {
        Tree::with_read(roots, Vec::new())
    }

    /// A tree over the writable `roots` whose walk also lists the read-only roots `read`:
    /// `**` denials are found beneath both, while what concerns writes (repositories, missing
    /// guarded paths) stays within the writable roots.
    pub(crate) fn with_read(roots: Vec<PathBuf>, read: Vec<PathBuf>) -> Tree {
        let walked = roots.iter().chain(&read).cloned().collect();
        Tree { roots, walked, walk: None, listings: Vec::new(), limit: WALK_LIMIT, cut: false, cuts: Vec::new(), sparse: None, repos: None }
    }

    /// The walk: breadth-first (shallow paths first, so a cut drops the deepest), symlinks
    /// not followed, paths that are not UTF-8 left out (as are the entries beneath them).
    pub(crate) fn walk(&mut self) -> &Walk {
        if self.walk.is_none() {
            let (walk, cut) = Walk::new(&self.walked, self.limit);
            self.cut = cut;
            self.walk = Some(walk);
        }
        self.walk.get_or_insert_with(Walk::default)
    }

    /// The walk (taken now if it was not yet), moved out of the tree, and whether it was cut.
    pub(crate) fn take_walk(&mut self) -> (Walk, bool) {
        self.walk();
        (self.walk.take().unwrap_or_default(), self.cut)
    }

    /// The writable roots.
    pub(crate) fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether the walk, if there is one and it is whole, shows that `p` (below a root) is
    /// not there: `false` when it cannot tell (no walk yet, cut short, a name it skips).
    pub(crate) fn walked_absent(&self, p: &Path) -> bool {
        let (Some(walk), false) = (&self.walk, self.cut) else { return false };
        let (Some(name), Some(text)) = (p.file_name().and_then(|n| n.to_str()), p.to_str()) else { return false };
        self.roots.iter().any(|r| p.starts_with(r) && p != r.as_path()) && !walk.named(name).into_iter().any(|i| walk.path(i) == text)
    }

    /// [`Tree::repos`] as found so far (empty before it is first called).
    pub(crate) fn known_repos(&self) -> &[PathBuf] {
        self.repos.as_deref().unwrap_or_default()
    }

    /// The folders below the writable roots that hold a `.git` (nested repositories,
    /// submodules), the roots among them; found once.
    pub(crate) fn repos(&mut self) -> &[PathBuf] {
        if self.repos.is_none() {
            let roots = self.roots.clone();
            let walk = self.walk();
            let found = walk.named(".git").into_iter().filter_map(|i| Path::new(walk.path(i)).parent().map(Path::to_path_buf));
            self.repos = Some(found.filter(|r| roots.iter().any(|root| r.starts_with(root))).collect());
        }
        self.repos.as_deref().unwrap_or_default()
    }

    /// The git folders below the writable roots that are not named `.git` (bare repositories,
    /// `--separate-git-dir` folders, linked worktrees' folders), as the walk finds them.
    pub(crate) fn other_gitdirs(&mut self) -> Vec<PathBuf> {
        let roots = self.roots.clone();
        crate::newrepo::gitdirs(self.walk())
            .into_iter()
            .filter(|g| g.file_name().is_some_and(|n| n != ".git"))
            .filter(|g| roots.iter().any(|r| g.starts_with(r)))
            .collect()
    }

    /// When the walk was cut: the paths past it whose names fit one of [`Tree::cuts`]
    /// (looked for once, beneath every walked root). Empty when the walk was whole.
    fn sparse(&mut self) -> &[String] {
        self.walk();
        if self.cut && self.sparse.is_none() {
            let cuts = &self.cuts;
            self.sparse = Some(crate::walk::sparse(&self.walked, |name| cuts.iter().any(|c| c.fits_bytes(name)), SPARSE_LIMIT));
        }
        self.sparse.as_ref().map(|s| s.found.as_slice()).unwrap_or_default()
    }

    /// What the denials could not be matched in: the folders whose names are not UTF-8 (with
    /// everything beneath), and whether even the look by name stopped at its limit. Call
    /// after the patterns were expanded.
    pub(crate) fn unmatched(&mut self) -> (Vec<PathBuf>, bool) {
        let mut opaque = self.walk().opaque().to_vec();
        let cut = self.sparse.as_ref().is_some_and(|s| s.cut);
        if let Some(s) = &self.sparse {
            opaque.extend(s.opaque.iter().filter(|p| !opaque.iter().any(|o| p.starts_with(o))).cloned().collect::<Vec<_>>());
        }
        (opaque, cut)
    }

    /// The indices of the walked entries whose name fits `cut`, in walk order.
    fn candidates(&mut self, cut: &NameCut) -> Vec<usize> {
        let walk = self.walk();
        match cut {
            NameCut::Exact(want) => walk.named(want),
            NameCut::Prefix(_) | NameCut::Suffix(_) => walk.fitting(|name| cut.fits_bytes(name)),
            NameCut::Any => (0..walk.len()).collect(),
        }
    }

    /// The entries of `dir` (listed once per view; none when it cannot be read).
    fn listing(&mut self, dir: &Path) -> &[(PathBuf, String)] {
        let i = match self.listings.iter().position(|(d, _)| d == dir) {
            Some(i) => i,
            None => {
                let list = std::fs::read_dir(dir)
                    .map(|rd| {
                        rd.filter_map(Result::ok)
                            .map(|e| e.path())
                            .filter_map(|p| p.to_str().map(str::to_string).map(|s| (p, s)))
                            .collect()
                    })
                    .unwrap_or_default();
                self.listings.push((dir.to_path_buf(), list));
                self.listings.len() - 1
            }
        };
        self.listings.get(i).map(|(_, l)| l.as_slice()).unwrap_or_default()
    }
}

/// The paths a denial pattern covers today.
pub(crate) fn expand(pattern: &str, tree: &mut Tree) -> Vec<PathBuf> {
    expand_shaped(pattern, shape(pattern), tree)
}

/// [`expand`] of a pattern whose [`shape`] is known.
fn expand_shaped(pattern: &str, shaped: Shape, tree: &mut Tree) -> Vec<PathBuf> {
    if let Shape::Exact(p) | Shape::Tree(p) = shaped {
        // A pattern that does not compile covers nothing, whatever its shape (compiled only
        // for a path that is there: most denied paths are not).
        let covers = p.symlink_metadata().is_ok() && GrantGlob::new(pattern).is_some();
        return covers.then_some(p).into_iter().collect();
    }
    let Some(glob) = GrantGlob::new(pattern) else { return Vec::new() };
    match shaped {
        Shape::Exact(_) | Shape::Tree(_) => Vec::new(),
        Shape::Last(dir) => {
            // The entry's own name fits the last segment first (`sd*`: starts with `sd`): most
            // of a folder like `/dev` never reaches the full glob, which still decides.
            let cut = NameCut::of(pattern);
            let fits = |s: &str| cut.fits(s.rsplit('/').next().unwrap_or_default());
            tree.listing(&dir).iter().filter(|(_, s)| fits(s) && glob.matches(s)).map(|(p, _)| p.clone()).collect()
        }
        Shape::Deep(prefix) => {
            // A walked root the pattern covers (a workspace inside `.ssh/`) makes every entry a
            // match: only the full scan finds them. Otherwise a match's own name fits the
            // pattern's last named segment (the folder itself, for a `.../NAME/**` pattern).
            let cut = if tree.walked.iter().any(|r| r.to_str().is_some_and(|s| glob.matches(s))) { NameCut::Any } else { NameCut::of(pattern) };
            let candidates = tree.candidates(&cut);
            let walk = tree.walk();
            let mut found: Vec<PathBuf> = Vec::new();
            let mut add = |text: &str| {
                let path = Path::new(text);
                // A match inside a folder already matched is covered with it.
                if path.starts_with(&prefix) && glob.matches(text) && !found.iter().any(|f| path.starts_with(f)) {
                    found.push(path.to_path_buf());
                }
            };
            for text in candidates.into_iter().map(|i| walk.path(i)) {
                add(text);
            }
            // Past the walk's limit, by name (a shallower match found there covers the rest).
            for text in tree.sparse().iter().filter(|t| cut.fits(t.rsplit('/').next().unwrap_or_default())) {
                add(text);
            }
            found
        }
    }
}

/// What the name of a path matching a `**` pattern must be: a cheap cut before the full glob,
/// which still decides. Taken from the pattern's last segment other than `**`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NameCut {
    /// Exactly this name (`.env`, `config`, `.ssh`).
    Exact(String),
    /// A name starting with this (`id_rsa*`, `.env.*`).
    Prefix(String),
    /// A name ending with this (`*.pem`).
    Suffix(String),
    /// Anything: every entry goes to the full glob.
    Any,
}

impl NameCut {
    /// Whether a path whose last segment is `name` may match.
    pub(crate) fn fits(&self, name: &str) -> bool {
        self.fits_bytes(name.as_bytes())
    }

    /// [`NameCut::fits`] on the name's bytes. The byte at the fixed end is compared first:
    /// most names fail there, without a call to compare the rest.
    pub(crate) fn fits_bytes(&self, name: &[u8]) -> bool {
        match self {
            NameCut::Exact(want) => name == want.as_bytes(),
            NameCut::Prefix(p) => {
                let p = p.as_bytes();
                p.first().is_none_or(|b| name.first() == Some(b)) && name.starts_with(p)
            }
            NameCut::Suffix(t) => {
                let t = t.as_bytes();
                t.last().is_none_or(|b| name.last() == Some(b)) && name.ends_with(t)
            }
            NameCut::Any => true,
        }
    }

    pub(crate) fn of(pattern: &str) -> NameCut {
        let Some(seg) = pattern.split('/').rev().find(|s| !s.is_empty() && *s != "**") else { return NameCut::Any };
        let stars = seg.matches('*').count();
        if seg.contains(['?', '[', ']', '{', '}', '\\']) || stars > 1 {
            return NameCut::Any;
        }
        match (stars, seg.strip_suffix('*'), seg.strip_prefix('*')) {
            (0, _, _) => NameCut::Exact(seg.to_string()),
            (_, Some(head), _) => NameCut::Prefix(head.to_string()),
            (_, _, Some(tail)) => NameCut::Suffix(tail.to_string()),
            _ => NameCut::Any,
        }
    }
}

pub(crate) fn limits(l: &Limits, timeout: Option<Duration>) -> warden_sandbox::Limits {
    let policy = l.timeout_ms.map(Duration::from_millis).unwrap_or(DEFAULT_TIMEOUT);
    let defaults = warden_sandbox::Limits::default();
    warden_sandbox::Limits {
        // The flag can only shorten what the policy allows.
        timeout: timeout.map_or(policy, |t| t.min(policy)),
        memory: l.memory,
        processes: l.processes.or(defaults.processes),
        file_size: l.file_size,
        open_files: l.files.or(defaults.open_files),
        output_bytes: l.output.map_or(defaults.output_bytes, |o| usize::try_from(o).unwrap_or(usize::MAX)),
    }
}

/// The caller's variables the command may see: a base list, `LC_*`, and the policy's `env`
/// patterns; `TMPDIR` points at the scratch `/tmp`.
pub(crate) fn environment(grants: &Grants, env: &Environment) -> Vec<(OsString, OsString)> {
    let allowed = |name: &str| {
        BASE_ENV.contains(&name)
            || name.starts_with("LC_")
            || grants.env.iter().any(|p| warden_policy::grant_matches(&format!("/{p}"), &format!("/{name}")))
    };
    let mut out: Vec<(OsString, OsString)> =
        env.vars.iter().filter(|(k, _)| k.to_str().is_some_and(allowed)).cloned().collect();
    out.retain(|(k, _)| k != "TMPDIR");
    out.push(("TMPDIR".into(), "/tmp".into()));
    if !out.iter().any(|(k, _)| k == "PATH") {
        out.push(("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fresh folder `warden-confine-NAME-PID` in the temp dir with these folders and files.
    pub(crate) fn plant(name: &str, dirs: &[&str], files: &[&str]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("warden-confine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in dirs {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        for f in files {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        dir
    }

    #[test]
    fn shapes() {
        assert_eq!(shape("/usr/**"), Shape::Tree("/usr".into()));
        assert_eq!(shape("/etc/hosts"), Shape::Exact("/etc/hosts".into()));
        assert_eq!(shape("/etc/ssh/ssh_host_*"), Shape::Last("/etc/ssh".into()));
        assert_eq!(shape("/**/.env"), Shape::Deep("/".into()));
        assert_eq!(shape("/w/**/.git/hooks/**"), Shape::Deep("/w".into()));
    }

    #[test]
    fn last_segments_cut_cheaply_and_fall_back_to_the_full_glob() {
        assert_eq!(NameCut::of("/**/.ssh/**"), NameCut::Exact(".ssh".into()));
        assert_eq!(NameCut::of("/**/.git/config"), NameCut::Exact("config".into()));
        assert_eq!(NameCut::of("/**/*.pem"), NameCut::Suffix(".pem".into()));
        assert_eq!(NameCut::of("/**/id_rsa*"), NameCut::Prefix("id_rsa".into()));
        assert_eq!(NameCut::of("/**/.env.*"), NameCut::Prefix(".env.".into()));
        assert_eq!(NameCut::of("/**/a*b"), NameCut::Any);
        assert_eq!(NameCut::of("/**/*.p?2"), NameCut::Any);
        assert_eq!(NameCut::of("/**/**"), NameCut::Any);
    }

    /// A missing guarded folder is made only inside an existing folder of a writable workspace,
    /// reached without a symlink, and never at the workspace's top level.
    #[test]
    fn a_missing_guarded_folder_is_made_only_where_the_command_could_make_it() {
        use std::os::unix::fs::{MetadataExt, symlink};
        let dir = plant("guard", &["ws/.git", "ws/sub", "elsewhere", "ro/.git"], &[]);
        let ws = dir.join("ws");
        symlink(dir.join("elsewhere"), ws.join("linked")).unwrap();
        let roots = vec![ws.clone()];
        let make = |folder: &Path| make_guarded_folder(folder, &ws, &roots);
        // A workspace that is not writable: nothing is made.
        assert!(!make_guarded_folder(&ws.join(".git/hooks"), &ws, &[dir.join("ro")]));
        assert!(make(&ws.join(".git/hooks")));
        let made = std::fs::symlink_metadata(ws.join(".git/hooks")).unwrap();
        let parent = std::fs::metadata(ws.join(".git")).unwrap();
        assert!(made.is_dir());
        assert_eq!((made.uid(), made.gid()), (parent.uid(), parent.gid()));
        assert_eq!(std::fs::read_dir(ws.join(".git/hooks")).unwrap().count(), 0);
        // Already there: left alone.
        assert!(!make(&ws.join(".git/hooks")));
        // The workspace's top level: a workspace without `.warden/` stays without one.
        assert!(!make(&ws.join(".warden")));
        assert!(!ws.join(".warden").exists());
        // Through a symlink: nothing is made where it points.
        assert!(!make(&ws.join("linked/hooks")));
        assert!(!dir.join("elsewhere/hooks").exists());
        // Outside the workspace (even in a writable grant), or beneath a missing parent.
        assert!(!make_guarded_folder(&dir.join("ro/.git/hooks"), &ws, &[dir.clone()]));
        assert!(!dir.join("ro/.git/hooks").exists());
        assert!(!make(&ws.join("missing/.git/hooks")));
        assert!(!ws.join("missing").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A cut fits what the plain string tests say, at either end and for any name.
    #[test]
    fn a_cut_fits_what_starts_with_and_ends_with_say() {
        let cuts = [
            NameCut::Exact(".env".into()),
            NameCut::Prefix(String::new()),
            NameCut::Prefix("id_rsa".into()),
            NameCut::Suffix(String::new()),
            NameCut::Suffix(".pem".into()),
            NameCut::Suffix("é".into()),
            NameCut::Any,
        ];
        let names = ["", ".env", ".envrc", "id_rsa", "id_rsa.pub", "xid_rsa", "a.pem", ".pem", "pem", "a.pemx", "café", "cafe", "é"];
        for cut in &cuts {
            for name in names {
                let want = match cut {
                    NameCut::Exact(w) => name == w,
                    NameCut::Prefix(p) => name.starts_with(p.as_str()),
                    NameCut::Suffix(t) => name.ends_with(t.as_str()),
                    NameCut::Any => true,
                };
                assert_eq!(cut.fits(name), want, "{cut:?} {name:?}");
            }
        }
    }

    /// Every `**` denial found through the cut is what a full scan of the walk finds.
    #[test]
    fn the_cut_finds_what_the_full_scan_finds() {
        let dir = plant(
            "cut",
            &["a/.ssh/keys", "a/b/.git/hooks", "c/.gnupg", "d"],
            &["a/.ssh/keys/id_rsa", "a/b/.git/config", "a/b/.git/hooks/pre-commit", "a/server.pem", "d/.env", "d/.env.local", "d/.envrc", "d/pem", "d/x.pem.bak", "d/id_rsa.pub"],
        );
        let patterns = ["/**/.ssh/**", "/**/.git/hooks/**", "/**/.git/config", "/**/*.pem", "/**/.env", "/**/.env.*", "/**/id_rsa*", "/**/.gnupg/**", "/**/*.p?m"];
        for pattern in patterns {
            let mut tree = Tree::new(vec![dir.clone()]);
            let got = expand(pattern, &mut tree);
            let glob = GrantGlob::new(pattern).unwrap();
            let mut want: Vec<PathBuf> = Vec::new();
            let walk = tree.walk();
            for text in (0..walk.len()).map(|i| walk.path(i)) {
                let path = Path::new(text);
                if glob.matches(text) && !want.iter().any(|f| path.starts_with(f)) {
                    want.push(path.to_path_buf());
                }
            }
            assert!(!want.is_empty(), "{pattern}");
            assert_eq!(got, want, "{pattern}");
        }
        // A walked root inside a denied folder: everything in it is covered.
        let inner = dir.join("a/.ssh");
        let mut tree = Tree::new(vec![inner.clone()]);
        assert_eq!(expand("/**/.ssh/**", &mut tree), vec![inner.join("keys")]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A last-segment denial (`/dev/sd*`) found through the cut is what matching every entry
    /// of the folder finds.
    #[test]
    fn the_cut_of_a_listing_finds_what_the_full_listing_finds() {
        let dir = std::env::temp_dir().join(format!("warden-confine-last-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sdz")).unwrap();
        for f in ["sda", "sda1", "sd", "xsda", "nvme0n1", "nvme", "a.pem", "pem", "a.pem.bak", ".env", ".env.local", "hda", "x"] {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        let d = dir.display();
        let patterns = ["sd*", "nvme*", "*.pem", ".env*", "h?a", "?da*", "*", "s*a", "x"];
        for last in patterns {
            let pattern = format!("{d}/{last}");
            assert!(matches!(shape(&pattern), Shape::Last(_) | Shape::Exact(_)), "{pattern}");
            let got = expand(&pattern, &mut Tree::new(Vec::new()));
            let glob = GrantGlob::new(&pattern).unwrap();
            let mut want: Vec<PathBuf> = Tree::new(Vec::new()).listing(&dir).iter().filter(|(_, s)| glob.matches(s)).map(|(p, _)| p.clone()).collect();
            let mut got_sorted = got.clone();
            got_sorted.sort();
            want.sort();
            assert!(!want.is_empty(), "{pattern}");
            assert_eq!(got_sorted, want, "{pattern}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The walk is the plain breadth-first walk.
    #[test]
    fn the_walk_lists_what_a_plain_walk_lists() {
        use std::os::unix::ffi::OsStrExt;
        let dir = plant("walk", &["a/b/c", "a/.ssh", "d", "e/f"], &["a/x", "a/b/.env", "a/b/c/y.pem", "a/.ssh/id_rsa", "d/z", "e/f/g"]);
        std::os::unix::fs::symlink(dir.join("a"), dir.join("d/link")).unwrap();
        std::fs::create_dir_all(dir.join("a").join(std::ffi::OsStr::from_bytes(b"bad\xff/inner"))).unwrap();
        let roots = vec![dir.join("a"), dir.join("d/"), dir.join("e")];
        let want = crate::walk::tests::plain_walk(&roots);
        let mut tree = Tree::new(roots);
        let walk = tree.walk();
        let got: Vec<String> = (0..walk.len()).map(|i| walk.path(i).to_string()).collect();
        assert_eq!(got, want);
        assert!(got.iter().any(|p| p.ends_with("d/link")) && !got.iter().any(|p| p.contains("link/")));
        let names: Vec<&str> = (0..walk.len()).map(|i| walk.name(i)).collect();
        assert!(names.contains(&"y.pem") && names.contains(&"link"));
        assert_eq!(walk.named(".env").len(), 1);
        assert!(walk.named("nothing").is_empty());
        assert!(!tree.cut);
        // A root that is a symlink is walked where it leads (as its mount shows it).
        let mut via_link = Tree::new(vec![dir.join("d/link")]);
        let walk = via_link.walk();
        let got: Vec<&str> = (0..walk.len()).map(|i| walk.path(i)).collect();
        assert!(got.iter().any(|p| p.ends_with("d/link/b/.env")), "{got:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn deep_denials_past_the_walk_s_limit_are_found_by_name() {
        // A command can fill the workspace past the walk's limit on purpose (or a
        // `node_modules` does): the secrets deeper down are still found.
        let dir = plant("sparse", &["aaa", "services/api/deep"], &["services/api/deep/.env", "services/key.pem", "b.txt"]);
        for i in 0..40 {
            std::fs::write(dir.join(format!("aaa/f{i}")), "").unwrap();
        }
        let patterns = [format!("{}/**/.env", dir.display()), format!("{}/**/*.pem", dir.display())];
        let mut tree = Tree::new(vec![dir.clone()]);
        tree.limit = 10;
        tree.cuts = patterns.iter().map(|p| NameCut::of(p)).collect();
        assert_eq!(expand(&patterns[0], &mut tree), vec![dir.join("services/api/deep/.env")]);
        assert_eq!(expand(&patterns[1], &mut tree), vec![dir.join("services/key.pem")]);
        assert!(tree.cut);
        assert_eq!(tree.sparse.as_ref().map(|s| s.cut), Some(false));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn deep_denials_are_found_in_writable_roots_only() {
        let dir = std::env::temp_dir().join(format!("warden-confine-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::write(dir.join("a/b/.env"), "S=1").unwrap();
        std::fs::write(dir.join("a/.env.example"), "").unwrap();
        let mut tree = Tree::new(vec![dir.clone()]);
        let found = expand("/**/.env", &mut tree);
        assert_eq!(found, vec![dir.join("a/b/.env")]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
