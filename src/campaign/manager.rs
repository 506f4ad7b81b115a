//! The Manager: a state machine over [`State`]. [`Manager::next_step`] derives, from recorded
//! facts only, the stage the campaign is in and the actions that can run now. The Manager's
//! LLM call (the revision decision) is one of those actions; its *context*
//! ([`Manager::context`]) is a compact view of the state that never holds a text body and stays
//! flat as the book grows: aggregates, at most a few pending or failed ids, a short window of
//! recent calls, and a file index of relative paths.
//!
//! Stages, in order:
//! 1. **glossary**: one call per batch of term candidates and one for the book brief, then a
//!    local merge (house style wins); the brief (and, with the glossary gate on, the termbase
//!    for review) is put on the editor's desk, and the glossary gate waits for `booktr approve`;
//! 2. **translate**: one call per prose unit (round 0);
//! 3. **proofread** round r: batches of one chapter's units, advisory;
//! 4. **decide** round r (only while r < `revision_rounds`): the Manager's call chooses among
//!    the reviewer's flagged units; units with deterministic QA errors are revised regardless;
//! 5. **revise** round r+1 (with the revisions gate on, only after `booktr approve` chose the
//!    units): the chosen units are translated again with the findings as feedback,
//!    then back to 3 for the revised units, until the rounds are used up or nothing is flagged;
//! 6. **write**: chapters are reassembled into `out_dir`.
//!
//! A failed glossary batch or first translation blocks the later stages (the run ends
//! `incomplete` and a re-run retries them); a failed review, decision or revision does not
//! (the unit keeps its previous translation, and the report says so).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use serde::Serialize;

use super::Campaign;
use super::state::{AgentUsage, LogLine, State};
use super::store::Output;
use crate::agents::Agent;
use crate::agents::glossary::{self, Candidate};
use crate::agents::proofreading::{self, ReviewItem};
use crate::agents::reconcile::Rendering;
use crate::qa;

/// Most candidates per Glossary request.
pub const CANDIDATES_PER_BATCH: usize = 120;

/// Something the runner can do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Glossary call over candidate batch `n` of [`Manager::glossary_batches`], whose call key
    /// is `key`.
    GlossaryBatch { n: usize, key: String },
    /// Local: merge house style and agent entries into the campaign termbase.
    MergeGlossary,
    /// The book brief call (audience, register, conventions, chapter synopses); `key` covers
    /// its request.
    Brief { key: String },
    /// Local: put the files an editor reads and may edit on the desk (`report_dir`): the
    /// brief, and with the glossary gate on the termbase for review.
    WriteDesk,
    /// Translation call for unit `unit` (index into `Campaign::units`, fingerprint `fp`) at
    /// `round`.
    Translate { unit: usize, fp: String, round: u32 },
    /// First translation of one part of a unit that was split because the model could not
    /// translate it in one answer. `range` is the part's byte range within the unit's text.
    TranslatePart {
        unit: usize,
        part: String,
        range: std::ops::Range<usize>,
    },
    /// Local: join the translated parts of a split unit into its round-0 translation.
    JoinParts { unit: usize },
    /// Proofreading call over some units of one chapter.
    Proofread {
        round: u32,
        chapter: String,
        units: Vec<String>,
        key: String,
    },
    /// Terminology reconciliation of one drifting term after `round`.
    Reconcile {
        round: u32,
        conflict: Conflict,
        key: String,
    },
    /// The Manager's decision call for `round`; `key` covers its inputs.
    Decide { round: u32, key: String },
    /// Local: write the translated chapters.
    WriteOutputs,
}

impl Action {
    /// The call key: names the result file and the journal records of this action.
    pub fn call_key(&self, c: &Campaign) -> String {
        match self {
            Action::GlossaryBatch { key, .. }
            | Action::Proofread { key, .. }
            | Action::Decide { key, .. }
            | Action::Reconcile { key, .. }
            | Action::Brief { key } => key.clone(),
            Action::MergeGlossary => "local/merge-glossary".into(),
            Action::WriteDesk => "local/write-desk".into(),
            Action::Translate { fp, round, .. } => translate_key(fp, *round),
            Action::TranslatePart { part, .. } => translate_key(part, 0),
            Action::JoinParts { unit } => format!("local/join/{}", c.units[*unit].id),

            Action::WriteOutputs => "local/write-outputs".into(),
        }
    }

