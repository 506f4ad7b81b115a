//! TMX 1.4b (LISA, 2005) translation memories, written and read with `quick-xml`.
//!
//! booktr writes, for each translated unit, one `<tu>` per segment of the unit as XLIFF has
//! them ([`super::segments::align`]): a sentence pair where the target's sentences align 1:1
//! with the source's (`segtype="sentence"`), else a block or the whole unit (`segtype="block"`);
//! `tuid` is the unit id, with `#sN` (1-based segment number) when the unit has several. Each
//! `<seg>` holds the segment's exact text, the whitespace after it included, so the segments
//! of a unit joined in order give the unit's text. Its origin (`model`, `memory` or `human`
//! edit) is `<prop type="x-booktr-origin">`. Carriage returns are written as `&#xD;`;
//! a unit with a character XML 1.0 cannot carry (a control character other than tab and line
//! breaks) is left out and counted.
//!
//! Reading keeps, for each `<tu>`, the texts of the `<tuv>`s that best match the two
//! languages (codes matched leniently; TMX 1.4 `xml:lang` or 1.1 `lang`). Inline markup in
//! `<seg>` (`<bpt>`, `<ept>`, `<ph>`, `<it>`, `<hi>`, `<ut>`) keeps its text: the native code
//! it encloses is what the text had, so a memory written by a CAT tool that encoded Markdown
//! codes as tags still matches.

use super::xml::{self, Node};
use super::{FileError, best_match};
use crate::lang::Lang;

/// One unit pair to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub id: String,
    pub source: String,
    pub target: String,
    /// `model`, `human` or `memory`.
    pub origin: String,
    /// True for a sentence pair (TMX `segtype="sentence"`), false for a block or unit pair
    /// (`segtype="block"`) kept whole because its sentences did not align 1:1
    /// ([`super::segments::align`]).
    pub sentence: bool,
}

/// Writes a TMX 1.4b document of `pairs`; returns it and the number of pairs left out because
/// XML cannot carry one of their characters.
pub fn write(source: &Lang, target: &Lang, pairs: &[Pair]) -> (String, usize) {
    write_marked(source, target, pairs, false)
}

/// [`write`], with the rehearsal mark in the header when `rehearsal` is true: a `<note>`
/// ([`super::rehearsal::NOTE`]) and `<prop type="x-booktr-rehearsal">true</prop>` (TMX 1.4b
/// §3.1: a header holds `note`, `ude` and `prop` elements; `x-` types are user-defined).
pub fn write_marked(
    source: &Lang,
    target: &Lang,
    pairs: &[Pair],
    rehearsal: bool,
) -> (String, usize) {
    let mut w = xml::writer();
    // The header's segmentation is the one most pairs have; a pair of the other kind says
    // its own on its <tu> (TMX 1.4b §3.1: `segtype` on <tu> overrides the header's).
    let sentences = pairs.iter().filter(|p| p.sentence).count();
    let header_sentence = sentences * 2 > pairs.len();
    let seg_name = |sentence: bool| if sentence { "sentence" } else { "block" };
    xml::open(&mut w, "tmx", &[("version", "1.4")]);
    xml::open(
        &mut w,
        "header",
        &[
            ("creationtool", "booktr"),
            ("creationtoolversion", env!("CARGO_PKG_VERSION")),
            ("segtype", seg_name(header_sentence)),
            ("o-tmf", "booktr"),
            ("adminlang", "en"),
            ("srclang", &source.code),
            ("datatype", "plaintext"),
        ],
    );
    if rehearsal {
        xml::leaf(&mut w, "note", &[], super::rehearsal::NOTE);
        xml::leaf(&mut w, "prop", &[("type", super::rehearsal::MARK)], "true");
    }
    xml::close(&mut w, "header");
    xml::open(&mut w, "body", &[]);
    let mut skipped = 0;
    for p in pairs {
        if !p
            .source
            .chars()
            .chain(p.target.chars())
            .all(xml::is_xml_char)
        {
            skipped += 1;
            continue;
        }
        let mut attrs = vec![("tuid", p.id.as_str())];
        if p.sentence != header_sentence {
            attrs.push(("segtype", seg_name(p.sentence)));
        }
        xml::open(&mut w, "tu", &attrs);
        xml::leaf(&mut w, "prop", &[("type", "x-booktr-origin")], &p.origin);
        for (lang, text) in [(&source.code, &p.source), (&target.code, &p.target)] {
            xml::open(&mut w, "tuv", &[("xml:lang", lang)]);
            xml::leaf(&mut w, "seg", &[], text);
            xml::close(&mut w, "tuv");
        }
        xml::close(&mut w, "tu");
    }
    xml::close(&mut w, "body");
    xml::close(&mut w, "tmx");
    (xml::finish(w), skipped)
}

/// A translation unit read from a TMX file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadPair {
    /// `tuid`, or `line N` when the `<tu>` has none.
    pub id: String,
    pub source: String,
    pub target: String,
}

