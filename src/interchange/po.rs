//! gettext PO catalogs, written and read with the `polib` crate (the PO library
//! `mdbook-i18n-helpers` itself uses, so its escaping and line folding are what mdBook's
//! gettext workflow already reads).
//!
//! Messages follow `mdbook-i18n-helpers`: one `msgid` per Markdown block (a paragraph, a list, a
//! table, a quote; a heading without its `#` marks), `#:` references `file:line` to where the
//! block starts, a header naming the `Language`. Code blocks, HTML and other verbatim blocks are
//! not messages. A unit whose target does not pair block for block with its source (the
//! translator merged or split paragraphs, or translated comments inside a code block) is one
//! message for the whole unit, so that every message rebuilds its unit exactly ([`unit_messages`]
//! and [`rebuild`], property-tested). Machine translations are `#, fuzzy`; human edits are not.
//!
//! The rehearsal mark of a PO file is a header comment line `# x-booktr-rehearsal: true. …`
//! (polib keeps only the standard header fields).

use std::io::BufWriter;

use super::FileError;
use crate::book::segment::{BlockKind, top_level_blocks};

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
    /// `#, fuzzy`: a machine translation no human has approved.
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

/// The header comment line of a rehearsal's PO file.
pub fn rehearsal_comment() -> String {
    format!(
        "{}: true. {}",
        super::rehearsal::MARK,
        super::rehearsal::NOTE
    )
}

