//! The `scale10` benchmark (issue 15, "flat per-unit overhead" and "linear local cost"): the
//! corpus book at 1× and at 10×, on the pseudo (rehearsal) provider, concurrency 8.
//!
//! The 10× book is built in a temporary folder from the corpus (`WHOLE`, 11 files): ten copies,
//! copy `k` in files `b<k>-<name>.md` (so chapter keys differ), each made distinct by a
//! per-copy word (`Alpha` … `Juliet`) put before every heading's text and at the start of every
//! paragraph and list item outside code blocks, so that no unit of one copy has the bytes (and
//! the fingerprint) of a unit of another and nothing is reused between copies. The 1× book is
//! copy 0 alone, built the same way, so the two runs differ in size only.
//!
//! Figures, each with its target:
//!
//! - **per-unit prompt overhead by agent**: Translation, per first translation (round 0), the
//!   prompt tokens the provider reported minus the unit's own tokens and its neighbour context
//!   ([`booktr::campaign::Campaign::context_for`]); Proofreading, per reviewed unit, the batch's
//!   prompt tokens minus its units' source and translation tokens, over its units; Glossary, per
//!   term batch; Manager, per decision. Target: 10× ≤ 1.1 × 1× for each;
//! - **booktr CPU time** (user + sys of the child, `wait4` rusage): 10× ≤ 10 × 1×;
//! - **peak RSS** of the child: 10× ≤ 2 × 1×;
//! - **Manager context** peak (`manager_context_peak_tokens` of the run summary): 10× ≤ 1.1 × 1×
//!   (flat).
//!
//! Run it alone with `cargo bench --bench campaign -- scale10`; it writes
//! `validation/bench/scale10.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use booktr::campaign::Campaign;
use booktr::campaign::core::store::{Output, ResultFile};
use serde_json::{Value, json};

use super::{Ctx, Report, Run, Spec, Target, WHOLE, fmt_f, run_campaign, table};

/// The word that makes copy `k` distinct.
const COPY_WORDS: [&str; 10] = [
    "Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet",
];

/// Copy `word` of a chapter: `word` before every heading's text and at the start of every
/// paragraph and list item outside fenced code blocks and front matter; everything else is
/// byte-identical.
fn distinct_copy(text: &str, word: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 20);
    let mut fence: Option<String> = None;
    let mut previous_blank = true;
    let mut front_matter = text.starts_with("---\n");
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if front_matter {
            out.push_str(line);
            if n > 0 && line.trim_end() == "---" {
                front_matter = false;
            }
            continue;
        }
        if let Some(f) = &fence {
            if trimmed.starts_with(f.as_str()) {
                fence = None;
            }
            out.push_str(line);
            previous_blank = false;
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(
                trimmed
                    .chars()
                    .take_while(|c| *c == '`' || *c == '~')
                    .collect(),
            );
            out.push_str(line);
            previous_blank = false;
            continue;
        }
        let indent = &line[..line.len() - trimmed.len()];
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        let marker = ["- ", "* ", "+ "]
            .iter()
            .find(|m| trimmed.starts_with(**m))
            .map(|m| m.len());
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            out.push_str(&format!(
                "{indent}{} {word}{}",
                &trimmed[..hashes],
                &trimmed[hashes..]
            ));
        } else if let Some(m) = marker.filter(|_| indent.len() < 4) {
            out.push_str(&format!(
                "{indent}{}{word} {}",
                &trimmed[..m],
                &trimmed[m..]
            ));
        } else if previous_blank
            && indent.is_empty()
            && trimmed.starts_with(|c: char| c.is_alphabetic())
        {
            out.push_str(&format!("{word} {line}"));
        } else {
            out.push_str(line);
        }
        previous_blank = line.trim().is_empty();
    }
    out
}

/// Writes copies `0..copies` of the corpus chapters into `dir` and returns their paths in book
/// order (copy 0's chapters first).
fn build_book(corpus_chapters: &[PathBuf], dir: &Path, copies: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (k, word) in COPY_WORDS.iter().enumerate().take(copies) {
        for src in corpus_chapters {
            let name = src.file_name().unwrap().to_string_lossy();
            let path = dir.join(format!("b{k}-{name}"));
            if !path.exists() {
                let text = std::fs::read_to_string(src).unwrap();
                std::fs::write(&path, distinct_copy(&text, word)).unwrap();
            }
            out.push(path);
        }
    }
    out
}

/// Per-agent prompt overhead of a finished run (see the module docs), from its result files.
#[derive(Debug, Default)]
struct Overhead {
    /// Translation: mean prompt tokens per first translation, minus unit and context tokens.
    translation: f64,
    translation_calls: usize,
    /// Proofreading: mean prompt tokens per reviewed unit beyond its source and translation.
    proofreading: f64,
    proofread_units: usize,
    /// Glossary: mean prompt tokens per term batch (the brief excluded).
    glossary: f64,
    glossary_calls: usize,
    /// The brief request's prompt tokens (one call; its outline is capped by the budget).
    brief: u64,
    /// Manager: mean prompt tokens per decision.
    manager: f64,
    manager_calls: usize,
}

