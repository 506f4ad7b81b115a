//! Reports for editors: a serde model ([`Report`]) built from the campaign state, rendered as
//! `report.json` (machine-readable evidence) and `report.md` (a summary read in two minutes,
//! worst problems first). Both say REHEARSAL when the pseudo provider produced the outputs.

mod comparison;
pub mod counts;
pub mod html;
pub mod ledger;
mod markdown;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::agents::Agent;
use crate::agents::json::ParseStats;
use crate::agents::manager::RevisionOrder;
use crate::agents::proofreading::Issue;
use crate::campaign::Campaign;
use crate::campaign::core::CallKey;
use crate::campaign::core::manager::{Manager, translate_key};
use crate::campaign::core::state::State;
use crate::campaign::core::store::Output;
use crate::campaign::core::summary::{Status, Summary, summarize_with};
use crate::llm::Usage;
use crate::qa::{self, Finding, Severity};
use crate::termbase::Entry;

pub use comparison::{Comparison, ComparisonGate};

/// Version of the report JSON layout.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// One unit's line in the report.
#[derive(Debug, Clone, Serialize)]
pub struct UnitReport {
    pub id: String,
    pub chapter: String,
    /// `prose`, `verbatim` or `front_matter`.
    pub kind: crate::book::UnitKind,
    /// Source length in characters.
    pub chars: usize,
    /// `translated`, `revised`, `edited` (by hand), `reused` (an editor's or seeded
    /// paragraphs carried in, the rest translated: see `blocks`), `copied`, `failed` or
    /// `pending`.
    pub outcome: &'static str,
    /// Rounds with a recorded translation.
    pub rounds: Vec<u32>,
    /// Usage of all translation calls of this unit (tokens).
    pub usage: Usage,
    pub attempts: u32,
    /// QA findings of the final translation.
    pub findings: Vec<Finding>,
    /// Last error of a failed call, if it still stands.
    pub error: Option<String>,
    /// One entry per translation round: what QA found and why the unit was sent back.
    pub history: Vec<RoundHistory>,
    /// Every candidate text of the unit, oldest first (each round, then a human or imported
    /// edit), with its QA counts; the kept one marked, rejected revisions marked and carrying
    /// their findings. Empty for copied units and files made elsewhere.
    pub candidates: Vec<CandidateReport>,
    /// The round of the kept candidate (the text in the output); `null` for a human or
    /// imported edit, a copied unit or one with no translation.
    pub kept_round: Option<u32>,
    /// The repairs of each repaired candidate (origin `repaired`), in round order then
    /// position: `{round, class, before, after}` (see [`crate::repair::Repair`]; excerpts cut
    /// to [`crate::repair::EXCERPT_CHARS`] characters). Empty when nothing was repaired.
    pub repairs: Vec<RepairReport>,
    /// Smaller when stuck: when the unit was translated again in pieces after its
    /// revision rounds, the round of the joined pieces, how many pieces and the error findings
    /// that sent it there (`check: message; …`). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pieces: Option<PiecesReport>,
    /// Block memory ([`crate::campaign::core::blocks`]): when the unit's first translation
    /// reused recorded blocks, how many came from an editor (`human`), a seed (`seeded`, an
    /// existing human translation) or a model (`model`), how many were sent (`sent`), and the
    /// stale edits (`stale`: old source, new source, the editor's text). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<crate::campaign::core::state::Reused>,
}

/// Why and how a stuck unit was translated again in pieces (see [`UnitReport::pieces`]).
#[derive(Debug, Clone, Serialize)]
pub struct PiecesReport {
    /// The round the joined pieces are recorded at.
    pub round: u32,
    /// Number of pieces (1 for a single block, whose request masks its inline markup).
    pub parts: usize,
    /// The error findings left after the revision rounds, as journaled.
    pub reason: String,
}

/// One mechanical repair of a unit's translation (see [`crate::repair::Repair`]).
#[derive(Debug, Clone, Serialize)]
pub struct RepairReport {
    /// The round of the model translation that was repaired.
    pub round: u32,
    /// The repair class (`code_block`, `footnote_label`, `heading`, …).
    pub class: crate::repair::Class,
    /// The model's bytes replaced or removed (excerpt).
    pub before: String,
    /// The source's bytes put in their place (excerpt; empty for a removal).
    pub after: String,
    /// Whether the repaired candidate of this round is the unit's kept text.
    pub kept: bool,
}

/// The repairs of unit `id`'s repaired candidates in state `s` (see [`RepairReport`]).
pub fn repairs_of(s: &State, id: &str) -> Vec<RepairReport> {
    let kept = if s.human_edit(id).is_some() {
        None
    } else {
        s.kept_round(id, u32::MAX - 1)
    };
    let mut out = Vec::new();
    for round in s.rounds_of(id) {
        let Some(r) = s.repaired_at(id, round) else {
            continue;
        };
        let used = kept == Some(round) && s.uses_repaired(id, round);
        out.extend(r.repairs.iter().map(|x| RepairReport {
            round,
            class: x.class,
            before: x.before.clone(),
            after: x.after.clone(),
            kept: used,
        }));
    }
    out
}

