//! Precision and recall of the terminology drift check (`term_drift`) over a generated labelled
//! set: synthetic books ([`word_for_word::synthetic_units`], 80 units each) translated word for
//! word with one fixed rendering per source word (no drift: every finding is a false
//! positive), and the same books with two terms planted with a competing rendering in every
//! other unit that has them (the two planted terms are the positives). A finding for a term
//! that shares a word with a planted term (`tool` for a planted `tool call`) is neither
//! counted right nor wrong: its rendering did change in some units.
//!
//! A second set is the pseudo-Chinese case on the corpus' chapters 1–2 (skipped with a
//! printed reason when the corpus is absent): every English word rendered by one real Chinese
//! word of the zh edition ([`word_for_word::Dictionary`]), no spaces, no articles, and the
//! glossary of the prompts followed (the house style and the 200 most frequent term
//! candidates, multi-word ones with a coined word); checked with QA's termbase empty (as
//! `validate --source --target` checks) and holding that glossary; then three pairs of terms
//! planted with a second word.
//!
//! Prints precision `TP / (TP + FP)` and recall `TP / (TP + FN)` per set and overall and writes
//! `validation/bench/drift.json`. Runs in about a minute unoptimised
//! (`cargo bench --bench drift --profile dev`); no timing is asserted.
//!
//! Run: `cargo bench --bench drift`.

#[path = "../tests/it/support/word_for_word.rs"]
mod word_for_word;

use std::time::Instant;

use booktr::lang::Lang;
use booktr::qa::{self, QaContext, UnitText};
use booktr::termbase::Termbase;

/// Books generated (seeds 1..=BOOKS).
const BOOKS: u64 = 4;
const UNITS: usize = 80;

/// The drifting terms QA reports for `units` translated by `translate(i, source)`.
fn found(
    units: &[(String, String, String)],
    translate: impl Fn(usize, &str) -> String,
) -> Vec<String> {
    found_with(units, &Termbase::default(), translate)
}

/// [`found`] with `tb` as QA's termbase.
fn found_with(
    units: &[(String, String, String)],
    tb: &Termbase,
    translate: impl Fn(usize, &str) -> String,
) -> Vec<String> {
    let targets: Vec<String> = units
        .iter()
        .enumerate()
        .map(|(i, u)| translate(i, &u.2))
        .collect();
    let texts: Vec<UnitText> = units
        .iter()
        .zip(&targets)
        .map(|(u, t)| UnitText {
            unit: &u.0,
            chapter: &u.1,
            source: &u.2,
            target: Some(t),
        })
        .collect();
    let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), tb);
    qa::check_campaign(&ctx, &texts, &[])
        .drift
        .iter()
        .filter(|r| r.drifting)
        .map(|r| r.term.to_lowercase())
        .collect()
}

fn shares_word(a: &str, b: &str) -> bool {
    a.split_whitespace()
        .any(|w| b.split_whitespace().any(|v| v == w))
}

/// Precision and recall counts of one set.
#[derive(Default)]
struct Tally {
    tp: usize,
    fp: usize,
    fn_: usize,
    ignored: usize,
    trials: usize,
    misses: Vec<String>,
    false_alarms: Vec<String>,
}

impl Tally {
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
    /// Scores the terms `f` found on a translation with `planted` drifts.
    fn score(&mut self, label: &str, f: &[String], planted: &[String]) {
        for p in planted {
            if f.contains(p) {
                self.tp += 1;
            } else {
                self.fn_ += 1;
                // The findings that share a word with the missed term, so that a miss that
                // was reported under a neighbouring term reads as such.
                let related: Vec<&String> = f.iter().filter(|t| shares_word(p, t)).collect();
                self.misses.push(if related.is_empty() {
                    format!("{label}: {p}")
                } else {
                    format!("{label}: {p} (found as {related:?})")
                });
            }
        }
        for t in f.iter().filter(|t| !planted.contains(t)) {
            if planted.iter().any(|p| shares_word(p, t)) {
                self.ignored += 1;
            } else {
                self.fp += 1;
                self.false_alarms.push(format!("{label} {planted:?}: {t}"));
            }
        }
        self.trials += 1;
    }
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "trials": self.trials, "true_positives": self.tp, "false_positives": self.fp,
            "false_negatives": self.fn_, "ignored_related": self.ignored,
            "precision": self.precision(), "recall": self.recall(),
            "missed": self.misses, "false_alarms": self.false_alarms,
        })
    }
}

