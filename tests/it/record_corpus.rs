//! Records the real model's first translations of a subset of the units of the corpus's
//! chapters 1–2 into `tests/fixtures/real-llm/corpus-ch01-02.jsonl`, the input of
//! `cargo bench --bench repair` and of `tests/it/repair_corpus.rs` (issue 18).
//!
//! Skipped (with a printed reason) unless `BOOKTR_RECORD_CORPUS=1` and `BOOKTR_REAL_LLM_URL`
//! are set:
//!
//! ```sh
//! BOOKTR_RECORD_CORPUS=1 BOOKTR_REAL_LLM_URL=http://127.0.0.1:8090/v1 \
//!   cargo test --test it record_corpus:: -- --nocapture
//! ```
//!
//! Each request is the Translation agent's first-round request exactly as
//! `campaign::ops::jobs::prepare` builds it for the campaign `campaigns/ai-agent-book-ch1-2.toml`
//! (segmented with [`corpus_replay::MAX_UNIT_CHARS`]): the system prompt with the built-in
//! guide, the house-style glossary entries occurring in the unit, the neighbour context, the
//! HTML comments masked, and `max_tokens` the campaign's per-unit bound; the book brief is
//! empty (it is written by the Glossary agent during a run, which this recording does not
//! make). The answer is cleaned up as the campaign does (`translation::postprocess`, then the
//! mask's restore) and stored with the unit's id and source sha256, never the source text.

use crate::support;

use std::io::Write;

use booktr::agents::{bounds, mask, translation};
use booktr::book::segment::Unit;
use booktr::campaign::Campaign;
use booktr::config::Overrides;
use booktr::llm::{Provider, ProviderKind};
use support::corpus_replay::{self, MAX_UNIT_CHARS, Record, Settings};

/// The switch that makes [`record_corpus_answers`] record.
const RECORD_VAR: &str = "BOOKTR_RECORD_CORPUS";
/// How many units are recorded at most (about 15 minutes of the 1.5B model on an idle 2-core
/// machine; see [`budget_s`] for a loaded one).
const UNITS: usize = 12;
/// Completion cap of the provider (`[provider] max_tokens`): a runaway answer costs at most
/// this many tokens (about 2 minutes at 10 tokens/s).
const MAX_TOKENS: u32 = 1_200;

/// A Markdown feature: its name and a test on a unit's source.
type Feature = (&'static str, fn(&str) -> bool);

/// The Markdown features the subset must cover.
fn features() -> Vec<Feature> {
    vec![
        ("code block", |t| t.contains("```")),
        ("footnote", |t| t.contains("[^")),
        ("math", |t| t.contains('$')),
        ("heading", |t| t.lines().any(|l| l.starts_with('#'))),
        ("link", |t| t.contains("](")),
        ("inline code", |t| {
            t.lines().any(|l| !l.starts_with("```") && l.contains('`'))
        }),
        ("html", |t| t.contains("<") && t.contains(">")),
        ("list", |t| {
            t.lines()
                .any(|l| l.starts_with("- ") || l.starts_with("* ") || l.starts_with("1. "))
        }),
        ("table", |t| t.lines().any(|l| l.starts_with('|'))),
    ]
}

/// Shortest unit source considered, in characters (a lone heading teaches repair nothing).
const MIN_CHARS: usize = 120;
/// Longest unit source considered, in characters: a block longer than `max_unit_chars` (a long
/// code block or formula) is one unit, and its answer would cost 10+ minutes on a loaded
/// machine.
const MAX_CHARS: usize = 450;

/// The subset: round-robin over [`features`] and the two chapters, each time the SHORTEST
/// prose unit of at least [`MIN_CHARS`] not yet taken that has the feature (short answers keep
/// the recording within the time budget), until [`UNITS`] (deterministic for a given corpus).
fn subset(c: &Campaign) -> Vec<&Unit> {
    let mut picked: Vec<&Unit> = Vec::new();
    let chapters: Vec<String> = c.chapters.iter().map(|ch| ch.key.clone()).collect();
    'outer: for _pass in 0..4 {
        for (_, has) in features() {
            for ch in &chapters {
                if picked.len() >= UNITS {
                    break 'outer;
                }
                if let Some(u) = c
                    .prose_units()
                    .filter(|u| {
                        &u.chapter == ch
                            && (MIN_CHARS..=MAX_CHARS).contains(&u.chars)
                            && !picked.iter().any(|p| p.id == u.id)
                            && has(c.source_text(u))
                    })
                    .min_by_key(|u| u.chars)
                {
                    picked.push(u);
                }
            }
        }
    }
    picked
}