/// One candidate text of a unit (see [`crate::campaign::core::state::State::candidates`]).
#[derive(Debug, Clone, Serialize)]
pub struct CandidateReport {
    /// Translation round; `null` for a human or imported edit.
    pub round: Option<u32>,
    /// `translation`, `revision`, `memory`, `joined`, `human`, `imported` or `repaired`.
    pub origin: crate::campaign::core::state::CandidateOrigin,
    /// Error findings of the per-unit QA checks on this text.
    pub errors: usize,
    /// Warning findings of the per-unit QA checks on this text.
    pub warnings: usize,
    /// Nearly all of the text is still in the source language: it ranks below any
    /// translation, whatever the error counts (see
    /// [`crate::campaign::core::state::Rank::left_in_source`]).
    pub left_in_source: bool,
    /// Error findings that lost content (MQM critical: `truncation`, `completeness`): such a
    /// text ranks below any that lost nothing, whatever the other error counts (see
    /// [`crate::campaign::core::state::Rank::critical`]).
    pub critical: usize,
    /// A revision that ranks below the best earlier candidate (left in the source language
    /// where that one is a translation, content lost where that one lost none, or more error
    /// findings): never used.
    pub rejected: bool,
    /// The candidate in the output.
    pub kept: bool,
    /// The per-unit QA findings of a rejected candidate (the kept one's are the unit's
    /// `findings`); absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
}

/// The report lines of unit `id`'s candidates in state `s`.
pub fn candidates_of(s: &State, id: &str) -> Vec<CandidateReport> {
    s.candidates(id)
        .into_iter()
        .map(|k| CandidateReport {
            findings: match (k.rejected, k.round) {
                (true, Some(r))
                    if k.origin == crate::campaign::core::state::CandidateOrigin::Repaired =>
                {
                    s.repaired_at(id, r)
                        .map(|x| x.findings.clone())
                        .unwrap_or_default()
                }
                (true, Some(r)) => s.findings_at(id, r).to_vec(),
                _ => Vec::new(),
            },
            round: k.round,
            origin: k.origin,
            errors: k.errors,
            warnings: k.warnings,
            left_in_source: k.left_in_source,
            critical: k.critical,
            rejected: k.rejected,
            kept: k.kept,
        })
        .collect()
}

/// What happened to a unit in one round.
#[derive(Debug, Clone, Serialize)]
pub struct RoundHistory {
    /// Round number; `null` in JSON for a human edit.
    pub round: Option<u32>,
    /// Names of the checks with error findings on that round's text.
    pub errors: Vec<String>,
    /// Number of warning findings.
    pub warnings: usize,
    /// Why the unit was translated again after this round, if it was.
    pub sent_back_because: Option<String>,
}

/// One proofreading batch.
#[derive(Debug, Clone, Serialize)]
pub struct ProofBatch {
    pub call: String,
    pub round: u32,
    pub units: Vec<String>,
    pub summary: String,
    pub issues: Vec<Issue>,
    pub units_need_revision: Vec<String>,
    pub parse: ParseStats,
}

/// One Manager decision.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionReport {
    pub round: u32,
    /// Units revised because deterministic QA found errors.
    pub forced: Vec<String>,
    /// Units with QA errors whose kept text was still in the source language: not revised,
    /// translated again in pieces after the review rounds (see
    /// [`crate::campaign::core::state::Rank::left_in_source`]).
    pub to_pieces: Vec<String>,
    /// Units the reviewer flagged, offered to the Manager.
    pub candidates: Vec<String>,
    /// Whether a model took the decision; false when there was nothing advisory to decide (no
    /// candidate) and the units with QA errors were sent back without a model call.
    pub by_model: bool,
    pub revise: Vec<RevisionOrder>,
    pub summary: String,
    pub parse: ParseStats,
}

