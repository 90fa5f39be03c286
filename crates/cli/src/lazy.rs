//! Subcommand arguments built only for the subcommand in use.
//!
//! clap builds every subcommand's arguments (and their help text) before it parses anything;
//! for `warden run` or `warden hook`, run once per tool call, that was most of clap's time.
//! [`Lazy`] hands clap the building as a deferred step ([`clap::Command::defer`]), which clap
//! takes only for the subcommand it parses into, and for help and completion output, which
//! build everything as before.

use clap::{ArgMatches, Args, Command, FromArgMatches};

/// The arguments `T` of one subcommand, built when clap enters that subcommand.
#[derive(Debug)]
pub(crate) struct Lazy<T>(pub(crate) T);

impl<T: Args> Args for Lazy<T> {
    fn augment_args(cmd: Command) -> Command {
        cmd.defer(|cmd| keep_about(cmd, T::augment_args))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.defer(|cmd| keep_about(cmd, T::augment_args_for_update))
    }

    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

/// Runs `augment` on `cmd`, keeping the help text the subcommand's variant gave it: `T`'s own
/// doc comment would replace it, as the deferred step runs after the variant's attributes.
fn keep_about(cmd: Command, augment: fn(Command) -> Command) -> Command {
    let (about, long_about) = (cmd.get_about().cloned(), cmd.get_long_about().cloned());
    let mut cmd = augment(cmd);
    if let Some(a) = about {
        cmd = cmd.about(a);
    }
    if let Some(a) = long_about {
        cmd = cmd.long_about(a);
    }
    cmd
}

impl<T: FromArgMatches> FromArgMatches for Lazy<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Lazy)
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Lazy)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

#[cfg(test)]
mod tests {
    use crate::Cli;
    use clap::{CommandFactory, Parser};

    #[test]
    fn every_subcommand_still_checks_and_parses_its_own_arguments() {
        Cli::command().debug_assert();
        for sub in Cli::command().get_subcommands_mut() {
            sub.build();
            assert!(sub.get_arguments().next().is_some(), "{} has no arguments once built", sub.get_name());
        }
        assert!(Cli::try_parse_from(["warden", "run", "--nonsense", "--", "true"]).is_err());
        assert!(Cli::try_parse_from(["warden", "run", "--timeout", "5", "--", "true"]).is_ok());
        assert!(Cli::try_parse_from(["warden", "explain", "--", "true"]).is_ok());
    }
}
