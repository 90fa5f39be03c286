//! A compiled [`PolicySet`] as bytes, so that a process that loads the same layers again can
//! skip parsing and compiling them (`warden_engine`'s compiled-policy cache decides when bytes
//! may be believed; this file only writes and reads them).
//!
//! The bytes are `postcard` over the compiled form, behind a tag naming this format. The
//! indexes (exec words, path anchors) are not stored: they are made again by inserting the
//! stored entries in order, which gives the same maps. What a set makes when it is used (rule
//! references, reasons, expanded grants) starts empty, as after a compile.
//!
//! A compiled set shares its words and path patterns (a tier's reason is one string for all
//! its rules, a pattern one list of segments for the rule, its index entries and the grants).
//! Stored plainly, each use would be a copy, and reading would allocate each again: more work
//! than compiling. So each shared string and pattern is stored once, in a table before the
//! set, and the set names them by number; reading makes each once and shares it as compiling
//! did. Layout: the tag, then three parts each preceded by its length (4 bytes, little
//! endian): the strings, the patterns (whose words name strings), the set.

use super::model::{AgentProfile, LayerC};
use super::paths::Seg;
use super::{LayerInfo, PolicySet, grants, refs};
use crate::ast::Verdict;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// The first bytes: what these bytes are, and the version of their layout. A change to any
/// stored type changes the binary, which the engine's cache keys on; the tag also keeps bytes
/// of another program or version from being read as a set.
const TAG: &[u8] = b"warden compiled policy set v1\n";

/// The stored fields of a [`PolicySet`].
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    infos: Vec<LayerInfo>,
    rules: refs::Refs,
    layers: Vec<LayerC>,
    agents: HashMap<String, AgentProfile>,
    opaque: Verdict,
    plans: grants::Plans,
}

impl PolicySet {
    /// The set as bytes for [`PolicySet::from_bytes`] (by the same build of this crate).
    pub fn to_bytes(&self) -> Vec<u8> {
        let stored = Stored {
            infos: self.infos.clone(),
            rules: self.rules.clone(),
            layers: self.layers.clone(),
            agents: self.agents.clone(),
            opaque: self.opaque,
            plans: self.plans.clone(),
        };
        let _writing = Tables::writing();
        // Serialising owned, plain data into a Vec cannot fail; an empty part is refused on
        // reading.
        let body = postcard::to_allocvec(&stored).unwrap_or_default();
        // The patterns' words are strings of the table too: the patterns go before it is taken.
        let segs: Vec<Vec<Seg>> = WRITING.with_borrow(|w| w.as_ref().map(|w| w.segs.iter().map(|s| s.to_vec()).collect()).unwrap_or_default());
        let segs = postcard::to_allocvec(&segs).unwrap_or_default();
        let strs: Vec<String> = WRITING.with_borrow(|w| w.as_ref().map(|w| w.strs.iter().map(|s| s.to_string()).collect()).unwrap_or_default());
        let strs = postcard::to_allocvec(&strs).unwrap_or_default();
        let mut out = TAG.to_vec();
        for part in [strs, segs, body] {
            out.extend(u32::try_from(part.len()).unwrap_or(u32::MAX).to_le_bytes());
            out.extend(part);
        }
        out
    }

    /// A set from [`PolicySet::to_bytes`]; `None` for anything else (another tag, bytes cut
    /// short or altered so that they do not decode, bytes left over).
    pub fn from_bytes(bytes: &[u8]) -> Option<PolicySet> {
        let rest = bytes.strip_prefix(TAG)?;
        let (strs, rest) = part(rest)?;
        let (segs, body) = part(rest)?;
        let (body, rest) = part(body)?;
        if !rest.is_empty() {
            return None;
        }
        let _reading = Tables::reading();
        let strs: Vec<&str> = whole(strs)?;
        READING.with_borrow_mut(|r| r.strs = strs.into_iter().map(Arc::from).collect());
        let segs: Vec<Vec<Seg>> = whole(segs)?;
        READING.with_borrow_mut(|r| r.segs = segs.into_iter().map(Arc::from).collect());
        let s: Stored = whole(body)?;
        Some(PolicySet {
            why: std::iter::repeat_with(std::sync::OnceLock::new).take(s.rules.len()).collect(),
            infos: s.infos,
            rules: s.rules,
            layers: s.layers,
            agents: s.agents,
            opaque: s.opaque,
            plans: s.plans,
            cache: std::sync::Arc::default(),
        })
    }
}

/// One part of the layout: its length (4 bytes, little endian), then its bytes; and the rest.
fn part(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = bytes.split_first_chunk::<4>()?;
    let len = usize::try_from(u32::from_le_bytes(*len)).ok()?;
    (rest.len() >= len).then(|| rest.split_at(len))
}

/// A value that takes all of `bytes`.
fn whole<'a, T: serde::Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    match postcard::take_from_bytes(bytes) {
        Ok((value, [])) => Some(value),
        _ => None,
    }
}

/// The strings and patterns being stored, each once, numbered in the order first met.
#[derive(Default)]
struct Writing {
    strs: Vec<Arc<str>>,
    str_at: HashMap<Arc<str>, u32>,
    segs: Vec<Arc<[Seg]>>,
    seg_at: HashMap<Arc<[Seg]>, u32>,
}

