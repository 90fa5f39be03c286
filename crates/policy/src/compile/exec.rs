//! Exec patterns compiled for matching against one simple command, with three-valued results
//! when the analyser could not know some words.
//!
//! - Allow rules ([`Mode::Front`]): argument tokens match at the front, in order; an unknown
//!   word reached while matching, any unknown word when the rule has `unless`, or an unknown
//!   word standing in for a missing `with` flag, makes the result [`Tri::Maybe`].
//! - Ask/deny rules ([`Mode::Anywhere`]): argument tokens match in order anywhere (as a
//!   subsequence); an unknown word after the point where matching stalled makes it `Maybe`.
//!   `unless` ignores unknown words (an unknown word cannot lift a deny).

use super::glob::Glob;
use crate::ast::{ConditionKind, ExecPattern};
use warden_shell::Word;

/// A three-valued match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tri {
    /// Cannot match.
    No,
    /// Would match for some value of the unknown words.
    Maybe,
    /// Matches.
    Yes,
}

/// How argument tokens are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Mode {
    /// Allow rules: at the front, in order.
    Front,
    /// Ask and deny rules: in order, anywhere.
    Anywhere,
}

/// A flag of an `unless` or `with` clause.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Flag {
    glob: Glob,
    /// `-x`: also matches inside a cluster of short flags.
    short: Option<char>,
    /// `--name...`: the literal part, for GNU-style abbreviations (`--in` for `--in-place`).
    long: Option<String>,
}

impl Flag {
    fn new(text: &str) -> Flag {
        let glob = Glob::new(text);
        let mut chars = text.chars();
        let short = match (chars.next(), chars.next(), chars.next()) {
            (Some('-'), Some(c), None) if c != '-' && c != '*' && c != '?' => Some(c),
            _ => None,
        };
        let long = (text.starts_with("--") && text.len() > 2).then(|| glob.literal_prefix());
        Flag { glob, short, long }
    }

    /// Whether `arg` is this flag. `widen` admits abbreviations of long options (used where a
    /// wider match is the safer one: deny/ask `with`, allow `unless`).
    ///
    /// getopt_long, argparse and git's parse-options accept any unambiguous prefix of a long
    /// option, down to one letter after `--` (`git reset --h` is `--hard`, `sort --o=f` is
    /// `--output=f`), so every such prefix is widened, with or without `=value`. Widening only
    /// ever makes a deny or ask rule match more commands, or an allow rule match fewer (its
    /// `unless` excludes more): it never lets a command through. An allow rule's `with` and a
    /// deny or ask rule's `unless` are never widened, because there a wider match would admit
    /// more (`cmd with --frozen` is not met by `--f`, `git push unless stash` is not lifted by
    /// an abbreviation). `--` alone ends the options and is no abbreviation. An ambiguous prefix
    /// (`--s` for both `--set` and `--show`) is refused by the tool itself, so treating it as
    /// either option costs at most a question.
    fn matches(&self, arg: &str, widen: bool) -> bool {
        if self.glob.matches(arg) {
            return true;
        }
        if let Some(c) = self.short
            && let Some(cluster) = arg.strip_prefix('-')
            && !cluster.starts_with('-')
            && cluster.contains(c)
        {
            return true;
        }
        if widen
            && let Some(long) = &self.long
            && arg.starts_with("--")
        {
            let name = arg.split('=').next().unwrap_or(arg);
            return name.len() > 2 && long.starts_with(name);
        }
        false
    }
}

/// One compiled exec pattern.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct ExecMatcher {
    /// Command word alternatives; `true` when the word contains `/` (full path match). Most
    /// patterns name one command: kept inline.
    commands: smallvec::SmallVec<[(Glob, bool); 1]>,
    /// Argument slots: alternatives of token sequences. Most slots are one token: kept
    /// inline (a policy has hundreds of patterns, compiled on every load).
    args: Vec<Slot>,
    /// `unless` clauses (none of the flags may be present).
    unless: Vec<Vec<Flag>>,
    /// `with` clauses (each needs one of its flags present).
    with: Vec<Vec<Flag>>,
}

/// The alternatives of one argument slot.
type Slot = smallvec::SmallVec<[smallvec::SmallVec<[Glob; 1]>; 1]>;

/// What a matcher looks at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CmdView<'a> {
    /// `argv[0]` as written, `None` when unknown.
    pub(crate) argv0: Option<&'a str>,
    /// The base name of `argv[0]`.
    pub(crate) name: &'a str,
    /// `argv[1..]`.
    pub(crate) args: &'a [Word],
}

