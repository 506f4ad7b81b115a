//! Stage derivation: [`Manager::step`] reads the recorded state (and the run id and the
//! calls in flight, both explicit inputs) and returns the stage the campaign is in and the
//! actions that can run now. It records nothing.
//!
//! What it reads is recorded: results, failures with the run that recorded them
//! ([`State::failure_runs`]), approvals, merges and outputs. The Manager's two memos (the
//! proofreading batches of a round, the campaign-level QA of a round per termbase version) and
//! the glossary batches fixed by [`Manager::new`] are values of that same recorded state, so a
//! fresh Manager over a state loaded back from the journal gives the same step (the table
//! tests check every row both ways).

use std::collections::BTreeSet;

use super::{Action, Gate, Manager, Stage, Step, translate_key};
use crate::campaign::core::call_key::{CallKey, short_hash};
use crate::campaign::core::state::State;

impl Manager<'_> {
    /// The stage and the actions that can run now in the run `s` was loaded for
    /// ([`State::run`]), excluding `in_flight` call keys: [`Manager::step`] with that run.
    pub fn next_step(&self, s: &State, in_flight: &BTreeSet<String>) -> Step {
        self.step(s, s.run(), in_flight)
    }

    /// The stage and the actions that can run now in run `run`, excluding `in_flight` call
    /// keys. A pure function of the recorded state and these two inputs: the same journal, run
    /// id and in-flight set always give the same [`Step`]. A call that failed in `run` is not
    /// tried again (the stage it blocks is [`Stage::Blocked`]); one that failed in an earlier
    /// run is retried.
    pub fn step(&self, s: &State, run: &str, in_flight: &BTreeSet<String>) -> Step {
        self.step_inner(s, run, in_flight, None)
    }

    /// The stage of [`Manager::next_step`] with nothing in flight, without listing every
    /// action of it: while first translations are pending it stops at the first runnable one.
    /// The Manager context asks this for every recorded result, and listing all pending
    /// translations each time made a long book's run quadratic. The table tests
    /// check it against `next_step` after every record.
    pub fn next_stage(&self, s: &State) -> Stage {
        self.step_inner(s, s.run(), &BTreeSet::new(), Some(1)).stage
    }

    /// [`Manager::next_step`] with at most `limit` actions (at least one is asked for): the
    /// same stage, and the first `limit` of its actions in the same order. The first
    /// translations of a long book are many, and the runner, which asks after every answer,
    /// can start only as many as its window has free slots, so listing all of them each time
    /// made its loop quadratic in the units; with a limit, the walk stops once it
    /// has them. The table tests check the prefix against `next_step` after every record.
    pub fn next_actions(&self, s: &State, in_flight: &BTreeSet<String>, limit: usize) -> Step {
        self.step_inner(s, s.run(), in_flight, Some(limit.max(1)))
    }

    /// [`Manager::step`]; with a `limit`, only that many actions are listed, and the
    /// first-translation stage returns as soon as it has them.
    fn step_inner(
        &self,
        s: &State,
        run: &str,
        in_flight: &BTreeSet<String>,
        limit: Option<usize>,
    ) -> Step {
        let mut step = self.step_listing(s, run, in_flight, limit);
        if let Some(limit) = limit {
            step.actions.truncate(limit);
        }
        step
    }

    /// The body of [`Manager::step_inner`]: every stage lists all its actions except the
    /// first translation, which stops at `limit` runnable ones (the caller truncates the rest).
    /// The stages are tried in campaign order; the first that has work (or blocks) is the step.
    fn step_listing(
        &self,
        s: &State,
        run: &str,
        in_flight: &BTreeSet<String>,
        limit: Option<usize>,
    ) -> Step {
        let w = Walk {
            m: self,
            s,
            run,
            in_flight,
            limit,
        };
        w.glossary()
            .or_else(|| w.first_translation())
            .or_else(|| w.review_rounds())
            .or_else(|| w.pieces())
            .unwrap_or_else(|| w.outputs())
    }

    /// Work a later step needs that can be done while calls are in flight: the runner calls
    /// this between sending the calls of `stage` and waiting for their answers, so the
    /// provider is not left idle while booktr computes. In a proofreading stage
    /// whose round is decided, that is the round's campaign-level QA ([`Manager::campaign_qa`],
    /// memoised), which the reconciliations and the decision read once the reviews are in; the
    /// round's texts are final by then, so the result is the same as computed later.
    pub fn prepare_ahead(&self, s: &State, stage: &Stage) {
        if let Stage::Proofread(round) = stage
            && *round < self.campaign.plan.revision_rounds
        {
            let _ = self.campaign_qa(s, *round);
        }
    }

    /// The proofreading calls of `round` that can run now although the round's translations
    /// are not all in (a stage does not wait for the whole book): the batches of the
    /// chapters that are ready ([`Manager::chapter_ready`]), not settled in `run`, not in
    /// flight. Empty for a round that is not proofread (rounds ≥ `revision_rounds`, except
    /// round 0).
    pub fn ready_proofreads(
        &self,
        s: &State,
        run: &str,
        round: u32,
        in_flight: &BTreeSet<String>,
    ) -> Vec<Action> {
        let c = self.campaign;
        if round != 0 && round >= c.plan.revision_rounds {
            return Vec::new();
        }
        self.proofread_batches_in(s, run, round)
            .into_iter()
            .map(|b| Action::Proofread {
                round,
                chapter: b.chapter,
                units: b.units,
                key: b.key,
            })
            .filter(|a| {
                let k = a.call_key(c);
                !s.is_settled_in(&k, run) && !in_flight.contains(&k)
            })
            .collect()
    }

    /// Smaller when stuck (see [`crate::campaign::core::pieces`]): what remains to do,
    /// once the review rounds are over, for units whose kept translation still has structural
    /// error findings ([`crate::campaign::core::pieces::is_stuck_finding`]). A unit is split at most
    /// once ([`State::pieces_round`] is recorded); then its pieces are translated
    /// ([`Action::TranslatePart`]) and joined ([`Action::JoinPieces`]). A unit with a piece
    /// that failed in `run` is left with its earlier candidates (a later run retries).
    ///
    /// Only with `revision_rounds` ≥ 1 (a campaign with no revision rounds asked for no second
    /// attempt), never for a human edit or a unit whose revision the editor rejected at the
    /// revisions gate (a new translation of it is not wanted). A unit that does not cut into two
    /// pieces or more is one piece.
    /// The joined round is one after the newest recorded round and the round limit, so it is a
    /// candidate of its own.
    pub fn pieces_actions(&self, s: &State, run: &str) -> Vec<Action> {
        use crate::campaign::core::pieces;
        let c = self.campaign;
        let rounds = c.plan.revision_rounds;
        if rounds == 0 {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, u) in c.units.iter().enumerate() {
            let Some(fp) = s.fp(&u.id).map(String::from) else {
                continue;
            };
            if !u.kind.needs_translation() || s.human_edit(&u.id).is_some() {
                continue;
            }
            if let Some(round) = s.pieces_round(&fp) {
                if s.is_done(&translate_key(&fp, round)) {
                    continue;
                }
                let leaves = s.leaf_parts(&pieces::pieces_key(&fp));
                // A piece the model answered unusably in this run (an empty answer) is joined
                // as its source, for QA to report untranslated; any other failure (the
                // provider, the network) leaves the unit for a later run.
                let unusable = |p: &str| s.unusable_in_run(&translate_key(p, 0), run);
                if leaves
                    .iter()
                    .any(|(p, _)| s.failed_in_run(&translate_key(p, 0), run) && !unusable(p))
                {
                    continue;
                }
                // A piece with nothing to translate (code, bare tags, comments) is its own
                // translation: it is never sent (see `pieces::needs_model`).
                let source = c.source_text(u);
                let leaves: Vec<_> = leaves
                    .into_iter()
                    .filter(|(p, r)| pieces::needs_model(&source[r.clone()]) && !unusable(p))
                    .collect();
                let missing = untranslated_parts(s, i, leaves);
                if missing.is_empty() {
                    out.push(Action::JoinPieces { unit: i, fp, round });
                } else {
                    out.extend(missing);
                }
                continue;
            }
            if s.revision_approvals()
                .values()
                .any(|a| a.rejected.contains(&u.id))
            {
                continue;
            }
            // An error the editor dismissed on the kept text sends no new translation.
            let kept_text = s.kept_translation(&u.id, u32::MAX - 1).map_or("", |t| t.1);
            let stuck: Vec<String> = crate::campaign::core::mark_review::review_unit(
                c,
                s,
                &u.id,
                kept_text,
                s.kept_findings(&u.id, u32::MAX - 1),
            )
            .iter()
            .filter(|f| pieces::is_stuck_finding(f, c.plan.repair))
            .map(|f| format!("{}: {}", f.check, f.message))
            .collect();
            if stuck.is_empty() {
                continue;
            }
            let source = c.source_text(u);
            let mut parts = pieces::piece_ranges(source, c.shares().request);
            if parts.is_empty() {
                // A single block is one piece: its request differs from the unit's own in
                // what it masks and leaves out (see `pieces::is_piece_part`).
                parts.push(0..source.len());
            }
            let newest = s.rounds_of(&u.id).last().copied().unwrap_or(0);
            out.push(Action::SplitStuck {
                unit: i,
                fp,
                round: newest.max(rounds) + 1,
                parts,
                reason: stuck.join("; "),
            });
        }
        out
    }
}

