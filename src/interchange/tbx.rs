//! TBX termbases (ISO 30042), read and written with `quick-xml`.
//!
//! Reading accepts both editions and both styles:
//!
//! - ISO 30042:2008 (TBX v2, what most CAT tools export): `martif` › `termEntry` › `langSet
//!   xml:lang` › `tig` (or `ntig` › `termGrp`) › `term`;
//! - ISO 30042:2019 (TBX v3, TBX-Basic/TBX-Core in DCA or DCT style): `tbx` › `conceptEntry` ›
//!   `langSec xml:lang` › `termSec` › `term`.
//!
//! One entry is made per concept that has a term in both languages (codes matched leniently,
//! see [`super::best_match`]). The target term is the first marked preferred, else the first
//! not deprecated; terms whose administrative status (`termNote type="administrativeStatus"`,
//! the DCT element `administrativeStatus`, or TBX v2 `normativeAuthorization`) is deprecated or
//! superseded become the entry's `forbidden` renderings; terms marked admitted
//! (`admittedTerm-admn-sts`, `admitted`) become its accepted `variants`. Concept-level `note`s and
//! `descrip type="definition"` become the entry's note. An `admin type="source"` written by
//! booktr (`booktr:agent`) gives the origin.
//!
//! Writing produces TBX-Basic in the 2008 `martif` form, which every CAT tool (and the
//! `translate-toolkit` parser CI checks it with) reads: one `termEntry` per entry, forbidden
//! renderings as deprecated terms, variants as admitted terms.

use super::xml::{self, Node};
use super::{FileError, best_match, check_terms, delimited};
use crate::lang::Lang;
use crate::termbase::{Entry, Origin};

/// One term of a language section.
#[derive(Debug, Default, Clone)]
struct Term {
    text: String,
    status: String,
    pos: usize,
}

/// Whether an administrative status marks a term not to be used.
fn is_forbidden(status: &str) -> bool {
    let s = status.to_ascii_lowercase();
    s.starts_with("deprecated") || s.starts_with("superseded") || s.starts_with("forbidden")
}

/// Whether an administrative status admits a term beside the preferred one (its text becomes
/// one of the entry's `variants`).
fn is_admitted(status: &str) -> bool {
    status.to_ascii_lowercase().starts_with("admitted")
}

fn is_preferred(status: &str) -> bool {
    status.to_ascii_lowercase().starts_with("preferred")
}

/// Reads the entries of a TBX document for `source` → `target`.
///
/// Errors name the file and line: malformed XML, a root that is not `martif` or `tbx`, a term
/// element without text, an over-long term, no concept with terms in both languages.
pub fn read(
    text: &str,
    display: &str,
    source: &Lang,
    target: &Lang,
) -> Result<Vec<Entry>, FileError> {
    let nodes = xml::parse(text, display)?;
    let root = nodes.iter().find_map(|n| match n {
        Node::Start { name, .. } => Some(name.as_str()),
        _ => None,
    });
    if !matches!(root, Some("martif" | "tbx")) {
        return Err(FileError::new(
            display,
            Some(1),
            format!(
                "is not a TBX file: its root element is `{}`, expected `martif` (TBX 2008) or `tbx` (TBX 2019)",
                root.unwrap_or("(none)")
            ),
        ));
    }
    let line = |pos: usize| Some(xml::line_of(text, pos));
    let mut entries = Vec::new();
    let mut langs_seen: Vec<String> = Vec::new();
    let mut i = 0;
    while i < nodes.len() {
        let Node::Start { name, pos, .. } = &nodes[i] else {
            i += 1;
            continue;
        };
        if name != "termEntry" && name != "conceptEntry" {
            i += 1;
            continue;
        }
        let entry_pos = *pos;
        let end = xml::skip(&nodes, i);
        let concept = Concept::read(&nodes, i + 1..end, text, display, &mut langs_seen)?;
        if let Some(e) = concept.entry(source, target, display, line(entry_pos))? {
            entries.push(e);
        }
        i = end;
    }
    if entries.is_empty() {
        return Err(FileError::new(
            display,
            None,
            format!(
                "has no concept with terms in both {} and {} (languages found: {}); check the xml:lang codes",
                source.code,
                target.code,
                if langs_seen.is_empty() {
                    "none".to_string()
                } else {
                    langs_seen.join(", ")
                }
            ),
        ));
    }
    Ok(entries)
}

