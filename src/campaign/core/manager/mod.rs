//! The Manager: a state machine over [`State`]. [`Manager::next_step`] derives, from recorded
//! facts only, the stage the campaign is in and the actions that can run now. The Manager's
//! LLM call (the revision decision) is one of those actions; its *context*
//! ([`Manager::context`]) is a compact view of the state that never holds a text body and stays
//! flat as the book grows: aggregates, at most a few pending or failed ids, a short window of
//! recent calls, and a file index of relative paths.
//!
//! Stages, in order:
//! 1. **glossary**: one call per batch of term candidates (none with `agent_glossary = false`) and one for the book brief (none with `brief = false`), then a
//!    local merge (house style wins); the brief (and, with the glossary gate on, the termbase
//!    for review) is put on the editor's desk, and the glossary gate waits for `booktr approve`;
//! 2. **translate**: one call per prose unit (round 0);
//! 3. **proofread** round r: batches of one chapter's units, advisory; a chapter is proofread
//!    as soon as its own units of the round are translated, while other chapters still
//!    translate (no stage waits for the whole book when it need not), so the step
//!    of a translate or revise stage may carry proofreading actions too;
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
//!
//! The code is split by concept: this file holds the vocabulary ([`Action`], [`Stage`],
//! [`Gate`], [`Step`]) and the [`Manager`] itself; `steps.rs` derives the stage and the
//! runnable actions ([`Manager::step`]); `review.rs` holds the review policy (what is
//! proofread, what conflicts are reconciled, what is revised); `context.rs` builds the
//! Manager's compact context view. Its table tests (journal → stage and actions, replayed from
//! a loaded state) drive the desk and the outputs too, so they live with the operations
//! (`ops/manager_tests.rs`).

mod context;
mod review;
mod steps;

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

use super::Campaign;
use super::call_key::CallKey;
use super::state::State;
use crate::agents::Agent;
use crate::agents::glossary::{self, Candidate};
use crate::qa;

pub use context::{ChapterIndex, FileIndex, GuideRef, ManagerContext, Progress};
pub use review::{
    Conflict, MAX_RECONCILIATIONS_PER_ROUND, ProofBatchPlan, REVISION_TRIAL, RefutedIssue,
    ReviewRule, RevisionsWithheld,
};
// The table tests (with the operations, `ops/manager_tests.rs`) check the drift rule directly.
#[cfg(test)]
pub(in crate::campaign) use review::drift_conflicts;

/// Most candidates per Glossary request.
pub const CANDIDATES_PER_BATCH: usize = 120;

/// Something the runner can do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Glossary call over candidate batch `n` of [`Manager::glossary_batches`], whose call key
    /// is `key`.
    GlossaryBatch { n: usize, key: CallKey },
    /// Local: merge house style and agent entries into the campaign termbase.
    MergeGlossary,
    /// The book brief call (audience, register, conventions, chapter synopses); `key` covers
    /// its request.
    Brief { key: CallKey },
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
    /// Local: the first translation of unit `unit` (fingerprint `fp`) from block memory
    /// ([`crate::campaign::core::blocks`]): whole when every block is found, else split into
    /// runs of found blocks (recorded at once) and missing ones (translated as parts).
    ReuseBlocks { unit: usize, fp: String },
    /// Proofreading call over some units of one chapter.
    Proofread {
        round: u32,
        chapter: String,
        units: Vec<String>,
        key: CallKey,
    },
    /// Terminology reconciliation of one drifting term after `round`.
    Reconcile {
        round: u32,
        conflict: Conflict,
        key: CallKey,
    },
    /// The Manager's decision call for `round`; `key` covers its inputs.
    Decide { round: u32, key: CallKey },
    /// Local: the decision for `round` when the reviewer flagged no unit beyond those that
    /// deterministic QA errors already send back ([`Manager::decision_candidates`] is empty):
    /// exactly those are revised, recorded under the decision's `key` with no model call.
    /// There is nothing to decide, and a model asked anyway answers with the schema's
    /// placeholders (the 0.5B of the quality benchmark, 0.13× the single pass's tokens).
    DecideForced { round: u32, key: CallKey },
    /// Local: write the translated chapters.
    WriteOutputs,
    /// Local ("smaller when stuck"): record that unit `unit` (fingerprint `fp`),
    /// still structurally wrong after its revision rounds, is translated again as the pieces
    /// `parts` (byte ranges within its text), joined at `round` ([`crate::campaign::core::pieces`]).
    SplitStuck {
        unit: usize,
        fp: String,
        round: u32,
        parts: Vec<std::ops::Range<usize>>,
        reason: String,
    },
    /// Local: join the translated pieces of a stuck unit into its translation at `round`.
    JoinPieces { unit: usize, fp: String, round: u32 },
}

impl Action {
    /// The call key as journaled: names the result file and the journal records of this
    /// action (the text of [`Action::key`]).
    pub fn call_key(&self, c: &Campaign) -> String {
        self.key(c).to_string()
    }

