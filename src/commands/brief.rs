//! `pair brief`: one Markdown document that rebuilds an agent's context from the blackboard
//! alone, after its context was compacted or for a fresh reviewer.
//!
//! * For the doer: the goal, the phase, the approved plan, the reviewers' open points (the
//!   current verdicts that are not approvals, with their text), the gates, and the next step.
//! * For a reviewer: the task (goal and evidence), the artifact under review, the prior reviews of
//!   that artifact, the pinned artifact reference (hash, `pair diff`, the git diff command), and
//!   the next step — without the doer's own notes (`Implementation Notes`, `Validation`, the
//!   doer's free notes), so the reviewer is not anchored by the doer's reasoning.

use serde_json::json;

use super::{Outcome, agent_arg, shown};
use crate::board::document::Document;
use crate::board::entry::target_noun;
use crate::board::entry::{self, Entry, Kind};
use crate::board::frontmatter::{Frontmatter, Phase, Target, Verdict};
use crate::cli::{BriefArgs, BriefFor};
use crate::error::Result;
use crate::law::protocol::{self};
use crate::render::report::{SCHEMA, current_target};
use crate::store;
use crate::store::Session;
use crate::text::shell_line;
use crate::text::shell_word;

/// The sections a reviewer's brief leaves out: the doer's own reasoning and results.
const DOER_NOTES: &[&str] = &["Implementation Notes", "Validation"];

/// One part of the brief: a `##` title and its Markdown.
struct Part {
    title: &'static str,
    text: String,
}

pub fn run(a: BriefArgs, s: &Session) -> Result<Outcome> {
    if let Some(id) = &a.agent {
        agent_arg("--agent", id)?;
    }
    let loaded = store::snapshot(&a.board, store::Depth::Whole, s)?.load()?;
    let doc = &loaded.valid.doc;
    let fm = &loaded.valid.parsed.fm;
    let all = entry::entries(doc);
    let board = shown(&a.board);
    let agent = a.agent.clone().unwrap_or_else(|| match a.role {
        BriefFor::Doer => fm.doer().unwrap_or("doer").to_string(),
        BriefFor::Reviewer => default_reviewer(fm),
        BriefFor::Dissenter => "dissenter".to_string(),
    });
    let place = super::place(&a.board, fm);
    let next = protocol::next(fm, &agent, &place);
    let mut parts = match a.role {
        BriefFor::Doer => doer_parts(fm, doc, &all),
        BriefFor::Reviewer => reviewer_parts(fm, doc, &all, &place.board),
        BriefFor::Dissenter => dissenter_parts(fm, doc, &all, &place.board),
    };
    if let Some(p) = handoff_part(fm, &all, &agent) {
        parts.insert(0, p);
    }
    let mut next_text = format!("{}\n", next.action);
    if let Some(cmd) = &next.command {
        next_text.push_str(&format!("\n```sh\n{}\n```\n", shell_line(cmd)));
    }
    parts.push(Part {
        title: "Next step",
        text: next_text,
    });
    let role = match a.role {
        BriefFor::Doer => "doer",
        BriefFor::Reviewer => "reviewer",
        BriefFor::Dissenter => "dissenter",
    };
    let mut markdown = format!(
        "# Brief for {role} {agent}: {}\n\nRebuilt from the blackboard {} (sha256 {}).\n",
        crate::text::escape(&board_name(&a.board)),
        crate::text::escape(&place.board),
        loaded.sha256
    );
    if a.role == BriefFor::Dissenter {
        markdown.push_str(
            "This bundle is your whole world: the task spec and the artifact (in a revision \
             cycle also the prior objections, the claimed resolutions, the diff and the declared \
             impacted surfaces). Nothing else of the board is shown.\n",
        );
    }
    if a.role == BriefFor::Reviewer {
        markdown.push_str(
            "The doer's own notes (Implementation Notes, Validation, free notes) are left out; \
             judge the artifact itself.\n",
        );
    }
    if matches!(a.role, BriefFor::Reviewer | BriefFor::Dissenter)
        && let Some(text) = independence_text(fm, doc)
    {
        markdown.push_str(&text);
    }
    for p in &parts {
        markdown.push_str(&format!("\n## {}\n\n{}", p.title, p.text));
        if !p.text.ends_with('\n') {
            markdown.push('\n');
        }
    }
    let json = json!({
        "schema": SCHEMA,
        "path": board,
        "for": role,
        "agent": agent,
        "phase": fm.phase,
        "sha256": loaded.sha256,
        "parts": parts.iter().map(|p| json!({"title": p.title, "markdown": p.text})).collect::<Vec<_>>(),
        "next": next,
        "markdown": markdown,
    });
    Ok(Outcome::ok(json, markdown))
}