/// One derivation of the step: the recorded state, the run, the calls in flight and the
/// listing limit of [`Manager::step_inner`].
struct Walk<'w, 'c> {
    m: &'w Manager<'c>,
    s: &'w State,
    run: &'w str,
    in_flight: &'w BTreeSet<String>,
    limit: Option<usize>,
}

/// What one review round decides.
enum Round {
    /// The step is in this round.
    Step(Step),
    /// No round has work left.
    Finished,
    /// This round is through: the next one.
    Next,
}

impl Walk<'_, '_> {
    fn key(&self, a: &Action) -> String {
        a.call_key(self.m.campaign)
    }

    fn settled(&self, k: &str) -> bool {
        self.s.is_settled_in(k, self.run)
    }

    /// `a` if its call is neither settled in this run nor in flight.
    fn open(&self, a: Action) -> Option<Action> {
        let k = self.key(&a);
        (!self.settled(&k) && !self.in_flight.contains(&k)).then_some(a)
    }

    /// A stage of one bookkeeping action (merge, desk, outputs): the action unless in flight.
    fn single(&self, stage: Stage, action: Action) -> Step {
        let actions = if self.in_flight.contains(&self.key(&action)) {
            vec![]
        } else {
            vec![action]
        };
        Step { stage, actions }
    }

