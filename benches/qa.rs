//! QA throughput, and issue #3's target: the whole English corpus validated against itself as
//! a fake "translation" (`booktr validate --source en --target en --target-lang zh`) finishes in
//! under 5 s and flags every unit as untranslated. Prints the wall time of the whole command
//! (parsing, every per-unit and campaign-level check, report.json/md/html), the units flagged,
//! and the QA throughput in MB/s of source text. Without the corpus it prints why and stops.
//!
//! Run: `cargo bench --bench qa`.

use std::path::PathBuf;
use std::time::Instant;

use booktr::cli::ValidateArgs;

fn main() {
    let corpus = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/ai-agent-book/en"
    ));
    if !corpus.is_dir() {
        println!(
            "skipped: the corpus is not at {} (the QA benchmark needs the real book)",
            corpus.display()
        );
        return;
    }
    let bytes: u64 = std::fs::read_dir(&corpus)
        .unwrap()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    let report_dir = tempfile::tempdir().unwrap();
    let args = ValidateArgs {
        campaign: None,
        source: Some(corpus.clone()),
        target: Some(corpus.clone()),
        glossary: vec![],
        source_lang: Some("en".into()),
        target_lang: Some("zh".into()),
        max_unit_chars: booktr::book::segment::DEFAULT_MAX_UNIT_CHARS,
        report_dir: Some(report_dir.path().to_path_buf()),
        json: false,
        code_comments: None,
    };
    // Build the tokenizer-free parts once before timing (nothing to warm: validate uses no model).
    let started = Instant::now();
    let code = booktr::commands::validate::run(&args).unwrap();
    let secs = started.elapsed().as_secs_f64();
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(report_dir.path().join("report.json")).unwrap(),
    )
    .unwrap();
    let units = report["units"].as_array().unwrap();
    let prose: Vec<_> = units.iter().filter(|u| u["kind"] == "prose").collect();
    let flagged = prose
        .iter()
        .filter(|u| {
            u["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["check"] == "untranslated" && f["severity"] == "error")
        })
        .count();
    println!(
        "| corpus | bytes | units (prose) | flagged untranslated | exit code | wall time | QA throughput |"
    );
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| en validated against itself | {bytes} | {} ({}) | {flagged} | {} | {secs:.2} s | {:.1} MB/s |",
        units.len(),
        prose.len(),
        code as i32,
        bytes as f64 / 1e6 / secs
    );
    println!(
        "target: under 5 s and every prose unit flagged: {}",
        if secs < 5.0 && flagged == prose.len() {
            "met"
        } else {
            "NOT met"
        }
    );
}
