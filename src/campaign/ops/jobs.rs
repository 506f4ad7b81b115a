//! From an [`Action`] to a request (pure: [`prepare`]) and from the provider's answer to a
//! [`ResultFile`] ([`execute`]). Structured agents get one schema-repair request when their
//! answer is not JSON, then a safe empty default, and the event is kept in the result's stats.
//!
//! Every request carries a `max_tokens` derived from what it asks for and from what the
//! campaign has learned of its model ([`crate::agents::bounds`], capped by the campaign's
//! `max_tokens` and `max_output_tokens`), and a runaway ceiling in `o200k_base` tokens.
//!
//! - A reply the stream reader stops as a **runaway** ([`LlmError::Runaway`]: it repeated
//!   itself, or passed the hard ceiling) is a failed attempt, not an answer, with one
//!   exception: a translation whose part before the repetition has a counterpart for every
//!   block of the unit keeps that part as its answer, for QA to judge as any answer
//!   (`whole_before_repetition`; finding 20 of docs/src/benchmarks.md). Otherwise it is
//!   retried once at a lower temperature ([`crate::llm::runaway::retry_temperature`]); if
//!   that runs away too (or the temperature cannot be lowered), the call fails as
//!   `truncated`, so a first translation is split in two like one that did not fit. Each runaway is returned as a [`RunawayRecord`] for the
//!   journal, marked `kept` when its part was kept.
//! - A reply **cut at `max_tokens`** (`finish_reason = length`) that does not repeat itself is
//!   a long answer, and what was paid for is kept: it is continued where the provider can
//!   ([`crate::llm::continuation`]; before each continuation the part received is saved as a
//!   checkpoint, [`crate::campaign::core::store::PartialReply`], so a resume never asks for it again); where it
//!   cannot, a translation's part that ends on a block boundary is kept
//!   ([`crate::book::segment::kept_prefix`], [`KeptPart`]) and the rest of the unit becomes a
//!   part of its own. This holds for streamed and batch answers, revisions, parts and pieces,
//!   and the structured agents alike.

use std::time::Instant;

use serde_json::{Value, json};

use crate::agents::glossary::{self, Candidate};
use crate::agents::json::{self, ParseStats};
use crate::agents::{
    Agent, bounds, manager as manager_agent, proofreading, reconcile, translation,
};
use crate::campaign::core::commit::{JobFailure, KeptPart};
use crate::campaign::core::fingerprint::STATE_SCHEMA_VERSION;
use crate::campaign::core::manager::{Action, Manager};
use crate::campaign::core::state::{RunawayRecord, State};
use crate::campaign::core::store::{Output, ResultFile};
use crate::llm::{Answer, CallOptions, LlmError, Provider, Request, Usage};

/// What to do with the answer.
#[derive(Debug, Clone)]
pub enum JobKind {
    Translation {
        round: u32,
        /// The source as sent, HTML comments masked.
        source: String,
        /// The masked originals, restored in the answer ([`crate::agents::mask`]).
        mask: crate::agents::mask::Masked,
    },
    Glossary {
        asked: Vec<Candidate>,
    },
    Proofread {
        round: u32,
        units: Vec<String>,
    },
    Decide {
        round: u32,
        forced: Vec<String>,
        candidates: Vec<String>,
    },
    Reconcile {
        round: u32,
        term: String,
        renderings: Vec<reconcile::Rendering>,
    },
    Brief,
}

/// A prepared call: the request and how to read its answer. Owns all its data, so it can run
/// on another task.
#[derive(Debug, Clone)]
pub struct Job {
    pub call: String,
    pub agent: Agent,
    pub unit: Option<String>,
    pub request: Request,
    pub kind: JobKind,
    /// The campaign's state directory, where a reply cut at `max_tokens` is checkpointed before
    /// it is continued ([`crate::campaign::core::store::write_partial`]); `None`: no checkpoint (a test).
    pub state_dir: Option<std::path::PathBuf>,
    /// The request's prompt tokens (`o200k_base`) when [`prepare`] had to count them (a
    /// request whose bytes exceed the context budget); 0 when not counted yet, in which case
    /// [`execute_noting`] counts them while the answer is awaited. They are read when the
    /// answer's usage is checked for a truncated prompt.
    pub prompt_tokens: usize,
    /// The campaign's token counter (its memo knows the prompt's stable prefix), for that
    /// later count; `None` before [`prepare`].
    pub counter: Option<crate::tokens::Counter>,
    /// The campaign's caps on `max_tokens` (its `max_tokens` and `max_output_tokens`).
    pub max_tokens_cap: Caps,
    /// A translation's source tokens (`o200k_base`): what its reply's length is learned
    /// against ([`crate::agents::bounds::Sample`]); `None` for the structured agents, whose
    /// replies are learned against their own text.
    pub basis_tokens: Option<u64>,
}

/// The campaign's caps on a request's `max_tokens`, in the model's tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    /// `[provider] max_tokens`: every request's cap.
    pub max_tokens: Option<u32>,
    /// `[provider] max_output_tokens`: the model's output limit.
    pub output: Option<u32>,
}

impl Caps {
    /// `bound` under both caps.
    pub fn apply(self, bound: u32) -> u32 {
        bounds::capped(bounds::capped(bound, self.output), self.max_tokens)
    }
}

/// What to do about a request larger than the model's context window (a context-length
/// error, or a prompt the server cut): make the requests smaller, which booktr does when
/// `max_context_tokens` is the model's window, or give the model a larger window. Never
/// `max_tokens`, which bounds the reply, not the prompt.
pub const CONTEXT_REMEDY: &str = "the unit or batch is too large for this model's context window: set max_context_tokens to the model's context size (booktr then splits units and batches to fit), lower max_unit_chars, or use a model or server with a larger context";

/// Why a job was not sent.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PrepareError {
    #[error(
        "the request would need {tokens} prompt tokens, over max_context_tokens = {budget}; nothing was sent. Lower max_unit_chars or raise max_context_tokens in the campaign file."
    )]
    OverBudget { tokens: usize, budget: usize },
}

impl Job {
    /// A job not yet bounded nor counted: [`prepare`] sets its `max_tokens`, checkpoint
    /// directory, prompt tokens and counter.
    fn new(
        call: String,
        agent: Agent,
        unit: Option<String>,
        request: Request,
        kind: JobKind,
    ) -> Job {
        Job {
            call,
            state_dir: None,
            prompt_tokens: 0,
            counter: None,
            basis_tokens: None,
            max_tokens_cap: Caps::default(),
            agent,
            unit,
            request,
            kind,
        }
    }
}

