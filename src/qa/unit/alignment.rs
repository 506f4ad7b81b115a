//! `omission` (error) and `addition` (warning): a sentence of the source with no counterpart in
//! the translation, or a sentence of the translation with none in the source, found at its place
//! by aligning the sentences of each paragraph or list item with those of its counterpart.
//!
//! An addition is a warning: on published human translations in 13 languages every one of 28
//! labelled additions was a translator's note, an explanation or a sentence split in two
//! (`tests/fixtures/qa-multilingual/labels.jsonl`), none a fault; what a model adds is the
//! reviewer's to judge.
//!
//! - **Pairs**: the paragraphs and list items that [`structure::pairs`] matches one to one.
//! - **Sentences**: UAX #29 sentence boundaries (ICU4X's `SentenceSegmenter`, already built for
//!   word boundaries) of each block's plain text; a piece without a letter or digit joins the
//!   sentence before it. Chosen over booktr's own full-stop rules (`sentences::count`, which
//!   only counts, and [`crate::book::sentences`], which cuts raw Markdown where no code span or
//!   link target is cut and knows Latin and CJK stops only): UAX #29 keeps `e.g. the` and `3.5`
//!   whole, ends a sentence after a closing quote or bracket, and knows the full stops of CJK,
//!   Arabic, Devanagari and other scripts; a block's plain text has no Markdown left to guard.
//! - **Length**: a paragraph's non-whitespace characters against its source's, as a log
//!   ratio measured in spreads of the book's paragraphs ([`ProseNorm`]: the median ratio and
//!   1.4826 × the median absolute deviation of the log ratios of the book's paragraphs paired
//!   one to one, or of the unit's own when it has at least [`MIN_OWN_BLOCKS`]). A paragraph with
//!   fewer sentences than its source and at least [`Z_GAP`] spreads short of the book lost a
//!   sentence (`omission`); one with more sentences and as far above gained one (`addition`).
//!   The sentence named is the one whose removal leaves the paragraph within [`Z_EXPLAINED`]
//!   spreads of the book and the cheapest alignment of the rest.
//! - **Alignment**: the length-based dynamic programme of Gale & Church (1993, "A program for
//!   aligning sentences in bilingual corpora", *Computational Linguistics* 19(1)) over the
//!   moves 1–1, 2–1, 1–2, 2–2, 3–1 and 1–3, with their match priors (Table 5 of the paper; 3–1
//!   and 1–3 added at [`PRIOR_THREE`]), the length cost of each match against the book's ratio,
//!   plus [`ANCHOR_WEIGHT`] times the share of the words both paragraphs share (names, code
//!   terms, numbers: [`words`]) found in one of the matched groups only. No aligner crate fits:
//!   the maintained sentence aligners (hunalign, bleualign, vecalign, bertalign) are C++ or
//!   Python, need a dictionary, a machine translation or sentence embeddings, and align whole
//!   documents, where a paragraph pair needs a table of a few dozen cells.
//!
//! Length says where a sentence went only when it is long enough to move the paragraph's ratio
//! beyond what the book's translators vary by (about a quarter of a paragraph in a Latin-script
//! edition, a third to a half in Chinese, Japanese and Korean); a shorter lost or added sentence,
//! and a sentence replaced by another of the same length (a clause changed, a negation, a
//! reversed relation), leave no deterministic trace here: they are the reviewer's to find.
//!
//! Thresholds ([`Z_GAP`], [`Z_EXPLAINED`], [`MIN_BLOCK_CHARS`], [`MIN_GAP_CHARS`]) were set and
//! checked on the development half of the multilingual set of published human translations
//! (`tests/fixtures/qa-multilingual/`, `cargo bench --bench qa_labelled`): its 876,527 words
//! raise 13 `omission` errors (0.15 per 10,000 words), 10 of the 12 labelled true; the
//! held-out half's 22 errors are 12 of 18 labelled true.

use std::ops::Range;
use std::sync::OnceLock;

use icu_segmenter::SentenceSegmenter;
use icu_segmenter::options::SentenceBreakInvariantOptions;

use crate::qa::unit::structure::{self, Block, Kind};
use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, Severity};

