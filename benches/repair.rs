//! Mechanical error findings before and after deterministic repair (issue 18) on real-model
//! translations of units of the corpus's chapters 1–2: the answers recorded in
//! `tests/fixtures/real-llm/corpus-ch01-02.jsonl` (see `tests/it/record_corpus.rs`), the
//! sources read from `../shared/corpus/ai-agent-book/en` and segmented as the campaign
//! `campaigns/ai-agent-book-ch1-2.toml` does with the recording's `max_unit_chars`. Per unit:
//! `qa::check_unit` on the answer, `repair::repair`, `qa::check_unit` again. Prints, by check,
//! the mechanical error findings (`repair::is_mechanical_finding`) before and after, the
//! repairs by class, the skips by class with their reasons, and the units repair made worse
//! (more error findings of any check; must be none); writes `validation/bench/repair.json`.
//! Without the corpus it prints why and writes nothing; a recorded unit whose source changed
//! (sha256) or vanished is listed, not replayed.
//!
//! Run: `cargo bench --bench repair` (or, unoptimised, `cargo test --bench repair`).

#[path = "../tests/it/support/corpus_replay.rs"]
mod corpus_replay;

use std::collections::BTreeSet;
use std::path::Path;

use booktr::config::Overrides;
use serde_json::json;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn main() {
    let fixture = corpus_replay::fixture_file();
    let records = match corpus_replay::load_records(&fixture) {
        Ok(r) => r,
        Err(e) => {
            println!("repair bench: skipped, no recorded answers ({e})");
            return;
        }
    };
    let Some(first) = records.first() else {
        println!("repair bench: skipped, {} is empty", fixture.display());
        return;
    };
    let max_unit_chars = first.settings.max_unit_chars;
    let c = match corpus_replay::campaign(max_unit_chars, &Overrides::default()) {
        Ok(c) => c,
        Err(e) => {
            println!("repair bench: skipped, {e}");
            return;
        }
    };
    let t0 = std::time::Instant::now();
    let replay = corpus_replay::replay(&c, &records);
    let took = t0.elapsed();
    let (before, after) = (replay.mechanical_before(), replay.mechanical_after());
    let models: BTreeSet<&str> = records.iter().map(|r| r.model.as_str()).collect();
    println!(
        "repair on {} recorded units of chapters 1-2 (model {}, max_unit_chars = {max_unit_chars}): {} replayed in {took:.1?}",
        records.len(),
        models.into_iter().collect::<Vec<_>>().join(", "),
        replay.units.len()
    );
    for n in &replay.not_replayed {
        println!("  not replayed: {n}");
    }
    println!("{:<16} {:>7} {:>6}", "mechanical check", "before", "after");
    let checks: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let mut by_check = serde_json::Map::new();
    for ch in checks {
        let (b, a) = (
            before.get(ch).copied().unwrap_or(0),
            after.get(ch).copied().unwrap_or(0),
        );
        println!("{ch:<16} {b:>7} {a:>6}");
        by_check.insert(ch.clone(), json!({"before": b, "after": a}));
    }
    let (tb, ta): (usize, usize) = (before.values().sum(), after.values().sum());
    println!("{:<16} {tb:>7} {ta:>6}", "total");
    let errors_before: usize = replay.units.iter().map(|u| u.errors_before).sum();
    let errors_after: usize = replay.units.iter().map(|u| u.errors_after).sum();
    println!("all error findings (any check): {errors_before} before, {errors_after} after");
    let repairs = replay.repairs();
    println!(
        "repairs by class: {}",
        if repairs.is_empty() {
            "none".to_string()
        } else {
            repairs
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    let skipped = replay.skipped();
    println!(
        "skips by class: {}",
        if skipped.is_empty() {
            "none".to_string()
        } else {
            skipped
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    for u in &replay.units {
        for why in &u.skip_reasons {
            println!(
                "  skipped in {}: {}",
                u.unit,
                booktr::util::excerpt(why, 200)
            );
        }
    }
    let worse = replay.worse();
    println!("units made worse: {}", worse.len());
    for u in &worse {
        println!(
            "  WORSE {}: {} error findings before, {} after",
            u.unit, u.errors_before, u.errors_after
        );
    }
    let out = json!({
        "fixture": fixture.strip_prefix(MANIFEST).unwrap_or(&fixture).display().to_string(),
        "max_unit_chars": max_unit_chars,
        "recorded_units": records.len(),
        "replayed_units": replay.units.len(),
        "not_replayed": replay.not_replayed,
        "mechanical_errors": {"before": tb, "after": ta, "by_check": by_check},
        "errors_all_checks": {"before": errors_before, "after": errors_after},
        "repairs_by_class": repairs,
        "skips_by_class": skipped,
        "units_made_worse": worse.iter().map(|u| u.unit.clone()).collect::<Vec<_>>(),
        "units": replay.units,
        "replay_ms": took.as_secs_f64() * 1000.0,
    });
    let dir = Path::new(MANIFEST).join("validation/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("repair.json");
    std::fs::write(&path, serde_json::to_string_pretty(&out).unwrap() + "\n").unwrap();
    println!("wrote {}", path.display());
}
