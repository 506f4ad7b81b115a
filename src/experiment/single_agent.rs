//! The baselines the design is measured against. Single-agent mode (`booktr run CAMPAIGN
//! --mode single-agent`) is the naive one. One agent, one ever-growing conversation: the system
//! prompt (the same rules and guide as the Translation agent, plus the house-style glossary),
//! then for each unit to translate, in book order, a user turn with the unit and an assistant
//! turn with its translation. No Glossary agent, no proofreading, no Manager, no revision, and
//! therefore no book brief (the Glossary stage writes it): the system prompt has the guide and
//! the house-style entries the campaign mandates, nothing the orchestration derived.
//!
//! - **Context**: every request carries the whole conversation so far, so its prompt grows
//!   with the book. Its size (`o200k_base`, as [`crate::tokens::count_messages`]) is recorded
//!   per call and its maximum is `main_context_peak_tokens`. When the next request would exceed
//!   `max_context_tokens` (or the provider refuses it as too long), the run stops and records
//!   [`Event::ContextExhausted`] ("context exhausted at unit N"), an outcome of the baseline
//!   rather than an API error.
//! - **A failed unit**: a call that fails (after the provider's attempts) or an answer that
//!   cannot be taken (empty after clean-up, cut before its first block) is recorded as
//!   [`Event::CallFailed`], the unit stays untranslated (named in [`Summary::failed`], status
//!   `incomplete`) and the conversation goes on with the next unit without it: one bad unit
//!   does not cost the baseline the rest of the book (a weak model's repetition at one unit
//!   used to leave every later unit untranslated, which measured the stop, not the model).
//! - **A runaway reply** (the stream reader stopped it as repeating itself,
//!   [`crate::llm::runaway`]): what came before the repetition, first copy included, is kept
//!   as a reply cut there, with its last block taken as whole; the rest of the unit, if any, is
//!   sent as the next user message, as for a cut reply. The runaway is journaled
//!   ([`Event::RunawayReply`]). Only when nothing before the repetition matches the source's
//!   blocks does the unit fail.
//! - **Checkpoints**: its own state directory `<state_dir>/single-agent/<config key>/` (mode
//!   `single-agent` is part of the configuration and of the campaign fingerprint), with the same
//!   atomic result files and append-only journal as the main mode ([`crate::campaign::core::store`]).
//!   Each turn's call key chains the conversation: `single/<unit id>-<16 hex>` where the hex is
//!   a sha256 over the previous turn's key, its translation and this unit's source. On resume
//!   the conversation is rebuilt by following that chain from the system prompt: at each step
//!   the first unit (in book order) not yet in it whose turn under the current link was saved
//!   (so turns after a failed unit, which the conversation skipped, are found; saved turns of
//!   another conversation are not used); a finished turn is never sent again. The units left
//!   (never reached, or failed) are then sent in book order at the end of the rebuilt
//!   conversation: a re-run retries a failed unit there.
//! - **Outputs**: complete chapters go to `<out_dir>/single-agent/`.
//!
//! **The stateless loop** (`booktr run CAMPAIGN --mode stateless-loop`, [`Baseline::StatelessLoop`])
//! is the other baseline, the one a user writes instead of booktr: the same units in book
//! order, each in a request of its own holding the system prompt (the same rules, guide and
//! house-style entries, told that each request is one part of the book) and the unit, nothing
//! carried from one unit to the next. Everything above holds for it, with its own state and
//! outputs under `stateless-loop/`; its turns are keyed by the system prompt and their unit
//! alone, so a resume finds every finished unit whatever failed before it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::agents::Agent;
use crate::agents::translation::{self, Setup};
use crate::campaign::Campaign;
use crate::campaign::core::commit;
use crate::campaign::core::fingerprint::STATE_SCHEMA_VERSION;
use crate::campaign::core::state::{AgentUsage, State};
use crate::campaign::core::store::{self, Event, Existing, Output, ResultFile, Store, now_ms};
use crate::campaign::ops::runner::RunOptions;
use crate::llm::{LlmError, Message, Provider, Request};
use crate::termbase::Termbase;

/// Version of the single-agent prompt; part of its fingerprint.
pub const SINGLE_AGENT_PROMPT_VERSION: &str = "2026-11-30.1";

/// Phrase of both baselines' system prompts (the pseudo provider and the fake server recognise
/// a baseline's request by it).
pub const MARKER: &str = "one part at a time";