/// Check name of a source sentence without counterpart.
pub const OMISSION: &str = "omission";
/// Check name of a target sentence without counterpart.
pub const ADDITION: &str = "addition";

/// Variance of a sentence's length in the translation, per source character, in source
/// characters (Gale & Church measured 6.8 on the Hansard; technical prose with code, names and
/// numbers varies more).
pub const S2: f64 = 10.0;
/// Fewest non-whitespace source characters of a paragraph whose sentences are aligned: the
/// length of a shorter one (a label, a string of a message catalog) says too little.
pub const MIN_BLOCK_CHARS: f64 = 60.0;
/// Fewest non-whitespace characters (in source characters, the target's divided by the
/// expected ratio) of a sentence reported as omitted or added: shorter ones ("Yes.", a
/// label) are merged and split too freely to tell.
pub const MIN_GAP_CHARS: f64 = 20.0;
/// Weight of the anchor mismatch of a match (0 to 1, the share of anchors on one side only).
pub const ANCHOR_WEIGHT: f64 = 3.0;
/// How far, in spreads of the book's paragraph length ratio ([`ProseNorm`]), a paragraph
/// with fewer (more) sentences than its source must fall short of (exceed) the book's ratio for
/// a sentence to be reported as omitted (added).
pub const Z_GAP: f64 = 2.5;
/// How close, in spreads, the paragraph must come to the book's ratio once the omitted (added)
/// sentence is taken out: the sentence must explain the difference.
pub const Z_EXPLAINED: f64 = 2.0;
/// Prior of a 3–1 or 1–3 match (not in Gale & Church's table; rarer than their 2–2).
pub const PRIOR_THREE: f64 = 0.005;
/// Most sentences on either side of a pair that are aligned (a longer block is left to the
/// block-level checks).
pub const MAX_SENTENCES: usize = 24;

/// Fewest non-whitespace source characters of a block pair whose ratio counts towards the
/// expected ratio: short blocks (labels, one-word items) have noisy ratios.
pub const MIN_RATIO_CHARS: usize = 40;

/// Spread of a paragraph's log length ratio around its book's when neither the unit nor the
/// book gives one (see [`ProseNorm`]).
pub const DEFAULT_SPREAD: f64 = 0.25;
/// Lowest spread used: a book whose paragraphs all keep one ratio would otherwise make any
/// small difference significant.
pub const MIN_SPREAD: f64 = 0.10;

/// The length a faithful paragraph keeps: the ratio of target to source non-whitespace
/// characters and the spread of its natural logarithm (1.4826 times its median absolute
/// deviation, a robust standard deviation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProseNorm {
    pub ratio: f64,
    pub spread: f64,
}

impl ProseNorm {
    /// The norm of a list of block ratios; `None` without any.
    fn of_ratios(ratios: &[f64]) -> Option<ProseNorm> {
        use crate::qa::book::length::{mad, median};
        if ratios.is_empty() {
            return None;
        }
        let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
        let m = median(&logs);
        Some(ProseNorm {
            ratio: m.exp(),
            spread: (1.4826 * mad(&logs, m)).max(MIN_SPREAD),
        })
    }

    /// The norm of a book given as `pairs` of texts (its chapters or a catalog's entries):
    /// from their paragraphs and list items paired one to one with at least
    /// [`MIN_RATIO_CHARS`] source characters, leaving out those the translation left as they
    /// are (an edition still partly in the source language); `None` without any. Set as
    /// [`QaContext::prose_norm`] before checking a whole book unit by unit, so that a unit of
    /// one paragraph is measured against its book.
    pub fn of_book<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> Option<ProseNorm> {
        use rayon::prelude::*;
        let pairs: Vec<(&str, &str)> = pairs.collect();
        let ratios: Vec<f64> = pairs
            .par_iter()
            .flat_map_iter(|(s, t)| block_ratios(&Doc::parse(s), &Doc::parse(t)))
            .collect();
        ProseNorm::of_ratios(&ratios)
    }

