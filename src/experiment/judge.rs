//! The blinded pairwise judge of `booktr experiment`: for each translation unit, a model sees the
//! source and two anonymous translations, X and Y, scores each from 1 to 5 on accuracy,
//! fluency, terminology and Markdown/code fidelity (each with evidence quoted from the texts)
//! and states `preferred: X | Y | tie` with evidence.
//!
//! - **Blinding**: the request names no arm, mode or agent; which arm is X alternates unit by
//!   unit (even positions: orchestration is X; odd: the single agent is X), recorded in the
//!   [`Judgment`] only.
//! - **Strict validation** ([`validate`]): the answer must be one JSON object with exactly the
//!   keys of [`schema`], integer scores 1–5 and non-empty evidence; every problem is listed.
//! - **One bounded repair** ([`repair_request`]): an invalid answer gets one request that shows
//!   only the invalid answer, the problems and the schema, never the texts, so the model can
//!   reformat but cannot judge again; a repaired answer that changes a score or the preference
//!   the first answer gave validly is refused ([`unchanged_by_repair`]). Still invalid: the call
//!   fails (recorded) and a later run asks again.
//! - **Verified evidence** ([`verify`]): every quote must occur in the text it cites
//!   (whitespace removed, see [`quote_found`]); a judgment with a quote that does not is
//!   `unverified`, kept and reported but not counted as a preference (see
//!   [`super::evidence`]).
//! - **Receipts**: every raw request and response is saved as a file (no key, no endpoint),
//!   hashed, and journaled as [`Event::Receipt`] (see [`run`]).
//! - **Checkpoints**: judgments are result files in their own state directory
//!   (`<state_dir>/judge/<config key>/`, mode `judge`, model = the judge model), keyed by unit
//!   and by the sha256 of what was judged, so a resumed experiment never judges the same pair
//!   twice and a changed translation is judged again.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Arm;
use crate::agents::Agent;
use crate::campaign::Campaign;
use crate::campaign::core::commit;
use crate::campaign::core::fingerprint::STATE_SCHEMA_VERSION;
use crate::campaign::core::judgment::JudgmentRecord;
use crate::campaign::core::state::State;
use crate::campaign::core::store::{Event, Existing, Output, ResultFile, Store, now_ms};
use crate::lang::Lang;
use crate::llm::{Answer, JsonSchema, Message, Provider, Request, Usage};

/// Version of the judge and repair prompts; part of every judgment's key.
pub const JUDGE_PROMPT_VERSION: &str = "2026-11-30.1";

/// Phrase in the system prompt of every judge and repair request (the fake server and the
/// pseudo provider recognise the judge by it).
pub const JUDGE_MARKER: &str = "impartial judge";

/// Phrase only the repair request's system prompt has.
pub const REPAIR_MARKER: &str = "reformat the answer of an impartial judge";

/// The four dimensions, in schema order.
pub const DIMENSIONS: [&str; 4] = ["accuracy", "fluency", "terminology", "markdown_code"];

/// Longest evidence quote accepted, in characters.
pub const MAX_EVIDENCE_CHARS: usize = 600;

/// One score with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Score {
    /// 1 (unusable) to 5 (publishable).
    pub score: u8,
    /// A short excerpt quoted from the source or the translation.
    pub evidence: String,
}

/// The four scores of one translation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scores {
    pub accuracy: Score,
    pub fluency: Score,
    pub terminology: Score,
    pub markdown_code: Score,
}

impl Scores {
    /// The scores in [`DIMENSIONS`] order.
    pub fn all(&self) -> [&Score; 4] {
        [
            &self.accuracy,
            &self.fluency,
            &self.terminology,
            &self.markdown_code,
        ]
    }
}

/// The judge's preference between the anonymous translations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Preferred {
    X,
    Y,
    #[serde(rename = "tie")]
    Tie,
}

/// A valid judge answer, exactly the shape of [`schema`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    pub x: Scores,
    pub y: Scores,
    pub preferred: Preferred,
    pub preferred_evidence: String,
}

/// A receipt file named in a judgment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptRef {
    /// `judge.request`, `judge.response`, `repair.request` or `repair.response`.
    pub kind: String,
    /// Relative to the judge's state directory.
    pub file: String,
    pub sha256: String,
}

/// One unit's judgment, as recorded (the result file's output).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgment {
    pub unit: String,
    /// The arm shown as X (the other was Y).
    pub x: Arm,
    pub verdict: Verdict,
    /// Whether the first answer was invalid and the repair request fixed it.
    pub repaired: bool,
    /// What was wrong with the first answer (empty when it was valid).
    pub problems: Vec<String>,
    /// Evidence quotes found in the text each cites ([`verify`]; whitespace removed), and all
    /// quotes (9 per judgment).
    pub quotes_found: usize,
    pub quotes: usize,
    /// sha256 over the source and the two translations judged (see [`inputs_sha256`]).
    pub inputs_sha256: String,
    pub receipts: Vec<ReceiptRef>,
    /// Whether every evidence quote occurs in the text it cites ([`verify`]); an unverified
    /// judgment is not counted as a preference. `None` in judgments recorded before this field
    /// existed: the aggregates recompute it from the texts judged either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
}

impl Judgment {
    /// The arm shown as Y.
    pub fn y(&self) -> Arm {
        self.x.other()
    }

    /// The scores given to `arm`.
    pub fn scores_of(&self, arm: Arm) -> &Scores {
        if arm == self.x {
            &self.verdict.x
        } else {
            &self.verdict.y
        }
    }

    /// The preferred arm, `None` for a tie.
    pub fn preferred_arm(&self) -> Option<Arm> {
        match self.verdict.preferred {
            Preferred::X => Some(self.x),
            Preferred::Y => Some(self.y()),
            Preferred::Tie => None,
        }
    }
}

