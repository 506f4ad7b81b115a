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

use tokio::task::JoinSet;

use super::Campaign;
use super::jobs;
use super::manager::{Action, Manager, Stage, Step};
use super::outputs;
use super::progress::Progress;
use super::state::State;
use super::store::{Event, Existing, ResultFile, Store, now_ms};
use super::summary::{NEXT_RUN, Status, Summary, summarize};
use crate::llm::Provider;
use super::commit::{self, JobFailure};

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
        commit::record_edit(c, store, state, &e.unit, &fp, &e.text, false)?;
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
    commit::journal_adopted(&mut store, &mut state)?;
    if opts.force {
        let mut fps: Vec<String> = state.human_edits().keys().cloned().collect();
        fps.sort();
        if !fps.is_empty() {
            commit::record_event(
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
    commit::record_event(
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
                    commit::record_finished(c, &manager, &mut store, &mut state, result)?;
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
                        commit::record_stop(
                            c,
                            &mut store,
                            &mut state,
                            &run_id,
                            &error,
                            &|l: &str| progress.println(l),
                        )?;
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
                    Action::MergeGlossary => {
                        commit::merge_glossary(c, &manager, &mut store, &mut state)?
                    }
                    Action::WriteDesk => super::desk::write(c, &mut store, &mut state)?,
                    Action::JoinParts { unit } => {
                        commit::join_parts(c, &manager, &mut store, &mut state, *unit)?;
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
                        commit::record_event(
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
                        commit::join_pieces(
                            c, &manager, &mut store, &mut state, *unit, fp, *round,
                        )?;
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
                        commit::record_event(
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
            let unit = commit::action_unit(c, &action);
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
                    commit::record_failure(
                        c,
                        &mut store,
                        &mut state,
                        &action,
                        &call,
                        &run_id,
                        &failure,
                        &|l: &str| progress.println(l),
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
                commit::record_runaways(c, &mut store, &mut state, &notes, &|l: &str| {
                    progress.println(l)
                })?;
                let unit_done = matches!(action, Action::Translate { round: 0, .. });
                // (a split unit advances the bar when its parts are joined)
                match result {
                    Ok(result) => {
                        commit::record_finished(c, &manager, &mut store, &mut state, result)?;
                        progress.finish(&call, unit_done);
                        if let Some(note) = rejected_note(c, &state, &action) {
                            progress.println(&note);
                        }
                    }
                    Err(f) => {
                        progress.finish(&call, false);
                        commit::record_failure(
                            c,
                            &mut store,
                            &mut state,
                            &action,
                            &call,
                            &run_id,
                            &f,
                            &|l: &str| progress.println(l),
                        )?;
                        if f.fatal && fatal.is_none() {
                            fatal = Some(f.error.clone());
                            commit::record_stop(
                                c,
                                &mut store,
                                &mut state,
                                &run_id,
                                &f.error,
                                &|l: &str| progress.println(l),
                            )?;
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
        commit::record_event(
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
