//! A campaign's state in interchange formats (what `booktr export` writes): the termbase (TBX,
//! CSV/TSV) with each entry's origin, the chapters and units (XLIFF) with their final texts and
//! QA findings, the unit pairs (TMX). This file assembles the neutral records from the state;
//! the file formats themselves are [`crate::interchange`]'s. It reads the state only.

use crate::campaign::core::Campaign;
use crate::campaign::core::edits::final_text;
use crate::campaign::core::state::State;
use crate::interchange::{po, segments, tmx, xgettext, xliff};
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
    let files = xliff_files(c, s);
    xliff::write_marked(
        &c.plan.source_lang.code,
        &c.plan.target_lang.code,
        &files,
        c.plan.is_rehearsal(),
    )
}

/// The XLIFF 1.2 document of the campaign's current state: the records of [`xliff`] in the
/// 1.2 layout of [`crate::interchange::xliff12`], marked as a rehearsal when the campaign is
/// one.
pub fn xliff12(c: &Campaign, s: &State) -> String {
    crate::interchange::xliff12::write(
        &c.plan.source_lang.code,
        &c.plan.target_lang.code,
        &xliff_files(c, s),
        c.plan.is_rehearsal(),
    )
}

/// One [`xliff::File`] per chapter with one [`xliff::Unit`] per translation unit: its source,
/// final text, state and QA findings (see [`xliff`]).
///
/// The findings are those of the verdict (ids, editor marks and downgrades applied):
/// each note ends with `[finding <id>]`, or `[finding <id>; dismissed by the editor: note]`
/// / `confirmed` / `check downgraded` when one applies ([`note_text`]).
pub(crate) fn xliff_files(c: &Campaign, s: &State) -> Vec<xliff::File> {
    let fq = crate::campaign::core::verdict::final_qa(c, s);
    let by_unit: std::collections::HashMap<&str, &Vec<crate::qa::Finding>> = c
        .units
        .iter()
        .zip(&fq.units)
        .map(|(u, f)| (u.id.as_str(), f))
        .collect();
    c.chapters
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
                    let notes = by_unit
                        .get(u.id.as_str())
                        .into_iter()
                        .flat_map(|v| v.iter())
                        .map(|f| {
                            xliff::qa_note(
                                match f.severity {
                                    Severity::Error => "error",
                                    Severity::Warning => "warning",
                                    Severity::Info => "info",
                                },
                                &f.check,
                                &note_text(f),
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
        .collect()
}

/// The text of a finding's XLIFF note: its message, then its id and the editor's mark,
/// e.g. `… [finding 3f2a9c0d1b7e; dismissed by the editor: a proper name]`.
pub fn note_text(f: &crate::qa::Finding) -> String {
    use crate::qa::findings::editor_marks::Mark;
    if f.id.is_empty() {
        return f.message.clone();
    }
    let review = f.review.as_ref().map(|r| {
        let what = match r.mark {
            Some(Mark::Dismissed) => "dismissed by the editor",
            Some(Mark::Confirmed) => "confirmed by the editor",
            None => "check downgraded to warnings for this campaign",
        };
        if r.note.is_empty() {
            format!("; {what}")
        } else {
            format!("; {what}: {}", r.note)
        }
    });
    format!(
        "{} [finding {}{}]",
        f.message,
        f.id,
        review.unwrap_or_default()
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
                if s.is_memory_hit(&u.id) && s.kept_round(&u.id, u32::MAX) == Some(0) {
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

/// The PO messages of the campaign's current state, and for each prose unit (in book order)
/// the keys (`msgctxt`, `msgid`) of its messages, in order: what [`po`] writes and what a PO
/// import looks its edited `msgstr`s up by ([`super::imports::apply_po`]).
///
/// Messages come from [`po::unit_messages`] of each prose unit's source and final text
/// (untranslated units get empty `msgstr`s). Messages with the same `msgid` and the same
/// translation share one message (references joined, as gettext does); the same `msgid` with
/// another translation gets `msgctxt` `<unit id>.<message index>`. A message is `fuzzy` (a
/// machine translation: written `#, fuzzy` or not as the export chooses, [`po::MachineText`])
/// when one of its units' translations is a machine's (no human edit); the unit's QA findings are
/// `#.` comments on the message each is about ([`po::message_of_finding`]).
pub(crate) fn po_messages(c: &Campaign, s: &State) -> (Vec<po::Message>, PoKeys) {
    let mut messages: Vec<po::Message> = Vec::new();
    let mut by_id: std::collections::HashMap<String, Vec<usize>> = Default::default();
    let mut keys = Vec::new();
    let mut links = PoLinks::default();
    // An mdBook's title and description (book.toml) are not messages mdbook-gettext looks up:
    // the synthetic chapter that carries them stays out of the catalog.
    let mdbook = c
        .plan
        .site
        .as_ref()
        .is_some_and(|s| s.kind == crate::book::site::SiteKind::MdBook);
    for u in c
        .prose_units()
        .filter(|u| !(mdbook && u.chapter == crate::book::site::TITLES_KEY))
    {
        let ch = c.chapter(&u.chapter);
        let chapter_links = links.of(c, &u.chapter);
        let source = c.source_text(u);
        let edited = s.human_edit(&u.id).is_some();
        let translated = edited || s.kept_translation(&u.id, u32::MAX).is_some();
        let target = translated.then(|| final_text(c, s, u));
        let first_line = ch.text[..u.range.start].matches('\n').count() + 1;
        let mut unit_keys = Vec::new();
        let unit_messages = po::unit_messages(source, target.as_deref(), chapter_links);
        let whole = unit_messages.first().is_some_and(|m| m.whole);
        // Each QA finding of the unit's final text goes above the message it is about.
        let mut qa: Vec<Vec<String>> = vec![Vec::new(); unit_messages.len()];
        for f in s.final_findings(&u.id) {
            let k = po::message_of_finding(
                &unit_messages,
                source,
                target.as_deref(),
                f.span,
                &f.source_excerpt,
                &f.target_excerpt,
            );
            if let Some(v) = qa.get_mut(k) {
                v.push(format!("booktr QA {}: {}", f.check, f.message));
            }
        }
        for ((k, m), qa) in unit_messages.into_iter().enumerate().zip(qa) {
            let line = first_line + source[..m.offset].matches('\n').count();
            let reference = format!("{}:{line}", ch.rel_path);
            let mut comments: Vec<String> = Vec::new();
            if !m.comment.is_empty() {
                comments.push(m.comment.clone());
            }
            comments.extend(qa);
            let same = by_id
                .get(&m.msgid)
                .and_then(|v| v.iter().find(|&&i| messages[i].msgstr == m.msgstr));
            match same {
                Some(&i) => {
                    let msg = &mut messages[i];
                    msg.references.push(reference);
                    msg.fuzzy |= translated && !edited;
                    msg.comments.extend(comments);
                    unit_keys.push((msg.msgctxt.clone(), msg.msgid.clone()));
                }
                None => {
                    let msgctxt = by_id
                        .contains_key(&m.msgid)
                        .then(|| format!("{}.{k}", u.id));
                    unit_keys.push((msgctxt.clone(), m.msgid.clone()));
                    by_id
                        .entry(m.msgid.clone())
                        .or_default()
                        .push(messages.len());
                    messages.push(po::Message {
                        msgctxt,
                        msgid: m.msgid,
                        msgstr: m.msgstr,
                        references: vec![reference],
                        fuzzy: translated && !edited,
                        comments,
                    });
                }
            }
        }
        keys.push((u.id.clone(), whole, unit_keys));
    }
    (messages, keys)
}

/// How PO messages read the links of a chapter ([`xgettext::Links`]): its reference
/// definitions, and for an mdBook's `SUMMARY.md` (the first page of an mdBook site) titles
/// without their links. Units come in book order, so the links of the last chapter asked for
/// are kept and built again only when the chapter changes.
#[derive(Default)]
pub(crate) struct PoLinks(Option<(String, xgettext::Links)>);

impl PoLinks {
    /// The links of chapter `key`.
    pub(crate) fn of(&mut self, c: &Campaign, key: &str) -> &xgettext::Links {
        if self.0.as_ref().is_none_or(|(k, _)| k != key) {
            let text = &c.chapter(key).text;
            let summary = c.plan.site.as_ref().is_some_and(|site| {
                site.kind == crate::book::site::SiteKind::MdBook
                    && site.pages.first().is_some_and(|p| p.key == key)
            });
            let links = if summary {
                xgettext::Links::summary(text)
            } else {
                xgettext::Links::of(text)
            };
            self.0 = Some((key.to_string(), links));
        }
        &self.0.as_ref().expect("set just above").1
    }
}

/// For each prose unit: its id, whether its one message is for the whole unit
/// ([`po::UnitMessage::whole`]), and the (`msgctxt`, `msgid`) of its PO messages in order.
pub(crate) type PoKeys = Vec<(String, bool, Vec<(Option<String>, String)>)>;

/// A PO export ([`po`]): the document, its number of messages, and how many of them carry a
/// machine translation no human approved (`#, fuzzy` with [`po::MachineText::Fuzzy`]).
#[derive(Debug, Clone)]
pub struct PoExport {
    /// The PO document.
    pub doc: String,
    /// Messages in it (the header excepted).
    pub messages: usize,
    /// Messages whose `msgstr` is a machine translation.
    pub machine: usize,
}

/// The gettext PO catalog of the campaign's current state (see [`po_messages`] and
/// [`crate::interchange::po`]) for the target language, marked as a rehearsal when the campaign
/// is one. Machine translations are `#, fuzzy` or not as `machine` says; human edits never are.
pub fn po(c: &Campaign, s: &State, machine: po::MachineText) -> PoExport {
    let (messages, _) = po_messages(c, s);
    let date = crate::util::utc_timestamp(crate::campaign::core::store::now_ms(), true);
    let doc = po::write(
        &c.plan.target_lang.code,
        &c.plan.name,
        &date,
        &messages,
        c.plan.is_rehearsal(),
        machine,
    );
    PoExport {
        doc,
        messages: messages.len(),
        machine: messages
            .iter()
            .filter(|m| m.fuzzy && !m.msgstr.is_empty())
            .count(),
    }
}
