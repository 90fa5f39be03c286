//! The parent's half of the setup: turns a [`Spec`] into a flat list of steps with every
//! string already a C string, so the child after fork only makes system calls.
//!
//! The view is built on a fresh tmpfs (the new root) mounted on a staging directory; every
//! granted host path is bind-mounted at its own path inside it, read-only ones then made
//! read-only (`attr.rs`); hidden paths are covered by an empty mode-000 file or directory; `/dev` gets only
//! the safe nodes, `/proc` is the new pid namespace's, scratch directories are empty tmpfs.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{CString, OsStr, OsString};
use std::fs::Metadata;
use std::ops::Deref;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::child::Staging;
use crate::landlock::Masks;
use crate::recall::{Answer, Ask, Unchecked};
use crate::{Access, Error, Spec, attr};

/// One step of the child's mount setup.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Create a directory (mode 0755); an existing one is fine.
    Mkdir(CString),
    /// Create an empty file; an existing one is fine.
    Touch(CString),
    /// Create a symbolic link `link` -> `target`.
    Symlink { target: CString, link: CString },
    /// Bind `src` on `dst`, then add the mount attributes `attrs` (`attr.rs`) to the bind, if
    /// set: read-only, and the like.
    Bind { src: CString, dst: CString, attrs: Option<u64> },
    /// Mount a tmpfs.
    Tmpfs { dst: CString, data: CString },
    /// Mount the new pid namespace's proc.
    Proc(CString),
    /// Attach the parent's detached tree `tree` (an index into [`Plan::trees`]) at `dst`.
    Attach { tree: usize, dst: CString },
}

/// One Landlock rule: a path inside the new root and the rights beneath it.
#[derive(Debug)]
pub(crate) struct Rule {
    pub path: CString,
    pub access: u64,
}

/// Everything the child needs, prepared in the parent: the layout of the view and the
/// command line. Reads of the layout's fields go through it ([`Deref`]).
#[derive(Debug)]
pub(crate) struct Plan {
    /// Shared with the runs that recall it (`recall.rs`).
    pub layout: Arc<Layout>,
    pub argv: Vec<CString>,
    pub env: Vec<CString>,
    /// Set when the layout was recalled: to be checked before the command starts.
    pub recalled: Option<Unchecked>,
}

impl Plan {
    /// Whether the layout still holds: planned for this run, or recalled and still holding.
    pub(crate) fn holds(&self) -> bool {
        self.recalled.as_ref().is_none_or(Unchecked::holds)
    }
}

impl Deref for Plan {
    type Target = Layout;
    fn deref(&self) -> &Layout {
        &self.layout
    }
}

/// What a plan shows and how, without the command line: a function of the spec's grants and
/// of what the file system answered while planning.
#[derive(Debug)]
pub(crate) struct Layout {
    /// The staging directory the setup tmpfs is mounted on, the empty mode-000 file and
    /// directory in it that cover hidden paths, and the new root (`staging/root`).
    pub staging: Staging,
    /// The steps, beginning with [`base`]'s.
    pub steps: Vec<Step>,
    pub rules: Vec<Rule>,
    pub cwd: CString,
    pub program: CString,
    /// Writable grants the parent clones as idmapped trees (root callers only), in the order
    /// the [`Step::Attach`] steps name them.
    pub trees: Vec<PathBuf>,
    /// (device, inode) of the host paths planning looked at, as `lstat` found them: what the
    /// prepared view's key names its binds by, without looking again.
    pub ids: PathMap<(u64, u64)>,
    /// The prepared view's key of this layout, without and with network (`view.rs`), made
    /// once: runs that recall the layout look it up without making it again.
    pub view_keys: [OnceLock<Option<Vec<u8>>>; 2],
    /// What the run reports about its view: the grants not followed through a planted link.
    pub notes: Vec<String>,
}

/// What a read-only bind is made (the flags its source has locked are kept: `attr.rs`).
const READ_ONLY: u64 = attr::RDONLY | attr::NOSUID | attr::NODEV;

/// Device nodes shown in `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

fn cstr(bytes: &[u8]) -> Result<CString, Error> {
    CString::new(bytes).map_err(|_| Error::Spec("a path or argument contains a NUL byte".into()))
}

fn cpath(p: &Path) -> Result<CString, Error> {
    cstr(p.as_os_str().as_bytes())
}

