//! One record's line: how it is written and hashed, how its own hash is checked, and reading
//! lines with a bound on their length.
//!
//! A line is `{"seq":..,"time":..,"prev":..,<entry fields>,"hash":"<64 hex>"}\n`. The hash is
//! SHA-256 over the line's bytes up to (not including) `,"hash":` — those bytes include
//! `prev`, which chains the records. Checking never re-serializes: it hashes the bytes as
//! they are in the file.

use crate::record::{Body, Entry};
use crate::AuditError;
use sha2::{Digest, Sha256};
use std::io::BufRead;

/// The longest line read or written (1 MiB), newline included.
pub const MAX_LINE: usize = 1 << 20;

/// `prev` of the first record.
pub const ZERO_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

const HASH_OPEN: &[u8] = b",\"hash\":\"";
const HASH_CLOSE: &[u8] = b"\"}";
/// `,"hash":"` + 64 hex digits + `"}`.
const SUFFIX_LEN: usize = 9 + 64 + 2;

/// Lowercase hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        for nibble in [b >> 4, b & 15] {
            out.push(char::from(HEX.get(usize::from(nibble)).copied().unwrap_or(b'0')));
        }
    }
    out
}

const HEX: [u8; 16] = *b"0123456789abcdef";

/// Whether text is 64 lowercase hex digits.
pub fn is_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// The line for a record (newline included) and its hash.
pub(crate) fn encode(seq: u64, time: &str, prev: &str, entry: &Entry) -> Result<(Vec<u8>, String), AuditError> {
    let mut line = serde_json::to_vec(&Body { seq, time, prev, entry }).map_err(AuditError::Encode)?;
    if line.pop() != Some(b'}') {
        return Err(AuditError::Damaged { message: String::from("a record did not serialize to a JSON object") });
    }
    let hash = sha256_hex(&line);
    line.extend_from_slice(HASH_OPEN);
    line.extend_from_slice(hash.as_bytes());
    line.extend_from_slice(HASH_CLOSE);
    line.push(b'\n');
    if line.len() > MAX_LINE {
        return Err(AuditError::RecordTooLong { bytes: line.len() });
    }
    Ok((line, hash))
}

/// Checks a line (without its newline) against its own hash: the hash it states if its bytes
/// match it, else what is wrong.
pub(crate) fn check(line: &[u8]) -> Result<String, String> {
    let stated = stated_hash(line)?;
    let body = line.get(..line.len() - SUFFIX_LEN).unwrap_or_default();
    if sha256_hex(body) != stated {
        return Err(String::from("its bytes do not match its hash (the record was changed)"));
    }
    Ok(stated)
}

/// The hash a line states in its fixed-form last member.
pub(crate) fn stated_hash(line: &[u8]) -> Result<String, String> {
    let Some(start) = line.len().checked_sub(SUFFIX_LEN) else {
        return Err(String::from("it is too short to be a record"));
    };
    let suffix = line.get(start..).unwrap_or_default();
    let hex = suffix.get(HASH_OPEN.len()..HASH_OPEN.len() + 64).unwrap_or_default();
    let hex = std::str::from_utf8(hex).unwrap_or_default();
    if !line.starts_with(b"{") || !suffix.starts_with(HASH_OPEN) || !suffix.ends_with(HASH_CLOSE) || !is_hash(hex) {
        return Err(String::from("it does not end in `,\"hash\":\"<64 hex digits>\"}`"));
    }
    Ok(hex.to_owned())
}

/// A piece of the file up to and including a newline, or the last bytes without one.
pub(crate) struct Piece {
    /// The bytes, without the newline.
    pub bytes: Vec<u8>,
    /// Whether it ended in a newline (false: a torn tail).
    pub complete: bool,
}

/// Reads newline-terminated pieces, refusing any longer than [`MAX_LINE`].
pub(crate) struct Lines<R> {
    reader: R,
    /// 1-based number of the next line.
    pub next_line: u64,
    done: bool,
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R) -> Lines<R> {
        Lines { reader, next_line: 1, done: false }
    }

    /// The next piece; `Ok(None)` at the end; `Err(line number)` for a line over the bound.
    pub fn next_piece(&mut self) -> std::io::Result<Result<Option<Piece>, u64>> {
        if self.done {
            return Ok(Ok(None));
        }
        let mut bytes = Vec::new();
        loop {
            let available = self.reader.fill_buf()?;
            if available.is_empty() {
                self.done = true;
                if bytes.is_empty() {
                    return Ok(Ok(None));
                }
                return Ok(Ok(Some(Piece { bytes, complete: false })));
            }
            let (take, found) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            bytes.extend_from_slice(available.get(..take).unwrap_or_default());
            self.reader.consume(take);
            if bytes.len() > MAX_LINE {
                self.done = true;
                return Ok(Err(self.next_line));
            }
            if found {
                bytes.pop();
                self.next_line += 1;
                return Ok(Ok(Some(Piece { bytes, complete: true })));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_checks_against_its_own_hash_and_a_flip_does_not() {
        let line = br#"{"seq":1,"x":"y","hash":"HHHH"}"#;
        let body = br#"{"seq":1,"x":"y""#;
        let hash = sha256_hex(body);
        let line = String::from_utf8_lossy(line).replace("HHHH", &hash).into_bytes();
        assert_eq!(check(&line), Ok(hash));
        let mut flipped = line.clone();
        flipped[3] = b'x';
        assert!(check(&flipped).unwrap_err().contains("do not match"));
        assert!(check(b"{}").unwrap_err().contains("too short"));
        let upper = String::from_utf8_lossy(&line).to_uppercase().into_bytes();
        assert!(check(&upper).unwrap_err().contains("does not end"));
    }

    #[test]
    fn lines_are_bounded_and_a_tail_without_newline_is_torn() {
        let mut text = b"one\ntwo\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE + 1));
        let mut lines = Lines::new(std::io::BufReader::new(&text[..]));
        assert_eq!(lines.next_piece().unwrap().unwrap().unwrap().bytes, b"one");
        assert!(lines.next_piece().unwrap().unwrap().unwrap().complete);
        assert!(matches!(lines.next_piece().unwrap(), Err(3)));
        let mut lines = Lines::new(&b"a\nto"[..]);
        lines.next_piece().unwrap().unwrap();
        let torn = lines.next_piece().unwrap().unwrap().unwrap();
        assert!(!torn.complete);
        assert_eq!(torn.bytes, b"to");
        assert!(lines.next_piece().unwrap().unwrap().is_none());
    }
}