/// The two baselines the orchestration is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// One agent in one growing conversation (`--mode single-agent`): every request carries
    /// every turn so far.
    Conversation,
    /// What a user writes instead (`--mode stateless-loop`): each unit in a request of its own,
    /// the same system prompt (guide and house glossary) every time, nothing carried from one
    /// unit to the next. No Glossary agent, QA, repair or revision either.
    StatelessLoop,
}

impl Baseline {
    /// The mode's name in state, outputs and reports.
    pub fn mode(self) -> &'static str {
        match self {
            Baseline::Conversation => MODE,
            Baseline::StatelessLoop => LOOP_MODE,
        }
    }
}

/// The stateless loop's mode name.
pub const LOOP_MODE: &str = "stateless-loop";

/// Header of the house-style glossary at the end of the system prompt.
pub const GLOSSARY_HEADER: &str = "House-style glossary (use exactly these renderings):";

/// The mode's name in state and reports.
pub const MODE: &str = "single-agent";

/// A baseline's campaign: `c` with the baseline's mode (`single-agent`, `stateless-loop`), its
/// own prompt version, state under `<state_dir>/<mode>/` and outputs under `<out_dir>/<mode>/`.
pub fn campaign(c: &Campaign, baseline: Baseline) -> Campaign {
    let mode = baseline.mode();
    let mut sc = c.clone();
    sc.plan.state_dir = c.plan.state_dir.join(mode);
    sc.plan.out_dir = c.plan.out_dir.join(mode);
    sc.manifest.mode = mode.into();
    sc.manifest.prompt_version = format!("{mode}/{SINGLE_AGENT_PROMPT_VERSION}");
    sc.fingerprint = sc.manifest.fingerprint();
    sc.config = crate::campaign::core::ConfigPrint::of(&sc.manifest);
    sc
}

/// The system prompt: the Translation agent's rules and guide, told how the units come (one by
/// one in this conversation, or one per request), and the house-style entries (the campaign's
/// mandated terms).
pub fn system_prompt(setup: &Setup, house: &Termbase, baseline: Baseline) -> String {
    let mut s = match baseline {
        Baseline::Conversation => format!(
            "You are translating a whole book from {src} into {tgt}, {MARKER}, in this conversation: each user message is the next part of the book, in order. Reply to each with its translation only, and keep terms, names and style consistent with everything you translated before in this conversation.\n\n{rules}",
            src = setup.source.name,
            tgt = setup.target.name,
            rules = translation::system_prompt(setup),
        ),
        Baseline::StatelessLoop => format!(
            "You are translating a book from {src} into {tgt}, {MARKER}: the user message is one part of the book. Reply with its translation only.\n\n{rules}",
            src = setup.source.name,
            tgt = setup.target.name,
            rules = translation::system_prompt(setup),
        ),
    };
    let mut entries: Vec<&crate::termbase::Entry> = house.entries.iter().collect();
    entries.sort_by_key(|e| crate::termbase::term_key(&e.source));
    if !entries.is_empty() {
        s.push_str(&format!("\n\n{GLOSSARY_HEADER}\n"));
        for e in entries {
            s.push_str(&format!("- {} → {}\n", e.source, e.target));
        }
    }
    s
}

/// Whether `req` is a single-agent conversation.
pub fn is_conversation(req: &Request) -> bool {
    req.messages
        .first()
        .is_some_and(|m| m.content.contains(MARKER))
}

/// The (source, target) pairs of the house-style glossary in a single-agent system prompt.
pub fn glossary_of(req: &Request) -> Vec<(String, String)> {
    req.messages
        .first()
        .and_then(|m| m.content.split_once(GLOSSARY_HEADER))
        .map(|(_, g)| translation::parse_glossary_message(g))
        .unwrap_or_default()
}

/// Prompt tokens of one message in a request (content plus the per-message overhead), so a
/// growing conversation is counted incrementally.
fn message_tokens(content: &str) -> usize {
    crate::tokens::count(content) + crate::tokens::PER_MESSAGE_OVERHEAD
}

/// The chained key of a turn (see the module docs): sha256 over the previous link and this
/// unit's source.
fn link(previous: &str, part: &str) -> String {
    crate::util::sha256_hex(serde_json::to_vec(&[previous, part]).expect("json"))
}

