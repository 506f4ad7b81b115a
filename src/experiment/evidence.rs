//! `evidence.json`: what an experiment measured and whether it may be trusted.
//!
//! Written to `<report_dir>/<campaign>/<timestamp>/evidence.json` (with the default
//! `report_dir`, `<campaign>/validation/<campaign>/<UTC timestamp>/evidence.json`), with
//! `<report_dir>/latest.json` pointing to the newest. It holds:
//!
//! - source statistics (chapters, units, bytes, characters, images, code blocks, links);
//! - the metrics of each arm ([`super::metrics`]) and chrF against the reference translation;
//! - judge aggregates: dimension means per arm and preference counts over verified judgments,
//!   the unverified judgments counted apart, repairs, quotes found;
//! - provenance: the fingerprints of the three states and the sha256 of every checkpoint file
//!   (journals, configurations, manifests, result files), every output chapter and every
//!   judge receipt;
//! - the acceptance gates, each true or false with its reason ([`gates`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::judge::{DIMENSIONS, JudgeRun, Pair};
use super::metrics::{self, ArmInput, ArmMetrics};
use super::single_agent::SingleRun;
use super::{Arm, chrf};
use crate::agents::Agent;
use crate::campaign::Campaign;
use crate::campaign::core::state::AgentUsage;
use crate::campaign::core::store::{self, Event, Output};
use crate::campaign::core::{ConfigPrint, Manifest};
use crate::campaign::ops::runner::RunResult;

/// Version of the evidence layout.
pub const EVIDENCE_SCHEMA_VERSION: u32 = 1;

/// Shortest line of a translation looked for in the Manager context, in characters (shorter
/// lines, such as a translated heading word, are not a text body).
pub const MIN_BODY_LINE_CHARS: usize = 12;

/// Statistics of one source chapter.
#[derive(Debug, Clone, Serialize)]
pub struct ChapterStats {
    pub chapter: String,
    /// Relative to the campaign file.
    pub path: String,
    pub bytes: usize,
    /// Unicode scalar values.
    pub chars: usize,
    pub units: usize,
    pub units_to_translate: usize,
    pub images: usize,
    /// Fenced and indented code blocks.
    pub code_blocks: usize,
    pub links: usize,
}

/// Statistics of the source book.
#[derive(Debug, Clone, Serialize)]
pub struct SourceStats {
    pub chapters: usize,
    pub units: usize,
    pub units_to_translate: usize,
    pub bytes: usize,
    pub chars: usize,
    pub images: usize,
    pub code_blocks: usize,
    pub links: usize,
    pub per_chapter: Vec<ChapterStats>,
}

/// Preference counts, over verified judgments only ([`super::judge::verify`]).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Preferences {
    pub orchestration: usize,
    pub single_agent: usize,
    pub tie: usize,
    /// Judgments with an evidence quote not found in the text it cites: counted here, apart,
    /// and not as a preference for either arm.
    pub unverified: usize,
}

/// A judgment whose evidence did not verify.
#[derive(Debug, Clone, Serialize)]
pub struct UnverifiedJudgment {
    pub unit: String,
    /// Quotes found in the texts they cite, and all quotes.
    pub quotes_found: usize,
    pub quotes: usize,
    /// The first quote not found, as `path: quote` (at most 120 characters of the quote).
    pub first_missing: String,
}

/// Least share of judgments that must be verified for the `judgments_verified_80_percent`
/// gate, in percent (the gate's name says it: a gate passes only when its name is true). Our
/// own threshold (no external standard): with at least 80 % verified, the
/// preference counts and score means rest on at least four judgments in five, and a judge that
/// invents or paraphrases its evidence (the failure seen with a real model: 0 of 27 quotes
/// found) fails the gate.
pub const MIN_VERIFIED_PERCENT: usize = 80;

/// What the judge found, over all units judged.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeAggregates {
    pub model: String,
    /// Units both arms translated (each should have a judgment).
    pub units_expected: usize,
    pub units_judged: usize,
    /// Judgments whose first answer needed the schema repair.
    pub repaired: usize,
    /// Units whose judging failed in the last run, with the error.
    pub failed: BTreeMap<String, String>,
    /// Arm → dimension → mean score (1–5).
    pub means: BTreeMap<Arm, BTreeMap<String, f64>>,
    pub preferences: Preferences,
    /// How often each arm was shown as X (the alias order alternates unit by unit).
    pub shown_as_x: BTreeMap<Arm, usize>,
    /// Evidence quotes found in the texts they cite, of all quotes (recomputed from the texts
    /// judged with [`super::judge::verify`]).
    pub quotes_found: usize,
    pub quotes: usize,
    pub usage: AgentUsage,
    /// Judgments whose every quote was found; only these count in `preferences` (other than
    /// `unverified`) and `means`.
    pub verified: usize,
    /// Judgments with a quote not found (also `preferences.unverified`).
    pub unverified: usize,
    /// The unverified judgments, in book order.
    pub unverified_units: Vec<UnverifiedJudgment>,
}

/// chrF of one chapter.
#[derive(Debug, Clone, Serialize)]
pub struct ChrfChapter {
    pub chapter: String,
    /// The reference file, relative to the campaign file; `None` when there is none.
    pub reference: Option<String>,
    pub orchestration: Option<f64>,
    pub single_agent: Option<f64>,
}

