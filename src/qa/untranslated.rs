//! `untranslated`: the unit was not translated, or only barely.
//!
//! Units whose source has fewer than [`MIN_SOURCE_LETTERS`] (20) prose letters (pure code,
//! a lone figure, a reference line) are skipped: there is nothing to judge.
//!
//! 1. **Echo**: the translation equals the source after trimming and collapsing whitespace →
//!    error (skipped when source and target are the same language).
//! 2. **Script share** (non-Latin targets: Han, Japanese, Hangul, Cyrillic, Greek, Arabic): the
//!    share of target-script letters among the letters of the translation's clean prose
//!    ([`doc::script_share`], at least 40 letters) is below [`SCRIPT_FLOOR`] (0.20) → error.
//!    Why 0.20: Chinese technical prose keeps English product names, acronyms and identifiers
//!    (the Chinese original of the reference corpus writes "Agent", "token", "API" in Latin
//!    script), so a real translation typically shows a CJK share of 0.5–0.9, while an echoed
//!    English unit shows ~0. Measured on the Chinese original of the reference corpus cut
//!    into 1,500-character units: median 0.84, 5th percentile 0.69, 1st percentile 0.55. 0.20
//!    leaves room for name-heavy units without letting an echo or a mostly English unit
//!    through. The one unit of the corpus under 0.20 (0.16) is a citation (authors and a book
//!    title in English) with a short heading; so before reporting, the share is recomputed
//!    without capitalised foreign words (names, titles, acronyms): if that reaches the floor,
//!    or fewer than 40 letters remain, nothing is reported. An echoed paragraph is mostly
//!    lower-case words and stays near 0.
//! 3. **English function words** (Latin-script targets other than English, from an English
//!    source): script share cannot tell German from English, so instead the share of English
//!    function words (the, and, of, to, is, are, with, that, for, this, which, …) among the
//!    words of the translation's clean prose is measured; above [`FUNCTION_WORD_CEILING`]
//!    (0.15) with at least 30 words → warning. English prose runs around 0.35–0.45 with a full
//!    function-word list; the deliberately unambiguous list below measures 0.24 on the English
//!    reference corpus (per 1,500-character unit: median 0.24, 5th percentile 0.17; see the
//!    `english_corpus_share` test), while a translation only keeps the odd quoted title or
//!    product name (the Chinese original of the corpus: 0.004). Words that are also
//!    common words of the target language are left out for it (`of`, `is`, `was` for Dutch;
//!    `to` for Polish, Czech, Slovak and other Slavic languages; `for` for Danish and
//!    Norwegian; `was` for German). A warning, not an error: the signal is statistical.
//!
//! Deliberate exception: when the source consists only of footnote and link reference
//! definitions (a bibliography), an echo or a low script share is a warning, not an error:
//! citations (authors, titles, venues) are legitimately left as they are.

use super::doc::{self, Doc};
use super::{Finding, QaContext, Severity};
use crate::lang::Script;

/// Units whose source prose has fewer letters are not judged.
pub const MIN_SOURCE_LETTERS: usize = 20;
/// The least share of target-script letters a non-Latin translation may show.
pub const SCRIPT_FLOOR: f64 = 0.20;
/// Letters the translation's prose needs before its script share is judged.
pub const MIN_TARGET_LETTERS: usize = 40;
/// The highest share of English function words a Latin-script translation may show.
pub const FUNCTION_WORD_CEILING: f64 = 0.15;
/// Words the translation's prose needs before its function-word share is judged.
pub const MIN_WORDS: usize = 30;

const CHECK: &str = "untranslated";

/// English function words that are not ordinary words of other major Latin-script languages
/// (`in`, `an`, `on`, `as`, `at`, `by`, `will`, `also` are left out for that reason).
const FUNCTION_WORDS: &[&str] = &[
    "the", "and", "of", "to", "is", "are", "was", "were", "with", "that", "for", "this", "which",
    "these", "those", "from", "it", "its", "not", "be", "been", "have", "would", "could", "should",
    "they", "their", "there", "what", "when", "where", "how", "into", "than", "such", "about",
    "between", "because", "however", "each", "only", "other", "does", "your",
];

/// Function words that are also common words of a target language (by primary subtag).
fn excluded_for(primary: &str) -> &'static [&'static str] {
    match primary {
        "nl" => &["of", "is", "was"],
        "de" => &["was"],
        "pl" | "cs" | "sk" | "sl" | "hr" | "bs" | "sr" => &["to"],
        "da" | "no" | "nb" | "nn" => &["for"],
        _ => &[],
    }
}