/// Which session wrote the artifact under judgement, when the journal says, and what the
/// board's independence policy asks of the judge ([`crate::law::independence`]).
fn independence_text(fm: &Frontmatter, doc: &Document) -> Option<String> {
    let t = current_target(fm)?;
    let records = crate::board::journal::records(doc).ok()?;
    let author = crate::law::independence::authors(&records)
        .remove(&t)
        .flatten();
    let (noun, unit) = target_noun(t);
    let n = fm.counter(t);
    let wrote = match &author {
        Some(s) => format!(
            "{noun} {unit} {n} was written from session {}",
            crate::text::escape(s)
        ),
        None => format!("{noun} {unit} {n} names no session it was written from"),
    };
    Some(if fm.independent_review {
        format!(
            "This board asks for independent review: {wrote}; judge it from another session, \
             named with --session ID (or PAIR_SESSION).\n"
        )
    } else if author.is_some() {
        format!("{wrote}; `stats` reports whether its judges were independent of it.\n")
    } else {
        return None;
    })
}

fn board_name(board: &std::path::Path) -> String {
    board
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| board.display().to_string())
}

/// A reviewer with no id given: the first required reviewer still to vote, else the first
/// required or registered one.
fn default_reviewer(fm: &Frontmatter) -> String {
    current_target(fm)
        .and_then(|t| protocol::round(fm, t).pending.first().cloned())
        .or_else(|| fm.required_now().first().cloned())
        .or_else(|| fm.reviewers().first().map(|s| s.to_string()))
        .unwrap_or_else(|| "reviewer".to_string())
}

/// A section's text without its heading (`None` when missing or empty).
fn section_text(doc: &Document, name: &str) -> Option<String> {
    let sections = doc.sections();
    let sec = sections.iter().find(|s| s.name == name)?;
    let text = crate::board::document::normalize_newlines(&doc.body[sec.start..sec.end]);
    let after = text.split_once('\n').map_or("", |(_, rest)| rest).trim();
    (!after.is_empty()).then(|| format!("{after}\n"))
}

fn phase_part(fm: &Frontmatter) -> Part {
    let mut text = format!(
        "`{}` since {}. Counters: analysis {}, plan {}, red test {}, code {}.\n",
        fm.phase,
        fm.phase_updated_at,
        fm.analysis_revision,
        fm.plan_revision,
        fm.red_test_round,
        fm.code_review_round
    );
    if let Some(w) = &fm.worktree {
        text.push_str(&if fm.phase == Phase::CleanedUp {
            format!("Worktree: `{w}` (removed at the clean-up).\n")
        } else {
            format!("Worktree: `{w}`.\n")
        });
    }
    if let (Phase::Blocked, Some(from)) = (fm.phase, fm.blocked_from) {
        text.push_str(&format!("Blocked from `{from}`.\n"));
    }
    Part {
        title: "Phase",
        text,
    }
}

