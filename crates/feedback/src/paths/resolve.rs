//! Turns a printed path into a workspace-relative path of an existing regular file, or
//! nothing. This is the only module that touches the filesystem.

use std::collections::HashMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// The most distinct paths looked up on disk per call: bounds the system calls a hostile
/// output can cause.
const MAX_LOOKUPS: usize = 1024;

/// Resolves printed paths against one workspace and working directory, caching answers.
pub(crate) struct Resolver<'a> {
    workspace: PathBuf,
    cwd: &'a Path,
    /// The folders `make` said it entered (`make -C dir`, recursive makes), innermost last:
    /// relative paths printed meanwhile are relative to the innermost.
    entered: Vec<PathBuf>,
    /// Answers per (folder entered, printed path).
    seen: HashMap<(Option<PathBuf>, String), Option<String>>,
}

impl<'a> Resolver<'a> {
    /// `None` when the workspace itself cannot be canonicalized (then nothing is inside it).
    pub(crate) fn new(workspace: &Path, cwd: &'a Path) -> Option<Self> {
        let workspace = fs::canonicalize(workspace).ok()?;
        Some(Resolver { workspace, cwd, entered: Vec::new(), seen: HashMap::new() })
    }

    /// Follows `make`'s "Entering directory" and "Leaving directory" lines.
    pub(crate) fn follow_make(&mut self, line: &str) {
        let Some(at) = line.find(": Entering directory ").or_else(|| line.find(": Leaving directory ")) else { return };
        if !line.get(..at).is_some_and(|who| who.starts_with("make") || who.ends_with("make")) {
            return;
        }
        let rest = line.get(at + 2..).unwrap_or_default();
        if rest.starts_with("Leaving") {
            self.entered.pop();
            return;
        }
        // 'dir' (newer makes) or `dir' (older ones).
        let quoted = rest.trim_start_matches("Entering directory ").trim_end();
        let dir = quoted.trim_start_matches(['\'', '`']).strip_suffix('\'').unwrap_or_default();
        if Path::new(dir).is_absolute() && self.entered.len() < 64 {
            self.entered.push(PathBuf::from(dir));
        }
    }

    /// The workspace-relative path (`/`-separated) of the file `printed` names, when it is a
    /// regular file whose canonical path lies inside the workspace.
    pub(crate) fn resolve(&mut self, printed: &str) -> Option<String> {
        let key = (self.entered.last().cloned(), printed.to_owned());
        if let Some(known) = self.seen.get(&key) {
            return known.clone();
        }
        if self.seen.len() >= MAX_LOOKUPS {
            return None;
        }
        let found = self.lookup(printed);
        self.seen.insert(key, found.clone());
        found
    }

    fn lookup(&self, printed: &str) -> Option<String> {
        let decoded;
        let raw = match printed.strip_prefix("file://") {
            Some(url) => {
                decoded = percent_decode(url)?;
                decoded.as_str()
            }
            None => printed,
        };
        if raw.is_empty() || raw.contains('\0') {
            return None;
        }
        let path = Path::new(raw);
        let base = self.entered.last().map_or(self.cwd, PathBuf::as_path);
        let joined = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
        let canonical = fs::canonicalize(joined).ok()?;
        if !fs::metadata(&canonical).ok()?.is_file() {
            return None;
        }
        let relative = canonical.strip_prefix(&self.workspace).ok()?;
        let mut parts = Vec::new();
        for part in relative.components() {
            match part {
                Component::Normal(name) => parts.push(name.to_str()?),
                _ => return None,
            }
        }
        (!parts.is_empty()).then(|| parts.join("/"))
    }
}

/// Decodes `%XX` escapes of a `file://` URL path; `None` when malformed or not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = s.get(i + 1..i + 3).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn decodes_file_urls() {
        assert_eq!(percent_decode("/ws/a%20b.mjs").as_deref(), Some("/ws/a b.mjs"));
        assert_eq!(percent_decode("/ws/%zz"), None);
        assert_eq!(percent_decode("/ws/%2"), None);
        assert_eq!(percent_decode("/ws/%ff"), None);
        assert_eq!(percent_decode("/ws/%+1"), None);
    }
}