/// The base name of a command word.
pub(crate) fn base_name(argv0: &str) -> &str {
    // A byte scan: command words are short, and `/` is ASCII (a char boundary).
    match argv0.bytes().rposition(|b| b == b'/') {
        Some(i) => argv0.get(i + 1..).unwrap_or(argv0),
        None => argv0,
    }
}

impl ExecMatcher {
    /// Compiles a pattern from the syntax tree.
    pub(crate) fn new(p: &ExecPattern) -> ExecMatcher {
        let commands =
            p.command.iter().map(|w| (Glob::new(&w.node), w.node.contains('/'))).collect();
        let args = p
            .args
            .iter()
            .map(|slot| {
                slot.alternatives
                    .iter()
                    .map(|seq| seq.iter().map(|t| Glob::new(&t.node)).collect())
                    .collect()
            })
            .collect();
        let (mut unless, mut with) = (Vec::new(), Vec::new());
        for c in &p.conditions {
            let flags: Vec<Flag> = c.flags.iter().map(|f| Flag::new(&f.node)).collect();
            match c.kind {
                ConditionKind::Unless => unless.push(flags),
                ConditionKind::With => with.push(flags),
            }
        }
        ExecMatcher { commands, args, unless, with }
    }

    /// Index keys: `(literal, is_path)` per command alternative, `None` for a wildcard.
    pub(crate) fn keys(&self) -> impl Iterator<Item = Option<(&std::sync::Arc<str>, bool)>> {
        self.commands.iter().map(|(g, path)| g.literal().map(|l| (l, *path)))
    }

    /// Whether the command word matches one of the alternatives.
    pub(crate) fn command_matches(&self, cmd: &CmdView<'_>) -> bool {
        let Some(argv0) = cmd.argv0 else { return false };
        self.commands.iter().any(|(g, path)| if *path { g.matches(argv0) } else { g.matches(cmd.name) })
    }

    /// Matches a whole command.
    pub(crate) fn matches(&self, cmd: &CmdView<'_>, mode: Mode) -> Tri {
        if cmd.argv0.is_none() {
            return Tri::Maybe;
        }
        if !self.command_matches(cmd) {
            return Tri::No;
        }
        self.matches_args_of(cmd.name, cmd.args, mode)
    }

    /// [`Self::matches`], skipping the command word when an index already matched it
    /// (`command_known`).
    pub(crate) fn matches_known(&self, cmd: &CmdView<'_>, mode: Mode, command_known: bool) -> Tri {
        if command_known && cmd.argv0.is_some() {
            return self.matches_args_of(cmd.name, cmd.args, mode);
        }
        self.matches(cmd, mode)
    }

    /// [`Self::matches_args`] for the program `name`: tar's old-style first word (`tar cIf PROG
    /// x.tar f`, no dash) is a cluster of option letters, so `with` and `unless` see it as
    /// `-cIf` (a deny `tar with -I` must see the `I`).
    fn matches_args_of(&self, name: &str, args: &[Word], mode: Mode) -> Tri {
        let old_style = matches!(name, "tar" | "gtar" | "bsdtar")
            && args.first().is_some_and(|w| {
                w.known && !w.text.is_empty() && w.text.chars().all(|c| c.is_ascii_alphanumeric())
            });
        if !old_style || (self.unless.is_empty() && self.with.is_empty()) {
            return self.matches_args(args, mode);
        }
        let mut dashed = args.to_vec();
        if let Some(first) = dashed.first_mut() {
            first.text.insert(0, '-');
        }
        self.matches_flags(args, &dashed, mode)
    }

    /// Matches the arguments and conditions (the command word already matched).
    pub(crate) fn matches_args(&self, args: &[Word], mode: Mode) -> Tri {
        self.matches_flags(args, args, mode)
    }

    /// Matches the argument tokens against `args` and the conditions against `flags` (the same
    /// words, but for an old-style first word of tar).
    fn matches_flags(&self, args: &[Word], flags: &[Word], mode: Mode) -> Tri {
        let mut result = match mode {
            Mode::Front => self.front(args),
            Mode::Anywhere => self.anywhere(args),
        };
        if result == Tri::No {
            return Tri::No;
        }
        let unknown = args.iter().any(|w| !w.known);
        let widen_unless = mode == Mode::Front;
        for clause in &self.unless {
            let hit = flags
                .iter()
                .any(|w| w.known && clause.iter().any(|f| f.matches(&w.text, widen_unless)));
            if hit {
                return Tri::No;
            }
            if unknown && mode == Mode::Front {
                result = result.min(Tri::Maybe);
            }
        }
        let widen_with = mode == Mode::Anywhere;
        for clause in &self.with {
            let hit = flags
                .iter()
                .any(|w| w.known && clause.iter().any(|f| f.matches(&w.text, widen_with)));
            if !hit {
                if unknown {
                    result = result.min(Tri::Maybe);
                } else {
                    return Tri::No;
                }
            }
        }
        result
    }