    /// Whether the action runs locally (no model call).
    pub fn is_local(&self) -> bool {
        matches!(
            self,
            Action::MergeGlossary
                | Action::WriteOutputs
                | Action::JoinParts { .. }
                | Action::WriteDesk
        )
    }

    /// The agent making the call.
    pub fn agent(&self) -> Option<Agent> {
        match self {
            Action::GlossaryBatch { .. } | Action::Reconcile { .. } | Action::Brief { .. } => {
                Some(Agent::Glossary)
            }
            Action::Translate { .. } | Action::TranslatePart { .. } => Some(Agent::Translation),
            Action::Proofread { .. } => Some(Agent::Proofreading),
            Action::Decide { .. } => Some(Agent::Manager),
            _ => None,
        }
    }
}

/// Call key of a translation of the unit (or part) with fingerprint (or part id) `key`.
pub fn translate_key(key: &str, round: u32) -> String {
    format!("translate/{key}/r{round}")
}

/// Where the campaign is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "stage", content = "round")]
pub enum Stage {
    Glossary,
    Translate,
    Proofread(u32),
    Reconcile(u32),
    Decide(u32),
    Revise(u32),
    Write,
    Complete,
    /// Nothing can run until failed calls are retried by a new run.
    Blocked,
    /// Nothing runs until the editor approves (`booktr approve`); see [`Gate`].
    AwaitingApproval(Gate),
}

impl std::fmt::Display for Stage {
    /// The stage as shown to editors (`booktr status`): "translate", "proofread (round 1)",
    /// "awaiting approval of the glossary", …
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stage::Glossary => write!(f, "glossary"),
            Stage::Translate => write!(f, "translate"),
            Stage::Proofread(r) => write!(f, "proofread (round {r})"),
            Stage::Reconcile(r) => write!(f, "reconcile terms (round {r})"),
            Stage::Decide(r) => write!(f, "decide revisions (round {r})"),
            Stage::Revise(r) => write!(f, "revise (round {r})"),
            Stage::Write => write!(f, "write outputs"),
            Stage::Complete => write!(f, "complete"),
            Stage::Blocked => write!(f, "blocked by failed calls (run again to retry them)"),
            Stage::AwaitingApproval(Gate::Glossary) => {
                write!(f, "awaiting approval of the glossary")
            }
            Stage::AwaitingApproval(Gate::Revisions { round }) => {
                write!(f, "awaiting approval of the revisions (round {round})")
            }
        }
    }
}

/// An approval gate the campaign waits at (campaign key `review`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// The termbase and the brief, after the Glossary stage.
    Glossary,
    /// The units proposed for revision after `round`'s review.
    Revisions { round: u32 },
}

impl Gate {
    /// The `--stage` name of `booktr approve`.
    pub fn stage_name(&self) -> &'static str {
        match self {
            Gate::Glossary => "glossary",
            Gate::Revisions { .. } => "revisions",
        }
    }
}

/// The stage and the actions runnable now.
#[derive(Debug, Clone)]
pub struct Step {
    pub stage: Stage,
    pub actions: Vec<Action>,
}

/// Most terms reconciled per round (each is one small call).
pub const MAX_RECONCILIATIONS_PER_ROUND: usize = 8;

/// A term whose renderings disagree across units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub term: String,
    pub renderings: Vec<Rendering>,
    /// Up to three units showing different renderings (for the call's contexts).
    pub examples: Vec<String>,
}

/// A planned proofreading batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofBatchPlan {
    pub chapter: String,
    /// Unit ids, in book order.
    pub units: Vec<String>,
    /// Call key: `proofread/r<round>/<chapter>/<hash>`, the hash over the units' fingerprints
    /// and translations, so a batch is reviewed again only when one of its texts changed.
    pub key: String,
}

