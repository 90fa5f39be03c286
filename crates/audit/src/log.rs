//! Appending: one write per record, fsync before returning, an exclusive `flock` so several
//! warden processes can share a log, a torn tail cut off before the next record, and the head
//! checkpoint (`<log>.head`) written after the log is durable.

use crate::line::{self, MAX_LINE, ZERO_HASH};
use crate::record::{Entry, Receipt, Record};
use crate::{AuditError, time};
use std::borrow::Cow;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// An open audit log, ready to append.
///
/// Security invariants: a record is on disk (written with one `write`, then `fdatasync`)
/// before [`Log::append`] returns; the chain continues from the last whole record in the
/// file, re-read under the lock (another process may have appended); a torn last line left
/// by a crash is cut off by the next append (never by opening alone), whose `note` says so; the head checkpoint is
/// written only after the log's sync, so it is never ahead of the durable log; a log that ends
/// before its checkpoint is refused rather than continued (which would hide the cut).
#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    head_path: PathBuf,
    file: File,
    /// The last whole record as this process last saw it, and where the file ended then.
    tail: Option<Tail>,
    /// Bytes of a torn tail cut off but not yet noted in a record.
    torn_dropped: u64,
    /// Records before the next one that no head checkpoint covered, to be noted in it.
    uncovered: Option<String>,
    /// The log file's owner: only a head file of the same owner is written in place.
    owner: u32,
}

#[derive(Debug, Clone)]
struct Tail {
    end: u64,
    seq: u64,
    hash: String,
}

