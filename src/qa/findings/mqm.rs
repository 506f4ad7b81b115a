//! A per-chapter MQM scorecard: every QA check mapped to an MQM error category in
//! ONE table ([`CATEGORIES`], with prefix rules for the check families [`category`] names),
//! the finding severities mapped to MQM severity levels ([`mqm_severity`]) and a chapter's
//! penalty per 1,000 source words ([`score_chapter`]).
//!
//! The model is the MQM scoring model (MQM Council, <https://themqm.org>, "MQM Scoring
//! Models", the successor of the MQM-DQF scoring model of TAUS and DFKI): each error carries a
//! severity weight (neutral 0, minor 1, major 5, critical 25); the absolute penalty total
//! (APT) is their sum; the normed penalty total is APT × reference word count / evaluation
//! word count, here with a reference word count of 1,000 source words. A chapter passes when
//! its normed penalty total is at most the campaign key `mqm_threshold`
//! ([`DEFAULT_MQM_THRESHOLD`]). As MQM keeps them apart, the penalties of issues nobody has
//! looked at (unconfirmed) and of editor-confirmed errors are reported separately; dismissed
//! findings are false positives and score nothing.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::lang::Script;
use crate::qa::findings::editor_marks::Mark;
use crate::qa::{Finding, Severity};

/// Default of the campaign key `mqm_threshold`: at most 10 penalty points per 1,000 source
/// words, i.e. two major errors or ten minor ones per 1,000 words (a quality score of 99 on
/// the 100-point scale of the MQM scoring model with a reference word count of 1,000). A
/// project choice for technical books, where a broken code block or lost paragraph (major)
/// matters more than in marketing text; set the key per campaign.
pub use crate::config::DEFAULT_MQM_THRESHOLD;

/// The reference word count the penalty is normed to (MQM scoring model).
pub const REFERENCE_WORDS: f64 = 1000.0;

/// An MQM error category (the dimensions of the MQM typology used by booktr's checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Category {
    /// Content of the source missing in the target (also content added in its place).
    #[serde(rename = "Accuracy/Omission")]
    AccuracyOmission,
    /// Content in the target that the source does not have (a sentence added).
    #[serde(rename = "Accuracy/Addition")]
    AccuracyAddition,
    /// Source text left untranslated.
    #[serde(rename = "Accuracy/Untranslated")]
    AccuracyUntranslated,
    /// A termbase rendering not used, or a term rendered inconsistently.
    #[serde(rename = "Terminology")]
    Terminology,
    /// Text that does not read as a correct target text (broken sentences, stray markers).
    #[serde(rename = "Fluency")]
    Fluency,
    /// A convention of the target locale not followed (punctuation, spacing, quotes, numbers).
    #[serde(rename = "Locale convention")]
    LocaleConvention,
    /// Markup, code, links and cross-references of the source not kept.
    #[serde(rename = "Markup")]
    Markup,
}

impl Category {
    /// The MQM name (`Accuracy/Omission`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::AccuracyOmission => "Accuracy/Omission",
            Category::AccuracyAddition => "Accuracy/Addition",
            Category::AccuracyUntranslated => "Accuracy/Untranslated",
            Category::Terminology => "Terminology",
            Category::Fluency => "Fluency",
            Category::LocaleConvention => "Locale convention",
            Category::Markup => "Markup",
        }
    }
}

/// THE table: each check name of booktr and its MQM category. The reasoning per row: lost or
/// added content is Accuracy/Omission (an injected preamble or an echoed context replaces
/// what the source says, and a truncated or padded length ratio is the visible trace of it);
/// code, structure, links, images, footnotes, math and HTML are Markup; numbers changed or
/// lost are Accuracy/Omission of the fact they state; termbase and drift are Terminology;
/// review markers and sentence-level breakage are Fluency; `pairing` notes how two texts were
/// compared and is Fluency at `info` (neutral, no penalty).
pub const CATEGORIES: &[(&str, Category)] = &[
    ("completeness", Category::AccuracyOmission),
    ("untranslated", Category::AccuracyUntranslated),
    ("untranslated_word", Category::AccuracyUntranslated),
    ("length_ratio", Category::AccuracyOmission),
    ("truncation", Category::AccuracyOmission),
    ("omission", Category::AccuracyOmission),
    ("addition", Category::AccuracyAddition),
    ("injected_text", Category::AccuracyOmission),
    ("garbled_text", Category::AccuracyOmission),
    ("context_echo", Category::AccuracyOmission),
    ("structure", Category::Markup),
    ("code_blocks", Category::Markup),
    ("inline_code", Category::Markup),
    ("code_comments", Category::Markup),
    ("headings", Category::Markup),
    ("tables", Category::Markup),
    ("links", Category::Markup),
    ("images", Category::Markup),
    ("footnotes", Category::Markup),
    ("footnote_pairs", Category::Markup),
    ("reference_definitions", Category::Markup),
    ("math", Category::Markup),
    ("html", Category::Markup),
    ("emphasis", Category::Markup),
    ("source_targets", Category::Markup),
    ("numbers", Category::AccuracyOmission),
    ("glossary", Category::Terminology),
    ("term_drift", Category::Terminology),
    ("review_markers", Category::Fluency),
    ("sentences", Category::Fluency),
    ("pairing", Category::Fluency),
];

