//! The one write protocol of a campaign: how a fact reaches the state directory and the
//! in-memory [`State`]. Every writer uses it: the runner and batch mode (model answers, memory
//! hits, joined parts), the experiment's arms and judge, imports (XLIFF edits, TMX memory) and
//! hand edits found in output chapters.
//!
//! A finished call ([`record_result`]) is committed in this order:
//!
//! 1. its **result file** is written atomically (temp file, `sync_all`, rename, directory fsync:
//!    [`Store::write_result`]);
//! 2. the `call_finished` record is **applied** to the state under the sequence number the
//!    journal line will carry, and the context size in tokens is measured on the state that
//!    now holds the result (the line records that measurement, `ctx_tokens`);
//! 3. the **journal line** is appended (flushed and `sync_data`ed) before control returns.
//!
//! Step 2 only changes memory, so on disk the order is: result file, then its line. A crash
//! before step 1 loses nothing recorded (the call is made again); a crash after step 1 and before
//! step 3 leaves a result file without its line, which [`State::load`] adopts after checking its
//! hash and [`journal_adopted`] journals (`adopted: true`) at the next writer's start; a crash
//! during step 3 leaves a torn last line, ignored with a warning, and the file is adopted the
//! same way. The measurement is why the line is appended after the apply: `ctx_tokens` is a
//! fact about the state *with* the result.
//!
//! A result that is a sample of the model's reply lengths ([`ResultFile::sample`]) may change
//! what the campaign has learned of them; when it does, an `output_bound` line follows the
//! `call_finished` line ([`crate::agents::bounds::changed`]), so the figure every later request
//! is bounded by is a recorded fact, the same for a resumed run.
//!
//! Every other event ([`record_event`]) is appended first, then applied, and a human edit
//! ([`record_edit`]) writes its text file first, then its line, then applies it.
//!
//! The outcomes of calls and local actions are recorded here too, so that the runner and batch
//! mode record them the same way: a finished call ([`record_finished`]), a failed one
//! ([`record_failure`], which splits a unit that did not fit instead), the runaway replies
//! noted on the way ([`record_runaways`]), the stop of a run ([`record_stop`]), and the local
//! actions that only combine what is recorded ([`join_parts`], [`join_pieces`],
//! [`merge_glossary`]). What they print goes to the caller's `say` (the progress display).
//!
//! What it does not own: deciding what to record (the Manager, the runner, the importers) and
//! the file layout of the state directory ([`super::store`]).

use super::Campaign;
use super::manager::{Action, Manager};
use super::state::State;
use super::store::{Event, Output, Record, ResultFile, Store, now_ms};
use crate::termbase::{Entry, Termbase};

/// Commits the finished call `result` (see the module docs for the order): writes its result
/// file, applies it to `state`, measures `ctx_tokens(state)` (tokens of the context that the
/// caller tracks, e.g. the Manager's context; return a constant when it is known beforehand)
/// and appends the `call_finished` line with it. The line's `requests` and `usage` are the
/// result's. Returns the record appended.
///
/// Errors: I/O while writing the result file or the journal (the state directory is left as a
/// crash would leave it: recoverable on the next load), a state opened read-only.
pub fn record_result(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    result: ResultFile,
    ctx_tokens: impl FnOnce(&State) -> usize,
) -> anyhow::Result<Record> {
    let (file, sha256) = store.write_result(&result)?;
    let mut event = Event::CallFinished {
        call: result.call.clone(),
        agent: result.agent,
        unit: result.unit.clone(),
        file,
        sha256,
        usage: result.usage,
        requests: result.requests,
        ctx_tokens: 0,
        adopted: false,
    };
    let provisional = Record {
        seq: store.next_seq(),
        at_ms: now_ms(),
        event: event.clone(),
    };
    state.apply(c, &store.dir, &provisional, Some(result))?;
    let tokens = ctx_tokens(state);
    state.note_ctx_tokens(tokens);
    if let Event::CallFinished { ctx_tokens, .. } = &mut event {
        *ctx_tokens = tokens;
    }
    let agent = result_agent(&event);
    let rec = store.append(event)?;
    if let Some(agent) = agent
        && let Some(figure) = state.learned_figure(agent)
        && crate::agents::bounds::changed(state.figure(agent), &figure)
    {
        record_event(
            c,
            store,
            state,
            Event::OutputBound {
                agent,
                target_lang: c.plan.target_lang.code.clone(),
                figure,
            },
        )?;
    }
    Ok(rec)
}