    /// The call key of this action (`c` names the unit of a join).
    pub fn key(&self, c: &Campaign) -> CallKey {
        match self {
            Action::GlossaryBatch { key, .. }
            | Action::Proofread { key, .. }
            | Action::Decide { key, .. }
            | Action::DecideForced { key, .. }
            | Action::Reconcile { key, .. }
            | Action::Brief { key } => key.clone(),
            Action::MergeGlossary => CallKey::MergeGlossary,
            Action::WriteDesk => CallKey::WriteDesk,
            Action::Translate { fp, round, .. } => CallKey::translate(fp, *round),
            Action::TranslatePart { part, .. } => CallKey::translate(part, 0),
            Action::JoinParts { unit } => CallKey::join_parts(&c.units[*unit].id),
            Action::ReuseBlocks { unit, .. } => CallKey::ReuseBlocks {
                unit: c.units[*unit].id.clone(),
            },
            Action::WriteOutputs => CallKey::WriteOutputs,
            Action::SplitStuck { unit, .. } => CallKey::SplitStuck {
                unit: c.units[*unit].id.clone(),
            },
            Action::JoinPieces { fp, round, .. } => CallKey::translate(fp, *round),
        }
    }

    /// Whether the action runs locally (no model call).
    pub fn is_local(&self) -> bool {
        matches!(
            self,
            Action::MergeGlossary
                | Action::WriteOutputs
                | Action::JoinParts { .. }
                | Action::ReuseBlocks { .. }
                | Action::WriteDesk
                | Action::SplitStuck { .. }
                | Action::JoinPieces { .. }
                | Action::DecideForced { .. }
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

/// Call key (as journaled) of a translation of the unit (or part) with fingerprint (or part
/// id) `key`: the text of [`CallKey::translate`].
pub fn translate_key(key: &str, round: u32) -> String {
    CallKey::translate(key, round).to_string()
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
    /// Units still structurally wrong after their revision rounds are translated
    /// again as smaller pieces (serde `pieces`); placed after the review rounds.
    Pieces,
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
            Stage::Pieces => write!(f, "translate stuck units in smaller pieces"),
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

    /// The command that continues a campaign waiting at this gate (as the user would type it).
    pub fn approve_command(&self, c: &Campaign) -> String {
        format!(
            "booktr approve {} --stage {}",
            c.plan.show(&c.plan.campaign_file),
            self.stage_name()
        )
    }
}

/// The stage and the actions runnable now.
#[derive(Debug, Clone)]
pub struct Step {
    pub stage: Stage,
    pub actions: Vec<Action>,
}

/// The Manager of one campaign run.
pub struct Manager<'a> {
    pub campaign: &'a Campaign,
    /// Term candidates of the whole book, best first.
    pub candidates: Vec<Candidate>,
    /// Batches of the candidates no earlier Glossary call has answered (so a changed book only
    /// sends its new terms), with their call keys.
    pub glossary_batches: Vec<(CallKey, Vec<Candidate>)>,
    /// sha256 over the candidate terms and house-style entries: the merged termbase is redone
    /// when it changes.
    pub glossary_inputs: String,
    /// The book brief request and its call key (`brief/<hash of the request>`).
    pub brief: (CallKey, crate::llm::Request),
    /// Proofreading batches per (round, chapter key), fixed when the chapter is ready.
    proofread_batches: Mutex<BTreeMap<(u32, String), Vec<ProofBatchPlan>>>,
    campaign_qa: Mutex<BTreeMap<(u32, usize), std::sync::Arc<qa::CampaignQa>>>,
    /// How many units go to the Translation agent ([`Campaign::prose_units`]), counted once.
    to_translate: usize,
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
        // `agent_glossary = false`: no term batch is sent, the termbase is the house style.
        let glossary_batches = if pending.is_empty() || !p.agent_glossary {
            Vec::new()
        } else {
            glossary::batches(
                &p.source_lang,
                &p.target_lang,
                &campaign.house,
                &pending,
                campaign.shares().glossary_batch,
                CANDIDATES_PER_BATCH,
            )
            .into_iter()
            .map(|b| {
                let terms: Vec<&str> = b.iter().map(|c| c.term.as_str()).collect();
                (CallKey::glossary(&terms), b)
            })
            .collect()
        };
        let terms: Vec<&str> = candidates.iter().map(|c| c.term.as_str()).collect();
        let glossary_inputs =
            crate::util::sha256_hex(serde_json::to_vec(&(&terms, &campaign.house)).expect("json"));
        let brief_request = crate::agents::brief::build_request(
            &p.source_lang,
            &p.target_lang,
            &crate::agents::brief::outline(&campaign.chapters, campaign.shares().brief_outline),
        );
        let brief_key = CallKey::brief(&brief_request.messages);
        Manager {
            campaign,
            candidates,
            glossary_batches,
            glossary_inputs,
            brief: (brief_key, brief_request),
            proofread_batches: Mutex::new(BTreeMap::new()),
            campaign_qa: Mutex::new(BTreeMap::new()),
            to_translate: campaign.prose_units().count(),
        }
    }
}
