//! The whose-turn report shared by `poll` and `status` (SPEC §8), as JSON and as text.

use serde::Serialize;

use crate::board::field::Field;
use crate::board::frontmatter::{Frontmatter, Phase, Role, Status, Target, Verdict};
use crate::law::protocol::{self, Next, NextActor, Place};
use crate::text::escape;
use crate::text::shell_line;

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
    pub diff_scope: Option<crate::law::protocol::DiffScope>,
    /// The command that shows the diff under review (code reviews with a recorded worktree).
    pub diff_command: Option<Vec<String>>,
    pub complete: bool,
    pub approved: bool,
    pub changes_requested: bool,
    pub comment_only: bool,
    /// The round's reviews no member of the reviewer pool has claimed yet (0 without a pool).
    pub unclaimed: u32,
    pub pending: Vec<String>,
    pub missing: Vec<String>,
    pub stale: Vec<String>,
    pub reviewers: ReviewerLists,
    /// The artifact the round is about, as its submission pinned it (null: not pinned).
    pub artifact: Option<crate::board::frontmatter::Pin>,
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

/// A role offered by one agent to another and not yet acknowledged.
#[derive(Debug, Clone, Serialize)]
pub struct HandoffBlock {
    pub role: crate::board::frontmatter::Role,
    pub from: String,
    pub to: String,
}

/// A board's reviewer pool as `poll` and `status` report it: its members, the reviews a round
/// asks of it, and the members who took the board's round.
#[derive(Debug, Clone, Serialize)]
pub struct PoolBlock {
    pub members: Vec<String>,
    pub reviews: u32,
    /// The members who took the round ([`Frontmatter::round_target`]); empty outside one.
    pub taken_by: Vec<String>,
}

impl PoolBlock {
    fn of(fm: &Frontmatter) -> Option<PoolBlock> {
        let p = fm.pool.as_ref()?;
        Some(PoolBlock {
            members: p.members.clone(),
            reviews: p.reviews,
            taken_by: fm
                .round_target()
                .map(|t| fm.pool_takers(t))
                .unwrap_or_default(),
        })
    }
}

/// What `poll --until PHASE` waits for (see [`Turn::until`]).
#[derive(Debug, Clone, Serialize)]
pub struct Until {
    pub phase: Phase,
    pub reached: bool,
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
    pub rca_required: bool,
    pub red_test_required: bool,
    pub no_review: bool,
    pub worktree: Option<String>,
    pub blocked_from: Option<Phase>,
    pub counters: Counters,
    pub required_reviewers: Vec<String>,
    pub registered_reviewers: Vec<String>,
    /// The reviewer pool (`{members, reviews, taken_by}`), left out on a board without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolBlock>,
    /// Who is required in the board's round, for the text (the pool's takers included).
    #[serde(skip)]
    pub required_text: String,
    /// The pending handoff of a role (`{role, from, to}`), or null (also on a finished board,
    /// where an offer never acknowledged is moot).
    pub handoff: Option<HandoffBlock>,
    pub review: Option<ReviewBlock>,
    pub agent: AgentBlock,
    pub next: Next,
    pub your_turn: bool,
    /// `poll --until PHASE`: the phase waited for past COMMITTED, and whether the board is
    /// there (or past it, or stopped elsewhere: then `reached` is false and the wait is over).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<Until>,
    /// The boards this one waits for, with each one's phase and standing (left out when it
    /// waits for none), see [`crate::law::depend`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waits_for: Vec<crate::law::depend::Dep>,
    /// Whether the board uses the objection ledger, and its open items, gates and stop reason.
    pub objections: crate::board::ledger::Summary,
    /// The ledger in one line, for the text output.
    #[serde(skip)]
    pub ledger_line: String,
    /// Whether the report is for the agent who asked (`--agent`), or read by a third person
    /// (`status` without `--agent`, from the doer's point of view): "your turn" or "doer's
    /// turn" in the text.
    #[serde(skip)]
    pub asked_by_agent: bool,
}

