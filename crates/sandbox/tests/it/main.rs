//! Runs real commands in the sandbox and checks, from outside, what they could and could not do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod basics;
mod gate;
mod owner;
mod planted;
mod recall;
mod support;
mod views;
