//! `pair init`: create a blackboard from the built-in template (or `--template FILE`).

use serde_json::json;

use super::{Outcome, read_text, shown};
use crate::board::document::{Document, check_note};
use crate::board::frontmatter::{
    Agent, Audit, Phase, Role, Status, Target, Timestamp, is_work_type,
};
use crate::cli::InitArgs;
use crate::error::{Error, Result};
use crate::law::protocol;
use crate::law::validate;
use crate::render::report::SCHEMA;
use crate::store::Session;
use crate::store::{self, Expect};
use crate::text::escape;

/// The built-in template, embedded so the binary works on its own.
pub const TEMPLATE: &str = include_str!("../../templates/blackboard.md");

/// `--reviewers`: valid ids, not the doer, each once, in the order given.
fn reviewer_list(a: &InitArgs) -> Result<Vec<String>> {
    ids("--reviewers", &a.reviewers, &a.doer)
}

/// `--reviewer-pool` and `--reviews`: the pool's members (as `--reviewers`) and 1 ≤ N ≤ members.
fn reviewer_pool(a: &InitArgs) -> Result<Option<crate::board::pool::Pool>> {
    let members = ids("--reviewer-pool", &a.reviewer_pool, &a.doer)?;
    if members.is_empty() {
        return Ok(None);
    }
    let reviews = a.reviews.unwrap_or(1);
    if reviews == 0 || reviews as usize > members.len() {
        return Err(Error::Usage(format!(
            "--reviews: expected from 1 to {} (the pool's members), found {reviews}",
            members.len()
        )));
    }
    if let Some(r) = members
        .iter()
        .find(|m| a.reviewers.iter().any(|x| x.trim() == *m))
    {
        return Err(Error::Usage(format!(
            "--reviewer-pool: {r:?} is also in --reviewers; a named reviewer reviews every round, \
             a pool member the rounds it claims: name it in one of them"
        )));
    }
    Ok(Some(crate::board::pool::Pool { members, reviews }))
}

fn ids(flag: &str, list: &[String], doer: &str) -> Result<Vec<String>> {
    let mut reviewers: Vec<String> = Vec::new();
    for r in list {
        let r = r.trim();
        if r.is_empty() {
            continue;
        }
        super::agent_arg(flag, r)?;
        if r == doer {
            return Err(Error::Usage(format!(
                "{flag}: {r:?} is the doer; the doer cannot review its own work"
            )));
        }
        if !reviewers.iter().any(|x| x == r) {
            reviewers.push(r.to_string());
        }
    }
    Ok(reviewers)
}

/// `--require-check NAME=CMD`: each name once.
fn required_checks(a: &InitArgs) -> Result<Vec<crate::board::checks::RequiredCheck>> {
    let mut out: Vec<crate::board::checks::RequiredCheck> = Vec::new();
    for s in &a.require_check {
        let c = crate::board::checks::parse_requirement(s).map_err(Error::Usage)?;
        if out.iter().any(|o| o.name == c.name) {
            return Err(Error::Usage(format!(
                "--require-check: the check {:?} is named twice",
                c.name
            )));
        }
        out.push(c);
    }
    Ok(out)
}

/// The goal from `--goal` or `--goal-file`, if it can be appended as it is.
fn goal_text(a: &InitArgs) -> Result<Option<String>> {
    let goal = match (&a.goal, &a.goal_file) {
        (Some(g), _) => Some(g.clone()),
        (None, Some(f)) => Some(read_text(f, "--goal-file")?),
        (None, None) => None,
    };
    if let Some(g) = &goal
        && let Err(p) = check_note(g)
    {
        return Err(Error::Usage(format!(
            "the goal cannot be used: {}",
            p.message
        )));
    }
    Ok(goal)
}

