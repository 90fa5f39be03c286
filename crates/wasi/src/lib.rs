//! warden's WASI backend: runs a sandbox image's tool under wasmtime.
//!
//! What it does: compiles an image (a `wasm32-wasip1` module, [`Image`]) once per process and
//! caches the machine code on disk; runs one tool per [`Runner::run`] in a fresh store from a
//! pooling allocator, with exactly the preopened directories of the [`Spec`] (read-only or
//! read-write as granted, through wasmtime-wasi's cap-std directories), the given arguments,
//! environment and stdin; and reports a [`warden_feedback::Run`] with the same fields as the
//! native backend (`sandbox.backend == "wasi"`). The `toolbox` image ([`image`]) is built from
//! `sandbox-images/toolbox` by this crate's build script.
//!
//! A caller that should not link the runtime (the `warden` binary) runs [`Call`]s through a
//! [`Client`] of the helper process `warden-wasi` ([`serve`]), which holds the [`Runner`].
//!
//! What it does not: it knows nothing of the policy language (the engine turns grants into a
//! [`Spec`]); it offers no network (a spec asking for it is refused); it runs no native code.
//!
//! Security invariants:
//! - The guest sees only its preopens; a read-only preopen refuses every write; paths leading
//!   out of a preopen (`..`, symlinks) are refused by cap-std. Nothing else of the host is
//!   visible: no inherited environment, stdio, arguments or sockets.
//! - Every run is bounded: an epoch deadline (wall clock), optional fuel, a memory cap via a
//!   resource limiter, one instance, one memory, a bounded table, capped output.
//! - Denials are reported only as the guest's own marker lines (`toolbox: denied: OP: PATH`)
//!   from images whose manifest says they print them: they describe what the tool was refused,
//!   and a guest could print false ones, never widen its grants with them.
//! - The only `unsafe` is loading a compiled module from the cache (see `cache::load`).

mod cache;
mod capture;
mod client;
mod error;
mod helper;
mod image;
mod runner;
mod spec;

pub use cache::Fetched;
pub use error::Error;
pub use client::{Client, GRACE, POLL};
pub use helper::serve;
pub use image::{BUILT_IN, DefaultGrants, Image, Manifest, image, manifest};
pub use runner::{MAX_MEMORY, POOL_SLOTS, Runner, TICK};
pub use spec::{Call, Limits, Preopen, Spec};