/// One terminology reconciliation.
#[derive(Debug, Clone, Serialize)]
pub struct ReconciliationReport {
    pub round: u32,
    pub term: String,
    pub renderings: Vec<crate::agents::reconcile::Rendering>,
    /// The rendering that entered the termbase (origin `reconciled`).
    pub chosen: Option<String>,
    pub note: String,
    /// True when the answer was rejected (a rendering never observed, such as `ok`): it
    /// entered no termbase and sent no revision.
    pub rejected: bool,
    /// Why, naming the answer (only when rejected).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The book brief in force.
#[derive(Debug, Clone, Serialize)]
pub struct BriefReport {
    /// The desk file (relative to the campaign file).
    pub file: String,
    pub sha256: String,
    /// True when the editor's version is in force.
    pub edited: bool,
    pub chars: usize,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub generated_at_ms: u64,
    pub rehearsal: bool,
    pub summary: Summary,
    pub source_lang: String,
    pub target_lang: String,
    pub provider: String,
    pub model: String,
    pub units: Vec<UnitReport>,
    /// Campaign termbase with each entry's origin.
    pub glossary: Vec<Entry>,
    /// Agent entries dropped because house style fixes the term.
    pub glossary_dropped_by_house: usize,
    pub glossary_parse: ParseStats,
    /// The campaign's review budget (`proofread_share`, a share of the translation prompt
    /// tokens): 0 when the Proofreading agent is off (the default since finding 21 of
    /// docs/src/benchmarks.md), so an empty `proofreading` list means no model reviewed,
    /// not that a reviewer found nothing; `None` outside a campaign run (`booktr validate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proofread_share: Option<f64>,
    pub proofreading: Vec<ProofBatch>,
    pub decisions: Vec<DecisionReport>,
    /// Rounds whose remaining revisions were not sent because the model's first revisions
    /// of the round were all rejected ([`crate::campaign::core::manager::RevisionsWithheld`]).
    pub revisions_withheld: Vec<crate::campaign::core::manager::RevisionsWithheld>,
    /// Reviewer issues the deterministic glossary check refuted (the term is rendered as the
    /// termbase says): not fed back to a revision, not offered to the Manager
    /// ([`crate::campaign::core::manager::Manager::refuted_term`]).
    pub refuted_issues: Vec<crate::campaign::core::manager::RefutedIssue>,
    pub reconciliations: Vec<ReconciliationReport>,
    /// Term × unit table of the terms rendered more than one way (or kept in some units).
    pub drift: Vec<qa::DriftRow>,
    /// Renderings translators flagged as new (and new glosses without the flag).
    pub review_terms: Vec<qa::ReviewTerm>,
    /// Adherence per termbase entry.
    pub adherence: Vec<qa::Adherence>,
    /// Campaign norms measured by QA (length ratio, script share).
    pub norms: Option<qa::Norms>,
    /// Campaign-level findings not tied to a unit (e.g. a chapter output that differs from its
    /// units).
    pub chapter_findings: Vec<Finding>,
    /// Findings per check name, final translations only.
    pub qa_counts: BTreeMap<String, usize>,
    /// Chapters not written because a unit is missing.
    pub chapters_not_written: Vec<String>,
    /// What a `book` campaign's site output could not do as asked, one sentence each: files
    /// copied in the source language, includes from outside the site, nav entries left out,
    /// titles not yet translated (campaign runs of a site only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub site_notes: Vec<String>,
    /// The book brief in force (campaign runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brief: Option<BriefReport>,
    /// Approvals recorded at the gates, oldest first (campaign runs only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<String>,
    /// The orchestration / single-agent comparison of the newest `booktr experiment` (absent
    /// after a plain `run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// Whether report.html carries the bilingual view (the campaign's `bilingual`).
    #[serde(skip)]
    pub bilingual: bool,
    /// Long and runaway replies: the replies the stream reader stopped as runaways (repeating,
    /// or past the hard ceiling) and what they cost, apart from the long answers that were
    /// continued or split with their received part kept; and every completion token paid and
    /// not kept, with its reason. All these tokens are billed, so they are also in
    /// `summary.usage`.
    pub runaway: RunawayReport,
    /// Glossary-agent entries left out of the termbase because a deterministic check failed
    /// (`{source, target, reason, action}`, `action` `dropped` or `review`; see
    /// [`crate::termbase::vet`]), in termbase order.
    pub glossary_rejections: Vec<crate::termbase::vet::Rejection>,
    /// Mechanical repairs listed in the units' `repairs`, per class (snake_case class name →
    /// count); every repaired candidate counts, kept or not.
    pub repairs_by_class: BTreeMap<String, usize>,
    /// Total mechanical repairs (the sum of `repairs_by_class`).
    pub repairs: usize,
    /// Units whose Translation prompt carried a fuzzy translation-memory match as a
    /// reference, by band (`{"75-84": n, "85-94": n, "95-99": n}`, percent; see
    /// [`crate::campaign::ops::memory::fuzzy_bands`]).
    #[serde(default)]
    pub fuzzy_matches: crate::campaign::ops::memory::FuzzyBands,
    /// The cost ledger: the actual cost per chapter and per agent and the savings from
    /// cached input (see [`ledger`]); `null` without `[pricing]` and for files made elsewhere.
    #[serde(default)]
    pub ledger: Option<ledger::Ledger>,
    /// The editor's marks over the final texts: counts of confirmed and dismissed
    /// findings, precision per marked check (confirmed / marked), the checks downgraded to
    /// warnings for this campaign and the marks cleared since (see
    /// [`crate::campaign::core::mark_review::Review`]). Each finding carries its `id` and, when marked or
    /// downgraded, its `review`.
    pub finding_marks: crate::campaign::core::mark_review::Review,
    /// The MQM scorecard per chapter ([`crate::qa::findings::mqm`]).
    pub mqm: MqmReport,
}

/// The MQM scorecard of a report (see [`crate::qa::findings::mqm`] for the scoring model and its
/// source).
#[derive(Debug, Clone, Default, Serialize)]
pub struct MqmReport {
    /// Campaign key `mqm_threshold`: most penalty points per 1,000 source words to pass.
    pub threshold: f64,
    /// Severity weights: minor, major, critical.
    pub weights: [u32; 3],
    /// One scorecard per chapter, in book order.
    pub chapters: Vec<crate::qa::findings::mqm::ChapterScore>,
    /// True when every chapter passes.
    pub pass: bool,
}

impl MqmReport {
    /// The scorecard of `chapters` (key, source words) with the findings of `findings` (as
    /// they count, each naming its chapter) at `threshold`.
    pub fn of<'a>(
        chapters: &[(String, usize)],
        findings: impl IntoIterator<Item = &'a Finding>,
        threshold: f64,
    ) -> MqmReport {
        let mut by: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
        for f in findings {
            by.entry(f.chapter.as_str()).or_default().push(f);
        }
        let chapters: Vec<crate::qa::findings::mqm::ChapterScore> = chapters
            .iter()
            .map(|(k, words)| {
                crate::qa::findings::mqm::score_chapter(
                    k,
                    *words,
                    by.get(k.as_str()).into_iter().flatten().copied(),
                    threshold,
                )
            })
            .collect();
        use crate::qa::findings::mqm::MqmSeverity as M;
        MqmReport {
            threshold,
            weights: [M::Minor.weight(), M::Major.weight(), M::Critical.weight()],
            pass: chapters.iter().all(|c| c.pass),
            chapters,
        }
    }
}

/// `(repairs_by_class, repairs)` of the units' repair lists (see [`Report::repairs`]).
pub fn repair_totals(units: &[UnitReport]) -> (BTreeMap<String, usize>, usize) {
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    for r in units.iter().flat_map(|u| &u.repairs) {
        *by.entry(r.class.as_str().to_string()).or_insert(0) += 1;
    }
    let n = by.values().sum();
    (by, n)
}

