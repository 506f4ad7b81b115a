//! The run loop: load state → ask the Manager for the next step → run its actions (local ones
//! inline, model calls concurrently up to `concurrency`) → record each result the moment it
//! finishes → repeat until nothing is left. Resume is the same loop started on a state that
//! already has results.
//!
//! The loop is the only writer of state. A failed call is recorded and the campaign goes on
//! with the others. Ctrl-C or SIGTERM drops the calls in flight (nothing half-written: results
//! are written atomically, and only finished ones) and returns [`Status::Interrupted`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::Serialize;
use tokio::task::JoinSet;

use super::Campaign;
use super::jobs::{self, JobFailure};
use super::manager::{Action, Manager, Stage, Step};
use super::outputs;
use super::progress::Progress;
use super::state::{AgentUsage, State};
use super::store::{Event, Existing, Output, ResultFile, Store, now_ms};
use crate::agents::Agent;
use crate::llm::Provider;
use crate::termbase::{Entry, Termbase};

/// A campaign's status: the one vocabulary of `run` (its last line and `--json`), `status`,
/// `validate` (campaign and `--source/--target` alike, its `--json` `status`), `import` and
/// the reports. For one state every command says the same word; it comes from the Manager's
/// next stage ([`Status::of_stage`]) and the findings on the final texts
/// ([`Status::with_findings`]):
///
/// | word | meaning | `run` exits |
/// |---|---|---|
/// | `complete` | every stage done, no error finding on the final texts | 0 |
/// | `needs_review` | every stage done, error findings remain (an editor must fix them) | 1 |
/// | `incomplete` | work remains: calls failed, or the provider stopped the run (quota, key) | 1 |
/// | `awaiting_approval` | waiting at an approval gate (campaign key `review`) | 3 |
/// | `budget_reached` | stopped before a request would exceed the budget cap | 4 |
/// | `interrupted` | stopped by Ctrl-C or SIGTERM (only `run` sees it happen) | 130 |
///
/// The headline adds the counts that make the word: `needs_review: 12 errors in 3 units`,
/// `incomplete: 2 failed` ([`Status::headline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every unit translated, reviewed as configured, chapters written, and no error finding
    /// remains on the final texts.
    Complete,
    /// Some calls failed; a re-run retries them.
    Incomplete,
    /// Stopped by a signal; a re-run resumes.
    Interrupted,
    /// Waiting at an approval gate; `booktr approve` lets it go on.
    AwaitingApproval,
    /// Every stage finished (units translated, reviewed, chapters written) but error findings
    /// remain on the final texts: an editor must fix them (`Summary::findings` counts them).
    /// Exit code 1, like `booktr validate` with errors.
    NeedsReview,
    /// Stopped before a request that would have taken the spending over the budget cap
    /// (`[pricing] max_cost`, `run --max-cost`; see [`super::budget`]). Finished work is
    /// saved; a run with a higher cap resumes. Exit code 4.
    BudgetReached,
}

impl Status {
    /// The status of a run that stopped (not interrupted) at `stage`.
    pub fn of_stage(stage: &Stage) -> Status {
        match stage {
            Stage::Complete => Status::Complete,
            Stage::AwaitingApproval(_) => Status::AwaitingApproval,
            _ => Status::Incomplete,
        }
    }

    /// The status once the remaining findings are known: a finished campaign (`Complete`) with
    /// error findings `needs_review`; every other status stands as it is.
    pub fn with_findings(self, counts: &super::verdict::FindingCounts) -> Status {
        match self {
            Status::Complete if counts.errors > 0 => Status::NeedsReview,
            other => other,
        }
    }

    /// The snake_case name used in JSON, journal lines and the CLI (`needs_review`, …).
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Complete => "complete",
            Status::Incomplete => "incomplete",
            Status::Interrupted => "interrupted",
            Status::AwaitingApproval => "awaiting_approval",
            Status::NeedsReview => "needs_review",
            Status::BudgetReached => "budget_reached",
        }
    }

    /// The status as the CLI and the report headers say it, with the counts that make it:
    /// `complete`, `needs_review: 12 errors in 3 units`, `incomplete: 2 failed, 5 errors in 2
    /// units`…
    pub fn headline(&self, counts: &super::verdict::FindingCounts, failed: usize) -> String {
        let mut parts: Vec<String> = Vec::new();
        if failed > 0 {
            parts.push(format!("{failed} failed"));
        }
        if counts.errors > 0 {
            parts.push(counts.describe());
        }
        if parts.is_empty() {
            self.as_str().to_string()
        } else {
            format!("{}: {}", self.as_str(), parts.join(", "))
        }
    }
}

/// Adaptive concurrency, additive increase and multiplicative decrease as in TCP congestion
/// control (RFC 5681): the window starts at the configured ceiling, grows by 1/window per
/// successful call (about one per window of calls) and halves, down to 1, when the provider
/// reports congestion (a 429 or a timeout).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aimd {
    window: f64,
    ceiling: f64,
}

impl Aimd {
    pub fn new(ceiling: usize) -> Aimd {
        let ceiling = ceiling.max(1) as f64;
        Aimd {
            window: ceiling,
            ceiling,
        }
    }

    /// Calls allowed in flight now.
    pub fn size(&self) -> usize {
        self.window as usize
    }

    pub fn success(&mut self) {
        self.window = (self.window + 1.0 / self.window).min(self.ceiling);
    }

    pub fn congestion(&mut self) {
        self.window = (self.window / 2.0).max(1.0);
    }
}