/// chrF against the reference translation.
#[derive(Debug, Clone, Serialize)]
pub struct ChrfReport {
    pub definition: &'static str,
    pub reference_dir: String,
    pub per_chapter: Vec<ChrfChapter>,
    /// Corpus chrF over the chapters with a reference (statistics summed, then scored).
    pub orchestration: Option<f64>,
    pub single_agent: Option<f64>,
    /// The stateless loop's, over the same chapters.
    pub stateless_loop: Option<f64>,
}

/// One acceptance gate.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    pub name: &'static str,
    pub pass: bool,
    pub reason: String,
}

/// One hashed file.
#[derive(Debug, Clone, Serialize)]
pub struct FileHash {
    /// Relative to the campaign file.
    pub path: String,
    /// `checkpoint`, `output` or `receipt`.
    pub kind: &'static str,
    pub sha256: String,
}

/// Where the numbers come from.
#[derive(Debug, Clone, Serialize)]
pub struct Provenance {
    /// The campaign fingerprint (orchestration arm).
    pub campaign_fingerprint: String,
    /// Fingerprint of each state: `orchestration`, `single_agent`, `judge`.
    pub fingerprints: BTreeMap<String, String>,
    /// State directory of each, relative to the campaign file.
    pub state_dirs: BTreeMap<String, String>,
    pub files: Vec<FileHash>,
}

/// The evidence file.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub schema_version: u32,
    pub campaign: String,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub generated_at: String,
    /// True when the pseudo provider answered: the numbers measure the pipeline, not a model.
    pub rehearsal: bool,
    pub provider: String,
    pub model: String,
    pub judge_model: String,
    pub source: SourceStats,
    pub arms: BTreeMap<Arm, ArmMetrics>,
    /// The stateless loop, what a user writes instead (`--mode stateless-loop`): measured like
    /// the arms, not judged (the judge compares the orchestration with the conversation).
    pub stateless_loop: ArmMetrics,
    pub judge: JudgeAggregates,
    pub chrf: Option<ChrfReport>,
    pub provenance: Provenance,
    pub gates: Vec<Gate>,
    pub all_gates_pass: bool,
    /// The comparison table in Markdown (as in docs/src/experiment.md).
    pub table: String,
}

/// The comparison section of the report, filled by [`Evidence::comparison`] (the model is the
/// report's).
pub use crate::report::Comparison;

fn pct(x: Option<f64>) -> String {
    x.map_or("n/a".into(), |x| format!("{:.1} %", x * 100.0))
}

/// `n` with a comma between groups of three digits (`1234567` → `1,234,567`), for tables.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Evidence {
    /// The rows of the comparison table: `[metric, orchestration, single agent, stateless
    /// loop]` (the loop is not judged: `–` in the judge's rows).
    pub fn rows(&self) -> Vec<[String; 4]> {
        let o = &self.arms[&Arm::Orchestration];
        let s = &self.arms[&Arm::SingleAgent];
        let l = &self.stateless_loop;
        let mut rows: Vec<[String; 4]> = Vec::new();
        let mut row = |m: &str, f: &dyn Fn(&ArmMetrics) -> String| {
            rows.push([m.to_string(), f(o), f(s), f(l)]);
        };
        row("units translated", &|a| {
            let mut t = format!("{}/{}", a.units_translated, a.units_total);
            if let Some(x) = &a.context_exhausted {
                t.push_str(&format!(" ({})", x.split(':').next().unwrap_or(x)));
            }
            t
        });
        row("terminology consistency", &|a| {
            format!(
                "{} ({}/{} terms)",
                pct(a.terminology.consistency),
                a.terminology.consistent_terms,
                a.terminology.tracked_terms
            )
        });
        row("house-style adherence", &|a| {
            format!(
                "{} ({}/{} occurrences)",
                pct(a.house_style.adherence),
                a.house_style.rendered,
                a.house_style.occurrences
            )
        });
        row("QA findings: errors / warnings", &|a| {
            format!("{} / {}", a.qa_errors, a.qa_warnings)
        });
        row("main context peak (tokens)", &|a| {
            let what = match a.arm {
                Arm::Orchestration => "Manager context",
                _ if std::ptr::eq(a, l) => "one unit's request",
                Arm::SingleAgent => "conversation",
            };
            format!("{} ({what})", thousands(a.main_context_peak_tokens as u64))
        });
        row("largest prompt (tokens)", &|a| {
            thousands(a.largest_prompt_tokens)
        });
        row("tokens, all agents", &|a| thousands(a.total_tokens));
        row("tokens by agent", &|a| {
            a.tokens_by_agent
                .iter()
                .filter(|(_, u)| u.calls > 0)
                .map(|(k, u)| format!("{k} {}", thousands(u.prompt_tokens + u.completion_tokens)))
                .collect::<Vec<_>>()
                .join(", ")
        });
        row("wall time", &|a| {
            format!("{:.1} s", a.wall_ms as f64 / 1000.0)
        });
        if let Some(c) = &self.chrf {
            let f = |x: Option<f64>| x.map_or("n/a".into(), |x| format!("{x:.2}"));
            rows.push([
                "chrF vs reference".into(),
                f(c.orchestration),
                f(c.single_agent),
                f(c.stateless_loop),
            ]);
        }
        let j = &self.judge;
        for d in DIMENSIONS {
            let f = |a: Arm| {
                j.means
                    .get(&a)
                    .and_then(|m| m.get(d))
                    .map_or("n/a".into(), |x| format!("{x:.2}"))
            };
            rows.push([
                format!("judge: {d} (mean of verified judgments, 1–5)"),
                f(Arm::Orchestration),
                f(Arm::SingleAgent),
                "–".into(),
            ]);
        }
        let verified = format!("{} of {}", j.verified, j.units_judged);
        rows.push([
            "judge: verified judgments (every quote found in the text it cites)".into(),
            verified.clone(),
            verified,
            "–".into(),
        ]);
        rows.push([
            format!(
                "judge: preferred ({} ties of {} verified judgments; {} unverified, not counted)",
                j.preferences.tie, j.verified, j.unverified
            ),
            j.preferences.orchestration.to_string(),
            j.preferences.single_agent.to_string(),
            "–".into(),
        ]);
        rows
    }

    /// The comparison table in Markdown.
    pub fn table(&self) -> String {
        let mut t = String::from(
            "| metric | orchestration | single agent | stateless loop |\n|---|---|---|---|\n",
        );
        for [m, o, s, l] in self.rows() {
            t.push_str(&format!("| {m} | {o} | {s} | {l} |\n"));
        }
        t
    }

    /// The report's comparison section for the evidence written at `path`.
    pub fn comparison(&self, c: &Campaign, path: &Path) -> Comparison {
        Comparison {
            evidence: crate::util::relative_to(path, &c.plan.report_dir),
            generated_at: self.generated_at.clone(),
            rehearsal: self.rehearsal,
            provider: self.provider.clone(),
            model: self.model.clone(),
            judge_model: self.judge_model.clone(),
            rows: self.rows(),
            gates: self
                .gates
                .iter()
                .map(|g| crate::report::ComparisonGate {
                    name: g.name.to_string(),
                    pass: g.pass,
                    reason: g.reason.clone(),
                })
                .collect(),
            all_gates_pass: self.all_gates_pass,
        }
    }
}

