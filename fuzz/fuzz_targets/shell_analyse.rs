//! Any bytes as a command string: spans and `bash -c` nesting. See `warden_fuzz::shell`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(input) = std::str::from_utf8(data) {
        warden_fuzz::shell::check_analysis(input);
    }
});
