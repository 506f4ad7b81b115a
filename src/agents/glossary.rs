//! The Glossary agent: a deterministic candidate-term pass over the whole book
//! ([`crate::termbase::candidates`], C-value ranking), then model calls over batches of
//! candidates (each within the request budget), then a merge in which house-style entries win.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::Agent;
use super::json::{ParseStats, item_list, str_field};
use crate::lang::Lang;
use crate::llm::{JsonSchema, Message, Request};
pub use crate::termbase::candidates::{Candidate, SNIPPET_CHARS, candidates};
use crate::termbase::{Entry, Origin, Termbase, term_key};

/// JSON schema of the Glossary agent's answer.
pub fn schema() -> JsonSchema {
    JsonSchema {
        name: "glossary".into(),
        schema: json!({
            "type": "object",
            "properties": {"entries": {"type": "array", "items": {
                "type": "object",
                "properties": {"source": {"type": "string"}, "target": {"type": "string"}, "note": {"type": "string"}},
                "required": ["source", "target", "note"], "additionalProperties": false}}},
            "required": ["entries"], "additionalProperties": false
        }),
    }
}

/// The system prompt (identical for every batch).
pub fn system_prompt(source: &Lang, target: &Lang) -> String {
    format!(
        "You are a terminologist preparing the termbase for translating a technical book from {src} into {tgt}.\n\
         The user lists candidate terms found in the book, each with a short context. For each candidate that is a real domain term worth fixing for the whole book, give the {tgt} rendering a professional translator would use, and a short note (meaning, or why it stays untranslated).\n\
         Skip ordinary words and phrases that are not terms. If a term should stay as it is (a product or library name, an acronym), give the source form as the target.\n\
         Stay consistent with the mandatory house-style entries listed by the user.\n\
         Answer with one JSON object: {{\"entries\": [{{\"source\": \"…\", \"target\": \"…\", \"note\": \"…\"}}]}}, using the candidate's exact spelling as `source`.",
        src = source.name,
        tgt = target.name
    )
}

/// Marker line that starts the candidate list in the user message (the pseudo provider reads
/// candidates after it).
pub const CANDIDATES_HEADER: &str = "Candidate terms (term | context):";

