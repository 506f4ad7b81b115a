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

pub mod code;
pub mod doc;
pub mod headings;
pub mod injected;
pub mod links;
pub mod math_html;
pub mod numbers;
pub mod structure;
pub mod tables;
pub mod untranslated;

use serde::{Deserialize, Serialize};

use crate::lang::Lang;
use crate::termbase::Termbase;

pub use doc::Doc;

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

/// How two sequences of items differ, as multisets and in order (shared by the checks that
/// compare code, links, images, math and HTML).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct SeqDiff<'a> {
    /// Source items the translation has fewer of: one entry per missing occurrence, in source
    /// order.
    pub missing: Vec<&'a str>,
    /// Translation items the source has fewer of: one entry per extra occurrence, in
    /// translation order.
    pub extra: Vec<&'a str>,
    /// When both hold the same multiset in another order: the first position that differs and
    /// the source and translation items there.
    pub reordered: Option<(usize, &'a str, &'a str)>,
}

impl<'a> SeqDiff<'a> {
    /// Compares `src` and `tgt` in linear time.
    pub fn new(src: &[&'a str], tgt: &[&'a str]) -> SeqDiff<'a> {
        let mut balance: std::collections::HashMap<&str, isize> =
            std::collections::HashMap::with_capacity(src.len() + tgt.len());
        for s in src {
            *balance.entry(s).or_default() += 1;
        }
        for t in tgt {
            *balance.entry(t).or_default() -= 1;
        }
        let mut d = SeqDiff::default();
        let mut left = balance.clone();
        for s in src {
            let b = left.get_mut(s).expect("counted");
            if *b > 0 {
                d.missing.push(s);
                *b -= 1;
            }
        }
        for t in tgt {
            let b = left.get_mut(t).expect("counted");
            if *b < 0 {
                d.extra.push(t);
                *b += 1;
            }
        }
        if d.missing.is_empty() && d.extra.is_empty() {
            d.reordered = src
                .iter()
                .zip(tgt)
                .enumerate()
                .find(|(_, (a, b))| a != b)
                .map(|(i, (a, b))| (i, *a, *b));
        }
        d
    }

    /// Findings for this difference, worded with `noun` (`link target`) and `fix` (what to do
    /// about a missing or changed item). When as many occurrences are missing as are extra,
    /// they are paired in order and reported as changes; otherwise each distinct missing or
    /// extra item gets one finding with its counts.
    pub fn findings(
        &self,
        check: &str,
        severity: Severity,
        noun: &str,
        fix: &str,
        src: &[&str],
        tgt: &[&str],
    ) -> Vec<Finding> {
        let mut out = Vec::new();
        if let Some((i, a, b)) = self.reordered {
            out.push(Finding::new(
                check,
                severity,
                format!(
                    "{noun}s are in a different order: number {} is {} in the source but {} in the translation; keep the source order",
                    i + 1,
                    quote(a),
                    quote(b)
                ),
                a,
                b,
            ));
            return out;
        }
        if self.missing.len() == self.extra.len() {
            for (a, b) in self.missing.iter().zip(&self.extra) {
                out.push(Finding::new(
                    check,
                    severity,
                    format!("{noun} {} was changed to {}; {fix}", quote(a), quote(b)),
                    a,
                    b,
                ));
            }
            return out;
        }
        let count = |items: &[&str], x: &str| items.iter().filter(|i| **i == x).count();
        for (a, n) in distinct(&self.missing) {
            let (s, t) = (count(src, a), count(tgt, a));
            let msg = if t == 0 {
                format!("{noun} {} is missing from the translation; {fix}", quote(a))
            } else {
                format!(
                    "{noun} {} occurs {s} times in the source but {t} in the translation; {fix}",
                    quote(a)
                )
            };
            debug_assert_eq!(s - t, n);
            out.push(Finding::new(check, severity, msg, a, ""));
        }
        for (b, _) in distinct(&self.extra) {
            let (s, t) = (count(src, b), count(tgt, b));
            let msg = if s == 0 {
                format!(
                    "{noun} {} does not occur in the source; remove it or restore the source's {noun}",
                    quote(b)
                )
            } else {
                format!(
                    "{noun} {} occurs {t} times in the translation but {s} in the source; remove the extra one",
                    quote(b)
                )
            };
            out.push(Finding::new(check, severity, msg, "", b));
        }
        out
    }
}

/// Distinct items with their number of occurrences, in first-occurrence order.
fn distinct<'a>(items: &[&'a str]) -> Vec<(&'a str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for i in items {
        match out.iter_mut().find(|(x, _)| x == i) {
            Some((_, n)) => *n += 1,
            None => out.push((i, 1)),
        }
    }
    out
}

/// The reference corpus (`../shared/corpus/ai-agent-book`), when present beside the repository.
#[cfg(test)]
pub(crate) fn test_corpus() -> Option<std::path::PathBuf> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/ai-agent-book");
    p.join("en").is_dir().then_some(p)
}

/// An item for a message: backquoted and shortened to one line of at most 80 characters.
pub(crate) fn quote(item: &str) -> String {
    let one_line = item.trim().replace('\n', "⏎");
    format!("`{}`", crate::util::excerpt(&one_line, 80))
}