/// One turn of the conversation: the translation of a unit, however many requests it took.
struct Turn {
    text: String,
    cleanup: translation::Cleanup,
    reasoning_chars: usize,
    usage: crate::llm::Usage,
    attempts: u32,
    model: Option<String>,
    finish_reason: Option<String>,
    request_sha256: String,
    long: crate::llm::continuation::LongStats,
    /// The turn's length as a sample for the learned bounds (one request, not cut).
    sample: Option<crate::agents::bounds::Sample>,
    /// Blocks kept from a cut reply the provider could not continue (the rest was asked for in
    /// a follow-up message of the same conversation).
    kept_blocks: Option<usize>,
    /// Replies of the turn the runaway guard stopped, each kept up to where its repetition
    /// began: (why, what it cost); journaled as [`Event::RunawayReply`].
    runaways: Vec<(String, crate::llm::Usage)>,
}

/// Why a turn failed.
enum TurnError {
    Llm(LlmError),
    /// The model answered and the answer could not be taken: `why`, with what it cost.
    Rejected {
        why: String,
        attempts: u32,
        usage: crate::llm::Usage,
    },
}

/// Translates `source` as the next turn of the conversation `base` (its messages so far, its
/// bounds). A reply cut at `max_tokens` is continued where the provider can; where it cannot,
/// the part that ends on a block boundary is kept as an assistant turn and the rest of the
/// source is sent as the next user message of the same conversation, so the baseline never
/// stops at a long reply and never pays twice for what it received.
async fn translate_turn(
    provider: &Provider,
    base: &Request,
    source: &str,
) -> Result<Turn, TurnError> {
    let mut req = base.clone();
    req.messages.push(Message::user(source));
    let request_sha256 = req.fingerprint();
    let mut remaining = source;
    let mut text = String::new();
    let mut cleanup = translation::Cleanup::default();
    let mut turn_usage = crate::llm::Usage::default();
    let (mut attempts, mut reasoning_chars, mut model) = (0, 0, None);
    let mut finish;
    let mut long = crate::llm::continuation::LongStats::default();
    let (mut kept_blocks, mut requests) = (None::<usize>, 0u32);
    let mut sample = None;
    let mut runaways = Vec::new();
    loop {
        // A reply the runaway guard stopped is kept up to where its repetition began, as a
        // reply cut there (issue 31, finding 20: the 1.5B translated a unit, then wrote the
        // translation again five times; the first copy was a whole translation).
        let (answer, l) = match crate::llm::continuation::complete_continued(provider, &req).await {
            Ok(x) => x,
            Err(LlmError::Runaway {
                reason,
                usage,
                before,
            }) if !before.trim().is_empty() => {
                runaways.push((reason, usage));
                let answer = crate::llm::Answer {
                    content: before,
                    finish_reason: Some("length".into()),
                    usage,
                    attempts: 1,
                    ..Default::default()
                };
                let l = crate::llm::continuation::LongStats {
                    ended_by_runaway: true,
                    ..Default::default()
                };
                (answer, l)
            }
            Err(LlmError::Runaway { reason, usage, .. }) => {
                turn_usage.add(&usage);
                return Err(TurnError::Rejected {
                    why: format!("runaway reply: {reason}"),
                    attempts: attempts + 1,
                    usage: turn_usage,
                });
            }
            Err(e) => return Err(TurnError::Llm(e)),
        };
        requests += 1;
        turn_usage.add(&answer.usage);
        attempts += answer.attempts;
        reasoning_chars += answer.reasoning.chars().count();
        long.continuations += l.continuations;
        long.usage.add(&l.usage);
        long.restarted |= l.restarted;
        long.ended_by_runaway |= l.ended_by_runaway;
        model = answer.model.clone().or(model);
        finish = answer.finish_reason.clone();
        let (piece, c) = translation::postprocess(remaining, &answer.content);
        let cut = answer.finish_reason.as_deref() == Some("length");
        if !cut {
            if piece.trim().is_empty() && !remaining.trim().is_empty() {
                return Err(TurnError::Rejected {
                    why: "the translation was empty after clean-up".into(),
                    attempts,
                    usage: turn_usage,
                });
            }
            if requests == 1 {
                sample = Some(crate::agents::bounds::Sample {
                    basis_tokens: crate::tokens::count(source) as u64,
                    completion_tokens: answer.usage.completion_tokens,
                });
            }
            text.push_str(&piece);
            cleanup = c;
            break;
        }
        // The part before a repetition ends with its first copy, whose last block is whole
        // (a reply cut at max_tokens ends inside its last block, which `kept_prefix` leaves
        // out): a block after it lets `kept_prefix` keep that block too. The marker block is
        // never kept (it is the last).
        let piece = if l.ended_by_runaway {
            crate::llm::runaway::with_repetition_mark(&piece)
        } else {
            piece
        };
        let Some((source_end, target_end, blocks)) =
            crate::book::segment::kept_prefix(remaining, &piece)
        else {
            let why = match (l.ended_by_runaway, runaways.last()) {
                (true, Some((reason, _))) => format!(
                    "runaway reply: {reason}; nothing before the repetition ends on a block boundary"
                ),
                _ => "the reply reached max_tokens before its first block ended and the provider could not continue it; nothing of it could be kept".into(),
            };
            return Err(TurnError::Rejected {
                why,
                attempts,
                usage: turn_usage,
            });
        };
        let kept = &piece[..target_end];
        text.push_str(kept);
        *kept_blocks.get_or_insert(0) += blocks;
        if source_end >= remaining.len() {
            break;
        }
        remaining = &remaining[source_end..];
        req.messages.push(Message::assistant(kept));
        req.messages.push(Message::user(remaining));
    }
    Ok(Turn {
        text,
        cleanup,
        reasoning_chars,
        usage: turn_usage,
        attempts,
        model,
        finish_reason: finish,
        request_sha256,
        long,
        sample,
        kept_blocks,
        runaways,
    })
}

