//! The docs describe the code that runs: the phase and SLA tables of docs/protocol.md are the
//! program's tables, what the README and the manifest say about installing is true, and every
//! link between the README and docs/ leads to a file and a heading that exist.

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
    let commands = fs::read_to_string(root.join("docs/commands.md")).unwrap();
    assert!(commands.contains("repo: local"));
    assert!(readme.contains("*.md.lock.owner.json"));
    // Installing is explained before the first `pair` command of the walkthrough.
    let install = readme.find("cargo install --locked --path .").unwrap();
    let walkthrough = readme.find("## Walkthrough").unwrap();
    let demo = readme.find("`pair demo`").unwrap();
    assert!(install < walkthrough && install < demo);
}

#[test]
fn documented_phase_table_is_the_transition_table() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md"))
        .expect("docs/protocol.md");
    let start = readme
        .find("<!-- phase-table:start -->\n")
        .expect("start marker")
        + "<!-- phase-table:start -->\n".len();
    let end = readme.find("<!-- phase-table:end -->").expect("end marker");
    assert_eq!(
        readme[start..end].trim(),
        pair::law::protocol::markdown_table().trim(),
        "the phase table of docs/protocol.md is out of date: regenerate it with `cargo run --example phase_table`"
    );
}

#[test]
fn documented_dissent_tables_are_the_dissent_stage_rules() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md"))
        .expect("docs/protocol.md");
    let start = doc
        .find("<!-- dissent-table:start -->\n")
        .expect("start marker")
        + "<!-- dissent-table:start -->\n".len();
    let end = doc.find("<!-- dissent-table:end -->").expect("end marker");
    assert_eq!(
        doc[start..end].trim(),
        pair::law::dissent::markdown_tables().trim(),
        "the dissent tables of docs/protocol.md are out of date: regenerate them with `cargo run --example dissent_tables`"
    );
}

#[test]
fn documented_sla_table_is_the_sla_table() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md"))
        .expect("docs/protocol.md");
    let start = readme
        .find("<!-- sla-table:start -->\n")
        .expect("start marker")
        + "<!-- sla-table:start -->\n".len();
    let end = readme.find("<!-- sla-table:end -->").expect("end marker");
    assert_eq!(
        readme[start..end].trim(),
        pair::board::sla::markdown_table().trim(),
        "the SLA table of docs/protocol.md is out of date: copy pair::board::sla::markdown_table() into it"
    );
}

#[test]
fn documented_stats_figures_are_the_figures_table() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/stats.md"))
        .expect("docs/stats.md");
    let start = doc
        .find("<!-- stats-figures:start -->\n")
        .expect("start marker")
        + "<!-- stats-figures:start -->\n".len();
    let end = doc.find("<!-- stats-figures:end -->").expect("end marker");
    assert_eq!(
        doc[start..end].trim(),
        pair::stats::markdown_table().trim(),
        "the figures table of docs/stats.md is out of date: copy pair::stats::markdown_table() into it"
    );
}

#[test]
fn documented_check_summaries_are_the_summary_table() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md"))
        .expect("docs/commands.md");
    let start = doc
        .find("<!-- check-summaries:start -->\n")
        .expect("start marker")
        + "<!-- check-summaries:start -->\n".len();
    let end = doc
        .find("<!-- check-summaries:end -->")
        .expect("end marker");
    assert_eq!(
        doc[start..end].trim(),
        pair::commands::check_output::markdown_table().trim(),
        "the summary table of docs/commands.md is out of date: copy pair::commands::check_output::markdown_table() into it"
    );
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces
/// as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of a Markdown text outside code fences, numbered from 1.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fence = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            fence = !fence;
        } else if !fence {
            out.push((n + 1, line));
        }
    }
    out
}

fn anchors(text: &str) -> Vec<String> {
    prose(text)
        .into_iter()
        .filter_map(|(_, l)| {
            let rest = l.trim_start_matches('#');
            (rest.len() < l.len() && l.len() - rest.len() <= 6 && rest.starts_with(' '))
                .then(|| anchor(rest))
        })
        .collect()
}