    /// The norm a unit is measured against: its own paragraphs' when it has at least
    /// [`MIN_OWN_BLOCKS`], else the book's ([`QaContext::prose_norm`]), else the middle of the
    /// language pair's prior range ([`crate::qa::book::length::prior`]) with
    /// [`DEFAULT_SPREAD`], else `None` (the unit is not aligned: measured by its own ratio, a
    /// block's lost sentence would not show in its length).
    pub fn for_unit(ctx: &QaContext, src: &Doc, tgt: &Doc) -> Option<ProseNorm> {
        let own = block_ratios(src, tgt);
        if own.len() >= MIN_OWN_BLOCKS {
            return ProseNorm::of_ratios(&own);
        }
        ctx.prose_norm.or_else(|| {
            crate::qa::book::length::prior(&ctx.source_lang, &ctx.target_lang).map(|(lo, hi)| {
                ProseNorm {
                    ratio: (lo + hi) / 2.0,
                    spread: DEFAULT_SPREAD,
                }
            })
        })
    }
}

/// Fewest paired paragraphs of a unit for its own norm to be used (fewer give no spread).
pub const MIN_OWN_BLOCKS: usize = 5;

fn block_ratios(src: &Doc, tgt: &Doc) -> Vec<f64> {
    structure::pairs(src, tgt)
        .into_iter()
        .filter(|&(i, _)| is_prose(&src.blocks[i]))
        .filter(|&(i, j)| src.blocks[i].text != tgt.blocks[j].text)
        .filter_map(|(i, j)| {
            let (a, b) = (chars(&src.blocks[i].text), chars(&tgt.blocks[j].text));
            (a >= MIN_RATIO_CHARS as f64 && b > 0.0).then_some(b / a)
        })
        .collect()
}

/// The process-wide sentence segmenter (its data is static).
fn segmenter() -> &'static icu_segmenter::SentenceSegmenterBorrowed<'static> {
    static SEGMENTER: OnceLock<icu_segmenter::SentenceSegmenterBorrowed<'static>> = OnceLock::new();
    SEGMENTER.get_or_init(|| SentenceSegmenter::new(SentenceBreakInvariantOptions::default()))
}

/// The sentences of `text` as byte ranges, trailing whitespace left out; a piece without a
/// letter or digit is joined to the sentence before it (see the module docs).
pub fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut last = 0;
    for b in segmenter().segment_str(text).skip(1) {
        let piece = &text[last..b];
        let end = last + piece.trim_end().len();
        if piece.chars().any(char::is_alphanumeric) || out.is_empty() {
            if piece.trim().is_empty() {
                last = b;
                continue;
            }
            let start = last + (piece.len() - piece.trim_start().len());
            out.push(start..end.max(start));
        } else if let Some(prev) = out.last_mut() {
            prev.end = end.max(prev.end);
        }
        last = b;
    }
    out
}

fn chars(text: &str) -> f64 {
    text.chars().filter(|c| !c.is_whitespace()).count() as f64
}

fn is_prose(b: &Block) -> bool {
    matches!(b.kind, Some(Kind::Paragraph | Kind::ListItem))
}

/// One sentence as the alignment sees it.
#[derive(Debug)]
struct Sent {
    /// Non-whitespace characters (target sentences: divided by the expected ratio, so both
    /// sides count in source characters).
    len: f64,
    anchors: Vec<u64>,
}

/// The words of `text` a translation may keep as written, hashed: runs of ASCII letters,
/// digits, `_` and `-` with at least three characters and a letter, lower-cased (names, code
/// terms, numbers with units, cognates written alike).
fn words(text: &str) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    let mut out: Vec<u64> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 3 && w.chars().any(|c| c.is_ascii_alphabetic()))
        .map(|w| {
            let mut h = rustc_hash::FxHasher::default();
            w.to_ascii_lowercase().hash(&mut h);
            h.finish()
        })
        .chain(crate::qa::view::outline::anchors(text))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The sentences of a source block `a` (ranges `sa`) and its counterpart `b` (ranges `sb`) as