fn gates_part(fm: &Frontmatter, all: &[Entry]) -> Part {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let mut text = format!(
        "- work type: {}\n- root cause analysis required: {}\n- red test required: {}\n- \
         human gates pre-approved (yolo): {}\n- no review (user-approved): {}\n- required \
         reviewers: {}\n",
        fm.work_type,
        yes(fm.rca_required),
        yes(fm.red_test_required),
        yes(fm.yolo),
        yes(fm.no_review),
        if fm.required_now().is_empty() && fm.pool.is_none() {
            "none yet".to_string()
        } else {
            crate::board::pool::required_text(fm)
        }
    );
    let waivers: Vec<&Entry> = all
        .iter()
        .filter(|e| e.kind == Kind::Record && e.label == "Gate waived")
        .collect();
    for w in waivers {
        text.push_str(&format!(
            "- waived: {} ({})\n",
            w.heading,
            one_line(&w.text)
        ));
    }
    Part {
        title: "Gates",
        text,
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether the plan stands approved and no newer plan is in play.
fn plan_approved(fm: &Frontmatter) -> bool {
    protocol::stands_approved(fm, Target::Plan)
        && fm.phase.review_target() != Some(Target::Plan)
        && !matches!(fm.phase, Phase::Planning | Phase::PlanChangesRequested)
}

fn plan_part(fm: &Frontmatter, all: &[Entry]) -> Part {
    let n = fm.plan_revision;
    let text = match entry::round(all, Target::Plan, n).0 {
        Some(e) if plan_approved(fm) => e.markdown(),
        Some(e) => format!(
            "No plan is approved yet. The latest, plan revision {n} (phase `{}`):\n\n{}",
            fm.phase,
            e.markdown()
        ),
        None if n == 0 => "No plan has been submitted yet.\n".to_string(),
        None => format!("Plan revision {n} has no entry in `## Plan Revisions`.\n"),
    };
    Part {
        title: "Approved plan",
        text,
    }
}

/// The reviewers' current verdicts that are not approvals, with their text: what the doer must
/// still answer.
fn open_points(fm: &Frontmatter, all: &[Entry]) -> Part {
    let mut text = String::new();
    for t in Target::ALL {
        let r = protocol::round(fm, *t);
        if r.counter == 0 {
            continue;
        }
        let reviews = entry::round(all, *t, r.counter).1;
        for id in r.changes_requested_by.iter().chain(&r.comment_by) {
            let latest = reviews
                .iter()
                .rev()
                .find(|e| e.agent.as_deref() == Some(id.as_str()));
            match latest {
                Some(e) => {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&e.markdown());
                    // The reviewer's corrections, beside the review.
                    for c in entry::corrections_of(all, e) {
                        text.push('\n');
                        text.push_str(&c.markdown());
                    }
                }
                None => {
                    let (noun, unit) = target_noun(*t);
                    let v = fm.agent(id).and_then(|a| a.review(*t).verdict);
                    text.push_str(&format!(
                        "- {id}: {} on {} {unit} {} (no entry found)\n",
                        v.map_or("?", Verdict::as_str),
                        noun.to_lowercase(),
                        r.counter
                    ));
                }
            }
        }
    }
    if text.is_empty() {
        text.push_str("None: no current verdict asks for changes or comments.\n");
    }
    Part {
        title: "Open review points",
        text,
    }
}

/// Every objection still to be settled, with its evidence and suggested fix and what has been
/// said about it since (resolution, challenge, ruling). `None` on a board with none.
fn objections_part(fm: &Frontmatter, all: &[Entry]) -> Option<Part> {
    let open: Vec<&crate::board::ledger::Objection> = fm
        .ledger
        .objections
        .iter()
        .filter(|o| o.state.is_unsettled())
        .collect();
    if open.is_empty() {
        return None;
    }
    let mut text = String::new();
    for o in open {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "#### {} — {} {} on the {} gate (round {}, by {}, anchor `{}`)\n\n",
            o.id, o.state, o.severity, o.gate, o.round, o.by, o.anchor
        ));
        let entries = entry::of_objection(all, o.gate, &o.id);
        if entries.is_empty() {
            text.push_str(&format!("{} (no entry found)\n", o.title));
        }
        for e in entries {
            text.push_str(&e.markdown());
            text.push('\n');
        }
    }
    Some(Part {
        title: "Open objections",
        text,
    })
}

