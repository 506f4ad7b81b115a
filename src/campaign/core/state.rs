//! The in-memory view of a campaign's state, rebuilt from the journal and the result files.
//!
//! [`State::apply`] is the only way the view changes, both when replaying the journal at start
//! and when the runner records a new result, so a resumed run sees exactly what an
//! uninterrupted one would. Derived facts (QA findings of each translation, usage per agent,
//! the latest translation of each unit) are computed here once per recorded result.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::Path;

use serde::Serialize;

use super::Campaign;
use super::store::{self, Event, Output, Record, ResultFile};
use crate::agents::Agent;
use crate::llm::Usage;
use crate::qa::{self, Finding};
use crate::termbase::Termbase;

mod access;
mod blocks;
pub mod marks;

/// Totals for one agent. Token figures are as reported by the provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AgentUsage {
    /// Finished calls (a call may take several requests).
    pub calls: u64,
    /// HTTP requests, including schema repairs.
    pub requests: u64,
    /// Calls that failed after all retries.
    pub failed: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
}

/// A compact call-log line for the Manager context (no text, no path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    pub agent: Agent,
    /// Unit id, chapter or batch the call was about.
    pub about: String,
    /// `ok` or `failed`.
    pub outcome: &'static str,
    /// Prompt plus completion tokens.
    pub tokens: u64,
}

/// The book brief in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BriefText {
    pub text: String,
    /// sha256 of `text` (UTF-8 bytes); part of every unit's fingerprint.
    pub sha256: String,
    /// True when the editor's version replaced the agent's.
    pub edited: bool,
}

/// A recorded `booktr approve --stage glossary`.
#[derive(Debug, Clone)]
pub struct GlossaryApproval {
    /// The merged termbase it approved (by sha256).
    pub merged_sha256: String,
    /// The review CSV as approved.
    pub csv_sha256: String,
    /// The brief as approved.
    pub brief_sha256: String,
    /// The approved termbase file (relative to the state directory) and its entries.
    pub file: String,
    pub termbase: Termbase,
    pub changes: Vec<String>,
    /// When (Unix ms).
    pub at_ms: u64,
}

/// The recorded `booktr approve --stage revisions` of one decision: every approval of it
/// added up (an approval by chapter decides only that chapter's units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionApproval {
    pub round: u32,
    pub approved: Vec<String>,
    pub rejected: Vec<String>,
    /// Chapter keys decided by `--chapter` approvals, in the order approved; empty when every
    /// approval covered all the units still waiting.
    pub chapters: Vec<String>,
}

impl RevisionApproval {
    /// Whether unit `id` was decided (approved or rejected) by one of the approvals.
    pub fn decided(&self, id: &str) -> bool {
        self.approved.iter().chain(&self.rejected).any(|u| u == id)
    }
}

/// The QA key of a unit's human edit in [`State::qa`].
pub const HUMAN_ROUND: u32 = u32::MAX;

/// Size of the recent-call window kept in the Manager context; the full log is the journal.
pub const RECENT_CALLS: usize = 6;

/// The state of one campaign fingerprint.
#[derive(Debug, Default)]
pub struct State {
    /// Id of the current run (failures of earlier runs are retried).
    run: String,
    /// Finished calls by call key.
    finished: HashMap<String, ResultFile>,
    /// Result file (relative path) of each finished call.
    files: HashMap<String, String>,
    /// Calls that failed at some point and have not finished since, with their last error.
    open_failures: BTreeMap<String, String>,
    /// The call key of the newest failure (its error is in `open_failures` while it is open).
    last_failed: Option<String>,
    /// The merged termbase once the Glossary stage is done, with its file (relative to the
    /// state directory).
    termbase: Option<(String, Termbase)>,
    glossary_dropped_by_house: usize,
    /// The inputs hash (candidate terms and house style) of the merged termbase.
    glossary_inputs: Option<String>,
    /// Unit id → its fingerprint under the current glossary termbase (empty until the
    /// Glossary stage has merged a termbase). Everything below is keyed by fingerprint, so a
    /// unit whose source or glossary entries changed starts afresh and an unchanged one keeps
    /// its history, wherever it now sits in the book.
    fps: HashMap<String, String>,
    /// Fingerprint → index of the current unit with it.
    unit_of_fp: HashMap<String, usize>,
    /// Unit fingerprint → the editor's text (newest edit). Wins over every model translation
    /// and is never revised.
    human_edits: HashMap<String, String>,
    /// Unit fingerprint or part id → byte ranges (within the unit's text) of the parts it was
    /// split into because the model could not translate it in one answer.
    splits: HashMap<String, Vec<std::ops::Range<usize>>>,
    /// Part id (`<fp>.p1`, …) → its translation.
    part_translations: HashMap<String, String>,
    /// Unit fingerprint → round → call key of its translations.
    translations: HashMap<String, BTreeMap<u32, String>>,
    /// QA findings of each (unit fingerprint, round) translation.
    qa: HashMap<(String, u32), Vec<Finding>>,
    /// Sequence number of this run's `run_started` record (0 before it).
    run_started_seq: u64,
    /// Unit fingerprints whose first translation was recorded by this run.
    translated_this_run: HashSet<String>,
    /// Entries chosen by terminology reconciliation (origin `reconciled`), newest per term.
    /// They join the glossary termbase in revision prompts and QA, never in unit fingerprints,
    /// and never override house style.
    reconciled: Vec<crate::termbase::Entry>,
    /// The glossary termbase plus reconciled entries (see [`State::effective_termbase`]).
    effective: Termbase,
    /// The QA context (languages, termbase, review marker) once the termbase is known.
    qa_ctx: Option<qa::QaContext>,
    /// The book brief in force: the Brief agent's, or the editor's version.
    brief: Option<BriefText>,
    /// sha256 of the brief last put on the editor's desk (written there, or found edited).
    brief_on_desk: Option<String>,
    /// sha256 of the newest merged termbase file (what the Glossary stage proposed).
    merged_sha256: Option<String>,
    /// The merged termbase sha256 the glossary review files on the desk show, and the review
    /// CSV (path relative to the campaign file, sha256 as written).
    glossary_review_of: Option<String>,
    glossary_review_csv: Option<(String, String)>,
    /// The newest glossary approval.
    glossary_approval: Option<GlossaryApproval>,
    /// Decision call key → the editor's approval of its revision proposal.
    revision_approvals: HashMap<String, RevisionApproval>,
    /// True when outputs were written after the last recorded result.
    outputs_current: bool,
    /// (relative path, sha256) of the chapters written last.
    outputs: Vec<(String, String)>,
    usage: BTreeMap<Agent, AgentUsage>,
    recent: VecDeque<LogLine>,
    /// Largest Manager context measured, in tokens.
    ctx_peak: usize,
    runs: u32,
    /// Warnings from loading (torn journal line, adopted or damaged result files).
    warnings: Vec<String>,
    /// Result files found without a journal line, adopted in memory; the runner journals them.
    adopted: Vec<(String, String, String)>,
    /// Batches submitted and not yet ended, by batch id, in submission order (`run --batch`).
    open_batches: Vec<(String, Vec<store::BatchItem>)>,
    /// Calls that were in a batch ended by this run: they are not batched again now, but sent
    /// as normal calls if still pending.
    batch_tried: HashSet<String>,
    /// Unit fingerprints whose newest human edit was imported from a file (XLIFF) rather than
    /// made by hand in an output chapter (see [`CandidateOrigin::Imported`]).
    imported_edits: HashSet<String>,
    /// Runaway replies stopped by the stream reader, in journal order (all runs).
    runaways: Vec<RunawayRecord>,
    /// Accepted replies as samples of the model's reply lengths, per agent, in journal order
    /// ([`ResultFile::sample`]).
    samples: BTreeMap<Agent, Vec<crate::agents::bounds::Sample>>,
    /// The newest journaled figure per agent ([`Event::OutputBound`]): what requests are
    /// bounded by.
    figures: BTreeMap<Agent, crate::agents::bounds::Figure>,
    /// Answers paid for and not kept, in journal order: the usage of every failed call and of
    /// every rejected reply a unit split was recorded for, with the reason journaled.
    not_kept: Vec<NotKept>,
    /// Why the newest run stopped early (an account problem: quota, billing, key), if it did.
    stopped: Option<String>,
    /// Agent entries the newest glossary merge left out because they failed a deterministic
    /// check (see [`crate::termbase::vet`]), in termbase order.
    glossary_rejections: Vec<crate::termbase::vet::Rejection>,
    /// Call key → id of the run whose `call_failed` record is the call's newest failure, and
    /// whether that failure was an unusable answer (its `unusable`), for the calls of
    /// [`State::open_failures`] (a recorded fact, whatever run loads the state: see
    /// [`State::failed_in_run`], [`State::unusable_in_run`]).
    failure_runs: HashMap<String, (String, bool)>,
    /// Unit fingerprint → the round its joined pieces are recorded at, for the units split
    /// into smaller pieces when stuck ([`Event::UnitPieces`]; the pieces are the split
    /// [`super::pieces::pieces_key`] in `splits`).
    pieces: HashMap<String, u32>,
    /// Unit fingerprint → (number of pieces, the errors that sent it to pieces), as journaled
    /// in [`Event::UnitPieces`], for the reports.
    pieces_why: HashMap<String, (usize, String)>,
    /// The repaired candidate of each (unit fingerprint, round) model translation whose QA
    /// held an error of a mechanical class that [`crate::repair::repair`] fixed at least in
    /// part (campaign key `repair`): derived from the recorded text in
    /// [`State::check_translation`], never stored.
    repaired: HashMap<(String, u32), RepairedText>,
    /// The editor's marks of findings ([`Event::FindingMarked`]), newest per id.
    marks: marks::Marks,
    /// Why the newest run stopped at its budget cap, if it did
    /// (the budget gate, `ops/budget.rs`); cleared when a run starts.
    budget_stop: Option<super::store::BudgetStop>,
    /// Every billed call in journal order (the reports' cost ledger): what `usage` sums, one
    /// line per call, so reports can split it by chapter.
    paid: Vec<PaidCall>,
    /// Indices (into [`Campaign::units`], book order) of the units that need translation, have
    /// a fingerprint and no finished first translation (`translate/<fp>/r0`): derived from
    /// `fps` and `finished`, kept up to date by [`State::apply`], so the Manager's step walks
    /// the units still to translate, not the whole book, for every recorded result: the
    /// cost of a step stays linear in the book.
    first_pending: std::collections::BTreeSet<usize>,
    /// Unit fingerprint → indices of every current unit with it (units with the same text and
    /// entries share one), for `first_pending`.
    fp_units: HashMap<String, Vec<usize>>,
    /// Block memory: recorded blocks, reuse, stale and carried edits ([`blocks::BlockFold`]).
    blocks: blocks::BlockFold,
    /// Fingerprints with a translation of round 1 or later (the keys of `translations` with
    /// such a round), for the Manager context's count of revised units (without walking
    /// every unit).
    revised_fps: std::collections::BTreeSet<String>,
}

