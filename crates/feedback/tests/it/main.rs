//! Integration tests: real tools produce real failures in a scratch workspace, and
//! `paths::find` must name the exact file, line and column they point at.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;
mod tools;
