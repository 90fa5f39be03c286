//! The escape suite: attacks run inside the sandbox, judged from outside.
//!
//! Every case plants its own targets in a fresh folder (`ws/` the workspace, `outside/` files
//! the sandbox must not touch, `readable/` granted read-only with a denied `secret.txt`), runs
//! one shell script under `warden run` (as the caller and, when the test runs as root, again as
//! an unprivileged user) and under a careful bubblewrap profile, then checks the effect from
//! outside: file contents and metadata, listeners that must see nothing, victim processes that
//! must survive, secrets that must not appear in any output, processes that must not outlive
//! the command.
//!
//! The warden runs are asserted; bubblewrap is the peer reference and only reported.
//!
//! `ESCAPE_CASES=substring,...` restricts the cases, `ESCAPE_RUNNERS=bwrap,caller,unprivileged`
//! the runners (both only to iterate on the suite itself).

mod cases;
mod check;
mod fixture;
mod procs;
mod runner;
mod suite;

#[test]
fn escape_suite() {
    suite::run_all();
}
