//! Offline estimates for `booktr plan`: calls and tokens per agent, the cost at the campaign's
//! `[pricing]`, and how much of that a resume still has to send. No request is made: prompts
//! are built exactly as the run would build them wherever their inputs are known, and estimated
//! where they depend on answers not yet received.
//!
//! - **Glossary**: the real requests of the pending candidate batches (exact prompt tokens);
//!   completion ≈ [`GLOSSARY_TOKENS_PER_CANDIDATE`] per candidate.
//! - **Translation**: no call for a unit the translation memory (`memory` TMX files) holds;
//!   otherwise the real request of every unit not yet translated (exact, given the
//!   termbase). Before the Glossary stage the agent's entries are unknown: each candidate term is
//!   assumed to become an entry (rendering as long as the term, a note of about seven tokens),
//!   which is what the pseudo provider does and close to what models do. Completion ≈ the source tokens ×
//!   [`completion_ratio`], or, once the campaign has learned its model's reply lengths
//!   ([`crate::agents::bounds::Figure`], journaled), × their median in the model's own tokens
//!   (the high end of the range × their learned quantile).
//! - **Proofreading**: none at `proofread_share = 0`, the default. Otherwise the review budget
//!   (`proofread_share` × the prompt tokens of the units a model translates; translation-memory
//!   hits cost none, so they add none) plus each batch's instructions: one batch per chapter
//!   with a budget (every chapter at a share of 1 or more).
//! - **Manager**: no model call in `total` and `remaining`: without revisions the reviewer
//!   flagged nothing beyond what QA sends back, and such a decision is taken without a model
//!   ([`crate::campaign::core::manager::Action::DecideForced`]). With proofreading on, the
//!   range's high end counts one decision per revision round: its instructions, the current
//!   Manager context and a findings summary of about [`FINDINGS_TOKENS`]; with it off, nothing
//!   is advisory and every decision is local.
//! - Revisions and terminology reconciliations depend on what QA finds and are not estimated
//!   in `total` and `remaining`.
//!
//! **The range** (`range`): the whole campaign's cost per agent between two ends.
//! - *low*: `total` (no revision), with the provider's prefix cache serving what it can as
//!   configured: when `[pricing]` has a `cached_input_per_million`, a Translation request
//!   whose stable prefix (the system message, and with `prompt_layout = "full"` the glossary
//!   message) equals the previous request's counts that prefix as cached, if it is at least
//!   [`CACHE_MIN_TOKENS`] long, rounded down to [`CACHE_INCREMENT`] tokens (OpenAI's
//!   documented prompt-caching rule, <https://platform.openai.com/docs/guides/prompt-caching>).
//!   Other agents' requests are counted uncached.
//! - *high*: every revision round used on every unit: each round adds one revision per
//!   Translation call (its prompt plus the previous translation plus
//!   [`FINDINGS_TOKENS`] of feedback; the same completion) and proofreads every chapter
//!   again; one Manager decision per round; no cache hit.
//! - Neither end counts terminology reconciliations, retries or split units. They are
//!   estimates, not bounds: answers longer than [`completion_ratio`] predicts raise the cost.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::agents::{Agent, glossary, manager as manager_agent, proofreading, translation};
use crate::campaign::core::CallKey;
use crate::campaign::core::Campaign;
use crate::campaign::core::manager::{Manager, translate_key};
use crate::campaign::core::state::State;
use crate::termbase::{Entry, Origin, Termbase};

/// Completion tokens per candidate term in a Glossary answer (`{"source","target","note"}`).
pub const GLOSSARY_TOKENS_PER_CANDIDATE: u64 = 24;
/// Stand-in for the note of an agent entry not proposed yet (about seven tokens, the length of
/// the notes models and the pseudo provider write).
pub const GUESSED_NOTE: &str = "short note on meaning and usage here";

/// Tokens of the findings summary in a Manager decision, and of the feedback in a revision
/// request.
pub const FINDINGS_TOKENS: u64 = 150;

