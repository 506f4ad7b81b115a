//! Recorded real-model translations of units of the corpus's chapters 1–2, and their replay
//! through per-unit QA and [`booktr::repair`] (issue 18's measurement). Shared by the recorder
//! (`tests/it/record_corpus.rs`), the replay test (`tests/it/repair_corpus.rs`) and the
//! benchmark (`benches/repair.rs`, which includes this file by `#[path]`), so all three segment
//! and check the same way. Depends on the library only (no other test support).
//!
//! The fixture `tests/fixtures/real-llm/corpus-ch01-02.jsonl` holds one [`Record`] per unit:
//! the unit's id and chapter, the sha256 of its source text (the source itself is never
//! stored: it is read from the corpus), the model's file name, the request settings and the
//! answer after the campaign's clean-up ([`booktr::agents::translation::postprocess`] and the
//! comment mask's restore).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use booktr::campaign::Campaign;
use booktr::config::{Overrides, Plan};
use booktr::qa::{self, Finding, Severity};
use booktr::repair;
use serde::{Deserialize, Serialize};

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

/// The campaign file whose chapters, glossary and settings the recording uses:
/// `campaigns/ai-agent-book-ch1-2.toml` (chapters 1–2 of the corpus, en → zh, the house-style
/// glossary `glossaries/house-style.en-zh.csv`).
pub fn campaign_file() -> PathBuf {
    Path::new(MANIFEST).join("campaigns/ai-agent-book-ch1-2.toml")
}

/// `tests/fixtures/real-llm/corpus-ch01-02.jsonl`.
pub fn fixture_file() -> PathBuf {
    Path::new(MANIFEST).join("tests/fixtures/real-llm/corpus-ch01-02.jsonl")
}

/// `tests/fixtures/real-llm/corpus-ch01-02-all.jsonl`: every prose unit of chapters 1–2
/// (`record_corpus::record_all_corpus_answers`), same [`Record`] format.
pub fn all_fixture_file() -> PathBuf {
    Path::new(MANIFEST).join("tests/fixtures/real-llm/corpus-ch01-02-all.jsonl")
}

/// The corpus's English chapters directory (`../shared/corpus/ai-agent-book/en`), or `Err`
/// with the reason it cannot be used.
pub fn corpus_en() -> Result<PathBuf, String> {
    let p = Path::new(MANIFEST).join("../shared/corpus/ai-agent-book/en");
    if p.join("chapter01.md").is_file() && p.join("chapter02.md").is_file() {
        Ok(p)
    } else {
        Err(format!(
            "no corpus chapters at {} (chapter01.md and chapter02.md of the ai-agent-book)",
            p.display()
        ))
    }
}

/// Unit size of the recording, in characters (campaign key `max_unit_chars`): smaller than the
/// campaign's default 12,000 so that a unit is one answer of a 1.5B model on a 2-core machine
/// in well under a minute.
pub const MAX_UNIT_CHARS: usize = 400;

/// The request settings of a recording (what besides the messages decides the answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Target language tag (`zh`).
    pub target: String,
    /// Campaign key `max_unit_chars` the chapters were segmented with.
    pub max_unit_chars: usize,
    /// Sampling temperature sent.
    pub temperature: Option<f64>,
    /// `max_tokens` of the request (the campaign's per-unit bound, see `agents::bounds`).
    pub max_tokens: Option<u32>,
    /// Number of house-style glossary entries in the prompt.
    pub glossary_entries: usize,
    /// Whether the read-only neighbour context was in the prompt.
    pub context: bool,
}

/// One recorded unit (a line of [`fixture_file`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Chapter key (`chapter01`).
    pub chapter: String,
    /// Unit id as the campaign segments it.
    pub unit: String,
    /// sha256 (hex) of the unit's source text.
    pub source_sha256: String,
    /// Model file name (no directory).
    pub model: String,
    pub settings: Settings,
    /// The answer after the campaign's clean-up.
    pub answer: String,
    /// `finish_reason` of the answer (`stop`, `length`).
    pub finish_reason: Option<String>,
    /// Completion tokens the server counted.
    pub completion_tokens: u64,
}

/// Loads the recorded units.
pub fn load_records(path: &Path) -> Result<Vec<Record>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// The campaign of [`campaign_file`] segmented with `max_unit_chars` (read from the corpus),
/// exactly as `booktr run` would with that key; `overrides` as on the command line.
pub fn campaign(max_unit_chars: usize, overrides: &Overrides) -> Result<Campaign, String> {
    corpus_en()?;
    let mut plan = Plan::load(&campaign_file(), overrides).map_err(|e| e.to_string())?;
    plan.max_unit_chars = max_unit_chars;
    Campaign::load(plan).map_err(|e| format!("{e:#}"))
}

