//! Project tools that run any command given after a subcommand: `uv run CMD`, `poetry run CMD`,
//! `bundle exec CMD`, `conda run -n ENV CMD`, ... The tool is a command of its own (its rules
//! apply) and so is the command it runs. Options between the subcommand and the command are
//! known only in their common forms; any other option leaves the command unknown (opaque),
//! since it may take the next word as its value.

use crate::model::Word;

/// Where the command run by a runner starts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Runner {
    /// Not a runner invocation.
    No,
    /// The run command starts at this index of argv (argv's length: no command).
    At(usize),
    /// An option this module does not know (or a word that cannot be known statically).
    Unknown(String),
}

/// Options without a value that every runner here accepts before the command.
const FLAGS: [&str; 10] = [
    "-q", "--quiet", "-v", "--verbose", "--frozen", "--locked", "--offline", "--no-sync",
    "--live-stream", "--no-capture-output",
];

/// The subcommand that runs a command, for the tools that have one.
fn subcommand(program: &str) -> Option<&'static str> {
    Some(match program {
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" => "run",
        "conda" | "mamba" | "micromamba" => "run",
        "bundle" => "exec",
        _ => return None,
    })
}

/// Whether `argv` is `PROGRAM SUBCOMMAND ...` of a runner, and where its command starts.
pub(crate) fn runner(program: &str, argv: &[Word]) -> Runner {
    let Some(sub) = subcommand(program) else { return Runner::No };
    match argv.get(1) {
        Some(w) if w.known && w.text == sub => {}
        _ => return Runner::No,
    }
    // conda and its kin name the environment: `-n ENV`, `--name ENV`, `-p DIR`, `--prefix DIR`.
    let conda = matches!(program, "conda" | "mamba" | "micromamba");
    let mut i = 2;
    while let Some(w) = argv.get(i) {
        let t = w.text.as_str();
        if !w.known {
            return Runner::Unknown(t.to_owned());
        }
        if t == "--" {
            return Runner::At(i + 1);
        }
        if !t.starts_with('-') || t == "-" {
            return Runner::At(i);
        }
        if FLAGS.contains(&t) {
            i += 1;
        } else if conda && matches!(t, "-n" | "--name" | "-p" | "--prefix") {
            i += 2;
        } else if conda && (t.starts_with("--name=") || t.starts_with("--prefix=")) {
            i += 1;
        } else {
            return Runner::Unknown(t.to_owned());
        }
    }
    Runner::At(argv.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::test_words as argv;

    #[test]
    fn finds_the_command_after_the_subcommand_and_its_options() {
        assert_eq!(runner("uv", &argv("uv run pytest -q")), Runner::At(2));
        assert_eq!(runner("uv", &argv("uv run --frozen -q pytest")), Runner::At(4));
        assert_eq!(runner("poetry", &argv("poetry run -- rm -rf .")), Runner::At(3));
        assert_eq!(runner("bundle", &argv("bundle exec rake test")), Runner::At(2));
        assert_eq!(runner("conda", &argv("conda run -n env python x.py")), Runner::At(4));
        assert_eq!(runner("conda", &argv("conda run --prefix=/opt/e --live-stream make")), Runner::At(4));
        assert_eq!(runner("pipenv", &argv("pipenv run")), Runner::At(2));
    }

    #[test]
    fn other_subcommands_and_programs_are_not_runners() {
        assert_eq!(runner("uv", &argv("uv sync --locked")), Runner::No);
        assert_eq!(runner("bundle", &argv("bundle install")), Runner::No);
        assert_eq!(runner("cargo", &argv("cargo run -- x")), Runner::No);
        assert_eq!(runner("uv", &argv("uv $SUB rm")), Runner::No);
    }

    #[test]
    fn an_option_it_does_not_know_leaves_the_command_unknown() {
        assert_eq!(runner("uv", &argv("uv run --with rich python x.py")), Runner::Unknown("--with".into()));
        assert_eq!(runner("uv", &argv("uv run $FLAGS rm -rf .")), Runner::Unknown("$FLAGS".into()));
        assert_eq!(runner("hatch", &argv("hatch run -e dev pytest")), Runner::Unknown("-e".into()));
    }
}
