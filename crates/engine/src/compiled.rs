//! Policies compiled before, so that a one-shot load (`warden run`, `warden hook`) neither
//! compiles nor checks the examples of the same layers again.
//!
//! A policy's `example` statements are its author's tests: every load decides them, and a
//! policy one of them fails does not load. The compiled set and the examples' verdicts depend
//! only on the layers (their kinds, file names and texts) and on the code that compiles and
//! decides them, so once a load has compiled the layers and checked their examples, the next
//! loads of the same layers by the same binary may take the compiled set as it was.
//!
//! What is kept: one file per such load, named by a SHA-256 over the layers' kinds, file names
//! and texts and over the identity of the running binary (device, inode, size and change times
//! of `/proc/self/exe`: a rebuilt or upgraded warden compiles again). It holds the SHA-256 of
//! the compiled set's bytes ([`warden_policy::PolicySet::to_bytes`]) and the bytes; it is
//! written whole under another name and renamed into place. It lives in
//! `$XDG_CACHE_HOME/warden/compiled` (a folder of mode 0700). A file is believed only when the
//! folder and the file belong to this user, are not links, the folder is writable by nobody
//! else, and the file is a regular file with one name; anything else is ignored and the layers
//! are compiled. Every sandbox and file tool the session serves is denied `CACHE_HOME/warden`,
//! like the audit log.
//!
//! Who can write the folder can make warden decide by another policy than the layers' text.
//! That is no more than they could do anyway when every layer is theirs to edit (user, CLI,
//! project and directory layers are: a developer could run the agent without warden). An
//! enterprise layer (`/etc/warden/`, root's) is not: with one, a compiled set is believed only
//! by root, whose cache only root can write; anyone else compiles every time, and the file
//! then only says that the examples passed (someone who can write the folder can then only
//! make a policy whose examples fail load as written).
//!
//! At most [`KEPT`] files are kept: the oldest go when a new one is added.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use warden_policy::{LayerKind, LayerSource, PolicySet};

/// The folder the files are kept in, under the user's cache folder.
pub(crate) fn folder(cache_home: &Path) -> PathBuf {
    cache_home.join("warden").join("compiled")
}

/// The file's name for `layers` loaded by this binary; `None` when the binary cannot be
/// identified (nothing is then remembered or believed).
pub(crate) fn key(layers: &[LayerSource]) -> Option<String> {
    let exe = std::fs::metadata("/proc/self/exe").ok()?;
    let mut h = Sha256::new();
    h.update(b"warden compiled v1\n");
    for n in [exe.dev(), exe.ino(), exe.size()] {
        h.update(n.to_le_bytes());
    }
    for n in [exe.mtime(), exe.mtime_nsec(), exe.ctime(), exe.ctime_nsec()] {
        h.update(n.to_le_bytes());
    }
    h.update(crate::records::policy_hash(layers).as_bytes());
    Some(crate::records::hex(&h.finalize()))
}

/// What a believed file says of the layers it is named for.
pub(crate) enum Known {
    /// Nothing: compile them and check their examples.
    Nothing,
    /// Their examples passed: compile them, without the examples; `rewrite` when the file is
    /// to be written again (its set did not read back).
    Passed { rewrite: bool },
    /// Their compiled set, examples passed.
    Compiled(Box<PolicySet>),
}

/// What the file named `key` in `dir` says, for `layers` (whose enterprise layer, if any, lets
/// only root believe a compiled set: see the module docs).
pub(crate) fn known(dir: &Path, key: &str, layers: &[LayerSource]) -> Known {
    let Some(me) = own_uid() else { return Known::Nothing };
    if !private(dir, me) {
        return Known::Nothing;
    }
    let Some(bytes) = read_own(&dir.join(key), me) else { return Known::Nothing };
    if !may_take_compiled(layers, me) {
        return Known::Passed { rewrite: false };
    }
    match stored_set(&bytes) {
        Some(set) => Known::Compiled(Box::new(set)),
        // Written by a load that passed, but its set does not read back whole: compiled again.
        None => Known::Passed { rewrite: true },
    }
}