/// Prompts shorter than this get no prefix-cache hit (OpenAI's rule, "Caching is enabled
/// automatically for prompts that are 1024 tokens or longer").
pub const CACHE_MIN_TOKENS: u64 = 1024;
/// Prefix-cache hits come in steps of this many tokens (OpenAI: "cache hits occurring in
/// increments of 128 tokens").
pub const CACHE_INCREMENT: u64 = 128;

/// One end of an agent's cost range: calls and tokens, the prompt tokens assumed served from
/// the prefix cache (part of `prompt_tokens`), and their cost at `[pricing]`.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct RangeEnd {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
    /// In the `[pricing]` currency; `None` without `[pricing]`.
    pub cost: Option<f64>,
}

/// An agent's low and high estimate for the whole campaign (see the module docs).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct CostRange {
    pub low: RangeEnd,
    pub high: RangeEnd,
}

/// Completion tokens per source token for a language pair, measured with `o200k_base` on the
/// shared corpus (English ↔ Chinese editions of the same book: 1.2 MB each way) and rounded;
/// 1.0 for other pairs.
pub fn completion_ratio(source: &crate::lang::Lang, target: &crate::lang::Lang) -> f64 {
    match (source.primary().as_str(), target.primary().as_str()) {
        ("en", "zh") => 1.0,
        ("zh", "en") => 1.0,
        _ => 1.0,
    }
}

/// Calls and tokens of one agent.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct AgentEstimate {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl AgentEstimate {
    fn add(&mut self, calls: u64, prompt: u64, completion: u64) {
        self.calls += calls;
        self.prompt_tokens += prompt;
        self.completion_tokens += completion;
    }
}

/// The estimate of a whole campaign and of what is left.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    /// Everything the campaign needs, as if nothing were done.
    pub total: BTreeMap<Agent, AgentEstimate>,
    /// What a run would still send now (equal to `total` for a new campaign).
    pub remaining: BTreeMap<Agent, AgentEstimate>,
    /// Prose units already translated (reused by a resume).
    pub units_done: usize,
    pub units_to_translate: usize,
    /// Cost of `total` and of `remaining` at `[pricing]`, when the campaign has one.
    pub cost_total: Option<f64>,
    pub cost_remaining: Option<f64>,
    pub currency: Option<String>,
    /// Low and high estimate of the whole campaign per agent (see the module docs).
    pub range: BTreeMap<Agent, CostRange>,
    /// Sums of `range` over the agents, with `[pricing]`.
    pub cost_low: Option<f64>,
    pub cost_high: Option<f64>,
}

/// Estimates the campaign `c` given its state `s` (empty for a new campaign): the Glossary
/// agent's calls (batches and the brief), then Translation's (unit by unit, in book order),
/// Proofreading's (the review budget) and the Manager's (none without revisions), then the
/// range of the whole campaign (one Manager decision per round at its high end).
pub fn estimate(c: &Campaign, s: &State, m: &Manager) -> Estimate {
    let p = &c.plan;
    // Every agent has an entry from the start (so the tables list all four); the entries are
    // then reached with `entry().or_default()`, which finds them.
    let mut total: BTreeMap<Agent, AgentEstimate> = Agent::ALL
        .iter()
        .map(|a| (*a, AgentEstimate::default()))
        .collect();
    let mut remaining = total.clone();
    glossary_calls(c, s, m, &mut total, &mut remaining);
    let tr = translation_calls(c, s, m, &mut total, &mut remaining);
    proofreading_calls(c, s, &tr, &mut total, &mut remaining);
    let decision = manager_decision(s, m);
    let range = cost_range(c, &total, &tr, &decision);
    let (done, todo) = (tr.done, tr.todo);
    let sum = |f: fn(&CostRange) -> Option<f64>| {
        p.pricing
            .as_ref()
            .map(|_| range.values().filter_map(f).sum::<f64>())
    };
    let cost_low = sum(|r| r.low.cost);
    let cost_high = sum(|r| r.high.cost);
    let cost = |e: &BTreeMap<Agent, AgentEstimate>| {
        p.pricing.as_ref().map(|pr| {
            e.values()
                .map(|a| pr.cost(a.prompt_tokens, 0, a.completion_tokens))
                .sum::<f64>()
        })
    };
    Estimate {
        cost_total: cost(&total),
        cost_remaining: cost(&remaining),
        currency: p.pricing.as_ref().map(|pr| pr.currency.clone()),
        total,
        remaining,
        units_done: done,
        units_to_translate: done + todo,
        range,
        cost_low,
        cost_high,
    }
}

