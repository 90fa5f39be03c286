//! Errors in the words of the GNU tools, the denial marker, paths and times.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// WASI's `ENOTCAPABLE`: no preopen covers the path, or it leads out of one.
const ENOTCAPABLE: i32 = 76;

/// Whether the sandbox (not the file system) refused the access.
pub fn is_denied(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem)
        || e.raw_os_error() == Some(ENOTCAPABLE)
}

/// The error as GNU tools word it (`No such file or directory`), or the sandbox's refusal.
pub fn describe(e: &io::Error) -> String {
    if e.raw_os_error() == Some(ENOTCAPABLE) {
        return String::from("Not capable: outside the directories granted to the sandbox");
    }
    match e.kind() {
        io::ErrorKind::NotFound => String::from("No such file or directory"),
        io::ErrorKind::PermissionDenied => String::from("Permission denied"),
        io::ErrorKind::ReadOnlyFilesystem => String::from("Read-only file system"),
        io::ErrorKind::IsADirectory => String::from("Is a directory"),
        io::ErrorKind::NotADirectory => String::from("Not a directory"),
        io::ErrorKind::AlreadyExists => String::from("File exists"),
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s.get(..i).unwrap_or(&s).to_string(),
                None => s,
            }
        }
    }
}

/// Prints the denial marker when `e` is a refusal by the sandbox, and the missing marker when
/// the path does not exist: wasi-libc answers `ENOENT` for a path no preopen covers, and only
/// the host knows the preopens, so it decides whether that was a refusal. The host removes
/// both markers from the stderr it reports.
pub fn mark_denied(e: &io::Error, op: &str, path: &Path) {
    if is_denied(e) {
        eprintln!("toolbox: denied: {op}: {}", absolute(path).display());
    } else if e.kind() == io::ErrorKind::NotFound {
        eprintln!("toolbox: missing: {op}: {}", absolute(path).display());
    }
}

/// Prints `TOOL: PATH: ERROR` and the denial marker when it applies.
pub fn report(ctx: &crate::Ctx, path: &str, e: &io::Error, op: &str) {
    ctx.err(format_args!("{path}: {}", describe(e)));
    mark_denied(e, op, Path::new(path));
}

/// `path` made absolute against the working directory and normalised lexically.
pub fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")).join(path)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// `a` joined with `b` the way the GNU tools print it (`./x`, `dir/x`, `dir/x` for `dir/`).
pub fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

/// `YYYY-MM-DD HH:MM:SS` in UTC.
pub fn time(t: io::Result<SystemTime>) -> String {
    let Ok(t) = t else { return String::from("-") };
    let secs = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    };
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm).
fn civil(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Directory entries' names, sorted bytewise; `all` keeps dotfiles.
pub fn entries(dir: &str, all: bool) -> io::Result<Vec<String>> {
    let path = if dir.is_empty() { "." } else { dir };
    let mut names: Vec<String> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| all || !n.starts_with('.'))
        .collect();
    names.sort();
    Ok(names)
}

/// Reads a whole file, or stdin for `-`.
pub fn read_input(path: &str) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf)?;
        Ok(buf)
    } else {
        regular_or_missing(path)?;
        std::fs::read(path)
    }
}

/// Refuses a path that is there but is neither a file nor a folder (a FIFO, a socket, a
/// device): opening one blocks inside the host, where neither the wall timeout nor a cancel
/// can stop the tool, until the caller gives up on the whole helper.
pub fn regular_or_missing(path: &str) -> io::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !(m.is_file() || m.is_dir()) => {
            Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file (a FIFO, socket or device is not opened)"))
        }
        _ => Ok(()),
    }
}

/// Splits into lines, keeping whether the last one ended with a newline.
pub fn lines(data: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.ends_with(b"\n") || data.is_empty() {
        v.pop();
    }
    v
}