/// The request for one batch of candidates. `house` entries are listed for consistency (at
/// most 100 of them, to keep the prompt bounded).
pub fn build_request(
    source: &Lang,
    target: &Lang,
    house: &Termbase,
    batch: &[Candidate],
) -> Request {
    let mut user = String::new();
    if !house.is_empty() {
        user.push_str("Mandatory house-style entries:\n");
        for e in house.entries.iter().take(100) {
            user.push_str(&format!("- {} → {}\n", e.source, e.target));
        }
        user.push('\n');
    }
    user.push_str(CANDIDATES_HEADER);
    user.push('\n');
    for c in batch {
        user.push_str(&format!("- {} | {}\n", c.term, c.snippet));
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

/// The candidate terms listed in a Glossary request (for the pseudo provider).
pub fn candidates_in(req: &Request) -> Vec<String> {
    let Some(user) = req.messages.last() else {
        return Vec::new();
    };
    let Some(pos) = user.content.find(CANDIDATES_HEADER) else {
        return Vec::new();
    };
    user.content[pos + CANDIDATES_HEADER.len()..]
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.split(" | ").next().unwrap_or(l).trim().to_string())
        .collect()
}

/// Splits candidates into batches whose requests stay within `budget_tokens` (estimated with
/// `o200k_base`), at most `max_per_batch` candidates each. A batch always holds at least one
/// candidate.
pub fn batches(
    source: &Lang,
    target: &Lang,
    house: &Termbase,
    cands: &[Candidate],
    budget_tokens: usize,
    max_per_batch: usize,
) -> Vec<Vec<Candidate>> {
    let base = build_request(source, target, house, &[]).prompt_tokens_estimate();
    let mut out: Vec<Vec<Candidate>> = Vec::new();
    let mut cur: Vec<Candidate> = Vec::new();
    let mut cur_tokens = base;
    for c in cands {
        let t = crate::tokens::count(&format!("- {} | {}\n", c.term, c.snippet));
        if !cur.is_empty() && (cur_tokens + t > budget_tokens || cur.len() >= max_per_batch) {
            out.push(std::mem::take(&mut cur));
            cur_tokens = base;
        }
        cur_tokens += t;
        cur.push(c.clone());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Parses a Glossary answer leniently. Entries must name one of `asked` (case-insensitive)
/// and have a non-empty source and target; `term`/`translation`/`rendering`/`comment` are
/// accepted as key aliases (a repair). Everything else is dropped and counted.
pub fn parse(value: &Value, asked: &[String]) -> (Vec<Entry>, ParseStats) {
    let mut stats = ParseStats::default();
    let asked: HashMap<String, &String> = asked.iter().map(|a| (term_key(a), a)).collect();
    let mut out = Vec::new();
    for item in item_list(value, &["entries", "terms", "glossary"], &mut stats) {
        let Value::Object(obj) = item else {
            stats.drop_item("entry is not an object");
            continue;
        };
        let mut alias = false;
        let source = str_field(&obj, &["source", "term", "en"], &mut alias);
        let target = str_field(
            &obj,
            &["target", "translation", "rendering", "zh"],
            &mut alias,
        );
        let note = str_field(&obj, &["note", "comment", "notes"], &mut alias).unwrap_or_default();
        let (Some(source), Some(target)) = (source, target) else {
            stats.drop_item("entry without source or target");
            continue;
        };
        let Some(canonical) = asked.get(&term_key(&source)) else {
            stats.drop_item(format!("`{source}` was not a candidate"));
            continue;
        };
        if alias {
            stats.repair(format!("`{source}`: alternative key names"));
        } else {
            stats.accepted += 1;
        }
        out.push(Entry {
            source: canonical.to_string(),
            target,
            note,
            origin: Origin::Agent,
            forbidden: Vec::new(),
            variants: Vec::new(),
        });
    }
    (out, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_respect_budget() {
        let cands: Vec<Candidate> = (0..300)
            .map(|i| Candidate {
                term: format!("Term{i}"),
                freq: 3,
                score: 1.0,
                snippet: "some context words here ".repeat(5),
            })
            .collect();
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        let b = batches(&en, &zh, &Termbase::default(), &cands, 2500, 1000);
        assert!(b.len() > 1);
        for batch in &b {
            assert!(
                build_request(&en, &zh, &Termbase::default(), batch).prompt_tokens_estimate()
                    <= 2500
            );
        }
        assert_eq!(b.iter().map(Vec::len).sum::<usize>(), 300);
        let req = build_request(&en, &zh, &Termbase::default(), &b[0]);
        assert_eq!(candidates_in(&req)[0], "Term0");
    }

    #[test]
    fn parse_handles_junk() {
        let asked = vec![
            "Agent".to_string(),
            "LLM".to_string(),
            "context window".to_string(),
        ];
        let v = json!({"entries": [
            {"source": "agent", "target": "智能体", "note": "core", "extra": 1},
            {"term": "LLM", "translation": "大语言模型"},
            {"source": "context window", "target": ""},
            null,
            {"source": "unrelated", "target": "x"},
            {"target": "no source"}
        ]});
        let (entries, stats) = parse(&v, &asked);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].source, "Agent");
        assert_eq!(entries[0].origin, Origin::Agent);
        assert_eq!(stats.accepted, 1);
        assert_eq!(stats.repaired, 1);
        assert_eq!(stats.dropped, 4);
        let (e, s) = parse(&json!([{"source": "LLM", "target": "大模型"}]), &asked);
        assert_eq!((e.len(), s.repaired), (1, 1));
        let (e, s) = parse(&Value::Null, &asked);
        assert_eq!((e.len(), s.dropped), (0, 1));
        let (e, _) = parse(&json!({"something": 1}), &asked);
        assert!(e.is_empty());
    }
}