/// The Glossary agent's calls: every batch of the book's candidates (total) and the pending
/// ones (remaining), and with `brief = true` the book brief (pending until its result is
/// recorded).
fn glossary_calls(
    c: &Campaign,
    s: &State,
    m: &Manager,
    total: &mut BTreeMap<Agent, AgentEstimate>,
    remaining: &mut BTreeMap<Agent, AgentEstimate>,
) {
    let p = &c.plan;
    let all_batches = if m.candidates.is_empty() {
        Vec::new()
    } else {
        glossary::batches(
            &p.source_lang,
            &p.target_lang,
            &c.house,
            &m.candidates,
            c.shares().glossary_batch,
            crate::campaign::core::manager::CANDIDATES_PER_BATCH,
        )
    };
    for b in &all_batches {
        let t = glossary::build_request(&p.source_lang, &p.target_lang, &c.house, b)
            .prompt_tokens_with(c.tokens()) as u64;
        total.entry(Agent::Glossary).or_default().add(
            1,
            t,
            b.len() as u64 * GLOSSARY_TOKENS_PER_CANDIDATE,
        );
    }
    // The book brief (`brief = true` only): one call, pending until its result is recorded.
    if c.plan.brief {
        let brief_prompt = m.brief.1.prompt_tokens_with(c.tokens()) as u64;
        let brief_completion = crate::agents::brief::expected_tokens(c.chapters.len()) as u64;
        total
            .entry(Agent::Glossary)
            .or_default()
            .add(1, brief_prompt, brief_completion);
        if !s.is_done(&m.brief.0.to_string()) {
            remaining
                .entry(Agent::Glossary)
                .or_default()
                .add(1, brief_prompt, brief_completion);
        }
    }
    for (_, b) in &m.glossary_batches {
        let t = glossary::build_request(&p.source_lang, &p.target_lang, &c.house, b)
            .prompt_tokens_with(c.tokens()) as u64;
        remaining.entry(Agent::Glossary).or_default().add(
            1,
            t,
            b.len() as u64 * GLOSSARY_TOKENS_PER_CANDIDATE,
        );
    }
}

/// What the Translation pass measured, for the other agents and the range.
struct TranslationTally {
    /// Prose units already translated, and still to translate.
    done: usize,
    todo: usize,
    /// Chapters with prose units, and with units a model translates.
    chapters: usize,
    paid_chapters: usize,
    /// Per chapter, in book order: each prose unit's review cost as the Manager's selection
    /// counts it (`Manager::select_for_review`: the unit's own prompt tokens past the shared
    /// prefix, plus its translation, plus 20) and its translation prompt tokens, and whether
    /// a model translates it (not from the translation memory), and the glossary lines its
    /// review carries (`- source → target`, listed once per batch).
    review_costs: BTreeMap<String, Vec<ReviewCost>>,
    /// Prompt tokens a prefix cache would serve (the range's low end).
    cached_low: u64,
    /// What one revision of every Translation call would add (the range's high end).
    revision: AgentEstimate,
    /// Completion tokens at the learned bound's quantile over the median (>= 1).
    high_factor: f64,
}

/// One prose unit as the review selection counts it (see `TranslationTally::review_costs`).
struct ReviewCost {
    cost: u64,
    prompt: u64,
    paid: bool,
    glossary_lines: Vec<String>,
}

