//! Time, processes and output: commands that outlive their run, floods and loops. The suite
//! checks after every case that no process of the case (its command line names the case's
//! folder) is left; these cases check what was bounded and that nothing acted late.

use std::fs;
use std::time::Duration;

use super::{Attack, Case};
use crate::procs::Census;
use crate::runner::Outcome;

/// Fails if `{ws}/late*` exists: something the command started acted after it ended.
fn nothing_late(fx: &crate::fixture::Fixture) -> Result<(), String> {
    let mut late = Vec::new();
    if let Ok(rd) = fs::read_dir(&fx.ws) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with("late") {
                late.push(e.path().display().to_string());
            }
        }
    }
    if late.is_empty() {
        Ok(())
    } else {
        Err(format!("a process outlived the command and wrote {late:?}"))
    }
}

fn timed_out_near(out: &Outcome, secs: u64) -> Result<(), String> {
    if !out.timed_out {
        return Err(format!("not reported as timed out: {}", out.excerpt()));
    }
    let (lo, hi) = (
        Duration::from_millis(secs * 1000 - 200),
        Duration::from_secs(secs + 5),
    );
    if out.duration < lo || out.duration > hi {
        return Err(format!(
            "ran {} ms for a {secs} s timeout",
            out.duration.as_millis()
        ));
    }
    Ok(())
}

/// The flood ran into the timeout, was reported truncated with its real size, and what was kept
/// of stdout and stderr together stays within the policy's `output 1MiB` (+ room for the
/// truncation marker).
fn flood_capped(out: &Outcome) -> Result<(), String> {
    let cap = crate::runner::OUTPUT_CAP;
    if !out.stdout_truncated {
        return Err(format!(
            "a flood of {} bytes was not reported truncated",
            out.stdout_bytes
        ));
    }
    if out.stdout_bytes <= cap as u64 {
        return Err(format!(
            "stdout.bytes is {}, not the size the flood wrote",
            out.stdout_bytes
        ));
    }
    let kept = out.stdout.len() + out.stderr.len();
    if kept > cap + 64 * 1024 {
        return Err(format!(
            "kept {} (stdout) + {} (stderr) = {kept} bytes of output; the policy's output limit (stdout+stderr) is {cap}",
            out.stdout.len(),
            out.stderr.len()
        ));
    }
    timed_out_near(out, 2)
}

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "background-late-writer",
            timeout: None,
            plant: |_| {
                Ok(Attack::new(
                    "( sleep 1; echo late > {ws}/late.txt; echo pwned > {out}/victim.txt ) & echo started",
                )
                .deny("fs.write", "{out}/victim.txt")
                .settle(1500)
                .check(|fx, _| nothing_late(fx)))
            },
        },
        Case {
            name: "double-fork-setsid",
            timeout: None,
            plant: |_| {
                Ok(Attack::new(
                    "( setsid sh -c 'sleep 1; echo late > {ws}/late1.txt; sleep 30 # {root}' </dev/null >/dev/null 2>&1 & ) ; \
                     nohup sh -c 'trap \"\" HUP TERM; sleep 1; echo late > {ws}/late2.txt; sleep 30 # {root}' </dev/null >/dev/null 2>&1 & \
                     echo started",
                )
                .settle(1500)
                .check(|fx, _| nothing_late(fx)))
            },
        },
        Case {
            name: "daemon-python",
            timeout: None,
            plant: |_| {
                Ok(Attack::new(&super::py(
                    r#"import os, time, sys
if os.fork() > 0:
    print("parent done"); sys.exit(0)
os.setsid()
if os.fork() > 0:
    os._exit(0)
os.closerange(0, 3)
time.sleep(1)
open("{ws}/late-daemon.txt", "w").write("late")
os.execv("/bin/sleep", ["sleep", "30", "{root}"])"#,
                ))
                .settle(1500)
                .check(|fx, _| nothing_late(fx)))
            },
        },
        Case {
            name: "fork-bomb",
            timeout: Some(4),
            plant: |fx| {
                let mut census = Census::start(fx.root.clone());
                Ok(Attack::new(
                    "bomb() { if [ \"$1\" -gt 0 ]; then bomb $(($1 - 1)) & bomb $(($1 - 1)) & fi; sleep 2; }; bomb 8; echo END",
                )
                .deny("limit.processes", "")
                .deny("proc.fork", "")
                .check(move |_, out| {
                    let peak = census.peak();
                    // The shells of the bomb carry the case's folder in their command line; the
                    // policy allows 64 processes (+ warden itself).
                    if peak > 66 {
                        return Err(format!("{peak} processes of the bomb ran at once, the policy allows 64: {}", out.excerpt()));
                    }
                    Ok(())
                }))
            },
        },
        Case {
            name: "output-flood",
            timeout: Some(2),
            plant: |_| {
                Ok(
                    Attack::new("yes 'flood flood flood flood flood flood flood'")
                        .deny("limit.output", "")
                        .check(|_, out| flood_capped(out)),
                )
            },
        },
        Case {
            name: "output-flood-both-streams",
            timeout: Some(2),
            plant: |_| {
                Ok(
                    Attack::new("yes 'flood flood flood flood flood flood flood' & yes >&2; wait")
                        .deny("limit.output", "")
                        .check(|_, out| flood_capped(out)),
                )
            },
        },
        Case {
            name: "infinite-loop",
            timeout: Some(2),
            plant: |_| {
                Ok(Attack::new("while :; do :; done")
                    .deny("limit.timeout", "")
                    .check(|_, out| timed_out_near(out, 2)))
            },
        },
        Case {
            name: "ignore-sigterm",
            timeout: Some(2),
            plant: |_| {
                Ok(
                    Attack::new("trap '' TERM INT HUP; sleep 100 & while :; do sleep 1; done")
                        .deny("limit.timeout", "")
                        .check(|_, out| timed_out_near(out, 2)),
                )
            },
        },
        Case {
            name: "filesize-limit",
            timeout: None,
            plant: |_| {
                Ok(
                    Attack::new("head -c 100000000 /dev/zero > {ws}/big.bin; echo END")
                        .deny("limit.filesize", "")
                        .deny("fs.write", "{ws}/big.bin")
                        .check(|fx, out| {
                            super::reached(out, "END")?;
                            let len = fs::metadata(fx.ws.join("big.bin"))
                                .map(|m| m.len())
                                .unwrap_or(0);
                            if len > 64 << 20 {
                                Err(format!(
                                    "wrote a {len}-byte file past the 64 MiB filesize limit"
                                ))
                            } else {
                                Ok(())
                            }
                        }),
                )
            },
        },
        Case {
            name: "open-files-limit",
            timeout: None,
            plant: |_| {
                Ok(Attack::new(&super::py(
                    r#"import os
fds = []
try:
    for i in range(2000):
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    print("stopped", e.errno)
print("OPENED", len(fds))
print("END")"#,
                ))
                .deny("limit.files", "")
                .check(|_, out| {
                    super::reached(out, "END")?;
                    let opened = out
                        .stdout
                        .lines()
                        .find_map(|l| l.strip_prefix("OPENED "))
                        .and_then(|n| n.trim().parse::<u32>().ok())
                        .unwrap_or(u32::MAX);
                    if opened > 256 {
                        Err(format!(
                            "opened {opened} descriptors, the policy allows 256"
                        ))
                    } else {
                        Ok(())
                    }
                }))
            },
        },
    ]
}