/// The runaway and long replies of a campaign (all runs; see [`Report::runaway`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunawayReport {
    /// Runaway replies stopped (repetition or the hard ceiling): their tokens are discarded,
    /// but for the `kept` ones.
    pub replies: usize,
    /// Of those, replies that repeated themselves.
    pub repetitions: usize,
    /// Of those, replies whose part before the repetition covered every block of the unit
    /// and was kept as the call's answer ([`crate::campaign::core::state::RunawayRecord::kept`]).
    pub kept: usize,
    /// Completion tokens of the `kept` replies (the repetition included: the stream reader
    /// does not count the part kept apart).
    pub kept_completion_tokens: u64,
    /// Completion tokens they consumed before their streams were dropped.
    pub completion_tokens: u64,
    /// Prompt tokens of the requests they answered.
    pub prompt_tokens: u64,
    /// One entry per runaway reply, in journal order.
    pub calls: Vec<crate::campaign::core::state::RunawayRecord>,
    /// Calls whose reply reached `max_tokens` and was continued (a long answer, kept whole).
    pub continued: Vec<LongCall>,
    /// Continuation requests made, over all `continued` calls.
    pub continuations: u32,
    /// What those continuation requests cost (prompt and completion tokens).
    pub continuation_usage: crate::llm::Usage,
    /// Cut replies the provider could not continue, whose part ending on a block boundary was
    /// kept (the rest of the unit was translated as a part of its own).
    pub kept_splits: Vec<KeptSplit>,
    /// Completion tokens paid and not kept, and why.
    pub not_kept: NotKeptTokens,
    /// What the campaign learned of its model's reply lengths, per agent (snake_case agent
    /// name → figure), as journaled: the bounds its requests carry.
    pub learned_bounds: BTreeMap<String, crate::agents::bounds::Figure>,
}

/// A call whose reply was continued.
#[derive(Debug, Clone, Serialize)]
pub struct LongCall {
    pub call: String,
    pub agent: crate::agents::Agent,
    pub unit: Option<String>,
    pub continuations: u32,
    /// What the continuation requests cost.
    pub usage: crate::llm::Usage,
    /// A continuation came back as a new reply (the server does not continue), taken instead.
    pub restarted: bool,
}

/// A cut reply whose first blocks were kept.
#[derive(Debug, Clone, Serialize)]
pub struct KeptSplit {
    /// The call key of the kept part (`translate/<fp>.p1/r0`).
    pub call: String,
    pub unit: Option<String>,
    pub blocks: usize,
    /// Completion tokens of the reply, all kept but its unfinished last block.
    pub completion_tokens: u64,
}

/// Completion tokens paid for and not kept (see [`RunawayReport::not_kept`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct NotKeptTokens {
    pub completion_tokens: u64,
    /// Runaway replies that repeated themselves.
    pub runaway_repetition: u64,
    /// Runaway replies past the hard ceiling without repeating.
    pub runaway_ceiling: u64,
    /// Answers of failed calls and rejected replies of split units (an empty or unusable
    /// answer, a reply cut before its first block ended, …), runaway replies left out.
    pub rejected: u64,
    /// Replies cut before their first block ended by a provider that could not continue them,
    /// asked again with a larger `max_tokens` (the call then succeeded).
    pub asked_again: u64,
    /// The rejected answers, one per call, with the reason journaled.
    pub calls: Vec<crate::campaign::core::state::NotKept>,
}

impl NotKeptTokens {
    /// One line for people: the total and its parts.
    pub fn line(&self) -> String {
        format!(
            "{} completion tokens paid and not kept: {} in runaway replies that repeated themselves, {} in runaway replies past the hard ceiling, {} in answers rejected by failed calls and unit splits, {} in replies cut before their first block and asked again with more room",
            self.completion_tokens,
            self.runaway_repetition,
            self.runaway_ceiling,
            self.rejected,
            self.asked_again
        )
    }
}

impl RunawayReport {
    /// The runaway and long replies recorded in `s`.
    pub fn of(s: &State) -> RunawayReport {
        let runaways = s.runaways();
        let is_repetition = |r: &&crate::campaign::core::state::RunawayRecord| {
            r.reason.starts_with("the reply repeats itself")
        };
        let mut continued: Vec<LongCall> = Vec::new();
        let mut kept_splits = Vec::new();
        let mut asked_again = 0u64;
        for r in s.finished().values() {
            if let Some(l) = r.long {
                asked_again += l.discarded.completion_tokens;
            }
            if let Some(l) = r.long.filter(|l| l.continuations > 0) {
                continued.push(LongCall {
                    call: r.call.clone(),
                    agent: r.agent,
                    unit: r.unit.clone(),
                    continuations: l.continuations,
                    usage: l.usage,
                    restarted: l.restarted,
                });
            }
            if let (Some(blocks), true) = (r.kept_blocks, r.requests > 0) {
                kept_splits.push(KeptSplit {
                    call: r.call.clone(),
                    unit: r.unit.clone(),
                    blocks,
                    completion_tokens: r.usage.completion_tokens,
                });
            }
        }
        continued.sort_by(|a, b| a.call.cmp(&b.call));
        kept_splits.sort_by(|a, b| a.call.cmp(&b.call));
        let mut continuation_usage = crate::llm::Usage::default();
        for c in &continued {
            continuation_usage.add(&c.usage);
        }
        // A failed call's usage includes the runaway replies that ended it: counted once, as
        // runaways.
        let mut runaway_by_call: BTreeMap<&str, u64> = BTreeMap::new();
        for r in runaways {
            *runaway_by_call.entry(r.call.as_str()).or_default() += r.usage.completion_tokens;
        }
        let rejected: u64 = s
            .not_kept()
            .iter()
            .map(|n| {
                let r = runaway_by_call.remove(n.call.as_str()).unwrap_or(0);
                n.usage.completion_tokens.saturating_sub(r)
            })
            .sum();
        let runaway_repetition = runaways
            .iter()
            .filter(is_repetition)
            .filter(|r| !r.kept)
            .map(|r| r.usage.completion_tokens)
            .sum();
        let runaway_ceiling = runaways
            .iter()
            .filter(|r| !is_repetition(r))
            .map(|r| r.usage.completion_tokens)
            .sum();
        RunawayReport {
            replies: runaways.len(),
            repetitions: runaways.iter().filter(is_repetition).count(),
            kept: runaways.iter().filter(|r| r.kept).count(),
            kept_completion_tokens: runaways
                .iter()
                .filter(|r| r.kept)
                .map(|r| r.usage.completion_tokens)
                .sum(),
            completion_tokens: runaways.iter().map(|r| r.usage.completion_tokens).sum(),
            prompt_tokens: runaways.iter().map(|r| r.usage.prompt_tokens).sum(),
            calls: runaways.clone(),
            continuations: continued.iter().map(|c| c.continuations).sum(),
            continued,
            continuation_usage,
            kept_splits,
            not_kept: NotKeptTokens {
                completion_tokens: runaway_repetition + runaway_ceiling + rejected + asked_again,
                runaway_repetition,
                runaway_ceiling,
                rejected,
                asked_again,
                calls: s.not_kept().to_vec(),
            },
            learned_bounds: s
                .figures()
                .iter()
                .map(|(a, f)| (a.as_str().to_string(), *f))
                .collect(),
        }
    }
}

