//! Segmentation throughput: how many bytes of Markdown per second `booktr::book::segment` cuts
//! into units on one core, over every chapter of the shared English corpus
//! (`../shared/corpus/ai-agent-book/en/*.md`, each chapter segmented separately, throughput in
//! bytes of all chapters). Without the corpus it prints why and measures a generated ~1 MB
//! Markdown document instead. Before criterion runs, a plain timing loop prints
//! `segmentation throughput: X MB/s` (1 MB = 10^6 bytes) so the figure is visible without
//! parsing criterion's output. The project target is at least 20 MB/s.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use booktr::book::segment;
use booktr::book::segment::DEFAULT_MAX_UNIT_CHARS;
use criterion::{Criterion, Throughput};

const CORPUS_EN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/ai-agent-book/en"
);

/// The English chapters as `(key, text)`, or `None` (after saying why) without the corpus.
fn corpus() -> Option<Vec<(String, String)>> {
    let entries = match std::fs::read_dir(CORPUS_EN) {
        Ok(e) => e,
        Err(e) => {
            println!("corpus {CORPUS_EN} not available ({e}); benchmarking a synthetic document");
            return None;
        }
    };
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    paths.sort();
    let chapters: Vec<(String, String)> = paths
        .iter()
        .filter_map(|p| {
            let key = p.file_stem()?.to_string_lossy().into_owned();
            Some((key, std::fs::read_to_string(p).ok()?))
        })
        .collect();
    if chapters.is_empty() {
        println!("no *.md chapters in {CORPUS_EN}; benchmarking a synthetic document");
        return None;
    }
    Some(chapters)
}

/// A deterministic ~1 MB chapter mixing the block types books use.
fn synthetic() -> Vec<(String, String)> {
    let mut s = String::from("---\ntitle: Synthetic\n---\n\n");
    let mut i = 0usize;
    while s.len() < 1_000_000 {
        let _ = write!(
            s,
            "## Section {i}\n\n\
             An agent calls a *tool*, reads the `result` and plans the next step; see \
             [the docs](https://example.com/{i}) and note[^{i}]. Context engineering keeps $x_{i}$ \
             small, and 智能体 needs the same care.\n\
             A second line of the same paragraph, long enough to look like running prose.\n\n\
             - first item with **bold** text\n  - nested item {i}\n- second item\n\n\
             ```rust\nfn step_{i}() -> u32 {{\n\n    {i}\n}}\n```\n\n\
             | key | value |\n|-----|------:|\n| a | {i} |\n| b | two |\n\n\
             > A quoted remark about agents.\n\n\
             <div class=\"note\">\n\nInside a note.\n\n</div>\n\n\
             $$\na_{i} = b\n\nc = d\n$$\n\n\
             [^{i}]: A footnote for section {i}.\n\n"
        );
        i += 1;
    }
    vec![("synthetic".to_string(), s)]
}

fn segment_all(chapters: &[(String, String)], max: usize) -> usize {
    chapters
        .iter()
        .map(|(key, text)| segment(black_box(key), black_box(text), max).len())
        .sum()
}

/// Plain timing loop: repeats the whole set for at least `budget` (at least 3 passes).
fn manual_throughput(chapters: &[(String, String)], bytes: usize, budget: Duration) -> f64 {
    black_box(segment_all(chapters, DEFAULT_MAX_UNIT_CHARS)); // warm-up
    let start = Instant::now();
    let mut passes = 0u32;
    while passes < 3 || start.elapsed() < budget {
        black_box(segment_all(chapters, DEFAULT_MAX_UNIT_CHARS));
        passes += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    bytes as f64 * f64::from(passes) / secs / 1e6
}

fn main() {
    let (chapters, name) = match corpus() {
        Some(c) => (c, "corpus_en"),
        None => (synthetic(), "synthetic_1mb"),
    };
    let bytes: usize = chapters.iter().map(|(_, t)| t.len()).sum();
    let units = segment_all(&chapters, DEFAULT_MAX_UNIT_CHARS);
    // `cargo test --benches` runs this binary with `--test`: one short pass is enough there.
    let quick = std::env::args().any(|a| a == "--test");
    let budget = Duration::from_millis(if quick { 0 } else { 2000 });
    let mbps = manual_throughput(&chapters, bytes, budget);
    println!(
        "{} chapters, {bytes} bytes, {units} units at {DEFAULT_MAX_UNIT_CHARS} chars",
        chapters.len()
    );
    println!("segmentation throughput: {mbps:.1} MB/s");

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("segment");
    group.throughput(Throughput::Bytes(bytes as u64));
    for max in [DEFAULT_MAX_UNIT_CHARS, 2_000] {
        group.bench_function(format!("{name}/max_{max}"), |b| {
            b.iter(|| segment_all(&chapters, max))
        });
    }
    group.finish();
    c.final_summary();
}