/// Source statistics of `c`.
pub fn source_stats(c: &Campaign) -> SourceStats {
    let per_chapter: Vec<ChapterStats> = c
        .chapters
        .iter()
        .map(|ch| {
            let d = crate::qa::Doc::parse(&ch.text);
            ChapterStats {
                chapter: ch.key.clone(),
                path: ch.rel_path.clone(),
                bytes: ch.text.len(),
                chars: ch.text.chars().count(),
                units: c.units_of(&ch.key).count(),
                units_to_translate: c
                    .units_of(&ch.key)
                    .filter(|u| u.kind.needs_translation())
                    .count(),
                images: d.images.len(),
                code_blocks: d.fences.len() + d.indented.len(),
                links: d.links.len(),
            }
        })
        .collect();
    SourceStats {
        chapters: per_chapter.len(),
        units: per_chapter.iter().map(|c| c.units).sum(),
        units_to_translate: per_chapter.iter().map(|c| c.units_to_translate).sum(),
        bytes: per_chapter.iter().map(|c| c.bytes).sum(),
        chars: per_chapter.iter().map(|c| c.chars).sum(),
        images: per_chapter.iter().map(|c| c.images).sum(),
        code_blocks: per_chapter.iter().map(|c| c.code_blocks).sum(),
        links: per_chapter.iter().map(|c| c.links).sum(),
        per_chapter,
    }
}

/// chrF of both arms against `c`'s `reference_dir` (chapter files named as the sources); `None`
/// when the campaign names no reference. Missing units count as empty text.
pub fn chrf_report(
    c: &Campaign,
    texts: &BTreeMap<Arm, BTreeMap<String, String>>,
    looped: &BTreeMap<String, String>,
) -> Option<ChrfReport> {
    let dir = c.plan.reference_dir.as_ref()?;
    let mut per_chapter = Vec::new();
    let mut totals: BTreeMap<Arm, chrf::Stats> = BTreeMap::new();
    let mut loop_total = chrf::Stats::default();
    for ch in &c.chapters {
        let path = dir.join(&ch.file_name);
        let reference = std::fs::read_to_string(&path).ok();
        let mut row = ChrfChapter {
            chapter: ch.key.clone(),
            reference: reference.as_ref().map(|_| c.plan.rel(&path)),
            orchestration: None,
            single_agent: None,
        };
        // A chapter as an arm's texts give it: a unit it did not translate is empty.
        let hypothesis = |t: &BTreeMap<String, String>| -> String {
            c.units_of(&ch.key)
                .map(|u| {
                    if u.kind.needs_translation() {
                        t.get(&u.id).cloned().unwrap_or_default()
                    } else {
                        c.source_text(u).to_string()
                    }
                })
                .collect()
        };
        if let Some(r) = &reference {
            loop_total.add(&chrf::Stats::of(&hypothesis(looped), r));
            for arm in Arm::BOTH {
                let hyp = hypothesis(&texts[&arm]);
                let stats = chrf::Stats::of(&hyp, r);
                totals.entry(arm).or_default().add(&stats);
                let score = Some(stats.score());
                match arm {
                    Arm::Orchestration => row.orchestration = score,
                    Arm::SingleAgent => row.single_agent = score,
                }
            }
        }
        per_chapter.push(row);
    }
    Some(ChrfReport {
        definition: "chrF2 (character 6-grams, beta = 2, whitespace removed; Popović 2015, as sacreBLEU 2.x computes it), one segment per chapter",
        reference_dir: c.plan.rel(dir),
        per_chapter,
        orchestration: totals.get(&Arm::Orchestration).map(chrf::Stats::score),
        single_agent: totals.get(&Arm::SingleAgent).map(chrf::Stats::score),
        stateless_loop: totals.get(&Arm::Orchestration).map(|_| loop_total.score()),
    })
}

