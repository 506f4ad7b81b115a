//! Deterministic metrics of one arm, computed the same way for both arms from their final unit
//! texts, with the same QA context (the campaign's languages and its house-style termbase), so
//! neither arm is measured against terms only it was given:
//!
//! - **terminology consistency**: of the terms [`crate::qa::book::drift`] tracks (termbase entries and
//!   the book's frequent terms) that are identified in at least two translated units, the share
//!   rendered one way across the book (not drifting);
//! - **house-style adherence**: over the occurrences of house-style terms in the sources of
//!   translated units, the share with the required rendering in the translation
//!   (Σ min(rendering occurrences, term occurrences) / Σ term occurrences, per unit and entry,
//!   from [`crate::qa::unit::glossary::adherence`]);
//! - **QA findings by check**: every per-unit check ([`crate::qa::check_unit`]) plus the
//!   campaign-level checks ([`crate::qa::check_campaign`]);
//! - **context peaks** (`o200k_base` tokens): the main context's peak (the Manager's context for
//!   orchestration, the conversation for the single agent) and the largest prompt the provider
//!   reported for a single-request call;
//! - **tokens per agent** as the provider reported them, and **wall time**: the sum over the
//!   arm's runs of the time from `run_started` to the run's last journal record.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::Arm;
use crate::agents::Agent;
use crate::campaign::Campaign;
use crate::campaign::core::state::{AgentUsage, State};
use crate::campaign::core::store::{self, Event};
use crate::qa::{self, Severity};
use crate::termbase::Origin;

/// Terminology consistency of one arm.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Terminology {
    /// Tracked terms identified in at least two translated units.
    pub tracked_terms: usize,
    /// Of those, the terms rendered one way across the book.
    pub consistent_terms: usize,
    /// `consistent_terms / tracked_terms` (0–1); `None` with no tracked term.
    pub consistency: Option<f64>,
    /// The drifting terms (at most 20), for the report.
    pub drifting: Vec<String>,
}

/// Adherence to the house-style entries.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HouseStyle {
    /// House-style entries whose term occurs in a translated unit.
    pub entries_used: usize,
    /// Occurrences of those terms in the sources.
    pub occurrences: usize,
    /// Of those, occurrences matched by the required rendering.
    pub rendered: usize,
    /// `rendered / occurrences` (0–1); `None` with no occurrence.
    pub adherence: Option<f64>,
    /// Units whose source has a house-style term, and those with no `glossary` error.
    pub units: usize,
    pub units_correct: usize,
}

/// Everything measured of one arm.
#[derive(Debug, Clone, Serialize)]
pub struct ArmMetrics {
    pub arm: Arm,
    /// The arm's run status (`complete`, `incomplete`, `context_exhausted`, …).
    pub status: String,
    /// Units to translate, and those with a translation.
    pub units_total: usize,
    pub units_translated: usize,
    /// "context exhausted at unit N (id): …" when the single agent ran out of room.
    pub context_exhausted: Option<String>,
    pub terminology: Terminology,
    pub house_style: HouseStyle,
    /// QA findings of the final texts by check name.
    pub qa_findings: BTreeMap<String, usize>,
    /// QA error findings of the final texts by check name.
    pub qa_errors_by_check: BTreeMap<String, usize>,
    pub qa_errors: usize,
    pub qa_warnings: usize,
    /// Peak of the main context in `o200k_base` tokens (Manager context or conversation).
    pub main_context_peak_tokens: usize,
    /// Largest prompt the provider reported for a call made in one request, in tokens.
    pub largest_prompt_tokens: u64,
    /// Usage per agent, as reported by the provider.
    pub tokens_by_agent: BTreeMap<Agent, AgentUsage>,
    /// Prompt plus completion tokens over all agents.
    pub total_tokens: u64,
    /// Wall time over the arm's runs, in milliseconds.
    pub wall_ms: u64,
}

/// The inputs of [`measure`] for one arm.
pub struct ArmInput<'a> {
    pub arm: Arm,
    pub status: String,
    /// Unit id → final text of each unit to translate that has one.
    pub texts: &'a BTreeMap<String, String>,
    pub state: &'a State,
    /// The arm's state directory (for wall time).
    pub dir: &'a Path,
    pub main_context_peak_tokens: usize,
    pub context_exhausted: Option<String>,
}

/// The text of every chapter of `c` from `texts` (verbatim units copied); `None` for a chapter
/// with a unit missing.
pub fn chapters(c: &Campaign, texts: &BTreeMap<String, String>) -> Vec<(String, Option<String>)> {
    c.chapters
        .iter()
        .map(|ch| {
            (
                ch.key.clone(),
                super::single_agent::chapter_text(c, texts, &ch.key),
            )
        })
        .collect()
}