impl Log {
    /// Opens a log for appending, creating it (mode 0600, missing parent folders 0700).
    ///
    /// # Errors
    ///
    /// The file cannot be created, opened or locked, is not a regular file, its last whole
    /// record is damaged, or it ends before its head checkpoint (appending would hide either:
    /// run `warden audit verify`).
    pub fn open(path: &Path) -> Result<Log, AuditError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|e| AuditError::io("create the folder of", parent, e))?;
        }
        // Never through a symlink: a command that could plant one where the log will be would
        // have warden append (as root, perhaps) to a file of its choosing.
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| AuditError::io("open", path, e))?;
        let meta = file.metadata().map_err(|e| AuditError::io("stat", path, e))?;
        if !meta.is_file() {
            return Err(AuditError::Damaged { message: format!("`{}` is not a regular file", path.display()) });
        }
        let owner = meta.uid();
        let mut log = Log { path: path.to_owned(), head_path: head_path(path), file, tail: None, torn_dropped: 0, uncovered: None, owner };
        // Checked now; a torn tail is cut by the first append, which notes it (a process that
        // opens the log and ends without appending leaves it for the next writer to note).
        log.locked(|log| log.read_tail(false).map(|_| ()))?;
        Ok(log)
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record and returns its place in the chain, after it is on disk.
    ///
    /// # Errors
    ///
    /// The record is longer than 1 MiB, the file cannot be locked, read, written or synced,
    /// its last record is damaged, or the head checkpoint cannot be written. On any error the
    /// caller must treat the request as not recorded (and not run it).
    pub fn append(&mut self, entry: &Entry) -> Result<Receipt, AuditError> {
        self.locked(|log| log.append_locked(entry))
    }

    /// Runs `f` holding the exclusive lock on the log file.
    fn locked<T>(&mut self, f: impl FnOnce(&mut Log) -> Result<T, AuditError>) -> Result<T, AuditError> {
        self.file.lock().map_err(|e| AuditError::io("lock", &self.path, e))?;
        let result = f(self);
        let unlocked = self.file.unlock().map_err(|e| AuditError::io("unlock", &self.path, e));
        let value = result?;
        unlocked?;
        Ok(value)
    }

    fn append_locked(&mut self, entry: &Entry) -> Result<Receipt, AuditError> {
        let tail = self.sync_tail()?;
        let mut notes: Vec<String> = Vec::new();
        if self.torn_dropped > 0 {
            notes.push(format!("a torn tail of {} bytes was dropped before this record", self.torn_dropped));
        }
        notes.extend(self.uncovered.clone());
        let entry = if notes.is_empty() {
            Cow::Borrowed(entry)
        } else {
            let mut e = entry.clone();
            notes.extend(entry.note.clone());
            e.note = Some(notes.join("; "));
            Cow::Owned(e)
        };
        let seq = tail.seq + 1;
        let (bytes, hash) = line::encode(seq, &time::now(), &tail.hash, &entry)?;
        if let Err(e) = self.file.write_all(&bytes) {
            // Best effort: leave no partial line behind (the next append would cut it anyway).
            let _ = self.file.set_len(tail.end);
            self.tail = None;
            return Err(AuditError::io("write", &self.path, e));
        }
        self.file.sync_data().map_err(|e| AuditError::io("sync", &self.path, e))?;
        self.torn_dropped = 0;
        self.uncovered = None;
        let end = tail.end + bytes.len() as u64;
        self.tail = Some(Tail { end, seq, hash: hash.clone() });
        let receipt = Receipt { seq, hash };
        self.write_head(&receipt)?;
        Ok(receipt)
    }

    /// Writes `<log>.head`. Called under the lock, after the log's sync.
    ///
    /// The checkpoint is one fixed-size block ([`HEAD_LEN`] bytes: the JSON, spaces, a line
    /// end), so an existing head file is overwritten in place with one `pwrite` at offset 0:
    /// a single write within the first sector, which a crash or a kill leaves whole, old or
    /// new. Anything else where the head goes (nothing yet, a symlink, a hard link, a foreign
    /// file type) is replaced whole: temp file + rename.
    fn write_head(&self, receipt: &Receipt) -> Result<(), AuditError> {
        let text = head_text(receipt)?;
        if let Some(head) = self.head_in_place()? {
            head.write_all_at(&text, 0).map_err(|e| AuditError::io("write", &self.head_path, e))?;
            let len = head.metadata().map_err(|e| AuditError::io("stat", &self.head_path, e))?.len();
            if len > HEAD_LEN as u64 {
                head.set_len(HEAD_LEN as u64).map_err(|e| AuditError::io("truncate", &self.head_path, e))?;
            }
            return Ok(());
        }
        let mut tmp = self.head_path.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        // A fresh file, never an existing one or a symlink planted in its place.
        match std::fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(AuditError::io("remove", &tmp, e)),
        }
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .map_err(|e| AuditError::io("create", &tmp, e))?;
        f.write_all(&text).map_err(|e| AuditError::io("write", &tmp, e))?;
        std::fs::rename(&tmp, &self.head_path).map_err(|e| AuditError::io("rename to", &self.head_path, e))
    }

    /// The head file, when it may be overwritten in place: a regular file with one link,
    /// owned by the log's owner, opened without following a symlink. `None` when it must be replaced.
    fn head_in_place(&self) -> Result<Option<File>, AuditError> {
        let opened = OpenOptions::new().write(true).custom_flags(libc::O_NOFOLLOW).open(&self.head_path);
        let head = match opened {
            Ok(f) => f,
            // Not there yet, or a symlink (ELOOP): made or replaced whole.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ELOOP)) => return Ok(None),
            Err(e) => return Err(AuditError::io("open", &self.head_path, e)),
        };
        let meta = head.metadata().map_err(|e| AuditError::io("stat", &self.head_path, e))?;
        Ok((meta.is_file() && meta.nlink() == 1 && meta.uid() == self.owner).then_some(head))
    }

    /// The last whole record's seq and hash, from the cache if the file has not grown since,
    /// else read from the file's tail. Cuts off a torn tail. Called under the lock.
    fn sync_tail(&mut self) -> Result<Tail, AuditError> {
        self.read_tail(true)
    }

    /// [`Log::sync_tail`]; a torn tail is cut only when `cut` (else left, and not cached).
    fn read_tail(&mut self, cut: bool) -> Result<Tail, AuditError> {
        let len = self.file.metadata().map_err(|e| AuditError::io("stat", &self.path, e))?.len();
        if let Some(tail) = self.tail.as_ref().filter(|t| t.end == len) {
            return Ok(tail.clone());
        }
        let found = last_record(&self.file, len).map_err(|e| match e {
            TailError::Io(e) => AuditError::io("read", &self.path, e),
            TailError::Damaged(what) => AuditError::Damaged {
                message: format!("the last record of `{}` {what}; run `warden audit verify`", self.path.display()),
            },
        })?;
        self.uncovered = self.check_head(&found)?;
        if found.end < len && !cut {
            return Ok(found);
        }
        if found.end < len {
            self.file.set_len(found.end).map_err(|e| AuditError::io("truncate the torn tail of", &self.path, e))?;
            self.file.sync_data().map_err(|e| AuditError::io("sync", &self.path, e))?;
            self.torn_dropped += len - found.end;
        }
        self.tail = Some(found.clone());
        Ok(found)
    }
}

