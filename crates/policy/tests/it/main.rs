//! Integration tests of the policy crate.

mod broken;
mod fmt;
mod parse;
