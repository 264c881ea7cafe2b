//! A review-only board (`pair init BOARD --review TARGET`): no doer; per round an enthusiast
//! records findings (`object`, then `verdict COMMENT`), an adversary disputes them and maps what
//! is safe (`challenge`, then `verdict COMMENT`), a judge confirms or dismisses each (`rule ID
//! confirm|dismiss`). `pair` closes each round, records its yield and computes the stop reason
//! ([`crate::law::debate`]); the target's pin is re-verified before the result is written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};

use super::{Outcome, read_text, shown, timeout};
use crate::board::debate::{
    self, DebateRole, Finding, FindingState, Review, Stage, Stop, TargetKind,
};
use crate::board::document::Document;
use crate::board::frontmatter::{Phase, Timestamp};
use crate::board::ledger::anchor;
use crate::cli::InitArgs;
use crate::cli::ledger::{ChallengeArgs, ObjectArgs, RuleArgs, RulingArg, SeverityArg};
use crate::cli::{PollArgs, ShowArgs, VerdictArg, VerdictArgs, WriteCommon};
use crate::error::{Error, Hint, Result};
use crate::law::debate as law;
use crate::law::protocol::{Next, NextActor};
use crate::law::validate;
use crate::render::report::SCHEMA;
use crate::store::{self, Depth, Expect, Session, Snapshot};
use crate::text::{escape, shell_word};

/// The body of a new review-only board.
const BODY: &str =
    "# Review\n\n## Target\n\n## Findings\n\n## Rounds\n\n## Result\n\n## Decisions\n";

/// The agents of the three roles when `--reviewers` does not name them.
const DEFAULT_ROLES: [&str; 3] = ["enthusiast", "adversary", "judge"];

/// The review of a board as read, with its frontmatter.
fn load(snap: &Snapshot) -> Result<(crate::board::frontmatter::Frontmatter, Review)> {
    let fm = snap.frontmatter()?.parsed.fm;
    let review = review_of(snap.path(), &fm)?;
    Ok((fm, review))
}

fn review_of(board: &Path, fm: &crate::board::frontmatter::Frontmatter) -> Result<Review> {
    match debate::of(fm) {
        Some(Ok(r)) => Ok(r),
        Some(Err(e)) => Err(Error::protocol(format!(
            "{}: the review is not readable: {e}",
            shown(board)
        ))),
        None => Err(Error::Usage(format!(
            "{}: not a review-only board (it has no `review:`)",
            shown(board)
        ))),
    }
}

/// `pair init BOARD --review TARGET`.
pub fn init(a: &InitArgs, target: &str, s: &Session) -> Result<Outcome> {
    let roles: Vec<String> = if a.reviewers.is_empty() {
        DEFAULT_ROLES.iter().map(|r| r.to_string()).collect()
    } else {
        a.reviewers.iter().map(|r| r.trim().to_string()).collect()
    };
    if roles.len() != 3 {
        return Err(Error::Usage(format!(
            "--reviewers on a review-only board names the enthusiast, the adversary and the judge \
             in that order (three ids), not {}",
            roles.len()
        )));
    }
    for r in &roles {
        super::agent_arg("--reviewers", r)?;
    }
    if roles[0] == roles[1] || roles[0] == roles[2] || roles[1] == roles[2] {
        return Err(Error::Usage(
            "--reviewers: the enthusiast, the adversary and the judge are three different agents"
                .into(),
        ));
    }
    let cwd = std::env::current_dir().map_err(|e| Error::Io {
        path: PathBuf::from("."),
        op: "find the current directory",
        source: e,
    })?;
    // A board that is there already is refused before the target is read.
    if !store::location::is_git(&a.board) && std::fs::symlink_metadata(&a.board).is_ok() {
        return Err(Error::Exists {
            path: a.board.clone(),
        });
    }
    let read = crate::repo::review::read(target, &cwd)?;
    let markdown = read.kind == TargetKind::File
        && read
            .root
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md"));
    let (mode, max_rounds) = law::mode(read.kind == TargetKind::File, markdown, read.lines);
    let review = Review {
        target: target.to_string(),
        kind: read.kind,
        root: read.root.to_string_lossy().into_owned(),
        files: read.files.clone(),
        sha256: read.sha256.clone(),
        lines: read.lines,
        mode,
        max_rounds,
        roles,
        round: 1,
        stage: Stage::Find,
        findings: vec![],
        yields: vec![],
        stop: None,
    };
    let valid = validate::check_bytes(super::init::TEMPLATE.as_bytes())
        .map_err(|r| Error::invalid(Path::new("the built-in template"), r.errors, false))?;
    let mut fm = valid.parsed.fm;
    fm.agents = vec![];
    fm.required_reviewers = vec![];
    fm.format = (a.format > 1).then_some(a.format);
    fm.journal = None;
    fm.phase = Phase::Draft;
    fm.work_type = "review".to_string();
    debate::set(&mut fm, &review);
    let mut doc = Document::parse(format!("---\n---\n{BODY}").as_bytes())
        .map_err(|e| crate::transaction::unsplittable(&a.board, "body", &e))?;
    add(
        &mut doc,
        "Target",
        &format!(
            "`{}` ({:?}, {} lines, {} file(s): {}), SHA-256 `{}`; {:?} mode, at most {} rounds.",
            target,
            review.kind,
            review.lines,
            review.files.len(),
            review.files.join(", "),
            review.sha256,
            review.mode,
            review.max_rounds
        ),
    );
    let opts = super::write_options(
        "init",
        a.timeout,
        Some(review.roles[0].clone()),
        (&a.usage).try_into()?,
    )?;
    let written = store::update(&a.board, Expect::Absent, &opts, s, |_| {
        fm.phase_updated_at = Timestamp::now();
        Ok(doc.render(&fm.emit()).into_bytes())
    })?;
    let json = json!({
        "schema": SCHEMA,
        "path": shown(&a.board),
        "created": true,
        "sha256": written.new_sha256,
        "review": review_json(&review),
    });
    let text = format!(
        "created review-only board {} ({} lines, {} mode, at most {} rounds; target SHA-256 {})\n\
         roles: enthusiast {}, adversary {}, judge {}\n",
        escape(&shown(&a.board)),
        review.lines,
        mode_word(&review),
        review.max_rounds,
        review.sha256,
        review.roles[0],
        review.roles[1],
        review.roles[2]
    );
    Ok(Outcome::ok(json, text))
}