/// How a single-agent run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every unit translated, chapters written.
    Complete,
    /// The conversation outgrew `max_context_tokens`: the run stopped (recorded).
    ContextExhausted,
    /// A unit failed (the conversation went on without it, see [`Summary::failed`]); a re-run
    /// retries it at the end of the conversation.
    Incomplete,
    /// Stopped by a signal; a re-run resumes.
    Interrupted,
}

/// Where the conversation ran out of room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Exhaustion {
    pub unit: String,
    /// 1-based position among the units to translate.
    pub index: usize,
    /// Prompt tokens the next request would have needed (0 when the provider refused it).
    pub tokens: usize,
    pub budget: usize,
    pub reason: String,
}

impl Exhaustion {
    /// "context exhausted at unit N (id): …".
    pub fn message(&self) -> String {
        format!(
            "context exhausted at unit {} ({}): {}",
            self.index, self.unit, self.reason
        )
    }
}

/// Unit counts of a single-agent run (units to translate only).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Units {
    /// Units to translate.
    pub total: usize,
    pub translated: usize,
    /// Translated by an earlier run (rebuilt from the checkpoint, not sent again).
    pub reused: usize,
    /// Verbatim and front-matter units (copied).
    pub copied: usize,
    /// Units whose call failed in this run (left untranslated).
    pub failed: usize,
}

/// A unit whose turn failed: the conversation went on without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedUnit {
    pub unit: String,
    /// 1-based position among the units to translate.
    pub index: usize,
    pub error: String,
}

/// The `--json` summary of a single-agent run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub campaign: String,
    /// Always `single-agent`.
    pub mode: &'static str,
    /// The single-agent campaign fingerprint (mode included).
    pub fingerprint: String,
    pub status: Status,
    pub rehearsal: bool,
    pub units: Units,
    pub exhausted: Option<Exhaustion>,
    /// Units whose turn failed in this run, in book order (untranslated; the run went on).
    pub failed: Vec<FailedUnit>,
    /// Largest prompt sent, in `o200k_base` tokens: the whole conversation at its longest.
    pub main_context_peak_tokens: usize,
    pub usage: BTreeMap<Agent, AgentUsage>,
    pub out_dir: String,
    pub state_dir: String,
    pub last_error: Option<String>,
}

/// What [`run`] ends with.
pub struct SingleRun {
    pub summary: Summary,
    /// Unit id → translation, for the units of the conversation.
    pub translations: BTreeMap<String, String>,
    pub state: State,
    /// The single-agent campaign (state and output paths).
    pub campaign: Campaign,
}

