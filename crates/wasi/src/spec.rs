//! What to run: the image, argv, the directories granted, the environment, stdin and limits.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Image;

/// One directory handed to the guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preopen {
    /// The host directory.
    pub host: PathBuf,
    /// Where the guest sees it (absolute, e.g. `/work`).
    pub guest: String,
    /// Read-write when true; read-only otherwise.
    pub writable: bool,
}

/// Resource limits of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Wall time before the run is interrupted (epoch deadline; resolution [`crate::TICK`]).
    pub timeout: Duration,
    /// Most linear memory the guest may grow to (clamped to [`crate::MAX_MEMORY`]).
    pub memory_bytes: u64,
    /// A deterministic instruction budget; `None`: no budget beyond the wall clock.
    pub fuel: Option<u64>,
    /// Bytes of stdout and of stderr kept (head and tail).
    pub output_bytes: usize,
}

impl Default for Limits {
    /// 30 s, 512 MiB, no fuel budget, 64 KiB of each stream.
    fn default() -> Self {
        Limits { timeout: Duration::from_secs(30), memory_bytes: 512 << 20, fuel: None, output_bytes: 64 << 10 }
    }
}

/// One run. `I` is its image: loaded ([`Image`], what the runtime runs), or named by a
/// `String` in a [`Call`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec<I = Image> {
    /// The image.
    pub image: I,
    /// `argv[0]` is the tool (`grep`), then its arguments.
    pub argv: Vec<String>,
    /// The only directories the guest can see.
    pub preopens: Vec<Preopen>,
    /// The guest's working directory (absolute guest path; passed as `PWD`).
    pub cwd: String,
    /// The guest's whole environment (already filtered by the caller's allowlist).
    pub env: Vec<(String, String)>,
    /// The guest's stdin.
    pub stdin: Vec<u8>,
    /// Limits.
    pub limits: Limits,
    /// Whether the run needs the network: the WASI backend has none, so `true` is refused.
    /// (Absent from a call on the wire: `false`.)
    #[serde(default)]
    pub network: bool,
}

impl Spec {
    /// A spec with no preopens, cwd `/`, empty environment and stdin, default limits.
    pub fn new(image: Image, argv: impl IntoIterator<Item = impl Into<String>>) -> Spec {
        Spec {
            image,
            argv: argv.into_iter().map(Into::into).collect(),
            preopens: Vec::new(),
            cwd: String::from("/"),
            env: Vec::new(),
            stdin: Vec::new(),
            limits: Limits::default(),
            network: false,
        }
    }
}

/// One run naming its image (see [`crate::image`]) rather than holding it: what a caller
/// without the runtime (the `warden` process) sends the helper process that runs images (see
/// [`crate::Client`]).
pub type Call = Spec<String>;

impl Call {
    /// The [`Spec`] of this call, with its image loaded.
    ///
    /// # Errors
    /// The image is unknown or not built ([`crate::image`]).
    pub fn spec(self) -> Result<Spec, crate::Error> {
        let image = crate::image(&self.image)?;
        Ok(Spec {
            image,
            argv: self.argv,
            preopens: self.preopens,
            cwd: self.cwd,
            env: self.env,
            stdin: self.stdin,
            limits: self.limits,
            network: self.network,
        })
    }
}
