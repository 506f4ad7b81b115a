//! The real part of the labelled set: real model answers and a human translation, with a label
//! for every `untranslated` error, every `untranslated_word` finding and every miss, read by a person
//! (`tests/fixtures/qa-labelled/real-labels.jsonl`). Shared by `tests/it/qa_labelled.rs` and
//! `benches/qa_labelled.rs`.
//!
//! The sets (no source text is stored: sources are read from the repository's books or the
//! corpus by unit id, and checked by sha256):
//! - `1.5b-sample`, `1.5b-tiny`: the first-round translations in the recorded 1.5B answers of
//!   the sample book and the tiny book (`tests/fixtures/real-llm/sample.jsonl`, `tiny.jsonl`),
//!   paired with their units by the start of the request (the fixture keeps a preview of it);
//! - `1.5b-corpus`: the 1.5B answers for units of the corpus's chapters 1–2
//!   (`corpus-ch01-02-all.jsonl`, every unit recorded, and the 12 of `corpus-ch01-02.jsonl`);
//! - `human-zh`: the corpus's zh edition against its en edition, section by section.
//!
//! A label says whether one finding (or one expected finding) is a fault an editor must fix:
//! `fault: true` and an error is a true positive, `fault: false` and an error a false alarm,
//! `fault: true` and no error a miss. A finding is matched to its label by set, unit, check and
//! `at`, the start (at most [`AT_CHARS`] chars) of the target text at its span; in the
//! `human-zh` set, whose text is the corpus's, `at` is `@` and the span's start in chars.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use booktr::agents::{mask, translation};
use booktr::book::segment;
use booktr::lang::Lang;
use booktr::qa::{self, Finding, QaContext, Severity};
use booktr::termbase::{Entry, Origin, Termbase};

// Loaded here by path because this file is shared with `benches/qa_labelled.rs`, which has no
// `support` module; in the `it` binary it is therefore loaded twice.
#[allow(clippy::duplicate_mod)]
#[path = "../support/corpus_replay.rs"]
mod corpus_replay;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

/// The checks the real part labels.
pub const LABELLED: &[&str] = &["untranslated", "untranslated_word"];

/// The checks whose findings are scored at every severity. An `untranslated_word` finding,
/// warning or error, says that a source-language word stands in a target sentence without a
/// glossary entry; its severity only ranks a slip (error) above a word the whole translation
/// keeps (warning, [`booktr::qa::unit::untranslated::KEPT_BLOCKS`]). Scoring errors alone made
/// that threshold part of the labels: a kept term was a fault below it and not above it.
pub const SCORED_AT_EVERY_SEVERITY: &[&str] = &["untranslated_word"];

/// Chars of target text a label's `at` keeps.
pub const AT_CHARS: usize = 24;

/// One unit of a real set: its source and the target to check.
#[derive(Debug, Clone)]
pub struct RealUnit {
    pub set: &'static str,
    pub unit: String,
    pub sha256: String,
    pub source: String,
    pub target: String,
}

/// One label (a line of the labels file).
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct Label {
    pub set: String,
    pub unit: String,
    pub check: String,
    pub at: String,
    pub fault: bool,
    /// What the labelled text is: `leftover` (a block or sentence in the source language),
    /// `slip` (a word the translation renders elsewhere or should have), `kept-term` (a term
    /// kept in English in a few places without a glossary entry: the editor must translate it
    /// or record it as kept), `convention` (a word kept throughout), `name`, `code`, `math`,
    /// `quote`, `not-english`.
    #[serde(default)]
    pub kind: String,
    pub why: String,
}

/// `tests/fixtures/qa-labelled/real-labels.jsonl`.
pub fn labels_file() -> PathBuf {
    Path::new(MANIFEST).join("tests/fixtures/qa-labelled/real-labels.jsonl")
}

/// Every label.
pub fn labels() -> Vec<Label> {
    let path = labels_file();
    super::read_jsonl(&path)
}

