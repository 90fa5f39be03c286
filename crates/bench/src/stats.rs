//! Shared measurement and reporting for every subcommand: sampling with warm-up, percentiles,
//! and the two outputs (one side-by-side table, or one JSON object per line).
//!
//! A measurement runs the closure for a warm-up period first, estimates the cost of one call,
//! then takes samples until its time budget is spent (at least [`MIN_SAMPLES`]). A call that
//! costs less than [`BATCH_BELOW`] is timed in batches of [`BATCH`] calls and each sample is
//! the batch's mean; the `batch` column says when that happened, and then p99 is the p99 of
//! batch means, not of single calls.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Samples always taken, however slow the call.
pub const MIN_SAMPLES: usize = 5;
/// Samples never exceeded, however fast the call.
pub const MAX_SAMPLES: usize = 20_000;
/// Calls cheaper than this are timed in batches. Reading the clock twice (`Instant::now`, then
/// `elapsed`) costs 100-150 ns on these VMs ([`timer_cost`]): a call of about 1 µs timed alone
/// would carry 10-15% of clock in every sample, so batching starts well above that.
pub const BATCH_BELOW: Duration = Duration::from_micros(10);
/// Calls per sample for cheap calls.
pub const BATCH: u32 = 100;

/// The result of one measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Median of the samples, nanoseconds per call.
    pub p50_ns: u64,
    /// 99th percentile of the samples (nearest rank), nanoseconds per call.
    pub p99_ns: u64,
    /// Fastest sample, nanoseconds per call.
    pub min_ns: u64,
    /// Number of samples.
    pub samples: usize,
    /// Calls per sample (1, or [`BATCH`] for cheap calls).
    pub batch: u32,
}

/// Measures `f`: warm-up for about a fifth of `budget`, then samples for the rest.
///
/// The closure's output goes through [`black_box`]; the caller `black_box`es its inputs.
pub fn measure<T>(budget: Duration, mut f: impl FnMut() -> T) -> Summary {
    let warm = Instant::now();
    let mut calls: u32 = 0;
    while calls == 0 || (warm.elapsed() < budget / 5 && calls < 1_000_000) {
        black_box(f());
        calls += 1;
    }
    let per_call = warm.elapsed() / calls;
    let batch = if per_call < BATCH_BELOW { BATCH } else { 1 };

    let start = Instant::now();
    let mut samples: Vec<u64> = Vec::new();
    while samples.len() < MIN_SAMPLES || (start.elapsed() < budget && samples.len() < MAX_SAMPLES) {
        let t = Instant::now();
        for _ in 0..batch {
            black_box(f());
        }
        let ns = t.elapsed().as_nanos() / u128::from(batch);
        samples.push(u64::try_from(ns).unwrap_or(u64::MAX));
    }
    summarise(&mut samples, batch)
}

/// Measures two slow calls (process runs) in turn, one sample of each per round, for
/// `budget` in all after a warm-up round: what this machine's drift (its load changes over
/// seconds) does to one, it does to the other, so their ratio holds better than that of two
/// measurements taken one after the other. No batching: each call is timed alone.
pub fn measure_alternating<A, B>(budget: Duration, a: impl FnMut() -> A, b: impl FnMut() -> B) -> (Summary, Summary) {
    measure_alternating_settled(budget, Duration::ZERO, a, b)
}

