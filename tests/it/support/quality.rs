//! Running the quality benchmark ([`booktr::experiment::quality`]) through the fake server,
//! shared by `cargo bench --bench quality` (which records against a real model or replays) and
//! the replay test `tests/it/quality.rs` (which checks that the recorded figures come out
//! again).
//!
//! Every arm's campaign points at the fake server, which either proxies to the real server and
//! keeps each answer ([`Mode::Record`], reusing the answers already recorded for the same
//! messages: arms that share requests with another, and a recording resumed after an
//! interruption, ask the model only what is new), replays the recorded answers
//! ([`Mode::Replay`]), or answers with the pseudo translator ([`Mode::Pseudo`], for developing
//! the benchmark without a model). The answers are stored in [`fixture_file`] keyed by a hash
//! of the request messages, with no source text (see [`super::recorded`]); the file is saved
//! after every arm and every 30 seconds while recording, and a complete recording (every arm
//! and the judge) keeps only the answers it used.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use booktr::experiment::quality::{self, ArmRun, Figures, QualityArm};
use serde_json::{Value, json};

use super::fake_llm::FakeServer;
use super::recorded::{Exchange, Fixtures, request_key};

/// The models the benchmark has recordings of, by the name `shared/real-llm/start.sh` takes:
/// the 1.5B (the model, the benchmark's default; its files have no suffix) and the
/// 0.5B (`-0.5b`).
pub const MODELS: &[&str] = &["1.5b", "0.5b"];

/// The model whose recording the benchmark records or replays: `BOOKTR_QUALITY_MODEL`, else
/// the 1.5B.
pub fn model() -> String {
    std::env::var("BOOKTR_QUALITY_MODEL")
        .ok()
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| MODELS[0].to_string())
}

/// `stem.ext` for the first model of [`MODELS`], `stem-<model>.ext` for another.
fn per_model(dir: &str, stem: &str, ext: &str, model: &str) -> PathBuf {
    let name = if model == MODELS[0] {
        format!("{stem}.{ext}")
    } else {
        format!("{stem}-{model}.{ext}")
    };
    Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(name)
}

/// The recorded answers of `model` (`tests/fixtures/quality/answers[-<model>].jsonl`).
pub fn fixture_file_for(model: &str) -> PathBuf {
    per_model("tests/fixtures/quality", "answers", "jsonl", model)
}

/// The figures of `model`'s recording (`validation/bench/quality[-<model>].json`).
pub fn figures_file_for(model: &str) -> PathBuf {
    per_model("validation/bench", "quality", "json", model)
}

/// The recorded answers of [`model`], or the file named by `BOOKTR_QUALITY_FIXTURE`.
pub fn fixture_file() -> PathBuf {
    match std::env::var("BOOKTR_QUALITY_FIXTURE") {
        Ok(p) if !p.trim().is_empty() => PathBuf::from(p.trim()),
        _ => fixture_file_for(&model()),
    }
}

/// The figures of [`model`]'s recording.
pub fn figures_file() -> PathBuf {
    figures_file_for(&model())
}

/// `glossaries/house-style.en-zh.csv`.
pub fn house_glossary() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("glossaries/house-style.en-zh.csv")
}

/// Where the answers come from.
#[derive(Debug, Clone)]
pub enum Mode {
    /// From [`fixture_file`]; a request without a recorded answer is a miss (HTTP 500).
    Replay,
    /// From the real server at `upstream` (`…/v1`), reusing recorded answers.
    Record { upstream: String },
    /// The fake server's pseudo translator (no model, nothing recorded).
    Pseudo,
}

/// What [`run`] ends with.
pub struct Outcome {
    pub figures: Figures,
    /// Wall time of each arm (and `judge`) in this process, in seconds.
    pub wall_s: BTreeMap<String, f64>,
    /// Model time of the judge's requests (seconds), when the server reported timings.
    pub judge_model_time_s: Option<f64>,
    /// Requests replay found no answer for.
    pub misses: Vec<String>,
    /// The model that answered (the recorded envelope's `model`), if any.
    pub model: Option<String>,
    /// Requests sent by each arm.
    pub requests: BTreeMap<String, usize>,
    /// Each arm's hypothesis per segment, and the segments' references (for the sacreBLEU
    /// check; never written to a file in the repository).
    pub hypotheses: BTreeMap<QualityArm, Vec<String>>,
    pub references: Vec<String>,
}