/// What one unit's judge sees.
#[derive(Debug, Clone)]
pub struct Pair {
    pub unit: String,
    /// Position among the units judged (0-based): decides the alias order.
    pub index: usize,
    pub source: String,
    pub orchestration: String,
    pub single_agent: String,
}

impl Pair {
    /// The arm shown as X: orchestration at even positions, the single agent at odd ones.
    pub fn x_arm(&self) -> Arm {
        if self.index.is_multiple_of(2) {
            Arm::Orchestration
        } else {
            Arm::SingleAgent
        }
    }

    /// (X text, Y text).
    pub fn texts(&self) -> (&str, &str) {
        match self.x_arm() {
            Arm::Orchestration => (&self.orchestration, &self.single_agent),
            Arm::SingleAgent => (&self.single_agent, &self.orchestration),
        }
    }

    /// The call key: unit id and the first 16 hex digits of [`inputs_sha256`].
    pub fn call_key(&self) -> String {
        let (x, y) = self.texts();
        format!(
            "judge/{}-{}",
            self.unit,
            &inputs_sha256(&self.source, x, y)[..16]
        )
    }
}

/// sha256 (hex) of the judge prompt version, the source, and the X and Y texts.
pub fn inputs_sha256(source: &str, x: &str, y: &str) -> String {
    crate::util::sha256_hex(
        serde_json::to_vec(&json!([JUDGE_PROMPT_VERSION, source, x, y])).expect("json"),
    )
}

/// The JSON schema of a judge answer (OpenAI strict-mode compatible: every key required, no
/// additional properties).
pub fn schema() -> JsonSchema {
    let score = json!({
        "type": "object",
        "properties": {
            "score": {"type": "integer", "minimum": 1, "maximum": 5},
            "evidence": {"type": "string"}
        },
        "required": ["score", "evidence"],
        "additionalProperties": false
    });
    let scores = json!({
        "type": "object",
        "properties": {
            "accuracy": score, "fluency": score, "terminology": score, "markdown_code": score
        },
        "required": DIMENSIONS,
        "additionalProperties": false
    });
    JsonSchema {
        name: "pairwise_judgment".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "x": scores,
                "y": scores,
                "preferred": {"type": "string", "enum": ["X", "Y", "tie"]},
                "preferred_evidence": {"type": "string"}
            },
            "required": ["x", "y", "preferred", "preferred_evidence"],
            "additionalProperties": false
        }),
    }
}

const EXAMPLE: &str = r#"{"x": {"accuracy": {"score": 4, "evidence": "…"}, "fluency": {"score": 3, "evidence": "…"}, "terminology": {"score": 5, "evidence": "…"}, "markdown_code": {"score": 5, "evidence": "…"}}, "y": {…same four keys…}, "preferred": "X", "preferred_evidence": "…"}"#;

/// The judge's system prompt.
pub fn system_prompt(source: &Lang, target: &Lang) -> String {
    format!(
        "You are an {JUDGE_MARKER} of technical book translations from {src} into {tgt}. You see a source text and two anonymous translations of it, X and Y, shown in no particular order.\n\
         \n\
         Score each translation from 1 (unusable) to 5 (ready to publish) on four dimensions:\n\
         - accuracy: the meaning of the source is kept; nothing is added or left out;\n\
         - fluency: natural, precise {tgt} prose for professional readers;\n\
         - terminology: technical terms are rendered correctly and consistently;\n\
         - markdown_code: Markdown structure, code, inline code, links and images are kept exactly.\n\
         For every score, give evidence: a short excerpt copied exactly from the source or from that translation. Then say which translation you prefer, \"X\", \"Y\" or \"tie\", with evidence copied the same way. Judge only the texts; their order and length say nothing about their quality.\n\
         \n\
         Reply with one JSON object only, no prose and no code fence, exactly in this shape:\n{EXAMPLE}",
        src = source.name,
        tgt = target.name,
    )
}

/// The runaway ceiling of a judgment and of its repair, in `o200k_base` tokens: the margin
/// every structured answer of a campaign gets over its bound
/// ([`crate::agents::bounds::structured_ceiling`] of [`crate::agents::bounds::JUDGE_MAX_TOKENS`],
/// 8,192), not the 32,768 of a request that names none. A judgment is continued when cut
/// (below), so without it a judge that never stops went on to 32,768 tokens.
fn judge_ceiling() -> u32 {
    crate::agents::bounds::structured_ceiling(crate::agents::bounds::JUDGE_MAX_TOKENS)
}

/// The request for one pair.
pub fn build_request(source_lang: &Lang, target_lang: &Lang, pair: &Pair) -> Request {
    let (x, y) = pair.texts();
    Request {
        task: Agent::Judge.into(),
        messages: vec![
            Message::system(system_prompt(source_lang, target_lang)),
            Message::user(format!(
                "<source>\n{}\n</source>\n\n<translation_x>\n{x}\n</translation_x>\n\n<translation_y>\n{y}\n</translation_y>",
                pair.source
            )),
        ],
        json_schema: Some(schema()),
        max_tokens: Some(crate::agents::bounds::JUDGE_MAX_TOKENS),
        ceiling_tokens: Some(judge_ceiling()),
        prefill: None,
    }
}