/// One concept (`termEntry` or `conceptEntry`) as read.
#[derive(Default)]
struct Concept {
    /// Per language section: its code and terms.
    sections: Vec<(String, Vec<Term>)>,
    /// Concept-level notes and definitions.
    notes: Vec<String>,
    /// The origin booktr wrote (`admin type="source"`).
    origin: Option<Origin>,
    /// Whether the walk is inside a language section, and how deep in term groups.
    in_lang: bool,
    in_term_group: usize,
}

impl Concept {
    /// Walks the concept's nodes `range`, adding the languages it names to `langs_seen`.
    /// Errors: a language section without `xml:lang`, an empty term.
    fn read(
        nodes: &[Node],
        range: std::ops::Range<usize>,
        text: &str,
        display: &str,
        langs_seen: &mut Vec<String>,
    ) -> Result<Concept, FileError> {
        let mut c = Concept::default();
        let mut j = range.start;
        while j < range.end {
            j = match &nodes[j] {
                Node::Start { name, pos, .. } => {
                    c.start(nodes, j, name, *pos, text, display, langs_seen)?
                }
                Node::End { name } => {
                    match name.as_str() {
                        "langSet" | "langSec" => c.in_lang = false,
                        "tig" | "ntig" | "termSec" => {
                            c.in_term_group = c.in_term_group.saturating_sub(1)
                        }
                        _ => {}
                    }
                    j + 1
                }
                Node::Text(_) => j + 1,
            };
        }
        for (_, terms) in &c.sections {
            if let Some(t) = terms.iter().find(|t| t.text.is_empty()) {
                return Err(FileError::new(
                    display,
                    Some(xml::line_of(text, t.pos)),
                    "a term element is empty; write the term or delete it",
                ));
            }
        }
        Ok(c)
    }

