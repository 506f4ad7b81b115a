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

mod actions;
mod start;

use super::progress::Progress;
use crate::campaign::core::Campaign;
use crate::campaign::core::commit::{self, JobFailure};
use crate::campaign::core::manager::{Action, Manager, Stage, Step};
use crate::campaign::core::state::{Candidate, CandidateOrigin, State};
use crate::campaign::core::store::{Event, ResultFile, Store};
use crate::campaign::core::summary::{NEXT_RUN, Status, Summary, summarize};
use crate::llm::Provider;

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

/// Records the hand edits found in the output files (see [`crate::campaign::core::edits`]); returns how many
/// units were edited.
pub fn import_edits(c: &Campaign, store: &mut Store, state: &mut State) -> anyhow::Result<usize> {
    let edited = crate::campaign::core::edits::detect(c, state)?;
    let mut earlier = Vec::new();
    for e in &edited {
        let Some(fp) = state.fp(&e.unit).map(String::from) else {
            continue;
        };
        // A unit whose source changed since the output was written has no text of its own
        // yet: the editor edited the earlier version, so the edit is recorded on that
        // version's blocks, where the new version's block plan finds it.
        let u = c.unit(&e.unit).expect("detected units are the campaign's");
        if crate::campaign::core::edits::final_str(c, state, u).is_empty() {
            if let Some(b) =
                crate::campaign::core::reuse::edit_of_earlier(state, &store.dir, &e.unit, &e.text)?
            {
                earlier.push(b);
            }
            continue;
        }
        commit::record_edit(c, store, state, &e.unit, &fp, &e.text, false)?;
    }
    if !earlier.is_empty() {
        let file = crate::campaign::core::blocks::BlocksFile {
            schema_version: crate::campaign::core::fingerprint::STATE_SCHEMA_VERSION,
            seed: None,
            units: earlier,
        };
        let rec = store.record_blocks(&file)?;
        state.apply(c, &store.dir, &rec, None)?;
    }
    // Every unit's final text not recorded block by block yet (a state written before block
    // memory existed, or hand edits just recorded) is recorded now.
    crate::campaign::core::reuse::record_blocks(c, store, state)?;
    Ok(edited.len())
}

/// Runs (or resumes) a campaign until nothing is left to do, a fatal provider error, or a
/// signal. Hand edits of output files are recorded first (unless `force`), so they are kept.
pub async fn run<'a>(
    c: &'a Campaign,
    provider: Arc<Provider>,
    opts: RunOptions,
) -> anyhow::Result<RunResult<'a>> {
    let mut run = RunLoop::start(c, provider, opts)?;
    while run.turn().await? {}
    run.finish()
}

/// The resolved shutdown signal ([`shutdown_signal`]), boxed so the loop can keep it.
type Shutdown = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// The state of one run of the loop: what is recorded (store, state), what is out (calls in
/// flight, answers arrived and not yet recorded), and what the run has learned on the way
/// (the concurrency window, a fatal error, the budget's held-back call). [`run`] drives it
/// one [`RunLoop::turn`] at a time.
struct RunLoop<'a> {
    c: &'a Campaign,
    manager: Manager<'a>,
    provider: Arc<Provider>,
    store: Store,
    state: State,
    progress: Progress,
    run_id: String,
    tasks: JoinSet<Joined>,
    in_flight: BTreeSet<String>,
    /// Answers that arrived and are not recorded yet. Their slots are filled again first, then
    /// they are recorded: recording runs QA on a unit, and a wave of answers recorded one by
    /// one before any slot was refilled left the last slots of the wave empty for the QA time
    /// of the answers before them.
    arrived: Vec<Joined>,
    /// The error that stops scheduling (a fatal provider error, or the budget cap).
    fatal: Option<String>,
    /// The budget cap (see [`super::budget`]), when the campaign has one.
    budget: Option<super::budget::Budget>,
    /// The estimate of each call in flight, in the pricing currency.
    in_flight_cost: BTreeMap<String, f64>,
    /// The call the budget held back: its call key (or batch), its estimate and the estimate
    /// of the calls in flight then.
    held_back: Option<(String, f64, f64)>,
    skipped_chapters: Vec<String>,
    window: Aimd,
    congestion_seen: u64,
    shutdown: Shutdown,
    interrupted: bool,
    /// Cleared when the endpoint turns out to have no batch API.
    batch_mode: bool,
    /// Whether this run has looked up every pending first translation in the translation
    /// memory (once, when the first-translation stage is reached).
    memory_swept: bool,
}

