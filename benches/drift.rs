//! Precision and recall of the terminology drift check (`term_drift`) over a generated labelled
//! set: synthetic books ([`word_for_word::synthetic_units`], 80 units each) translated word for
//! word with one fixed rendering per source word (no drift: every finding is a false
//! positive), and the same books with two terms planted with a competing rendering in every
//! other unit that has them (the two planted terms are the positives). A finding for a term
//! that shares a word with a planted term (`tool` for a planted `tool call`) is neither
//! counted right nor wrong: its rendering did change in some units.
//!
//! Prints precision `TP / (TP + FP)` and recall `TP / (TP + FN)` and writes
//! `validation/bench/drift.json`. Runs in about 30 s even unoptimised
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
    let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default());
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
        "elapsed_s": elapsed,
        "profile": if cfg!(debug_assertions) { "dev" } else { "release" },
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("validation/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("drift.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap() + "\n").unwrap();
    println!("wrote {}", path.display());
}