/// the alignment sees them: target lengths divided by `ratio`, and as anchors the
/// [`words`] of each sentence that both blocks have (a word only one side has says nothing
/// about where a sentence went).
fn sents(
    a: &str,
    sa: &[Range<usize>],
    b: &str,
    sb: &[Range<usize>],
    ratio: f64,
) -> (Vec<Sent>, Vec<Sent>) {
    let (wa, wb) = (words(a), words(b));
    let shared: Vec<u64> = wa
        .iter()
        .copied()
        .filter(|h| wb.binary_search(h).is_ok())
        .collect();
    let one = |text: &str, r: &Range<usize>, scale: f64| Sent {
        len: chars(&text[r.clone()]) / scale,
        anchors: words(&text[r.clone()])
            .into_iter()
            .filter(|h| shared.binary_search(h).is_ok())
            .collect(),
    };
    (
        sa.iter().map(|r| one(a, r, 1.0)).collect(),
        sb.iter().map(|r| one(b, r, ratio)).collect(),
    )
}

/// The moves of the alignment: (source sentences, target sentences, prior probability).
const MOVES: &[(usize, usize, f64)] = &[
    (1, 1, 0.89),
    (2, 1, 0.089 / 2.0),
    (1, 2, 0.089 / 2.0),
    (2, 2, 0.011),
    (3, 1, PRIOR_THREE),
    (1, 3, PRIOR_THREE),
];

/// `-ln` of the two-sided tail probability of a standard normal at `z`, from the complementary
/// error function (the approximation of Abramowitz & Stegun 7.1.26, error below 1.5e-7, which
/// a length cost does not need better: std has no `erfc`).
fn tail_cost(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    -(erfc.max(1e-300)).ln()
}

/// The cost of matching source sentences `a` with target sentences `b` (one side may be empty).
fn match_cost(a: &[Sent], b: &[Sent]) -> f64 {
    let x: f64 = a.iter().map(|s| s.len).sum();
    let y: f64 = b.iter().map(|s| s.len).sum();
    let mean = ((x + y) / 2.0).max(1.0);
    let len = tail_cost((y - x) / (S2 * mean).sqrt());
    if a.is_empty() || b.is_empty() {
        return len;
    }
    let union = |g: &[Sent]| {
        let mut v: Vec<u64> = g.iter().flat_map(|s| s.anchors.iter().copied()).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (ua, ub) = (union(a), union(b));
    let shared = ua.iter().filter(|h| ub.binary_search(h).is_ok()).count();
    let all = ua.len() + ub.len();
    let mismatch = if all == 0 {
        0.0
    } else {
        (all - 2 * shared) as f64 / all as f64
    };
    len + ANCHOR_WEIGHT * mismatch
}

/// The cost of the best alignment of `a` with `b` in which every sentence has a counterpart
/// (the moves of [`MOVES`]); `None` when there is none.
fn align(a: &[Sent], b: &[Sent]) -> Option<f64> {
    let (n, m) = (a.len(), b.len());
    let mut cost = vec![vec![f64::INFINITY; m + 1]; n + 1];
    cost[0][0] = 0.0;
    for i in 0..=n {
        for j in 0..=m {
            for &(di, dj, prior) in MOVES {
                if di > i || dj > j || cost[i - di][j - dj].is_infinite() {
                    continue;
                }
                let c =
                    cost[i - di][j - dj] - prior.ln() + match_cost(&a[i - di..i], &b[j - dj..j]);
                if c < cost[i][j] {
                    cost[i][j] = c;
                }
            }
        }
    }
    cost[n][m].is_finite().then_some(cost[n][m])
}

/// The index of the sentence of `long` whose removal leaves the cheapest alignment without
/// gaps with `short` (`long` the side with more sentences), with the share of `long`'s length
/// it carries; `None` when no removal leaves an alignment.
fn dropped(long: &[Sent], short: &[Sent], long_is_source: bool) -> Option<usize> {
    let mut best: Option<(f64, usize)> = None;
    for k in 0..long.len() {
        let rest: Vec<Sent> = long
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != k)
            .map(|(_, s)| Sent {
                len: s.len,
                anchors: s.anchors.clone(),
            })
            .collect();
        let aligned = if long_is_source {
            align(&rest, short)
        } else {
            align(short, &rest)
        };
        if let Some(c) = aligned
            && best.is_none_or(|(b, _)| c < b)
        {
            best = Some((c, k));
        }
    }
    best.map(|(_, k)| k)
}