/// `root` + absolute `p`.
fn under(root: &Path, p: &Path) -> PathBuf {
    let rel: PathBuf = p.components().filter(|c| !matches!(c, Component::RootDir)).collect();
    root.join(rel)
}

/// The staging directory's C strings (see [`Staging`]).
fn staged(dir: &Path) -> Result<Staging, Error> {
    Ok(Staging {
        dir: cpath(dir)?,
        cover_file: cpath(&dir.join("cover-file"))?,
        cover_dir: cpath(&dir.join("cover-dir"))?,
        root: cpath(&dir.join("root"))?,
    })
}

/// What every plan's view begins with whatever it grants, for a process started before the
/// plan is known (`prestart.rs`): the staging directory a plan granting nothing beneath it
/// would use (every plan has a scratch `/tmp` and most a `/var/tmp`), and the first steps
/// (`/dev`, the folder `/proc` is mounted on). [`Plan::new`] makes the same steps first; a
/// plan whose staging directory differs cannot use such a process.
pub(crate) fn base() -> Result<(Staging, Vec<Step>), Error> {
    let mut canon = Canon::default();
    let dir = staging_dir(&[PathBuf::from("/tmp"), PathBuf::from("/var/tmp")], &mut canon)?;
    let b = Builder::based(&dir.join("root"), false, &mut canon)?;
    Ok((staged(&dir)?, b.steps))
}

/// Where the setup tmpfs goes: a directory that no granted path lies under.
fn staging_dir(paths: &[PathBuf], canon: &mut Canon) -> Result<PathBuf, Error> {
    for c in ["/tmp", "/mnt", "/media", "/srv", "/run", "/var/tmp", "/opt", "/boot"] {
        let c = Path::new(c);
        if !paths.iter().any(|p| p.starts_with(c)) && canon.yes(Ask::RealDir(c.to_path_buf())) {
            return Ok(c.to_path_buf());
        }
    }
    Err(Error::Spec("no staging directory free of granted paths (tried /tmp, /mnt, /media, /srv, /run, ...)".into()))
}

/// A map keyed by path with a cheap hash: a plan looks hundreds of paths up, and the default
/// hasher (keyed against hash flooding, which paths of the caller's own policy and file system
/// are not) cost more than the lookups themselves.
pub(crate) type PathMap<V> = HashMap<PathBuf, V, std::hash::BuildHasherDefault<PathHasher>>;

/// The hasher of [`PathMap`]: multiply-rotate over 8-byte words.
#[derive(Default)]
pub(crate) struct PathHasher(u64);

impl std::hash::Hasher for PathHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes(c.try_into().unwrap_or_default());
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Canonical forms of paths that may not exist (the longest existing prefix canonicalized,
/// the rest appended), and what `lstat` found at each path looked at, remembered for one plan:
/// its paths share most of their folders, and each later step asks about the same paths
/// (which are links, which are folders, their identities). Every question put to the file
/// system is kept with its answer in `asked`, for `recall.rs`.
#[derive(Default)]
pub(crate) struct Canon {
    forms: PathMap<PathBuf>,
    seen: PathMap<Option<Metadata>>,
    pub asked: Vec<(Ask, Answer)>,
    /// Grants not followed through a link a command could have planted (`planted.rs`).
    pub planted: Vec<PathBuf>,
}

impl Canon {
    /// `lstat` of `p` (`None`: nothing there), once per plan.
    fn lstat(&mut self, p: &Path) -> Option<&Metadata> {
        if !self.seen.contains_key(p) {
            let m = std::fs::symlink_metadata(p).ok();
            self.asked.push((Ask::Lstat(p.to_path_buf()), Answer::node(m.as_ref())));
            self.seen.insert(p.to_path_buf(), m);
        }
        self.seen.get(p).and_then(Option::as_ref)
    }

    /// Asks the file system `ask`, keeping the answer.
    fn ask(&mut self, ask: Ask) -> Answer {
        let answer = ask.answer();
        self.asked.push((ask, answer.clone()));
        answer
    }

    fn yes(&mut self, ask: Ask) -> bool {
        matches!(self.ask(ask), Answer::Yes(true))
    }

    pub(crate) fn path(&mut self, ask: Ask) -> Option<PathBuf> {
        match self.ask(ask) {
            Answer::Path(p) => p,
            _ => None,
        }
    }

    pub(crate) fn is_link(&mut self, p: &Path) -> bool {
        self.lstat(p).is_some_and(|m| m.file_type().is_symlink())
    }

    /// The identities of the paths that were there.
    fn ids(&self) -> PathMap<(u64, u64)> {
        self.seen.iter().filter_map(|(p, m)| m.as_ref().map(|m| (p.clone(), (m.dev(), m.ino())))).collect()
    }

    /// `p` canonical. A folder's canonical form is known before its entries': an entry that
    /// is not a symbolic link is then the folder's form plus its name (one `lstat`), a link
    /// is resolved whole.
    pub(crate) fn get(&mut self, p: &Path) -> PathBuf {
        if let Some(c) = self.forms.get(p) {
            return c.clone();
        }
        if !p.is_absolute() {
            // Relative to the current directory, as `canonicalize` takes it.
            return match self.path(Ask::Absolute(p.to_path_buf())) {
                Some(abs) if abs.is_absolute() => self.get(&abs),
                _ => p.to_path_buf(),
            };
        }
        let c = match (p.parent(), p.file_name()) {
            (Some(parent), Some(name)) => {
                let joined = self.get(parent).join(name);
                if self.is_link(&joined) { self.path(Ask::Canonical(joined.clone())).unwrap_or(joined) } else { joined }
            }
            _ => self.path(Ask::Canonical(p.to_path_buf())).unwrap_or_else(|| p.to_path_buf()),
        };
        self.forms.insert(p.to_path_buf(), c.clone());
        c
    }
}

/// The path of `map` nearest above `p` or `p` itself, with its value: one lookup per folder
/// of `p` (paths compare by components, as `Path::starts_with` does), not a scan of the map.
fn nearest<'m, V>(map: &'m BTreeMap<PathBuf, V>, p: &Path) -> Option<(&'m PathBuf, &'m V)> {
    p.ancestors().find_map(|a| map.get_key_value(a))
}

