//! Policies whose examples are known to pass, so that a one-shot load does not decide them again.
//!
//! A policy's `example` statements are its author's tests: every load decides them, and a
//! policy one of them fails does not load. Their verdicts depend only on the policy's text and
//! on the code that decides them, so once a load has checked them, the next loads of the same
//! layers by the same binary may skip them ([`warden_policy::Examples::Passed`]). Everything
//! else (parsing, validation, compiling) is done every time.
//!
//! What is kept: one empty file per passing load, named by a SHA-256 over the layers' kinds,
//! file names and texts and over the identity of the running binary (device, inode, size and
//! change times of `/proc/self/exe`: a rebuilt or upgraded warden checks again). It lives in
//! `$XDG_CACHE_HOME/warden/examples` (a folder of mode 0700). A record is believed only when the
//! folder and the file belong to this user, are not links, and the folder is writable by
//! nobody else; anything else is ignored and the examples are checked. Every sandbox the
//! session builds is denied the folder, like the audit log.
//!
//! At most 256 records are kept: the oldest go when a new one is added.
//!
//! Someone who can write the folder can have a policy whose examples fail load anyway. That
//! is all they can do: what is decided is still the policy as written.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use warden_policy::LayerSource;

/// The folder the records are kept in, under the user's cache folder.
pub(crate) fn folder(cache_home: &Path) -> PathBuf {
    cache_home.join("warden").join("examples")
}

/// The record's name for `layers` loaded by this binary; `None` when the binary cannot be
/// identified (nothing is then remembered or believed).
pub(crate) fn key(layers: &[LayerSource]) -> Option<String> {
    let exe = std::fs::metadata("/proc/self/exe").ok()?;
    let mut h = Sha256::new();
    h.update(b"warden examples passed v1\n");
    for n in [exe.dev(), exe.ino(), exe.size()] {
        h.update(n.to_le_bytes());
    }
    for n in [exe.mtime(), exe.mtime_nsec(), exe.ctime(), exe.ctime_nsec()] {
        h.update(n.to_le_bytes());
    }
    h.update(crate::records::policy_hash(layers).as_bytes());
    Some(crate::records::hex(&h.finalize()))
}

/// Whether a record says the examples of the layers named `key` passed.
pub(crate) fn known(dir: &Path, key: &str) -> bool {
    let Some(me) = own_uid() else { return false };
    private(dir, me) && std::fs::symlink_metadata(dir.join(key)).is_ok_and(|m| m.is_file() && m.uid() == me)
}

/// Records that the examples of the layers named `key` passed (best effort: a record that
/// cannot be written means the next load checks them again).
pub(crate) fn remember(dir: &Path, key: &str) {
    let Some(me) = own_uid() else { return };
    if std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).is_err() || !private(dir, me) {
        return;
    }
    // A link planted where the record goes is not followed.
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    let _ = std::fs::OpenOptions::new().write(true).create(true).mode(0o600).custom_flags(nofollow).open(dir.join(key));
    prune(dir, KEPT);
}

/// Records kept at most: each rebuilt warden and each edited policy adds one, and a record of
/// an older binary or text is never used again.
const KEPT: usize = 256;

/// Removes the oldest records (by modification time) beyond the `keep` newest. Only files named
/// like a record are touched.
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut records: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| is_record_name(&e.file_name()))
        .filter_map(|e| {
            let m = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((m.modified().ok()?, e.path()))
        })
        .collect();
    if records.len() <= keep {
        return;
    }
    records.sort_by_key(|r| std::cmp::Reverse(r.0));
    for (_, path) in records.drain(keep..) {
        let _ = std::fs::remove_file(path);
    }
}

/// Whether `name` is what [`key`] makes: 64 lowercase hex digits.
fn is_record_name(name: &std::ffi::OsStr) -> bool {
    let b = name.as_encoded_bytes();
    b.len() == 64 && b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `dir` is a folder (not a link) of user `me` that nobody else may write.
fn private(dir: &Path, me: u32) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && m.uid() == me && m.mode() & 0o022 == 0)
}

/// The effective uid: the owner of this process's `/proc` entry.
fn own_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

#[cfg(test)]
mod tests {
    use super::*;
    use warden_policy::{LayerKind, SourceFile};