/// The termbase the translation prompts carry: the merged one once known, else house style
/// plus every candidate kept as is.
fn assumed_termbase<'a>(c: &Campaign, s: &'a State, m: &Manager) -> std::borrow::Cow<'a, Termbase> {
    if s.termbase().is_some() && s.glossary_inputs().as_deref() == Some(m.glossary_inputs.as_str())
    {
        return std::borrow::Cow::Borrowed(s.effective_termbase());
    }
    let guessed: Vec<Entry> = m
        .candidates
        .iter()
        .map(|cand| Entry {
            source: cand.term.clone(),
            target: cand.term.clone(),
            note: GUESSED_NOTE.into(),
            origin: Origin::Agent,
            forbidden: Vec::new(),
            variants: Vec::new(),
        })
        .collect();
    std::borrow::Cow::Owned(Termbase::merge(&c.house, &guessed).0)
}

/// The translation setup of a chapter's units. The brief's book part is in every translation
/// prompt and the chapter's synopsis in each of its units' prompts; before the brief exists,
/// the usual lengths are assumed. A campaign without a brief (`brief = false`, the default)
/// sends none.
fn setup_for(c: &Campaign, brief: Option<&str>, chapter: &str) -> translation::Setup {
    match brief {
        Some(b) => c.translation_setup_for(b, chapter),
        None if !c.plan.brief => c.translation_setup(),
        None => {
            use crate::agents::brief_parts::{EXPECTED_BOOK_TOKENS, EXPECTED_SYNOPSIS_TOKENS};
            let mut setup = c.translation_setup();
            setup.brief = "brief ".repeat(EXPECTED_BOOK_TOKENS);
            setup.chapter_brief = "brief ".repeat(EXPECTED_SYNOPSIS_TOKENS);
            setup
        }
    }
}