impl<'a> RunLoop<'a> {
    /// One turn of the loop: ask the Manager, record memory hits, run a batch step, fill the
    /// free slots, record the answers that arrived, or wait for the next answer. Returns
    /// whether the loop goes on.
    async fn turn(&mut self) -> anyhow::Result<bool> {
        let step = self.next_step();
        // First translations the translation memory holds cost nothing: record them before
        // anything is sent (or batched).
        if self.record_memory_hits(&step.actions)? {
            return Ok(true);
        }
        // Memory hits are first translations (round 0), all listed in this stage.
        self.memory_swept |= self.arrived.is_empty() && step.stage == Stage::Translate;
        if let Some(go_on) = self.batch(&step).await? {
            return Ok(go_on);
        }
        let stage = step.stage;
        let (progressed, waiting) = self.refill(step.actions)?;
        // The slots are filled again: now the answers that arrived are recorded, in the order
        // they arrived, and the Manager looks again (what they finish may start a stage).
        if !self.arrived.is_empty() {
            self.record_arrived()?;
            return Ok(true);
        }
        if progressed && self.in_flight.len() < self.window.size() && self.fatal.is_none() {
            return Ok(true);
        }
        if self.in_flight.is_empty() {
            return Ok(false);
        }
        // While the calls just sent are out, compute what the next stage will read; not while
        // a call waits for a slot (the whole book's last proofreading calls waited behind the
        // half second of campaign QA this computes).
        if !waiting {
            self.manager.prepare_ahead(&self.state, &stage);
        }
        self.wait().await
    }

    /// The Manager's next step, as much of it as this turn can use.
    fn next_step(&mut self) -> Step {
        // An answer not yet recorded counts as in flight for the Manager: it is not sent again.
        let busy: BTreeSet<String> = if self.arrived.is_empty() {
            self.in_flight.clone()
        } else {
            self.in_flight
                .iter()
                .chain(self.arrived.iter().map(|a| &a.0))
                .cloned()
                .collect()
        };
        // No refill before a fatal answer is recorded: it stops every call after it.
        let hold = self
            .arrived
            .iter()
            .any(|a| matches!(&a.2, Err(f) if f.fatal));
        // The whole stage is listed only where all of it is used: a batch, and the memory
        // sweep. Otherwise the loop starts at most the window's free slots (and stops at a
        // local action), so it asks for one action more than that: listing every pending
        // translation after every answer was quadratic in the units.
        let whole = self.arrived.is_empty()
            && (!self.memory_swept || self.batch_mode || !self.state.open_batches().is_empty());
        let step = if hold {
            // Nothing is started; the answers are recorded by this turn.
            Step {
                stage: Stage::Blocked,
                actions: Vec::new(),
            }
        } else if whole {
            self.manager.next_step(&self.state, &busy)
        } else {
            let free = self.window.size().saturating_sub(self.in_flight.len());
            self.manager.next_actions(&self.state, &busy, free + 1)
        };
        if !hold {
            self.progress
                .status(status_text(self.c, &step.stage, &self.state));
        }
        step
    }

    /// Records the first translations of `actions` that the translation memory holds, before
    /// the stage's first sweep; returns whether it recorded any.
    fn record_memory_hits(&mut self, actions: &[Action]) -> anyhow::Result<bool> {
        let mut memory_hits = 0;
        if !self.memory_swept && self.arrived.is_empty() {
            for action in actions {
                if let Some(result) = super::memory::hit(self.c, action) {
                    commit::record_finished(
                        self.c,
                        &self.manager,
                        &mut self.store,
                        &mut self.state,
                        result,
                    )?;
                    self.progress.finish("", true);
                    memory_hits += 1;
                }
            }
        }
        Ok(memory_hits > 0)
    }

