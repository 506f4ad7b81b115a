//! Campaign-level QA: the checks that compare translations across units, run once over the
//! whole campaign by [`check_campaign`]. Every text is parsed into a [`Doc`] once ([`Parsed`])
//! and its clean prose computed once; each check works on those.
//!
//! | check | file | what |
//! |---|---|---|
//! | `completeness` | [`super::completeness`] | every unit translated; chapter outputs equal their units joined |
//! | `untranslated` | here | a unit's target-script share far below the campaign's |
//! | `length_ratio` | [`super::length`] | robust outliers of target/source prose length |
//! | `term_drift` | [`super::drift`] | a term kept in some units and rendered in others, or rendered several ways |
//! | `review_markers` | [`super::markers`] | renderings flagged as new, unflagged new glosses, conflicts |
//!
//! Per-entry glossary adherence ([`super::glossary::adherence`]) is returned for the report; the
//! per-unit `glossary` errors themselves come from the per-unit checks.
//!
//! ## `untranslated` (campaign norm)
//! The share of target-script letters in a unit's clean prose ([`super::doc::script_share`],
//! units with at least [`MIN_SHARE_LETTERS`] letters) is compared with the median share of all
//! such units: a share below [`SHARE_FACTOR`] × median is an `error` (the unit is mostly left in
//! the source language, e.g. an echoed source). A median needs at least
//! [`MIN_SHARE_UNITS`] units; with fewer the check is skipped (the per-unit checks still apply
//! their fixed thresholds). For Latin-script targets of Latin-script sources the share cannot
//! tell the languages apart, so the check is skipped too.

use serde::Serialize;

use super::doc::script_share;
use super::drift::DriftRow;
use super::glossary::Adherence;
use super::length::LengthNorm;
use super::markers::ReviewTerm;
use super::{Doc, Finding, QaContext, Severity};
use crate::lang::Script;

/// One unit of the campaign: its source and its translation, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitText<'a> {
    pub unit: &'a str,
    pub chapter: &'a str,
    pub source: &'a str,
    pub target: Option<&'a str>,
}

/// One chapter: the written output file, to compare with its units joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChapterText<'a> {
    pub chapter: &'a str,
    pub output: Option<&'a str>,
}

/// Campaign norms the checks measured, for the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Norms {
    pub length: LengthNorm,
    pub script_share: ShareNorm,
}

/// The campaign's target-script share norm (`untranslated`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShareNorm {
    /// Units with at least [`MIN_SHARE_LETTERS`] letters in their translation.
    pub units: usize,
    /// Median share, when the check ran.
    pub median: Option<f64>,
    /// Shares below this are errors.
    pub threshold: Option<f64>,
}

/// Everything the campaign-level checks found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignQa {
    /// Campaign-level findings only (the per-unit checks report their own).
    pub findings: Vec<Finding>,
    /// Term × unit renderings, drifting terms first.
    pub drift: Vec<DriftRow>,
    /// Renderings flagged for review, and new glosses without the flag.
    pub review_terms: Vec<ReviewTerm>,
    /// Adherence per termbase entry.
    pub adherence: Vec<Adherence>,
    pub norms: Norms,
}

/// A unit parsed once: the texts, their [`Doc`]s and clean prose.
#[derive(Debug, Clone)]
pub struct Parsed<'a> {
    pub unit: &'a str,
    pub chapter: &'a str,
    pub source: &'a str,
    pub target: Option<&'a str>,
    pub src: Doc,
    pub tgt: Option<Doc>,
    /// `src.clean_prose()`.
    pub src_prose: String,
    /// `tgt.clean_prose()`.
    pub tgt_prose: Option<String>,
}

impl<'a> Parsed<'a> {
    pub fn new(u: &UnitText<'a>) -> Parsed<'a> {
        let src = Doc::parse(u.source);
        let tgt = u.target.map(Doc::parse);
        Parsed {
            unit: u.unit,
            chapter: u.chapter,
            source: u.source,
            target: u.target,
            src_prose: src.clean_prose(),
            tgt_prose: tgt.as_ref().map(Doc::clean_prose),
            src,
            tgt,
        }
    }

    /// Parses every unit.
    pub fn all(units: &[UnitText<'a>]) -> Vec<Parsed<'a>> {
        units.iter().map(Parsed::new).collect()
    }

    /// Fills in the unit and chapter of a finding.
    pub(crate) fn locate(&self, mut f: Finding) -> Finding {
        f.unit = self.unit.to_string();
        f.chapter = self.chapter.to_string();
        f
    }
}

/// Minimum letters in a translation's prose for its script share to count.
pub const MIN_SHARE_LETTERS: usize = 40;
/// Minimum units with a share to compute the campaign median.
pub const MIN_SHARE_UNITS: usize = 8;
/// A share below this factor times the median is an error.
pub const SHARE_FACTOR: f64 = 0.5;

/// Runs every campaign-level check (see the module docs) over `units` (in campaign order) and
/// the written `chapters`.
pub fn check_campaign(ctx: &QaContext, units: &[UnitText], chapters: &[ChapterText]) -> CampaignQa {
    let parsed = Parsed::all(units);
    let mut findings = super::completeness::check(units, chapters);
    let (f, script_share) = untranslated(ctx, &parsed);
    findings.extend(f);
    let (f, length) = super::length::check(ctx, &parsed);
    findings.extend(f);
    let (f, drift) = super::drift::check(ctx, &parsed);
    findings.extend(f);
    let (f, review_terms) = super::markers::check(ctx, &parsed);
    findings.extend(f);
    let adherence = super::glossary::adherence_parsed(ctx, &parsed);
    CampaignQa {
        findings,
        drift,
        review_terms,
        adherence,
        norms: Norms {
            length,
            script_share,
        },
    }
}

/// The campaign-level `untranslated` check (see the module docs).
pub(crate) fn untranslated(ctx: &QaContext, units: &[Parsed]) -> (Vec<Finding>, ShareNorm) {
    let mut norm = ShareNorm {
        units: 0,
        median: None,
        threshold: None,
    };
    if ctx.target_lang.script == Script::Latin && ctx.source_lang.script == Script::Latin {
        return (Vec::new(), norm);
    }
    let shares: Vec<(usize, f64)> = units
        .iter()
        .enumerate()
        .filter_map(|(i, u)| {
            let tgt = u.tgt.as_ref()?;
            script_share(&ctx.target_lang, tgt, MIN_SHARE_LETTERS).map(|(s, _)| (i, s))
        })
        .collect();
    norm.units = shares.len();
    if shares.len() < MIN_SHARE_UNITS {
        return (Vec::new(), norm);
    }
    let median = super::length::median(&shares.iter().map(|s| s.1).collect::<Vec<_>>());
    let threshold = SHARE_FACTOR * median;
    norm.median = Some(median);
    norm.threshold = Some(threshold);
    let findings = shares
        .iter()
        .filter(|(_, s)| *s < threshold)
        .map(|&(i, s)| {
            let u = &units[i];
            u.locate(Finding::new(
                "untranslated",
                Severity::Error,
                format!(
                    "only {:.0}% of the letters are {} script, against a campaign median of {:.0}% (threshold {:.0}%): the unit looks untranslated; translate it into {}",
                    s * 100.0,
                    ctx.target_lang.name,
                    median * 100.0,
                    threshold * 100.0,
                    ctx.target_lang.name
                ),
                &u.src_prose,
                u.tgt_prose.as_deref().unwrap_or(""),
            ))
        })
        .collect();
    (findings, norm)
}
