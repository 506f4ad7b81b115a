//! QA throughput, and issue #3's target: the whole English corpus validated against itself as
//! a fake "translation" (`booktr validate --source en --target en --target-lang zh`) finishes in
//! under 5 s and flags every unit as untranslated. Prints the wall time of the whole command
//! (parsing, every per-unit and campaign-level check, report.json/md/html), the units flagged,
//! and the QA throughput in MB/s of source text. Without the corpus it prints why and stops.
//!
//! Second part: `validate` of the corpus's zh edition against its en edition (en → zh, code
//! comments translated, as `booktr validate --source …/en --target …/zh --source-lang en
//! --target-lang zh --code-comments translate --json`) at 1× and at 10× (ten distinct copies
//! of every chapter: each copy puts its own word before every paragraph, in both editions), so
//! that language identification of every block, sentence and word is shown to stay linear.
//! Targets: 1× under 2 s (release build), 10× at most 11 × 1×.
//!
//! Run: `cargo bench --bench qa`.

use std::path::PathBuf;
use std::time::Instant;

use booktr::cli::ValidateArgs;

fn main() {
    self_validation();
    human_edition_scaling();
}

/// The en edition validated against itself (issue #3's target).
fn self_validation() {
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

/// Copy `word` of a chapter: `word ` before every line that starts a paragraph outside code
/// fences (both editions get the same words, so the pairing is unchanged).
fn distinct_copy(text: &str, word: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 20);
    let mut fence = false;
    let mut previous_blank = true;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with("```") {
            fence = !fence;
        }
        if !fence && previous_blank && line.starts_with(|c: char| c.is_alphabetic()) {
            out.push_str(word);
            out.push(' ');
        }
        out.push_str(line);
        previous_blank = line.trim().is_empty();
    }
    out
}

/// `validate` of the zh edition against the en edition at 1× and 10× (see the module docs).
fn human_edition_scaling() {
    let root = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/ai-agent-book"
    ));
    if !root.join("zh").is_dir() {
        println!("skipped: no zh edition at {}", root.display());
        return;
    }
    const WORDS: [&str; 10] = [
        "Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet",
    ];
    let mut names: Vec<String> = std::fs::read_dir(root.join("zh"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && root.join("en").join(n).is_file())
        .collect();
    names.sort();
    println!();
    println!(
        "| book | source bytes | units | untranslated errors | untranslated_word errors / warnings | wall time |"
    );
    println!("|---|---|---|---|---|---|");
    let mut times = Vec::new();
    let mut rows = Vec::new();
    for copies in [1usize, 10] {
        let dir = tempfile::tempdir().unwrap();
        let (en, zh) = (dir.path().join("en"), dir.path().join("zh"));
        std::fs::create_dir_all(&en).unwrap();
        std::fs::create_dir_all(&zh).unwrap();
        let mut bytes = 0;
        for (k, word) in WORDS.iter().enumerate().take(copies) {
            for n in &names {
                let file = format!("b{k}-{n}");
                for (from, to) in [("en", &en), ("zh", &zh)] {
                    let text = std::fs::read_to_string(root.join(from).join(n)).unwrap();
                    let text = if copies == 1 {
                        text
                    } else {
                        distinct_copy(&text, word)
                    };
                    if from == "en" {
                        bytes += text.len();
                    }
                    std::fs::write(to.join(&file), text).unwrap();
                }
            }
        }
        let report_dir = tempfile::tempdir().unwrap();
        let args = ValidateArgs {
            campaign: None,
            source: Some(en),
            target: Some(zh),
            glossary: vec![],
            source_lang: Some("en".into()),
            target_lang: Some("zh".into()),
            max_unit_chars: booktr::book::segment::DEFAULT_MAX_UNIT_CHARS,
            report_dir: Some(report_dir.path().to_path_buf()),
            json: true,
            code_comments: Some("translate".into()),
        };
        let started = Instant::now();
        booktr::commands::validate::run(&args).unwrap();
        let secs = started.elapsed().as_secs_f64();
        times.push(secs);
        let report: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(report_dir.path().join("report.json")).unwrap(),
        )
        .unwrap();
        let units = report["units"].as_array().unwrap();
        let count = |check: &str, severity: &str| {
            units
                .iter()
                .flat_map(|u| u["findings"].as_array().unwrap())
                .filter(|f| f["check"] == check && f["severity"] == severity)
                .count()
        };
        println!(
            "| en → zh edition, {copies}× | {bytes} | {} | {} | {} / {} | {secs:.2} s |",
            units.len(),
            count("untranslated", "error"),
            count("untranslated_word", "error"),
            count("untranslated_word", "warning"),
        );
        rows.push(serde_json::json!({
            "copies": copies,
            "source_bytes": bytes,
            "units": units.len(),
            "untranslated_errors": count("untranslated", "error"),
            "untranslated_word_errors": count("untranslated_word", "error"),
            "untranslated_word_warnings": count("untranslated_word", "warning"),
            "wall_seconds": secs,
        }));
    }
    let ratio = times[1] / times[0];
    let out = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/validation/bench/qa_validate.json"
    ));
    let json = serde_json::json!({
        "what": "booktr validate of the corpus zh edition against the en edition (in-process, release), 1x and 10x",
        "runs": rows,
        "ratio_10x_over_1x": ratio,
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
    });
    std::fs::write(&out, serde_json::to_string_pretty(&json).unwrap() + "\n").unwrap();
    println!("wrote {}", out.display());
    println!(
        "targets: 1x under 2 s: {} ({:.2} s); 10x at most 11 x 1x: {} ({ratio:.1}x)",
        if times[0] < 2.0 { "met" } else { "NOT met" },
        times[0],
        if ratio <= 11.0 { "met" } else { "NOT met" },
    );
}