    /// Records the answers that arrived, in the order they arrived (a fatal failure stops the
    /// run's scheduling).
    fn record_arrived(&mut self) -> anyhow::Result<()> {
        let c = self.c;
        for (call, action, result, notes) in std::mem::take(&mut self.arrived) {
            self.in_flight_cost.remove(&call);
            let progress = &self.progress;
            let say = |l: &str| progress.println(l);
            commit::record_runaways(c, &mut self.store, &mut self.state, &notes, &say)?;
            let unit_done = matches!(action, Action::Translate { round: 0, .. });
            // (a split unit advances the bar when its parts are joined)
            match result {
                Ok(result) => {
                    commit::record_finished(
                        c,
                        &self.manager,
                        &mut self.store,
                        &mut self.state,
                        result,
                    )?;
                    self.progress.finish(&call, unit_done);
                    if let Some(note) = rejected_note(c, &self.state, &action) {
                        self.progress.println(&note);
                    }
                }
                Err(f) => {
                    self.progress.finish(&call, false);
                    let progress = &self.progress;
                    commit::record_failure(
                        c,
                        &mut self.store,
                        &mut self.state,
                        &action,
                        &call,
                        &self.run_id,
                        &f,
                        &|l: &str| progress.println(l),
                    )?;
                    if f.fatal && self.fatal.is_none() {
                        self.fatal = Some(f.error.clone());
                        self.record_stop(&f.error)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Journals the stop of the run after `error` (see [`commit::record_stop`]).
    fn record_stop(&mut self, error: &str) -> anyhow::Result<()> {
        let progress = &self.progress;
        commit::record_stop(
            self.c,
            &mut self.store,
            &mut self.state,
            &self.run_id,
            error,
            &|l: &str| progress.println(l),
        )
    }

    /// Waits for the next answer (taking every answer already in, so their slots are refilled
    /// together, and adapting the window) or for the shutdown signal. Returns whether the loop
    /// goes on.
    async fn wait(&mut self) -> anyhow::Result<bool> {
        tokio::select! {
            joined = self.tasks.join_next() => {
                let Some(joined) = joined else { return Ok(true) };
                self.arrived.push(joined?);
                while let Some(more) = self.tasks.try_join_next() {
                    self.arrived.push(more?);
                }
                for (call, _, result, _) in &self.arrived {
                    self.in_flight.remove(call);
                    let congestion = self.provider.congestion_events();
                    if congestion > self.congestion_seen {
                        self.window.congestion();
                        self.congestion_seen = congestion;
                    } else if result.is_ok() {
                        self.window.success();
                    }
                }
                Ok(true)
            }
            _ = &mut self.shutdown => {
                self.interrupted = true;
                self.tasks.abort_all();
                Ok(false)
            }
        }
    }

    /// Ends the run: journals where the budget stopped it (if it did), then how it ended, and
    /// builds the summary.
    fn finish(mut self) -> anyhow::Result<RunResult<'a>> {
        let c = self.c;
        if !self.interrupted
            && let (Some(b), Some((next_call, next, out))) = (&self.budget, self.held_back.take())
        {
            let stop = crate::campaign::core::store::BudgetStop {
                cap: b.cap,
                spent: b.spent(&self.state),
                next_call,
                next_estimate: next,
                in_flight_estimate: out,
                remaining_estimate: super::estimate::estimate(c, &self.state, &self.manager)
                    .cost_remaining,
                currency: b.currency().to_string(),
            };
            self.progress.println(&stop.message(c));
            commit::record_event(
                c,
                &mut self.store,
                &mut self.state,
                Event::BudgetReached {
                    run: self.run_id.clone(),
                    stop,
                },
            )?;
        }
        self.progress.done();

        let summary = if self.interrupted {
            self.store.append(Event::RunInterrupted {
                run: self.run_id.clone(),
            })?;
            summarize(c, &self.manager, &self.state, Status::Interrupted)
        } else {
            // What a later run would do: calls that failed in this run (a piece, a revision)
            // are retried then, so the campaign is not complete yet, whatever this run may
            // still try.
            let stage = self
                .manager
                .step(&self.state, NEXT_RUN, &BTreeSet::new())
                .stage;
            // The journal records the status the summary tells (`needs_review` with errors
            // left).
            let summary = summarize(c, &self.manager, &self.state, Status::of_stage(&stage));
            self.store.append(Event::RunFinished {
                run: self.run_id.clone(),
                status: summary.status.as_str().to_string(),
            })?;
            summary
        };
        Ok(RunResult {
            manager: self.manager,
            summary,
            state: self.state,
            skipped_chapters: self.skipped_chapters,
        })
    }
}

/// A call's task output: its call key, its action, the answer (or why there is none) and the
/// runaway replies noted on the way.
type Joined = (
    String,
    Action,
    Result<ResultFile, JobFailure>,
    Vec<crate::campaign::core::state::RunawayRecord>,
);

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

/// A line for the progress display when the revision `action` just recorded is rejected (it
/// ranks below the best earlier candidate: left in the source language, or more error
/// findings), naming the round kept instead.
fn rejected_note(c: &Campaign, s: &State, action: &Action) -> Option<String> {
    let Action::Translate { unit, round, .. } = action else {
        return None;
    };
    let id = &c.units[*unit].id;
    let candidates = s.candidates(id);
    let this = candidates.iter().find(|k| k.round == Some(*round))?;
    let kept = candidates.iter().find(|k| k.kept)?;
    this.rejected.then(|| {
        let left = if this.left_in_source && !kept.left_in_source {
            "mostly left in the source language, "
        } else if this.critical > kept.critical {
            "content lost, "
        } else {
            ""
        };
        format!(
            "{id}: revision of round {round} rejected ({left}{} error finding(s) against {}); {}",
            this.errors,
            kept.errors,
            kept_label(*round, kept)
        )
    })
}

/// What [`rejected_note`] says is kept instead of the revision of round `round`: a round, an
/// edit, or a mechanically repaired text, which may be the repair of that same revision (the
/// model's text was rejected, its repair was not).
fn kept_label(round: u32, kept: &Candidate) -> String {
    match (kept.origin, kept.round) {
        (CandidateOrigin::Repaired, Some(r)) if r == round => {
            "its mechanically repaired text is kept".to_string()
        }
        (CandidateOrigin::Repaired, Some(r)) => {
            format!("the mechanically repaired text of round {r} is kept")
        }
        (_, Some(r)) => format!("round {r} is kept"),
        (_, None) => "the editor's edit is kept".to_string(),
    }
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
    use crate::campaign::core::state::{Candidate, CandidateOrigin};

    /// Regression (read in a real run's log): "revision of round 1 rejected (3 error
    /// finding(s) against 1); round 1 is kept". The candidate kept was the mechanical repair
    /// of that revision, not the revision the line had just rejected.
    #[test]
    fn a_rejected_revision_said_its_own_round_was_kept() {
        let repaired = |round| Candidate {
            round: Some(round),
            origin: CandidateOrigin::Repaired,
            errors: 1,
            warnings: 0,
            left_in_source: false,
            critical: 0,
            rejected: false,
            kept: true,
        };
        assert_eq!(
            super::kept_label(1, &repaired(1)),
            "its mechanically repaired text is kept"
        );
        assert_eq!(
            super::kept_label(1, &repaired(0)),
            "the mechanically repaired text of round 0 is kept"
        );
        let first = Candidate {
            origin: CandidateOrigin::Translation,
            ..repaired(0)
        };
        assert_eq!(super::kept_label(1, &first), "round 0 is kept");
        let edit = Candidate {
            round: None,
            origin: CandidateOrigin::Human,
            ..repaired(0)
        };
        assert_eq!(super::kept_label(1, &edit), "the editor's edit is kept");
    }

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