/// The agent of a `call_finished` line that made a request.
fn result_agent(event: &Event) -> Option<crate::agents::Agent> {
    match event {
        Event::CallFinished {
            agent, requests, ..
        } if *requests > 0 => Some(*agent),
        _ => None,
    }
}

/// Commits an event that has no result file (a failure, a split, a gate, a run boundary…):
/// appends its journal line, then applies it to `state`. Returns the record.
///
/// Errors: I/O while appending; the record cannot be applied (a file it names cannot be read).
pub fn record_event(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    event: Event,
) -> anyhow::Result<Record> {
    let rec = store.append(event)?;
    state.apply(c, &store.dir, &rec, None)?;
    Ok(rec)
}

/// Commits a human edit of unit `unit` (fingerprint `fp`) with text `text`: writes the edit's
/// file, appends its `human_edit` line (`imported` when it came from a file such as an XLIFF,
/// not from a hand edit of an output chapter) and applies it (QA runs on the text as it is
/// applied). Returns the record.
///
/// Errors: I/O while writing the file or the journal.
pub fn record_edit(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    unit: &str,
    fp: &str,
    text: &str,
    imported: bool,
) -> anyhow::Result<Record> {
    let rec = if imported {
        store.record_imported_edit(unit, fp, text)?
    } else {
        store.record_human_edit(unit, fp, text)?
    };
    state.apply(c, &store.dir, &rec, None)?;
    Ok(rec)
}

/// Journals the result files [`State::load`] adopted (found without their journal line, e.g.
/// after a kill between writing a result and appending its line), with `adopted: true` and
/// `ctx_tokens` 0, so they are never lost. The state already holds them.
///
/// Errors: I/O while appending.
pub fn journal_adopted(store: &mut Store, state: &mut State) -> anyhow::Result<()> {
    for (call, file, sha256) in state.take_adopted() {
        let r = &state.finished()[&call];
        store.append(Event::CallFinished {
            call: call.clone(),
            agent: r.agent,
            unit: r.unit.clone(),
            file,
            sha256,
            usage: r.usage,
            requests: r.requests,
            ctx_tokens: 0,
            adopted: true,
        })?;
    }
    Ok(())
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
    /// The prompt did not fit the model's context window (a context-length error, or a prompt
    /// the server cut) or booktr's `max_context_tokens`: the remedy is a smaller unit or more
    /// context, never a larger `max_tokens`.
    pub context: bool,
    /// Tokens already paid for answers that were then rejected (truncated, empty, runaway).
    pub usage: crate::llm::Usage,
    /// The model answered, and the answer could not be used as a translation (empty after
    /// clean-up, or its placeholders duplicated or unknown): the provider works, the model
    /// failed this text. Recorded in [`super::store::Event::CallFailed`].
    pub unusable: bool,
    /// A translation cut at `max_tokens` that the provider could not continue: the part that
    /// ends on a block boundary, kept (`truncated` is set; the runner splits the unit there).
    pub kept: Option<KeptPart>,
}

/// The kept part of a cut translation (see [`JobFailure::kept`]).
#[derive(Debug, Clone, PartialEq)]
pub struct KeptPart {
    /// Byte offset in the job's source text (unmasked) where the kept translation's source
    /// ends: the start of its first block not kept.
    pub source_end: usize,
    /// Top-level blocks kept.
    pub blocks: usize,
    /// The translation of `source[..source_end]`, cleaned up and unmasked.
    pub text: String,
    pub model: Option<String>,
    /// Characters of reasoning received (the text is not kept).
    pub reasoning_chars: usize,
    /// Continuations made before the provider was found not to continue (part of `usage`).
    pub long: crate::llm::continuation::LongStats,
    /// The cut reply as a sample of the model's reply lengths: its completion tokens against
    /// the source it covered (the kept blocks; the unfinished block's share makes it err
    /// high, the safe side for a bound). Without it only the replies that fit would be
    /// learned from, and the bound would sink below the replies that did not.
    pub sample: Option<crate::agents::bounds::Sample>,
}

