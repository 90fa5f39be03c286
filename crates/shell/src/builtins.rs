//! Builtins that assign variables by name without `NAME=value`: `printf -v NAME`, `read NAME`,
//! `getopts OPTSTRING NAME`, `mapfile`/`readarray ARRAY`, `wait -p NAME`, and namerefs
//! (`declare -n ref=NAME`). Each name they assign is checked like a prefix assignment (see
//! `check_assignments`), so a risky one (`GIT_EXTERNAL_DIFF`, `PATH`) is opaque whether or not
//! it is exported. A name that cannot be known statically is opaque too. `mapfile -C CALLBACK`
//! runs the callback as shell code: it is analysed like `eval`.

use crate::command::string_or_dynamic;
use crate::model::{OpaqueReason, Word};
use crate::walk::{Ctx, RawCommand};

/// Options with their values, and the operands after them.
type Options<'a> = (Vec<(char, Word)>, &'a [Word]);

/// Short options of a builtin, parsed the way bash's `internal_getopt` does: clusters, a value
/// attached (`-vNAME`) or in the next word, `--` ends the options. Returns the options with
/// their values and the operands; `Err` when a word that cannot be known statically stands
/// where an option or its value could be.
fn options<'a>(args: &'a [Word], with_value: &str) -> Result<Options<'a>, ()> {
    let mut opts = vec![];
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.known {
            return Err(());
        }
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) else { break };
        i += 1;
        for (k, c) in cluster.char_indices() {
            if with_value.contains(c) {
                let rest = cluster.get(k + c.len_utf8()..).unwrap_or_default();
                if !rest.is_empty() {
                    opts.push((c, Word { text: rest.to_owned(), known: true }));
                } else if let Some(v) = args.get(i) {
                    if !v.known {
                        return Err(());
                    }
                    opts.push((c, v.clone()));
                    i += 1;
                }
                break;
            }
        }
    }
    Ok((opts, args.get(i..).unwrap_or_default()))
}

/// Checks the names `printf`, `read`, `getopts`, `mapfile`/`readarray` and `wait` assign.
pub(crate) fn assigned(ctx: &mut Ctx<'_>, program: &str, raw: &RawCommand, via: &[String]) {
    let args = raw.argv.get(1..).unwrap_or_default();
    let with_value = match program {
        "printf" => "v",
        "read" => "adinNptu",
        "getopts" => "",
        "mapfile" | "readarray" => "dnOsuCc",
        _ => "p",
    };
    let Ok((opts, operands)) = options(args, with_value) else {
        ctx.opaque(OpaqueReason::Unsupported, &words_text(&raw.argv), raw.span.clone());
        return;
    };
    let mut names: Vec<String> = vec![];
    let mut unknown = false;
    for (c, v) in &opts {
        if matches!((program, c), ("printf", 'v') | ("read", 'a') | ("wait", 'p')) {
            names.push(v.text.clone());
        }
        if *c == 'C' {
            string_or_dynamic(ctx, v.known, &v.text, "mapfile -C", raw, via);
        }
    }
    let positional: &[Word] = match program {
        "read" => operands,
        "getopts" => operands.get(1..2).unwrap_or_default(),
        "mapfile" | "readarray" => operands.get(..1).unwrap_or_default(),
        _ => &[],
    };
    for w in positional {
        if w.known {
            names.push(w.text.clone());
        } else {
            unknown = true;
        }
    }
    if unknown {
        ctx.opaque(OpaqueReason::Unsupported, &words_text(&raw.argv), raw.span.clone());
    }
    for name in names {
        // `read arr[0]`, `printf -v 'a[1]'`: the array's name.
        let name = name.split('[').next().unwrap_or_default().to_owned();
        ctx.assigned_by_builtin(&name, raw.span.clone());
    }
}

/// `declare -n ref=NAME` (also `typeset`, `local`): assigning `ref` assigns `NAME`, so NAME is
/// checked as assigned; a nameref without a known target is opaque.
pub(crate) fn namerefs(ctx: &mut Ctx<'_>, raw: &RawCommand) {
    let program = raw.argv.first().map(|w| crate::command::basename(&w.text)).unwrap_or_default();
    if !matches!(program.as_str(), "declare" | "typeset" | "local") {
        return;
    }
    let args = raw.argv.get(1..).unwrap_or_default();
    let mut nameref = false;
    let mut operands = vec![];
    for w in args {
        if !w.known {
            operands.push(w);
            continue;
        }
        match w.text.strip_prefix('-') {
            Some(cluster) if operands.is_empty() && !cluster.is_empty() => nameref |= cluster.contains('n'),
            _ => operands.push(w),
        }
    }
    if !nameref {
        return;
    }
    for w in operands {
        match w.text.split_once('=') {
            Some((_, target)) if w.known && crate::wrappers::is_name(target) => {
                ctx.assigned_by_builtin(target, raw.span.clone());
            }
            _ => ctx.opaque(OpaqueReason::Unsupported, &words_text(&raw.argv), raw.span.clone()),
        }
    }
}

fn words_text(words: &[Word]) -> String {
    words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use crate::model::OpaqueReason;

    fn unsupported(input: &str) -> bool {
        crate::analyse(input).opaque.iter().any(|o| o.reason == OpaqueReason::Unsupported)
    }

    /// Red team: a risky variable assigned by a builtin, a loop or `${NAME:=value}` was not seen.
    #[test]
    fn risky_names_assigned_without_name_equals_value_are_opaque() {
        for input in [
            "set -a; printf -v GIT_EXTERNAL_DIFF 'touch PWN'; git diff",
            "printf -vGIT_EXTERNAL_DIFF x; git diff",
            "set -a; for GIT_EXTERNAL_DIFF in 'touch PWN'; do git diff; done",
            "set -a; true ${GIT_EXTERNAL_DIFF:=touch PWN}; git diff",
            "echo ${PATH=/tmp}; ls",
            "echo \"${x:-${PAGER:=sh}}\"",
            "read GIT_PAGER <<< 'sh -c x'; git log",
            "read -r -p x PATH",
            "read -a LD_PRELOAD",
            "getopts ab PATH",
            "mapfile PATH < f",
            "readarray -t -n 2 GIT_PAGER < f",
            "wait -p PATH",
            "declare -n ref=GIT_EXTERNAL_DIFF; ref='touch x'; git diff",
            "local -n r",
            "read $name",
            "echo ${!ref:=x}",
        ] {
            assert!(unsupported(input), "{input}");
        }
        for input in [
            "printf -v x '%s' a",
            "for f in *.rs; do wc -l $f; done",
            "while read -r line; do echo $line; done < f",
            "echo ${x:=1} ${y:-PATH}",
            "getopts ab opt",
            "mapfile -t lines < f",
            "declare -n r=x",
            "printf '%s\\n' PATH",
        ] {
            assert!(!unsupported(input), "{input}");
        }
    }

    #[test]
    fn a_mapfile_callback_is_analysed() {
        let a = crate::analyse("mapfile -C 'rm -rf .' -c 1 x < f");
        assert!(a.commands.iter().any(|c| c.program == "rm"), "{:?}", a.commands);
    }
}