/// The usage of one billed call as journaled (a finished call that made requests, a failed
/// call, or the rejected answers of a unit that was split); see [`State::paid_calls`].
#[derive(Debug, Clone, PartialEq)]
pub struct PaidCall {
    pub agent: Agent,
    /// The call key ([`super::CallKey`]); for a split, the translation key of what was split.
    pub call: String,
    /// The unit id (or part id) the call was about, when it was about one.
    pub unit: Option<String>,
    pub usage: Usage,
}

/// Tokens paid for a call's answers that were not kept (see [`State::not_kept`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NotKept {
    pub call: String,
    pub agent: Agent,
    pub unit: Option<String>,
    /// Why: the failure or split reason as journaled.
    pub reason: String,
    pub usage: Usage,
}

/// A repaired candidate of one model translation round: the text after
/// [`crate::repair::repair`], the repairs made (at least one) and the per-unit QA of the
/// repaired text (the same checks as the model's text, context echo included).
#[derive(Debug, Clone)]
pub struct RepairedText {
    pub text: String,
    pub repairs: Vec<crate::repair::Repair>,
    pub findings: Vec<Finding>,
}

/// One runaway reply of a call (see [`crate::llm::runaway`]): returned by the call's job,
/// journaled as [`Event::RunawayReply`] and listed in the report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunawayRecord {
    pub call: String,
    pub agent: Agent,
    pub unit: Option<String>,
    pub reason: String,
    /// What it cost until the stream was dropped (prompt and completion tokens; also part of
    /// the call's usage, since it is billed).
    pub usage: Usage,
    /// Temperature it was sampled at (`None`: the provider's default).
    pub temperature: Option<f64>,
    /// Temperature of the one retry, when one was made.
    pub retry_temperature: Option<f64>,
    /// What came before the repetition covered every block of the unit and was kept as the call's
    /// answer (no retry); its tokens are then kept, not discarded.
    pub kept: bool,
}

/// How a unit's first translation reused block memory ([`Event::BlocksReused`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Reused {
    /// Blocks taken from an editor's earlier text.
    pub human: usize,
    /// Blocks taken from a seed (an existing human translation).
    pub seeded: usize,
    /// Blocks taken from a model's earlier translation.
    pub model: usize,
    /// Blocks sent to the model.
    pub sent: usize,
    /// The editor's blocks whose source changed (decided or not).
    pub stale: Vec<super::blocks::Stale>,
}

impl State {
    /// Rebuilds the state from `dir` (which may not exist yet) for a run with id `run`.
    pub fn load(c: &Campaign, dir: &Path, run: &str) -> anyhow::Result<State> {
        let mut s = State {
            run: run.to_string(),
            ..Default::default()
        };
        let (records, warnings) = store::read_journal(dir)?;
        s.warnings = warnings;
        for rec in &records {
            let result = match &rec.event {
                Event::CallFinished { file, sha256, .. } => {
                    match store::read_result(dir, file, Some(sha256)) {
                        Ok(r) if r.is_intact() => Some(r),
                        Ok(_) | Err(_) => {
                            s.warnings.push(format!(
                                "result {file} is damaged or missing; the call will be made again"
                            ));
                            continue;
                        }
                    }
                }
                _ => None,
            };
            if let Err(e) = s.apply(c, dir, rec, result) {
                s.warnings
                    .push(format!("journal record {}: {e:#}", rec.seq));
            }
        }
        s.adopt_orphans(c, dir);
        Ok(s)
    }

    /// Adopts result files that have no journal line (the process died between writing the
    /// file and appending the line) after checking their embedded hash.
    fn adopt_orphans(&mut self, c: &Campaign, dir: &Path) {
        let known: HashSet<String> = self.files.values().cloned().collect();
        let Ok(kinds) = std::fs::read_dir(dir.join("results")) else {
            return;
        };
        let mut orphans = Vec::new();
        for kind in kinds.flatten() {
            // Human edits are recorded by their own journal lines, never adopted as calls.
            // Human edits and block records are not call results: each is adopted only
            // through its own journal line.
            if kind.file_name() == "human" || kind.file_name() == "blocks" {
                continue;
            }
            let Ok(files) = std::fs::read_dir(kind.path()) else {
                continue;
            };
            for f in files.flatten() {
                let name = f.file_name().to_string_lossy().into_owned();
                if !name.ends_with(".json") || name.starts_with(".tmp") {
                    continue;
                }
                let rel = format!("results/{}/{}", kind.file_name().to_string_lossy(), name);
                if !known.contains(&rel) && !name.starts_with("termbase") {
                    orphans.push(rel);
                }
            }
        }
        orphans.sort();
        for rel in orphans {
            let Ok(bytes) = std::fs::read(dir.join(&rel)) else {
                continue;
            };
            let sha = crate::util::sha256_hex(&bytes);
            match serde_json::from_slice::<ResultFile>(&bytes) {
                Ok(r)
                    if r.is_intact()
                        && store::result_rel_path(&r.call) == rel
                        && !self.finished.contains_key(&r.call) =>
                {
                    let rec = Record {
                        seq: 0,
                        at_ms: store::now_ms(),
                        event: Event::CallFinished {
                            call: r.call.clone(),
                            agent: r.agent,
                            unit: r.unit.clone(),
                            file: rel.clone(),
                            sha256: sha.clone(),
                            usage: r.usage,
                            requests: r.requests,
                            ctx_tokens: 0,
                            adopted: true,
                        },
                    };
                    let call = r.call.clone();
                    if self.apply(c, dir, &rec, Some(r)).is_ok() {
                        self.warnings
                            .push(format!("adopted result {rel} that had no journal line"));
                        self.adopted.push((call, rel, sha));
                    }
                }
                _ => self.warnings.push(format!(
                    "ignored result file {rel}: its content does not check out"
                )),
            }
        }
    }

