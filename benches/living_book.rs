//! The living book, measured: corpus chapters 1–2 (`../shared/corpus/ai-agent-book/en`, copied
//! to a temporary folder) translated against the in-repo fake server, then ten single-paragraph
//! edits of the source, one at a time (each on top of the last), each followed by `booktr run`.
//! The paragraphs are drawn by a fixed-seed generator from the chapters' prose paragraphs
//! (longer than 80 characters); each edit inserts one word after the paragraph's first word.
//!
//! Per edit it prints, and writes to `validation/bench/living_book.json`:
//! - the source characters the fake received in first-translation requests, against the
//!   edited paragraph's (target: the edited paragraph alone);
//! - the output blocks that changed (target: 1, the edited paragraph's translation);
//! - the requests of every agent (target: at most 1.1 per edit on average).
//!
//! It reports figures and never asserts. Without the corpus it prints why and writes nothing.
//! Run: `cargo bench --bench living_book`. Under `cargo test --benches` nothing runs.

#[allow(dead_code)]
#[path = "../tests/it/support/fake_llm.rs"]
mod fake_llm;
#[allow(dead_code)]
#[path = "../tests/it/support/recorded.rs"]
mod recorded;

use std::path::Path;
use std::process::Command;

use booktr::agents::Agent;
use booktr::campaign::core::blocks::{cores, spans};
use fake_llm::FakeServer;
use serde_json::json;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_booktr");
const KEY: &str = "sk-booktr-bench-living";
const EDITS: usize = 10;
/// The requests-per-edit target of the issue.
const REQUESTS_PER_EDIT: f64 = 1.1;
const CHAPTERS: [&str; 2] = ["chapter01.md", "chapter02.md"];

fn run(dir: &Path, fake: &FakeServer) {
    let out = Command::new(BIN)
        .args([
            "run",
            dir.join("campaign.toml").to_str().unwrap(),
            "--json",
            "--base-url",
            &fake.base_url,
        ])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn out_blocks(dir: &Path) -> Vec<Vec<String>> {
    CHAPTERS
        .iter()
        .map(|c| {
            let t = std::fs::read_to_string(dir.join("lb/out").join(c)).unwrap();
            cores(&t).into_iter().map(String::from).collect()
        })
        .collect()
}

/// (chapter index, byte range) of every prose paragraph of more than 80 characters.
fn paragraphs(texts: &[String]) -> Vec<(usize, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        for r in spans(t) {
            let b = t[r.clone()].trim();
            let first = b.chars().next().unwrap_or(' ');
            if b.len() > 80 && first.is_alphabetic() && !b.contains('\n') && !b.contains('|') {
                out.push((i, r));
            }
        }
    }
    out
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let corpus = Path::new(MANIFEST).join("../shared/corpus/ai-agent-book/en");
    if !corpus.is_dir() {
        println!(
            "living_book: skipped: the corpus is not at {}",
            corpus.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut texts: Vec<String> = CHAPTERS
        .iter()
        .map(|c| std::fs::read_to_string(corpus.join(c)).unwrap())
        .collect();
    for (c, t) in CHAPTERS.iter().zip(&texts) {
        std::fs::write(dir.path().join(c), t).unwrap();
    }
    let house = Path::new(MANIFEST).join("glossaries/house-style.en-zh.csv");
    std::fs::write(
        dir.path().join("campaign.toml"),
        format!(
            "name = \"lb\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = [\"chapter01.md\", \"chapter02.md\"]\nglossaries = [{:?}]\nconcurrency = 8\n[provider]\nkind = \"openai\"\nmodel = \"fake\"\n",
            house.to_str().unwrap()
        ),
    )
    .unwrap();
    let fake = FakeServer::start();
    run(dir.path(), &fake);
    let mut rng: u64 = 44;
    let mut rows = Vec::new();
    let mut used = std::collections::HashSet::new();
    for n in 0..EDITS {
        let before = out_blocks(dir.path());
        let paras = paragraphs(&texts);
        let (ch, range) = loop {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = &paras[(rng >> 33) as usize % paras.len()];
            if used.insert((pick.0, pick.1.start)) {
                break pick.clone();
            }
        };
        let para = texts[ch][range.clone()].trim().to_string();
        let edited = match para.split_once(' ') {
            Some((first, rest)) => format!("{first} indeed {rest}"),
            None => format!("{para} indeed"),
        };
        texts[ch] = texts[ch].replacen(&para, &edited, 1);
        std::fs::write(dir.path().join(CHAPTERS[ch]), &texts[ch]).unwrap();
        fake.clear();
        run(dir.path(), &fake);
        let reqs = fake.requests();
        let sent: usize = reqs
            .iter()
            .filter(|r| r.agent == Agent::Translation && !r.is_revision())
            .map(|r| r.unit_text().unwrap_or("").trim().chars().count())
            .sum();
        let by_agent: std::collections::BTreeMap<String, usize> =
            reqs.iter().fold(Default::default(), |mut m, r| {
                *m.entry(format!("{:?}", r.agent).to_lowercase())
                    .or_default() += 1;
                m
            });
        let after = out_blocks(dir.path());
        let changed: usize = before
            .iter()
            .zip(&after)
            .map(|(b, a)| {
                b.iter().zip(a).filter(|(x, y)| x != y).count() + b.len().abs_diff(a.len())
            })
            .sum();
        let row = json!({
            "edit": n + 1,
            "chapter": CHAPTERS[ch],
            "paragraph_chars": edited.chars().count(),
            "source_chars_sent": sent,
            "output_blocks_changed": changed,
            "requests": reqs.len(),
            "requests_by_agent": by_agent,
        });
        println!("{row}");
        rows.push(row);
    }
    let requests: usize = rows
        .iter()
        .map(|r| r["requests"].as_u64().unwrap() as usize)
        .sum();
    let per_edit = requests as f64 / EDITS as f64;
    let exact = rows
        .iter()
        .filter(|r| r["source_chars_sent"] == r["paragraph_chars"])
        .count();
    let one_block = rows
        .iter()
        .filter(|r| r["output_blocks_changed"] == 1)
        .count();
    println!(
        "living_book: {exact}/{EDITS} edits re-sent the edited paragraph alone; {one_block}/{EDITS} changed one output block; {per_edit:.2} requests per edit (target ≤ {REQUESTS_PER_EDIT})"
    );
    let out = Path::new(MANIFEST).join("validation/bench");
    std::fs::create_dir_all(&out).unwrap();
    let doc = json!({
        "bench": "living_book",
        "chapters": CHAPTERS,
        "edits": rows,
        "edits_resending_the_paragraph_alone": exact,
        "edits_changing_one_output_block": one_block,
        "requests_per_edit": per_edit,
        "target_requests_per_edit": REQUESTS_PER_EDIT,
        "machine": {
            "nproc": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            "date": booktr::util::utc_timestamp(booktr::campaign::core::store::now_ms(), true),
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        },
    });
    std::fs::write(
        out.join("living_book.json"),
        serde_json::to_string_pretty(&doc).unwrap() + "\n",
    )
    .unwrap();
}
