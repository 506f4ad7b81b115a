//! From an [`Action`] to a request (pure: [`prepare`]) and from the provider's answer to a
//! [`ResultFile`] ([`execute`]). Structured agents get one schema-repair request when their
//! answer is not JSON, then a safe empty default, and the event is kept in the result's stats.
//!
//! Every request carries a `max_tokens` derived from what it asks for
//! ([`crate::agents::bounds`], capped by the campaign's `max_tokens`). A reply the stream reader
//! stops as a runaway ([`LlmError::Runaway`]: it repeated itself or outgrew that bound) is a
//! failed attempt, never an answer: it is retried once at a lower temperature
//! ([`crate::llm::runaway::retry_temperature`]); if that runs away too (or the temperature
//! cannot be lowered), the call fails as `truncated`, so a first translation is split in two
//! like one that did not fit. Each runaway is returned as a [`RunawayRecord`] for the journal.

use std::time::Instant;

use serde_json::{Value, json};

use super::fingerprint::STATE_SCHEMA_VERSION;
use super::manager::{Action, Manager};
use super::state::{RunawayRecord, State};
use super::store::{Output, ResultFile};
use crate::agents::glossary::{self, Candidate};
use crate::agents::json::{self, ParseStats};
use crate::agents::{
    Agent, bounds, manager as manager_agent, proofreading, reconcile, translation,
};
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
    /// The largest `max_tokens` a truncated translation may be retried with: the campaign's
    /// `max_output_tokens` (the model's output limit), else its `max_tokens`. The retry is made
    /// once, if the first request (bounded by [`crate::agents::bounds`]) asked for less.
    pub max_output_tokens: Option<u32>,
    /// The request's prompt tokens (`o200k_base`) when [`prepare`] had to count them (a
    /// request whose bytes exceed the context budget); 0 when not counted yet, in which case
    /// [`execute_noting`] counts them while the answer is awaited. They are read when the
    /// answer's usage is checked for a truncated prompt.
    pub prompt_tokens: usize,
    /// The campaign's token counter (its memo knows the prompt's stable prefix), for that
    /// later count; `None` before [`prepare`].
    pub counter: Option<crate::tokens::Counter>,
}

/// Why a job was not sent.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PrepareError {
    #[error(
        "the request would need {tokens} prompt tokens, over max_context_tokens = {budget}; nothing was sent. Lower max_unit_chars or raise max_context_tokens in the campaign file."
    )]
    OverBudget { tokens: usize, budget: usize },
}

/// A failed call.
#[derive(Debug, Clone)]
pub struct JobFailure {
    pub error: String,
    pub attempts: u32,
    /// No other call can succeed either (bad key, unknown model): stop scheduling.
    pub fatal: bool,
    /// The translation did not fit the model's output (or input) limit: split the unit.
    pub truncated: bool,
    /// Tokens already paid for answers that were then rejected (truncated, empty, runaway).
    pub usage: Usage,
    /// The model answered, and the answer could not be used as a translation (empty after
    /// clean-up, or its placeholders duplicated or unknown): the provider works, the model
    /// failed this text. Recorded in [`super::store::Event::CallFailed`].
    pub unusable: bool,
}