/// Reads the pairs of a TMX document for `source` → `target`; `<tu>`s without both languages
/// are skipped.
///
/// Errors name the file and line: malformed XML, a root that is not `tmx`, a `<tuv>` without
/// a language.
pub fn read(
    text: &str,
    display: &str,
    source: &Lang,
    target: &Lang,
) -> Result<Vec<ReadPair>, FileError> {
    let nodes = xml::parse(text, display)?;
    if !nodes
        .iter()
        .find(|n| matches!(n, Node::Start { .. }))
        .is_some_and(|n| n.is_start("tmx"))
    {
        return Err(FileError::new(
            display,
            Some(1),
            "is not a TMX file (its root element is not <tmx>)",
        ));
    }
    let mut pairs = Vec::new();
    let mut i = 0;
    while i < nodes.len() {
        let Node::Start { name, pos, .. } = &nodes[i] else {
            i += 1;
            continue;
        };
        if name != "tu" {
            i += 1;
            continue;
        }
        let id = nodes[i]
            .attr("tuid")
            .map(String::from)
            .unwrap_or_else(|| format!("line {}", xml::line_of(text, *pos)));
        let end = xml::skip(&nodes, i);
        let mut tuvs: Vec<(String, String)> = Vec::new();
        let mut j = i + 1;
        while j < end {
            if let Node::Start { name, pos, .. } = &nodes[j]
                && name == "tuv"
            {
                let lang = nodes[j]
                    .attr("xml:lang")
                    .or(nodes[j].attr("lang"))
                    .unwrap_or("")
                    .to_string();
                if lang.is_empty() {
                    return Err(FileError::new(
                        display,
                        Some(xml::line_of(text, *pos)),
                        "a <tuv> has no xml:lang; add the language code",
                    ));
                }
                let e = xml::skip(&nodes, j);
                let seg = nodes[j..e]
                    .iter()
                    .position(|n| n.is_start("seg"))
                    .map(|k| xml::text_until_end(&nodes, j + k).0)
                    .unwrap_or_default();
                tuvs.push((lang, seg));
                j = e;
            } else {
                j += 1;
            }
        }
        if let (Some(s), Some(t)) = (best_match(source, &tuvs), best_match(target, &tuvs))
            && !std::ptr::eq(s, t)
        {
            pairs.push(ReadPair {
                id,
                source: s.clone(),
                target: t.clone(),
            });
        }
        i = end;
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_tmx_from_other_tools() {
        let t = r#"<?xml version="1.0"?>
<tmx version="1.4"><header srclang="EN-US" segtype="sentence" creationtool="x" creationtoolversion="1" adminlang="en" datatype="plaintext" o-tmf="x"/>
<body>
<tu tuid="7"><tuv xml:lang="EN-US"><seg>Use <bpt i="1">**</bpt>tools<ept i="1">**</ept>.</seg></tuv><tuv xml:lang="zh-Hans"><seg>使用<bpt i="1">**</bpt>工具<ept i="1">**</ept>。</seg></tuv></tu>
<tu><tuv lang="en"><seg>Only English.</seg></tuv></tu>
<tu><tuv xml:lang="en"><seg>A</seg></tuv><tuv xml:lang="de"><seg>B</seg></tuv><tuv xml:lang="zh-TW"><seg>乙</seg></tuv></tu>
</body></tmx>"#;
        let p = read(t, "m.tmx", &Lang::parse("en"), &Lang::parse("zh-CN")).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].source, "Use **tools**.");
        assert_eq!(p[0].target, "使用**工具**。");
        assert_eq!(p[0].id, "7");
        assert_eq!(
            p[1].target, "乙",
            "a zh-TW tuv still matches a zh-CN target"
        );
        assert_eq!(p[1].id, "line 6");
    }

    #[test]
    fn bad_files_name_file_and_line() {
        let e = read("<xliff/>", "m.tmx", &Lang::parse("en"), &Lang::parse("zh")).unwrap_err();
        assert!(e.to_string().contains("not a TMX"), "{e}");
        let e = read(
            "<tmx>\n<body>\n<tu><tuv><seg>x</seg></tuv></tu></body></tmx>",
            "m.tmx",
            &Lang::parse("en"),
            &Lang::parse("zh"),
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
    }

    proptest! {
        #[test]
        fn write_read_is_lossless(
            pairs in proptest::collection::vec(("[a-z0-9-]{1,8}", "(\\PC|[\\r\\n\\t<>&])*", "(\\PC|[\\r\\n<>&])*"), 0..5)
        ) {
            let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
            let pairs: Vec<Pair> = pairs
                .into_iter()
                .map(|(id, s, t)| Pair { id, source: s, target: t, origin: "model".into(), sentence: true })
                .collect();
            let (doc, skipped) = write(&en, &zh, &pairs);
            prop_assert_eq!(skipped, 0);
            let back = read(&doc, "m.tmx", &en, &zh).unwrap();
            prop_assert_eq!(back.len(), pairs.len());
            for (a, b) in pairs.iter().zip(&back) {
                prop_assert_eq!(&a.id, &b.id);
                prop_assert_eq!(&a.source, &b.source);
                prop_assert_eq!(&a.target, &b.target);
            }
            let again: Vec<Pair> = back
                .into_iter()
                .map(|p| Pair { id: p.id, source: p.source, target: p.target, origin: "model".into(), sentence: true })
                .collect();
            prop_assert_eq!(write(&en, &zh, &again).0, doc);
        }
    }
}