/// Seconds after which no further unit is started (`BOOKTR_RECORD_BUDGET_S`, default 900): on
/// a loaded machine the recording keeps the units it finished.
fn budget_s() -> u64 {
    std::env::var("BOOKTR_RECORD_BUDGET_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(900)
}

#[test]
fn record_corpus_answers() {
    if std::env::var(RECORD_VAR).map_or(true, |v| v != "1") {
        eprintln!("skipped: set {RECORD_VAR}=1 and BOOKTR_REAL_LLM_URL to record");
        return;
    }
    record(false);
}

/// The switch that makes [`record_all_corpus_answers`] record.
const RECORD_ALL_VAR: &str = "BOOKTR_RECORD_CORPUS_ALL";

/// Records EVERY prose unit of chapters 1–2 (prose, lists, tables, headings, code with
/// comments: whatever the campaign sends to the Translation agent) into
/// [`corpus_replay::all_fixture_file`], the real part of the labelled QA set
/// (`tests/fixtures/qa-labelled/real-corpus-ch01-02.labels.json`, `benches/qa_labelled.rs`).
///
/// Append-only and resumable: a unit already in the file (same id and source sha256) is not
/// asked again, and each answer is appended and flushed as soon as it arrives, so an
/// interrupted recording loses at most the unit in flight. The units are asked in a spread
/// order ([`spread`]) so that a partial recording still covers both chapters from start to end.
///
/// ```sh
/// BOOKTR_RECORD_CORPUS_ALL=1 BOOKTR_REAL_LLM_URL=http://127.0.0.1:8097/v1 BOOKTR_RECORD_BUDGET_S=36000 \
///   nice -n 10 cargo test --test it record_corpus::record_all_corpus_answers -- --nocapture
/// ```
#[test]
fn record_all_corpus_answers() {
    if std::env::var(RECORD_ALL_VAR).map_or(true, |v| v != "1") {
        eprintln!("skipped: set {RECORD_ALL_VAR}=1 and BOOKTR_REAL_LLM_URL to record");
        return;
    }
    record(true);
}

/// The units in an order that spreads over the book: unit `i` of `n` is asked at rank
/// `(i * STRIDE) mod n`-th position's inverse, i.e. the sequence visits indices 0, s, 2s, …
/// (mod n) for a stride `s` coprime with `n` near `n / φ`, so any prefix of the sequence is
/// spread evenly over both chapters.
fn spread<T: Copy>(units: &[T]) -> Vec<T> {
    let n = units.len();
    if n < 3 {
        return units.to_vec();
    }
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let mut s = ((n as f64) / 1.618_033_988_75) as usize;
    while gcd(s, n) != 1 {
        s += 1;
    }
    (0..n).map(|k| units[(k * s) % n]).collect()
}

fn record(all: bool) {
    let Some(url) = support::real_llm::live_url("record_corpus_answers") else {
        return;
    };
    let overrides = Overrides {
        provider: Some(ProviderKind::Openai),
        model: Some("qwen2.5-instruct".into()),
        base_url: Some(url.clone()),
        concurrency: Some(1),
    };
    let mut c = match corpus_replay::campaign(MAX_UNIT_CHARS, &overrides) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    c.plan.provider.temperature = Some(0.0);
    c.plan.provider.max_tokens = Some(MAX_TOKENS);
    c.plan.provider.request_timeout_s = 900;
    c.plan.provider.stream_idle_timeout_s = 600;
    c.plan.provider.max_attempts = 2;
    let provider = Provider::connect(&c.plan.provider).unwrap();
    let model = model_file(&url);
    let units = if all {
        spread(&c.prose_units().collect::<Vec<_>>())
    } else {
        subset(&c)
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let path = if all {
        corpus_replay::all_fixture_file()
    } else {
        corpus_replay::fixture_file()
    };
    // Resumable: units already in the fixture (same id and source sha256) are kept and not
    // asked again. The subset's file is rewritten without the others; the full recording only
    // ever appends.
    let kept: Vec<Record> = corpus_replay::load_records(&path)
        .unwrap_or_default()
        .into_iter()
        .filter(|r| {
            units
                .iter()
                .any(|u| u.id == r.unit && u.sha256 == r.source_sha256)
        })
        .collect();
    let mut file = if all {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap()
    } else {
        let mut f = std::fs::File::create(&path).unwrap();
        for r in &kept {
            writeln!(f, "{}", serde_json::to_string(r).unwrap()).unwrap();
        }
        f
    };
    let t0 = std::time::Instant::now();
    let budget = budget_s();
    eprintln!(
        "recording {} units: {}",
        units.len(),
        units
            .iter()
            .map(|u| format!("{} ({} chars)", u.id, u.chars))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for u in units {
        if kept.iter().any(|r| r.unit == u.id) {
            eprintln!("{}: already recorded", u.id);
            continue;
        }
        if t0.elapsed().as_secs() >= budget {
            eprintln!("time budget of {budget} s spent: {} not recorded", u.id);
            continue;
        }
        let text = c.source_text(u);
        let entries = c.prompt_entries(&c.house, text);
        let masked = mask::mask(text);
        let context = c.context_for(u).map(|ctx| mask::strip_comments(&ctx));
        let mut request = translation::build_request_with_context(
            &c.translation_setup_with(String::new()),
            &entries,
            &masked.text,
            None,
            context.as_deref(),
        );
        masked.instruct(&mut request);
        request.max_tokens = Some(bounds::capped(
            bounds::translation_of(&masked.text, &c.plan.source_lang, &c.plan.target_lang),
            c.plan.provider.max_tokens,
        ));
        let started = std::time::Instant::now();
        let answer = match rt.block_on(provider.complete(&request)) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("{}: request failed: {e}", u.id);
                continue;
            }
        };
        let (clean, _) = translation::postprocess(&masked.text, &answer.content);
        let clean = match masked.restore(&clean) {
            Ok(t) => t,
            Err(e) => {
                // The campaign fails such an attempt; the raw clean-up is kept for the bench.
                eprintln!("{}: mask restore failed ({e}); kept unrestored", u.id);
                clean
            }
        };
        let rec = Record {
            chapter: u.chapter.clone(),
            unit: u.id.clone(),
            source_sha256: u.sha256.clone(),
            model: model.clone(),
            settings: Settings {
                target: c.plan.target_lang.code.clone(),
                max_unit_chars: MAX_UNIT_CHARS,
                temperature: c.plan.provider.temperature,
                max_tokens: request.max_tokens,
                glossary_entries: entries.len(),
                context: context.as_deref().is_some_and(|s| !s.trim().is_empty()),
            },
            answer: clean,
            finish_reason: answer.finish_reason.clone(),
            completion_tokens: answer.usage.completion_tokens,
        };
        writeln!(file, "{}", serde_json::to_string(&rec).unwrap()).unwrap();
        file.flush().unwrap();
        eprintln!(
            "{}: {} chars, {} tokens, {:?} in {:.0?} (total {:.0?})",
            u.id,
            u.chars,
            answer.usage.completion_tokens,
            answer.finish_reason,
            started.elapsed(),
            t0.elapsed()
        );
    }
    eprintln!("wrote {}", path.display());
}

/// The model's file name as the server names it (`/v1/models`), without directories; the
/// requested name when the server cannot be asked.
fn model_file(url: &str) -> String {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let id = rt.block_on(async {
        let v: serde_json::Value = crate::support::http_client()
            .get(format!("{url}/models"))
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        v["data"][0]["id"].as_str().map(str::to_string)
    });
    let id = id.unwrap_or_else(|| "qwen2.5-instruct".into());
    id.rsplit(['/', '\\']).next().unwrap_or(&id).to_string()
}
