//! XLIFF 1.2 (OASIS, 2008), written and read with `quick-xml`, for CAT tools that still work
//! in 1.2.
//!
//! The layout mirrors the XLIFF 2.0 export ([`super::xliff`]): one `<file>` per chapter
//! (`original` = the chapter path, `datatype="x-markdown"`, `xml:space="preserve"`), one
//! `<trans-unit>` per translation unit (`id` = unit id, `resname` = chapter key), with
//! `<source>`, `<target state="…">` and `<note from="booktr:qa" priority="…"
//! annotates="target">` for each QA finding. Code-only and front-matter units are
//! `translate="no"`. Inline codes ([`super::inline`]) are 1.2's native-code elements: a
//! standalone code is `<ph id="n">native</ph>`, a link or image `<bpt id="n">[</bpt>text<ept
//! id="n">](url)</ept>` (the same code has the same id in source and target). A character XML
//! 1.0 cannot carry is `<ph ctype="x-booktr-cp-XXXX"/>` (1.2 has no `<cp>`); carriage returns
//! are `&#xD;`. So the text of a `<source>` or `<target>` with every element's native content
//! kept is the unit's exact text, which is how [`read`] reads it back.
//!
//! Target states (XLIFF 1.2 §2.5.6, `state`): `translated` for a model's translation without
//! QA errors, `needs-review-translation` with errors, `final` for a human edit (and for units
//! copied unchanged); an untranslated unit has no `<target>`.

use super::FileError;
use super::inline::{self, Piece};
use super::xml::{self, Node};

/// XLIFF 1.2 namespace.
pub const NS: &str = "urn:oasis:names:tc:xliff:document:1.2";

/// The `ctype` prefix of a placeholder standing for a character XML cannot carry.
const CP: &str = "x-booktr-cp-";

/// Code ids of one unit, shared by source and target.
#[derive(Default)]
struct Ids {
    /// Source codes: (kind, native start, native end, id, used by the target).
    codes: Vec<(u8, String, String, usize, bool)>,
    next: usize,
}

impl Ids {
    fn id(&mut self, target: bool, kind: u8, start: &str, end: &str) -> usize {
        if target
            && let Some(c) = self
                .codes
                .iter_mut()
                .find(|c| !c.4 && c.0 == kind && c.1 == start && c.2 == end)
        {
            c.4 = true;
            return c.3;
        }
        self.next += 1;
        if !target {
            self.codes
                .push((kind, start.into(), end.into(), self.next, false));
        }
        self.next
    }
}

fn text_xml(s: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    for c in s.chars() {
        if xml::is_xml_char(c) {
            run.push(c);
        } else {
            out.push_str(&xml::escape_text(&run));
            run.clear();
            out.push_str(&format!(
                "<ph id=\"cp{:04X}\" ctype=\"{CP}{:04X}\"/>",
                c as u32, c as u32
            ));
        }
    }
    out.push_str(&xml::escape_text(&run));
    out
}

fn pieces_xml(pieces: &[Piece], ids: &mut Ids, target: bool, out: &mut String) {
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(&text_xml(t)),
            Piece::Ph(native) => {
                let id = ids.id(target, 0, native, "");
                out.push_str(&format!("<ph id=\"{id}\">{}</ph>", text_xml(native)));
            }
            Piece::Pc { start, end, inner } => {
                let id = ids.id(target, 1, start, end);
                out.push_str(&format!("<bpt id=\"{id}\">{}</bpt>", text_xml(start)));
                pieces_xml(inner, ids, target, out);
                out.push_str(&format!("<ept id=\"{id}\">{}</ept>", text_xml(end)));
            }
        }
    }
}

