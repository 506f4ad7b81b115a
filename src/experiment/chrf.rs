//! chrF, the character n-gram F-score of Popović ("chrF: character n-gram F-score for automatic
//! MT evaluation", WMT 2015), exactly as sacreBLEU 2.x computes it with its defaults
//! (`CHRF()`: `char_order = 6`, `word_order = 0`, `beta = 2`, whitespace removed, no
//! lowercasing, effective-order averaging):
//!
//! 1. every whitespace character is removed from both texts (Python's `''.join(s.split())`,
//!    whose whitespace is Unicode White_Space plus U+001C–U+001F);
//! 2. for n = 1..=6, the character n-grams (over Unicode scalar values) of each text are
//!    counted; matches are Σ min(hypothesis count, reference count). An order where the
//!    reference has no n-gram counts no hypothesis n-grams either;
//! 3. statistics are summed over segments (a corpus score), then for each order with both
//!    counts non-zero, precision and recall are averaged over those orders, and
//!    `chrF = 100 · (1 + β²) · P · R / (β² · P + R)` (0 when P + R = 0).
//!
//! **chrF++** ([`PlusStats`]; Popović, "chrF++: words helping character n-grams", WMT 2017) is
//! sacreBLEU's `CHRF(word_order=2)`: the same six character orders plus word unigrams and
//! bigrams, all eight orders averaged together in step 3. Words are sacreBLEU's
//! `_remove_punctuation` tokens: the text split on whitespace, and a token longer than one
//! character with an ASCII punctuation character (Python's `string.punctuation`) at its end
//! split into the rest and that character, else one at its start split into that character and
//! the rest (one split only: `(hi)` gives `(hi` and `)`); word n-grams are those tokens joined
//! by one space, counted like character n-grams (whitespace is not removed from them).
//!
//! Hand-rolled because no Rust crate reproduces sacreBLEU's chrF++: crates.io's `chrf` 1.1
//! implements chrF over character n-grams without sacreBLEU's word split, and `pictor-eval` 0.1
//! scores in `f32` on 0–1 with its own empty-input rule (1.0 for two empty texts, where
//! sacreBLEU gives 0); neither is checked against sacreBLEU. This one is checked against it on
//! stored vectors (`tests/fixtures/chrf_vectors.json`, made by `tests/fixtures/chrf_vectors.py`)
//! to 4 decimals, and on the quality benchmark's corpus pairs by a live sacreBLEU run
//! (`tests/it/quality.rs`).

use std::collections::HashMap;

use serde::Serialize;

/// Largest character n-gram order (sacreBLEU's default `char_order`).
pub const CHAR_ORDER: usize = 6;
/// β: recall weighs β² = 4 times as much as precision (sacreBLEU's default).
pub const BETA: f64 = 2.0;

/// Match statistics of one or more segments: for each order n = 1..=6,
/// `[hypothesis n-grams, reference n-grams, matching n-grams]` (counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Stats(pub [[u64; 3]; CHAR_ORDER]);

/// sacreBLEU's whitespace: what Python's `str.split()` splits on.
fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn ngram_counts(chars: &[char], n: usize) -> HashMap<&[char], u64> {
    let mut m: HashMap<&[char], u64> = HashMap::new();
    if chars.len() >= n {
        for w in chars.windows(n) {
            *m.entry(w).or_insert(0) += 1;
        }
    }
    m
}

impl Stats {
    /// The statistics of one segment: hypothesis `hyp` against reference `reference`.
    pub fn of(hyp: &str, reference: &str) -> Stats {
        let h: Vec<char> = hyp.chars().filter(|c| !is_python_whitespace(*c)).collect();
        let r: Vec<char> = reference
            .chars()
            .filter(|c| !is_python_whitespace(*c))
            .collect();
        let mut s = Stats::default();
        for n in 1..=CHAR_ORDER {
            let hc = ngram_counts(&h, n);
            let rc = ngram_counts(&r, n);
            let mut hyp_count = 0u64;
            let mut matches = 0u64;
            for (g, c) in &hc {
                hyp_count += c;
                if let Some(rcount) = rc.get(g) {
                    matches += (*c).min(*rcount);
                }
            }
            let ref_count: u64 = rc.values().sum();
            s.0[n - 1] = [
                if rc.is_empty() { 0 } else { hyp_count },
                ref_count,
                matches,
            ];
        }
        s
    }

    /// Adds another segment's statistics (corpus-level chrF sums them).
    pub fn add(&mut self, o: &Stats) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            for k in 0..3 {
                a[k] += b[k];
            }
        }
    }

    /// The chrF score of these statistics, 0–100.
    pub fn score(&self) -> f64 {
        f_score(self.0.iter().copied())
    }
}

/// Word n-gram orders of chrF++ (sacreBLEU's `CHRF(word_order=2)`).
pub const WORD_ORDER: usize = 2;

/// sacreBLEU's chrF++ words: see the module doc (`CHRF._remove_punctuation`).
fn plus_words(text: &str) -> Vec<&str> {
    let punct = |c: char| c.is_ascii_punctuation();
    let mut out = Vec::new();
    for w in text.split(is_python_whitespace).filter(|w| !w.is_empty()) {
        let mut chars = w.chars();
        let first = chars.next().expect("non-empty");
        let Some(last) = chars.next_back() else {
            out.push(w);
            continue;
        };
        if punct(last) {
            let cut = w.len() - last.len_utf8();
            out.extend([&w[..cut], &w[cut..]]);
        } else if punct(first) {
            let cut = first.len_utf8();
            out.extend([&w[..cut], &w[cut..]]);
        } else {
            out.push(w);
        }
    }
    out
}

