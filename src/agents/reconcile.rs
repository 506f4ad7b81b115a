//! Terminology reconciliation: when QA finds a term rendered more than one way across units
//! (or kept untranslated in some), one small call, in its own context, picks the rendering for
//! the whole book. It sees only the term, the renderings with their counts and a few short
//! source/target contexts; the chosen rendering enters the termbase with origin `reconciled`
//! and only the units that disagree are revised. House-style entries are never reconciled.
//!
//! The call belongs to the Glossary agent's role (terminology), so its usage is counted there.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Agent;
use super::json::{ParseStats, str_field};
use crate::lang::Lang;
use crate::llm::{JsonSchema, Message, Request};

/// One competing rendering, with how many units use it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rendering {
    /// The target-language rendering, or `(kept)` when the source term was left as is.
    pub rendering: String,
    pub units: usize,
}

/// A context line: a short source excerpt and the matching target excerpt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Context {
    pub unit: String,
    pub source: String,
    pub target: String,
}

/// The decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    pub term: String,
    pub rendering: String,
    pub note: String,
}

pub fn schema() -> JsonSchema {
    JsonSchema {
        name: "term_reconciliation".into(),
        schema: json!({
            "type": "object",
            "properties": {"rendering": {"type": "string"}, "note": {"type": "string"}},
            "required": ["rendering", "note"], "additionalProperties": false
        }),
    }
}

pub fn system_prompt(source: &Lang, target: &Lang) -> String {
    format!(
        "You are the terminologist of a technical book translated from {src} into {tgt}. A term was rendered in different ways in different parts of the book. Choose the one {tgt} rendering the whole book should use (usually one of those listed; if the term should stay in {src}, give it unchanged).\n\
         Answer with one JSON object: {{\"rendering\": \"…\", \"note\": \"one sentence explaining the choice\"}}.",
        src = source.name,
        tgt = target.name
    )
}

/// The request for one term.
pub fn build_request(
    source: &Lang,
    target: &Lang,
    term: &str,
    renderings: &[Rendering],
    contexts: &[Context],
) -> Request {
    let mut user = format!("Term: {term}\n\nRenderings found (units):\n");
    for r in renderings {
        user.push_str(&format!("- {} ({})\n", r.rendering, r.units));
    }
    if !contexts.is_empty() {
        user.push_str("\nContexts:\n");
        for c in contexts {
            user.push_str(&format!(
                "- source: {}\n  translation: {}\n",
                c.source, c.target
            ));
        }
    }
    Request {
        task: Agent::Glossary.into(),
        messages: vec![
            Message::system(system_prompt(source, target)),
            Message::user(user),
        ],
        json_schema: Some(schema()),
        max_tokens: None,
        ceiling_tokens: None,
        prefill: None,
    }
}

/// The term of a reconciliation request (for the pseudo provider and the fake server).
pub fn term_of(req: &Request) -> Option<(String, Vec<String>)> {
    let user = req.messages.get(1)?;
    let term = user
        .content
        .lines()
        .next()?
        .strip_prefix("Term: ")?
        .to_string();
    let renderings = user
        .content
        .lines()
        .skip_while(|l| !l.starts_with("Renderings found"))
        .skip(1)
        .take_while(|l| l.starts_with("- "))
        .filter_map(|l| l[2..].rsplit_once(" (").map(|(r, _)| r.to_string()))
        .collect();
    Some((term, renderings))
}

/// Whether a request is a reconciliation (its system prompt says so).
pub fn is_reconciliation(req: &Request) -> bool {
    req.messages
        .first()
        .is_some_and(|m| m.content.contains("was rendered in different ways"))
}

/// Parses the answer. An empty rendering, or `(kept)`, falls back to the most used rendering
/// (counted as a repair); `null` or junk gives `None`, and the caller keeps the majority.
pub fn parse(value: &Value, term: &str, renderings: &[Rendering]) -> (Option<Choice>, ParseStats) {
    let mut stats = ParseStats::default();
    let majority = renderings
        .iter()
        .filter(|r| r.rendering != "(kept)")
        .max_by_key(|r| r.units)
        .map(|r| r.rendering.clone());
    let obj = match value {
        Value::Object(o) => o.clone(),
        Value::Array(a) => match a.first() {
            Some(Value::Object(o)) => {
                stats.repair("array instead of object");
                o.clone()
            }
            _ => {
                stats.drop_item("no decision in the answer");
                return (None, stats);
            }
        },
        _ => {
            stats.drop_item("no decision in the answer");
            return (None, stats);
        }
    };
    let mut alias = false;
    let rendering = str_field(
        &obj,
        &["rendering", "target", "translation", "choice"],
        &mut alias,
    );
    let note = str_field(&obj, &["note", "reason", "why"], &mut alias).unwrap_or_default();
    let rendering = match rendering {
        Some(r) if r != "(kept)" => r,
        _ => {
            stats.repair("no usable rendering; took the majority");
            match majority {
                Some(m) => m,
                None => return (None, stats),
            }
        }
    };
    if alias {
        stats.repair("alternative key names");
    } else {
        stats.accepted += 1;
    }
    (
        Some(Choice {
            term: term.to_string(),
            rendering,
            note,
        }),
        stats,
    )
}

