//! Frontmatter parsing and validation must never panic, whatever the bytes; an accepted
//! blackboard must also be accepted by the frontmatter-only check.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if pair::validate::check_bytes(data).is_ok() {
        assert!(
            pair::validate::check_frontmatter_bytes(data).is_ok(),
            "check_bytes accepted what check_frontmatter_bytes refused"
        );
    }
});