    /// Applies one journal record (with its result file for `CallFinished`).
    pub fn apply(
        &mut self,
        c: &Campaign,
        dir: &Path,
        rec: &Record,
        result: Option<ResultFile>,
    ) -> anyhow::Result<()> {
        match &rec.event {
            Event::RunawayReply {
                call,
                agent,
                unit,
                reason,
                usage,
                temperature,
                retry_temperature,
                kept,
            } => self.runaways.push(RunawayRecord {
                call: call.clone(),
                agent: *agent,
                unit: unit.clone(),
                reason: reason.clone(),
                usage: *usage,
                temperature: *temperature,
                retry_temperature: *retry_temperature,
                kept: *kept,
            }),
            Event::RunStopped { error, .. } => self.stopped = Some(error.clone()),
            Event::OutputBound { agent, figure, .. } => {
                self.figures.insert(*agent, *figure);
            }
            Event::FindingMarked {
                id,
                mark,
                note,
                unit,
                chapter,
                check,
                text_sha256,
                via,
                csv_sha256,
            } => self.marks.push(
                marks::MarkRecord {
                    seq: rec.seq,
                    id: id.clone(),
                    mark: *mark,
                    note: note.clone(),
                    unit: unit.clone(),
                    chapter: chapter.clone(),
                    check: check.clone(),
                    text_sha256: text_sha256.clone(),
                    via: via.clone(),
                },
                csv_sha256,
            ),
            Event::BudgetReached { stop, .. } => self.budget_stop = Some(stop.clone()),
            Event::RunStarted { run, .. } => {
                self.stopped = None;
                self.budget_stop = None;
                self.runs += 1;
                if *run == self.run {
                    self.run_started_seq = rec.seq;
                }
            }
            Event::CallStarted { .. }
            | Event::RunFinished { .. }
            | Event::RunInterrupted { .. } => {}
            // Experiment facts (single-agent context exhaustion, judge receipts) are read from
            // the journal by the experiment (`booktr experiment`); they change nothing here.
            Event::ContextExhausted { .. } | Event::Receipt { .. } => {}
            Event::CallFinished { .. } => self.apply_call_finished(c, rec, result)?,
            Event::CallFailed { .. } => self.apply_call_failed(rec)?,
            Event::GlossaryMerged { .. } => self.apply_glossary_merged(c, dir, rec)?,
            Event::BriefWritten { sha256, .. } => {
                self.brief_on_desk = Some(sha256.clone());
            }
            Event::BriefEdited { file, sha256 } => {
                let bytes = std::fs::read(dir.join(file))?;
                anyhow::ensure!(
                    crate::util::sha256_hex(&bytes) == *sha256,
                    "brief {file} changed after it was recorded"
                );
                self.set_brief(c, String::from_utf8(bytes)?, true);
                self.brief_on_desk = Some(sha256.clone());
                self.outputs_current = false;
            }
            Event::GlossaryReviewWritten {
                csv,
                csv_sha256,
                merged_sha256,
            } => {
                self.glossary_review_of = Some(merged_sha256.clone());
                self.glossary_review_csv = Some((csv.clone(), csv_sha256.clone()));
            }
            Event::GlossaryApproved { .. } => self.apply_glossary_approved(c, dir, rec)?,
            Event::RevisionsApproved { .. } => self.apply_revisions_approved(rec)?,
            Event::HumanEdit { .. } => self.apply_human_edit(c, dir, rec)?,
            Event::BlocksRecorded { file, sha256, .. } => {
                let bytes = std::fs::read(dir.join(file))?;
                anyhow::ensure!(
                    crate::util::sha256_hex(&bytes) == *sha256,
                    "block records {file} changed after they were recorded"
                );
                let f: super::blocks::BlocksFile = serde_json::from_slice(&bytes)?;
                self.blocks.recorded(f, file);
                self.refresh_reusable(c);
            }
            Event::BlocksReused {
                fp,
                human,
                seeded,
                model,
                sent,
                stale,
                ..
            } => self.blocks.reused(
                fp,
                Reused {
                    human: *human,
                    seeded: *seeded,
                    model: *model,
                    sent: *sent,
                    stale: stale.clone(),
                },
            ),
            Event::StaleEditResolved { fp, .. } => {
                self.blocks.stale.remove(fp);
                if let Some(text) = self.human_edits.get(fp).cloned() {
                    self.check_translation(c, fp, HUMAN_ROUND, &text, &[]);
                }
                self.outputs_current = false;
            }
            Event::UnitSplit { .. } => self.apply_unit_split(rec)?,
            Event::UnitPieces {
                fp,
                round,
                parts,
                reason,
                ..
            } => {
                self.pieces_why
                    .insert(fp.clone(), (parts.len(), reason.clone()));
                self.splits.insert(
                    super::pieces::pieces_key(fp),
                    parts.iter().map(|&(a, b)| a..b).collect(),
                );
                self.pieces.insert(fp.clone(), *round);
            }
            Event::HumanEditsDiscarded { fps } => {
                self.blocks.discarded(fps);
                for fp in fps {
                    self.human_edits.remove(fp);
                    self.imported_edits.remove(fp);
                    self.qa.remove(&(fp.clone(), HUMAN_ROUND));
                }
                self.outputs_current = false;
            }
            Event::OutputsWritten { files } => {
                self.outputs = files.clone();
                self.outputs_current = true;
            }
            Event::BatchSubmitted { batch, items, .. } => {
                self.open_batches.push((batch.clone(), items.clone()));
            }
            Event::BatchEnded { batch, run, .. } => {
                if let Some(i) = self.open_batches.iter().position(|(b, _)| b == batch) {
                    let (_, items) = self.open_batches.remove(i);
                    if *run == self.run {
                        self.batch_tried.extend(items.into_iter().map(|it| it.call));
                    }
                }
            }
        }
        Ok(())
    }

    /// Applies a `call_finished` record (see [`State::apply`]).
    fn apply_call_finished(
        &mut self,
        c: &Campaign,
        rec: &Record,
        result: Option<ResultFile>,
    ) -> anyhow::Result<()> {
        // `apply` dispatches by event, so the record is always this one.
        let Event::CallFinished {
            call,
            agent,
            unit,
            file,
            usage,
            requests,
            ctx_tokens,
            ..
        } = &rec.event
        else {
            return Ok(());
        };
        let result = result.ok_or_else(|| anyhow::anyhow!("no result for {call}"))?;
        if let (Some(sample), true) = (result.sample, *requests > 0) {
            self.samples.entry(*agent).or_default().push(sample);
        }
        // A local join of split parts made no request: it is not a call of its own.
        if *requests > 0 {
            self.record_usage(*agent, usage, *requests);
            self.paid.push(PaidCall {
                agent: *agent,
                call: call.clone(),
                unit: unit.clone(),
                usage: *usage,
            });
        }
        self.push_log(
            *agent,
            unit.clone().unwrap_or_else(|| call_label(call)),
            "ok",
            usage,
        );
        self.ctx_peak = self.ctx_peak.max(*ctx_tokens);
        self.open_failures.remove(call);
        self.failure_runs.remove(call);
        if let (
            Output::Translation {
                round,
                text,
                cleanup,
                ..
            },
            Some((key, _)),
        ) = (&result.output, parse_translate_key(call))
        {
            if key.contains(".p") {
                self.part_translations.insert(key.to_string(), text.clone());
            } else {
                self.translations
                    .entry(key.to_string())
                    .or_default()
                    .insert(*round, call.clone());
                if *round > 0 {
                    self.revised_fps.insert(key.to_string());
                }
                if *round == 0 && self.run_started_seq > 0 && rec.seq > self.run_started_seq {
                    self.translated_this_run.insert(key.to_string());
                }
                self.check_translation(c, key, *round, text, &cleanup.left_in_source);
            }
        }
        let reconciled = match &result.output {
            // Checked again on replay: a result file recorded before the check existed
            // must not enforce an unobserved rendering either.
            Output::Reconciliation {
                choice: Some(ch),
                term,
                renderings,
                ..
            } if crate::agents::reconcile::verify(ch, term, renderings).is_ok() => {
                Some(crate::termbase::Entry {
                    source: ch.term.clone(),
                    target: ch.rendering.clone(),
                    note: ch.note.clone(),
                    origin: crate::termbase::Origin::Reconciled,
                    forbidden: Vec::new(),
                    variants: Vec::new(),
                })
            }
            _ => None,
        };
        // The editor's version of the brief stays in force over a newer agent brief.
        if let Output::Brief { text } = &result.output
            && !self.brief.as_ref().is_some_and(|b| b.edited)
        {
            self.set_brief(c, text.clone(), false);
        }
        self.files.insert(call.clone(), file.clone());
        self.finished.insert(call.clone(), result);
        if let Some((key, 0)) = parse_translate_key(call)
            && let Some(units) = self.fp_units.get(key)
        {
            for i in units {
                self.first_pending.remove(i);
                self.blocks.reusable.remove(i);
            }
        }
        self.outputs_current = false;
        if let Some(entry) = reconciled {
            let key = crate::termbase::term_key(&entry.source);
            self.reconciled
                .retain(|e| crate::termbase::term_key(&e.source) != key);
            self.reconciled.push(entry);
            self.refresh_qa(c);
        }
        Ok(())
    }