/// Runs the check (see the module docs).
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, _source: &str, target: &str) -> Vec<Finding> {
    let Some(norm) = ProseNorm::for_unit(ctx, src, tgt).filter(|n| n.ratio > 0.0) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, j) in structure::pairs(src, tgt) {
        let (a, b) = (&src.blocks[i], &tgt.blocks[j]);
        if !is_prose(a) || !is_prose(b) {
            continue;
        }
        let (sa, sb) = (sentences(&a.text), sentences(&b.text));
        if sa.len() == sb.len()
            || sa.len().max(sb.len()) > MAX_SENTENCES
            || sa.is_empty()
            || sb.is_empty()
        {
            continue;
        }
        let (xa, xb) = sents(&a.text, &sa, &b.text, &sb, norm.ratio);
        if chars(&a.text) < MIN_BLOCK_CHARS {
            continue;
        }
        let (ta, tb): (f64, f64) = (
            xa.iter().map(|s| s.len).sum(),
            xb.iter().map(|s| s.len).sum(),
        );
        if ta <= 0.0 || tb <= 0.0 {
            continue;
        }
        let z = (tb / ta).ln() / norm.spread;
        let explained = |rest_a: f64, rest_b: f64| {
            rest_a > 0.0
                && rest_b > 0.0
                && ((rest_b / rest_a).ln() / norm.spread).abs() <= Z_EXPLAINED
        };
        if sb.len() < sa.len() && z <= -Z_GAP {
            let Some(k) = dropped(&xa, &xb, true) else {
                continue;
            };
            if xa[k].len < MIN_GAP_CHARS || !explained(ta - xa[k].len, tb) {
                continue;
            }
            let s = &a.text[sa[k].clone()];
            let f = Finding::new(
                OMISSION,
                Severity::Error,
                format!(
                    "the source's {} has {} sentences and its translation {}, {:.0} % shorter than the book's paragraphs: a sentence left out, most likely sentence {} (\"{}\"). Translate it",
                    structure::name(&src.blocks, i),
                    sa.len(),
                    sb.len(),
                    100.0 * (1.0 - tb / ta),
                    k + 1,
                    crate::util::excerpt(s, 80)
                ),
                s,
                &b.text,
            );
            out.push(with_span(f, block_span(target, b)));
        } else if sb.len() > sa.len() && z >= Z_GAP {
            let Some(k) = dropped(&xb, &xa, false) else {
                continue;
            };
            if xb[k].len < MIN_GAP_CHARS || !explained(ta, tb - xb[k].len) {
                continue;
            }
            let s = &b.text[sb[k].clone()];
            let f = Finding::new(
                ADDITION,
                Severity::Warning,
                format!(
                    "the translation's {} has {} sentences where the source has {}, {:.0} % longer than the book's paragraphs: a sentence added, most likely sentence {} (\"{}\"). Remove it or translate what the source says",
                    structure::name(&tgt.blocks, j),
                    sb.len(),
                    sa.len(),
                    100.0 * (tb / ta - 1.0),
                    k + 1,
                    crate::util::excerpt(s, 80)
                ),
                &a.text,
                s,
            );
            out.push(with_span(f, sentence_span(target, b, s)));
        }
    }
    out
}

fn with_span(f: Finding, span: Option<(usize, usize)>) -> Finding {
    match span {
        Some((s, e)) => f.with_span(s, e),
        None => f,
    }
}

/// The block's place in `target` as a char span, when its byte range lies in `target`.
fn block_span(target: &str, b: &Block) -> Option<(usize, usize)> {
    let r = b.range.clone();
    (r.end <= target.len() && target.is_char_boundary(r.start) && target.is_char_boundary(r.end))
        .then(|| {
            let s = target[..r.start].chars().count();
            (s, s + target[r].chars().count())
        })
}

