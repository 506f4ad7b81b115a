//! Precision and recall of the per-unit QA checks on the labelled set
//! (`tests/fixtures/qa-labelled/pairs.jsonl`: faithful and faulty pairs in zh, ja, de, fr and
//! ru), and the error findings per check when the reference corpus's zh edition is validated
//! against its en edition, section by section (a human translation: every error there is
//! either a real divergence of the two editions or a false alarm to look at). Prints both
//! tables and writes `validation/bench/qa_labelled.json`. Without the corpus the second part
//! prints why and is left out.
//!
//! Run: `cargo bench --bench qa_labelled` (or, unoptimised, `cargo test --bench qa_labelled`).

#[path = "../tests/it/labelled/mod.rs"]
mod labelled;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use booktr::book::segment::{BlockKind, top_level_blocks};
use booktr::lang::Lang;
use booktr::qa::{self, QaContext, Severity};
use booktr::termbase::Termbase;
use serde_json::json;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn main() {
    let pairs = labelled::pairs();
    let (scores, wrong) = labelled::score(&pairs);
    let bad = pairs.iter().filter(|p| p.expected_check.is_some()).count();
    println!(
        "labelled set: {} pairs ({bad} faulty, {} faithful)",
        pairs.len(),
        pairs.len() - bad
    );
    println!(
        "{:<16} {:>4} {:>4} {:>4} {:>5} {:>9} {:>7}",
        "check", "tp", "fp", "fn", "also", "precision", "recall"
    );
    let mut checks = serde_json::Map::new();
    for (c, s) in &scores {
        println!(
            "{c:<16} {:>4} {:>4} {:>4} {:>5} {:>9.3} {:>7.3}",
            s.tp,
            s.fp,
            s.fn_,
            s.also,
            s.precision(),
            s.recall()
        );
        checks.insert(
            c.clone(),
            json!({"tp": s.tp, "fp": s.fp, "fn": s.fn_, "also_on_other_faults": s.also,
                   "precision": s.precision(), "recall": s.recall()}),
        );
    }
    for w in &wrong {
        println!("  wrong: {w}");
    }
    let corpus = corpus_errors();
    let out = json!({
        "pairs": pairs.len(),
        "faulty": bad,
        "checks": checks,
        "wrong": wrong,
        "corpus_zh_against_en": corpus,
    });
    let dir = Path::new(MANIFEST).join("validation/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("qa_labelled.json");
    std::fs::write(&path, serde_json::to_string_pretty(&out).unwrap() + "\n").unwrap();
    println!("wrote {}", path.display());
}

/// Error findings per check of the zh edition validated against the en edition, sections
/// paired by their headings; `null` (with a printed reason) without the corpus.
fn corpus_errors() -> serde_json::Value {
    let root = PathBuf::from(MANIFEST).join("../shared/corpus/ai-agent-book");
    if !root.join("en").is_dir() || !root.join("zh").is_dir() {
        println!(
            "corpus: skipped, no en and zh editions at {} (the comparison needs the real book)",
            root.display()
        );
        return serde_json::Value::Null;
    }
    let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default());
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    let mut examples: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let (mut sections_checked, mut skipped) = (0usize, 0usize);
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("en"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for en_path in files {
        let name = en_path.file_name().unwrap();
        let Ok(zh_text) = std::fs::read_to_string(root.join("zh").join(name)) else {
            continue;
        };
        let en_text = std::fs::read_to_string(&en_path).unwrap();
        let (a, b) = (sections(&en_text), sections(&zh_text));
        if a.len() != b.len() {
            skipped += 1;
            continue;
        }
        for (i, (s, t)) in a.iter().zip(&b).enumerate() {
            sections_checked += 1;
            let unit = format!("{}-{i:03}", name.to_string_lossy());
            for f in qa::check_unit(&ctx, &unit, "", s, t) {
                if f.severity != Severity::Error {
                    continue;
                }
                *by.entry(f.check.clone()).or_default() += 1;
                let ex = examples.entry(f.check.clone()).or_default();
                if ex.len() < 5 {
                    ex.push(format!("{unit}: {}", f.message));
                }
            }
        }
    }
    println!(
        "corpus zh edition against en: {sections_checked} sections ({skipped} chapters skipped: section counts differ)"
    );
    for (c, n) in &by {
        println!("  {c:<16} {n:>5} errors");
        for e in &examples[c] {
            println!("      {}", booktr::util::excerpt(e, 220));
        }
    }
    json!({"sections": sections_checked, "chapters_skipped": skipped, "errors_by_check": by, "examples": examples})
}

/// Splits a chapter at its headings (top-level heading blocks).
fn sections(text: &str) -> Vec<&str> {
    let starts: Vec<usize> = top_level_blocks(text)
        .iter()
        .filter(|b| b.kind == BlockKind::Heading)
        .map(|b| b.range.start)
        .collect();
    let mut out = Vec::new();
    let mut prev = 0;
    for s in starts.into_iter().chain([text.len()]) {
        if s > prev {
            out.push(&text[prev..s]);
        }
        prev = s;
    }
    out
}
