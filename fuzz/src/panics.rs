//! Panics that `warden-shell` contains by design, told apart from real ones.
//!
//! libfuzzer-sys installs a panic hook that aborts on every panic, even one that is caught
//! later. `warden_shell::analyse` runs `brush-parser` under `catch_unwind` and turns a panic
//! into an opaque part (fail closed), and brush-parser 0.4.0 has known panics (an I/O number
//! over `i32::MAX`, `fuzz/regressions/shell_analyse/brush-io-number-overflow`). Left alone,
//! the first such input would end every run. [`contain_brush_panics`] wraps the hook: a panic
//! whose location is inside brush-parser is counted and printed once per location, and
//! unwinds to `analyse`'s `catch_unwind`; any other panic (warden's own code, an oracle)
//! still aborts. [`check_contained`] then demands that the analysis failed closed.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

use warden_shell::Analysis;

/// Contained panics so far, for [`check_contained`].
static CONTAINED: AtomicUsize = AtomicUsize::new(0);

/// Installs the filtering hook once, over libfuzzer-sys's aborting one.
pub fn contain_brush_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let abort = std::panic::take_hook();
        let seen: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
        std::panic::set_hook(Box::new(move |info| {
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()));
            let in_brush = location
                .as_deref()
                .is_some_and(|l| l.contains("/brush-parser-"));
            if !in_brush {
                abort(info);
                return;
            }
            CONTAINED.fetch_add(1, Ordering::SeqCst);
            let first = seen
                .lock()
                .map(|mut s| s.insert(location.clone().unwrap_or_default()));
            if first.unwrap_or(false) {
                eprintln!(
                    "warden-fuzz: contained brush-parser panic (first at this place): {info}"
                );
            }
        }));
    });
}

/// Runs `analyse` and, if a brush-parser panic was contained meanwhile, checks that the
/// analysis failed closed: no command and at least one opaque part.
pub fn analyse_checked(input: &str) -> Analysis {
    let before = CONTAINED.load(Ordering::SeqCst);
    let analysis = warden_shell::analyse(input);
    if CONTAINED.load(Ordering::SeqCst) != before {
        check_contained(input, &analysis);
    }
    analysis
}

/// After a contained panic the analysis must not be empty of opaque parts.
fn check_contained(input: &str, analysis: &Analysis) {
    assert!(
        !analysis.opaque.is_empty(),
        "a brush-parser panic did not fail closed\n--- input ---\n{input:?}\n--- analysis ---\n{analysis:#?}"
    );
}
