//! The Manager's review policy: which units each round covers, which have deterministic QA
//! errors (forced revisions), which the Proofreading agent reads within its budget and in
//! which batches, which drifting terms are reconciled, and which units are revised (the
//! decision, under the revisions gate only what the editor approved).

use std::collections::{BTreeMap, BTreeSet};

use super::{Manager, translate_key};
use crate::agents::proofreading::{self, ReviewItem};
use crate::agents::reconcile::Rendering;
use crate::campaign::core::call_key::{CallKey, short_hash};
use crate::campaign::core::state::{CandidateOrigin, State};
use crate::campaign::core::store::Output;
use crate::qa;

/// Most terms reconciled per round (each is one small call).
pub const MAX_RECONCILIATIONS_PER_ROUND: usize = 8;
/// Most advisory candidates shown to the Manager in one decision (keeps its prompt bounded).
pub const MAX_DECISION_CANDIDATES: usize = 40;
/// Revisions of a round judged, none kept, after which the round's remaining revisions are
/// withheld ([`Manager::revisions_withheld`]). On the quality benchmark's 0.5B every revision
/// of the re-recorded orchestration (4 of 4) and all but one of the earlier recording were
/// rejected (docs/src/benchmarks.md, finding 12); a model that writes acceptable revisions
/// has one kept among its first two nearly always, and one kept revision lifts the stop.
pub const REVISION_TRIAL: usize = 2;

/// Why a round's remaining revisions are not sent: the model's revisions in that round so far.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RevisionsWithheld {
    pub round: u32,
    /// Revisions of the round judged so far (recorded and ranked against the text they would
    /// replace), and none of them kept.
    pub judged: usize,
    /// Units of the round's revision set not revised (ids in book order).
    pub units: Vec<String>,
}

/// A reviewer issue the deterministic glossary check refuted ([`Manager::refuted_term`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RefutedIssue {
    pub round: u32,
    pub unit: String,
    /// The termbase entry's source term the issue claimed was breached.
    pub term: String,
    /// The reviewer's words.
    pub detail: String,
}

/// Which units the Proofreading agent may be given ([`Manager::select_among`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewRule {
    /// Per chapter, only units the per-unit QA checks pass: a unit with QA errors is sent
    /// back for revision from QA's findings whatever the reviewer says, and on both real
    /// models measured the reviewer's remarks on such units restated the QA findings or
    /// invented faults (docs/src/benchmarks.md, finding 13): paid for, then misleading.
    PerChapter,
    /// Per chapter, units with QA errors too (the rule before 2026-12-05), honoured for a
    /// chapter whose batches an older run recorded that way.
    PerChapterWithErrors,
    /// One budget for the whole round (the oldest rule), honoured likewise.
    WholeRound,
}

/// The revisions of one round so far ([`Manager::revision_tally`]).
struct RevisionTally {
    judged: usize,
    kept: usize,
    unsent: Vec<String>,
}

/// A term whose renderings disagree across units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub term: String,
    pub renderings: Vec<Rendering>,
    /// Up to three units showing different renderings (for the call's contexts).
    pub examples: Vec<String>,
}

/// The conflicts of the drift rows `rows` (see [`Manager::conflicts`]), leaving out the terms
/// (keys of [`crate::termbase::term_key`]) in `done`.
pub(in crate::campaign) fn drift_conflicts(
    rows: &[crate::qa::DriftRow],
    done: &BTreeSet<String>,
) -> Vec<Conflict> {
    let mut out: Vec<Conflict> = Vec::new();
    // Act on confirmed drift only (see `qa::book::drift`, "Confirmed drift"): a term kept in some
    // units and written in a confirmed rendering in others, or written in two confirmed
    // renderings. An unconfirmed (statistical) drift stays in the report for the editor:
    // reconciling it could write a neighbour's rendering into the termbase and then into
    // every unit of the term. Only the kept term and the confirmed renderings are offered,
    // so the rendering chosen is one that occurs, on word boundaries, as the term's
    // translation in every unit that uses it.
    for row in rows
        .iter()
        .filter(|r| r.drifting && r.confirmed_drift && !r.in_glossary)
    {
        if done.contains(&crate::termbase::term_key(&row.term)) {
            continue;
        }
        let renderings: Vec<Rendering> = row
            .cells
            .iter()
            .filter(|(r, _)| {
                r.as_str() == crate::qa::book::drift::KEPT || row.confirmed.contains(r)
            })
            .map(|(r, units)| Rendering {
                rendering: r.clone(),
                units: units.len(),
            })
            .collect();
        if renderings.len() < 2 {
            continue;
        }
        let examples: Vec<String> = renderings
            .iter()
            .filter_map(|r| row.cells.get(&r.rendering)?.first().cloned())
            .take(3)
            .collect();
        out.push(Conflict {
            term: row.term.clone(),
            renderings,
            examples,
        });
    }
    out
}

/// A planned proofreading batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofBatchPlan {
    pub chapter: String,
    /// Unit ids, in book order.
    pub units: Vec<String>,
    /// Call key: `proofread/r<round>/<chapter>/<hash>`, the hash over the units' fingerprints
    /// and translations, so a batch is reviewed again only when one of its texts changed.
    pub key: CallKey,
}