/// Measures one arm (see the module docs).
pub fn measure(c: &Campaign, a: &ArmInput) -> anyhow::Result<ArmMetrics> {
    let ctx = c.qa_context(&c.house);
    let chapter_texts = chapters(c, a.texts);
    let unit_texts: Vec<qa::UnitText> = c
        .units
        .iter()
        .map(|u| qa::UnitText {
            unit: &u.id,
            chapter: &u.chapter,
            source: c.source_text(u),
            target: if u.kind.needs_translation() {
                a.texts.get(&u.id).map(String::as_str)
            } else {
                Some(c.source_text(u))
            },
        })
        .collect();
    let chapter_refs: Vec<qa::ChapterText> = chapter_texts
        .iter()
        .map(|(k, t)| qa::ChapterText {
            chapter: k,
            output: t.as_deref(),
        })
        .collect();
    let campaign_qa = qa::check_campaign(&ctx, &unit_texts, &chapter_refs);
    let mut findings: Vec<qa::Finding> = campaign_qa.findings.clone();
    for u in c.prose_units() {
        if let Some(t) = a.texts.get(&u.id) {
            findings.extend(qa::check_unit(&ctx, &u.id, &u.chapter, c.source_text(u), t));
        }
    }
    let mut qa_findings = BTreeMap::new();
    let mut qa_errors_by_check = BTreeMap::new();
    for f in &findings {
        *qa_findings.entry(f.check.clone()).or_insert(0) += 1;
        if f.severity == Severity::Error {
            *qa_errors_by_check.entry(f.check.clone()).or_insert(0) += 1;
        }
    }
    let identified = |row: &qa::DriftRow| -> usize {
        let mut units: Vec<&String> = row
            .cells
            .iter()
            .filter(|(k, _)| k.as_str() != qa::book::drift::UNIDENTIFIED)
            .flat_map(|(_, us)| us)
            .collect();
        units.sort();
        units.dedup();
        units.len()
    };
    let tracked: Vec<&qa::DriftRow> = campaign_qa
        .drift
        .iter()
        .filter(|r| identified(r) >= 2)
        .collect();
    let consistent = tracked.iter().filter(|r| !r.drifting).count();
    let terminology = Terminology {
        tracked_terms: tracked.len(),
        consistent_terms: consistent,
        consistency: (!tracked.is_empty()).then(|| consistent as f64 / tracked.len() as f64),
        drifting: tracked
            .iter()
            .filter(|r| r.drifting)
            .take(20)
            .map(|r| r.term.clone())
            .collect(),
    };
    let mut house = HouseStyle::default();
    for e in campaign_qa
        .adherence
        .iter()
        .filter(|e| e.origin == Origin::HouseStyle && e.units > 0)
    {
        house.entries_used += 1;
        house.occurrences += e.occurrences;
        house.rendered += e.target_occurrences.min(e.occurrences);
        house.units += e.units;
        house.units_correct += e.units_correct;
    }
    house.adherence =
        (house.occurrences > 0).then(|| house.rendered as f64 / house.occurrences as f64);
    let largest_prompt_tokens = a
        .state
        .finished()
        .values()
        .filter(|r| r.requests == 1)
        .map(|r| r.usage.prompt_tokens)
        .max()
        .unwrap_or(0);
    let tokens_by_agent: BTreeMap<Agent, AgentUsage> = a
        .state
        .usage()
        .iter()
        .filter(|(agent, _)| **agent != Agent::Judge)
        .map(|(k, v)| (*k, *v))
        .collect();
    Ok(ArmMetrics {
        arm: a.arm,
        status: a.status.clone(),
        units_total: c.prose_units().count(),
        units_translated: c
            .prose_units()
            .filter(|u| a.texts.contains_key(&u.id))
            .count(),
        context_exhausted: a.context_exhausted.clone(),
        terminology,
        house_style: house,
        qa_errors: findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count(),
        qa_warnings: findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count(),
        qa_findings,
        qa_errors_by_check,
        main_context_peak_tokens: a.main_context_peak_tokens,
        largest_prompt_tokens,
        total_tokens: tokens_by_agent
            .values()
            .map(|u| u.prompt_tokens + u.completion_tokens)
            .sum(),
        tokens_by_agent,
        wall_ms: wall_ms(a.dir)?,
    })
}

/// Wall time of every run in a state's journal, in milliseconds: from each `run_started` to
/// the run's last record (its `run_finished` or `run_interrupted`, or the last line written
/// before a kill).
pub fn wall_ms(dir: &Path) -> anyhow::Result<u64> {
    let (records, _) = store::read_journal(dir)?;
    let mut total = 0;
    let mut open: Option<(u64, u64)> = None;
    for r in &records {
        if let Event::RunStarted { .. } = r.event {
            if let Some((start, last)) = open {
                total += last.saturating_sub(start);
            }
            open = Some((r.at_ms, r.at_ms));
            continue;
        }
        if let Some((_, last)) = &mut open {
            *last = r.at_ms.max(*last);
        }
        if matches!(
            r.event,
            Event::RunFinished { .. } | Event::RunInterrupted { .. }
        ) && let Some((start, last)) = open.take()
        {
            total += last.saturating_sub(start);
        }
    }
    if let Some((start, last)) = open {
        total += last.saturating_sub(start);
    }
    Ok(total)
}
