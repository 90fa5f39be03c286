//! warden killed with SIGKILL at random points during 2,000 audited runs: the log always
//! verifies, and every command that started has its decision record.
//!
//! Each run's command creates `started/N` in the workspace, so a file there proves the command
//! started. Two runs go at once, appending to the same log (the writers take turns under the
//! log's lock). Deterministic seed; bounded in count and time.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{repo, stderr, stdout, tempdir};

const RUNS: usize = 2_000;
const AT_ONCE: usize = 2;
const TIME_LIMIT: Duration = Duration::from_secs(1500);

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn verify(log: &std::path::Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_warden")).args(["audit", "verify"]).arg(log).output().unwrap();
    assert!(out.status.success(), "the log does not verify after a kill:\n{}{}", stdout(&out), stderr(&out));
}

#[test]
fn sigkill_at_random_points_never_breaks_the_log_or_loses_a_decision() {
    let root = tempdir("kill");
    let ws = root.join("ws");
    let home = root.join("home");
    std::fs::create_dir_all(ws.join("started")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let log = root.join("audit/log.jsonl");
    let policy = repo().join("policies/full-auto.policy");
    let spawn = |i: usize| {
        Command::new(env!("CARGO_BIN_EXE_warden"))
            .current_dir(&ws)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &home)
            .arg("run")
            .arg("--policy")
            .arg(&policy)
            .arg("--workspace")
            .arg(&ws)
            .arg("--audit-log")
            .arg(&log)
            .args(["--", "touch"])
            .arg(format!("started/{i}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    // How long a whole run takes here (median of five, two at once as below): kills land
    // anywhere from the start to twice that, so some runs finish and many die mid-way.
    let mut times: Vec<u64> = (0..5)
        .map(|n| {
            let t = Instant::now();
            let (mut a, mut b) = (spawn(RUNS + 2 * n), spawn(RUNS + 2 * n + 1));
            assert!(a.wait().unwrap().success() && b.wait().unwrap().success(), "a plain audited run fails");
            u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX)
        })
        .collect();
    times.sort_unstable();
    let first_span = times[2].saturating_mul(2).max(1_000);
    let mut span = first_span;
    // The machine's load changes while the suite runs (the calibration above may run beside
    // other tests): every 100 runs the span follows what the last 100 did, so that kills keep
    // landing both before and after the point where runs end.
    let (mut window_killed, mut window_finished) = (0usize, 0usize);

    let mut rng = Rng(0x5eed_cafe_f00d_0001);
    let started = Instant::now();
    let (mut killed, mut finished) = (0usize, 0usize);
    let mut i = 0;
    while i < RUNS {
        assert!(started.elapsed() < TIME_LIMIT, "only {i} of {RUNS} runs in {TIME_LIMIT:?}");
        let batch: Vec<_> = (i..(i + AT_ONCE).min(RUNS)).map(|n| (spawn(n), rng.below(span))).collect();
        let t = Instant::now();
        for (mut child, at) in batch {
            let at = Duration::from_micros(at);
            if let Some(left) = at.checked_sub(t.elapsed()) {
                std::thread::sleep(left);
            }
            match child.try_wait().unwrap() {
                Some(_) => {
                    finished += 1;
                    window_finished += 1;
                }
                None => {
                    let _ = child.kill();
                    killed += 1;
                    window_killed += 1;
                }
            }
            child.wait().unwrap();
            i += 1;
        }
        if window_killed + window_finished >= 100 {
            let done = window_finished * 100 / (window_killed + window_finished);
            if done > 60 {
                span = (span * 3 / 4).max(1_000);
            } else if done < 20 {
                span = (span * 5 / 4).min(first_span.saturating_mul(10));
            }
            (window_killed, window_finished) = (0, 0);
        }
        if i % 200 == 0 {
            verify(&log);
        }
    }
    verify(&log);
    eprintln!("{RUNS} runs: {killed} killed by SIGKILL, {finished} finished first");
    assert!(killed > RUNS / 4 && finished > 0, "kills did not land at varied points: {killed} killed, {finished} finished");

    // Commands of killed runs may still be finishing (their sandbox outlives a killed warden
    // only until it exits on its own): give them a bounded moment.
    std::thread::sleep(Duration::from_millis(500));
    let recorded: BTreeSet<String> = warden_audit::read(&log)
        .unwrap()
        .into_iter()
        .filter(|r| matches!(r.entry.kind, warden_audit::Kind::Decision))
        .filter_map(|r| r.entry.input.argv.and_then(|a| a.get(1).cloned()))
        .collect();
    let mut checked = 0;
    for entry in std::fs::read_dir(ws.join("started")).unwrap() {
        let name = format!("started/{}", entry.unwrap().file_name().to_string_lossy());
        if name.trim_start_matches("started/").parse::<usize>().is_ok_and(|n| n >= RUNS) {
            continue;
        }
        assert!(recorded.contains(&name), "{name} started without a decision record");
        checked += 1;
    }
    eprintln!("{checked} commands started; each has its decision record");
    assert!(checked > RUNS / 10, "too few commands started ({checked}) to show anything");
}

/// Pids of processes whose command line is exactly `argv`.
fn processes(argv: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let Ok(rd) = std::fs::read_dir("/proc") else { return Vec::new() };
    rd.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .collect()
}

#[test]
fn a_killed_warden_takes_its_command_with_it() {
    let root = tempdir("kill-orphan");
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    // A duration no other process on the machine would sleep for.
    let secs = format!("{}.{}", 700 + std::process::id() % 200, std::process::id());
    let mut warden = Command::new(env!("CARGO_BIN_EXE_warden"))
        .current_dir(&root)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .arg("run")
        .arg("--policy")
        .arg(repo().join("policies/full-auto.policy"))
        .arg("--workspace")
        .arg(&root)
        .arg("--audit-log")
        .arg(home.join("audit.jsonl"))
        .args(["--", "/bin/sleep", &secs])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let argv = ["/bin/sleep", secs.as_str()];
    let t = Instant::now();
    while processes(&argv).is_empty() {
        assert!(t.elapsed() < Duration::from_secs(20), "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    warden.kill().unwrap();
    warden.wait().unwrap();
    let t = Instant::now();
    while !processes(&argv).is_empty() {
        if t.elapsed() > Duration::from_secs(5) {
            for pid in processes(&argv) {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
            panic!("the sandboxed command outlived the killed warden");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
