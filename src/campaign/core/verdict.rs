//! The verdict on a campaign's final texts: every QA finding that remains on the book as it
//! stands (the per-unit checks of each unit's final text, that is its human edit or its kept
//! candidate, plus the campaign-level checks over all final texts and the chapters as written
//! to `out_dir`), and the counts that separate `complete` from `needs_review`.
//!
//! It owns no state and writes nothing: [`crate::campaign::core::summary::summarize`], the report and
//! the CLI all read the same [`FinalQa`], so the status line, `report.json`, `report.md` and
//! `report.html` cannot disagree on how many errors remain.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Campaign;
use super::state::State;
use crate::qa::{self, Finding, Severity};

/// Counts of the findings that remain on the final texts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FindingCounts {
    /// Error findings (each one something an editor must fix).
    pub errors: usize,
    /// Warning findings.
    pub warnings: usize,
    /// Units with at least one error finding (chapter-level findings count in `errors` but
    /// name no unit).
    pub error_units: usize,
}

impl FindingCounts {
    /// Counts `findings` of units (`unit` empty for chapter-level findings).
    pub fn of<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> FindingCounts {
        let mut c = FindingCounts::default();
        let mut units = std::collections::BTreeSet::new();
        for f in findings {
            match f.severity {
                Severity::Error => {
                    c.errors += 1;
                    if !f.unit.is_empty() {
                        units.insert(f.unit.as_str());
                    }
                }
                Severity::Warning => c.warnings += 1,
                Severity::Info => {}
            }
        }
        c.error_units = units.len();
        c
    }

    /// The wording of a run that stopped before the end with `untranslated` prose units left,
    /// `failed` of them after a failed call (named by the caller as `N failed`): `362 units not
    /// translated yet, 5 errors in 2 units`. Each untranslated unit holds one error
    /// (`completeness`), work left to the run rather than to an editor, so it is counted apart.
    pub fn describe_unfinished(&self, untranslated: usize, failed: usize) -> String {
        let untranslated = untranslated.min(self.errors).min(self.error_units);
        let rest = FindingCounts {
            errors: self.errors - untranslated,
            error_units: self.error_units - untranslated,
            ..*self
        };
        let mut parts = Vec::new();
        let pending = untranslated.saturating_sub(failed);
        if pending > 0 {
            parts.push(format!(
                "{pending} unit{} not translated yet",
                if pending == 1 { "" } else { "s" }
            ));
        }
        if rest.errors > 0 {
            parts.push(rest.describe());
        }
        parts.join(", ")
    }

    /// The CLI and report wording: `12 errors in 3 units` (warnings added when asked).
    pub fn describe(&self) -> String {
        format!(
            "{} error{} in {} unit{}",
            self.errors,
            if self.errors == 1 { "" } else { "s" },
            self.error_units,
            if self.error_units == 1 { "" } else { "s" }
        )
    }
}

/// Every finding on the final texts of a campaign state.
#[derive(Debug, Clone)]
pub struct FinalQa {
    /// Findings per unit, in the order of `Campaign::units`: the per-unit checks of the final
    /// text, then the campaign-level findings about that unit.
    pub units: Vec<Vec<Finding>>,
    /// Campaign-level findings that name no unit (e.g. a written chapter that differs from its
    /// units).
    pub chapter: Vec<Finding>,
    /// The campaign-level QA (drift, review terms, adherence, norms, findings).
    pub campaign: qa::CampaignQa,
    /// The editor's review applied to `units` and `chapter` (every finding has its
    /// id; dismissed ones are `info`, errors of downgraded checks `warning`; see
    /// [`super::mark_review::review`]).
    pub review: super::mark_review::Review,
}

impl FinalQa {
    /// The counts over every finding.
    pub fn counts(&self) -> FindingCounts {
        FindingCounts::of(self.units.iter().flatten().chain(&self.chapter))
    }
}

/// Runs the QA of the final texts of `s` (see the module doc). The campaign-level checks are
/// cached by [`qa::check_translations`], so calling this for the summary and again for the
/// report costs one run. Reads the output chapters from `out_dir` (missing ones are fine).
pub fn final_qa(c: &Campaign, s: &State) -> FinalQa {
    let finals: Vec<&str> = c
        .units
        .iter()
        .map(|u| super::edits::final_str(c, s, u))
        .collect();
    let retarget = c.retarget(s);
    let outputs: Vec<(String, Option<String>)> = c
        .chapters
        .iter()
        .map(|ch| {
            (
                ch.key.clone(),
                std::fs::read_to_string(c.plan.out_dir.join(&ch.file_name))
                    .ok()
                    // A notebook is compared through its Markdown view; one that no longer
                    // parses is compared as it is (and so found incomplete).
                    .map(|t| c.read_back(ch, t, retarget.as_ref())),
            )
        })
        .collect();
    let unit_texts: Vec<qa::UnitText> = c
        .units
        .iter()
        .zip(&finals)
        // Every unit: copied ones (front matter, code) are part of the chapters too.
        .map(|(u, t)| {
            let translated = !u.kind.needs_translation()
                || s.human_edit(&u.id).is_some()
                || s.kept_translation(&u.id, u32::MAX).is_some();
            qa::UnitText {
                unit: &u.id,
                chapter: &u.chapter,
                source: c.source_text(u),
                target: translated.then_some(*t),
            }
        })
        .collect();
    let chapter_texts: Vec<qa::ChapterText> = outputs
        .iter()
        .map(|(k, o)| qa::ChapterText {
            chapter: k,
            output: o.as_deref(),
        })
        .collect();
    let ctx = s
        .qa_ctx()
        .clone()
        .unwrap_or_else(|| c.qa_context(s.effective_termbase()));
    // The translation checks see the units the Manager checks (translated or edited, not the
    // copied code and front matter), so the result of its last round is reused from the cache.
    let translated: Vec<qa::UnitText> = c
        .units
        .iter()
        .zip(&unit_texts)
        .filter(|(u, t)| {
            t.target.is_some() && (s.human_edit(&u.id).is_some() || u.kind.needs_translation())
        })
        .map(|(_, t)| *t)
        .collect();
    let mut campaign = (*qa::check_translations(&ctx, &translated)).clone();
    let completeness = qa::book::completeness::check(&unit_texts, &chapter_texts);
    campaign.findings.splice(0..0, completeness);
    // References: each finding is copied once, into its unit's list below.
    let mut by_unit: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for f in &campaign.findings {
        by_unit.entry(f.unit.as_str()).or_default().push(f);
    }
    let mut units: Vec<Vec<Finding>> = c
        .units
        .iter()
        .map(|u| {
            let mut v = s.final_findings(&u.id).to_vec();
            v.extend(
                by_unit
                    .get(u.id.as_str())
                    .into_iter()
                    .flatten()
                    .map(|f| (*f).clone()),
            );
            v
        })
        .collect();
    let mut chapter: Vec<Finding> = by_unit
        .remove("")
        .unwrap_or_default()
        .into_iter()
        .cloned()
        .collect();
    // Missing images and link targets of the source: warnings, once per target.
    chapter.extend(super::source_targets::missing_targets(c));
    let review = super::mark_review::review(c, s, &mut units, &mut chapter, &finals);
    FinalQa {
        units,
        chapter,
        campaign,
        review,
    }
}