/// Unit counts for summaries.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct UnitCounts {
    /// All units of the campaign.
    pub total: usize,
    /// Prose units with a translation.
    pub translated: usize,
    /// Units translated again in a revision round.
    pub revised: usize,
    /// Prose units with no translation after a failure.
    pub failed: usize,
    /// Verbatim and front-matter units copied unchanged.
    pub copied: usize,
    /// Translated units whose translation was reused from an earlier run (same fingerprint:
    /// same source text, glossary entries, prompt and model) rather than requested by this one.
    pub reused: usize,
    /// Translated units whose first translation came from a translation memory (TMX), with no
    /// model call.
    pub memory_hits: usize,
}

/// The `--json` summary of a run (and of `status`).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub campaign: String,
    pub fingerprint: String,
    pub status: Status,
    /// True when the pseudo provider produced the outputs.
    pub rehearsal: bool,
    pub stage: Stage,
    pub units: UnitCounts,
    pub out_dir: String,
    pub state_dir: String,
    pub report_dir: String,
    pub manager_context_peak_tokens: usize,
    pub usage: BTreeMap<Agent, AgentUsage>,
    /// Cost of the usage at the campaign's `[pricing]`, when it has one.
    pub cost: Option<Cost>,
    pub last_error: Option<String>,
    /// The approval gate the campaign waits at, with the command that continues it.
    pub awaiting: Option<Awaiting>,
    /// The QA findings that remain on the final texts (the same ones the report lists): with
    /// any error, a finished campaign is `needs_review`, not `complete`.
    pub findings: super::verdict::FindingCounts,
    /// Replies the stream reader stopped as runaways (repeating, or over their bound), all
    /// runs; details in the report's `runaway`.
    #[serde(default)]
    pub runaway_replies: usize,
    /// Why the newest run stopped scheduling calls early (quota, billing or a rejected key),
    /// with the provider's message; `null` when it did not.
    #[serde(default)]
    pub stopped: Option<String>,
    /// The command that resumes the campaign (`booktr run <campaign file>`), when it stopped
    /// early (at the budget cap: with `--max-cost` and a cap that covers the rest).
    #[serde(default)]
    pub resume: Option<String>,
    /// Where the newest run stopped at its budget cap (status `budget_reached`); `null` when
    /// it did not.
    #[serde(default)]
    pub budget: Option<super::budget::BudgetStop>,
}

/// A gate the campaign waits at.
#[derive(Debug, Clone, Serialize)]
pub struct Awaiting {
    pub gate: super::manager::Gate,
    /// `booktr approve …` as the user would type it.
    pub command: String,
    /// Revisions gate: the proposed units (ids) with the reason for each, in book order, that
    /// still wait for a decision (an approval by chapter decides only its chapters' units).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub proposed: Vec<(String, String)>,
}

/// Money spent, from usage and `[pricing]`.
#[derive(Debug, Clone, Serialize)]
pub struct Cost {
    pub currency: String,
    pub total: f64,
    pub by_agent: BTreeMap<Agent, f64>,
}

impl Cost {
    /// The cost of `usage` at `pricing`.
    pub fn of(usage: &BTreeMap<Agent, AgentUsage>, pricing: &crate::config::Pricing) -> Cost {
        let by_agent: BTreeMap<Agent, f64> = usage
            .iter()
            .map(|(a, u)| {
                (
                    *a,
                    pricing.cost(u.prompt_tokens, u.cached_tokens, u.completion_tokens),
                )
            })
            .collect();
        Cost {
            currency: pricing.currency.clone(),
            total: by_agent.values().sum(),
            by_agent,
        }
    }
}

/// The run id the summary's stage is computed for: no run records failures under it, so every
/// failed call counts as still to do, as the next `run` (and `status`) sees it.
pub const NEXT_RUN: &str = "(next run)";

/// Builds the summary of a state, running the QA of its final texts
/// ([`super::verdict::final_qa`]) for the finding counts; `status` becomes `needs_review` when
/// it is `complete` and errors remain.
pub fn summarize(c: &Campaign, m: &Manager, s: &State, status: Status) -> Summary {
    let counts = super::verdict::final_qa(c, s).counts();
    summarize_with(c, m, s, status, counts)
}

