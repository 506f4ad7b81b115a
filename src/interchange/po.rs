//! gettext PO catalogs, written and read with the `polib` crate (the PO library
//! `mdbook-i18n-helpers` itself uses, so its escaping and line folding are what mdBook's
//! gettext workflow already reads).
//!
//! Messages are the ones `mdbook-xgettext` 0.4.0 extracts ([`xgettext`]): one `msgid` per
//! paragraph, heading (without its `#` marks), list item or table cell, as normalised Markdown,
//! so `mdbook-gettext` translates a book with a catalog booktr wrote (it uses only messages that
//! are not `fuzzy`). `#:` references `file:line` to where the message starts, and a header names
//! the `Language`. Code blocks are not messages. A unit whose target does not pair with its
//! source message for message (the translator merged or split paragraphs, or turned a list into
//! prose) is one message for the whole unit, so that every unit's messages rebuild it exactly
//! ([`unit_messages`] and [`rebuild`], property-tested). Machine translations are `#, fuzzy`
//! or not as the export chooses ([`MachineText`]: fuzzy by default, so that `mdbook-gettext`
//! shows none of them until an editor clears the flag); human edits are never fuzzy.
//!
//! The rehearsal mark of a PO file is a header comment line `# x-booktr-rehearsal: true. …`
//! (polib keeps only the standard header fields).

use std::io::BufWriter;

use super::FileError;
use super::xgettext::{self, Links};

/// A message to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Set only when the same `msgid` needs two different translations.
    pub msgctxt: Option<String>,
    pub msgid: String,
    /// Empty when not translated.
    pub msgstr: String,
    /// `file:line` references (1-based lines).
    pub references: Vec<String>,
    /// A machine translation no human has approved: `#, fuzzy` when written with
    /// [`MachineText::Fuzzy`].
    pub fuzzy: bool,
    /// `#.` extracted comments (QA findings of the unit's final text).
    pub comments: Vec<String>,
}

/// A message read from a PO file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadMessage {
    pub msgctxt: Option<String>,
    pub msgid: String,
    pub msgstr: String,
    pub fuzzy: bool,
}

/// How a PO export marks machine translations (`booktr export --format po --machine-text`).
/// `mdbook-gettext` builds a book only from messages that are not fuzzy, so this is the choice
/// between a built book that shows only reviewed text and one that shows the machine's text
/// unreviewed. Human edits are never fuzzy in either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MachineText {
    /// `#, fuzzy`: hidden from the built book (it keeps the source text there) until an editor
    /// clears the flag. The safe default.
    #[default]
    Fuzzy,
    /// Not fuzzy: the built book shows the machine translations at once, unreviewed. The
    /// catalog's header says so ([`MACHINE_FINAL_MARK`]).
    Final,
}

impl MachineText {
    /// The value as the command line spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            MachineText::Fuzzy => "fuzzy",
            MachineText::Final => "final",
        }
    }
}

impl std::str::FromStr for MachineText {
    type Err = crate::util::UnknownValue;
    fn from_str(s: &str) -> Result<MachineText, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fuzzy" => Ok(MachineText::Fuzzy),
            "final" => Ok(MachineText::Final),
            other => Err(crate::util::UnknownValue {
                what: "machine-text",
                value: other.to_string(),
                choices: "fuzzy (hidden from the built book until reviewed) or final (shown unreviewed)",
            }),
        }
    }
}

/// The header comment key of a catalog exported with [`MachineText::Final`]: its messages that
/// are not fuzzy include machine translations no human approved, so an import of it takes only
/// changed `msgstr`s, never an unchanged one as an approval ([`is_machine_final`]).
pub const MACHINE_FINAL_MARK: &str = "x-booktr-machine-text";

/// The header comment line of a catalog exported with [`MachineText::Final`].
pub fn machine_final_comment() -> String {
    format!(
        "{MACHINE_FINAL_MARK}: final. Machine translations are not marked fuzzy: mdbook-gettext shows them unreviewed."
    )
}

/// Whether a PO file's header comments say it was exported with [`MachineText::Final`].
pub fn is_machine_final(text: &str) -> bool {
    let mark = format!("# {MACHINE_FINAL_MARK}: final");
    text.lines()
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .any(|l| l.starts_with(&mark))
}

/// The header comment line of a rehearsal's PO file.
pub fn rehearsal_comment() -> String {
    format!(
        "{}: true. {}",
        super::rehearsal::MARK,
        super::rehearsal::NOTE
    )
}