/// The model time llama.cpp reported for one answer (`timings.prompt_ms + predicted_ms` of its
/// last chunk with timings), in milliseconds.
pub fn model_ms(ex: &Exchange) -> Option<f64> {
    ex.events.iter().rev().find_map(|e| {
        let v: Value = serde_json::from_str(e).ok()?;
        let t = v.get("timings")?;
        Some(t["prompt_ms"].as_f64()? + t["predicted_ms"].as_f64()?)
    })
}

fn model_of(ex: &Exchange) -> Option<String> {
    ex.events.iter().find_map(|e| {
        let v: Value = serde_json::from_str(e).ok()?;
        v["model"]
            .as_str()
            .map(|m| m.rsplit('/').next().unwrap_or(m).to_string())
    })
}

/// The recorded exchanges so far: `known` updated with what this process recorded, each
/// preview cut to its agent: a preview's start of the last message would be corpus text.
fn merged(known: &Fixtures, fake: &FakeServer) -> Vec<Exchange> {
    let base = known
        .by_key
        .values()
        .map(|e| e.n)
        .max()
        .map_or(0, |n| n + 1);
    let mut by_key: BTreeMap<String, Exchange> = known
        .by_key
        .iter()
        .map(|(k, e)| (k.clone(), e.clone()))
        .collect();
    for mut e in fake.exchanges() {
        if !by_key.contains_key(&e.key) {
            e.n += base;
            by_key.insert(e.key.clone(), e);
        }
    }
    by_key
        .into_values()
        .map(|mut e| {
            if let Some((agent, _)) = e.preview.split_once(':') {
                e.preview = agent.to_string();
            }
            e
        })
        .collect()
}

/// Runs `arms` (which must include [`QualityArm::Conversation`]) and, with `judge`, the blinded
/// judge of the orchestration against the single pass, on the slice of the corpus at `corpus`,
/// and scores them.
pub fn run(corpus: &Path, mode: Mode, arms: &[QualityArm], judge: bool) -> Outcome {
    run_on(corpus, mode, arms, judge, &fixture_file())
}