pub fn run(a: InitArgs, s: &Session) -> Result<Outcome> {
    super::agent_arg("--doer", &a.doer)?;
    if !is_work_type(&a.work_type) {
        return Err(Error::Usage(format!(
            "--work-type {:?} is not valid: use feature, debugging, refactor, docs, spike or \
             another lower-case word matching [a-z][a-z0-9_-]*",
            a.work_type
        )));
    }
    let reviewers = reviewer_list(&a)?;
    let pool = reviewer_pool(&a)?;
    let goal = match &a.from_review {
        Some(review) => Some(super::debate::goal_from(review, s)?),
        None => goal_text(&a)?,
    };
    let required_checks = required_checks(&a)?;
    // The boards it waits for exist, and waiting for them closes no cycle.
    crate::store::depend::check_new(&a.board, &a.after)?;
    let dissent_gates = match &a.dissent {
        Some(g) => crate::board::dissent::parse_gates(g)
            .map_err(|e| Error::Usage(format!("--dissent: {e}")))?,
        None => Vec::new(),
    };
    let sla = crate::board::sla::parse_assignments(&a.sla)
        .map_err(|e| Error::Usage(format!("--sla: {e}")))?;

    let (template_name, template) = match &a.template {
        Some(path) => (shown(path), super::read_input(path, "--template")?),
        None => (
            "the built-in template".to_string(),
            TEMPLATE.as_bytes().to_vec(),
        ),
    };
    let valid = validate::check_bytes(&template)
        .map_err(|r| Error::invalid(std::path::Path::new(&template_name), r.errors, false))?;
    let mut doc: Document = valid.doc;
    let mut fm = valid.parsed.fm;

    // A template may be an old blackboard: keep its shape and body, not its state.
    let Some(doer_extra) = fm
        .agents
        .iter()
        .find(|(_, ag)| ag.role == Role::Doer)
        .map(|(_, ag)| ag.extra.clone())
    else {
        return Err(Error::Usage(format!("{template_name} has no doer agent")));
    };
    let mut doer_agent = Agent::new(Role::Doer, Status::Draft);
    doer_agent.extra = doer_extra;
    fm.agents = vec![(a.doer.clone(), doer_agent)];
    for t in Target::ALL {
        *fm.counter_mut(*t) = 0;
    }
    fm.no_review = false;
    fm.worktree = None;
    fm.blocked_from = None;
    fm.audit = Audit::default();
    fm.phase = Phase::Draft;
    // A new board is of the format asked for (the newest by default), whatever the template's;
    // the journal's seal is set by the write that creates it.
    let format = if a.signed {
        crate::board::format::SIGNED
    } else {
        a.format
    };
    fm.format = (format > 1).then_some(format);
    fm.journal = None;
    fm.work_type = a.work_type.clone();
    let debugging = a.work_type == "debugging";
    fm.rca_required = fm.rca_required || a.rca || debugging;
    fm.red_test_required = fm.red_test_required || a.red_test || debugging;
    fm.yolo = fm.yolo || a.yolo;
    fm.independent_review = fm.independent_review || a.independent_review;
    fm.required_reviewers = reviewers;
    if pool.is_some() {
        fm.pool = pool;
    }
    fm.check_runs = Vec::new();
    fm.after = a.after.clone();
    if !sla.is_empty() {
        fm.sla = crate::board::sla::sorted(sla);
    }
    if !required_checks.is_empty() {
        fm.required_checks = required_checks;
    }
    // The objection ledger: a round cap opts the board in (a template's ledger is not carried).
    fm.ledger = crate::board::ledger::Ledger {
        max_rounds: a.max_rounds,
        ..Default::default()
    };

    // The dissent stage (a template's is not carried, like its ledger).
    fm.dissent = crate::board::dissent::Dissent {
        gates: dissent_gates,
        every_cycle: a.dissenter_every_cycle,
        rounds: Vec::new(),
    };

    if !(debugging || fm.rca_required) {
        doc.remove_empty_section("Root Cause Analysis");
    }
    if !(debugging || fm.red_test_required) {
        doc.remove_empty_section("Red Tests");
    }
    if let Some(g) = &goal {
        let g = crate::board::document::normalize_newlines(g);
        if !doc.append("Goal", &g) {
            return Err(Error::Usage(format!(
                "{template_name} has no usable `## Goal` section to write the goal into"
            )));
        }
    }

    let opts = super::write_options(
        "init",
        a.timeout,
        Some(a.doer.clone()),
        (&a.usage).try_into()?,
    )?;
    let written = store::update(&a.board, Expect::Absent, &opts, s, |_| {
        // The creation time is taken under the lock, like every write's.
        fm.phase_updated_at = Timestamp::now();
        let bytes = doc.render(&fm.emit()).into_bytes();
        // A template's body must agree with the new frontmatter too (an old board's entries
        // with its counters set back to 0 would not).
        let valid = validate::check_content(&bytes)
            .map_err(|r| Error::invalid(&a.board, r.errors, true))?;
        Ok(store::Built {
            bytes,
            parsed: Some(valid.parsed),
            old: None,
        })
    })?;
    let fm = &written.parsed.fm;
    let board = shown(&a.board);
    let next = protocol::next(fm, &a.doer, &super::place(&a.board, fm));
    let json = json!({
        "schema": SCHEMA,
        "path": board,
        "created": true,
        "sha256": written.new_sha256,
        "phase": fm.phase,
        "work_type": fm.work_type,
        "rca_required": fm.rca_required,
        "red_test_required": fm.red_test_required,
        "yolo": fm.yolo,
        "independent_review": fm.independent_review,
        "doer": a.doer,
        "required_reviewers": fm.required_reviewers,
        "reviewer_pool": fm.pool.as_ref().map(|p| json!({"members": p.members, "reviews": p.reviews})),
        "dissent_gates": fm.dissent.gates,
        "dissent_every_cycle": fm.dissent.every_cycle,
        "after": fm.after,
        "required_checks": fm.required_checks.iter().map(|c| json!({"name": c.name, "command": c.command})).collect::<Vec<_>>(),
        "next": next,
    });
    let text = format!(
        "created {} (phase DRAFT, doer {}, work type {}{}{})\nnext: {}\n",
        escape(&board),
        a.doer,
        fm.work_type,
        if fm.rca_required {
            ", RCA required"
        } else {
            ""
        },
        if fm.red_test_required {
            ", red test required"
        } else {
            ""
        },
        next.action
    );
    let mut out = Outcome::ok(json, text);
    out.warnings = written.warnings;
    Ok(out)
}