/// The view after normalisation: canonical path -> access, redundant children dropped.
fn normalise(spec: &Spec, canon: &mut Canon) -> BTreeMap<PathBuf, Access> {
    let mut view: BTreeMap<PathBuf, Access> = BTreeMap::new();
    let writable: Vec<PathBuf> = spec.mounts.iter().filter(|m| m.access == Access::Write && m.path.is_absolute()).map(|m| canon.get(&m.path)).collect();
    for m in &spec.mounts {
        if !m.path.is_absolute() {
            continue;
        }
        let p = canon.get(&m.path);
        // Not through a link a command could have planted (`planted.rs`).
        let shows = matches!(m.access, Access::Read | Access::Write);
        if shows && p != m.path && canon.through_planted(&m.path, &writable) {
            canon.planted.push(m.path.clone());
            continue;
        }
        let entry = view.entry(p).or_insert(m.access);
        // Hide beats Guard beats Write beats Read on the same path.
        let rank = |a: Access| match a {
            Access::Read => 0,
            Access::Write => 1,
            Access::Guard => 2,
            Access::Hide => 3,
        };
        if rank(m.access) > rank(*entry) {
            *entry = m.access;
        }
    }
    // Drop a grant whose nearest granted ancestor already gives the same access, and every
    // grant beneath a hidden path (each decided on the view as it was before any drop).
    let all = view.clone();
    for (p, a) in &all {
        let above = p.parent().and_then(|up| nearest(&all, up));
        if let Some((_, up)) = above {
            // A guard (bound read-only over itself) beneath a read-only grant changes nothing:
            // children still see it as their nearest grant above, and are dropped as before.
            let redundant = up == a
                || *up == Access::Hide
                || (*up == Access::Guard && *a != Access::Hide)
                || (*up == Access::Read && *a == Access::Guard);
            if redundant {
                view.remove(p);
            }
        }
        // A hidden or guarded path outside every shown one is already invisible.
        let shown = above.is_some_and(|(_, up)| matches!(up, Access::Read | Access::Write));
        if matches!(a, Access::Hide | Access::Guard) && !shown {
            view.remove(p);
        }
    }
    view
}

