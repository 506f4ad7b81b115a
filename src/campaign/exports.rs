//! A campaign's state in interchange formats (what `booktr export` writes): the termbase (TBX,
//! CSV/TSV) with each entry's origin, the chapters and units (XLIFF) with their final texts and
//! QA findings, the unit pairs (TMX). This file assembles the neutral records from the state;
//! the file formats themselves are [`crate::interchange`]'s. It reads the state only.

use super::Campaign;
use super::edits::final_text;
use super::state::State;
use crate::interchange::{segments, tmx, xliff};
use crate::qa::Severity;
use crate::termbase::Entry;

/// The campaign termbase to export: the merged glossary plus reconciled entries when the state
/// has one, else the house-style entries alone.
pub fn termbase_entries(c: &Campaign, s: Option<&State>) -> Vec<Entry> {
    match s {
        Some(s) if s.termbase().is_some() => s.effective_termbase().entries.clone(),
        _ => c.house.entries.clone(),
    }
}

/// The XLIFF 2.0 document of the campaign's current state (see [`crate::interchange::xliff`]
/// for the layout), marked as a rehearsal when the campaign is one
/// ([`crate::interchange::rehearsal`]).
/// Prose units without a translation have no `<target>` (state `initial`); hand-edited ones
/// are `final`; units copied unchanged are `translate="no"` with their source as target.
pub fn xliff(c: &Campaign, s: &State) -> String {
    let files: Vec<xliff::File> = c
        .chapters
        .iter()
        .map(|ch| xliff::File {
            id: ch.key.clone(),
            original: ch.rel_path.clone(),
            units: c
                .units_of(&ch.key)
                .map(|u| {
                    let source = c.source_text(u).to_string();
                    let prose = u.kind.needs_translation();
                    let edited = s.human_edit(&u.id).is_some();
                    let has_model = s.kept_translation(&u.id, u32::MAX).is_some();
                    let target = (!prose || edited || has_model).then(|| final_text(c, s, u));
                    let state = match (prose, edited, target.is_some()) {
                        (false, _, _) | (_, true, _) => "final",
                        (_, _, true) => "translated",
                        _ => "initial",
                    };
                    let notes = s
                        .final_findings(&u.id)
                        .iter()
                        .map(|f| {
                            xliff::qa_note(
                                match f.severity {
                                    Severity::Error => "error",
                                    Severity::Warning => "warning",
                                    Severity::Info => "info",
                                },
                                &f.check,
                                &f.message,
                            )
                        })
                        .collect();
                    xliff::Unit {
                        id: u.id.clone(),
                        source,
                        target,
                        translate: prose,
                        state,
                        notes,
                    }
                })
                .collect(),
        })
        .collect();
    xliff::write_marked(
        &c.plan.source_lang.code,
        &c.plan.target_lang.code,
        &files,
        c.plan.is_rehearsal(),
    )
}

/// The TMX 1.4b document of every translated prose unit (its final text), one pair per XLIFF
/// segment (sentence pairs where the unit's sentences align 1:1, else block pairs; see
/// [`crate::interchange::tmx`]), and the number of pairs left out because XML cannot carry
/// one of their characters; marked as a rehearsal when the campaign is one
/// ([`crate::interchange::rehearsal`]).
pub fn tmx(c: &Campaign, s: &State) -> (String, usize) {
    let pairs: Vec<tmx::Pair> = c
        .prose_units()
        .filter_map(|u| {
            let origin = if s.human_edit(&u.id).is_some() {
                "human"
            } else if s.kept_translation(&u.id, u32::MAX).is_some() {
                if super::memory::is_memory_hit(s, &u.id)
                    && s.kept_round(&u.id, u32::MAX) == Some(0)
                {
                    "memory"
                } else {
                    "model"
                }
            } else {
                return None;
            };
            let source = c.source_text(u);
            let target = final_text(c, s, u);
            let segs = segments::align(
                source,
                Some(&target),
                &c.plan.source_lang.code,
                &c.plan.target_lang.code,
            );
            let several = segs.len() > 1;
            Some(
                segs.into_iter()
                    .enumerate()
                    .map(|(k, g)| tmx::Pair {
                        id: if several {
                            format!("{}#s{}", u.id, k + 1)
                        } else {
                            u.id.clone()
                        },
                        source: source[g.source].to_string(),
                        target: target[g.target.unwrap_or(0..target.len())].to_string(),
                        origin: origin.into(),
                        sentence: g.sentence,
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .flatten()
        .collect();
    tmx::write_marked(
        &c.plan.source_lang,
        &c.plan.target_lang,
        &pairs,
        c.plan.is_rehearsal(),
    )
}
