//! Figures shared by `report.html` and `report.md`: the findings per QA check (by severity),
//! the cost line of a summary, the worst severity of a unit's findings, and the `lang`
//! attribute value of a campaign language. Derived from the [`Report`] alone, so both renderings
//! say the same thing; nothing here reads campaign state.

use serde::Serialize;

use super::Report;
use crate::campaign::core::summary::Summary;
use crate::qa::{self, Finding, Severity};

/// The findings of one QA check on the final texts (unit and chapter-level findings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckCount {
    /// Check name (`code_blocks`, `untranslated`, …).
    pub check: String,
    /// Error findings.
    pub errors: usize,
    /// Warning findings.
    pub warnings: usize,
    /// Info findings.
    pub info: usize,
    /// All findings of the check (`errors + warnings + info`).
    pub total: usize,
    /// Distinct units with a finding of the check (chapter-level findings name none).
    pub units: usize,
}

/// One [`CheckCount`] per check with at least one finding in `r` ([`Report::findings`]),
/// ordered by [`qa::check_rank`] (lost content and structure first), then by name. The
/// `total`s sum to the number of findings the report lists, and agree with
/// [`Report::qa_counts`].
pub fn check_counts(r: &Report) -> Vec<CheckCount> {
    let mut by: std::collections::BTreeMap<&str, (CheckCount, std::collections::BTreeSet<&str>)> =
        Default::default();
    for f in r.findings() {
        let (c, units) = by.entry(f.check.as_str()).or_insert_with(|| {
            (
                CheckCount {
                    check: f.check.clone(),
                    errors: 0,
                    warnings: 0,
                    info: 0,
                    total: 0,
                    units: 0,
                },
                Default::default(),
            )
        });
        match f.severity {
            Severity::Error => c.errors += 1,
            Severity::Warning => c.warnings += 1,
            Severity::Info => c.info += 1,
        }
        c.total += 1;
        if !f.unit.is_empty() {
            units.insert(f.unit.as_str());
        }
    }
    let mut out: Vec<CheckCount> = by
        .into_values()
        .map(|(mut c, units)| {
            c.units = units.len();
            c
        })
        .collect();
    out.sort_by(|a, b| {
        (qa::check_rank(&a.check), &a.check).cmp(&(qa::check_rank(&b.check), &b.check))
    });
    out
}

/// The cost sentence of a summary: `12.3456 USD (translation 10.0000, proofreading 2.3456, …)`
/// from the recorded usage at the campaign's `[pricing]` (see
/// [`crate::campaign::core::summary::Cost::of`]; agents with zero cost are left out), or
/// `no pricing set` when the campaign has no `[pricing]` table. Amounts have four decimals,
/// enough for the per-call prices of current models (fractions of a cent).
pub fn cost_line(s: &Summary) -> String {
    match &s.cost {
        None => "no pricing set (add a [pricing] table to the campaign file to see one)".into(),
        Some(c) => {
            let parts: Vec<String> = c
                .by_agent
                .iter()
                .filter(|(_, v)| **v > 0.0)
                .map(|(a, v)| format!("{} {v:.4}", a.as_str()))
                .collect();
            if parts.is_empty() {
                format!("{:.4} {}", c.total, c.currency)
            } else {
                format!("{:.4} {} ({})", c.total, c.currency, parts.join(", "))
            }
        }
    }
}

/// The worst severity among `findings`, as the HTML classes name it: `error`, `warning`, or
/// `none` (no finding, or info findings only: nothing an editor must weigh).
pub fn worst(findings: &[Finding]) -> &'static str {
    if findings.iter().any(|f| f.severity == Severity::Error) {
        "error"
    } else if findings.iter().any(|f| f.severity == Severity::Warning) {
        "warning"
    } else {
        "none"
    }
}

/// A campaign language code as an HTML `lang` value: the BCP 47 tag as written in the
/// campaign (script and region kept: `zh-Hans-CN`, `pt-BR`), with `_` written `-` (BCP 47's
/// separator; `zh_Hans` is a common POSIX-style spelling) and surrounding blanks removed.
pub fn lang_tag(code: &str) -> String {
    code.trim().replace('_', "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lang_tag_keeps_script_and_region() {
        assert_eq!(lang_tag("zh-Hans-CN"), "zh-Hans-CN");
        assert_eq!(lang_tag(" zh_Hant "), "zh-Hant");
        assert_eq!(lang_tag("pt-BR"), "pt-BR");
    }

    #[test]
    fn worst_orders_error_over_warning_over_info() {
        let f = |s| Finding::new("x", s, "m", "", "");
        assert_eq!(worst(&[]), "none");
        assert_eq!(worst(&[f(Severity::Info)]), "none");
        assert_eq!(worst(&[f(Severity::Info), f(Severity::Warning)]), "warning");
        assert_eq!(
            worst(&[f(Severity::Warning), f(Severity::Error), f(Severity::Info)]),
            "error"
        );
    }
}
