//! Starting a run: opening the state directory, loading the state, recording what changed
//! outside booktr since the last run (hand edits, deleted outputs, the desk's and the review
//! sheet's marks) and journaling the run's start.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use tokio::task::JoinSet;

use super::{Aimd, RunLoop, RunOptions, import_edits, shutdown_signal};
use crate::campaign::core::Campaign;
use crate::campaign::core::commit;
use crate::campaign::core::manager::Manager;
use crate::campaign::core::state::State;
use crate::campaign::core::store::{Event, Existing, Store, now_ms};
use crate::campaign::ops::progress::Progress;
use crate::llm::Provider;

impl<'a> RunLoop<'a> {
    /// Opens the state directory, loads the state, records what changed outside booktr since
    /// the last run (hand edits, review marks, deleted outputs) and journals the run's start.
    pub(super) fn start(
        c: &'a Campaign,
        provider: Arc<Provider>,
        opts: RunOptions,
    ) -> anyhow::Result<Self> {
        let existing = if opts.fresh {
            Existing::MoveAside
        } else if opts.retranslate {
            Existing::KeepBeside
        } else {
            Existing::Refuse
        };
        if opts.fresh && !opts.force {
            let edited = hand_edits_before_fresh(c)?;
            if !edited.is_empty() {
                let names: Vec<&str> = edited.iter().take(5).map(String::as_str).collect();
                return Err(crate::exit::UsageError::new(format!(
                    "--fresh would set aside {} unit(s) edited by hand ({}{}) and write the new translations over them in {}; keep them: run without --fresh; discard them: add --force (the old state keeps them in {})",
                    edited.len(),
                    names.join(", "),
                    if edited.len() > names.len() { ", …" } else { "" },
                    c.plan.show(&c.plan.out_dir),
                    c.plan.show(&c.plan.state_dir.join("superseded")),
                ))
                .into());
            }
        }
        let mut store = Store::open_for_run(c, existing)?;
        let run_id = format!("{}-{}", now_ms(), std::process::id());
        let mut state = State::load(c, &store.dir, &run_id)?;
        let manager = Manager::new(c, &state);
        let rehearsal = provider.is_rehearsal();
        let prose_total = c.prose_units().count() as u64;
        let done = c
            .prose_units()
            .filter(|u| state.translation_at(&u.id, 0).is_some())
            .count() as u64;
        let progress = Progress::with_every(
            prose_total,
            done,
            rehearsal,
            opts.progress_every
                .unwrap_or(crate::campaign::ops::progress::DEFAULT_EVERY),
        );
        if rehearsal {
            progress.println("REHEARSAL: the offline pseudo provider is answering; outputs are pseudo-translations, not translations.");
        }

        for w in state.take_warnings() {
            progress.println(&format!("warning: {w}"));
        }
        commit::journal_adopted(&mut store, &mut state)?;
        record_outside_changes(c, &mut store, &mut state, &progress, opts.force)?;
        commit::record_event(
            c,
            &mut store,
            &mut state,
            Event::RunStarted {
                run: run_id.clone(),
                pid: std::process::id(),
                provider: c.plan.provider.kind.as_str().into(),
                model: c.plan.provider.model.clone(),
                fingerprint: c.fingerprint.clone(),
            },
        )?;
        if opts.batch && !provider.supports_batch() {
            progress.println("--batch: this provider has no batch API; calls are streamed");
        }
        Ok(RunLoop {
            c,
            manager,
            store,
            state,
            progress,
            run_id,
            tasks: JoinSet::new(),
            in_flight: BTreeSet::new(),
            arrived: Vec::new(),
            fatal: None,
            budget: crate::campaign::ops::budget::Budget::of(c),
            in_flight_cost: BTreeMap::new(),
            held_back: None,
            skipped_chapters: Vec::new(),
            window: Aimd::new(c.plan.concurrency),
            congestion_seen: provider.congestion_events(),
            shutdown: Box::pin(shutdown_signal()),
            interrupted: false,
            batch_mode: opts.batch,
            memory_swept: c.memory.is_empty(),
            provider,
        })
    }
}

/// Records what changed in the outputs since the last run, before the Manager decides: with
/// `force`, the hand edits are discarded and every output is written again; otherwise hand
/// edits are kept as human edits and missing output chapters are written again. Then the
/// desk's and the review sheet's marks are read (a dismissed finding sends no revision).
/// The units of this configuration's state edited by hand, found before `--fresh` sets that
/// state aside: edits written into the outputs since the last run are recorded in the old
/// state first (appended to its journal, as any run would), so the state set aside holds them.
/// A fresh state cannot take them over (a unit's fingerprint depends on the glossary the new
/// run has yet to build), so `--fresh` refuses while there are any: an editor's work is never
/// replaced without the editor's decision, which is `--force`.
fn hand_edits_before_fresh(c: &Campaign) -> anyhow::Result<Vec<String>> {
    if !c.state_path().exists() {
        return Ok(Vec::new());
    }
    let mut store = Store::open_for_run(c, Existing::Refuse)?;
    let mut state = State::load(c, &store.dir, &format!("fresh-{}", now_ms()))?;
    commit::journal_adopted(&mut store, &mut state)?;
    super::import_edits(c, &mut store, &mut state)?;
    Ok(c.prose_units()
        .filter(|u| state.human_edit(&u.id).is_some())
        .map(|u| u.id.clone())
        .collect())
}

fn record_outside_changes(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    progress: &Progress,
    force: bool,
) -> anyhow::Result<()> {
    if force {
        let mut fps: Vec<String> = state.human_edits().keys().cloned().collect();
        fps.sort();
        if !fps.is_empty() {
            commit::record_event(c, store, state, Event::HumanEditsDiscarded { fps })?;
        }
        // Rewrite the outputs even if nothing else changed.
        state.require_outputs_rewrite();
    } else {
        let n = import_edits(c, store, state)?;
        if n > 0 {
            progress.println(&format!("kept {n} unit(s) edited by hand in {} (recorded as human edits; use --force to overwrite them)", c.plan.show(&c.plan.out_dir)));
        }
        // An output chapter deleted since the last write is written again (from the recorded
        // translations and human edits, so nothing is lost).
        if state.outputs_current()
            && c.chapters
                .iter()
                .any(|ch| !c.plan.out_dir.join(&ch.file_name).exists())
        {
            progress.println("rewriting output chapters that are missing");
            state.require_outputs_rewrite();
        }
    }
    if let Some(note) = crate::campaign::ops::desk::check_at_start(c, store, state)? {
        progress.println(&note);
    }
    // The marks the editor wrote in findings-review.csv are read before the Manager decides,
    // so a dismissed finding sends no revision.
    for line in crate::campaign::ops::mark_journal::journal_csv(c, store, state)? {
        progress.println(&line);
    }
    Ok(())
}