/// Writes an XLIFF 1.2 document of `files` (the XLIFF 2 records: a unit's `state` is mapped by
/// [`state_12`]), `src_lang` → `trg_lang`, with the rehearsal mark on every `<file>` when
/// `rehearsal` is true (`<header><note from="booktr:rehearsal">`).
pub fn write(
    src_lang: &str,
    trg_lang: &str,
    files: &[super::xliff::File],
    rehearsal: bool,
) -> String {
    let mut w = xml::writer();
    xml::open(&mut w, "xliff", &[("version", "1.2"), ("xmlns", NS)]);
    for f in files {
        xml::open(
            &mut w,
            "file",
            &[
                ("original", &f.original),
                ("source-language", src_lang),
                ("target-language", trg_lang),
                ("datatype", "x-markdown"),
                ("xml:space", "preserve"),
                ("tool-id", "booktr"),
            ],
        );
        xml::open(&mut w, "header", &[]);
        xml::open(
            &mut w,
            "tool",
            &[("tool-id", "booktr"), ("tool-name", "booktr")],
        );
        xml::close(&mut w, "tool");
        if rehearsal {
            xml::leaf(
                &mut w,
                "note",
                &[("from", "booktr:rehearsal"), ("priority", "1")],
                &format!(
                    "{}: true. {}",
                    super::rehearsal::MARK,
                    super::rehearsal::NOTE
                ),
            );
        }
        xml::close(&mut w, "header");
        xml::open(&mut w, "body", &[]);
        for u in &f.units {
            let mut attrs = vec![("id", u.id.as_str()), ("resname", f.id.as_str())];
            if !u.translate {
                attrs.push(("translate", "no"));
            }
            xml::open(&mut w, "trans-unit", &attrs);
            let mut ids = Ids::default();
            let mut source = String::new();
            pieces_xml(&inline::split(&u.source), &mut ids, false, &mut source);
            xml::open(&mut w, "source", &[]);
            xml::raw(&mut w, &source);
            xml::close(&mut w, "source");
            if let Some(t) = &u.target {
                let mut target = String::new();
                pieces_xml(&inline::split(t), &mut ids, true, &mut target);
                let errors = u.notes.iter().any(|n| n.priority == 1);
                xml::open(&mut w, "target", &[("state", state_12(u.state, errors))]);
                xml::raw(&mut w, &target);
                xml::close(&mut w, "target");
            }
            for n in &u.notes {
                let p = n.priority.clamp(1, 10).to_string();
                xml::leaf(
                    &mut w,
                    "note",
                    &[
                        ("from", &n.category),
                        ("priority", &p),
                        ("annotates", "target"),
                    ],
                    &n.text,
                );
            }
            xml::close(&mut w, "trans-unit");
        }
        xml::close(&mut w, "body");
        xml::close(&mut w, "file");
    }
    xml::close(&mut w, "xliff");
    xml::finish(w)
}

/// The XLIFF 1.2 `state` of a target from its XLIFF 2 segment state (`initial`, `translated`,
/// `reviewed`, `final`) and whether QA found errors in it: `final` stays `final` (a human's
/// word, or a unit copied unchanged), `reviewed` is `signed-off`, a translation with errors
/// `needs-review-translation`, otherwise `translated` (`initial`: `needs-translation`).
pub fn state_12(state: &str, errors: bool) -> &'static str {
    match state {
        "final" => "final",
        "reviewed" => "signed-off",
        "initial" => "needs-translation",
        _ if errors => "needs-review-translation",
        _ => "translated",
    }
}

/// Reads every `<trans-unit>` of an XLIFF 1.x document as [`super::xliff::ReadUnit`]s (so an
/// edited 1.2 file is imported like an XLIFF 2 one): source and target are their text with the
/// native content of `<ph>`, `<bpt>`, `<ept>` and `<it>` kept, `<mrk>` and `<g>` dropped with
/// their content kept, and booktr's character placeholders decoded. A unit is identified by
/// its `id`; its `<file>` by `original`.
///
/// Errors name the file and line: malformed XML, not XLIFF 1.x, a unit without id.
pub fn read(text: &str, display: &str) -> Result<Vec<super::xliff::ReadUnit>, FileError> {
    let nodes = xml::parse(text, display)?;
    let Some(root) = nodes.iter().find(|n| matches!(n, Node::Start { .. })) else {
        return Err(FileError::new(display, None, "is empty"));
    };
    if !root.is_start("xliff") || !root.attr("version").unwrap_or("").starts_with('1') {
        return Err(FileError::new(
            display,
            Some(1),
            "is not an XLIFF 1.2 document; import it with `--format xliff` if it is XLIFF 2",
        ));
    }
    let mut units = Vec::new();
    let mut file = String::new();
    let mut i = 0;
    while i < nodes.len() {
        match &nodes[i] {
            Node::Start { name, .. } if name == "file" => {
                file = nodes[i].attr("original").unwrap_or("").to_string();
                i += 1;
            }
            Node::Start { name, pos, .. } if name == "trans-unit" => {
                let end = xml::skip(&nodes, i);
                let id = nodes[i].attr("id").unwrap_or("").to_string();
                if id.is_empty() {
                    return Err(FileError::new(
                        display,
                        Some(xml::line_of(text, *pos)),
                        "a <trans-unit> has no id; units must keep the ids booktr wrote",
                    ));
                }
                let mut source = None;
                let mut target = None;
                let mut j = i + 1;
                while j < end - 1 {
                    if nodes[j].is_start("source") || nodes[j].is_start("target") {
                        let e = xml::skip(&nodes, j);
                        let content = content_text(&nodes[j + 1..e - 1]);
                        if nodes[j].is_start("source") {
                            source = Some(content);
                        } else {
                            target = Some(content);
                        }
                        j = e;
                    } else if nodes[j].is_start("alt-trans") || nodes[j].is_start("seg-source") {
                        j = xml::skip(&nodes, j);
                    } else {
                        j += 1;
                    }
                }
                units.push(super::xliff::ReadUnit {
                    id,
                    file: file.clone(),
                    translate: nodes[i].attr("translate") != Some("no"),
                    source: source.unwrap_or_default(),
                    target,
                    line: xml::line_of(text, *pos),
                });
                i = end;
            }
            _ => i += 1,
        }
    }
    Ok(units)
}

