//! `pair report-usage`: tokens and cost of work that wrote nothing else. The write changes
//! nothing but the journal, which gains the record like every write's.

use serde_json::json;

use super::{Outcome, shown};
use crate::board::frontmatter::Phase;
use crate::board::journal::{Usage, cost_number, cost_text};
use crate::cli::ReportUsageArgs;
use crate::error::{Error, Result};
use crate::render::report::SCHEMA;
use crate::store::Session;
use crate::store::{self, Built, Expect};

pub fn run(a: ReportUsageArgs, s: &Session) -> Result<Outcome> {
    let agent = &a.common.agent;
    super::agent_arg("--agent", agent)?;
    let mut usage = Usage::try_from(&a.common.usage)?;
    if usage.tokens.is_none() && usage.cost_micros.is_none() {
        return Err(Error::Usage(
            "report-usage records tokens or cost: give --tokens N, --cost X or both".into(),
        ));
    }
    if let Some(p) = &a.phase {
        usage.phase = Some(p.parse::<Phase>().map_err(|_| {
            Error::Usage(format!(
                "--phase {p:?} is not a phase (one of {})",
                Phase::ALL
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?);
    }
    let expect = match &a.common.expect_sha256 {
        Some(h) => Expect::Sha256(h.clone()),
        None => Expect::Present,
    };
    let opts = super::write_options(
        "report-usage",
        a.common.timeout,
        Some(agent.clone()),
        usage.clone(),
    )?;
    let written = store::update(&a.board, expect, &opts, s, |current| {
        let Some(current) = current else {
            return Err(Error::Missing {
                path: a.board.clone(),
            });
        };
        let valid = crate::law::validate::check_found(&current.bytes)
            .map_err(|r| Error::invalid(&a.board, r.errors, false))?;
        crate::law::may_report_usage(&valid.parsed.fm, agent)?;
        // Nothing changes but the journal: the content is checked, so is not checked again.
        let old = Some(valid.parsed.fm.clone());
        Ok(Built {
            bytes: current.bytes.clone(),
            parsed: Some(valid.parsed),
            old,
        })
    })
    .map_err(|e| e.suggest(&super::argv(), Some(&shown(&a.board))))?;
    let phase = written.parsed.fm.phase;
    let work_phase = usage.phase.unwrap_or(phase);
    let json = json!({
        "schema": SCHEMA,
        "path": shown(&a.board),
        "agent": agent,
        "phase": phase,
        "usage_phase": work_phase,
        "tokens": usage.tokens,
        "cost": usage.cost_micros.map(cost_number),
        "old_sha256": written.old_sha256,
        "new_sha256": written.new_sha256,
    });
    let mut parts = Vec::new();
    if let Some(t) = usage.tokens {
        parts.push(format!("{t} tokens"));
    }
    if let Some(c) = usage.cost_micros {
        parts.push(format!("cost {}", cost_text(c)));
    }
    let text = format!(
        "recorded {} for {agent} in {work_phase}\n",
        parts.join(", ")
    );
    let mut out = Outcome::ok(json, text);
    out.warnings = written.warnings;
    Ok(out)
}