impl Log {
    /// Refuses to continue a log that ends before its head checkpoint, or whose last record
    /// is not the one the checkpoint names: appending would overwrite the checkpoint and hide
    /// that records were removed. A log that runs past its checkpoint by more than one record,
    /// or has records and no checkpoint, is continued, with a note for the next record naming
    /// the records no checkpoint covered: warden moves the checkpoint with every record, so
    /// each is a writer killed between its record and its checkpoint, or records appended (or
    /// a checkpoint removed) by something else; `warden audit verify` lists such notes.
    fn check_head(&self, tail: &Tail) -> Result<Option<String>, AuditError> {
        let head = crate::verify::read_checkpoint(&self.head_path).map_err(|message| AuditError::Damaged { message })?;
        let what = match head {
            None if tail.seq > 1 => return Ok(Some(format!("{UNCOVERED} records 1..={} (there was none)", tail.seq))),
            None => return Ok(None),
            Some(head) if head.seq > tail.seq => {
                format!("ends at record {} but its head checkpoint names record {}: records are missing", tail.seq, head.seq)
            }
            Some(head) if head.seq == tail.seq && head.hash != tail.hash => {
                format!("has another record {} than its head checkpoint names", head.seq)
            }
            Some(head) if tail.seq > head.seq + 1 => {
                return Ok(Some(format!("{UNCOVERED} records {}..={} (it named record {})", head.seq + 1, tail.seq, head.seq)));
            }
            Some(_) => return Ok(None),
        };
        Err(AuditError::Damaged {
            message: format!("the log `{}` {what}; run `warden audit verify`, and move the log aside to start a new one", self.path.display()),
        })
    }
}

/// How the note of records no head checkpoint covered begins.
pub const UNCOVERED: &str = "no head checkpoint covered";

/// The size of the head checkpoint file: the JSON (at most 102 bytes), spaces, a line end.
pub(crate) const HEAD_LEN: usize = 128;

/// The head checkpoint as written: `{"seq":..,"hash":".."}`, padded with spaces to
/// [`HEAD_LEN`] bytes, the last a line end.
fn head_text(receipt: &Receipt) -> Result<Vec<u8>, AuditError> {
    let mut text = serde_json::to_vec(receipt).map_err(AuditError::Encode)?;
    if text.len() >= HEAD_LEN {
        return Err(AuditError::Damaged { message: format!("a head checkpoint of {} bytes does not fit {HEAD_LEN}", text.len()) });
    }
    text.resize(HEAD_LEN - 1, b' ');
    text.push(b'\n');
    Ok(text)
}

/// `<log>.head`: where the head checkpoint of a log is kept.
pub fn head_path(log: &Path) -> PathBuf {
    let mut p = log.as_os_str().to_owned();
    p.push(".head");
    PathBuf::from(p)
}

/// Where the audit log lives by default, outside any workspace: `/var/log/warden/audit.jsonl`
/// for root, else `$XDG_STATE_HOME/warden/audit.jsonl` (when set and absolute), else
/// `~/.local/state/warden/audit.jsonl`.
pub fn default_path(home: &Path, xdg_state_home: Option<&Path>, is_root: bool) -> PathBuf {
    if is_root {
        return PathBuf::from("/var/log/warden/audit.jsonl");
    }
    match xdg_state_home.filter(|p| p.is_absolute()) {
        Some(state) => state.join("warden/audit.jsonl"),
        None => home.join(".local/state/warden/audit.jsonl"),
    }
}

enum TailError {
    Io(std::io::Error),
    Damaged(String),
}

/// Finds the last newline-terminated record in the first `len` bytes: its seq, hash, and
/// where it ends (anything after is a torn tail). Reads backwards in growing chunks, at most
/// two lines' worth (a torn tail is a partial line, itself bounded).
fn last_record(file: &File, len: u64) -> Result<Tail, TailError> {
    let mut start = len;
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = 4096u64;
    loop {
        let newlines: Vec<usize> = buf.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i).collect();
        let last = newlines.last().copied();
        let before = newlines.len().checked_sub(2).and_then(|i| newlines.get(i)).copied();
        let at_start = start == 0;
        match (last, before) {
            (None, _) if at_start => return Ok(Tail { end: 0, seq: 0, hash: ZERO_HASH.to_owned() }),
            (Some(last), Some(before)) => return parse_last(buf.get(before + 1..last), start + last as u64 + 1),
            (Some(last), None) if at_start => return parse_last(buf.get(..last), start + last as u64 + 1),
            _ => {}
        }
        if buf.len() > 2 * MAX_LINE + 2 {
            return Err(TailError::Damaged(String::from("is not followed or preceded by a line end within 2 MiB")));
        }
        let take = chunk.min(start);
        start -= take;
        let mut more = vec![0u8; usize::try_from(take).unwrap_or(0)];
        file.read_exact_at(&mut more, start).map_err(TailError::Io)?;
        more.extend_from_slice(&buf);
        buf = more;
        chunk = chunk.saturating_mul(2);
    }
}

fn parse_last(line: Option<&[u8]>, end: u64) -> Result<Tail, TailError> {
    let line = line.unwrap_or_default();
    let hash = line::check(line).map_err(|what| TailError::Damaged(format!("is damaged: {what}")))?;
    let record: Record = serde_json::from_slice(line).map_err(|e| TailError::Damaged(format!("does not parse: {e}")))?;
    Ok(Tail { end, seq: record.seq, hash })
}