/// [`measure_alternating`], sleeping `settle` (untimed) before each call: what one side leaves
/// running in the background (a sandbox releases a run's namespaces on a thread of its own)
/// then ends before the other side is timed, instead of slowing it.
pub fn measure_alternating_settled<A, B>(budget: Duration, settle: Duration, mut a: impl FnMut() -> A, mut b: impl FnMut() -> B) -> (Summary, Summary) {
    black_box(a());
    black_box(b());
    let start = Instant::now();
    let (mut sa, mut sb): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
    while sa.len() < MIN_SAMPLES || (start.elapsed() < budget && sa.len() < MAX_SAMPLES) {
        std::thread::sleep(settle);
        let t = Instant::now();
        black_box(a());
        sa.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
        std::thread::sleep(settle);
        let t = Instant::now();
        black_box(b());
        sb.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    (summarise(&mut sa, 1), summarise(&mut sb, 1))
}

/// What one sample's clock reads cost (`Instant::now`, then `elapsed`), mean of 10,000 pairs.
pub fn timer_cost() -> Duration {
    const PAIRS: u32 = 10_000;
    let start = Instant::now();
    for _ in 0..PAIRS {
        black_box(black_box(Instant::now()).elapsed());
    }
    start.elapsed() / PAIRS
}

/// Percentiles of raw samples (nanoseconds per call); sorts them in place.
pub fn summarise(samples: &mut [u64], batch: u32) -> Summary {
    samples.sort_unstable();
    Summary {
        p50_ns: percentile(samples, 50),
        p99_ns: percentile(samples, 99),
        min_ns: samples.first().copied().unwrap_or(0),
        samples: samples.len(),
        batch,
    }
}

/// Nearest-rank percentile `p` (0..=100) of sorted samples; 0 for no samples.
pub fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    // Nearest rank: the smallest value with at least p% of the samples at or below it.
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).or(sorted.last()).copied().unwrap_or(0)
}

/// One side of a row: measured, or why not.
#[derive(Debug, Clone)]
pub enum Cell {
    /// A measurement, with what the implementation decided (if it decides).
    Measured {
        /// The numbers.
        summary: Summary,
        /// The outcome, shown beside the numbers (`allow`, `deny`, ...).
        outcome: Option<String>,
    },
    /// Not measured: the reason (shown in the table, `null` numbers in JSON).
    Missing(String),
    /// Nothing to compare (the peer has no such operation).
    None,
}

impl Cell {
    fn summary(&self) -> Option<&Summary> {
        match self {
            Cell::Measured { summary, .. } => Some(summary),
            _ => None,
        }
    }

    /// The outcome, if measured and one was recorded.
    pub fn outcome(&self) -> Option<&str> {
        match self {
            Cell::Measured { outcome, .. } => outcome.as_deref(),
            _ => None,
        }
    }
}

/// One line of the table: the same operation on ours and on the peer.
#[derive(Debug, Clone)]
pub struct Row {
    /// What kind of operation (`decide`, `compile`, ...).
    pub group: String,
    /// Which input.
    pub case: String,
    /// Size of the rule set, when there is one.
    pub rules: Option<usize>,
    /// warden's measurement.
    pub ours: Cell,
    /// The peer's measurement.
    pub peer: Cell,
    /// The `impl` names of this row's two sides, when not the report's.
    pub impls: Option<(&'static str, &'static str)>,
}

/// A whole report: a title, notes under it, and rows.
#[derive(Debug, Clone)]
pub struct Report {
    /// The subcommand (`policy`), the `bench` field of every JSON line.
    pub bench: &'static str,
    /// The `impl` name of our side.
    pub ours: &'static str,
    /// The `impl` name of the peer.
    pub peer: &'static str,
    /// Lines printed above the table.
    pub notes: Vec<String>,
    /// The rows, in print order.
    pub rows: Vec<Row>,
}

/// `123 ns`, `4.56 µs`, `7.89 ms`, `1.23 s`.
pub fn human_ns(ns: u64) -> String {
    // Precision loss above 2^52 ns (52 days) is irrelevant here.
    #[allow(clippy::cast_precision_loss)]
    let f = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.2} µs", f / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", f / 1e6)
    } else {
        format!("{:.2} s", f / 1e9)
    }
}

/// `ours p50 / peer p50`, formatted `0.42x`.
fn ratio(ours: &Cell, peer: &Cell) -> String {
    match (ours.summary(), peer.summary()) {
        (Some(o), Some(p)) if p.p50_ns > 0 => {
            #[allow(clippy::cast_precision_loss)]
            let r = o.p50_ns as f64 / p.p50_ns as f64;
            ratio_text(r)
        }
        _ => String::from("-"),
    }
}