/// [`summarize`] with the finding counts already known (the report computes them once).
pub fn summarize_with(
    c: &Campaign,
    m: &Manager,
    s: &State,
    status: Status,
    findings: super::verdict::FindingCounts,
) -> Summary {
    let status = status.with_findings(&findings);
    // Held back at the budget cap: what is left undone is waiting for a higher cap.
    let status = match status {
        Status::Incomplete if s.budget_stop().is_some() => Status::BudgetReached,
        other => other,
    };
    let prose: Vec<&crate::book::Unit> = c.prose_units().collect();
    let translated = prose
        .iter()
        .filter(|u| s.translation_at(&u.id, 0).is_some())
        .count();
    // Every translation call of the unit counts, its first translation, revisions, parts and
    // pieces alike: each failure is logged as `failed translate/…`, and the count agrees.
    let failed = prose
        .iter()
        .filter(|u| {
            s.fp(&u.id).is_some_and(|fp| {
                s.open_failures().keys().any(|k| {
                    super::CallKey::parse(k)
                        .translation()
                        .is_some_and(|(key, _)| key.starts_with(fp))
                })
            })
        })
        .count();
    let mut usage = s.usage().clone();
    for a in Agent::ALL {
        usage.entry(a).or_default();
    }
    let cost = c.plan.pricing.as_ref().map(|p| Cost::of(&usage, p));
    let stage = m.step(s, NEXT_RUN, &BTreeSet::new()).stage;
    let awaiting = match &stage {
        Stage::AwaitingApproval(gate) => Some(Awaiting {
            gate: *gate,
            command: super::desk::approve_command(c, *gate),
            proposed: match gate {
                super::manager::Gate::Revisions { round } => m.undecided_revisions(s, *round),
                super::manager::Gate::Glossary => Vec::new(),
            },
        }),
        _ => None,
    };
    Summary {
        awaiting,
        campaign: c.plan.name.clone(),
        fingerprint: c.fingerprint.clone(),
        status,
        rehearsal: c.plan.is_rehearsal(),
        stage,
        units: UnitCounts {
            total: c.units.len(),
            translated,
            revised: prose
                .iter()
                .filter(|u| s.rounds_of(&u.id).iter().any(|&r| r > 0))
                .count(),
            reused: prose
                .iter()
                .filter(|u| {
                    s.translation_at(&u.id, 0).is_some()
                        && s.fp(&u.id)
                            .is_some_and(|fp| !s.translated_this_run().contains(fp))
                })
                .count(),
            failed,
            copied: c.units.len() - prose.len(),
            memory_hits: prose
                .iter()
                .filter(|u| super::memory::is_memory_hit(s, &u.id))
                .count(),
        },
        out_dir: c.plan.rel(&c.plan.out_dir),
        state_dir: c.plan.rel(&c.state_path()),
        report_dir: c.plan.rel(&c.plan.report_dir),
        manager_context_peak_tokens: s.ctx_peak(),
        usage,
        cost,
        last_error: s.last_error(),
        findings,
        runaway_replies: s.runaways().len(),
        stopped: s.stopped().clone(),
        resume: match (s.stopped(), s.budget_stop()) {
            (Some(_), _) => Some(format!("booktr run {}", c.plan.campaign_file.display())),
            (None, Some(b)) if status == Status::BudgetReached => Some(b.resume_command(c)),
            _ => None,
        },
        budget: s
            .budget_stop()
            .filter(|_| status == Status::BudgetReached)
            .cloned(),
    }
}

/// The result of [`run`].
pub struct RunResult<'a> {
    pub summary: Summary,
    /// The Manager of the run, with what it computed (candidates, review plans, QA) reusable
    /// for the report.
    pub manager: Manager<'a>,
    /// The final state (for the report).
    pub state: State,
    /// Chapters not written because a unit is missing.
    pub skipped_chapters: Vec<String>,
}

/// How to run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Start over (see [`Store::open_for_run`]).
    pub fresh: bool,
    /// Overwrite hand-edited output files instead of recording the edits.
    pub force: bool,
    /// Start a new configuration's state beside existing ones instead of refusing.
    pub retranslate: bool,
    /// Send the Translation requests of each Translate/Revise stage as one batch (see
    /// [`super::batch`]).
    pub batch: bool,
    /// Time between two plain progress lines when stderr is not a terminal (`None`:
    /// [`super::progress::DEFAULT_EVERY`], 30 s).
    pub progress_every: Option<std::time::Duration>,
}

/// Records the hand edits found in the output files (see [`super::edits`]); returns how many
/// units were edited.
pub fn import_edits(c: &Campaign, store: &mut Store, state: &mut State) -> anyhow::Result<usize> {
    let edited = super::edits::detect(c, state)?;
    for e in &edited {
        let Some(fp) = state.fp(&e.unit).map(String::from) else {
            continue;
        };
        super::commit::record_edit(c, store, state, &e.unit, &fp, &e.text, false)?;
    }
    Ok(edited.len())
}

