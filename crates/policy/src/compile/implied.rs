//! Files a command reads without naming them: `ps e` (BSD syntax) prints the environment of
//! every process it lists, which is what `/proc/PID/environ` holds (an agent's API keys and
//! tokens, under a hook where nothing confines the command). The reads are judged like any
//! path the command named, so the policies' `/proc/*/environ` denial applies.

use warden_shell::SimpleCommand;

/// What `/proc/PID/environ` of any process is judged as.
const ENVIRONMENTS: &str = "/proc/self/environ";

/// The files `cmd` reads without naming them.
pub(crate) fn reads(cmd: &SimpleCommand) -> Vec<&'static str> {
    if cmd.program == "ps" && ps_shows_environment(cmd) { vec![ENVIRONMENTS] } else { Vec::new() }
}

/// Whether a `ps` command line has the BSD option `e` ("show the environment after the
/// command"): a word without a leading dash is a cluster of BSD options (`ps e`, `ps auxe`,
/// `ps axeww`), except the value of an option before it. `-e` (every process) is not it. A
/// word that cannot be known might be such a cluster.
fn ps_shows_environment(cmd: &SimpleCommand) -> bool {
    // Options whose value is the next word: UNIX (`-p 1`, `-o user`) and BSD (`p 1`, `o user`,
    // `k -pid`, `t pts/0`, `U root`, `q 1`, `O user`).
    const UNIX_VALUED: &str = "CGgOopqstUu";
    const BSD_VALUED: &str = "kOopqtU";
    let mut value_next = false;
    for w in cmd.argv.iter().skip(1) {
        if std::mem::take(&mut value_next) {
            continue;
        }
        if !w.known {
            return true;
        }
        let t = w.text.as_str();
        if t.starts_with("--") {
            // `--format user` and the like: a long option without `=` may take the next word.
            value_next = !t.contains('=') && LONG_VALUED.contains(&t);
            continue;
        }
        if let Some(cluster) = t.strip_prefix('-') {
            value_next = cluster.chars().last().is_some_and(|c| UNIX_VALUED.contains(c));
            continue;
        }
        // A BSD cluster: letters up to the first that takes a value (which takes the rest, or
        // the next word).
        for (i, c) in t.char_indices() {
            if c == 'e' {
                return true;
            }
            if BSD_VALUED.contains(c) {
                value_next = t.get(i + c.len_utf8()..).is_some_and(str::is_empty);
                break;
            }
            if !c.is_ascii_alphabetic() {
                break;
            }
        }
    }
    false
}

/// procps long options whose value may be the next word.
const LONG_VALUED: &[&str] = &[
    "--cols", "--columns", "--Group", "--group", "--format", "--lines", "--pid", "--ppid", "--quick-pid", "--rows", "--sid",
    "--sort", "--tty", "--User", "--user", "--width",
];

#[cfg(test)]
mod tests {
    use super::reads;

    fn env(line: &str) -> bool {
        let c = warden_shell::analyse(line).commands.into_iter().next().unwrap();
        !reads(&c).is_empty()
    }

    #[test]
    fn ps_with_the_bsd_e_option_reads_every_listed_process_s_environment() {
        for line in ["ps e", "ps auxe", "ps axeww", "ps aux e", "ps -u root e", "ps ewwo pid,cmd", "ps $OPTS"] {
            assert!(env(line), "{line}");
        }
        for line in [
            "ps", "ps aux", "ps -ef", "ps -e", "ps -eo pid,user,etime", "ps -o user,etime -p 1", "ps o user,etime",
            "ps axo pid,etime", "ps -C sleep", "ps -u dev", "ps --format user,etime", "ps --sort=-etime", "ps k -etime",
            "ps -p 1 -o comm=", "ps t pts/0", "ps U web",
        ] {
            assert!(!env(line), "{line}");
        }
    }
}