/// Runs (or resumes) the single-agent conversation over `c`'s units.
///
/// Errors: the state cannot be opened (another configuration's state without `--fresh` or
/// `--retranslate`, lock held) or written.
pub async fn run(
    c: &Campaign,
    provider: Arc<Provider>,
    opts: RunOptions,
    baseline: Baseline,
) -> anyhow::Result<SingleRun> {
    let sc = campaign(c, baseline);
    let mut session = Session::open(&sc, &provider, &opts)?;
    session.baseline = baseline;
    let units: Vec<&crate::book::Unit> = sc.prose_units().collect();
    let mut conv = Conversation::new(
        system_prompt(&sc.translation_setup(), &sc.house, baseline),
        baseline == Baseline::StatelessLoop,
    );
    let done = conv.rebuild(&sc, &units, &session.state);
    let reused = conv.translations.len();
    let previous_exhaustion = last_exhaustion(&session.store.dir)?;
    let outcome = session
        .converse(&mut conv, &units, &done, provider.as_ref())
        .await?;
    let status = session.finish(&outcome, previous_exhaustion, &conv.translations)?;
    let summary = session.summary(status, outcome, &units, &conv.translations, reused);
    Ok(SingleRun {
        summary,
        translations: conv.translations,
        state: session.state,
        campaign: sc,
    })
}

/// The conversation so far: its messages, their tokens, the link of its last turn and the
/// translations of its turns.
struct Conversation {
    /// The stateless loop's: turns are not carried into the next request.
    stateless: bool,
    messages: Vec<Message>,
    /// Prompt tokens of `messages` (`o200k_base`), reply priming included.
    tokens: usize,
    /// The chain link of the last turn (see the module docs).
    chain: String,
    /// Unit id → translation.
    translations: BTreeMap<String, String>,
}

impl Conversation {
    /// A conversation holding only the `system` prompt.
    fn new(system: String, stateless: bool) -> Conversation {
        Conversation {
            stateless,
            tokens: message_tokens(&system) + crate::tokens::REPLY_PRIMING,
            chain: link(SINGLE_AGENT_PROMPT_VERSION, &system),
            messages: vec![Message::system(system)],
            translations: BTreeMap::new(),
        }
    }

    /// The call key of unit `u`'s turn (its `source`) as the next turn of this conversation.
    fn key(&self, u: &crate::book::Unit, source: &str) -> String {
        crate::campaign::core::CallKey::SingleAgent {
            unit: u.id.clone(),
            link: link(&self.chain, source)[..16].to_string(),
        }
        .to_string()
    }

    /// Appends the turn `key` of unit `unit`: its `source` and translation `text`.
    /// In the stateless loop nothing is carried: the next request holds the system prompt
    /// and its own unit, and every turn's key is chained to the system prompt alone.
    fn push(&mut self, key: &str, unit: &str, source: &str, text: String) {
        if !self.stateless {
            self.tokens += message_tokens(source) + message_tokens(&text);
            self.messages.push(Message::user(source));
            self.messages.push(Message::assistant(text.clone()));
            self.chain = link(key, &text);
        }
        self.translations.insert(unit.to_string(), text);
    }

    /// Rebuilds the conversation by following its chain through `state`'s finished turns (see
    /// the module docs): O(units²) link hashes at most, each over one unit's source. Returns
    /// which of `units` it holds; warns of saved turns outside it.
    fn rebuild(&mut self, sc: &Campaign, units: &[&crate::book::Unit], state: &State) -> Vec<bool> {
        let mut used_keys = std::collections::HashSet::new();
        let mut done = vec![false; units.len()];
        loop {
            let found = units
                .iter()
                .enumerate()
                .filter(|(i, _)| !done[*i])
                .find_map(|(i, u)| {
                    let source = sc.source_text(u);
                    let key = self.key(u, source);
                    match state.finished().get(&key).map(|r| &r.output) {
                        Some(Output::Translation { text, .. }) => {
                            Some((i, key, source, text.clone()))
                        }
                        _ => None,
                    }
                });
            let Some((i, key, source, text)) = found else {
                break;
            };
            self.push(&key, &units[i].id, source, text);
            used_keys.insert(key);
            done[i] = true;
        }
        let reused = self.translations.len();
        let unused = state
            .finished()
            .keys()
            .filter(|k| k.starts_with("single/") && !used_keys.contains(*k))
            .count();
        if unused > 0 {
            eprintln!(
                "warning: {unused} saved turn(s) are not part of the conversation rebuilt from the checkpoint ({reused} turns; those belong to another conversation and are kept as history)"
            );
        }
        done
    }
}

/// How the turns of a run ended.
struct Outcome {
    status: Status,
    exhausted: Option<Exhaustion>,
    failed: Vec<FailedUnit>,
}

/// A single-agent run's campaign, open state and run id.
struct Session<'a> {
    sc: &'a Campaign,
    baseline: Baseline,
    store: Store,
    state: State,
    run_id: String,
}

