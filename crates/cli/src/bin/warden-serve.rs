//! `warden-serve`: the MCP server, which `warden serve` becomes (see `warden_cli::serve_main`).
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    warden_cli::serve_main()
}