/// The (source, target) texts of every unit of a campaign state, for the HTML report: the
/// sources shared with the campaign's chapters, the targets copied.
pub fn texts_of(c: &Campaign, s: &State) -> html::Texts {
    c.units
        .iter()
        .map(|u| {
            let source = html::Shared::slice(&c.chapter(&u.chapter).text, u.range.clone());
            let target = crate::campaign::core::edits::final_text(c, s, u);
            (u.id.clone(), (source, target))
        })
        .collect()
}

/// Builds the report of a campaign state: the summary and each unit's report from the
/// verdict on the final texts, then what the recorded calls say (glossary parsing,
/// proofreading, decisions, reconciliations), then the campaign-level QA, the editor's gates
/// and the ledgers.
pub fn build(c: &Campaign, m: &Manager, s: &State, status: Status, skipped: &[String]) -> Report {
    let mut qa_counts: BTreeMap<String, usize> = BTreeMap::new();
    // Every finding on the final texts: what the summary counts and the units list.
    let mut verdict = crate::campaign::core::verdict::final_qa(c, s);
    let summary = summarize_with(c, m, s, status, verdict.counts());
    // The units' findings move into the report (a copy of every finding of the book was the
    // report's peak on a long book).
    let unit_findings = std::mem::take(&mut verdict.units);
    // The scorecard reads the findings before they move into the report's units.
    let mqm = MqmReport::of(
        &chapter_words(c),
        unit_findings.iter().flatten().chain(&verdict.chapter),
        c.plan.mqm_threshold,
    );
    // The revision set of each round, computed once per round (asking the Manager
    // for it again for every unit made the report quadratic in units).
    let mut sent_back = SentBack::new();
    let mut units = Vec::new();
    for (u, findings) in c.units.iter().zip(unit_findings) {
        for f in &findings {
            *qa_counts.entry(f.check.clone()).or_insert(0) += 1;
        }
        units.push(unit_report(m, s, u, findings, &mut sent_back));
    }
    let calls = CallReports::of(c, m, s);
    for f in &verdict.chapter {
        *qa_counts.entry(f.check.clone()).or_insert(0) += 1;
    }
    let (repairs_by_class, repairs) = repair_totals(&units);
    let campaign_qa = &verdict.campaign;
    Report {
        schema_version: REPORT_SCHEMA_VERSION,
        generated_at_ms: crate::campaign::core::store::now_ms(),
        rehearsal: c.plan.is_rehearsal(),
        summary,
        source_lang: c.plan.source_lang.code.clone(),
        target_lang: c.plan.target_lang.code.clone(),
        provider: c.plan.provider.kind.as_str().into(),
        model: c.plan.provider.model.clone(),
        units,
        glossary: s.effective_termbase().entries.clone(),
        glossary_dropped_by_house: s.glossary_dropped_by_house(),
        glossary_parse: calls.glossary_parse,
        proofread_share: Some(c.plan.proofread_share),
        proofreading: calls.proofreading,
        decisions: calls.decisions,
        revisions_withheld: (0..c.plan.revision_rounds)
            .filter_map(|r| m.revisions_withheld(s, r))
            .collect(),
        refuted_issues: (0..=c.plan.revision_rounds)
            .flat_map(|r| m.refuted_issues(s, r))
            .collect(),
        reconciliations: calls.reconciliations,
        drift: campaign_qa
            .drift
            .iter()
            .filter(|r| r.drifting)
            .cloned()
            .collect(),
        review_terms: campaign_qa.review_terms.clone(),
        adherence: campaign_qa.adherence.clone(),
        norms: Some(campaign_qa.norms.clone()),
        chapter_findings: std::mem::take(&mut verdict.chapter),
        qa_counts,
        chapters_not_written: skipped.to_vec(),
        site_notes: Vec::new(),
        brief: s.brief().as_ref().map(|b| BriefReport {
            file: c.plan.rel(&crate::campaign::ops::desk::path(
                c,
                crate::campaign::ops::desk::BRIEF_FILE,
            )),
            sha256: b.sha256.clone(),
            edited: b.edited,
            chars: b.text.chars().count(),
        }),
        approvals: approvals(s),
        comparison: None,
        bilingual: c.plan.bilingual,
        runaway: RunawayReport::of(s),
        glossary_rejections: s.glossary_rejections().clone(),
        repairs_by_class,
        repairs,
        fuzzy_matches: crate::campaign::ops::memory::fuzzy_bands(c, s),
        mqm,
        finding_marks: verdict.review.clone(),
        ledger: ledger::ledger(c, s),
    }
}

