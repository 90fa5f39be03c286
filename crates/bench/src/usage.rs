//! What a child process costs besides its wall time: CPU time and minor page faults per run.
//!
//! On a machine of two cores a one-shot sandbox launcher is bound by the work it gives them,
//! not by waiting: time moved to a second thread comes back as time taken from the first.
//! These figures say where that work is. They come from the kernel's accounting of this
//! process's waited-for children (`cutime`, `cstime`, `cminflt` of `/proc/self/stat`), which
//! includes what those children waited for in turn (bwrap's command, warden's sandboxed
//! command), and leaves out kernel threads (a network namespace is torn down by a kernel worker
//! after the run, for both programs alike).

use std::process::Command;
use std::time::Duration;

use crate::stats::{Summary, measure};

/// The kernel's clock ticks per second in `/proc` (`USER_HZ`): 100 on every Linux ABI.
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU time (user + system) and minor page faults, per run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Milliseconds of CPU per run.
    pub cpu_ms: f64,
    /// Minor page faults per run.
    pub faults: f64,
    /// The runs averaged over.
    pub runs: u32,
}

impl std::fmt::Display for Cost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2} ms CPU, {:.0} minor page faults per run ({} runs)", self.cpu_ms, self.faults, self.runs)
    }
}

/// `cmd` measured as [`measure`] does, with what its runs cost; `None` for the cost when
/// `/proc/self/stat` cannot be read. `run` runs `cmd` once and says whether it succeeded.
pub fn measure_costed(budget: Duration, cmd: &mut Command, run: fn(&mut Command) -> bool) -> (Summary, Option<Cost>) {
    let before = children();
    let mut runs: u32 = 0;
    let summary = measure(budget, || {
        runs += 1;
        run(cmd)
    });
    let cost = match (before, children()) {
        (Some(a), Some(b)) if runs > 0 => Some(per_run(a, b, runs)),
        _ => None,
    };
    (summary, cost)
}

/// Ticks of CPU and minor faults of this process's waited-for children so far.
fn children() -> Option<(u64, u64)> {
    parse_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// `cutime + cstime` and `cminflt` of a `/proc/PID/stat` line. The command name (field 2) is
/// in parentheses and may hold spaces and parentheses itself: fields are counted from the last
/// `)`.
fn parse_stat(line: &str) -> Option<(u64, u64)> {
    let rest = line.get(line.rfind(')')? + 1..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: field 3 (state) is at 0, so field N is at N - 3.
    let field = |n: usize| -> Option<u64> { fields.get(n - 3)?.parse().ok() };
    Some((field(16)? + field(17)?, field(11)?))
}

fn per_run(before: (u64, u64), after: (u64, u64), runs: u32) -> Cost {
    let ticks = after.0.saturating_sub(before.0) as f64;
    let faults = after.1.saturating_sub(before.1) as f64;
    let n = f64::from(runs);
    Cost { cpu_ms: ticks / TICKS_PER_SECOND * 1000.0 / n, faults: faults / n, runs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_counted_from_the_last_parenthesis_of_the_name() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
        // utime stime cutime cstime ...
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 120 7000 0 0 5 3 40 17 20 0 1 0";
        assert_eq!(parse_stat(line), Some((57, 7000)));
        assert_eq!(parse_stat("4242 (short) S 1"), None);
        assert_eq!(parse_stat("no parenthesis at all"), None);
    }

    #[test]
    fn a_waited_for_child_is_counted() {
        let before = children().unwrap();
        let mut cmd = Command::new("/bin/true");
        let runs = 20;
        for _ in 0..runs {
            assert!(cmd.status().unwrap().success());
        }
        let cost = per_run(before, children().unwrap(), runs);
        // Every exec maps pages of its own: a process starts with tens of minor faults.
        assert!(cost.faults >= 10.0, "{cost}");
        assert_eq!(cost.runs, runs);
    }
}