/// The text of `<source>`/`<target>` content: every text node in order (native code included),
/// `<sub>` left out, booktr's character placeholders decoded.
fn content_text(nodes: &[Node]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < nodes.len() {
        match &nodes[i] {
            Node::Text(t) => out.push_str(t),
            Node::Start { name, .. } if name == "sub" => {
                i = xml::skip(nodes, i);
                continue;
            }
            n @ Node::Start { .. } => {
                if let Some(c) = n
                    .attr("ctype")
                    .and_then(|c| c.strip_prefix(CP))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .and_then(char::from_u32)
                {
                    out.push(c);
                }
            }
            Node::End { .. } => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::xliff::{File, Note, Unit};
    use super::*;
    use proptest::prelude::*;

    fn doc(source: &str, target: Option<&str>, state: &'static str) -> String {
        write(
            "en",
            "zh",
            &[File {
                id: "ch1".into(),
                original: "book/ch1.md".into(),
                units: vec![Unit {
                    id: "ch1-000".into(),
                    source: source.into(),
                    target: target.map(String::from),
                    translate: true,
                    state,
                    notes: vec![Note {
                        priority: 1,
                        category: "booktr:qa".into(),
                        text: "error code_blocks: <missing> & \"quoted\"".into(),
                    }],
                }],
            }],
            false,
        )
    }

    #[test]
    fn codes_are_native_elements_with_shared_ids() {
        let src = "Call `f()` and read [the docs](https://x.org).\n";
        let tgt = "阅读[文档](https://x.org)并调用 `f()`。\n";
        let d = doc(src, Some(tgt), "translated");
        assert!(d.contains("<ph id=\"1\">`f()`</ph>"), "{d}");
        assert!(
            d.contains("<bpt id=\"2\">[</bpt>文档<ept id=\"2\">](https://x.org)</ept>"),
            "{d}"
        );
        assert!(
            d.contains("<target state=\"needs-review-translation\">"),
            "{d}"
        );
        assert!(
            d.contains("<note from=\"booktr:qa\" priority=\"1\" annotates=\"target\">error code_blocks: &lt;missing&gt;"),
            "{d}"
        );
        let u = read(&d, "x.xlf").unwrap();
        assert_eq!(
            (u[0].id.as_str(), u[0].file.as_str(), u[0].source.as_str()),
            ("ch1-000", "book/ch1.md", src)
        );
        assert_eq!(u[0].target.as_deref(), Some(tgt));
        assert!(read("<xliff version=\"2.0\"/>", "x.xlf").is_err());
        // The rehearsal mark, and only on a rehearsal's file.
        let chapter = File {
            id: "c".into(),
            original: "c.md".into(),
            units: vec![],
        };
        let marked = write("en", "zh", &[chapter], true);
        let fmt = super::super::Format::detect(std::path::Path::new("x.xlf"), marked.as_bytes());
        assert_eq!(fmt, super::super::Format::Xliff12);
        assert!(super::super::rehearsal::is_marked(fmt, marked.as_bytes()));
        assert!(!super::super::rehearsal::is_marked(fmt, d.as_bytes()));
    }

    #[test]
    fn states_map_to_xliff_12() {
        assert_eq!(state_12("final", true), "final");
        assert_eq!(state_12("translated", false), "translated");
        assert_eq!(state_12("translated", true), "needs-review-translation");
        assert_eq!(state_12("initial", false), "needs-translation");
        assert!(!doc("A.", None, "initial").contains("<target"));
    }

    proptest! {
        /// Any source and target come back byte for byte.
        #[test]
        fn write_read_is_lossless(
            src in "(\\PC|[\\r\\n\\t\\u{1}\\u{b}\\u{fffe}<>&\"`\\[\\]()!$*])*",
            tgt in "(\\PC|[\\r\\n\\u{1b}<>&`\\[\\]()$])*",
            md in proptest::collection::vec(prop_oneof![
                Just("`code` "), Just("[l](u)"), Just("![i](p.png)"), Just("<b>"), Just("</b>"),
                Just("$x$"), Just("\n\n```\nc\u{1}\n```\n"), Just("<http://a>"), Just("[^n]"), Just("\r\n"),
            ], 0..8),
        ) {
            let src = format!("{src}{}", md.concat());
            let tgt = format!("{}{tgt}", md.concat());
            let d = doc(&src, Some(&tgt), "translated");
            let u = read(&d, "x.xlf").unwrap();
            prop_assert_eq!(&u[0].source, &src);
            prop_assert_eq!(u[0].target.as_deref(), Some(tgt.as_str()));
        }
    }
}