/// Builds the job for `action` from the current state: the agent's request, then its
/// `max_tokens` bound ([`bound`]) and the context budget ([`fit_budget`]).
pub fn prepare(m: &Manager, s: &State, action: &Action) -> Result<Job, PrepareError> {
    let c = m.campaign;
    let p = &c.plan;
    let call = action.call_key(c);
    // Glossary entries plus reconciled ones: every request uses the book's current terminology.
    let termbase = s.effective_termbase();
    let mut job = match action {
        Action::GlossaryBatch { n, .. } => {
            let asked = m.glossary_batches[*n].1.clone();
            let request = glossary::build_request(&p.source_lang, &p.target_lang, &c.house, &asked);
            Job::new(
                call,
                Agent::Glossary,
                None,
                request,
                JobKind::Glossary { asked },
            )
        }
        Action::Brief { .. } => Job::new(
            call,
            Agent::Glossary,
            None,
            m.brief.1.clone(),
            JobKind::Brief,
        ),
        Action::Translate { unit, round, .. } => {
            let u = &c.units[*unit];
            let (request, source, mask) = translation_request(m, s, termbase, u, *round);
            let kind = JobKind::Translation {
                round: *round,
                source,
                mask,
            };
            Job::new(call, Agent::Translation, Some(u.id.clone()), request, kind)
        }
        Action::Proofread { round, units, .. } => {
            let request = proofreading_request(m, s, termbase, *round, units);
            let kind = JobKind::Proofread {
                round: *round,
                units: units.clone(),
            };
            Job::new(call, Agent::Proofreading, None, request, kind)
        }
        Action::Decide { round, .. } => {
            let forced = m.forced(s, *round);
            let (findings, candidates) = findings_summary(m, s, *round, &forced);
            let ctx = m.context(s).to_json();
            let request = manager_agent::build_request(&ctx, &findings.to_string());
            let kind = JobKind::Decide {
                round: *round,
                forced,
                candidates,
            };
            Job::new(call, Agent::Manager, None, request, kind)
        }
        Action::TranslatePart { unit, part, range } => {
            let u = &c.units[*unit];
            let (request, source, mask) = part_request(m, s, termbase, u, part, range.clone());
            let kind = JobKind::Translation {
                round: 0,
                source,
                mask,
            };
            Job::new(call, Agent::Translation, Some(part.clone()), request, kind)
        }
        Action::Reconcile {
            round, conflict, ..
        } => {
            let request = reconcile_request(m, s, *round, conflict);
            let kind = JobKind::Reconcile {
                round: *round,
                term: conflict.term.clone(),
                renderings: conflict.renderings.clone(),
            };
            Job::new(call, Agent::Glossary, None, request, kind)
        }
        Action::MergeGlossary
        | Action::WriteOutputs
        | Action::JoinParts { .. }
        | Action::ReuseBlocks { .. }
        | Action::SplitStuck { .. }
        | Action::JoinPieces { .. }
        | Action::DecideForced { .. }
        | Action::WriteDesk => {
            unreachable!("local actions have no job")
        }
    };
    bound(m, s, &mut job);
    job.state_dir = Some(c.state_path());
    fit_budget(m, &mut job)?;
    job.counter = Some(c.tokens().clone());
    Ok(job)
}

/// A unit's Translation request (a revision's when `round` > 0: the kept translation of
/// the round before and its feedback), with the unit's source masked ([`crate::agents::mask`]:
/// HTML comments never reach the model as text), its neighbour context and its fuzzy matches.
/// Returns the request, the source as sent and the mask.
fn translation_request(
    m: &Manager,
    s: &State,
    termbase: &crate::termbase::Termbase,
    u: &crate::book::Unit,
    round: u32,
) -> (Request, String, crate::agents::mask::Masked) {
    let c = m.campaign;
    let entries = c.prompt_entries(termbase, c.source_text(u));
    let mdx = crate::book::mdx::is_mdx(&c.chapter(&u.chapter).rel_path);
    let mask = crate::agents::mask::mask_for(c.source_text(u), mdx);
    let source = sent_source(c, u, &mask);
    let revision = (round > 0).then(|| {
        let previous = s
            .kept_translation(&u.id, round - 1)
            .map(|(_, t)| mask.apply(t))
            .unwrap_or_default();
        translation::Revision {
            previous,
            feedback: feedback_for(m, s, &u.id, round - 1),
        }
    });
    let mut request = translation::build_request_with_context(
        &c.translation_setup_for(s.brief_text(), &u.chapter),
        &entries,
        &source,
        revision.as_ref(),
        c.context_for(u)
            .map(|ctx| crate::agents::mask::strip_for(&ctx, mdx))
            .as_deref(),
    );
    let fuzzy = super::memory::fuzzy(c, u);
    let refs: Vec<(u8, &str, &str)> = fuzzy
        .iter()
        .map(|f| (f.percent, f.source.as_str(), f.target.as_str()))
        .collect();
    translation::add_fuzzy_references(&mut request, &refs);
    mask.instruct(&mut request);
    (request, source, mask)
}

/// The source text a Translation request sends for `mask` (a masked text of unit `u`): its
/// shortcut and collapsed reference links written as full references that keep their labels
/// ([`crate::book::markdown::full_references`]), so the model translates the link text and
/// keeps the label. Not where a label holds a placeholder, which must occur once.
fn sent_source(
    c: &crate::campaign::Campaign,
    u: &crate::book::Unit,
    mask: &crate::agents::mask::Masked,
) -> String {
    let full = crate::book::markdown::full_references(&mask.text, c.chapter_labels(&u.chapter));
    if mask.is_empty() || !full.contains('⟦') {
        return full;
    }
    // A copied label with a placeholder in it would duplicate the placeholder.
    match mask.restore(&full) {
        Ok(_) => full,
        Err(_) => mask.text.clone(),
    }
}

