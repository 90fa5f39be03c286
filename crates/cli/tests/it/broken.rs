//! The broken-policy corpus through `warden check`: each file names its expected diagnostic in
//! its first line (`# expect: CODE LINE:COLUMN`); check must exit 1 and print it at that place.

use crate::support::{repo, stderr, tempdir, warden};

#[test]
fn every_broken_policy_fails_check_at_the_expected_place() {
    let dir = repo().join("crates/policy/tests/fixtures/broken");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 50, "only {} broken policies", files.len());
    let home = tempdir("broken");
    let mut wrong = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let first = text.lines().next().unwrap_or_default();
        let expect = first.strip_prefix("# expect: ").unwrap_or_else(|| panic!("{}: no expect line", file.display()));
        let (code, place) = expect.split_once(' ').unwrap();
        let out = warden(&dir, &home).args(["check", "--short"]).arg(file).output().unwrap();
        let err = stderr(&out);
        let wanted = format!("{}:{}: {}", file.display(), place.trim(), code);
        let first_diag = err.lines().next().unwrap_or_default();
        if out.status.code() != Some(1) || !first_diag.starts_with(&wanted) {
            wrong.push(format!("{}\n    wanted {wanted}\n    got    {first_diag} (exit {:?})", file.display(), out.status.code()));
        }
    }
    assert!(wrong.is_empty(), "{} of {} broken policies misreported:\n{}", wrong.len(), files.len(), wrong.join("\n"));
}