fn mode_word(r: &Review) -> &'static str {
    match r.mode {
        debate::Mode::Full => "full",
        debate::Mode::Lightweight => "lightweight",
    }
}

fn review_json(r: &Review) -> Json {
    serde_json::to_value(r).unwrap_or(Json::Null)
}

/// A review-only board's review state, as `poll` and `status` print it: the target and its pin,
/// the mode, where the debate is and, once stopped, why (the findings are `show`'s).
pub fn review_state(r: &Review) -> Json {
    json!({
        "target": r.target,
        "kind": r.kind,
        "sha256": r.sha256,
        "lines": r.lines,
        "mode": r.mode,
        "max_rounds": r.max_rounds,
        "roles": r.roles,
        "round": r.round,
        "stage": r.stage,
        "stop_reason": r.stop.as_ref().map(|s| s.reason.as_str()),
        "stop": r.stop,
    })
}

/// The review state in one line, for `status`.
pub fn review_state_line(r: &Review) -> String {
    format!(
        "`{}` pinned {} · {} mode · round {} of at most {} · stage {}{}",
        escape(&r.target),
        r.sha256,
        mode_word(r),
        r.round,
        r.max_rounds,
        serde_json::to_value(r.stage)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        r.stop.as_ref().map_or(String::new(), |s| format!(
            " · stopped: {}{}",
            s.reason.as_str(),
            if s.drift {
                format!(" (target changed: now {})", s.target_sha256)
            } else {
                String::new()
            }
        )),
    )
}

/// What one write did, for its output.
struct Did {
    json: Json,
    text: String,
    warnings: Vec<String>,
}