/// The one schema-repair request: the invalid answer, the problems and the schema, and nothing
/// of the texts judged, so it can only be reformatted, not judged again.
pub fn repair_request(invalid_answer: &str, problems: &[String]) -> Request {
    let mut list = String::new();
    for p in problems {
        list.push_str(&format!("- {p}\n"));
    }
    Request {
        task: Agent::Judge.into(),
        messages: vec![
            Message::system(format!(
                "You {REPAIR_MARKER} of translations so that it matches a JSON schema. Do not judge again and do not change any judgment: keep every score, evidence quote and the preference exactly as the previous answer gives them, and only fix the format (keys, nesting, types). Reply with one JSON object only, no prose and no code fence."
            )),
            Message::user(format!(
                "Schema:\n{}\n\nProblems with the previous answer:\n{list}\nPrevious answer:\n<answer>\n{}\n</answer>",
                serde_json::to_string(&schema().schema).expect("json"),
                crate::util::excerpt(invalid_answer, 8000)
            )),
        ],
        json_schema: Some(schema()),
        max_tokens: Some(crate::agents::bounds::JUDGE_MAX_TOKENS),
        ceiling_tokens: Some(judge_ceiling()),
        prefill: None,
    }
}

/// Whether `req` is a repair request.
pub fn is_repair(req: &Request) -> bool {
    req.messages
        .first()
        .is_some_and(|m| m.content.contains(REPAIR_MARKER))
}

/// Validates an answer strictly against [`schema`]. The JSON object may stand alone or in one
/// code fence (found with [`crate::agents::json::extract`]); inside it, nothing is lenient:
/// every key required, no other key, integer scores 1–5, non-empty evidence of at most
/// [`MAX_EVIDENCE_CHARS`] characters, `preferred` exactly `X`, `Y` or `tie`.
///
/// Errors: every problem found, one line each, naming the JSON path.
pub fn validate(answer: &str) -> Result<Verdict, Vec<String>> {
    let v = crate::agents::json::extract(answer)
        .map_err(|e| vec![format!("the answer is not a JSON object: {e}")])?;
    let mut problems = Vec::new();
    let Some(obj) = v.as_object() else {
        return Err(vec!["the answer is not a JSON object".into()]);
    };
    let keys = |o: &serde_json::Map<String, Value>,
                want: &[&str],
                path: &str,
                problems: &mut Vec<String>| {
        for k in want {
            if !o.contains_key(*k) {
                problems.push(format!("{path}{k}: missing"));
            }
        }
        for k in o.keys() {
            if !want.contains(&k.as_str()) {
                problems.push(format!("{path}{k}: unknown key"));
            }
        }
    };
    let evidence = |v: Option<&Value>, path: &str, problems: &mut Vec<String>| match v {
        Some(Value::String(s)) if s.trim().is_empty() => {
            problems.push(format!("{path}: empty evidence"))
        }
        Some(Value::String(s)) if s.chars().count() > MAX_EVIDENCE_CHARS => problems.push(format!(
            "{path}: evidence longer than {MAX_EVIDENCE_CHARS} characters"
        )),
        Some(Value::String(_)) | None => {}
        Some(other) => problems.push(format!("{path}: must be a string, not {other}")),
    };
    keys(
        obj,
        &["x", "y", "preferred", "preferred_evidence"],
        "",
        &mut problems,
    );
    for side in ["x", "y"] {
        match obj.get(side) {
            Some(Value::Object(s)) => {
                keys(s, &DIMENSIONS, &format!("{side}."), &mut problems);
                for d in DIMENSIONS {
                    let path = format!("{side}.{d}");
                    match s.get(d) {
                        Some(Value::Object(sc)) => {
                            keys(
                                sc,
                                &["score", "evidence"],
                                &format!("{path}."),
                                &mut problems,
                            );
                            match sc.get("score") {
                                Some(Value::Number(n))
                                    if n.as_u64().is_some_and(|n| (1..=5).contains(&n)) => {}
                                Some(other) => problems.push(format!(
                                    "{path}.score: must be an integer from 1 to 5, not {other}"
                                )),
                                None => {}
                            }
                            evidence(
                                sc.get("evidence"),
                                &format!("{path}.evidence"),
                                &mut problems,
                            );
                        }
                        Some(other) => {
                            problems.push(format!("{path}: must be an object, not {other}"))
                        }
                        None => {}
                    }
                }
            }
            Some(other) => problems.push(format!("{side}: must be an object, not {other}")),
            None => {}
        }
    }
    match obj.get("preferred") {
        Some(Value::String(p)) if ["X", "Y", "tie"].contains(&p.as_str()) => {}
        Some(other) => problems.push(format!(
            "preferred: must be \"X\", \"Y\" or \"tie\", not {other}"
        )),
        None => {}
    }
    evidence(
        obj.get("preferred_evidence"),
        "preferred_evidence",
        &mut problems,
    );
    if !problems.is_empty() {
        return Err(problems);
    }
    serde_json::from_value(v).map_err(|e| vec![format!("the answer does not match: {e}")])
}

/// A value of the first answer that a repair changed (the first found).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepairChanged {
    /// Side `side`'s score of dimension `dimension` went from `from` to `to` (1 to 5).
    #[error("the repair changed {side}.{dimension}.score from {from} to {to}")]
    Score {
        side: &'static str,
        dimension: &'static str,
        from: u64,
        to: u8,
    },
    /// The preference went from `from` to `to` (`to` as JSON, quoted).
    #[error("the repair changed preferred from {from} to {to}")]
    Preferred { from: String, to: String },
}

/// Whether a repaired verdict keeps every score and the preference that the invalid first
/// answer gave validly (a repair must not judge again). Errors: the first value changed
/// ([`RepairChanged`]).
pub fn unchanged_by_repair(first_answer: &str, repaired: &Verdict) -> Result<(), RepairChanged> {
    let Ok(v) = crate::agents::json::extract(first_answer) else {
        return Ok(());
    };
    for (side, scores) in [("x", &repaired.x), ("y", &repaired.y)] {
        for (d, s) in DIMENSIONS.iter().zip(scores.all()) {
            if let Some(n) = v[side][*d]["score"].as_u64()
                && (1..=5).contains(&n)
                && n != s.score as u64
            {
                return Err(RepairChanged::Score {
                    side,
                    dimension: d,
                    from: n,
                    to: s.score,
                });
            }
        }
    }
    if let Some(p) = v["preferred"].as_str()
        && ["X", "Y", "tie"].contains(&p)
    {
        let now = serde_json::to_value(repaired.preferred).expect("json");
        if now != p {
            return Err(RepairChanged::Preferred {
                from: p.to_string(),
                to: now.to_string(),
            });
        }
    }
    Ok(())
}

