//! Prints test-table rows (`(input, commands, opaque)`) for NUL-separated inputs read from
//! the file named by the first argument; used to draft `tests/it/table.rs`, then reviewed.
fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for input in text.split('\0') {
        let a = warden_shell::analyse(input);
        let cmds: Vec<String> = a.commands.iter().map(render).collect();
        let opq: Vec<String> = a.opaque.iter().map(|o| format!("{:?}", o.reason)).collect();
        println!("    (r##\"{input}\"##, &{cmds:?}, &{opq:?}),");
    }
}

fn render(c: &warden_shell::SimpleCommand) -> String {
    let argv: Vec<String> = c
        .argv
        .iter()
        .map(|w| {
            if w.known {
                w.text.clone()
            } else {
                format!("?{}", w.text)
            }
        })
        .collect();
    if c.via.is_empty() {
        argv.join(" ")
    } else {
        format!("[{}] {}", c.via.join(","), argv.join(" "))
    }
}
