//! The whose-turn report shared by `poll` and `status` (SPEC §8), as JSON and as text.

use serde::Serialize;

use crate::document::Section;
use crate::model::{Frontmatter, Phase, Role, Status, Target};
use crate::protocol::{self, Next, NextActor};

/// The JSON schema version of every `--json` object.
pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Counters {
    pub analysis_revision: u32,
    pub plan_revision: u32,
    pub red_test_round: u32,
    pub code_review_round: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReviewBlock {
    pub target: Target,
    pub counter: u32,
    pub diff_scope: Option<&'static str>,
    pub complete: bool,
    pub approved: bool,
    pub changes_requested: bool,
    pub comment_only: bool,
    pub pending: Vec<String>,
    pub missing: Vec<String>,
    pub stale: Vec<String>,
    pub reviewers: ReviewerLists,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReviewerLists {
    pub approved: Vec<String>,
    pub changes_requested: Vec<String>,
    pub comment: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AgentBlock {
    pub id: String,
    pub role: Option<Role>,
    pub status: Option<Status>,
    pub registered: bool,
    pub required: bool,
}

/// Everything `poll` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Turn {
    pub schema: u32,
    pub path: String,
    pub phase: Phase,
    pub terminal: bool,
    pub phase_updated_at: String,
    pub work_type: String,
    pub yolo: bool,
    pub counters: Counters,
    pub required_reviewers: Vec<String>,
    pub registered_reviewers: Vec<String>,
    pub review: Option<ReviewBlock>,
    pub agent: AgentBlock,
    pub next: Next,
    pub your_turn: bool,
}

impl Turn {
    pub fn new(fm: &Frontmatter, agent: &str, board: &str) -> Turn {
        let review = fm.phase.review_target().map(|t| {
            let r = protocol::round(fm, t);
            ReviewBlock {
                target: t,
                counter: r.counter,
                diff_scope: fm.phase.diff_scope(),
                complete: r.complete,
                approved: r.approved,
                changes_requested: r.changes_requested,
                comment_only: r.comment_only,
                pending: r.pending,
                missing: r.missing,
                stale: r.stale,
                reviewers: ReviewerLists {
                    approved: r.approved_by,
                    changes_requested: r.changes_requested_by,
                    comment: r.comment_by,
                },
            }
        });
        let next = protocol::next(fm, agent, board);
        let a = fm.agent(agent);
        Turn {
            schema: SCHEMA,
            path: board.to_string(),
            phase: fm.phase,
            terminal: fm.phase.is_terminal(),
            phase_updated_at: fm.phase_updated_at.to_string(),
            work_type: fm.work_type.clone(),
            yolo: fm.yolo,
            counters: Counters {
                analysis_revision: fm.analysis_revision,
                plan_revision: fm.plan_revision,
                red_test_round: fm.red_test_round,
                code_review_round: fm.code_review_round,
            },
            required_reviewers: fm.required_reviewers.clone(),
            registered_reviewers: fm.reviewers().into_iter().map(String::from).collect(),
            review,
            agent: AgentBlock {
                id: agent.to_string(),
                role: a.map(|a| a.role),
                status: a.map(|a| a.status),
                registered: a.is_some(),
                required: fm.required_reviewers.iter().any(|r| r == agent),
            },
            your_turn: next.handoff_to.iter().any(|h| h == agent),
            next,
        }
    }

    /// Exit code of `poll`: 0 your turn, 10 not, 11 terminal.
    pub fn exit_code(&self) -> i32 {
        if self.terminal {
            11
        } else if self.your_turn {
            0
        } else {
            10
        }
    }

    /// A few lines for a human.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "phase       {}{}\n",
            self.phase,
            if self.terminal { " (terminal)" } else { "" }
        ));
        let who = match self.next.actor {
            NextActor::None => "nobody".to_string(),
            NextActor::User => format!("the user, via {}", self.next.handoff_to.join(", ")),
            _ => self.next.handoff_to.join(", "),
        };
        out.push_str(&format!(
            "next        {who}{}\n",
            if self.your_turn {
                format!(" (your turn, {})", self.agent.id)
            } else {
                String::new()
            }
        ));
        out.push_str(&format!("action      {}\n", self.next.action));
        let c = &self.counters;
        out.push_str(&format!(
            "counters    analysis {} · plan {} · red test {} · code {}\n",
            c.analysis_revision, c.plan_revision, c.red_test_round, c.code_review_round
        ));
        out.push_str(&format!(
            "reviewers   required: {} · registered: {}\n",
            list_or_none(&self.required_reviewers),
            list_or_none(&self.registered_reviewers)
        ));
        if let Some(r) = &self.review {
            out.push_str(&format!(
                "review      {} {}{}: approved [{}] changes [{}] comment [{}] pending [{}]\n",
                r.target,
                r.counter,
                r.diff_scope
                    .map(|s| format!(" ({s} diff)"))
                    .unwrap_or_default(),
                r.reviewers.approved.join(", "),
                r.reviewers.changes_requested.join(", "),
                r.reviewers.comment.join(", "),
                r.pending.join(", ")
            ));
        }
        out
    }
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

/// One section in the `status` report.
#[derive(Debug, Clone, Serialize)]
pub struct SectionInfo {
    pub name: String,
    pub line: u32,
    pub entries: usize,
}

impl From<&Section> for SectionInfo {
    fn from(s: &Section) -> Self {
        SectionInfo {
            name: s.name.clone(),
            line: s.line,
            entries: s.entries,
        }
    }
}
