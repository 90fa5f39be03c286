//! Tests only: a fresh, empty temporary folder per call ([`make`]), removed when the thread
//! that made it ends. The test harness runs every test on a thread of its own, so a test's
//! folders go with it, whether it passed or not, and repeated test runs leave nothing behind.

// Test support: a folder that cannot be made fails the test that asked for it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `$TMPDIR/warden-{crate_tag}-{name}-{pid}-{n}`, fresh and empty; `n` makes each call's
/// folder its own (tests run in parallel).
pub fn make(crate_tag: &str, name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("warden-{crate_tag}-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("cannot make a temporary folder");
    MADE.with(|m| m.0.borrow_mut().push(dir.clone()));
    dir
}

/// The folders [`make`] made on this thread.
struct Made(RefCell<Vec<PathBuf>>);

impl Drop for Made {
    fn drop(&mut self) {
        for dir in self.0.get_mut().drain(..) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

thread_local! {
    static MADE: Made = const { Made(RefCell::new(Vec::new())) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_lives_as_long_as_the_thread_that_made_it() {
        let (made, seen) = std::thread::spawn(|| {
            let dir = make("testdir", "own");
            std::fs::write(dir.join("f"), "x").unwrap();
            let other = make("testdir", "own");
            assert_ne!(dir, other, "two calls gave the same folder");
            (dir.clone(), dir.join("f").exists())
        })
        .join()
        .unwrap();
        assert!(seen);
        assert!(!made.exists(), "{} outlived its thread", made.display());
    }
}
