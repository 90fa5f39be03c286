//! Project and version-manager tools that run any command they are given: `uv run CMD`,
//! `poetry run CMD`, `bundle exec CMD`, `conda run -n ENV CMD`, `npm exec -- CMD`, `npx CMD`,
//! `pyenv exec CMD`, `mise exec TOOL@VERSION -- CMD`, `direnv exec DIR CMD`, ... The tool is a
//! command of its own (its rules apply) and so is the command it runs. Options before the
//! command are known only in their common forms; any other option leaves the command unknown
//! (opaque), since it may take the next word as its value. A command string given to a
//! runner (`npm exec -c 'rm -rf .'`, `nix-shell --run STRING`) is analysed as a shell string.

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
    /// The runner is given a shell string to run (`npm exec -c STRING`, `nix-shell --run
    /// STRING`).
    Shell(Word),
}

/// Options without a value that every runner here accepts before the command.
const FLAGS: [&str; 10] = [
    "-q", "--quiet", "-v", "--verbose", "--frozen", "--locked", "--offline", "--no-sync",
    "--live-stream", "--no-capture-output",
];

/// How a runner is given its command.
struct Form {
    /// The subcommands that run a command (`run`); empty: the command follows the options
    /// directly (`npx CMD`).
    subs: &'static [&'static str],
    /// Operands between the subcommand and the command (`direnv exec DIR CMD`).
    operands: usize,
    /// The command comes only after `--` (`mise exec node@20 -- node x.js`: the words before
    /// it name tools); without one there is no command to find.
    after_dashdash: bool,
}

const fn form(subs: &'static [&'static str]) -> Form {
    Form { subs, operands: 0, after_dashdash: false }
}

/// The form of a runner, for the tools that are runners.
fn form_of(program: &str) -> Option<Form> {
    Some(match program {
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "pixi" => form(&["run"]),
        "conda" | "mamba" | "micromamba" => form(&["run"]),
        "bundle" => form(&["exec"]),
        "npm" => form(&["exec", "x"]),
        "pnpm" | "yarn" => form(&["exec"]),
        "bun" => form(&["x"]),
        "npx" | "pnpx" | "bunx" => form(&[]),
        "pyenv" | "rbenv" | "nodenv" | "goenv" | "jenv" | "plenv" | "asdf" => form(&["exec"]),
        "mise" | "rtx" => Form { after_dashdash: true, ..form(&["exec", "x"]) },
        "direnv" => Form { operands: 1, ..form(&["exec"]) },
        _ => return None,
    })
}

/// Whether `argv` is a runner's invocation, and where its command starts.
pub(crate) fn runner(program: &str, argv: &[Word]) -> Runner {
    if let Some(r) = nix(program, argv) {
        return r;
    }
    let Some(form) = form_of(program) else { return Runner::No };
    let mut i = 1;
    if !form.subs.is_empty() {
        match argv.get(1) {
            Some(w) if w.known && form.subs.contains(&w.text.as_str()) => i = 2,
            _ => return Runner::No,
        }
    }
    if form.after_dashdash {
        return match argv.iter().skip(i).position(|w| !w.known || w.text == "--") {
            Some(k) => match argv.get(i + k) {
                Some(w) if w.known => Runner::At(i + k + 1),
                Some(w) => Runner::Unknown(w.text.clone()),
                None => Runner::At(argv.len()),
            },
            None => Runner::At(argv.len()),
        };
    }
    // conda and its kin name the environment: `-n ENV`, `--name ENV`, `-p DIR`, `--prefix DIR`;
    // npx and `npm exec` the package: `-p PKG`, `--package PKG`.
    let conda = matches!(program, "conda" | "mamba" | "micromamba");
    let npm = form.subs.is_empty() || matches!(program, "npm" | "pnpm" | "yarn" | "bun");
    let mut operands = form.operands;
    while let Some(w) = argv.get(i) {
        let t = w.text.as_str();
        if !w.known {
            return Runner::Unknown(t.to_owned());
        }
        if t == "--" && operands == 0 {
            return Runner::At(i + 1);
        }
        if !t.starts_with('-') || t == "-" {
            if operands > 0 {
                operands -= 1;
                i += 1;
                continue;
            }
            return Runner::At(i);
        }
        if npm && matches!(t, "-c" | "--call") {
            return argv.get(i + 1).map_or(Runner::At(argv.len()), |w| Runner::Shell(w.clone()));
        }
        if let Some(text) = t.strip_prefix("--call=").filter(|_| npm) {
            return Runner::Shell(Word { text: text.to_owned(), known: true });
        }
        if FLAGS.contains(&t) || (npm && matches!(t, "-y" | "--yes" | "--no")) {
            i += 1;
        } else if (conda && matches!(t, "-n" | "--name" | "-p" | "--prefix")) || (npm && matches!(t, "-p" | "--package")) {
            i += 2;
        } else if (conda && (t.starts_with("--name=") || t.starts_with("--prefix="))) || (npm && t.starts_with("--package=")) {
            i += 1;
        } else {
            return Runner::Unknown(t.to_owned());
        }
    }
    Runner::At(argv.len())
}

