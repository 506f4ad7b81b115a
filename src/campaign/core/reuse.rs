//! What block memory ([`super::blocks`]) does to a campaign, through the one write protocol
//! ([`super::commit`]):
//! - [`record_blocks`]: after the outputs are written and after hand edits are recorded, every
//!   unit whose final text is not recorded yet is paired block by block with its source and
//!   recorded (`blocks_recorded`);
//! - `reuse_blocks`: a unit still to translate whose blocks memory holds takes them: whole,
//!   with no request, or split into runs of found blocks (recorded at once as parts) and
//!   missing ones (translated as parts, then joined as any split unit);
//! - `carry_edits`: once such a unit's text is whole, people's blocks in it (an editor's,
//!   found or stale, and seeded ones) are recorded as a carried human edit, so no model
//!   revises them.

use super::Campaign;
use super::blocks::{BlockOrigin, BlockPair, BlocksFile, Plan, UnitBlocks, pair};
use super::commit::{record_event, record_finished};
use super::manager::Manager;
use super::state::State;
use super::store::{Event, Output, ResultFile, ResultOrigin, Store};

/// Records the blocks of every prose unit whose final text is not recorded yet (nothing when
/// none changed), in `blocks_recorded` files of about [`RECORD_FILE_BYTES`] of text each. A
/// unit whose translation has another number of blocks than its source is not recorded: its
/// blocks do not pair.
///
/// An editor's block is one that differs from the model's kept translation at the same place
/// or that memory already holds as the editor's for that source; a seeded block one that
/// memory holds as seeded with the same text; every other block is the model's, under its
/// block key ([`Campaign::block_key`]).
///
/// Errors: I/O while writing the file or the journal.
pub fn record_blocks(c: &Campaign, store: &mut Store, state: &mut State) -> anyhow::Result<()> {
    let pending = unrecorded(c, state);
    let sizes: Vec<usize> = pending.iter().map(|p| p.1).collect();
    for group in file_groups(&sizes, RECORD_FILE_BYTES) {
        let units: Vec<UnitBlocks> = pending[group]
            .iter()
            .filter_map(|(i, _, sha)| unit_blocks(c, state, *i, sha))
            .collect();
        if units.is_empty() {
            continue;
        }
        let file = BlocksFile {
            schema_version: super::fingerprint::STATE_SCHEMA_VERSION,
            seed: None,
            units,
        };
        let rec = store.record_blocks(&file)?;
        drop(file);
        state.apply(c, &store.dir, &rec, None)?;
    }
    Ok(())
}

/// Consecutive ranges of `sizes` (bytes per unit), each summing to at least `limit` except the
/// last, and never more than `limit` plus its last unit: the units of one file of records.
fn file_groups(sizes: &[usize], limit: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, n) in sizes.iter().enumerate() {
        bytes += n;
        if bytes >= limit {
            out.push(start..i + 1);
            (start, bytes) = (i + 1, 0);
        }
    }
    if start < sizes.len() {
        out.push(start..sizes.len());
    }
    out
}

/// Source and target bytes of the units one file of block records holds, at most (a unit is
/// never split; the last one may go over). Recording a whole book holds one file's records in
/// memory at a time, written, then read back by the journal's one apply path: a single file of
/// every unit held the book's text three times over at once (82 MB on a 12 MB book, the peak of
/// its run). 2 MB is a few chapters, so a run still writes few files.
pub const RECORD_FILE_BYTES: usize = 2_000_000;

/// The prose units whose final text is not recorded yet: index in `c.units`, bytes of source
/// and final text, and the final text's sha256.
fn unrecorded(c: &Campaign, s: &State) -> Vec<(usize, usize, String)> {
    if s.termbase().is_none() {
        return Vec::new();
    }
    let memory = s.block_memory();
    c.units
        .iter()
        .enumerate()
        .filter(|(_, u)| u.kind.needs_translation())
        .filter_map(|(i, u)| {
            let fp = s.fp(&u.id)?;
            let text = super::edits::final_str(c, s, u);
            let sha = crate::util::sha256_hex(text);
            (!text.trim().is_empty() && !memory.is_recorded(fp, &sha))
                .then(|| (i, c.source_text(u).len() + text.len(), sha))
        })
        .collect()
}