/// A reconciliation answer that was not kept: what the model answered and why it was
/// rejected (recorded in the result file and shown in the report).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejected {
    /// The rendering the model chose.
    pub rendering: String,
    pub reason: String,
}

/// Verifies a parsed choice against the evidence: the chosen rendering must be one of the
/// renderings QA observed for the term (compared trimmed, ASCII case ignored), or the source
/// term itself (keep it as is). Anything else — `ok`, an invented
/// rendering — is rejected with a reason naming the answer and the allowed renderings: a model
/// answer is data to verify, and enforcing an unobserved rendering would send every unit of
/// the term to a paid revision on the model's word alone.
pub fn verify(choice: &Choice, term: &str, renderings: &[Rendering]) -> Result<(), Rejected> {
    let chosen = choice.rendering.trim();
    let same = |a: &str, b: &str| a.trim().eq_ignore_ascii_case(b.trim());
    let observed = renderings
        .iter()
        .any(|r| r.rendering != "(kept)" && same(&r.rendering, chosen));
    if observed || same(chosen, term) {
        return Ok(());
    }
    let allowed: Vec<&str> = renderings
        .iter()
        .map(|r| r.rendering.as_str())
        .filter(|r| *r != "(kept)")
        .collect();
    Err(Rejected {
        rendering: choice.rendering.clone(),
        reason: format!(
            "`{chosen}` is neither an observed rendering of `{term}` ({}) nor the term kept as is; nothing entered the termbase",
            allowed.join(", ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs() -> Vec<Rendering> {
        vec![
            Rendering {
                rendering: "代理".into(),
                units: 7,
            },
            Rendering {
                rendering: "(kept)".into(),
                units: 6,
            },
            Rendering {
                rendering: "智能体".into(),
                units: 1,
            },
        ]
    }

    #[test]
    fn request_round_trips_term_and_renderings() {
        let req = build_request(
            &Lang::parse("en"),
            &Lang::parse("zh"),
            "Agent",
            &rs(),
            &[Context {
                unit: "c-001".into(),
                source: "An Agent acts.".into(),
                target: "代理行动。".into(),
            }],
        );
        assert!(is_reconciliation(&req));
        let (term, renderings) = term_of(&req).unwrap();
        assert_eq!(term, "Agent");
        assert_eq!(renderings, vec!["代理", "(kept)", "智能体"]);
    }

    #[test]
    fn parse_accepts_repairs_and_falls_back() {
        let (c, s) = parse(
            &json!({"rendering": "智能体", "note": "standard"}),
            "Agent",
            &rs(),
        );
        assert_eq!(c.unwrap().rendering, "智能体");
        assert_eq!(s.accepted, 1);
        let (c, s) = parse(&json!([{"translation": "智能体"}]), "Agent", &rs());
        assert_eq!(c.unwrap().rendering, "智能体");
        assert_eq!(s.repaired, 2);
        let (c, _) = parse(&json!({"rendering": ""}), "Agent", &rs());
        assert_eq!(c.unwrap().rendering, "代理", "majority fallback");
        let (c, _) = parse(&Value::Null, "Agent", &rs());
        assert!(c.is_none());
    }

    #[test]
    fn reconciliation_answer_ok_is_rejected() {
        let (c, _) = parse(&json!({"rendering": "ok", "note": ""}), "Agent", &rs());
        let c = c.expect("parsed");
        let r = verify(&c, "Agent", &rs()).unwrap_err();
        assert_eq!(r.rendering, "ok");
        assert_eq!(
            r.reason,
            "`ok` is neither an observed rendering of `Agent` (代理, 智能体) nor the term kept as is; nothing entered the termbase"
        );
        // An invented rendering is rejected too; observed ones and the term itself pass.
        let choice = |r: &str| Choice {
            term: "Agent".into(),
            rendering: r.into(),
            note: String::new(),
        };
        assert!(verify(&choice("代理人"), "Agent", &rs()).is_err());
        assert!(verify(&choice(" 智能体 "), "Agent", &rs()).is_ok());
        assert!(verify(&choice("agent"), "Agent", &rs()).is_ok());
    }
}
