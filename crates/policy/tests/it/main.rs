//! Integration tests of the policy crate.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod broken;
mod combine;
mod differential;
mod fmt;
mod parse;
mod decide;
mod layers;
mod props;
mod stored;
mod written;
