//! Review markers (check `review_markers`, campaign level): the renderings translators coined
//! and flagged for review, the coined renderings they did not flag, and conflicting flags.
//!
//! Translators write the campaign's review marker ([`QaContext::review_marker`], `[待审]` for
//! Chinese) after a rendering they coined: `智能体（Agent）[待审]`, `智能体 (Agent) [待审]` or
//! `智能体[待审]` (the three forms are found in the clean prose, whitespace allowed between the
//! parts, see [`crate::qa::view::term_text`]). Every one becomes a marked [`ReviewTerm`]. A parenthetical gloss
//! `R（Term）` without the marker, whose Term is not in the termbase and occurs in the unit's
//! source, is a new term too, unmarked. When source and target share a script (en→de), a
//! parenthetical the source already has (`language model (LLM)`) is the source's, not a gloss.
//!
//! Renderings are cut from the text before the gloss by a heuristic refined with the word
//! starts the campaign's translations show (see [`crate::qa::view::term_text`]); when a rendering of a term
//! ends with another, shorter rendering found for the same term elsewhere (`入智能体` and
//! `智能体`), the shorter one is used.
//!
//! Findings, one per distinct (term, rendering):
//! - `info` for a marked rendering (to review);
//! - `warning` for an unmarked new term (the translator should have flagged it);
//! - `warning` when the same term carries two or more different marked renderings: a conflict
//!   the terminology reconciliation must settle (campaign-wide, no unit).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::qa::Parsed;
use crate::qa::view::term_text;
use crate::qa::{Finding, QaContext, Severity};
use crate::termbase::term_key;

/// Check name of the findings.
pub const CHECK: &str = "review_markers";

/// A rendering flagged as new, or a new gloss without the flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewTerm {
    /// The source term in the gloss, if the marker follows one.
    pub term: Option<String>,
    pub rendering: String,
    pub unit: String,
    pub chapter: String,
    /// Up to 80 characters of the translation around it.
    pub context: String,
    /// Whether the review marker was written.
    pub marked: bool,
}

/// Runs the check; returns the findings and the review terms, one per unit, term, rendering and
/// flag, in campaign order.
pub(crate) fn check(ctx: &QaContext, units: &[Parsed]) -> (Vec<Finding>, Vec<ReviewTerm>) {
    let same_script = ctx.source_lang.script == ctx.target_lang.script;
    let mut found: Vec<(&Parsed, &str, term_text::Found)> = Vec::new();
    for u in units {
        let Some(tgt) = u.tgt_prose() else { continue };
        let mut src_lower: Option<String> = None;
        for f in term_text::scan(tgt, &ctx.source_lang, &ctx.target_lang, &ctx.review_marker) {
            if !f.marked {
                let Some(t) = &f.term else { continue };
                if ctx.termbase.get(t).is_some() {
                    continue;
                }
                let src = src_lower.get_or_insert_with(|| u.src_prose().to_lowercase());
                if !src.contains(&t.to_lowercase())
                    || (same_script && term_text::parenthesized_in(src, t, &ctx.source_lang))
                {
                    continue;
                }
            }
            found.push((u, tgt, f));
        }
    }
    let boundaries = (term_text::unspaced(&ctx.target_lang) && !found.is_empty()).then(|| {
        let texts: Vec<&str> = units.iter().filter_map(|u| u.tgt_prose()).collect();
        term_text::Boundaries::new(
            found.iter().map(|f| f.2.run.as_str()),
            &texts,
            &ctx.target_lang,
        )
    });
    let mut terms: Vec<ReviewTerm> = Vec::new();
    for (u, tgt, f) in found {
        let rendering = term_text::finish(
            &f.run,
            f.term.as_deref(),
            &ctx.target_lang,
            boundaries.as_ref(),
        );
        let rt = ReviewTerm {
            term: f.term.clone(),
            rendering,
            unit: u.unit.to_string(),
            chapter: u.chapter.to_string(),
            context: term_text::context(tgt, f.start, f.end, 80),
            marked: f.marked,
        };
        let dup = terms
            .iter()
            .rev()
            .take_while(|t| t.unit == rt.unit)
            .any(|t| {
                t.marked == rt.marked
                    && t.rendering == rt.rendering
                    && t.term.as_deref().map(term_key) == rt.term.as_deref().map(term_key)
            });
        if !dup {
            terms.push(rt);
        }
    }
    shorten_renderings(&mut terms);
    (findings(ctx, &terms), terms)
}

