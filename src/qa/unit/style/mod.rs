//! House-style lint for the target locale (`style_*`, warning by default): deterministic
//! checks of the locale conventions a publisher's editor enforces, configured by the
//! campaign's `[style]` table ([`crate::config::Style`]) and on by default where they apply.
//!
//! | check | locales | what it wants |
//! |---|---|---|
//! | [`CJK_PUNCTUATION`] | zh, ja | `，。：；！？` in CJK sentences; half-width inside Latin names, numbers and URLs; half-width Latin letters and digits |
//! | [`CJK_LATIN_SPACE`] | zh, ja | one space (or none, as configured) between CJK and Latin text or digits |
//! | [`QUOTES`] | zh, ja, fr, de | the locale's quotation marks (`“”`, `「」`, `« »`, `„“`) |
//! | [`FR_SPACING`] | fr | a (narrow) no-break space before `; : ! ?` and inside `« »` |
//! | [`NUMBER_FORMAT`] | all known | the locale's digit grouping and decimal separator |
//! | [`TERM_CASING`] | all | a kept English term keeps the source's casing (`GitHub`, `JSON`) |
//!
//! Only the target's prose is read ([`view`]): nothing inside code blocks, inline code, math,
//! HTML, URLs, link targets or front matter is ever flagged. Each occurrence is one finding
//! with [`crate::qa::Finding::span`]: the exact char offsets (not bytes) of the offending text in
//! the unit's target; for a missing space, the char after the place where it belongs.
//!
//! **Why warnings**: a style deviation does not change meaning, so by default it never
//! forces a revision (only error findings do, see the Manager's review policy) and never fails
//! `validate`; it is reported for the editor, and it counts as a warning when the repair loop
//! compares candidates (a revision with more style deviations is no better). A campaign that
//! wants the loop to fix style sets `style.severity = "error"`; the finding's message is then
//! the revision feedback. Model review budgets are not spent on style: the reviewer's risk
//! score leaves `style_*` warnings out, and neither the reviewer's nor the Manager's prompt
//! shows them ([`in_prompts`]).

mod casing;
mod cjk;
mod latin;
mod numbers;
pub mod view;

#[cfg(test)]
mod tests;

use crate::config::{Style, StyleSeverity};
use crate::lang::Lang;

use crate::qa::Doc;
use crate::qa::{Finding, QaContext, Severity};
use view::View;

/// Half-width punctuation in a CJK sentence, or full-width inside a Latin name or number.
pub const CJK_PUNCTUATION: &str = "style_cjk_punctuation";
/// Spacing between CJK and Latin text or digits.
pub const CJK_LATIN_SPACE: &str = "style_cjk_latin_space";
/// Quotation marks of another locale.
pub const QUOTES: &str = "style_quotes";
/// French spacing before `; : ! ?` and inside `« »`.
pub const FR_SPACING: &str = "style_fr_spacing";
/// Digit grouping or decimal separator of another locale.
pub const NUMBER_FORMAT: &str = "style_number_format";
/// A kept English term cased otherwise than in the source.
pub const TERM_CASING: &str = "style_term_casing";

/// Whether `check` names a house-style check (every one is `style_*`, the prefix the MQM
/// mapping reads as "Locale convention").
pub fn is_style(check: &str) -> bool {
    check.starts_with("style_")
}

/// Whether finding `f` goes into model prompts (the reviewer's QA notes, the Manager's
/// decision): every finding but a house-style one below error severity. A style warning is for
/// the editor; shown to the reviewer, it would come back as a reviewer issue and send the unit
/// to revision, which only `style.severity = "error"` may do. It also keeps the prompts of a
/// campaign without style errors exactly as they were before the style checks existed.
pub fn in_prompts(f: &Finding) -> bool {
    !is_style(&f.check) || f.severity == Severity::Error
}

/// One style deviation in a target text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The check name ([`CJK_PUNCTUATION`] …).
    pub check: &'static str,
    /// Char offset (not bytes) of the first offending char in the target.
    pub start: usize,
    /// Char offset just after the last offending char (`start < end`).
    pub end: usize,
    /// What is wrong and what to write instead.
    pub message: String,
}

/// Collects hits for one rule.
pub(crate) struct Hits<'a> {
    pub check: &'static str,
    pub out: &'a mut Vec<Hit>,
}

