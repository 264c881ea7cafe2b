//! `pair poll` (frontmatter only) and `pair status` (the whole file).

use serde_json::json;

use super::{Outcome, shown};
use crate::cli::{PollArgs, StatusArgs};
use crate::error::{Error, Result};
use crate::model::is_agent_id;
use crate::report::{SectionInfo, Turn};
use crate::store;

fn check_agent(id: &str) -> Result<()> {
    if is_agent_id(id) {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "--agent {id:?} is not a valid agent id: use 1-64 letters, digits, `.`, `_` or `-`, \
             starting with a letter or digit"
        )))
    }
}

pub fn poll(a: PollArgs) -> Result<Outcome> {
    check_agent(&a.agent)?;
    let valid = store::load_frontmatter(&a.board)?;
    let turn = Turn::new(&valid.parsed.fm, &a.agent, &shown(&a.board));
    let code = turn.exit_code();
    let text = turn.render();
    let json = serde_json::to_value(&turn).unwrap_or_default();
    Ok(Outcome {
        json,
        text,
        code,
        warnings: vec![],
    })
}

pub fn status(a: StatusArgs) -> Result<Outcome> {
    if let Some(id) = &a.agent {
        check_agent(id)?;
    }
    let loaded = store::load(&a.board)?;
    let fm = &loaded.valid.parsed.fm;
    let agent = a
        .agent
        .clone()
        .or_else(|| fm.doer().map(String::from))
        .unwrap_or_default();
    let turn = Turn::new(fm, &agent, &shown(&a.board));
    let sections: Vec<SectionInfo> = loaded
        .valid
        .doc
        .sections()
        .iter()
        .map(SectionInfo::from)
        .collect();
    let warnings = &loaded.valid.parsed.warnings;
    let mut json = serde_json::to_value(&turn).unwrap_or_default();
    if let Some(obj) = json.as_object_mut() {
        obj.insert("sha256".into(), json!(loaded.sha256));
        obj.insert("size".into(), json!(loaded.bytes.len()));
        obj.insert("sections".into(), json!(sections));
        obj.insert("warnings".into(), json!(warnings));
        obj.insert("agents".into(), agents_json(fm));
    }
    let mut text = turn.render();
    text.push_str(&format!("sha256      {}\n", loaded.sha256));
    text.push_str("agents\n");
    for (id, ag) in &fm.agents {
        let last = ag
            .last_seen
            .map(|t| t.to_string())
            .unwrap_or_else(|| "never".into());
        text.push_str(&format!(
            "  {id:<16} {:<8} {:<18} last seen {last}\n",
            ag.role.as_str(),
            ag.status.as_str()
        ));
    }
    text.push_str("sections\n");
    for s in &sections {
        text.push_str(&format!(
            "  {:<22} line {:<5} {} entr{}\n",
            s.name,
            s.line,
            s.entries,
            if s.entries == 1 { "y" } else { "ies" }
        ));
    }
    for w in warnings {
        text.push_str(&format!("warning: {w}\n"));
    }
    Ok(Outcome::ok(json, text))
}

fn agents_json(fm: &crate::model::Frontmatter) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for (id, ag) in &fm.agents {
        let mut reviews = serde_json::Map::new();
        for t in crate::model::Target::ALL {
            let r = ag.review(*t);
            reviews.insert(
                t.as_str().to_string(),
                json!({"reviewed": r.reviewed, "verdict": r.verdict}),
            );
        }
        map.insert(
            id.clone(),
            json!({
                "role": ag.role,
                "status": ag.status,
                "last_seen": ag.last_seen,
                "reviews": reviews,
            }),
        );
    }
    serde_json::Value::Object(map)
}