/// The Translation request of one part of a unit (`range` of its source). A stuck unit's
/// piece goes out with its inline markup masked and without the brief: see
/// `pieces::is_piece_part`. Returns the request, the source as sent and the mask.
fn part_request(
    m: &Manager,
    s: &State,
    termbase: &crate::termbase::Termbase,
    u: &crate::book::Unit,
    part: &str,
    range: std::ops::Range<usize>,
) -> (Request, String, crate::agents::mask::Masked) {
    let c = m.campaign;
    let range_start = range.start;
    let text = &c.source_text(u)[range];
    let entries = c.prompt_entries(termbase, text);
    let mdx = crate::book::mdx::is_mdx(&c.chapter(&u.chapter).rel_path);
    let piece = crate::campaign::core::pieces::is_piece_part(part);
    let mask = if piece {
        crate::agents::mask::mask_markup_for(text, mdx)
    } else {
        crate::agents::mask::mask_for(text, mdx)
    };
    let brief = if piece { "" } else { s.brief_text() };
    let source = if piece {
        mask.text.clone()
    } else {
        sent_source(c, u, &mask)
    };
    // A part sent because block memory holds the rest of its unit reads the text before it
    // (the unit's reused paragraphs included) as read-only context, as a whole unit does.
    let context = if s.reused(&u.id).is_some() && !piece {
        c.context_before(
            &u.chapter,
            u.range.start + range_start,
            text.chars().count(),
        )
    } else {
        None
    };
    let mut request = translation::build_request_with_context(
        &c.translation_setup_for(brief, &u.chapter),
        &entries,
        &source,
        None,
        context.as_deref(),
    );
    // A part sent because block memory holds the rest of its unit gets the translation
    // memory's fuzzy matches of its own text, as a whole unit would.
    let fuzzy = if piece {
        Vec::new()
    } else {
        crate::campaign::ops::memory::fuzzy_text(c, text)
    };
    let fuzzy_refs: Vec<(u8, &str, &str)> = fuzzy
        .iter()
        .map(|f| (f.percent, f.source.as_str(), f.target.as_str()))
        .collect();
    // A stale edit's block: the editor's text of its earlier source is its reference.
    let mut stale: Vec<(u8, &str, &str)> = s
        .reused(&u.id)
        .map(|r| {
            r.stale
                .iter()
                .filter(|st| text.contains(st.new_source.as_str()))
                .map(|st| {
                    (
                        crate::interchange::memory::similarity(&st.old_source, &st.new_source),
                        st.old_source.as_str(),
                        st.editor.as_str(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    stale.extend(fuzzy_refs);
    translation::add_fuzzy_references(&mut request, &stale);
    mask.instruct(&mut request);
    (request, source, mask)
}

/// A Proofreading batch's request: each unit's source and kept translation of `round` with
/// the findings the prompts show, and the termbase entries relevant to the batch.
fn proofreading_request(
    m: &Manager,
    s: &State,
    termbase: &crate::termbase::Termbase,
    round: u32,
    units: &[String],
) -> Request {
    let c = m.campaign;
    let p = &c.plan;
    let mut items = Vec::new();
    let mut joined_source = String::new();
    for id in units {
        let Some(u) = c.unit(id) else { continue };
        let Some((_, target)) = s.kept_translation(id, round) else {
            continue;
        };
        let source = c.source_text(u);
        joined_source.push_str(source);
        items.push(proofreading::ReviewItem {
            unit: &u.id,
            source,
            target,
            findings: s
                .kept_findings(id, round)
                .iter()
                .filter(|f| crate::qa::unit::style::in_prompts(f))
                .map(|f| f.line())
                .collect(),
        });
    }
    let entries = termbase.relevant_to(&joined_source);
    proofreading::build_request(&p.source_lang, &p.target_lang, &entries, &items)
}

/// A terminology reconciliation's request: the conflicting renderings and, for each example
/// unit, snippets of its source and kept translation around the term and its renderings.
fn reconcile_request(
    m: &Manager,
    s: &State,
    round: u32,
    conflict: &crate::campaign::core::manager::Conflict,
) -> Request {
    let c = m.campaign;
    let p = &c.plan;
    let contexts: Vec<reconcile::Context> = conflict
        .examples
        .iter()
        .filter_map(|id| {
            let u = c.unit(id)?;
            let (_, target) = s.kept_translation(id, round)?;
            let needles: Vec<&str> = conflict
                .renderings
                .iter()
                .map(|r| r.rendering.as_str())
                .chain([conflict.term.as_str()])
                .collect();
            Some(reconcile::Context {
                unit: id.clone(),
                source: snippet(c.source_text(u), &[conflict.term.as_str()]),
                target: snippet(target, &needles),
            })
        })
        .collect();
    reconcile::build_request(
        &p.source_lang,
        &p.target_lang,
        &conflict.term,
        &conflict.renderings,
        &contexts,
    )
}

/// Sets the bound of what the request asks for (`max_tokens`, under the campaign's caps), in
/// the model's tokens as far as the campaign has learned them, and the runaway ceiling in
/// o200k_base (see `agents::bounds`).
fn bound(m: &Manager, s: &State, job: &mut Job) {
    let c = m.campaign;
    let p = &c.plan;
    let learned = s.figure(job.agent);
    let (bound, ceiling) = match &job.kind {
        JobKind::Translation { source, .. } => {
            let tokens = c.tokens().count(source);
            job.basis_tokens = Some(tokens as u64);
            (
                bounds::learned_translation(tokens, &p.source_lang, &p.target_lang, learned),
                bounds::ceiling(tokens, &p.source_lang, &p.target_lang),
            )
        }
        kind => {
            let formula = match kind {
                JobKind::Glossary { asked } => bounds::glossary(asked.len()),
                JobKind::Proofread { units, .. } => bounds::proofreading(units.len()),
                JobKind::Decide { candidates, .. } => bounds::decision(candidates.len()),
                JobKind::Reconcile { .. } => bounds::RECONCILE_MAX_TOKENS,
                _ => job
                    .request
                    .max_tokens
                    .unwrap_or(crate::agents::brief::BRIEF_TOKENS),
            };
            (
                bounds::learned_structured(formula, learned),
                bounds::structured_ceiling(formula),
            )
        }
    };
    job.max_tokens_cap = Caps {
        max_tokens: p.provider.max_tokens,
        output: p.provider.max_output_tokens,
    };
    job.request.max_tokens = Some(job.max_tokens_cap.apply(bound));
    job.request.ceiling_tokens = Some(ceiling);
}

/// Checks the request against the context budget. A request whose bytes fit the budget fits
/// it in tokens ([`crate::tokens::bound_messages`]): it is counted later, off the run loop,
/// while its answer is awaited ([`execute_noting`]). Counting every unit's prompt here,
/// between two requests, held up the refill of the slots.
///
/// Errors: [`PrepareError::OverBudget`] when the counted prompt is over the budget.
fn fit_budget(m: &Manager, job: &mut Job) -> Result<(), PrepareError> {
    let c = m.campaign;
    let budget = c.shares().request;
    let contents = || job.request.messages.iter().map(|m| m.content.as_str());
    if crate::tokens::bound_messages(contents()) > budget {
        let tokens = job.request.prompt_tokens_with(c.tokens());
        if tokens > budget {
            return Err(PrepareError::OverBudget { tokens, budget });
        }
        job.prompt_tokens = tokens;
    }
    Ok(())
}

/// About 160 characters of `text` around the first of `needles` found (case-insensitively),
/// on one line; the start of the text when none is found.
fn snippet(text: &str, needles: &[&str]) -> String {
    let at = needles
        .iter()
        .filter(|n| !n.is_empty())
        .find_map(|n| {
            text.find(n).or_else(|| {
                text.to_lowercase()
                    .find(&n.to_lowercase())
                    .filter(|&i| text.is_char_boundary(i))
            })
        })
        .unwrap_or(0);
    let start = text[..at]
        .char_indices()
        .rev()
        .nth(60)
        .map_or(0, |(i, _)| i);
    let s: String = text[start..].chars().take(160).collect();
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The findings summary for the Manager's decision of `round`, and the candidate unit ids:
/// units the reviewer flagged (issues or revision requests) that are not already forced.
fn findings_summary(m: &Manager, s: &State, round: u32, forced: &[String]) -> (Value, Vec<String>) {
    let mut flagged: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    let mut summaries = Vec::new();
    for report in m.proof_reports(s, round) {
        if !report.summary.is_empty() {
            summaries.push(crate::util::excerpt(&report.summary, 200));
        }
        for u in &report.units_need_revision {
            flagged.entry(u.clone()).or_default();
        }
    }
    // Issues the glossary check refuted are not shown (`Manager::refuted_term`).
    for i in m.standing_issues(s, round) {
        flagged
            .entry(i.unit.clone())
            .or_default()
            .push(json!({"type": i.kind, "detail": crate::util::excerpt(&i.detail, 160)}));
    }
    let candidates = m.decision_candidates(s, round, forced);
    let shown: Vec<Value> = candidates
        .iter()
        .map(|u| json!({"unit": u, "issues": flagged[u]}))
        .collect();
    let forced_shown: Vec<Value> = forced
        .iter()
        .take(10)
        .map(|u| json!({"unit": u, "checks": s.kept_findings(u, round).iter().filter(|f| crate::qa::unit::style::in_prompts(f)).map(|f| f.check.clone()).collect::<Vec<_>>()}))
        .collect();
    summaries.truncate(5);
    let v = json!({
        "round": round,
        "rounds_left": m.campaign.plan.revision_rounds.saturating_sub(round),
        "forced_revisions": forced_shown,
        "forced_total": forced.len(),
        "candidates": shown,
        "reviewer_summaries": summaries,
    });
    (v, candidates)
}

/// Feedback lines for revising `unit` after `round`: deterministic QA errors of the kept text
/// first, then (when the newest revision was worse and not kept) what it broke, then the
/// reviewer's issues that stand, then the Manager's reason.
pub fn feedback_for(m: &Manager, s: &State, unit: &str, round: u32) -> Vec<String> {
    let kept_text = s.kept_translation(unit, round).map_or("", |t| t.1);
    // A finding the editor dismissed on this text is not fed back.
    let kept = crate::campaign::core::mark_review::review_unit(
        m.campaign,
        s,
        unit,
        kept_text,
        s.kept_findings(unit, round),
    );
    let mut lines: Vec<String> = kept
        .iter()
        .filter(|f| f.severity == crate::qa::Severity::Error)
        .map(|f| f.line())
        .collect();
    if let (Some((latest, _)), Some(kept)) =
        (s.latest_translation(unit, round), s.kept_round(unit, round))
        && latest != kept
    {
        let mut checks: Vec<String> = s
            .findings_at(unit, latest)
            .iter()
            .filter(|f| f.severity == crate::qa::Severity::Error)
            .map(|f| f.check.clone())
            .collect();
        checks.dedup();
        lines.push(format!(
            "your revision of round {latest} was not kept: it had {} error finding(s) ({}); revise the previous translation shown above, changing only what the findings name",
            crate::campaign::core::state::score(s.findings_at(unit, latest)).0,
            checks.join(", ")
        ));
    }
    // The reviewer's issues the glossary check did not refute (`Manager::refuted_term`).
    lines.extend(
        m.standing_issues(s, round)
            .into_iter()
            .filter(|i| i.unit == unit)
            .map(|i| format!("{}: {}", i.kind, i.detail)),
    );
    if let Some((_, reason)) = m
        .revision_set(s, round)
        .into_iter()
        .find(|(u, _)| u == unit)
        && !reason.is_empty()
        && reason != "deterministic QA errors"
    {
        lines.push(format!("editor: {reason}"));
    }
    if lines.is_empty() {
        lines.push("re-check accuracy, terminology and completeness".into());
    }
    lines
}

fn fail(e: LlmError) -> JobFailure {
    let context = matches!(e, LlmError::ContextLength(_));
    JobFailure {
        fatal: e.is_fatal_for_campaign(),
        truncated: context,
        context,
        // The request is larger than the model's window: smaller requests fit, a larger
        // output limit does not help. A first translation is split without being asked.
        error: if context {
            format!("{e}; {CONTEXT_REMEDY}")
        } else {
            e.to_string()
        },
        attempts: 0,
        usage: Usage::default(),
        unusable: false,
        kept: None,
    }
}

/// Sends the job and turns the answer into a result file. Never panics on bad answers.
pub async fn execute(provider: &Provider, job: Job) -> Result<ResultFile, JobFailure> {
    execute_noting(provider, job).await.0
}

/// [`execute`], also returning the runaway replies met on the way (for the journal). A reply
/// of this call cut at `max_tokens` and checkpointed by an earlier run
/// ([`crate::campaign::core::store::PartialReply`]) is continued from where it stopped: nothing received is
/// asked for again.
pub async fn execute_noting(
    provider: &Provider,
    job: Job,
) -> (Result<ResultFile, JobFailure>, Vec<RunawayRecord>) {
    let started = Instant::now();
    let mut notes = Vec::new();
    let mut job = job;
    let resumed = job.state_dir.as_deref().and_then(|dir| {
        crate::campaign::core::store::read_partial(dir, &job.call, &job.request.fingerprint())
    });
    // The prompt is counted while the request is out (see [`Job::prompt_tokens`]): the count
    // is polled after the request, whose first poll sends it, so it runs while the answer is
    // awaited, on this task's thread (a thread of its own per call made the allocator keep an
    // arena per thread: +13 MB of peak memory on the corpus book).
    let counted = job.prompt_tokens;
    let count = async {
        if counted > 0 {
            return counted;
        }
        let contents = job.request.messages.iter().map(|m| m.content.as_str());
        match &job.counter {
            Some(counter) => counter.count_messages(contents),
            None => crate::tokens::count_messages(contents),
        }
    };
    let first = async {
        match resumed {
            Some(p) => {
                tracing::info!(call = %job.call, "continuing the reply checkpointed after {} continuation(s)", p.long.continuations);
                Ok((p.answer, p.long, Usage::default()))
            }
            None => complete_first(provider, &job, &mut notes).await,
        }
    };
    let (answer, prompt_tokens) = tokio::join!(first, count);
    job.prompt_tokens = prompt_tokens;
    let result = match answer {
        Ok((answer, long, spent)) => {
            finish_continued(provider, job, answer, long, spent, started, &mut notes).await
        }
        Err(f) => Err(f),
    };
    (result, notes)
}

/// The follow-up request for a translation `content` that cleans up to nothing while its
/// source has text: the conversation with the empty reply, then a user turn that says what
/// was wrong and asks for the translation only. `None` for any other job or reply.
fn empty_followup(job: &Job, content: &str) -> Option<Request> {
    let JobKind::Translation { source, mask, .. } = &job.kind else {
        return None;
    };
    if source.trim().is_empty() {
        return None;
    }
    let (text, _) = translation::postprocess(source, content);
    let empty = mask.recover(&text).is_ok_and(|(t, _)| t.trim().is_empty());
    if !empty {
        return None;
    }
    Some(job.request.follow_up(
        &crate::util::excerpt(content, 2000),
        "Your reply held no translation: once code fences and notes were removed, nothing was left. Reply again with only the translation of the text, keeping every placeholder such as ⟦1⟧ where it stands.".to_string(),
    ))
}

/// How the error of a [`JobFailure`] for a runaway reply begins (see [`complete_bounded`]).
const RUNAWAY_NOT_KEPT: &str = "runaway reply, not kept: ";

/// The job's first request. A translation whose reply the stream reader stopped as a runaway
/// keeps what came before the repetition when that part has a counterpart for every block of
/// the unit (QA then judges it as any answer: an echo of the source, say, is left in the
/// source language) ([`whole_before_repetition`]; finding 20 of docs/src/benchmarks.md: the
/// 1.5B translated a unit, then wrote the translation again in a `markdown` fence five times,
/// and the good first copy was thrown away and paid for again); the answer is that part, its
/// `LongStats` say `ended_by_runaway`, and the runaway is noted as kept. Anything else goes as
/// [`complete_bounded`]. Returns the answer, how it was finished and, apart, the usage of
/// runaway replies it replaced.
async fn complete_first(
    provider: &Provider,
    job: &Job,
    notes: &mut Vec<RunawayRecord>,
) -> Result<(Answer, crate::llm::continuation::LongStats, Usage), JobFailure> {
    let first = provider.complete(&job.request).await;
    if let (
        JobKind::Translation { source, .. },
        Err(LlmError::Runaway {
            reason,
            usage,
            before,
        }),
    ) = (&job.kind, &first)
        && let Some(text) = whole_before_repetition(source, before)
    {
        tracing::info!(call = %job.call, "runaway reply ({reason}); what came before the repetition covers every block of the unit and is kept as the answer");
        notes.push(RunawayRecord {
            call: job.call.clone(),
            agent: job.agent,
            unit: job.unit.clone(),
            reason: reason.clone(),
            usage: *usage,
            temperature: provider.temperature(),
            retry_temperature: None,
            kept: true,
        });
        let answer = Answer {
            content: text,
            usage: *usage,
            attempts: 1,
            ..Default::default()
        };
        let long = crate::llm::continuation::LongStats {
            ended_by_runaway: true,
            ..Default::default()
        };
        return Ok((answer, long, Usage::default()));
    }
    bounded_after(provider, job, &job.request, first, notes)
        .await
        .map(|(a, spent)| (a, Default::default(), spent))
}

/// The part of a runaway reply received before its repetition (`before`, see
/// [`crate::llm::runaway::before_repetition`]) as the answer for the masked `source`, when it
/// covers the whole unit: every source block has its counterpart
/// ([`crate::book::segment::kept_prefix`], with [`crate::llm::runaway::REPETITION_MARK`] after
/// the part so that its last block counts), and the reply went on past the last of them with
/// more text (a `markdown` fence around a copy, a list marker written over and over), as a
/// reply cut past the source does (`translation_output`). A part that ends where the
/// repetition begins is not taken: its last block may have been cut short and started over (a
/// heading and half a paragraph, again and again), which no block count tells from a whole
/// one. The masked text up to the end of the last matched block; `None` otherwise.
fn whole_before_repetition(source: &str, before: &str) -> Option<String> {
    if before.trim().is_empty() {
        return None;
    }
    let (piece, _) = translation::postprocess(source, before);
    let piece = piece.trim_end();
    let marked = crate::llm::runaway::with_repetition_mark(piece);
    let (source_end, target_end, _) = crate::book::segment::kept_prefix(source, &marked)?;
    let whole = source[source_end..].trim().is_empty();
    let went_on = !piece[target_end.min(piece.len())..].trim().is_empty();
    (whole && went_on).then(|| marked[..target_end].to_string())
}

/// Sends `req` (the job's request or a follow-up of it); a runaway reply is noted and retried
/// once at a lower temperature (see the module docs). Returns the answer and, apart, the
/// usage of the runaway reply it replaced (billed, not part of the answer).
async fn complete_bounded(
    provider: &Provider,
    job: &Job,
    req: &Request,
    notes: &mut Vec<RunawayRecord>,
) -> Result<(Answer, Usage), JobFailure> {
    let first = provider.complete(req).await;
    bounded_after(provider, job, req, first, notes).await
}

/// [`complete_bounded`] once `req` was sent and answered with `first`.
async fn bounded_after(
    provider: &Provider,
    job: &Job,
    req: &Request,
    first: Result<Answer, LlmError>,
    notes: &mut Vec<RunawayRecord>,
) -> Result<(Answer, Usage), JobFailure> {
    let (reason, spent) = match first {
        Ok(a) => return Ok((a, Usage::default())),
        Err(LlmError::Runaway { reason, usage, .. }) => (reason, usage),
        Err(e) => return Err(fail(e)),
    };
    let configured = provider.temperature();
    let lower = crate::llm::runaway::retry_temperature(configured);
    notes.push(RunawayRecord {
        call: job.call.clone(),
        agent: job.agent,
        unit: job.unit.clone(),
        reason: reason.clone(),
        usage: spent,
        temperature: configured,
        retry_temperature: lower,
        kept: false,
    });
    let runaway_failure = |reason: &str, usage: Usage, attempts: u32| JobFailure {
        error: format!("{RUNAWAY_NOT_KEPT}{reason}"),
        attempts,
        fatal: false,
        // Like a reply that did not fit: a first translation is split in two.
        truncated: true,
        context: false,
        usage,
        unusable: false,
        kept: None,
    };
    let Some(t) = lower else {
        return Err(runaway_failure(&reason, spent, 1));
    };
    tracing::info!(call = %job.call, "runaway reply ({reason}); retrying once at temperature {t}");
    match provider
        .complete_with(
            req,
            CallOptions {
                temperature: Some(t),
            },
        )
        .await
    {
        Ok(mut a) => {
            a.attempts += 1;
            Ok((a, spent))
        }
        Err(LlmError::Runaway { reason, usage, .. }) => {
            notes.push(RunawayRecord {
                call: job.call.clone(),
                agent: job.agent,
                unit: job.unit.clone(),
                reason: reason.clone(),
                usage,
                temperature: Some(t),
                retry_temperature: None,
                kept: false,
            });
            let mut total = spent;
            total.add(&usage);
            Err(runaway_failure(&reason, total, 2))
        }
        Err(e) => {
            let mut f = fail(e);
            f.usage.add(&spent);
            f.attempts += 1;
            Err(f)
        }
    }
}

/// The larger `max_tokens` to ask a translation again with when its reply was cut before its
/// first block ended (or a revision's reply was cut) and the provider could not continue it: four times the bound (at least the
/// campaign's `max_output_tokens` when that is larger), under the campaign's caps; `None` when
/// the reply is not such a cut or the caps leave no room. Four times: the learned bound already
/// holds 19 of 20 whole replies with half again of headroom, so a first block that does not fit
/// is an outlier (a long table or list in one block); one more request is cheaper than two.
fn more_room(job: &Job, answer: &Answer) -> Option<u32> {
    let JobKind::Translation {
        source,
        mask,
        round,
    } = &job.kind
    else {
        return None;
    };
    if answer.finish_reason.as_deref() != Some("length") {
        return None;
    }
    // A first translation keeps what ends on a block boundary and splits the rest off; a
    // revision cannot be split (it competes whole with the kept text), so it is asked again.
    if *round == 0 {
        let (text, _) = translation::postprocess(source, &answer.content);
        let original = mask.restore(source).unwrap_or_else(|_| source.clone());
        let kept = mask
            .recover(&text)
            .ok()
            .and_then(|(t, _)| crate::book::segment::kept_prefix(&original, &t));
        if kept.is_some() {
            return None;
        }
    }
    let asked = job.request.max_tokens?;
    let bigger = asked
        .saturating_mul(4)
        .max(job.max_tokens_cap.output.unwrap_or(0));
    let bigger = job.max_tokens_cap.apply(bigger);
    (bigger > asked).then_some(bigger)
}

/// Continues a reply cut at `max_tokens` while the provider can (see
/// [`crate::llm::continuation`]), saving the part received before each continuation request.
/// Returns the reply (cut still when it could not be finished), what continuing it took, and the
/// usage of runaway replies met on the way (billed, not part of the reply).
async fn continue_long(
    provider: &Provider,
    job: &Job,
    first: Answer,
    long: crate::llm::continuation::LongStats,
    notes: &mut Vec<RunawayRecord>,
) -> Result<(Answer, crate::llm::continuation::LongStats, Usage), JobFailure> {
    use crate::llm::continuation::{Continuer, Step};
    let mut spent = Usage::default();
    let mut c = Continuer::new(first, long);
    while c.is_cut() && provider.continues() {
        let sent = provider.prefill_as_sent(&c.answer().content).to_string();
        let Some(next) = c.next_request(&job.request, &sent) else {
            break;
        };
        if let Some(dir) = &job.state_dir {
            let partial = crate::campaign::core::store::PartialReply {
                schema_version: STATE_SCHEMA_VERSION,
                call: job.call.clone(),
                request_sha256: job.request.fingerprint(),
                answer: c.answer().clone(),
                long: c.stats(),
            };
            if let Err(e) = crate::campaign::core::store::write_partial(dir, &partial) {
                tracing::warn!(call = %job.call, "could not checkpoint the reply before continuing it: {e:#}");
            }
        }
        tracing::info!(call = %job.call, "reply cut at max_tokens = {:?}; continuing it ({} so far)", job.request.max_tokens, c.stats().continuations);
        let (piece, extra) = match complete_bounded(provider, job, &next, notes).await {
            Ok(x) => x,
            Err(f) if f.error.starts_with(RUNAWAY_NOT_KEPT) => {
                // The continuation repeated itself (and again at the lower temperature): the
                // reply ends here. What came before it was received whole up to its cut and
                // paid for, so it is kept without the passage it was repeating, as a reply
                // still cut: a translation keeps its complete blocks, a structured answer its
                // complete entries. The runaway's tokens are paid and not kept (noted).
                tracing::warn!(call = %job.call, "a continuation repeated itself; the reply is kept as received before it: {}", f.error);
                spent.add(&f.usage);
                c.end_runaway();
                break;
            }
            Err(mut f) => {
                // The part received was paid for; the error ended the reply.
                f.usage.add(&c.answer().usage);
                f.usage.add(&spent);
                f.attempts += c.answer().attempts;
                return Err(f);
            }
        };
        spent.add(&extra);
        match c.absorb(&sent, piece) {
            Step::Joined => {}
            Step::Restarted => {
                tracing::warn!(call = %job.call, "the provider answered a continuation with a new reply: it does not continue a final assistant message; continuation is off for this run (set [provider] continuation = \"none\")");
                provider.stop_continuing();
            }
            Step::Stalled => break,
        }
    }
    let (answer, long) = c.finish();
    Ok((answer, long, spent))
}

/// Turns an answer to `job` (streamed, or from a batch) into a result file: the same checks,
/// clean-up and follow-up requests (continuations of a reply cut at `max_tokens`, one schema
/// repair) whichever way the answer came. `started` is when the call began (for `elapsed_ms`).
pub async fn finish(
    provider: &Provider,
    job: Job,
    answer: Answer,
    started: Instant,
) -> Result<ResultFile, JobFailure> {
    finish_noting(provider, job, answer, started, &mut Vec::new()).await
}

/// [`finish`], adding the runaway replies of its follow-up requests to `notes`.
pub async fn finish_noting(
    provider: &Provider,
    job: Job,
    answer: Answer,
    started: Instant,
    notes: &mut Vec<RunawayRecord>,
) -> Result<ResultFile, JobFailure> {
    finish_continued(
        provider,
        job,
        answer,
        Default::default(),
        Usage::default(),
        started,
        notes,
    )
    .await
}

/// [`finish_noting`] for an answer already continued `long` times, with `spent` tokens paid for
/// runaway replies before it: a prompt the server cut fails the call; a reply cut too early to
/// keep anything is asked again with more room; an empty translation gets one follow-up; then
/// the answer is read by its job's kind into the result file.
async fn finish_continued(
    provider: &Provider,
    job: Job,
    answer: Answer,
    long: crate::llm::continuation::LongStats,
    spent: Usage,
    started: Instant,
    notes: &mut Vec<RunawayRecord>,
) -> Result<ResultFile, JobFailure> {
    if let Some(failure) = prompt_cut(&job, &answer, &spent) {
        return Err(failure);
    }
    let (mut answer, mut long, more) = continue_long(provider, &job, answer, long, notes)
        .await
        .map_err(|mut f| {
            f.usage.add(&spent);
            f
        })?;
    let mut spent = spent;
    spent.add(&more);
    if let Some(bigger) = more_room(&job, &answer) {
        answer = ask_with_more_room(provider, &job, answer, bigger, &mut long, &mut spent, notes)
            .await?;
    }
    // What the accepted reply itself cost, for learning the model's bounds: not the runaway
    // replies it replaced, nor a schema repair.
    let reply_completion = answer.usage.completion_tokens;
    let mut usage = answer.usage;
    usage.add(&spent);
    let mut paid = Paid {
        usage,
        attempts: answer.attempts,
        requests: answer.attempts,
    };
    let cut = answer.finish_reason.as_deref() == Some("length");
    let mut basis_tokens = job.basis_tokens;
    let mut kept_blocks = None;
    if !cut && let Some(req) = empty_followup(&job, &answer.content) {
        // The reply held no translation once clean-up removed fences and notes (a weak model
        // answers a short piece ending in a placeholder with an empty code fence): asked once
        // more, saying so, before the unit is failed. The empty reply is paid and not kept.
        tracing::info!(call = %job.call, "the translation was empty after clean-up; asking once more");
        match complete_bounded(provider, &job, &req, notes).await {
            Ok((again, extra)) => {
                paid.usage.add(&again.usage);
                paid.usage.add(&extra);
                paid.add_requests(again.attempts);
                answer.content = again.content;
                answer.reasoning.push_str(&again.reasoning);
            }
            Err(f) => {
                paid.usage.add(&f.usage);
                paid.add_requests(f.attempts);
            }
        }
    }
    let output = match &job.kind {
        JobKind::Translation {
            round,
            source,
            mask,
        } => {
            let reply = CutReply {
                cut,
                long,
                reply_completion,
            };
            let (output, blocks) =
                translation_output(provider, &job, *round, source, mask, &answer, reply, &paid)?;
            kept_blocks = blocks;
            output
        }
        JobKind::Brief => brief_output(&answer, cut, &paid)?,
        kind => {
            basis_tokens = Some(
                (crate::tokens::count(&answer.content) + crate::tokens::count(&answer.reasoning))
                    as u64,
            );
            let (value, stats, extra) =
                structured(provider, &job, &job.request, &answer, notes).await;
            if let Some(extra) = extra {
                paid.usage.add(&extra.usage);
                paid.add_requests(extra.attempts);
            }
            structured_output(kind, &value, stats)
        }
    };
    let output_sha256 = ResultFile::output_hash(&output);
    Ok(ResultFile {
        schema_version: STATE_SCHEMA_VERSION,
        call: job.call,
        agent: job.agent,
        unit: job.unit,
        request_sha256: job.request.fingerprint(),
        usage: paid.usage,
        attempts: paid.attempts,
        requests: paid.requests,
        model: answer.model.clone(),
        finish_reason: answer.finish_reason.clone(),
        elapsed_ms: started.elapsed().as_millis() as u64,
        output,
        output_sha256,
        origin: None,
        long: (long != Default::default()).then_some(long),
        // A reply that was cut says nothing of how long a whole one is, nor does one that ran
        // on repeating itself.
        sample: basis_tokens
            .filter(|_| !cut && !long.ended_by_runaway)
            .map(|basis_tokens| bounds::Sample {
                basis_tokens,
                completion_tokens: reply_completion,
            }),
        kept_blocks,
    })
}

/// What a call has paid so far: its tokens, its attempts and the HTTP requests they made.
#[derive(Debug, Clone, Copy)]
struct Paid {
    usage: Usage,
    attempts: u32,
    requests: u32,
}

impl Paid {
    /// Counts `n` more attempts, each one request.
    fn add_requests(&mut self, n: u32) {
        self.attempts += n;
        self.requests += n;
    }

    /// A failure of the call with what it paid.
    fn failure(&self, error: String, truncated: bool, unusable: bool) -> JobFailure {
        JobFailure {
            error,
            attempts: self.attempts,
            fatal: false,
            truncated,
            context: false,
            usage: self.usage,
            unusable,
            kept: None,
        }
    }
}

/// How the accepted reply ended, for reading a translation.
#[derive(Debug, Clone, Copy)]
struct CutReply {
    /// The reply stopped at `max_tokens` (finish reason `length`).
    cut: bool,
    /// What finishing it took (continuations, runaways).
    long: crate::llm::continuation::LongStats,
    /// The completion tokens of the accepted reply itself.
    reply_completion: u64,
}

/// A prompt the server cut short ([`crate::qa::unit::prompt_usage::truncated`]) fails the call:
/// a smaller unit may fit the server's context, so a Translation is split like one cut at its
/// output limit.
fn prompt_cut(job: &Job, answer: &Answer, spent: &Usage) -> Option<JobFailure> {
    let prompt_tokens = if job.prompt_tokens > 0 {
        job.prompt_tokens
    } else {
        job.request.prompt_tokens_estimate()
    };
    let error =
        crate::qa::unit::prompt_usage::truncated(prompt_tokens, answer.usage.prompt_tokens)?;
    let mut usage = answer.usage;
    usage.add(spent);
    Some(JobFailure {
        error,
        attempts: answer.attempts,
        fatal: false,
        truncated: matches!(job.kind, JobKind::Translation { .. }),
        context: true,
        usage,
        unusable: false,
        kept: None,
    })
}

/// A translation cut before its first block ended, by a provider that could not continue it:
/// nothing of it can be kept, so it is asked once more with room for that block
/// (`max_tokens = bigger`). The cut reply is paid and not kept; the result says so
/// (`long.discarded`, `long.retried_with`). Returns the new answer, whose usage and attempts
/// include the cut one's.
async fn ask_with_more_room(
    provider: &Provider,
    job: &Job,
    answer: Answer,
    bigger: u32,
    long: &mut crate::llm::continuation::LongStats,
    spent: &mut Usage,
    notes: &mut Vec<RunawayRecord>,
) -> Result<Answer, JobFailure> {
    tracing::info!(call = %job.call, "the reply was cut at max_tokens = {:?} before its first block ended and cannot be continued; asking again with max_tokens = {bigger}", job.request.max_tokens);
    let mut req = job.request.clone();
    req.max_tokens = Some(bigger);
    let (mut again, extra) =
        complete_bounded(provider, job, &req, notes)
            .await
            .map_err(|mut f| {
                f.usage.add(&answer.usage);
                f.usage.add(spent);
                f.attempts += answer.attempts;
                f
            })?;
    spent.add(&extra);
    long.discarded.add(&answer.usage);
    long.retried_with = Some(bigger);
    let mut discarded = answer.usage;
    discarded.add(&again.usage);
    again.attempts += answer.attempts;
    again.usage = discarded;
    Ok(again)
}

/// A Translation's output: the answer cleaned up and its masked spans restored. Every masked
/// span comes back once: a look-alike placeholder counts, a lost one is left out for QA and
/// the repair (recorded in the cleanup); a duplicated or unknown placeholder fails the
/// attempt. A cut reply whose complete blocks cover the whole source is kept as those blocks
/// (returned with their count); any other cut reply fails the call ([`cut_failure`]).
// JobFailure is what every step of finishing a call fails with; the caller returns it as is,
// so boxing it here would only be undone there.
#[allow(clippy::too_many_arguments, clippy::result_large_err)]
fn translation_output(
    provider: &Provider,
    job: &Job,
    round: u32,
    source: &str,
    mask: &crate::agents::mask::Masked,
    answer: &Answer,
    reply: CutReply,
    paid: &Paid,
) -> Result<(Output, Option<usize>), JobFailure> {
    let cut = reply.cut;
    let (text, mut cleanup) = translation::postprocess(source, &answer.content);
    let mut recovered = mask.recover(&text);
    let original = mask.restore(source).unwrap_or_else(|_| source.to_string());
    let whole = cut
        .then(|| recovered.as_ref().ok())
        .flatten()
        .and_then(|(t, _)| crate::book::segment::kept_prefix(&original, t))
        .filter(|(source_end, _, _)| *source_end == original.len());
    let mut kept_blocks = None;
    if let (Some((_, target_end, blocks)), Ok((t, _))) = (whole, recovered.as_mut()) {
        // Every source block was translated before the cut (the reply went on past
        // the source): the complete blocks are the translation.
        t.truncate(target_end);
        kept_blocks = Some(blocks);
    }
    if cut && whole.is_none() {
        return Err(cut_failure(
            provider,
            job,
            round,
            &original,
            recovered.ok(),
            answer,
            reply,
            paid,
        ));
    }
    let (text, lost) = recovered.map_err(|e| paid.failure(e.to_string(), false, true))?;
    cleanup.placeholders_lost = lost;
    if text.trim().is_empty() && !source.trim().is_empty() {
        return Err(paid.failure(
            "the translation was empty after clean-up".into(),
            false,
            true,
        ));
    }
    let output = Output::Translation {
        round,
        text,
        cleanup,
        reasoning_chars: answer.reasoning.chars().count(),
        joined_from: Vec::new(),
    };
    Ok((output, kept_blocks))
}

/// The failure of a translation the provider could not finish: what ends on a block boundary
/// is kept (a first translation's kept part; a cut revision is not kept, the earlier
/// translation stays), and the message says why the reply could not be finished.
#[allow(clippy::too_many_arguments)]
fn cut_failure(
    provider: &Provider,
    job: &Job,
    round: u32,
    original: &str,
    recovered: Option<(String, Vec<String>)>,
    answer: &Answer,
    reply: CutReply,
    paid: &Paid,
) -> JobFailure {
    let CutReply {
        long,
        reply_completion,
        ..
    } = reply;
    // The provider could not finish the reply: keep what ends on a block boundary.
    let kept = recovered.and_then(|(text, _)| {
        crate::book::segment::kept_prefix(original, &text).map(
            |(source_end, target_end, blocks)| KeptPart {
                source_end,
                blocks,
                text: text[..target_end].to_string(),
                model: answer.model.clone(),
                reasoning_chars: answer.reasoning.chars().count(),
                long,
                sample: Some(bounds::Sample {
                    basis_tokens: crate::tokens::count(&original[..source_end]) as u64,
                    completion_tokens: reply_completion,
                }),
            },
        )
    });
    let max = job.request.max_tokens.unwrap_or(0);
    let why = if long.ended_by_runaway {
        "its continuation repeated itself (a runaway, not kept)".to_string()
    } else if !provider.continues() {
        "the provider does not continue replies".to_string()
    } else if long.continuations >= crate::llm::continuation::MAX_CONTINUATIONS {
        format!(
            "it was still cut after {} continuations",
            long.continuations
        )
    } else {
        "a continuation added nothing".to_string()
    };
    let error = match (&kept, round) {
        (Some(k), 0) => format!(
            "the reply reached max_tokens = {max} and {why}: its first {} block(s), which end on a block boundary, were kept; the rest of the text is translated as a part of its own",
            k.blocks
        ),
        (None, 0) => format!(
            "the reply reached max_tokens = {max} before its first block ended and {why}; nothing of it could be kept"
        ),
        _ => format!(
            "the revision reached max_tokens = {max} and {why}: a cut revision is not kept, the earlier translation stays"
        ),
    };
    JobFailure {
        kept: kept.filter(|_| round == 0),
        ..paid.failure(error, true, false)
    }
}

/// A brief's output. A brief the provider could not finish keeps its complete paragraphs.
///
/// Errors: a brief empty after clean-up.
#[allow(clippy::result_large_err)] // as for `translation_output`
fn brief_output(answer: &Answer, cut: bool, paid: &Paid) -> Result<Output, JobFailure> {
    let content = match answer.content.rfind("\n\n") {
        Some(end) if cut => &answer.content[..end],
        _ => answer.content.as_str(),
    };
    let text = crate::agents::brief::clean(content);
    if text.trim().is_empty() {
        return Err(paid.failure("the brief was empty".into(), false, false));
    }
    Ok(Output::Brief { text })
}

/// A structured agent's output, read from its JSON `value` by the agent's parser (the parse
/// statistics merged into `stats`).
fn structured_output(kind: &JobKind, value: &serde_json::Value, mut stats: ParseStats) -> Output {
    match kind {
        JobKind::Glossary { asked } => {
            let terms: Vec<String> = asked.iter().map(|c| c.term.clone()).collect();
            let (entries, s) = glossary::parse(value, &terms);
            merge_stats(&mut stats, s);
            Output::GlossaryBatch {
                asked: asked.clone(),
                entries,
                stats,
            }
        }
        JobKind::Proofread { round, units } => {
            let ids: Vec<&str> = units.iter().map(String::as_str).collect();
            let (report, s) = proofreading::parse(value, &ids);
            merge_stats(&mut stats, s);
            Output::Proofread {
                round: *round,
                units: units.clone(),
                report,
                stats,
            }
        }
        JobKind::Decide {
            round,
            forced,
            candidates,
        } => {
            let ids: Vec<&str> = candidates.iter().map(String::as_str).collect();
            let (decision, s) = manager_agent::parse(value, &ids);
            merge_stats(&mut stats, s);
            Output::Decision {
                round: *round,
                forced: forced.clone(),
                candidates: candidates.clone(),
                decision,
                stats,
            }
        }
        JobKind::Reconcile {
            round,
            term,
            renderings,
        } => {
            let (choice, s) = reconcile::parse(value, term, renderings);
            merge_stats(&mut stats, s);
            // Verify, don't trust: only an observed rendering (or the term) is kept.
            let (choice, rejected) = match choice {
                Some(ch) => match reconcile::verify(&ch, term, renderings) {
                    Ok(()) => (Some(ch), None),
                    Err(r) => (None, Some(r)),
                },
                None => (None, None),
            };
            Output::Reconciliation {
                round: *round,
                term: term.clone(),
                renderings: renderings.clone(),
                choice,
                stats,
                rejected,
            }
        }
        // `finish_continued` reads these two itself and never calls this with them.
        JobKind::Translation { .. } | JobKind::Brief => unreachable!("not a structured agent"),
    }
}

fn merge_stats(into: &mut ParseStats, from: ParseStats) {
    into.accepted += from.accepted;
    into.repaired += from.repaired;
    into.dropped += from.dropped;
    for n in from.notes {
        if into.notes.len() < 20 {
            into.notes.push(n);
        }
    }
}

/// Reads a structured answer as JSON; on failure sends one schema-repair request; if that also
/// fails (or cannot be sent), falls back to `null`, which every parser reads as "nothing".
async fn structured(
    provider: &Provider,
    job: &Job,
    req: &Request,
    answer: &Answer,
    notes: &mut Vec<RunawayRecord>,
) -> (Value, ParseStats, Option<Answer>) {
    let mut stats = ParseStats::default();
    let cut = answer.finish_reason.as_deref() == Some("length");
    if cut && let Some((v, dropped)) = json::extract_cut(&answer.content) {
        // A reply the provider could not finish: its complete entries are kept.
        stats.repair(format!(
            "the answer was cut at max_tokens: its complete entries were kept ({dropped} characters of an unfinished entry dropped)"
        ));
        return (v, stats, None);
    }
    match json::extract(&answer.content) {
        Ok(v) => (v, stats, None),
        Err(e) => {
            stats.repair(format!("answer was not JSON ({e}); asked once to reformat"));
            let repair = json::repair_request(req, &answer.content, &e.0);
            match complete_bounded(provider, job, &repair, notes)
                .await
                .map(|(mut a, spent)| {
                    a.usage.add(&spent);
                    a
                })
                .map_err(|f| (f.error, f.usage, f.attempts))
            {
                Ok(a2) => match json::extract(&a2.content) {
                    Ok(v) => (v, stats, Some(a2)),
                    Err(e2) => {
                        stats.drop_item(format!(
                            "repaired answer was not JSON either ({e2}); used an empty default"
                        ));
                        (Value::Null, stats, Some(a2))
                    }
                },
                Err((e2, spent, attempts)) => {
                    stats.drop_item(format!(
                        "repair request failed ({e2}); used an empty default"
                    ));
                    (
                        Value::Null,
                        stats,
                        Some(Answer {
                            // A runaway repair was billed for what it streamed.
                            usage: spent,
                            attempts: attempts.max(1),
                            ..Default::default()
                        }),
                    )
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::whole_before_repetition;

    const SOURCE: &str = "# Agents\n\nThe agent calls a tool and reads the result before it decides on the next step.\n";
    const WHOLE: &str = "# 智能体\n\n智能体调用工具，并在决定下一步之前读取结果。\n";

    /// The 1.5B's shape (finding 20): the whole translation, then a copy in a `markdown`
    /// fence, where the repetition began. The translation is the answer, the fence is not.
    #[test]
    fn a_translation_then_a_fenced_copy_keeps_the_translation() {
        let before = format!("{WHOLE}\n```markdown\n{WHOLE}```\n");
        let kept = whole_before_repetition(SOURCE, &before).expect("kept");
        assert_eq!(kept.trim_end(), WHOLE.trim_end());
        assert!(!kept.contains("```"), "{kept}");
    }

    /// Nothing after the last matched block: its last block may have been cut short and
    /// started over, so the part is not taken (the call is retried as before).
    #[test]
    fn a_part_that_ends_where_its_repetition_begins_is_not_taken() {
        assert_eq!(whole_before_repetition(SOURCE, WHOLE), None);
        // A heading and half a paragraph, written again and again.
        assert_eq!(
            whole_before_repetition(SOURCE, "# 智能体\n\n智能体调用工具，\n\n"),
            None
        );
        // One sentence of a paragraph repeated inside it.
        assert_eq!(whole_before_repetition(SOURCE, "智能体调用工具。"), None);
    }

    /// A part that covers the unit's first block only is not the whole unit.
    #[test]
    fn a_part_that_covers_only_the_first_blocks_is_not_taken() {
        let two = "# Agents\n\nFirst paragraph of the unit.\n\nSecond paragraph of the unit.\n";
        let before = "# 智能体\n\n第一段。\n\n```markdown\n# 智能体\n```\n";
        assert_eq!(whole_before_repetition(two, before), None);
        assert_eq!(whole_before_repetition(two, ""), None);
    }
}
