//! Precision and recall of the per-unit QA checks on the labelled set
//! (`tests/fixtures/qa-labelled/pairs.jsonl`: faithful and faulty pairs in zh, ja, de, fr and
//! ru), and the error findings per check when the reference corpus's zh edition is validated
//! against its en edition, section by section (a human translation: every error there is
//! either a real divergence of the two editions or a false alarm to look at). Prints both
//! tables and writes `validation/bench/qa_labelled.json`. Without the corpus the second part
//! prints why and is left out.
//!
//! Run: `cargo bench --bench qa_labelled` (or, unoptimised, `cargo test --bench qa_labelled`).
//! `BOOKTR_LABEL_PER_UNIT=1` scores the real part unit by unit, as a campaign checks a unit
//! (no book-wide names or kept words); `BOOKTR_LABEL_DUMP=FILE` writes every real finding;
//! `BOOKTR_LABEL_SHOW=UNIT` prints a unit's texts.

#[path = "../tests/it/labelled/mod.rs"]
mod labelled;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use booktr::book::segment::{BlockKind, top_level_blocks};
use booktr::qa::{self, Severity};
use serde_json::json;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn main() {
    let pairs = labelled::pairs();
    let (scores, wrong) = labelled::score(&pairs);
    let bad = pairs.iter().filter(|p| p.expected_check.is_some()).count();
    println!(
        "SYNTHETIC labelled set (pairs written for the checks): {} pairs ({bad} faulty, {} faithful)",
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
    let real = real_part();
    let multilingual = multilingual_part();
    let out = json!({
        "multilingual": multilingual,
        "pairs": pairs.len(),
        "faulty": bad,
        "checks": checks,
        "wrong": wrong,
        "corpus_zh_against_en": corpus,
        "real": real,
    });
    let dir = Path::new(MANIFEST).join("validation/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("qa_labelled.json");
    std::fs::write(&path, serde_json::to_string_pretty(&out).unwrap() + "\n").unwrap();
    println!("wrote {}", path.display());
}

/// The real part (`labelled::real`): precision and recall of `untranslated` errors and of
/// `untranslated_word` findings (every severity, `real::SCORED_AT_EVERY_SEVERITY`) on real
/// model answers and on the human zh edition, per group
/// of sets, against the labels read by a person; the warnings, the other
/// checks' error counts (not labelled), and every false alarm, miss and unlabelled error.
/// With `BOOKTR_LABEL_DUMP=<file>`, every finding of the two checks is written there as JSON
/// lines with its sentence, and every unit's source and target to `<file>.units` (for
/// labelling: the files hold corpus text, keep them out of the repository).
fn real_part() -> serde_json::Value {
    use labelled::real;
    let mut units = real::recorded_sets();
    let mut skipped = Vec::new();
    match real::corpus_set() {
        Ok(u) => units.extend(u),
        Err(e) => skipped.push(format!("1.5b-corpus: {e}")),
    }
    let human = match real::human_set() {
        Ok(u) => u,
        Err(e) => {
            skipped.push(format!("human-zh: {e}"));
            Vec::new()
        }
    };
    for s in &skipped {
        println!("real part: skipped {s}");
    }
    let labels = real::labels();
    let mut found = real::findings(&real::context(&units), &units);
    found.extend(real::findings(&real::context(&human), &human));
    if let Ok(unit) = std::env::var("BOOKTR_LABEL_SHOW") {
        for u in units.iter().chain(&human).filter(|u| u.unit == unit) {
            println!(
                "{} {}\n--- source\n{}\n--- target\n{}",
                u.set, u.unit, u.source, u.target
            );
        }
    }
    if let Ok(path) = std::env::var("BOOKTR_LABEL_DUMP") {
        let all: Vec<&real::RealUnit> = units.iter().chain(&human).collect();
        let mut lines = String::new();
        for f in &found {
            let u = all
                .iter()
                .find(|u| u.unit == f.unit && u.set == f.set)
                .unwrap();
            let (s, e) = f.finding.span.unwrap_or((0, 0));
            let context: String = u
                .target
                .chars()
                .skip(s.saturating_sub(60))
                .take(e - s + 120)
                .collect();
            lines.push_str(&serde_json::to_string(&json!({"set": f.set, "unit": f.unit, "check": f.finding.check, "severity": f.finding.severity, "at": f.at, "message": f.finding.message, "context": context})).unwrap());
            lines.push('\n');
        }
        std::fs::write(&path, lines).unwrap();
        let units_dump: String = all
            .iter()
            .map(|u| {
                serde_json::to_string(
                    &json!({"set": u.set, "unit": u.unit, "source": u.source, "target": u.target}),
                )
                .unwrap()
                    + "\n"
            })
            .collect();
        std::fs::write(format!("{path}.units"), units_dump).unwrap();
        println!("wrote every finding to {path}");
    }
    let groups: [(&str, &[&str]); 3] = [
        (
            "REAL 1.5B answers",
            &["1.5b-sample", "1.5b-tiny", "1.5b-corpus"],
        ),
        ("REAL human zh edition", &["human-zh"]),
        (
            "REAL all",
            &["1.5b-sample", "1.5b-tiny", "1.5b-corpus", "human-zh"],
        ),
    ];
    let mut out = serde_json::Map::new();
    let count = |set: &str| units.iter().chain(&human).filter(|u| u.set == set).count();
    for (name, sets) in groups {
        let n: usize = sets.iter().map(|s| count(s)).sum();
        let (scores, lines) = real::score(&found, &labels, sets);
        println!(
            "{name}: {n} units ({})",
            sets.iter()
                .map(|s| format!("{s} {}", count(s)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!(
            "{:<18} {:>4} {:>4} {:>4} {:>10} {:>8} {:>9} {:>7}",
            "check", "tp", "fp", "fn", "unlabelled", "warnings", "precision", "recall"
        );
        let mut checks = serde_json::Map::new();
        for (c, s) in &scores {
            println!(
                "{c:<18} {:>4} {:>4} {:>4} {:>10} {:>8} {:>9.3} {:>7.3}",
                s.tp,
                s.fp,
                s.fn_,
                s.unlabelled,
                s.warnings,
                s.precision(),
                s.recall()
            );
            checks.insert(c.clone(), json!({"tp": s.tp, "fp": s.fp, "fn": s.fn_, "unlabelled": s.unlabelled, "warnings": s.warnings, "scored_at_every_severity": real::SCORED_AT_EVERY_SEVERITY.contains(&c.as_str()), "precision": s.precision(), "recall": s.recall(), "error_tp": s.error_tp, "error_fp": s.error_fp}));
        }
        if name != "REAL all" {
            for l in &lines {
                println!("  {}", booktr::util::excerpt(l, 240));
            }
        }
        out.insert(
            name.to_string(),
            json!({"units": n, "checks": checks, "wrong": lines}),
        );
    }
    // The share of source-language letters (`untranslated::source_share`) on translations an
    // editor would pass and on those with a block or sentence labelled left in English: the
    // figures `untranslated::SHARE_WARNING` is set from.
    let faulty: std::collections::HashSet<(&str, &str)> = labels
        .iter()
        .filter(|l| l.fault && l.check == "untranslated")
        .map(|l| (l.set.as_str(), l.unit.as_str()))
        .collect();
    let pct = |v: &mut Vec<f64>| -> serde_json::Value {
        v.sort_by(f64::total_cmp);
        let at = |q: f64| {
            v.get(((v.len() as f64 - 1.0) * q).round() as usize)
                .copied()
        };
        json!({"n": v.len(), "p50": at(0.5), "p90": at(0.9), "p95": at(0.95), "p99": at(0.99), "max": v.last()})
    };
    let mut shares = serde_json::Map::new();
    for (name, set) in [("1.5B answers", &units), ("human zh edition", &human)] {
        let ctx = real::context(set);
        let (mut clean, mut bad) = (Vec::new(), Vec::new());
        for u in set.iter() {
            if let Some(x) = qa::unit::untranslated::source_share(&ctx, &u.source, &u.target) {
                if faulty.contains(&(u.set, u.unit.as_str())) {
                    bad.push(x);
                } else {
                    clean.push(x);
                }
            }
        }
        let (c, b) = (pct(&mut clean), pct(&mut bad));
        println!(
            "{name}: source-language share, units without a leftover block or sentence: {c}; with one: {b}"
        );
        shares.insert(
            name.into(),
            json!({"without_leftover": c, "with_leftover": b}),
        );
    }
    let mut good: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for p in labelled::pairs()
        .iter()
        .filter(|p| p.expected_check.is_none())
    {
        let ctx = qa::QaContext::new(
            &booktr::lang::Lang::parse("en"),
            &booktr::lang::Lang::parse(&p.lang),
            &booktr::termbase::Termbase::default(),
        );
        if let Some(x) = qa::unit::untranslated::source_share(&ctx, &p.source, &p.target) {
            good.entry(p.lang.clone()).or_default().push(x);
        }
    }
    for (lang, v) in &mut good {
        let d = pct(v);
        println!("synthetic faithful pairs, {lang}: source-language share {d}");
        shares.insert(format!("synthetic faithful {lang}"), d);
    }
    out.insert("source_share".into(), serde_json::Value::Object(shares));
    // How the convention rule (`KeptWords::is_convention`) measures a few words: blocks of
    // the translation keeping the word, and blocks of the source using it.
    for (name, set) in [("1.5B answers", &units), ("human zh edition", &human)] {
        let ctx = real::context(set);
        if let Some(k) = &ctx.kept_words {
            let words = [
                "token",
                "schema",
                "rollout",
                "prompt",
                "orchestration",
                "never",
                "glossary",
                "harness",
                "shell",
                "mode-seeking",
            ];
            println!(
                "{name}: kept / used blocks: {}",
                words
                    .iter()
                    .map(|w| format!(
                        "{w} {}/{}{}",
                        k.blocks(w),
                        k.source_blocks(w),
                        if k.is_convention(w) {
                            " (convention)"
                        } else {
                            ""
                        }
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    // The stray words the human edition keeps throughout (warnings, not scored).
    let mut kept: BTreeMap<String, usize> = BTreeMap::new();
    for f in found.iter().filter(|f| {
        f.set == "human-zh"
            && f.finding.check == "untranslated_word"
            && f.finding.severity == Severity::Warning
    }) {
        let w = f
            .finding
            .message
            .split('"')
            .nth(1)
            .unwrap_or("")
            .to_lowercase();
        *kept.entry(w).or_default() += 1;
    }
    let mut kept: Vec<(String, usize)> = kept.into_iter().collect();
    kept.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!(
        "human zh edition: untranslated_word warnings (words the edition keeps in many blocks): {}",
        kept.iter()
            .take(40)
            .map(|(w, n)| format!("{w} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.insert("human_kept_words".into(), json!(kept));
    out.insert("skipped".into(), json!(skipped));
    serde_json::Value::Object(out)
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
    // As `booktr validate` checks it: the stray words the edition keeps are tallied first.
    let ctx = labelled::real::context(&labelled::real::human_set().unwrap_or_default());
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

/// The multilingual real set (`labelled::multilingual`): for the development half and the
/// held-out half, error findings per 10,000 source words and labelled precision (Wilson 95 %
/// interval) per check and per language, and the recall of planted faults per kind. Without
/// the cache it prints how to fill it and is left out. `BOOKTR_MULTILINGUAL_DUMP=<file>` writes
/// every error finding with its context, for labelling (the file holds the projects' text:
/// keep it out of the repository); `BOOKTR_PLANT_PER_LANG` sets how many pairs of each
/// language get each kind of fault (default 12); `BOOKTR_PLANT_SHOW=<kind>` prints the planted
/// faults of that kind QA missed and `BOOKTR_SHOW_NORM=1` each group's paragraph length norm
/// (`qa::unit::alignment::ProseNorm`).
fn multilingual_part() -> serde_json::Value {
    use labelled::multilingual as ml;
    let (pairs, skipped) = match ml::load() {
        Ok(x) => x,
        Err(e) => {
            println!("MULTILINGUAL human translations: skipped, {e}");
            return json!({"skipped": e});
        }
    };
    let labels = ml::labels();
    let found = ml::findings(&pairs);
    if let Ok(path) = std::env::var("BOOKTR_MULTILINGUAL_DUMP") {
        let mut lines = String::new();
        for f in &found {
            let (s, e) = f.finding.span.unwrap_or((0, 0));
            let context: String = f
                .pair
                .target
                .chars()
                .skip(s.saturating_sub(80))
                .take(e - s + 160)
                .collect();
            lines.push_str(
                &serde_json::to_string(&json!({
                    "project": f.pair.project, "lang": f.pair.lang, "unit": f.pair.unit,
                    "held_out": f.pair.held_out, "check": f.finding.check, "at": f.at,
                    "message": f.finding.message, "source_excerpt": f.finding.source_excerpt,
                    "target_excerpt": f.finding.target_excerpt, "context": context,
                    "source": f.pair.source, "target": f.pair.target,
                }))
                .unwrap(),
            );
            lines.push('\n');
        }
        std::fs::write(&path, lines).unwrap();
        println!("wrote {} findings to {path}", found.len());
    }
    let per_lang: usize = std::env::var("BOOKTR_PLANT_PER_LANG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let mut halves = serde_json::Map::new();
    for (name, held_out) in [("development", false), ("held_out", true)] {
        let t = ml::table(&pairs, &found, &labels, held_out);
        let planted = ml::planted(&pairs, held_out, per_lang);
        println!(
            "MULTILINGUAL human translations, {name} half: {} pairs, {} source words, {} errors ({:.1} per 10k words)",
            pairs.iter().filter(|p| p.held_out == held_out).count(),
            t.words,
            t.total.errors,
            t.total.per_10k()
        );
        let show = |label: &str, c: &ml::Cell| {
            let precision = match c.precision() {
                Some((p, lo, hi)) => format!("{p:.2} [{lo:.2}, {hi:.2}]"),
                None => "-".into(),
            };
            println!(
                "  {label:<24} {:>6} {:>8.1} {:>4} {:>4} {:>5}  {precision}",
                c.errors,
                c.per_10k(),
                c.tp,
                c.fp,
                c.unlabelled
            );
        };
        println!(
            "  {:<24} {:>6} {:>8} {:>4} {:>4} {:>5}  precision [95 % interval]",
            "check", "errors", "per 10k", "tp", "fp", "unlab"
        );
        for (c, cell) in &t.by_check {
            show(c, cell);
        }
        println!(
            "  {:<24} {:>6} {:>8} {:>4} {:>4} {:>5}  precision [95 % interval]",
            "language", "errors", "per 10k", "tp", "fp", "unlab"
        );
        for (l, cell) in &t.by_lang {
            show(l, cell);
        }
        show("all", &t.total);
        println!(
            "  planted faults (one per copy, into pairs QA passes clean): kind, planted, caught, recall"
        );
        for (k, (n, hit)) in &planted.by_kind {
            println!(
                "  {k:<24} {n:>5} {hit:>5} {:>7.3}",
                *hit as f64 / (*n).max(1) as f64
            );
        }
        halves.insert(name.into(), json!({"table": t, "planted": planted}));
    }
    json!({"skipped": skipped, "halves": halves, "labels": labels.len()})
}