/// `0.42x`, `0.042x`, and below 0.001 `1/N` (warden N times faster), so it never reads 0.
fn ratio_text(r: f64) -> String {
    if r >= 0.1 {
        format!("{r:.2}x")
    } else if r >= 0.001 {
        format!("{r:.3}x")
    } else if r > 0.0 {
        format!("1/{:.0}", 1.0 / r)
    } else {
        String::from("0x")
    }
}

fn cell_text(cell: &Cell) -> (String, String) {
    match cell {
        Cell::Measured { summary, .. } => (human_ns(summary.p50_ns), human_ns(summary.p99_ns)),
        Cell::Missing(_) => (String::from("n/a"), String::from("n/a")),
        Cell::None => (String::from("-"), String::from("-")),
    }
}

fn batch_text(row: &Row) -> String {
    let b = |c: &Cell| c.summary().map(|s| s.batch.to_string());
    let s = |c: &Cell| c.summary().map(|s| s.samples.to_string());
    let pair = |a: Option<String>, b: Option<String>| match (a, b) {
        (Some(a), Some(b)) if a == b => a,
        (Some(a), Some(b)) => format!("{a}/{b}"),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => String::from("-"),
    };
    format!(
        "{:>7} {:>12}",
        pair(b(&row.ours), b(&row.peer)),
        pair(s(&row.ours), s(&row.peer))
    )
}

fn outcome_text(row: &Row) -> String {
    match (row.ours.outcome(), row.peer.outcome()) {
        (None, None) => String::new(),
        (Some(o), None) if matches!(row.peer, Cell::None) => o.to_string(),
        (o, p) => format!("{}/{}", o.unwrap_or("-"), p.unwrap_or("-")),
    }
}

/// The human table: notes, a header, one line per row.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    for note in &report.notes {
        let _ = writeln!(out, "{note}");
    }
    let case_w = report
        .rows
        .iter()
        .map(|r| r.case.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let header = format!(
        "{:<14} {:<case_w$} {:>6} | {:>10} {:>10} | {:>10} {:>10} | {:>7} | {:>7} {:>12} | {}",
        "group",
        "case",
        "rules",
        format!("{} p50", report.ours),
        format!("{} p99", report.ours),
        format!("{} p50", report.peer),
        format!("{} p99", report.peer),
        "ratio",
        "batch",
        "samples",
        "outcome",
    );
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{}", "-".repeat(header.chars().count()));
    let mut last_group = "";
    for row in &report.rows {
        if !last_group.is_empty() && last_group != row.group {
            let _ = writeln!(out);
        }
        last_group = &row.group;
        let (o50, o99) = cell_text(&row.ours);
        let (p50, p99) = cell_text(&row.peer);
        let rules = row
            .rules
            .map_or_else(|| String::from("-"), |n| n.to_string());
        let _ = writeln!(
            out,
            "{:<14} {:<case_w$} {:>6} | {:>10} {:>10} | {:>10} {:>10} | {:>7} | {} | {}",
            row.group,
            row.case,
            rules,
            o50,
            o99,
            p50,
            p99,
            ratio(&row.ours, &row.peer),
            batch_text(row),
            outcome_text(row),
        );
    }
    out
}

