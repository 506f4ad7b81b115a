//! What one turn of the run loop starts: a batch step, a local action (run inline), or model
//! calls up to the concurrency window's free slots, each past the budget cap's gate.

use super::RunLoop;
use crate::campaign::core::Campaign;
use crate::campaign::core::commit::{self, JobFailure};
use crate::campaign::core::manager::{Action, Manager, Stage, Step};
use crate::campaign::core::state::State;
use crate::campaign::core::store::Event;
use crate::campaign::ops::jobs;
use crate::campaign::ops::outputs;

impl<'a> RunLoop<'a> {
    /// Batch mode (or a batch an earlier run left open): one batch for the stage's Translation
    /// requests; what it does not answer goes on as normal calls. Returns `Some(go on)` when
    /// the turn ends here.
    pub(super) async fn batch(&mut self, step: &Step) -> anyhow::Result<Option<bool>> {
        if !((self.batch_mode || !self.state.open_batches().is_empty())
            && self.arrived.is_empty()
            && self.fatal.is_none()
            && self.in_flight.is_empty()
            && matches!(step.stage, Stage::Translate | Stage::Revise(_))
            && step
                .actions
                .iter()
                .any(crate::campaign::ops::batch::is_batchable))
        {
            return Ok(None);
        }
        if !self.batch_budget_gate(&step.actions) {
            return Ok(Some(true));
        }
        use crate::campaign::ops::batch::{Outcome, step as batch_step};
        match batch_step(
            self.c,
            &self.manager,
            &self.provider,
            &mut self.store,
            &mut self.state,
            &step.actions,
            &mut self.progress,
            &mut self.shutdown,
            self.batch_mode,
        )
        .await?
        {
            Outcome::Unsupported(note) => {
                self.progress.println(&note);
                self.batch_mode = false;
            }
            Outcome::Recorded => return Ok(Some(true)),
            Outcome::Stopped(error) => {
                if self.fatal.is_none() {
                    self.record_stop(&error)?;
                    self.fatal = Some(error);
                }
            }
            Outcome::Interrupted => {
                self.interrupted = true;
                return Ok(Some(false));
            }
            Outcome::Nothing => {}
        }
        Ok(None)
    }

    /// The budget cap applied to a new batch as a whole (see the budget module): false, with
    /// the batch held back and scheduling stopped, when it would take the spending over it.
    fn batch_budget_gate(&mut self, actions: &[Action]) -> bool {
        if let Some(b) = &self.budget
            && self.state.open_batches().is_empty()
            && let Some((calls, next)) =
                batch_estimate(self.c, &self.manager, &self.state, actions, b)
            && !b.admits(b.spent(&self.state), 0.0, next)
        {
            self.held_back = Some((format!("batch of {calls} translation requests"), next, 0.0));
            self.fatal = Some("budget reached".into());
            return false;
        }
        true
    }

    /// Starts the step's actions: one local action (run inline, after the answers that arrived
    /// are recorded), or model calls up to the window's free slots. Returns whether anything
    /// was done, and whether a call is left waiting for a slot.
    pub(super) fn refill(&mut self, actions: Vec<Action>) -> anyhow::Result<(bool, bool)> {
        let mut progressed = false;
        let mut waiting = false;
        for action in actions {
            if action.is_local() {
                // Local actions read what is recorded: they wait for the answers that arrived.
                if !self.arrived.is_empty() {
                    break;
                }
                self.run_local(&action)?;
                progressed = true;
                break;
            }
            if self.fatal.is_some() || self.in_flight.len() >= self.window.size() {
                // A call is waiting for a slot: the next answer must be taken at once.
                waiting |= self.fatal.is_none();
                break;
            }
            if !self.send(action)? {
                break;
            }
            progressed = true;
        }
        Ok((progressed, waiting))
    }