/// Journals the stop of the run after an error no other call can get past (see
/// [`Event::RunStopped`]): no further call is scheduled, the calls in flight may finish.
pub(in crate::campaign) fn record_stop(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    run_id: &str,
    error: &str,
    say: &dyn Fn(&str),
) -> anyhow::Result<()> {
    record_event(
        c,
        store,
        state,
        Event::RunStopped {
            run: run_id.to_string(),
            error: error.to_string(),
        },
    )?;
    say(&format!(
        "stopping: {error}\n  no further calls are sent (this error affects every call); finished work is saved. Fix it, then resume with `booktr run {}`",
        c.plan.campaign_file.display()
    ));
    Ok(())
}

/// Journals the runaway replies of a call (before its result or failure).
pub(in crate::campaign) fn record_runaways(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    notes: &[super::state::RunawayRecord],
    say: &dyn Fn(&str),
) -> anyhow::Result<()> {
    for n in notes {
        record_event(
            c,
            store,
            state,
            Event::RunawayReply {
                call: n.call.clone(),
                agent: n.agent,
                unit: n.unit.clone(),
                reason: n.reason.clone(),
                usage: n.usage,
                temperature: n.temperature,
                retry_temperature: n.retry_temperature,
                kept: n.kept,
            },
        )?;
        let then = match n.retry_temperature {
            Some(t) => format!("retrying once at temperature {t}"),
            None if n.kept => {
                "what came before the repetition covers every block of the unit and is kept as the answer"
                    .to_string()
            }
            None => "not kept".to_string(),
        };
        say(&format!(
            "runaway reply to {}: {}; {then}",
            n.call, n.reason
        ));
    }
    Ok(())
}

/// Records a finished call through the write protocol ([`record_result`]),
/// with the Manager context measured on the state that holds it.
pub(in crate::campaign) fn record_finished(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
    result: ResultFile,
) -> anyhow::Result<()> {
    record_result(c, store, state, result, |s| m.context(s).tokens())?;
    Ok(())
}

/// The unit id (or part id) a translation action is about.
pub(in crate::campaign) fn action_unit(c: &Campaign, action: &Action) -> Option<String> {
    match action {
        Action::Translate { unit, .. } => Some(c.units[*unit].id.clone()),
        Action::TranslatePart { part, .. } => Some(part.clone()),
        _ => None,
    }
}

