//! Wrapper commands (`sudo`, `env`, `timeout`, `xargs`, ...): their option syntax, so the
//! wrapped command can be found. An option a wrapper does not know is reported, never guessed.

use crate::model::{Access, Redirect, Word};

/// The option syntax of one wrapper.
pub(crate) struct Spec {
    /// Short options that take a value (`-u root`, `-uroot`).
    pub short_val: &'static str,
    /// Short options without a value (may be clustered: `-Ei`).
    pub short_flag: &'static str,
    /// Long options that take a value (`--user root`, `--user=root`).
    pub long_val: &'static [&'static str],
    /// Long options without a value.
    pub long_flag: &'static [&'static str],
    /// Short options whose value is optional and only ever attached (`xargs -l5`, `-iR`):
    /// `-l` alone takes no value, and the next word is not one.
    pub short_opt: &'static str,
    /// Long options whose value is optional and only ever attached (`--eof=X`).
    pub long_opt: &'static [&'static str],
    /// `NAME=value` words after the options are assignments (`env`, `sudo`).
    pub assignments: bool,
    /// Operands before the command (`timeout DURATION`, `chroot DIR`, `flock FILE`).
    pub operands: usize,
    /// `-N` numbers are options (`nice -5`).
    pub numeric: bool,
    /// A privilege wrapper: reported as a command of its own too.
    pub privileged: bool,
    /// Options whose value names a file the wrapper itself opens (`time -o FILE`,
    /// `xargs -a FILE`): judged like a redirect of the command, never skipped.
    pub files: &'static [(&'static str, Access)],
    /// Options whose value names a program or library the wrapper runs or loads
    /// (`fakeroot --faked PROG`, `faketime --date-prog PROG`): the command is opaque.
    pub runs: &'static [&'static str],
}

const fn spec(short_val: &'static str, short_flag: &'static str) -> Spec {
    Spec {
        short_val,
        short_flag,
        long_val: &[],
        long_flag: &[],
        short_opt: "",
        long_opt: &[],
        assignments: false,
        operands: 0,
        numeric: false,
        privileged: false,
        files: &[],
        runs: &[],
    }
}

