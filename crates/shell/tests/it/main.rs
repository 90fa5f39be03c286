//! The one integration-test binary of `warden-shell`.

mod details;
mod properties;
mod robustness;
mod table;
mod written;

/// `[via,via] argv...`, unknown words prefixed with `?`.
pub fn render(c: &warden_shell::SimpleCommand) -> String {
    c.to_string()
}

/// The rendered commands of `input`.
pub fn commands(input: &str) -> Vec<String> {
    warden_shell::analyse(input)
        .commands
        .iter()
        .map(render)
        .collect()
}

/// The opaque reasons of `input`.
pub fn opaque(input: &str) -> Vec<warden_shell::OpaqueReason> {
    warden_shell::analyse(input)
        .opaque
        .iter()
        .map(|o| o.reason)
        .collect()
}