/// `s` without any whitespace character (Unicode `White_Space`), the form quotes and texts are
/// compared in: line breaks, indentation, doubled spaces and the spaces a model adds or drops
/// between CJK characters do not matter; every other character (punctuation, Markdown marks,
/// letter case) must match exactly.
pub fn without_whitespace(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Whether an evidence quote occurs in one of `texts`. The normalisation, documented here
/// because the `judgments_verified_80_percent` gate depends on it:
///
/// 1. quotation marks (`"'“”‘’「」『』«»`) and then ellipses or full stops (`…`, `.`) around the
///    quote are dropped (a model often wraps an excerpt in them);
/// 2. an ellipsis inside the quote (`…` or `...`) elides text: the pieces it separates must all
///    occur in the same text, in order;
/// 3. whitespace is removed from the pieces and the text ([`without_whitespace`]), then each
///    piece must be a substring.
///
/// A quote that is empty after this is not found.
pub fn quote_found(quote: &str, texts: &[&str]) -> bool {
    let q = quote
        .trim()
        .trim_matches(|c: char| "\"'“”‘’「」『』«»".contains(c))
        .trim()
        .trim_matches(|c: char| c == '…' || c == '.')
        .trim();
    let pieces: Vec<String> = q
        .split("...")
        .flat_map(|p| p.split('…'))
        .map(without_whitespace)
        .filter(|p| !p.is_empty())
        .collect();
    if pieces.is_empty() {
        return false;
    }
    texts.iter().any(|t| {
        let t = without_whitespace(t);
        let mut at = 0;
        pieces.iter().all(|p| match t[at..].find(p.as_str()) {
            Some(i) => {
                at += i + p.len();
                true
            }
            None => false,
        })
    })
}

/// Which quotes of a verdict occur in the texts they cite.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QuoteCheck {
    /// Quotes found, and all quotes (9 per judgment: 4 per translation and the preference's).
    pub found: usize,
    pub quotes: usize,
    /// The quotes not found, as `path: quote` (e.g. `x.fluency: 智能体…`), in schema order.
    pub missing: Vec<String>,
}

impl QuoteCheck {
    /// Every quote found (and there is at least one).
    pub fn verified(&self) -> bool {
        self.quotes > 0 && self.found == self.quotes
    }
}

/// Checks every evidence quote of `v` against the text it cites ([`quote_found`]): the four
/// scores of X against the source and X's translation, those of Y against the source and Y's,
/// and the preference's against the source and both translations (the system prompt asks for
/// "an excerpt copied exactly from the source or from that translation").
pub fn verify(v: &Verdict, pair: &Pair) -> QuoteCheck {
    let (x, y) = pair.texts();
    let source = pair.source.as_str();
    let mut check = QuoteCheck::default();
    let mut one = |path: String, quote: &str, texts: &[&str]| {
        check.quotes += 1;
        if quote_found(quote, texts) {
            check.found += 1;
        } else {
            check
                .missing
                .push(format!("{path}: {}", crate::util::excerpt(quote, 120)));
        }
    };
    for (side, scores, text) in [("x", &v.x, x), ("y", &v.y, y)] {
        for (d, s) in DIMENSIONS.iter().zip(scores.all()) {
            one(format!("{side}.{d}"), &s.evidence, &[source, text]);
        }
    }
    one(
        "preferred_evidence".into(),
        &v.preferred_evidence,
        &[source, x, y],
    );
    check
}

/// (quotes found, quotes) of a verdict against the texts judged, each quote against the text
/// it cites (see [`verify`]).
pub fn count_quotes(v: &Verdict, pair: &Pair) -> (usize, usize) {
    let c = verify(v, pair);
    (c.found, c.quotes)
}

/// The three texts of a judge request: (source, X, Y).
pub fn texts_of(req: &Request) -> Option<(&str, &str, &str)> {
    let body = req.messages.get(1)?.content.as_str();
    let rest = body.strip_prefix("<source>\n")?;
    let (source, rest) = rest.split_once("\n</source>\n\n<translation_x>\n")?;
    let rest = rest.strip_suffix("\n</translation_y>")?;
    let (x, y) = rest.rsplit_once("\n</translation_x>\n\n<translation_y>\n")?;
    Some((source, x, y))
}

