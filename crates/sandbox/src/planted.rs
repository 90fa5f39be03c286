//! Links a command could have planted: a grant is not followed through a symbolic link that
//! lies inside a writable grant.
//!
//! Planning resolves every granted path to its canonical form and shows what it finds there.
//! A link inside a writable grant may be the work of an earlier run: a command that may write
//! the workspace can move a folder aside and put a link where a grant of the next run's spec
//! lies beneath it (`mv a a2; mkdir a; ln -s ~/.ssh a/vendor` against a read grant on
//! `a/vendor`, or a write grant on `a/out`), and the next plan would then bind the link's
//! target, outside everything the policy granted. So a read or write grant whose resolution
//! follows a link lying beneath a writable grant is dropped (the command still sees the link
//! itself, inside the writable grant, and Landlock refuses what lies behind it); hidden and
//! guarded paths are resolved as before, which can only cover more.

use std::path::{Component, Path, PathBuf};

use crate::plan::Canon;
use crate::recall::Ask;

/// How many links one resolution may follow (the kernel's limit).
const MAX_LINKS: u32 = 40;

impl Canon {
    /// Whether resolving `p` follows a symbolic link that lies beneath one of `roots` (the
    /// canonical writable grants), including the links its links lead through.
    pub(crate) fn through_planted(&mut self, p: &Path, roots: &[PathBuf]) -> bool {
        let mut followed = 0;
        self.walk(p, roots, &mut followed)
    }

    fn walk(&mut self, p: &Path, roots: &[PathBuf], followed: &mut u32) -> bool {
        let mut at = PathBuf::from("/");
        for c in p.components() {
            match c {
                Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
                Component::ParentDir => {
                    let here = self.get(&at);
                    at = here.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
                }
                Component::Normal(name) => {
                    let parent = self.get(&at);
                    let place = parent.join(name);
                    if !self.is_link(&place) {
                        at = place;
                        continue;
                    }
                    *followed += 1;
                    if *followed > MAX_LINKS || roots.iter().any(|r| place.starts_with(r)) {
                        return true;
                    }
                    let Some(text) = self.path(Ask::Link(place.clone())) else { return true };
                    let target = parent.join(text);
                    if self.walk(&target, roots, followed) {
                        return true;
                    }
                    at = target;
                }
            }
        }
        false
    }
}
