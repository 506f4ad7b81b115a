//! What an edited file does to a campaign (`booktr import` of an XLIFF): each changed target
//! becomes a human edit of its unit, recorded through the write protocol
//! ([`crate::campaign::core::commit::record_edit`], `imported: true`), QA-checked as it is applied and never
//! sent back to a model. Reading the file is [`crate::interchange::xliff`]'s; a TMX memory
//! import is [`super::memory::apply_memory`].

use crate::campaign::core::Campaign;
use crate::campaign::core::edits::final_text;
use crate::campaign::core::state::State;
use crate::campaign::core::store::Store;
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
        crate::campaign::core::commit::record_edit(c, store, state, &u.id, &fp, &text, true)?;
        out.edited.push(u.id.clone());
    }
    Ok(out)
}

/// What a PO import did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PoImport {
    /// Units whose rebuilt target changed, recorded as human edits (ids, in book order).
    pub edited: Vec<String>,
    /// Units whose translation a human approved in the file (every message of the unit no
    /// longer `fuzzy`, text unchanged), recorded as human edits of the same text. Always empty
    /// for a catalog exported with `--machine-text final` ([`PoImport::machine_final`]).
    pub approved: Vec<String>,
    /// Units whose target is what the campaign already has.
    pub unchanged: usize,
    /// Units with an empty `msgstr`: nothing to take.
    pub untranslated: usize,
    /// Units with a message the file does not have (the book or the translations changed
    /// since the export): not taken (ids).
    pub missing: Vec<String>,
    /// Messages whose `msgstr` differs from the campaign's but which are still `#, fuzzy`: a
    /// draft no human approved (gettext and `mdbook-gettext` do not use fuzzy messages), or a
    /// stale export's machine text. Not taken; the rest of their unit is.
    pub fuzzy: usize,
    /// Units with a `msgstr` its place in the Markdown cannot hold (a blank line in a table
    /// cell or a heading), as `unit: why`: not taken, nothing of the unit changes.
    pub refused: Vec<String>,
    /// The file was exported with `--machine-text final`
    /// ([`crate::interchange::po::is_machine_final`]): its machine translations were never
    /// fuzzy, so a message that is not fuzzy says nothing of a review and only changed
    /// `msgstr`s are taken.
    pub machine_final: bool,
}

/// Maps the `msgstr`s of a PO file back to the units they came from: the campaign's current
/// messages ([`super::exports::po_messages`]) are looked up in the file by (`msgctxt`,
/// `msgid`), each unit's text is rebuilt from its messages' `msgstr`s
/// ([`crate::interchange::po::rebuild`]), and a changed (or newly approved, no longer `fuzzy`)
/// one is recorded as a human edit (QA runs on it as it is applied). A changed `msgstr` that is
/// still `fuzzy` is not taken ([`PoImport::fuzzy`]). With `machine_final` (the file was
/// exported with `--machine-text final`, so no machine translation in it was fuzzy) an
/// unchanged message is never an approval. Exporting then importing the file unedited changes
/// nothing, in either mode.
///
/// Errors: the state has no glossary termbase yet (run the campaign first), I/O.
pub fn apply_po(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    messages: &[crate::interchange::po::ReadMessage],
    machine_final: bool,
) -> anyhow::Result<PoImport> {
    let file: std::collections::HashMap<
        (Option<&str>, &str),
        &crate::interchange::po::ReadMessage,
    > = messages
        .iter()
        .map(|m| ((m.msgctxt.as_deref(), m.msgid.as_str()), m))
        .collect();
    let (exported, keys) = super::exports::po_messages(c, state);
    // What the campaign itself would write for each message: a fuzzy msgstr that differs from
    // it is not taken.
    let ours: std::collections::HashMap<(Option<&str>, &str), &str> = exported
        .iter()
        .map(|m| ((m.msgctxt.as_deref(), m.msgid.as_str()), m.msgstr.as_str()))
        .collect();
    let mut out = PoImport {
        machine_final,
        ..PoImport::default()
    };
    let mut links = super::exports::PoLinks::default();
    for (id, whole, unit_keys) in keys {
        let Some(u) = c.unit(&id) else { continue };
        let found: Option<Vec<&crate::interchange::po::ReadMessage>> = unit_keys
            .iter()
            .map(|(ctxt, msgid)| file.get(&(ctxt.as_deref(), msgid.as_str())).copied())
            .collect();
        let Some(found) = found else {
            out.missing.push(id);
            continue;
        };
        let strs: Vec<String> = found
            .iter()
            .map(|m| {
                let key = (m.msgctxt.as_deref(), m.msgid.as_str());
                match ours.get(&key) {
                    Some(own) if m.fuzzy && !m.msgstr.is_empty() && m.msgstr != *own => {
                        out.fuzzy += 1;
                        own.to_string()
                    }
                    _ => m.msgstr.clone(),
                }
            })
            .collect();
        if strs.iter().any(|m| m.trim().is_empty()) {
            out.untranslated += 1;
            continue;
        }
        let source = c.source_text(u);
        let current = final_text(c, state, u);
        // The messages were written from the current translation, or from the source when the
        // unit has none; the edited `msgstr`s replace their messages in that text.
        let base = if current.is_empty() { source } else { &current };
        let chapter_links = links.of(c, &u.chapter);
        let text = match crate::interchange::po::rebuild(base, &strs, whole, chapter_links) {
            Ok(text) => text,
            Err(crate::interchange::po::RebuildError::Count) => {
                out.missing.push(id);
                continue;
            }
            Err(e) => {
                out.refused.push(format!("{id}: {e}"));
                continue;
            }
        };
        let same = text == current || text.trim() == current.trim();
        let approved = same
            && !machine_final
            && state.human_edit(&u.id).is_none()
            && !current.is_empty()
            && found.iter().all(|m| !m.fuzzy);
        if same && !approved {
            out.unchanged += 1;
            continue;
        }
        let reference = if current.is_empty() { source } else { &current };
        let text = if same {
            current.clone()
        } else {
            crate::interchange::surround_like(reference, &text)
        };
        let fp = state.fp(&u.id).map(String::from).ok_or_else(|| {
            crate::exit::UsageError::new(format!(
                "the campaign has no glossary termbase yet, so unit {} has no fingerprint to attach an edit to; run `booktr run {}` first",
                u.id,
                c.plan.campaign_file.display()
            ))
        })?;
        crate::campaign::core::commit::record_edit(c, store, state, &u.id, &fp, &text, true)?;
        if same {
            out.approved.push(id);
        } else {
            out.edited.push(id);
        }
    }
    Ok(out)
}
