//! npm's command word: npm runs any unambiguous prefix of a command or alias as that command
//! (`npm publ` is `npm publish`, `npm exe` is `npm exec`), and a camel-case word as its
//! kebab-case form (`npm runScript`). Such a word is replaced by the command it runs, so rules
//! and runners see `publish`; an exact command or alias (`npm i`, `npm x`) stays as written.

use crate::model::Word;

/// npm's commands (npm 10 and 11).
const COMMANDS: &[&str] = &[
    "access", "adduser", "audit", "bugs", "cache", "ci", "completion", "config", "dedupe",
    "deprecate", "diff", "dist-tag", "docs", "doctor", "edit", "exec", "explain", "explore",
    "find-dupes", "fund", "get", "help", "help-search", "hook", "init", "install",
    "install-ci-test", "install-test", "link", "ll", "login", "logout", "ls", "org", "outdated",
    "owner", "pack", "ping", "pkg", "prefix", "profile", "prune", "publish", "query", "rebuild",
    "repo", "restart", "root", "run-script", "sbom", "search", "set", "shrinkwrap", "star",
    "stars", "start", "stop", "team", "test", "token", "undeprecate", "uninstall", "unpublish",
    "unstar", "update", "version", "view", "whoami",
];

/// npm's aliases and the command each names.
const ALIASES: &[(&str, &str)] = &[
    ("author", "owner"), ("home", "docs"), ("issues", "bugs"), ("info", "view"), ("show", "view"),
    ("find", "search"), ("add", "install"), ("unlink", "uninstall"), ("remove", "uninstall"),
    ("rm", "uninstall"), ("r", "uninstall"), ("un", "uninstall"), ("rb", "rebuild"),
    ("list", "ls"), ("ln", "link"), ("create", "init"), ("i", "install"), ("it", "install-test"),
    ("cit", "install-ci-test"), ("up", "update"), ("c", "config"), ("s", "search"),
    ("se", "search"), ("tst", "test"), ("t", "test"), ("ddp", "dedupe"), ("v", "view"),
    ("run", "run-script"), ("clean-install", "ci"), ("clean-install-test", "install-ci-test"),
    ("x", "exec"), ("why", "explain"), ("la", "ll"), ("verison", "version"), ("ic", "ci"),
    ("innit", "init"), ("in", "install"), ("ins", "install"), ("inst", "install"),
    ("insta", "install"), ("instal", "install"), ("isnt", "install"), ("isnta", "install"),
    ("isntal", "install"), ("isntall", "install"), ("install-clean", "ci"),
    ("isntall-clean", "ci"), ("hlep", "help"), ("dist-tags", "dist-tag"), ("upgrade", "update"),
    ("udpate", "update"), ("rum", "run-script"), ("sit", "install-ci-test"),
    ("urn", "run-script"), ("ogr", "org"), ("add-user", "adduser"),
];

/// Options npm reads a value from the next word for (the others are flags, or `--key=value`).
const VALUED: &[&str] = &[
    "-w", "--workspace", "-C", "--prefix", "--registry", "--userconfig", "--globalconfig",
    "--cache", "--tag", "--otp", "--access", "--scope", "--loglevel", "--location", "--omit",
    "--include", "--before", "--script-shell", "--node-options",
];

/// Whether `word` is one of npm's commands or aliases as written.
fn is_name(word: &str) -> bool {
    COMMANDS.contains(&word) || ALIASES.iter().any(|(a, _)| *a == word)
}

/// The command an abbreviated or camel-case word runs; `None` for an exact command or alias
/// (it is what it says) and for a word npm does not know.
fn expand(word: &str) -> Option<&'static str> {
    let kebab: String = word
        .chars()
        .flat_map(|c| if c.is_ascii_uppercase() { vec!['-', c.to_ascii_lowercase()] } else { vec![c] })
        .collect();
    if is_name(word) {
        return None;
    }
    let names = || COMMANDS.iter().copied().chain(ALIASES.iter().map(|(a, _)| *a));
    let found = match names().find(|n| *n == kebab) {
        Some(n) => n,
        None => {
            let mut hits = names().filter(|n| !kebab.is_empty() && n.starts_with(kebab.as_str()));
            match (hits.next(), hits.next()) {
                (Some(one), None) => one,
                _ => return None,
            }
        }
    };
    Some(ALIASES.iter().find(|(a, _)| *a == found).map_or(found, |(_, c)| c))
}

/// Replaces npm's command word in `argv` (`argv[0]` is npm) by the command it runs, when it
/// is an abbreviation. The command word is the first operand after npm's options; an operand
/// npm does not know may be the value of an option not listed here, so the next is tried.
pub(crate) fn canonical(argv: &mut [Word]) {
    let mut i = 1;
    while let Some(w) = argv.get(i) {
        if !w.known || w.text == "--" {
            return;
        }
        let t = w.text.as_str();
        if t.starts_with('-') {
            i += if VALUED.contains(&t) { 2 } else { 1 };
            continue;
        }
        if let Some(command) = expand(t) {
            if let Some(w) = argv.get_mut(i) {
                w.text = command.to_owned();
            }
            return;
        }
        if is_name(t) {
            return;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &str) -> String {
        let mut argv: Vec<Word> = line.split(' ').map(|t| Word { text: t.into(), known: true }).collect();
        canonical(&mut argv);
        argv.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn an_abbreviated_command_is_the_command_it_runs() {
        assert_eq!(of("npm publ"), "npm publish");
        assert_eq!(of("npm publi --tag next"), "npm publish --tag next");
        assert_eq!(of("npm pu"), "npm publish");
        assert_eq!(of("npm --registry http://r unpub x"), "npm --registry http://r unpublish x");
        assert_eq!(of("npm -w pkg exe -- rm"), "npm -w pkg exec -- rm");
        assert_eq!(of("npm --otp 123456 publ"), "npm --otp 123456 publish");
        assert_eq!(of("npm depr x@1 old"), "npm deprecate x@1 old");
        assert_eq!(of("npm unl x"), "npm uninstall x");
        assert_eq!(of("npm runScript build"), "npm run-script build");
        assert_eq!(of("npm cleanInstall"), "npm ci");
        // Exact commands and aliases stay; an ambiguous prefix runs nothing.
        assert_eq!(of("npm i x"), "npm i x");
        assert_eq!(of("npm x cowsay"), "npm x cowsay");
        assert_eq!(of("npm run publ"), "npm run publ");
        assert_eq!(of("npm pack"), "npm pack");
        assert_eq!(of("npm p"), "npm p");
        assert_eq!(of("npm sta"), "npm sta");
    }
}
