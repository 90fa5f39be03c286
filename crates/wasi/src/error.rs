//! Why a run could not start (a run that started and failed is a [`warden_feedback::Run`]).

use std::path::PathBuf;

/// What went wrong before or around a run. Any of these means nothing ran.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The built-in image could not be built with this toolchain.
    #[error("image `{name}` is not built: {reason}")]
    ImageNotBuilt {
        /// The image.
        name: String,
        /// What the build script said.
        reason: String,
    },
    /// No built-in image has this name.
    #[error("no image named `{0}` (built-in images: toolbox)")]
    UnknownImage(String),
    /// An image or manifest file could not be read.
    #[error("cannot read `{path}`: {reason}")]
    ReadImage {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        reason: String,
    },
    /// The manifest is invalid.
    #[error("invalid image manifest ({origin}): {reason}")]
    Manifest {
        /// Where it came from.
        origin: String,
        /// What is wrong.
        reason: String,
    },
    /// The spec asks for the network, which the WASI backend never grants.
    #[error("the wasi backend has no network access; the run was refused (help: use the native backend for tools that need the network)")]
    NetworkNotSupported,
    /// The spec has no `argv[0]`.
    #[error("nothing to run: argv is empty")]
    EmptyArgv,
    /// The image has no such tool.
    #[error("image `{image}` has no tool `{tool}` (tools: {tools})")]
    UnknownTool {
        /// The image.
        image: String,
        /// `argv[0]`.
        tool: String,
        /// The tools it has, space-separated.
        tools: String,
    },
    /// A guest path (preopen or cwd) is not absolute.
    #[error("guest path `{0}` must be absolute")]
    GuestPath(String),
    /// A preopen could not be opened.
    #[error("cannot preopen `{host}` as `{guest}`: {reason}")]
    Preopen {
        /// The host directory.
        host: PathBuf,
        /// The guest path.
        guest: String,
        /// Why.
        reason: String,
    },
    /// The module cache directory or a file in it.
    #[error("module cache `{path}`: {reason}")]
    Cache {
        /// The directory or file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// wasmtime refused the engine configuration.
    #[error("cannot build the wasmtime engine: {0}")]
    Engine(String),
    /// The module does not compile.
    #[error("cannot compile the image: {reason}")]
    Compile {
        /// wasmtime's message.
        reason: String,
    },
    /// The module cannot be linked or instantiated (imports other than WASI preview 1, the
    /// pool is exhausted, the store cannot be set up).
    #[error("cannot instantiate image `{image}`: {reason}")]
    Instantiate {
        /// The image.
        image: String,
        /// wasmtime's message.
        reason: String,
    },
    /// The helper process that runs images (`warden-wasi`) is missing, could not start,
    /// exited, broke the protocol or did not answer in time.
    #[error("the WASI helper: {0}")]
    Helper(String),
    /// The helper refused the run or could not start it: its own error, as text.
    #[error("{0}")]
    Relayed(String),
}

impl Error {
    /// A stable code for each kind of error (`wasi::network`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Error::ImageNotBuilt { .. } => "wasi::image_not_built",
            Error::UnknownImage(_) => "wasi::unknown_image",
            Error::ReadImage { .. } => "wasi::read_image",
            Error::Manifest { .. } => "wasi::manifest",
            Error::NetworkNotSupported => "wasi::network",
            Error::EmptyArgv => "wasi::empty_argv",
            Error::UnknownTool { .. } => "wasi::unknown_tool",
            Error::GuestPath(_) => "wasi::guest_path",
            Error::Preopen { .. } => "wasi::preopen",
            Error::Cache { .. } => "wasi::cache",
            Error::Engine(_) => "wasi::engine",
            Error::Compile { .. } => "wasi::compile",
            Error::Instantiate { .. } => "wasi::instantiate",
            Error::Helper(_) => "wasi::helper",
            Error::Relayed(_) => "wasi::relayed",
        }
    }
}