    /// Applies a `call_failed` record (see [`State::apply`]).
    fn apply_call_failed(&mut self, rec: &Record) -> anyhow::Result<()> {
        // `apply` dispatches by event, so the record is always this one.
        let Event::CallFailed {
            call,
            agent,
            unit,
            run,
            error,
            attempts,
            usage,
            unusable,
        } = &rec.event
        else {
            return Ok(());
        };
        self.add_paid(*agent, usage, *attempts);
        self.paid.push(PaidCall {
            agent: *agent,
            call: call.clone(),
            unit: unit.clone(),
            usage: *usage,
        });
        if usage.completion_tokens > 0 {
            self.not_kept.push(NotKept {
                call: call.clone(),
                agent: *agent,
                unit: unit.clone(),
                reason: error.clone(),
                usage: *usage,
            });
        }
        self.usage.entry(*agent).or_default().failed += 1;
        self.push_log(
            *agent,
            unit.clone().unwrap_or_else(|| call_label(call)),
            "failed",
            &Usage::default(),
        );
        self.last_failed = Some(call.clone());
        self.open_failures.insert(call.clone(), error.clone());
        self.failure_runs
            .insert(call.clone(), (run.clone(), *unusable));
        Ok(())
    }

    /// Applies a `glossary_merged` record (see [`State::apply`]).
    fn apply_glossary_merged(
        &mut self,
        c: &Campaign,
        dir: &Path,
        rec: &Record,
    ) -> anyhow::Result<()> {
        // `apply` dispatches by event, so the record is always this one.
        let Event::GlossaryMerged {
            file,
            sha256,
            dropped_by_house,
            inputs,
            rejected,
            ..
        } = &rec.event
        else {
            return Ok(());
        };
        self.glossary_inputs = Some(inputs.clone());
        self.glossary_rejections = rejected.clone();
        let bytes = std::fs::read(dir.join(file))?;
        anyhow::ensure!(
            crate::util::sha256_hex(&bytes) == *sha256,
            "glossary {file} changed after it was recorded"
        );
        let tb: Termbase = serde_json::from_slice(&bytes)?;
        self.merged_sha256 = Some(sha256.clone());
        // An approval of this very termbase (same bytes) still holds.
        match self.glossary_approval.clone() {
            Some(a) if a.merged_sha256 == *sha256 => self.set_termbase(c, &a.file, a.termbase),
            _ => self.set_termbase(c, file, tb),
        }
        self.glossary_dropped_by_house = *dropped_by_house;
        self.outputs_current = false;
        Ok(())
    }

    /// Applies a `glossary_approved` record (see [`State::apply`]).
    fn apply_glossary_approved(
        &mut self,
        c: &Campaign,
        dir: &Path,
        rec: &Record,
    ) -> anyhow::Result<()> {
        // `apply` dispatches by event, so the record is always this one.
        let Event::GlossaryApproved {
            merged_sha256,
            csv_sha256,
            file,
            sha256,
            brief_sha256,
            changes,
        } = &rec.event
        else {
            return Ok(());
        };
        let bytes = std::fs::read(dir.join(file))?;
        anyhow::ensure!(
            crate::util::sha256_hex(&bytes) == *sha256,
            "approved termbase {file} changed after it was recorded"
        );
        let tb: Termbase = serde_json::from_slice(&bytes)?;
        self.glossary_approval = Some(GlossaryApproval {
            merged_sha256: merged_sha256.clone(),
            csv_sha256: csv_sha256.clone(),
            brief_sha256: brief_sha256.clone(),
            file: file.clone(),
            termbase: tb.clone(),
            changes: changes.clone(),
            at_ms: rec.at_ms,
        });
        self.set_termbase(c, file, tb);
        self.outputs_current = false;
        Ok(())
    }

    /// Applies a `revisions_approved` record (see [`State::apply`]).
    fn apply_revisions_approved(&mut self, rec: &Record) -> anyhow::Result<()> {
        // `apply` dispatches by event, so the record is always this one.
        let Event::RevisionsApproved {
            round,
            decision,
            approved,
            rejected,
            chapters,
        } = &rec.event
        else {
            return Ok(());
        };
        // Approvals by chapter add up; a unit keeps its first decision.
        let a = self
            .revision_approvals
            .entry(decision.clone())
            .or_insert_with(|| RevisionApproval {
                round: *round,
                approved: Vec::new(),
                rejected: Vec::new(),
                chapters: Vec::new(),
            });
        for u in approved {
            if !a.decided(u) {
                a.approved.push(u.clone());
            }
        }
        for u in rejected {
            if !a.decided(u) {
                a.rejected.push(u.clone());
            }
        }
        for ch in chapters {
            if !a.chapters.contains(ch) {
                a.chapters.push(ch.clone());
            }
        }
        Ok(())
    }

    /// Applies a `human_edit` record (see [`State::apply`]).
    fn apply_human_edit(&mut self, c: &Campaign, dir: &Path, rec: &Record) -> anyhow::Result<()> {
        // `apply` dispatches by event, so the record is always this one.
        let Event::HumanEdit {
            fp,
            file,
            sha256,
            imported,
            carried,
            ..
        } = &rec.event
        else {
            return Ok(());
        };
        self.blocks.human_edit(fp, *carried);
        let bytes = std::fs::read(dir.join(file))?;
        anyhow::ensure!(
            crate::util::sha256_hex(&bytes) == *sha256,
            "human edit {file} changed after it was recorded"
        );
        let edit: store::HumanEditFile = serde_json::from_slice(&bytes)?;
        self.check_translation(c, fp, HUMAN_ROUND, &edit.text, &[]);
        self.human_edits.insert(fp.clone(), edit.text);
        if *imported {
            self.imported_edits.insert(fp.clone());
        } else {
            self.imported_edits.remove(fp);
        }
        self.outputs_current = false;
        Ok(())
    }

    /// Applies a `unit_split` record (see [`State::apply`]).
    fn apply_unit_split(&mut self, rec: &Record) -> anyhow::Result<()> {
        // `apply` dispatches by event, so the record is always this one.
        let Event::UnitSplit {
            unit,
            key,
            parts,
            usage,
            requests,
            reason,
        } = &rec.event
        else {
            return Ok(());
        };
        self.add_paid(Agent::Translation, usage, *requests);
        self.paid.push(PaidCall {
            agent: Agent::Translation,
            call: super::CallKey::translate(key, 0).to_string(),
            unit: Some(unit.clone()),
            usage: *usage,
        });
        if usage.completion_tokens > 0 {
            self.not_kept.push(NotKept {
                call: super::CallKey::translate(key, 0).to_string(),
                agent: Agent::Translation,
                unit: Some(unit.clone()),
                reason: reason.clone(),
                usage: *usage,
            });
        }
        self.splits
            .insert(key.clone(), parts.iter().map(|&(a, b)| a..b).collect());
        Ok(())
    }

    /// Sets the glossary termbase: recomputes every unit's fingerprint and the QA of every
    /// recorded translation (its glossary check depends on the termbase).
    fn set_termbase(&mut self, c: &Campaign, file: &str, tb: Termbase) {
        self.termbase = Some((file.to_string(), tb));
        self.refresh_fps(c);
        self.refresh_qa(c);
    }

    /// Sets the brief in force; unit fingerprints change with it.
    fn set_brief(&mut self, c: &Campaign, text: String, edited: bool) {
        let sha256 = crate::util::sha256_hex(text.as_bytes());
        if self.brief.as_ref().is_some_and(|b| b.sha256 == sha256) {
            return;
        }
        self.brief = Some(BriefText {
            text,
            sha256,
            edited,
        });
        self.refresh_fps(c);
    }

    /// Recomputes every unit's fingerprint from the termbase and the brief (none before the
    /// termbase exists).
    fn refresh_fps(&mut self, c: &Campaign) {
        let Some((_, tb)) = &self.termbase else {
            return;
        };
        let brief = self.brief.as_ref().map_or("", |b| b.sha256.as_str());
        self.fps = c
            .units
            .iter()
            .map(|u| (u.id.clone(), c.unit_fp(u, tb, brief)))
            .collect();
        self.unit_of_fp = c
            .units
            .iter()
            .enumerate()
            .map(|(i, u)| (self.fps[&u.id].clone(), i))
            .collect();
        self.fp_units.clear();
        self.first_pending.clear();
        for (i, u) in c.units.iter().enumerate() {
            let fp = &self.fps[&u.id];
            self.fp_units.entry(fp.clone()).or_default().push(i);
            if u.kind.needs_translation()
                && !self
                    .finished
                    .contains_key(&super::call_key::CallKey::translate(fp, 0).to_string())
            {
                self.first_pending.insert(i);
            }
        }
        self.refresh_reusable(c);
    }

