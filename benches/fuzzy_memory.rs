//! Fuzzy translation-memory lookup speed: a memory of every sentence of the shared English
//! corpus (`../shared/corpus/ai-agent-book/en/*.md`, cut by
//! `booktr::interchange::segments::sentences`, at least 5,000 entries: the sentences are
//! repeated with a numbered suffix when the corpus has fewer), queried with each of the
//! corpus's translation units (`booktr::book::segment`, default unit size) and with 2,000
//! sentences with one word changed. Without the corpus it prints why and uses generated
//! sentences. Prints the mean and worst lookup time and whether the targets are met: a mean of
//! at most 5 ms and a worst of at most 100 ms per lookup in a release build (a book of ~190
//! units then spends well under a second on fuzzy lookups); writes
//! `validation/bench/fuzzy_memory.json`.

use std::path::Path;
use std::time::{Duration, Instant};

use booktr::interchange::memory::Memory;
use booktr::interchange::segments;
use booktr::interchange::tmx::ReadPair;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
const MEAN_TARGET_MS: f64 = 5.0;
const WORST_TARGET_MS: f64 = 100.0;
const MIN_ENTRIES: usize = 5000;

fn chapters() -> Vec<String> {
    let dir = Path::new(MANIFEST).join("../shared/corpus/ai-agent-book/en");
    let mut paths: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(e) => e
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect(),
        Err(e) => {
            println!(
                "corpus {} not available ({e}); using generated text",
                dir.display()
            );
            Vec::new()
        }
    };
    paths.sort();
    let texts: Vec<String> = paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    if !texts.is_empty() {
        return texts;
    }
    vec![
        (0..3000)
            .map(|i| {
                format!(
                    "The agent number {i} calls tool {} and reads the result before step {}. ",
                    i % 37,
                    i % 11
                )
            })
            .collect(),
    ]
}

fn main() {
    let texts = chapters();
    let mut sentences: Vec<String> = Vec::new();
    for t in &texts {
        for r in segments::sentences(t, "en").into_iter().flatten() {
            let s = t[r].trim();
            if s.split_whitespace().count() >= 4 {
                sentences.push(s.to_string());
            }
        }
    }
    let base = sentences.len();
    let mut k = 0;
    while sentences.len() < MIN_ENTRIES {
        sentences.push(format!("{} (variant {k})", sentences[k % base]));
        k += 1;
    }
    let mut memory = Memory::default();
    memory.add(
        sentences
            .iter()
            .enumerate()
            .map(|(i, s)| ReadPair {
                id: format!("s{i}"),
                source: s.clone(),
                target: "译文".into(),
            })
            .collect(),
        "bench.tmx",
    );
    let mut queries: Vec<String> = texts
        .iter()
        .flat_map(|t| {
            booktr::book::segment::segment("c", t, booktr::book::segment::DEFAULT_MAX_UNIT_CHARS)
                .into_iter()
                .map(|u| t[u.range].to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let units = queries.len();
    for s in sentences
        .iter()
        .step_by((sentences.len() / 2000).max(1))
        .take(2000)
    {
        let mut w: Vec<&str> = s.split_whitespace().collect();
        w[1] = "changed";
        queries.push(w.join(" "));
    }
    let mut times = Vec::with_capacity(queries.len());
    let mut found = 0usize;
    let start = Instant::now();
    for q in &queries {
        let t = Instant::now();
        if std::hint::black_box(memory.fuzzy(q)).is_some() {
            found += 1;
        }
        times.push(t.elapsed());
    }
    let total = start.elapsed();
    let worst = times.iter().max().copied().unwrap_or(Duration::ZERO);
    let mean_ms = total.as_secs_f64() * 1000.0 / queries.len() as f64;
    let worst_ms = worst.as_secs_f64() * 1000.0;
    let met = mean_ms <= MEAN_TARGET_MS && worst_ms <= WORST_TARGET_MS;
    println!(
        "fuzzy memory: {} entries, {} lookups ({units} units, {} edited sentences), {found} matches; mean {mean_ms:.3} ms, worst {worst_ms:.1} ms per lookup; target mean <= {MEAN_TARGET_MS} ms and worst <= {WORST_TARGET_MS} ms: {}",
        memory.len(),
        queries.len(),
        queries.len() - units,
        if met { "met" } else { "NOT met" }
    );
    let json = serde_json::json!({
        "entries": memory.len(),
        "lookups": queries.len(),
        "unit_lookups": units,
        "matches": found,
        "mean_ms": mean_ms,
        "worst_ms": worst_ms,
        "target_mean_ms": MEAN_TARGET_MS,
        "target_worst_ms": WORST_TARGET_MS,
        "met": met,
        "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
    });
    let dir = Path::new(MANIFEST).join("validation/bench");
    let _ = std::fs::create_dir_all(&dir);
    std::fs::write(
        dir.join("fuzzy_memory.json"),
        serde_json::to_string_pretty(&json).unwrap() + "\n",
    )
    .expect("writing validation/bench/fuzzy_memory.json");
}
