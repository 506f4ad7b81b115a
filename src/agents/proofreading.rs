//! The Proofreading agent: reviews batches of (source, translation) pairs of one chapter
//! against the glossary, with the deterministic QA findings as evidence, and answers with a
//! JSON report. Its opinions are advisory: the Manager decides what is revised, and
//! deterministic checks are never up for its judgement.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Agent;
use super::json::{ParseStats, item_list, str_field};
use crate::lang::Lang;
use crate::llm::{JsonSchema, Message, Request};
use crate::termbase::Entry;

/// One unit under review.
#[derive(Debug, Clone)]
pub struct ReviewItem<'a> {
    pub unit: &'a str,
    pub source: &'a str,
    pub target: &'a str,
    /// Deterministic QA findings for this unit, one line each.
    pub findings: Vec<String>,
}

/// One issue reported by the reviewer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    pub unit: String,
    /// `terminology`, `accuracy`, `omission`, `untranslated`, `fluency`, `formatting` or `other`.
    #[serde(rename = "type")]
    pub kind: String,
    pub detail: String,
}

/// The reviewer's report for one batch (or merged over batches).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProofReport {
    pub issues: Vec<Issue>,
    pub units_need_revision: Vec<String>,
    pub summary: String,
}

impl ProofReport {
    /// Appends another batch's report (summaries joined with a space).
    pub fn merge(&mut self, other: &ProofReport) {
        self.issues.extend(other.issues.iter().cloned());
        for u in &other.units_need_revision {
            if !self.units_need_revision.contains(u) {
                self.units_need_revision.push(u.clone());
            }
        }
        if !other.summary.is_empty() {
            if !self.summary.is_empty() {
                self.summary.push(' ');
            }
            self.summary.push_str(&other.summary);
        }
    }
}

const ISSUE_TYPES: &[&str] = &[
    "terminology",
    "accuracy",
    "omission",
    "untranslated",
    "fluency",
    "formatting",
    "other",
];

pub fn schema() -> JsonSchema {
    JsonSchema {
        name: "proofreading_report".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "issues": {"type": "array", "items": {"type": "object", "properties": {
                    "unit": {"type": "string"}, "type": {"type": "string", "enum": ISSUE_TYPES}, "detail": {"type": "string"}},
                    "required": ["unit", "type", "detail"], "additionalProperties": false}},
                "units_need_revision": {"type": "array", "items": {"type": "string"}},
                "summary": {"type": "string"}
            },
            "required": ["issues", "units_need_revision", "summary"], "additionalProperties": false
        }),
    }
}

pub fn system_prompt(source: &Lang, target: &Lang) -> String {
    format!(
        "You are the proofreader of a technical book translated from {src} into {tgt}. You did not translate it.\n\
         For each unit the user gives (its source and its translation), check: meaning preserved, nothing omitted or added, every glossary term rendered as required, no text left untranslated, natural {tgt}, and Markdown intact.\n\
         Judge only from the texts given. Automatic QA findings are listed as evidence when there are any.\n\
         Answer with one JSON object: {{\"issues\": [{{\"unit\": \"<unit id>\", \"type\": \"terminology|accuracy|omission|untranslated|fluency|formatting|other\", \"detail\": \"what is wrong, quoting the text\"}}], \"units_need_revision\": [\"<unit id>\"], \"summary\": \"one or two sentences\"}}.\n\
         List a unit in units_need_revision only when a retranslation would clearly improve it.",
        src = source.name,
        tgt = target.name
    )
}

/// Opening tag of a unit block in the user message (`<unit id="…">`).
pub const UNIT_OPEN: &str = "<unit id=\"";

fn render_item(it: &ReviewItem) -> String {
    let mut s = format!(
        "{UNIT_OPEN}{}\">\n<source>\n{}\n</source>\n<translation>\n{}\n</translation>\n",
        it.unit,
        it.source.trim_end(),
        it.target.trim_end()
    );
    if !it.findings.is_empty() {
        s.push_str("<qa_findings>\n");
        for f in &it.findings {
            s.push_str(&format!("- {f}\n"));
        }
        s.push_str("</qa_findings>\n");
    }
    s.push_str("</unit>\n");
    s
}

fn glossary_block(entries: &[&Entry]) -> String {
    if entries.is_empty() {
        return "Glossary: none applies.\n\n".into();
    }
    let mut s = String::from("Glossary (required renderings):\n");
    for e in entries {
        s.push_str(&format!("- {} → {}\n", e.source, e.target));
    }
    s.push('\n');
    s
}