/// Runs (or resumes) a campaign until nothing is left to do, a fatal provider error, or a
/// signal. Hand edits of output files are recorded first (unless `force`), so they are kept.
pub async fn run<'a>(
    c: &'a Campaign,
    provider: Arc<Provider>,
    opts: RunOptions,
) -> anyhow::Result<RunResult<'a>> {
    let existing = if opts.fresh {
        Existing::MoveAside
    } else if opts.retranslate {
        Existing::KeepBeside
    } else {
        Existing::Refuse
    };
    let mut store = Store::open_for_run(c, existing)?;
    let run_id = format!("{}-{}", now_ms(), std::process::id());
    let mut state = State::load(c, &store.dir, &run_id)?;
    let manager = Manager::new(c, &state);
    let rehearsal = provider.is_rehearsal();
    let prose_total = c.prose_units().count() as u64;
    let done = c
        .prose_units()
        .filter(|u| state.translation_at(&u.id, 0).is_some())
        .count() as u64;
    let mut progress = Progress::with_every(
        prose_total,
        done,
        rehearsal,
        opts.progress_every
            .unwrap_or(super::progress::DEFAULT_EVERY),
    );
    if rehearsal {
        progress.println("REHEARSAL: the offline pseudo provider is answering; outputs are pseudo-translations, not translations.");
    }
    for w in state.take_warnings() {
        progress.println(&format!("warning: {w}"));
    }
    journal_adopted(&mut store, &mut state)?;
    if opts.force {
        let mut fps: Vec<String> = state.human_edits().keys().cloned().collect();
        fps.sort();
        if !fps.is_empty() {
            super::commit::record_event(
                c,
                &mut store,
                &mut state,
                Event::HumanEditsDiscarded { fps },
            )?;
        }
        // Rewrite the outputs even if nothing else changed.
        state.require_outputs_rewrite();
    } else {
        let n = import_edits(c, &mut store, &mut state)?;
        if n > 0 {
            progress.println(&format!("kept {n} unit(s) edited by hand in {} (recorded as human edits; use --force to overwrite them)", c.plan.show(&c.plan.out_dir)));
        }
        // An output chapter deleted since the last write is written again (from the recorded
        // translations and human edits, so nothing is lost).
        if state.outputs_current()
            && c.chapters
                .iter()
                .any(|ch| !c.plan.out_dir.join(&ch.file_name).exists())
        {
            progress.println("rewriting output chapters that are missing");
            state.require_outputs_rewrite();
        }
    }
    if let Some(note) = super::desk::check_at_start(c, &mut store, &mut state)? {
        progress.println(&note);
    }
    // Issue 17: marks the editor wrote in findings-review.csv (read before the Manager decides,
    // so a dismissed finding sends no revision).
    for line in super::marks::journal_csv(c, &mut store, &mut state)? {
        progress.println(&line);
    }
    super::commit::record_event(
        c,
        &mut store,
        &mut state,
        Event::RunStarted {
            run: run_id.clone(),
            pid: std::process::id(),
            provider: c.plan.provider.kind.as_str().into(),
            model: c.plan.provider.model.clone(),
            fingerprint: c.fingerprint.clone(),
        },
    )?;

    let mut tasks: JoinSet<Joined> = JoinSet::new();
    let mut in_flight: BTreeSet<String> = BTreeSet::new();
    // Answers that arrived and are not recorded yet. Their slots are filled again first, then
    // they are recorded (issue 15, "close to the bound"): recording runs QA on a unit, and a
    // wave of answers recorded one by one before any slot was refilled left the last slots of
    // the wave empty for the QA time of the answers before them.
    let mut arrived: Vec<Joined> = Vec::new();
    let mut fatal: Option<String> = None;
    // The budget cap (issue 17): the estimate of each call in flight, and the call held back.
    let budget = super::budget::Budget::of(c);
    let mut in_flight_cost: BTreeMap<String, f64> = BTreeMap::new();
    let mut held_back: Option<(String, f64, f64)> = None;
    let mut skipped_chapters = Vec::new();
    let mut window = Aimd::new(c.plan.concurrency);
    let mut congestion_seen = provider.congestion_events();
    let mut shutdown = Box::pin(shutdown_signal());
    let mut interrupted = false;
    // Cleared when the endpoint turns out to have no batch API.
    let mut batch_mode = opts.batch;
    if opts.batch && !provider.supports_batch() {
        progress.println("--batch: this provider has no batch API; calls are streamed");
    }

    // Whether this run has looked up every pending first translation in the translation
    // memory (once, when the first-translation stage is reached).
    let mut memory_swept = c.memory.is_empty();
    loop {
        // An answer not yet recorded counts as in flight for the Manager: it is not sent again.
        let busy: BTreeSet<String> = if arrived.is_empty() {
            in_flight.clone()
        } else {
            in_flight
                .iter()
                .chain(arrived.iter().map(|a| &a.0))
                .cloned()
                .collect()
        };
        // No refill before a fatal answer is recorded: it stops every call after it.
        let hold = arrived.iter().any(|a| matches!(&a.2, Err(f) if f.fatal));
        // The whole stage is listed only where all of it is used: a batch, and the memory
        // sweep. Otherwise the loop below starts at most the window's free slots (and stops at
        // a local action), so it asks for one action more than that: listing every pending
        // translation after every answer was quadratic in the units (issue 15).
        let whole =
            arrived.is_empty() && (!memory_swept || batch_mode || !state.open_batches().is_empty());
        let step = if hold {
            // Nothing is started; the answers are recorded below.
            Step {
                stage: Stage::Blocked,
                actions: Vec::new(),
            }
        } else if whole {
            manager.next_step(&state, &busy)
        } else {
            let free = window.size().saturating_sub(in_flight.len());
            manager.next_actions(&state, &busy, free + 1)
        };
        if !hold {
            progress.status(status_text(c, &step.stage, &state));
        }
        // First translations the translation memory holds cost nothing: record them before
        // anything is sent (or batched).
        let mut memory_hits = 0;
        if !memory_swept && arrived.is_empty() {
            for action in &step.actions {
                if let Some(result) = super::memory::hit(c, action) {
                    record_finished(c, &manager, &mut store, &mut state, result)?;
                    progress.finish("", true);
                    memory_hits += 1;
                }
            }
        }
        if memory_hits > 0 {
            continue;
        }
        // Memory hits are first translations (round 0), all listed in this stage.
        memory_swept |= arrived.is_empty() && step.stage == Stage::Translate;
        // Batch mode (or a batch an earlier run left open): one batch for the stage's
        // Translation requests; what it does not answer goes on below as normal calls.
        if (batch_mode || !state.open_batches().is_empty())
            && arrived.is_empty()
            && fatal.is_none()
            && in_flight.is_empty()
            && matches!(step.stage, Stage::Translate | Stage::Revise(_))
            && step.actions.iter().any(super::batch::is_batchable)
        {
            // The cap applies to a new batch as a whole (see the budget module).
            if let Some(b) = &budget
                && state.open_batches().is_empty()
                && let Some((calls, next)) = batch_estimate(c, &manager, &state, &step.actions, b)
                && !b.admits(b.spent(&state), 0.0, next)
            {
                held_back = Some((format!("batch of {calls} translation requests"), next, 0.0));
                fatal = Some("budget reached".into());
                continue;
            }
            use super::batch::{Outcome, step as batch_step};
            match batch_step(
                c,
                &manager,
                &provider,
                &mut store,
                &mut state,
                &step.actions,
                &mut progress,
                &mut shutdown,
                batch_mode,
            )
            .await?
            {
                Outcome::Unsupported(note) => {
                    progress.println(&note);
                    batch_mode = false;
                }
                Outcome::Recorded => continue,
                Outcome::Stopped(error) => {
                    if fatal.is_none() {
                        stop(c, &mut store, &mut state, &run_id, &error, &mut progress)?;
                        fatal = Some(error);
                    }
                }
                Outcome::Interrupted => {
                    interrupted = true;
                    break;
                }
                Outcome::Nothing => {}
            }
        }
        let mut progressed = false;
        let mut waiting = false;
        for action in step.actions {
            if action.is_local() {
                // Local actions read what is recorded: they wait for the answers that arrived.
                if !arrived.is_empty() {
                    break;
                }
                match &action {
                    Action::MergeGlossary => merge_glossary(c, &manager, &mut store, &mut state)?,
                    Action::WriteDesk => super::desk::write(c, &mut store, &mut state)?,
                    Action::JoinParts { unit } => {
                        join_parts(c, &manager, &mut store, &mut state, *unit)?;
                        progress.finish("", true);
                    }
                    Action::SplitStuck {
                        unit,
                        fp,
                        round,
                        parts,
                        reason,
                    } => {
                        let id = c.units[*unit].id.clone();
                        progress.println(&format!(
                            "{id}: still wrong after its revision rounds ({reason}); translating it again in {} smaller pieces",
                            parts.len()
                        ));
                        super::commit::record_event(
                            c,
                            &mut store,
                            &mut state,
                            Event::UnitPieces {
                                unit: id,
                                fp: fp.clone(),
                                round: *round,
                                parts: parts.iter().map(|r| (r.start, r.end)).collect(),
                                reason: reason.clone(),
                            },
                        )?;
                    }
                    Action::JoinPieces { unit, fp, round } => {
                        join_pieces(c, &manager, &mut store, &mut state, *unit, fp, *round)?;
                        let id = &c.units[*unit].id;
                        let candidates = state.candidates(id);
                        if let (Some(this), Some(kept)) = (
                            candidates.iter().find(|k| k.round == Some(*round)),
                            candidates.iter().find(|k| k.kept),
                        ) {
                            progress.println(&format!(
                                "{id}: pieces joined as round {round} ({} error finding(s)); {} is kept",
                                this.errors,
                                kept.round.map_or("the edit".to_string(), |r| format!("round {r}"))
                            ));
                        }
                    }
                    Action::WriteOutputs => {
                        let written = outputs::write_all(c, &state)?;
                        skipped_chapters = written.skipped;
                        super::commit::record_event(
                            c,
                            &mut store,
                            &mut state,
                            Event::OutputsWritten {
                                files: written.files,
                            },
                        )?;
                    }
                    _ => {}
                }
                progressed = true;
                break;
            }
            if fatal.is_some() || in_flight.len() >= window.size() {
                // A call is waiting for a slot: the next answer must be taken at once.
                waiting |= fatal.is_none();
                break;
            }
            let call = action.call_key(c);
            let agent = action.agent().expect("model calls have an agent");
            let unit = action_unit(c, &action);
            match jobs::prepare(&manager, &state, &action) {
                Ok(job) => {
                    if let Some(b) = &budget {
                        let next = b.cost(&super::estimate::job_estimate(c, &job));
                        let out: f64 = in_flight_cost.values().fold(0.0, |a, b| a + b);
                        if !b.admits(b.spent(&state), out, next) {
                            // Not sent, nor anything after it: the calls in flight finish.
                            held_back = Some((call.clone(), next, out));
                            fatal = Some("budget reached".into());
                            break;
                        }
                        in_flight_cost.insert(call.clone(), next);
                    }
                    store.append(Event::CallStarted {
                        call: call.clone(),
                        agent,
                        unit,
                    })?;
                    progress.start_labelled(&call, &super::progress::label(c, &action));
                    in_flight.insert(call.clone());
                    let provider = provider.clone();
                    tasks.spawn(async move {
                        let (r, notes) = jobs::execute_noting(&provider, job).await;
                        (call, action, r, notes)
                    });
                }
                Err(e) => {
                    // A unit too large for the input budget is split, like a truncated one.
                    let failure = JobFailure {
                        error: e.to_string(),
                        attempts: 0,
                        fatal: false,
                        truncated: true,
                        context: true,
                        usage: Default::default(),
                        unusable: false,
                        kept: None,
                    };
                    record_failure(
                        c,
                        &mut store,
                        &mut state,
                        &action,
                        &call,
                        &run_id,
                        &failure,
                        &mut progress,
                    )?;
                }
            }
            progressed = true;
        }
        // The slots are filled again: now the answers that arrived are recorded, in the order
        // they arrived, and the Manager looks again (what they finish may start a stage).
        if !arrived.is_empty() {
            for (call, action, result, notes) in std::mem::take(&mut arrived) {
                in_flight_cost.remove(&call);
                record_runaways(c, &mut store, &mut state, &notes, &mut progress)?;
                let unit_done = matches!(action, Action::Translate { round: 0, .. });
                // (a split unit advances the bar when its parts are joined)
                match result {
                    Ok(result) => {
                        record_finished(c, &manager, &mut store, &mut state, result)?;
                        progress.finish(&call, unit_done);
                        if let Some(note) = rejected_note(c, &state, &action) {
                            progress.println(&note);
                        }
                    }
                    Err(f) => {
                        progress.finish(&call, false);
                        record_failure(
                            c,
                            &mut store,
                            &mut state,
                            &action,
                            &call,
                            &run_id,
                            &f,
                            &mut progress,
                        )?;
                        if f.fatal && fatal.is_none() {
                            fatal = Some(f.error.clone());
                            stop(c, &mut store, &mut state, &run_id, &f.error, &mut progress)?;
                        }
                    }
                }
            }
            continue;
        }
        if progressed && in_flight.len() < window.size() && fatal.is_none() {
            continue;
        }
        if in_flight.is_empty() {
            break;
        }
        // While the calls just sent are out, compute what the next stage will read; not while
        // a call waits for a slot (the whole book's last proofreading calls waited behind the
        // half second of campaign QA this computes, issue 15).
        if !waiting {
            manager.prepare_ahead(&state, &step.stage);
        }
        tokio::select! {
            joined = tasks.join_next() => {
                let Some(joined) = joined else { continue };
                // Every answer already in: their slots are refilled together.
                arrived.push(joined?);
                while let Some(more) = tasks.try_join_next() {
                    arrived.push(more?);
                }
                for (call, _, result, _) in &arrived {
                    in_flight.remove(call);
                    let congestion = provider.congestion_events();
                    if congestion > congestion_seen {
                        window.congestion();
                        congestion_seen = congestion;
                    } else if result.is_ok() {
                        window.success();
                    }
                }
            }
            _ = &mut shutdown => {
                interrupted = true;
                tasks.abort_all();
                break;
            }
        }
    }
    if !interrupted && let (Some(b), Some((next_call, next, out))) = (&budget, held_back) {
        let stop = super::budget::BudgetStop {
            cap: b.cap,
            spent: b.spent(&state),
            next_call,
            next_estimate: next,
            in_flight_estimate: out,
            remaining_estimate: super::estimate::estimate(c, &state, &manager).cost_remaining,
            currency: b.currency().to_string(),
        };
        progress.println(&stop.message(c));
        super::commit::record_event(
            c,
            &mut store,
            &mut state,
            Event::BudgetReached {
                run: run_id.clone(),
                stop,
            },
        )?;
    }
    progress.done();

    let summary = if interrupted {
        store.append(Event::RunInterrupted {
            run: run_id.clone(),
        })?;
        summarize(c, &manager, &state, Status::Interrupted)
    } else {
        // What a later run would do: calls that failed in this run (a piece, a revision) are
        // retried then, so the campaign is not complete yet, whatever this run may still try.
        let stage = manager.step(&state, NEXT_RUN, &BTreeSet::new()).stage;
        // The journal records the status the summary tells (`needs_review` with errors left).
        let summary = summarize(c, &manager, &state, Status::of_stage(&stage));
        store.append(Event::RunFinished {
            run: run_id.clone(),
            status: summary.status.as_str().to_string(),
        })?;
        summary
    };
    Ok(RunResult {
        manager,
        summary,
        state,
        skipped_chapters,
    })
}