/// [`run`] with the recorded answers in `file`.
pub fn run_on(corpus: &Path, mode: Mode, arms: &[QualityArm], judge: bool, file: &Path) -> Outcome {
    let slice = quality::build_slice(corpus).expect("the slice");
    let fake = FakeServer::start();
    let file = file.to_path_buf();
    let known = match &mode {
        Mode::Pseudo => Fixtures::default(),
        _ => Fixtures::load(&file).unwrap_or_else(|e| {
            assert!(
                matches!(mode, Mode::Record { .. }),
                "{e}: record it with `BOOKTR_RECORD_REAL_LLM=1 BOOKTR_REAL_LLM_URL=… cargo bench --bench quality`"
            );
            Fixtures::default()
        }),
    };
    match &mode {
        Mode::Replay => fake.replay(known.clone()),
        Mode::Record { upstream } => fake.proxy_reusing(upstream, known.clone()),
        Mode::Pseudo => {}
    }
    let recording = matches!(mode, Mode::Record { .. });
    let save = |fake: &FakeServer| {
        if recording {
            Fixtures::save(&file, &merged(&known, fake)).expect("saving the fixtures");
        }
    };
    let root = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let stop = AtomicBool::new(false);
    let mut runs: Vec<ArmRun> = Vec::new();
    let mut wall_s = BTreeMap::new();
    let mut requests = BTreeMap::new();
    let mut spans: BTreeMap<String, std::ops::Range<usize>> = BTreeMap::new();
    let mut verdicts = None;
    let orch_file = root.path().join("orchestration/campaign.toml");
    std::thread::scope(|scope| {
        if recording {
            scope.spawn(|| {
                let mut last = Instant::now();
                while !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(500));
                    if last.elapsed() >= Duration::from_secs(30) {
                        save(&fake);
                        last = Instant::now();
                    }
                }
            });
        }
        // The judge runs as soon as the single pass and the orchestration are done, before the
        // other ablations: a recording cut short by the time still has the judge.
        let mut judged = !judge;
        for &arm in arms {
            let dir = root.path().join(arm.as_str());
            let f = quality::write_campaign(&dir, &slice, &house_glossary(), arm, &fake.base_url)
                .expect("writing the campaign");
            let before = fake.requests().len();
            let started = Instant::now();
            eprintln!("quality: arm {} …", arm.as_str());
            let r = rt
                .block_on(quality::run_arm(&f, arm))
                .unwrap_or_else(|e| panic!("arm {}: {e:#}", arm.as_str()));
            let after = fake.requests().len();
            eprintln!(
                "quality: arm {} {} after {:.0} s ({} requests)",
                arm.as_str(),
                r.status,
                started.elapsed().as_secs_f64(),
                after - before
            );
            wall_s.insert(arm.as_str().to_string(), started.elapsed().as_secs_f64());
            requests.insert(arm.as_str().to_string(), after - before);
            spans.insert(arm.as_str().to_string(), before..after);
            runs.push(r);
            save(&fake);
            let get = |a| runs.iter().find(|r| r.arm == a);
            if !judged
                && let (Some(o), Some(s)) = (
                    get(QualityArm::Orchestration),
                    get(QualityArm::Conversation),
                )
            {
                judged = true;
                let before = fake.requests().len();
                let started = Instant::now();
                eprintln!("quality: judge …");
                let v = rt
                    .block_on(quality::run_judge(&orch_file, o, s))
                    .unwrap_or_else(|e| panic!("judge: {e:#}"));
                let after = fake.requests().len();
                eprintln!(
                    "quality: judge after {:.0} s ({} requests)",
                    started.elapsed().as_secs_f64(),
                    after - before
                );
                wall_s.insert("judge".into(), started.elapsed().as_secs_f64());
                requests.insert("judge".into(), after - before);
                spans.insert("judge".into(), before..after);
                verdicts = Some(v);
                save(&fake);
            }
        }
        stop.store(true, Ordering::SeqCst);
    });
    // A complete recording (every arm and the judge) keeps only the answers it used, so
    // answers to requests no longer sent (a changed prompt, an earlier slice) leave the file.
    if recording && judge && QualityArm::ALL.iter().all(|a| arms.contains(a)) {
        let used: BTreeSet<String> = fake
            .requests()
            .iter()
            .map(|r| request_key(&r.body))
            .collect();
        let kept: Vec<Exchange> = merged(&known, &fake)
            .into_iter()
            .filter(|e| used.contains(&e.key))
            .collect();
        Fixtures::save(&file, &kept).expect("saving the fixtures");
    }
    // Model time per arm from the recorded answers' timings (a replay has the same).
    let all: BTreeMap<String, Exchange> = merged(&known, &fake)
        .into_iter()
        .map(|e| (e.key.clone(), e))
        .collect();
    let reqs = fake.requests();
    let model_time = |span: &std::ops::Range<usize>| -> Option<f64> {
        let mut total = 0.0;
        for r in &reqs[span.clone()] {
            total += model_ms(all.get(&request_key(&r.body))?)?;
        }
        Some(total / 1000.0)
    };
    let mut model_time_s = BTreeMap::new();
    for r in &runs {
        if let Some(t) = model_time(&spans[r.arm.as_str()]) {
            model_time_s.insert(r.arm, t);
        }
    }
    let judge_model_time_s = spans.get("judge").and_then(model_time);
    let used: BTreeSet<String> = reqs.iter().map(|r| request_key(&r.body)).collect();
    let model = all
        .values()
        .filter(|e| used.contains(&e.key))
        .find_map(model_of);
    let base = root
        .path()
        .join(QualityArm::Conversation.as_str())
        .join("campaign.toml");
    let segs = quality::segments(&base, &slice).expect("the segments");
    let file_for_qa = if orch_file.exists() {
        &orch_file
    } else {
        &base
    };
    let figures = quality::score_arms(
        file_for_qa,
        &slice,
        &segs,
        &runs,
        &model_time_s,
        verdicts.as_ref(),
    )
    .expect("scoring");
    if let Some(dir) = std::env::var_os("BOOKTR_QUALITY_DUMP") {
        dump(Path::new(&dir), &runs, &segs, &reqs, &spans);
    }
    let hypotheses = runs
        .iter()
        .map(|r| {
            (
                r.arm,
                segs.iter()
                    .map(|s| quality::hypothesis(s, &r.texts))
                    .collect(),
            )
        })
        .collect();
    Outcome {
        hypotheses,
        references: segs.iter().map(|s| s.reference.clone()).collect(),
        figures,
        wall_s,
        judge_model_time_s,
        misses: fake.misses(),
        model,
        requests,
    }
}