    /// Recomputes [`State::is_reusable`] for the units still to translate.
    fn refresh_reusable(&mut self, c: &Campaign) {
        self.blocks.reusable.clear();
        if (self.blocks.memory.is_empty() && c.seeds.is_empty()) || self.termbase.is_none() {
            return;
        }
        let pending: Vec<usize> = self.first_pending.iter().copied().collect();
        for i in pending {
            // A unit the translation memory holds whole is a memory hit, not a reuse.
            if c.memory.lookup_joined(c.source_text(&c.units[i])).is_some() {
                continue;
            }
            if self.reuse_plan(c, i).is_some_and(|p| p.reuses()) {
                self.blocks.reusable.insert(i);
            }
        }
    }

    /// Whether the termbase in force was approved by the editor (the newest approval is of the
    /// newest merged termbase).
    pub fn glossary_approved(&self) -> bool {
        match (&self.glossary_approval, &self.merged_sha256) {
            (Some(a), Some(m)) => a.merged_sha256 == *m,
            _ => false,
        }
    }

    /// The brief text in force (empty before the brief exists).
    pub fn brief_text(&self) -> &str {
        self.brief.as_ref().map_or("", |b| b.text.as_str())
    }

    /// The termbase requests and QA use: the glossary termbase plus reconciled entries for terms
    /// it does not cover.
    pub fn effective_termbase(&self) -> &Termbase {
        &self.effective
    }

    /// Rebuilds the QA context from the effective termbase and re-checks every recorded
    /// translation (their glossary checks depend on it).
    fn refresh_qa(&mut self, c: &Campaign) {
        let base = self
            .termbase
            .as_ref()
            .map(|t| t.1.clone())
            .unwrap_or_default();
        self.effective = Termbase::merge(&base, &self.reconciled).0;
        let mut ctx = c.qa_context(&self.effective);
        // Agent entries are enforced (errors) only once an editor approved them.
        ctx.agent_entries_approved = self.glossary_approved();
        self.qa_ctx = Some(ctx);
        let mut todo: Vec<(String, u32, String, Vec<String>)> = Vec::new();
        for (fp, rounds) in &self.translations {
            for (round, call) in rounds {
                if let Some(Output::Translation { text, cleanup, .. }) =
                    self.finished.get(call).map(|r| &r.output)
                {
                    todo.push((
                        fp.clone(),
                        *round,
                        text.clone(),
                        cleanup.left_in_source.clone(),
                    ));
                }
            }
        }
        for (fp, text) in self.human_edits.clone() {
            todo.push((fp, HUMAN_ROUND, text, Vec::new()));
        }
        for (fp, round, text, left) in todo {
            self.check_translation(c, &fp, round, &text, &left);
        }
    }

    /// Runs the per-unit QA checks on `text` as the translation of the unit with fingerprint
    /// `fp` (nothing when no current unit has that fingerprint).
    /// QA of one candidate text of the unit with fingerprint `fp` at `round` (and of its
    /// repaired candidate): `left_in_source` are the pieces of a stuck unit joined in the
    /// source language because the model's answer for them was unusable (the candidate's
    /// `cleanup.left_in_source`), each an `untranslated` error, since the whole-unit checks
    /// cannot see one English paragraph in a unit that is otherwise translated.
    fn check_translation(
        &mut self,
        c: &Campaign,
        fp: &str,
        round: u32,
        text: &str,
        left_in_source: &[String],
    ) {
        let Some(&i) = self.unit_of_fp.get(fp) else {
            return;
        };
        let u = &c.units[i];
        let ctx = self
            .qa_ctx
            .get_or_insert_with(|| c.qa_context(&Termbase::default()));
        let check = |text: &str| {
            let mut findings = qa::check_unit(ctx, &u.id, &u.chapter, c.source_text(u), text);
            if round != HUMAN_ROUND {
                for piece in left_in_source {
                    let mut f = Finding::new(
                        "untranslated",
                        qa::Severity::Error,
                        "this piece is in the source language: the model's answer for it could not be used when the unit was translated again in pieces; translate it by hand",
                        piece,
                        piece,
                    );
                    f.unit = u.id.clone();
                    f.chapter = u.chapter.clone();
                    findings.push(f);
                }
            }
            // A model translation whose request carried neighbour context: check it did not
            // translate the context too.
            if round != HUMAN_ROUND
                && let Some(context) = c.context_for(u)
            {
                for mut f in qa::unit::context_echo::check(ctx, c.source_text(u), &context, text) {
                    f.unit = u.id.clone();
                    f.chapter = u.chapter.clone();
                    findings.push(f);
                }
            }
            findings
        };
        let mut findings = check(text);
        if round == HUMAN_ROUND {
            findings.extend(stale_findings(
                u,
                &c.plan.show(&c.plan.campaign_file),
                self.blocks.stale.get(fp),
            ));
        }
        let key = (fp.to_string(), round);
        self.repaired.remove(&key);
        // Human edits are never repaired; a model text only when repair is on and QA found an
        // error repair may fix.
        if round != HUMAN_ROUND
            && c.plan.repair
            && findings.iter().any(|f| {
                f.severity == qa::Severity::Error && crate::repair::is_mechanical_finding(f)
            })
        {
            let opts = crate::repair::Options {
                code_comments: c.plan.code_comments,
                keep_ids: c
                    .heading_ids()
                    .and_then(|h| crate::repair::KeepIds::of(&h, c.source_text(u))),
                ..Default::default()
            };
            let out = crate::repair::repair(c.source_text(u), text, &opts);
            if !out.repairs.is_empty() {
                let repaired_findings = check(&out.text);
                self.repaired.insert(
                    key.clone(),
                    RepairedText {
                        text: out.text,
                        repairs: out.repairs,
                        findings: repaired_findings,
                    },
                );
            }
        }
        self.qa.insert(key, findings);
    }

    /// The repaired candidate of unit `unit`'s (id) model translation at `round`, if repair
    /// made one (see [`RepairedText`]).
    pub fn repaired_at(&self, unit: &str, round: u32) -> Option<&RepairedText> {
        self.repaired.get(&(self.fp(unit)?.to_string(), round))
    }

    /// Whether round `round` of unit `unit` is represented by its repaired candidate: there is
    /// one and QA finds it no worse than the model's text ([`select_kept`] on the two, the
    /// repaired one being later).
    pub fn uses_repaired(&self, unit: &str, round: u32) -> bool {
        self.repaired_at(unit, round).is_some_and(|r| {
            let model = self.translation_at(unit, round).unwrap_or("");
            prefer_repaired(
                rank(model, self.findings_at(unit, round)),
                rank(&r.text, &r.findings),
            )
        })
    }

    /// The better of round `round`'s two candidates (the model's text, its repaired
    /// candidate): text and findings. See [`State::uses_repaired`].
    fn round_best(&self, unit: &str, round: u32) -> Option<(&str, &[Finding])> {
        if self.uses_repaired(unit, round) {
            let r = self.repaired_at(unit, round)?;
            return Some((r.text.as_str(), r.findings.as_slice()));
        }
        Some((
            self.translation_at(unit, round)?,
            self.findings_at(unit, round),
        ))
    }

    /// Term keys (see [`crate::termbase::term_key`]) of every candidate a finished Glossary call
    /// was asked about, whether or not it proposed an entry for it.
    pub fn answered_terms(&self) -> HashSet<String> {
        self.finished
            .values()
            .filter_map(|r| match &r.output {
                Output::GlossaryBatch { asked, .. } => Some(asked),
                _ => None,
            })
            .flatten()
            .map(|c| crate::termbase::term_key(&c.term))
            .collect()
    }

    /// The newest entry proposed for each term key by finished Glossary calls, in journal
    /// order of their results.
    pub fn proposed_entries(&self) -> HashMap<String, crate::termbase::Entry> {
        let mut calls: Vec<&String> = self
            .finished
            .keys()
            .filter(|k| super::CallKey::parse(k).is_glossary())
            .collect();
        calls.sort_by_key(|k| self.files.get(*k).cloned());
        let mut out = HashMap::new();
        for k in calls {
            if let Output::GlossaryBatch { entries, .. } = &self.finished[k].output {
                for e in entries {
                    out.insert(crate::termbase::term_key(&e.source), e.clone());
                }
            }
        }
        out
    }

    /// The fingerprint of unit `id` (once the termbase is known).
    pub fn fp(&self, id: &str) -> Option<&str> {
        self.fps.get(id).map(String::as_str)
    }

    /// The editor's text for unit `id`, if it was edited by hand.
    pub fn human_edit(&self, id: &str) -> Option<&str> {
        self.human_edits.get(self.fp(id)?).map(String::as_str)
    }