fn doer_parts(fm: &Frontmatter, doc: &Document, all: &[Entry]) -> Vec<Part> {
    let mut parts = vec![
        Part {
            title: "Goal",
            text: section_text(doc, "Goal").unwrap_or_else(|| "(no goal written)\n".into()),
        },
        phase_part(fm),
        plan_part(fm, all),
        open_points(fm, all),
    ];
    parts.extend(objections_part(fm, all));
    parts.push(gates_part(fm, all));
    parts
}

fn reviewer_parts(fm: &Frontmatter, doc: &Document, all: &[Entry], board: &str) -> Vec<Part> {
    let mut task = section_text(doc, "Goal").unwrap_or_else(|| "(no goal written)\n".into());
    if let Some(evidence) = section_text(doc, "Evidence") {
        task.push_str(&format!("\n### Evidence\n\n{evidence}"));
    }
    let mut parts = vec![
        Part {
            title: "Task",
            text: task,
        },
        phase_part(fm),
    ];
    let target = current_target(fm);
    if target.is_some_and(|t| t != Target::Plan) && plan_approved(fm) {
        parts.push(plan_part(fm, all));
    }
    let Some(target) = target else {
        parts.push(Part {
            title: "Under review",
            text: "Nothing has been submitted yet.\n".into(),
        });
        return parts;
    };
    let counter = fm.counter(target);
    let (noun, unit) = target_noun(target);
    let mut under = match entry::round(all, target, counter).0 {
        Some(e) => e.markdown(),
        None => format!(
            "{noun} {unit} {counter} has no entry in `## {}`.\n",
            crate::board::entry::artifact_section(target, false)
        ),
    };
    under.push('\n');
    match fm.pin(target) {
        // A code submission's entry states its pin already: say it once.
        Some(p) if under.contains(&format!("sha256 `{}`", p.sha256)) => {
            under.push_str("Pass that sha256 as `--artifact-sha256`.\n")
        }
        Some(p) => under.push_str(&format!(
            "Pinned: {} sha256 `{}` (pass it as `--artifact-sha256`).\n",
            p.kind.describe(),
            p.sha256
        )),
        None => under.push_str("Not pinned: its submission recorded no hash.\n"),
    }
    if fm.phase.review_target() == Some(target) {
        under.push_str(&format!(
            "Read exactly what is under review with `pair diff {}`.\n",
            shell_word(board)
        ));
        // Whose verdicts the round waits for: on a pool board, the members who took it.
        under.push_str(&format!(
            "Required in this round: {}.\n",
            crate::board::pool::required_text(fm)
        ));
    }
    if let Some(cmd) = crate::render::report::review_diff_command(fm, target, board) {
        under.push_str(&format!(
            "The same bytes with git alone: `{}`.\n",
            shell_line(&cmd)
        ));
    }
    parts.push(Part {
        title: if fm.phase.review_target() == Some(target) {
            "Under review"
        } else {
            "Latest submission"
        },
        text: under,
    });
    // Every earlier review of this artifact (objections and how they were answered: the doer's
    // resubmissions are the artifacts of the later rounds).
    let prior: Vec<&Entry> = all
        .iter()
        .filter(|e| {
            matches!(e.kind, Kind::Review | Kind::Correction)
                && e.target == Some(target)
                && !DOER_NOTES.contains(&e.section.as_str())
        })
        .collect();
    let mut text = prior
        .iter()
        .map(|e| e.markdown())
        .collect::<Vec<_>>()
        .join("\n");
    if text.is_empty() {
        text.push_str("None.\n");
    }
    parts.push(Part {
        title: "Reviews so far",
        text,
    });
    parts.extend(objections_part(fm, all));
    parts
}

