//! `pair skill`: the agent skill, embedded in the binary.

use serde_json::json;

use super::Outcome;
use crate::render::report::SCHEMA;

/// The skill a doer or reviewer agent follows (`templates/skill/SKILL.md`).
pub const SKILL: &str = include_str!("../../templates/skill/SKILL.md");

pub fn run() -> Outcome {
    Outcome::ok(
        json!({"schema": SCHEMA, "name": "pair", "skill": SKILL}),
        SKILL.to_string(),
    )
}