/// The pseudo provider's judge (rehearsals and the fake server): deterministic, valid answers.
/// Markdown/code fidelity is measured (fenced code, inline code and link targets identical to
/// the source's: 5, else 2); the other dimensions get 3 with a quote, because pseudo text has no
/// meaning to judge. The preference follows the totals. A repair request gets the invalid
/// answer it carries coerced into the schema, keeping every valid value.
pub fn pseudo_answer(req: &Request) -> String {
    if is_repair(req) {
        return pseudo_repair(req);
    }
    let Some((source, x, y)) = texts_of(req) else {
        return "{}".into();
    };
    let src = crate::qa::Doc::parse(source);
    let quote = |t: &str| -> String {
        let line = t
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let q: String = line.chars().take(24).collect();
        if q.trim().is_empty() {
            "(empty)".into()
        } else {
            q.trim().to_string()
        }
    };
    let scores = |t: &str| -> Value {
        let d = crate::qa::Doc::parse(t);
        let kept = d
            .fences
            .iter()
            .map(|f| &f.body)
            .eq(src.fences.iter().map(|f| &f.body))
            && d.inline_code == src.inline_code
            && d.links == src.links;
        let q = quote(t);
        let md = if kept { 5 } else { 2 };
        json!({
            "accuracy": {"score": 3, "evidence": q},
            "fluency": {"score": 3, "evidence": q},
            "terminology": {"score": 3, "evidence": q},
            "markdown_code": {"score": md, "evidence": q},
        })
    };
    let (sx, sy) = (scores(x), scores(y));
    let total = |s: &Value| -> u64 {
        DIMENSIONS
            .iter()
            .map(|d| s[*d]["score"].as_u64().unwrap_or(0))
            .sum()
    };
    let preferred = match total(&sx).cmp(&total(&sy)) {
        std::cmp::Ordering::Greater => "X",
        std::cmp::Ordering::Less => "Y",
        std::cmp::Ordering::Equal => "tie",
    };
    json!({
        "x": sx,
        "y": sy,
        "preferred": preferred,
        "preferred_evidence": quote(if preferred == "Y" { y } else { x }),
    })
    .to_string()
}

fn pseudo_repair(req: &Request) -> String {
    let body = req.messages.get(1).map_or("", |m| m.content.as_str());
    let previous = body
        .split_once("<answer>\n")
        .and_then(|(_, r)| r.rsplit_once("\n</answer>"))
        .map_or("", |(a, _)| a);
    let v = crate::agents::json::extract(previous).unwrap_or(Value::Null);
    let score = |s: &Value| -> Value {
        let n = match &s["score"] {
            Value::Number(n) => n.as_f64().map(|f| f.round() as i64),
            Value::String(t) => t
                .trim()
                .chars()
                .next()
                .and_then(|c| c.to_digit(10))
                .map(i64::from),
            _ => None,
        }
        .filter(|n| (1..=5).contains(n))
        .unwrap_or(3);
        let e = s["evidence"]
            .as_str()
            .filter(|e| !e.trim().is_empty())
            .unwrap_or("(no evidence given)");
        json!({"score": n, "evidence": e})
    };
    let side = |s: &Value| -> Value {
        let mut m = serde_json::Map::new();
        for d in DIMENSIONS {
            m.insert(d.into(), score(&s[d]));
        }
        Value::Object(m)
    };
    let preferred = match v["preferred"].as_str().map(|p| p.trim().to_lowercase()) {
        Some(p) if p == "x" => "X",
        Some(p) if p == "y" => "Y",
        _ => "tie",
    };
    json!({
        "x": side(&v["x"]),
        "y": side(&v["y"]),
        "preferred": preferred,
        "preferred_evidence": v["preferred_evidence"].as_str().filter(|e| !e.trim().is_empty()).unwrap_or("(no evidence given)"),
    })
    .to_string()
}

/// A receipt before it is written: its kind and bytes.
struct Draft {
    kind: &'static str,
    bytes: Vec<u8>,
}

fn request_receipt(call: &str, kind: &str, model: &str, provider: &str, req: &Request) -> Draft {
    // Only what was asked: messages, schema, limits, model. Never the key or the endpoint.
    let v = json!({
        "call": call,
        "kind": format!("{kind}.request"),
        "provider": provider,
        "model": model,
        "messages": req.messages,
        "json_schema": req.json_schema,
        "max_tokens": req.max_tokens,
    });
    let mut bytes = serde_json::to_vec_pretty(&v).expect("json");
    bytes.push(b'\n');
    Draft {
        kind: if kind == "judge" {
            "judge.request"
        } else {
            "repair.request"
        },
        bytes,
    }
}

fn response_receipt(call: &str, kind: &str, answer: Result<&Answer, &str>) -> Draft {
    let v = match answer {
        Ok(a) => json!({"call": call, "kind": format!("{kind}.response"), "answer": a}),
        Err(e) => json!({"call": call, "kind": format!("{kind}.response"), "error": e}),
    };
    let mut bytes = serde_json::to_vec_pretty(&v).expect("json");
    bytes.push(b'\n');
    Draft {
        kind: if kind == "judge" {
            "judge.response"
        } else {
            "repair.response"
        },
        bytes,
    }
}

/// What judging one pair produced (receipts are written by the caller, in order).
struct Outcome {
    call: String,
    pair: Pair,
    drafts: Vec<Draft>,
    usage: Usage,
    requests: u32,
    attempts: u32,
    model: Option<String>,
    elapsed_ms: u64,
    result: Result<(Verdict, bool, Vec<String>), String>,
    request_sha256: String,
}

