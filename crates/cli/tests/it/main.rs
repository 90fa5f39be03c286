//! The `warden` binary's integration tests (one test binary for the crate).

mod audit;
mod broken;
mod cli;
mod corpus;
mod hook;
mod kill;
mod mcp;
mod run;
mod session;
mod support;
