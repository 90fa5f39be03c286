//! Parsing the valid fixtures, and parse errors.

#[test]
fn debug_reference() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/valid/reference.policy")).unwrap();
    match warden_policy::parse("reference.policy", &text) {
        Ok(p) => println!("{p:#?}"),
        Err(e) => panic!("{e:#?}"),
    }
}