fn match_stats<K: std::hash::Hash + Eq>(h: &HashMap<K, u64>, r: &HashMap<K, u64>) -> [u64; 3] {
    let mut hyp_count = 0u64;
    let mut matches = 0u64;
    for (g, c) in h {
        hyp_count += c;
        if let Some(rc) = r.get(g) {
            matches += (*c).min(*rc);
        }
    }
    let ref_count: u64 = r.values().sum();
    [if r.is_empty() { 0 } else { hyp_count }, ref_count, matches]
}

fn word_ngrams<'a>(words: &[&'a str], n: usize) -> HashMap<Vec<&'a str>, u64> {
    let mut m = HashMap::new();
    if words.len() >= n {
        for w in words.windows(n) {
            *m.entry(w.to_vec()).or_insert(0) += 1;
        }
    }
    m
}

/// chrF++ match statistics of one or more segments: the six character orders ([`Stats`]) and
/// word orders 1..=2, each `[hypothesis n-grams, reference n-grams, matching n-grams]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PlusStats {
    pub chars: Stats,
    pub words: [[u64; 3]; WORD_ORDER],
}

impl PlusStats {
    /// The statistics of one segment: hypothesis `hyp` against reference `reference`.
    pub fn of(hyp: &str, reference: &str) -> PlusStats {
        let (hw, rw) = (plus_words(hyp), plus_words(reference));
        let mut words = [[0u64; 3]; WORD_ORDER];
        for (n, slot) in words.iter_mut().enumerate() {
            *slot = match_stats(&word_ngrams(&hw, n + 1), &word_ngrams(&rw, n + 1));
        }
        PlusStats {
            chars: Stats::of(hyp, reference),
            words,
        }
    }

    /// Adds another segment's statistics (corpus-level chrF++ sums them).
    pub fn add(&mut self, o: &PlusStats) {
        self.chars.add(&o.chars);
        for (a, b) in self.words.iter_mut().zip(o.words.iter()) {
            for k in 0..3 {
                a[k] += b[k];
            }
        }
    }

    /// The chrF++ score of these statistics, 0–100 (step 3 of the module doc over all eight
    /// orders).
    pub fn score(&self) -> f64 {
        f_score(self.chars.0.iter().chain(self.words.iter()).copied())
    }
}

/// chrF++ of one hypothesis against one reference (sacreBLEU's
/// `CHRF(word_order=2).sentence_score`), 0–100.
pub fn sentence_plus(hyp: &str, reference: &str) -> f64 {
    PlusStats::of(hyp, reference).score()
}

/// Corpus chrF++ of aligned (hypothesis, reference) segments (sacreBLEU's
/// `CHRF(word_order=2).corpus_score`), 0–100.
pub fn corpus_plus<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> f64 {
    let mut total = PlusStats::default();
    for (h, r) in pairs {
        total.add(&PlusStats::of(h, r));
    }
    total.score()
}

/// sacreBLEU's `_compute_f_score` without eps smoothing: precision and recall averaged over the
/// orders where both counts are non-zero, then the F-β score, 0–100.
fn f_score(orders: impl Iterator<Item = [u64; 3]>) -> f64 {
    let factor = BETA * BETA;
    let (mut p, mut r, mut n) = (0.0, 0.0, 0usize);
    for [n_hyp, n_ref, n_match] in orders {
        if n_hyp > 0 && n_ref > 0 {
            p += n_match as f64 / n_hyp as f64;
            r += n_match as f64 / n_ref as f64;
            n += 1;
        }
    }
    if n == 0 {
        return 0.0;
    }
    let (p, r) = (p / n as f64, r / n as f64);
    if p + r == 0.0 {
        return 0.0;
    }
    100.0 * (1.0 + factor) * p * r / (factor * p + r)
}

/// chrF of one hypothesis against one reference (sacreBLEU's `sentence_score`), 0–100.
pub fn sentence(hyp: &str, reference: &str) -> f64 {
    Stats::of(hyp, reference).score()
}

/// Corpus chrF of aligned (hypothesis, reference) segments (sacreBLEU's `corpus_score`: the
/// statistics are summed, then scored), 0–100.
pub fn corpus<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> f64 {
    let mut total = Stats::default();
    for (h, r) in pairs {
        total.add(&Stats::of(h, r));
    }
    total.score()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_texts_score_100_and_disjoint_ones_0() {
        assert_eq!(sentence("智能体读取上下文", "智能体读取上下文"), 100.0);
        assert_eq!(
            sentence("abc def", "abcdef"),
            100.0,
            "whitespace is removed"
        );
        assert_eq!(sentence("xyz", "abc"), 0.0);
        assert_eq!(sentence("", "abc"), 0.0);
    }

    #[test]
    fn counts_clip_at_the_reference() {
        let s = Stats::of("aaaa", "aa");
        assert_eq!(s.0[0], [4, 2, 2]);
        assert_eq!(s.0[1], [3, 1, 1]);
        // The reference has no trigram: the hypothesis' trigrams are not counted.
        assert_eq!(s.0[2], [0, 0, 0]);
    }

    #[test]
    fn plus_words_split_one_ascii_punctuation_mark_at_an_edge() {
        assert_eq!(
            plus_words("(hi) a, b. c"),
            ["(hi", ")", "a", ",", "b", ".", "c"]
        );
        assert_eq!(plus_words("\"x ( 智能体。"), ["\"", "x", "(", "智能体。"]);
        let s = PlusStats::of("the cat sat", "the cat");
        assert_eq!(s.words[0], [3, 2, 2]);
        assert_eq!(s.words[1], [2, 1, 1]);
        assert_eq!(sentence_plus("智能体 读取", "智能体 读取"), 100.0);
    }
}