/// The Translation agent's calls, unit by unit in book order: the request each prose unit
/// would send, and a completion of its source tokens times the completion ratio.
fn translation_calls(
    c: &Campaign,
    s: &State,
    m: &Manager,
    total: &mut BTreeMap<Agent, AgentEstimate>,
    remaining: &mut BTreeMap<Agent, AgentEstimate>,
) -> TranslationTally {
    let p = &c.plan;
    let termbase = assumed_termbase(c, s, m);
    let termbase: &Termbase = &termbase;
    let brief = s.brief().as_ref().map(|b| b.text.clone());
    // Units come in book order: the setup changes with the chapter.
    let mut setup: Option<(&str, translation::Setup)> = None;
    // Completion per source token: what this campaign's accepted replies measured, in the
    // model's own tokens (the median; the high end takes the learned bound's quantile), else
    // the table.
    let learned = s.figure(Agent::Translation);
    let ratio = learned.map_or_else(
        || completion_ratio(&p.source_lang, &p.target_lang),
        |f| f.median,
    );
    let high_factor = learned.map_or(1.0, |f| (f.per_token / f.median.max(1e-9)).max(1.0));
    let (mut done, mut todo) = (0usize, 0usize);
    // The chapters with prose units, and (below) the same for the units a model translates
    // (not from the translation memory).
    let mut chapters: std::collections::BTreeSet<&str> = Default::default();
    let mut paid_chapters: std::collections::BTreeSet<&str> = Default::default();
    // For the range: prompt tokens a prefix cache would serve (low end), and what revisions of
    // every Translation call would add (high end).
    let caching = p
        .pricing
        .as_ref()
        .is_some_and(|pr| pr.cached_input_per_million.is_some());
    let mut previous_prefix: Option<Vec<String>> = None;
    let mut cached_low = 0u64;
    let mut revision = AgentEstimate::default();
    let mut review_costs: BTreeMap<String, Vec<ReviewCost>> = BTreeMap::new();
    for (i, u) in c.units.iter().enumerate() {
        if !u.kind.needs_translation() {
            continue;
        }
        if setup.as_ref().is_none_or(|(ch, _)| *ch != u.chapter) {
            setup = Some((
                u.chapter.as_str(),
                setup_for(c, brief.as_deref(), &u.chapter),
            ));
        }
        // What block memory and the seeds leave to send ([`to_send`]): the unit's source,
        // the blocks no memory holds, or nothing.
        let sent = to_send(c, s, i);
        let text = sent.as_deref().unwrap_or(c.source_text(u));
        let entries = c.prompt_entries(termbase, text);
        let req = translation::build_request_with_context(
            &setup.as_ref().expect("set above").1,
            &entries,
            text,
            None,
            c.context_for(u).as_deref(),
        );
        let prompt = req.prompt_tokens_with(c.tokens()) as u64;
        let completion = (c.tokens().count(text) as f64 * ratio) as u64;
        // A unit the translation memory holds costs no Translation call, and adds nothing to
        // the review budget, which is a share of the prompt tokens the translations cost
        // (`Manager::select_for_review`): a chapter all from memory is not proofread unless
        // the share is 1 or more.
        let from_memory = c.memory.lookup_joined(text).is_some()
            || s.is_memory_hit(&u.id)
            || sent.as_deref().is_some_and(|t| t.trim().is_empty());
        // The stable prefix: what a provider cache may serve, and what the review leaves out.
        let stable = if p.full_glossary_prompt { 2 } else { 1 };
        let prefix: Vec<String> = req
            .messages
            .iter()
            .take(stable)
            .map(|m| m.content.clone())
            .collect();
        let prefix_tokens = c.tokens().count_messages(prefix.iter().map(String::as_str)) as u64;
        if !from_memory {
            total
                .entry(Agent::Translation)
                .or_default()
                .add(1, prompt, completion);
            revision.add(1, prompt + completion + FINDINGS_TOKENS, completion);
            if caching
                && previous_prefix.as_ref() == Some(&prefix)
                && prefix_tokens >= CACHE_MIN_TOKENS
            {
                cached_low += prefix_tokens / CACHE_INCREMENT * CACHE_INCREMENT;
            }
            previous_prefix = Some(prefix);
        }
        review_costs
            .entry(u.chapter.clone())
            .or_default()
            .push(ReviewCost {
                cost: prompt.saturating_sub(prefix_tokens) + completion + 20,
                prompt,
                paid: !from_memory,
                glossary_lines: entries
                    .iter()
                    .map(|e| format!("- {} → {}\n", e.source, e.target))
                    .collect(),
            });
        chapters.insert(u.chapter.as_str());
        if !from_memory {
            paid_chapters.insert(u.chapter.as_str());
        }
        let translated = s
            .fp(&u.id)
            .is_some_and(|fp| s.is_done(&translate_key(fp, 0)));
        if translated {
            done += 1;
        } else if from_memory {
            todo += 1;
        } else {
            todo += 1;
            remaining
                .entry(Agent::Translation)
                .or_default()
                .add(1, prompt, completion);
        }
    }

    TranslationTally {
        done,
        todo,
        chapters: chapters.len(),
        paid_chapters: paid_chapters.len(),
        review_costs,
        cached_low,
        revision,
        high_factor,
    }
}

/// The Proofreading agent's calls: the review budget plus each batch's instructions (one
/// batch per chapter at least).
fn proofreading_calls(
    c: &Campaign,
    s: &State,
    tr: &TranslationTally,
    total: &mut BTreeMap<Agent, AgentEstimate>,
    remaining: &mut BTreeMap<Agent, AgentEstimate>,
) {
    let p = &c.plan;
    // `proofread_share = 0` (the default since finding 21): the run reads nothing, so
    // nothing is counted (regression test `plan_counted_proofreading_with_proofreading_off`).
    if !p.proofreads() {
        return;
    }
    let todo = tr.todo;
    let instructions = crate::tokens::count_messages([
        proofreading::system_prompt(&p.source_lang, &p.target_lang).as_str(),
        "Glossary (required renderings):\n",
    ]) as u64;
    let share = p.proofread_share.min(1.0);
    // A share of 1 or more reviews every unit; below it, a chapter's budget comes from the
    // translations a model made (regression test
    // `plan_counted_proofreading_for_a_campaign_all_from_memory`).
    let (batches, reviewed) = if p.proofread_share >= 1.0 {
        (tr.chapters as u64, reviewed_within_budgets(tr, None))
    } else {
        (
            tr.paid_chapters as u64,
            reviewed_within_budgets(tr, Some(share)),
        )
    };
    let proof_prompt = reviewed + batches * instructions;
    total
        .entry(Agent::Proofreading)
        .or_default()
        .add(batches, proof_prompt, batches * 40);
    if todo > 0
        || batches > 0
            && !s
                .finished()
                .keys()
                .any(|k| matches!(CallKey::parse(k), CallKey::Proofread { .. }))
    {
        remaining
            .entry(Agent::Proofreading)
            .or_default()
            .add(batches, proof_prompt, batches * 40);
    }
}