/// Looks `name` up in `PATH` among the paths the view shows.
fn resolve_program(spec: &Spec, view: &BTreeMap<PathBuf, Access>, canon: &mut Canon) -> Option<PathBuf> {
    let first = spec.argv.first()?;
    let visible = |p: &Path| {
        matches!(nearest(view, p), Some((_, Access::Read | Access::Write | Access::Guard)))
    };
    if first.as_bytes().contains(&b'/') {
        let p = spec.cwd.join(first);
        return (visible(&canon.get(&p)) && canon.yes(Ask::Executable(p.clone()))).then_some(p);
    }
    let path = spec
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(first))
        .find(|p| visible(&canon.get(p)) && canon.yes(Ask::Executable(p.clone())))
}

impl Plan {
    /// Prepares the run of `spec` with Landlock `masks`. `Ok(None)`: the program is not found
    /// in the sandbox's view. `mapped`: the command runs as an unprivileged id (root caller),
    /// writable grants are attached as the parent's idmapped trees. `recall`: take the layout
    /// planned last for such a spec, unchecked ([`Plan::holds`] checks it).
    pub(crate) fn new(spec: &Spec, masks: &Masks, mapped: bool, recall: bool) -> Result<Option<Plan>, Error> {
        let (layout, recalled) = match recall.then(|| crate::recall::recall(spec, masks, mapped)).flatten() {
            Some((layout, unchecked)) => (layout, Some(unchecked)),
            None => {
                let mut canon = Canon::default();
                let Some(layout) = Layout::new(spec, masks, mapped, &mut canon)? else { return Ok(None) };
                let layout = Arc::new(layout);
                crate::recall::keep(spec, masks, mapped, &layout, canon.asked);
                (layout, None)
            }
        };
        let argv = spec.argv.iter().map(|a| cstr(a.as_bytes())).collect::<Result<Vec<_>, _>>()?;
        let env = spec
            .env
            .iter()
            .map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                cstr(&kv)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(Plan { layout, argv, env, recalled }))
    }
}

impl Layout {
    /// Plans the view of `spec`, asking the file system through `canon`. `Ok(None)`: the
    /// program is not found in the view.
    fn new(spec: &Spec, masks: &Masks, mapped: bool, canon: &mut Canon) -> Result<Option<Layout>, Error> {
        let view = normalise(spec, canon);
        let Some(program) = resolve_program(spec, &view, canon) else { return Ok(None) };
        let scratch: Vec<PathBuf> = spec.scratch.iter().filter(|p| p.is_absolute()).map(|p| canon.get(p)).collect();
        let mut all: Vec<PathBuf> = view.keys().cloned().collect();
        all.extend(scratch.iter().cloned());
        let staging = staging_dir(&all, canon)?;
        let root = staging.join("root");
        let mut b = Builder::based(&root, mapped, canon)?;

        // Scratch directories, /dev and /proc first: granted paths may sit beneath them.
        let mut targets: Vec<(PathBuf, Target)> = Vec::new();
        for s in &scratch {
            targets.push((s.clone(), Target::Scratch));
        }
        for (p, a) in &view {
            targets.push((p.clone(), Target::Grant(*a)));
        }
        for p in pins(&view, canon) {
            targets.push((p, Target::Pin));
        }
        targets.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.order().cmp(&y.1.order())));

        let links = symlinks(spec, &view, canon);
        b.steps.push(Step::Proc(cpath(&root.join("proc"))?));

        let mut rules = vec![Rule { path: cstr(b"/")?, access: masks.read_dir }];
        for dev in DEVICES {
            rules.push(Rule { path: cstr(format!("/dev/{dev}").as_bytes())?, access: masks.device });
        }
        rules.push(Rule { path: cstr(b"/dev/shm")?, access: masks.write });
        rules.push(Rule { path: cstr(b"/proc")?, access: masks.read & !landlock_exec(masks) });

        for (p, t) in &targets {
            let inside = under(&root, p);
            match t {
                Target::Scratch => {
                    b.mkdir_p(p)?;
                    b.steps.push(Step::Tmpfs { dst: cpath(&inside)?, data: cstr(b"mode=1777")? });
                    rules.push(Rule { path: cpath(p)?, access: masks.write });
                }
                Target::Grant(access) => b.grant(canon, p, *access, &inside, masks, &mut rules)?,
                Target::Pin => {
                    let dst = cpath(&inside)?;
                    b.steps.push(Step::Bind { src: dst.clone(), dst, attrs: None });
                }
            }
        }
        // Last: a link beneath a scratch folder (`/tmp/ws-link`) made before its tmpfs was
        // mounted would be covered by it, and the steps beneath it would fail.
        for (link, text) in links {
            if let Some(parent) = link.parent() {
                b.mkdir_p(parent)?;
            }
            b.steps.push(Step::Symlink { target: cpath(&text)?, link: cpath(&under(&root, &link))? });
        }
        Ok(Some(Layout {
            staging: staged(&staging)?,
            steps: b.steps,
            rules,
            cwd: cpath(&canon.get(&spec.cwd))?,
            program: cpath(&canon.get(&program))?,
            trees: b.trees,
            ids: canon.ids(),
            view_keys: Default::default(),
            notes: canon
                .planted
                .iter()
                .map(|p| format!("grant {} not shown: it leads through a link inside a writable grant, which a command could have made", p.display()))
                .collect(),
        }))
    }
}