    /// Reads the element starting at node `j` (`name`, at byte `pos`); returns the next node.
    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        nodes: &[Node],
        j: usize,
        name: &str,
        pos: usize,
        text: &str,
        display: &str,
        langs_seen: &mut Vec<String>,
    ) -> Result<usize, FileError> {
        let line = |pos: usize| Some(xml::line_of(text, pos));
        let mut j = j;
        match name {
            "langSet" | "langSec" => {
                let lang = nodes[j].attr("xml:lang").unwrap_or("").to_string();
                if lang.is_empty() {
                    return Err(FileError::new(
                        display,
                        line(pos),
                        format!("<{name}> has no xml:lang attribute; add the language code"),
                    ));
                }
                if !langs_seen.contains(&lang) {
                    langs_seen.push(lang.clone());
                }
                self.sections.push((lang, Vec::new()));
                self.in_lang = true;
                j += 1;
            }
            "tig" | "ntig" | "termSec" if self.in_lang => {
                self.in_term_group += 1;
                if let Some((_, terms)) = self.sections.last_mut() {
                    terms.push(Term {
                        pos,
                        ..Default::default()
                    });
                }
                j += 1;
            }
            "term" if self.in_lang => {
                let (t, next) = xml::text_until_end(nodes, j);
                if let Some((_, terms)) = self.sections.last_mut() {
                    // A bare `term` directly in the language section (TBX-Min-like).
                    if self.in_term_group == 0 || terms.last().is_none_or(|t| !t.text.is_empty()) {
                        terms.push(Term {
                            pos,
                            ..Default::default()
                        });
                    }
                    let last = terms.last_mut().expect("pushed");
                    last.text = t.trim().to_string();
                    last.pos = pos;
                }
                j = next;
            }
            "termNote" | "administrativeStatus" | "normativeAuthorization" if self.in_lang => {
                let ty = nodes[j].attr("type").unwrap_or(name);
                let (t, next) = xml::text_until_end(nodes, j);
                if matches!(ty, "administrativeStatus" | "normativeAuthorization")
                    && let Some(term) = self.sections.last_mut().and_then(|s| s.1.last_mut())
                {
                    term.status = t.trim().to_string();
                }
                j = next;
            }
            "note" | "descrip" if !self.in_lang => {
                let ty = nodes[j].attr("type").unwrap_or("");
                let (t, next) = xml::text_until_end(nodes, j);
                if (name == "note" || ty == "definition") && !t.trim().is_empty() {
                    self.notes.push(t.trim().to_string());
                }
                j = next;
            }
            "admin" if !self.in_lang => {
                let (t, next) = xml::text_until_end(nodes, j);
                if nodes[j].attr("type") == Some("source")
                    && let Some(o) = t.trim().strip_prefix("booktr:")
                {
                    self.origin = delimited::parse_origin(o);
                }
                j = next;
            }
            _ => j += 1,
        }
        Ok(j)
    }

    /// The entry of the concept when it has a term in both languages: the source's first term
    /// not forbidden, the target's preferred term (else its first not forbidden), with the
    /// target's forbidden and admitted terms. Errors: an over-long term (at `line`).
    fn entry(
        self,
        source: &Lang,
        target: &Lang,
        display: &str,
        line: Option<u64>,
    ) -> Result<Option<Entry>, FileError> {
        let sections = &self.sections;
        let src = best_match(source, sections).and_then(|terms| {
            terms
                .iter()
                .find(|t| !is_forbidden(&t.status))
                .or(terms.first())
        });
        let tgt_terms = best_match(target, sections);
        let tgt = tgt_terms.and_then(|terms| {
            terms
                .iter()
                .find(|t| is_preferred(&t.status))
                .or_else(|| terms.iter().find(|t| !is_forbidden(&t.status)))
        });
        let (Some(s), Some(t)) = (src, tgt) else {
            return Ok(None);
        };
        check_terms(display, line, &s.text, &t.text)?;
        Ok(Some(Entry {
            source: s.text.clone(),
            target: t.text.clone(),
            note: self.notes.join("; "),
            origin: self.origin.unwrap_or(Origin::HouseStyle),
            forbidden: tgt_terms
                .into_iter()
                .flatten()
                .filter(|t| is_forbidden(&t.status))
                .map(|t| t.text.clone())
                .collect(),
            variants: tgt_terms
                .into_iter()
                .flatten()
                .filter(|o| is_admitted(&o.status) && o.text != t.text)
                .map(|o| o.text.clone())
                .collect(),
        }))
    }
}

/// Writes `entries` as a TBX-Basic document (ISO 30042:2008 `martif` form) for `source` →
/// `target`, titled `title`. Each entry's origin is an `admin type="source"` (`booktr:agent`),
/// its note a concept-level `note`, its forbidden renderings deprecated target terms.
pub fn write(entries: &[Entry], source: &Lang, target: &Lang, title: &str) -> String {
    write_marked(entries, source, target, title, false)
}

