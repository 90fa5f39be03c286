//! `warden fmt [--check] FILE...`: canonical layout, comments kept.

use crate::output::{CliError, print_diagnostics};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `warden fmt`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Policy files to format in place; `-` reads stdin and writes stdout.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Change nothing; exit 1 if any file is not in canonical form.
    #[arg(long)]
    check: bool,
}

/// Formats every file; a file that does not parse is left untouched.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    let mut problems = 0usize;
    for file in &args.files {
        let stdin = file.as_os_str() == "-";
        let (name, text) = if stdin {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|source| io("read", "-", source))?;
            (String::from("<stdin>"), text)
        } else {
            let text = warden_engine::read_text(file)?;
            (file.display().to_string(), text)
        };
        let formatted = match warden_policy::format_source(&name, &text) {
            Ok(formatted) => formatted,
            Err(diagnostics) => {
                print_diagnostics(&diagnostics, false);
                problems += 1;
                continue;
            }
        };
        if args.check {
            if formatted != text {
                println!("would reformat {name}");
                problems += 1;
            }
        } else if stdin {
            std::io::stdout()
                .write_all(formatted.as_bytes())
                .map_err(|source| io("write", "-", source))?;
        } else if formatted != text {
            write_atomically(file, &formatted)?;
            println!("formatted {name}");
        }
    }
    Ok(if problems == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Writes beside the file, then renames over it: a crash never leaves half a policy.
fn write_atomically(file: &PathBuf, text: &str) -> Result<(), CliError> {
    let name = file.display().to_string();
    let mut tmp = file.clone().into_os_string();
    tmp.push(".warden-fmt.tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(|source| io("write", &name, source))?;
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, file).map_err(|source| io("replace", &name, source))
}

fn io(action: &'static str, path: &str, source: std::io::Error) -> CliError {
    CliError::Io { action, path: path.to_string(), source }
}