/// A call's task output: its call key, its action, the answer (or why there is none) and the
/// runaway replies noted on the way.
type Joined = (
    String,
    Action,
    Result<ResultFile, JobFailure>,
    Vec<super::state::RunawayRecord>,
);

/// The number of requests and the estimated cost (uncached, at the normal price) of the batch
/// [`super::batch::step`] would submit for `actions`: their batchable calls not yet done nor
/// tried in a batch. `None` when there is none.
fn batch_estimate(
    c: &Campaign,
    m: &Manager,
    s: &State,
    actions: &[Action],
    b: &super::budget::Budget,
) -> Option<(usize, f64)> {
    let mut n = 0;
    let mut cost = 0.0;
    for a in actions.iter().filter(|a| super::batch::is_batchable(a)) {
        let call = a.call_key(c);
        if s.batch_tried().contains(&call) || s.is_done(&call) {
            continue;
        }
        if let Ok(job) = jobs::prepare(m, s, a) {
            n += 1;
            cost += b.cost(&super::estimate::job_estimate(c, &job));
        }
    }
    (n > 0).then_some((n, cost))
}

/// The status text of the progress display: stage, tokens and, with `[pricing]`, the cost so
/// far (`120.3k tokens · $0.42 · Translate`).
fn status_text(c: &Campaign, stage: &Stage, s: &State) -> String {
    let t = s.total_usage();
    // Tokens and cost before the stage: on a narrow terminal the line is cut at its end, and
    // the stage is what an editor misses least.
    let mut text = format!("{} tokens", fmt_tokens(s));
    if let Some(cost) =
        super::progress::cost_text(c, t.prompt_tokens, t.cached_tokens, t.completion_tokens)
    {
        text.push_str(" · ");
        text.push_str(&cost);
    }
    text.push_str(&format!(" · {stage:?}"));
    text
}