async fn judge_one(
    provider: Arc<Provider>,
    (src_lang, tgt_lang, model, provider_kind): (Lang, Lang, String, String),
    pair: Pair,
) -> Outcome {
    let started = std::time::Instant::now();
    let call = pair.call_key();
    let req = build_request(&src_lang, &tgt_lang, &pair);
    let mut out = Outcome {
        call: call.clone(),
        request_sha256: req.fingerprint(),
        pair,
        drafts: vec![request_receipt(
            &call,
            "judge",
            &model,
            &provider_kind,
            &req,
        )],
        usage: Usage::default(),
        requests: 0,
        attempts: 0,
        model: None,
        elapsed_ms: 0,
        result: Err(String::new()),
    };
    // A judgment cut at max_tokens is continued like every other reply
    // (crate::llm::continuation), not repaired from a fragment.
    let answer = match crate::llm::continuation::complete_continued(&provider, &req).await {
        Ok((a, _)) => a,
        Err(e) => {
            let msg = e.to_string();
            out.drafts.push(response_receipt(&call, "judge", Err(&msg)));
            out.result = Err(msg);
            return out;
        }
    };
    out.drafts
        .push(response_receipt(&call, "judge", Ok(&answer)));
    out.usage.add(&answer.usage);
    out.requests += answer.attempts;
    out.attempts += answer.attempts;
    out.model = answer.model.clone();
    out.result = match validate(&answer.content) {
        Ok(v) => Ok((v, false, Vec::new())),
        Err(problems) => {
            let repair = repair_request(&answer.content, &problems);
            out.drafts.push(request_receipt(
                &call,
                "repair",
                &model,
                &provider_kind,
                &repair,
            ));
            match provider.complete(&repair).await {
                Err(e) => {
                    let msg = e.to_string();
                    out.drafts
                        .push(response_receipt(&call, "repair", Err(&msg)));
                    Err(format!(
                        "the judge's answer did not match the schema ({}) and the repair request failed: {msg}",
                        problems.join("; ")
                    ))
                }
                Ok(a2) => {
                    out.drafts.push(response_receipt(&call, "repair", Ok(&a2)));
                    out.usage.add(&a2.usage);
                    out.requests += a2.attempts;
                    out.attempts += a2.attempts;
                    match validate(&a2.content) {
                        Ok(v) => match unchanged_by_repair(&answer.content, &v) {
                            Ok(()) => Ok((v, true, problems)),
                            Err(e) => Err(format!("the repaired answer was refused: {e}")),
                        },
                        Err(p2) => Err(format!(
                            "the judge's answer did not match the schema even after one repair request: {}",
                            p2.join("; ")
                        )),
                    }
                }
            }
        }
    };
    out.elapsed_ms = started.elapsed().as_millis() as u64;
    out
}

/// The judge's campaign: the base campaign with mode `judge`, the judge model, and the state
/// under `<state_dir>/judge/`.
pub fn judge_campaign(c: &Campaign, judge_model: &str) -> Campaign {
    let mut jc = c.clone();
    jc.plan.state_dir = c.plan.state_dir.join("judge");
    jc.plan.provider.model = judge_model.to_string();
    jc.manifest.mode = "judge".into();
    jc.manifest.model = judge_model.to_string();
    jc.manifest.prompt_version = format!("judge/{JUDGE_PROMPT_VERSION}");
    jc.fingerprint = jc.manifest.fingerprint();
    jc.config = crate::campaign::core::ConfigPrint::of(&jc.manifest);
    jc
}

/// What [`run`] ends with.
pub struct JudgeRun {
    /// The judgment of every pair that has one, by unit id.
    pub judgments: BTreeMap<String, Judgment>,
    /// Units whose judging failed in this run, with the error.
    pub failed: BTreeMap<String, String>,
    pub interrupted: bool,
    /// The judge state (usage, files).
    pub state: State,
    /// The judge's state directory.
    pub dir: std::path::PathBuf,
    /// The judge campaign's fingerprint.
    pub fingerprint: String,
}

/// Judges every pair not judged yet (up to `concurrency` at once), recording receipts, then the
/// judgment, as each finishes. Stops on Ctrl-C/SIGTERM (finished judgments are kept).
///
/// Errors: the state cannot be opened (lock held, I/O) or written.
pub async fn run(
    c: &Campaign,
    provider: Arc<Provider>,
    judge_model: &str,
    pairs: Vec<Pair>,
    concurrency: usize,
) -> anyhow::Result<JudgeRun> {
    let jc = judge_campaign(c, judge_model);
    let mut store = Store::open_for_run(&jc, Existing::KeepBeside)?;
    let run_id = format!("{}-{}", now_ms(), std::process::id());
    let mut state = State::load(&jc, &store.dir, &run_id)?;
    for w in state.take_warnings() {
        eprintln!("warning: {w}");
    }
    commit::journal_adopted(&mut store, &mut state)?;
    commit::record_event(
        &jc,
        &mut store,
        &mut state,
        Event::RunStarted {
            run: run_id.clone(),
            pid: std::process::id(),
            provider: jc.plan.provider.kind.as_str().into(),
            model: judge_model.to_string(),
            fingerprint: jc.fingerprint.clone(),
        },
    )?;
    let mut judgments = BTreeMap::new();
    let mut todo = Vec::new();
    for p in pairs {
        match state.finished().get(&p.call_key()).map(|r| &r.output) {
            Some(Output::Judgment(j)) => match j.to::<Judgment>() {
                Ok(j) => {
                    judgments.insert(p.unit.clone(), j);
                }
                // Not a judgment of this shape: judged again (as a result file that does not
                // parse is).
                Err(e) => {
                    eprintln!(
                        "warning: judgment {} is unreadable ({e:#}); judging it again",
                        p.call_key()
                    );
                    todo.push(p);
                }
            },
            _ => todo.push(p),
        }
    }
    let setup = (
        jc.plan.source_lang.clone(),
        jc.plan.target_lang.clone(),
        judge_model.to_string(),
        jc.plan.provider.kind.as_str().to_string(),
    );
    let mut failed = BTreeMap::new();
    let mut interrupted = false;
    {
        let mut stream = futures_util::stream::iter(todo.into_iter().map(|p| {
            let provider = provider.clone();
            let setup = setup.clone();
            async move { judge_one(provider, setup, p).await }
        }))
        .buffer_unordered(concurrency.max(1));
        let mut shutdown = Box::pin(crate::campaign::ops::runner::shutdown_signal());
        loop {
            tokio::select! {
                next = stream.next() => {
                    let Some(out) = next else { break };
                    if let Some(j) = record(&jc, &mut store, &mut state, &run_id, out, &mut failed)? {
                        judgments.insert(j.unit.clone(), j);
                    }
                }
                _ = &mut shutdown => {
                    interrupted = true;
                    break;
                }
            }
        }
    }
    if interrupted {
        store.append(Event::RunInterrupted { run: run_id })?;
    } else {
        store.append(Event::RunFinished {
            run: run_id,
            status: if failed.is_empty() {
                "complete".into()
            } else {
                "incomplete".into()
            },
        })?;
    }
    Ok(JudgeRun {
        judgments,
        failed,
        interrupted,
        state,
        dir: store.dir.clone(),
        fingerprint: jc.fingerprint.clone(),
    })
}