/// The Manager of one campaign run.
pub struct Manager<'a> {
    pub campaign: &'a Campaign,
    /// Term candidates of the whole book, best first.
    pub candidates: Vec<Candidate>,
    /// Batches of the candidates no earlier Glossary call has answered (so a changed book only
    /// sends its new terms), with their call keys.
    pub glossary_batches: Vec<(String, Vec<Candidate>)>,
    /// sha256 over the candidate terms and house-style entries: the merged termbase is redone
    /// when it changes.
    pub glossary_inputs: String,
    /// The book brief request and its call key (`brief/<hash of the request>`).
    pub brief: (String, crate::llm::Request),
    proofread_batches: Mutex<BTreeMap<u32, Vec<ProofBatchPlan>>>,
    campaign_qa: Mutex<BTreeMap<(u32, usize), std::sync::Arc<qa::CampaignQa>>>,
}

impl<'a> Manager<'a> {
    /// Prepares the Manager for state `s`: extracts term candidates from the whole book and
    /// batches, within the request budget, those that no recorded Glossary call answered yet.
    pub fn new(campaign: &'a Campaign, s: &State) -> Manager<'a> {
        let candidates = campaign.candidates().to_vec();
        let p = &campaign.plan;
        let answered = s.answered_terms();
        let pending: Vec<Candidate> = candidates
            .iter()
            .filter(|c| !answered.contains(&crate::termbase::term_key(&c.term)))
            .cloned()
            .collect();
        let glossary_batches = if pending.is_empty() {
            Vec::new()
        } else {
            glossary::batches(
                &p.source_lang,
                &p.target_lang,
                &campaign.house,
                &pending,
                p.max_context_tokens / 2,
                CANDIDATES_PER_BATCH,
            )
            .into_iter()
            .map(|b| {
                let terms: Vec<&str> = b.iter().map(|c| c.term.as_str()).collect();
                let hash = crate::util::sha256_hex(serde_json::to_vec(&terms).expect("json"));
                (format!("glossary/{}", &hash[..16]), b)
            })
            .collect()
        };
        let terms: Vec<&str> = candidates.iter().map(|c| c.term.as_str()).collect();
        let glossary_inputs =
            crate::util::sha256_hex(serde_json::to_vec(&(&terms, &campaign.house)).expect("json"));
        let brief_request = crate::agents::brief::build_request(
            &p.source_lang,
            &p.target_lang,
            &crate::agents::brief::outline(
                &campaign.chapters,
                crate::agents::brief::outline_budget(p.max_context_tokens),
            ),
        );
        let brief_key = format!(
            "brief/{}",
            &crate::util::sha256_hex(serde_json::to_vec(&brief_request.messages).expect("json"))
                [..16]
        );
        Manager {
            campaign,
            candidates,
            glossary_batches,
            glossary_inputs,
            brief: (brief_key, brief_request),
            proofread_batches: Mutex::new(BTreeMap::new()),
            campaign_qa: Mutex::new(BTreeMap::new()),
        }
    }

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
    pub fn forced(&self, s: &State, round: u32) -> Vec<String> {
        let qa = self.campaign_qa(s, round);
        let campaign_errors: BTreeSet<&str> = qa
            .findings
            .iter()
            .filter(|f| f.severity == qa::Severity::Error)
            .map(|f| f.unit.as_str())
            .collect();
        self.units_in_round(s, round)
            .into_iter()
            .filter(|u| {
                s.human_edit(u).is_none()
                    && (qa::has_error(s.kept_findings(u, round))
                        || campaign_errors.contains(u.as_str()))
            })
            .collect()
    }

    /// The campaign-level QA of the texts as they stand after `round` (see
    /// [`qa::check_campaign`]), computed once per round and termbase version.
    pub fn campaign_qa(&self, s: &State, round: u32) -> std::sync::Arc<qa::CampaignQa> {
        let key = (round, s.reconciled().len());
        if let Some(q) = self.campaign_qa.lock().unwrap().get(&key) {
            return q.clone();
        }
        let c = self.campaign;
        let texts: Vec<(usize, String)> = c
            .units
            .iter()
            .enumerate()
            .filter_map(|(i, u)| {
                let t = if let Some(h) = s.human_edit(&u.id) {
                    h.to_string()
                } else if u.kind.needs_translation() {
                    s.kept_translation(&u.id, round)?.1.to_string()
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
                    target: Some(t.as_str()),
                }
            })
            .collect();
        let ctx = s
            .qa_ctx()
            .clone()
            .unwrap_or_else(|| c.qa_context(s.effective_termbase()));
        let q = std::sync::Arc::new(qa::check_campaign(&ctx, &units, &[]));
        self.campaign_qa.lock().unwrap().insert(key, q.clone());
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
                crate::campaign::store::Output::Reconciliation {
                    term,
                    rejected: Some(_),
                    ..
                } => Some(crate::termbase::term_key(term)),
                _ => None,
            }))
            .collect();
        let mut out: Vec<Conflict> = Vec::new();
        for row in qa.drift.iter().filter(|r| r.drifting && !r.in_glossary) {
            if done.contains(&crate::termbase::term_key(&row.term)) {
                continue;
            }
            let renderings: Vec<Rendering> = row
                .cells
                .iter()
                .filter(|(r, _)| r.as_str() != crate::qa::drift::UNIDENTIFIED)
                .map(|(r, units)| Rendering {
                    rendering: r.clone(),
                    units: units.len(),
                })
                .collect();
            if renderings.len() < 2 {
                continue;
            }
            // Act on solid evidence only: a term kept in some units and rendered in others, or
            // at least two renderings each backed by a gloss, a marker or the termbase (not
            // only by the statistical association).
            let kept = row.cells.contains_key(crate::qa::drift::KEPT);
            let solid = renderings
                .iter()
                .filter(|r| {
                    r.rendering != crate::qa::drift::KEPT && !row.statistical.contains(&r.rendering)
                })
                .count();
            if !(kept || solid >= 2) {
                continue;
            }
            let examples: Vec<String> = row
                .cells
                .values()
                .filter_map(|u| u.first().cloned())
                .take(3)
                .collect();
            out.push(Conflict {
                term: row.term.clone(),
                renderings,
                examples,
            });
        }
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

    /// The units the Manager proposes to revise after `round` (ids in book order, each with
    /// its reason), before any editor's approval: every unit with deterministic QA errors and
    /// the reviewer-flagged units the decision chose. Units edited by hand are never proposed.
    pub fn proposed_revisions(&self, s: &State, round: u32) -> Vec<(String, String)> {
        if round >= self.campaign.plan.revision_rounds {
            return Vec::new();
        }
        let mut set: BTreeMap<usize, (String, String)> = BTreeMap::new();
        let order = |id: &str| {
            self.campaign
                .units
                .iter()
                .position(|u| u.id == id)
                .unwrap_or(usize::MAX)
        };
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
        // An editor's hand edit is final: it is never sent back to a model.
        set.into_values()
            .filter(|(u, _)| s.human_edit(u).is_none())
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
            .filter_map(|b| match s.finished().get(&b.key).map(|r| &r.output) {
                Some(Output::Proofread { report, .. }) => Some(report),
                _ => None,
            })
            .collect()
    }

    /// The call key of the decision of `round`: `decide/r<round>/<hash>`, the hash over the
    /// round's proofreading batch keys and the units forced by QA errors, so a decision is
    /// taken again only when what it decides on changed.
    pub fn decide_key(&self, s: &State, round: u32) -> String {
        let batches: Vec<String> = self
            .proofread_batches(s, round)
            .into_iter()
            .map(|b| b.key)
            .collect();
        let forced: Vec<(String, Option<String>)> = self
            .forced(s, round)
            .into_iter()
            .map(|u| {
                let fp = s.fp(&u).map(String::from);
                (u, fp)
            })
            .collect();
        let hash = crate::util::sha256_hex(serde_json::to_vec(&(&batches, &forced)).expect("json"));
        format!("decide/r{round}/{}", &hash[..16])
    }

    /// The units the Proofreading agent reviews after `round`, chosen within the review budget:
    /// `proofread_share` × the prompt tokens the round's translations cost (as the provider
    /// reported them). Deterministic QA checks every unit; the model reviewer reads the riskiest
    /// ones: units with QA warnings first, then those with coined renderings or many glossary
    /// terms, then the longest, with at least one unit per chapter while the budget lasts. A
    /// share of 1.0 or more reviews every unit.
    pub fn select_for_review(&self, s: &State, round: u32) -> Vec<String> {
        let c = self.campaign;
        let candidates: Vec<&crate::book::Unit> = {
            let ids: BTreeSet<String> = self.units_in_round(s, round).into_iter().collect();
            c.units.iter().filter(|u| ids.contains(&u.id)).collect()
        };
        let share = c.plan.proofread_share;
        // A unit's review costs about its source and its translation: the translation call's
        // prompt minus the instructions shared by every unit, plus its completion.
        let shared_prefix = crate::tokens::count(&crate::agents::translation::system_prompt(
            &c.translation_setup_with(s.brief_text().to_string()),
        )) as u64;
        let cost = |u: &crate::book::Unit| -> usize {
            match s
                .fp(&u.id)
                .and_then(|fp| s.finished().get(&translate_key(fp, round)))
            {
                Some(r) => {
                    (r.usage.prompt_tokens.saturating_sub(shared_prefix)
                        + r.usage.completion_tokens
                        + 20) as usize
                }
                None => u.chars / 2,
            }
        };
        if share >= 1.0 {
            return candidates.iter().map(|u| u.id.clone()).collect();
        }
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
                let warnings = findings
                    .iter()
                    .filter(|f| f.severity != qa::Severity::Info)
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
        for u in firsts.into_iter().chain(scored.iter().map(|(_, _, u)| *u)) {
            if chosen.contains(&u.id) {
                continue;
            }
            let c = cost(u);
            if spent + c > budget {
                continue;
            }
            spent += c;
            chosen.insert(u.id.clone());
        }
        candidates
            .iter()
            .filter(|u| chosen.contains(&u.id))
            .map(|u| u.id.clone())
            .collect()
    }

    /// Proofreading batches of `round`: per chapter, consecutive units within the budget.
    /// Computed once per round (the translations they cover are final by then).
    pub fn proofread_batches(&self, s: &State, round: u32) -> Vec<ProofBatchPlan> {
        if let Some(b) = self.proofread_batches.lock().unwrap().get(&round) {
            return b.clone();
        }
        let c = self.campaign;
        let units: BTreeSet<String> = self.select_for_review(s, round).into_iter().collect();
        let termbase = s.termbase().as_ref().map(|t| &t.1);
        let mut out = Vec::new();
        for ch in &c.chapters {
            let mine: Vec<&crate::book::Unit> = c
                .units_of(&ch.key)
                .filter(|u| units.contains(&u.id))
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
                continue;
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
                c.plan.max_context_tokens * 3 / 4,
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
                let hash = crate::util::sha256_hex(serde_json::to_vec(&fingerprint).expect("json"));
                let key = format!("proofread/r{round}/{}/{}", ch.key, &hash[..16]);
                out.push(ProofBatchPlan {
                    chapter: ch.key.clone(),
                    units,
                    key,
                });
            }
        }
        self.proofread_batches
            .lock()
            .unwrap()
            .insert(round, out.clone());
        out
    }

    /// The stage and the actions that can run now, excluding `in_flight` call keys.
    pub fn next_step(&self, s: &State, in_flight: &BTreeSet<String>) -> Step {
        let c = self.campaign;
        let key = |a: &Action| a.call_key(c);
        let open = |a: Action| -> Option<Action> {
            let k = key(&a);
            (!s.is_settled(&k) && !in_flight.contains(&k)).then_some(a)
        };
        // 1. Glossary.
        let batches: Vec<Action> = self
            .glossary_batches
            .iter()
            .enumerate()
            .map(|(n, (key, _))| Action::GlossaryBatch {
                n,
                key: key.clone(),
            })
            .collect();
        let mut batches = batches;
        // The brief is part of every unit's fingerprint: nothing is translated before it.
        batches.push(Action::Brief {
            key: self.brief.0.clone(),
        });
        if batches.iter().any(|a| !s.is_done(&key(a))) {
            if batches
                .iter()
                .any(|a| s.failed_this_run().contains_key(&key(a)))
            {
                return Step {
                    stage: Stage::Blocked,
                    actions: Vec::new(),
                };
            }
            return Step {
                stage: Stage::Glossary,
                actions: batches.into_iter().filter_map(open).collect(),
            };
        }
        if s.glossary_inputs().as_deref() != Some(self.glossary_inputs.as_str()) {
            let actions = if in_flight.contains(&key(&Action::MergeGlossary)) {
                vec![]
            } else {
                vec![Action::MergeGlossary]
            };
            return Step {
                stage: Stage::Glossary,
                actions,
            };
        }
        // The desk: the brief (and the termbase under review) where the editor can read them.
        let gates = c.plan.gates;
        let desk_stale = s.brief_on_desk().as_deref()
            != s.brief().as_ref().map(|b| b.sha256.as_str())
            || (gates.glossary
                && !s.glossary_approved()
                && s.glossary_review_of().as_deref() != s.merged_sha256().as_deref());
        if desk_stale {
            let actions = if in_flight.contains(&key(&Action::WriteDesk)) {
                vec![]
            } else {
                vec![Action::WriteDesk]
            };
            return Step {
                stage: Stage::Glossary,
                actions,
            };
        }
        if gates.glossary && !s.glossary_approved() {
            return Step {
                stage: Stage::AwaitingApproval(Gate::Glossary),
                actions: Vec::new(),
            };
        }
        // 2. First translation (split units: their parts, then a local join).
        let mut first: Vec<Action> = Vec::new();
        for (i, u) in c.units.iter().enumerate() {
            let Some(fp) = s.fp(&u.id).map(String::from) else {
                continue;
            };
            if !u.kind.needs_translation() || s.is_done(&translate_key(&fp, 0)) {
                continue;
            }
            if !s.splits().contains_key(&fp) {
                first.push(Action::Translate {
                    unit: i,
                    fp,
                    round: 0,
                });
                continue;
            }
            let leaves = s.leaf_parts(&fp);
            let missing: Vec<Action> = leaves
                .into_iter()
                .filter(|(part, _)| !s.part_translations().contains_key(part))
                .map(|(part, range)| Action::TranslatePart {
                    unit: i,
                    part,
                    range,
                })
                .collect();
            if missing.is_empty() {
                first.push(Action::JoinParts { unit: i });
            } else {
                first.extend(missing);
            }
        }
        if !first.is_empty() {
            let runnable: Vec<Action> = first.into_iter().filter_map(open).collect();
            if runnable.is_empty() && in_flight.is_empty() {
                return Step {
                    stage: Stage::Blocked,
                    actions: Vec::new(),
                };
            }
            return Step {
                stage: Stage::Translate,
                actions: runnable,
            };
        }
        // 3–5. Review rounds.
        let rounds = c.plan.revision_rounds;
        let mut round = 0;
        loop {
            if round == 0 || round < rounds {
                let pending: Vec<Action> = self
                    .proofread_batches(s, round)
                    .into_iter()
                    .map(|b| Action::Proofread {
                        round,
                        chapter: b.chapter,
                        units: b.units,
                        key: b.key,
                    })
                    .filter(|a| !s.is_settled(&key(a)))
                    .collect();
                if !pending.is_empty() {
                    let actions = pending
                        .into_iter()
                        .filter(|a| !in_flight.contains(&key(a)))
                        .collect();
                    return Step {
                        stage: Stage::Proofread(round),
                        actions,
                    };
                }
            }
            if round >= rounds {
                break;
            }
            let reconciles: Vec<Action> = self
                .conflicts(s, round)
                .into_iter()
                .map(|conflict| {
                    let hash = crate::util::sha256_hex(
                        serde_json::to_vec(&(&conflict.term, &conflict.renderings)).expect("json"),
                    );
                    Action::Reconcile {
                        round,
                        key: format!("reconcile/r{round}/{}", &hash[..16]),
                        conflict,
                    }
                })
                .filter(|a| !s.is_settled(&key(a)))
                .collect();
            if !reconciles.is_empty() {
                let actions = reconciles
                    .into_iter()
                    .filter(|a| !in_flight.contains(&key(a)))
                    .collect();
                return Step {
                    stage: Stage::Reconcile(round),
                    actions,
                };
            }
            let decide = Action::Decide {
                round,
                key: self.decide_key(s, round),
            };
            if !s.is_settled(&key(&decide)) {
                let actions = open(decide).into_iter().collect();
                return Step {
                    stage: Stage::Decide(round),
                    actions,
                };
            }
            if gates.revisions
                && !self.proposed_revisions(s, round).is_empty()
                && !s
                    .revision_approvals()
                    .contains_key(&self.decide_key(s, round))
            {
                return Step {
                    stage: Stage::AwaitingApproval(Gate::Revisions { round }),
                    actions: Vec::new(),
                };
            }
            let revise = self.revision_set(s, round);
            if revise.is_empty() {
                break;
            }
            let pending: Vec<Action> = revise
                .iter()
                .filter_map(|(id, _)| c.units.iter().position(|u| &u.id == id))
                .filter_map(|i| {
                    let fp = s.fp(&c.units[i].id)?.to_string();
                    Some(Action::Translate {
                        unit: i,
                        fp,
                        round: round + 1,
                    })
                })
                .filter(|a| !s.is_settled(&key(a)))
                .collect();
            if !pending.is_empty() {
                let actions = pending
                    .into_iter()
                    .filter(|a| !in_flight.contains(&key(a)))
                    .collect();
                return Step {
                    stage: Stage::Revise(round + 1),
                    actions,
                };
            }
            round += 1;
        }
        // 6. Outputs.
        if !s.outputs_current() {
            let actions = if in_flight.contains(&key(&Action::WriteOutputs)) {
                vec![]
            } else {
                vec![Action::WriteOutputs]
            };
            return Step {
                stage: Stage::Write,
                actions,
            };
        }
        Step {
            stage: Stage::Complete,
            actions: Vec::new(),
        }
    }

    /// The Manager's context: see [`ManagerContext`].
    pub fn context(&self, s: &State) -> ManagerContext {
        let c = self.campaign;
        let p = &c.plan;
        let prose: Vec<&crate::book::Unit> = c.prose_units().collect();
        let translated = prose
            .iter()
            .filter(|u| s.translation_at(&u.id, 0).is_some())
            .count();
        let revised = prose
            .iter()
            .filter(|u| s.rounds_of(&u.id).iter().any(|&r| r > 0))
            .count();
        let pending: Vec<&str> = prose
            .iter()
            .filter(|u| s.translation_at(&u.id, 0).is_none())
            .map(|u| u.id.as_str())
            .collect();
        let failed: Vec<&String> = s.open_failures().keys().collect();
        let stage = self.next_step(s, &BTreeSet::new()).stage;
        ManagerContext {
            task: format!(
                "Translate the book '{}' from {} to {}: {} chapters, {} units ({} to translate), with glossary, proofreading and up to {} revision round(s).",
                p.name,
                p.source_lang.name,
                p.target_lang.name,
                c.chapters.len(),
                c.units.len(),
                prose.len(),
                p.revision_rounds
            ),
            guide: GuideRef {
                file: p.guide.clone(),
                sha256: crate::util::sha256_hex(&c.guide)[..12].to_string(),
                chars: c.guide.chars().count(),
            },
            plan: vec![
                format!(
                    "glossary: {} candidate batch(es), house style wins ({} house entries)",
                    self.glossary_batches.len(),
                    c.house.len()
                ),
                format!(
                    "translate: {} units, {} concurrent",
                    prose.len(),
                    p.concurrency
                ),
                "proofread: per chapter, batches within the token budget".into(),
                format!(
                    "decide and revise: up to {} round(s); QA errors are always revised",
                    p.revision_rounds
                ),
                format!("write: {} chapters to out_dir", c.chapters.len()),
            ],
            stage,
            progress: Progress {
                units: c.units.len(),
                to_translate: prose.len(),
                translated,
                revised,
                failed: failed.len(),
                pending: pending.iter().take(5).map(|s| s.to_string()).collect(),
                pending_more: pending.len().saturating_sub(5),
                failed_calls: failed.iter().take(5).map(|s| s.to_string()).collect(),
            },
            usage: s.usage().clone(),
            call_log: s.recent().iter().cloned().collect(),
            file_index: FileIndex {
                campaign: p
                    .campaign_file
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                chapters: {
                    // Only chapters with work left are named (at most 3); the rest is a count.
                    let open: Vec<&crate::book::Chapter> = c
                        .chapters
                        .iter()
                        .filter(|ch| {
                            pending
                                .iter()
                                .any(|u| c.unit(u).is_some_and(|u| u.chapter == ch.key))
                                || failed.iter().any(|f| f.contains(&format!("/{}-", ch.key)))
                        })
                        .collect();
                    let dir = c
                        .chapters
                        .first()
                        .map(|ch| {
                            std::path::Path::new(&ch.rel_path)
                                .parent()
                                .map(|d| d.to_string_lossy().into_owned())
                                .unwrap_or_default()
                        })
                        .unwrap_or_default();
                    ChapterIndex {
                        count: c.chapters.len(),
                        dir,
                        open: open
                            .iter()
                            .take(3)
                            .map(|ch| (ch.key.clone(), ch.file_name.clone()))
                            .collect(),
                        open_more: open.len().saturating_sub(3),
                    }
                },
                out_dir: p.rel(&p.out_dir),
                state: p.rel(&c.state_path()),
                glossary: s.termbase().as_ref().map(|t| t.0.clone()),
                results: "results/<agent>/<call>.json".into(),
            },
        }
    }
}

