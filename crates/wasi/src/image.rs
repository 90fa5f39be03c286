//! Sandbox images: a WASI program and the manifest that names its tools and default grants.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use crate::Error;

/// The toolbox image built by `build.rs` (empty when it could not be built).
static TOOLBOX_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/toolbox.wasm"));
/// The toolbox's manifest, copied by `build.rs`.
static TOOLBOX_MANIFEST: &str = include_str!(concat!(env!("OUT_DIR"), "/toolbox.manifest.json"));
/// `ok`, or why `build.rs` could not build the toolbox.
const TOOLBOX_STATUS: &str = env!("WARDEN_TOOLBOX_STATUS");

/// The grants an image asks for when the policy says nothing more precise.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultGrants {
    /// Directories to preopen read-only (`${workspace}` stands for the workspace).
    #[serde(default)]
    pub read: Vec<String>,
    /// Directories to preopen read-write.
    #[serde(default)]
    pub write: Vec<String>,
    /// Environment variables passed through when set.
    #[serde(default)]
    pub env: Vec<String>,
}

/// An image's manifest (`manifest.json` beside its source).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The image's name (`toolbox`).
    pub name: String,
    /// One line on what it is for.
    #[serde(default)]
    pub description: String,
    /// The tools it offers, by `argv[0]`.
    pub tools: Vec<String>,
    /// The tools among `tools` that write (the write tier's).
    #[serde(default)]
    pub write_tools: Vec<String>,
    /// Tools that run but are not offered (warden's own tests).
    #[serde(default)]
    pub hidden_tools: Vec<String>,
    /// Whether the tools print `toolbox: denied: OP: PATH` on stderr when refused a path.
    #[serde(default)]
    pub reports_denials: bool,
    /// Default grants.
    #[serde(default)]
    pub grants: DefaultGrants,
}

impl Manifest {
    /// Parses a manifest from JSON.
    ///
    /// # Errors
    /// [`Error::Manifest`] when it is not valid JSON of this shape, or names no tools.
    pub fn from_json(origin: &str, text: &str) -> Result<Manifest, Error> {
        let m: Manifest = serde_json::from_str(text)
            .map_err(|e| Error::Manifest { origin: origin.to_string(), reason: e.to_string() })?;
        if m.tools.is_empty() {
            return Err(Error::Manifest { origin: origin.to_string(), reason: String::from("it names no tools") });
        }
        if let Some(w) = m.write_tools.iter().find(|w| !m.tools.contains(w)) {
            return Err(Error::Manifest {
                origin: origin.to_string(),
                reason: format!("write tool `{w}` is not among its tools"),
            });
        }
        Ok(m)
    }

    /// Whether `tool` runs in this image (offered or hidden).
    pub fn runs(&self, tool: &str) -> bool {
        self.tools.iter().chain(&self.hidden_tools).any(|t| t == tool)
    }
}

/// A loadable image: its bytes (shared, cheap to clone), digest and manifest.
#[derive(Clone)]
pub struct Image {
    name: String,
    wasm: Arc<[u8]>,
    digest: [u8; 32],
    path: Option<PathBuf>,
    manifest: Arc<Manifest>,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image")
            .field("name", &self.name)
            .field("bytes", &self.wasm.len())
            .field("sha256", &self.digest_hex())
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Image {
    /// An image from a `.wasm` module (core WASI preview 1) and its manifest file.
    ///
    /// # Errors
    /// [`Error::ReadImage`] when a file cannot be read, [`Error::Manifest`] when the manifest
    /// is invalid.
    pub fn from_files(wasm: &Path, manifest: &Path) -> Result<Image, Error> {
        let read_err = |path: &Path| {
            let path = path.to_path_buf();
            move |e: std::io::Error| Error::ReadImage { path, reason: e.to_string() }
        };
        let bytes = std::fs::read(wasm).map_err(read_err(wasm))?;
        let text = std::fs::read_to_string(manifest).map_err(read_err(manifest))?;
        let manifest = Manifest::from_json(&manifest.display().to_string(), &text)?;
        let mut image = Image::from_bytes(manifest, bytes);
        image.path = Some(wasm.to_path_buf());
        Ok(image)
    }

    /// An image from bytes already in memory.
    pub fn from_bytes(manifest: Manifest, wasm: impl Into<Arc<[u8]>>) -> Image {
        let wasm = wasm.into();
        let digest: [u8; 32] = Sha256::digest(&wasm).into();
        Image { name: manifest.name.clone(), wasm, digest, path: None, manifest: Arc::new(manifest) }
    }

    /// The image's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The module's bytes.
    pub fn wasm(&self) -> &[u8] {
        &self.wasm
    }

    /// Where it was read from, when it came from a file (the built-in toolbox is embedded).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// SHA-256 of the module.
    pub fn digest(&self) -> &[u8; 32] {
        &self.digest
    }

    /// SHA-256 of the module, hex.
    pub fn digest_hex(&self) -> String {
        hex(&self.digest)
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A built-in image by name: `toolbox`.
///
/// The toolbox is built for `wasm32-wasip1` by this crate's build script and embedded; the
/// first call hashes it, later calls return a cheap clone.
///
/// # Errors
/// [`Error::UnknownImage`] for another name; [`Error::ImageNotBuilt`] when the build could not
/// build it (most often: the `wasm32-wasip1` target is not installed).
pub fn image(name: &str) -> Result<Image, Error> {
    static TOOLBOX: OnceLock<Result<Image, Error>> = OnceLock::new();
    match name {
        "toolbox" => TOOLBOX
            .get_or_init(|| {
                if TOOLBOX_STATUS != "ok" || TOOLBOX_WASM.is_empty() {
                    return Err(Error::ImageNotBuilt { name: name.to_string(), reason: TOOLBOX_STATUS.to_string() });
                }
                let manifest = Manifest::from_json("built-in toolbox manifest", TOOLBOX_MANIFEST)?;
                Ok(Image::from_bytes(manifest, TOOLBOX_WASM))
            })
            .clone(),
        other => Err(Error::UnknownImage(other.to_string())),
    }
}

/// A built-in image's manifest, read without loading (or hashing) the image: what a caller
/// that only checks tool names needs.
///
/// # Errors
/// As [`image`]: the name is unknown or the image was not built.
pub fn manifest(name: &str) -> Result<Manifest, Error> {
    match name {
        "toolbox" if TOOLBOX_STATUS != "ok" => Err(Error::ImageNotBuilt { name: name.to_string(), reason: TOOLBOX_STATUS.to_string() }),
        "toolbox" => Manifest::from_json("built-in toolbox manifest", TOOLBOX_MANIFEST),
        other => Err(Error::UnknownImage(other.to_string())),
    }
}

/// The names [`image`] knows.
pub const BUILT_IN: &[&str] = &["toolbox"];