/// The spec of a wrapper, by program name.
pub(crate) fn spec_of(program: &str) -> Option<Spec> {
    let s = match program {
        "sudo" => Spec {
            long_val: &[
                "user",
                "group",
                "host",
                "prompt",
                "close-from",
                "chdir",
                "role",
                "type",
                "other-user",
                "command-timeout",
                "chroot",
            ],
            long_flag: &[
                "askpass",
                "background",
                "bell",
                "preserve-env",
                "set-home",
                "login",
                "non-interactive",
                "preserve-groups",
                "shell",
                "stdin",
                "reset-timestamp",
                "remove-timestamp",
                "validate",
                "no-update",
            ],
            assignments: true,
            privileged: true,
            ..spec("ughpCDrtUTR", "AbBEHiKknPSsVvN")
        },
        "doas" => Spec {
            privileged: true,
            ..spec("uC", "nsL")
        },
        "pkexec" => Spec {
            long_val: &["user"],
            long_flag: &["disable-internal-agent", "keep-cwd"],
            privileged: true,
            ..spec("", "")
        },
        "chroot" => Spec {
            long_val: &["userspec", "groups"],
            long_flag: &["skip-chdir"],
            operands: 1,
            privileged: true,
            ..spec("", "")
        },
        "runuser" | "su" => Spec {
            long_val: &[
                "user",
                "group",
                "supp-group",
                "command",
                "session-command",
                "shell",
                "whitelist-environment",
            ],
            long_flag: &["login", "preserve-environment", "fast", "pty"],
            privileged: true,
            ..spec("ugGcCsw", "lmpfP-")
        },
        "env" => Spec {
            long_val: &["unset", "chdir", "split-string"],
            long_flag: &[
                "ignore-environment",
                "null",
                "debug",
                "block-signal",
                "default-signal",
                "ignore-signal",
                "list-signal-handling",
            ],
            assignments: true,
            ..spec("uCS", "i0v-")
        },
        "nice" => Spec {
            long_val: &["adjustment"],
            numeric: true,
            ..spec("n", "")
        },
        "nohup" | "builtin" => spec("", ""),
        "unbuffer" => spec("", "p"),
        "setsid" => Spec {
            long_flag: &["ctty", "fork", "wait"],
            ..spec("", "cfw")
        },
        "timeout" => Spec {
            long_val: &["signal", "kill-after"],
            long_flag: &["foreground", "preserve-status", "verbose"],
            operands: 1,
            ..spec("sk", "v")
        },
        "time" => Spec {
            long_val: &["format", "output"],
            long_flag: &["portability", "append", "verbose", "quiet"],
            files: &[("o", Access::Write), ("output", Access::Write)],
            ..spec("fo", "pav")
        },
        "stdbuf" => Spec {
            long_val: &["input", "output", "error"],
            ..spec("ioe", "")
        },
        "command" => spec("", "pvV"),
        "exec" => spec("a", "cl"),
        // GNU xargs: `-I R`, `-L N`, `-E S` take a value; their old forms `-i[R]`, `-l[N]`,
        // `-e[S]` (`--replace[=R]`, `--max-lines[=N]`, `--eof[=S]`) take one only attached.
        "xargs" => Spec {
            long_val: &[
                "arg-file",
                "delimiter",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ],
            long_opt: &["max-lines", "replace", "eof"],
            short_opt: "ile",
            long_flag: &[
                "null",
                "interactive",
                "no-run-if-empty",
                "verbose",
                "exit",
                "open-tty",
                "show-limits",
            ],
            files: &[("a", Access::Read), ("arg-file", Access::Read)],
            ..spec("ILnPsdEa", "0prtxo")
        },
        "flock" => Spec {
            long_val: &["timeout", "conflict-exit-code", "command"],
            long_flag: &[
                "shared",
                "exclusive",
                "nonblock",
                "unlock",
                "close",
                "verbose",
                "no-fork",
            ],
            operands: 1,
            ..spec("wEc", "sxenuoF")
        },
        "ionice" => Spec {
            long_val: &["class", "classdata", "pid", "pgid", "uid"],
            long_flag: &["ignore"],
            ..spec("cnpPu", "t")
        },
        "taskset" => Spec {
            long_flag: &["all-tasks", "cpu-list", "pid"],
            operands: 1,
            ..spec("", "acp")
        },
        "strace" => Spec {
            files: &[("o", Access::Write)],
            ..spec("abeEIoOpPsSuX", "cCdDfFhiknqrtTvVwxyzZ")
        },
        "ltrace" => Spec {
            files: &[("o", Access::Write), ("F", Access::Read)],
            runs: &["l"],
            ..spec("aADeFlnopsuwx", "bcCfhiLrStTV")
        },
        // Tools that run a command in a changed setting (moreutils, test and debug harnesses,
        // proxies, NUMA and cgroup placement): the command runs as written.
        "chronic" => spec("", "evE"),
        "ifne" => spec("", "n"),
        "eatmydata" | "catchsegv" => spec("", ""),
        "nocache" => spec("n", ""),
        "faketime" => Spec {
            long_val: &["date-prog"],
            long_flag: &["exclude-monotonic", "disable-shm"],
            runs: &["date-prog"],
            operands: 1,
            ..spec("p", "mf")
        },
        "fakeroot" => Spec {
            long_val: &["lib", "faked", "fd-base"],
            long_flag: &["unknown-is-real"],
            files: &[("s", Access::Write), ("i", Access::Read)],
            runs: &["l", "lib", "faked"],
            ..spec("lsib", "uhv")
        },
        "xvfb-run" => Spec {
            long_val: &["server-num", "server-args", "auth-file", "error-file", "wait", "xauth-protocol"],
            long_flag: &["auto-servernum", "auto-display", "listen-tcp"],
            files: &[
                ("e", Access::Write),
                ("error-file", Access::Write),
                ("f", Access::Write),
                ("auth-file", Access::Write),
            ],
            ..spec("nsfewp", "adl")
        },
        "proxychains" | "proxychains4" => Spec {
            files: &[("f", Access::Read)],
            ..spec("f", "q")
        },
        "torsocks" => Spec {
            long_val: &["user", "pass", "address", "port"],
            long_flag: &["isolate", "debug", "quiet"],
            ..spec("upaP", "idq")
        },
        "dbus-run-session" => Spec {
            long_val: &["config-file", "dbus-daemon"],
            files: &[("config-file", Access::Read)],
            runs: &["dbus-daemon"],
            ..spec("", "")
        },
        "cgexec" => Spec {
            long_flag: &["sticky"],
            ..spec("g", "")
        },
        "numactl" => Spec {
            long_val: &["interleave", "cpunodebind", "physcpubind", "membind", "preferred", "preferred-many", "weighted-interleave"],
            long_flag: &["all", "localalloc", "balancing"],
            ..spec("iNCmpPw", "alb")
        },
        "valgrind" => Spec {
            long_val: &[
                "tool",
                "leak-check",
                "show-leak-kinds",
                "errors-for-leak-kinds",
                "show-reachable",
                "track-origins",
                "track-fds",
                "log-file",
                "log-fd",
                "xml",
                "xml-file",
                "error-exitcode",
                "suppressions",
                "gen-suppressions",
                "num-callers",
                "trace-children",
                "trace-children-skip",
                "child-silent-after-fork",
                "vgdb",
                "vgdb-error",
                "max-stackframe",
                "main-stacksize",
                "read-var-info",
                "time-stamp",
                "smc-check",
                "undef-value-errors",
                "keep-debuginfo",
                "fair-sched",
                "demangle",
                "callgrind-out-file",
                "massif-out-file",
                "cache-sim",
                "branch-sim",
            ],
            long_flag: &["quiet", "verbose"],
            files: &[
                ("log-file", Access::Write),
                ("xml-file", Access::Write),
                ("callgrind-out-file", Access::Write),
                ("massif-out-file", Access::Write),
                ("suppressions", Access::Read),
            ],
            ..spec("", "qv")
        },
        _ => return None,
    };
    Some(s)
}

