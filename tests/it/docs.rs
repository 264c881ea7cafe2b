//! The docs describe the code that runs: the README's phase table is the transition table.

#[test]
fn readme_phase_table_is_the_transition_table() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let start = readme
        .find("<!-- phase-table:start -->\n")
        .expect("start marker")
        + "<!-- phase-table:start -->\n".len();
    let end = readme.find("<!-- phase-table:end -->").expect("end marker");
    assert_eq!(
        readme[start..end].trim(),
        pair::law::protocol::markdown_table().trim(),
        "README phase table is out of date: regenerate it with `cargo run --example phase_table`"
    );
}

#[test]
fn readme_sla_table_is_the_sla_table() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let start = readme
        .find("<!-- sla-table:start -->\n")
        .expect("start marker")
        + "<!-- sla-table:start -->\n".len();
    let end = readme.find("<!-- sla-table:end -->").expect("end marker");
    assert_eq!(
        readme[start..end].trim(),
        pair::board::sla::markdown_table().trim(),
        "README SLA table is out of date: copy pair::board::sla::markdown_table() into it"
    );
}