/// The command that prints the diff under review exactly as pinned (see
/// [`crate::repo::artifact::review_diff_command`]): from the published commit on a git board's
/// remote, else from the recorded worktree. `None` outside a code review.
pub fn review_diff_command(fm: &Frontmatter, target: Target, board: &str) -> Option<Vec<String>> {
    let scope = fm.phase.diff_scope()?;
    let pin = fm.pin(target);
    let url = crate::store::location::Location::git(std::path::Path::new(board))
        .ok()
        .flatten()
        .map(|g| g.url);
    let published = match (pin.and_then(|p| p.published.as_ref()), &url) {
        (Some(p), Some(u)) => Some((u.as_str(), p.refname.as_str(), p.commit.as_str())),
        _ => None,
    };
    crate::repo::artifact::review_diff_command(
        published,
        fm.worktree.as_deref(),
        scope == protocol::DiffScope::Staged,
        fm.audit.base_sha.as_deref(),
    )
}

/// The boards waited for, each with its phase and standing: `a (DRAFT, waiting), b
/// (COMMITTED, released)`.
pub fn waits_text(deps: &[crate::law::depend::Dep]) -> String {
    deps.iter()
        .map(|d| {
            let state = serde_json::to_value(d.state)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            match d.phase {
                Some(p) => format!("{} ({p}, {state})", d.board),
                None => format!("{} ({state})", d.board),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Turn {
    /// The report for `agent`: `board` is the path as given, `place` where the commands of
    /// `next` find it.
    pub fn new(fm: &Frontmatter, agent: &str, board: &str, place: &protocol::Place) -> Turn {
        let review = fm.phase.review_target().map(|t| {
            let r = protocol::round(fm, t);
            ReviewBlock {
                target: t,
                counter: r.counter,
                diff_scope: fm.phase.diff_scope(),
                diff_command: review_diff_command(fm, t, board),
                complete: r.complete,
                approved: r.approved,
                changes_requested: r.changes_requested,
                comment_only: r.comment_only,
                unclaimed: r.unclaimed,
                pending: r.pending,
                missing: r.missing,
                stale: r.stale,
                reviewers: ReviewerLists {
                    approved: r.approved_by,
                    changes_requested: r.changes_requested_by,
                    comment: r.comment_by,
                },
                artifact: fm.pin(t).cloned(),
            }
        });
        let next = protocol::next(fm, agent, place);
        let a = fm.agent(agent);
        Turn {
            schema: SCHEMA,
            path: board.to_string(),
            phase: fm.phase,
            terminal: fm.phase.is_terminal(),
            phase_updated_at: fm.phase_updated_at.to_string(),
            work_type: fm.work_type.clone(),
            yolo: fm.yolo,
            rca_required: fm.rca_required,
            red_test_required: fm.red_test_required,
            no_review: fm.no_review,
            worktree: fm.worktree.clone(),
            blocked_from: fm.blocked_from,
            counters: Counters {
                analysis_revision: fm.analysis_revision,
                plan_revision: fm.plan_revision,
                red_test_round: fm.red_test_round,
                code_review_round: fm.code_review_round,
            },
            required_reviewers: fm.required_reviewers.clone(),
            registered_reviewers: fm.reviewers().into_iter().map(String::from).collect(),
            pool: PoolBlock::of(fm),
            required_text: crate::board::pool::required_text(fm),
            handoff: crate::law::handoff::live_pending(fm).map(|h| HandoffBlock {
                role: h.role,
                from: h.from.clone(),
                to: h.to.clone(),
            }),
            review,
            agent: AgentBlock {
                id: agent.to_string(),
                role: a.map(|a| a.role),
                status: a.map(|a| a.status),
                registered: a.is_some(),
                required: fm.is_required_now(agent),
            },
            your_turn: next.handoff_to.iter().any(|h| h == agent),
            until: None,
            next,
            waits_for: place.waits.clone(),
            objections: crate::board::ledger::summary_of(fm),
            ledger_line: crate::board::ledger::line(fm),
            asked_by_agent: true,
        }
    }

    /// Exit code of `poll`: 0 your turn, 10 not, 11 terminal, 12 blocked.
    pub fn exit_code(&self) -> i32 {
        use crate::error::exit;
        if self.short_of_until() {
            exit::NOT_YOUR_TURN
        } else if self.phase == Phase::Blocked {
            exit::BLOCKED
        } else if self.terminal {
            exit::TERMINAL
        } else if self.your_turn {
            exit::OK
        } else {
            exit::NOT_YOUR_TURN
        }
    }

    /// Whether the board is terminal but still on its way to the phase `--until` waits for:
    /// not the end of that wait.
    pub fn short_of_until(&self) -> bool {
        self.until
            .as_ref()
            .is_some_and(|u| protocol::short_of(self.phase, u.phase))
    }

    /// Wait past COMMITTED for `until` (`poll --until`): while the board is short of it, the
    /// agent's step is the same wait again.
    pub fn wait_until(&mut self, fm: &Frontmatter, agent: &str, until: Phase, place: &Place) {
        self.until = Some(Until {
            phase: until,
            reached: self.phase == until || protocol::short_of(until, self.phase),
        });
        if self.short_of_until() {
            self.next = protocol::wait_until(fm, agent, until, place);
        }
    }

    /// A few lines for a human, without colour.
    pub fn render(&self) -> String {
        self.render_styled(&Style::plain())
    }

    /// A few lines for a human: everything `poll` says.
    pub fn render_styled(&self, style: &Style) -> String {
        let mut out = self.render_head(style);
        // `poll` reads only the frontmatter: who blocked and why are in the body.
        if let Some(from) = self.blocked_from {
            out.push_str(&format!(
                "blocked     from {from} (`pair status` shows who blocked it and why)\n"
            ));
        }
        out.push_str(&self.render_review(style));
        out.push_str(&format!("ledger      {}\n", escape(&self.ledger_line)));
        out.push_str(&self.render_where());
        out
    }

    /// The worktree and, in a code review, the command that shows the diff under review.
    pub fn render_where(&self) -> String {
        let mut out = String::new();
        if let Some(w) = &self.worktree {
            // After the clean-up the worktree is gone: named as what it was.
            out.push_str(&format!(
                "worktree    {}{}\n",
                escape(w),
                if self.phase == Phase::CleanedUp {
                    " (removed at the clean-up)"
                } else {
                    ""
                }
            ));
        }
        if let Some(cmd) = self.review.as_ref().and_then(|r| r.diff_command.as_ref()) {
            out.push_str(&format!("diff        {}\n", escape(&shell_line(cmd))));
        }
        out
    }

    /// Phase, whose turn, the action and the counters.
    pub fn render_head(&self, style: &Style) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "phase       {}{}\n",
            style.phase(self.phase.as_str()),
            match self.phase {
                // Terminal, but not the end: the doer resumes it.
                Phase::Blocked =>
                    " (nobody's turn until the doer runs `pair unblock`, when the \
                                   user says the work can resume)",
                _ if self.terminal => " (terminal)",
                _ => "",
            }
        ));
        let who = match self.next.actor {
            NextActor::None => "nobody".to_string(),
            NextActor::User => format!("the user, via {}", self.next.handoff_to.join(", ")),
            _ => self.next.handoff_to.join(", "),
        };
        out.push_str(&format!(
            "next        {who}{}\n",
            if self.your_turn && self.asked_by_agent {
                style.bold(&format!(" (your turn, {})", self.agent.id))
            } else if self.your_turn {
                style.bold(&format!(" ({}'s turn)", self.agent.id))
            } else {
                String::new()
            }
        ));
        out.push_str(&format!("action      {}\n", escape(&self.next.action)));
        if !self.waits_for.is_empty() {
            out.push_str(&format!(
                "waits for   {}\n",
                escape(&waits_text(&self.waits_for))
            ));
        }
        if let Some(o) = &self.next.optional {
            out.push_str(&format!("optional    {}\n", escape(&o.action)));
        }
        let c = &self.counters;
        out.push_str(&format!(
            "counters    analysis {} · plan {} · red test {} · code {}\n",
            c.analysis_revision, c.plan_revision, c.red_test_round, c.code_review_round
        ));
        if let Some(h) = &self.handoff {
            out.push_str(&format!(
                "handoff     {} hands the {} role over to {}: pending until {} acknowledges\n",
                h.from, h.role, h.to, h.to
            ));
        }
        out
    }

    /// The reviewer lists and, in a reviewable phase, the state of the round.
    pub fn render_review(&self, style: &Style) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "reviewers   required: {} · registered: {}\n",
            self.required_text,
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
                style.green(&r.reviewers.approved.join(", ")),
                style.red(&r.reviewers.changes_requested.join(", ")),
                style.yellow(&r.reviewers.comment.join(", ")),
                r.pending.join(", ")
            ));
            if let Some(p) = &r.artifact {
                out.push_str(&format!(
                    "artifact    {} sha256 {} (`pair diff` prints it)\n",
                    p.kind.describe(),
                    p.sha256
                ));
            }
        }
        out
    }
}