/// Judge aggregates over `judged` for `pairs`.
pub fn judge_aggregates(judged: &JudgeRun, pairs: &[Pair], model: &str) -> JudgeAggregates {
    let mut sums: BTreeMap<Arm, BTreeMap<String, (f64, usize)>> = BTreeMap::new();
    let mut prefs = Preferences::default();
    let mut shown_as_x: BTreeMap<Arm, usize> = Arm::BOTH.iter().map(|a| (*a, 0)).collect();
    let (mut repaired, mut quotes_found, mut quotes, mut judged_n) = (0, 0, 0, 0);
    let (mut verified, mut unverified_units) = (0, Vec::new());
    for p in pairs {
        let Some(j) = judged.judgments.get(&p.unit) else {
            continue;
        };
        judged_n += 1;
        *shown_as_x.entry(j.x).or_default() += 1;
        repaired += usize::from(j.repaired);
        // Recomputed from the texts judged (the pair's call key pins them), so judgments
        // recorded before verification existed are checked the same way.
        let check = super::judge::verify(&j.verdict, p);
        quotes_found += check.found;
        quotes += check.quotes;
        if !check.verified() {
            prefs.unverified += 1;
            unverified_units.push(UnverifiedJudgment {
                unit: p.unit.clone(),
                quotes_found: check.found,
                quotes: check.quotes,
                first_missing: check.missing.first().cloned().unwrap_or_default(),
            });
            continue;
        }
        verified += 1;
        for arm in Arm::BOTH {
            for (d, s) in DIMENSIONS.iter().zip(j.scores_of(arm).all()) {
                let e = sums
                    .entry(arm)
                    .or_default()
                    .entry(d.to_string())
                    .or_default();
                e.0 += s.score as f64;
                e.1 += 1;
            }
        }
        match j.preferred_arm() {
            Some(Arm::Orchestration) => prefs.orchestration += 1,
            Some(Arm::SingleAgent) => prefs.single_agent += 1,
            None => prefs.tie += 1,
        }
    }
    JudgeAggregates {
        model: model.to_string(),
        units_expected: pairs.len(),
        units_judged: judged_n,
        repaired,
        failed: judged.failed.clone(),
        means: sums
            .into_iter()
            .map(|(a, m)| {
                (
                    a,
                    m.into_iter().map(|(d, (s, n))| (d, s / n as f64)).collect(),
                )
            })
            .collect(),
        preferences: prefs,
        shown_as_x,
        quotes_found,
        quotes,
        usage: judged
            .state
            .usage()
            .get(&Agent::Judge)
            .copied()
            .unwrap_or_default(),
        verified,
        unverified: unverified_units.len(),
        unverified_units,
    }
}

/// Every file under `dir` (recursively, the lock and `superseded/` excepted), sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(p) else { return };
        for e in rd.flatten() {
            let path = e.path();
            let name = e.file_name();
            if name == "lock" || name == "superseded" || name.to_string_lossy().starts_with(".tmp")
            {
                continue;
            }
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, &mut v);
    v.sort();
    v
}

fn hash_file(c: &Campaign, path: &Path, kind: &'static str) -> anyhow::Result<FileHash> {
    let bytes = std::fs::read(path)
        .map_err(|e| anyhow::anyhow!("reading {} for provenance: {e}", path.display()))?;
    Ok(FileHash {
        path: c.plan.rel(path),
        kind,
        sha256: crate::util::sha256_hex(&bytes),
    })
}

/// Why a state directory does not match the fingerprint its runs must have worked on
/// ([`check_state`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{dir}: {problem}")]
pub struct StateMismatch {
    /// The state directory's name (the configuration key).
    pub dir: String,
    pub problem: StateProblem,
}

/// The first problem [`check_state`] found in a state directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateProblem {
    #[error("config.json is missing or unreadable")]
    NoConfig,
    /// `config.json` hashes to `key`, not to the directory's name.
    #[error("config.json hashes to {key}, not to its directory name")]
    ConfigKey { key: String },
    #[error("no manifest for fingerprint {fingerprint}")]
    NoManifest { fingerprint: String },
    /// The manifest stored for `fingerprint` hashes to `got`.
    #[error("the manifest of {fingerprint} hashes to {got}")]
    ManifestHash { fingerprint: String, got: String },
    /// The journal cannot be read (the reader's message).
    #[error("{0}")]
    Journal(String),
    /// The newest `run_started` names `last_run` (none: `None`).
    #[error("the last run worked on {last_run:?}, not on {fingerprint}")]
    LastRun {
        last_run: Option<String>,
        fingerprint: String,
    },
    /// A result file the journal names cannot be read (the I/O message).
    #[error("result {file}: {error}")]
    ResultUnreadable { file: String, error: String },
    /// A result file's sha256 differs from the journaled one.
    #[error("result {file} has sha256 {got}, the journal recorded {journaled}")]
    ResultHash {
        file: String,
        got: String,
        journaled: String,
    },
}