/// The dissent stage's bundle (the consensus protocol's Task Spec bundle): TASK_SPEC (the goal
/// and the evidence), ARTIFACT (the submission the reviewers passed, with its pin); in a revision
/// cycle PRIOR_OBJECTIONS (the dissent's objections of the gate, as raised), RESOLUTIONS (the
/// doer's resolution entries), DIFF (the change from the submission the last dissent judged) and
/// IMPACTED_SURFACES (as the resolutions declare them). Nothing else: no doer notes, no reviews.
fn dissenter_parts(fm: &Frontmatter, doc: &Document, all: &[Entry], board: &str) -> Vec<Part> {
    let mut task = section_text(doc, "Goal").unwrap_or_else(|| "(no goal written)\n".into());
    if let Some(evidence) = section_text(doc, "Evidence") {
        task.push_str(&format!("\n### Evidence\n\n{evidence}"));
    }
    let mut parts = vec![Part {
        title: "TASK_SPEC",
        text: task,
    }];
    let Some(target) = current_target(fm) else {
        parts.push(Part {
            title: "ARTIFACT",
            text: "Nothing has been submitted yet.\n".into(),
        });
        return parts;
    };
    let counter = fm.counter(target);
    let (noun, unit) = target_noun(target);
    let current = entry::round(all, target, counter).0;
    let mut artifact = match current {
        Some(e) => e.markdown(),
        None => format!("{noun} {unit} {counter} has no entry.\n"),
    };
    if let Some(p) = fm.pin(target) {
        artifact.push_str(&format!(
            "\nPinned: {} sha256 `{}`; read exactly these bytes with `pair diff {}`.\n",
            p.kind.describe(),
            p.sha256,
            shell_word(board)
        ));
    }
    parts.push(Part {
        title: "ARTIFACT",
        text: artifact,
    });
    // A revision cycle: the last dissent on the gate judged an earlier submission.
    let Some(last) = fm
        .dissent
        .of_gate(target)
        .filter(|r| r.counter < counter)
        .last()
    else {
        return parts;
    };
    let prior: Vec<&crate::board::ledger::Objection> = fm
        .ledger
        .of_gate(target)
        .filter(|o| crate::law::dissent::raised_in_dissent(fm, o))
        .collect();
    let mut objections = String::new();
    let mut resolutions = String::new();
    let mut surfaces: Vec<String> = Vec::new();
    for o in &prior {
        for e in entry::of_objection(all, target, &o.id) {
            if e.label.starts_with("Objection ") {
                objections.push_str(&e.markdown());
                objections.push('\n');
            } else if e.label.starts_with("Resolution ") {
                resolutions.push_str(&e.markdown());
                resolutions.push('\n');
                for line in e.text.lines() {
                    if let Some(list) = line.trim().strip_prefix("Impacted surfaces:") {
                        for s in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                            if !surfaces.iter().any(|x| x == s) {
                                surfaces.push(s.to_string());
                            }
                        }
                    }
                }
            }
        }
    }
    let or_none = |s: String| {
        if s.is_empty() {
            "None.\n".to_string()
        } else {
            s
        }
    };
    parts.push(Part {
        title: "PRIOR_OBJECTIONS",
        text: or_none(objections),
    });
    parts.push(Part {
        title: "RESOLUTIONS",
        text: or_none(resolutions),
    });
    let diff = match (entry::round(all, target, last.counter).0, current) {
        _ if target == Target::Code => format!(
            "The follow-up's diff over the code {} judged is the artifact itself (`pair diff {}`).\n",
            last.counter,
            shell_word(board)
        ),
        (Some(before), Some(now)) => format!(
            "From {noun_lc} {unit} {} to {counter}:\n\n```diff\n{}```\n",
            last.counter,
            line_diff(&before.text, &now.text),
            noun_lc = noun.to_lowercase()
        ),
        _ => "The earlier submission has no entry to compare.\n".to_string(),
    };
    parts.push(Part {
        title: "DIFF",
        text: diff,
    });
    parts.push(Part {
        title: "IMPACTED_SURFACES",
        text: if surfaces.is_empty() {
            "None declared.\n".to_string()
        } else {
            surfaces
                .iter()
                .map(|s| format!("- {s}\n"))
                .collect::<String>()
        },
    });
    parts
}

