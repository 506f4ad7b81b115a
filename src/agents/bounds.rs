//! Output bounds: the `max_tokens` every request carries, derived from what it asks for.
//!
//! Without a bound a small model that starts repeating itself writes until the server's
//! context ends it (observed: 7,291 and 6,545 tokens for units of a few hundred, 16 of a run's
//! 20 minutes; billed on a hosted API). The stream reader stops such replies early
//! ([`crate::llm::runaway`]); the bound is what it, and the provider, hold them to.
//!
//! - **Translations and revisions**: [`translation`], a multiple of the unit's source tokens:
//!   `max(TRANSLATION_FLOOR, ceil(source_tokens · ratio(source → target) · TRANSLATION_SAFETY))`.
//!   The ratio is the target's size relative to the source in `o200k_base` tokens
//!   ([`relative_size`] of the target over that of the source). A revision is a full new
//!   translation of the same source, so it gets the same bound.
//! - **Structured answers** grow with what they are asked about: [`glossary`] (per candidate
//!   term), [`proofreading`] (per unit reviewed), [`decision`] (per candidate unit), and fixed
//!   bounds for a reconciliation ([`RECONCILE_MAX_TOKENS`]), a judgment ([`JUDGE_MAX_TOKENS`])
//!   and the brief ([`crate::agents::brief::BRIEF_TOKENS`]).
//! - The campaign's `max_tokens` caps every bound ([`capped`]); its `max_output_tokens` (the
//!   model's limit) is what the campaign's job runner retries a
//!   truncated translation with.
//!
//! All figures are tokens. Pure functions, no I/O.

use crate::lang::Lang;

/// Least `max_tokens` of a translation, in tokens: room for a heading or a one-line unit plus
/// a short preamble or reasoning block some models write first.
pub const TRANSLATION_FLOOR: u32 = 1024;

/// Headroom over the expected target size: a unit's ratio varies around the book's (short
/// units, lists and code-heavy units), and the model's tokenizer is not `o200k_base`.
pub const TRANSLATION_SAFETY: f64 = 2.0;

/// Size of a text in a language relative to the same text in English, in `o200k_base` tokens,
/// by primary language code.
///
/// - `zh`: **measured** on the shared corpus (`../shared/corpus/ai-agent-book`, the 10
///   chapters present in both `en/` and `zh/`): the Chinese chapters take 1.13 times the
///   tokens of the English ones (whole chapters, code included, summed; per chapter 1.08 to
///   1.16, except chapter 8 at 1.75, whose Chinese version has more text than its English
///   one). Rounded up to 1.2. The test `zh_ratio_matches_the_corpus` recomputes it and fails
///   if the table drifts from the book.
/// - the others are **not measured** here: they are the tokenizer premiums Petrov et al.
///   report for GPT-4's `cl100k_base` on FLORES-200 parallel sentences ("Language Model
///   Tokenizers Introduce Unfairness Between Languages", NeurIPS 2023,
///   <https://arxiv.org/abs/2305.15425>), rounded up. `o200k_base` is more efficient than
///   `cl100k_base` outside English, so they over-estimate, which is the safe side for a bound.
///
/// Languages not listed count as [`UNLISTED_RELATIVE_SIZE`].
pub const RELATIVE_SIZE: &[(&str, f64)] = &[
    ("en", 1.0),
    ("zh", 1.2),
    ("ja", 1.6),
    ("ko", 1.8),
    ("de", 1.5),
    ("fr", 1.5),
    ("es", 1.5),
    ("pt", 1.5),
    ("it", 1.5),
    ("nl", 1.5),
    ("pl", 1.7),
    ("tr", 1.7),
    ("ru", 1.8),
    ("uk", 1.9),
    ("el", 2.4),
    ("ar", 2.0),
];

/// Relative size assumed for a language missing from [`RELATIVE_SIZE`].
pub const UNLISTED_RELATIVE_SIZE: f64 = 2.0;

/// Bound of a glossary batch: a fixed part for the JSON frame plus this many tokens per
/// candidate (an entry is about 50 tokens: source, rendering, a one-line note, JSON syntax).
pub const GLOSSARY_BASE: u32 = 256;
/// Per-candidate part of a glossary batch's bound.
pub const GLOSSARY_PER_CANDIDATE: u32 = 80;

/// Bound of a proofreading batch: the summary and JSON frame ...
pub const PROOFREADING_BASE: u32 = 512;
/// ... plus this much per unit reviewed (a few issues of about 60 tokens each).
pub const PROOFREADING_PER_UNIT: u32 = 192;

/// Bound of a Manager decision: the summary and JSON frame ...
pub const DECISION_BASE: u32 = 256;
/// ... plus a revision order (unit id and a one-line reason) per candidate unit.
pub const DECISION_PER_CANDIDATE: u32 = 64;

/// Bound of a reconciliation answer (one chosen rendering and a note).
pub const RECONCILE_MAX_TOKENS: u32 = 512;

/// Bound of a judgment in `booktr experiment` (scores with evidence quotes for two
/// translations and a preference).
pub const JUDGE_MAX_TOKENS: u32 = 2048;