fn fmt_tokens(s: &State) -> String {
    let t = s.total_usage();
    let n = t.prompt_tokens + t.completion_tokens;
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

/// Journals the stop of the run after an error no other call can get past (see
/// [`Event::RunStopped`]): no further call is scheduled, the calls in flight may finish.
pub(super) fn stop(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    run_id: &str,
    error: &str,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    super::commit::record_event(
        c,
        store,
        state,
        Event::RunStopped {
            run: run_id.to_string(),
            error: error.to_string(),
        },
    )?;
    progress.println(&format!(
        "stopping: {error}\n  no further calls are sent (this error affects every call); finished work is saved. Fix it, then resume with `booktr run {}`",
        c.plan.campaign_file.display()
    ));
    Ok(())
}

/// Journals the runaway replies of a call (before its result or failure).
pub(super) fn record_runaways(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    notes: &[super::state::RunawayRecord],
    progress: &mut Progress,
) -> anyhow::Result<()> {
    for n in notes {
        super::commit::record_event(
            c,
            store,
            state,
            Event::RunawayReply {
                call: n.call.clone(),
                agent: n.agent,
                unit: n.unit.clone(),
                reason: n.reason.clone(),
                usage: n.usage,
                temperature: n.temperature,
                retry_temperature: n.retry_temperature,
            },
        )?;
        let then = match n.retry_temperature {
            Some(t) => format!("retrying once at temperature {t}"),
            None => "not kept".to_string(),
        };
        progress.println(&format!(
            "runaway reply to {}: {}; {then}",
            n.call, n.reason
        ));
    }
    Ok(())
}

/// Records a finished call through the write protocol ([`super::commit::record_result`]),
/// with the Manager context measured on the state that holds it.
pub(super) fn record_finished(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
    result: ResultFile,
) -> anyhow::Result<()> {
    super::commit::record_result(c, store, state, result, |s| m.context(s).tokens())?;
    Ok(())
}

/// A line for the progress display when the revision `action` just recorded is rejected (more
/// error findings than the best earlier candidate), naming the round kept instead.
fn rejected_note(c: &Campaign, s: &State, action: &Action) -> Option<String> {
    let Action::Translate { unit, round, .. } = action else {
        return None;
    };
    let id = &c.units[*unit].id;
    let candidates = s.candidates(id);
    let this = candidates.iter().find(|k| k.round == Some(*round))?;
    let kept = candidates.iter().find(|k| k.kept)?;
    this.rejected.then(|| {
        format!(
            "{id}: revision of round {round} rejected ({} error finding(s) against {}); round {} is kept",
            this.errors,
            kept.errors,
            kept.round.map_or("edit".to_string(), |r| r.to_string())
        )
    })
}

/// The unit id (or part id) a translation action is about.
fn action_unit(c: &Campaign, action: &Action) -> Option<String> {
    match action {
        Action::Translate { unit, .. } => Some(c.units[*unit].id.clone()),
        Action::TranslatePart { part, .. } => Some(part.clone()),
        _ => None,
    }
}

/// Records a failed call. A first translation that did not fit the model's limits is split in
/// two instead (recorded as `unit_split`): at a block boundary when it has more than one block,
/// else at a sentence boundary of its one block ([`crate::book::sentences`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn record_failure(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    action: &Action,
    call: &str,
    run_id: &str,
    f: &JobFailure,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let splittable = match action {
        Action::Translate { unit, fp, round: 0 } => {
            Some((fp.clone(), *unit, 0..c.source_text(&c.units[*unit]).len()))
        }
        Action::TranslatePart { unit, part, range } => Some((part.clone(), *unit, range.clone())),
        _ => None,
    };
    if let (Some(kept), Some((id, unit, range))) = (&f.kept, splittable.clone())
        && kept.source_end > 0
        && kept.source_end < range.len()
    {
        return record_kept_split(c, store, state, &id, unit, range, kept, f, progress);
    }
    if f.truncated
        && let Some((id, unit, range)) = splittable.clone()
    {
        let text = &c.source_text(&c.units[unit])[range.clone()];
        // Between blocks when there are several, else between sentences of the one block.
        let cut = crate::book::segment::split_in_two(text)
            .map(|c| (c, "a block boundary"))
            .or_else(|| {
                crate::book::sentences::split_at_sentence(text).map(|c| (c, "a sentence boundary"))
            });
        if let Some((cut, at)) = cut {
            let mid = range.start + cut;
            super::commit::record_event(
                c,
                store,
                state,
                Event::UnitSplit {
                    unit: c.units[unit].id.clone(),
                    key: id.clone(),
                    parts: vec![(range.start, mid), (mid, range.end)],
                    reason: f.error.clone(),
                    usage: f.usage,
                    requests: f.attempts,
                },
            )?;
            progress.println(&format!("split {id} in two at {at}: {}", f.error));
            return Ok(());
        }
    }
    let error = if f.truncated && splittable.is_some() {
        // A prompt too large for the context is not helped by a larger reply limit.
        let remedy = if f.context {
            "give this model more context (a larger context window, and max_context_tokens with it), or translate it by hand"
        } else {
            "raise max_tokens (the reply limit) for this model, or translate it by hand"
        };
        format!(
            "{}; the text is a single block with a single sentence, so it cannot be split smaller: {remedy}",
            f.error
        )
    } else {
        f.error.clone()
    };
    super::commit::record_event(
        c,
        store,
        state,
        Event::CallFailed {
            call: call.to_string(),
            agent: action.agent().expect("model call"),
            unit: action_unit(c, action),
            run: run_id.to_string(),
            error: error.clone(),
            attempts: f.attempts,
            usage: f.usage,
            unusable: f.unusable,
        },
    )?;
    progress.println(&format!("failed {call}: {error}"));
    Ok(())
}

