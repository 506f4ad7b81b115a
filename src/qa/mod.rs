//! Deterministic QA checks: pure functions of a unit's source, its translation and the
//! campaign's settings. Model opinions advise; these checks decide (an `error` finding sends a
//! unit back for revision without asking the Manager).
//!
//! Each family of checks lives in its own file; [`check_unit`] runs them all on one unit.

pub mod structure;

use serde::{Deserialize, Serialize};

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

/// Runs every per-unit check on `source` and its translation `target`, filling in unit and
/// chapter ids.
pub fn check_unit(unit: &str, chapter: &str, source: &str, target: &str) -> Vec<Finding> {
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