/// In every other unit whose source has a planted term, that term's words get their second
/// rendering: the `alternate` flag per unit.
fn alternation(units: &[(String, String, String)], planted: &[String]) -> Vec<bool> {
    let mut seen = vec![0usize; planted.len()];
    units
        .iter()
        .map(|u| {
            let lower = u.2.to_lowercase();
            let mut alt = false;
            for (k, p) in planted.iter().enumerate() {
                if lower.contains(p.as_str()) {
                    seen[k] += 1;
                    alt |= seen[k].is_multiple_of(2);
                }
            }
            alt
        })
        .collect()
}

/// The pseudo-Chinese set on the corpus (module docs), or `None` after printing why.
fn pseudo_chinese() -> Option<Tally> {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/ai-agent-book");
    if !root.join("en/chapter01.md").is_file() {
        println!(
            "drift: pseudo-Chinese corpus set skipped: the corpus is not at {}",
            root.display()
        );
        return None;
    }
    let mut units = Vec::new();
    for ch in ["chapter01", "chapter02"] {
        let text = std::fs::read_to_string(root.join(format!("en/{ch}.md"))).unwrap();
        for u in booktr::book::segment::segment(ch, &text, 2000) {
            if u.kind.needs_translation() {
                units.push((u.id.clone(), ch.to_string(), u.text(&text).to_string()));
            }
        }
    }
    let mut reference = String::new();
    let mut files: Vec<_> = std::fs::read_dir(root.join("zh"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        reference.push_str(&std::fs::read_to_string(f).unwrap());
    }
    let house: Vec<(String, String)> = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("glossaries/house-style.en-zh.csv"),
    )
    .unwrap()
    .lines()
    .skip(1)
    .filter_map(|l| {
        let mut f = l.split(',');
        Some((f.next()?.to_string(), f.next()?.to_string()))
    })
    .collect();
    let avoid: Vec<&str> = house.iter().map(|h| h.1.as_str()).collect();
    let sources: Vec<&str> = units.iter().map(|u| u.2.as_str()).collect();
    let dict = word_for_word::Dictionary::new(&sources, &reference, &avoid);
    let mut glossary = house.clone();
    let mut coined = 0;
    let mut multi: Vec<String> = Vec::new();
    for c in booktr::termbase::candidates::candidates(&sources, &Termbase::default(), 200) {
        if glossary.iter().any(|g| g.0.eq_ignore_ascii_case(&c.term)) {
            continue;
        }
        let target = if c.term.split_whitespace().count() >= 2 {
            coined += 1;
            // A term with a house-style word (`tool call`) cannot be planted: the translator
            // writes the house rendering of `tool` before it sees the phrase.
            let lower = c.term.to_lowercase();
            if !house.iter().any(|h| {
                let h = h.0.to_lowercase();
                lower
                    .split_whitespace()
                    .any(|w| h.split_whitespace().any(|x| x == w))
            }) {
                multi.push(lower);
            }
            dict.coined(coined).unwrap_or("").to_string()
        } else {
            word_for_word::translate_inner(&c.term, &[], &[], false, Some(&dict))
                .trim()
                .to_string()
        };
        glossary.push((c.term, target));
    }
    let tb = Termbase::from_entries(glossary.iter().map(|(s, t)| booktr::termbase::Entry {
        source: s.clone(),
        target: t.clone(),
        note: String::new(),
        origin: booktr::termbase::Origin::Agent,
        forbidden: Vec::new(),
        variants: Vec::new(),
    }));
    let mut tally = Tally::default();
    for (label, qa_tb) in [
        ("corpus, QA without termbase", Termbase::default()),
        ("corpus, QA with the glossary", tb),
    ] {
        let f = found_with(&units, &qa_tb, |_, s| {
            word_for_word::translate_inner(s, &glossary, &[], false, Some(&dict))
        });
        tally.score(label, &f, &[]);
    }
    // Planted drifts: pairs of the most frequent multi-word candidates (the glossary is the
    // house style only, so the planted terms are not glossary terms QA already enforces).
    for pair in 0..3usize {
        let planted: Vec<String> = vec![multi[2 * pair].clone(), multi[2 * pair + 1].clone()];
        let planted_ref: Vec<&str> = planted.iter().map(String::as_str).collect();
        let alternate = alternation(&units, &planted);
        let f = found(&units, |k, s| {
            word_for_word::translate_inner(s, &house, &planted_ref, alternate[k], Some(&dict))
        });
        tally.score("corpus planted", &f, &planted);
    }
    Some(tally)
}

