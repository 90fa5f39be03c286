//! Any bytes as a policy file: parse, format round trip, compile. See `warden_fuzz::policy`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        warden_fuzz::policy::check_policy_text(text);
    }
});