/// One JSON object per measured side of every row, one per line.
pub fn json_lines(report: &Report) -> String {
    let mut out = String::new();
    for row in &report.rows {
        let (ours, peer) = row.impls.unwrap_or((report.ours, report.peer));
        for (name, cell) in [(ours, &row.ours), (peer, &row.peer)] {
            let mut obj = serde_json::Map::new();
            let mut put = |k: &str, v: serde_json::Value| {
                obj.insert(k.to_string(), v);
            };
            put("bench", report.bench.into());
            put("impl", name.into());
            put("group", row.group.as_str().into());
            put("case", row.case.as_str().into());
            put("rules", row.rules.unwrap_or(0).into());
            match cell {
                Cell::Measured { summary, outcome } => {
                    put("p50_ns", summary.p50_ns.into());
                    put("p99_ns", summary.p99_ns.into());
                    put("min_ns", summary.min_ns.into());
                    put("samples", summary.samples.into());
                    put("batch", summary.batch.into());
                    if let Some(o) = outcome {
                        put("outcome", o.as_str().into());
                    }
                }
                Cell::Missing(why) => {
                    put("p50_ns", serde_json::Value::Null);
                    put("p99_ns", serde_json::Value::Null);
                    put("error", why.as_str().into());
                }
                Cell::None => continue,
            }
            let obj = serde_json::Value::Object(obj);
            let _ = writeln!(out, "{obj}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternating_runs_one_of_each_in_turn() {
        let calls = std::cell::RefCell::new(String::new());
        let (a, b) = measure_alternating(Duration::from_millis(20), || calls.borrow_mut().push('a'), || calls.borrow_mut().push('b'));
        let calls = calls.into_inner();
        assert_eq!(a.samples, b.samples);
        assert!(a.samples >= MIN_SAMPLES && a.batch == 1 && b.batch == 1);
        // A warm-up round, then one of each per sample.
        assert_eq!(calls.len(), 2 * (a.samples + 1));
        assert!(calls.as_bytes().chunks(2).all(|pair| pair == b"ab"), "{calls}");
    }

    #[test]
    fn percentile_is_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50), 50);
        assert_eq!(percentile(&v, 99), 99);
        assert_eq!(percentile(&v, 100), 100);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[], 50), 0);
        assert_eq!(percentile(&[1, 2], 50), 1);
        assert_eq!(percentile(&[1, 2], 99), 2);
    }

    #[test]
    fn summarise_sorts_first() {
        let mut v = vec![9, 1, 5, 3, 7];
        let s = summarise(&mut v, 1);
        assert_eq!((s.p50_ns, s.p99_ns, s.min_ns, s.samples), (5, 9, 1, 5));
    }

    #[test]
    fn measure_takes_at_least_the_minimum_and_batches_cheap_calls() {
        let mut n = 0u64;
        let s = measure(Duration::from_millis(2), || {
            n += 1;
            n
        });
        assert!(s.samples >= MIN_SAMPLES);
        assert_eq!(s.batch, BATCH);
        let slow = measure(Duration::ZERO, || {
            std::thread::sleep(Duration::from_micros(50))
        });
        assert_eq!(slow.batch, 1);
        assert_eq!(slow.samples, MIN_SAMPLES);
        assert!(slow.p50_ns >= 50_000);
    }

    #[test]
    fn human_units() {
        assert_eq!(human_ns(999), "999 ns");
        assert_eq!(human_ns(1_500), "1.50 µs");
        assert_eq!(human_ns(2_500_000), "2.50 ms");
        assert_eq!(human_ns(3_000_000_000), "3.00 s");
    }

    #[test]
    fn ratios_never_read_zero() {
        assert_eq!(ratio_text(0.42), "0.42x");
        assert_eq!(ratio_text(0.042), "0.042x");
        assert_eq!(ratio_text(0.00003), "1/33333");
    }

    fn measured(p50: u64) -> Cell {
        Cell::Measured {
            summary: Summary {
                p50_ns: p50,
                p99_ns: p50 * 2,
                min_ns: p50,
                samples: 10,
                batch: 1,
            },
            outcome: Some(String::from("allow")),
        }
    }

    #[test]
    fn json_has_one_line_per_measured_side() {
        let report = Report {
            bench: "policy",
            ours: "warden",
            peer: "cedar",
            notes: vec![],
            rows: vec![
                Row {
                    group: "decide".into(),
                    case: "hit".into(),
                    rules: Some(10),
                    ours: measured(100),
                    peer: measured(400),
                    impls: None,
                },
                Row {
                    group: "analyse".into(),
                    case: "ls".into(),
                    rules: None,
                    ours: Cell::Missing("stub".into()),
                    peer: Cell::None,
                    impls: None,
                },
            ],
        };
        let text = json_lines(&report);
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["impl"], "warden");
        assert_eq!(lines[0]["p50_ns"], 100);
        assert_eq!(lines[1]["impl"], "cedar");
        assert_eq!(lines[1]["rules"], 10);
        assert!(lines[2]["p50_ns"].is_null());
        let t = table(&report);
        assert!(t.contains("0.25x"), "{t}");
    }
}
