//! A generated policy and request: a deny rule or a lower layer never loosens the decision.
//! See `warden_fuzz::decide`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warden_fuzz::decide::DecideInput;

fuzz_target!(|input: DecideInput| {
    warden_fuzz::decide::check(&input);
});