/// `nix-shell ... --run STRING` (or `--command STRING`) runs a shell string; `nix develop ...
/// -c CMD ARGS` and `nix shell ... -c CMD ARGS` run a command. Without those options they start
/// an interactive shell and run nothing given here (`None`: not a runner). A word that cannot
/// be known before the option might be the option itself: the command is then unknown.
fn nix(program: &str, argv: &[Word]) -> Option<Runner> {
    let (from, options): (usize, &[&str]) = match program {
        "nix-shell" => (1, &["--run", "--command"]),
        "nix" if argv.get(1).is_some_and(|w| w.known && matches!(w.text.as_str(), "develop" | "shell")) => (2, &["-c", "--command"]),
        "nix" => return Some(Runner::No),
        _ => return None,
    };
    for (k, w) in argv.iter().enumerate().skip(from) {
        if !w.known {
            return Some(Runner::Unknown(w.text.clone()));
        }
        if options.contains(&w.text.as_str()) {
            return Some(if program == "nix-shell" {
                argv.get(k + 1).map_or(Runner::At(argv.len()), |s| Runner::Shell(s.clone()))
            } else {
                Runner::At(k + 1)
            });
        }
    }
    Some(Runner::No)
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
    fn package_and_version_managers_run_the_command_they_are_given() {
        assert_eq!(runner("npm", &argv("npm exec -- rm -rf .")), Runner::At(3));
        assert_eq!(runner("npm", &argv("npm exec --package=rimraf -y rimraf .")), Runner::At(4));
        assert_eq!(runner("pnpm", &argv("pnpm exec rm -rf .")), Runner::At(2));
        assert_eq!(runner("npx", &argv("npx -y -p cowsay cowsay hi")), Runner::At(4));
        assert_eq!(runner("npx", &argv("npx jest --watch")), Runner::At(1));
        assert_eq!(runner("bun", &argv("bun x vitest")), Runner::At(2));
        assert_eq!(runner("pyenv", &argv("pyenv exec python x.py")), Runner::At(2));
        assert_eq!(runner("pixi", &argv("pixi run pytest")), Runner::At(2));
        assert_eq!(runner("direnv", &argv("direnv exec . rm -rf .")), Runner::At(3));
        assert_eq!(runner("direnv", &argv("direnv exec /srv/app -- make")), Runner::At(4));
        // mise: the words before `--` name tools, the command follows it.
        assert_eq!(runner("mise", &argv("mise exec node@20 python@3.12 -- rm -rf .")), Runner::At(5));
        assert_eq!(runner("mise", &argv("mise x -- make")), Runner::At(3));
        assert_eq!(runner("mise", &argv("mise exec node@20")), Runner::At(3));
        assert_eq!(runner("mise", &argv("mise exec $TOOLS -- rm")), Runner::Unknown("$TOOLS".into()));
    }

    #[test]
    fn a_command_string_is_handed_over_as_a_string() {
        let shell = |text: &str| Runner::Shell(Word { text: text.to_owned(), known: true });
        assert_eq!(runner("npm", &argv("npm exec -c rm")), shell("rm"));
        assert_eq!(runner("npx", &argv("npx --call=make")), shell("make"));
        assert_eq!(runner("nix-shell", &argv("nix-shell -p jq --run make")), shell("make"));
        assert_eq!(runner("nix-shell", &argv("nix-shell shell.nix")), Runner::No);
        assert_eq!(runner("nix-shell", &argv("nix-shell $ARGS make")), Runner::Unknown("$ARGS".into()));
        assert_eq!(runner("nix", &argv("nix develop .#ci -c cargo test")), Runner::At(4));
        assert_eq!(runner("nix", &argv("nix shell nixpkgs#jq --command jq .")), Runner::At(4));
        assert_eq!(runner("nix", &argv("nix develop")), Runner::No);
        assert_eq!(runner("nix", &argv("nix build .#x")), Runner::No);
    }

    #[test]
    fn other_subcommands_and_programs_are_not_runners() {
        assert_eq!(runner("npm", &argv("npm install")), Runner::No);
        assert_eq!(runner("mise", &argv("mise use node@20")), Runner::No);
        assert_eq!(runner("direnv", &argv("direnv allow .")), Runner::No);
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