/// The answer text of a recorded stream (`chunks` of a fixture line).
fn stream_text(line: &serde_json::Value) -> String {
    let mut s = String::new();
    for c in line["chunks"].as_array().into_iter().flatten() {
        if let Some(t) = c["choices"][0]["delta"]["content"].as_str() {
            s.push_str(t);
        }
    }
    s
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first-round translations of a recorded campaign fixture, paired with the units of
/// `chapters` (key, text) segmented with `max_unit_chars`: a translation request's preview is
/// `Translation: ` and the start of the masked unit text.
fn recorded_set(
    set: &'static str,
    fixture: &str,
    chapters: &[(String, String)],
    max_unit_chars: usize,
) -> Vec<RealUnit> {
    let path = Path::new(MANIFEST)
        .join("tests/fixtures/real-llm")
        .join(fixture);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut units = Vec::new();
    for (key, body) in chapters {
        for u in segment::segment(key, body, max_unit_chars) {
            if u.kind.needs_translation() {
                units.push((u.clone(), u.text(body).to_string()));
            }
        }
    }
    let mut out: Vec<RealUnit> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(preview) = v["preview"]
            .as_str()
            .and_then(|p| p.strip_prefix("Translation: "))
        else {
            continue;
        };
        if preview.starts_with("A review found") || preview.contains('⟦') {
            continue;
        }
        let want = collapse(preview);
        let Some((u, source)) = units.iter().find(|(_, s)| {
            let masked = mask::mask(s);
            collapse(&masked.text).starts_with(want.trim_end())
        }) else {
            continue;
        };
        if out.iter().any(|r| r.unit == u.id) {
            continue;
        }
        let masked = mask::mask(source);
        let (clean, _) = translation::postprocess(&masked.text, &stream_text(&v));
        let target = masked.restore(&clean).unwrap_or(clean);
        out.push(RealUnit {
            set,
            unit: u.id.clone(),
            sha256: u.sha256.clone(),
            source: source.clone(),
            target,
        });
    }
    out
}

/// `1.5b-sample` and `1.5b-tiny` (see the module docs).
pub fn recorded_sets() -> Vec<RealUnit> {
    let read = |p: PathBuf, key: &str| {
        (
            key.to_string(),
            std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
        )
    };
    let sample: Vec<(String, String)> = ["01-agents", "02-tools", "03-memory"]
        .iter()
        .map(|k| read(Path::new(MANIFEST).join(format!("books/sample/{k}.md")), k))
        .collect();
    let tiny = vec![read(
        Path::new(MANIFEST).join("tests/fixtures/real-llm/book/loop.md"),
        "loop",
    )];
    let mut out = recorded_set("1.5b-sample", "sample.jsonl", &sample, 800);
    out.extend(recorded_set("1.5b-tiny", "tiny.jsonl", &tiny, 320));
    out
}

/// `1.5b-corpus` (see the module docs), or why it cannot be built (no corpus).
pub fn corpus_set() -> Result<Vec<RealUnit>, String> {
    let overrides = booktr::config::Overrides::default();
    let c = corpus_replay::campaign(corpus_replay::MAX_UNIT_CHARS, &overrides)?;
    let mut records = corpus_replay::load_records(&corpus_replay::all_fixture_file())?;
    for r in corpus_replay::load_records(&corpus_replay::fixture_file())? {
        if !records.iter().any(|x| x.unit == r.unit) {
            records.push(r);
        }
    }
    let mut out = Vec::new();
    for r in records {
        let Some(u) = c.unit(&r.unit) else { continue };
        if u.sha256 != r.source_sha256 {
            continue;
        }
        out.push(RealUnit {
            set: "1.5b-corpus",
            unit: r.unit.clone(),
            sha256: r.source_sha256.clone(),
            source: c.source_text(u).to_string(),
            target: r.answer.clone(),
        });
    }
    out.sort_by(|a, b| a.unit.cmp(&b.unit));
    Ok(out)
}