    /// Whether unit `id`'s first translation came from a translation memory (its round-0
    /// result has `origin: memory`, see `ops/memory.rs`).
    pub fn is_memory_hit(&self, id: &str) -> bool {
        self.fp(id)
            .and_then(|fp| {
                self.finished
                    .get(&super::CallKey::translate(fp, 0).to_string())
            })
            .is_some_and(|r| matches!(r.origin, Some(store::ResultOrigin::Memory { .. })))
    }

    /// Rounds with a recorded translation of unit `id`.
    pub fn rounds_of(&self, id: &str) -> Vec<u32> {
        self.fp(id)
            .and_then(|fp| self.translations.get(fp))
            .map(|r| r.keys().copied().collect())
            .unwrap_or_default()
    }

    /// QA findings of unit `id`'s translation at `round` exactly.
    pub fn findings_at(&self, id: &str, round: u32) -> &[Finding] {
        self.fp(id)
            .and_then(|fp| self.qa.get(&(fp.to_string(), round)))
            .map_or(&[], Vec::as_slice)
    }

    /// Adds tokens and requests of answers that were paid for but not accepted.
    fn add_paid(&mut self, agent: Agent, usage: &Usage, requests: u32) {
        let u = self.usage.entry(agent).or_default();
        u.requests += requests as u64;
        u.prompt_tokens += usage.prompt_tokens;
        u.completion_tokens += usage.completion_tokens;
        u.cached_tokens += usage.cached_tokens;
    }

    fn record_usage(&mut self, agent: Agent, usage: &Usage, requests: u32) {
        let u = self.usage.entry(agent).or_default();
        u.calls += 1;
        u.requests += requests as u64;
        u.prompt_tokens += usage.prompt_tokens;
        u.completion_tokens += usage.completion_tokens;
        u.cached_tokens += usage.cached_tokens;
    }

    fn push_log(&mut self, agent: Agent, about: String, outcome: &'static str, usage: &Usage) {
        if self.recent.len() == RECENT_CALLS {
            self.recent.pop_front();
        }
        self.recent.push_back(LogLine {
            agent,
            about,
            outcome,
            tokens: usage.prompt_tokens + usage.completion_tokens,
        });
    }

    /// The leaf parts of a split unit (given its fingerprint), in order: `(part id, byte range
    /// within the unit text)`. Part ids are `<fp>.p1`, `<fp>.p2`, and `<fp>.p1.p1`… when a part
    /// was split again.
    pub fn leaf_parts(&self, id: &str) -> Vec<(String, std::ops::Range<usize>)> {
        let mut out = Vec::new();
        if let Some(parts) = self.splits.get(id) {
            for (k, r) in parts.iter().enumerate() {
                let pid = format!("{id}.p{}", k + 1);
                if self.splits.contains_key(&pid) {
                    out.extend(self.leaf_parts(&pid));
                } else {
                    out.push((pid, r.clone()));
                }
            }
        }
        out
    }

    /// Whether `call` has finished.
    pub fn is_done(&self, call: &str) -> bool {
        self.finished.contains_key(call)
    }

    /// Whether `call` has finished or failed in the run `s` was loaded for ([`State::run`]);
    /// see [`State::is_settled_in`].
    pub fn is_settled(&self, call: &str) -> bool {
        self.is_settled_in(call, &self.run)
    }

    /// Whether `call` has finished, or failed in run `run` and not finished since (either
    /// way, nothing more to do in that run: a failure is retried by a later run only).
    pub fn is_settled_in(&self, call: &str, run: &str) -> bool {
        self.is_done(call) || self.failed_in_run(call, run)
    }

    /// Whether `call`'s newest unresolved failure was recorded by run `run`.
    pub fn failed_in_run(&self, call: &str, run: &str) -> bool {
        self.failure_runs.get(call).is_some_and(|(r, _)| r == run)
    }

    /// Whether model call `call` failed in run `run` with an answer the model gave but that
    /// could not be used (see [`super::commit::JobFailure::unusable`]), as its newest failure.
    pub fn unusable_in_run(&self, call: &str, run: &str) -> bool {
        self.failure_runs
            .get(call)
            .is_some_and(|(r, unusable)| r == run && *unusable)
    }