    /// Prefix matching (allow rules), exploring alternatives of different lengths.
    fn front(&self, args: &[Word]) -> Tri {
        // States: positions reached so far; `maybe` once an unknown word was met.
        let mut states = Positions::start(args.len());
        let mut maybe = false;
        for slot in &self.args {
            let mut next = states.empty();
            states.for_each(|pos| {
                for seq in slot {
                    match match_seq_front(seq, args, pos) {
                        Step::At(end) => next.insert(end),
                        Step::Unknown => maybe = true,
                        Step::Fail => {}
                    }
                }
            });
            if next.is_empty() {
                return if maybe { Tri::Maybe } else { Tri::No };
            }
            states = next;
        }
        Tri::Yes
    }

    /// Subsequence matching (ask/deny rules): the earliest end per slot is optimal.
    fn anywhere(&self, args: &[Word]) -> Tri {
        let mut pos = 0usize;
        for slot in &self.args {
            let best = slot.iter().filter_map(|seq| match_seq_anywhere(seq, args, pos)).min();
            match best {
                Some(end) => pos = end,
                None => {
                    let unknown_after = args.get(pos..).is_some_and(|r| r.iter().any(|w| !w.known));
                    return if unknown_after { Tri::Maybe } else { Tri::No };
                }
            }
        }
        Tri::Yes
    }
}

/// A set of argument positions: a bit set for argv shorter than 128 words (no allocation), a
/// list otherwise.
enum Positions {
    Bits(u128),
    List(Vec<usize>),
}

impl Positions {
    /// `{0}`, sized for `n` arguments (positions `0..=n`).
    fn start(n: usize) -> Positions {
        if n < 127 { Positions::Bits(1) } else { Positions::List(vec![0]) }
    }

    /// An empty set of the same kind.
    fn empty(&self) -> Positions {
        match self {
            Positions::Bits(_) => Positions::Bits(0),
            Positions::List(_) => Positions::List(Vec::new()),
        }
    }

    fn insert(&mut self, pos: usize) {
        match self {
            Positions::Bits(b) => *b |= 1u128.checked_shl(u32::try_from(pos).unwrap_or(u32::MAX)).unwrap_or(0),
            Positions::List(v) => {
                if !v.contains(&pos) {
                    v.push(pos);
                }
            }
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Positions::Bits(b) => *b == 0,
            Positions::List(v) => v.is_empty(),
        }
    }

    fn for_each(&self, mut f: impl FnMut(usize)) {
        match self {
            Positions::Bits(b) => {
                let mut rest = *b;
                while rest != 0 {
                    f(rest.trailing_zeros() as usize);
                    rest &= rest - 1;
                }
            }
            Positions::List(v) => v.iter().for_each(|p| f(*p)),
        }
    }
}

enum Step {
    At(usize),
    Unknown,
    Fail,
}

fn match_seq_front(seq: &[Glob], args: &[Word], mut pos: usize) -> Step {
    for tok in seq {
        match args.get(pos) {
            None => return Step::Fail,
            Some(w) if !w.known => return Step::Unknown,
            Some(w) if tok.matches(&w.text) => pos += 1,
            Some(_) => return Step::Fail,
        }
    }
    Step::At(pos)
}