/// Whether a compiled set may be believed for `layers` by user `me`: no layer is one the user
/// could not have edited (an enterprise layer), or the user is root.
pub(crate) fn may_take_compiled(layers: &[LayerSource], me: u32) -> bool {
    me == 0 || layers.iter().all(|l| l.kind != LayerKind::Enterprise)
}

/// The set in a file's bytes: the SHA-256 of the set's bytes as 64 hex digits and a line end,
/// then the bytes.
fn stored_set(bytes: &[u8]) -> Option<PolicySet> {
    let (sum, set) = (bytes.get(..64)?, bytes.get(65..)?);
    if bytes.get(64) != Some(&b'\n') || crate::records::hex(&Sha256::digest(set)).as_bytes() != sum {
        return None;
    }
    PolicySet::from_bytes(set)
}

/// The file's bytes, when it is a regular file of one name owned by `me` (checked on the
/// descriptor read, which is opened without following a link and without blocking on a FIFO).
fn read_own(path: &Path, me: u32) -> Option<Vec<u8>> {
    let flags = rustix::fs::OFlags::NOFOLLOW.bits() | rustix::fs::OFlags::NONBLOCK.bits();
    let mut f = std::fs::OpenOptions::new().read(true).custom_flags(flags as i32).open(path).ok()?;
    let m = f.metadata().ok()?;
    if !m.is_file() || m.uid() != me || m.nlink() != 1 || m.len() > MAX_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(m.len()).ok()?);
    f.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// A file larger than this is not read (a set is some tens of kilobytes per policy).
const MAX_BYTES: u64 = 64 << 20;

/// Records that `set`, compiled from the layers named `key`, passed their examples (best
/// effort: a file that cannot be written means the next load compiles again).
pub(crate) fn remember(dir: &Path, key: &str, set: &PolicySet) {
    let Some(me) = own_uid() else { return };
    if std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).is_err() || !private(dir, me) {
        return;
    }
    let bytes = set.to_bytes();
    let mut text = crate::records::hex(&Sha256::digest(&bytes)).into_bytes();
    text.push(b'\n');
    text.extend(bytes);
    // Written whole under a name of this process's own, never through a link planted there,
    // then renamed over the file's name (a link there is replaced, not followed).
    let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    let made = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(nofollow).open(&tmp);
    let written = made.and_then(|mut f| f.write_all(&text));
    if written.is_err() || std::fs::rename(&tmp, dir.join(key)).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return;
    }
    prune(dir, KEPT);
}

/// Files kept at most: each rebuilt warden and each edited policy adds one, and one of an
/// older binary or text is never used again.
const KEPT: usize = 64;

/// Removes the oldest files (by modification time) beyond the `keep` newest, and files left
/// half-written by a process that ended before renaming them (older than a minute). Only
/// files named like either are touched.
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let now = std::time::SystemTime::now();
    let mut records: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        let Some(when) = e.metadata().ok().filter(std::fs::Metadata::is_file).and_then(|m| m.modified().ok()) else { continue };
        if is_record_name(&name) {
            records.push((when, e.path()));
        } else if is_tmp_name(&name) && now.duration_since(when).is_ok_and(|age| age.as_secs() > 60) {
            let _ = std::fs::remove_file(e.path());
        }
    }
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
    b.len() == 64 && is_hex(b)
}

/// Whether `name` is what [`remember`] writes before renaming: a record's name, `.PID.tmp`.
fn is_tmp_name(name: &std::ffi::OsStr) -> bool {
    let b = name.as_encoded_bytes();
    b.get(..64).is_some_and(is_hex) && b.get(64..).is_some_and(|rest| rest.starts_with(b".") && rest.ends_with(b".tmp"))
}

