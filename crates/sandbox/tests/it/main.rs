//! Runs real commands in the sandbox and checks, from outside, what they could and could not do.

mod basics;
mod support;
