//! One module per verb.

pub mod audit;
pub mod check;
pub mod explain;
pub mod fmt;
pub mod hook;
pub mod replay;
pub mod run;
pub mod serve;
pub mod test;
