//! Reading what the binary prints: status sections, JSON arrays of names, and bytes as text.

use crate::common::*;
use serde_json::Value;

pub fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("expected an array, got {v}"))
        .iter()
        .map(|s| {
            s.as_str()
                .unwrap_or_else(|| panic!("expected strings in {v}"))
                .to_string()
        })
        .collect()
}

pub fn section_names(status: &Value) -> Vec<String> {
    status["sections"]
        .as_array()
        .unwrap_or_else(|| panic!("status JSON must have a `sections` array: {status}"))
        .iter()
        .map(|s| {
            s["name"]
                .as_str()
                .unwrap_or_else(|| panic!("each section needs a string `name`: {status}"))
                .to_string()
        })
        .collect()
}

pub fn assert_accepted_by_all_readers(content: &[u8]) {
    let b = Board::new(content);
    pair(["validate", b.p()]).code(0);
    let s = pair(["status", b.p(), "--json"]);
    s.code(0);
    let sj = s.json();
    assert_eq!(sj["phase"], "DRAFT", "{}", s.report());
    assert_eq!(sj["sha256"], sha256_hex(content), "{}", s.report());
    assert!(
        section_names(&sj).contains(&"Goal".to_string()),
        "{}",
        s.report()
    );
    let p = pair(["poll", b.p(), "--agent", "doer", "--json"]);
    p.code(0);
    assert_eq!(p.json()["phase"], "DRAFT", "{}", p.report());
    b.assert_untouched(content);
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
