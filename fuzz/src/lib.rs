//! Generators and oracles behind warden's fuzz targets.
//!
//! The targets in `fuzz_targets/` are thin glue: they turn libFuzzer's bytes into an input and
//! call one `check_*` function here. Every oracle panics (so libFuzzer records a crash) when an
//! invariant the libraries promise does not hold; the panic message says which one and shows
//! the input.
//!
//! - [`policy`]: parse, print, re-parse and compile one policy file.
//! - [`decide`]: a generator of small policies and requests, and the "a deny rule never
//!   loosens" oracles over compile, analyse and decide.
//! - [`shell`]: spans of the analysis, and `bash -c` nesting.
//! - [`panics`]: brush-parser panics that `warden-shell` contains, told apart from real ones.
#![forbid(unsafe_code)]

pub mod decide;
pub mod panics;
pub mod policy;
pub mod shell;

/// The display name every fuzzed policy file gets.
pub const FILE: &str = "fuzz.policy";