/// Records a failed call. A first translation that did not fit the model's limits is split in
/// two instead (recorded as `unit_split`): at a block boundary when it has more than one block,
/// else at a sentence boundary of its one block ([`crate::book::sentences`]).
#[allow(clippy::too_many_arguments)]
pub(in crate::campaign) fn record_failure(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    action: &Action,
    call: &str,
    run_id: &str,
    f: &JobFailure,
    say: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let splittable = match action {
        Action::Translate { unit, fp, round: 0 } => {
            Some((fp.clone(), *unit, 0..c.source_text(&c.units[*unit]).len()))
        }
        Action::TranslatePart { unit, part, range } => Some((part.clone(), *unit, range.clone())),
        _ => None,
    };
    if let (Some(kept), Some((id, unit, range))) = (&f.kept, splittable.clone())
        && kept.source_end > 0
        && kept.source_end < range.len()
    {
        return record_kept_split(c, store, state, &id, unit, range, kept, f, say);
    }
    if f.truncated
        && let Some((id, unit, range)) = splittable.clone()
    {
        let text = &c.source_text(&c.units[unit])[range.clone()];
        // Between blocks when there are several, else between sentences of the one block.
        let cut = crate::book::segment::split_in_two(text)
            .map(|c| (c, "a block boundary"))
            .or_else(|| {
                crate::book::sentences::split_at_sentence(text).map(|c| (c, "a sentence boundary"))
            });
        if let Some((cut, at)) = cut {
            let mid = range.start + cut;
            record_event(
                c,
                store,
                state,
                Event::UnitSplit {
                    unit: c.units[unit].id.clone(),
                    key: id.clone(),
                    parts: vec![(range.start, mid), (mid, range.end)],
                    reason: f.error.clone(),
                    usage: f.usage,
                    requests: f.attempts,
                },
            )?;
            say(&format!("split {id} in two at {at}: {}", f.error));
            return Ok(());
        }
    }
    let error = if f.truncated && splittable.is_some() {
        // A prompt too large for the context is not helped by a larger reply limit.
        let remedy = if f.context {
            "give this model more context (a larger context window, and max_context_tokens with it), or translate it by hand"
        } else {
            "raise max_tokens (the reply limit) for this model, or translate it by hand"
        };
        format!(
            "{}; the text is a single block with a single sentence, so it cannot be split smaller: {remedy}",
            f.error
        )
    } else {
        f.error.clone()
    };
    record_event(
        c,
        store,
        state,
        Event::CallFailed {
            call: call.to_string(),
            agent: action.agent().expect("model call"),
            unit: action_unit(c, action),
            run: run_id.to_string(),
            error: error.clone(),
            attempts: f.attempts,
            usage: f.usage,
            unusable: f.unusable,
        },
    )?;
    say(&format!("failed {call}: {error}"));
    Ok(())
}

/// Records a cut translation whose part ending on a block boundary was kept
/// ([`KeptPart`]): the text `range` of unit `unit` (whose translation key is `id`)
/// is split where the kept part's source ends, and the kept part is recorded as the first
/// part's translation, with the whole reply's usage: nothing paid for is thrown away, and only
/// the rest of the text is asked for again.
///
/// Order on disk: the first part's result file, then the `unit_split` line, then the part's
/// `call_finished` line. A crash after the result file leaves it to be adopted; the call's
/// checkpoint ([`super::store::PartialReply`]) lets a resume redo the split without a request.
#[allow(clippy::too_many_arguments)]
fn record_kept_split(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    id: &str,
    unit: usize,
    range: std::ops::Range<usize>,
    kept: &KeptPart,
    f: &JobFailure,
    say: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let mid = range.start + kept.source_end;
    let part = format!("{id}.p1");
    let output = Output::Translation {
        round: 0,
        text: kept.text.clone(),
        cleanup: Default::default(),
        reasoning_chars: kept.reasoning_chars,
        joined_from: Vec::new(),
    };
    let result = ResultFile {
        schema_version: super::fingerprint::STATE_SCHEMA_VERSION,
        call: super::CallKey::translate(&part, 0).to_string(),
        agent: crate::agents::Agent::Translation,
        unit: Some(part.clone()),
        request_sha256: String::new(),
        usage: f.usage,
        attempts: f.attempts,
        requests: f.attempts.max(1),
        model: kept.model.clone(),
        finish_reason: Some("length".into()),
        elapsed_ms: 0,
        output_sha256: ResultFile::output_hash(&output),
        output,
        origin: None,
        long: (kept.long != Default::default()).then_some(kept.long),
        sample: kept.sample,
        kept_blocks: Some(kept.blocks),
    };
    store.write_result(&result)?;
    record_event(
        c,
        store,
        state,
        Event::UnitSplit {
            unit: c.units[unit].id.clone(),
            key: id.to_string(),
            parts: vec![(range.start, mid), (mid, range.end)],
            reason: f.error.clone(),
            // Paid for the kept part: counted with its result, not as rejected.
            usage: Default::default(),
            requests: 0,
        },
    )?;
    if !state.is_done(&result.call) {
        record_result(c, store, state, result, |_| 0)?;
    }
    say(&format!(
        "kept the first {} block(s) of {id}'s cut reply and split the rest off: {}",
        kept.blocks, f.error
    ));
    Ok(())
}

