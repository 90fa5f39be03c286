//! `warm` starts the analysis thread ahead, and the next analysis runs on it instead of
//! starting one. Its own test binary: it counts this process's analysis threads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// How many analysis threads (`warden-shell`) this process has, once it is `want` (a new
/// thread names itself as it starts) or after `ms` milliseconds.
fn analysers(want: usize, ms: u64) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    loop {
        let n = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "warden-shell"))
            .count();
        if n == want || std::time::Instant::now() >= deadline {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn threads_started_ahead_serve_the_next_analyses() {
    assert_eq!(analysers(0, 0), 0, "no analysis has run yet");
    warden_shell::warm(1);
    assert_eq!(analysers(1, 2000), 1, "warm started no thread");
    // One is idle already: warming to one starts none.
    warden_shell::warm(1);
    assert_eq!(analysers(2, 200), 1, "a second thread was started");
    let got = warden_shell::analyse_all(&["ls -l", "git push"]);
    assert_eq!(got, vec![warden_shell::analyse("ls -l"), warden_shell::analyse("git push")]);
    assert_eq!(analysers(2, 200), 1, "the analysis started a thread of its own");
    // Two at once: a batch under way and another analysis.
    warden_shell::warm(2);
    assert_eq!(analysers(2, 2000), 2, "warm(2) did not make two idle");
    let later = warden_shell::analyse_all_later(&["cat x | wc -l"]);
    assert_eq!(warden_shell::analyse("echo hi"), warden_shell::analyse_all(&["echo hi"]).remove(0));
    assert_eq!(later.collect(), vec![warden_shell::analyse("cat x | wc -l")]);
    assert_eq!(analysers(3, 200), 2, "an analysis started a thread of its own");
}
