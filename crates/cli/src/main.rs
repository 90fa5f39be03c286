//! The `warden` binary (see the library, `warden_cli`).
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    warden_cli::main()
}
