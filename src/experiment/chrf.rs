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
//! Hand-rolled because no maintained Rust crate implements sacreBLEU's chrF; it is checked
//! against sacreBLEU itself on stored vectors (`tests/fixtures/chrf_vectors.json`, made by
//! `tests/fixtures/chrf_vectors.py`), within 0.01.

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
        let factor = BETA * BETA;
        let (mut p, mut r, mut orders) = (0.0, 0.0, 0usize);
        for [n_hyp, n_ref, n_match] in self.0 {
            if n_hyp > 0 && n_ref > 0 {
                p += n_match as f64 / n_hyp as f64;
                r += n_match as f64 / n_ref as f64;
                orders += 1;
            }
        }
        if orders == 0 {
            return 0.0;
        }
        let (p, r) = (p / orders as f64, r / orders as f64);
        if p + r == 0.0 {
            return 0.0;
        }
        100.0 * (1.0 + factor) * p * r / (factor * p + r)
    }
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
}
