//! A byte-capped capture of one stream that keeps the head and the tail.
//!
//! Build output puts the first error at the top and the summary at the bottom: both matter to
//! the model, the middle rarely does. Memory stays bounded by the cap however much is written.

use crate::Stream;

/// Captures a stream, keeping at most `cap` bytes: the first half and the last half.
#[derive(Debug, Clone)]
pub struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    /// Next write position in `tail` once it is full (a ring).
    ring_at: usize,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl Capture {
    /// A capture keeping at most `cap` bytes.
    pub fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        Capture { head: Vec::new(), tail: Vec::new(), ring_at: 0, head_cap, tail_cap: cap - head_cap, total: 0 }
    }

    /// Bytes written so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Appends bytes.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total = self.total.saturating_add(bytes.len() as u64);
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            self.head.extend_from_slice(now);
            bytes = rest;
        }
        if self.tail_cap == 0 || bytes.is_empty() {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend_from_slice(bytes.get(bytes.len() - self.tail_cap..).unwrap_or_default());
            self.ring_at = 0;
            return;
        }
        for &b in bytes {
            if self.tail.len() < self.tail_cap {
                self.tail.push(b);
            } else {
                if let Some(slot) = self.tail.get_mut(self.ring_at) {
                    *slot = b;
                }
                self.ring_at = (self.ring_at + 1) % self.tail_cap;
            }
        }
    }

    /// The kept text and whether the middle was dropped.
    pub fn finish(self) -> Stream {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let truncated = self.total > kept;
        let mut bytes = self.head;
        if truncated {
            let dropped = self.total - kept;
            bytes.extend_from_slice(format!("\n[... {dropped} bytes dropped by warden ...]\n").as_bytes());
        }
        let (newer, older) = self.tail.split_at(self.ring_at.min(self.tail.len()));
        bytes.extend_from_slice(older);
        bytes.extend_from_slice(newer);
        Stream { text: String::from_utf8_lossy(&bytes).into_owned(), truncated, bytes: self.total }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut c = Capture::new(16);
        c.push(b"hello ");
        c.push(b"world");
        let s = c.finish();
        assert_eq!((s.text.as_str(), s.truncated, s.bytes), ("hello world", false, 11));
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let mut c = Capture::new(8);
        for chunk in [&b"abcdef"[..], b"ghij", b"klmnopq", b"r", b"stuvwxyz"] {
            c.push(chunk);
        }
        let s = c.finish();
        assert!(s.truncated);
        assert_eq!(s.bytes, 26);
        assert!(s.text.starts_with("abcd\n[... 18 bytes dropped"), "{}", s.text);
        assert!(s.text.ends_with("wxyz"), "{}", s.text);
    }

    #[test]
    fn tail_ring_wraps_one_byte_at_a_time() {
        let mut c = Capture::new(4);
        for b in b"0123456789" {
            c.push(&[*b]);
        }
        let s = c.finish();
        assert!(s.text.starts_with("01\n"));
        assert!(s.text.ends_with("89"), "{}", s.text);
        assert_eq!(s.bytes, 10);
    }

    #[test]
    fn zero_cap_keeps_nothing_but_counts() {
        let mut c = Capture::new(0);
        c.push(b"abc");
        let s = c.finish();
        assert!(s.truncated);
        assert_eq!(s.bytes, 3);
    }
}