    /// Stage 1: the glossary batches and the brief, their merge, the desk, and the glossary
    /// gate.
    fn glossary(&self) -> Option<Step> {
        let (m, s) = (self.m, self.s);
        let c = m.campaign;
        let mut batches: Vec<Action> = m
            .glossary_batches
            .iter()
            .enumerate()
            .map(|(n, (key, _))| Action::GlossaryBatch {
                n,
                key: key.clone(),
            })
            .collect();
        // The brief is part of every unit's fingerprint: nothing is translated before it.
        // `brief = false`: no brief call, translators get none.
        if c.plan.brief {
            batches.push(Action::Brief {
                key: m.brief.0.clone(),
            });
        }
        if batches.iter().any(|a| !s.is_done(&self.key(a))) {
            if batches
                .iter()
                .any(|a| s.failed_in_run(&self.key(a), self.run))
            {
                return Some(Step {
                    stage: Stage::Blocked,
                    actions: Vec::new(),
                });
            }
            return Some(Step {
                stage: Stage::Glossary,
                actions: batches.into_iter().filter_map(|a| self.open(a)).collect(),
            });
        }
        if s.glossary_inputs().as_deref() != Some(m.glossary_inputs.as_str()) {
            return Some(self.single(Stage::Glossary, Action::MergeGlossary));
        }
        // The desk: the brief (and the termbase under review) where the editor can read them.
        let gates = c.plan.gates;
        let desk_stale = s.brief_on_desk().as_deref()
            != s.brief().as_ref().map(|b| b.sha256.as_str())
            || (gates.glossary
                && !s.glossary_approved()
                && s.glossary_review_of().as_deref() != s.merged_sha256().as_deref());
        if desk_stale {
            return Some(self.single(Stage::Glossary, Action::WriteDesk));
        }
        if gates.glossary && !s.glossary_approved() {
            return Some(Step {
                stage: Stage::AwaitingApproval(Gate::Glossary),
                actions: Vec::new(),
            });
        }
        None
    }

