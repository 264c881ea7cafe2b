//! The body and the frontmatter must tell the same story: each counter is the number of the
//! latest submission entry in its section, and each verdict an agent records has its review
//! entry, with that verdict. A hand edit of `plan_revision: 1 → 2` with no revision 2 in the
//! body would otherwise send reviewers to review a revision that does not exist.
//!
//! Every error names both places: the frontmatter key's line (the error's line) and the
//! section or entry line in the body (in the message).

use crate::board::document::Document;
use crate::board::entry::artifact_section;
use crate::board::entry::target_noun;
use crate::board::entry::{Head, Kind, heads};
use crate::board::frontmatter::{Parsed, Target};
use crate::error::FieldError;

/// Where the body and the frontmatter disagree.
pub fn check(p: &Parsed, doc: &Document) -> Vec<FieldError> {
    let heads = heads(doc);
    let mut errors = Vec::new();
    for t in Target::ALL {
        counter_agrees(p, doc, &heads, *t, &mut errors);
        verdicts_agree(p, doc, &heads, *t, &mut errors);
    }
    errors
}

/// Where a section is, in words: `## Plan Revisions` (line 57), or that it is missing.
fn section_place(doc: &Document, name: &str) -> String {
    match doc.sections().iter().find(|s| s.name == name) {
        Some(s) => format!("`## {name}` (line {})", s.line),
        None => format!("the body (it has no `## {name}` section)"),
    }
}

fn counter_agrees(
    p: &Parsed,
    doc: &Document,
    heads: &[Head],
    t: Target,
    errors: &mut Vec<FieldError>,
) {
    let section = artifact_section(t, false);
    let counter = p.fm.counter(t);
    let latest = heads
        .iter()
        .filter(|h| {
            h.section == section
                && h.heading.kind == Kind::Submission
                && h.heading.target == Some(t)
        })
        .max_by_key(|h| (h.heading.counter, h.line));
    let latest_n = latest.and_then(|h| h.heading.counter).unwrap_or(0);
    if latest_n == counter {
        return;
    }
    let (noun, unit) = target_noun(t);
    let noun = noun.to_lowercase();
    let field = t.counter_field();
    let message = match latest {
        _ if latest_n < counter => format!(
            "is {counter}, but {} has no entry for {noun} {unit} {counter}{}; a counter moves \
             only with its submission's entry. Set it back to {latest_n}, or submit the \
             {noun} with `pair submit`",
            section_place(doc, section),
            match latest {
                Some(h) => format!(" (its latest is {noun} {unit} {latest_n}, line {})", h.line),
                None => String::new(),
            }
        ),
        Some(h) => format!(
            "is {counter}, but `## {section}` has an entry for {noun} {unit} {latest_n} (line {}); \
             the counter must be the number of the latest submission",
            h.line
        ),
        None => return,
    };
    errors.push(FieldError {
        field: field.to_string(),
        line: p.line(field),
        message,
    });
}

fn verdicts_agree(
    p: &Parsed,
    doc: &Document,
    heads: &[Head],
    t: Target,
    errors: &mut Vec<FieldError>,
) {
    let section = artifact_section(t, true);
    let (noun, unit) = target_noun(t);
    let noun = noun.to_lowercase();
    for (id, agent) in &p.fm.agents {
        let r = agent.review(t);
        let (Some(n), Some(v)) = (r.reviewed, r.verdict) else {
            continue;
        };
        let field = format!("agents.{id}.{}", t.verdict_field());
        let latest = heads.iter().rev().find(|h| {
            h.section == section
                && h.heading.kind == Kind::Review
                && h.heading.target == Some(t)
                && h.heading.counter == Some(n)
                && h.heading.agent.as_deref() == Some(id.as_str())
        });
        let message = match latest {
            Some(h) if h.heading.verdict == Some(v) => continue,
            Some(h) => format!(
                "is {v}, but {id}'s latest review of {noun} {unit} {n} in `## {section}` (line {}) \
                 says {}",
                h.line,
                h.heading.verdict.map_or("no verdict", |x| x.as_str())
            ),
            None => format!(
                "is {v} on {noun} {unit} {n}, but {} has no review entry of {noun} {unit} {n} by \
                 {id}; a verdict is given with its entry (`pair verdict`)",
                section_place(doc, section)
            ),
        };
        errors.push(FieldError {
            line: p.line(&field),
            field,
            message,
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::error::FieldError;

    fn disagreements(text: &str) -> Vec<FieldError> {
        let v = crate::law::validate::check_bytes(text.as_bytes()).expect("valid on its own");
        super::check(&v.parsed, &v.doc)
    }

    const HEAD: &str = "---\nphase: PLANNING_SUBMITTED\nphase_updated_at: \"2026-01-01T00:00:00Z\"\nwork_type: feature\nrca_required: false\nred_test_required: false\nrequired_reviewers: [rev, other]\nplan_revision: 2\nanalysis_revision: 0\nred_test_round: 0\ncode_review_round: 0\nworktree: null\nagents:\n  doer:\n    role: doer\n    status: WAITING\n  rev:\n    role: reviewer\n    status: APPROVED\n    reviewed_plan_revision: 1\n    plan_verdict: APPROVED\n  other:\n    role: reviewer\n    status: IDLE\n---\n";
    const PLAN1: &str =
        "## Plan Revisions\n\n### Plan revision 1 — doer — 2026-01-01T00:00:00Z\n\nplan\n";
    const PLAN2: &str = "\n### Plan revision 2 — doer — 2026-01-02T00:00:00Z\n\nplan two\n";
    const REVIEW: &str = "\n## Plan Reviews\n\n### Plan review — revision 1 — rev — APPROVED — 2026-01-01T00:00:00Z\n\nok\n";

    #[test]
    fn a_counter_ahead_of_its_entries_names_both_lines() {
        let errors = disagreements(&format!("{HEAD}{PLAN1}{REVIEW}"));
        assert_eq!(errors.len(), 1, "{errors:?}");
        let e = &errors[0];
        assert_eq!(e.field, "plan_revision");
        assert_eq!(e.line, Some(8));
        assert!(e.message.contains("`## Plan Revisions` (line 26)"), "{e}");
        assert!(e.message.contains("plan revision 1, line 28"), "{e}");
        assert!(disagreements(&format!("{HEAD}{PLAN1}{PLAN2}{REVIEW}")).is_empty());
    }

    #[test]
    fn a_verdict_needs_its_entry_with_that_verdict() {
        let errors = disagreements(&format!("{HEAD}{PLAN1}{PLAN2}\n## Plan Reviews\n"));
        assert_eq!(errors[0].field, "agents.rev.plan_verdict");
        assert_eq!(errors[0].line, Some(21));
        assert!(
            errors[0].message.contains("`## Plan Reviews` (line 36)"),
            "{errors:?}"
        );
        let other = REVIEW.replace("— APPROVED —", "— COMMENT —");
        let errors = disagreements(&format!("{HEAD}{PLAN1}{PLAN2}{other}"));
        assert!(errors[0].message.contains("says COMMENT"), "{errors:?}");
    }
}