/// What the view of a spec shows, as the sandbox builds it (see [`shown`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// Every path kept after normalisation (canonical, redundant children dropped), in path
    /// order, with its access.
    pub paths: Vec<(PathBuf, Access)>,
    /// The symbolic links recreated in the new root: the link and its text.
    pub links: Vec<(PathBuf, PathBuf)>,
}

/// What the view of `spec` shows. For diagnostics, and for building the same view with
/// another tool (the spawn bench's bubblewrap peer).
pub fn shown(spec: &Spec) -> Shown {
    let mut canon = Canon::default();
    let view = normalise(spec, &mut canon);
    let links = symlinks(spec, &view, &mut canon).into_iter().collect();
    Shown { paths: view.into_iter().collect(), links }
}

/// Symbolic links on the way to a granted path that live in the new root itself (not inside
/// a bound directory), e.g. `/lib -> usr/lib`: recreated so that paths given in their usual
/// form (the ELF interpreter `/lib64/ld-linux-x86-64.so.2`, `/bin/sh`) resolve.
fn symlinks(spec: &Spec, view: &BTreeMap<PathBuf, Access>, canon: &mut Canon) -> BTreeMap<PathBuf, PathBuf> {
    let mut links = BTreeMap::new();
    // Mounts share their first folders (`/etc`, `~`): each is read once.
    let mut read: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    for m in &spec.mounts {
        let mut p = PathBuf::from("/");
        for c in m.path.components().skip(1) {
            p.push(c);
            if p.parent().is_some_and(|parent| nearest(view, parent).is_some()) {
                break;
            }
            let link = read.entry(p.clone()).or_insert_with_key(|p| if canon.is_link(p) { canon.path(Ask::Link(p.clone())) } else { None });
            if let Some(text) = link.clone() {
                if !view.contains_key(&p) {
                    links.insert(p.clone(), text);
                }
                break;
            }
        }
    }
    links
}

/// The folders that hold a guarded path inside a writable grant, between the grant and the
/// guarded path: each is bound on itself (a mount point, still writable) so that it cannot be
/// renamed, removed or replaced. A read-only bind covers only the guarded path itself: without
/// these, `mv .git .git-old && mkdir .git && echo ... > .git/config` would put a new `config`
/// where the host's next `git` reads it (the old one moves away with its bind).
fn pins(view: &BTreeMap<PathBuf, Access>, canon: &mut Canon) -> Vec<PathBuf> {
    let mut pins: Vec<PathBuf> = Vec::new();
    for (p, a) in view {
        if *a != Access::Guard {
            continue;
        }
        let Some((grant, Access::Write)) = p.parent().and_then(|up| nearest(view, up)) else { continue };
        for folder in p.ancestors().skip(1).take_while(|f| *f != grant.as_path() && f.starts_with(grant)) {
            // A canonical path's folders are folders, not links; checked all the same.
            let real = canon.lstat(folder).is_some_and(|m| m.file_type().is_dir());
            if real && !pins.iter().any(|q| q == folder) {
                pins.push(folder.to_path_buf());
            }
        }
    }
    pins
}

fn landlock_exec(masks: &Masks) -> u64 {
    landlock::AccessFs::Execute as u64 & masks.handled_fs
}

#[derive(Debug, Clone, Copy)]
enum Target {
    Scratch,
    Grant(Access),
    /// A folder holding guarded paths ([`pins`]).
    Pin,
}

impl Target {
    fn order(&self) -> u8 {
        match self {
            Target::Scratch => 0,
            Target::Grant(Access::Read | Access::Write) | Target::Pin => 1,
            Target::Grant(Access::Guard) => 2,
            Target::Grant(Access::Hide) => 3,
        }
    }
}

