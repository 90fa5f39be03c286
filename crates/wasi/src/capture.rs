//! The guest's stdout and stderr: a [`Capture`] behind a WASI output stream, which also takes
//! the toolbox's marker lines out of stderr as they stream past and turns them into denials.
//!
//! Two markers: `toolbox: denied: OP: PATH` (the sandbox refused the path: a read-only
//! preopen, a path leading out of one) and `toolbox: missing: OP: PATH` (it does not exist;
//! wasi-libc answers so for a path no preopen covers, so it is a denial exactly when `PATH` is
//! outside every preopen). Marker lines are not kept in the captured text: the tool's own
//! error line says the same to a person. Any guest program can print a marker line, so these
//! denials are `evidence: output`, like the native sandbox's denials read from error lines.

use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use warden_feedback::{Capture, Denial, DenialSource, Stream};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// The marker a toolbox tool prints on stderr when the sandbox refused it a path:
/// `toolbox: denied: fs.write: /abs/path`.
pub(crate) const DENIAL_MARKER: &str = "toolbox: denied: ";
/// The marker for a path that does not exist (see the module doc).
pub(crate) const MISSING_MARKER: &str = "toolbox: missing: ";
/// Denials kept per run (a guest printing markers in a loop cannot grow the result).
const MAX_DENIALS: usize = 64;
/// Longest marker line looked at.
const MAX_LINE: usize = 4096;

#[derive(Debug)]
struct Inner {
    capture: Capture,
    /// Whether to look for denial markers.
    scan: bool,
    /// The guest paths of the preopens (for the missing marker).
    roots: Vec<String>,
    line: Vec<u8>,
    line_overflow: bool,
    denials: Vec<Denial>,
}

/// A cloneable handle on one captured stream.
#[derive(Debug, Clone)]
pub(crate) struct CaptureStream(Arc<Mutex<Inner>>);

impl CaptureStream {
    /// A stream keeping at most `cap` bytes; `scan` looks for denial markers, judging missing
    /// paths against the preopens' guest paths `roots`.
    pub(crate) fn new(cap: usize, scan: bool, roots: Vec<String>) -> Self {
        CaptureStream(Arc::new(Mutex::new(Inner {
            capture: Capture::new(cap),
            scan,
            roots,
            line: Vec::new(),
            line_overflow: false,
            denials: Vec::new(),
        })))
    }

    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        let mut g = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut g)
    }

    /// Appends host-written bytes (warden's own notes).
    pub(crate) fn push(&self, bytes: &[u8]) {
        self.with(|i| {
            i.flush_line();
            i.capture.push(bytes);
        });
    }

    /// The kept text and the denials seen, leaving an empty capture behind.
    pub(crate) fn take(&self) -> (Stream, Vec<Denial>) {
        self.with(|i| {
            i.flush_line();
            let capture = std::mem::replace(&mut i.capture, Capture::new(0));
            (capture.finish(), std::mem::take(&mut i.denials))
        })
    }
}

impl Inner {
    fn write(&mut self, mut bytes: &[u8]) {
        if !self.scan {
            self.capture.push(bytes);
            return;
        }
        // Whole lines are held back until their newline (a marker is dropped, anything else
        // captured); a line longer than any marker passes straight through.
        while !bytes.is_empty() {
            let (part, rest, newline) = match bytes.iter().position(|&b| b == b'\n') {
                Some(i) => (bytes.get(..=i).unwrap_or_default(), bytes.get(i + 1..).unwrap_or_default(), true),
                None => (bytes, &[][..], false),
            };
            bytes = rest;
            if self.line_overflow {
                self.capture.push(part);
            } else {
                self.line.extend_from_slice(part);
                if self.line.len() > MAX_LINE {
                    self.line_overflow = true;
                    self.capture.push(&self.line);
                    self.line.clear();
                } else if newline && !self.marker() {
                    self.capture.push(&self.line);
                }
            }
            if newline {
                self.line.clear();
                self.line_overflow = false;
            }
        }
    }

    /// Captures a held-back partial line (the stream ended without a newline).
    fn flush_line(&mut self) {
        if !self.line.is_empty() {
            self.capture.push(&self.line);
            self.line.clear();
        }
    }

    /// Whether the held line is a marker (recording its denial when it means one).
    fn marker(&mut self) -> bool {
        let text = String::from_utf8_lossy(&self.line);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let (rest, missing) = match (text.strip_prefix(DENIAL_MARKER), text.strip_prefix(MISSING_MARKER)) {
            (Some(r), _) => (r, false),
            (None, Some(r)) => (r, true),
            (None, None) => return false,
        };
        let Some((op, target)) = rest.split_once(": ") else { return false };
        if !matches!(op, "fs.read" | "fs.write") || !target.starts_with('/') {
            return false;
        }
        if missing && self.roots.iter().any(|r| covers(r, target)) {
            return true;
        }
        let d = Denial::output(op, target, DenialSource::Wasi);
        if self.denials.len() < MAX_DENIALS && !self.denials.contains(&d) {
            self.denials.push(d);
        }
        true
    }
}

/// Whether guest path `path` is `root` or under it.
fn covers(root: &str, path: &str) -> bool {
    let root = root.trim_end_matches('/');
    root.is_empty() || path == root || path.strip_prefix(root).is_some_and(|r| r.starts_with('/'))
}

impl IsTerminal for CaptureStream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CaptureStream {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl OutputStream for CaptureStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.with(|i| i.write(&bytes));
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        // Always ready: the capture keeps a bounded head and tail however much comes.
        Ok(1 << 20)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CaptureStream {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for CaptureStream {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.with(|i| i.write(buf));
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_become_denials_once_each_and_leave_the_text() {
        let s = CaptureStream::new(1024, true, vec![String::from("/work")]);
        s.with(|i| i.write(b"cat: /etc/passwd: Not capable\ntoolbox: denied: fs.read: /etc/pa"));
        s.with(|i| i.write(b"sswd\ntoolbox: denied: fs.read: /etc/passwd\ntoolbox: denied: net.x: y\n"));
        s.with(|i| i.write(b"toolbox: missing: fs.read: /work/nope\ntoolbox: missing: fs.read: /etc\ntail"));
        let (stream, denials) = s.take();
        let targets: Vec<&str> = denials.iter().map(|d| d.target.as_str()).collect();
        assert_eq!(targets, ["/etc/passwd", "/etc"]);
        assert_eq!(stream.text, "cat: /etc/passwd: Not capable\ntoolbox: denied: net.x: y\ntail");
        assert_eq!(stream.bytes, stream.text.len() as u64);
    }

    #[test]
    fn long_lines_pass_through() {
        let s = CaptureStream::new(1 << 20, true, Vec::new());
        let long = vec![b'x'; MAX_LINE * 2 + 5];
        s.with(|i| i.write(&long));
        s.with(|i| i.write(b"\nend\n"));
        let (stream, _) = s.take();
        assert_eq!(stream.bytes, (MAX_LINE * 2 + 5 + 5) as u64);
    }

    #[test]
    fn covers_is_by_component() {
        assert!(covers("/work", "/work") && covers("/work", "/work/a") && covers("/", "/etc"));
        assert!(!covers("/work", "/workshop") && !covers("/work", "/etc"));
    }

    #[test]
    fn no_scan_no_denials() {
        let s = CaptureStream::new(1024, false, Vec::new());
        s.with(|i| i.write(b"toolbox: denied: fs.read: /x\n"));
        assert!(s.take().1.is_empty());
    }
}
