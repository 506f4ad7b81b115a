//! Deterministic QA checks: pure functions of a unit's source, its translation and the
//! campaign's settings, modelled on what professional translation QA tools check. Model
//! opinions advise; these checks decide: an `error` finding sends a unit back for revision
//! without asking the Manager, and makes `booktr validate` exit 1.
//!
//! - [`doc`]: one parse of a text into everything the checks compare.
//! - One file per family of per-unit checks, each `fn check(&QaContext, &Doc, &Doc, src, tgt)`.
//! - [`check_unit`] runs every per-unit check; [`check_campaign`] adds the checks that compare
//!   translations across units (norms, length ratio, terminology drift, review markers,
//!   completeness).

pub mod campaign;
pub mod completeness;
pub mod doc;
pub mod drift;
mod gloss;
pub mod glossary;
pub mod length;
pub mod markers;
pub mod structure;

use serde::{Deserialize, Serialize};

use crate::lang::Lang;
use crate::termbase::Termbase;

pub use campaign::{CampaignQa, ChapterText, Norms, Parsed, UnitText, check_campaign};
pub use doc::Doc;
pub use drift::DriftRow;
pub use glossary::Adherence;
pub use markers::ReviewTerm;

/// How bad a finding is. `Error` findings force a revision and fail `validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

/// One QA finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Check name, e.g. `code_blocks`.
    pub check: String,
    pub severity: Severity,
    /// Unit id (empty for chapter-level findings).
    pub unit: String,
    /// Chapter key.
    pub chapter: String,
    /// What is wrong and what to do, in one sentence.
    pub message: String,
    /// Up to 200 characters of the relevant source text.
    pub source_excerpt: String,
    /// Up to 200 characters of the relevant target text.
    pub target_excerpt: String,
}

impl Finding {
    /// A finding without unit or chapter (the caller fills them in).
    pub fn new(
        check: &str,
        severity: Severity,
        message: impl Into<String>,
        source_excerpt: &str,
        target_excerpt: &str,
    ) -> Finding {
        Finding {
            check: check.into(),
            severity,
            unit: String::new(),
            chapter: String::new(),
            message: message.into(),
            source_excerpt: crate::util::excerpt(source_excerpt, 200),
            target_excerpt: crate::util::excerpt(target_excerpt, 200),
        }
    }

    /// A one-line form for prompts and logs: `check: message`.
    pub fn line(&self) -> String {
        format!("{}: {}", self.check, self.message)
    }
}

/// What every check may need besides the two texts.
#[derive(Debug, Clone)]
pub struct QaContext {
    pub source_lang: Lang,
    pub target_lang: Lang,
    /// The campaign termbase (house style, agent and reconciled entries).
    pub termbase: Termbase,
    /// The marker translators put after a rendering they coined (default `[待审]` for Chinese).
    pub review_marker: String,
}

impl QaContext {
    pub fn new(source_lang: &Lang, target_lang: &Lang, termbase: &Termbase) -> QaContext {
        QaContext {
            source_lang: source_lang.clone(),
            target_lang: target_lang.clone(),
            termbase: termbase.clone(),
            review_marker: default_review_marker(target_lang).to_string(),
        }
    }
}

/// The default review marker for a target language: `[待审]` for Chinese, `[要確認]` for
/// Japanese, `[검토]` for Korean, `[review]` otherwise.
pub fn default_review_marker(target: &Lang) -> &'static str {
    match target.primary().as_str() {
        "zh" => "[待审]",
        "ja" => "[要確認]",
        "ko" => "[검토]",
        _ => "[review]",
    }
}

/// Runs every per-unit check on `source` and its translation `target`, filling in unit and
/// chapter ids.
pub fn check_unit(
    ctx: &QaContext,
    unit: &str,
    chapter: &str,
    source: &str,
    target: &str,
) -> Vec<Finding> {
    let _ = ctx; // used by the language and glossary checks
    let mut out = structure::check(source, target);
    for f in &mut out {
        f.unit = unit.to_string();
        f.chapter = chapter.to_string();
    }
    out
}

/// Whether any finding is an error.
pub fn has_error(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}