/// One checked write of a review-only board: `edit` changes the review and the body (entries
/// appended to sections), under the lock, on the board as found.
fn write<F>(
    snap: Snapshot,
    common: &WriteCommon,
    operation: &str,
    s: &Session,
    mut edit: F,
) -> Result<(Did, Review, store::Written)>
where
    F: FnMut(&mut Review, &mut Document, Timestamp) -> Result<Did>,
{
    super::agent_arg("--agent", &common.agent)?;
    let opts = super::write_options(
        operation,
        common.timeout,
        Some(common.agent.clone()),
        (&common.usage).try_into()?,
    )?;
    let expect = match &common.expect_sha256 {
        Some(h) => Expect::Sha256(h.to_ascii_lowercase()),
        None => Expect::Present,
    };
    let mut out = None;
    let board = &snap.path().to_path_buf();
    let written = store::update_on(snap, expect, &opts, s, |current| {
        let Some(current) = current else {
            return Err(Error::Missing {
                path: board.to_path_buf(),
            });
        };
        let valid = validate::check_found(&current.bytes)
            .map_err(|r| Error::invalid(board, r.errors, false))?;
        let old = valid.parsed.fm;
        let mut review = review_of(board, &old)?;
        let mut doc = valid.doc;
        let now = Timestamp::now();
        let did = edit(&mut review, &mut doc, now)?;
        let mut fm = old.clone();
        debate::set(&mut fm, &review);
        if review.stage == Stage::Done {
            fm.phase = Phase::Stopped;
            fm.phase_updated_at = now;
        }
        let text = crate::board::rewrite::render(&doc.fm_text, &old, &fm).text;
        out = Some((did, review));
        Ok(doc.render(&text).into_bytes())
    })?;
    let (did, review) = out.ok_or_else(|| Error::protocol("internal error: no edit"))?;
    Ok((did, review, written))
}

fn outcome(board: &Path, did: Did, review: &Review, written: &store::Written) -> Outcome {
    let mut json = did.json;
    if let Some(o) = json.as_object_mut() {
        o.insert("schema".into(), json!(SCHEMA));
        o.insert("path".into(), json!(shown(board)));
        o.insert("sha256".into(), json!(written.new_sha256));
        o.insert("round".into(), json!(review.round));
        o.insert("stage".into(), json!(review.stage));
        o.insert(
            "stop_reason".into(),
            json!(review.stop.as_ref().map(|s| s.reason.as_str())),
        );
        o.insert("warnings".into(), json!(did.warnings));
    }
    let mut out = Outcome::ok(json, did.text);
    out.warnings = did.warnings;
    out
}

/// Refuse a command of the wrong role or stage, pointing to `poll`.
fn turn(review: &Review, agent: &str, role: DebateRole, what: &str) -> Result<()> {
    let poll = Hint::Run {
        command: "poll",
        args: vec!["--agent".into(), agent.to_string()],
    };
    if review.stage == Stage::Done {
        return Err(Error::refused(
            format!(
                "the debate has stopped ({}); {what} is no longer taken",
                review.stop.as_ref().map_or("", |s| s.reason.as_str())
            ),
            poll,
        ));
    }
    if review.role_of(agent) != Some(role) {
        return Err(Error::refused(
            format!(
                "{what} is the {}'s ({}); {agent:?} is {}",
                role.as_str(),
                review.agent(role),
                review.role_of(agent).map_or(
                    "not one of the debate's agents".to_string(),
                    |r| format!("the {}", r.as_str())
                )
            ),
            poll,
        ));
    }
    if law::stage_of(role) != review.stage {
        return Err(Error::refused(
            format!(
                "{what} belongs to the {:?} stage; round {} is in the {:?} stage",
                law::stage_of(role),
                review.round,
                review.stage
            ),
            poll,
        ));
    }
    Ok(())
}

fn text_arg(inline: &Option<String>, file: &Option<PathBuf>, flag: &str) -> Result<Option<String>> {
    Ok(match (inline, file) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(f)) => Some(read_text(f, flag)?),
        (None, None) => None,
    })
}

/// Text as an entry holds it (headings demoted).
fn entry_text(t: &str) -> String {
    crate::ops::note_text(t).0
}

/// Whether `written` (as an agent wrote it) names `file` (a file of the target).
fn names(review: &Review, file: &str, written: &str) -> bool {
    if file == written {
        return true;
    }
    let here = std::env::current_dir()
        .ok()
        .map(|d| d.join(written))
        .and_then(|p| std::fs::canonicalize(p).ok());
    match review.kind {
        TargetKind::File => {
            here.is_some_and(|p| p == Path::new(file)) || Path::new(file).ends_with(written)
        }
        _ => {
            let full = Path::new(&review.root).join(file);
            here.is_some_and(|p| std::fs::canonicalize(&full).is_ok_and(|f| f == p))
        }
    }
}

