//! A compiled [`PolicySet`] as bytes, so that a process that loads the same layers again can
//! skip parsing and compiling them (`warden_engine`'s compiled-policy cache decides when bytes
//! may be believed; this file only writes and reads them).
//!
//! The bytes are `postcard` over the compiled form, behind a tag naming this format. The
//! indexes (exec words, path anchors) are not stored: they are made again by inserting the
//! stored entries in order, which gives the same maps. What a set makes when it is used (rule
//! references, reasons, expanded grants) starts empty, as after a compile.

use super::model::{AgentProfile, LayerC};
use super::{LayerInfo, PolicySet, grants, refs};
use crate::ast::Verdict;
use std::collections::HashMap;

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
        let mut out = TAG.to_vec();
        // Serialising owned, plain data into a Vec cannot fail; an empty result is refused on
        // reading.
        if let Ok(bytes) = postcard::to_allocvec(&stored) {
            out.extend(bytes);
        }
        out
    }

    /// A set from [`PolicySet::to_bytes`]; `None` for anything else (another tag, bytes cut
    /// short or altered so that they do not decode, bytes left over).
    pub fn from_bytes(bytes: &[u8]) -> Option<PolicySet> {
        let body = bytes.strip_prefix(TAG)?;
        let (s, rest): (Stored, &[u8]) = postcard::take_from_bytes(body).ok()?;
        if !rest.is_empty() {
            return None;
        }
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