/// The corpus root (`../shared/corpus/ai-agent-book`), if present.
pub fn corpus_root() -> Option<PathBuf> {
    let p = Path::new(MANIFEST).join("../shared/corpus/ai-agent-book");
    p.join("en").is_dir().then_some(p)
}

/// Splits a chapter at its headings (top-level heading blocks).
pub fn sections(text: &str) -> Vec<&str> {
    let starts: Vec<usize> = segment::top_level_blocks(text)
        .iter()
        .filter(|b| b.kind == segment::BlockKind::Heading)
        .map(|b| b.range.start)
        .collect();
    let mut out = Vec::new();
    let mut prev = 0;
    for s in starts.into_iter().chain([text.len()]) {
        if s > prev {
            out.push(&text[prev..s]);
        }
        prev = s;
    }
    out
}

/// `human-zh`: the zh edition's sections against the en edition's (chapters whose section
/// counts differ are left out, as the bench's corpus comparison does), unit ids
/// `chapterNN.md-SSS`.
pub fn human_set() -> Result<Vec<RealUnit>, String> {
    let root = corpus_root().ok_or("no corpus at ../shared/corpus/ai-agent-book")?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("en"))
        .map_err(|e| e.to_string())?
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for en_path in files {
        let name = en_path.file_name().unwrap().to_string_lossy().to_string();
        let Ok(zh) = std::fs::read_to_string(root.join("zh").join(&name)) else {
            continue;
        };
        let en = std::fs::read_to_string(&en_path).map_err(|e| e.to_string())?;
        let (a, b) = (sections(&en), sections(&zh));
        if a.len() != b.len() {
            continue;
        }
        for (i, (s, t)) in a.iter().zip(&b).enumerate() {
            out.push(RealUnit {
                set: "human-zh",
                unit: format!("{name}-{i:03}"),
                sha256: booktr::util::sha256_hex(s.as_bytes()),
                source: s.to_string(),
                target: t.to_string(),
            });
        }
    }
    Ok(out)
}

/// The house-style glossary the recorded 1.5B runs had in their prompts
/// (`glossaries/house-style.en-zh.csv`; the tiny book's `glossary.en-zh.csv` has the same
/// entries and one more, `tool`, which the house style has too).
pub fn house_style() -> Termbase {
    let path = Path::new(MANIFEST).join("glossaries/house-style.en-zh.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Termbase::from_entries(text.lines().skip(1).filter_map(|l| {
        let mut cols = l.split(',');
        let (source, target) = (cols.next()?.trim(), cols.next()?.trim());
        (!source.is_empty()).then(|| Entry {
            source: source.into(),
            target: target.into(),
            note: String::new(),
            origin: Origin::HouseStyle,
            forbidden: vec![],
            variants: vec![],
        })
    }))
}

/// The en → zh context of a real set, with the stray words tallied over the set as `booktr
/// validate` does: the 1.5B sets with the house-style glossary their prompts had, the human
/// edition without one (the book has none). With `BOOKTR_LABEL_PER_UNIT=1` nothing is
/// tallied: each unit is checked on its own, as a campaign's QA checks it before deciding a
/// revision (the labels are made for the tallied context, so new findings show unlabelled).
pub fn context(units: &[RealUnit]) -> QaContext {
    let tb = if units.iter().any(|u| u.set == "human-zh") {
        Termbase::default()
    } else {
        house_style()
    };
    let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &tb);
    let kept = qa::unit::untranslated::KeptWords::tally(
        &ctx,
        units.iter().map(|u| (u.source.as_str(), u.target.as_str())),
    );
    if std::env::var("BOOKTR_LABEL_PER_UNIT").is_err() {
        ctx.kept_words = Some(std::sync::Arc::new(kept));
        ctx.prose_norm = qa::unit::alignment::ProseNorm::of_book(
            units.iter().map(|u| (u.source.as_str(), u.target.as_str())),
        );
    }
    ctx
}

