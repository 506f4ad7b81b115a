//! `report.html`: one self-contained page (inline CSS, no script, no network) rendered with
//! minijinja. Auto-escaping is on for every value, so book or model text containing `<script>`
//! or a `javascript:` link is shown as text, never run; a Content-Security-Policy that forbids
//! scripts is a second line of defence.

use std::collections::BTreeMap;

use minijinja::value::Serde;
use minijinja::{Environment, Value, context};
use serde::Serialize;

use super::Report;
use crate::agents::Agent;
use crate::qa::{Finding, Severity};

/// A unit as shown side by side.
#[derive(Debug, Clone, Serialize)]
pub struct UnitView {
    pub id: String,
    pub chapter: String,
    pub outcome: String,
    pub rounds: Vec<u32>,
    pub source: String,
    pub target: String,
    pub findings: Vec<Finding>,
    pub errors: usize,
    pub warnings: usize,
    pub history: Vec<super::RoundHistory>,
    /// The unit's candidates (see [`super::UnitReport::candidates`]).
    pub candidates: Vec<super::CandidateReport>,
}

#[derive(Serialize)]
struct ChapterRow<'a> {
    key: &'a str,
    units: usize,
    translated: usize,
    revised: usize,
    failed: usize,
    errors: usize,
    warnings: usize,
    cells: Vec<&'a UnitView>,
}

#[derive(Serialize)]
struct AdherenceRow<'a> {
    source: &'a str,
    target: &'a str,
    origin: crate::termbase::Origin,
    note: &'a str,
    units: usize,
    units_correct: usize,
    units_violating: usize,
    violating_units: &'a [String],
}

/// The glossary with each entry's adherence (entries without adherence data show zeros).
fn adherence_rows(r: &Report) -> Vec<AdherenceRow<'_>> {
    r.glossary
        .iter()
        .map(|e| {
            let a = r.adherence.iter().find(|a| a.source == e.source);
            AdherenceRow {
                source: &e.source,
                target: &e.target,
                origin: e.origin,
                note: &e.note,
                units: a.map_or(0, |a| a.units),
                units_correct: a.map_or(0, |a| a.units_correct),
                units_violating: a.map_or(0, |a| a.units_violating),
                violating_units: a.map_or(&[], |a| a.violating_units.as_slice()),
            }
        })
        .collect()
}

#[derive(Serialize)]
struct BilingualChapter<'a> {
    key: &'a str,
    rows: Vec<crate::interchange::bilingual::Row>,
}

/// The texts the page shows, by unit id: `(source, target)` (target empty when missing).
pub type Texts = BTreeMap<String, (String, String)>;

/// Renders the page.
///
/// Errors: a template error (a bug), reported with its line.
pub fn render(r: &Report, texts: &Texts) -> anyhow::Result<String> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.add_template("report.html", include_str!("report.html.j2"))?;
    let units: Vec<UnitView> = r
        .units
        .iter()
        .map(|u| {
            let (source, target) = texts.get(&u.id).cloned().unwrap_or_default();
            UnitView {
                id: u.id.clone(),
                chapter: u.chapter.clone(),
                outcome: u.outcome.to_string(),
                rounds: u.rounds.clone(),
                source,
                target,
                errors: u
                    .findings
                    .iter()
                    .filter(|f| f.severity == Severity::Error)
                    .count(),
                warnings: u
                    .findings
                    .iter()
                    .filter(|f| f.severity == Severity::Warning)
                    .count(),
                findings: u.findings.clone(),
                history: u.history.clone(),
                candidates: u.candidates.clone(),
            }
        })
        .collect();
    let mut order: Vec<&str> = Vec::new();
    for u in &units {
        if !order.contains(&u.chapter.as_str()) {
            order.push(&u.chapter);
        }
    }
    let chapters: Vec<ChapterRow> = order
        .iter()
        .map(|key| {
            let cells: Vec<&UnitView> = units.iter().filter(|u| u.chapter == *key).collect();
            ChapterRow {
                key,
                units: cells.len(),
                translated: cells
                    .iter()
                    .filter(|u| u.outcome == "translated" || u.outcome == "revised")
                    .count(),
                revised: cells.iter().filter(|u| u.outcome == "revised").count(),
                failed: cells
                    .iter()
                    .filter(|u| u.outcome == "failed" || u.outcome == "pending")
                    .count(),
                errors: cells.iter().map(|u| u.errors).sum(),
                warnings: cells.iter().map(|u| u.warnings).sum(),
                cells,
            }
        })
        .collect();
    // The bilingual view: per chapter, each source block beside its translation, code once.
    let bilingual: Vec<BilingualChapter> = if r.bilingual {
        order
            .iter()
            .map(|key| BilingualChapter {
                key,
                rows: units
                    .iter()
                    .filter(|u| u.chapter == *key)
                    .flat_map(|u| {
                        let translated = !matches!(u.outcome.as_str(), "pending" | "failed");
                        crate::interchange::bilingual::pair_unit(
                            &u.source,
                            translated.then_some(u.target.as_str()),
                            u.outcome != "copied",
                        )
                    })
                    .collect(),
            })
            .collect()
    } else {
        Vec::new()
    };
    let usage: Vec<_> = Agent::ALL
        .iter()
        .map(|a| context! { agent => a.as_str(), u => Value::from(Serde(r.usage_of(*a))) })
        .collect();
    let findings: Vec<&Finding> = r.findings();
    let html = env.get_template("report.html")?.render(context! {
        r => Value::from(Serde(r)),
        units => Value::from(Serde(&units)),
        chapters => Value::from(Serde(&chapters)),
        findings => Value::from(Serde(&findings)),
        errors => r.error_count(),
        headline => r.summary.status.headline(&r.summary.findings, r.summary.units.failed),
        edited => r.units.iter().filter(|u| u.outcome == "edited").count(),
        usage => usage,
        adherence => Value::from(Serde(adherence_rows(r))),
        bilingual => Value::from(Serde(&bilingual)),
        version => env!("CARGO_PKG_VERSION"),
    })?;
    Ok(html)
}