    /// The translation of unit `unit` (id) at round `round` exactly.
    pub fn translation_at(&self, unit: &str, round: u32) -> Option<&str> {
        let call = self.translations.get(self.fp(unit)?)?.get(&round)?;
        match &self.finished.get(call)?.output {
            Output::Translation { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The newest translation of unit `unit` (id) with round ≤ `max_round`: (round, text).
    ///
    /// The newest is not necessarily the one the book uses: a revision may be worse than what
    /// it replaces. Everything that works on the text of the book (reviews, decisions, further
    /// revisions, campaign QA, outputs, reports, exports) uses [`State::kept_translation`].
    pub fn latest_translation(&self, unit: &str, max_round: u32) -> Option<(u32, &str)> {
        let rounds = self.translations.get(self.fp(unit)?)?;
        let (&round, call) = rounds.range(..=max_round).next_back()?;
        match &self.finished.get(call)?.output {
            Output::Translation { text, .. } => Some((round, text.as_str())),
            _ => None,
        }
    }

    /// QA findings of the newest translation of unit `unit` (round ≤ `max_round`).
    pub fn latest_findings(&self, unit: &str, max_round: u32) -> &[Finding] {
        self.latest_translation(unit, max_round)
            .map_or(&[], |(r, _)| self.findings_at(unit, r))
    }

    /// The round of the kept candidate among unit `unit`'s model translations with round ≤
    /// `max_round` (see [`select_kept`]: fewest error findings, then fewest warnings, the
    /// latest on a tie). `None` when the unit has no translation in that range.
    ///
    /// A pure function of the recorded results and their QA, so a resumed run makes the same
    /// choice. Human edits are not model candidates: they win over every round (see
    /// [`State::final_findings`], [`crate::campaign::core::edits::final_text`]).
    pub fn kept_round(&self, unit: &str, max_round: u32) -> Option<u32> {
        let rounds = self.translations.get(self.fp(unit)?)?;
        let rounds: Vec<u32> = rounds.range(..=max_round).map(|(r, _)| *r).collect();
        let ranks: Vec<Rank> = rounds
            .iter()
            .map(|&r| {
                self.round_best(unit, r)
                    .map_or(rank("", &[]), |b| rank(b.0, b.1))
            })
            .collect();
        select_kept(&ranks).map(|i| rounds[i])
    }

    /// The [`Rank`] of unit `unit`'s kept model translation among rounds ≤ `max_round`;
    /// `None` without one.
    pub fn kept_rank(&self, unit: &str, max_round: u32) -> Option<Rank> {
        let round = self.kept_round(unit, max_round)?;
        self.round_best(unit, round).map(|(t, f)| rank(t, f))
    }

    /// The kept translation of unit `unit` (id) among rounds ≤ `max_round`: (round, text).
    /// See [`State::kept_round`].
    pub fn kept_translation(&self, unit: &str, max_round: u32) -> Option<(u32, &str)> {
        let round = self.kept_round(unit, max_round)?;
        Some((round, self.round_best(unit, round)?.0))
    }

    /// QA findings of the kept translation of unit `unit` among rounds ≤ `max_round`.
    pub fn kept_findings(&self, unit: &str, max_round: u32) -> &[Finding] {
        self.kept_round(unit, max_round)
            .and_then(|r| self.round_best(unit, r))
            .map_or(&[], |b| b.1)
    }

    /// Every candidate text of unit `unit`, oldest first: each recorded translation round
    /// (followed by its repaired candidate when repair made one, see [`State::repaired_at`]),
    /// then the editor's text if there is one. Exactly one is `kept` when there is any: the
    /// human edit if there is one, else the kept model candidate ([`State::kept_round`]).
    pub fn candidates(&self, unit: &str) -> Vec<Candidate> {
        let mut out: Vec<Candidate> = Vec::new();
        let human = self.human_edit(unit).is_some();
        let kept = if human {
            None
        } else {
            self.kept_round(unit, u32::MAX - 1)
        };
        let mut best: Option<Rank> = None;
        for round in self.rounds_of(unit) {
            let findings = self.findings_at(unit, round);
            let this = rank(self.translation_at(unit, round).unwrap_or(""), findings);
            let Rank {
                errors, warnings, ..
            } = this;
            let call = self
                .fp(unit)
                .and_then(|fp| self.translations.get(fp)?.get(&round));
            let result = call.and_then(|c| self.finished.get(c));
            let origin = match result {
                Some(ResultFile {
                    output: Output::Translation { joined_from, .. },
                    ..
                }) if round > 0 && !joined_from.is_empty() => CandidateOrigin::Pieces,
                _ if round > 0 => CandidateOrigin::Revision,
                Some(r) if matches!(r.origin, Some(store::ResultOrigin::Memory { .. })) => {
                    CandidateOrigin::Memory
                }
                Some(ResultFile {
                    output: Output::Translation { joined_from, .. },
                    ..
                }) if !joined_from.is_empty() => CandidateOrigin::Joined,
                _ => CandidateOrigin::Translation,
            };
            let repaired = self.uses_repaired(unit, round);
            out.push(Candidate {
                round: Some(round),
                origin,
                errors,
                warnings,
                left_in_source: this.left_in_source,
                critical: this.critical,
                rejected: round > 0 && best.is_some_and(|b| this > b),
                kept: kept == Some(round) && !repaired,
            });
            best = Some(best.map_or(this, |b| b.min(this)));
            if let Some(r) = self.repaired_at(unit, round) {
                let this = rank(&r.text, &r.findings);
                out.push(Candidate {
                    round: Some(round),
                    origin: CandidateOrigin::Repaired,
                    errors: this.errors,
                    warnings: this.warnings,
                    left_in_source: this.left_in_source,
                    critical: this.critical,
                    rejected: best.is_some_and(|b| this > b),
                    kept: kept == Some(round) && repaired,
                });
                best = Some(best.map_or(this, |b| b.min(this)));
            }
        }
        if human {
            let this = rank(
                self.human_edit(unit).unwrap_or(""),
                self.findings_at(unit, HUMAN_ROUND),
            );
            let Rank {
                errors, warnings, ..
            } = this;
            let imported = self
                .fp(unit)
                .is_some_and(|fp| self.imported_edits.contains(fp));
            out.push(Candidate {
                round: None,
                origin: if imported {
                    CandidateOrigin::Imported
                } else {
                    CandidateOrigin::Human
                },
                errors,
                warnings,
                left_in_source: this.left_in_source,
                critical: this.critical,
                rejected: false,
                kept: true,
            });
        }
        out
    }

    /// QA findings of the text a unit has in the output: its human edit if any, else its
    /// kept translation ([`State::kept_round`]).
    pub fn final_findings(&self, unit: &str) -> &[Finding] {
        if self.human_edit(unit).is_some() {
            return self.findings_at(unit, HUMAN_ROUND);
        }
        self.kept_findings(unit, u32::MAX - 1)
    }

    /// Why the newest run stopped at its budget cap ([`super::store::BudgetStop`]), if it
    /// did.
    pub fn budget_stop(&self) -> Option<&super::store::BudgetStop> {
        self.budget_stop.as_ref()
    }

    /// Every billed call in journal order, with its usage: the lines [`State::usage`] sums
    /// (prompt, cached and completion tokens agree exactly).
    pub fn paid_calls(&self) -> &[PaidCall] {
        &self.paid
    }

    /// Total usage over all agents.
    pub fn total_usage(&self) -> AgentUsage {
        let mut t = AgentUsage::default();
        for u in self.usage.values() {
            t.calls += u.calls;
            t.requests += u.requests;
            t.failed += u.failed;
            t.prompt_tokens += u.prompt_tokens;
            t.completion_tokens += u.completion_tokens;
            t.cached_tokens += u.cached_tokens;
        }
        t
    }
}

/// Bookkeeping of the write protocol ([`super::commit`]), which owns when these run.
impl State {
    /// Raises the largest context measured (`ctx_peak`, tokens) to `tokens` when larger.
    pub(in crate::campaign) fn note_ctx_tokens(&mut self, tokens: usize) {
        self.ctx_peak = self.ctx_peak.max(tokens);
    }

    /// Takes the result files adopted by [`State::load`] (call key, relative path, sha256) to
    /// be journaled; afterwards none are pending.
    pub(in crate::campaign) fn take_adopted(&mut self) -> Vec<(String, String, String)> {
        std::mem::take(&mut self.adopted)
    }
}

/// The QA check name of a stale edit ([`super::blocks::Stale`]).
pub const STALE_EDIT: &str = "stale_edit";

/// One `stale_edit` error per stale edit of unit `u`: the old source, the new source and the
/// editor's text, with the commands that decide it.
fn stale_findings(
    u: &crate::book::Unit,
    campaign: &str,
    stale: Option<&Vec<super::blocks::Stale>>,
) -> Vec<Finding> {
    stale
        .into_iter()
        .flatten()
        .map(|s| {
            let mut f = Finding::new(
                STALE_EDIT,
                qa::Severity::Error,
                format!(
                    "the source of a paragraph you edited changed (was: \"{}\"); your text is kept until you decide: edit it in the output, or run `booktr approve {campaign} --stale {} --keep editor` (your text stands) or `--keep model` (take the model's translation of the new source)",
                    crate::util::excerpt(&s.old_source, 120),
                    u.id
                ),
                &s.new_source,
                &s.editor,
            );
            f.unit = u.id.clone();
            f.chapter = u.chapter.clone();
            f
        })
        .collect()
}

/// Where a candidate text of a unit came from (`origin` in report.json, snake_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateOrigin {
    /// The first translation (round 0) by the Translation agent.
    Translation,
    /// A revision (round ≥ 1) by the Translation agent, with QA and reviewer feedback.
    Revision,
    /// A first translation taken from a translation memory (TMX), no model call.
    Memory,
    /// A first translation joined from the parts of a unit that was split.
    Joined,
    /// The editor's hand edit of an output chapter.
    Human,
    /// An edit imported from a file (`booktr import` of an XLIFF).
    Imported,
    /// Smaller when stuck: the unit translated again as smaller pieces (groups
    /// of consecutive top-level blocks) after its revision rounds left a structural error,
    /// joined at a round of its own after the last revision round (see
    /// [`super::pieces`]). Kept only when no worse than every earlier candidate.
    Pieces,
    /// A model translation (of the same round) after deterministic mechanical repair
    /// ([`crate::repair`], campaign key `repair`); listed right after that round's text.
    Repaired,
}

/// One candidate text of a unit with its QA counts (see [`State::candidates`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// The translation round; `None` (JSON `null`) for a human or imported edit.
    pub round: Option<u32>,
    pub origin: CandidateOrigin,
    /// Error findings of the per-unit QA checks on this text.
    pub errors: usize,
    /// Warning findings of the per-unit QA checks on this text.
    pub warnings: usize,
    /// Nearly all of the text is still in the source language ([`Rank::left_in_source`]).
    pub left_in_source: bool,
    /// Error findings that lost content ([`Rank::critical`]).
    pub critical: usize,
    /// True for a revision that ranks below the best earlier candidate ([`Rank`]: left in
    /// the source language where that one is a translation, content lost where that one lost
    /// none, or more error findings): it is kept on record, never used.
    pub rejected: bool,
    /// True for the candidate the book uses.
    pub kept: bool,
}

/// `(error findings, warning findings)` of a list of findings.
pub fn score(findings: &[Finding]) -> (usize, usize) {
    let count = |s: qa::Severity| findings.iter().filter(|f| f.severity == s).count();
    (count(qa::Severity::Error), count(qa::Severity::Warning))
}

/// How a candidate text ranks for keeping; smaller is better. Fields compare in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Rank {
    /// Nearly all of the text is still in the source language: `untranslated` error findings
    /// span at least [`LEFT_IN_SOURCE`] of its chars (an echo of the source spans all of it;
    /// a text's chars are no fair measure of its share across scripts, since English takes
    /// about three times the chars of the same Chinese, so the bar is set near the whole
    /// text and only a text that is no translation at all passes it). Such a text is no
    /// translation, and ranks below any text that is one, whatever their error counts: one
    /// `untranslated` error for a whole unit in English must not beat a translation with
    /// stray source words counted one by one (a real 0.5B run kept the English copy, one
    /// error, over pieces in Chinese with 49 `untranslated_word` errors).
    pub left_in_source: bool,
    /// Error findings that MQM counts critical ([`qa::findings::mqm::CRITICAL_CHECKS`]: the
    /// text lost content, e.g. a paragraph cut off). Such a text ranks below any that lost
    /// nothing, whatever their other error counts, as a text left in the source language
    /// ranks below a translation: one `truncation` error for a missing paragraph must not beat
    /// the whole paragraph with two stray English words (a real 0.5B run kept a unit's code
    /// block alone, one error, over its pieces that also had the paragraph after it, two
    /// `untranslated_word` errors). MQM weighs a critical error as much as five major ones
    /// (25 and 5 points); the order is stricter because the lost text is what an editor cannot
    /// see without reading the source side by side.
    pub critical: usize,
    /// Error findings of the per-unit QA checks (critical ones included).
    pub errors: usize,
    /// Warning findings.
    pub warnings: usize,
}