/// The place in `target` of sentence `s` of block `b` (its first occurrence in the block's
/// bytes), else the block's.
fn sentence_span(target: &str, b: &Block, s: &str) -> Option<(usize, usize)> {
    let (bs, _) = block_span(target, b)?;
    let raw = &target[b.range.clone()];
    match raw.find(s) {
        Some(k) => {
            let start = bs + raw[..k].chars().count();
            Some((start, start + s.chars().count()))
        }
        None => block_span(target, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::termbase::Termbase;

    /// The check with the book norm of a German or Chinese translation (ratio 1.15 or 0.33 of
    /// the source's characters, spread 0.15).
    fn run(lang: &str, src: &str, tgt: &str) -> Vec<Finding> {
        let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse(lang), &Termbase::default());
        let ratio = if lang == "zh" { 0.33 } else { 1.15 };
        ctx.prose_norm = Some(ProseNorm {
            ratio,
            spread: 0.15,
        });
        check(&ctx, &Doc::parse(src), &Doc::parse(tgt), src, tgt)
    }

    #[test]
    fn sentences_follow_uax29_in_any_script() {
        let t = "It works, e.g. in tests. Version 3.5 is out! Really?";
        let got: Vec<&str> = sentences(t).into_iter().map(|r| &t[r]).collect();
        assert_eq!(
            got,
            ["It works, e.g. in tests.", "Version 3.5 is out!", "Really?"]
        );
        let t = "第一句。第二句！第三句？";
        assert_eq!(sentences(t).len(), 3);
        let t = "Это первое. Это второе.";
        assert_eq!(sentences(t).len(), 2);
    }

    const SRC: &str = "Rust has no garbage collector. Memory is freed when its owner goes out of scope. This rule is checked at compile time, so a program that breaks it does not build.\n\nThe borrow checker enforces the rule. It reads every function on its own.\n\nA value has one owner at a time. Moving it hands the ownership over.\n";

    #[test]
    fn a_deleted_sentence_is_an_omission_at_its_place() {
        let tgt = "Rust hat keinen Garbage Collector. Speicher wird freigegeben, wenn sein Besitzer den Gültigkeitsbereich verlässt.\n\nDer Borrow-Checker setzt die Regel durch. Er liest jede Funktion für sich.\n\nEin Wert hat zu jeder Zeit einen Besitzer. Wer ihn verschiebt, übergibt den Besitz.\n";
        let f = run("de", SRC, tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            (OMISSION, Severity::Error)
        );
        assert!(
            f[0].message.starts_with("the source's paragraph 1 has 3 sentences and its translation 2, 34 % shorter than the book's paragraphs: a sentence left out, most likely sentence "),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn an_added_sentence_is_an_addition_at_its_place() {
        let tgt = "Rust hat keinen Garbage Collector. Speicher wird freigegeben, wenn sein Besitzer den Gültigkeitsbereich verlässt. Diese Regel wird beim Kompilieren geprüft, sodass ein Programm, das sie bricht, nicht gebaut wird.\n\nDer Borrow-Checker setzt die Regel durch. Viele Einsteiger empfinden ihn anfangs als streng und unerbittlich. Er liest jede Funktion für sich.\n\nEin Wert hat zu jeder Zeit einen Besitzer. Wer ihn verschiebt, übergibt den Besitz.\n";
        let f = run("de", SRC, tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            (ADDITION, Severity::Warning)
        );
        assert!(
            f[0].message.contains("Viele Einsteiger"),
            "{}",
            f[0].message
        );
        let (s, e) = f[0].span.unwrap();
        let added: String = tgt.chars().skip(s).take(e - s).collect();
        assert!(
            added.starts_with("Viele Einsteiger") && added.ends_with("unerbittlich."),
            "{added}"
        );
    }

    #[test]
    fn merged_and_split_sentences_are_not_gaps() {
        // Two source sentences merged into one, one split into two: every word is there.
        let tgt = "Rust hat keinen Garbage Collector, und Speicher wird freigegeben, wenn sein Besitzer den Gültigkeitsbereich verlässt. Diese Regel wird beim Kompilieren geprüft. Ein Programm, das sie bricht, wird daher nicht gebaut.\n\nDer Borrow-Checker setzt die Regel durch. Er liest jede Funktion für sich.\n\nEin Wert hat zu jeder Zeit einen Besitzer. Wer ihn verschiebt, übergibt den Besitz.\n";
        assert_eq!(run("de", SRC, tgt), vec![]);
        // Chinese joins sentences with commas.
        let zh = "Rust 没有垃圾回收器，内存在其所有者离开作用域时释放。这条规则在编译时检查，违反它的程序无法构建。\n\n借用检查器执行这条规则，它逐个读取每个函数。\n\n一个值同一时刻只有一个所有者。移动它就移交了所有权。\n";
        assert_eq!(run("zh", SRC, zh), vec![]);
    }
}