fn main() {
    let t0 = Instant::now();
    let terms = word_for_word::SYNTHETIC_TERMS;
    let (mut tp, mut fp, mut fn_, mut ignored) = (0usize, 0usize, 0usize, 0usize);
    let mut trials = 0usize;
    let mut misses: Vec<String> = Vec::new();
    let mut false_alarms: Vec<String> = Vec::new();
    for seed in 1..=BOOKS {
        let units = word_for_word::synthetic_units(UNITS, seed);
        // Consistent translation: every finding is a false positive.
        let f = found(&units, |_, s| word_for_word::translate(s));
        fp += f.len();
        false_alarms.extend(f.iter().map(|t| format!("book {seed} consistent: {t}")));
        trials += 1;
        // Two planted drifts per trial, a different pair each time.
        for pair in 0..3usize {
            let i = (seed as usize * 3 + pair) % terms.len();
            let j = (i + 1 + pair) % terms.len();
            let planted = [terms[i].to_lowercase(), terms[j].to_lowercase()];
            let planted_ref: Vec<&str> = planted.iter().map(String::as_str).collect();
            let mut seen = vec![0usize; planted.len()];
            let alternate: Vec<bool> = units
                .iter()
                .map(|u| {
                    let lower = u.2.to_lowercase();
                    let mut alt = false;
                    for (k, p) in planted.iter().enumerate() {
                        if lower.contains(p.as_str()) {
                            seen[k] += 1;
                            alt |= seen[k].is_multiple_of(2);
                        }
                    }
                    alt
                })
                .collect();
            let f = found(&units, |k, s| {
                word_for_word::translate_planted(s, &planted_ref, alternate[k])
            });
            for p in &planted {
                if f.contains(p) {
                    tp += 1;
                } else {
                    fn_ += 1;
                    misses.push(format!("book {seed}: {p}"));
                }
            }
            for t in f.iter().filter(|t| !planted.contains(t)) {
                if planted.iter().any(|p| shares_word(p, t)) {
                    ignored += 1;
                } else {
                    fp += 1;
                    false_alarms.push(format!("book {seed} {planted:?}: {t}"));
                }
            }
            trials += 1;
        }
    }
    let precision = if tp + fp == 0 {
        1.0
    } else {
        tp as f64 / (tp + fp) as f64
    };
    let recall = if tp + fn_ == 0 {
        1.0
    } else {
        tp as f64 / (tp + fn_) as f64
    };
    let corpus = pseudo_chinese();
    if let Some(c) = &corpus {
        println!(
            "drift: pseudo-Chinese corpus set, {} trials: precision {:.3} (TP {}, FP {}), recall {:.3} (FN {}), {} related",
            c.trials,
            c.precision(),
            c.tp,
            c.fp,
            c.recall(),
            c.fn_,
            c.ignored
        );
        for m in &c.misses {
            println!("  missed: {m}");
        }
        for f in &c.false_alarms {
            println!("  false alarm: {f}");
        }
    }
    let elapsed = t0.elapsed().as_secs_f64();
    println!(
        "drift: {trials} trials over {BOOKS} generated books of {UNITS} units: precision {precision:.3} (TP {tp}, FP {fp}), recall {recall:.3} (FN {fn_}), {ignored} findings on terms sharing a word with a planted one; {elapsed:.1} s"
    );
    for m in &misses {
        println!("  missed: {m}");
    }
    for f in &false_alarms {
        println!("  false alarm: {f}");
    }
    let json = serde_json::json!({
        "schema_version": 1,
        "benchmark": "drift",
        "books": BOOKS,
        "units_per_book": UNITS,
        "trials": trials,
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn_,
        "ignored_related": ignored,
        "precision": precision,
        "recall": recall,
        "missed": misses,
        "false_alarms": false_alarms,
        "pseudo_chinese_corpus": corpus.as_ref().map(Tally::json),
        "elapsed_s": elapsed,
        "profile": if cfg!(debug_assertions) { "dev" } else { "release" },
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("validation/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("drift.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap() + "\n").unwrap();
    println!("wrote {}", path.display());
}
