//! The audit crate's integration tests (one test binary for the crate).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
mod crash;
mod log;
mod mutation;
mod report;
