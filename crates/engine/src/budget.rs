//! A session's budgets: the policy's `commands`, `total-time` and `total-output` limits,
//! spent command by command.

/// What a session has used of its budgets (the policy's `commands`, `total-time`,
/// `total-output` limits).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Spent {
    /// Commands run.
    pub commands: u64,
    /// Their wall time, milliseconds.
    pub time_ms: f64,
    /// Their captured output, bytes.
    pub output: u64,
}

/// Why the session's budget refuses another command, if it does.
pub(crate) fn over_budget(l: &warden_policy::Limits, spent: &Spent) -> Option<String> {
    if let Some(n) = l.commands.filter(|n| spent.commands >= *n) {
        return Some(format!("the session's budget of {n} commands (`limits {{ commands {n} }}`) is spent"));
    }
    if let Some(ms) = l.total_time_ms.filter(|ms| spent.time_ms >= *ms as f64) {
        return Some(format!("the session's time budget of {} s (`total-time`) is spent ({:.0} s used)", ms / 1000, spent.time_ms / 1000.0));
    }
    if let Some(b) = l.total_output.filter(|b| spent.output >= *b) {
        return Some(format!("the session's output budget of {b} bytes (`total-output`) is spent ({} bytes used)", spent.output));
    }
    None
}