fn results_of(state: &Path) -> Vec<ResultFile> {
    let mut out = Vec::new();
    let mut stack = vec![state.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json")
                && p.components().any(|c| c.as_os_str() == "results")
                && let Ok(r) = serde_json::from_slice::<ResultFile>(&std::fs::read(&p).unwrap())
            {
                out.push(r);
            }
        }
    }
    out
}

fn overhead(run: &Run) -> Overhead {
    let campaign_file = run.dir.path().join("campaign.toml");
    let plan = booktr::config::Plan::load(&campaign_file, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let c = Campaign::load(plan).unwrap_or_else(|e| panic!("{e}"));
    let results = results_of(&run.state_dir());
    // Kept texts of each (unit, round), for the proofreading payload.
    let mut texts: BTreeMap<(String, u32), String> = BTreeMap::new();
    let mut o = Overhead::default();
    let (mut tr_sum, mut gl_sum, mut ma_sum) = (0i64, 0u64, 0u64);
    for r in &results {
        if let (Some(unit), Output::Translation { round, text, .. }) = (&r.unit, &r.output) {
            texts.insert((unit.clone(), *round), text.clone());
        }
    }
    let (mut pr_sum, mut pr_units) = (0i64, 0usize);
    for r in &results {
        match &r.output {
            Output::Translation { round: 0, .. } if r.requests > 0 => {
                let Some(u) = r.unit.as_deref().and_then(|id| c.unit(id)) else {
                    continue;
                };
                let unit = booktr::tokens::count(c.source_text(u)) as i64;
                let context = c.context_for(u).map_or(0, |t| {
                    booktr::tokens::count(&booktr::agents::mask::strip_comments(&t))
                }) as i64;
                tr_sum += r.usage.prompt_tokens as i64 - unit - context;
                o.translation_calls += 1;
            }
            Output::Proofread { round, units, .. } => {
                let payload: i64 = units
                    .iter()
                    .map(|id| {
                        let src = c
                            .unit(id)
                            .map_or(0, |u| booktr::tokens::count(c.source_text(u)));
                        let tgt = texts
                            .get(&(id.clone(), *round))
                            .map_or(0, |t| booktr::tokens::count(t));
                        (src + tgt) as i64
                    })
                    .sum();
                pr_sum += r.usage.prompt_tokens as i64 - payload;
                pr_units += units.len();
            }
            Output::GlossaryBatch { .. } => {
                gl_sum += r.usage.prompt_tokens;
                o.glossary_calls += 1;
            }
            Output::Brief { .. } => o.brief = r.usage.prompt_tokens,
            Output::Decision { .. } => {
                ma_sum += r.usage.prompt_tokens;
                o.manager_calls += 1;
            }
            _ => {}
        }
    }
    let mean = |sum: f64, n: usize| if n == 0 { f64::NAN } else { sum / n as f64 };
    o.translation = mean(tr_sum as f64, o.translation_calls);
    o.proofreading = mean(pr_sum as f64, pr_units);
    o.proofread_units = pr_units;
    o.glossary = mean(gl_sum as f64, o.glossary_calls);
    o.manager = mean(ma_sum as f64, o.manager_calls);
    o
}

/// The benchmark (see the module docs).
pub fn scale10(ctx: &Ctx) -> Option<Report> {
    let corpus = ctx.chapters("scale10", WHOLE)?;
    let book = tempfile::tempdir().unwrap();
    let one = build_book(&corpus, book.path(), 1);
    let ten = build_book(&corpus, book.path(), 10);
    let bytes = |files: &[PathBuf]| -> u64 {
        files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum()
    };
    let mut runs = Vec::new();
    for (label, files) in [("1x", &one), ("10x", &ten)] {
        println!(
            "scale10: running the {label} book ({} chapters)…",
            files.len()
        );
        let run = run_campaign(&Spec::pseudo(
            &format!("scale-{label}"),
            files,
            "concurrency = 8\n",
        ));
        let o = overhead(&run);
        runs.push((label, files.len(), bytes(files), run, o));
    }
    let (a, b) = (&runs[0], &runs[1]);
    let cpu = |r: &Run| r.cpu_user + r.cpu_sys;
    let peak = |r: &Run| {
        r.summary["manager_context_peak_tokens"]
            .as_f64()
            .unwrap_or(f64::NAN)
    };
    let ratio = |x: f64, y: f64| y / x;
    let mut rows = Vec::new();
    let mut figs = serde_json::Map::new();
    for (label, chapters, size, run, o) in &runs {
        rows.push(vec![
            label.to_string(),
            run.summary["status"].as_str().unwrap_or("?").to_string(),
            format!(
                "{chapters} / {:.1} MB / {} units",
                *size as f64 / 1e6,
                run.units("total")
            ),
            format!("{:.0} ({} calls)", o.translation, o.translation_calls),
            format!("{:.0} ({} units)", o.proofreading, o.proofread_units),
            format!("{:.0} ({} calls)", o.glossary, o.glossary_calls),
            format!("{:.0} ({} calls)", o.manager, o.manager_calls),
            o.brief.to_string(),
            format!(
                "{:.2} + {:.2} = {:.2} s",
                run.cpu_user,
                run.cpu_sys,
                cpu(run)
            ),
            format!("{:.1} MB", run.max_rss as f64 / 1e6),
            format!("{:.1} s", run.wall.as_secs_f64()),
            fmt_f(peak(run)),
        ]);
        figs.insert(
            label.to_string(),
            json!({"status": run.summary["status"], "chapters": chapters, "source_bytes": size,
                "units": run.summary["units"], "usage": run.summary["usage"],
                "overhead_tokens": {"translation_per_unit": o.translation,
                    "translation_calls": o.translation_calls,
                    "proofreading_per_unit": o.proofreading, "proofread_units": o.proofread_units,
                    "glossary_per_batch": o.glossary, "glossary_calls": o.glossary_calls,
                    "brief_prompt": o.brief,
                    "manager_per_decision": o.manager, "manager_calls": o.manager_calls},
                "cpu_user_s": run.cpu_user, "cpu_sys_s": run.cpu_sys, "cpu_s": cpu(run),
                "max_rss_bytes": run.max_rss, "wall_s": run.wall.as_secs_f64(),
                "manager_context_peak_tokens": run.summary["manager_context_peak_tokens"]}),
        );
    }
    let targets = vec![
        Target::at_most(
            "Translation prompt overhead per unit, 10x / 1x",
            ratio(a.4.translation, b.4.translation),
            1.1,
        ),
        Target::at_most(
            "Proofreading prompt overhead per reviewed unit, 10x / 1x",
            ratio(a.4.proofreading, b.4.proofreading),
            1.1,
        ),
        Target::at_most(
            "Glossary prompt tokens per term batch, 10x / 1x",
            ratio(a.4.glossary, b.4.glossary),
            1.1,
        ),
        Target::at_most(
            "Manager prompt tokens per decision, 10x / 1x",
            ratio(a.4.manager, b.4.manager),
            1.1,
        ),
        Target::at_most(
            "booktr CPU time (user + sys), 10x / 1x",
            ratio(cpu(&a.3), cpu(&b.3)),
            10.0,
        ),
        Target::at_most(
            "peak RSS, 10x / 1x",
            ratio(a.3.max_rss as f64, b.3.max_rss as f64),
            2.0,
        ),
        Target::at_most(
            "Manager context peak, 10x / 1x",
            ratio(peak(&a.3), peak(&b.3)),
            1.1,
        ),
    ];
    // The figures depend on the build: say which one measured them (`cargo bench` builds the
    // `bench` profile, which inherits `release`; `cargo test --benches` or `--profile dev` do not).
    let profile = if cfg!(debug_assertions) {
        "dev (unoptimised: CPU figures are not the release ones)"
    } else {
        "release"
    };
    println!("scale10: measured with the booktr binary of the {profile} profile");
    figs.insert("profile".into(), json!(profile));
    let mut md = format!("Build profile of the measured `booktr` binary: {profile}.\n\n");
    md.push_str(
        "The corpus book at 1× (copy 0) and 10× (ten distinct copies: a per-copy word before every heading, paragraph and list item), pseudo provider, concurrency 8. Prompt overhead in o200k_base tokens as the provider reported them: Translation per first translation minus the unit and its neighbour context; Proofreading per reviewed unit minus its source and translation; Glossary per term batch; Manager per decision; the brief's one request beside them. CPU and peak RSS are the `booktr` child's own (`wait4`).\n\n",
    );
    md.push_str(&table(
        &[
            "book",
            "status",
            "chapters / size / units",
            "translation overhead",
            "proofreading overhead",
            "glossary per batch",
            "manager per decision",
            "brief prompt",
            "CPU user + sys",
            "peak RSS",
            "wall",
            "Manager context peak",
        ],
        &rows,
    ));
    figs.insert(
        "ratios_10x_over_1x".into(),
        Value::Object(
            targets
                .iter()
                .map(|t| (t.what.clone(), json!(t.value)))
                .collect(),
        ),
    );
    Some(Report {
        markdown: md,
        figures: Value::Object(figs),
        targets,
    })
}