    /// Stage 2: first translations (split units: their parts, then a local join), with the
    /// proofreading of chapters already translated.
    fn first_translation(&self) -> Option<Step> {
        let (m, s, limit) = (self.m, self.s, self.limit);
        let c = m.campaign;
        let mut first: Vec<Action> = Vec::new();
        // Whether the stage has any action (with a `limit` the ones not runnable are dropped
        // from `first` as they are seen).
        let mut had_first = false;
        // Only the units whose first translation is not finished (the others are skipped
        // below anyway): walking the whole book for every recorded result was quadratic.
        for &i in s.first_pending() {
            let u = &c.units[i];
            let Some(fp) = s.fp(&u.id).map(String::from) else {
                continue;
            };
            if !u.kind.needs_translation() || s.is_done(&translate_key(&fp, 0)) {
                continue;
            }
            let from = first.len();
            had_first = true;
            if !s.splits().contains_key(&fp) && s.is_reusable(i) {
                first.push(Action::ReuseBlocks { unit: i, fp });
            } else if !s.splits().contains_key(&fp) {
                first.push(Action::Translate {
                    unit: i,
                    fp,
                    round: 0,
                });
            } else {
                let leaves = s.leaf_parts(&fp);
                let missing = untranslated_parts(s, i, leaves);
                if missing.is_empty() {
                    first.push(Action::JoinParts { unit: i });
                } else {
                    first.extend(missing);
                }
            }
            if let Some(limit) = limit {
                let runnable: Vec<Action> =
                    first.drain(from..).filter_map(|a| self.open(a)).collect();
                first.extend(runnable);
                if first.len() >= limit {
                    return Some(Step {
                        stage: Stage::Translate,
                        actions: first,
                    });
                }
            }
        }
        if !had_first {
            return None;
        }
        let mut runnable: Vec<Action> = if limit.is_some() {
            first
        } else {
            first.into_iter().filter_map(|a| self.open(a)).collect()
        };
        // A chapter whose units are all translated is proofread now, while other chapters
        // still translate (after the translations: they are on the longer path).
        runnable.extend(m.ready_proofreads(s, self.run, 0, self.in_flight));
        if runnable.is_empty() && self.in_flight.is_empty() {
            return Some(Step {
                stage: Stage::Blocked,
                actions: Vec::new(),
            });
        }
        Some(Step {
            stage: Stage::Translate,
            actions: runnable,
        })
    }

    /// Stages 3–5: the review rounds, each proofreading, reconciliation, decision and
    /// revision, until a round revises nothing or the plan's rounds are spent.
    fn review_rounds(&self) -> Option<Step> {
        let mut round = 0;
        loop {
            match self.review_round(round) {
                Round::Step(step) => return Some(step),
                Round::Finished => return None,
                Round::Next => round += 1,
            }
        }
    }

    fn review_round(&self, round: u32) -> Round {
        let rounds = self.m.campaign.plan.revision_rounds;
        if (round == 0 || round < rounds)
            && let Some(step) = self.proofreads(round)
        {
            return Round::Step(step);
        }
        if round >= rounds {
            return Round::Finished;
        }
        if let Some(step) = self.reconciles(round) {
            return Round::Step(step);
        }
        let key = self.m.decide_call_key(self.s, round);
        if !self.settled(&key.to_string()) {
            let forced = self.m.forced(self.s, round);
            let decide = if self
                .m
                .decision_candidates(self.s, round, &forced)
                .is_empty()
            {
                Action::DecideForced { round, key }
            } else {
                Action::Decide { round, key }
            };
            let actions = self.open(decide).into_iter().collect();
            return Round::Step(Step {
                stage: Stage::Decide(round),
                actions,
            });
        }
        self.revisions(round)
    }

    /// The proofreading batches of `round` not yet settled.
    fn proofreads(&self, round: u32) -> Option<Step> {
        let pending: Vec<Action> = self
            .m
            .proofread_batches_in(self.s, self.run, round)
            .into_iter()
            .map(|b| Action::Proofread {
                round,
                chapter: b.chapter,
                units: b.units,
                key: b.key,
            })
            .filter(|a| !self.settled(&self.key(a)))
            .collect();
        if pending.is_empty() {
            return None;
        }
        let actions = pending
            .into_iter()
            .filter(|a| !self.in_flight.contains(&self.key(a)))
            .collect();
        Some(Step {
            stage: Stage::Proofread(round),
            actions,
        })
    }