/// [`write`], with the rehearsal mark in the header when `rehearsal` is true: `<fileDesc>` ›
/// `<titleStmt>` › `<title>` (the title) and `<note>` ([`super::rehearsal::tbx_note`]; TBX
/// 2008 header: `titleStmt` holds a `title` and `note`s).
pub fn write_marked(
    entries: &[Entry],
    source: &Lang,
    target: &Lang,
    title: &str,
    rehearsal: bool,
) -> String {
    let mut w = xml::writer();
    xml::open(
        &mut w,
        "martif",
        &[("type", "TBX-Basic"), ("xml:lang", &source.code)],
    );
    xml::open(&mut w, "martifHeader", &[]);
    xml::open(&mut w, "fileDesc", &[]);
    if rehearsal {
        xml::open(&mut w, "titleStmt", &[]);
        xml::leaf(&mut w, "title", &[], title);
        xml::leaf(&mut w, "note", &[], &super::rehearsal::tbx_note());
        xml::close(&mut w, "titleStmt");
    }
    xml::open(&mut w, "sourceDesc", &[]);
    xml::leaf(&mut w, "p", &[], title);
    xml::close(&mut w, "sourceDesc");
    xml::close(&mut w, "fileDesc");
    xml::close(&mut w, "martifHeader");
    xml::open(&mut w, "text", &[]);
    xml::open(&mut w, "body", &[]);
    for (n, e) in entries.iter().enumerate() {
        let id = format!("c{}", n + 1);
        xml::open(&mut w, "termEntry", &[("id", &id)]);
        xml::leaf(
            &mut w,
            "admin",
            &[("type", "source")],
            &format!("booktr:{}", delimited::origin_name(e.origin)),
        );
        if !e.note.is_empty() {
            xml::leaf(&mut w, "note", &[], &e.note);
        }
        xml::open(&mut w, "langSet", &[("xml:lang", &source.code)]);
        xml::open(&mut w, "tig", &[]);
        xml::leaf(&mut w, "term", &[], &e.source);
        xml::close(&mut w, "tig");
        xml::close(&mut w, "langSet");
        xml::open(&mut w, "langSet", &[("xml:lang", &target.code)]);
        let target_terms = std::iter::once((e.target.as_str(), "preferredTerm-admn-sts")).chain(
            e.forbidden
                .iter()
                .map(|f| (f.as_str(), "deprecatedTerm-admn-sts"))
                .chain(
                    e.variants
                        .iter()
                        .map(|v| (v.as_str(), "admittedTerm-admn-sts")),
                ),
        );
        for (term, status) in target_terms {
            xml::open(&mut w, "tig", &[]);
            xml::leaf(&mut w, "term", &[], term);
            xml::leaf(
                &mut w,
                "termNote",
                &[("type", "administrativeStatus")],
                status,
            );
            xml::close(&mut w, "tig");
        }
        xml::close(&mut w, "langSet");
        xml::close(&mut w, "termEntry");
    }
    xml::close(&mut w, "body");
    xml::close(&mut w, "text");
    xml::close(&mut w, "martif");
    xml::finish(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn en() -> Lang {
        Lang::parse("en")
    }
    fn zh() -> Lang {
        Lang::parse("zh-CN")
    }

    const V2: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE martif SYSTEM "TBXcoreStructV02.dtd">
<martif type="TBX-Basic" xml:lang="en-US">
<martifHeader><fileDesc><sourceDesc><p>x</p></sourceDesc></fileDesc></martifHeader>
<text><body>
<termEntry id="t1">
  <descrip type="definition">An autonomous program &amp; its loop.</descrip>
  <langSet xml:lang="en-US"><tig><term>Agent</term></tig></langSet>
  <langSet xml:lang="zh-TW"><tig><term>代理程式</term></tig></langSet>
  <langSet xml:lang="zh-Hans">
    <tig><term>代理</term><termNote type="administrativeStatus">deprecatedTerm-admn-sts</termNote></tig>
    <ntig><termGrp><term>智能体</term><termNote type="administrativeStatus">preferredTerm-admn-sts</termNote></termGrp></ntig>
  </langSet>
</termEntry>
<termEntry id="t2">
  <langSet xml:lang="en"><tig><term>tool</term></tig></langSet>
  <langSet xml:lang="de"><tig><term>Werkzeug</term></tig></langSet>
</termEntry>
</body></text>
</martif>"#;

    const V3_DCT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<tbx type="TBX-Basic" style="dct" xml:lang="en" xmlns="urn:iso:std:iso:30042:ed-2" xmlns:basic="http://www.tbxinfo.net/ns/basic">
<tbxHeader><fileDesc><sourceDesc><p>v3</p></sourceDesc></fileDesc></tbxHeader>
<text><body>
<conceptEntry id="c1">
  <note>Core term</note>
  <langSec xml:lang="en"><termSec><term>context window</term></termSec></langSec>
  <langSec xml:lang="zh"><termSec><term>上下文窗口</term><basic:administrativeStatus>preferredTerm-admn-sts</basic:administrativeStatus></termSec>
  <termSec><term>语境窗口</term><basic:administrativeStatus>supersededTerm-admn-sts</basic:administrativeStatus></termSec></langSec>
</conceptEntry>
</body></text>
</tbx>"#;

    #[test]
    fn reads_tbx_2008_with_lenient_languages_and_status() {
        let e = read(V2, "g.tbx", &en(), &zh()).unwrap();
        assert_eq!(e.len(), 1, "the en/de concept has no Chinese term");
        assert_eq!(e[0].source, "Agent");
        assert_eq!(
            e[0].target, "智能体",
            "zh-Hans beats zh-TW for zh-CN; preferred wins"
        );
        assert_eq!(e[0].forbidden, vec!["代理"]);
        assert_eq!(e[0].note, "An autonomous program & its loop.");
        // A Traditional Chinese campaign takes the zh-TW section.
        let e = read(V2, "g.tbx", &en(), &Lang::parse("zh-Hant")).unwrap();
        assert_eq!(e[0].target, "代理程式");
    }

    #[test]
    fn admitted_terms_are_variants_and_round_trip() {
        let e = vec![Entry {
            source: "tree".into(),
            target: "Baum".into(),
            note: String::new(),
            origin: Origin::HouseStyle,
            forbidden: vec!["Gehölz".into()],
            variants: vec!["Bäume".into()],
        }];
        let de = Lang::parse("de");
        let doc = write(&e, &en(), &de, "t");
        assert!(doc.contains("admittedTerm-admn-sts"), "{doc}");
        assert_eq!(read(&doc, "g.tbx", &en(), &de).unwrap(), e);
    }

    #[test]
    fn reads_tbx_2019_dct() {
        let e = read(V3_DCT, "g.tbx", &en(), &zh()).unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].target, "上下文窗口");
        assert_eq!(e[0].forbidden, vec!["语境窗口"]);
        assert_eq!(e[0].note, "Core term");
    }

    #[test]
    fn malformed_files_name_file_and_line() {
        let err = read("<martif>\n<text>\n</martif>", "g.tbx", &en(), &zh()).unwrap_err();
        assert_eq!(err.line, Some(3), "{err}");
        let err = read("<root/>", "g.tbx", &en(), &zh()).unwrap_err();
        assert!(err.to_string().contains("not a TBX file"), "{err}");
        let empty_term = V2.replace("<term>Werkzeug</term>", "<term> </term>");
        let err = read(&empty_term, "g.tbx", &en(), &zh()).unwrap_err();
        assert_eq!(err.line, Some(17), "{err}");
        let no_lang = V2.replace("<langSet xml:lang=\"de\">", "<langSet>");
        let err = read(&no_lang, "g.tbx", &en(), &zh()).unwrap_err();
        assert!(
            err.to_string().contains("xml:lang") && err.line == Some(17),
            "{err}"
        );
        let err = read(V2, "g.tbx", &en(), &Lang::parse("ja")).unwrap_err();
        assert!(
            err.to_string().contains("en-US, zh-TW, zh-Hans, en, de"),
            "{err}"
        );
    }

    fn term() -> impl Strategy<Value = String> {
        "[^\\r\\n]{1,16}"
            .prop_map(|s| s.trim().to_string())
            .prop_filter("a term", |s| {
                !s.is_empty() && s.chars().all(xml::is_xml_char)
            })
    }

    proptest! {
        #[test]
        fn export_import_export_is_stable(
            rows in proptest::collection::vec((term(), term(), "[^\\r]{0,12}", 0..3u8, proptest::collection::vec(term(), 0..3)), 1..5)
        ) {
            let entries: Vec<Entry> = rows
                .into_iter()
                .map(|(s, t, n, o, f)| Entry {
                    source: s,
                    target: t,
                    note: xml::sanitize(n.trim()),
                    origin: [Origin::HouseStyle, Origin::Agent, Origin::Reconciled][o as usize],
                    forbidden: f,
                    variants: Vec::new(),
                })
                .collect();
            let once = write(&entries, &en(), &zh(), "t");
            let back = read(&once, "g.tbx", &en(), &zh()).unwrap();
            prop_assert_eq!(&back, &entries);
            prop_assert_eq!(write(&back, &en(), &zh(), "t"), once);
        }
    }
}