/// `pair object` on a review-only board: the enthusiast records a finding.
pub fn object(a: ObjectArgs, snap: Snapshot, s: &Session) -> Result<Outcome> {
    let parsed = anchor::parse(&a.anchor).map_err(|e| Error::Usage(format!("--anchor: {e}")))?;
    let title = text_arg(&a.title, &a.title_file, "--title-file")?
        .ok_or_else(|| Error::Usage("give the finding with --title TEXT".into()))?;
    let title = title.lines().next().unwrap_or("").trim().to_string();
    let evidence = text_arg(&a.evidence, &a.evidence_file, "--evidence-file")?;
    let fix = text_arg(&a.fix, &a.fix_file, "--fix-file")?;
    let prefix = match a.severity {
        SeverityArg::Blocking => "BLK",
        SeverityArg::Advisory => "ADV",
    };
    let agent = a.common.agent.clone();
    let (did, review, written) = write(snap, &a.common, "object", s, |r, doc, now| {
        turn(r, &agent, DebateRole::Enthusiast, "recording a finding")?;
        let id = r.next_id(prefix);
        let inside = law::inside(&parsed, r, |f, w| names(r, f, w));
        let state = if inside {
            FindingState::Open
        } else {
            FindingState::Discarded
        };
        r.findings.push(Finding {
            id: id.clone(),
            round: r.round,
            by: agent.clone(),
            anchor: a.anchor.clone(),
            title: title.clone(),
            state,
        });
        let mut body = format!("**{}** at `{}`", title, a.anchor);
        if let Some(e) = &evidence {
            body.push_str(&format!("\n\nEvidence: {}", entry_text(e)));
        }
        if let Some(f) = &fix {
            body.push_str(&format!("\n\nFix: {}", entry_text(f)));
        }
        if !inside {
            body.push_str(&format!(
                "\n\nDiscarded: `{}` names a file outside the pinned target ({}).",
                a.anchor,
                r.files.join(", ")
            ));
        }
        let what = if inside {
            "Finding"
        } else {
            "Discarded finding"
        };
        add(
            doc,
            "Findings",
            &format!(
                "### {what} {id} — round {} — {agent} — {} — {now}\n\n{body}\n",
                r.round,
                if prefix == "BLK" {
                    "blocking"
                } else {
                    "advisory"
                }
            ),
        );
        let warnings = if inside {
            vec![]
        } else {
            vec![format!(
                "{id} is discarded: {} names a file outside the pinned target",
                a.anchor
            )]
        };
        Ok(Did {
            json: json!({"id": id, "discarded": !inside, "anchor": a.anchor}),
            text: format!(
                "{} {id} (round {})\n",
                if inside { "recorded" } else { "discarded" },
                r.round
            ),
            warnings,
        })
    })?;
    Ok(outcome(&a.board, did, &review, &written))
}

/// `pair challenge` on a review-only board: the adversary disputes a finding.
pub fn challenge(a: ChallengeArgs, snap: Snapshot, s: &Session) -> Result<Outcome> {
    let grounds = text_arg(&a.grounds, &a.grounds_file, "--grounds-file")?
        .ok_or_else(|| Error::Usage("give the grounds with --grounds TEXT".into()))?;
    let agent = a.common.agent.clone();
    let (did, review, written) = write(snap, &a.common, "challenge", s, |r, doc, now| {
        turn(r, &agent, DebateRole::Adversary, "disputing a finding")?;
        let round = r.round;
        let f = finding(r, &a.id, &[FindingState::Open])?;
        f.state = FindingState::Disputed;
        add(
            doc,
            "Findings",
            &format!(
                "### Dispute {} — round {round} — {agent} — {now}\n\n{}\n",
                a.id,
                entry_text(&grounds)
            ),
        );
        Ok(Did {
            json: json!({"id": a.id, "state": "disputed"}),
            text: format!("disputed {}\n", a.id),
            warnings: vec![],
        })
    })?;
    Ok(outcome(&a.board, did, &review, &written))
}

/// A finding of the current round in one of the given states.
fn finding<'a>(r: &'a mut Review, id: &str, states: &[FindingState]) -> Result<&'a mut Finding> {
    let round = r.round;
    let list: Vec<String> = r
        .current()
        .filter(|f| states.contains(&f.state))
        .map(|f| f.id.clone())
        .collect();
    r.findings
        .iter_mut()
        .find(|f| f.id == id && f.round == round && states.contains(&f.state))
        .ok_or_else(|| {
            Error::Usage(format!(
                "{id:?} is not a finding of round {round} this step takes (those are: {})",
                if list.is_empty() {
                    "none".to_string()
                } else {
                    list.join(", ")
                }
            ))
        })
}