/// The block record of unit `i` ([`record_blocks`]), `sha` the sha256 of its final text;
/// `None` when its blocks do not pair.
fn unit_blocks(c: &Campaign, s: &State, i: usize, sha: &str) -> Option<UnitBlocks> {
    let tb = &s.termbase().as_ref()?.1;
    let brief = s.brief().as_ref().map_or("", |b| b.sha256.as_str());
    let memory = s.block_memory();
    let u = &c.units[i];
    let fp = s.fp(&u.id)?;
    let text = super::edits::final_str(c, s, u);
    let source = c.source_text(u);
    let pairs = pair(source, text)?;
    let model: Option<Vec<&str>> = s
        .human_edit(&u.id)
        .and_then(|_| s.kept_translation(&u.id, u32::MAX))
        .and_then(|(_, t)| pair(source, t))
        .map(|p| p.into_iter().map(|x| x.1).collect());
    let edited = s.human_edit(&u.id).is_some();
    let blocks = pairs
        .iter()
        .enumerate()
        .map(|(i, (src, tgt))| {
            let human = edited
                && (model.as_ref().is_none_or(|m| m.get(i) != Some(tgt))
                    || memory.human(src) == Some(*tgt));
            let origin = if human {
                BlockOrigin::Human
            } else if memory.seed(src) == Some(*tgt)
                || c.seeds.lookup(src).is_some_and(|(t, _)| t == *tgt)
            {
                BlockOrigin::Seed
            } else {
                BlockOrigin::Model
            };
            BlockPair {
                source: src.to_string(),
                target: tgt.to_string(),
                origin,
                key: if origin == BlockOrigin::Model {
                    c.block_key(src, tb, brief)
                } else {
                    String::new()
                },
            }
        })
        .collect();
    Some(UnitBlocks {
        unit: u.id.clone(),
        fp: fp.to_string(),
        text_sha256: sha.to_string(),
        blocks,
    })
}

/// Carries out the block plan of unit `unit` (fingerprint `fp`, see [`State::reuse_plan`]):
/// journals `blocks_reused`; with every block found, records the assembled text as the unit's
/// first translation (origin `blocks`, no request) and carries the editor's blocks
/// ([`carry_edits`]); otherwise records a split of the unit into runs of blocks and the found
/// runs' texts as their parts' translations, so only the missing runs are sent. Returns
/// whether the unit's first translation is now recorded.
///
/// Errors: I/O while writing results or the journal.
pub(in crate::campaign) fn reuse_blocks(
    c: &Campaign,
    m: &Manager,
    store: &mut Store,
    state: &mut State,
    unit: usize,
    fp: &str,
) -> anyhow::Result<bool> {
    let u = &c.units[unit];
    let Some(plan) = state.reuse_plan(c, unit) else {
        return Ok(false);
    };
    let source = c.source_text(u);
    record_event(
        c,
        store,
        state,
        Event::BlocksReused {
            unit: u.id.clone(),
            fp: fp.to_string(),
            human: plan.count(BlockOrigin::Human),
            seeded: plan.count(BlockOrigin::Seed),
            model: plan.count(BlockOrigin::Model),
            sent: plan.missing(),
            stale: plan.stale(),
        },
    )?;
    let origin = || ResultOrigin::Blocks {
        human: plan.count(BlockOrigin::Human),
        seeded: plan.count(BlockOrigin::Seed),
        model: plan.count(BlockOrigin::Model),
    };
    if plan.missing() == 0 {
        let text = plan.run_text(source, 0..source.len());
        let result = ResultFile::local(
            super::CallKey::translate(fp, 0).to_string(),
            &u.id,
            translation(text),
            Some(origin()),
        );
        record_finished(c, m, store, state, result)?;
        carry_edits(c, store, state, unit)?;
        return Ok(true);
    }
    let runs = plan.runs(source);
    record_event(
        c,
        store,
        state,
        Event::UnitSplit {
            unit: u.id.clone(),
            key: fp.to_string(),
            parts: runs.iter().map(|(r, _)| (r.start, r.end)).collect(),
            reason: format!(
                "block memory holds {} of its {} blocks; only the other {} are translated",
                plan.found(),
                plan.blocks.len(),
                plan.missing()
            ),
            usage: Default::default(),
            requests: 0,
        },
    )?;
    for (k, (range, sent)) in runs.iter().enumerate() {
        if *sent {
            continue;
        }
        let part = format!("{fp}.p{}", k + 1);
        let mut result = ResultFile::local(
            super::CallKey::translate(&part, 0).to_string(),
            &part,
            translation(plan.run_text(source, range.clone())),
            Some(origin()),
        );
        result.unit = Some(part);
        record_finished(c, m, store, state, result)?;
    }
    Ok(false)
}

/// A first translation's output with `text`.
fn translation(text: String) -> Output {
    Output::Translation {
        round: 0,
        text,
        cleanup: Default::default(),
        reasoning_chars: 0,
        joined_from: Vec::new(),
    }
}

/// Records unit `unit`'s first translation, with each stale block taken from the editor
/// ([`Plan::with_editor_text`]), as a carried human edit when the unit reused an editor's or
/// a seed's blocks or holds a stale edit ([`super::store::Event::BlocksReused`]); nothing otherwise.
/// Called once the first translation is whole (assembled, or joined from its parts).
///
/// Errors: I/O while writing the edit or the journal.
pub(in crate::campaign) fn carry_edits(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    unit: usize,
) -> anyhow::Result<()> {
    let u = &c.units[unit];
    let Some(reused) = state.reused(&u.id).cloned() else {
        return Ok(());
    };
    // Seeded blocks are people's work too: like an editor's, no model revises them.
    if reused.human == 0 && reused.seeded == 0 && reused.stale.is_empty() {
        return Ok(());
    }
    let (Some(fp), Some(text)) = (
        state.fp(&u.id).map(String::from),
        state.translation_at(&u.id, 0).map(String::from),
    ) else {
        return Ok(());
    };
    let plan = Plan {
        blocks: stale_only(&reused.stale, c.source_text(u)),
    };
    let carried = plan.with_editor_text(c.source_text(u), &text);
    let rec = store.record_carried_edit(&u.id, &fp, &carried)?;
    state.apply(c, &store.dir, &rec, None)
}