/// A wrapper's command line, parsed.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// Options seen, with their values (`("u", Some(root))`, `("preserve-env", None)`).
    pub opts: Vec<(String, Option<Word>)>,
    /// `NAME=value` words.
    pub assignments: Vec<(String, Word)>,
    /// Operands before the command.
    pub operands: Vec<Word>,
    /// Index in argv where the wrapped command starts (may be `argv.len()`: no command).
    pub start: usize,
}

/// Parses `argv[1..]` of a wrapper. `Err` carries the option it does not know.
pub(crate) fn parse(spec: &Spec, argv: &[Word]) -> Result<Parsed, String> {
    let mut p = Parsed::default();
    let mut i = 1;
    let mut options_done = false;
    while let Some(w) = argv.get(i) {
        let t = w.text.as_str();
        if !options_done && t == "--" && w.known {
            options_done = true;
            i += 1;
            continue;
        }
        if !options_done && t == "-" && w.known && spec.short_flag.contains('-') {
            p.opts.push(("-".to_owned(), None));
            i += 1;
            continue;
        }
        if !options_done && t.starts_with('-') && t.len() > 1 {
            if !w.known {
                return Err(t.to_owned());
            }
            i = option(spec, argv, i, &mut p)?;
            continue;
        }
        if let Some((name, value)) = t.split_once('=')
            && spec.assignments
            && w.known
            && is_name(name)
        {
            let value = Word {
                text: value.to_owned(),
                known: true,
            };
            p.assignments.push((name.to_owned(), value));
            i += 1;
            continue;
        }
        if p.operands.len() < spec.operands {
            p.operands.push(w.clone());
            i += 1;
            continue;
        }
        break;
    }
    p.start = i;
    Ok(p)
}