impl Hits<'_> {
    /// A hit over view chars `i..=j` (both with offsets).
    pub fn push(&mut self, v: &View, i: usize, j: usize, message: String) {
        let (Some(start), Some(last)) = (v.chars[i].at, v.chars[j].at) else {
            return;
        };
        self.out.push(Hit {
            check: self.check,
            start,
            end: last + 1,
            message,
        });
    }
}

/// Runs every rule `style` turns on over `target`, the translation of `source` into `target_lang`.
/// Hits are in rule order, then text order. Empty when `style.enabled` is false.
pub fn lint(style: &Style, target_lang: &Lang, source: &str, target: &str) -> Vec<Hit> {
    let mut out = Vec::new();
    if !style.any() {
        return out;
    }
    let v = View::of(target);
    if style.cjk_punctuation {
        cjk::punctuation(
            &v,
            &mut Hits {
                check: CJK_PUNCTUATION,
                out: &mut out,
            },
        );
    }
    if let Some(policy) = style.cjk_latin_space {
        cjk::spacing(
            &v,
            policy,
            &mut Hits {
                check: CJK_LATIN_SPACE,
                out: &mut out,
            },
        );
    }
    if let Some(q) = style.quotes {
        latin::quotes(
            &v,
            q,
            &mut Hits {
                check: QUOTES,
                out: &mut out,
            },
        );
    }
    if style.fr_spacing {
        latin::fr_spacing(
            &v,
            &mut Hits {
                check: FR_SPACING,
                out: &mut out,
            },
        );
    }
    if style.number_format
        && let Some(conv) = numbers::Convention::of(target_lang)
    {
        numbers::check(
            &v,
            conv,
            &numbers::source_versions(source),
            &mut Hits {
                check: NUMBER_FORMAT,
                out: &mut out,
            },
        );
    }
    if style.term_casing {
        casing::check(
            &View::of(source),
            &v,
            target_lang,
            &mut Hits {
                check: TERM_CASING,
                out: &mut out,
            },
        );
    }
    out
}

/// The QA severity of `style_*` findings under `s`.
pub fn severity(s: StyleSeverity) -> Severity {
    match s {
        StyleSeverity::Warning => Severity::Warning,
        StyleSeverity::Error => Severity::Error,
        StyleSeverity::Info => Severity::Info,
    }
}

/// Runs the check (see the module docs): one finding per [`Hit`], with its span and, as the
/// target excerpt, the target text around it (20 chars either side, on one line). Nothing for
/// a target identical to its source (an untranslated unit, which `untranslated` reports).
pub fn check(ctx: &QaContext, _src: &Doc, _tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    // A unit left as its source is reported by `untranslated`; its style is the source's.
    if source.trim() == target.trim() {
        return Vec::new();
    }
    let hits = lint(&ctx.style, &ctx.target_lang, source, target);
    if hits.is_empty() {
        return Vec::new();
    }
    let chars: Vec<char> = target.chars().collect();
    let severity = severity(ctx.style.severity);
    hits.into_iter()
        .map(|h| {
            let from = h.start.saturating_sub(20);
            let to = (h.end + 20).min(chars.len());
            let around: String = chars[from..to]
                .iter()
                .map(|&c| if c == '\n' { '⏎' } else { c })
                .collect();
            Finding::new(h.check, severity, h.message, "", &around).with_span(h.start, h.end)
        })
        .collect()
}

// Whether a char is a CJK letter: the language layer's, shared with the rehearsal's
// pseudo-translation, which writes what these checks accept.
pub(crate) use crate::lang::is_cjk_letter;

/// Whether `c` is CJK punctuation (the CJK Symbols and Punctuation block and the full-width
/// forms of ASCII punctuation).
pub(crate) fn is_cjk_punct(c: char) -> bool {
    matches!(c, '\u{3000}'..='\u{303F}' | '\u{FF01}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}' | '\u{FF3B}'..='\u{FF40}' | '\u{FF5B}'..='\u{FF65}')
}

/// A char shown in a message: backquoted, with invisible spaces named.
pub(crate) fn show(c: char) -> String {
    match c {
        ' ' => "a space".into(),
        '\u{00A0}' => "a no-break space (U+00A0)".into(),
        '\u{202F}' => "a narrow no-break space (U+202F)".into(),
        c => format!("`{c}`"),
    }
}