/// Builds the job for `action` from the current state.
pub fn prepare(m: &Manager, s: &State, action: &Action) -> Result<Job, PrepareError> {
    let c = m.campaign;
    let p = &c.plan;
    let call = action.call_key(c);
    // Glossary entries plus reconciled ones: every request uses the book's current terminology.
    let termbase = s.effective_termbase();
    let job = match action {
        Action::GlossaryBatch { n, .. } => {
            let asked = m.glossary_batches[*n].1.clone();
            Job {
                call,
                max_output_tokens: p.provider.max_output_tokens,
                prompt_tokens: 0,
                counter: None,
                agent: Agent::Glossary,
                unit: None,
                request: glossary::build_request(&p.source_lang, &p.target_lang, &c.house, &asked),
                kind: JobKind::Glossary { asked },
            }
        }
        Action::Brief { .. } => Job {
            call,
            max_output_tokens: None,
            prompt_tokens: 0,
            counter: None,
            agent: Agent::Glossary,
            unit: None,
            request: m.brief.1.clone(),
            kind: JobKind::Brief,
        },
        Action::Translate { unit, round, .. } => {
            let u = &c.units[*unit];
            let entries = c.prompt_entries(termbase, c.source_text(u));
            // HTML comments never reach the model as text (see agents::mask).
            let mask = crate::agents::mask::mask_for(
                c.source_text(u),
                crate::book::mdx::is_mdx(&c.chapter(&u.chapter).rel_path),
            );
            let source = mask.text.clone();
            let revision = (*round > 0).then(|| {
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
                    .map(|ctx| {
                        crate::agents::mask::strip_for(
                            &ctx,
                            crate::book::mdx::is_mdx(&c.chapter(&u.chapter).rel_path),
                        )
                    })
                    .as_deref(),
            );
            let fuzzy = super::memory::fuzzy(c, u);
            let refs: Vec<(u8, &str, &str)> = fuzzy
                .iter()
                .map(|f| (f.percent, f.source.as_str(), f.target.as_str()))
                .collect();
            translation::add_fuzzy_references(&mut request, &refs);
            mask.instruct(&mut request);
            Job {
                call,
                max_output_tokens: p.provider.max_output_tokens,
                prompt_tokens: 0,
                counter: None,
                agent: Agent::Translation,
                unit: Some(u.id.clone()),
                request,
                kind: JobKind::Translation {
                    round: *round,
                    source,
                    mask,
                },
            }
        }
        Action::Proofread { round, units, .. } => {
            let mut items = Vec::new();
            let mut joined_source = String::new();
            for id in units {
                let Some(u) = c.unit(id) else { continue };
                let Some((_, target)) = s.kept_translation(id, *round) else {
                    continue;
                };
                let source = c.source_text(u);
                joined_source.push_str(source);
                items.push(proofreading::ReviewItem {
                    unit: &u.id,
                    source,
                    target,
                    findings: s
                        .kept_findings(id, *round)
                        .iter()
                        .filter(|f| crate::qa::style::in_prompts(f))
                        .map(|f| f.line())
                        .collect(),
                });
            }
            let entries = termbase.relevant_to(&joined_source);
            Job {
                call,
                max_output_tokens: p.provider.max_output_tokens,
                prompt_tokens: 0,
                counter: None,
                agent: Agent::Proofreading,
                unit: None,
                request: proofreading::build_request(
                    &p.source_lang,
                    &p.target_lang,
                    &entries,
                    &items,
                ),
                kind: JobKind::Proofread {
                    round: *round,
                    units: units.clone(),
                },
            }
        }
        Action::Decide { round, .. } => {
            let forced = m.forced(s, *round);
            let (findings, candidates) = findings_summary(m, s, *round, &forced);
            let ctx = m.context(s).to_json();
            Job {
                call,
                max_output_tokens: p.provider.max_output_tokens,
                prompt_tokens: 0,
                counter: None,
                agent: Agent::Manager,
                unit: None,
                request: manager_agent::build_request(&ctx, &findings.to_string()),
                kind: JobKind::Decide {
                    round: *round,
                    forced,
                    candidates,
                },
            }
        }
        Action::TranslatePart { unit, part, range } => {
            let u = &c.units[*unit];
            let text = &c.source_text(u)[range.clone()];
            let entries = c.prompt_entries(termbase, text);
            let mdx = crate::book::mdx::is_mdx(&c.chapter(&u.chapter).rel_path);
            // A stuck unit's piece (issue 18) goes out with its inline markup masked and
            // without the brief: see `pieces::is_piece_part`.
            let piece = super::pieces::is_piece_part(part);
            let mask = if piece {
                crate::agents::mask::mask_markup_for(text, mdx)
            } else {
                crate::agents::mask::mask_for(text, mdx)
            };
            let brief = if piece { "" } else { s.brief_text() };
            let source = mask.text.clone();
            let mut request = translation::build_request(
                &c.translation_setup_for(brief, &u.chapter),
                &entries,
                &source,
                None,
            );
            mask.instruct(&mut request);
            Job {
                call,
                max_output_tokens: p.provider.max_output_tokens,
                prompt_tokens: 0,
                counter: None,
                agent: Agent::Translation,
                unit: Some(part.clone()),
                request,
                kind: JobKind::Translation {
                    round: 0,
                    source,
                    mask,
                },
            }
        }
        Action::Reconcile {
            round, conflict, ..
        } => {
            let contexts: Vec<reconcile::Context> = conflict
                .examples
                .iter()
                .filter_map(|id| {
                    let u = c.unit(id)?;
                    let (_, target) = s.kept_translation(id, *round)?;
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
            Job {
                call,
                max_output_tokens: None,
                prompt_tokens: 0,
                counter: None,
                agent: Agent::Glossary,
                unit: None,
                request: reconcile::build_request(
                    &p.source_lang,
                    &p.target_lang,
                    &conflict.term,
                    &conflict.renderings,
                    &contexts,
                ),
                kind: JobKind::Reconcile {
                    round: *round,
                    term: conflict.term.clone(),
                    renderings: conflict.renderings.clone(),
                },
            }
        }
        Action::MergeGlossary
        | Action::WriteOutputs
        | Action::JoinParts { .. }
        | Action::SplitStuck { .. }
        | Action::JoinPieces { .. }
        | Action::WriteDesk => {
            unreachable!("local actions have no job")
        }
    };
    let mut job = job;
    // The bound of what the request asks for (see `agents::bounds`).
    let bound = match &job.kind {
        JobKind::Translation { source, .. } => {
            bounds::translation_of(source, &p.source_lang, &p.target_lang)
        }
        JobKind::Glossary { asked } => bounds::glossary(asked.len()),
        JobKind::Proofread { units, .. } => bounds::proofreading(units.len()),
        JobKind::Decide { candidates, .. } => bounds::decision(candidates.len()),
        JobKind::Reconcile { .. } => bounds::RECONCILE_MAX_TOKENS,
        JobKind::Brief => job
            .request
            .max_tokens
            .unwrap_or(crate::agents::brief::BRIEF_TOKENS),
    };
    job.request.max_tokens = Some(bounds::capped(bound, p.provider.max_tokens));
    if matches!(job.kind, JobKind::Translation { .. }) {
        job.max_output_tokens = p.provider.max_output_tokens.or(p.provider.max_tokens);
    }
    // A request whose bytes fit the budget fits it in tokens ([`crate::tokens::bound_messages`]):
    // it is counted later, off the run loop, while its answer is awaited ([`execute_noting`]).
    // Counting every unit's prompt here, between two requests, held up the refill of the
    // slots (issue 15, "close to the bound").
    let budget = c.shares().request;
    let contents = || job.request.messages.iter().map(|m| m.content.as_str());
    if crate::tokens::bound_messages(contents()) > budget {
        let tokens = job.request.prompt_tokens_with(c.tokens());
        if tokens > budget {
            return Err(PrepareError::OverBudget { tokens, budget });
        }
        job.prompt_tokens = tokens;
    }
    job.counter = Some(c.tokens().clone());
    Ok(job)
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

/// Most advisory candidates shown to the Manager in one decision (keeps its prompt bounded).
pub const MAX_DECISION_CANDIDATES: usize = 40;

/// The findings summary for the Manager's decision of `round`, and the candidate unit ids:
/// units the reviewer flagged (issues or revision requests) that are not already forced.
fn findings_summary(m: &Manager, s: &State, round: u32, forced: &[String]) -> (Value, Vec<String>) {
    let mut flagged: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    let mut summaries = Vec::new();
    for report in m.proof_reports(s, round) {
        if !report.summary.is_empty() {
            summaries.push(crate::util::excerpt(&report.summary, 200));
        }
        for i in &report.issues {
            flagged
                .entry(i.unit.clone())
                .or_default()
                .push(json!({"type": i.kind, "detail": crate::util::excerpt(&i.detail, 160)}));
        }
        for u in &report.units_need_revision {
            flagged.entry(u.clone()).or_default();
        }
    }
    let candidates: Vec<String> = flagged
        .keys()
        .filter(|u| !forced.contains(u))
        .take(MAX_DECISION_CANDIDATES)
        .cloned()
        .collect();
    let shown: Vec<Value> = candidates
        .iter()
        .map(|u| json!({"unit": u, "issues": flagged[u]}))
        .collect();
    let forced_shown: Vec<Value> = forced
        .iter()
        .take(10)
        .map(|u| json!({"unit": u, "checks": s.kept_findings(u, round).iter().filter(|f| crate::qa::style::in_prompts(f)).map(|f| f.check.clone()).collect::<Vec<_>>()}))
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
/// reviewer's issues, then the Manager's reason.
pub fn feedback_for(m: &Manager, s: &State, unit: &str, round: u32) -> Vec<String> {
    let kept_text = s.kept_translation(unit, round).map_or("", |t| t.1);
    // Issue 17: a finding the editor dismissed on this text is not fed back.
    let kept =
        super::marks::review_unit(m.campaign, s, unit, kept_text, s.kept_findings(unit, round));
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
            super::state::score(s.findings_at(unit, latest)).0,
            checks.join(", ")
        ));
    }
    for report in m.proof_reports(s, round) {
        lines.extend(
            report
                .issues
                .iter()
                .filter(|i| i.unit == unit)
                .map(|i| format!("{}: {}", i.kind, i.detail)),
        );
    }
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
    JobFailure {
        fatal: e.is_fatal_for_campaign(),
        truncated: matches!(e, LlmError::ContextLength(_)),
        error: e.to_string(),
        attempts: 0,
        usage: Usage::default(),
        unusable: false,
    }
}

/// Sends the job and turns the answer into a result file. Never panics on bad answers.
pub async fn execute(provider: &Provider, job: Job) -> Result<ResultFile, JobFailure> {
    execute_noting(provider, job).await.0
}

/// [`execute`], also returning the runaway replies met on the way (for the journal).
pub async fn execute_noting(
    provider: &Provider,
    job: Job,
) -> (Result<ResultFile, JobFailure>, Vec<RunawayRecord>) {
    let started = Instant::now();
    let mut notes = Vec::new();
    let mut job = job;
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
    let (answer, prompt_tokens) = tokio::join!(
        complete_bounded(provider, &job, &job.request, &mut notes),
        count
    );
    job.prompt_tokens = prompt_tokens;
    let result = match answer {
        Ok(answer) => finish_noting(provider, job, answer, started, &mut notes).await,
        Err(f) => Err(f),
    };
    (result, notes)
}

/// Sends `req` (the job's request or a follow-up of it); a runaway reply is noted and retried
/// once at a lower temperature (see the module docs). The retry's answer carries the runaway's
/// usage and request too: they were billed.
async fn complete_bounded(
    provider: &Provider,
    job: &Job,
    req: &Request,
    notes: &mut Vec<RunawayRecord>,
) -> Result<Answer, JobFailure> {
    let (reason, spent) = match provider.complete(req).await {
        Ok(a) => return Ok(a),
        Err(LlmError::Runaway { reason, usage }) => (reason, usage),
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
    });
    let runaway_failure = |reason: &str, usage: Usage, attempts: u32| JobFailure {
        error: format!("runaway reply, not kept: {reason}"),
        attempts,
        fatal: false,
        // Like a reply that did not fit: a first translation is split in two.
        truncated: true,
        usage,
        unusable: false,
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
            a.usage.add(&spent);
            a.attempts += 1;
            Ok(a)
        }
        Err(LlmError::Runaway { reason, usage }) => {
            notes.push(RunawayRecord {
                call: job.call.clone(),
                agent: job.agent,
                unit: job.unit.clone(),
                reason: reason.clone(),
                usage,
                temperature: Some(t),
                retry_temperature: None,
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

/// Turns an answer to `job` (streamed, or from a batch) into a result file: the same checks,
/// clean-up and follow-up requests (a larger `max_tokens` after truncation, one schema repair)
/// whichever way the answer came. `started` is when the call began (for `elapsed_ms`).
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
    let mut usage = answer.usage;
    let mut attempts = answer.attempts;
    let mut requests = answer.attempts;
    let prompt_tokens = if job.prompt_tokens > 0 {
        job.prompt_tokens
    } else {
        job.request.prompt_tokens_estimate()
    };
    if let Some(error) =
        crate::qa::prompt_usage::truncated(prompt_tokens, answer.usage.prompt_tokens)
    {
        // A smaller unit may fit the server's context: a Translation is split like one cut
        // at its output limit.
        return Err(JobFailure {
            error,
            attempts,
            fatal: false,
            truncated: matches!(job.kind, JobKind::Translation { .. }),
            usage,
            unusable: false,
        });
    }
    let output = match &job.kind {
        JobKind::Translation {
            round,
            source,
            mask,
        } => {
            let mut answer = answer.clone();
            if answer.finish_reason.as_deref() == Some("length") {
                let asked = job.request.max_tokens;
                if let Some(cap) = job
                    .max_output_tokens
                    .filter(|cap| asked.is_none_or(|a| a < *cap))
                {
                    tracing::info!(unit = ?job.unit, "truncated at {asked:?} tokens; retrying with max_tokens = {cap}");
                    let mut bigger = job.request.clone();
                    bigger.max_tokens = Some(cap);
                    let again = complete_bounded(provider, &job, &bigger, notes)
                        .await
                        .map_err(|mut f| {
                            f.usage.add(&usage);
                            f.attempts += attempts;
                            f
                        })?;
                    usage.add(&again.usage);
                    attempts += again.attempts;
                    requests += again.attempts;
                    answer = again;
                }
            }
            if answer.finish_reason.as_deref() == Some("length") {
                return Err(JobFailure {
                    error: "the model stopped at its completion limit (finish_reason = length) even with the largest max_tokens allowed; the translation would be truncated, so it was not accepted".into(),
                    attempts,
                    fatal: false,
                    truncated: true,
                    usage,
                    unusable: false,
                });
            }
            let (text, mut cleanup) = translation::postprocess(source, &answer.content);
            // Every masked span comes back once: a look-alike placeholder counts, a lost one
            // is left out for QA and the repair (recorded in the cleanup); a duplicated or
            // unknown placeholder fails the attempt.
            let (text, lost) = mask.recover(&text).map_err(|e| JobFailure {
                error: e.to_string(),
                attempts,
                fatal: false,
                truncated: false,
                usage,
                unusable: true,
            })?;
            cleanup.placeholders_lost = lost;
            if text.trim().is_empty() && !source.trim().is_empty() {
                return Err(JobFailure {
                    error: "the translation was empty after clean-up".into(),
                    attempts,
                    fatal: false,
                    truncated: false,
                    usage,
                    unusable: true,
                });
            }
            Output::Translation {
                round: *round,
                text,
                cleanup,
                reasoning_chars: answer.reasoning.chars().count(),
                joined_from: Vec::new(),
            }
        }
        JobKind::Brief => {
            let text = crate::agents::brief::clean(&answer.content);
            if text.trim().is_empty() {
                return Err(JobFailure {
                    error: "the brief was empty".into(),
                    attempts,
                    fatal: false,
                    truncated: false,
                    usage,
                    unusable: false,
                });
            }
            Output::Brief { text }
        }
        kind => {
            let (value, mut stats, extra) =
                structured(provider, &job, &job.request, &answer, notes).await;
            if let Some(extra) = extra {
                usage.add(&extra.usage);
                attempts += extra.attempts;
                requests += extra.attempts;
            }
            match kind {
                JobKind::Glossary { asked } => {
                    let terms: Vec<String> = asked.iter().map(|c| c.term.clone()).collect();
                    let (entries, s) = glossary::parse(&value, &terms);
                    merge_stats(&mut stats, s);
                    Output::GlossaryBatch {
                        asked: asked.clone(),
                        entries,
                        stats,
                    }
                }
                JobKind::Proofread { round, units } => {
                    let ids: Vec<&str> = units.iter().map(String::as_str).collect();
                    let (report, s) = proofreading::parse(&value, &ids);
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
                    let (decision, s) = manager_agent::parse(&value, &ids);
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
                    let (choice, s) = reconcile::parse(&value, term, renderings);
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
                JobKind::Translation { .. } | JobKind::Brief => unreachable!(),
            }
        }
    };
    let output_sha256 = ResultFile::output_hash(&output);
    Ok(ResultFile {
        schema_version: STATE_SCHEMA_VERSION,
        call: job.call,
        agent: job.agent,
        unit: job.unit,
        request_sha256: job.request.fingerprint(),
        usage,
        attempts,
        requests,
        model: answer.model.clone(),
        finish_reason: answer.finish_reason.clone(),
        elapsed_ms: started.elapsed().as_millis() as u64,
        output,
        output_sha256,
        origin: None,
    })
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
    match json::extract(&answer.content) {
        Ok(v) => (v, stats, None),
        Err(e) => {
            stats.repair(format!("answer was not JSON ({e}); asked once to reformat"));
            let repair = json::repair_request(req, &answer.content, &e.0);
            match complete_bounded(provider, job, &repair, notes)
                .await
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