/// One unit replayed: error findings before and after repair.
#[derive(Debug, Clone, Serialize)]
pub struct UnitReplay {
    pub unit: String,
    /// Error findings of the recorded answer.
    pub errors_before: usize,
    /// Error findings of the repaired answer.
    pub errors_after: usize,
    /// Mechanical error findings ([`repair::is_mechanical_finding`]) before, by check.
    pub mechanical_before: BTreeMap<String, usize>,
    /// Mechanical error findings after, by check.
    pub mechanical_after: BTreeMap<String, usize>,
    /// Repairs made, by class.
    pub repairs: BTreeMap<String, usize>,
    /// Faults skipped, by class.
    pub skipped: BTreeMap<String, usize>,
    /// The skip reasons (class: why).
    pub skip_reasons: Vec<String>,
}

impl UnitReplay {
    /// Mechanical error findings before repair, all checks.
    pub fn mech_before(&self) -> usize {
        self.mechanical_before.values().sum()
    }
    /// Mechanical error findings after repair, all checks.
    pub fn mech_after(&self) -> usize {
        self.mechanical_after.values().sum()
    }
}

/// The replay of a fixture: the units replayed and those that could not be.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Replay {
    pub units: Vec<UnitReplay>,
    /// Recorded units not replayed, with the reason (`unit: why`): the unit is gone from the
    /// segmentation, or its source changed since the recording (sha256 differs).
    pub not_replayed: Vec<String>,
}

impl Replay {
    /// Mechanical error findings before repair, by check (over every replayed unit).
    pub fn mechanical_before(&self) -> BTreeMap<String, usize> {
        sum(self.units.iter().map(|u| &u.mechanical_before))
    }
    /// Mechanical error findings after repair, by check.
    pub fn mechanical_after(&self) -> BTreeMap<String, usize> {
        sum(self.units.iter().map(|u| &u.mechanical_after))
    }
    /// Repairs by class.
    pub fn repairs(&self) -> BTreeMap<String, usize> {
        sum(self.units.iter().map(|u| &u.repairs))
    }
    /// Skips by class.
    pub fn skipped(&self) -> BTreeMap<String, usize> {
        sum(self.units.iter().map(|u| &u.skipped))
    }
    /// Units whose error count (all checks) rose with repair.
    pub fn worse(&self) -> Vec<&UnitReplay> {
        self.units
            .iter()
            .filter(|u| u.errors_after > u.errors_before)
            .collect()
    }
}

fn sum<'a>(maps: impl Iterator<Item = &'a BTreeMap<String, usize>>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            *out.entry(k.clone()).or_default() += v;
        }
    }
    out
}

fn errors(findings: &[Finding]) -> impl Iterator<Item = &Finding> {
    findings.iter().filter(|f| f.severity == Severity::Error)
}

fn mechanical(findings: &[Finding]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for f in errors(findings).filter(|f| repair::is_mechanical_finding(f)) {
        *m.entry(f.check.clone()).or_default() += 1;
    }
    m
}

/// Replays `records` against campaign `c` (segmented with the records' `max_unit_chars`):
/// per-unit QA ([`qa::check_unit`], the campaign's QA context with its house-style termbase)
/// on the recorded answer, [`repair::repair`] with the campaign's `code_comments`, and QA
/// again on the repaired text.
pub fn replay(c: &Campaign, records: &[Record]) -> Replay {
    let ctx = c.qa_context(&c.house);
    let opts = repair::Options {
        code_comments: c.plan.code_comments,
        ..Default::default()
    };
    let mut out = Replay::default();
    for r in records {
        let Some(u) = c.unit(&r.unit) else {
            out.not_replayed.push(format!(
                "{}: no such unit in the segmentation (max_unit_chars = {})",
                r.unit, c.plan.max_unit_chars
            ));
            continue;
        };
        if u.sha256 != r.source_sha256 {
            out.not_replayed.push(format!(
                "{}: the source changed since the recording (sha256 {} now, {} recorded)",
                r.unit,
                &u.sha256[..12.min(u.sha256.len())],
                &r.source_sha256[..12.min(r.source_sha256.len())]
            ));
            continue;
        }
        let source = c.source_text(u);
        let before = qa::check_unit(&ctx, &u.id, &u.chapter, source, &r.answer);
        let fixed = repair::repair(source, &r.answer, &opts);
        let after = qa::check_unit(&ctx, &u.id, &u.chapter, source, &fixed.text);
        let mut repairs = BTreeMap::new();
        for x in &fixed.repairs {
            *repairs.entry(x.class.as_str().to_string()).or_default() += 1;
        }
        let mut skipped = BTreeMap::new();
        for s in &fixed.skipped {
            *skipped.entry(s.class.as_str().to_string()).or_default() += 1;
        }
        out.units.push(UnitReplay {
            unit: u.id.clone(),
            errors_before: errors(&before).count(),
            errors_after: errors(&after).count(),
            mechanical_before: mechanical(&before),
            mechanical_after: mechanical(&after),
            repairs,
            skipped,
            skip_reasons: fixed
                .skipped
                .iter()
                .map(|s| format!("{}: {}", s.class.as_str(), s.why))
                .collect(),
        });
    }
    out
}