/// Source words per chapter (of the units that need translation), for the MQM scorecard.
fn chapter_words(c: &Campaign) -> Vec<(String, usize)> {
    c.chapters
        .iter()
        .map(|ch| {
            let words = c
                .units
                .iter()
                .filter(|u| u.chapter == ch.key && u.kind.needs_translation())
                .map(|u| crate::qa::findings::mqm::source_words(c.source_text(u)))
                .sum();
            (ch.key.clone(), words)
        })
        .collect()
}

/// Round → (unit id → the reason it was sent back in that round), filled a round at a time
/// as the units ask for it. The first entry for an id wins.
type SentBack = BTreeMap<u32, std::collections::HashMap<String, String>>;

/// One unit's report: usage over its rounds, its outcome, its findings on the final text,
/// its rounds' history, candidates, repairs and pieces.
fn unit_report(
    m: &Manager,
    s: &State,
    u: &crate::book::Unit,
    findings: Vec<Finding>,
    sent_back: &mut SentBack,
) -> UnitReport {
    let rounds: Vec<u32> = s.rounds_of(&u.id);
    let mut usage = Usage::default();
    let mut attempts = 0;
    for r in &rounds {
        if let Some(f) = s
            .fp(&u.id)
            .and_then(|fp| s.finished().get(&translate_key(fp, *r)))
        {
            usage.add(&f.usage);
            attempts += f.attempts;
        }
    }
    // Translation keys hold the unit's fingerprint (or a part id `<fp>.p1`), not its
    // id: the same match as the summary's failed count.
    let error = s.fp(&u.id).and_then(|fp| {
        s.open_failures()
            .iter()
            .find(|(k, _)| {
                CallKey::parse(k)
                    .translation()
                    .is_some_and(|(key, _)| key.starts_with(fp))
            })
            .map(|(k, e)| format!("{k}: {e}"))
    });
    let outcome = if s.is_carried(&u.id) {
        "reused"
    } else if s.human_edit(&u.id).is_some() {
        "edited"
    } else if !u.kind.needs_translation() {
        "copied"
    } else if rounds.iter().any(|&r| r > 0) {
        "revised"
    } else if rounds.contains(&0) {
        "translated"
    } else if error.is_some() {
        "failed"
    } else {
        "pending"
    };
    let history = unit_history(m, s, &u.id, &rounds, sent_back);
    UnitReport {
        id: u.id.clone(),
        chapter: u.chapter.clone(),
        kind: u.kind,
        chars: u.chars,
        outcome,
        rounds,
        usage,
        attempts,
        findings,
        error,
        history,
        candidates: if u.kind.needs_translation() {
            candidates_of(s, &u.id)
        } else {
            Vec::new()
        },
        kept_round: if s.human_edit(&u.id).is_some() || !u.kind.needs_translation() {
            None
        } else {
            s.kept_round(&u.id, u32::MAX - 1)
        },
        repairs: if u.kind.needs_translation() {
            repairs_of(s, &u.id)
        } else {
            Vec::new()
        },
        pieces: s
            .fp(&u.id)
            .and_then(|fp| s.pieces_of(fp))
            .map(|(round, parts, reason)| PiecesReport {
                round,
                parts,
                reason: reason.to_string(),
            }),
        // The stale edits still to decide (a decided one is history, not a finding).
        blocks: s.reused(&u.id).cloned().map(|mut r| {
            r.stale = s.stale_edits(&u.id).to_vec();
            r
        }),
    }
}

/// A unit's findings round by round (errors by check, warnings counted, why it was sent
/// back), then, for a unit the editor edited, the findings on the edited text.
fn unit_history(
    m: &Manager,
    s: &State,
    id: &str,
    rounds: &[u32],
    sent_back: &mut SentBack,
) -> Vec<RoundHistory> {
    for &r in rounds {
        sent_back.entry(r).or_insert_with(|| {
            let mut by_id = std::collections::HashMap::new();
            for (id, why) in m.revision_set(s, r) {
                by_id.entry(id).or_insert(why);
            }
            by_id
        });
    }
    let entry = |round: Option<u32>, f: &[Finding], why: Option<String>| RoundHistory {
        round,
        errors: f
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.check.clone())
            .collect(),
        warnings: f.iter().filter(|f| f.severity == Severity::Warning).count(),
        sent_back_because: why,
    };
    let mut history: Vec<RoundHistory> = rounds
        .iter()
        .map(|&r| {
            let why = sent_back.get(&r).and_then(|by| by.get(id)).cloned();
            entry(Some(r), s.findings_at(id, r), why)
        })
        .collect();
    if s.human_edit(id).is_some() {
        history.push(entry(None, s.final_findings(id), None));
    }
    history
}

/// What the recorded calls of the current version of the book say, for the report.
struct CallReports {
    glossary_parse: ParseStats,
    proofreading: Vec<ProofBatch>,
    decisions: Vec<DecisionReport>,
    reconciliations: Vec<ReconciliationReport>,
}

impl CallReports {
    /// Reads every glossary and reconciliation call, and the reviews and decisions of the
    /// current version of the book only (older ones stay in the state as history), in key
    /// order.
    fn of(c: &Campaign, m: &Manager, s: &State) -> CallReports {
        let mut out = CallReports {
            glossary_parse: ParseStats::default(),
            proofreading: Vec::new(),
            decisions: Vec::new(),
            reconciliations: Vec::new(),
        };
        let mut current: std::collections::HashSet<String> = Default::default();
        for round in 0..=c.plan.revision_rounds {
            current.extend(
                m.proofread_batches(s, round)
                    .into_iter()
                    .map(|b| b.key.to_string()),
            );
            current.insert(m.decide_key(s, round));
        }
        let mut calls: Vec<(&String, &crate::campaign::core::store::ResultFile)> = s
            .finished()
            .iter()
            .filter(|(k, _)| {
                matches!(
                    CallKey::parse(k),
                    CallKey::Glossary { .. } | CallKey::Reconcile { .. }
                ) || current.contains(*k)
            })
            .collect();
        calls.sort_by(|a, b| a.0.cmp(b.0));
        for (call, r) in calls {
            out.push(call, &r.output, r.requests > 0);
        }
        // The decision recorded every unit with QA errors; an echo among them was not revised
        // (`Manager::proposed_revisions`), so the report says where it went.
        for d in &mut out.decisions {
            let (to_pieces, forced) = std::mem::take(&mut d.forced)
                .into_iter()
                .partition(|u| s.kept_rank(u, d.round).is_some_and(|r| r.left_in_source));
            d.forced = forced;
            d.to_pieces = to_pieces;
        }
        out
    }