/// Writes a PO catalog for target language `lang` (BCP 47) of project `project`, dated `date`
/// (`POT-Creation-Date` and `PO-Revision-Date`; mdbook-xgettext writes RFC 3339 UTC times).
///
/// The header has every field `mdbook-gettext` (mdbook-i18n-helpers 0.4, polib 0.2) requires:
/// it stops with a panic on a catalog without `POT-Creation-Date`, `PO-Revision-Date` or
/// `Language-Team` (found by building an mdBook with a booktr catalog).
///
/// A message is `#, fuzzy` when its [`Message::fuzzy`] is set (a machine translation) and
/// `machine` is [`MachineText::Fuzzy`]; with [`MachineText::Final`] no message is, and the
/// header comments say so ([`machine_final_comment`]).
pub fn write(
    lang: &str,
    project: &str,
    date: &str,
    messages: &[Message],
    rehearsal: bool,
    machine: MachineText,
) -> String {
    use polib::catalog::Catalog;
    use polib::message::Message as PoMessage;
    use polib::metadata::CatalogMetadata;
    let mut meta = CatalogMetadata::new();
    meta.project_id_version = project.to_string();
    meta.language = lang.to_string();
    meta.pot_creation_date = date.to_string();
    meta.po_revision_date = date.to_string();
    // gettext's msginit writes `none` when no team is named.
    meta.language_team = "none".into();
    meta.mime_version = "1.0".into();
    meta.content_type = "text/plain; charset=UTF-8".into();
    meta.content_transfer_encoding = "8bit".into();
    let mut catalog = Catalog::new(meta);
    catalog.preheader = vec![format!("Translations of {project} by booktr.")];
    if rehearsal {
        catalog.preheader.push(rehearsal_comment());
    }
    if machine == MachineText::Final {
        catalog.preheader.push(machine_final_comment());
    }
    for m in messages {
        let mut flags = polib::message::MessageFlags::new();
        if m.fuzzy && machine == MachineText::Fuzzy && !m.msgstr.is_empty() {
            flags.add_flag("fuzzy");
        }
        let mut b = PoMessage::build_singular();
        b.with_msgid(m.msgid.clone())
            .with_msgstr(m.msgstr.clone())
            .with_source(m.references.join(" "))
            .with_flags(flags)
            .with_extracted_comments(m.comments.join("\n"));
        if let Some(c) = &m.msgctxt {
            b.with_msgctxt(c.clone());
        }
        catalog.append_or_update(b.done());
    }
    let mut out = BufWriter::new(Vec::new());
    polib::po_file::write(&catalog, &mut out).expect("writing to memory cannot fail");
    String::from_utf8(out.into_inner().expect("a Vec flushes")).expect("polib writes UTF-8")
}

/// Reads every message of a PO file (the header excepted; obsolete `#~` entries are skipped).
///
/// Errors name the file: not a PO file (no header entry, a bad escape sequence), non-UTF-8.
pub fn read(text: &str, display: &str) -> Result<Vec<ReadMessage>, FileError> {
    // polib slices each `msgid "…"` line between its quotes; a line too short for that would
    // panic inside it, so such lines are refused here first, with their line number.
    for (i, line) in text.lines().enumerate() {
        let l = line.trim_end_matches('\r');
        let quoted = l.starts_with('"') || l.starts_with("msg");
        if quoted && (!l.ends_with('"') || l.len() < 2 || !l.contains('"')) {
            return Err(FileError::new(
                display,
                Some(i as u64 + 1),
                "is not a PO line (a quoted string must start and end with `\"`); fix the line or export the PO again",
            ));
        }
        if l.starts_with("msg") && l.find('"') == Some(l.len() - 1) {
            return Err(FileError::new(
                display,
                Some(i as u64 + 1),
                "has an unterminated string; fix the line or export the PO again",
            ));
        }
    }
    let text = join_comments_to_their_entry(text);
    let catalog = polib::po_file::parse_from_reader(text.as_bytes()).map_err(|e| {
        FileError::new(
            display,
            None,
            format!(
                "is not a readable PO file ({e}); it needs the header entry (`msgid \"\"`) first"
            ),
        )
    })?;
    Ok(catalog
        .messages()
        .map(|m| ReadMessage {
            msgctxt: m.msgctxt().map(str::to_string).filter(|c| !c.is_empty()),
            msgid: m.msgid().to_string(),
            msgstr: m.msgstr().unwrap_or("").to_string(),
            fuzzy: m.flags().is_fuzzy(),
        })
        .collect())
}

