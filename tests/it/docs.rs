//! The docs describe the code that runs: the README's phase and SLA tables are the program's tables,
//! and what the README and the manifest say about installing is true.

use std::fs;
use std::path::Path;

#[test]
fn readme_and_manifest_say_only_true_things_about_installing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("rust-version = \"1.89\""));
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let hooks = fs::read_to_string(root.join(".pre-commit-hooks.yaml")).unwrap();
    for (name, text) in [("README.md", &readme), (".pre-commit-hooks.yaml", &hooks)] {
        assert!(
            !text.contains("this repository's URL"),
            "{name} still has a placeholder URL"
        );
    }
    assert!(readme.contains("repo: local"));
    assert!(readme.contains("*.md.lock.owner.json"));
    // Installing is explained before the first `pair` command of the walkthrough.
    let install = readme.find("cargo install --locked --path .").unwrap();
    let walkthrough = readme.find("## Walkthrough").unwrap();
    let demo = readme.find("`pair demo`").unwrap();
    assert!(install < walkthrough && install < demo);
}

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