    /// Runs a local action (no model call) and records what it produced.
    fn run_local(&mut self, action: &Action) -> anyhow::Result<()> {
        let c = self.c;
        let (m, store, state) = (&self.manager, &mut self.store, &mut self.state);
        match action {
            Action::MergeGlossary => commit::merge_glossary(c, m, store, state)?,
            Action::WriteDesk => crate::campaign::ops::desk::write(c, store, state)?,
            Action::DecideForced { round, key } => {
                commit::decide_forced(c, m, store, state, *round, key)?
            }
            Action::JoinParts { unit } => {
                commit::join_parts(c, m, store, state, *unit)?;
                // A unit split around reused blocks carries its people's paragraphs now.
                crate::campaign::core::reuse::carry_edits(c, store, state, *unit)?;
                self.progress.finish("", true);
            }
            Action::ReuseBlocks { unit, fp } => {
                // A unit assembled whole is done; one split into parts is done at its join.
                let whole =
                    crate::campaign::core::reuse::reuse_blocks(c, m, store, state, *unit, fp)?;
                if whole {
                    self.progress.finish("", true);
                }
            }
            Action::SplitStuck {
                unit,
                fp,
                round,
                parts,
                reason,
            } => {
                let id = c.units[*unit].id.clone();
                self.progress.println(&format!(
                    "{id}: still wrong after its revision rounds ({reason}); translating it again in {} smaller pieces",
                    parts.len()
                ));
                commit::record_event(
                    c,
                    store,
                    state,
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
                commit::join_pieces(c, m, store, state, *unit, fp, *round)?;
                let id = &c.units[*unit].id;
                let candidates = state.candidates(id);
                if let (Some(this), Some(kept)) = (
                    candidates.iter().find(|k| k.round == Some(*round)),
                    candidates.iter().find(|k| k.kept),
                ) {
                    self.progress.println(&format!(
                        "{id}: pieces joined as round {round} ({} error finding(s)); {} is kept",
                        this.errors,
                        kept.round
                            .map_or("the edit".to_string(), |r| format!("round {r}"))
                    ));
                }
            }
            Action::WriteOutputs => {
                let written = outputs::write_all(c, state)?;
                self.skipped_chapters = written.skipped;
                commit::record_event(
                    c,
                    store,
                    state,
                    Event::OutputsWritten {
                        files: written.files,
                    },
                )?;
                crate::campaign::core::reuse::record_blocks(c, store, state)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Sends the model call of `action`, or records why it cannot be sent. Returns false when
    /// the budget held it back (nothing after it is sent either).
    fn send(&mut self, action: Action) -> anyhow::Result<bool> {
        let c = self.c;
        let call = action.call_key(c);
        let agent = action.agent().expect("model calls have an agent");
        let unit = commit::action_unit(c, &action);
        match jobs::prepare(&self.manager, &self.state, &action) {
            Ok(job) => {
                if !self.budget_gate(&call, &job) {
                    return Ok(false);
                }
                self.store.append(Event::CallStarted {
                    call: call.clone(),
                    agent,
                    unit,
                })?;
                self.progress
                    .start_labelled(&call, &crate::campaign::ops::progress::label(c, &action));
                self.in_flight.insert(call.clone());
                let provider = self.provider.clone();
                self.tasks.spawn(async move {
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
                let progress = &self.progress;
                commit::record_failure(
                    c,
                    &mut self.store,
                    &mut self.state,
                    &action,
                    &call,
                    &self.run_id,
                    &failure,
                    &|l: &str| progress.println(l),
                )?;
            }
        }
        Ok(true)
    }

    /// The budget cap applied to one call: false, with the call held back and scheduling
    /// stopped (the calls in flight finish), when spent + in flight + this call's estimate
    /// would exceed it; otherwise the call's estimate counts as in flight.
    fn budget_gate(&mut self, call: &str, job: &jobs::Job) -> bool {
        let Some(b) = &self.budget else {
            return true;
        };
        let next = b.cost(&crate::campaign::ops::estimate::job_estimate(self.c, job));
        let out: f64 = self.in_flight_cost.values().fold(0.0, |a, b| a + b);
        if !b.admits(b.spent(&self.state), out, next) {
            self.held_back = Some((call.to_string(), next, out));
            self.fatal = Some("budget reached".into());
            return false;
        }
        self.in_flight_cost.insert(call.to_string(), next);
        true
    }
}

/// The number of requests and the estimated cost (uncached, at the normal price) of the batch
/// [`crate::campaign::ops::batch::step`] would submit for `actions`: their batchable calls not yet done nor
/// tried in a batch. `None` when there is none.
fn batch_estimate(
    c: &Campaign,
    m: &Manager,
    s: &State,
    actions: &[Action],
    b: &crate::campaign::ops::budget::Budget,
) -> Option<(usize, f64)> {
    let mut n = 0;
    let mut cost = 0.0;
    for a in actions
        .iter()
        .filter(|a| crate::campaign::ops::batch::is_batchable(a))
    {
        let call = a.call_key(c);
        if s.batch_tried().contains(&call) || s.is_done(&call) {
            continue;
        }
        if let Ok(job) = jobs::prepare(m, s, a) {
            n += 1;
            cost += b.cost(&crate::campaign::ops::estimate::job_estimate(c, &job));
        }
    }
    (n > 0).then_some((n, cost))
}