/// `text` with the blank lines between an entry's comments and the entry itself removed, and
/// whitespace-only lines made empty. gettext reads comments as part of the next entry whatever
/// blank lines stand between (GNU gettext manual, "The Format of PO Files": white space is
/// not significant between entries' parts), but polib 0.3 ends an entry at every empty line,
/// so header comments followed by a blank line before `msgid ""` made it refuse the file
/// ("Metadata does not exist or is ill-formed"), and a later entry's comments would become a
/// message of their own. Obsolete entries (`#~`) are left as they are: polib skips them.
fn join_comments_to_their_entry(text: &str) -> std::borrow::Cow<'_, str> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    // Whether the last non-blank line was a comment that belongs to the entry to come.
    let mut in_comments = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim().is_empty() {
            if in_comments {
                changed = true;
                continue;
            }
            if !bare.is_empty() {
                changed = true;
                out.push_str(&line[bare.len()..]);
                continue;
            }
        } else {
            in_comments = bare.starts_with('#') && !bare.starts_with("#~");
        }
        out.push_str(line);
    }
    if changed {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Whether a PO file's header comments carry the rehearsal mark.
pub fn is_marked(text: &str) -> bool {
    let mark = format!("# {}: true", super::rehearsal::MARK);
    text.lines()
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .any(|l| l.starts_with(&mark))
}

/// One message of a unit: its `msgid`, `msgstr` (empty when untranslated) and where its text
/// is in the unit's source and target (byte ranges; the source's start gives the `#:` line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitMessage {
    pub msgid: String,
    pub msgstr: String,
    pub offset: usize,
    /// Bytes of the source the message was made from.
    pub source_range: std::ops::Range<usize>,
    /// Bytes of the target its `msgstr` was made from (`None` when untranslated or whole).
    pub target_range: Option<std::ops::Range<usize>>,
    /// True for the one message of a unit whose target does not pair with its source message
    /// for message (give it to [`rebuild`]).
    pub whole: bool,
    /// `<!-- i18n:comment … -->` text for the message (empty if none).
    pub comment: String,
}

/// The messages of one prose unit, as mdbook-xgettext extracts them ([`xgettext::extract`];
/// `links` are the chapter's link reference definitions):
/// - one per message of `source`, with empty `msgstr`s, when `target` is `None`;
/// - the same, each with the message of `target` at the same place, when `target` has as many
///   messages in the same places (paragraph, heading, list item, table cell);
/// - otherwise one message for the whole unit (source and target trimmed), so that nothing of
///   the translation is lost; `mdbook-gettext` will not find it, and an editor sees why.
///
/// Code blocks are never messages. [`rebuild`] with the `msgstr`s gives `target` back exactly.
pub fn unit_messages(source: &str, target: Option<&str>, links: &Links) -> Vec<UnitMessage> {
    let sm = xgettext::extract(source, links);
    let whole = |t: &str| {
        let lead = source.len() - source.trim_start().len();
        vec![UnitMessage {
            msgid: source.trim().to_string(),
            msgstr: t.trim().to_string(),
            offset: lead,
            source_range: lead..lead + source.trim().len(),
            target_range: None,
            whole: true,
            comment: String::new(),
        }]
    };
    let per_message = |strs: Vec<(String, Option<std::ops::Range<usize>>)>| -> Vec<UnitMessage> {
        sm.iter()
            .zip(strs)
            .map(|(m, (msgstr, target_range))| UnitMessage {
                msgid: m.msgid.clone(),
                msgstr,
                offset: m.range.start,
                source_range: m.range.clone(),
                target_range,
                whole: false,
                comment: m.comment.clone(),
            })
            .collect()
    };
    let Some(target) = target else {
        if sm.is_empty() {
            return whole("");
        }
        return per_message(vec![(String::new(), None); sm.len()]);
    };
    let tm = xgettext::extract(target, links);
    let paired = !sm.is_empty()
        && sm.len() == tm.len()
        && sm.iter().zip(&tm).all(|(a, b)| a.place == b.place);
    if paired {
        return per_message(tm.into_iter().map(|m| (m.msgid, Some(m.range))).collect());
    }
    whole(target)
}