    /// The reconciliations of `round`'s confirmed drift not yet settled.
    fn reconciles(&self, round: u32) -> Option<Step> {
        let reconciles: Vec<Action> = self
            .m
            .conflicts(self.s, round)
            .into_iter()
            .map(|conflict| Action::Reconcile {
                round,
                key: CallKey::reconcile(
                    round,
                    short_hash(
                        serde_json::to_vec(&(&conflict.term, &conflict.renderings)).expect("json"),
                    ),
                ),
                conflict,
            })
            .filter(|a| !self.settled(&self.key(a)))
            .collect();
        if reconciles.is_empty() {
            return None;
        }
        let actions = reconciles
            .into_iter()
            .filter(|a| !self.in_flight.contains(&self.key(a)))
            .collect();
        Some(Step {
            stage: Stage::Reconcile(round),
            actions,
        })
    }

    /// The revisions `round` decided. Under the revisions gate, the approved units (all, or
    /// those of the chapters approved so far) are revised while the undecided ones keep the
    /// gate closed.
    fn revisions(&self, round: u32) -> Round {
        let (m, s) = (self.m, self.s);
        let c = m.campaign;
        let waiting = c.plan.gates.revisions && !m.undecided_revisions(s, round).is_empty();
        let revise = m.revision_set(s, round);
        if revise.is_empty() && !waiting {
            return Round::Finished;
        }
        let pending: Vec<Action> = revise
            .iter()
            .filter_map(|(id, _)| c.unit_position(id))
            .filter_map(|i| {
                let fp = s.fp(&c.units[i].id)?.to_string();
                Some(Action::Translate {
                    unit: i,
                    fp,
                    round: round + 1,
                })
            })
            .filter(|a| !self.settled(&self.key(a)))
            .collect();
        // The model's first revisions of the round were all rejected: the rest are not sent
        // (`Manager::revisions_withheld`); those in flight finish.
        let withheld = if pending.is_empty() {
            None
        } else {
            m.revisions_withheld(s, round)
        };
        let pending: Vec<Action> = match &withheld {
            None => pending,
            Some(w) => pending
                .into_iter()
                .filter(|a| {
                    let Action::Translate { unit, .. } = a else {
                        return true;
                    };
                    self.in_flight.contains(&self.key(a)) || !w.units.contains(&c.units[*unit].id)
                })
                .collect(),
        };
        if !pending.is_empty() {
            let out = pending
                .iter()
                .filter(|a| self.in_flight.contains(&self.key(a)))
                .count();
            // The round's first revisions go out alone and the rest wait for their verdict
            // (`Manager::revisions_sendable`).
            let sendable = m.revisions_sendable(s, round, out).unwrap_or(usize::MAX);
            let mut actions: Vec<Action> = pending
                .into_iter()
                .filter(|a| !self.in_flight.contains(&self.key(a)))
                .take(sendable)
                .collect();
            // As in the first translation: a chapter whose revisions are settled is
            // proofread while other chapters' revisions are still out.
            actions.extend(m.ready_proofreads(s, self.run, round + 1, self.in_flight));
            return Round::Step(Step {
                stage: Stage::Revise(round + 1),
                actions,
            });
        }
        if waiting {
            return Round::Step(Step {
                stage: Stage::AwaitingApproval(Gate::Revisions { round }),
                actions: Vec::new(),
            });
        }
        if revise.is_empty() {
            return Round::Finished;
        }
        Round::Next
    }

    /// Stage 5b: smaller pieces for units stuck at full size.
    fn pieces(&self) -> Option<Step> {
        let pieces = self.m.pieces_actions(self.s, self.run);
        if pieces.is_empty() {
            return None;
        }
        let runnable: Vec<Action> = pieces.into_iter().filter_map(|a| self.open(a)).collect();
        (!runnable.is_empty() || !self.in_flight.is_empty()).then_some(Step {
            stage: Stage::Pieces,
            actions: runnable,
        })
    }

    /// Stage 6: the outputs, then complete.
    fn outputs(&self) -> Step {
        if !self.s.outputs_current() {
            return self.single(Stage::Write, Action::WriteOutputs);
        }
        Step {
            stage: Stage::Complete,
            actions: Vec::new(),
        }
    }
}

/// A `TranslatePart` action for each leaf part of unit `unit` (index) that has no translation
/// recorded yet, in order (a split unit's parts and a stuck unit's pieces alike).
fn untranslated_parts(
    s: &State,
    unit: usize,
    leaves: Vec<(String, std::ops::Range<usize>)>,
) -> Vec<Action> {
    leaves
        .into_iter()
        .filter(|(part, _)| !s.part_translations().contains_key(part))
        .map(|(part, range)| Action::TranslatePart { unit, part, range })
        .collect()
}
