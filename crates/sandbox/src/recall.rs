//! Plans recalled: the next run of the same spec takes the layout planned for the last one,
//! once the file system still answers every question planning asked it as it did then.
//!
//! Planning a view (`plan.rs`) looks at the file system about seventy times for a typical
//! policy (which paths exist, which are links and where they lead, which folders hold a
//! granted path, whether the program is executable) and spends most of its time on the paths
//! themselves: a quarter of a millisecond here, on every run. A long-lived warden runs the
//! same spec again and again (the same grants, the same program name and `PATH`). A
//! [`Layout`] depends on nothing but the spec's grants and those answers, so planning keeps
//! each question with its answer ([`Ask`], [`Answer`]), and a later run of a spec with the
//! same grants asks them all again: only when every answer is the same does it take the
//! layout as it was. A path that appeared, vanished, became a link, pointed elsewhere, changed
//! from file to folder, or was replaced by another file (another device or inode) makes the
//! run plan afresh. The command line and environment are the run's own, never recalled.

use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::landlock::Masks;
use crate::plan::Layout;
use crate::{Mount, Spec};

/// Layouts kept; the least recently used goes first.
const KEPT: usize = 16;

/// A question planning asked the file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ask {
    /// What is at this path, links not followed.
    Lstat(PathBuf),
    /// The path's canonical form (`canonicalize`).
    Canonical(PathBuf),
    /// The path made absolute against the current directory.
    Absolute(PathBuf),
    /// A link's text.
    Link(PathBuf),
    /// Whether the path (links followed) is an executable file.
    Executable(PathBuf),
    /// Whether the path is a folder and not a link.
    RealDir(PathBuf),
    /// Whether something is at the path (links followed).
    Exists(PathBuf),
}

/// What the file system answered, reduced to what planning uses of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// (device, inode, file type), or nothing there.
    Node(Option<(u64, u64, u32)>),
    Path(Option<PathBuf>),
    Yes(bool),
}

impl Answer {
    pub(crate) fn node(m: Option<&Metadata>) -> Answer {
        Answer::Node(m.map(|m| (m.dev(), m.ino(), m.mode() & libc::S_IFMT)))
    }
}

/// Whether `p` (links followed) is a file someone may execute.
fn executable(p: &Path) -> bool {
    p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl Ask {
    /// Asks the file system now.
    pub(crate) fn answer(&self) -> Answer {
        match self {
            Ask::Lstat(p) => Answer::node(std::fs::symlink_metadata(p).ok().as_ref()),
            Ask::Canonical(p) => Answer::Path(p.canonicalize().ok()),
            Ask::Absolute(p) => Answer::Path(std::path::absolute(p).ok()),
            Ask::Link(p) => Answer::Path(std::fs::read_link(p).ok()),
            Ask::Executable(p) => Answer::Yes(executable(p)),
            Ask::RealDir(p) => Answer::Yes(p.is_dir() && !p.is_symlink()),
            Ask::Exists(p) => Answer::Yes(p.exists()),
        }
    }
}

/// What a layout was planned from besides the file system: the spec's grants, the program's
/// name and where it is looked up, and how the run is confined.
#[derive(Debug)]
struct Key {
    mounts: Vec<Mount>,
    scratch: Vec<PathBuf>,
    cwd: PathBuf,
    program: Option<OsString>,
    path: Option<OsString>,
    masks: Masks,
    mapped: bool,
}

fn path_of(spec: &Spec) -> Option<&OsString> {
    spec.env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v)
}

impl Key {
    fn of(spec: &Spec, masks: &Masks, mapped: bool) -> Key {
        Key {
            mounts: spec.mounts.clone(),
            scratch: spec.scratch.clone(),
            cwd: spec.cwd.clone(),
            program: spec.argv.first().cloned(),
            path: path_of(spec).cloned(),
            masks: *masks,
            mapped,
        }
    }

    fn fits(&self, spec: &Spec, masks: &Masks, mapped: bool) -> bool {
        self.mapped == mapped
            && self.masks == *masks
            && self.cwd == spec.cwd
            && self.program.as_ref() == spec.argv.first()
            && self.path.as_ref() == path_of(spec)
            && self.mounts == spec.mounts
            && self.scratch == spec.scratch
    }
}

#[derive(Debug)]
struct Kept {
    key: Key,
    layout: Arc<Layout>,
    asked: Vec<(Ask, Answer)>,
}