/// The review tokens the Manager's selection reads, chapter by chapter as
/// `Manager::select_for_review` chooses. With a share below 1 (`Some(share)`), a chapter's
/// budget is `share` × the prompt tokens its model-made translations cost; its first unit is
/// read whenever there is a budget (the selection's best unit, unknown before the run: the
/// first in book order stands for it), then the others while they fit. `None`: every unit.
/// Each unit counts its review cost; each chapter adds the glossary lines of the units read,
/// once each. An upper bound: the selection skips units with QA errors, unknown before the
/// run ([`crate::campaign::core::manager::ReviewRule::PerChapter`]).
fn reviewed_within_budgets(tr: &TranslationTally, share: Option<f64>) -> u64 {
    let mut total = 0u64;
    for units in tr.review_costs.values() {
        let read: Vec<&ReviewCost> = match share {
            None => units.iter().collect(),
            Some(share) => {
                let paid: Vec<&ReviewCost> = units.iter().filter(|u| u.paid).collect();
                let budget = (paid.iter().map(|u| u.prompt).sum::<u64>() as f64 * share) as u64;
                let mut spent = 0u64;
                let mut read = Vec::new();
                for (k, u) in paid.into_iter().enumerate() {
                    if budget > 0 && (k == 0 || spent + u.cost <= budget) {
                        spent += u.cost;
                        read.push(u);
                    }
                }
                read
            }
        };
        let lines: std::collections::BTreeSet<&str> = read
            .iter()
            .flat_map(|u| u.glossary_lines.iter().map(String::as_str))
            .collect();
        total += read.iter().map(|u| u.cost).sum::<u64>()
            + lines
                .iter()
                .map(|l| crate::tokens::count(l) as u64)
                .sum::<u64>();
    }
    total
}

/// One Manager decision with a model (see the module docs): counted per revision round at
/// the range's high end only.
fn manager_decision(s: &State, m: &Manager) -> AgentEstimate {
    let ctx = m.context(s).tokens() as u64;
    AgentEstimate {
        calls: 1,
        prompt_tokens: crate::tokens::count_messages([manager_agent::SYSTEM_PROMPT]) as u64
            + ctx
            + FINDINGS_TOKENS,
        completion_tokens: SHORT_ANSWER_TOKENS,
    }
}

/// The low and high estimate of the whole campaign per agent (see the module docs): low
/// with the prefix cache's reads, high with the learned completion bound and every
/// Translation and Proofreading call made again in each revision round.
fn cost_range(
    c: &Campaign,
    total: &BTreeMap<Agent, AgentEstimate>,
    tr: &TranslationTally,
    decision: &AgentEstimate,
) -> BTreeMap<Agent, CostRange> {
    let p = &c.plan;
    let (revision, high_factor, cached_low) = (tr.revision, tr.high_factor, tr.cached_low);
    let rounds_u = p.revision_rounds as u64;
    let priced = |e: &AgentEstimate, cached: u64| RangeEnd {
        calls: e.calls,
        prompt_tokens: e.prompt_tokens,
        cached_tokens: cached.min(e.prompt_tokens),
        completion_tokens: e.completion_tokens,
        cost: p
            .pricing
            .as_ref()
            .map(|pr| pr.cost(e.prompt_tokens, cached, e.completion_tokens)),
    };
    total
        .iter()
        .map(|(a, t)| {
            let mut high = *t;
            match a {
                Agent::Translation => {
                    high.completion_tokens = (high.completion_tokens as f64 * high_factor) as u64;
                    for _ in 0..rounds_u {
                        high.add(
                            revision.calls,
                            revision.prompt_tokens,
                            revision.completion_tokens,
                        );
                    }
                }
                Agent::Proofreading => {
                    for _ in 0..rounds_u {
                        high.add(t.calls, t.prompt_tokens, t.completion_tokens);
                    }
                }
                // Without proofreading nothing is advisory: every decision is local.
                Agent::Manager if p.proofreads() => {
                    for _ in 0..rounds_u {
                        high.add(
                            decision.calls,
                            decision.prompt_tokens,
                            decision.completion_tokens,
                        );
                    }
                }
                _ => {}
            }
            let cached = if *a == Agent::Translation {
                cached_low
            } else {
                0
            };
            (
                *a,
                CostRange {
                    low: priced(t, cached),
                    high: priced(&high, 0),
                },
            )
        })
        .collect()
}