/// Runs the check (see the module docs).
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let src_prose = src.clean_prose();
    if src_prose.chars().filter(|c| c.is_alphabetic()).count() < MIN_SOURCE_LETTERS {
        return Vec::new();
    }
    let severity = if only_definitions(source) {
        Severity::Warning
    } else {
        Severity::Error
    };
    let lang = &ctx.target_lang;
    let same_lang = ctx.source_lang.primary() == lang.primary();
    if !same_lang && source.split_whitespace().eq(target.split_whitespace()) {
        return vec![Finding::new(
            CHECK,
            severity,
            format!(
                "the translation is identical to the source; translate the prose into {}",
                lang.name
            ),
            source.trim(),
            target.trim(),
        )];
    }
    if lang.script != Script::Latin {
        if let Some((share, letters)) = doc::script_share(lang, tgt, MIN_TARGET_LETTERS)
            && share < SCRIPT_FLOOR
            && !names_explain_share(lang, &tgt.clean_prose())
        {
            return vec![Finding::new(
                CHECK,
                severity,
                format!(
                    "only {:.0}% of the {letters} letters of the translation's prose are {} script (at least {:.0}% expected); translate the prose left in the source language into {}",
                    share * 100.0,
                    lang.name,
                    SCRIPT_FLOOR * 100.0,
                    lang.name
                ),
                source.trim(),
                target.trim(),
            )];
        }
        return Vec::new();
    }
    if ctx.source_lang.primary() == "en" && !same_lang {
        let excluded = excluded_for(&lang.primary());
        let (function, words) = function_word_share(&tgt.clean_prose(), excluded);
        let share = function as f64 / words.max(1) as f64;
        if words >= MIN_WORDS && share > FUNCTION_WORD_CEILING {
            return vec![Finding::new(
                CHECK,
                Severity::Warning,
                format!(
                    "{:.0}% of the {words} words of the translation are English function words such as \"the\" and \"of\" (a translation stays under {:.0}%); translate the English prose into {}",
                    share * 100.0,
                    FUNCTION_WORD_CEILING * 100.0,
                    lang.name
                ),
                source.trim(),
                target.trim(),
            )];
        }
    }
    Vec::new()
}

/// Whether a low script share is explained by names and titles kept in another script: with
/// capitalised foreign words (names, titles, acronyms, as in a citation) left out, the share
/// reaches the floor or too few letters remain to judge.
fn names_explain_share(lang: &crate::lang::Lang, prose: &str) -> bool {
    let (mut native, mut foreign) = (0usize, 0usize);
    let mut word = 0usize; // letters of the current foreign word
    let mut capital = false;
    let mut flush = |word: &mut usize, capital: bool| {
        if !capital {
            foreign += *word;
        }
        *word = 0;
    };
    for c in prose.chars() {
        if lang.is_script_letter(c) {
            native += 1;
            flush(&mut word, capital);
        } else if c.is_alphabetic() {
            if word == 0 {
                capital = c.is_uppercase();
            }
            word += 1;
        } else {
            flush(&mut word, capital);
        }
    }
    flush(&mut word, capital);
    let counted = native + foreign;
    counted < MIN_TARGET_LETTERS || native as f64 / counted as f64 >= SCRIPT_FLOOR
}

/// `(function words, words)` in `prose`: words are runs of letters (apostrophes split them).
fn function_word_share(prose: &str, excluded: &[&str]) -> (usize, usize) {
    let mut words = 0;
    let mut function = 0;
    let mut lower = String::new();
    for w in prose.split(|c: char| !c.is_alphabetic()) {
        if w.is_empty() {
            continue;
        }
        words += 1;
        if w.len() > 8 || !w.is_ascii() {
            continue;
        }
        lower.clear();
        lower.extend(w.chars().map(|c| c.to_ascii_lowercase()));
        let l = lower.as_str();
        if FUNCTION_WORDS.contains(&l) && !excluded.contains(&l) {
            function += 1;
        }
    }
    (function, words)
}