/// A plan of `source`'s blocks in which only the `stale` ones are marked (what
/// [`Plan::with_editor_text`] reads).
fn stale_only(stale: &[super::blocks::Stale], source: &str) -> Vec<super::blocks::Planned> {
    use super::blocks::Planned;
    (0..super::blocks::spans(source).len())
        .map(|i| Planned::Translate {
            reference: stale.iter().find(|s| s.index == i).cloned(),
        })
        .collect()
}

/// Records an editor's decision on the stale edits of unit `id` ([`super::blocks::Stale`]):
/// `Editor` keeps the editor's text; `Model` takes the model's first translation of the new
/// source for the stale blocks (the unit's other reused editor's blocks stay the editor's,
/// as a carried edit; without any, the unit's human edit is discarded and its kept translation
/// is used). Returns how many stale edits were decided.
///
/// Errors: `id` is not a unit of the campaign or has no stale edit (a usage error naming the
/// unit); I/O.
pub fn resolve_stale(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    id: &str,
    keep: super::store::StaleChoice,
) -> anyhow::Result<usize> {
    use super::store::StaleChoice;
    let Some(u) = c.unit(id) else {
        return Err(crate::exit::UsageError::new(format!(
            "{id} is not a unit of this campaign; `booktr status` and the report list the units with stale edits"
        ))
        .into());
    };
    let stale = state.stale_edits(id).len();
    let Some(fp) = state.fp(id).map(String::from).filter(|_| stale > 0) else {
        return Err(crate::exit::UsageError::new(format!(
            "{id} has no stale edit to decide; `booktr status` lists the units that have one"
        ))
        .into());
    };
    if keep == StaleChoice::Model {
        let model = state.translation_at(id, 0).map(String::from);
        let human = state.reused(id).is_some_and(|r| r.human > 0);
        match model {
            Some(text) if human => {
                let rec = store.record_carried_edit(&u.id, &fp, &text)?;
                state.apply(c, &store.dir, &rec, None)?;
            }
            _ => {
                record_event(
                    c,
                    store,
                    state,
                    Event::HumanEditsDiscarded {
                        fps: vec![fp.clone()],
                    },
                )?;
            }
        }
    }
    record_event(
        c,
        store,
        state,
        Event::StaleEditResolved {
            unit: id.to_string(),
            fp,
            keep,
        },
    )?;
    Ok(stale)
}

/// The block record of an edit an editor made to unit `id`'s output before its source
/// changed (`text`: the unit's region of the output as edited): the unit's newest record
/// (the earlier version, read from its file under the state directory `dir`) with each block whose text the editor changed taken as the
/// editor's. `None` when the unit has no record, the edit's blocks do not pair with it, or
/// nothing differs.
pub fn edit_of_earlier(
    s: &State,
    dir: &std::path::Path,
    id: &str,
    text: &str,
) -> anyhow::Result<Option<UnitBlocks>> {
    let Some(last) = s.block_memory().last_of(id) else {
        return Ok(None);
    };
    let prev = last.read(dir, id)?;
    let blocks: Vec<&str> = super::blocks::cores(text)
        .into_iter()
        .filter(|b| !b.is_empty())
        .collect();
    if blocks.len() != prev.blocks.len() {
        return Ok(None);
    }
    let mut out = prev;
    let mut changed = false;
    for (b, t) in out.blocks.iter_mut().zip(blocks) {
        if b.target != t {
            b.target = t.to_string();
            b.origin = BlockOrigin::Human;
            b.key.clear();
            changed = true;
        }
    }
    out.text_sha256 = crate::util::sha256_hex(text);
    Ok(changed.then_some(out))
}

#[cfg(test)]
mod tests {
    use super::file_groups;

    #[test]
    fn block_records_are_written_in_files_of_bounded_size() {
        assert_eq!(file_groups(&[], 10), Vec::<std::ops::Range<usize>>::new());
        assert_eq!(file_groups(&[3, 3, 3, 3, 3], 10), vec![0..4, 4..5]);
        // A unit larger than the limit is a file of its own.
        assert_eq!(file_groups(&[25, 1, 9, 1], 10), vec![0..1, 1..3, 3..4]);
        let sizes = [4usize; 100];
        let groups = file_groups(&sizes, 10);
        assert_eq!(groups.len(), 34);
        assert!(
            groups
                .iter()
                .all(|g| sizes[g.clone()].iter().sum::<usize>() <= 10 + 4)
        );
        assert_eq!(groups.iter().map(|g| g.len()).sum::<usize>(), 100);
    }
}
