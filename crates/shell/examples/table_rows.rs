//! Prints test-table rows (`(input, commands, opaque)`) for NUL-separated inputs read from
//! the file named by the first argument; used to draft `tests/it/table.rs`, then reviewed.
fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for input in text.split('\0') {
        let a = warden_shell::analyse(input);
        let cmds: Vec<String> = a.commands.iter().map(ToString::to_string).collect();
        let opq: Vec<String> = a.opaque.iter().map(|o| format!("{:?}", o.reason)).collect();
        println!("    (r##\"{input}\"##, &{cmds:?}, &{opq:?}),");
    }
}

