//! [`Argv`]: a command's words held in one buffer, so that a decision copies a command in one
//! allocation rather than one per word.

use serde::ser::{Serialize, SerializeSeq, Serializer};
use smallvec::SmallVec;

/// The words of a command, in order.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Argv {
    /// Every word, one after the other.
    text: String,
    /// Where each word ends in `text`.
    ends: SmallVec<[usize; 6]>,
}

impl Argv {
    /// An empty argv with room for `words` words of `bytes` bytes in all.
    pub fn with_capacity(words: usize, bytes: usize) -> Argv {
        Argv { text: String::with_capacity(bytes), ends: SmallVec::with_capacity(words) }
    }

    /// Appends a word.
    pub fn push(&mut self, word: &str) {
        self.text.push_str(word);
        self.ends.push(self.text.len());
    }

    /// How many words.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there is no word.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Word `i`.
    pub fn get(&self, i: usize) -> Option<&str> {
        let start = match i.checked_sub(1) {
            None => 0,
            Some(before) => *self.ends.get(before)?,
        };
        self.text.get(start..*self.ends.get(i)?)
    }

    /// The words in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// The words joined by `sep`.
    pub fn join(&self, sep: &str) -> String {
        let mut out = String::with_capacity(self.text.len() + sep.len() * self.len());
        for (i, w) in self.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            out.push_str(w);
        }
        out
    }

    /// The words as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }
}

impl<S: AsRef<str>> FromIterator<S> for Argv {
    fn from_iter<I: IntoIterator<Item = S>>(words: I) -> Argv {
        let mut argv = Argv::default();
        for w in words {
            argv.push(w.as_ref());
        }
        argv
    }
}

impl std::fmt::Debug for Argv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A list of strings, as `Vec<String>` would be.
impl Serialize for Argv {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for w in self.iter() {
            seq.serialize_element(w)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_every_word_even_empty_ones() {
        let words = ["rm", "", "-rf", "a b", "é"];
        let argv: Argv = words.iter().collect();
        assert_eq!(argv.len(), 5);
        assert_eq!(argv.iter().collect::<Vec<_>>(), words);
        assert_eq!(argv.get(1), Some(""));
        assert_eq!(argv.get(5), None);
        assert_eq!(argv.join(" "), "rm  -rf a b é");
        assert_eq!(argv.to_vec(), words.map(String::from));
        assert_eq!(format!("{argv:?}"), format!("{words:?}"));
    }

    #[test]
    fn many_words_and_no_words() {
        let many: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
        let argv: Argv = many.iter().collect();
        assert_eq!(argv.to_vec(), many);
        let none: Argv = std::iter::empty::<&str>().collect();
        assert!(none.is_empty());
        assert_eq!(none.get(0), None);
        assert_eq!(none.join(" "), "");
    }

    #[test]
    fn serialises_as_a_list_of_strings() {
        let argv: Argv = ["git", "push", "--force"].iter().collect();
        assert_eq!(serde_json::to_string(&argv).ok().as_deref(), Some(r#"["git","push","--force"]"#));
    }
}