/// Check-name prefixes of the check families added by the house-style lint and the
/// cross-reference checks: `style_*` are Locale convention; `xref_*` (numbered references
/// that must resolve), `anchor_*` (in-page links) and `site_*` (links across a site's pages)
/// are Markup, as links are.
pub const PREFIXES: &[(&str, Category)] = &[
    ("style_", Category::LocaleConvention),
    ("xref_", Category::Markup),
    ("anchor_", Category::Markup),
    ("footnote", Category::Markup),
    ("site_", Category::Markup),
];

/// The MQM category of `check`: its row of [`CATEGORIES`], else its prefix in [`PREFIXES`],
/// else Fluency (a check not in the table; [`is_mapped`] tells).
pub fn category(check: &str) -> Category {
    CATEGORIES
        .iter()
        .find(|(c, _)| *c == check)
        .or_else(|| PREFIXES.iter().find(|(p, _)| check.starts_with(p)))
        .map_or(Category::Fluency, |(_, cat)| *cat)
}

/// Whether `check` has a row of [`CATEGORIES`] or a prefix of [`PREFIXES`].
pub fn is_mapped(check: &str) -> bool {
    CATEGORIES.iter().any(|(c, _)| *c == check)
        || PREFIXES.iter().any(|(p, _)| check.starts_with(p))
}

/// An MQM severity level, with its weight ([`MqmSeverity::weight`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MqmSeverity {
    /// Not an error (an `info` finding): 0 points.
    Neutral,
    /// Does not change the meaning or break the book: 1 point.
    Minor,
    /// Changes what the book says or breaks its build: 5 points.
    Major,
    /// Makes that part of the book unfit for its purpose (content lost): 25 points.
    Critical,
}

impl MqmSeverity {
    /// Penalty points (MQM scoring model): neutral 0, minor 1, major 5, critical 25.
    pub fn weight(self) -> u32 {
        match self {
            MqmSeverity::Neutral => 0,
            MqmSeverity::Minor => 1,
            MqmSeverity::Major => 5,
            MqmSeverity::Critical => 25,
        }
    }
}

/// Checks whose errors are critical: the book lost content there (a chapter or unit missing
/// from the output, a translation cut off), which makes that part unfit for its purpose, the
/// MQM definition of critical.
pub const CRITICAL_CHECKS: &[&str] = &["completeness", "truncation"];

/// The MQM severity of finding `f` as it counts (its `severity` after the editor's review):
/// an `error` is major (it changes what the book says or breaks its build: the editor must
/// fix it), critical for [`CRITICAL_CHECKS`]; a `warning` is minor; `info` is neutral.
pub fn mqm_severity(f: &Finding) -> MqmSeverity {
    match f.severity {
        Severity::Error if CRITICAL_CHECKS.contains(&f.check.as_str()) => MqmSeverity::Critical,
        Severity::Error => MqmSeverity::Major,
        Severity::Warning => MqmSeverity::Minor,
        Severity::Info => MqmSeverity::Neutral,
    }
}

/// Words of a source text as MQM counts them: whitespace-separated tokens with at least one
/// letter or digit, each CJK ideograph, kana or hangul syllable counting as one word (the
/// convention of CAT tools' word counts for scripts without spaces).
pub fn source_words(text: &str) -> usize {
    let mut n = 0;
    for tok in text.split_whitespace() {
        let mut latin = false;
        for ch in tok.chars() {
            if matches!(
                crate::lang::script_of(ch),
                Some(Script::Han | Script::Japanese | Script::Hangul)
            ) {
                n += 1;
            } else if ch.is_alphanumeric() {
                latin = true;
            }
        }
        if latin {
            n += 1;
        }
    }
    n
}

/// Penalties of one group of issues.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Penalty {
    /// Issues of MQM severity minor (warnings).
    pub minor: usize,
    /// Issues of MQM severity major (errors).
    pub major: usize,
    /// Issues of MQM severity critical (errors of [`CRITICAL_CHECKS`]).
    pub critical: usize,
    /// Absolute penalty total: minor + 5 × major + 25 × critical.
    pub points: u32,
    /// `points × 1000 / source words` (0 for a chapter of no words).
    pub per_1000_words: f64,
}

impl Penalty {
    fn add(&mut self, s: MqmSeverity) {
        match s {
            MqmSeverity::Neutral => {}
            MqmSeverity::Minor => self.minor += 1,
            MqmSeverity::Major => self.major += 1,
            MqmSeverity::Critical => self.critical += 1,
        }
        self.points += s.weight();
    }

    fn norm(&mut self, words: usize) {
        self.per_1000_words = if words == 0 {
            0.0
        } else {
            f64::from(self.points) * REFERENCE_WORDS / words as f64
        };
    }
}