/// Who blocked the work, when, from which phase and why: the last `Blocked — from PHASE —
/// AGENT — TIME` (or `Decision — GATE — defer — AGENT — TIME`) entry of `## Decisions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block {
    pub from: Option<Phase>,
    pub by: Option<String>,
    pub at: Option<String>,
    pub reason: Option<String>,
}

impl Block {
    /// The block of a BLOCKED board: `blocked_from` from the frontmatter, the rest from the
    /// last block entry in `## Decisions` (left null when the body has none).
    pub fn of(fm: &Frontmatter, doc: &crate::board::document::Document) -> Option<Block> {
        if fm.phase != Phase::Blocked {
            return None;
        }
        let mut block = Block {
            from: fm.blocked_from,
            by: None,
            at: None,
            reason: None,
        };
        let Some(section) = doc
            .sections()
            .into_iter()
            .rev()
            .find(|s| s.name == crate::board::entry::DECISIONS)
        else {
            return Some(block);
        };
        let text = &doc.body[section.start..section.end.min(doc.body.len())];
        let mut entry: Option<(String, String, String)> = None;
        let mut reason = String::new();
        let mut found = None;
        for (_, line, kind) in crate::board::document::lines(text) {
            let line = line.trim_end_matches(['\n', '\r']);
            if let crate::board::document::LineKind::Heading(level) = kind {
                if level <= 3
                    && let Some(e) = entry.take()
                {
                    found = Some((e, std::mem::take(&mut reason)));
                }
                let heading = line.trim_start_matches('#').trim();
                if level == 3
                    && let Some(rest) = heading.strip_prefix("Blocked — from ")
                {
                    let parts: Vec<&str> = rest.split(" — ").collect();
                    if let [_, by, at] = parts[..] {
                        entry = Some((rest.to_string(), by.to_string(), at.to_string()));
                    }
                }
                // A gate's deferral blocks the work too (`Decision — GATE — defer — AGENT —
                // TIME`).
                if level == 3
                    && let Some(rest) = heading.strip_prefix("Decision — ")
                {
                    let parts: Vec<&str> = rest.split(" — ").collect();
                    if let [_, "defer", by, at] = parts[..] {
                        entry = Some((rest.to_string(), by.to_string(), at.to_string()));
                    }
                }
                continue;
            }
            if entry.is_some() {
                reason.push_str(line);
                reason.push('\n');
            }
        }
        if let Some(e) = entry.take() {
            found = Some((e, reason));
        }
        if let Some(((_, by, at), reason)) = found {
            block.by = Some(by);
            block.at = Some(at);
            block.reason = Some(reason.trim().to_string()).filter(|r| !r.is_empty());
        }
        Some(block)
    }
}

