//! The finding of a drifting term: which forms it takes in how many units, and what the editor
//! should do about it (a summary for glossary terms, a review for an unconfirmed drift).

use super::{CHECK, DriftRow, KEPT, UNIDENTIFIED};
use crate::qa::{Finding, Severity};

fn units(n: usize) -> String {
    if n == 1 {
        "1 unit".into()
    } else {
        format!("{n} units")
    }
}

/// The drift finding of a row: `"Agent" is kept in 6 units, rendered 代理 in 7, 智能体 in 1`.
pub(super) fn finding(r: &DriftRow) -> Finding {
    let mut rendered: Vec<(&String, usize)> = r
        .cells
        .iter()
        .filter(|(k, _)| *k != KEPT && *k != UNIDENTIFIED)
        .map(|(k, v)| (k, v.len()))
        .collect();
    rendered.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut msg = format!("\"{}\" is ", r.term);
    let mut first_count = true;
    if let Some(k) = r.cells.get(KEPT) {
        msg.push_str(&format!("kept in {}", units(k.len())));
        first_count = false;
        if !rendered.is_empty() {
            msg.push_str(", ");
        }
    }
    for (i, (name, n)) in rendered.iter().enumerate() {
        if i == 0 {
            msg.push_str("rendered ");
        } else {
            msg.push_str(", ");
        }
        if first_count {
            msg.push_str(&format!("{name} in {}", units(*n)));
            first_count = false;
        } else {
            msg.push_str(&format!("{name} in {n}"));
        }
    }
    if let Some(u) = r.cells.get(UNIDENTIFIED) {
        msg.push_str(&format!(" (rendering unidentified in {})", units(u.len())));
    }
    let suggested = r.suggested.as_deref().unwrap_or(KEPT);
    // Evidence of an unconfirmed drift: which renderings rest on the association alone.
    let unconfirmed: Vec<&str> = r
        .cells
        .keys()
        .filter(|k| *k != KEPT && *k != UNIDENTIFIED && !r.confirmed.contains(k))
        .map(String::as_str)
        .collect();
    let (severity, advice) = if r.in_glossary {
        (
            Severity::Info,
            format!(
                "the glossary requires {suggested}; every unit that breaks it is already a `glossary` error, so this is a summary"
            ),
        )
    } else if !r.confirmed_drift {
        (
            Severity::Warning,
            format!(
                "unconfirmed: {} found only by statistical association or not on word boundaries in every unit credited with it (no glossary entry or gloss names it there), so no reconciliation or revision is sent; check the units listed and add the right rendering to the glossary",
                unconfirmed.join(", ")
            ),
        )
    } else if suggested == KEPT {
        (
            Severity::Warning,
            "choose one form (most units keep the term), add it to the glossary and revise the other units".to_string(),
        )
    } else {
        (
            Severity::Warning,
            format!(
                "choose one rendering (most units: {suggested}), add it to the glossary and revise the other units"
            ),
        )
    };
    let summary: Vec<String> = r
        .cells
        .iter()
        .map(|(k, v)| format!("{k}: {}", v.join(", ")))
        .collect();
    Finding::new(
        CHECK,
        severity,
        format!("{msg}; {advice}"),
        "",
        &summary.join("; "),
    )
}