/// The JSON written to [`figures_file`]: the figures, the README table, and how they were made.
pub fn to_json(o: &Outcome, mode: &Mode, recording_wall_s: Option<&Value>) -> Value {
    let wall: BTreeMap<String, f64> = match recording_wall_s {
        Some(v) => serde_json::from_value(v.clone()).unwrap_or_default(),
        None => o
            .wall_s
            .iter()
            .map(|(k, v)| (k.clone(), (v * 10.0).round() / 10.0))
            .collect(),
    };
    json!({
        "schema": 1,
        "what": format!("cargo bench --bench quality: booktr's orchestration against the single pass and five variants on a {:.1} KB slice of corpus chapters 1-2, scored with chrF++ (sacreBLEU CHRF(word_order=2)) against the human zh edition", o.figures.source_bytes as f64 / 1000.0),
        "model": o.model,
        "server": "llama.cpp (xllamacpp) from ../shared/real-llm, one slot, ctx 16384 (BOOKTR_REAL_LLM_CTX=16384: the single pass's conversation over the slice needs more than start.sh's 8192), on the shared 2-core machine",
        "fixture": fixture_file_for(&model()).strip_prefix(env!("CARGO_MANIFEST_DIR")).map(|p| p.display().to_string()).unwrap_or_default(),
        "made_by": match mode { Mode::Record { .. } => "record", Mode::Replay => "replay", Mode::Pseudo => "pseudo" },
        "bootstrap": format!("paired bootstrap over segments, {} resamples, seed {:#x}, 2.5th-97.5th percentiles", quality::RESAMPLES, quality::SEED),
        "requests": o.requests,
        "judge_model_time_s": o.judge_model_time_s.map(|s| (s * 10.0).round() / 10.0),
        "recording_wall_s": wall,
        "figures": o.figures,
        "table": quality::table(&o.figures, Some(&wall)),
    })
}

/// Writes what the benchmark saw into `dir` (`BOOKTR_QUALITY_DUMP`, for studying a run unit by
/// unit; it holds corpus text and model answers, so it belongs outside the repository):
/// `texts.json` (each arm's final text per unit, and each segment's reference and units) and
/// `requests.jsonl` (each request's arm, fixture key and messages, in arrival order).
fn dump(
    dir: &Path,
    runs: &[ArmRun],
    segs: &[quality::Segment],
    reqs: &[super::fake_llm::Recorded],
    spans: &BTreeMap<String, std::ops::Range<usize>>,
) {
    std::fs::create_dir_all(dir).expect("the dump folder");
    let texts = json!({
        "arms": runs.iter().map(|r| (r.arm.as_str(), json!({
            "status": r.status,
            "texts": r.texts,
            "changed_from_round0": r.changed_from_round0,
        }))).collect::<BTreeMap<_, _>>(),
        "segments": segs.iter().map(|s| json!({"chapter": s.chapter, "units": s.units, "reference": s.reference})).collect::<Vec<_>>(),
    });
    std::fs::write(
        dir.join("texts.json"),
        serde_json::to_string_pretty(&texts).unwrap(),
    )
    .expect("texts.json");
    let arm_of = |i: usize| {
        spans
            .iter()
            .find(|(_, r)| r.contains(&i))
            .map_or("?", |(a, _)| a.as_str())
    };
    let lines: Vec<String> = reqs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({
                "i": i,
                "arm": arm_of(i),
                "agent": format!("{:?}", r.agent),
                "key": request_key(&r.body),
                "messages": r.body["messages"],
            })
            .to_string()
        })
        .collect();
    std::fs::write(dir.join("requests.jsonl"), lines.join("\n") + "\n").expect("requests.jsonl");
}