/// The strings and patterns read, by number.
#[derive(Default)]
struct Reading {
    strs: Vec<Arc<str>>,
    segs: Vec<Arc<[Seg]>>,
}

thread_local! {
    /// Set while this thread writes a set (`to_bytes`).
    static WRITING: RefCell<Option<Writing>> = const { RefCell::new(None) };
    /// Set while this thread reads one (`from_bytes`).
    static READING: RefCell<Reading> = RefCell::new(Reading::default());
}

/// Clears a thread's tables when a write or read ends, however it ends.
struct Tables;

impl Tables {
    fn writing() -> Tables {
        WRITING.set(Some(Writing::default()));
        Tables
    }

    fn reading() -> Tables {
        READING.set(Reading::default());
        Tables
    }
}

impl Drop for Tables {
    fn drop(&mut self) {
        WRITING.set(None);
        READING.set(Reading::default());
    }
}

/// The number of `value` in a table, adding it when new; `None` outside `to_bytes`.
fn number<T: ?Sized + Eq + std::hash::Hash>(
    value: &Arc<T>,
    table: impl FnOnce(&mut Writing) -> (&mut Vec<Arc<T>>, &mut HashMap<Arc<T>, u32>),
) -> Option<u32> {
    WRITING.with_borrow_mut(|w| {
        let (list, at) = table(w.as_mut()?);
        if let Some(n) = at.get(value) {
            return Some(*n);
        }
        let n = u32::try_from(list.len()).ok()?;
        list.push(Arc::clone(value));
        at.insert(Arc::clone(value), n);
        Some(n)
    })
}

fn unknown<E: serde::ser::Error>() -> E {
    E::custom("a shared value is stored only by PolicySet::to_bytes")
}

/// A shared string, stored as its number in the strings' table.
pub(crate) mod shared_str {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub(crate) fn serialize<S: Serializer>(v: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
        super::number(v, |w| (&mut w.strs, &mut w.str_at)).ok_or_else(super::unknown)?.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
        let n = u32::deserialize(d)?;
        let found = super::READING.with_borrow(|r| usize::try_from(n).ok().and_then(|n| r.strs.get(n).cloned()));
        found.ok_or_else(|| serde::de::Error::custom("a string number past the table"))
    }
}

/// An optional shared string (see [`shared_str`]).
pub(crate) mod shared_str_opt {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    #[derive(Serialize, Deserialize)]
    struct Shared(#[serde(with = "super::shared_str")] Arc<str>);

    pub(crate) fn serialize<S: Serializer>(v: &Option<Arc<str>>, s: S) -> Result<S::Ok, S::Error> {
        v.as_ref().map(|v| Shared(Arc::clone(v))).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Arc<str>>, D::Error> {
        Ok(Option::<Shared>::deserialize(d)?.map(|s| s.0))
    }
}

/// A shared path pattern's segments, stored as their number in the patterns' table.
pub(crate) mod shared_segs {
    use super::Seg;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub(crate) fn serialize<S: Serializer>(v: &Arc<[Seg]>, s: S) -> Result<S::Ok, S::Error> {
        super::number(v, |w| (&mut w.segs, &mut w.seg_at)).ok_or_else(super::unknown)?.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<[Seg]>, D::Error> {
        let n = u32::deserialize(d)?;
        let found = super::READING.with_borrow(|r| usize::try_from(n).ok().and_then(|n| r.segs.get(n).cloned()));
        found.ok_or_else(|| serde::de::Error::custom("a pattern number past the table"))
    }
}

/// `Option<Backend>` in a form a format without field names reads back (its JSON form is
/// internally tagged).
pub(crate) mod backend {
    use crate::decision::Backend;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    enum Plain {
        Native,
        Wasi(Option<String>),
    }

    pub(crate) fn serialize<S: Serializer>(b: &Option<Backend>, s: S) -> Result<S::Ok, S::Error> {
        let plain = b.as_ref().map(|b| match b {
            Backend::Native => Plain::Native,
            Backend::Wasi { image } => Plain::Wasi(image.clone()),
        });
        plain.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Backend>, D::Error> {
        Ok(Option::<Plain>::deserialize(d)?.map(|b| match b {
            Plain::Native => Backend::Native,
            Plain::Wasi(image) => Backend::Wasi { image },
        }))
    }
}

/// `Network` in a form a format without field names reads back (its JSON form is adjacently
/// tagged).
pub(crate) mod network {
    use crate::decision::Network;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    enum Plain {
        None,
        Hosts(Vec<String>),
        Any,
    }

    pub(crate) fn serialize<S: Serializer>(n: &Network, s: S) -> Result<S::Ok, S::Error> {
        let plain = match n {
            Network::None => Plain::None,
            Network::Hosts(h) => Plain::Hosts(h.clone()),
            Network::Any => Plain::Any,
        };
        plain.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Network, D::Error> {
        Ok(match Plain::deserialize(d)? {
            Plain::None => Network::None,
            Plain::Hosts(h) => Network::Hosts(h),
            Plain::Any => Network::Any,
        })
    }
}
