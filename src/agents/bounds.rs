//! Output bounds: the `max_tokens` every request carries, derived from what it asks for and
//! learned from the model's own replies; and the runaway guard's hard ceiling.
//!
//! Without a bound a small model that starts repeating itself writes until the server's
//! context ends it (observed: 7,291 and 6,545 tokens for units of a few hundred, 16 of a run's
//! 20 minutes; billed on a hosted API). The stream reader stops a reply that repeats itself
//! ([`crate::llm::runaway`]); the server stops one at `max_tokens`, and that reply is continued
//! or split, never discarded (`campaign::ops::jobs`). A bound is therefore a checkpoint, not a
//! verdict: too low costs a continuation request, never the tokens already paid.
//!
//! **Two units.** `max_tokens` counts in the model's own tokenizer: a Llama- or Mistral-family
//! tokenizer spends about three times `o200k_base`'s tokens on Chinese (and many spend more
//! on Thai, Hindi or Amharic). Every figure computed here from text is `o200k_base`; what is sent
//! as `max_tokens` is converted with what the campaign has learned ([`Figure`]), and the
//! runaway ceiling ([`ceiling`]) stays in `o200k_base`, counted on this machine.
//!
//! - **Translations and revisions**: [`translation`], a multiple of the unit's source tokens:
//!   `max(TRANSLATION_FLOOR, ceil(source_tokens · ratio(source → target) · TRANSLATION_SAFETY))`
//!   until the campaign has learned its model ([`learned_translation`]: `max(TRANSLATION_FLOOR,
//!   ceil(source_tokens · q · LEARN_HEADROOM))`, where `q` is the [`LEARN_QUANTILE`] of the
//!   server-reported completion tokens per source token of the replies accepted so far).
//!   The table ratio is the target's size relative to the source in `o200k_base` tokens
//!   ([`relative_size`] of the target over that of the source). A revision is a full new
//!   translation of the same source, so it gets the same bound.
//! - **Structured answers** grow with what they are asked about: [`glossary`] (per candidate
//!   term), [`proofreading`] (per unit reviewed), [`decision`] (per candidate unit), and fixed
//!   bounds for a reconciliation ([`RECONCILE_MAX_TOKENS`]), a judgment ([`JUDGE_MAX_TOKENS`])
//!   and the brief ([`crate::agents::brief::BRIEF_TOKENS`]).
//!   Once learned, each is scaled by the model's tokens per `o200k_base` token of its own
//!   replies ([`learned_structured`]).
//! - The campaign's `max_tokens` caps every bound ([`capped`]), and so does its
//!   `max_output_tokens` (the model's output limit).
//! - **The ceiling** ([`ceiling`], [`structured_ceiling`]): the runaway guard's hard limit on a
//!   reply's visible text, in `o200k_base` tokens, far above anything a translation needs
//!   (see [`CEILING_FACTOR`] for the measurements).
//!
//! All figures are tokens. Pure functions, no I/O.

use crate::lang::Lang;

/// Least `max_tokens` of a translation, in the model's tokens: room for a heading or a one-line unit plus
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

/// Quantile of the learned ratios that a bound is built on: 0.95, so that one reply in twenty
/// of the campaign's own (before [`LEARN_HEADROOM`]) would reach it.
pub const LEARN_QUANTILE: f64 = 0.95;

/// Headroom over the learned quantile for a translation's bound: 1.5. With the quantile it
/// puts the bound above 19 of 20 replies seen so far by half again; a reply beyond it costs a
/// continuation request, not its tokens.
pub const LEARN_HEADROOM: f64 = 1.5;

/// Accepted replies of an agent needed before its learned figure replaces the table: 3.
/// Before that, a reply cut at the table's bound is continued like any other.
pub const MIN_SAMPLES: usize = 3;

/// Least basis (source or reply tokens, `o200k_base`) of a sample: 32. A heading or a one-line
/// unit measures the reply's fixed overhead (a newline, a code fence) more than the model's
/// tokenizer, and would inflate the quantile.
pub const MIN_BASIS_TOKENS: u64 = 32;

/// One accepted reply, for learning: the server-reported `completion_tokens` against its
/// basis in `o200k_base` tokens (a translation's source; a structured answer's own text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub basis_tokens: u64,
    pub completion_tokens: u64,
}

/// What a campaign has learned of its model for one agent: server completion tokens per
/// basis token (`o200k_base`), at [`LEARN_QUANTILE`] (`per_token`) and at the median, over
/// `samples` accepted replies. Journaled when it changes, so a resume uses the same figures.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Figure {
    pub per_token: f64,
    pub median: f64,
    pub samples: u32,
}

/// The quantile `q` (0..=1) of sorted `values`, nearest-rank (the smallest value with at
/// least `q · n` values at or below it).
fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
    sorted[rank - 1]
}