fn match_seq_anywhere(seq: &[Glob], args: &[Word], mut pos: usize) -> Option<usize> {
    for tok in seq {
        let rest = args.get(pos..)?;
        let found = rest.iter().position(|w| w.known && tok.matches(&w.text))?;
        pos += found + 1;
    }
    Some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{ArgAlt, Condition, Spanned};

    fn sp(s: &str) -> Spanned<String> {
        Spanned { node: s.to_string(), span: 0..0 }
    }

    /// `cmd a (b c | d) unless (x) with (y)` written as ("cmd", [["a"]], [["b","c"],["d"]]).
    fn pat(cmd: &str, args: &[&[&[&str]]], unless: &[&str], with: &[&str]) -> ExecMatcher {
        let mut conditions = vec![];
        if !unless.is_empty() {
            conditions.push(Condition {
                kind: ConditionKind::Unless,
                flags: unless.iter().map(|f| sp(f)).collect(),
                span: 0..0,
            });
        }
        if !with.is_empty() {
            conditions.push(Condition {
                kind: ConditionKind::With,
                flags: with.iter().map(|f| sp(f)).collect(),
                span: 0..0,
            });
        }
        ExecMatcher::new(&ExecPattern {
            command: cmd.split('|').map(sp).collect(),
            args: args
                .iter()
                .map(|slot| ArgAlt {
                    alternatives: slot.iter().map(|seq| seq.iter().map(|t| sp(t)).collect()).collect(),
                    span: 0..0,
                })
                .collect(),
            conditions,
            span: 0..0,
        })
    }

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace()
            .map(|w| match w.strip_prefix('$') {
                Some(_) => Word { text: w.to_string(), known: false },
                None => Word { text: w.to_string(), known: true },
            })
            .collect()
    }

    fn run(m: &ExecMatcher, cmd: &str, mode: Mode) -> Tri {
        let w = words(cmd);
        let argv0 = w.first().filter(|w| w.known).map(|w| w.text.as_str());
        let view = CmdView { argv0, name: argv0.map(base_name).unwrap_or(""), args: &w[1..] };
        m.matches(&view, mode)
    }

    #[test]
    fn front_and_anywhere() {
        let git_status = pat("git", &[&[&["status"]]], &[], &[]);
        assert_eq!(run(&git_status, "git status -s", Mode::Front), Tri::Yes);
        assert_eq!(run(&git_status, "git -C x status", Mode::Front), Tri::No);
        assert_eq!(run(&git_status, "git $x", Mode::Front), Tri::Maybe);
        assert_eq!(run(&git_status, "/usr/bin/git status", Mode::Front), Tri::Yes);
        let push = pat("git", &[&[&["push"]]], &[], &[]);
        assert_eq!(run(&push, "git -C x push origin", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&push, "git status", Mode::Anywhere), Tri::No);
        assert_eq!(run(&push, "git status $x", Mode::Anywhere), Tri::Maybe);
        assert_eq!(run(&push, "$g push", Mode::Anywhere), Tri::Maybe);
        let reset = pat("git", &[&[&["reset", "--hard"], &["clean"]]], &[], &[]);
        assert_eq!(run(&reset, "git reset -q --hard", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&reset, "git clean -fd", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&reset, "git reset --soft", Mode::Anywhere), Tri::No);
        let alts = pat("cargo", &[&[&["build"], &["test"]]], &[], &[]);
        assert_eq!(run(&alts, "cargo test --all", Mode::Front), Tri::Yes);
        assert_eq!(run(&alts, "cargo publish", Mode::Front), Tri::No);
    }

    #[test]
    fn long_argv_matches_like_short() {
        // 127 words and more take the list, fewer the bit set: both must agree.
        let m = pat("cargo", &[&[&["a"], &["a", "b"]], &[&["c"]]], &[], &[]);
        let pad = " z".repeat(200);
        for (argv, want) in [("cargo a b c", Tri::Yes), ("cargo a c", Tri::Yes), ("cargo a $x", Tri::Maybe), ("cargo a q", Tri::No)] {
            assert_eq!(run(&m, argv, Mode::Front), want, "{argv}");
            assert_eq!(run(&m, &format!("{argv}{pad}"), Mode::Front), want, "{argv} + 200 words");
        }
    }

    #[test]
    fn base_names() {
        for (word, want) in [("git", "git"), ("/usr/bin/git", "git"), ("./x", "x"), ("dir/", ""), ("/", ""), ("", ""), ("é/ü", "ü")] {
            assert_eq!(base_name(word), want, "{word}");
            assert_eq!(base_name(word), word.rsplit('/').next().unwrap_or(word), "{word}");
        }
    }

    #[test]
    fn conditions() {
        let find = pat("find", &[], &["-delete", "-exec", "-fprint*"], &[]);
        assert_eq!(run(&find, "find . -name x", Mode::Front), Tri::Yes);
        assert_eq!(run(&find, "find . -delete", Mode::Front), Tri::No);
        assert_eq!(run(&find, "find . -fprint0 x", Mode::Front), Tri::No);
        assert_eq!(run(&find, "find . $x", Mode::Front), Tri::Maybe);
        let sed = pat("sed", &[], &[], &["-i", "--in-place*"]);
        assert_eq!(run(&sed, "sed -ni s/a/b/ f", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&sed, "sed -i.bak s/a/b/ f", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&sed, "sed --in-place=.b f", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&sed, "sed --in f", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&sed, "sed -n p f", Mode::Anywhere), Tri::No);
        assert_eq!(run(&sed, "sed -n $x f", Mode::Anywhere), Tri::Maybe);
        assert_eq!(run(&sed, "sed --include f", Mode::Anywhere), Tri::No);
        let git = pat("git", &[&[&["status"]]], &["-c", "--output*"], &[]);
        assert_eq!(run(&git, "git status --output=x", Mode::Front), Tri::No);
        assert_eq!(run(&git, "git status --out=x", Mode::Front), Tri::No);
        assert_eq!(run(&git, "git status --in", Mode::Front), Tri::Yes);
        let del = pat("find", &[], &[], &["-delete"]);
        assert_eq!(run(&del, "find . -delete", Mode::Anywhere), Tri::Yes);
        let rm = pat("rm", &[], &["--help"], &[]);
        assert_eq!(run(&rm, "rm $x", Mode::Anywhere), Tri::Yes);
    }

    /// Red team: tar's old-style first word hid `-I` and `-F` from `tar with (-I | -F)`.
    #[test]
    fn tar_old_style_letters_are_flags() {
        let tar = pat("tar", &[], &[], &["-I", "-F", "--to-command*"]);
        assert_eq!(run(&tar, "tar cIf sh x.tar f", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&tar, "tar cFf script x.tar f", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&tar, "/bin/tar xIf sh x.tar", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&tar, "tar -cIf sh x.tar f", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&tar, "tar czf x.tgz dist", Mode::Anywhere), Tri::No);
        // Only the first word, and only for tar.
        assert_eq!(run(&tar, "tar czf I F", Mode::Anywhere), Tri::No);
        let other = pat("zip", &[], &[], &["-I"]);
        assert_eq!(run(&other, "zip cIf x", Mode::Anywhere), Tri::No);
        let allow = pat("tar", &[], &["-I", "-F"], &[]);
        assert_eq!(run(&allow, "tar cIf sh x.tar f", Mode::Front), Tri::No);
        assert_eq!(run(&allow, "tar czf x.tgz dist", Mode::Front), Tri::Yes);
    }

    /// Red team: one-letter abbreviations (`--f`, `--h`, `--d`, `--s=`, `--i`, `--o=`) slipped
    /// past `with` and `unless`, which widened only names longer than three characters.
    #[test]
    fn one_letter_long_abbreviations_are_widened() {
        let checkout = pat("git", &[&[&["checkout"]]], &[], &["-f", "--force"]);
        assert_eq!(run(&checkout, "git checkout --f other", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&checkout, "git checkout --fo other", Mode::Anywhere), Tri::Yes);
        let reset = pat("git", &[&[&["reset"]]], &[], &["--hard", "--merge", "--keep"]);
        assert_eq!(run(&reset, "git reset --h", Mode::Anywhere), Tri::Yes);
        assert_eq!(run(&reset, "git reset --soft", Mode::Anywhere), Tri::No);
        let branch = pat("git", &[&[&["branch"]]], &["-d", "--delete"], &[]);
        assert_eq!(run(&branch, "git branch --d x", Mode::Front), Tri::No);
        let date = pat("date", &[], &["-s", "-s*", "--set*"], &[]);
        assert_eq!(run(&date, "date --s=2020-01-01", Mode::Front), Tri::No);
        assert_eq!(run(&date, "date +%s", Mode::Front), Tri::Yes);
        let sed = pat("sed", &[], &["-i", "-i*", "--in-place*"], &[]);
        assert_eq!(run(&sed, "sed --i s/a/b/ f", Mode::Front), Tri::No);
        let sort = pat("sort", &[], &["-o", "-o*", "--output*"], &[]);
        assert_eq!(run(&sort, "sort --o=out f", Mode::Front), Tri::No);
        assert_eq!(run(&sort, "sort -- f", Mode::Front), Tri::Yes);
        // Not widened where widening would admit more: an allow rule's `with`, a deny's `unless`.
        let frozen = pat("pnpm", &[&[&["install"]]], &[], &["--frozen-lockfile"]);
        assert_eq!(run(&frozen, "pnpm install --f", Mode::Front), Tri::No);
        let push = pat("git", &[&[&["push"]]], &["--stash"], &[]);
        assert_eq!(run(&push, "git push --s", Mode::Anywhere), Tri::Yes);
    }
}