fn is_hex(b: &[u8]) -> bool {
    b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
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
    use warden_policy::{Action, Context, Request, SourceFile};

    fn layers(text: &str) -> Vec<LayerSource> {
        vec![LayerSource { kind: LayerKind::Cli, files: vec![SourceFile { name: "p.policy".into(), text: text.into() }] }]
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("warden-compiled-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn ctx() -> Context {
        Context { workspace: "/w".into(), home: "/h".into(), cwd: "/w".into() }
    }

    /// The verdict of `ls` under an engine.
    fn ls(engine: &crate::Engine) -> &'static str {
        let a = warden_shell::analyse("ls");
        engine.policy().decide(&Request { agent: None, action: Action::Exec(&a) }, &ctx()).verdict.as_str()
    }

    /// Writes the file for `key` holding the set compiled from `text` (as another load would).
    fn plant(dir: &Path, key: &str, text: &str) {
        remember(dir, key, &warden_policy::compile_with(&layers(text), warden_policy::Examples::Passed).unwrap());
    }

    fn is_compiled(k: Known) -> bool {
        matches!(k, Known::Compiled(_))
    }

    #[test]
    fn a_file_names_the_exact_layers_and_this_binary() {
        let (a, b) = (key(&layers("version 1\ndefault deny\n")), key(&layers("version 1\ndefault allow\n")));
        assert!(a.is_some() && a != b);
        assert_eq!(a, key(&layers("version 1\ndefault deny\n")));
        let mut renamed = layers("version 1\ndefault deny\n");
        renamed[0].files[0].name = "q.policy".into();
        assert_ne!(a, key(&renamed));
        let mut other_kind = layers("version 1\ndefault deny\n");
        other_kind[0].kind = LayerKind::User;
        assert_ne!(a, key(&other_kind));
    }

    #[test]
    fn a_load_that_passes_leaves_its_set_and_the_next_load_takes_it() {
        let cache = scratch("load");
        let dir = folder(&cache);
        let good = layers("version 1\ndefault deny\nexample deny \"ls\"\n");
        let bad = layers("version 1\ndefault deny\nexample allow \"ls\"\n");
        // Failing examples: no load, and nothing written.
        assert!(crate::Engine::load(&bad, ctx(), &cache).is_err());
        assert!(matches!(known(&dir, &key(&bad).unwrap(), &bad), Known::Nothing));
        // Passing ones leave the set, which the next load takes.
        let first = crate::Engine::load(&good, ctx(), &cache).unwrap();
        assert!(is_compiled(known(&dir, &key(&good).unwrap(), &good)));
        let second = crate::Engine::load(&good, ctx(), &cache).unwrap();
        assert_eq!((ls(&first), ls(&second)), ("deny", "deny"));
        // The file is all that is believed: a set planted under the name of `good` decides for
        // it (only this user can write one: see below).
        plant(&dir, &key(&good).unwrap(), "version 1\ndefault allow\n");
        assert_eq!(ls(&crate::Engine::load(&good, ctx(), &cache).unwrap()), "allow");
        let _ = std::fs::remove_dir_all(&cache);
    }

    #[test]
    fn under_an_enterprise_layer_only_root_takes_a_compiled_set() {
        let cache = scratch("enterprise");
        let dir = folder(&cache);
        let mut stacked = layers("version 1\ndefault deny\n");
        stacked.insert(0, LayerSource { kind: LayerKind::Enterprise, files: vec![SourceFile { name: "/etc/warden/e.policy".into(), text: "version 1\ndefault deny\n".into() }] });
        assert!(may_take_compiled(&layers("version 1\n"), 1000));
        assert!(!may_take_compiled(&stacked, 1000), "a user cannot edit the enterprise layer, so cannot stand in for it");
        assert!(may_take_compiled(&stacked, 0), "root can");
        let k = key(&stacked).unwrap();
        plant(&dir, &k, "version 1\ndefault allow\n");
        let me = own_uid().unwrap();
        let got = known(&dir, &k, &stacked);
        if me == 0 {
            assert!(is_compiled(got));
        } else {
            assert!(matches!(got, Known::Passed { rewrite: false }), "only the examples' pass is believed");
            assert_eq!(ls(&crate::Engine::load(&stacked, ctx(), &cache).unwrap()), "deny");
        }
        let _ = std::fs::remove_dir_all(&cache);
    }

    #[test]
    fn a_file_whose_set_does_not_read_back_is_compiled_again_and_rewritten() {
        let cache = scratch("damaged");
        let dir = folder(&cache);
        let good = layers("version 1\ndefault deny\n");
        let k = key(&good).unwrap();
        plant(&dir, &k, "version 1\ndefault allow\n");
        let path = dir.join(&k);
        let whole = std::fs::read(&path).unwrap();
        // A byte of the set changed (the checksum no longer holds), the set cut short, the
        // checksum line damaged, nothing at all.
        let mut flipped = whole.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0x20;
        let damaged = [flipped, whole[..whole.len() - 10].to_vec(), [b"x".as_slice(), &whole[1..]].concat(), Vec::new()];
        for bytes in damaged {
            std::fs::write(&path, &bytes).unwrap();
            assert!(matches!(known(&dir, &k, &good), Known::Passed { rewrite: true }));
            assert_eq!(ls(&crate::Engine::load(&good, ctx(), &cache).unwrap()), "deny", "compiled from the text");
            assert!(is_compiled(known(&dir, &k, &good)), "and written again");
            plant(&dir, &k, "version 1\ndefault allow\n");
        }
        let _ = std::fs::remove_dir_all(&cache);
    }

    #[test]
    fn the_oldest_files_beyond_the_limit_are_removed_and_nothing_else() {
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
        let (stale, fresh) = (dir.join(format!("{}.1.tmp", name(1))), dir.join(format!("{}.2.tmp", name(2))));
        std::fs::File::create(&stale).unwrap().set_modified(base).unwrap();
        std::fs::File::create(&fresh).unwrap();
        let k = key(&layers("version 1\n")).unwrap();
        plant(&dir, &k, "version 1\n");
        let left = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(left, KEPT + 2, "the limit, the file that is not a record, and a file being written now");
        assert!(is_compiled(known(&dir, &k, &layers("version 1\n"))), "the new file stays");
        assert!(other.exists() && fresh.exists() && !stale.exists());
        // The six oldest went (five beyond the limit, and one for the new file).
        assert!((0..6).all(|i| !dir.join(name(i)).exists()));
        assert!(dir.join(name(6)).exists() && dir.join(name(KEPT + 4)).exists());
        let _ = std::fs::remove_dir_all(&cache);
    }

    #[test]
    fn only_a_file_this_user_made_alone_in_a_private_folder_is_believed() {
        let cache = scratch("trust");
        let dir = folder(&cache);
        let l = layers("version 1\n");
        let k = key(&l).unwrap();
        assert!(matches!(known(&dir, &k, &l), Known::Nothing));
        plant(&dir, &k, "version 1\n");
        assert!(is_compiled(known(&dir, &k, &l)));
        // A folder others may write: files there are not believed, and none are added.
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        assert!(matches!(known(&dir, &k, &l), Known::Nothing));
        let other_layers = layers("version 1\ndefault ask\n");
        let other = key(&other_layers).unwrap();
        plant(&dir, &other, "version 1\n");
        assert!(!dir.join(&other).exists());
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        // A second name for the file (a hard link someone else could keep and rewrite): not
        // believed.
        std::fs::hard_link(dir.join(&k), cache.join("second-name")).unwrap();
        assert!(matches!(known(&dir, &k, &l), Known::Nothing));
        std::fs::remove_file(cache.join("second-name")).unwrap();
        assert!(is_compiled(known(&dir, &k, &l)));
        // A link in a file's place is not believed, and is replaced, not followed, when writing.
        let target = cache.join("elsewhere");
        std::fs::write(&target, std::fs::read(dir.join(&k)).unwrap()).unwrap();
        std::os::unix::fs::symlink(&target, dir.join(&other)).unwrap();
        assert!(matches!(known(&dir, &other, &other_layers), Known::Nothing));
        let before = std::fs::read(&target).unwrap();
        plant(&dir, &other, "version 1\ndefault ask\n");
        assert_eq!(std::fs::read(&target).unwrap(), before);
        assert!(!std::fs::symlink_metadata(dir.join(&other)).unwrap().file_type().is_symlink());
        // A FIFO in a file's place: not read, and nothing blocks.
        let fifo = key(&layers("version 1\ndefault deny\n")).unwrap();
        rustix::fs::mkfifoat(rustix::fs::CWD, &dir.join(&fifo), rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
        assert!(matches!(known(&dir, &fifo, &layers("version 1\ndefault deny\n")), Known::Nothing));
        // Another user's file (root can make one to look at).
        if own_uid() == Some(0) {
            std::os::unix::fs::chown(dir.join(&k), Some(65534), None).unwrap();
            assert!(matches!(known(&dir, &k, &l), Known::Nothing));
        }
        let _ = std::fs::remove_dir_all(&cache);
    }
}