/// Checks a state directory against the fingerprint its runs must have worked on: the
/// configuration's key names the directory, the newest `run_started` names `fingerprint`, the
/// manifest of `fingerprint` hashes to it, and every result file matches its journal line.
/// Ok: a one-line summary; Err: the first problem ([`StateMismatch`]).
pub fn check_state(dir: &Path, fingerprint: &str) -> Result<String, StateMismatch> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fail = |problem: StateProblem| StateMismatch {
        dir: name.clone(),
        problem,
    };
    let config: ConfigPrint = std::fs::read(dir.join("config.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| fail(StateProblem::NoConfig))?;
    if config.key() != name {
        return Err(fail(StateProblem::ConfigKey { key: config.key() }));
    }
    let manifest: Manifest =
        std::fs::read(dir.join("manifests").join(format!("{fingerprint}.json")))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(|| {
                fail(StateProblem::NoManifest {
                    fingerprint: fingerprint.to_string(),
                })
            })?;
    if manifest.fingerprint() != fingerprint {
        return Err(fail(StateProblem::ManifestHash {
            fingerprint: fingerprint.to_string(),
            got: manifest.fingerprint(),
        }));
    }
    let (records, _) =
        store::read_journal(dir).map_err(|e| fail(StateProblem::Journal(e.to_string())))?;
    let last_run = records.iter().rev().find_map(|r| match &r.event {
        Event::RunStarted { fingerprint, .. } => Some(fingerprint.clone()),
        _ => None,
    });
    if last_run.as_deref() != Some(fingerprint) {
        return Err(fail(StateProblem::LastRun {
            last_run,
            fingerprint: fingerprint.to_string(),
        }));
    }
    let mut results = 0;
    for r in &records {
        if let Event::CallFinished { file, sha256, .. } = &r.event {
            let got = std::fs::read(dir.join(file))
                .map(crate::util::sha256_hex)
                .map_err(|e| {
                    fail(StateProblem::ResultUnreadable {
                        file: file.clone(),
                        error: e.to_string(),
                    })
                })?;
            if &got != sha256 {
                return Err(fail(StateProblem::ResultHash {
                    file: file.clone(),
                    got,
                    journaled: sha256.clone(),
                }));
            }
            results += 1;
        }
    }
    Ok(format!(
        "{}…: configuration key, manifest and last run match; {results} result file(s) match the journal",
        &fingerprint[..12.min(fingerprint.len())]
    ))
}

/// Every string in a JSON value, joined by newlines.
fn strings_of(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings_of(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings_of(x, out)),
        _ => {}
    }
}

/// Builds the evidence of a finished experiment.
///
/// Errors: a file to hash cannot be read, a journal cannot be read.
pub fn build(
    c: &Campaign,
    orch: &RunResult,
    single: &SingleRun,
    looped: &SingleRun,
    judged: &JudgeRun,
    pairs: &[Pair],
    judge_model: &str,
) -> anyhow::Result<Evidence> {
    let orch_dir = c.state_path();
    let single_dir = single.campaign.state_path();
    let loop_dir = looped.campaign.state_path();
    let orch_texts: BTreeMap<String, String> = c
        .prose_units()
        .filter(|u| {
            orch.state.kept_translation(&u.id, u32::MAX).is_some()
                || orch.state.human_edit(&u.id).is_some()
        })
        .map(|u| {
            (
                u.id.clone(),
                crate::campaign::core::edits::final_text(c, &orch.state, u),
            )
        })
        .collect();
    let mut arms = BTreeMap::new();
    arms.insert(
        Arm::Orchestration,
        metrics::measure(
            c,
            &ArmInput {
                arm: Arm::Orchestration,
                status: serde_json::to_value(orch.summary.status)?
                    .as_str()
                    .unwrap_or("")
                    .into(),
                texts: &orch_texts,
                state: &orch.state,
                dir: &orch_dir,
                main_context_peak_tokens: orch.summary.manager_context_peak_tokens,
                context_exhausted: None,
            },
        )?,
    );
    arms.insert(
        Arm::SingleAgent,
        metrics::measure(
            c,
            &ArmInput {
                arm: Arm::SingleAgent,
                status: serde_json::to_value(single.summary.status)?
                    .as_str()
                    .unwrap_or("")
                    .into(),
                texts: &single.translations,
                state: &single.state,
                dir: &single_dir,
                main_context_peak_tokens: single.summary.main_context_peak_tokens,
                context_exhausted: single.summary.exhausted.as_ref().map(|x| x.message()),
            },
        )?,
    );
    let texts: BTreeMap<Arm, BTreeMap<String, String>> = [
        (Arm::Orchestration, orch_texts.clone()),
        (Arm::SingleAgent, single.translations.clone()),
    ]
    .into();
    let stateless_loop = metrics::measure(
        c,
        &ArmInput {
            arm: Arm::SingleAgent,
            status: serde_json::to_value(looped.summary.status)?
                .as_str()
                .unwrap_or("")
                .into(),
            texts: &looped.translations,
            state: &looped.state,
            dir: &loop_dir,
            main_context_peak_tokens: looped.summary.main_context_peak_tokens,
            context_exhausted: looped.summary.exhausted.as_ref().map(|x| x.message()),
        },
    )?;
    let judge = judge_aggregates(judged, pairs, judge_model);

    // Provenance.
    let mut files = Vec::new();
    for dir in [&orch_dir, &single_dir, &loop_dir, &judged.dir] {
        for f in files_under(dir) {
            let kind = if f.strip_prefix(dir).is_ok_and(|r| r.starts_with("receipts")) {
                "receipt"
            } else {
                "checkpoint"
            };
            files.push(hash_file(c, &f, kind)?);
        }
    }
    for out_dir in [
        &c.plan.out_dir,
        &single.campaign.plan.out_dir,
        &looped.campaign.plan.out_dir,
    ] {
        for ch in &c.chapters {
            let p = out_dir.join(&ch.file_name);
            if p.exists() {
                files.push(hash_file(c, &p, "output")?);
            }
        }
    }
    let fingerprints: BTreeMap<String, String> = [
        ("orchestration".to_string(), c.fingerprint.clone()),
        (
            "single_agent".to_string(),
            single.campaign.fingerprint.clone(),
        ),
        (
            "stateless_loop".to_string(),
            looped.campaign.fingerprint.clone(),
        ),
        ("judge".to_string(), judged.fingerprint.clone()),
    ]
    .into();
    let state_dirs: BTreeMap<String, String> = [
        ("orchestration".to_string(), c.plan.rel(&orch_dir)),
        ("single_agent".to_string(), c.plan.rel(&single_dir)),
        ("stateless_loop".to_string(), c.plan.rel(&loop_dir)),
        ("judge".to_string(), c.plan.rel(&judged.dir)),
    ]
    .into();
    let gates = gates(
        c,
        orch,
        single,
        looped,
        judged,
        pairs,
        &arms,
        [&orch_dir, &single_dir, &loop_dir],
    );
    let all_gates_pass = gates.iter().all(|g| g.pass);
    let mut ev = Evidence {
        schema_version: EVIDENCE_SCHEMA_VERSION,
        campaign: c.plan.name.clone(),
        generated_at: crate::util::utc_timestamp(store::now_ms(), true),
        rehearsal: c.plan.is_rehearsal(),
        provider: c.plan.provider.kind.as_str().into(),
        model: c.plan.provider.model.clone(),
        judge_model: judge_model.to_string(),
        source: source_stats(c),
        arms,
        stateless_loop,
        judge,
        chrf: chrf_report(c, &texts, &looped.translations),
        provenance: Provenance {
            campaign_fingerprint: c.fingerprint.clone(),
            fingerprints,
            state_dirs,
            files,
        },
        gates,
        all_gates_pass,
        table: String::new(),
    };
    ev.table = ev.table();
    Ok(ev)
}