/// Writes a PO catalog for target language `lang` (BCP 47) of project `project`.
pub fn write(lang: &str, project: &str, messages: &[Message], rehearsal: bool) -> String {
    use polib::catalog::Catalog;
    use polib::message::Message as PoMessage;
    use polib::metadata::CatalogMetadata;
    let mut meta = CatalogMetadata::new();
    meta.project_id_version = project.to_string();
    meta.language = lang.to_string();
    meta.mime_version = "1.0".into();
    meta.content_type = "text/plain; charset=UTF-8".into();
    meta.content_transfer_encoding = "8bit".into();
    let mut catalog = Catalog::new(meta);
    catalog.preheader = vec![format!("Translations of {project} by booktr.")];
    if rehearsal {
        catalog.preheader.push(rehearsal_comment());
    }
    for m in messages {
        let mut flags = polib::message::MessageFlags::new();
        if m.fuzzy && !m.msgstr.is_empty() {
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

/// Whether a PO file's header comments carry the rehearsal mark.
pub fn is_marked(text: &str) -> bool {
    let mark = format!("# {}: true", super::rehearsal::MARK);
    text.lines()
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .any(|l| l.starts_with(&mark))
}

/// One message of a unit: its `msgid`, `msgstr` (empty when untranslated) and the byte offset
/// in the unit's source where its block starts (for the `#:` line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitMessage {
    pub msgid: String,
    pub msgstr: String,
    pub offset: usize,
    /// True for the one message of a unit whose target does not pair with its source block
    /// for block (give it to [`rebuild`]).
    pub whole: bool,
}

/// The byte range of a block's message text inside `text[range]`: trimmed of surrounding
/// whitespace, and for an ATX heading without its `#` marks and the space after them.
fn message_range(
    text: &str,
    range: std::ops::Range<usize>,
    heading: bool,
) -> std::ops::Range<usize> {
    let s = &text[range.clone()];
    let lead = s.len() - s.trim_start().len();
    let body = s.trim();
    let mut start = range.start + lead;
    let end = start + body.len();
    if heading && body.starts_with('#') {
        let hashes = body.bytes().take_while(|b| *b == b'#').count();
        let rest = &body[hashes..];
        let gap = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        start = (start + hashes + gap).min(end);
    }
    start..end
}

/// Message ranges of the prose blocks of `text`, with whether each is a heading.
fn blocks(text: &str) -> Vec<(std::ops::Range<usize>, BlockKind)> {
    top_level_blocks(text)
        .into_iter()
        .filter(|b| matches!(b.kind, BlockKind::Prose | BlockKind::Heading))
        .map(|b| {
            let r = message_range(text, b.range, b.kind == BlockKind::Heading);
            (r, b.kind)
        })
        .filter(|(r, _)| !r.is_empty())
        .collect()
}

/// The messages of one prose unit: one per prose block of `source` when `target` is `None`
/// (empty `msgstr`s) or pairs with it block for block (same number and kinds of prose blocks,
/// and [`rebuild`] from the pairs gives `target` exactly); otherwise one message for the whole
/// unit (source and target trimmed). Code and other verbatim blocks are never messages.
pub fn unit_messages(source: &str, target: Option<&str>) -> Vec<UnitMessage> {
    let sb = blocks(source);
    let per_block = |strs: Vec<String>| -> Vec<UnitMessage> {
        sb.iter()
            .zip(strs)
            .map(|((r, _), msgstr)| UnitMessage {
                msgid: source[r.clone()].to_string(),
                msgstr,
                offset: r.start,
                whole: false,
            })
            .collect()
    };
    let whole = |t: &str| {
        let lead = source.len() - source.trim_start().len();
        vec![UnitMessage {
            msgid: source.trim().to_string(),
            msgstr: t.trim().to_string(),
            offset: lead,
            whole: true,
        }]
    };
    let Some(target) = target else {
        if sb.is_empty() {
            return whole("");
        }
        return per_block(vec![String::new(); sb.len()]);
    };
    let tb = blocks(target);
    if !sb.is_empty() && sb.len() == tb.len() && sb.iter().zip(&tb).all(|(a, b)| a.1 == b.1) {
        let strs: Vec<String> = tb
            .iter()
            .map(|(r, _)| target[r.clone()].to_string())
            .collect();
        if rebuild(source, &strs, false).as_deref() == Some(target) {
            return per_block(strs);
        }
    }
    whole(target)
}

/// The unit text that `msgstrs` (one per message of [`unit_messages`], in order) give: for
/// per-block messages, `source` with each block's message text replaced by its `msgstr`; for a
/// whole-unit message (`whole`, see [`UnitMessage::whole`]), the `msgstr` with the source's
/// surrounding whitespace. `None` when the count does not match.
pub fn rebuild(source: &str, msgstrs: &[String], whole: bool) -> Option<String> {
    let sb = blocks(source);
    if !whole && msgstrs.len() == sb.len() && !sb.is_empty() {
        let mut out = String::with_capacity(source.len() * 2);
        let mut pos = 0;
        for ((r, _), s) in sb.iter().zip(msgstrs) {
            out.push_str(&source[pos..r.start]);
            out.push_str(s);
            pos = r.end;
        }
        out.push_str(&source[pos..]);
        return Some(out);
    }
    match msgstrs {
        [one] if whole || sb.is_empty() => Some(super::surround_like(source, one)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_message_per_block_headings_without_marks() {
        let src = "## Agents\n\nAn agent *decides*.\n\n```\nx = 1\n```\n\n- one\n- two\n";
        let tgt = "## 智能体\n\n智能体会*决定*。\n\n```\nx = 1\n```\n\n- 一\n- 二\n";
        let m = unit_messages(src, Some(tgt));
        let ids: Vec<&str> = m.iter().map(|m| m.msgid.as_str()).collect();
        assert_eq!(ids, ["Agents", "An agent *decides*.", "- one\n- two"]);
        let strs: Vec<String> = m.iter().map(|m| m.msgstr.clone()).collect();
        assert_eq!(strs, ["智能体", "智能体会*决定*。", "- 一\n- 二"]);
        assert_eq!(rebuild(src, &strs, false).as_deref(), Some(tgt));
        assert_eq!(m[1].offset, src.find("An agent").unwrap());
        // A target with merged paragraphs is one message for the unit.
        let m = unit_messages("A.\n\nB.\n", Some("甲乙。\n"));
        assert_eq!(m.len(), 1);
        assert_eq!(
            (m[0].msgid.as_str(), m[0].msgstr.as_str()),
            ("A.\n\nB.", "甲乙。")
        );
        assert!(m[0].whole);
        assert_eq!(
            rebuild("A.\n\nB.\n", &["甲乙。".into()], true).as_deref(),
            Some("甲乙。\n")
        );
        // A heading translated as a paragraph: one whole-unit message that rebuilds as such.
        let m = unit_messages("# Title\n", Some("标题段落\n"));
        assert!(m[0].whole);
        assert_eq!(
            rebuild("# Title\n", &[m[0].msgstr.clone()], true).as_deref(),
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
        let text = write("zh-Hans", "demo", &msgs, false);
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
        assert!(is_marked(&write("zh", "demo", &msgs, true)));
        let e = read(
            "msgid \"\"\nmsgstr \"\"\n\nmsgid \"a\nmsgstr \"b\"\n",
            "bad.po",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
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
        ) {
            let source = paras.join("\n\n") + trail;
            let target: String = paras.iter().zip(&translate).map(|(p, t)| {
                if *t && !p.starts_with("```") { p.replace("a", "甲").replace("Title", "标题") } else { p.to_string() }
            }).collect::<Vec<_>>().join("\n\n") + trail;
            let m = unit_messages(&source, Some(&target));
            let strs: Vec<String> = m.iter().map(|m| m.msgstr.clone()).collect();
            let rebuilt = rebuild(&source, &strs, m[0].whole).unwrap();
            prop_assert_eq!(rebuilt.trim(), target.trim());
            let po: Vec<Message> = m.iter().enumerate().map(|(i, u)| Message {
                msgctxt: Some(format!("u.{i}")), msgid: u.msgid.clone(), msgstr: u.msgstr.clone(),
                references: vec![format!("ch.md:{}", i + 1)], fuzzy: true, comments: vec![],
            }).collect();
            let back = read(&write("zh", "p", &po, false), "p.po").unwrap();
            let got: Vec<String> = back.into_iter().map(|b| b.msgstr).collect();
            prop_assert_eq!(got, strs);
        }
    }
}