/// Records a cut translation whose part ending on a block boundary was kept
/// ([`super::jobs::KeptPart`]): the text `range` of unit `unit` (whose translation key is `id`)
/// is split where the kept part's source ends, and the kept part is recorded as the first
/// part's translation, with the whole reply's usage: nothing paid for is thrown away, and only
/// the rest of the text is asked for again.
///
/// Order on disk: the first part's result file, then the `unit_split` line, then the part's
/// `call_finished` line. A crash after the result file leaves it to be adopted; the call's
/// checkpoint ([`super::store::PartialReply`]) lets a resume redo the split without a request.
#[allow(clippy::too_many_arguments)]
fn record_kept_split(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    id: &str,
    unit: usize,
    range: std::ops::Range<usize>,
    kept: &super::jobs::KeptPart,
    f: &JobFailure,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let mid = range.start + kept.source_end;
    let part = format!("{id}.p1");
    let output = Output::Translation {
        round: 0,
        text: kept.text.clone(),
        cleanup: Default::default(),
        reasoning_chars: kept.reasoning_chars,
        joined_from: Vec::new(),
    };
    let result = ResultFile {
        schema_version: super::fingerprint::STATE_SCHEMA_VERSION,
        call: super::manager::translate_key(&part, 0),
        agent: crate::agents::Agent::Translation,
        unit: Some(part.clone()),
        request_sha256: String::new(),
        usage: f.usage,
        attempts: f.attempts,
        requests: f.attempts.max(1),
        model: kept.model.clone(),
        finish_reason: Some("length".into()),
        elapsed_ms: 0,
        output_sha256: ResultFile::output_hash(&output),
        output,
        origin: None,
        long: (kept.long != Default::default()).then_some(kept.long),
        sample: kept.sample,
        kept_blocks: Some(kept.blocks),
    };
    store.write_result(&result)?;
    super::commit::record_event(
        c,
        store,
        state,
        Event::UnitSplit {
            unit: c.units[unit].id.clone(),
            key: id.to_string(),
            parts: vec![(range.start, mid), (mid, range.end)],
            reason: f.error.clone(),
            // Paid for the kept part: counted with its result, not as rejected.
            usage: Default::default(),
            requests: 0,
        },
    )?;
    if !state.is_done(&result.call) {
        super::commit::record_result(c, store, state, result, |_| 0)?;
    }
    progress.println(&format!(
        "kept the first {} block(s) of {id}'s cut reply and split the rest off: {}",
        kept.blocks, f.error
    ));
    Ok(())
}