/// Reference to the guide: never its text.
#[derive(Debug, Clone, Serialize)]
pub struct GuideRef {
    pub file: Option<String>,
    /// First 12 hex digits of the guide's sha256.
    pub sha256: String,
    pub chars: usize,
}

/// Counts and a few ids; lists are capped at 5 entries.
#[derive(Debug, Clone, Serialize)]
pub struct Progress {
    pub units: usize,
    pub to_translate: usize,
    pub translated: usize,
    pub revised: usize,
    pub failed: usize,
    pub pending: Vec<String>,
    pub pending_more: usize,
    pub failed_calls: Vec<String>,
}

/// The chapters, flat: a count, the folder of the first chapter, and the chapters that still
/// have work (at most three, by key → file name).
#[derive(Debug, Clone, Serialize)]
pub struct ChapterIndex {
    pub count: usize,
    pub dir: String,
    pub open: BTreeMap<String, String>,
    pub open_more: usize,
}

/// Ids to relative paths (relative to the campaign file; results relative to the state).
#[derive(Debug, Clone, Serialize)]
pub struct FileIndex {
    pub campaign: String,
    pub chapters: ChapterIndex,
    pub out_dir: String,
    pub state: String,
    pub glossary: Option<String>,
    pub results: String,
}

/// The Manager's whole context: task, guide, plan, stage, progress, usage aggregates, a window
/// of recent calls, and a file index. No source or translated text ever enters it.
#[derive(Debug, Clone, Serialize)]
pub struct ManagerContext {
    pub task: String,
    pub guide: GuideRef,
    pub plan: Vec<String>,
    pub stage: Stage,
    pub progress: Progress,
    pub usage: BTreeMap<Agent, AgentUsage>,
    pub call_log: Vec<LogLine>,
    pub file_index: FileIndex,
}

impl ManagerContext {
    /// Compact JSON serialisation (what the Manager's LLM call receives).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("context serialises")
    }

    /// Size in `o200k_base` tokens of [`ManagerContext::to_json`].
    pub fn tokens(&self) -> usize {
        crate::tokens::count(&self.to_json())
    }
}