/// Every top-level frontmatter field of the registry ([`Field::ALL`]) but `agents` (reported
/// apart), as JSON: the value as written, or null for an optional field left out. A field added
/// to the registry appears here by itself.
pub fn frontmatter_json(fm: &Frontmatter) -> serde_json::Value {
    let emitted = crate::board::yaml::parse(&fm.emit(), 0).ok();
    let entries: &[(String, crate::board::yaml::Node)] = match emitted.as_ref().map(|n| &n.value) {
        Some(crate::board::yaml::Value::Map(m)) => m,
        _ => &[],
    };
    let mut map = serde_json::Map::new();
    for f in Field::ALL.iter().filter(|f| **f != Field::Agents) {
        let value = entries
            .iter()
            .find(|(k, _)| k == f.name())
            .map_or(serde_json::Value::Null, |(_, n)| yaml_json(n));
        map.insert(f.name().to_string(), value);
    }
    serde_json::Value::Object(map)
}

fn yaml_json(n: &crate::board::yaml::Node) -> serde_json::Value {
    use crate::board::yaml::Value as Y;
    use serde_json::Value as J;
    match &n.value {
        Y::Null => J::Null,
        Y::Bool(b) => J::Bool(*b),
        Y::Int(i) => i64::try_from(*i)
            .map(J::from)
            .or_else(|_| u64::try_from(*i).map(J::from))
            .unwrap_or_else(|_| J::String(i.to_string())),
        Y::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Y::Str(s) => J::String(s.clone()),
        Y::Seq(items) => J::Array(items.iter().map(yaml_json).collect()),
        Y::Map(entries) => J::Object(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), yaml_json(v)))
                .collect(),
        ),
    }
}