/// Completion tokens the estimate assumes for one Proofreading batch, Manager decision or
/// terminology reconciliation (short JSON answers).
pub const SHORT_ANSWER_TOKENS: u64 = 40;

/// The estimate of one prepared request, by the same rules as [`estimate`] (for the budget
/// cap): one call, the request's exact prompt tokens (`o200k_base`, counted
/// with the campaign's memo), and completion tokens by kind: a translation or revision ≈ its
/// source tokens × [`completion_ratio`], a Glossary batch [`GLOSSARY_TOKENS_PER_CANDIDATE`]
/// per candidate, the brief [`crate::agents::brief::expected_tokens`], anything else
/// [`SHORT_ANSWER_TOKENS`]. No cache hit is assumed.
pub fn job_estimate(c: &Campaign, job: &super::jobs::Job) -> AgentEstimate {
    use super::jobs::JobKind;
    let p = &c.plan;
    let prompt = job.request.prompt_tokens_with(c.tokens()) as u64;
    let completion = match &job.kind {
        JobKind::Translation { source, .. } => {
            (c.tokens().count(source) as f64 * completion_ratio(&p.source_lang, &p.target_lang))
                as u64
        }
        JobKind::Glossary { asked } => asked.len() as u64 * GLOSSARY_TOKENS_PER_CANDIDATE,
        JobKind::Brief => crate::agents::brief::expected_tokens(c.chapters.len()) as u64,
        _ => SHORT_ANSWER_TOKENS,
    };
    AgentEstimate {
        calls: 1,
        prompt_tokens: prompt,
        completion_tokens: completion,
    }
}

/// The source text a first translation of unit `i` would send when block memory or the
/// seeds hold some of its blocks ([`crate::campaign::core::blocks`]): the blocks they do not
/// hold, joined (empty when they hold every one); `None` when they hold none (the whole unit
/// is sent). Before the first run (no termbase yet) only the seeds count.
fn to_send(c: &Campaign, s: &State, i: usize) -> Option<String> {
    use crate::campaign::core::blocks::{Planned, cores};
    let u = &c.units[i];
    if s.fp(&u.id)
        .is_some_and(|fp| s.is_done(&translate_key(fp, 0)))
    {
        return None;
    }
    let source = c.source_text(u);
    let plan = match s.reuse_plan(c, i) {
        Some(p) => p,
        None if !c.seeds.is_empty() => crate::campaign::core::blocks::Plan {
            blocks: cores(source)
                .into_iter()
                .map(|b| {
                    if !crate::campaign::core::pieces::needs_model(b) {
                        Planned::Copy
                    } else if let Some((t, _)) = c.seeds.lookup(b) {
                        Planned::Found {
                            text: t.to_string(),
                            origin: crate::campaign::core::blocks::BlockOrigin::Seed,
                        }
                    } else {
                        Planned::Translate { reference: None }
                    }
                })
                .collect(),
        },
        None => return None,
    };
    if !plan.reuses() {
        return None;
    }
    Some(
        plan.runs(source)
            .into_iter()
            .filter(|(_, sent)| *sent)
            .map(|(r, _)| &source[r])
            .collect(),
    )
}