static STORE: Mutex<Vec<Arc<Kept>>> = Mutex::new(Vec::new());

/// The layout planned last for a spec like `spec`, to be checked ([`Unchecked::holds`])
/// before anything of the run's command starts.
pub(crate) fn recall(spec: &Spec, masks: &Masks, mapped: bool) -> Option<(Arc<Layout>, Unchecked)> {
    let mut store = STORE.lock().unwrap_or_else(|e| e.into_inner());
    let at = store.iter().position(|k| k.key.fits(spec, masks, mapped))?;
    let hit = store.remove(at);
    store.push(Arc::clone(&hit));
    Some((Arc::clone(&hit.layout), Unchecked(hit)))
}

/// A recalled layout whose answers are still to be asked again.
#[derive(Debug)]
pub(crate) struct Unchecked(Arc<Kept>);

impl Unchecked {
    /// Whether the file system still answers every question as it did when the layout was
    /// planned; when not, the layout is forgotten.
    pub(crate) fn holds(&self) -> bool {
        if self.0.asked.iter().all(|(ask, answer)| ask.answer() == *answer) {
            return true;
        }
        STORE.lock().unwrap_or_else(|e| e.into_inner()).retain(|k| !Arc::ptr_eq(k, &self.0));
        false
    }
}

/// Keeps `layout`, planned for `spec` from the answers `asked`.
pub(crate) fn keep(spec: &Spec, masks: &Masks, mapped: bool, layout: &Arc<Layout>, asked: Vec<(Ask, Answer)>) {
    let kept = Arc::new(Kept { key: Key::of(spec, masks, mapped), layout: Arc::clone(layout), asked });
    let mut store = STORE.lock().unwrap_or_else(|e| e.into_inner());
    store.retain(|k| !k.key.fits(spec, masks, mapped));
    if store.len() >= KEPT {
        store.remove(0);
    }
    store.push(kept);
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStrExt;

    use super::*;
    use crate::Access;
    use crate::plan::Plan;

    #[test]
    fn a_spec_planned_again_is_recalled_only_while_its_answers_hold() {
        let t = std::env::temp_dir().join(format!("warden-recall-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        std::fs::create_dir_all(&t).unwrap();
        let mut spec = Spec::new(vec!["true".into()], t.clone());
        for p in ["/usr", "/bin", "/lib", "/lib64", "/etc"] {
            spec.mounts.push(Mount { path: p.into(), access: Access::Read });
        }
        spec.mounts.push(Mount { path: t.clone(), access: Access::Write });
        spec.mounts.push(Mount { path: t.join(".env"), access: Access::Hide });
        spec.env = vec![(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))];
        let masks = Masks::new(crate::landlock::abi().max(1), false);
        let plan = |spec: &Spec| Plan::new(spec, &masks, false, true).unwrap().unwrap();

        let first = plan(&spec);
        assert!(first.recalled.is_none());
        // Every host path the view binds was looked at (and is asked again on recall): the
        // prepared view's key, made once per layout, names binds by these identities.
        for step in &first.steps {
            if let crate::plan::Step::Bind { src, .. } = step {
                let src = Path::new(std::ffi::OsStr::from_bytes(src.as_bytes()));
                let staging = Path::new(std::ffi::OsStr::from_bytes(first.staging.dir.as_bytes()));
                assert!(src.starts_with(staging) || first.ids.contains_key(src), "{src:?}");
            }
        }
        // The same grants with another command line: recalled, with its own arguments.
        spec.argv.push("--version".into());
        let second = plan(&spec);
        assert!(second.recalled.is_some() && second.holds());
        assert!(Arc::ptr_eq(&first.layout, &second.layout));
        assert_eq!(second.argv.len(), 2);
        // Another program name is another key.
        spec.argv[0] = "false".into();
        assert!(plan(&spec).recalled.is_none());
        spec.argv[0] = "true".into();

        // A covered path appears: the recalled layout no longer holds, and is forgotten.
        std::fs::write(t.join(".env"), "x").unwrap();
        let stale = plan(&spec);
        assert!(stale.recalled.is_some());
        assert!(!stale.holds());
        let fresh = plan(&spec);
        assert!(fresh.recalled.is_none());
        assert_ne!(fresh.steps, first.steps);
        let _ = std::fs::remove_dir_all(&t);
    }
}