fn option(spec: &Spec, argv: &[Word], i: usize, p: &mut Parsed) -> Result<usize, String> {
    let t = argv.get(i).map(|w| w.text.as_str()).unwrap_or("");
    if let Some(long) = t.strip_prefix("--") {
        let (name, inline) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (long, None),
        };
        if spec.long_val.contains(&name) {
            if let Some(v) = inline {
                p.opts.push((
                    name.to_owned(),
                    Some(Word {
                        text: v.to_owned(),
                        known: true,
                    }),
                ));
                return Ok(i + 1);
            }
            let v = argv.get(i + 1).cloned();
            let missing = v.is_none();
            p.opts.push((name.to_owned(), v));
            return Ok(if missing { i + 1 } else { i + 2 });
        }
        if spec.long_flag.contains(&name) {
            p.opts.push((name.to_owned(), None));
            return Ok(i + 1);
        }
        if spec.long_opt.contains(&name) {
            let v = inline.map(|v| Word { text: v.to_owned(), known: true });
            p.opts.push((name.to_owned(), v));
            return Ok(i + 1);
        }
        return Err(t.to_owned());
    }
    let body = t.get(1..).unwrap_or("");
    if spec.numeric && body.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        p.opts.push((
            "n".to_owned(),
            Some(Word {
                text: body.to_owned(),
                known: true,
            }),
        ));
        return Ok(i + 1);
    }
    for (k, c) in body.char_indices() {
        if spec.short_val.contains(c) {
            let rest = body.get(k + c.len_utf8()..).unwrap_or("");
            if !rest.is_empty() {
                p.opts.push((
                    c.to_string(),
                    Some(Word {
                        text: rest.to_owned(),
                        known: true,
                    }),
                ));
                return Ok(i + 1);
            }
            let v = argv.get(i + 1).cloned();
            let missing = v.is_none();
            p.opts.push((c.to_string(), v));
            return Ok(if missing { i + 1 } else { i + 2 });
        }
        if spec.short_opt.contains(c) {
            let rest = body.get(k + c.len_utf8()..).unwrap_or("");
            let v = (!rest.is_empty()).then(|| Word { text: rest.to_owned(), known: true });
            p.opts.push((c.to_string(), v));
            return Ok(i + 1);
        }
        if spec.short_flag.contains(c) {
            p.opts.push((c.to_string(), None));
            continue;
        }
        return Err(t.to_owned());
    }
    Ok(i + 1)
}

/// A shell variable name.
pub(crate) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// True when an option named `name` (short or long) was given.
pub(crate) fn has(p: &Parsed, names: &[&str]) -> bool {
    p.opts.iter().any(|(n, _)| names.contains(&n.as_str()))
}

/// The value of the first option named in `names`.
pub(crate) fn value<'a>(p: &'a Parsed, names: &[&str]) -> Option<&'a Word> {
    p.opts
        .iter()
        .find(|(n, _)| names.contains(&n.as_str()))
        .and_then(|(_, v)| v.as_ref())
}

/// The files a wrapper itself opens, as redirects of the command it runs: each value of an
/// option in [`Spec::files`] (`time -a -o F` appends), and `flock FILE` (created when it does
/// not exist). Also the values of options that name a program to run ([`Spec::runs`]), which
/// make the command opaque, and an output piped to a command (`strace -o '|cmd'`).
pub(crate) fn files(program: &str, spec: &Spec, p: &Parsed) -> (Vec<Redirect>, Vec<String>) {
    let mut files = Vec::new();
    let mut opaque = Vec::new();
    let append = program == "time" && has(p, &["a", "append"]);
    for (name, value) in &p.opts {
        if spec.runs.contains(&name.as_str()) {
            opaque.push(format!("{program} {}", option_text(name)));
        }
        let Some(&(_, access)) = spec.files.iter().find(|(n, _)| *n == name.as_str()) else {
            continue;
        };
        let Some(target) = value.clone() else { continue };
        if matches!(program, "strace" | "ltrace") && target.text.starts_with(['|', '!']) {
            // The trace is piped to a shell command.
            opaque.push(format!("{program} -o {}", target.text));
            continue;
        }
        let access = if append && access == Access::Write { Access::Append } else { access };
        files.push(Redirect { access, target });
    }
    if program == "flock" {
        // `flock FILE cmd` opens FILE with O_CREAT; `flock N` (no command) is a descriptor.
        for w in &p.operands {
            if !(w.known && w.text.bytes().all(|b| b.is_ascii_digit())) {
                files.push(Redirect { access: Access::Write, target: w.clone() });
            }
        }
    }
    (files, opaque)
}