/// `pair verdict … COMMENT --revision ROUND` on a review-only board: the enthusiast or the
/// adversary ends its stage.
pub fn verdict(a: VerdictArgs, snap: Snapshot, s: &Session) -> Result<Outcome> {
    let note = text_arg(&a.text.note, &a.text.note_file, "--note-file")?;
    let agent = a.common.agent.clone();
    let (did, review, written) = write(snap, &a.common, "verdict", s, |r, doc, now| {
        let role = match r.role_of(&agent) {
            Some(DebateRole::Adversary) => DebateRole::Adversary,
            _ => DebateRole::Enthusiast,
        };
        turn(r, &agent, role, "ending a stage with `verdict COMMENT`")?;
        if !matches!(a.verdict, VerdictArg::Comment) {
            return Err(Error::refused(
                "on a review-only board a verdict only ends the enthusiast's or the adversary's \
                 stage: it is COMMENT (the judge rules on each finding with `rule`)",
                Hint::Run {
                    command: "poll",
                    args: vec!["--agent".into(), agent.clone()],
                },
            ));
        }
        if a.revision != r.round {
            return Err(Error::StaleCounter {
                message: format!(
                    "--revision {} is not the debate's round ({}); rerun with --revision {}",
                    a.revision, r.round, r.round
                ),
            });
        }
        let round = r.round;
        let heading = match role {
            DebateRole::Adversary => "Safe map",
            _ => "Findings end",
        };
        add(
            doc,
            "Rounds",
            &format!(
                "### {heading} — round {round} — {agent} — {now}\n\n{}\n",
                note.as_deref().map_or("(no note)".to_string(), entry_text)
            ),
        );
        let mut warnings = vec![];
        if role == DebateRole::Enthusiast {
            r.stage = Stage::Dispute;
        } else if r.current().next().is_some() {
            r.stage = Stage::Rule;
        } else {
            warnings = close(r, doc, now);
        }
        Ok(Did {
            json: json!({"ended": law::stage_of(role)}),
            text: format!("round {round}: the {} stage ended\n", role.as_str()),
            warnings,
        })
    })?;
    Ok(outcome(&a.board, did, &review, &written))
}

