//! `warden-wasi --cache DIR`: the helper process that runs WASI images for `warden`, which
//! starts it beside itself and talks to it over stdin and stdout (see `warden_wasi::serve`).
//! Not meant to be run by hand.

fn main() {
    let mut args = std::env::args_os().skip(1);
    match (args.next(), args.next(), args.next()) {
        (Some(flag), Some(dir), None) if flag == "--cache" => warden_wasi::serve(std::path::Path::new(&dir)),
        _ => {
            eprintln!("usage: warden-wasi --cache DIR (started by warden, which sends it runs on stdin)");
            std::process::exit(2);
        }
    }
}