/// Writes the receipts (journaling each), then the judgment or the failure.
fn record(
    jc: &Campaign,
    store: &mut Store,
    state: &mut State,
    run_id: &str,
    out: Outcome,
    failed: &mut BTreeMap<String, String>,
) -> anyhow::Result<Option<Judgment>> {
    let mut receipts = Vec::new();
    let safe: String = out
        .call
        .trim_start_matches("judge/")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    for d in &out.drafts {
        let rel = format!("receipts/{safe}.{}.{}.json", store.next_seq(), d.kind);
        let sha256 = store.write_file(&rel, &d.bytes)?;
        commit::record_event(
            jc,
            store,
            state,
            Event::Receipt {
                call: out.call.clone(),
                kind: d.kind.to_string(),
                file: rel.clone(),
                sha256: sha256.clone(),
            },
        )?;
        receipts.push(ReceiptRef {
            kind: d.kind.to_string(),
            file: rel,
            sha256,
        });
    }
    match out.result {
        Ok((verdict, repaired, problems)) => {
            let check = verify(&verdict, &out.pair);
            let (quotes_found, quotes) = (check.found, check.quotes);
            let (x, y) = out.pair.texts();
            let judgment = Judgment {
                unit: out.pair.unit.clone(),
                x: out.pair.x_arm(),
                verdict,
                repaired,
                problems,
                quotes_found,
                quotes,
                inputs_sha256: inputs_sha256(&out.pair.source, x, y),
                receipts,
                verified: Some(check.verified()),
            };
            let output = Output::Judgment(Box::new(JudgmentRecord::of(&judgment)?));
            let result = ResultFile {
                schema_version: STATE_SCHEMA_VERSION,
                origin: None,
                call: out.call.clone(),
                agent: Agent::Judge,
                unit: Some(out.pair.unit.clone()),
                request_sha256: out.request_sha256,
                usage: out.usage,
                attempts: out.attempts,
                requests: out.requests,
                model: out.model,
                finish_reason: None,
                elapsed_ms: out.elapsed_ms,
                output_sha256: ResultFile::output_hash(&output),
                output,
                long: None,
                sample: None,
                kept_blocks: None,
            };
            commit::record_result(jc, store, state, result, |_| 0)?;
            Ok(Some(judgment))
        }
        Err(error) => {
            eprintln!("judge failed for {}: {error}", out.pair.unit);
            commit::record_event(
                jc,
                store,
                state,
                Event::CallFailed {
                    call: out.call.clone(),
                    agent: Agent::Judge,
                    unit: Some(out.pair.unit.clone()),
                    run: run_id.to_string(),
                    error: error.clone(),
                    attempts: out.attempts,
                    usage: out.usage,
                    unusable: false,
                },
            )?;
            failed.insert(out.pair.unit, error);
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A judge result file exactly as `booktr experiment` wrote it while the judgment was a
    /// type of `experiment` inside the campaign's `Output` (2026-11): it still loads, checks out
    /// (`output_sha256` over the same compact bytes) and is written back byte for byte.
    const JUDGMENT_RESULT_2026_11: &str =
        include_str!("../../tests/fixtures/state/judgment_result_2026-11.json");

    #[test]
    fn judgment_result_files_written_before_the_campaign_owned_the_judgment_still_load() {
        let r: ResultFile = serde_json::from_str(JUDGMENT_RESULT_2026_11).unwrap();
        assert!(r.is_intact(), "output_sha256 over the same bytes");
        let mut back = serde_json::to_vec_pretty(&r).unwrap();
        back.push(b'\n');
        assert_eq!(String::from_utf8(back).unwrap(), JUDGMENT_RESULT_2026_11);
        let Output::Judgment(rec) = &r.output else {
            panic!("{:?}", r.output)
        };
        let j: Judgment = rec.to().unwrap();
        assert_eq!(
            (j.unit.as_str(), j.x, j.preferred_arm(), j.verified),
            (
                "ch01-002",
                Arm::SingleAgent,
                Some(Arm::Orchestration),
                Some(true)
            )
        );
        assert_eq!(
            j.scores_of(Arm::Orchestration).terminology.evidence,
            "Agent → 智能体"
        );
        assert_eq!((j.quotes_found, j.quotes, j.receipts.len()), (9, 9, 2));
        // Recorded again from the typed judgment: the same output, the same hash.
        let again = Output::Judgment(Box::new(JudgmentRecord::of(&j).unwrap()));
        assert_eq!(again, r.output);
        assert_eq!(ResultFile::output_hash(&again), r.output_sha256);
    }

    fn pair(index: usize) -> Pair {
        Pair {
            unit: "ch-001".into(),
            index,
            source: "The `Agent` reads [docs](https://x.org).\n".into(),
            orchestration: "智能体读取 `Agent` [文档](https://x.org)。\n".into(),
            single_agent: "代理读取文档。\n".into(),
        }
    }

    #[test]
    fn aliases_alternate_and_the_request_is_blind() {
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        let r0 = build_request(&en, &zh, &pair(0));
        let r1 = build_request(&en, &zh, &pair(1));
        assert_eq!(texts_of(&r0).unwrap().1, pair(0).orchestration);
        assert_eq!(texts_of(&r1).unwrap().1, pair(1).single_agent);
        for r in [&r0, &r1] {
            let all: String = r
                .messages
                .iter()
                .map(|m| m.content.to_lowercase())
                .collect();
            for word in [
                "orchestration",
                "single",
                "manager",
                "glossary agent",
                "baseline",
            ] {
                assert!(!all.contains(word), "the request names `{word}`");
            }
        }
        assert_ne!(pair(0).call_key(), pair(1).call_key());
    }

    #[test]
    fn a_judgment_ran_on_to_the_32k_default_ceiling() {
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        let judge = build_request(&en, &zh, &pair(0));
        let repair = repair_request("{}", &["missing key".into()]);
        for r in [&judge, &repair] {
            assert_eq!(r.ceiling_tokens, Some(8192));
            assert!(r.ceiling_tokens.unwrap() < crate::llm::runaway::DEFAULT_CEILING_TOKENS);
        }
    }

    #[test]
    fn strict_validation_lists_every_problem() {
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        let good = pseudo_answer(&build_request(&en, &zh, &pair(0)));
        let v = validate(&good).unwrap();
        // The pseudo judge measures code fidelity: the single agent dropped the inline code.
        assert_eq!(v.x.markdown_code.score, 5);
        assert_eq!(v.y.markdown_code.score, 2);
        assert_eq!(v.preferred, Preferred::X);
        let mut bad: Value = serde_json::from_str(&good).unwrap();
        bad["x"]["accuracy"]["score"] = json!(4.5);
        bad["y"]["fluency"]["evidence"] = json!("  ");
        bad["preferred"] = json!("both");
        bad["confidence"] = json!("high");
        bad["y"].as_object_mut().unwrap().remove("terminology");
        let problems = validate(&bad.to_string()).unwrap_err();
        assert_eq!(problems.len(), 5, "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("x.accuracy.score")));
        assert!(problems.iter().any(|p| p == "confidence: unknown key"));
        assert!(problems.iter().any(|p| p == "y.terminology: missing"));
        assert!(validate("not json").is_err());
        assert!(validate("[1, 2]").is_err());
    }

    #[test]
    fn repair_shows_no_text_and_may_not_change_valid_values() {
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        let good = pseudo_answer(&build_request(&en, &zh, &pair(0)));
        let mut bad: Value = serde_json::from_str(&good).unwrap();
        bad["x"]["fluency"]["score"] = json!("4/5");
        bad["extra"] = json!(1);
        let bad = format!("Here you go: {bad}");
        let problems = validate(&bad).unwrap_err();
        let repair = repair_request(&bad, &problems);
        assert!(is_repair(&repair));
        let all: String = repair.messages.iter().map(|m| m.content.clone()).collect();
        assert!(!all.contains("<source>") && !all.contains("<translation_x>"));
        let fixed = validate(&pseudo_answer(&repair)).unwrap();
        assert_eq!(fixed.x.fluency.score, 4);
        unchanged_by_repair(&bad, &fixed).unwrap();
        let mut changed = fixed.clone();
        changed.x.accuracy.score = 1;
        assert!(unchanged_by_repair(&bad, &changed).is_err());
        changed = fixed;
        changed.preferred = Preferred::Y;
        assert!(unchanged_by_repair(&bad, &changed).is_err());
    }

    #[test]
    fn quotes_are_found_whitespace_normalised() {
        let texts = ["智能体读取\n上下文。", "The agent  reads."];
        assert!(quote_found("“智能体读取 上下文”", &texts));
        assert!(quote_found("The agent reads…", &texts));
        assert!(!quote_found("made up", &texts));
        assert!(!quote_found("  ", &texts));
        // Spaces a model adds or drops between CJK characters, and line breaks, do not matter.
        assert!(quote_found("智 能 体 读 取上下文", &texts));
        assert!(quote_found("The\n agent reads", &texts));
        // An ellipsis elides: the pieces must occur in order in one text.
        assert!(quote_found("智能体…上下文", &texts));
        assert!(quote_found("The ... reads.", &texts));
        assert!(!quote_found("上下文…智能体", &texts));
        assert!(
            !quote_found("智能体 … reads", &texts),
            "pieces from two texts"
        );
        // Other characters must match exactly.
        assert!(!quote_found("the agent reads", &texts));
        assert!(!quote_found("…", &texts));
    }

    #[test]
    fn judge_quote_not_in_text_is_unverified() {
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        let p = pair(0);
        let good = validate(&pseudo_answer(&build_request(&en, &zh, &p))).unwrap();
        let check = verify(&good, &p);
        assert_eq!((check.found, check.quotes), (9, 9));
        assert!(check.verified() && check.missing.is_empty());
        // A quote of Y's translation given as evidence for X's score cites the wrong text.
        let mut wrong = good.clone();
        wrong.x.fluency.evidence = "代理读取文档".into();
        let check = verify(&wrong, &p);
        assert_eq!((check.found, check.quotes), (8, 9));
        assert!(!check.verified());
        assert_eq!(check.missing, ["x.fluency: 代理读取文档"]);
        // The source may be quoted for either side, and the preference may quote either text.
        wrong = good.clone();
        wrong.y.accuracy.evidence = "The `Agent` reads".into();
        wrong.preferred_evidence = "代理读取\n文档。".into();
        assert!(verify(&wrong, &p).verified());
        // Invented quotes everywhere: nothing found.
        let mut invented = good;
        for s in [
            &mut invented.x.accuracy,
            &mut invented.x.fluency,
            &mut invented.y.terminology,
        ] {
            s.evidence = "not in any text".into();
        }
        invented.preferred_evidence = "nor this".into();
        let check = verify(&invented, &p);
        assert_eq!((check.found, check.quotes), (5, 9));
        assert_eq!(count_quotes(&invented, &p), (5, 9));
    }
}
