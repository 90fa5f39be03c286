//! `warden check FILE...`: each file compiled alone (syntax, names, examples).

use crate::output::{CliError, print_diagnostics};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `warden check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Policy files to check.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// One line per diagnostic: `file:line:column: code: message`.
    #[arg(long)]
    short: bool,
}

/// Checks every file; exit 1 if any has an error.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    let mut failed = 0usize;
    for file in &args.files {
        let layers = match warden_engine::load_files(std::slice::from_ref(file)) {
            Ok(layers) => layers,
            Err(err) => {
                eprintln!("{:?}", miette::Report::new(CliError::from(err)));
                failed += 1;
                continue;
            }
        };
        match warden_policy::compile(&layers) {
            Ok(policy) => println!("ok: {} ({} rules)", file.display(), policy.rules().len()),
            Err(diagnostics) => {
                print_diagnostics(&diagnostics, args.short);
                failed += 1;
            }
        }
    }
    if failed == 0 {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("{failed} of {} file(s) have errors", args.files.len());
        Ok(ExitCode::from(1))
    }
}