/// The target whose verdicts matter now: the one under review, the one whose outcome the phase
/// shows, or (in a terminal or early phase) the latest one submitted.
pub fn current_target(fm: &Frontmatter) -> Option<Target> {
    fm.phase
        .review_target()
        .or_else(|| fm.phase.requires_counter().map(|(t, _)| t))
        .or_else(|| {
            Target::ALL
                .iter()
                .rev()
                .copied()
                .find(|t| fm.counter(*t) > 0)
        })
}

/// The reviewer table of `status`: id, required or not, status, and the verdict on the current
/// revision of the current target (or why there is none).
pub fn reviewer_table(fm: &Frontmatter, style: &Style) -> String {
    let target = current_target(fm);
    let mut ids: Vec<String> = fm.reviewers().into_iter().map(String::from).collect();
    let required_now = fm.required_now();
    let members = fm
        .pool
        .as_ref()
        .map(|p| p.members.clone())
        .unwrap_or_default();
    for r in fm.required_reviewers.iter().chain(&members) {
        if !ids.contains(r) {
            ids.push(r.clone());
        }
    }
    let mut out = String::new();
    let heading = match target {
        Some(t) => format!(
            "reviewers   verdicts on {} {}\n",
            t.as_str().replace('_', " "),
            fm.counter(t)
        ),
        None => "reviewers   nothing submitted yet\n".to_string(),
    };
    out.push_str(&heading);
    if ids.is_empty() {
        out.push_str("  none registered or required\n");
        return out;
    }
    let width = ids.iter().map(|i| i.len()).max().unwrap_or(2).max(8);
    out.push_str(&style.dim(&format!(
        "  {:<width$}  {:<8}  {:<17}  {}",
        "id", "required", "status", "verdict"
    )));
    out.push('\n');
    for id in &ids {
        let required = required_now.contains(id);
        let agent = fm.agent(id);
        let status = agent
            .map(|a| a.status.as_str().to_string())
            .unwrap_or_else(|| "not registered".into());
        let verdict = match (agent, target) {
            (None, _) => style.dim("—"),
            (Some(_), None) => style.dim("—"),
            (Some(a), Some(t)) => {
                let r = a.review(t);
                let counter = fm.counter(t);
                match (r.reviewed, r.verdict) {
                    (Some(n), Some(v)) if n == counter => style.verdict(v),
                    (Some(n), Some(v)) => style.dim(&format!("stale ({v} on {n})")),
                    _ if required && fm.phase.is_reviewable() => style.yellow("pending"),
                    _ => style.dim("—"),
                }
            }
        };
        out.push_str(&format!(
            "  {}  {:<8}  {:<17}  {verdict}\n",
            style.agent(&format!("{id:<width$}")),
            if required {
                "yes"
            } else if fm.in_pool(id) {
                "pool"
            } else {
                "no"
            },
            status
        ));
    }
    out
}

