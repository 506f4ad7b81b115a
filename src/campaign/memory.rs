//! Translation memory in a campaign: a unit whose source text is in the memory (the campaign's
//! `memory` TMX files, or a TMX given to `booktr import`) gets the stored translation as its
//! first translation, recorded like a model answer (a result file and a `call_finished` journal
//! line) but with zero usage, no request, and `origin: memory` naming the file and `tuid`.
//! QA checks it like any translation; a unit with QA errors is revised as usual.

use super::Campaign;
use super::manager::{Action, translate_key};
use super::state::State;
use super::store::{Output, ResultFile, ResultOrigin, Store};
use crate::interchange::memory::{Hit, Memory};

/// The memory result for `action` when it is a first translation whose source the campaign's
/// memory (its `memory` files) holds.
pub fn hit(c: &Campaign, action: &Action) -> Option<ResultFile> {
    hit_in(c, action, &c.memory)
}

/// See [`hit`], with an explicit memory.
pub fn hit_in(c: &Campaign, action: &Action, memory: &Memory) -> Option<ResultFile> {
    let Action::Translate { unit, fp, round: 0 } = action else {
        return None;
    };
    let u = &c.units[*unit];
    let found = memory.lookup(c.source_text(u))?;
    Some(result(c, u, fp, found))
}

/// The result file recording memory hit `hit` as the round-0 translation of unit `u`
/// (fingerprint `fp`): the stored text with the unit's own surrounding whitespace and line
/// endings.
pub fn result(c: &Campaign, u: &crate::book::Unit, fp: &str, hit: &Hit) -> ResultFile {
    let output = Output::Translation {
        round: 0,
        text: crate::interchange::surround_like(c.source_text(u), &hit.target),
        cleanup: Default::default(),
        reasoning_chars: 0,
        joined_from: Vec::new(),
    };
    ResultFile::local(
        translate_key(fp, 0),
        &u.id,
        output,
        Some(ResultOrigin::Memory {
            file: hit.file.clone(),
            tuid: hit.id.clone(),
        }),
    )
}

/// Whether unit `id`'s first translation came from a translation memory.
pub fn is_memory_hit(s: &State, id: &str) -> bool {
    s.fp(id)
        .and_then(|fp| s.finished().get(&translate_key(fp, 0)))
        .is_some_and(|r| matches!(r.origin, Some(ResultOrigin::Memory { .. })))
}

/// Gives every prose unit that has no first translation yet (and no hand edit, and was not
/// split) the translation `memory` holds for its source, recorded as a memory result with zero
/// usage. Returns the unit ids filled.
///
/// Errors: I/O while writing results or the journal.
pub fn apply_memory(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    memory: &Memory,
) -> anyhow::Result<Vec<String>> {
    let mut filled = Vec::new();
    for u in c.prose_units() {
        let Some(fp) = state.fp(&u.id).map(String::from) else {
            continue;
        };
        if state.translation_at(&u.id, 0).is_some()
            || state.human_edit(&u.id).is_some()
            || state.splits().contains_key(&fp)
        {
            continue;
        }
        let Some(hit) = memory.lookup(c.source_text(u)) else {
            continue;
        };
        let result = result(c, u, &fp, hit);
        // No Manager runs during an import: no context is measured (0, as always recorded).
        super::commit::record_result(c, store, state, result, |_| 0)?;
        filled.push(u.id.clone());
    }
    Ok(filled)
}