/// The acceptance gates: what an experiment must show before its comparison is evidence (see
/// the module docs of [`crate::experiment`]).
#[allow(clippy::too_many_arguments)]
fn gates(
    c: &Campaign,
    orch: &RunResult,
    single: &SingleRun,
    looped: &SingleRun,
    judged: &JudgeRun,
    pairs: &[Pair],
    arms: &BTreeMap<Arm, ArmMetrics>,
    [orch_dir, single_dir, loop_dir]: [&Path; 3],
) -> Vec<Gate> {
    let g = GateInputs {
        c,
        orch,
        single,
        looped,
        judged,
        pairs,
        arms,
        orch_dir,
        single_dir,
        loop_dir,
    };
    vec![
        g.roles_executed(),
        g.every_unit_translated(),
        g.real_usage(),
        g.one_provider_and_model(),
        g.manager_context(),
        g.judgment_for_every_unit(),
        g.judgments_verified(),
        g.receipt_hashes(),
        g.checkpoint_fingerprints(),
    ]
}

/// What the gates are decided from: the campaign, both arms' results and state directories,
/// the judge's run and the pairs it judged, and both arms' metrics.
#[derive(Clone, Copy)]
struct GateInputs<'a> {
    c: &'a Campaign,
    orch: &'a RunResult<'a>,
    single: &'a SingleRun,
    /// The stateless loop: measured, not judged; its calls count in the usage, model and
    /// checkpoint gates.
    looped: &'a SingleRun,
    judged: &'a JudgeRun,
    pairs: &'a [Pair],
    arms: &'a BTreeMap<Arm, ArmMetrics>,
    orch_dir: &'a Path,
    single_dir: &'a Path,
    loop_dir: &'a Path,
}

