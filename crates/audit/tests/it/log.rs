//! Appending: the chain, permissions, the head checkpoint, torn tails, damaged tails, two
//! writers on one file.


use crate::common::{decision, tempdir};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use warden_audit::{Log, ZERO_HASH, default_path, head_path, read, verify};

#[test]
fn records_chain_and_read_back_strictly() {
    let dir = tempdir("chain");
    let path = dir.join("state/warden/audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    let a = log.append(&decision("s1", Some("bob"), "cargo test", "allow", None)).unwrap();
    let b = log.append(&decision("s1", None, "rm -rf /", "deny", Some("dangerous"))).unwrap();
    assert_eq!((a.seq, b.seq), (1, 2));
    let records = read(&path).unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].prev, ZERO_HASH);
    assert_eq!(records[1].prev, a.hash);
    assert_eq!(records[1].hash, b.hash);
    assert_eq!(records[0].entry, decision("s1", Some("bob"), "cargo test", "allow", None));
    let report = verify(&path).unwrap();
    assert!(report.ok(), "{report:?}");
    assert!(report.warnings.is_empty(), "{report:?}");
    assert_eq!(report.head, Some(b.clone()));
    let head: warden_audit::Receipt = serde_json::from_slice(&std::fs::read(head_path(&path)).unwrap()).unwrap();
    assert_eq!(head, b);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(mode(&head_path(&path)), 0o600);
}