/// The request for one batch.
pub fn build_request(
    source: &Lang,
    target: &Lang,
    entries: &[&Entry],
    items: &[ReviewItem],
) -> Request {
    let mut user = glossary_block(entries);
    for it in items {
        user.push_str(&render_item(it));
    }
    Request {
        task: Agent::Proofreading.into(),
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

/// Groups review items into batches whose request stays within `budget_tokens`: consecutive
/// items in the given order, so callers pass one chapter at a time. Returns index ranges.
/// An item too large to fit even alone is put in a batch of its own; the caller checks the
/// budget again before sending.
pub fn batch_ranges(
    source: &Lang,
    target: &Lang,
    items: &[ReviewItem],
    entries_tokens: usize,
    budget_tokens: usize,
) -> Vec<std::ops::Range<usize>> {
    let base = build_request(source, target, &[], &[]).prompt_tokens_estimate() + entries_tokens;
    let mut out = Vec::new();
    let mut start = 0;
    let mut tokens = base;
    for (i, it) in items.iter().enumerate() {
        let t = crate::tokens::count(&render_item(it));
        if i > start && tokens + t > budget_tokens {
            out.push(start..i);
            start = i;
            tokens = base;
        }
        tokens += t;
    }
    if start < items.len() {
        out.push(start..items.len());
    }
    out
}

/// Parses a Proofreading answer leniently: unit ids outside `asked` are dropped, an unknown
/// issue type becomes `other` (a repair), missing `units_need_revision` is derived from nothing
/// (empty), and aliases (`problems`, `revise`, `comment`) are accepted as repairs.
pub fn parse(value: &Value, asked: &[&str]) -> (ProofReport, ParseStats) {
    let mut stats = ParseStats::default();
    let asked: HashSet<&str> = asked.iter().copied().collect();
    let mut report = ProofReport::default();
    for item in item_list(value, &["issues", "problems", "findings"], &mut stats) {
        let Value::Object(obj) = item else {
            stats.drop_item("issue is not an object");
            continue;
        };
        let mut alias = false;
        let unit = str_field(&obj, &["unit", "unit_id", "id"], &mut alias);
        let kind = str_field(&obj, &["type", "kind", "category"], &mut alias)
            .unwrap_or_else(|| "other".into());
        let detail = str_field(
            &obj,
            &["detail", "description", "comment", "message"],
            &mut alias,
        );
        let (Some(unit), Some(detail)) = (unit, detail) else {
            stats.drop_item("issue without unit or detail");
            continue;
        };
        if !asked.contains(unit.as_str()) {
            stats.drop_item(format!("issue for unknown unit `{unit}`"));
            continue;
        }
        let lower = kind.to_ascii_lowercase();
        let kind = if ISSUE_TYPES.contains(&lower.as_str()) {
            lower
        } else {
            alias = true;
            "other".into()
        };
        if alias {
            stats.repair(format!("issue for `{unit}` repaired"));
        } else {
            stats.accepted += 1;
        }
        report.issues.push(Issue {
            unit,
            kind,
            detail: crate::util::excerpt(&detail, 600),
        });
    }
    if let Value::Object(obj) = value {
        let list = obj.get("units_need_revision").or_else(|| obj.get("revise"));
        if let Some(Value::Array(a)) = list {
            for v in a {
                match v.as_str() {
                    Some(u) if asked.contains(u) => {
                        if !report.units_need_revision.iter().any(|x| x == u) {
                            report.units_need_revision.push(u.to_string());
                        }
                    }
                    _ => stats.drop_item(format!("revision request for unknown unit {v}")),
                }
            }
        }
        if let Some(Value::String(s)) = obj.get("summary") {
            report.summary = crate::util::excerpt(s.trim(), 600);
        }
    }
    (report, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_stay_within_budget_and_cover_all() {
        let src = "Some source sentence here. ".repeat(40);
        let tgt = "一些译文句子在这里。".repeat(40);
        let items: Vec<ReviewItem> = (0..30)
            .map(|_| ReviewItem {
                unit: "c-000",
                source: &src,
                target: &tgt,
                findings: vec![],
            })
            .collect();
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        let ranges = batch_ranges(&en, &zh, &items, 0, 4000);
        assert!(ranges.len() > 1);
        assert_eq!(ranges.first().unwrap().start, 0);
        assert_eq!(ranges.last().unwrap().end, 30);
        for r in ranges {
            assert!(build_request(&en, &zh, &[], &items[r]).prompt_tokens_estimate() <= 4000);
        }
    }

    #[test]
    fn parse_handles_junk() {
        let v = json!({
            "issues": [
                {"unit": "c-001", "type": "terminology", "detail": "Agent rendered as 代理"},
                {"unit_id": "c-002", "type": "weird", "description": "odd"},
                {"unit": "zz-999", "type": "accuracy", "detail": "x"},
                {"unit": "c-001"},
                7
            ],
            "units_need_revision": ["c-001", "nope", "c-001"],
            "summary": "two issues",
            "extra": true
        });
        let (r, s) = parse(&v, &["c-001", "c-002"]);
        assert_eq!(r.issues.len(), 2);
        assert_eq!(r.issues[1].kind, "other");
        assert_eq!(r.units_need_revision, vec!["c-001"]);
        assert_eq!(r.summary, "two issues");
        assert_eq!((s.accepted, s.repaired, s.dropped), (1, 1, 4));
        let (r, _) = parse(&Value::Null, &["c-001"]);
        assert!(r.issues.is_empty());
        let (r, s) = parse(
            &json!([{"unit": "c-001", "type": "fluency", "detail": "stiff"}]),
            &["c-001"],
        );
        assert_eq!((r.issues.len(), s.repaired), (1, 1));
    }

    #[test]
    fn merge_dedups_revisions() {
        let mut a = ProofReport {
            units_need_revision: vec!["x".into()],
            summary: "a".into(),
            ..Default::default()
        };
        a.merge(&ProofReport {
            units_need_revision: vec!["x".into(), "y".into()],
            summary: "b".into(),
            ..Default::default()
        });
        assert_eq!(a.units_need_revision, vec!["x", "y"]);
        assert_eq!(a.summary, "a b");
    }
}
