//! Thin helpers over `quick-xml` shared by the TBX, XLIFF and TMX readers and writers.
//!
//! Reading: [`parse`] turns a document into a flat list of [`Node`]s (start, end, text) with
//! local element names, attributes unescaped and normalised, entity and character references
//! resolved, adjacent text and CDATA merged, and the byte offset of each element kept so
//! errors can name a line. The documents booktr reads are small (a book's worth of units), so
//! holding them whole is fine.
//!
//! Writing: element structure goes through `quick_xml::Writer`; text content goes through
//! [`escape_text`], which adds what `quick-xml`'s escaping leaves out for a lossless round
//! trip: a carriage return is written as `&#xD;` (a literal one would be turned into a line
//! feed by every conforming parser, XML 1.0 §2.11).

use std::borrow::Cow;

use quick_xml::XmlVersion;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::reader::Reader;
use quick_xml::writer::Writer;

use super::FileError;

/// One piece of a parsed document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// An element start (an empty element `<x/>` gives a `Start` and an `End`).
    Start {
        /// Local name, without namespace prefix (`langSec`, `ph`).
        name: String,
        /// Attributes in document order: `xml:lang` keeps its prefix, others are local names.
        attrs: Vec<(String, String)>,
        /// Byte offset of the element in the document.
        pos: usize,
    },
    End {
        name: String,
    },
    /// Character data, references resolved.
    Text(String),
}

impl Node {
    /// The value of attribute `key` of a start node.
    pub fn attr(&self, key: &str) -> Option<&str> {
        match self {
            Node::Start { attrs, .. } => attrs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str()),
            _ => None,
        }
    }

    /// Whether this is the start of element `name`.
    pub fn is_start(&self, name: &str) -> bool {
        matches!(self, Node::Start { name: n, .. } if n == name)
    }

    /// Whether this is the end of element `name`.
    pub fn is_end(&self, name: &str) -> bool {
        matches!(self, Node::End { name: n } if n == name)
    }
}

/// 1-based line of byte offset `pos` in `text`.
pub fn line_of(text: &str, pos: usize) -> u64 {
    let pos = pos.min(text.len());
    text.as_bytes()[..pos]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
        + 1
}

/// Parses `text` (an XML document) into nodes.
///
/// Errors: malformed XML (mismatched tags, bad references, …), and a document that ends before
/// its elements are closed (a truncated file) or has no element at all, naming `display` and the
/// line.
pub fn parse(text: &str, display: &str) -> Result<Vec<Node>, FileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut out: Vec<Node> = Vec::new();
    let err = |pos: u64, message: String| FileError {
        path: display.to_string(),
        line: Some(line_of(text, pos as usize)),
        message,
    };
    let push_text = |out: &mut Vec<Node>, s: &str| {
        if let Some(Node::Text(t)) = out.last_mut() {
            t.push_str(s);
        } else {
            out.push(Node::Text(s.to_string()));
        }
    };
    // Open elements (name, start offset): quick-xml reports end-of-file even inside an open
    // element, so truncation is detected here.
    let mut open: Vec<(String, u64)> = Vec::new();
    let mut any_element = false;
    loop {
        let pos = reader.buffer_position();
        let ev = reader
            .read_event()
            .map_err(|e| err(reader.error_position(), format!("malformed XML: {e}")))?;
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(ev, Event::Empty(_));
                let name = e.local_name().as_ref().to_string();
                let mut attrs = Vec::new();
                for a in e.attributes() {
                    let a = a.map_err(|x| err(pos, format!("malformed attribute: {x}")))?;
                    let key = if a.key.as_ref() == "xml:lang" {
                        "xml:lang".to_string()
                    } else {
                        a.key.local_name().as_ref().to_string()
                    };
                    let value = a
                        .normalized_value(XmlVersion::Implicit1_0)
                        .map_err(|x| err(pos, format!("bad attribute value: {x}")))?;
                    attrs.push((key, value.into_owned()));
                }
                out.push(Node::Start {
                    name: name.clone(),
                    attrs,
                    pos: pos as usize,
                });
                any_element = true;
                if empty {
                    out.push(Node::End { name });
                } else {
                    open.push((name, pos));
                }
            }
            Event::End(e) => {
                open.pop();
                out.push(Node::End {
                    name: e.local_name().as_ref().to_string(),
                })
            }
            Event::Text(t) => push_text(&mut out, &t.xml10_content()),
            Event::CData(t) => push_text(&mut out, &t.xml10_content()),
            Event::GeneralRef(r) => {
                let resolved: Cow<str> = match r
                    .resolve_char_ref()
                    .map_err(|x| err(pos, format!("bad character reference: {x}")))?
                {
                    Some(c) => Cow::Owned(c.to_string()),
                    None => {
                        let name = r.xml10_content();
                        match quick_xml::escape::resolve_predefined_entity(&name) {
                            Some(s) => Cow::Borrowed(s),
                            None => {
                                return Err(err(
                                    pos,
                                    format!(
                                        "unknown entity `&{name};` (only the five XML entities and character references are allowed)"
                                    ),
                                ));
                            }
                        }
                    }
                };
                push_text(&mut out, &resolved);
            }
            Event::Eof => {
                if let Some((name, at)) = open.last() {
                    return Err(err(
                        text.len() as u64,
                        format!(
                            "malformed XML: the file ends before <{name}> (opened on line {}) is closed; the file looks truncated — export it again",
                            line_of(text, *at as usize)
                        ),
                    ));
                }
                if !any_element {
                    return Err(err(0, "malformed XML: no element in the file".to_string()));
                }
                break;
            }
            Event::Decl(_) | Event::PI(_) | Event::DocType(_) | Event::Comment(_) => {}
        }
    }
    Ok(out)
}