/// Joins the translated parts of a split unit into its round-0 translation (no model call).
pub(super) fn join_parts(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
    unit: usize,
) -> anyhow::Result<()> {
    let u = &c.units[unit];
    let fp = state
        .fp(&u.id)
        .expect("a split unit has a fingerprint")
        .to_string();
    let leaves = state.leaf_parts(&fp);
    let mut text = String::new();
    for (part, _) in &leaves {
        text.push_str(&state.part_translations()[part]);
    }
    let output = Output::Translation {
        round: 0,
        text,
        cleanup: Default::default(),
        reasoning_chars: 0,
        joined_from: leaves
            .iter()
            .map(|(p, _)| super::manager::translate_key(p, 0))
            .collect(),
    };
    let result = ResultFile::local(super::manager::translate_key(&fp, 0), &u.id, output, None);
    record_finished(c, m, store, state, result)
}

/// Joins the translated pieces of a stuck unit (issue 18, [`super::pieces`]) into its
/// translation at `round` (no model call); QA checks it when it is recorded, and it competes
/// with the unit's earlier candidates.
pub(super) fn join_pieces(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
    unit: usize,
    fp: &str,
    round: u32,
) -> anyhow::Result<()> {
    let u = &c.units[unit];
    let source = c.source_text(u);
    let leaves = state.leaf_parts(&super::pieces::pieces_key(fp));
    let mut text = String::new();
    let mut joined_from = Vec::new();
    let mut cleanup = crate::agents::translation::Cleanup::default();
    for (part, range) in &leaves {
        // A piece the model was not asked for (nothing to translate, see
        // `pieces::needs_model`) or answered unusably in this run is its source's bytes; a
        // recorded answer always wins.
        match state.part_translations().get(part) {
            Some(t) => {
                text.push_str(t);
                joined_from.push(super::manager::translate_key(part, 0));
            }
            None => {
                let piece = &source[range.clone()];
                if super::pieces::needs_model(piece) {
                    cleanup.left_in_source.push(piece.to_string());
                }
                text.push_str(piece);
            }
        }
    }
    let output = Output::Translation {
        round,
        text,
        cleanup,
        reasoning_chars: 0,
        joined_from,
    };
    let result = ResultFile::local(
        super::manager::translate_key(fp, round),
        &u.id,
        output,
        None,
    );
    record_finished(c, m, store, state, result)
}

/// Merges the house-style entries with every glossary batch's entries (in batch order) and
/// records the termbase file.
pub(super) fn merge_glossary(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
) -> anyhow::Result<()> {
    // Agent entries in the order of the book's candidates (best first), each the newest
    // proposal for its term; terms no longer among the candidates drop out.
    let proposals = state.proposed_entries();
    let proposed: Vec<Entry> = m
        .candidates
        .iter()
        .filter_map(|cand| {
            proposals
                .get(&crate::termbase::term_key(&cand.term))
                .cloned()
        })
        .collect();
    let (tb, dropped) = Termbase::merge(&c.house, &proposed);
    // Nothing a model proposed is enforced unverified: agent entries failing a check leave.
    let (tb, rejected) = crate::termbase::vet::vet(&tb, &c.plan.target_lang);
    let mut bytes = serde_json::to_vec_pretty(&tb)?;
    bytes.push(b'\n');
    // A new file per merge: a recorded termbase is never rewritten.
    let rel = format!("results/glossary/termbase.{}.json", store.next_seq());
    let sha256 = store.write_file(&rel, &bytes)?;
    super::commit::record_event(
        c,
        store,
        state,
        Event::GlossaryMerged {
            file: rel,
            sha256,
            entries: tb.len(),
            dropped_by_house: dropped,
            inputs: m.glossary_inputs.clone(),
            rejected,
        },
    )?;
    Ok(())
}

pub(crate) use super::commit::journal_adopted;

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::Aimd;

    #[test]
    fn aimd_halves_on_congestion_and_climbs_back() {
        let mut w = Aimd::new(8);
        assert_eq!(w.size(), 8);
        w.congestion();
        assert_eq!(w.size(), 4);
        w.congestion();
        w.congestion();
        w.congestion();
        assert_eq!(w.size(), 1, "never below one");
        let mut successes = 0;
        while w.size() < 8 {
            w.success();
            successes += 1;
        }
        // From 1 to 8 takes about 1 + 2 + … + 7 calls (one window per step).
        assert!((25..=40).contains(&successes), "{successes}");
        for _ in 0..100 {
            w.success();
        }
        assert_eq!(w.size(), 8, "never above the ceiling");
    }
}