/// The `at` of a finding on `u` (see the module docs).
pub fn at_of(u: &RealUnit, f: &Finding) -> String {
    let Some((s, e)) = f.span else {
        return String::new();
    };
    if u.set == "human-zh" {
        return format!("@{s}");
    }
    u.target
        .chars()
        .skip(s)
        .take((e - s).min(AT_CHARS))
        .collect()
}

/// One finding of a labelled check on a real unit.
#[derive(Debug, Clone)]
pub struct Found {
    pub set: &'static str,
    pub unit: String,
    pub finding: Finding,
    pub at: String,
}

/// The `untranslated` and `untranslated_word` findings (every severity) of every unit.
pub fn findings(ctx: &QaContext, units: &[RealUnit]) -> Vec<Found> {
    let mut out = Vec::new();
    for u in units {
        for f in qa::check_unit(ctx, &u.unit, "", &u.source, &u.target) {
            if LABELLED.contains(&f.check.as_str()) {
                let at = at_of(u, &f);
                out.push(Found {
                    set: u.set,
                    unit: u.unit.clone(),
                    finding: f,
                    at,
                });
            }
        }
    }
    out
}

/// Precision and recall of one check on one group of sets.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct RealScore {
    pub tp: usize,
    pub fp: usize,
    pub fn_: usize,
    /// Scored findings without a label.
    pub unlabelled: usize,
    /// Warnings: not scored for `untranslated` (its warning is a share, not a span); scored
    /// for `untranslated_word`, whose every finding claims a source word in a target sentence
    /// (see [`SCORED_AT_EVERY_SEVERITY`]).
    pub warnings: usize,
    /// Of the scored findings, the errors labelled a fault and those labelled not one: the
    /// error tier's own precision.
    pub error_tp: usize,
    pub error_fp: usize,
}

impl RealScore {
    pub fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    pub fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
}

/// Scores the findings of `found` against `labels`, per check, over the sets named in `sets`
/// (errors, and warnings of [`SCORED_AT_EVERY_SEVERITY`]); also returns one line per
/// unlabelled finding, false alarm and miss.
pub fn score(
    found: &[Found],
    labels: &[Label],
    sets: &[&str],
) -> (BTreeMap<String, RealScore>, Vec<String>) {
    let mut by: BTreeMap<String, RealScore> = BTreeMap::new();
    let mut lines = Vec::new();
    let mut used = vec![false; labels.len()];
    for f in found.iter().filter(|f| sets.contains(&f.set)) {
        let s = by.entry(f.finding.check.clone()).or_default();
        let error = f.finding.severity == Severity::Error;
        if !error {
            s.warnings += 1;
            if !SCORED_AT_EVERY_SEVERITY.contains(&f.finding.check.as_str()) {
                continue;
            }
        }
        let label = labels.iter().enumerate().position(|(i, l)| {
            !used[i]
                && l.set == f.set
                && l.unit == f.unit
                && l.check == f.finding.check
                && l.at == f.at
        });
        match label {
            Some(i) => {
                used[i] = true;
                if labels[i].fault {
                    s.tp += 1;
                    s.error_tp += usize::from(error);
                } else {
                    s.fp += 1;
                    s.error_fp += usize::from(error);
                    lines.push(format!(
                        "false alarm {} {} {} `{}`: {}",
                        f.set, f.unit, f.finding.check, f.at, labels[i].why
                    ));
                }
            }
            None => {
                s.unlabelled += 1;
                lines.push(format!(
                    "unlabelled {} {} {} `{}`: {}",
                    f.set, f.unit, f.finding.check, f.at, f.finding.message
                ));
            }
        }
    }
    for (i, l) in labels.iter().enumerate() {
        if !used[i] && l.fault && sets.contains(&l.set.as_str()) {
            by.entry(l.check.clone()).or_default().fn_ += 1;
            lines.push(format!(
                "miss {} {} {} `{}`: {}",
                l.set, l.unit, l.check, l.at, l.why
            ));
        }
    }
    (by, lines)
}