    /// Adds what one call's output says.
    fn push(&mut self, call: &str, output: &Output, by_model: bool) {
        match output {
            Output::GlossaryBatch { stats, .. } => {
                let p = &mut self.glossary_parse;
                p.accepted += stats.accepted;
                p.repaired += stats.repaired;
                p.dropped += stats.dropped;
                p.notes.extend(stats.notes.iter().take(5).cloned());
            }
            Output::Proofread {
                round,
                units,
                report,
                stats,
            } => self.proofreading.push(ProofBatch {
                call: call.to_string(),
                round: *round,
                units: units.clone(),
                summary: report.summary.clone(),
                issues: report.issues.clone(),
                units_need_revision: report.units_need_revision.clone(),
                parse: stats.clone(),
            }),
            Output::Decision {
                round,
                forced,
                candidates,
                decision,
                stats,
            } => self.decisions.push(DecisionReport {
                round: *round,
                forced: forced.clone(),
                to_pieces: Vec::new(),
                candidates: candidates.clone(),
                by_model,
                revise: decision.revise.clone(),
                summary: decision.summary.clone(),
                parse: stats.clone(),
            }),
            Output::Reconciliation {
                round,
                term,
                renderings,
                choice,
                rejected,
                ..
            } => {
                // Verified again: an older result file may hold an unobserved choice.
                let refused = choice
                    .as_ref()
                    .and_then(|c| crate::agents::reconcile::verify(c, term, renderings).err());
                let rejected = rejected.clone().or(refused);
                self.reconciliations.push(ReconciliationReport {
                    round: *round,
                    term: term.clone(),
                    renderings: renderings.clone(),
                    chosen: choice
                        .as_ref()
                        .filter(|_| rejected.is_none())
                        .map(|c| c.rendering.clone()),
                    note: choice.as_ref().map(|c| c.note.clone()).unwrap_or_default(),
                    rejected: rejected.is_some(),
                    reason: rejected.map(|r| r.reason),
                })
            }
            Output::Translation { .. } | Output::Brief { .. } | Output::Judgment(_) => {}
        }
    }
}

/// The editor's approvals, one line each: the glossary's, then each round's revisions.
fn approvals(s: &State) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    if let Some(a) = &s.glossary_approval() {
        v.push(format!(
            "glossary approved with {} change(s) against the proposal{}",
            a.changes.len(),
            if s.glossary_approved() {
                ""
            } else {
                " (superseded: the proposal changed since)"
            }
        ));
    }
    let none_or = |names: &[String]| {
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    let mut revs: Vec<_> = s.revision_approvals().values().collect();
    revs.sort_by_key(|r| r.round);
    for r in revs {
        v.push(format!(
            "revisions after round {}{}: approved {}; rejected {}",
            r.round,
            if r.chapters.is_empty() {
                String::new()
            } else {
                format!(" (by chapter: {})", r.chapters.join(", "))
            },
            none_or(&r.approved),
            none_or(&r.rejected)
        ));
    }
    v
}

impl Report {
    /// Whether the campaign ran without the Proofreading agent (`proofread_share = 0`, the
    /// default) and no batch was reviewed: the reports then say that no model reviewed,
    /// rather than "0 batches reviewed".
    pub fn proofreading_off(&self) -> bool {
        self.proofread_share.is_some_and(|s| s <= 0.0) && self.proofreading.is_empty()
    }

    /// Findings of the final translations: by severity (errors first), then by how badly the
    /// check breaks the book ([`qa::check_rank`]: lost content and structure before
    /// terminology and style), then by unit.
    pub fn findings(&self) -> Vec<&Finding> {
        self.finding_positions()
            .into_iter()
            .map(|at| self.finding_at(at))
            .collect()
    }

    /// Where each finding is, in the order of [`Report::findings`] (severity, then check
    /// order, then unit id; stable, so a unit's findings keep their order).
    pub fn finding_positions(&self) -> Vec<FindingAt> {
        let mut at: Vec<FindingAt> = self
            .units
            .iter()
            .enumerate()
            .flat_map(|(u, unit)| (0..unit.findings.len()).map(move |i| FindingAt(u, i)))
            .chain((0..self.chapter_findings.len()).map(|i| FindingAt(self.units.len(), i)))
            .collect();
        // Keys by reference: on a long book (tens of thousands of findings) a key that
        // cloned the unit id allocated once per comparison.
        let key = |a: &FindingAt| {
            let f = self.finding_at(*a);
            (f.severity, qa::check_rank(&f.check), f.unit.as_str())
        };
        at.sort_by(|a, b| key(a).cmp(&key(b)));
        at
    }

    /// The finding at `at` (from [`Report::finding_positions`]). Panics on a position that is
    /// not this report's.
    pub fn finding_at(&self, at: FindingAt) -> &Finding {
        match self.units.get(at.0) {
            Some(u) => &u.findings[at.1],
            None => &self.chapter_findings[at.1],
        }
    }

    /// Number of error findings.
    pub fn error_count(&self) -> usize {
        self.units
            .iter()
            .flat_map(|u| &u.findings)
            .chain(&self.chapter_findings)
            .filter(|f| f.severity == Severity::Error)
            .count()
    }

