//! Values attached to a short option (`-o~/.bashrc`, `-f.env`, `-nf/etc/shadow`): the same
//! file as the separate form (`-o ~/.bashrc`), so it is checked as an argument path too.
//!
//! For the programs listed, the first letter of a cluster that takes a file (or folder) value
//! ends the cluster and the rest of the word is that value, as getopt reads it. For any other
//! program (or a letter not listed), a cluster of letters and digits followed by a path
//! (`/`, `~`, `.`) is read as an option and its value: `-I/usr/include`, `-i~/.ssh/id_rsa`.

/// The short options of `program` whose value names a file or a folder, and those whose value
/// is something else (a pattern, a number, a script): either ends the cluster.
fn letters(program: &str) -> (&'static str, &'static str) {
    match program {
        "grep" | "egrep" | "fgrep" | "zgrep" => ("f", "eABCmdDX"),
        "rg" => ("f", "egtTABCmjMErG"),
        "sort" => ("oT", "kStN"),
        "tar" | "bsdtar" | "gtar" => ("fCTXg", "bHIKLNV"),
        "ssh" | "scp" | "sftp" => ("iFES", "bcDeIJlLmoOpPQRwWB"),
        "curl" => ("oTKEbcD", "dFHAeuUxXmrwyYzQ"),
        "wget" => ("OoaiP", "eltTwQUY"),
        "make" | "gmake" => ("fCI", "jlWo"),
        "git" => ("C", "c"),
        "patch" => ("ior", "pFBDVYzd"),
        "sed" | "gsed" => ("f", "el"),
        "awk" | "gawk" | "mawk" => ("f", "FvE"),
        "jq" => ("f", "L"),
        "gpg" | "gpg2" => ("o", "urf"),
        "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" | "ld" => ("oILT", "xDUlW"),
        _ => ("", ""),
    }
}

/// The value attached to a short option in `word`, when there is one that may name a path.
pub(crate) fn value<'a>(program: &str, word: &'a str) -> Option<&'a str> {
    let cluster = word.strip_prefix('-').filter(|c| !c.starts_with('-'))?;
    let (files, others) = letters(program);
    for (k, c) in cluster.char_indices() {
        let rest = cluster.get(k + c.len_utf8()..).unwrap_or_default();
        if files.contains(c) {
            return (!rest.is_empty()).then_some(rest);
        }
        if others.contains(c) || !c.is_ascii_alphanumeric() {
            return None;
        }
        if rest.starts_with(['/', '~', '.']) {
            return Some(rest);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::value;

    #[test]
    fn a_value_attached_to_a_short_option() {
        assert_eq!(value("grep", "-f~/.ssh/id_rsa"), Some("~/.ssh/id_rsa"));
        assert_eq!(value("grep", "-nfpatterns.txt"), Some("patterns.txt"));
        assert_eq!(value("sort", "-o~/.bashrc"), Some("~/.bashrc"));
        assert_eq!(value("tar", "-cf/tmp/x.tar"), Some("/tmp/x.tar"));
        assert_eq!(value("tar", "-xfid_rsa.tgz"), Some("id_rsa.tgz"));
        assert_eq!(value("gcc", "-o/home/u/.bashrc"), Some("/home/u/.bashrc"));
        assert_eq!(value("cc", "-I./include"), Some("./include"));
        assert_eq!(value("x", "-ab.env"), Some(".env"));
        // No value, or one that is not a path.
        assert_eq!(value("grep", "-f"), None);
        assert_eq!(value("grep", "-rn"), None);
        assert_eq!(value("ls", "-la"), None);
        assert_eq!(value("head", "-n5"), None);
        assert_eq!(value("x", "--file"), None);
        assert_eq!(value("x", "-"), None);
        assert_eq!(value("cut", "-d,"), None);
        // A pattern or script attached to its option is no path.
        assert_eq!(value("grep", "-e.env"), None);
        assert_eq!(value("grep", "-ie/etc/shadow"), None);
        assert_eq!(value("sed", "-e/etc/d"), None);
        assert_eq!(value("gpg", "-o~/.bashrc"), Some("~/.bashrc"));
    }
}