/// The share of a candidate's chars that `untranslated` error spans must cover for
/// [`Rank::left_in_source`].
pub const LEFT_IN_SOURCE: f64 = 0.9;

/// The [`Rank`] of candidate `text` with its QA `findings` (spans in chars of `text`).
pub fn rank(text: &str, findings: &[Finding]) -> Rank {
    let (errors, warnings) = score(findings);
    let covered: usize = findings
        .iter()
        .filter(|f| f.check == qa::unit::untranslated::CHECK && f.severity == qa::Severity::Error)
        .filter_map(|f| f.span.map(|(s, e)| e.saturating_sub(s)))
        .sum();
    // Counted only when some text is flagged: selection ranks every unit's candidates at
    // every step of a run, and most have no `untranslated` error.
    let left_in_source = covered > 0 && {
        let chars = text.trim().chars().count();
        chars > 0 && covered as f64 >= LEFT_IN_SOURCE * chars as f64
    };
    let critical = findings
        .iter()
        .filter(|f| {
            f.severity == qa::Severity::Error
                && qa::findings::mqm::CRITICAL_CHECKS.contains(&f.check.as_str())
        })
        .count();
    Rank {
        left_in_source,
        critical,
        errors,
        warnings,
    }
}

/// The index of the candidate to keep among `ranks` (one per candidate, in recording order:
/// the first translation, then each revision): the smallest [`Rank`] (a translation before a
/// text left in the source language, then the fewest critical errors (content lost), then the
/// fewest error findings, then the fewest warnings), and on a tie the latest. `None` for no candidate.
///
/// The loop never makes a unit worse: a revision replaces what came
/// before only when deterministic QA finds it no worse; the tie goes to the latest because it
/// answered the most feedback.
pub fn select_kept(ranks: &[Rank]) -> Option<usize> {
    ranks
        .iter()
        .enumerate()
        .min_by_key(|(i, r)| (**r, std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

/// Whether a repaired candidate ranking `repaired` replaces the model's text of the same
/// round ranking `model`: [`select_kept`] on the two, the repaired one listed later, so it
/// wins a tie and never replaces a better text.
pub fn prefer_repaired(model: Rank, repaired: Rank) -> bool {
    select_kept(&[model, repaired]) == Some(1)
}

/// A short label for a call key without a unit (`glossary/b000` → `b000`).
/// `(unit fingerprint or part id, round)` of a translation call key `translate/<key>/r<n>`.
pub fn parse_translate_key(call: &str) -> Option<(&str, u32)> {
    let parsed = super::CallKey::parse(call);
    let (key, round) = parsed.translation()?;
    let start = "translate/".len();
    Some((&call[start..start + key.len()], round))
}

fn call_label(call: &str) -> String {
    call.split_once('/').map_or(call, |(_, r)| r).to_string()
}

#[cfg(test)]
mod tests {
    use super::{Rank, prefer_repaired, select_kept};

    /// A translation's rank: `(errors, warnings)`.
    fn r((errors, warnings): (usize, usize)) -> Rank {
        Rank {
            left_in_source: false,
            critical: 0,
            errors,
            warnings,
        }
    }

    fn ranks(scores: &[(usize, usize)]) -> Vec<Rank> {
        scores.iter().copied().map(r).collect()
    }

    #[test]
    fn select_kept_prefers_fewest_errors_over_being_latest() {
        // The issue-12 case: a first translation with one error, a revision with five.
        assert_eq!(select_kept(&ranks(&[(1, 0), (5, 0)])), Some(0));
        // A later revision that fixes everything wins over both.
        assert_eq!(select_kept(&ranks(&[(1, 0), (5, 0), (0, 3)])), Some(2));
    }

    #[test]
    fn select_kept_tie_goes_to_the_latest() {
        assert_eq!(select_kept(&ranks(&[(0, 0), (0, 0)])), Some(1));
        assert_eq!(select_kept(&ranks(&[(2, 1), (2, 1), (2, 1)])), Some(2));
        // Not the latest overall: the latest among the best.
        assert_eq!(select_kept(&ranks(&[(0, 1), (0, 1), (1, 0)])), Some(1));
    }

    #[test]
    fn select_kept_fewer_warnings_decide_between_equal_errors() {
        assert_eq!(select_kept(&ranks(&[(1, 0), (1, 2)])), Some(0));
        assert_eq!(select_kept(&ranks(&[(1, 4), (1, 2)])), Some(1));
        // Errors weigh more than any number of warnings.
        assert_eq!(select_kept(&ranks(&[(0, 9), (1, 0)])), Some(0));
    }

    #[test]
    fn repaired_candidate_that_qa_finds_worse_is_not_kept() {
        // More errors, or as many errors and more warnings: the model's text stays.
        assert!(!prefer_repaired(r((1, 0)), r((2, 0))));
        assert!(!prefer_repaired(r((1, 0)), r((1, 1))));
        // Fewer errors even with more warnings, or a tie: the repaired text is kept.
        assert!(prefer_repaired(r((2, 0)), r((0, 3))));
        assert!(prefer_repaired(r((1, 1)), r((1, 1))));
    }

    /// An error finding of `check` at chars `span` of the target.
    fn error_at(check: &str, span: (usize, usize)) -> crate::qa::Finding {
        crate::qa::Finding::new(check, crate::qa::Severity::Error, check, "", "")
            .with_span(span.0, span.1)
    }

    #[test]
    fn an_english_copy_with_one_error_was_kept_over_pieces_in_chinese_with_49() {
        // A real 0.5B run: the first translation echoed the English (one `untranslated`
        // error spanning it all); the pieces translated it with 49 stray English words.
        let en = "The agent calls a tool, reads the result and decides what to do next.";
        let echo = vec![error_at("untranslated", (0, en.chars().count()))];
        let echo_rank = super::rank(en, &echo);
        assert!(echo_rank.left_in_source);
        assert_eq!((echo_rank.errors, echo_rank.warnings), (1, 0));
        let zh = "智能体调用一个 tool，读取 result，然后决定下一步做什么。";
        let words: Vec<crate::qa::Finding> = (0..49)
            .map(|i| error_at("untranslated_word", (i % 10, i % 10 + 1)))
            .collect();
        let pieces_rank = super::rank(zh, &words);
        assert!(!pieces_rank.left_in_source);
        assert_eq!(pieces_rank.errors, 49);
        assert_eq!(select_kept(&[echo_rank, pieces_rank]), Some(1));
        assert_eq!(select_kept(&[pieces_rank, echo_rank]), Some(0));
        // A text with one English paragraph of three is a translation with an error, though
        // the English takes most of its chars.
        let text = "第一段。\n\nThe second paragraph stays in English here.\n\n第三段。";
        let para = vec![error_at("untranslated", (6, 49))];
        assert!(!super::rank(text, &para).left_in_source);
        let para = vec![error_at("untranslated", (0, 40))];
        assert!(
            super::rank("The whole unit is still in English here. 中文。", &para).left_in_source
        );
    }

    #[test]
    fn a_code_block_alone_was_kept_over_pieces_that_also_had_the_paragraph() {
        // A real 0.5B run (quality benchmark, unit chapter02-001): the first translation
        // answered a unit's code block and dropped the paragraph after it (one `truncation`
        // error); its pieces had both, with "stateless" and "message" left in English (two
        // `untranslated_word` errors). The text that lost a paragraph was kept.
        let cut = "```js\n{}\n```\n";
        let lost = vec![error_at("truncation", (0, 3))];
        let cut_rank = super::rank(cut, &lost);
        assert_eq!((cut_rank.critical, cut_rank.errors), (1, 1));
        let whole =
            "```js\n{}\n```\n\n每个调用都是 stateless，因此请求的 message 列表必须包含所有信息。\n";
        let words = vec![
            error_at("untranslated_word", (20, 29)),
            error_at("untranslated_word", (35, 42)),
        ];
        let whole_rank = super::rank(whole, &words);
        assert_eq!((whole_rank.critical, whole_rank.errors), (0, 2));
        assert_eq!(select_kept(&[cut_rank, whole_rank]), Some(1));
        assert_eq!(select_kept(&[whole_rank, cut_rank]), Some(0));
        // A repaired text that lost nothing replaces a model text that did.
        assert!(prefer_repaired(cut_rank, whole_rank));
        // Between two texts that lost nothing, fewer errors still win.
        assert_eq!(select_kept(&[r((1, 0)), whole_rank]), Some(0));
    }

    #[test]
    fn select_kept_of_nothing_is_none() {
        assert_eq!(select_kept(&[]), None);
        assert_eq!(select_kept(&ranks(&[(3, 3)])), Some(0));
    }
}