#[test]
fn a_network_client_is_recorded_and_a_record_without_one_is_written_as_before() {
    let dir = tempdir("client");
    let path = dir.join("audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    let plain = decision("s", None, "ls", "allow", None);
    let mut remote = plain.clone();
    remote.client = Some(warden_audit::ClientRec { transport: "http".into(), addr: "127.0.0.1:50312".into(), uid: Some(1000), bearer: true });
    log.append(&plain).unwrap();
    log.append(&remote).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(!lines[0].contains("client"), "no client field when there is none: {}", lines[0]);
    assert!(
        lines[1].contains(r#""client":{"transport":"http","addr":"127.0.0.1:50312","uid":1000,"bearer":true}"#),
        "{}",
        lines[1]
    );
    let records = read(&path).unwrap();
    assert_eq!((&records[0].entry, &records[1].entry), (&plain, &remote));
    assert!(verify(&path).unwrap().ok());
}

#[test]
fn a_reopened_log_continues_the_chain() {
    let dir = tempdir("reopen");
    let path = dir.join("audit.jsonl");
    let first = Log::open(&path).unwrap().append(&decision("s", None, "ls", "allow", None)).unwrap();
    let second = Log::open(&path).unwrap().append(&decision("s", None, "ls", "allow", None)).unwrap();
    assert_eq!(second.seq, first.seq + 1);
    assert_eq!(read(&path).unwrap()[1].prev, first.hash);
    assert!(verify(&path).unwrap().ok());
}

#[test]
fn two_logs_on_one_file_take_turns_and_keep_one_chain() {
    let dir = tempdir("two");
    let path = dir.join("audit.jsonl");
    let mut a = Log::open(&path).unwrap();
    let mut b = Log::open(&path).unwrap();
    for i in 0..10 {
        let log = if i % 3 == 0 { &mut a } else { &mut b };
        assert_eq!(log.append(&decision("s", None, "ls", "allow", None)).unwrap().seq, i + 1);
    }
    let report = verify(&path).unwrap();
    assert!(report.ok(), "{report:?}");
    assert_eq!(report.records, 10);
}

#[test]
fn a_torn_tail_verifies_with_a_warning_and_the_next_append_cuts_it_and_says_so() {
    let dir = tempdir("torn");
    let path = dir.join("audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    let first = log.append(&decision("s", None, "ls", "allow", None)).unwrap();
    drop(log);
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(br#"{"seq":2,"time":"20"#).unwrap();
    let report = verify(&path).unwrap();
    assert!(report.ok(), "{report:?}");
    assert!(report.torn_tail);
    assert_eq!(report.torn_bytes, 19);
    assert!(report.warnings.iter().any(|w| w.contains("torn")), "{report:?}");
    assert_eq!(read(&path).unwrap().len(), 1);
    // Opened by a process that ends without appending (a policy that did not compile): the
    // torn tail stays, for the next writer to cut and note.
    drop(Log::open(&path).unwrap());
    assert!(verify(&path).unwrap().torn_tail);
    let second = Log::open(&path).unwrap().append(&decision("s", None, "ls", "allow", None)).unwrap();
    assert_eq!(second.seq, 2);
    let records = read(&path).unwrap();
    assert_eq!(records[1].prev, first.hash);
    assert_eq!(records[1].entry.note.as_deref(), Some("a torn tail of 19 bytes was dropped before this record"));
    let report = verify(&path).unwrap();
    assert!(report.ok() && !report.torn_tail, "{report:?}");
}

#[test]
fn a_torn_first_line_is_cut_to_an_empty_log() {
    let dir = tempdir("torn-first");
    let path = dir.join("audit.jsonl");
    std::fs::write(&path, b"{\"seq\":1,").unwrap();
    let receipt = Log::open(&path).unwrap().append(&decision("s", None, "ls", "allow", None)).unwrap();
    assert_eq!(receipt.seq, 1);
    assert!(verify(&path).unwrap().ok());
}

#[test]
fn a_damaged_last_record_refuses_appends() {
    let dir = tempdir("damaged");
    let path = dir.join("audit.jsonl");
    Log::open(&path).unwrap().append(&decision("s", None, "ls", "allow", None)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap().replace("\"ls\"", "\"id\"");
    std::fs::write(&path, text).unwrap();
    let err = Log::open(&path).unwrap_err().to_string();
    assert!(err.contains("the last record of") && err.contains("do not match its hash"), "{err}");
}

#[test]
fn an_oversized_record_is_refused_and_nothing_is_written() {
    let dir = tempdir("big");
    let path = dir.join("audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    let err = log.append(&decision("s", None, &"x".repeat(1 << 20), "allow", None)).unwrap_err();
    assert!(err.to_string().contains("over the 1 MiB bound"), "{err}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
}

#[test]
fn the_default_path_is_outside_any_workspace() {
    let home = std::path::Path::new("/home/u");
    assert_eq!(default_path(home, None, true), std::path::Path::new("/var/log/warden/audit.jsonl"));
    assert_eq!(default_path(home, None, false), home.join(".local/state/warden/audit.jsonl"));
    let state = std::path::Path::new("/state");
    assert_eq!(default_path(home, Some(state), false), state.join("warden/audit.jsonl"));
    assert_eq!(default_path(home, Some(std::path::Path::new("rel")), false), home.join(".local/state/warden/audit.jsonl"));
}

#[test]
fn a_log_cut_short_of_its_head_checkpoint_refuses_appends_instead_of_hiding_it() {
    let dir = tempdir("cut-open");
    let path = dir.join("audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    for _ in 0..3 {
        log.append(&decision("s", None, "ls", "allow", None)).unwrap();
    }
    drop(log);
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: String = text.split_inclusive('\n').take(2).collect();
    std::fs::write(&path, &kept).unwrap();
    let err = Log::open(&path).unwrap_err().to_string();
    assert!(err.contains("ends at record 2 but its head checkpoint names record 3"), "{err}");
    // The same length but another last record.
    let other = Log::open(&dir.join("other.jsonl")).and_then(|mut l| {
        l.append(&decision("s", None, "ls", "allow", None))?;
        l.append(&decision("s", None, "id", "allow", None))
    });
    assert_eq!(other.unwrap().seq, 2);
    std::fs::copy(head_path(&dir.join("other.jsonl")), head_path(&path)).unwrap();
    let err = Log::open(&path).unwrap_err().to_string();
    assert!(err.contains("has another record 2 than its head checkpoint names"), "{err}");
    // A checkpoint one behind (a crash before its rename) is fine.
    std::fs::write(&path, text.split_inclusive('\n').take(3).collect::<String>()).unwrap();
    let mut head: warden_audit::Receipt = serde_json::from_slice(&std::fs::read(head_path(&dir.join("other.jsonl"))).unwrap()).unwrap();
    head.seq = 2;
    head.hash = read(&path).unwrap()[1].hash.clone();
    std::fs::write(head_path(&path), serde_json::to_vec(&head).unwrap()).unwrap();
    assert_eq!(Log::open(&path).unwrap().append(&decision("s", None, "ls", "allow", None)).unwrap().seq, 4);
}

#[test]
fn records_past_the_head_checkpoint_or_a_removed_checkpoint_are_told_not_hidden() {
    // Records appended behind warden's back (the chain has no key, the checkpoint was left as
    // it was), and a checkpoint removed to hide a cut tail. Writers killed between their
    // record and their checkpoint leave the same, so nothing is refused: verify warns, and
    // the next record notes which records no checkpoint covered, in the chain for good.
    let dir = tempdir("past-head");
    let path = dir.join("audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    for _ in 0..3 {
        log.append(&decision("s", None, "ls", "allow", None)).unwrap();
    }
    drop(log);
    let head = std::fs::read(head_path(&path)).unwrap();
    let mut other = Log::open(&path).unwrap();
    other.append(&decision("s", None, "id", "allow", None)).unwrap();
    other.append(&decision("s", None, "rm -rf /", "allow", None)).unwrap();
    drop(other);
    std::fs::write(head_path(&path), &head).unwrap();
    let report = verify(&path).unwrap();
    assert!(report.ok(), "{report:?}");
    assert!(report.warnings.iter().any(|w| w.contains("records 4..=5 come after the head checkpoint")), "{report:?}");
    let seq = Log::open(&path).unwrap().append(&decision("s", None, "ls", "allow", None)).unwrap().seq;
    assert_eq!(seq, 6);
    let report = verify(&path).unwrap();
    assert!(report.warnings.iter().any(|w| w.contains("record 6 notes: no head checkpoint covered records 4..=5")), "{report:?}");
    // The checkpoint removed: the same, from the first record.
    std::fs::remove_file(head_path(&path)).unwrap();
    Log::open(&path).unwrap().append(&decision("s", None, "ls", "allow", None)).unwrap();
    let report = verify(&path).unwrap();
    assert!(report.warnings.iter().any(|w| w.contains("record 7 notes: no head checkpoint covered records 1..=6")), "{report:?}");
}

#[test]
fn planted_symlinks_are_never_followed() {
    let dir = tempdir("symlink");
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep\n").unwrap();
    // A symlink where the log will be: refused, the target untouched.
    let path = dir.join("audit.jsonl");
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    assert!(Log::open(&path).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    // A symlink where the head's temporary file goes: replaced, the target untouched.
    let path = dir.join("real.jsonl");
    let mut tmp = head_path(&path).into_os_string();
    tmp.push(".tmp");
    std::os::unix::fs::symlink(&victim, &tmp).unwrap();
    let mut log = Log::open(&path).unwrap();
    log.append(&decision("s", None, "ls", "allow", None)).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    assert!(verify(&path).unwrap().ok());
}

fn head_of(path: &std::path::Path) -> warden_audit::Receipt {
    serde_json::from_slice(&std::fs::read(head_path(path)).unwrap()).unwrap()
}

#[test]
fn the_head_is_one_fixed_block_overwritten_in_place() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempdir("head-in-place");
    let path = dir.join("audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    let first = log.append(&decision("s", None, "ls", "allow", None)).unwrap();
    let inode = std::fs::metadata(head_path(&path)).unwrap().ino();
    let mut last = first;
    for i in 0..20 {
        last = log.append(&decision("s", None, &format!("echo {i}"), "allow", None)).unwrap();
    }
    let bytes = std::fs::read(head_path(&path)).unwrap();
    assert_eq!(bytes.len(), 128);
    assert_eq!(bytes.last(), Some(&b'\n'));
    assert_eq!(head_of(&path), last);
    // The same file, written in place: no temporary file, no new inode.
    assert_eq!(std::fs::metadata(head_path(&path)).unwrap().ino(), inode);
    let mut tmp = head_path(&path).into_os_string();
    tmp.push(".tmp");
    assert!(!std::path::Path::new(&tmp).exists());
    assert!(verify(&path).unwrap().ok());
}

#[test]
fn an_older_or_longer_head_file_is_overwritten_whole() {
    let dir = tempdir("head-longer");
    let path = dir.join("audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    let a = log.append(&decision("s", None, "ls", "allow", None)).unwrap();
    // A checkpoint as the temp-file writer left it (shorter), then one with junk after it.
    std::fs::write(head_path(&path), format!("{}\n", serde_json::to_string(&a).unwrap())).unwrap();
    let b = log.append(&decision("s", None, "pwd", "allow", None)).unwrap();
    assert_eq!(head_of(&path), b);
    let mut long = serde_json::to_vec(&b).unwrap();
    long.resize(300, b'x');
    std::fs::write(head_path(&path), &long).unwrap();
    drop(log);
    // The junk does not parse: the log refuses to continue until the head is sound.
    assert!(Log::open(&path).is_err());
    std::fs::write(head_path(&path), serde_json::to_vec(&b).unwrap()).unwrap();
    let mut log = Log::open(&path).unwrap();
    std::fs::OpenOptions::new().append(true).open(head_path(&path)).unwrap().write_all(&[b' '; 200]).unwrap();
    let c = log.append(&decision("s", None, "id", "allow", None)).unwrap();
    assert_eq!(std::fs::read(head_path(&path)).unwrap().len(), 128);
    assert_eq!(head_of(&path), c);
    assert!(verify(&path).unwrap().ok());
}

#[test]
fn a_head_that_is_a_symlink_or_a_hard_link_is_replaced_not_written_through() {
    let dir = tempdir("head-links");
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep\n").unwrap();
    let path = dir.join("audit.jsonl");
    let mut log = Log::open(&path).unwrap();
    log.append(&decision("s", None, "ls", "allow", None)).unwrap();
    // A symlink planted where the head is.
    std::fs::remove_file(head_path(&path)).unwrap();
    std::os::unix::fs::symlink(&victim, head_path(&path)).unwrap();
    let b = log.append(&decision("s", None, "pwd", "allow", None)).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    assert!(!std::fs::symlink_metadata(head_path(&path)).unwrap().file_type().is_symlink());
    assert_eq!(head_of(&path), b);
    // A hard link to another file planted where the head is.
    std::fs::remove_file(head_path(&path)).unwrap();
    std::fs::hard_link(&victim, head_path(&path)).unwrap();
    let c = log.append(&decision("s", None, "id", "allow", None)).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    assert_eq!(head_of(&path), c);
    assert!(verify(&path).unwrap().ok());
}
