//! The Manager's decision call: given only the Manager context (aggregates, no text bodies)
//! and a summary of findings, choose which advisory-flagged units go back for revision.
//!
//! Units with deterministic QA errors are revised regardless of this decision; the Manager
//! decides only on the reviewer's advisory findings.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Agent;
use super::json::{ParseStats, item_list, str_field};
use crate::llm::{JsonSchema, Message, Request};

/// One unit the Manager sends back, with the reason given to the translator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionOrder {
    pub unit: String,
    pub reason: String,
}

/// The Manager's decision for one round.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub revise: Vec<RevisionOrder>,
    pub summary: String,
}

pub fn schema() -> JsonSchema {
    JsonSchema {
        name: "manager_decision".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "revise": {"type": "array", "items": {"type": "object", "properties": {
                    "unit": {"type": "string"}, "reason": {"type": "string"}},
                    "required": ["unit", "reason"], "additionalProperties": false}},
                "summary": {"type": "string"}
            },
            "required": ["revise", "summary"], "additionalProperties": false
        }),
    }
}

pub const SYSTEM_PROMPT: &str = "You are the managing editor of a book translation campaign. You never see the texts; you decide from the campaign state and the reviewer's findings.\n\
Units with deterministic QA errors are already scheduled for revision; you only decide on the reviewer's advisory findings listed under `candidates`.\n\
Send a unit back only when its findings describe a real error in meaning, terminology, omission or untranslated text that a retranslation can fix; ignore matters of taste.\n\
Answer with one JSON object: {\"revise\": [{\"unit\": \"<unit id>\", \"reason\": \"instruction for the translator\"}], \"summary\": \"one sentence\"}.";

/// The request: the Manager context (as JSON) and the findings summary (as JSON).
pub fn build_request(context_json: &str, findings_json: &str) -> Request {
    Request {
        task: Agent::Manager.into(),
        messages: vec![
            Message::system(SYSTEM_PROMPT),
            Message::user(format!(
                "Campaign state:\n{context_json}\n\nFindings:\n{findings_json}"
            )),
        ],
        json_schema: Some(schema()),
        max_tokens: None,
        ceiling_tokens: None,
        prefill: None,
    }
}

/// Parses a decision; unit ids outside `candidates` are dropped (counted).
pub fn parse(value: &Value, candidates: &[&str]) -> (Decision, ParseStats) {
    let mut stats = ParseStats::default();
    let allowed: HashSet<&str> = candidates.iter().copied().collect();
    let mut d = Decision::default();
    for item in item_list(value, &["revise", "units", "revisions"], &mut stats) {
        let (unit, reason, alias) = match item {
            Value::String(s) => (Some(s), Some(String::new()), true),
            Value::Object(obj) => {
                let mut alias = false;
                let u = str_field(&obj, &["unit", "unit_id", "id"], &mut alias);
                let r = str_field(&obj, &["reason", "instruction", "why"], &mut alias)
                    .or(Some(String::new()));
                (u, r, alias)
            }
            _ => (None, None, false),
        };
        let Some(unit) = unit else {
            stats.drop_item("revision order without unit");
            continue;
        };
        if !allowed.contains(unit.as_str()) {
            stats.drop_item(format!("`{unit}` is not a candidate"));
            continue;
        }
        if d.revise.iter().any(|o| o.unit == unit) {
            stats.drop_item(format!("`{unit}` listed twice"));
            continue;
        }
        if alias {
            stats.repair(format!("order for `{unit}` repaired"));
        } else {
            stats.accepted += 1;
        }
        d.revise.push(RevisionOrder {
            unit,
            reason: reason.unwrap_or_default(),
        });
    }
    if let Value::Object(obj) = value
        && let Some(Value::String(s)) = obj.get("summary")
    {
        d.summary = crate::util::excerpt(s.trim(), 600);
    }
    (d, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_filters_to_candidates() {
        let v = json!({"revise": [{"unit": "a-001", "reason": "fix term"}, "a-002", {"unit": "x"}, {"unit": "a-001"}, null], "summary": "ok"});
        let (d, s) = parse(&v, &["a-001", "a-002"]);
        assert_eq!(d.revise.len(), 2);
        assert_eq!(d.revise[0].reason, "fix term");
        assert_eq!(d.summary, "ok");
        assert_eq!((s.accepted, s.repaired, s.dropped), (1, 1, 3));
        let (d, _) = parse(&json!(null), &["a-001"]);
        assert!(d.revise.is_empty());
    }

    #[test]
    fn request_has_no_text_bodies_beyond_inputs() {
        let r = build_request("{\"progress\":{}}", "{\"candidates\":[]}");
        assert_eq!(r.messages.len(), 2);
        assert!(r.messages[1].content.contains("progress"));
    }
}