/// The figure of `samples` (those with at least [`MIN_BASIS_TOKENS`] of basis), or `None` with
/// fewer than [`MIN_SAMPLES`].
pub fn learn(samples: &[Sample]) -> Option<Figure> {
    let mut ratios: Vec<f64> = samples
        .iter()
        .filter(|s| s.basis_tokens >= MIN_BASIS_TOKENS)
        .map(|s| s.completion_tokens as f64 / s.basis_tokens as f64)
        .collect();
    if ratios.len() < MIN_SAMPLES {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    Some(Figure {
        per_token: nearest_rank(&ratios, LEARN_QUANTILE),
        median: nearest_rank(&ratios, 0.5),
        samples: ratios.len() as u32,
    })
}

/// Whether `new` differs enough from the journaled `old` to be journaled: its quantile moved by
/// more than 5 %, or there was none.
pub fn changed(old: Option<&Figure>, new: &Figure) -> bool {
    old.is_none_or(|o| (new.per_token - o.per_token).abs() > 0.05 * o.per_token)
}

/// `max_tokens` of a translation or revision of `source_tokens` tokens: the [`learned`]
/// figure's bound when there is one, else the table's ([`translation`]).
pub fn learned_translation(
    source_tokens: usize,
    source: &Lang,
    target: &Lang,
    learned: Option<&Figure>,
) -> u32 {
    match learned {
        Some(f) => {
            let expected = source_tokens as f64 * f.per_token * LEARN_HEADROOM;
            ((expected - 1e-9).ceil().max(0.0) as u64)
                .clamp(TRANSLATION_FLOOR as u64, u32::MAX as u64) as u32
        }
        None => translation(source_tokens, source, target),
    }
}

/// A structured answer's `bound` (computed in `o200k_base` terms from what it asks for)
/// in the model's tokens: times the learned tokens per `o200k_base` token of the agent's own
/// replies, when that is above 1 (a bound is never lowered below its formula).
pub fn learned_structured(bound: u32, learned: Option<&Figure>) -> u32 {
    match learned {
        Some(f) if f.per_token > 1.0 => {
            ((bound as f64 * f.per_token).ceil() as u64).min(u32::MAX as u64) as u32
        }
        _ => bound,
    }
}

/// How far above the expected size of a translation its reply may go before the runaway guard
/// stops it without any repetition: 8 times the expected target size
/// (`source_tokens · ratio(source → target)`, `o200k_base`).
///
/// Measured (test `ceiling_is_far_above_real_replies`): on the shared corpus, the human zh
/// edition paired with the en edition unit by unit ([`crate::book::align`], units of 1,500
/// characters, 655 pairs of 32 tokens or more; the zh chapter 8 is a longer edition and left
/// out) never exceeds 1.36 times its expected size; the real 1.5B model's recorded replies of
/// corpus units (`tests/fixtures/real-llm/corpus-ch01-02.jsonl`) reach 1.54 times. 8 is five
/// times the worst of those; the test fails if a measurement comes within a third of it.
/// Below [`CEILING_FLOOR`] nothing is stopped for length.
pub const CEILING_FACTOR: f64 = 8.0;

/// Least ceiling, in `o200k_base` tokens: 4,096 (a heading or a short unit with a preamble and
/// a reasoning block some models write first stays far below it).
pub const CEILING_FLOOR: u32 = 4096;

/// The runaway ceiling of a translation of `source_tokens` tokens, in `o200k_base` tokens of
/// visible reply: `max(CEILING_FLOOR, ceil(source_tokens · ratio(source → target) ·
/// CEILING_FACTOR))`. Independent of the model's tokenizer (counted on this machine).
pub fn ceiling(source_tokens: usize, source: &Lang, target: &Lang) -> u32 {
    let c = source_tokens as f64 * ratio(source, target) * CEILING_FACTOR;
    (c.ceil() as u64).clamp(CEILING_FLOOR as u64, u32::MAX as u64) as u32
}

/// The runaway ceiling of a structured answer whose `o200k_base` bound is `bound`:
/// `max(CEILING_FLOOR, bound · CEILING_FACTOR / TRANSLATION_SAFETY)`, the same margin over
/// the expected size as a translation's.
pub fn structured_ceiling(bound: u32) -> u32 {
    let c = bound as f64 * CEILING_FACTOR / TRANSLATION_SAFETY;
    (c.ceil() as u64).clamp(CEILING_FLOOR as u64, u32::MAX as u64) as u32
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

    #[test]
    fn learned_bounds_follow_the_models_tokens() {
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        // A model that spends 3 times o200k_base's tokens on Chinese: ~3.4 per source token.
        let samples: Vec<Sample> = (0..20)
            .map(|i| Sample {
                basis_tokens: 200 + i * 10,
                completion_tokens: ((200 + i * 10) as f64 * (3.2 + 0.02 * i as f64)) as u64,
            })
            .collect();
        let f = learn(&samples).expect("learned");
        assert_eq!(f.samples, 20);
        assert!(f.per_token > 3.5 && f.per_token < 3.6, "{f:?}");
        assert!(f.median > 3.3 && f.median < 3.45, "{f:?}");
        // 1000 source tokens: the table says 2400, the model needs ~3600.
        assert_eq!(translation(1000, &en, &zh), 2400);
        let b = learned_translation(1000, &en, &zh, Some(&f));
        assert!(b > 5000 && b < 5500, "{b}");
        assert_eq!(learned_translation(1000, &en, &zh, None), 2400);
        assert_eq!(
            learned_translation(5, &en, &zh, Some(&f)),
            TRANSLATION_FLOOR
        );
        // Too few samples, or samples too short to say anything: the table stays.
        assert_eq!(learn(&samples[..2]), None);
        let short = vec![
            Sample {
                basis_tokens: 3,
                completion_tokens: 40
            };
            10
        ];
        assert_eq!(learn(&short), None);
        // Structured answers: scaled by the tokenizer factor, never lowered.
        let tok = Figure {
            per_token: 2.5,
            median: 2.0,
            samples: 5,
        };
        assert_eq!(learned_structured(1000, Some(&tok)), 2500);
        let lean = Figure {
            per_token: 0.8,
            ..tok
        };
        assert_eq!(learned_structured(1000, Some(&lean)), 1000);
        assert!(changed(None, &f));
        assert!(!changed(Some(&f), &f));
    }

    #[test]
    fn the_ceiling_is_in_o200k_base_and_far_above_the_bound() {
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        assert_eq!(ceiling(1000, &en, &zh), 9600);
        assert_eq!(ceiling(10, &en, &zh), CEILING_FLOOR);
        assert!(ceiling(1000, &en, &zh) >= 4 * translation(1000, &en, &zh));
        assert_eq!(structured_ceiling(1056), 4224);
        assert_eq!(structured_ceiling(100), CEILING_FLOOR);
    }

    /// [`CEILING_FACTOR`] against real text: the human zh edition of the shared corpus paired
    /// with its en edition unit by unit, and the real 1.5B model's recorded answers. Skipped with
    /// a reason when the corpus is absent.
    #[test]
    fn ceiling_is_far_above_real_replies() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/ai-agent-book");
        if !root.join("zh").is_dir() {
            eprintln!(
                "skipped: the corpus is not at {} (the ceiling is measured on it)",
                root.display()
            );
            return;
        }
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        let expected = ratio(&en, &zh);
        let (mut worst, mut worst_at, mut pairs) = (0f64, String::new(), 0usize);
        let mut names: Vec<_> = std::fs::read_dir(root.join("zh"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for name in names {
            let (Ok(z), Ok(e)) = (
                std::fs::read_to_string(root.join("zh").join(&name)),
                std::fs::read_to_string(root.join("en").join(&name)),
            ) else {
                continue;
            };
            let key = name.to_string_lossy().replace(".md", "");
            // chapter08's zh edition is a longer edition of the chapter, not a translation.
            if key == "chapter08" {
                continue;
            }
            let p = crate::book::align::pair(&key, &e, &z, 1_500);
            for (u, r) in &p.pairs {
                let s = crate::tokens::count(u.text(&e)) as f64;
                if s < MIN_BASIS_TOKENS as f64 {
                    continue;
                }
                pairs += 1;
                let t = crate::tokens::count(&z[r.clone()]) as f64;
                let ratio_of_expected = t / (s * expected);
                if ratio_of_expected > worst {
                    worst = ratio_of_expected;
                    worst_at = u.id.clone();
                }
            }
        }
        eprintln!(
            "human zh edition, {pairs} unit pairs: the longest zh unit is {worst:.2} times its expected size ({worst_at}); ceiling {CEILING_FACTOR}"
        );
        assert!(pairs > 500, "{pairs} pairs");
        // The real 1.5B model's recorded first translations of corpus units (its answers only;
        // the sources are found by unit id and sha256).
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/real-llm/corpus-ch01-02.jsonl");
        let (mut model_worst, mut answers) = (0f64, 0usize);
        for line in std::fs::read_to_string(&fixture).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let (chapter, unit) = (v["chapter"].as_str().unwrap(), v["unit"].as_str().unwrap());
            let max = v["settings"]["max_unit_chars"].as_u64().unwrap() as usize;
            let text =
                std::fs::read_to_string(root.join("en").join(format!("{chapter}.md"))).unwrap();
            let Some(u) = crate::book::segment::segment(chapter, &text, max)
                .into_iter()
                .find(|u| u.id == unit)
            else {
                continue;
            };
            let s = crate::tokens::count(u.text(&text)) as f64;
            if s < MIN_BASIS_TOKENS as f64 {
                continue;
            }
            answers += 1;
            let a = crate::tokens::count(v["answer"].as_str().unwrap()) as f64;
            model_worst = model_worst.max(a / (s * expected));
        }
        eprintln!(
            "real 1.5B answers, {answers} units: the longest is {model_worst:.2} times its expected size"
        );
        assert!(answers >= 8, "{answers} recorded answers found");
        worst = worst.max(model_worst);
        assert!(
            CEILING_FACTOR >= 3.0 * worst,
            "the ceiling ({CEILING_FACTOR}) must stay three times above the worst real unit ({worst:.2})"
        );
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