/// Close the round; on a stop, re-verify the pin and record the result.
fn close(r: &mut Review, doc: &mut Document, now: Timestamp) -> Vec<String> {
    let round = r.round;
    let stop = law::close_round(r);
    let y = r.yields.last().cloned();
    if let Some(y) = &y {
        add(
            doc,
            "Rounds",
            &format!(
                "### Yield — round {round} — {now}\n\n{} finding(s), {} discarded, {} confirmed \
                 ({} substantive, {} self-reference).\n",
                y.findings, y.discarded, y.confirmed, y.substantive, y.self_reference
            ),
        );
    }
    let Some(reason) = stop else {
        return vec![];
    };
    let now_sha = crate::repo::review::reread(r.kind, &r.target, Path::new(&r.root))
        .unwrap_or_else(|_| "unreadable".to_string());
    let drift = now_sha != r.sha256;
    r.stop = Some(Stop {
        reason,
        round,
        target_sha256: now_sha.clone(),
        drift,
    });
    let confirmed: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.state == FindingState::Confirmed)
        .collect();
    add(
        doc,
        "Result",
        &format!(
            "### Result — round {round} — {} — {now}\n\n{} confirmed finding(s){}. The target {}.\n",
            reason.as_str(),
            confirmed.len(),
            if confirmed.is_empty() {
                String::new()
            } else {
                format!(
                    ": {}",
                    confirmed
                        .iter()
                        .map(|f| format!("{} (`{}`)", f.id, f.anchor))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            if drift {
                format!(
                    "CHANGED during the debate: pinned SHA-256 {}, now {now_sha}; the findings' \
                     anchors may not match it",
                    r.sha256
                )
            } else {
                format!("is unchanged (SHA-256 {now_sha})")
            }
        ),
    );
    if drift {
        vec![format!(
            "the target changed during the debate (pinned {}, now {now_sha}): the result records it",
            r.sha256
        )]
    } else {
        vec![]
    }
}

/// `pair rule ID confirm|dismiss` on a review-only board: the judge rules on a finding.
pub fn rule(a: RuleArgs, snap: Snapshot, s: &Session) -> Result<Outcome> {
    let confirm = match a.ruling {
        RulingArg::Confirm | RulingArg::Uphold => true,
        RulingArg::Dismiss | RulingArg::Overrule => false,
        RulingArg::RejectRework => {
            return Err(Error::Usage(
                "a review-only board has no rework: rule ID confirm or dismiss".into(),
            ));
        }
    };
    let reason =
        text_arg(&a.reason.reason, &a.reason.reason_file, "--reason-file")?.unwrap_or_default();
    let agent = a.common.agent.clone();
    let (did, review, written) = write(snap, &a.common, "rule", s, |r, doc, now| {
        turn(r, &agent, DebateRole::Judge, "ruling on a finding")?;
        let round = r.round;
        let f = finding(r, &a.id, &[FindingState::Open, FindingState::Disputed])?;
        f.state = if confirm {
            FindingState::Confirmed
        } else {
            FindingState::Dismissed
        };
        let word = if confirm { "confirmed" } else { "dismissed" };
        add(
            doc,
            "Findings",
            &format!(
                "### Ruling {} — round {round} — {agent} — {word} — {now}\n\n{}\n",
                a.id,
                entry_text(&reason)
            ),
        );
        let warnings = if r
            .current()
            .any(|f| matches!(f.state, FindingState::Open | FindingState::Disputed))
        {
            vec![]
        } else {
            close(r, doc, now)
        };
        Ok(Did {
            json: json!({"id": a.id, "state": word}),
            text: format!("{word} {}\n", a.id),
            warnings,
        })
    })?;
    Ok(outcome(&a.board, did, &review, &written))
}

/// The `next` step of an agent on a review-only board.
pub fn next(r: &Review, agent: &str, board: &str) -> (bool, Next) {
    let mut n = Next {
        actor: NextActor::None,
        handoff_to: vec![],
        action: String::new(),
        command: None,
        choices: None,
        placeholders: BTreeMap::new(),
        optional: None,
        unable: None,
    };
    let poll = |agent: &str| {
        vec![
            "pair".to_string(),
            "poll".into(),
            board.to_string(),
            "--agent".into(),
            agent.to_string(),
            "--wait".into(),
        ]
    };
    let b = shell_word(board);
    if let Some(stop) = &r.stop {
        n.action = format!(
            "The debate stopped after round {} ({}); read the confirmed findings with `pair show \
             {b}`, and turn them into a doer's board with `pair init NEW --from-review {b}`.",
            stop.round,
            stop.reason.as_str()
        );
        return (false, n);
    }
    let Some(acting) = law::role_of(r.stage) else {
        return (false, n);
    };
    let actor = r.agent(acting).to_string();
    n.actor = NextActor::Reviewer;
    n.handoff_to = vec![actor.clone()];
    let Some(role) = r.role_of(agent) else {
        n.action = format!(
            "{agent:?} has no role in this debate (enthusiast {}, adversary {}, judge {}).",
            r.agent(DebateRole::Enthusiast),
            r.agent(DebateRole::Adversary),
            r.agent(DebateRole::Judge)
        );
        return (false, n);
    };
    if role != acting {
        let cmd = poll(agent);
        n.action = format!(
            "Round {}: the {} ({actor}) acts; wait with `{}`.",
            r.round,
            acting.as_str(),
            cmd.iter()
                .map(|w| crate::text::shell_arg(w))
                .collect::<Vec<_>>()
                .join(" ")
        );
        n.command = Some(cmd);
        return (false, n);
    }
    let base = |cmd: &str| vec!["pair".to_string(), cmd.into(), board.to_string()];
    let join = |v: &[String]| {
        v.iter()
            .map(|w| crate::text::shell_arg(w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut ph = BTreeMap::new();
    match role {
        DebateRole::Enthusiast | DebateRole::Adversary => {
            let mut end = base("verdict");
            end.extend([
                "--agent".into(),
                agent.into(),
                "COMMENT".into(),
                "--revision".into(),
                r.round.to_string(),
                "--note".into(),
                "TEXT".into(),
            ]);
            let (opt, what) = if role == DebateRole::Enthusiast {
                let mut o = base("object");
                o.extend(
                    [
                        "--agent",
                        agent,
                        "--severity",
                        "SEVERITY",
                        "--anchor",
                        "ANCHOR",
                        "--title",
                        "TITLE",
                        "--evidence",
                        "EVIDENCE",
                    ]
                    .map(String::from),
                );
                let mut p = BTreeMap::new();
                p.insert("SEVERITY".into(), "blocking or advisory".into());
                p.insert(
                    "ANCHOR".into(),
                    format!(
                        "where in the target: PATH:LINE or PATH#SYMBOL of {} (a file outside it is \
                         discarded), or `## Heading`",
                        r.files.join(", ")
                    ),
                );
                p.insert("TITLE".into(), "the finding in one line".into());
                p.insert("EVIDENCE".into(), "the concrete failure".into());
                ph.insert(
                    "TEXT".to_string(),
                    "what you looked at this round".to_string(),
                );
                (
                    (o, p),
                    format!(
                        "Round {} ({} mode, at most {} rounds): read the target `{}`; record each \
                         finding not already confirmed",
                        r.round,
                        mode_word(r),
                        r.max_rounds,
                        r.target
                    ),
                )
            } else {
                let first = r
                    .current()
                    .find(|f| f.state == FindingState::Open)
                    .map_or("ID".to_string(), |f| f.id.clone());
                let mut o = base("challenge");
                o.extend([
                    first,
                    "--agent".into(),
                    agent.into(),
                    "--grounds".into(),
                    "GROUNDS".into(),
                ]);
                let mut p = BTreeMap::new();
                if o[3] == "ID" {
                    p.insert("ID".into(), "a finding of this round".into());
                }
                p.insert("GROUNDS".into(), "why the finding does not hold".into());
                ph.insert(
                    "TEXT".to_string(),
                    "the map of what is safe in the target".to_string(),
                );
                (
                    (o, p),
                    format!(
                        "Round {}: dispute the findings that do not hold ({})",
                        r.round,
                        r.current()
                            .map(|f| f.id.clone())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            };
            n.action = format!(
                "{what} with `{}` (the optional step), then end your stage: `{}`.",
                join(&opt.0),
                join(&end)
            );
            n.optional = Some(crate::law::protocol::Optional {
                action: format!("Before ending your stage: `{}`.", join(&opt.0)),
                command: opt.0,
                placeholders: opt.1,
            });
            n.command = Some(end);
            n.placeholders = ph;
        }
        DebateRole::Judge => {
            let first = r
                .current()
                .find(|f| matches!(f.state, FindingState::Open | FindingState::Disputed))
                .map_or(String::new(), |f| f.id.clone());
            let mut cmd = base("rule");
            cmd.extend([
                first.clone(),
                "RULING".into(),
                "--agent".into(),
                agent.into(),
                "--reason".into(),
                "REASON".into(),
            ]);
            ph.insert(
                "RULING".into(),
                "one of: confirm (it holds) or dismiss (it does not)".into(),
            );
            ph.insert("REASON".into(), "why".into());
            n.action = format!(
                "Round {}: rule on {first} (read it with `pair show {b}`), then on each finding \
                 left: `{}`.",
                r.round,
                join(&cmd)
            );
            n.choices = Some(vec!["confirm".into(), "dismiss".into()]);
            n.command = Some(cmd);
            n.placeholders = ph;
        }
    }
    (true, n)
}

/// `pair poll` on a review-only board.
pub fn poll(a: &PollArgs, snap: Snapshot, s: &Session) -> Result<Outcome> {
    super::agent_arg("--agent", &a.agent)?;
    if a.after.is_some() {
        return Err(Error::Usage(format!(
            "--after reads a pairing board's journal; {} is a review-only board: poll it without \
             --after (its rounds are in `pair show`)",
            super::shown(&a.board)
        )));
    }
    if let Some(until) = a.until {
        return Err(Error::Usage(format!(
            "--until {until} waits for a pairing board's lifecycle; {} is a review-only board, \
             whose debate ends without one: poll it without --until",
            super::shown(&a.board)
        )));
    }
    let start = std::time::Instant::now();
    let deadline = start + timeout(a.timeout)?;
    let interval = std::time::Duration::from_secs_f64(a.interval.unwrap_or(0.5).max(0.01));
    let board = super::place_of(&a.board);
    let mut snap = Some(snap);
    loop {
        // Each turn of the wait answers from one read of the board.
        let snap = match snap.take() {
            Some(first) => first,
            None => store::snapshot(&a.board, Depth::Head, s)?,
        };
        let (fm, r) = load(&snap)?;
        let version = snap.version(&fm);
        let (mine, next) = next(&r, &a.agent, &board);
        let terminal = r.stop.is_some();
        let waiting = a.wait || a.through_blocked;
        if mine || terminal || !waiting || std::time::Instant::now() >= deadline {
            let code = if terminal {
                11
            } else if mine {
                0
            } else {
                10
            };
            let json = json!({
                "schema": SCHEMA,
                "path": shown(&a.board),
                "phase": fm.phase,
                "agent": a.agent,
                "role": r.role_of(&a.agent).map(|x| x.as_str()),
                "your_turn": mine,
                "terminal": terminal,
                "review": review_state(&r),
                "next": next,
                "version": version,
            });
            let text = format!(
                "review-only board, round {} of at most {}, stage {:?}{}\nyour turn  {}\nnext       {}\n",
                r.round,
                r.max_rounds,
                r.stage,
                r.stop.as_ref().map_or(String::new(), |s| format!(
                    ", stopped: {}",
                    s.reason.as_str()
                )),
                if mine { "yes" } else { "no" },
                next.action
            );
            let mut out = Outcome::ok(json, text);
            out.code = code;
            return Ok(out);
        }
        std::thread::sleep(interval);
    }
}

/// `pair show` on a review-only board: the confirmed findings, the yields and the result.
pub fn show(a: ShowArgs, snap: Snapshot, _s: &Session) -> Result<Outcome> {
    let (_, r) = load(&snap)?;
    let confirmed: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.state == FindingState::Confirmed)
        .collect();
    let mut text = format!(
        "review of `{}` ({} mode, round {} of at most {}, stage {:?})\n",
        r.target,
        mode_word(&r),
        r.round,
        r.max_rounds,
        r.stage
    );
    match &r.stop {
        Some(stop) => text.push_str(&format!(
            "stopped: {} after round {}; target {}\n",
            stop.reason.as_str(),
            stop.round,
            if stop.drift {
                format!("CHANGED (pinned {}, now {})", r.sha256, stop.target_sha256)
            } else {
                "unchanged".to_string()
            }
        )),
        None => text.push_str("not stopped yet\n"),
    }
    text.push_str(&format!("confirmed findings: {}\n", confirmed.len()));
    for f in &confirmed {
        text.push_str(&format!(
            "  {} (round {}) {} — {}\n",
            f.id,
            f.round,
            f.anchor,
            escape(&f.title)
        ));
    }
    for y in &r.yields {
        text.push_str(&format!(
            "round {}: {} finding(s), {} discarded, {} confirmed ({} substantive)\n",
            y.round, y.findings, y.discarded, y.confirmed, y.substantive
        ));
    }
    let json = json!({
        "schema": SCHEMA,
        "path": shown(&a.board),
        "confirmed": confirmed,
        "review": review_json(&r),
    });
    Ok(Outcome::ok(json, text))
}

/// The goal of a doer's board made from a review's confirmed findings (`init --from-review`):
/// each finding with its anchor, its evidence and the judge's ruling, as the board's evidence.
pub fn goal_from(review_board: &Path, s: &Session) -> Result<String> {
    let loaded = store::snapshot(review_board, Depth::Whole, s)?.load()?;
    let valid = validate::check_found(&loaded.bytes)
        .map_err(|r| Error::invalid(review_board, r.errors, false))?;
    let r = review_of(review_board, &valid.parsed.fm)?;
    if r.stop.is_none() {
        return Err(Error::refused(
            format!(
                "{}: the debate has not stopped yet; its findings are not final",
                shown(review_board)
            ),
            Hint::Run {
                command: "poll",
                args: vec!["--agent".into(), "ID".into(), "--wait".into()],
            },
        ));
    }
    let confirmed: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.state == FindingState::Confirmed)
        .collect();
    if confirmed.is_empty() {
        return Err(Error::Usage(format!(
            "{}: the review confirmed no finding; there is nothing to fix",
            shown(review_board)
        )));
    }
    let mut goal = format!(
        "Fix the findings the review of `{}` confirmed (review board {}, SHA-256 of the target {}{}).\n",
        r.target,
        shown(review_board),
        r.sha256,
        if r.stop.as_ref().is_some_and(|s| s.drift) {
            "; the target changed during the review"
        } else {
            ""
        }
    );
    for f in confirmed {
        goal.push_str(&format!(
            "\n#### {} — `{}` — {}\n\n",
            f.id, f.anchor, f.title
        ));
        for heading in ["Finding", "Ruling"] {
            if let Some(text) = entry_of(&valid.doc.body, &format!("### {heading} {} ", f.id)) {
                goal.push_str(&format!("{heading}: {}\n\n", text.trim()));
            }
        }
    }
    Ok(goal)
}

/// The text of the body entry whose heading starts with `head`.
fn entry_of(body: &str, head: &str) -> Option<String> {
    let mut lines = body.lines().skip_while(|l| !l.starts_with(head));
    lines.next()?;
    Some(
        lines
            .take_while(|l| !l.starts_with("### ") && !l.starts_with("## "))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// Append an entry to a section of the review board's body (made when missing).
fn add(doc: &mut Document, section: &str, entry: &str) {
    if !doc.append(section, entry) {
        doc.ensure_section(section);
        let _ = doc.append(section, entry);
    }
}