impl<'a> Session<'a> {
    /// Opens the state of `sc` as `opts` says and records the start of the run.
    fn open(sc: &'a Campaign, provider: &Provider, opts: &RunOptions) -> anyhow::Result<Self> {
        let existing = if opts.fresh {
            Existing::MoveAside
        } else if opts.retranslate {
            Existing::KeepBeside
        } else {
            Existing::Refuse
        };
        let mut store = Store::open_for_run(sc, existing)?;
        let run_id = format!("{}-{}", now_ms(), std::process::id());
        let mut state = State::load(sc, &store.dir, &run_id)?;
        for w in state.take_warnings() {
            eprintln!("warning: {w}");
        }
        commit::journal_adopted(&mut store, &mut state)?;
        if provider.is_rehearsal() {
            eprintln!(
                "REHEARSAL: the offline pseudo provider is answering; outputs are pseudo-translations, not translations."
            );
        }
        let mut session = Session {
            sc,
            baseline: Baseline::Conversation,
            store,
            state,
            run_id,
        };
        session.record(Event::RunStarted {
            run: session.run_id.clone(),
            pid: std::process::id(),
            provider: sc.plan.provider.kind.as_str().into(),
            model: sc.plan.provider.model.clone(),
            fingerprint: sc.fingerprint.clone(),
        })?;
        Ok(session)
    }

    /// Records `event` in the journal and the state.
    fn record(&mut self, event: Event) -> anyhow::Result<()> {
        commit::record_event(self.sc, &mut self.store, &mut self.state, event)?;
        Ok(())
    }

    /// Translates the `units` not `done`, one turn each, until the last, the context budget or
    /// a signal.
    async fn converse(
        &mut self,
        conv: &mut Conversation,
        units: &[&crate::book::Unit],
        done: &[bool],
        provider: &Provider,
    ) -> anyhow::Result<Outcome> {
        let sc = self.sc;
        let mut status = Status::Complete;
        let mut exhausted = None;
        let mut shutdown = Box::pin(crate::campaign::ops::runner::shutdown_signal());
        let budget = sc.plan.max_context_tokens;
        let mut failed: Vec<FailedUnit> = Vec::new();
        for (i, u) in units.iter().enumerate().filter(|(i, _)| !done[*i]) {
            let source = sc.source_text(u);
            let key = conv.key(u, source);
            let prompt_tokens = conv.tokens + message_tokens(source);
            let exhaust = |tokens: usize, reason: String| Exhaustion {
                unit: u.id.clone(),
                index: i + 1,
                tokens,
                budget,
                reason,
            };
            if prompt_tokens > budget {
                exhausted = Some(exhaust(
                    prompt_tokens,
                    format!(
                        "the conversation would need {prompt_tokens} prompt tokens, over max_context_tokens = {budget}"
                    ),
                ));
                break;
            }
            self.store.append(Event::CallStarted {
                call: key.clone(),
                agent: Agent::Translation,
                unit: Some(u.id.clone()),
            })?;
            let req = self.request(&conv.messages, source);
            let started = std::time::Instant::now();
            let turn = tokio::select! {
                t = translate_turn(provider, &req, source) => t,
                _ = &mut shutdown => {
                    status = Status::Interrupted;
                    break;
                }
            };
            let turn = match turn {
                Ok(t) => t,
                Err(TurnError::Llm(LlmError::ContextLength(msg))) => {
                    exhausted = Some(exhaust(
                        0,
                        format!("the provider refused the conversation as too long: {msg}"),
                    ));
                    break;
                }
                Err(TurnError::Llm(e)) => {
                    failed.push(self.fail(&key, u, i, e.to_string(), 0, Default::default())?);
                    continue;
                }
                Err(TurnError::Rejected {
                    why,
                    attempts,
                    usage,
                }) => {
                    failed.push(self.fail(&key, u, i, why, attempts, usage)?);
                    continue;
                }
            };
            for (reason, usage) in &turn.runaways {
                self.record(Event::RunawayReply {
                    call: key.clone(),
                    agent: Agent::Translation,
                    unit: Some(u.id.clone()),
                    reason: reason.clone(),
                    usage: *usage,
                    temperature: provider.temperature(),
                    retry_temperature: None,
                    kept: true,
                })?;
                eprintln!(
                    "unit {} ({}): runaway reply: {reason}; kept what came before the repetition",
                    i + 1,
                    u.id
                );
            }
            let text = self.record_turn(&key, u, turn, started, prompt_tokens)?;
            conv.push(&key, &u.id, source, text);
        }
        if !failed.is_empty() && status == Status::Complete {
            status = Status::Incomplete;
        }
        Ok(Outcome {
            status,
            exhausted,
            failed,
        })
    }