/// [`RELATIVE_SIZE`] of `lang` (by primary code).
pub fn relative_size(lang: &Lang) -> f64 {
    let primary = lang.primary();
    RELATIVE_SIZE
        .iter()
        .find(|(code, _)| *code == primary)
        .map_or(UNLISTED_RELATIVE_SIZE, |(_, r)| *r)
}

/// Expected target tokens per source token for `source → target` (o200k_base).
pub fn ratio(source: &Lang, target: &Lang) -> f64 {
    relative_size(target) / relative_size(source)
}

/// `max_tokens` of a translation or revision of a unit of `source_tokens` tokens (see the
/// module docs for the formula).
pub fn translation(source_tokens: usize, source: &Lang, target: &Lang) -> u32 {
    let expected = source_tokens as f64 * ratio(source, target) * TRANSLATION_SAFETY;
    // Less a hair, so that float noise (1200 · (1 / 1.2) · 2 = 2000.0000000000002) does not
    // round up a whole token.
    ((expected - 1e-9).ceil().max(0.0) as u64).clamp(TRANSLATION_FLOOR as u64, u32::MAX as u64)
        as u32
}

/// [`translation`] for a unit text (counted with `o200k_base`).
pub fn translation_of(text: &str, source: &Lang, target: &Lang) -> u32 {
    translation(crate::tokens::count(text), source, target)
}

/// `max_tokens` of a glossary batch of `candidates` terms.
pub fn glossary(candidates: usize) -> u32 {
    GLOSSARY_BASE.saturating_add(GLOSSARY_PER_CANDIDATE.saturating_mul(candidates as u32))
}

/// `max_tokens` of a proofreading batch of `units` units.
pub fn proofreading(units: usize) -> u32 {
    PROOFREADING_BASE.saturating_add(PROOFREADING_PER_UNIT.saturating_mul(units as u32))
}

/// `max_tokens` of a Manager decision over `candidates` candidate units.
pub fn decision(candidates: usize) -> u32 {
    DECISION_BASE.saturating_add(DECISION_PER_CANDIDATE.saturating_mul(candidates as u32))
}

/// A bound under the campaign's `max_tokens`, when it sets one.
pub fn capped(bound: u32, configured: Option<u32>) -> u32 {
    configured.map_or(bound, |m| bound.min(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translation_bound_is_a_multiple_of_the_source_with_a_floor() {
        let (en, zh, de) = (Lang::parse("en"), Lang::parse("zh-CN"), Lang::parse("de"));
        assert_eq!(translation(1000, &en, &zh), 2400);
        assert_eq!(translation(1000, &en, &de), 3000);
        assert_eq!(translation(10, &en, &zh), TRANSLATION_FLOOR);
        assert_eq!(translation(0, &en, &zh), TRANSLATION_FLOOR);
        // The other way round: Chinese into English is smaller.
        assert_eq!(translation(1200, &zh, &en), 2000);
        // A language nobody listed gets the conservative size.
        assert_eq!(translation(1000, &en, &Lang::parse("xx")), 4000);
    }

    #[test]
    fn structured_bounds_grow_with_their_input_and_respect_the_cap() {
        assert_eq!(glossary(10), 256 + 800);
        assert_eq!(proofreading(4), 512 + 4 * 192);
        assert_eq!(decision(40), 256 + 40 * 64);
        assert_eq!(capped(3000, Some(2000)), 2000);
        assert_eq!(capped(1500, Some(2000)), 1500);
        assert_eq!(capped(1500, None), 1500);
    }

    /// The en → zh entry of [`RELATIVE_SIZE`] against the shared corpus: the Chinese chapters'
    /// tokens over the English ones'. Skipped with a reason when the corpus is absent.
    #[test]
    fn zh_ratio_matches_the_corpus() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/ai-agent-book");
        if !root.join("zh").is_dir() {
            eprintln!(
                "skipped: the corpus is not at {} (the en → zh ratio is measured on it)",
                root.display()
            );
            return;
        }
        let (mut en_total, mut zh_total) = (0usize, 0usize);
        let mut worst: f64 = 0.0;
        for e in std::fs::read_dir(root.join("zh")).unwrap().flatten() {
            let zh_path = e.path();
            let en_path = root.join("en").join(e.file_name());
            let (Ok(zh), Ok(en)) = (
                std::fs::read_to_string(&zh_path),
                std::fs::read_to_string(&en_path),
            ) else {
                continue;
            };
            let (a, b) = (crate::tokens::count(&en), crate::tokens::count(&zh));
            let r = b as f64 / a as f64;
            eprintln!("{}: en {a} zh {b} tokens, ratio {r:.3}", zh_path.display());
            worst = worst.max(r);
            en_total += a;
            zh_total += b;
        }
        let measured = zh_total as f64 / en_total as f64;
        eprintln!("en → zh over the book: {measured:.3} (worst chapter {worst:.3})");
        let table = relative_size(&Lang::parse("zh"));
        assert!(en_total > 100_000, "{en_total} tokens of English");
        assert!(
            table >= measured && table - measured < 0.25,
            "table {table} vs measured {measured:.3}"
        );
        // The safety factor covers even the worst chapter (a longer Chinese version).
        assert!(worst < table * TRANSLATION_SAFETY);
    }
}
