//! The one integration-test binary of `warden-shell`.

mod details;
mod properties;
mod robustness;
mod table;

/// `[via,via] argv...`, unknown words prefixed with `?`.
pub fn render(c: &warden_shell::SimpleCommand) -> String {
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