impl GateInputs<'_> {
    /// Gate 1: every role the campaign turns on executed. The Glossary agent (on with
    /// `agent_glossary` or `brief`), the Translation agent and the Proofreading agent (on with
    /// `proofread_share` > 0, off by default since finding 21 of docs/src/benchmarks.md) each
    /// finished a model call; the Manager decided every review round, with a model call or,
    /// when nothing advisory was left to decide, without one
    /// ([`crate::campaign::core::manager::Action::DecideForced`]). A role the campaign turns
    /// off is named as off in the reason, so the gate never claims a stage that did not run.
    fn roles_executed(&self) -> Gate {
        let Self { c, orch, .. } = *self;
        let calls_of = |a: &Agent| orch.state.usage().get(a).map_or(0, |u| u.calls);
        let local_decisions = orch
            .state
            .finished()
            .values()
            .filter(|r| r.agent == Agent::Manager && r.requests == 0)
            .count();
        let on = |a: &Agent| match a {
            Agent::Glossary => c.plan.agent_glossary || c.plan.brief,
            Agent::Proofreading => c.plan.proofreads(),
            _ => true,
        };
        let calls: Vec<String> = Agent::ALL
            .iter()
            .map(|a| {
                if on(a) {
                    format!("{a} {}", calls_of(a))
                } else {
                    format!("{a} off")
                }
            })
            .collect();
        Gate {
            name: "every_role_on_executed",
            pass: Agent::ALL
                .iter()
                .filter(|a| on(a))
                .all(|a| calls_of(a) > 0 || (*a == Agent::Manager && local_decisions > 0)),
            reason: format!(
                "finished calls in the orchestration arm: {}; Manager decisions without a model call (nothing advisory to decide): {local_decisions}",
                calls.join(", ")
            ),
        }
    }

    /// Gate 2: both arms translated every unit. A single agent whose conversation ran out of
    /// context did not: its exhaustion is an outcome the arm reports (`context_exhausted`,
    /// recorded in its journal) and the reason names, never a pass.
    fn every_unit_translated(&self) -> Gate {
        let Self {
            single,
            arms,
            single_dir,
            ..
        } = *self;
        let o = &arms[&Arm::Orchestration];
        let s = &arms[&Arm::SingleAgent];
        let exhaustion_recorded = store::read_journal(single_dir).is_ok_and(|(recs, _)| {
            recs.iter()
                .any(|r| matches!(r.event, Event::ContextExhausted { .. }))
        });
        Gate {
            name: "both_arms_translated_every_unit",
            pass: o.units_translated == o.units_total && s.units_translated == s.units_total,
            reason: format!(
                "orchestration {}/{} units; single agent {}/{} units{}",
                o.units_translated,
                o.units_total,
                s.units_translated,
                s.units_total,
                match &single.summary.exhausted {
                    Some(x) if exhaustion_recorded =>
                        format!(", then {} (recorded in its journal)", x.message()),
                    Some(x) => format!(", then {} (NOT recorded in its journal)", x.message()),
                    None => String::new(),
                }
            ),
        }
    }

    /// Gate 3: real usage recorded for every call.
    fn real_usage(&self) -> Gate {
        let Self {
            c,
            judged,
            orch_dir,
            single_dir,
            loop_dir,
            ..
        } = *self;
        let mut calls_checked = 0;
        let mut without = Vec::new();
        for dir in [orch_dir, single_dir, loop_dir, judged.dir.as_path()] {
            if let Ok((recs, _)) = store::read_journal(dir) {
                for r in recs {
                    if let Event::CallFinished {
                        call,
                        usage,
                        requests,
                        ..
                    } = r.event
                        && requests > 0
                    {
                        calls_checked += 1;
                        if usage.prompt_tokens == 0 || usage.completion_tokens == 0 {
                            without.push(call);
                        }
                    }
                }
            }
        }
        let rehearsal = c.plan.is_rehearsal();
        Gate {
            name: "real_usage_recorded_for_every_call",
            pass: without.is_empty() && !rehearsal && calls_checked > 0,
            reason: if rehearsal {
                format!(
                    "the pseudo provider computed the usage of {calls_checked} call(s) offline; no provider reported it"
                )
            } else if without.is_empty() {
                format!(
                    "{calls_checked} call(s) in the four states carry the prompt and completion tokens the provider reported"
                )
            } else {
                format!(
                    "{} of {calls_checked} call(s) have no reported usage, e.g. {}",
                    without.len(),
                    without[0]
                )
            },
        }
    }

    /// Gate 4: one provider and model for all translation calls.
    fn one_provider_and_model(&self) -> Gate {
        let Self {
            orch,
            single,
            looped,
            orch_dir,
            single_dir,
            loop_dir,
            ..
        } = *self;
        let mut runs: BTreeSet<(String, String)> = BTreeSet::new();
        for dir in [orch_dir, single_dir, loop_dir] {
            if let Ok((recs, _)) = store::read_journal(dir) {
                for r in recs {
                    if let Event::RunStarted {
                        provider, model, ..
                    } = r.event
                    {
                        runs.insert((provider, model));
                    }
                }
            }
        }
        let reported: BTreeSet<String> = orch
            .state
            .finished()
            .values()
            .chain(single.state.finished().values())
            .chain(looped.state.finished().values())
            .filter(|r| r.agent == Agent::Translation && r.requests > 0)
            .filter_map(|r| r.model.clone())
            .collect();
        let runs_list: Vec<String> = runs.iter().map(|(p, m)| format!("{p}/{m}")).collect();
        Gate {
            name: "one_provider_and_model_for_all_translation_calls",
            pass: runs.len() == 1 && reported.len() <= 1,
            reason: format!(
                "runs of both arms and the stateless loop used {}; models reported in translation answers: {}",
                runs_list.join(", "),
                if reported.is_empty() {
                    "none".into()
                } else {
                    reported.iter().cloned().collect::<Vec<_>>().join(", ")
                }
            ),
        }
    }

    /// Gate 5: the Manager context excludes every translation body.
    fn manager_context(&self) -> Gate {
        let Self { orch, .. } = *self;
        let ctx = orch.manager.context(&orch.state);
        let mut strings = String::new();
        strings_of(
            &serde_json::to_value(&ctx).unwrap_or_default(),
            &mut strings,
        );
        let (mut bodies, mut lines, mut leaked) = (0, 0, Vec::new());
        for r in orch.state.finished().values() {
            if let Output::Translation { text, .. } = &r.output {
                bodies += 1;
                for l in text.lines().map(str::trim) {
                    if l.chars().count() >= MIN_BODY_LINE_CHARS {
                        lines += 1;
                        if strings.contains(l) {
                            leaked.push(crate::util::excerpt(l, 60));
                        }
                    }
                }
            }
        }
        Gate {
            name: "manager_context_excludes_translation_bodies",
            pass: leaked.is_empty() && bodies > 0,
            reason: if leaked.is_empty() {
                format!(
                    "none of {lines} lines (≥ {MIN_BODY_LINE_CHARS} characters) of {bodies} translations occurs in the Manager context ({} tokens, rebuilt from the final state)",
                    ctx.tokens()
                )
            } else {
                format!(
                    "{} translation line(s) occur in the Manager context, e.g. {}",
                    leaked.len(),
                    leaked[0]
                )
            },
        }
    }

    /// Gate 6: a judgment for every unit.
    fn judgment_for_every_unit(&self) -> Gate {
        let Self {
            c, judged, pairs, ..
        } = *self;
        let judged_n = pairs
            .iter()
            .filter(|p| judged.judgments.contains_key(&p.unit))
            .count();
        let not_paired = c.prose_units().count() - pairs.len();
        Gate {
            name: "judgment_for_every_unit",
            pass: !pairs.is_empty() && judged_n == pairs.len(),
            reason: format!(
                "{judged_n} of {} units translated by both arms have a valid judgment ({} after a schema repair){}",
                pairs.len(),
                judged.judgments.values().filter(|j| j.repaired).count(),
                if not_paired > 0 {
                    format!(
                        "; {not_paired} unit(s) not judged because the single agent has no translation of them (context exhausted)"
                    )
                } else {
                    String::new()
                }
            ),
        }
    }

    /// Gate 7: the judge's evidence verified (see MIN_VERIFIED_PERCENT).
    fn judgments_verified(&self) -> Gate {
        let Self { judged, pairs, .. } = *self;
        let agg = judge_aggregates(judged, pairs, "");
        let judged_total = agg.verified + agg.unverified;
        debug_assert_eq!(
            MIN_VERIFIED_PERCENT, 80,
            "the gate's name states the threshold"
        );
        Gate {
            name: "judgments_verified_80_percent",
            pass: agg.verified > 0 && agg.verified * 100 >= judged_total * MIN_VERIFIED_PERCENT,
            reason: format!(
                "{} of {judged_total} judgments verified: every evidence quote occurs in the text it cites, whitespace removed (at least {MIN_VERIFIED_PERCENT} % required); {} unverified judgment(s) not counted as preferences{}",
                agg.verified,
                agg.unverified,
                agg.unverified_units
                    .first()
                    .map(|u| format!(
                        ", e.g. unit {} ({} of {} quotes found; not found: {})",
                        u.unit, u.quotes_found, u.quotes, u.first_missing
                    ))
                    .unwrap_or_default()
            ),
        }
    }

    /// Gate 8: receipt hashes match.
    fn receipt_hashes(&self) -> Gate {
        let Self { judged, .. } = *self;
        let mut receipts = 0;
        let mut bad = Vec::new();
        let mut journaled = BTreeSet::new();
        if let Ok((recs, _)) = store::read_journal(&judged.dir) {
            for r in recs {
                if let Event::Receipt { file, sha256, .. } = r.event {
                    receipts += 1;
                    let got = std::fs::read(judged.dir.join(&file)).map(crate::util::sha256_hex);
                    if got.as_deref().ok() != Some(sha256.as_str()) {
                        bad.push(file.clone());
                    }
                    journaled.insert((file, sha256));
                }
            }
        }
        let unjournaled = judged
            .judgments
            .values()
            .flat_map(|j| &j.receipts)
            .filter(|r| !journaled.contains(&(r.file.clone(), r.sha256.clone())))
            .count();
        Gate {
            name: "receipt_hashes_match",
            pass: receipts > 0 && bad.is_empty() && unjournaled == 0,
            reason: if bad.is_empty() && unjournaled == 0 {
                format!(
                    "{receipts} receipt file(s) hash to the sha256 journaled for them, and every judgment names journaled receipts"
                )
            } else {
                format!(
                    "{} receipt(s) differ from their journaled sha256 (e.g. {:?}); {unjournaled} receipt(s) named by judgments were not journaled",
                    bad.len(),
                    bad.first()
                )
            },
        }
    }

    /// Gate 9: checkpoint fingerprints match.
    fn checkpoint_fingerprints(&self) -> Gate {
        let Self {
            c,
            single,
            looped,
            judged,
            orch_dir,
            single_dir,
            loop_dir,
            ..
        } = *self;
        let checks = [
            ("orchestration", orch_dir, c.fingerprint.as_str()),
            (
                "single_agent",
                single_dir,
                single.campaign.fingerprint.as_str(),
            ),
            (
                "stateless_loop",
                loop_dir,
                looped.campaign.fingerprint.as_str(),
            ),
            ("judge", judged.dir.as_path(), judged.fingerprint.as_str()),
        ];
        let results: Vec<(String, Result<String, StateMismatch>)> = checks
            .iter()
            .map(|(n, d, fp)| (n.to_string(), check_state(d, fp)))
            .collect();
        Gate {
            name: "checkpoint_fingerprints_match",
            pass: results.iter().all(|(_, r)| r.is_ok()),
            reason: results
                .iter()
                .map(|(n, r)| match r {
                    Ok(m) => format!("{n}: {m}"),
                    Err(e) => format!("{n}: FAILED: {e}"),
                })
                .collect::<Vec<_>>()
                .join("; "),
        }
    }
}

/// Writes `evidence.json` to `<report_dir>/<campaign>/<timestamp>/` (a new folder each time)
/// and points `<report_dir>/latest.json` to it; returns the evidence file's path.
///
/// Errors: I/O.
pub fn write(c: &Campaign, ev: &Evidence) -> anyhow::Result<PathBuf> {
    let base = c.plan.report_dir.join(&c.plan.name);
    let stamp = crate::util::utc_timestamp(store::now_ms(), false);
    let mut dir = base.join(&stamp);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = base.join(format!("{stamp}-{n}"));
    }
    let path = dir.join("evidence.json");
    let mut bytes = serde_json::to_vec_pretty(ev)?;
    bytes.push(b'\n');
    crate::util::write_atomic(&path, &bytes)?;
    let latest = serde_json::json!({
        "campaign": c.plan.name,
        "evidence": crate::util::relative_to(&path, &c.plan.report_dir),
        "sha256": crate::util::sha256_hex(&bytes),
        "generated_at": ev.generated_at,
        "all_gates_pass": ev.all_gates_pass,
    });
    crate::util::write_json_atomic(&c.plan.report_dir.join("latest.json"), &latest)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