/// Replaces each rendering by the shortest other rendering of the same term it ends with.
fn shorten_renderings(terms: &mut [ReviewTerm]) {
    let mut by_term: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in terms.iter() {
        if let Some(k) = t.term.as_deref().map(term_key) {
            by_term.entry(k).or_default().push(t.rendering.clone());
        }
    }
    for t in terms.iter_mut() {
        if let Some(k) = t.term.as_deref().map(term_key) {
            let known: Vec<&str> = by_term[&k].iter().map(String::as_str).collect();
            t.rendering = term_text::shortest_known_suffix(&t.rendering, &known);
        }
    }
}

/// Distinct (term, rendering, marked) groups in first-seen order, with their units.
struct Group<'a> {
    term: Option<&'a str>,
    rendering: &'a str,
    marked: bool,
    units: Vec<(&'a str, &'a str)>,
    context: &'a str,
}

fn findings(ctx: &QaContext, terms: &[ReviewTerm]) -> Vec<Finding> {
    let marker = ctx.review_marker.as_str();
    let mut groups: Vec<Group> = Vec::new();
    for t in terms {
        let key = t.term.as_deref().map(term_key);
        match groups.iter_mut().find(|g| {
            g.marked == t.marked && g.rendering == t.rendering && g.term.map(term_key) == key
        }) {
            Some(g) => {
                if !g.units.iter().any(|u| u.0 == t.unit) {
                    g.units.push((&t.unit, &t.chapter));
                }
            }
            None => groups.push(Group {
                term: t.term.as_deref(),
                rendering: &t.rendering,
                marked: t.marked,
                units: vec![(&t.unit, &t.chapter)],
                context: &t.context,
            }),
        }
    }
    let mut out = Vec::new();
    // Conflicts: one term, several marked renderings.
    let mut by_term: BTreeMap<String, Vec<&Group>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for g in groups.iter().filter(|g| g.marked) {
        if let Some(t) = g.term {
            let k = term_key(t);
            if !by_term.contains_key(&k) {
                order.push(k.clone());
            }
            by_term.entry(k).or_default().push(g);
        }
    }
    for k in &order {
        let gs = &by_term[k];
        if gs.len() < 2 {
            continue;
        }
        let list: Vec<String> = gs
            .iter()
            .map(|g| format!("{} ({})", g.rendering, plural(g.units.len(), "unit")))
            .collect();
        let contexts: Vec<&str> = gs.iter().map(|g| g.context).collect();
        out.push(Finding::new(
            CHECK,
            Severity::Warning,
            format!(
                "\"{}\" carries {} different renderings marked {marker}: {}; the terminology reconciliation must choose one, and the other units be revised to it",
                gs[0].term.unwrap_or_default(),
                gs.len(),
                list.join(", ")
            ),
            "",
            &contexts.join(" … "),
        ));
    }
    for g in &groups {
        let (first, chapter) = g.units[0];
        let n = plural(g.units.len(), "unit");
        let term = g.term.map_or(String::new(), |t| format!(" for \"{t}\""));
        let (severity, message) = if g.marked {
            (
                Severity::Info,
                format!(
                    "new rendering {}{term} marked {marker} in {n} (first {first}): review it and add it to the glossary, or choose another",
                    g.rendering
                ),
            )
        } else {
            (
                Severity::Warning,
                format!(
                    "new rendering {}{term} is not in the glossary and not marked {marker} ({n}, first {first}): review it; coined renderings must carry {marker}",
                    g.rendering
                ),
            )
        };
        let mut f = Finding::new(CHECK, severity, message, "", g.context);
        f.unit = first.to_string();
        f.chapter = chapter.to_string();
        out.push(f);
    }
    out
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::qa::UnitText;
    use crate::qa::unit::glossary::entry;
    use crate::termbase::Termbase;

    fn run(tb: Termbase, units: &[(&str, &str, &str)]) -> (Vec<Finding>, Vec<ReviewTerm>) {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh-CN"), &tb);
        let texts: Vec<UnitText> = units
            .iter()
            .map(|(id, s, t)| UnitText {
                unit: id,
                chapter: "c",
                source: s,
                target: Some(t),
            })
            .collect();
        check(&ctx, &Parsed::all(&texts))
    }

    #[test]
    fn collects_marked_and_unmarked_terms() {
        let (f, terms) = run(
            Termbase::from_entries([entry("tool", "工具", &[])]),
            &[
                (
                    "c-000",
                    "An agent uses a tool.",
                    "我们引入智能体（Agent）[待审]，它使用工具（tool）。",
                ),
                ("c-001", "Guardrails help.", "护栏 [待审] 很有用。"),
                (
                    "c-002",
                    "A sandbox isolates code.",
                    "沙箱（sandbox）隔离代码。",
                ),
                ("c-003", "Clean.", "干净（见上文）。"),
            ],
        );
        let got: Vec<(Option<&str>, &str, &str, bool)> = terms
            .iter()
            .map(|t| {
                (
                    t.term.as_deref(),
                    t.rendering.as_str(),
                    t.unit.as_str(),
                    t.marked,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (Some("Agent"), "智能体", "c-000", true),
                (None, "护栏", "c-001", true),
                (Some("sandbox"), "沙箱", "c-002", false),
            ]
        );
        assert!(
            terms[0].context.contains("智能体（Agent）[待审]")
                && terms[0].context.chars().count() <= 80,
            "{:?}",
            terms[0].context
        );
        let got: Vec<(&str, Severity, &str)> = f
            .iter()
            .map(|f| (f.check.as_str(), f.severity, f.unit.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("review_markers", Severity::Info, "c-000"),
                ("review_markers", Severity::Info, "c-001"),
                ("review_markers", Severity::Warning, "c-002"),
            ]
        );
        assert!(
            f[0].message
                .contains("new rendering 智能体 for \"Agent\" marked [待审] in 1 unit")
        );
        assert!(f[2].message.contains("not marked [待审]"));
    }

    #[test]
    fn conflicting_marked_renderings_are_a_warning() {
        let (f, terms) = run(
            Termbase::default(),
            &[
                ("c-000", "An agent.", "一个智能体（Agent）[待审]。"),
                ("c-001", "An agent.", "我们引入智能体（Agent）[待审]。"),
                ("c-002", "An agent.", "这是代理 (agent) [待审]。"),
            ],
        );
        assert_eq!(terms.len(), 3);
        let conflicts: Vec<&Finding> = f
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .collect();
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].unit, "");
        assert!(
            conflicts[0].message.contains("\"Agent\" carries 2 different renderings marked [待审]: 智能体 (2 units), 代理 (1 unit)"),
            "{}",
            conflicts[0].message
        );
        assert_eq!(f.iter().filter(|f| f.severity == Severity::Info).count(), 2);
    }

    #[test]
    fn longer_cuts_shorten_to_known_renderings() {
        let (_, terms) = run(
            Termbase::default(),
            &[
                ("c-000", "An agent.", "智能体（Agent）[待审]。"),
                ("c-001", "An agent.", "部署智能体（Agent）[待审]。"),
            ],
        );
        assert_eq!(terms[1].rendering, "智能体");
    }
}
