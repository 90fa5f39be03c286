//! Who the command is on the host: never root, whoever runs warden; the workspace stays its
//! owner's.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use warden_sandbox::{Access, Mount};

use crate::support::{TempDir, sh};

fn caller_is_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap()
}

#[test]
fn the_command_is_never_host_root() {
    let t = TempDir::new("uid");
    let run = warden_sandbox::run(&sh(t.path(), "id -u; id -G; grep -E '^(Uid|Gid|Groups|CapEff|CapBnd):' /proc/self/status")).unwrap();
    assert_eq!(run.exit_code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.text.lines().collect();
    let caller = std::fs::metadata("/proc/self").unwrap().uid();
    let expected = if caller_is_root() { 65534 } else { caller };
    assert_eq!(lines.first().map(|l| l.trim()), Some(expected.to_string().as_str()), "{run:?}");
    assert_eq!(run.sandbox.uid, Some(expected));
    if caller_is_root() {
        // No supplementary group of root's survives.
        assert_eq!(lines.get(1).map(|l| l.trim()), Some("65534"), "{run:?}");
    }
    for l in &lines[2..] {
        if l.starts_with("Cap") {
            assert!(l.ends_with("0000000000000000"), "{l}");
        }
    }
}

#[test]
fn created_files_belong_to_the_workspace_owner() {
    let t = TempDir::new("owner");
    let owner = std::fs::metadata(t.path()).unwrap();
    let run = warden_sandbox::run(&sh(t.path(), "echo x > f; mkdir d; echo y > d/g; ln -s f l; cat f d/g")).unwrap();
    assert_eq!(run.stdout.text, "x\ny\n", "{run:?}");
    for f in ["f", "d", "d/g", "l"] {
        let m = std::fs::symlink_metadata(t.path().join(f)).unwrap();
        assert_eq!((m.uid(), m.gid()), (owner.uid(), owner.gid()), "{f}");
    }
}

#[test]
fn files_of_the_callers_outside_write_grants_are_not_the_commands() {
    let t = TempDir::new("private");
    let rd = TempDir::new("private-rd");
    std::fs::write(rd.path().join("private.txt"), "PRIVATE\n").unwrap();
    std::fs::set_permissions(rd.path().join("private.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut spec = sh(t.path(), &format!("cat {0}/private.txt; chmod 666 {0}/private.txt; echo END", rd.path().display()));
    spec.mounts.push(Mount { path: rd.path().to_path_buf(), access: Access::Read });
    let run = warden_sandbox::run(&spec).unwrap();
    assert!(run.stdout.text.ends_with("END\n"), "{run:?}");
    let mode = std::fs::metadata(rd.path().join("private.txt")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    if caller_is_root() {
        // Root's 0600 file in a read grant: the command is not its owner.
        assert!(!run.stdout.text.contains("PRIVATE"), "{run:?}");
    }
}

/// Run by `the_command_has_no_controlling_terminal` under `script` (a pty as the controlling
/// terminal of this process): prints whether /dev/tty opens outside and inside the sandbox.
#[test]
#[ignore = "run under a terminal by the_command_has_no_controlling_terminal"]
fn tty_probe() {
    let outside = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").is_ok();
    let t = TempDir::new("tty");
    let run = warden_sandbox::run(&sh(t.path(), "if (exec 3<>/dev/tty) 2>/dev/null; then echo TTY; else echo NOTTY; fi")).unwrap();
    println!("probe outside:{} inside:{}", if outside { "TTY" } else { "NOTTY" }, run.stdout.text.trim());
}

#[test]
fn the_command_has_no_controlling_terminal() {
    if std::process::Command::new("script").arg("--version").output().is_err() {
        eprintln!("script (util-linux) is not installed: cannot give the probe a terminal");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let cmd = format!("{} --exact owner::tty_probe --ignored --nocapture --test-threads=1", exe.display());
    let out = std::process::Command::new("script").args(["-qec", &cmd, "/dev/null"]).stdin(std::process::Stdio::null()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("probe outside:TTY"), "the probe had no terminal to lose: {text}");
    assert!(text.contains("inside:NOTTY"), "the sandboxed command opened /dev/tty: {text}");
}
