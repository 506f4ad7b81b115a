//! A campaign in interchange formats, and what comes back from editors.
//!
//! Export reads the campaign's state only: the termbase (TBX, CSV/TSV) with each entry's origin,
//! the chapters and units (XLIFF) with their final texts and QA findings, the unit pairs (TMX).
//! Import goes through the same paths as the runner: an edited XLIFF target becomes a human
//! edit ([`crate::campaign::store::Store::record_imported_edit`], QA-checked when applied, never
//! sent back to a model), a TMX memory hit becomes a first translation with zero usage
//! ([`crate::campaign::memory`]).

use crate::campaign::Campaign;
use crate::campaign::edits::final_text;
use crate::campaign::state::State;
use crate::campaign::store::{Event, Store};
use crate::qa::Severity;
use crate::termbase::Entry;

use super::memory::{Memory, normalize};
use super::{tmx, xliff};

/// The campaign termbase to export: the merged glossary plus reconciled entries when the state
/// has one, else the house-style entries alone.
pub fn termbase_entries(c: &Campaign, s: Option<&State>) -> Vec<Entry> {
    match s {
        Some(s) if s.termbase.is_some() => s.effective_termbase().entries.clone(),
        _ => c.house.entries.clone(),
    }
}

/// The XLIFF 2.0 document of the campaign's current state (see [`xliff`] for the layout),
/// marked as a rehearsal when the campaign is one ([`super::rehearsal`]).
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
                        .map(|f| xliff::Note {
                            priority: match f.severity {
                                Severity::Error => 1,
                                Severity::Warning => 5,
                                Severity::Info => 9,
                            },
                            category: "booktr:qa".into(),
                            text: format!(
                                "{} {}: {}",
                                match f.severity {
                                    Severity::Error => "error",
                                    Severity::Warning => "warning",
                                    Severity::Info => "info",
                                },
                                f.check,
                                f.message
                            ),
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

/// The TMX 1.4b document of every translated prose unit (its final text), and the number left
/// out because XML cannot carry one of their characters; marked as a rehearsal when the campaign
/// is one ([`super::rehearsal`]).
pub fn tmx(c: &Campaign, s: &State) -> (String, usize) {
    let pairs: Vec<tmx::Pair> = c
        .prose_units()
        .filter_map(|u| {
            let origin = if s.human_edit(&u.id).is_some() {
                "human"
            } else if s.kept_translation(&u.id, u32::MAX).is_some() {
                if crate::campaign::memory::is_memory_hit(s, &u.id)
                    && s.kept_round(&u.id, u32::MAX) == Some(0)
                {
                    "memory"
                } else {
                    "model"
                }
            } else {
                return None;
            };
            Some(tmx::Pair {
                id: u.id.clone(),
                source: c.source_text(u).to_string(),
                target: final_text(c, s, u),
                origin: origin.into(),
            })
        })
        .collect();
    tmx::write_marked(
        &c.plan.source_lang,
        &c.plan.target_lang,
        &pairs,
        c.plan.is_rehearsal(),
    )
}

/// What an XLIFF import did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct XliffImport {
    /// Units whose target changed, recorded as human edits (ids, in file order).
    pub edited: Vec<String>,
    /// Units whose target is what the campaign already has.
    pub unchanged: usize,
    /// Units without a (complete) target in the file: nothing to take.
    pub untranslated: usize,
    /// Units whose source in the file is not the campaign's current source (the book changed
    /// since the export): not taken.
    pub stale: Vec<String>,
    /// Unit ids the campaign does not have: not taken.
    pub unknown: Vec<String>,
}

/// Records every changed target of `units` as a human edit of its unit and applies it to
/// `state` (QA runs on it as it is applied). The edit keeps the unit's surrounding whitespace
/// (a CAT tool may trim it).
///
/// Errors: the state has no glossary termbase yet (run the campaign first), I/O.
pub fn apply_xliff(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    units: &[xliff::ReadUnit],
) -> anyhow::Result<XliffImport> {
    let mut out = XliffImport::default();
    for ru in units.iter().filter(|u| u.translate) {
        let Some(u) = c.unit(&ru.id) else {
            out.unknown.push(ru.id.clone());
            continue;
        };
        if !u.kind.needs_translation() {
            continue;
        }
        let source = c.source_text(u);
        if ru.source != source && normalize(&ru.source) != normalize(source) {
            out.stale.push(ru.id.clone());
            continue;
        }
        let Some(target) = ru.target.as_deref().filter(|t| !t.trim().is_empty()) else {
            out.untranslated += 1;
            continue;
        };
        let current = final_text(c, state, u);
        if target == current || target.trim() == current.trim() {
            out.unchanged += 1;
            continue;
        }
        let reference = if current.is_empty() { source } else { &current };
        let text = super::surround_like(reference, target);
        let fp = state.fp(&u.id).map(String::from).ok_or_else(|| {
            crate::exit::UsageError::new(format!(
                "the campaign has no glossary termbase yet, so unit {} has no fingerprint to attach an edit to; run `booktr run {}` first",
                u.id,
                c.plan.campaign_file.display()
            ))
        })?;
        let rec = store.record_imported_edit(&u.id, &fp, &text)?;
        state.apply(c, &store.dir, &rec, None)?;
        out.edited.push(u.id.clone());
    }
    Ok(out)
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
            || state.splits.contains_key(&fp)
        {
            continue;
        }
        let Some(hit) = memory.lookup(c.source_text(u)) else {
            continue;
        };
        let result = crate::campaign::memory::result(c, u, &fp, hit);
        let (file, sha256) = store.write_result(&result)?;
        let rec = store.append(Event::CallFinished {
            call: result.call.clone(),
            agent: result.agent,
            unit: result.unit.clone(),
            file,
            sha256,
            usage: result.usage,
            requests: 0,
            ctx_tokens: 0,
            adopted: false,
        })?;
        state.apply(c, &store.dir, &rec, Some(result))?;
        filled.push(u.id.clone());
    }
    Ok(filled)
}

/// Writes the output chapters (and the bilingual ones when the campaign asks for them) and
/// journals `outputs_written`. Returns the keys of chapters not written for lack of a
/// translation.
pub fn write_outputs(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
) -> anyhow::Result<Vec<String>> {
    let written = crate::campaign::outputs::write_all(c, state)?;
    let rec = store.append(Event::OutputsWritten {
        files: written.files,
    })?;
    state.apply(c, &store.dir, &rec, None)?;
    if c.plan.bilingual {
        super::bilingual::write_all(c, state)?;
    }
    Ok(written.skipped)
}