    fn layers(text: &str) -> Vec<LayerSource> {
        vec![LayerSource { kind: LayerKind::Cli, files: vec![SourceFile { name: "p.policy".into(), text: text.into() }] }]
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("warden-passed-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_record_names_the_exact_layers_and_this_binary() {
        let (a, b) = (key(&layers("version 1\ndefault deny\n")), key(&layers("version 1\ndefault allow\n")));
        assert!(a.is_some() && a != b);
        assert_eq!(a, key(&layers("version 1\ndefault deny\n")));
        let mut renamed = layers("version 1\ndefault deny\n");
        renamed[0].files[0].name = "q.policy".into();
        assert_ne!(a, key(&renamed));
    }

    #[test]
    fn a_load_records_a_pass_and_the_next_one_skips_the_examples() {
        let cache = scratch("load");
        let ctx = || warden_policy::Context { workspace: "/w".into(), home: "/h".into(), cwd: "/w".into() };
        let good = layers("version 1\ndefault deny\nexample deny \"ls\"\n");
        let bad = layers("version 1\ndefault deny\nexample allow \"ls\"\n");
        // Failing examples: no load, and nothing recorded.
        assert!(crate::Engine::load(&bad, ctx(), &cache).is_err());
        assert!(!known(&folder(&cache), &key(&bad).unwrap()));
        // Passing ones are recorded.
        assert!(crate::Engine::load(&good, ctx(), &cache).is_ok());
        assert!(known(&folder(&cache), &key(&good).unwrap()));
        // A record is all that is believed: under one, the examples are not decided (this one's
        // would fail). Only this user can write one (see below).
        remember(&folder(&cache), &key(&bad).unwrap());
        assert!(crate::Engine::load(&bad, ctx(), &cache).is_ok());
        // Errors other than examples are still found.
        let broken = layers("version 1\ndefault deny\nexample allow \"ls\"\nallow exec (\n");
        remember(&folder(&cache), &key(&broken).unwrap());
        assert!(crate::Engine::load(&broken, ctx(), &cache).is_err());
        let _ = std::fs::remove_dir_all(&cache);
    }

    #[test]
    fn the_oldest_records_beyond_the_limit_are_removed_and_nothing_else() {
        let cache = scratch("prune");
        let dir = folder(&cache);
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).unwrap();
        let name = |i: usize| format!("{i:064x}");
        let base = std::time::SystemTime::now() - std::time::Duration::from_secs(10_000);
        for i in 0..KEPT + 5 {
            let f = std::fs::File::create(dir.join(name(i))).unwrap();
            f.set_modified(base + std::time::Duration::from_secs(i as u64)).unwrap();
        }
        let other = dir.join("not-a-record");
        std::fs::File::create(&other).unwrap().set_modified(base).unwrap();
        let k = key(&layers("version 1\n")).unwrap();
        remember(&dir, &k);
        let left = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(left, KEPT + 1, "the limit, and the file that is not a record");
        assert!(known(&dir, &k), "the new record stays");
        assert!(other.exists());
        // The six oldest went (five beyond the limit, and one for the new record).
        assert!((0..6).all(|i| !dir.join(name(i)).exists()));
        assert!(dir.join(name(6)).exists() && dir.join(name(KEPT + 4)).exists());
        let _ = std::fs::remove_dir_all(&cache);
    }

    #[test]
    fn only_a_record_this_user_made_in_a_private_folder_is_believed() {
        let cache = scratch("trust");
        let dir = folder(&cache);
        let k = key(&layers("version 1\n")).unwrap();
        assert!(!known(&dir, &k));
        remember(&dir, &k);
        assert!(known(&dir, &k));
        assert!(!known(&dir, &key(&layers("version 1\ndefault deny\n")).unwrap()));
        // A folder others may write: records there are not believed, and none are added.
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        assert!(!known(&dir, &k));
        let other = key(&layers("version 1\ndefault ask\n")).unwrap();
        remember(&dir, &other);
        assert!(!dir.join(&other).exists());
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        // A link in a record's place is not a record, and is not followed when remembering.
        let target = cache.join("elsewhere");
        std::os::unix::fs::symlink(&target, dir.join(&other)).unwrap();
        assert!(!known(&dir, &other));
        remember(&dir, &other);
        assert!(!target.exists());
        let _ = std::fs::remove_dir_all(&cache);
    }
}