/// Joins the translated parts of a split unit into its round-0 translation (no model call).
pub(in crate::campaign) fn join_parts(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
    unit: usize,
) -> anyhow::Result<()> {
    let u = &c.units[unit];
    let fp = state
        .fp(&u.id)
        .expect("a split unit has a fingerprint")
        .to_string();
    let leaves = state.leaf_parts(&fp);
    let mut text = String::new();
    for (part, _) in &leaves {
        text.push_str(&state.part_translations()[part]);
    }
    let output = Output::Translation {
        round: 0,
        text,
        cleanup: Default::default(),
        reasoning_chars: 0,
        joined_from: leaves
            .iter()
            .map(|(p, _)| super::CallKey::translate(p, 0).to_string())
            .collect(),
    };
    let result = ResultFile::local(
        super::CallKey::translate(&fp, 0).to_string(),
        &u.id,
        output,
        None,
    );
    record_finished(c, m, store, state, result)
}

/// Joins the translated pieces of a stuck unit ([`super::pieces`]) into its
/// translation at `round` (no model call); QA checks it when it is recorded, and it competes
/// with the unit's earlier candidates.
pub(in crate::campaign) fn join_pieces(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
    unit: usize,
    fp: &str,
    round: u32,
) -> anyhow::Result<()> {
    let u = &c.units[unit];
    let source = c.source_text(u);
    let leaves = state.leaf_parts(&super::pieces::pieces_key(fp));
    let mut text = String::new();
    let mut joined_from = Vec::new();
    let mut cleanup = crate::agents::translation::Cleanup::default();
    for (part, range) in &leaves {
        // A piece the model was not asked for (nothing to translate, see
        // `pieces::needs_model`) or answered unusably in this run is its source's bytes; a
        // recorded answer always wins.
        match state.part_translations().get(part) {
            Some(t) => {
                text.push_str(t);
                joined_from.push(super::CallKey::translate(part, 0).to_string());
            }
            None => {
                let piece = &source[range.clone()];
                if super::pieces::needs_model(piece) {
                    cleanup.left_in_source.push(piece.to_string());
                }
                text.push_str(piece);
            }
        }
    }
    let output = Output::Translation {
        round,
        text,
        cleanup,
        reasoning_chars: 0,
        joined_from,
    };
    let result = ResultFile::local(
        super::CallKey::translate(fp, round).to_string(),
        &u.id,
        output,
        None,
    );
    record_finished(c, m, store, state, result)
}

/// Records the decision of `round` under `key` when there is nothing to decide
/// ([`super::manager::Action::DecideForced`]): the units QA errors send back are revised, no
/// advisory candidate exists, and no model is asked. The result file is the Manager's with no
/// request and zero usage, so reports, gates and resume read it as any decision.
///
/// Errors: as [`record_finished`].
pub(in crate::campaign) fn decide_forced(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
    round: u32,
    key: &super::CallKey,
) -> anyhow::Result<()> {
    let forced = m.forced(state, round);
    let summary = if c.plan.proofreads() {
        "Nothing to decide: the reviewer flagged no unit that QA errors do not already send back (decided without a model call)."
    } else {
        "Nothing to decide: proofreading is off (proofread_share = 0), so only QA errors send units back (decided without a model call)."
    };
    let output = Output::Decision {
        round,
        decision: crate::agents::manager::Decision {
            revise: Vec::new(),
            summary: summary.into(),
        },
        forced,
        candidates: Vec::new(),
        stats: Default::default(),
    };
    let mut result = ResultFile::local(key.to_string(), "", output, None);
    result.agent = crate::agents::Agent::Manager;
    result.unit = None;
    record_finished(c, m, store, state, result)
}