    /// Usage of one agent.
    pub fn usage_of(&self, a: Agent) -> crate::campaign::core::state::AgentUsage {
        self.summary.usage.get(&a).copied().unwrap_or_default()
    }

    /// Writes `report.json`, `report.md` and `report.html` (with `texts` side by side) into
    /// `dir`, and the editor's review sheet when a campaign's findings carry ids; returns the
    /// report (the HTML page is rendered from it by value, see [`html::render_to`]) and the
    /// paths written, in that order.
    ///
    /// Errors: a file that cannot be written, named with its path.
    pub fn write(
        self,
        dir: &std::path::Path,
        texts: html::Texts,
    ) -> anyhow::Result<(Report, Vec<std::path::PathBuf>)> {
        let json_path = dir.join("report.json");
        crate::util::write_json_atomic(&json_path, &self)?;
        let md_path = dir.join("report.md");
        crate::util::write_atomic(&md_path, markdown::render(&self).as_bytes())?;
        // The editor's review sheet, for campaign reports (findings with ids).
        let mut csv_path = None;
        if !self.summary.state_dir.is_empty() {
            // Sorted once: a long book has tens of thousands of findings.
            let findings = self.findings();
            if findings.iter().any(|f| !f.id.is_empty()) {
                let path = dir.join(crate::campaign::ops::mark_journal::REVIEW_CSV);
                let bytes = crate::campaign::ops::mark_journal::review_csv(findings)?;
                crate::util::write_atomic(&path, &bytes)?;
                csv_path = Some(path);
            }
        }
        let html_path = dir.join("report.html");
        let mut back = None;
        crate::util::write_atomic_with(&html_path, |w| {
            back = Some(html::render_to(self, texts, w)?);
            Ok(())
        })?;
        let report =
            back.ok_or_else(|| anyhow::anyhow!("{}: not rendered", html_path.display()))?;
        let mut written = vec![json_path, md_path, html_path];
        written.extend(csv_path);
        Ok((report, written))
    }
}

/// Where a finding is in a [`Report`]: `(unit index, index in its findings)`, with unit index
/// `units.len()` for `chapter_findings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FindingAt(pub usize, pub usize);

/// A report for translations made elsewhere (`booktr validate --source … --target …`): no
/// campaign, no model calls; `units` carry their findings. Status is `complete` when every unit
/// has a target and no error finding remains, `needs_review` when errors remain.
pub fn build_standalone(
    name: &str,
    source_lang: &str,
    target_lang: &str,
    units: Vec<UnitReport>,
    glossary: Vec<Entry>,
    report_dir: &str,
    campaign_qa: qa::CampaignQa,
) -> Report {
    use crate::campaign::core::summary::UnitCounts;
    let missing = units.iter().filter(|u| u.outcome == "pending").count();
    let chapter_findings: Vec<Finding> = campaign_qa
        .findings
        .iter()
        .filter(|f| f.unit.is_empty())
        .cloned()
        .collect();
    let findings = crate::campaign::core::verdict::FindingCounts::of(
        units
            .iter()
            .flat_map(|u| &u.findings)
            .chain(&chapter_findings),
    );
    let summary = Summary {
        awaiting: None,
        campaign: name.to_string(),
        fingerprint: crate::util::sha256_hex(name),
        status: if missing == 0 {
            Status::Complete
        } else {
            Status::Incomplete
        }
        .with_findings(&findings),
        rehearsal: false,
        stage: crate::campaign::core::manager::Stage::Complete,
        units: UnitCounts {
            total: units.len(),
            translated: units.len() - missing,
            revised: 0,
            failed: missing,
            copied: 0,
            reused: 0,
            memory_hits: 0,
        },
        out_dir: String::new(),
        state_dir: String::new(),
        report_dir: report_dir.to_string(),
        manager_context_peak_tokens: 0,
        usage: Agent::ALL
            .iter()
            .map(|a| (*a, Default::default()))
            .collect(),
        cost: None,
        last_error: None,
        findings,
        runaway_replies: 0,
        stopped: None,
        resume: None,
        budget: None,
    };
    let mut qa_counts: BTreeMap<String, usize> = BTreeMap::new();
    for f in units
        .iter()
        .flat_map(|u| &u.findings)
        .chain(&chapter_findings)
    {
        *qa_counts.entry(f.check.clone()).or_insert(0) += 1;
    }
    let (repairs_by_class, repairs) = repair_totals(&units);
    Report {
        schema_version: REPORT_SCHEMA_VERSION,
        generated_at_ms: crate::campaign::core::store::now_ms(),
        rehearsal: false,
        summary,
        source_lang: source_lang.into(),
        target_lang: target_lang.into(),
        provider: "none".into(),
        model: "none (translations made elsewhere)".into(),
        units,
        glossary,
        glossary_dropped_by_house: 0,
        glossary_parse: ParseStats::default(),
        proofread_share: None,
        proofreading: Vec::new(),
        decisions: Vec::new(),
        revisions_withheld: Vec::new(),
        refuted_issues: Vec::new(),
        reconciliations: Vec::new(),
        drift: campaign_qa
            .drift
            .into_iter()
            .filter(|r| r.drifting)
            .collect(),
        review_terms: campaign_qa.review_terms,
        adherence: campaign_qa.adherence,
        norms: Some(campaign_qa.norms),
        chapter_findings,
        qa_counts,
        chapters_not_written: Vec::new(),
        site_notes: Vec::new(),
        brief: None,
        approvals: Vec::new(),
        comparison: None,
        bilingual: false,
        runaway: RunawayReport::default(),
        glossary_rejections: Vec::new(),
        repairs_by_class,
        repairs,
        fuzzy_matches: Default::default(),
        finding_marks: Default::default(),
        mqm: Default::default(),
        ledger: None,
    }
}