#[test]
fn every_link_of_the_readme_and_the_docs_leads_somewhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for e in fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = fs::read_to_string(page).unwrap();
        for (n, line) in prose(&text) {
            for (i, _) in line.match_indices("](") {
                let target: String = line[i + 2..]
                    .chars()
                    .take_while(|c| *c != ')' && !c.is_whitespace())
                    .collect();
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, heading) = target.split_once('#').unwrap_or((&target, ""));
                let linked = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                let at = format!(
                    "{}:{n}: {target}",
                    page.strip_prefix(root).unwrap().display()
                );
                if !linked.exists() {
                    broken.push(format!("{at}: no such file"));
                } else if !heading.is_empty()
                    && linked.extension().is_some_and(|x| x == "md")
                    && !anchors(&fs::read_to_string(&linked).unwrap())
                        .contains(&heading.to_string())
                {
                    broken.push(format!("{at}: no such heading"));
                }
            }
        }
    }
    assert!(
        pages.len() >= 5 && checked >= 20,
        "{checked} links in {pages:?}"
    );
    assert!(
        broken.is_empty(),
        "broken links:\n  {}",
        broken.join("\n  ")
    );
}

#[test]
fn the_readme_is_a_first_hour_not_the_reference() {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for needed in [
        "cargo run --release -- demo",
        "cargo test",
        "## Walkthrough: a doer and a reviewer in two terminals",
        "## Walkthrough: a reviewer on another machine",
    ] {
        assert!(readme.contains(needed), "the README lacks {needed:?}");
    }
    assert!(
        readme.lines().count() <= 300,
        "the README has {} lines: reference belongs in docs/",
        readme.lines().count()
    );
}

#[test]
fn every_error_kind_the_code_reports_is_documented_in_json_md() {
    // The kinds are the strings `Error::kind` returns, one arm per variant (the match is
    // exhaustive, so a new error cannot be left out of it).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let error = fs::read_to_string(root.join("src/error.rs")).unwrap();
    let start = error.find("pub fn kind(&self)").expect("Error::kind");
    let body = &error[start..];
    let body = &body[..body.find("\n    }\n").expect("the end of Error::kind")];
    let kinds: Vec<&str> = body
        .lines()
        .filter_map(|l| l.split("=> \"").nth(1)?.split('"').next())
        .collect();
    assert!(kinds.len() >= 10 && kinds.contains(&"invalid"), "{kinds:?}");
    let json = fs::read_to_string(root.join("docs/json.md")).unwrap();
    let row = json
        .lines()
        .find(|l| l.starts_with("| `error` |"))
        .expect("the `error` row of docs/json.md");
    let missing: Vec<&&str> = kinds
        .iter()
        .filter(|k| !row.contains(&format!("`{k}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/json.md's `error` row does not name these kinds: {missing:?}"
    );
}

/// `init --help` names every SLA, so that an agent with only the binary can set one.
#[test]
fn init_help_names_every_sla() {
    let out = crate::common::pair(["init", "--help"]);
    out.code(0);
    for row in pair::board::sla::TABLE {
        let name = row.name.to_string();
        assert!(out.stdout.contains(&name), "{name}: {}", out.report());
    }
    assert!(!out.stdout.contains("docs/protocol.md"), "{}", out.report());
}

#[test]
fn the_handoff_tables_are_the_law_s() {
    let protocol =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md"))
            .expect("docs/protocol.md");
    for r in pair::law::handoff::RULES {
        let row = format!(
            "| `{}` | {} |",
            r.name,
            r.says.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        assert!(
            protocol.contains(&row),
            "docs/protocol.md lacks the handoff rule row {row}"
        );
    }
    let reading =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/spec-reading.md"))
            .expect("docs/spec-reading.md");
    for m in pair::law::handoff::MID_CYCLE {
        let when = m.when.split_whitespace().collect::<Vec<_>>().join(" ");
        let plain = reading.replace('`', "");
        assert!(
            plain.contains(&format!("| {} | {when} |", m.role)),
            "docs/spec-reading.md lacks the mid-cycle row for the {}: {when}",
            m.role
        );
    }
}

/// docs/commands.md's table of `next`'s order is the code's table of ranks, in its order.
#[test]
fn the_order_of_next_is_the_code_s_table_of_ranks() {
    let commands =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md"))
            .expect("docs/commands.md");
    let mut at = 0;
    for r in pair::commands::project::RANKS {
        let row = format!(
            "| `{}` | {} |",
            r.name,
            r.says.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        let found = commands[at..]
            .find(&row)
            .unwrap_or_else(|| panic!("docs/commands.md lacks the rank row {row}, in order"));
        at += found + row.len();
    }
}
