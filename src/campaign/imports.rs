//! What an edited file does to a campaign (`booktr import` of an XLIFF): each changed target
//! becomes a human edit of its unit, recorded through the write protocol
//! ([`super::commit::record_edit`], `imported: true`), QA-checked as it is applied and never
//! sent back to a model. Reading the file is [`crate::interchange::xliff`]'s; a TMX memory
//! import is [`super::memory::apply_memory`].

use super::Campaign;
use super::edits::final_text;
use super::state::State;
use super::store::Store;
use crate::interchange::memory::normalize;
use crate::interchange::xliff;

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
        let text = crate::interchange::surround_like(reference, target);
        let fp = state.fp(&u.id).map(String::from).ok_or_else(|| {
            crate::exit::UsageError::new(format!(
                "the campaign has no glossary termbase yet, so unit {} has no fingerprint to attach an edit to; run `booktr run {}` first",
                u.id,
                c.plan.campaign_file.display()
            ))
        })?;
        super::commit::record_edit(c, store, state, &u.id, &fp, &text, true)?;
        out.edited.push(u.id.clone());
    }
    Ok(out)
}