/// Whether every non-blank line of `source` belongs to a footnote definition or is a link
/// reference definition (a bibliography unit).
fn only_definitions(source: &str) -> bool {
    let mut any = false;
    for line in source.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let starts_def = line.starts_with("[^") && line.contains("]:");
        let is_ref_def = line.trim_start().starts_with('[') && line.contains("]: ");
        // Continuation lines of a footnote definition are indented.
        let continuation = any && line.starts_with("    ");
        if !(starts_def || is_ref_def || continuation) {
            return false;
        }
        any = true;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::termbase::Termbase;

    fn ctx(src: &str, tgt: &str) -> QaContext {
        QaContext::new(&Lang::parse(src), &Lang::parse(tgt), &Termbase::default())
    }

    fn run(c: &QaContext, s: &str, t: &str) -> Vec<Finding> {
        check(c, &Doc::parse(s), &Doc::parse(t), s, t)
    }

    const EN: &str = "The context window limits how much the Agent can remember in one call. Long tasks therefore need memory, which the next chapter describes in detail.\n";

    #[test]
    fn faithful_chinese_passes() {
        let zh = "上下文窗口限制了 Agent 在一次调用中能记住多少内容。因此，长任务需要记忆，下一章将详细介绍。\n";
        assert_eq!(run(&ctx("en", "zh"), EN, zh), vec![]);
    }

    #[test]
    fn echo_is_an_error_even_with_other_whitespace() {
        let echoed = format!("  {}\n\n", EN.replace(". ", ".\n"));
        let f = run(&ctx("en", "zh"), EN, &echoed);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            (CHECK, Severity::Error)
        );
        assert_eq!(
            f[0].message,
            "the translation is identical to the source; translate the prose into Simplified Chinese"
        );
        assert!(f[0].source_excerpt.starts_with("The context window"));
    }

    #[test]
    fn low_script_share_is_an_error() {
        // Two Chinese words in an otherwise English paragraph.
        let half = "The context window limits how much the Agent can remember in one call. 因此长任务 need memory, which the next chapter describes.\n";
        let f = run(&ctx("en", "zh"), EN, half);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.starts_with("only 5% of the 100 letters of the translation's prose are Simplified Chinese script"),
            "{}",
            f[0].message
        );
        // A citation with a short translated sentence: names and titles explain the share.
        let citation = "[^agoric]: 这个构想并不新：Miller, M. S., Drexler, K. E. *Markets and Computation: Agoric Open Systems.* In Huberman, B. A. (ed.), *The Ecology of Computation*, North-Holland, 1988.\n";
        let cite_src = "[^agoric]: The idea is not new: Miller, M. S., Drexler, K. E. *Markets and Computation: Agoric Open Systems.* In Huberman, B. A. (ed.), *The Ecology of Computation*, North-Holland, 1988.\n";
        let share = doc::script_share(&Lang::parse("zh"), &Doc::parse(citation), 40)
            .unwrap()
            .0;
        assert!(share < SCRIPT_FLOOR, "{share}");
        assert_eq!(run(&ctx("en", "zh"), cite_src, citation), vec![]);
        // Name-heavy but translated: above the floor.
        let names = "Agent 通过 OpenAI API、Anthropic API 和 LangChain 调用工具，并把结果写入上下文窗口。\n";
        assert_eq!(run(&ctx("en", "zh"), EN, names), vec![]);
    }

    #[test]
    fn short_or_code_only_sources_are_skipped() {
        let code = "```python\nprint('the same in every language')\n```\n";
        assert_eq!(run(&ctx("en", "zh"), code, code), vec![]);
        assert_eq!(run(&ctx("en", "zh"), "## Tools\n", "## Tools\n"), vec![]);
    }

    #[test]
    fn english_left_in_a_german_target_is_a_warning() {
        let de = "Das Kontextfenster begrenzt, wie viel sich der Agent in einem Aufruf merken kann. Lange Aufgaben brauchen deshalb ein Gedächtnis, das im nächsten Kapitel ausführlich beschrieben wird, mit Beispielen und Übungen für die Praxis.\n";
        assert_eq!(run(&ctx("en", "de"), EN, de), vec![]);
        let f = run(&ctx("en", "de"), EN, &format!("{EN}{EN}"));
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            (CHECK, Severity::Warning)
        );
        assert!(
            f[0].message.starts_with("20% of the 50 words"),
            "{}",
            f[0].message
        );
        // Dutch "is" and "of" are Dutch words, not evidence of English.
        let nl = "Het contextvenster is beperkt, of de Agent nu veel of weinig moet onthouden: het is een grens die voor elke aanroep geldt, en lange taken hebben dus geheugen nodig, wat het volgende hoofdstuk uitgebreid beschrijft.\n";
        assert_eq!(run(&ctx("en", "nl"), EN, nl), vec![]);
    }

    #[test]
    fn bibliography_echo_is_only_a_warning() {
        let refs = "[^ch1-1]: Sutton, Rich. \"The Bitter Lesson\", 2019. http://www.incompleteideas.net/IncIdeas/BitterLesson.html\n";
        let f = run(&ctx("en", "zh"), refs, refs);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
    }

    #[test]
    fn english_corpus_share() {
        // The documented English baseline, measured on the reference corpus when present.
        let Some(dir) = super::super::test_corpus() else {
            return;
        };
        let text = std::fs::read_to_string(dir.join("en/chapter01.md")).unwrap();
        let (f, w) = function_word_share(&Doc::parse(&text).clean_prose(), &[]);
        let share = f as f64 / w as f64;
        assert!((0.18..0.35).contains(&share), "{share}");
    }
}
