//! toolbox: warden's multi-call WASI image (wasm32-wasip1).
//!
//! Dispatches on `argv[0]` (`grep -rn main .`), or on `argv[1]` when `argv[0]` is `toolbox`
//! (`toolbox grep -rn main .`). The tools see only the directories the host preopened; the
//! working directory comes from `PWD`.
//!
//! When the sandbox refuses a path (no preopen covers it, a read-only preopen, a path leading
//! out of a preopen), a tool prints its usual error line and then one marker line on stderr,
//! `toolbox: denied: OP: PATH` (`OP` is `fs.read` or `fs.write`, `PATH` absolute and lexically
//! normalised), which the host turns into a structured denial. A path that does not exist gets
//! `toolbox: missing: OP: PATH`: the host reports it as a denial when no preopen covers it.

mod args;
mod diff;
mod fsx;
mod grep;
mod ls;
mod test_tools;
mod text;
mod tree;
mod write;

use std::io::Write as _;

/// What every tool gets: its name (for error lines) and a buffered stdout.
pub struct Ctx {
    /// The tool's name, first word of every error line.
    pub tool: String,
    /// Buffered standard output; write errors are ignored (a closed pipe ends output).
    pub out: std::io::BufWriter<std::io::Stdout>,
}

impl Ctx {
    /// Prints `TOOL: MESSAGE` on stderr.
    pub fn err(&self, msg: impl std::fmt::Display) {
        eprintln!("{}: {msg}", self.tool);
    }
}

const TOOLS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "find", "stat", "diff", "sort", "uniq", "tree", "pwd",
    "echo", "write", "edit",
];

fn main() {
    let mut argv: Vec<String> = std::env::args().collect();
    let mut name = argv.first().map(|a| base(a)).unwrap_or_default();
    if name == "toolbox" || name.ends_with(".wasm") {
        argv.remove(0);
        name = argv.first().cloned().unwrap_or_default();
    }
    // wasi-libc starts in `/`; entering it again fails when nothing is preopened there.
    if let Some(pwd) = std::env::var("PWD").ok().map(|p| p.trim_end_matches('/').to_string()).filter(|p| !p.is_empty()) {
        if let Err(e) = std::env::set_current_dir(&pwd) {
            eprintln!("toolbox: cannot enter working directory `{pwd}`: {}", fsx::describe(&e));
            fsx::mark_denied(&e, "fs.read", std::path::Path::new(&pwd));
            std::process::exit(2);
        }
    }
    let args: Vec<String> = argv.into_iter().skip(1).collect();
    let mut ctx = Ctx { tool: name.clone(), out: std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout()) };
    let code = match name.as_str() {
        "ls" => ls::run(&mut ctx, &args),
        "cat" => text::cat(&mut ctx, &args),
        "head" => text::head_tail(&mut ctx, &args, true),
        "tail" => text::head_tail(&mut ctx, &args, false),
        "wc" => text::wc(&mut ctx, &args),
        "sort" => text::sort(&mut ctx, &args),
        "uniq" => text::uniq(&mut ctx, &args),
        "echo" => text::echo(&mut ctx, &args),
        "pwd" => text::pwd(&mut ctx),
        "grep" => grep::run(&mut ctx, &args),
        "find" => tree::find(&mut ctx, &args),
        "tree" => tree::tree(&mut ctx, &args),
        "stat" => ls::stat(&mut ctx, &args),
        "diff" => diff::run(&mut ctx, &args),
        "write" => write::write(&mut ctx, &args),
        "edit" => write::edit(&mut ctx, &args),
        "__spin" => test_tools::spin(),
        "__alloc" => test_tools::alloc(&mut ctx, &args),
        "__flood" => test_tools::flood(&mut ctx, &args),
        "__exit" => test_tools::exit(&args),
        "" => {
            eprintln!("usage: toolbox TOOL [ARGS...]; tools: {}", TOOLS.join(" "));
            2
        }
        other => {
            eprintln!("toolbox: unknown tool `{other}`; tools: {}", TOOLS.join(" "));
            127
        }
    };
    let _ = ctx.out.flush();
    std::process::exit(code);
}

fn base(arg0: &str) -> String {
    arg0.rsplit('/').next().unwrap_or(arg0).to_string()
}