/// Merges the house-style entries with every glossary batch's entries (in batch order) and
/// records the termbase file.
pub(in crate::campaign) fn merge_glossary(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
) -> anyhow::Result<()> {
    // Agent entries in the order of the book's candidates (best first), each the newest
    // proposal for its term; terms no longer among the candidates drop out.
    let proposals = state.proposed_entries();
    let proposed: Vec<Entry> = m
        .candidates
        .iter()
        .filter_map(|cand| {
            proposals
                .get(&crate::termbase::term_key(&cand.term))
                .cloned()
        })
        .collect();
    let (tb, dropped) = Termbase::merge(&c.house, &proposed);
    // Nothing a model proposed is enforced unverified: agent entries failing a check leave.
    let (tb, rejected) = crate::termbase::vet::vet(&tb, &c.plan.target_lang);
    let mut bytes = serde_json::to_vec_pretty(&tb)?;
    bytes.push(b'\n');
    // A new file per merge: a recorded termbase is never rewritten.
    let rel = format!("results/glossary/termbase.{}.json", store.next_seq());
    let sha256 = store.write_file(&rel, &bytes)?;
    record_event(
        c,
        store,
        state,
        Event::GlossaryMerged {
            file: rel,
            sha256,
            entries: tb.len(),
            dropped_by_house: dropped,
            inputs: m.glossary_inputs.clone(),
            rejected,
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Agent;
    use crate::campaign::core::store::{Existing, Output, read_journal};
    use crate::config::{Overrides, Plan};

    /// A one-chapter rehearsal campaign in a temporary folder.
    fn campaign() -> (tempfile::TempDir, Campaign) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("campaign.toml"),
            "name = \"t\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = [\"a.md\"]\n[provider]\nkind = \"pseudo\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("a.md"),
            "# Tools\n\nAn agent calls a tool.\n",
        )
        .unwrap();
        let plan = Plan::load(&dir.path().join("campaign.toml"), &Overrides::default()).unwrap();
        (dir, Campaign::load(plan).unwrap())
    }

    /// A finished call of no model (a brief), enough to exercise the protocol.
    fn result(call: &str) -> ResultFile {
        let output = Output::Brief {
            text: "Audience: engineers.\n".into(),
        };
        ResultFile {
            schema_version: crate::campaign::core::fingerprint::STATE_SCHEMA_VERSION,
            call: call.into(),
            agent: Agent::Manager,
            unit: None,
            request_sha256: "r".into(),
            usage: crate::llm::Usage {
                prompt_tokens: 120,
                completion_tokens: 30,
                ..Default::default()
            },
            attempts: 1,
            requests: 1,
            model: Some("m".into()),
            finish_reason: Some("stop".into()),
            elapsed_ms: 5,
            output_sha256: ResultFile::output_hash(&output),
            output,
            origin: None,
            long: None,
            sample: None,
            kept_blocks: None,
        }
    }

    fn finished_lines(dir: &std::path::Path) -> Vec<Record> {
        read_journal(dir)
            .unwrap()
            .0
            .into_iter()
            .filter(|r| matches!(r.event, Event::CallFinished { .. }))
            .collect()
    }

    #[test]
    fn a_committed_result_is_journaled_with_the_context_measured_on_the_state_that_holds_it() {
        let (_d, c) = campaign();
        let mut store = Store::open_for_run(&c, Existing::Refuse).unwrap();
        let mut state = State::load(&c, &store.dir, "run-1").unwrap();
        let seq = store.next_seq();
        let rec = record_result(&c, &mut store, &mut state, result("brief/x"), |s| {
            // The measurement sees the result already applied.
            assert!(s.finished().contains_key("brief/x"));
            4321
        })
        .unwrap();
        assert_eq!(rec.seq, seq);
        let Event::CallFinished {
            ctx_tokens,
            requests,
            adopted,
            ref file,
            ..
        } = rec.event
        else {
            panic!("{rec:?}")
        };
        assert_eq!((ctx_tokens, requests, adopted), (4321, 1, false));
        assert_eq!(file, "results/brief/x.json");
        assert_eq!(state.ctx_peak(), 4321);
        assert_eq!(finished_lines(&store.dir), vec![rec]);
        drop(store);
        // A reload sees exactly the same: no adoption, same peak and usage.
        let dir = c.state_path();
        let again = State::load(&c, &dir, "run-2").unwrap();
        assert!(again.warnings().is_empty(), "{:?}", again.warnings());
        assert_eq!(again.ctx_peak(), 4321);
        assert_eq!(again.usage()[&Agent::Manager].prompt_tokens, 120);
        assert_eq!(again.brief_text(), "Audience: engineers.\n");
    }

    /// The crash points of the protocol, each simulated on disk, then the next writer's start:
    /// after the result file (no line), during the line (torn), and a journal that refuses the
    /// line (the store is read-only). Every one leaves the result recoverable: adopted on load,
    /// journaled once by [`journal_adopted`], never lost and never asked for again.
    #[test]
    fn a_crash_between_result_file_and_journal_line_leaves_the_result_adopted() {
        for crash in ["after_file", "torn_line", "append_refused"] {
            let (_d, c) = campaign();
            let dir = {
                let store = Store::open_for_run(&c, Existing::Refuse).unwrap();
                let r = result("brief/x");
                match crash {
                    "after_file" => {
                        store.write_result(&r).unwrap();
                    }
                    "torn_line" => {
                        store.write_result(&r).unwrap();
                        let mut j = std::fs::OpenOptions::new()
                            .append(true)
                            .open(store.dir.join("journal.jsonl"))
                            .unwrap();
                        std::io::Write::write_all(
                            &mut j,
                            b"{\"seq\":1,\"at_ms\":5,\"event\":\"call_fin",
                        )
                        .unwrap();
                    }
                    _ => {
                        // The same protocol against a store whose journal cannot be appended:
                        // the result file is on disk, its line is not.
                        let mut ro = Store::open_dir(&store.dir).unwrap();
                        let mut state = State::load(&c, &ro.dir, "run-1").unwrap();
                        let err = record_result(&c, &mut ro, &mut state, r, |_| 7).unwrap_err();
                        assert!(err.to_string().contains("read-only"), "{err:#}");
                    }
                }
                assert!(store.dir.join("results/brief/x.json").exists(), "{crash}");
                assert!(finished_lines(&store.dir).is_empty(), "{crash}");
                store.dir.clone()
            };
            let mut store = Store::open_for_run(&c, Existing::Refuse).unwrap();
            let mut state = State::load(&c, &dir, "run-2").unwrap();
            assert!(state.finished().contains_key("brief/x"), "{crash}");
            assert!(
                state
                    .warnings()
                    .iter()
                    .any(|w| w.contains("adopted result")),
                "{crash}: {:?}",
                state.warnings()
            );
            journal_adopted(&mut store, &mut state).unwrap();
            journal_adopted(&mut store, &mut state).unwrap();
            let lines = finished_lines(&dir);
            assert_eq!(lines.len(), 1, "{crash}: journaled once");
            assert!(
                matches!(
                    lines[0].event,
                    Event::CallFinished {
                        adopted: true,
                        ctx_tokens: 0,
                        ..
                    }
                ),
                "{crash}: {:?}",
                lines[0]
            );
            drop(store);
            let again = State::load(&c, &dir, "run-3").unwrap();
            assert!(
                !again.warnings().iter().any(|w| w.contains("adopted")),
                "{crash}: {:?}",
                again.warnings()
            );
            assert!(again.finished().contains_key("brief/x"), "{crash}");
        }
    }

    #[test]
    fn an_event_is_journaled_before_it_is_applied() {
        let (_d, c) = campaign();
        let mut store = Store::open_for_run(&c, Existing::Refuse).unwrap();
        let mut state = State::load(&c, &store.dir, "run-1").unwrap();
        let rec = record_event(
            &c,
            &mut store,
            &mut state,
            Event::RunStopped {
                run: "run-1".into(),
                error: "quota".into(),
            },
        )
        .unwrap();
        assert_eq!(read_journal(&store.dir).unwrap().0, vec![rec]);
        assert_eq!(state.stopped().as_deref(), Some("quota"));
        // Refused by a read-only journal: nothing is applied.
        let mut ro = Store::open_dir(&store.dir).unwrap();
        let mut fresh = State::load(&c, &ro.dir, "run-2").unwrap();
        assert!(
            record_event(
                &c,
                &mut ro,
                &mut fresh,
                Event::RunStopped {
                    run: "run-2".into(),
                    error: "billing".into(),
                },
            )
            .is_err()
        );
        assert_eq!(fresh.stopped().as_deref(), Some("quota"));
    }
}