    /// The request of the next turn: the conversation's `messages` and the user message
    /// `source`, with the learned and capped `max_tokens` and the ceiling.
    fn request(&self, messages: &[Message], source: &str) -> Request {
        let sc = self.sc;
        let tokens_src = crate::tokens::count(source);
        let bound = crate::agents::bounds::learned_translation(
            tokens_src,
            &sc.plan.source_lang,
            &sc.plan.target_lang,
            self.state.figure(Agent::Translation),
        );
        let mut req = Request::new(Agent::Translation.into(), messages.to_vec());
        req.max_tokens = Some(crate::agents::bounds::capped(
            crate::agents::bounds::capped(bound, sc.plan.provider.max_output_tokens),
            sc.plan.provider.max_tokens,
        ));
        req.ceiling_tokens = Some(crate::agents::bounds::ceiling(
            tokens_src,
            &sc.plan.source_lang,
            &sc.plan.target_lang,
        ));
        req
    }

    /// Records the failed turn `key` of unit `u` (the `i`th, 0-based): the conversation goes
    /// on without it.
    fn fail(
        &mut self,
        key: &str,
        u: &crate::book::Unit,
        i: usize,
        error: String,
        attempts: u32,
        usage: crate::llm::Usage,
    ) -> anyhow::Result<FailedUnit> {
        self.record(Event::CallFailed {
            call: key.to_string(),
            agent: Agent::Translation,
            unit: Some(u.id.clone()),
            run: self.run_id.clone(),
            error: error.clone(),
            attempts,
            usage,
            unusable: false,
        })?;
        eprintln!(
            "failed at unit {} ({}): {error}; going on without it",
            i + 1,
            u.id
        );
        Ok(FailedUnit {
            unit: u.id.clone(),
            index: i + 1,
            error,
        })
    }

    /// Records `turn` as the result of call `key` (unit `u`, started at `started`, its prompt
    /// `prompt_tokens` long); returns its translation.
    fn record_turn(
        &mut self,
        key: &str,
        u: &crate::book::Unit,
        turn: Turn,
        started: std::time::Instant,
        prompt_tokens: usize,
    ) -> anyhow::Result<String> {
        let (text, cleanup) = (turn.text, turn.cleanup);
        let output = Output::Translation {
            round: 0,
            text: text.clone(),
            cleanup,
            reasoning_chars: turn.reasoning_chars,
            joined_from: Vec::new(),
        };
        let result = ResultFile {
            schema_version: STATE_SCHEMA_VERSION,
            origin: None,
            call: key.to_string(),
            agent: Agent::Translation,
            unit: Some(u.id.clone()),
            request_sha256: turn.request_sha256,
            usage: turn.usage,
            attempts: turn.attempts,
            requests: turn.attempts,
            model: turn.model,
            finish_reason: turn.finish_reason,
            elapsed_ms: started.elapsed().as_millis() as u64,
            output_sha256: ResultFile::output_hash(&output),
            output,
            long: (turn.long.continuations > 0).then_some(turn.long),
            sample: turn.sample,
            kept_blocks: turn.kept_blocks,
        };
        commit::record_result(self.sc, &mut self.store, &mut self.state, result, |_| {
            prompt_tokens
        })?;
        Ok(text)
    }

    /// Records how the run ended (the context exhaustion once per place and budget, the
    /// interruption, or the outputs written from `translations`); returns the final status.
    fn finish(
        &mut self,
        outcome: &Outcome,
        previous_exhaustion: Option<(String, usize)>,
        translations: &BTreeMap<String, String>,
    ) -> anyhow::Result<Status> {
        let mut status = outcome.status;
        if let Some(x) = &outcome.exhausted {
            status = Status::ContextExhausted;
            // Recorded once per place and budget: a resume that stops at the same unit adds nothing.
            if previous_exhaustion.as_ref() != Some(&(x.unit.clone(), x.budget)) {
                self.store.append(Event::ContextExhausted {
                    run: self.run_id.clone(),
                    unit: x.unit.clone(),
                    index: x.index,
                    tokens: x.tokens,
                    budget: x.budget,
                    reason: x.reason.clone(),
                })?;
            }
            eprintln!("{}", x.message());
        }
        if status == Status::Interrupted {
            self.store.append(Event::RunInterrupted {
                run: self.run_id.clone(),
            })?;
        } else {
            let files = write_outputs(self.sc, translations)?;
            self.record(Event::OutputsWritten { files })?;
            self.store.append(Event::RunFinished {
                run: self.run_id.clone(),
                status: serde_json::to_value(status)?
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            })?;
        }
        Ok(status)
    }