/// ANSI styling for human output, on as `--color`, `NO_COLOR`, `CLICOLOR_FORCE`, `TERM` and
/// whether stdout is a terminal decide ([`crate::render::output::use_color`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    color: bool,
}

impl Style {
    /// No colour at all.
    pub fn plain() -> Style {
        Style { color: false }
    }

    /// Colour as decided for stdout ([`crate::render::output::color_stdout`]).
    pub fn for_stdout() -> Style {
        Style {
            color: crate::render::output::color_stdout(),
        }
    }

    pub fn is_colored(&self) -> bool {
        self.color
    }

    fn paint(&self, sgr: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{sgr}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    pub fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    pub fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }
    pub fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
    /// An agent id.
    pub fn agent(&self, s: &str) -> String {
        self.paint("36", s)
    }
    /// A verdict: green approved, red changes requested, yellow comment.
    pub fn verdict(&self, v: Verdict) -> String {
        match v {
            Verdict::Approved => self.green(v.as_str()),
            Verdict::ChangesRequested => self.red(v.as_str()),
            Verdict::Comment => self.yellow(v.as_str()),
        }
    }
    /// A phase name, coloured by kind: review yellow, outcome green/red, terminal bold.
    pub fn phase(&self, s: &str) -> String {
        let Ok(p) = s.parse::<Phase>() else {
            return s.to_string();
        };
        if p.is_terminal() {
            self.bold(s)
        } else if p.is_reviewable() {
            self.yellow(s)
        } else if s.ends_with("_CHANGES_REQUESTED") {
            self.red(s)
        } else if s.ends_with("_APPROVED") || p == Phase::ReadyToCommit {
            self.green(s)
        } else {
            self.bold(s)
        }
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

impl SectionInfo {
    /// The sections of a board as `status` lists them: a section's entries are its level-3
    /// headings, the journal's its records (one line each), so that `status` and `pair log`
    /// count the same.
    pub fn of(doc: &crate::board::document::Document) -> Vec<SectionInfo> {
        let records = crate::board::journal::section_lines(doc).map_or(0, |lines| lines.len());
        doc.sections_with_entries()
            .into_iter()
            .map(|(s, entries)| SectionInfo {
                entries: if s.name == crate::board::journal::SECTION {
                    records
                } else {
                    entries
                },
                name: s.name,
                line: s.line,
            })
            .collect()
    }
}

/// The checks at a glance for `pair status`: each required check and each check that ran, with
/// its latest result and the tree it ran on (`None`: neither).
pub fn status_line(fm: &crate::board::frontmatter::Frontmatter) -> Option<String> {
    let approved = crate::law::lifecycle::approved_tree(fm);
    let mut parts: Vec<String> = Vec::new();
    let mut names: Vec<&str> = fm.required_checks.iter().map(|c| c.name.as_str()).collect();
    for r in &fm.check_runs {
        if !names.contains(&r.name.as_str()) {
            names.push(&r.name);
        }
    }
    for name in names {
        let required = fm.required_checks.iter().any(|c| c.name == name);
        let run = fm.check_runs.iter().find(|r| r.name == name);
        let mut part = match run {
            None => format!("{name}: not run"),
            Some(r) => format!(
                "{name}: {} on {}{} ({})",
                if r.passed() { "passed" } else { "failed" },
                &r.tree[..r.tree.len().min(12)],
                if Some(r.tree.as_str()) == approved {
                    ", the code round's tree"
                } else {
                    ""
                },
                r.agent
            ),
        };
        if required {
            part.push_str(" [required]");
        }
        parts.push(part);
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}