/// The MQM scorecard of one chapter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChapterScore {
    /// Chapter key.
    pub chapter: String,
    /// Source words ([`source_words`]).
    pub source_words: usize,
    /// Issues found by the checks that no editor has marked.
    pub unconfirmed: Penalty,
    /// Errors an editor confirmed.
    pub confirmed: Penalty,
    /// Penalty points (unconfirmed and confirmed) per MQM category, by category name.
    pub by_category: BTreeMap<String, u32>,
    /// Dismissed findings (false positives, no penalty).
    pub dismissed: usize,
    /// `(unconfirmed + confirmed) points × 1000 / source words`.
    pub per_1000_words: f64,
    /// `per_1000_words ≤ threshold`. Unconfirmed issues count: until an editor dismisses a
    /// finding, it stands.
    pub pass: bool,
}

/// Scores one chapter of `source_words` words with `findings` (as they count: after marks
/// and downgrades) at `threshold` penalty points per 1,000 words.
pub fn score_chapter<'a>(
    chapter: &str,
    source_words: usize,
    findings: impl IntoIterator<Item = &'a Finding>,
    threshold: f64,
) -> ChapterScore {
    let mut s = ChapterScore {
        chapter: chapter.to_string(),
        source_words,
        unconfirmed: Penalty::default(),
        confirmed: Penalty::default(),
        by_category: BTreeMap::new(),
        dismissed: 0,
        per_1000_words: 0.0,
        pass: true,
    };
    for f in findings {
        let mark = f.review.as_ref().and_then(|r| r.mark);
        if mark == Some(Mark::Dismissed) {
            s.dismissed += 1;
            continue;
        }
        let sev = mqm_severity(f);
        if sev == MqmSeverity::Neutral {
            continue;
        }
        if mark == Some(Mark::Confirmed) {
            s.confirmed.add(sev);
        } else {
            s.unconfirmed.add(sev);
        }
        *s.by_category
            .entry(category(&f.check).as_str().to_string())
            .or_default() += sev.weight();
    }
    s.unconfirmed.norm(source_words);
    s.confirmed.norm(source_words);
    s.per_1000_words = s.unconfirmed.per_1000_words + s.confirmed.per_1000_words;
    s.pass = s.per_1000_words <= threshold;
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qa::findings::editor_marks;

    #[test]
    fn every_check_of_the_check_order_has_a_row() {
        for c in crate::qa::CHECK_ORDER {
            assert!(is_mapped(c), "{c} has no MQM category");
        }
        assert_eq!(category("untranslated"), Category::AccuracyUntranslated);
        assert_eq!(category("glossary"), Category::Terminology);
        assert_eq!(category("style_cjk_spacing"), Category::LocaleConvention);
        assert_eq!(category("xref_figure"), Category::Markup);
        assert_eq!(category("anchor_links"), Category::Markup);
        assert_eq!(category("footnote_pairs"), Category::Markup);
        assert!(!is_mapped("no_such_check"));
        assert_eq!(Category::LocaleConvention.as_str(), "Locale convention");
        assert_eq!(
            serde_json::to_string(&Category::AccuracyOmission).unwrap(),
            "\"Accuracy/Omission\""
        );
    }

    #[test]
    fn words_count_latin_tokens_and_cjk_characters() {
        assert_eq!(source_words("An agent, it is — `code` 42"), 6);
        assert_eq!(source_words("智能体 is here"), 5);
        assert_eq!(source_words(""), 0);
    }

    #[test]
    fn a_chapter_scores_weights_per_thousand_words_and_keeps_confirmed_apart() {
        let e = Finding::new("code_blocks", Severity::Error, "m", "", "");
        let w = Finding::new("glossary", Severity::Warning, "m", "", "");
        let crit = Finding::new("completeness", Severity::Error, "m", "", "");
        let mut confirmed = Finding::new("links", Severity::Error, "m", "", "");
        editor_marks::apply(
            &mut confirmed,
            Some((editor_marks::Mark::Confirmed, "")),
            false,
        );
        let mut dismissed = Finding::new("links", Severity::Error, "n", "", "");
        editor_marks::apply(
            &mut dismissed,
            Some((editor_marks::Mark::Dismissed, "")),
            false,
        );
        let info = Finding::new("pairing", Severity::Info, "m", "", "");
        let all = [e, w, crit, confirmed, dismissed, info];
        let s = score_chapter("ch1", 2000, &all, 10.0);
        assert_eq!(
            (
                s.unconfirmed.major,
                s.unconfirmed.minor,
                s.unconfirmed.critical
            ),
            (1, 1, 1)
        );
        assert_eq!(s.unconfirmed.points, 31);
        assert!((s.unconfirmed.per_1000_words - 15.5).abs() < 1e-9);
        assert_eq!((s.confirmed.major, s.confirmed.points), (1, 5));
        assert!((s.confirmed.per_1000_words - 2.5).abs() < 1e-9);
        assert!((s.per_1000_words - 18.0).abs() < 1e-9);
        assert_eq!(s.dismissed, 1);
        assert!(!s.pass);
        assert_eq!(s.by_category["Markup"], 10);
        assert_eq!(s.by_category["Accuracy/Omission"], 25);
        assert_eq!(s.by_category["Terminology"], 1);
        assert!(score_chapter("ch1", 2000, &all, 18.0).pass);
    }
}