/// `-x` or `--name`, as the option was spelled.
fn option_text(name: &str) -> String {
    if name.chars().count() == 1 { format!("-{name}") } else { format!("--{name}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::test_words as words;

    #[test]
    fn sudo_options_with_values_are_skipped() {
        let sudo = spec_of("sudo").unwrap();
        let p = parse(&sudo, &words("sudo -u root -E FOO=1 rm -rf /")).unwrap();
        assert_eq!(p.start, 5);
        assert_eq!(p.assignments.len(), 1);
        let p = parse(&sudo, &words("sudo -uroot rm")).unwrap();
        assert_eq!(p.start, 2);
        assert!(parse(&sudo, &words("sudo --frobnicate rm")).is_err());
    }

    #[test]
    fn harnesses_and_proxies_wrap_the_command_they_are_given() {
        let at = |program: &str, line: &str| parse(&spec_of(program).unwrap(), &words(line)).map(|p| p.start);
        assert_eq!(at("chronic", "chronic -e rm -rf ."), Ok(2));
        assert_eq!(at("valgrind", "valgrind --leak-check=full --trace-children=yes -q ./a.out x"), Ok(4));
        assert_eq!(at("faketime", "faketime -f @2020-01-01 rm x"), Ok(3));
        assert_eq!(at("xvfb-run", "xvfb-run -a --server-args=-ac npm test"), Ok(3));
        assert_eq!(at("xvfb-run", "xvfb-run -s -ac npm test"), Ok(3));
        assert_eq!(at("numactl", "numactl --interleave=all -C 0-3 make"), Ok(4));
        assert_eq!(at("proxychains4", "proxychains4 -q -f p.conf curl x"), Ok(4));
        // An option it does not know is reported, not guessed.
        assert!(at("valgrind", "valgrind --frobnicate=1 ./a.out").is_err());
    }

    /// Red team: `-i`, `-l`, `-e`, `--eof`, `--max-lines`, `--replace` took the next word as
    /// their value, so `xargs -l rm -r cat` was read as `cat`.
    #[test]
    fn xargs_optional_values_are_only_attached() {
        let at = |line: &str| parse(&spec_of("xargs").unwrap(), &words(line)).map(|p| p.start);
        for (line, start) in [
            ("xargs -l rm -r cat", 2),
            ("xargs -l5 rm", 2),
            ("xargs -e rm", 2),
            ("xargs -eEOF rm", 2),
            ("xargs --eof rm", 2),
            ("xargs --eof=X rm", 2),
            ("xargs --max-lines rm", 2),
            ("xargs --max-lines=3 rm", 2),
            ("xargs -i rm ls {}", 2),
            ("xargs -iR rm R", 2),
            ("xargs --replace rm {}", 2),
            ("xargs -0i rm {}", 2),
            ("xargs -0l rm", 2),
            // The value-taking forms are as before.
            ("xargs -I {} rm {}", 3),
            ("xargs -L 1 rm", 3),
            ("xargs -n 1 rm", 3),
            ("xargs -d , rm", 3),
            ("xargs -a f rm", 3),
            ("xargs -E x rm", 3),
            ("xargs -s 100 rm", 3),
            ("xargs -P 4 rm", 3),
            ("xargs -0 -n1 rm", 3),
        ] {
            assert_eq!(at(line), Ok(start), "{line}");
        }
        let p = parse(&spec_of("xargs").unwrap(), &words("xargs -iR rm")).unwrap();
        assert_eq!(value(&p, &["i"]).map(|w| w.text.as_str()), Some("R"));
        let p = parse(&spec_of("xargs").unwrap(), &words("xargs -i rm")).unwrap();
        assert!(has(&p, &["i"]) && value(&p, &["i"]).is_none());
    }

    #[test]
    fn timeout_and_nice_operands() {
        let p = parse(
            &spec_of("timeout").unwrap(),
            &words("timeout -k 5 -s KILL 10 rm x"),
        )
        .unwrap();
        assert_eq!(p.start, 6);
        let p = parse(&spec_of("nice").unwrap(), &words("nice -5 rm")).unwrap();
        assert_eq!(p.start, 2);
        let p = parse(&spec_of("nice").unwrap(), &words("nice -n 5 rm")).unwrap();
        assert_eq!(p.start, 3);
    }
}