struct Builder {
    root: PathBuf,
    /// The folders made so far (a set: every grant's ancestors are looked up in it).
    made: PathMap<()>,
    steps: Vec<Step>,
    mapped: bool,
    trees: Vec<PathBuf>,
}

impl Builder {
    /// A builder for the new root `root` with [`base`]'s steps made: `/dev` and the folder
    /// `/proc` is mounted on.
    fn based(root: &Path, mapped: bool, canon: &mut Canon) -> Result<Builder, Error> {
        let mut b = Builder { root: root.to_path_buf(), made: PathMap::default(), steps: Vec::new(), mapped, trees: Vec::new() };
        b.dev(canon)?;
        b.mkdir_p(Path::new("/proc"))?;
        Ok(b)
    }

    /// Creates `p` and its ancestors inside the new root (once each).
    fn mkdir_p(&mut self, p: &Path) -> Result<(), Error> {
        let mut acc = PathBuf::from("/");
        for c in p.components().skip(1) {
            acc.push(c);
            if !self.made.contains_key(&acc) {
                self.made.insert(acc.clone(), ());
                self.steps.push(Step::Mkdir(cpath(&under(&self.root, &acc))?));
            }
        }
        Ok(())
    }

    fn dev(&mut self, canon: &mut Canon) -> Result<(), Error> {
        let dev = self.root.join("dev");
        self.mkdir_p(Path::new("/dev"))?;
        self.steps.push(Step::Tmpfs { dst: cpath(&dev)?, data: cstr(b"mode=0755")? });
        for name in DEVICES {
            let host = Path::new("/dev").join(name);
            if canon.yes(Ask::Exists(host.clone())) {
                // Its identity, for the prepared view's key (`ids`).
                canon.lstat(&host);
                let dst = cpath(&dev.join(name))?;
                self.steps.push(Step::Touch(cpath(&dev.join(name))?));
                self.steps.push(Step::Bind { src: cpath(&host)?, dst, attrs: None });
            }
        }
        self.steps.push(Step::Mkdir(cpath(&dev.join("shm"))?));
        self.steps.push(Step::Tmpfs { dst: cpath(&dev.join("shm"))?, data: cstr(b"mode=1777")? });
        for (link, target) in
            [("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")]
        {
            self.steps.push(Step::Symlink { target: cstr(target.as_bytes())?, link: cpath(&dev.join(link))? });
        }
        Ok(())
    }

    fn grant(&mut self, canon: &mut Canon, p: &Path, access: Access, inside: &Path, masks: &Masks, rules: &mut Vec<Rule>) -> Result<(), Error> {
        let Some(meta) = canon.lstat(p).cloned() else { return Ok(()) };
        let dst = cpath(inside)?;
        match access {
            Access::Read | Access::Write => {
                if let Some(parent) = p.parent() {
                    self.mkdir_p(parent)?;
                }
                let dir = meta.is_dir();
                if dir {
                    self.made.insert(p.to_path_buf(), ());
                    self.steps.push(Step::Mkdir(dst.clone()));
                } else {
                    self.steps.push(Step::Touch(dst.clone()));
                }
                if access == Access::Write && self.mapped {
                    self.steps.push(Step::Attach { tree: self.trees.len(), dst });
                    self.trees.push(p.to_path_buf());
                } else {
                    let attrs = (access == Access::Read).then_some(READ_ONLY);
                    self.steps.push(Step::Bind { src: cpath(p)?, dst, attrs });
                }
                let rights = if access == Access::Read { masks.read } else { masks.write };
                rules.push(Rule { path: cpath(p)?, access: if dir { rights } else { rights & masks.file } });
            }
            Access::Guard => {
                self.steps.push(Step::Bind { src: dst.clone(), dst, attrs: Some(READ_ONLY) });
            }
            Access::Hide => {
                let cover = if meta.is_dir() { "cover-dir" } else { "cover-file" };
                let src = self.root.parent().map(|s| s.join(cover)).unwrap_or_default();
                self.steps.push(Step::Bind { src: cpath(&src)?, dst, attrs: Some(READ_ONLY | attr::NOEXEC) });
            }
        }
        Ok(())
    }
}

/// For tests and diagnostics: the path as the child will see it.
#[allow(dead_code)]
pub(crate) fn display(c: &CString) -> &OsStr {
    OsStr::from_bytes(c.as_bytes())
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