/// The index of the message of `messages` (of one unit, [`unit_messages`]) that a QA finding is
/// about, to write it as that message's `#.` comment: the message whose target text holds the
/// finding's span (`span`, chars of `target`), else the first 40 chars of its target excerpt,
/// else those of its source excerpt (in `source`), else the message whose text holds either
/// excerpt; the unit's first message when none does.
pub fn message_of_finding(
    messages: &[UnitMessage],
    source: &str,
    target: Option<&str>,
    span: Option<(usize, usize)>,
    source_excerpt: &str,
    target_excerpt: &str,
) -> usize {
    let head = |e: &str| e.chars().take(40).collect::<String>();
    let in_target = |at: usize| {
        messages
            .iter()
            .position(|m| m.target_range.as_ref().is_some_and(|r| r.contains(&at)))
    };
    let by_span = target.zip(span).and_then(|(t, (start, _))| {
        t.char_indices()
            .nth(start)
            .map(|(b, _)| b)
            .and_then(in_target)
    });
    let by_target = || {
        let e = head(target_excerpt.trim());
        (!e.is_empty())
            .then(|| target.and_then(|t| t.find(&e)))
            .flatten()
            .and_then(in_target)
    };
    let by_source = || {
        let e = head(source_excerpt.trim());
        (!e.is_empty())
            .then(|| source.find(&e))
            .flatten()
            .and_then(|at| messages.iter().position(|m| m.source_range.contains(&at)))
    };
    // A reference link's target is in its definition, outside every message's bytes, but in
    // the message as written (links inline).
    let by_text = || {
        let (se, te) = (head(source_excerpt.trim()), head(target_excerpt.trim()));
        messages.iter().position(|m| {
            (!se.is_empty() && m.msgid.contains(&se)) || (!te.is_empty() && m.msgstr.contains(&te))
        })
    };
    by_span
        .or_else(by_target)
        .or_else(by_source)
        .or_else(by_text)
        .unwrap_or(0)
}

/// Why the `msgstr`s of a PO file cannot be put back into a unit (see [`rebuild`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RebuildError {
    /// The file has another number of messages for the unit than its text has now.
    #[error("the unit's messages are not the ones the file has")]
    Count,
    /// A `msgstr` that its place in the Markdown cannot hold as it is.
    #[error("the msgstr of \"{msgid}\" {why}")]
    Unrepresentable { msgid: String, why: String },
}

/// A `msgstr` with a blank line (a paragraph break) for a place that holds one paragraph: the
/// place named (a heading, a table cell).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("has a blank line, which a {0} cannot hold; write it as one paragraph")]
pub struct BlankLineIn(pub &'static str);

/// The unit text that `msgstrs` give, over `base`: the unit's current translation, or its
/// source when it has none. With per-message `msgstrs` (one per message of [`unit_messages`],
/// in order), each `msgstr` that differs from the message `base` has at that place replaces
/// that message's bytes, fitted to its place ([`fit`]: a table cell's `|` escaped, a line
/// break in a cell or heading made a space, the lines of a quoted or listed paragraph given
/// their container's prefix), and the rest of `base` (code, structure, unchanged messages in
/// their original Markdown spelling) is kept byte for byte. With a whole-unit message
/// (`whole`, see [`UnitMessage::whole`]), the `msgstr` with `base`'s surrounding whitespace.
///
/// Errors: [`RebuildError::Count`] when the count does not match;
/// [`RebuildError::Unrepresentable`] for a `msgstr` its place cannot hold (a blank line in a
/// table cell or a heading).
pub fn rebuild(
    base: &str,
    msgstrs: &[String],
    whole: bool,
    links: &Links,
) -> Result<String, RebuildError> {
    let bm = xgettext::extract(base, links);
    if !whole && msgstrs.len() == bm.len() && !bm.is_empty() {
        let mut out = String::with_capacity(base.len() * 2);
        let mut pos = 0;
        for (m, s) in bm.iter().zip(msgstrs) {
            if *s == m.msgid {
                continue;
            }
            let line_start = base[..m.range.start].rfind('\n').map_or(0, |i| i + 1);
            let lead = &base[line_start..m.range.start];
            let text = fit(s, m.place, lead).map_err(|why| RebuildError::Unrepresentable {
                msgid: crate::util::excerpt(&m.msgid, 60),
                why: why.to_string(),
            })?;
            out.push_str(&base[pos..m.range.start]);
            out.push_str(&text);
            pos = m.range.end;
        }
        out.push_str(&base[pos..]);
        return Ok(out);
    }
    match msgstrs {
        [one] if whole || bm.is_empty() => Ok(super::surround_like(base, one)),
        _ => Err(RebuildError::Count),
    }
}

/// `msgstr` (trimmed) as it must be written at a message's place, `lead` being the text of
/// its first line before it (`> - ` for a quoted list item, `| a | ` for a table cell):
/// - a table cell is one line: a line break is a space (what Markdown renders a soft break
///   as) and an unescaped `|` becomes `\|` (GFM splits cells before reading code spans);
/// - a heading is one line: a line break is a space;
/// - elsewhere each further line gets the container's prefix, `lead` with its list markers
///   made spaces and its `>` kept, so a line break stays inside the quote or list item.
///
/// Errors: a blank line (a paragraph break) in a table cell or a heading, which cannot hold
/// two paragraphs. Hand-rolled: no Markdown writer fits a fragment into a given container.
pub fn fit(msgstr: &str, place: xgettext::Place, lead: &str) -> Result<String, BlankLineIn> {
    use xgettext::Place;
    let s = msgstr.trim();
    let lines: Vec<&str> = s.lines().map(str::trim).collect();
    let blank = lines.iter().any(|l| l.is_empty());
    match place {
        Place::TableCell | Place::Heading => {
            if blank {
                return Err(BlankLineIn(if place == Place::Heading {
                    "heading"
                } else {
                    "table cell (a line break there is `<br>`)"
                }));
            }
            let one = lines.join(" ");
            Ok(if place == Place::TableCell {
                escape_pipes(&one)
            } else {
                one
            })
        }
        _ => {
            let cont: String = lead
                .chars()
                .map(|c| if c == '>' { '>' } else { ' ' })
                .collect();
            if lead.is_empty() {
                return Ok(s.to_string());
            }
            let mut out = String::with_capacity(s.len() + cont.len() * lines.len());
            for (i, l) in lines.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                    if l.is_empty() {
                        out.push_str(cont.trim_end());
                    } else {
                        out.push_str(&cont);
                    }
                }
                out.push_str(l);
            }
            Ok(out)
        }
    }
}

