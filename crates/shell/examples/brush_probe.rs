//! Parses stdin with brush-parser directly (no guard). A tool to reproduce parser blow-ups:
//! run it in a child process with `ulimit -v` so a runaway allocation cannot hurt the host.
use std::io::Read;

fn main() {
    let mut input = String::new();
    if std::io::stdin().read_to_string(&mut input).is_err() {
        return;
    }
    let opts = brush_parser::ParserOptions::default();
    let mut parser = brush_parser::Parser::new(std::io::Cursor::new(input.as_bytes()), &opts);
    match parser.parse_program() {
        Ok(p) => println!("ok {}", p.complete_commands.len()),
        Err(e) => println!("err {e}"),
    }
}
