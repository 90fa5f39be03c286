//! Prints the analysis of each argument: `cargo run -p warden-shell --example analyse -- 'CMD'`.
fn main() {
    for arg in std::env::args().skip(1) {
        let a = warden_shell::analyse(&arg);
        println!("== {arg:?}");
        for c in &a.commands {
            println!(
                "  cmd {:?} {c} via={:?} pipe={:?} assign={:?} redir={:?} span={:?}",
                c.program,
                c.via,
                c.pipeline.map(|p| (p.id, p.stage)),
                c.assignments
                    .iter()
                    .map(|(n, v)| format!("{n}={}", v.text))
                    .collect::<Vec<_>>(),
                c.redirects
                    .iter()
                    .map(|r| format!("{:?}:{}", r.access, r.target.text))
                    .collect::<Vec<_>>(),
                c.span
            );
        }
        for o in &a.opaque {
            println!("  opaque {:?} {:?} span={:?}", o.reason, o.text, o.span);
        }
    }
}