/// Whether `c` may appear in an XML 1.0 document (XML 1.0 §2.2 `Char`).
pub fn is_xml_char(c: char) -> bool {
    matches!(c as u32,
        0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
}

/// Escapes text content: `&`, `<`, `>`, quotes (by `quick-xml`) and carriage returns (as
/// `&#xD;`). The caller must have removed characters that are not [`is_xml_char`]: XML 1.0
/// cannot carry them even as references.
pub fn escape_text(s: &str) -> String {
    let e = quick_xml::escape::escape(s);
    if e.contains('\r') {
        e.replace('\r', "&#xD;")
    } else {
        e.into_owned()
    }
}

/// `s` with every character that XML 1.0 cannot carry replaced by U+FFFD, for attribute values
/// and notes that are informative only (never read back as text).
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if is_xml_char(c) { c } else { '\u{fffd}' })
        .collect()
}

/// A `quick-xml` writer into memory, indenting by two spaces, with the XML declaration written.
pub fn writer() -> Writer<Vec<u8>> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .expect("writing to memory");
    w
}

/// Finishes a document started with [`writer`]: its text, ending with a newline.
pub fn finish(w: Writer<Vec<u8>>) -> String {
    let mut s = String::from_utf8(w.into_inner()).expect("the writer writes UTF-8");
    s.push('\n');
    s
}

/// `v` made safe for an attribute value: line breaks and tabs become spaces (an XML parser
/// would do so anyway, XML 1.0 §3.3.3), characters XML cannot carry become U+FFFD.
pub fn attr_value(v: &str) -> String {
    sanitize(&v.replace(['\r', '\n', '\t'], " "))
}

/// Opens element `name` with `attrs`.
pub fn open(w: &mut Writer<Vec<u8>>, name: &str, attrs: &[(&str, &str)]) {
    let mut e = BytesStart::new(name);
    for (k, v) in attrs {
        e.push_attribute((*k, attr_value(v).as_str()));
    }
    w.write_event(Event::Start(e)).expect("writing to memory");
}

/// Closes element `name`.
pub fn close(w: &mut Writer<Vec<u8>>, name: &str) {
    w.write_event(Event::End(BytesEnd::new(name)))
        .expect("writing to memory");
}

/// Writes `<name attrs>text</name>` with `text` escaped by [`escape_text`] (after
/// [`sanitize`]).
pub fn leaf(w: &mut Writer<Vec<u8>>, name: &str, attrs: &[(&str, &str)], text: &str) {
    open(w, name, attrs);
    raw(w, &escape_text(&sanitize(text)));
    close(w, name);
}

/// Writes already escaped mixed content (text and inline elements) as it is, without
/// indentation inside it.
pub fn raw(w: &mut Writer<Vec<u8>>, escaped: &str) {
    w.write_event(Event::Text(BytesText::from_escaped(escaped)))
        .expect("writing to memory");
}

/// The text between the start node at `i` and its matching end, as plain text (markup inside
/// dropped), and the index just after the end node.
pub fn text_until_end(nodes: &[Node], i: usize) -> (String, usize) {
    let mut depth = 0usize;
    let mut text = String::new();
    let mut j = i;
    while j < nodes.len() {
        match &nodes[j] {
            Node::Start { .. } => depth += 1,
            Node::End { .. } => {
                depth -= 1;
                if depth == 0 {
                    return (text, j + 1);
                }
            }
            Node::Text(t) => text.push_str(t),
        }
        j += 1;
    }
    (text, j)
}

/// Index just after the end node matching the start node at `i`.
pub fn skip(nodes: &[Node], i: usize) -> usize {
    text_until_end(nodes, i).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_references_cdata_and_empty_elements() {
        let nodes = parse(
            "<?xml version=\"1.0\"?><a xml:lang=\"zh\" x:id=\"1\">x &amp; &#x4E2D;<![CDATA[<y>]]>a&#xD;\r\nb<b/></a>",
            "t.xml",
        )
        .unwrap();
        assert_eq!(nodes[0].attr("xml:lang"), Some("zh"));
        assert_eq!(nodes[0].attr("id"), Some("1"));
        assert_eq!(nodes[1], Node::Text("x & 中<y>a\r\nb".into()));
        assert!(nodes[2].is_start("b") && nodes[3].is_end("b"));
    }

    #[test]
    fn malformed_xml_names_file_and_line() {
        let e = parse("<a>\n<b>\n</a>", "bad.tbx").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.to_string().contains("bad.tbx"));
    }

    #[test]
    fn escaped_carriage_returns_survive() {
        let s = "a\r\nb & <c>";
        let doc = format!("<t>{}</t>", escape_text(s));
        assert_eq!(parse(&doc, "x").unwrap()[1], Node::Text(s.into()));
    }

    #[test]
    fn a_truncated_document_is_refused_naming_the_open_element() {
        let doc =
            "<?xml version=\"1.0\"?>\n<xliff>\n<file id=\"a\">\n<unit id=\"u1\"><source>x</source>";
        let e = parse(doc, "book.xlf").unwrap_err();
        assert_eq!(e.path, "book.xlf");
        assert!(
            e.message.contains("<unit>") && e.message.contains("truncated"),
            "{}",
            e.message
        );
        assert!(
            parse("", "empty.xlf")
                .unwrap_err()
                .message
                .contains("no element")
        );
        assert!(parse("<a><b/></a>", "ok.xml").is_ok());
    }
}