/// `|` not already escaped becomes `\|`.
fn escape_pipes(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut backslashes = 0;
    for c in s.chars() {
        if c == '|' && backslashes % 2 == 0 {
            out.push('\\');
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn none() -> Links {
        Links::default()
    }

    #[test]
    fn messages_as_mdbook_xgettext_makes_them_headings_without_marks() {
        let src = "## Agents\n\nAn agent *decides*.\n\n```\nx = 1\n```\n\n- one\n- two\n";
        let tgt = "## 智能体\n\n智能体会*决定*。\n\n```\nx = 1\n```\n\n- 一\n- 二\n";
        let m = unit_messages(src, Some(tgt), &none());
        let ids: Vec<&str> = m.iter().map(|m| m.msgid.as_str()).collect();
        assert_eq!(ids, ["Agents", "An agent _decides_.", "one", "two"]);
        let strs: Vec<String> = m.iter().map(|m| m.msgstr.clone()).collect();
        assert_eq!(strs, ["智能体", "智能体会_决定_。", "一", "二"]);
        assert_eq!(
            rebuild(tgt, &strs, false, &none()).as_deref().ok(),
            Some(tgt)
        );
        assert_eq!(m[1].offset, src.find("An agent").unwrap());
        // An edited message replaces its own bytes only: the rest keeps its spelling.
        let mut edited = strs.clone();
        edited[3] = "两个".into();
        assert_eq!(
            rebuild(tgt, &edited, false, &none()).as_deref().ok(),
            Some("## 智能体\n\n智能体会*决定*。\n\n```\nx = 1\n```\n\n- 一\n- 两个\n")
        );
        // An untranslated unit's messages are filled in over its source.
        let m = unit_messages(src, None, &none());
        assert!(m.iter().all(|m| m.msgstr.is_empty() && !m.whole));
        assert_eq!(
            rebuild(src, &strs, false, &none()).as_deref().ok(),
            Some(tgt.replace("*决定*", "_决定_").as_str())
        );
        // A target with merged paragraphs is one message for the unit.
        let m = unit_messages("A.\n\nB.\n", Some("甲乙。\n"), &none());
        assert_eq!(m.len(), 1);
        assert_eq!(
            (m[0].msgid.as_str(), m[0].msgstr.as_str()),
            ("A.\n\nB.", "甲乙。")
        );
        assert!(m[0].whole);
        assert_eq!(
            rebuild("甲乙。\n", &["甲乙丙。".into()], true, &none())
                .as_deref()
                .ok(),
            Some("甲乙丙。\n")
        );
        // A heading translated as a paragraph: one whole-unit message.
        let m = unit_messages("# Title\n", Some("标题段落\n"), &none());
        assert!(m[0].whole);
        assert_eq!(
            rebuild("标题段落\n", &[m[0].msgstr.clone()], true, &none())
                .as_deref()
                .ok(),
            Some("标题段落\n")
        );
    }

    #[test]
    fn write_read_keeps_flags_context_and_escapes() {
        let msgs = vec![
            Message {
                msgctxt: None,
                msgid: "Say \"hi\"\tnow\\\nand then".into(),
                msgstr: "说“嗨”\t现在\\\n然后".into(),
                references: vec!["src/ch1.md:3".into(), "src/ch2.md:10".into()],
                fuzzy: true,
                comments: vec!["warning numbers: 1 missing".into()],
            },
            Message {
                msgctxt: Some("ch2-004.0".into()),
                msgid: "Say \"hi\"\tnow\\\nand then".into(),
                msgstr: "另一种".into(),
                references: vec!["src/ch2.md:40".into()],
                fuzzy: false,
                comments: vec![],
            },
        ];
        let text = write(
            "zh-Hans",
            "demo",
            "2026-12-02T11:44:54Z",
            &msgs,
            false,
            MachineText::Fuzzy,
        );
        assert!(text.contains("Language: zh-Hans\\n"), "{text}");
        assert!(
            text.contains("#: src/ch1.md:3 src/ch2.md:10\n#, fuzzy\n"),
            "{text}"
        );
        assert!(text.contains("msgctxt \"ch2-004.0\""), "{text}");
        assert!(!is_marked(&text));
        let back = read(&text, "x.po").unwrap();
        assert_eq!(back.len(), 2);
        for (m, b) in msgs.iter().zip(&back) {
            assert_eq!(
                (&b.msgctxt, &b.msgid, &b.msgstr, b.fuzzy),
                (&m.msgctxt, &m.msgid, &m.msgstr, m.fuzzy)
            );
        }
        assert!(is_marked(&write(
            "zh",
            "demo",
            "2026-12-02T11:44:54Z",
            &msgs,
            true,
            MachineText::Fuzzy
        )));
        let e = read(
            "msgid \"\"\nmsgstr \"\"\n\nmsgid \"a\nmsgstr \"b\"\n",
            "bad.po",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
    }

    /// The export's choice for machine translations: with `fuzzy` (the default) they are
    /// `#, fuzzy` and mdbook-gettext leaves them out; with `final` none is, and the header says
    /// the catalog holds unreviewed machine text. A human edit is not fuzzy in either mode, and
    /// an untranslated message never is.
    #[test]
    fn machine_translations_are_fuzzy_or_final_as_the_export_chooses_and_edits_never_fuzzy() {
        let msg = |msgid: &str, msgstr: &str, fuzzy: bool| Message {
            msgctxt: None,
            msgid: msgid.into(),
            msgstr: msgstr.into(),
            references: vec!["ch.md:1".into()],
            fuzzy,
            comments: vec![],
        };
        let msgs = vec![
            msg("Machine", "机器", true),
            msg("Edited", "编辑", false),
            msg("Untranslated", "", false),
        ];
        let fuzzy_of = |text: &str| -> Vec<(String, bool)> {
            read(text, "x.po")
                .unwrap()
                .into_iter()
                .map(|m| (m.msgid, m.fuzzy))
                .collect()
        };
        let date = "2026-12-02T11:44:54Z";
        let default = write("zh", "demo", date, &msgs, false, MachineText::default());
        assert_eq!(
            fuzzy_of(&default),
            [
                ("Machine".to_string(), true),
                ("Edited".to_string(), false),
                ("Untranslated".to_string(), false)
            ]
        );
        assert!(!is_machine_final(&default), "{default}");
        let fin = write("zh", "demo", date, &msgs, false, MachineText::Final);
        assert!(fuzzy_of(&fin).iter().all(|(_, f)| !f), "{fin}");
        assert!(!fin.contains("#, fuzzy"), "{fin}");
        assert!(is_machine_final(&fin), "{fin}");
        assert!(
            fin.starts_with("# Translations of demo by booktr.\n# x-booktr-machine-text: final."),
            "{fin}"
        );
        // The header comment and the rehearsal mark sit side by side.
        let both = write("zh", "demo", date, &msgs, true, MachineText::Final);
        assert!(is_marked(&both) && is_machine_final(&both), "{both}");
        // The choice reads back from its command-line spelling.
        assert_eq!(
            "final".parse::<MachineText>().ok(),
            Some(MachineText::Final)
        );
        assert_eq!(
            "Fuzzy".parse::<MachineText>().ok(),
            Some(MachineText::Fuzzy)
        );
        assert_eq!(MachineText::Final.as_str(), "final");
        let e = "draft".parse::<MachineText>().unwrap_err();
        assert_eq!(e.value, "draft");
    }

    /// A new user found a link finding of a list item written above the unit's heading.
    #[test]
    fn a_finding_was_written_above_the_units_first_message() {
        let src =
            "# Title\n\nPlain text.\n\n- Item with [a ref][r] link\n\n[r]: https://example.com/a\n";
        let tgt = "# 标题\n\n纯文本。\n\n- 带 [参考][r] 的项\n\n[r]: https://example.com/a\n";
        let m = unit_messages(src, Some(tgt), &none());
        assert_eq!(m.len(), 3, "{m:?}");
        let at = |span, se: &str, te: &str| message_of_finding(&m, src, Some(tgt), span, se, te);
        // By the URL in the message as written (the definition is outside every message).
        assert_eq!(at(None, "https://example.com/a", ""), 2);
        // By a target excerpt, by a source excerpt, by a span (chars of the target).
        assert_eq!(at(None, "", "纯文本"), 1);
        assert_eq!(at(None, "Plain text.", ""), 1);
        let span_start = tgt[..tgt.find("带").unwrap()].chars().count();
        assert_eq!(at(Some((span_start, span_start + 1)), "", ""), 2);
        // Nothing to go by: the first message.
        assert_eq!(at(None, "", ""), 0);
    }

    /// Regression (a new user): polib refused a PO file with a blank line between its header
    /// comments and `msgid ""`, which gettext (msgfmt, msgmerge) accepts; a later entry's
    /// comments followed by a blank line lost their message too.
    #[test]
    fn polib_refused_a_blank_line_between_the_header_comments_and_msgid() {
        let text = "# Translations of demo.\n# Editor: A. N. Other\n\nmsgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\"Language: zh\\n\"\n\n#: ch.md:3\n#, fuzzy\n\nmsgid \"Hello\"\nmsgstr \"你好\"\n  \n#~ msgid \"Old\"\n#~ msgstr \"旧\"\n\nmsgid \"Bye\"\nmsgstr \"再见\"\n";
        let back = read(text, "blank.po").unwrap();
        let got: Vec<(&str, &str, bool)> = back
            .iter()
            .map(|m| (m.msgid.as_str(), m.msgstr.as_str(), m.fuzzy))
            .collect();
        assert_eq!(got, [("Hello", "你好", true), ("Bye", "再见", false)]);
        // A file without such lines is read as it is.
        let plain = write(
            "zh",
            "demo",
            "2026-12-02T11:44:54Z",
            &[],
            false,
            MachineText::Fuzzy,
        );
        assert!(matches!(
            join_comments_to_their_entry(&plain),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    /// Regression (a new user): a `msgstr` with a line break or a `|` inside a quoted list item
    /// or a table cell was written as it was and broke the block: the quote ended at the line
    /// break, the cell split in two. Each is now fitted to its place, and a paragraph break a
    /// cell or heading cannot hold is refused.
    #[test]
    fn a_msgstr_with_a_newline_or_a_pipe_broke_its_quoted_list_item_or_table_cell() {
        let base = "> - Quoted item one\n> - Quoted item two\n\n| Option | Meaning |\n|---|---|\n| model | The model name |\n\n## Heading\n";
        let m = unit_messages(base, None, &none());
        let ids: Vec<&str> = m.iter().map(|m| m.msgid.as_str()).collect();
        assert_eq!(
            ids,
            [
                "Quoted item one",
                "Quoted item two",
                "Option",
                "Meaning",
                "model",
                "The model name",
                "Heading"
            ]
        );
        let mut strs: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        strs[0] = "第一行\n第二行".into();
        strs[5] = "模型 | 名称\n第二行".into();
        strs[6] = "标题\n续".into();
        let text = rebuild(base, &strs, false, &none()).unwrap();
        assert_eq!(
            text,
            "> - 第一行\n>   第二行\n> - Quoted item two\n\n| Option | Meaning |\n|---|---|\n| model | 模型 \\| 名称 第二行 |\n\n## 标题 续\n"
        );
        // The blocks are the same: the item stays in the quote, the row keeps two cells.
        let again = xgettext::extract(&text, &none());
        let places: Vec<xgettext::Place> = again.iter().map(|m| m.place).collect();
        let before: Vec<xgettext::Place> = xgettext::extract(base, &none())
            .iter()
            .map(|m| m.place)
            .collect();
        assert_eq!(places, before);
        assert_eq!(again[0].msgid, "第一行 第二行");
        assert_eq!(again[5].msgid, "模型 \\| 名称 第二行");
        // A paragraph break in a table cell is refused, naming the message.
        strs[5] = "一段\n\n另一段".into();
        let e = rebuild(base, &strs, false, &none()).unwrap_err();
        assert!(
            matches!(&e, RebuildError::Unrepresentable { msgid, .. } if msgid == "The model name"),
            "{e}"
        );
        assert!(e.to_string().contains("table cell"), "{e}");
    }

    /// mdbook-gettext (mdbook-i18n-helpers 0.4 reads PO files with polib 0.2) panicked on a
    /// booktr catalog: its header had no `POT-Creation-Date`, `PO-Revision-Date` or
    /// `Language-Team`.
    #[test]
    fn mdbook_gettext_panicked_on_a_booktr_header() {
        let text = write(
            "zh",
            "demo",
            "2026-12-02T11:44:54Z",
            &[],
            false,
            MachineText::Fuzzy,
        );
        // Every header field mdbook-gettext's PO reader (polib 0.2) unwraps.
        for field in [
            "Project-Id-Version",
            "POT-Creation-Date",
            "PO-Revision-Date",
            "Language-Team",
            "MIME-Version",
            "Content-Type",
            "Content-Transfer-Encoding",
            "Language",
            "Plural-Forms",
        ] {
            assert!(
                text.contains(&format!("\"{field}: ")),
                "{field} missing: {text}"
            );
        }
    }

    proptest! {
        /// Messages of any unit and target rebuild the target exactly, and survive a PO round
        /// trip unchanged.
        #[test]
        fn messages_rebuild_their_unit(
            paras in proptest::collection::vec(prop_oneof![
                Just("# Title"), Just("Plain words here."), Just("- a\n- b"), Just("```\ncode\n```"),
                Just("A \"quoted\"\tline\\ with `code`."), Just("> quote"), Just("| a | b |\n|---|---|\n| 1 | 2 |"),
            ], 1..6),
            translate in proptest::collection::vec(any::<bool>(), 6),
            trail in prop_oneof![Just(""), Just("\n"), Just("\n\n")],
            edit in 0usize..64,
        ) {
            let source = paras.join("\n\n") + trail;
            let target: String = paras.iter().zip(&translate).map(|(p, t)| {
                if *t && !p.starts_with("```") { p.replace("a", "甲").replace("Title", "标题") } else { p.to_string() }
            }).collect::<Vec<_>>().join("\n\n") + trail;
            let m = unit_messages(&source, Some(&target), &none());
            let strs: Vec<String> = m.iter().map(|m| m.msgstr.clone()).collect();
            let rebuilt = rebuild(&target, &strs, m[0].whole, &none()).unwrap();
            prop_assert_eq!(rebuilt.trim(), target.trim());
            // An edited msgstr changes its own message and no other.
            if !m[0].whole {
                let k = edit % strs.len();
                let mut edited = strs.clone();
                edited[k] = "编辑过的文字".to_string();
                let text = rebuild(&target, &edited, false, &none()).unwrap();
                let again: Vec<String> = xgettext::extract(&text, &none()).into_iter().map(|m| m.msgid).collect();
                prop_assert_eq!(again, edited);
                // A line break and a `|` fit any place: the blocks stay the same.
                let mut broken = strs.clone();
                broken[k] = "一 | 二\n三".to_string();
                let text = rebuild(&target, &broken, false, &none()).unwrap();
                let places = |t: &str| xgettext::extract(t, &none()).into_iter().map(|m| m.place).collect::<Vec<_>>();
                prop_assert_eq!(places(&text), places(&target));
            }
            let po: Vec<Message> = m.iter().enumerate().map(|(i, u)| Message {
                msgctxt: Some(format!("u.{i}")), msgid: u.msgid.clone(), msgstr: u.msgstr.clone(),
                references: vec![format!("ch.md:{}", i + 1)], fuzzy: true, comments: vec![],
            }).collect();
            let back = read(&write("zh", "p", "2026-12-02T11:44:54Z", &po, false, MachineText::Fuzzy), "p.po").unwrap();
            let got: Vec<String> = back.into_iter().map(|b| b.msgstr).collect();
            prop_assert_eq!(got, strs);
        }
    }
}
