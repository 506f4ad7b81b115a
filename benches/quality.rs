//! The quality benchmark: does the design earn its tokens? booktr's orchestration against the
//! single pass (`--mode single-agent`) and five variants with one stage changed (no agent
//! glossary; the book brief on, which is off by default; no revision; no proofreading and
//! revision; no mechanical repair), on a 16.9 KB slice of corpus chapters 1–2
//! (`booktr::experiment::quality::SLICE`), scored against the human zh edition with chrF++
//! (sacreBLEU's `CHRF(word_order=2)`), per chapter and overall with a paired bootstrap 95%
//! interval; QA errors left by check; house-style adherence; tokens; model time; and how often
//! the blinded judge's verdict per unit agrees with chrF++.
//!
//! - `BOOKTR_RECORD_REAL_LLM=1 BOOKTR_REAL_LLM_URL=http://127.0.0.1:PORT/v1 cargo bench --bench
//!   quality`: records against the real model (answers already recorded for the same messages
//!   are reused, so an interrupted recording resumes) into `tests/fixtures/quality/answers.jsonl`
//!   (the 1.5B, the model);
//! - `cargo bench --bench quality`: replays the recorded answers;
//! - `BOOKTR_QUALITY_PSEUDO=1`: the fake server's pseudo translator (develops the benchmark).
//!
//! `BOOKTR_QUALITY_MODEL=0.5b` records or replays the 0.5B's recording
//! (`tests/fixtures/quality/answers-0.5b.jsonl`, `validation/bench/quality-0.5b.json`); without
//! it, the 1.5B's (`answers.jsonl`, `quality.json`).
//!
//! `BOOKTR_QUALITY_ARMS=conversation,orchestration,…` runs some arms only (the conversation is
//! always run); `BOOKTR_QUALITY_JUDGE=0` skips the judge. It writes
//! `validation/bench/quality.json` (a replay keeps the recording's wall times) and prints the
//! README table. It reports figures and never asserts; `tests/it/quality.rs` checks that a
//! replay gives the recorded figures. Without the corpus it prints why and writes nothing.
//! Under `cargo test --benches` nothing runs.

#[allow(dead_code)]
#[path = "../tests/it/support/fake_llm.rs"]
mod fake_llm;
#[allow(dead_code)]
#[path = "../tests/it/support/quality.rs"]
mod quality_run;
#[allow(dead_code)]
#[path = "../tests/it/support/recorded.rs"]
mod recorded;

use std::path::Path;

use booktr::experiment::quality::QualityArm;
use quality_run::Mode;

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/ai-agent-book");
    if !corpus.join("en").is_dir() {
        println!(
            "quality: skipped: the corpus is not at {}",
            corpus.display()
        );
        return;
    }
    let flag = |v: &str| std::env::var(v).is_ok_and(|x| x == "1");
    let url = std::env::var("BOOKTR_REAL_LLM_URL").unwrap_or_default();
    let mode = if flag("BOOKTR_QUALITY_PSEUDO") {
        Mode::Pseudo
    } else if flag("BOOKTR_RECORD_REAL_LLM") {
        assert!(
            !url.trim().is_empty(),
            "BOOKTR_RECORD_REAL_LLM=1 needs BOOKTR_REAL_LLM_URL"
        );
        Mode::Record {
            upstream: url.trim().trim_end_matches('/').to_string(),
        }
    } else {
        Mode::Replay
    };
    let wanted = std::env::var("BOOKTR_QUALITY_ARMS").unwrap_or_default();
    let arms: Vec<QualityArm> = QualityArm::ALL
        .into_iter()
        .filter(|a| {
            wanted.trim().is_empty()
                || *a == QualityArm::Conversation
                || wanted.split(',').any(|w| w.trim() == a.as_str())
        })
        .collect();
    let judge = std::env::var("BOOKTR_QUALITY_JUDGE").map_or(true, |v| v != "0");
    let out = quality_run::run(&corpus, mode.clone(), &arms, judge);
    if !out.misses.is_empty() {
        println!(
            "quality: {} request(s) had no recorded answer (re-record):",
            out.misses.len()
        );
        for m in out.misses.iter().take(20) {
            println!("  {m}");
        }
    }
    let path = quality_run::figures_file();
    // A replay keeps the recording's wall times: its own measure the fake server.
    let previous: Option<serde_json::Value> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    // `BOOKTR_QUALITY_RECORDING_WALL_S` (JSON, arm → seconds) gives them when the recording
    // stopped before writing its figures (its log printed each arm's time).
    let given: Option<serde_json::Value> = std::env::var("BOOKTR_QUALITY_RECORDING_WALL_S")
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let keep = match (&mode, &previous, given) {
        (Mode::Replay, _, Some(g)) => Some(g),
        (Mode::Replay, Some(p), None) if p["made_by"] == "record" => {
            p.get("recording_wall_s").cloned()
        }
        _ => None,
    };
    let json = quality_run::to_json(&out, &mode, keep.as_ref());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap() + "\n").unwrap();
    println!("{}", json["table"].as_str().unwrap_or_default());
    if let Some(t) = &out.figures.targets_vs_loop {
        println!(
            "targets vs the stateless loop: chrF++ >= loop {}; errors <= half of the loop's {}; tokens <= 1.5x loop {} ({:.2}x)",
            t.chrf_pp_at_least_loop, t.errors_at_most_half, t.tokens_at_most_1_5x, t.token_ratio
        );
    }
    let t = &out.figures.targets;
    println!(
        "targets: chrF++ >= single {}; errors <= half of single {}; tokens <= 1.3x single {} ({:.2}x)",
        t.chrf_pp_at_least_single, t.errors_at_most_half, t.tokens_at_most_1_3x, t.token_ratio
    );
    if let Some(j) = &out.figures.judge {
        println!(
            "judge: {} units judged (orchestration {}, single pass {}, ties {}); agrees with chrF++ on {}/{} units compared",
            j.judged,
            j.preferred_orchestration,
            j.preferred_single_pass,
            j.ties,
            j.agree,
            j.compared
        );
    }
    println!("model: {:?}; requests {:?}", out.model, out.requests);
    println!("wrote {}", path.display());
}
