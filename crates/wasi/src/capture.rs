//! The guest's stdout and stderr: a [`Capture`] behind a WASI output stream, which also picks
//! the toolbox's denial marker lines out of stderr as they stream past.

use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use warden_feedback::{Capture, Denial, DenialSource, Stream};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// The marker a toolbox tool prints on stderr when the sandbox refused it a path:
/// `toolbox: denied: fs.write: /abs/path`.
pub(crate) const DENIAL_MARKER: &str = "toolbox: denied: ";
/// Denials kept per run (a guest printing markers in a loop cannot grow the result).
const MAX_DENIALS: usize = 64;
/// Longest marker line looked at.
const MAX_LINE: usize = 4096;

#[derive(Debug)]
struct Inner {
    capture: Capture,
    /// Whether to look for denial markers.
    scan: bool,
    line: Vec<u8>,
    line_overflow: bool,
    denials: Vec<Denial>,
}

/// A cloneable handle on one captured stream.
#[derive(Debug, Clone)]
pub(crate) struct CaptureStream(Arc<Mutex<Inner>>);

impl CaptureStream {
    /// A stream keeping at most `cap` bytes; `scan` looks for denial markers.
    pub(crate) fn new(cap: usize, scan: bool) -> Self {
        CaptureStream(Arc::new(Mutex::new(Inner {
            capture: Capture::new(cap),
            scan,
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
        self.with(|i| i.capture.push(bytes));
    }

    /// The kept text and the denials seen, leaving an empty capture behind.
    pub(crate) fn take(&self) -> (Stream, Vec<Denial>) {
        self.with(|i| {
            let capture = std::mem::replace(&mut i.capture, Capture::new(0));
            (capture.finish(), std::mem::take(&mut i.denials))
        })
    }
}

impl Inner {
    fn write(&mut self, bytes: &[u8]) {
        self.capture.push(bytes);
        if !self.scan {
            return;
        }
        for &b in bytes {
            if b == b'\n' {
                if !self.line_overflow {
                    self.marker();
                }
                self.line.clear();
                self.line_overflow = false;
            } else if self.line.len() < MAX_LINE {
                self.line.push(b);
            } else {
                self.line_overflow = true;
            }
        }
    }

    fn marker(&mut self) {
        let line = String::from_utf8_lossy(&self.line);
        let Some(rest) = line.strip_prefix(DENIAL_MARKER) else { return };
        let Some((op, target)) = rest.split_once(": ") else { return };
        if !matches!(op, "fs.read" | "fs.write") || target.is_empty() {
            return;
        }
        let d = Denial { op: op.to_string(), target: target.to_string(), source: DenialSource::Wasi };
        if self.denials.len() < MAX_DENIALS && !self.denials.contains(&d) {
            self.denials.push(d);
        }
    }
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
    fn markers_become_denials_once_each() {
        let s = CaptureStream::new(1024, true);
        s.with(|i| i.write(b"cat: /etc/passwd: Not capable\ntoolbox: denied: fs.read: /etc/pa"));
        s.with(|i| i.write(b"sswd\ntoolbox: denied: fs.read: /etc/passwd\ntoolbox: denied: net.x: y\n"));
        let (stream, denials) = s.take();
        assert_eq!(denials.len(), 1);
        assert_eq!(denials.first().map(|d| d.target.as_str()), Some("/etc/passwd"));
        assert!(stream.text.starts_with("cat: "));
    }

    #[test]
    fn no_scan_no_denials() {
        let s = CaptureStream::new(1024, false);
        s.with(|i| i.write(b"toolbox: denied: fs.read: /x\n"));
        assert!(s.take().1.is_empty());
    }
}
