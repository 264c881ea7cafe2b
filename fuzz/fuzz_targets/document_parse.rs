//! The frontmatter/body splitter must never panic, and what it accepts must be consistent:
//! the parts it returns come from the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pair::document::Document;

fuzz_target!(|data: &[u8]| {
    let full = Document::parse(data);
    let head = Document::parse_frontmatter_only(data);
    if let Ok(doc) = &full {
        // Whatever the full split accepts, the frontmatter-only split accepts with the same
        // frontmatter (poll and validate must agree).
        let head = head
            .as_ref()
            .expect("parse accepted what parse_frontmatter_only refused");
        assert_eq!(doc.fm_text, head.fm_text);
    }
});