impl Manager<'_> {
    /// Units (ids) translated in `round`: all prose units for round 0, else the revision set
    /// of the previous round.
    pub fn units_in_round(&self, s: &State, round: u32) -> Vec<String> {
        if round == 0 {
            self.campaign.prose_units().map(|u| u.id.clone()).collect()
        } else {
            self.revision_set(s, round - 1)
                .into_iter()
                .map(|(u, _)| u)
                .collect()
        }
    }

    /// Units of `round` whose kept translation ([`State::kept_round`]) has deterministic QA
    /// errors: a rejected revision leaves the errors of the text it failed to improve.
    ///
    /// Errors come from the per-unit checks and from the campaign-level checks (a unit far
    /// below the campaign's script-share norm, a truncated length ratio), and, once a term is
    /// reconciled, from the glossary check of every unit that renders it otherwise.
    ///
    /// Findings an editor dismissed on the kept text, and errors of checks
    /// downgraded by their precision over the editor's marks, send no revision
    /// ([`crate::campaign::core::mark_review::has_live_error`]), unless the round's decision was already
    /// recorded on the forced set without those marks: a mark never re-opens a past round
    /// (that would pay for a new decision and rewrite what was revised).
    pub fn forced(&self, s: &State, round: u32) -> Vec<String> {
        let raw = self.forced_by(s, round, false);
        if s.marks().records().is_empty() || raw.is_empty() {
            return raw;
        }
        if s.is_done(&self.decide_key_for(s, round, &raw).to_string()) {
            return raw;
        }
        self.forced_by(s, round, true)
    }

    /// [`Manager::forced`] with the editor's marks applied (`marked`) or not.
    fn forced_by(&self, s: &State, round: u32, marked: bool) -> Vec<String> {
        let qa = self.campaign_qa(s, round);
        // Borrowed, not cloned: this runs for every step of a revision round, over every unit
        // of the round.
        let mut campaign_errors: BTreeMap<&str, Vec<&qa::Finding>> = BTreeMap::new();
        for f in qa
            .findings
            .iter()
            .filter(|f| f.severity == qa::Severity::Error)
        {
            campaign_errors.entry(f.unit.as_str()).or_default().push(f);
        }
        self.units_in_round(s, round)
            .into_iter()
            .filter(|u| {
                if s.human_edit(u).is_some() {
                    return false;
                }
                let kept = s.kept_findings(u, round);
                let campaign = campaign_errors.get(u.as_str());
                if !marked {
                    return qa::has_error(kept) || campaign.is_some();
                }
                let mut v = kept.to_vec();
                v.extend(campaign.into_iter().flatten().map(|f| (*f).clone()));
                let text = s.kept_translation(u, round).map_or("", |t| t.1);
                crate::campaign::core::mark_review::has_live_error(self.campaign, s, u, text, &v)
            })
            .collect()
    }

    /// The campaign-level QA of the texts as they stand after `round` (see
    /// [`qa::check_campaign`]), computed once per round and termbase version.
    pub fn campaign_qa(&self, s: &State, round: u32) -> std::sync::Arc<qa::CampaignQa> {
        let key = (round, s.reconciled().len());
        // A lock poisoned by a panic elsewhere is taken over: every entry is written in one
        // assignment, so what the lock holds is whole.
        if let Some(q) = self
            .campaign_qa
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
        {
            return q.clone();
        }
        let c = self.campaign;
        // Borrowed from the state: a copy of every text was 13 MB at ten times the corpus,
        // under the campaign checks' own peak.
        let texts: Vec<(usize, &str)> = c
            .units
            .iter()
            .enumerate()
            .filter_map(|(i, u)| {
                let t = if let Some(h) = s.human_edit(&u.id) {
                    h
                } else if u.kind.needs_translation() {
                    s.kept_translation(&u.id, round)?.1
                } else {
                    return None;
                };
                Some((i, t))
            })
            .collect();
        let units: Vec<qa::UnitText> = texts
            .iter()
            .map(|(i, t)| {
                let u = &c.units[*i];
                qa::UnitText {
                    unit: &u.id,
                    chapter: &u.chapter,
                    source: c.source_text(u),
                    target: Some(t),
                }
            })
            .collect();
        let ctx = s
            .qa_ctx()
            .clone()
            .unwrap_or_else(|| c.qa_context(s.effective_termbase()));
        let q = std::sync::Arc::new(qa::check_campaign(&ctx, &units, &[]));
        self.campaign_qa
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, q.clone());
        q
    }

    /// Terms to reconcile after `round`: terms outside the termbase that QA found kept in some
    /// units and rendered in others, or rendered several ways (drift), or marked as new with
    /// conflicting renderings; not those already reconciled. At most
    /// [`MAX_RECONCILIATIONS_PER_ROUND`], the most widespread first.
    pub fn conflicts(&self, s: &State, round: u32) -> Vec<Conflict> {
        let qa = self.campaign_qa(s, round);
        // Reconciled terms, and terms whose reconciliation answer was rejected (an unobserved
        // rendering): asking again would pay for the same doubt; the drift stays reported.
        let done: BTreeSet<String> = s
            .reconciled()
            .iter()
            .map(|e| crate::termbase::term_key(&e.source))
            .chain(s.finished().values().filter_map(|r| match &r.output {
                crate::campaign::core::store::Output::Reconciliation {
                    term,
                    rejected: Some(_),
                    ..
                } => Some(crate::termbase::term_key(term)),
                _ => None,
            }))
            .collect();
        let mut out = drift_conflicts(&qa.drift, &done);
        // Marked renderings that disagree.
        let mut marked: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        for t in qa.review_terms.iter().filter(|t| t.marked) {
            if let Some(term) = &t.term {
                marked
                    .entry(term.clone())
                    .or_default()
                    .entry(t.rendering.clone())
                    .or_default()
                    .push(t.unit.clone());
            }
        }
        for (term, by) in marked {
            let key = crate::termbase::term_key(&term);
            if by.len() < 2
                || done.contains(&key)
                || out
                    .iter()
                    .any(|c| crate::termbase::term_key(&c.term) == key)
                || s.effective_termbase().get(&term).is_some()
            {
                continue;
            }
            let examples = by
                .values()
                .filter_map(|u| u.first().cloned())
                .take(3)
                .collect();
            out.push(Conflict {
                term,
                renderings: by
                    .iter()
                    .map(|(r, u)| Rendering {
                        rendering: r.clone(),
                        units: u.len(),
                    })
                    .collect(),
                examples,
            });
        }
        out.sort_by_key(|c| std::cmp::Reverse(c.renderings.iter().map(|r| r.units).sum::<usize>()));
        out.truncate(MAX_RECONCILIATIONS_PER_ROUND);
        out
    }

    /// The units to translate again after `round`, with the reason for each: the recorded
    /// decision if there is one, else the forced units alone. In book order, without units an
    /// editor has edited by hand.
    pub fn revision_set(&self, s: &State, round: u32) -> Vec<(String, String)> {
        let proposed = self.proposed_revisions(s, round);
        if !self.campaign.plan.gates.revisions || proposed.is_empty() {
            return proposed;
        }
        // Under the revisions gate only what the editor approved goes back (nothing before
        // the approval is recorded).
        match s.revision_approvals().get(&self.decide_key(s, round)) {
            Some(approval) => proposed
                .into_iter()
                .filter(|(u, _)| approval.approved.contains(u))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The proposed revisions after `round` ([`Manager::proposed_revisions`]) that still wait
    /// for the editor under the revisions gate: those no recorded approval of the round's
    /// decision has approved or rejected (an approval by chapter decides only its chapters'
    /// units). Empty without the gate, and once every proposed unit is decided.
    pub fn undecided_revisions(&self, s: &State, round: u32) -> Vec<(String, String)> {
        if !self.campaign.plan.gates.revisions {
            return Vec::new();
        }
        let proposed = self.proposed_revisions(s, round);
        if proposed.is_empty() {
            return proposed;
        }
        match s.revision_approvals().get(&self.decide_key(s, round)) {
            Some(approval) => proposed
                .into_iter()
                .filter(|(u, _)| !approval.decided(u))
                .collect(),
            None => proposed,
        }
    }

    /// The units the Manager proposes to revise after `round` (ids in book order, each with
    /// its reason), before any editor's approval: every unit with deterministic QA errors and
    /// the reviewer-flagged units the decision chose. Units edited by hand are never proposed.
    pub fn proposed_revisions(&self, s: &State, round: u32) -> Vec<(String, String)> {
        if round >= self.campaign.plan.revision_rounds {
            return Vec::new();
        }
        let mut set: BTreeMap<usize, (String, String)> = BTreeMap::new();
        let order = |id: &str| self.campaign.unit_position(id).unwrap_or(usize::MAX);
        match s
            .finished()
            .get(&self.decide_key(s, round))
            .map(|r| &r.output)
        {
            Some(Output::Decision {
                forced, decision, ..
            }) => {
                for u in forced {
                    set.insert(order(u), (u.clone(), "deterministic QA errors".into()));
                }
                for o in &decision.revise {
                    set.entry(order(&o.unit))
                        .or_insert_with(|| (o.unit.clone(), o.reason.clone()));
                }
            }
            _ => {
                for u in self.forced(s, round) {
                    set.insert(order(&u), (u, "deterministic QA errors".into()));
                }
            }
        }
        // An editor's hand edit is final: it is never sent back to a model. A unit whose kept
        // text is still in the source language (an echo) is not revised either: shown its own
        // English copy, a weak model copies it again (the 0.5B of the quality benchmark
        // repeated the English or the review in every such revision, and QA rejected them all);
        // once the review rounds are over it is translated again in pieces, from the source
        // alone (`Manager::pieces_actions`).
        set.into_values()
            .filter(|(u, _)| s.human_edit(u).is_none())
            .filter(|(u, _)| !s.kept_rank(u, round).is_some_and(|r| r.left_in_source))
            .collect()
    }

    /// The revisions after `round` that are withheld, if any: when at least [`REVISION_TRIAL`]
    /// of the round's revisions have been recorded and QA ranked every one of them below the
    /// text it would replace (none kept), the round's revisions not yet sent are not sent.
    /// The model has shown it cannot revise here; a unit still wrong is translated again in
    /// pieces from its source after the rounds, as any unit the revisions did not fix, and
    /// its errors stay on the report. A pure function of the recorded results, so a resumed
    /// run withholds the same units; one kept revision lifts it. A revision that was sent and
    /// failed (a runaway reply, say) is not withheld: it is a failed call, retried by the next
    /// run as any other, so the status's "run again to retry" stays true.
    pub fn revisions_withheld(&self, s: &State, round: u32) -> Option<RevisionsWithheld> {
        let t = self.revision_tally(s, round);
        (t.judged >= REVISION_TRIAL && t.kept == 0 && !t.unsent.is_empty()).then_some(
            RevisionsWithheld {
                round,
                judged: t.judged,
                units: t.unsent,
            },
        )
    }

    /// How many more revisions after `round` may be sent now, besides `in_flight` of them
    /// already out; `None`: no limit. Until one of the round's revisions is kept or
    /// [`REVISION_TRIAL`] of them are judged, at most [`REVISION_TRIAL`] are out or judged at
    /// once (the trial): the first ones probe whether this model can revise at all, and the
    /// rest wait for the verdict instead of being sent beside them. Without the cap, a run
    /// with `concurrency` at least the number of revisions sends them all before the first is
    /// judged and [`Manager::revisions_withheld`] saves nothing (the 1.5B sample-book run
    /// sent five at `concurrency = 4`; all five were rejected). Once the trial is over the
    /// cap is lifted (a revision kept) or the rest are withheld (none kept).
    pub fn revisions_sendable(&self, s: &State, round: u32, in_flight: usize) -> Option<usize> {
        let t = self.revision_tally(s, round);
        (t.kept == 0 && t.judged < REVISION_TRIAL)
            .then(|| REVISION_TRIAL.saturating_sub(t.judged + in_flight))
    }

    /// The revisions after `round` so far: judged (recorded and ranked), kept among them, and
    /// the units of the round's revision set with no revision recorded and none failed.
    fn revision_tally(&self, s: &State, round: u32) -> RevisionTally {
        let set = self.revision_set(s, round);
        let (mut judged, mut kept) = (0usize, 0usize);
        let mut unsent = Vec::new();
        for (u, _) in &set {
            match s
                .candidates(u)
                .into_iter()
                .find(|c| c.round == Some(round + 1) && c.origin == CandidateOrigin::Revision)
            {
                Some(c) => {
                    judged += 1;
                    kept += usize::from(!c.rejected);
                }
                None => {
                    let failed = s.fp(u).is_some_and(|fp| {
                        s.failure_runs().contains_key(&translate_key(fp, round + 1))
                    });
                    if !failed {
                        unsent.push(u.clone());
                    }
                }
            }
        }
        RevisionTally {
            judged,
            kept,
            unsent,
        }
    }

    /// The termbase entry (its source term) whose breach reviewer `issue`, on the text unit
    /// `issue.unit` kept after `round`, claims and the deterministic glossary check refutes;
    /// `None` when the issue stands. A claim is refuted when the issue is about terminology
    /// (its type, or the word "glossary" in its detail), quotes the source term of an entry
    /// that applies to the unit's source, the kept text holds that entry's rendering, and the
    /// glossary check has no finding on the text. Such an issue is neither fed back to a
    /// revision nor offered to the Manager (lesson 5: a model's claim is checked against
    /// evidence): the 0.5B reviewer claimed "'Complete Payment' … leaves it untranslated"
    /// where the translation had 完成支付 (docs/src/benchmarks.md, finding 13). The match is
    /// ASCII-case-insensitive, as the termbase's own.
    pub fn refuted_term(
        &self,
        s: &State,
        round: u32,
        issue: &crate::agents::proofreading::Issue,
    ) -> Option<String> {
        let about_terms = issue.kind.eq_ignore_ascii_case("terminology")
            || issue.detail.to_ascii_lowercase().contains("glossary");
        if !about_terms {
            return None;
        }
        let unit = self.campaign.units.iter().find(|u| u.id == issue.unit)?;
        let (_, text) = s.kept_translation(&unit.id, round)?;
        if s.kept_findings(&unit.id, round)
            .iter()
            .any(|f| f.check == qa::unit::glossary::CHECK)
        {
            return None;
        }
        let detail = issue.detail.to_ascii_lowercase();
        s.effective_termbase()
            .relevant_to(self.campaign.source_text(unit))
            .into_iter()
            .find(|e| {
                detail.contains(&e.source.to_ascii_lowercase()) && text.contains(e.target.as_str())
            })
            .map(|e| e.source.clone())
    }

    /// The reviewer's issues after `round`, in report order, each with the termbase term the
    /// glossary check refutes it on ([`Manager::refuted_term`]; `None`: it stands). One pass
    /// for [`Manager::standing_issues`], [`Manager::refuted_issues`] and the decision.
    fn judged_issues<'s>(
        &self,
        s: &'s State,
        round: u32,
    ) -> Vec<(&'s crate::agents::proofreading::Issue, Option<String>)> {
        self.proof_reports(s, round)
            .into_iter()
            .flat_map(|r| r.issues.iter())
            .map(|i| (i, self.refuted_term(s, round, i)))
            .collect()
    }

    /// The reviewer's issues after `round` that stand (not refuted, see
    /// [`Manager::refuted_term`]), in report order.
    pub fn standing_issues<'s>(
        &self,
        s: &'s State,
        round: u32,
    ) -> Vec<&'s crate::agents::proofreading::Issue> {
        self.judged_issues(s, round)
            .into_iter()
            .filter_map(|(i, refuted)| refuted.is_none().then_some(i))
            .collect()
    }

    /// The reviewer's issues after `round` that the glossary check refuted, for the reports.
    pub fn refuted_issues(&self, s: &State, round: u32) -> Vec<RefutedIssue> {
        self.judged_issues(s, round)
            .into_iter()
            .filter_map(|(i, refuted)| {
                refuted.map(|term| RefutedIssue {
                    round,
                    unit: i.unit.clone(),
                    term,
                    detail: i.detail.clone(),
                })
            })
            .collect()
    }

    /// The units the Manager decides on after `round` (ids sorted, at most
    /// [`MAX_DECISION_CANDIDATES`]): those the reviewer flagged (a standing issue, or a
    /// revision request for a unit none of whose issues was refuted) that `forced` (the units
    /// QA errors already send back) does not hold. Empty: the decision is local
    /// ([`super::Action::DecideForced`]).
    pub fn decision_candidates(&self, s: &State, round: u32, forced: &[String]) -> Vec<String> {
        let mut flagged: std::collections::BTreeSet<&str> = Default::default();
        let mut refuted: BTreeSet<&str> = BTreeSet::new();
        for (i, term) in self.judged_issues(s, round) {
            if term.is_some() {
                refuted.insert(i.unit.as_str());
            } else {
                flagged.insert(i.unit.as_str());
            }
        }
        let standing = flagged.clone();
        for report in self.proof_reports(s, round) {
            flagged.extend(
                report
                    .units_need_revision
                    .iter()
                    .filter(|u| !refuted.contains(u.as_str()) || standing.contains(u.as_str()))
                    .map(String::as_str),
            );
        }
        flagged
            .into_iter()
            .filter(|u| !forced.iter().any(|f| f == u))
            .take(MAX_DECISION_CANDIDATES)
            .map(str::to_string)
            .collect()
    }

    /// The proofreading reports of the current batches of `round` that have finished.
    pub fn proof_reports<'s>(
        &self,
        s: &'s State,
        round: u32,
    ) -> Vec<&'s crate::agents::proofreading::ProofReport> {
        self.proofread_batches(s, round)
            .iter()
            .filter_map(
                |b| match s.finished().get(&b.key.to_string()).map(|r| &r.output) {
                    Some(Output::Proofread { report, .. }) => Some(report),
                    _ => None,
                },
            )
            .collect()
    }

    /// The call key of the decision of `round`: `decide/r<round>/<hash>`, the hash over the
    /// round's proofreading batch keys and the units forced by QA errors, so a decision is
    /// taken again only when what it decides on changed.
    pub fn decide_key(&self, s: &State, round: u32) -> String {
        self.decide_call_key(s, round).to_string()
    }

    /// [`Manager::decide_key`] as a [`CallKey`].
    ///
    /// A hand or imported edit never reopens a decided round: an edited unit leaves the forced
    /// set (an editor's text is never sent back to a model), which changes the key, yet the
    /// decision recorded on the same review batches with the edited units among its forced
    /// ones still stands, and its key is kept. Otherwise an import after a run would leave
    /// the round undecided (`status`: `incomplete` at "decide revisions (round 0)") and the
    /// next `run` would pay for a Manager call that decides nothing new (regression test
    /// `a_po_import_reopened_the_decision_of_round_0`).
    pub fn decide_call_key(&self, s: &State, round: u32) -> CallKey {
        let forced = self.forced(s, round);
        let key = self.decide_key_for(s, round, &forced);
        if s.human_edits().is_empty() || s.is_done(&key.to_string()) {
            return key;
        }
        self.decided_before_edits(s, round, &forced).unwrap_or(key)
    }

    /// The key of a recorded decision of `round` that covers the units `forced` now: made on
    /// the same proofreading batches, its forced units being `forced` plus units edited by
    /// hand or imported since. Scans the finished calls; only asked when the state has edits
    /// and the current key is not done.
    fn decided_before_edits(&self, s: &State, round: u32, forced: &[String]) -> Option<CallKey> {
        let now: BTreeSet<&str> = forced.iter().map(String::as_str).collect();
        s.finished().iter().find_map(|(k, r)| {
            let parsed = CallKey::parse(k);
            if !matches!(parsed, CallKey::Decide { round: r0, .. } if r0 == round) {
                return None;
            }
            let Output::Decision { forced: then, .. } = &r.output else {
                return None;
            };
            let covers = now.iter().all(|u| then.iter().any(|t| t == u))
                && then
                    .iter()
                    .all(|u| now.contains(u.as_str()) || s.human_edit(u).is_some());
            // The same batches and units give the same key: the decision is about this round
            // as it stands, but for the edits.
            (covers && self.decide_key_for(s, round, then) == parsed).then_some(parsed)
        })
    }

    /// The decision key of `round` with `forced` as its forced units.
    fn decide_key_for(&self, s: &State, round: u32, forced: &[String]) -> CallKey {
        let batches: Vec<String> = self
            .proofread_batches(s, round)
            .into_iter()
            .map(|b| b.key.to_string())
            .collect();
        let forced: Vec<(String, Option<String>)> = forced
            .iter()
            .map(|u| {
                let fp = s.fp(u).map(String::from);
                (u.clone(), fp)
            })
            .collect();
        CallKey::decide(
            round,
            short_hash(serde_json::to_vec(&(&batches, &forced)).expect("json")),
        )
    }

    /// The units the Proofreading agent reviews after `round`, chosen chapter by chapter within
    /// each chapter's review budget: `proofread_share` × the prompt tokens the chapter's
    /// translations of the round cost (as the provider reported them). Deterministic QA checks
    /// every unit; the model reviewer reads only units it passes (no error finding of the
    /// per-unit checks; [`ReviewRule::PerChapter`]), the riskiest first: units with QA
    /// warnings, then those with coined renderings or many glossary terms, then the longest;
    /// the best unit of each chapter is always read (with a share above 0). A share of 1.0 or
    /// more reviews every unit QA passes.
    ///
    /// Per chapter: a chapter's selection depends only on its own units, so its
    /// proofreading can start as soon as its units are translated, while other chapters still
    /// translate. The chapter budgets sum to the whole-round budget of the estimate.
    pub fn select_for_review(&self, s: &State, round: u32) -> Vec<String> {
        let c = self.campaign;
        let ids: BTreeSet<String> = self.units_in_round(s, round).into_iter().collect();
        let mut out = Vec::new();
        for ch in &c.chapters {
            let candidates: Vec<&crate::book::Unit> = c
                .units_of(&ch.key)
                .filter(|u| ids.contains(&u.id))
                .collect();
            let chosen = self.select_among(s, round, &candidates, ReviewRule::PerChapter);
            out.extend(
                candidates
                    .iter()
                    .filter(|u| chosen.contains(&u.id))
                    .map(|u| u.id.clone()),
            );
        }
        out
    }

    /// The review selection among `candidates` (units of `round`) within `proofread_share` ×
    /// their translations' prompt tokens: the best unit of each chapter among them first, then
    /// the rest by score (see [`Manager::select_for_review`]), under `rule`.
    pub(in crate::campaign) fn select_among(
        &self,
        s: &State,
        round: u32,
        candidates: &[&crate::book::Unit],
        rule: ReviewRule,
    ) -> BTreeSet<String> {
        let c = self.campaign;
        let per_chapter = rule != ReviewRule::WholeRound;
        let filtered: Vec<&crate::book::Unit>;
        let candidates = if rule == ReviewRule::PerChapter {
            filtered = candidates
                .iter()
                .copied()
                .filter(|u| !qa::has_error(s.kept_findings(&u.id, round)))
                .collect();
            &filtered[..]
        } else {
            candidates
        };
        let share = c.plan.proofread_share;
        if share >= 1.0 {
            return candidates.iter().map(|u| u.id.clone()).collect();
        }
        // Proofreading off (`proofread_share = 0`, the default): no budget, nothing is read.
        if share <= 0.0 {
            return BTreeSet::new();
        }
        // A unit's review costs about its source and its translation: the translation call's
        // prompt minus the instructions shared by every unit and the synopsis shared by the
        // units of its chapter (the reviewer sees neither), plus its completion.
        let shared_prefix = crate::tokens::count(&crate::agents::translation::system_prompt(
            &c.translation_setup_with(s.brief_text().to_string()),
        )) as u64;
        // The chapter synopsis line of the candidates' chapters only: this runs once per
        // chapter, and counting every chapter's line each time was chapters² token counts.
        let chapter_line: std::collections::HashMap<&str, u64> = candidates
            .iter()
            .map(|u| u.chapter.as_str())
            .collect::<BTreeSet<&str>>()
            .into_iter()
            .map(|ch| {
                let setup = c.translation_setup_for(s.brief_text(), ch);
                let line = crate::agents::translation::chapter_brief_message(&setup.chapter_brief);
                (ch, crate::tokens::count(&line) as u64)
            })
            .collect();
        let cost = |u: &crate::book::Unit| -> usize {
            match s
                .fp(&u.id)
                .and_then(|fp| s.finished().get(&translate_key(fp, round)))
            {
                Some(r) => {
                    let shared =
                        shared_prefix + chapter_line.get(u.chapter.as_str()).copied().unwrap_or(0);
                    (r.usage.prompt_tokens.saturating_sub(shared) + r.usage.completion_tokens + 20)
                        as usize
                }
                None => u.chars / 2,
            }
        };
        let spent_on_translation: u64 = candidates
            .iter()
            .filter_map(|u| {
                s.fp(&u.id)
                    .and_then(|fp| s.finished().get(&translate_key(fp, round)))
            })
            .map(|r| r.usage.prompt_tokens)
            .sum();
        let budget = (spent_on_translation as f64 * share) as usize;
        let marker = &c.plan.review_marker;
        let glossary = s.effective_termbase();
        let mut scored: Vec<(i64, usize, &crate::book::Unit)> = candidates
            .iter()
            .enumerate()
            .map(|(i, u)| {
                let findings = s.kept_findings(&u.id, round);
                // House-style findings (`style_*`) are deterministic and say nothing about
                // meaning, so they do not draw the model reviewer's budget.
                let warnings = findings
                    .iter()
                    .filter(|f| {
                        f.severity != qa::Severity::Info && !qa::unit::style::is_style(&f.check)
                    })
                    .count() as i64;
                let target = s.kept_translation(&u.id, round).map_or("", |t| t.1);
                let coined = target.matches(marker.as_str()).count() as i64;
                let terms = glossary.relevant_to(c.source_text(u)).len() as i64;
                let score = warnings * 1000 + coined * 100 + terms * 10 + (u.chars / 1000) as i64;
                (score, i, *u)
            })
            .collect();
        scored.sort_by_key(|(score, i, _)| (std::cmp::Reverse(*score), *i));
        let mut chosen: BTreeSet<String> = BTreeSet::new();
        let mut spent = 0usize;
        // First the best unit of each chapter, then the rest by score.
        let mut seen_chapters: BTreeSet<&str> = BTreeSet::new();
        let firsts: Vec<&crate::book::Unit> = scored
            .iter()
            .filter(|(_, _, u)| seen_chapters.insert(u.chapter.as_str()))
            .map(|(_, _, u)| *u)
            .collect();
        let n_firsts = firsts.len();
        for (k, u) in firsts
            .into_iter()
            .chain(scored.iter().map(|(_, _, u)| *u))
            .enumerate()
        {
            if chosen.contains(&u.id) {
                continue;
            }
            let c = cost(u);
            // Per chapter, its best unit is read whenever there is a budget at all: one budget
            // for the whole round used to let every chapter's best unit in while it lasted.
            let first_in_chapter = per_chapter && k < n_firsts && budget > 0;
            if spent + c > budget && !first_in_chapter {
                continue;
            }
            spent += c;
            chosen.insert(u.id.clone());
        }
        chosen
    }

    /// Whether every unit of chapter `chapter` that `round` translates has its translation of
    /// that round settled in run `run`: round 0, the first translation recorded (a failed one
    /// keeps the chapter waiting, as it blocks the campaign); a revision round, the revision
    /// recorded or failed in `run` (the unit then keeps its earlier translation). Only then is
    /// the chapter's proofreading of the round planned.
    pub fn chapter_ready(&self, s: &State, run: &str, round: u32, chapter: &str) -> bool {
        let revise = if round == 0 {
            Vec::new()
        } else {
            self.revision_set(s, round - 1)
        };
        self.chapter_ready_among(s, run, round, chapter, &revise)
    }

    /// [`Manager::chapter_ready`] with the revision set of `round - 1` given (ignored for round
    /// 0), so a caller asking about every chapter computes it once (once per chapter
    /// made each step chapters × units).
    fn chapter_ready_among(
        &self,
        s: &State,
        run: &str,
        round: u32,
        chapter: &str,
        revise: &[(String, String)],
    ) -> bool {
        let c = self.campaign;
        if round == 0 {
            return c.units_of(chapter).all(|u| {
                !u.kind.needs_translation()
                    || s.fp(&u.id)
                        .is_some_and(|fp| s.is_done(&translate_key(fp, 0)))
            });
        }
        revise
            .iter()
            .filter_map(|(id, _)| c.unit(id))
            .filter(|u| u.chapter == chapter)
            .all(|u| {
                s.fp(&u.id)
                    .is_some_and(|fp| s.is_settled_in(&translate_key(fp, round), run))
            })
    }

    /// Proofreading batches of `round` of the chapters whose units of the round are all
    /// translated ([`Manager::chapter_ready`] in the run `s` was loaded for): per chapter,
    /// consecutive units within the budget. A chapter's batches are computed once, when it is
    /// ready (its translations of the round are final by then), so other chapters may still be
    /// translating. Once every chapter is ready this is the round's whole plan.
    pub fn proofread_batches(&self, s: &State, round: u32) -> Vec<ProofBatchPlan> {
        self.proofread_batches_in(s, s.run(), round)
    }

    /// [`Manager::proofread_batches`] with readiness judged for run `run`.
    pub fn proofread_batches_in(&self, s: &State, run: &str, round: u32) -> Vec<ProofBatchPlan> {
        let c = self.campaign;
        let mut out = Vec::new();
        let mut all_ready: Option<bool> = None;
        // Computed once per call, when a chapter first needs them: the revision set
        // the readiness of a revision round depends on, and the units of the round.
        let mut revise: Option<Vec<(String, String)>> = None;
        let mut round_ids: Option<BTreeSet<String>> = None;
        for ch in &c.chapters {
            let memo_key = (round, ch.key.clone());
            if let Some(b) = self
                .proofread_batches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(&memo_key)
            {
                out.extend(b.iter().cloned());
                continue;
            }
            let revise: &[(String, String)] = revise.get_or_insert_with(|| {
                if round == 0 {
                    Vec::new()
                } else {
                    self.revision_set(s, round - 1)
                }
            });
            if !self.chapter_ready_among(s, run, round, &ch.key, revise) {
                continue;
            }
            let ids: &BTreeSet<String> = round_ids
                .get_or_insert_with(|| self.units_in_round(s, round).into_iter().collect());
            let candidates: Vec<&crate::book::Unit> = c
                .units_of(&ch.key)
                .filter(|u| ids.contains(&u.id))
                .collect();
            let chosen = self.select_among(s, round, &candidates, ReviewRule::PerChapter);
            let mut plan = self.chapter_batches(s, round, &ch.key, &chosen);
            // An older run chose the units under an older rule: a chapter it reviewed that way
            // keeps those batches (recorded, paid), the newest rule first.
            let recorded_other = |plan: &[ProofBatchPlan]| {
                s.finished().keys().any(|k| {
                    matches!(CallKey::parse(k), CallKey::Proofread { round: r, chapter, .. }
                        if r == round && chapter == ch.key)
                        && !plan.iter().any(|b| &b.key.to_string() == k)
                })
            };
            let all_done = |plan: &[ProofBatchPlan]| {
                !plan.is_empty() && plan.iter().all(|b| s.is_done(&b.key.to_string()))
            };
            if recorded_other(&plan) {
                let with_errors =
                    self.select_among(s, round, &candidates, ReviewRule::PerChapterWithErrors);
                let legacy = self.chapter_batches(s, round, &ch.key, &with_errors);
                if all_done(&legacy) {
                    plan = legacy;
                }
            }
            if c.plan.proofread_share < 1.0
                && recorded_other(&plan)
                && *all_ready.get_or_insert_with(|| {
                    c.chapters
                        .iter()
                        .all(|x| self.chapter_ready_among(s, run, round, &x.key, revise))
                })
            {
                let everything: Vec<&crate::book::Unit> =
                    c.units.iter().filter(|u| ids.contains(&u.id)).collect();
                let whole = self.select_among(s, round, &everything, ReviewRule::WholeRound);
                let legacy = self.chapter_batches(s, round, &ch.key, &whole);
                if all_done(&legacy) {
                    plan = legacy;
                }
            }
            out.extend(plan.iter().cloned());
            self.proofread_batches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(memo_key, plan);
        }
        out
    }

    /// The proofreading batches of chapter `chapter` after `round` over the units `chosen`
    /// (ids; others are skipped): consecutive units within the batch budget.
    pub(in crate::campaign) fn chapter_batches(
        &self,
        s: &State,
        round: u32,
        chapter: &str,
        chosen: &BTreeSet<String>,
    ) -> Vec<ProofBatchPlan> {
        let c = self.campaign;
        let termbase = s.termbase().as_ref().map(|t| &t.1);
        let mut out = Vec::new();
        let mine: Vec<&crate::book::Unit> = c
            .units_of(chapter)
            .filter(|u| chosen.contains(&u.id))
            .collect();
        let items: Vec<ReviewItem> = mine
            .iter()
            .filter_map(|u| {
                let (_, target) = s.kept_translation(&u.id, round)?;
                Some(ReviewItem {
                    unit: &u.id,
                    source: c.source_text(u),
                    target,
                    findings: Vec::new(),
                })
            })
            .collect();
        if items.is_empty() {
            return out;
        }
        let entries_tokens = termbase.map_or(0, |tb| {
            let joined: String = items.iter().map(|i| i.source).collect();
            tb.relevant_to(&joined)
                .iter()
                .map(|e| crate::tokens::count(&format!("- {} → {}\n", e.source, e.target)))
                .sum()
        });
        let ranges = proofreading::batch_ranges(
            &c.plan.source_lang,
            &c.plan.target_lang,
            &items,
            entries_tokens,
            c.shares().proofread_batch,
        );
        for r in ranges {
            let units: Vec<String> = items[r.clone()]
                .iter()
                .map(|i| i.unit.to_string())
                .collect();
            // Unit ids are part of the key: the answer names units by id.
            let fingerprint: Vec<(&str, Option<&str>, String)> = items[r]
                .iter()
                .map(|i| (i.unit, s.fp(i.unit), crate::util::sha256_hex(i.target)))
                .collect();
            let key = CallKey::proofread(
                round,
                chapter,
                short_hash(serde_json::to_vec(&fingerprint).expect("json")),
            );
            out.push(ProofBatchPlan {
                chapter: chapter.to_string(),
                units,
                key,
            });
        }
        out
    }
}