/// A line diff of two texts (`-` removed, `+` added, ` ` kept), by their longest common
/// subsequence; texts over 2,000 lines are shown whole instead.
fn line_diff(a: &str, b: &str) -> String {
    let (x, y): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    if x.len() > 2000 || y.len() > 2000 {
        return format!("(too long to compare line by line: the new text follows)\n{b}\n");
    }
    let (n, m) = (x.len(), y.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if x[i] == y[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < n || j < m {
        if i < n && j < m && x[i] == y[j] {
            out.push_str(&format!(" {}\n", x[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+{}\n", y[j]));
            j += 1;
        } else {
            out.push_str(&format!("-{}\n", x[i]));
            i += 1;
        }
    }
    out
}

/// What a handoff hands over, from the brief's own data: the phase, the open review points
/// and objections (one line each), and the role's next step as the outgoing agent would be
/// told it. It goes into the handoff's Decisions record under the outgoing agent's summary.
pub(super) fn handoff_material(
    fm: &Frontmatter,
    outgoing: &str,
    place: &protocol::Place,
) -> String {
    let mut text = format!("#### Phase\n\n{}", phase_part(fm).text);
    let mut points = String::new();
    for t in Target::ALL {
        let r = protocol::round(fm, *t);
        if r.counter == 0 {
            continue;
        }
        let (noun, unit) = target_noun(*t);
        for id in r.changes_requested_by.iter().chain(&r.comment_by) {
            let v = fm.agent(id).and_then(|a| a.review(*t).verdict);
            points.push_str(&format!(
                "- {id}: {} on {} {unit} {}\n",
                v.map_or("?", Verdict::as_str),
                noun.to_lowercase(),
                r.counter
            ));
        }
        if fm.phase.review_target() == Some(*t) && !r.pending.is_empty() {
            points.push_str(&format!(
                "- verdicts still due on {} {unit} {}: {}\n",
                noun.to_lowercase(),
                r.counter,
                r.pending.join(", ")
            ));
        }
    }
    text.push_str("\n#### Open review points\n\n");
    text.push_str(if points.is_empty() {
        "None: no current verdict asks for changes or comments.\n"
    } else {
        &points
    });
    let open: Vec<String> = fm
        .ledger
        .objections
        .iter()
        .filter(|o| o.state.is_unsettled())
        .map(|o| {
            format!(
                "- {} — {} {} on the {} gate (round {}, by {}): {}\n",
                o.id,
                o.state,
                o.severity,
                o.gate,
                o.round,
                o.by,
                one_line(&o.title)
            )
        })
        .collect();
    if !open.is_empty() {
        text.push_str("\n#### Open objections\n\n");
        text.push_str(&open.concat());
    }
    let next = protocol::next(fm, outgoing, place);
    text.push_str(&format!(
        "\n#### Next step of the role (as {outgoing} was told it)\n\n{}\n",
        next.action
    ));
    text
}

/// The Decisions record of the latest handoff to `agent`, when one is pending to it or it was
/// the last one it acknowledged: the part of the brief that carries the outgoing agent's
/// summary.
fn handoff_part(fm: &Frontmatter, all: &[Entry], agent: &str) -> Option<Part> {
    let h = crate::board::handoff::pending_to(fm, agent).or_else(|| {
        fm.handoffs
            .iter()
            .rev()
            .find(|h| h.state == crate::board::handoff::State::Acknowledged && h.to == agent)
    })?;
    let wanted = format!("{} role to {agent}", h.role);
    let e = all.iter().rev().find(|e| {
        e.kind == Kind::Record
            && e.label == "Handoff"
            && e.agent.as_deref() == Some(h.from.as_str())
            && e.heading.contains(&wanted)
    })?;
    let state = match h.state {
        crate::board::handoff::State::Pending => format!(
            "{} hands the {} role over to you; it is {}'s until you acknowledge it (`pair \
             acknowledge --agent {agent}`).",
            h.from, h.role, h.from
        ),
        crate::board::handoff::State::Acknowledged => {
            format!("You took the {} role over from {}.", h.role, h.from)
        }
    };
    Some(Part {
        title: "Handoff",
        text: format!("{state}\n\n{}\n", e.text),
    })
}