    /// The run's `--json` summary.
    fn summary(
        &self,
        status: Status,
        outcome: Outcome,
        units: &[&crate::book::Unit],
        translations: &BTreeMap<String, String>,
        reused: usize,
    ) -> Summary {
        let sc = self.sc;
        let mut usage = BTreeMap::new();
        usage.insert(
            Agent::Translation,
            self.state
                .usage()
                .get(&Agent::Translation)
                .copied()
                .unwrap_or_default(),
        );
        Summary {
            campaign: sc.plan.name.clone(),
            mode: self.baseline.mode(),
            fingerprint: sc.fingerprint.clone(),
            status,
            rehearsal: sc.plan.is_rehearsal(),
            units: Units {
                total: units.len(),
                translated: translations.len(),
                reused,
                copied: sc.units.len() - units.len(),
                failed: outcome.failed.len(),
            },
            exhausted: outcome.exhausted,
            failed: outcome.failed,
            main_context_peak_tokens: self.state.ctx_peak(),
            usage,
            out_dir: sc.plan.rel(&sc.plan.out_dir),
            state_dir: sc.plan.rel(&self.store.dir),
            last_error: self.state.last_error(),
        }
    }
}

/// (unit, budget) of the last recorded context exhaustion, if any.
fn last_exhaustion(dir: &std::path::Path) -> anyhow::Result<Option<(String, usize)>> {
    Ok(store::read_journal(dir)?
        .0
        .into_iter()
        .rev()
        .find_map(|r| match r.event {
            Event::ContextExhausted { unit, budget, .. } => Some((unit, budget)),
            _ => None,
        }))
}

/// The text of chapter `key` from single-agent translations (verbatim units copied), or `None`
/// when a unit to translate has none.
pub fn chapter_text(
    c: &Campaign,
    translations: &BTreeMap<String, String>,
    key: &str,
) -> Option<String> {
    let mut out = String::new();
    for u in c.units_of(key) {
        if u.kind.needs_translation() {
            out.push_str(translations.get(&u.id)?);
        } else {
            out.push_str(c.source_text(u));
        }
    }
    Some(out)
}

/// Writes every complete chapter to `<out_dir>/single-agent/`; returns (relative path, sha256).
fn write_outputs(
    sc: &Campaign,
    translations: &BTreeMap<String, String>,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for ch in &sc.chapters {
        if let Some(text) = chapter_text(sc, translations, &ch.key) {
            let path = sc.plan.out_dir.join(&ch.file_name);
            crate::util::write_atomic(&path, text.as_bytes())?;
            files.push((sc.plan.rel(&path), crate::util::sha256_hex(text.as_bytes())));
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::termbase::{Entry, Origin};

    #[test]
    fn system_prompt_carries_the_house_glossary_and_the_marker() {
        let setup = Setup {
            source: Lang::parse("en"),
            target: Lang::parse("zh"),
            guide: translation::default_guide(&Lang::parse("zh")),
            review_marker: "[待审]".into(),
            brief: String::new(),
            code_comments: Default::default(),
            chapter_brief: String::new(),
            example: None,
        };
        let house = Termbase::from_entries([Entry {
            source: "context window".into(),
            target: "上下文窗口".into(),
            note: String::new(),
            origin: Origin::HouseStyle,
            forbidden: Vec::new(),
            variants: Vec::new(),
        }]);
        let req = Request {
            task: Agent::Translation.into(),
            messages: vec![
                Message::system(system_prompt(&setup, &house, Baseline::Conversation)),
                Message::user("The context window."),
            ],
            json_schema: None,
            max_tokens: None,
            ceiling_tokens: None,
            prefill: None,
        };
        assert!(is_conversation(&req));
        assert_eq!(
            glossary_of(&req),
            vec![("context window".to_string(), "上下文窗口".to_string())]
        );
    }

    #[test]
    fn message_tokens_add_up_to_the_request_estimate() {
        let msgs = ["system text", "user one", "assistant one", "user two"];
        let incremental: usize =
            msgs.iter().map(|m| message_tokens(m)).sum::<usize>() + crate::tokens::REPLY_PRIMING;
        assert_eq!(incremental, crate::tokens::count_messages(msgs));
    }
}
