//! XLIFF 2.0 (OASIS, 2014), written and read with `quick-xml`.
//!
//! A campaign is written as one `<file>` per chapter (`id` = chapter key, `original` = the
//! chapter path) and one `<unit>` per translation unit (`id` = unit id). A unit holds one
//! `<segment>` (`<source>` and `<target>`) per sentence, cut and aligned by
//! [`super::segments`] (SRX-style rules per language; one segment per block, or per unit, where
//! the target's sentences do not align 1:1); the whitespace between two segments is an
//! `<ignorable>` (with its own `<target>` when the target's differs, e.g. none after a CJK
//! full stop). Code-only and front-matter units are there
//! too, with `translate="no"`, so that a CAT tool can rebuild whole chapters. Inline codes
//! ([`super::inline`]) become `<ph>` and `<pc>` whose native text is kept in the unit's
//! `<originalData>`; characters XML 1.0 cannot carry are `<cp hex="…"/>`, carriage returns
//! `&#xD;`, and every `<file>` says `xml:space="preserve"`, so reading the file back gives the
//! exact bytes. QA findings of the unit's final text are `<note category="booktr:qa">` with
//! `priority` 1 (error), 5 (warning) or 9 (info) ([`qa_note`]), and also ITS 2.0 Localization
//! Quality Issues that CAT tools (Okapi, memoQ, Trados via ITS) show: a standoff
//! `<its:locQualityIssues xml:id="lqi-…">` first in the `<unit>`, one `<its:locQualityIssue>`
//! per finding with `locQualityIssueType` ([`ITS_ISSUE_TYPES`]), `locQualityIssueComment` (the
//! message) and `locQualityIssueSeverity` (0–100, [`its_issue`]), referred to by
//! `<mrk type="its:lqi" its:locQualityIssuesRef="#lqi-…">` around the first segment's target.
//!
//! Reading takes any XLIFF 2.x document: units may have been resegmented (their segments and
//! `<ignorable>`s are joined in order), inline codes may be `<ph>`, `<pc>`, `<sc>`/`<ec>`, and
//! annotations (`<mrk>`, `<sm>`/`<em>`) are dropped while their content is kept.

use std::collections::BTreeMap;

use super::FileError;
use super::inline::{self, Piece};
use super::segments;
use super::xml::{self, Node};

/// XLIFF 2.0 namespace.
pub const NS: &str = "urn:oasis:names:tc:xliff:document:2.0";

/// ITS 2.0 namespace (W3C Internationalization Tag Set, 2013).
pub const ITS_NS: &str = "http://www.w3.org/2005/11/its";

/// The note category of QA findings ([`qa_note`]); each such note is also written as an ITS
/// 2.0 `locQualityIssue`.
pub const QA_CATEGORY: &str = "booktr:qa";

/// ITS 2.0 `locQualityIssueType` of each booktr QA check (ITS 2.0 §8.17, the type values of
/// its Localization Quality Issue table); a check not listed is `uncategorized`. Lost or added
/// content maps to `omission`/`addition`/`untranslated`/`length`, broken Markdown (code,
/// links, images, footnotes, math, HTML) to `markup`, broken layout (structure, headings,
/// tables) to `formatting`, changed facts to `numbers`, the termbase to `terminology`, and a
/// term rendered differently across units to `inconsistency`.
pub const ITS_ISSUE_TYPES: &[(&str, &str)] = &[
    ("completeness", "omission"),
    ("untranslated", "untranslated"),
    ("length_ratio", "length"),
    ("truncation", "omission"),
    ("sentences", "omission"),
    ("injected_text", "addition"),
    ("context_echo", "addition"),
    ("structure", "formatting"),
    ("headings", "formatting"),
    ("tables", "formatting"),
    ("code_blocks", "markup"),
    ("inline_code", "markup"),
    ("links", "markup"),
    ("images", "markup"),
    ("footnotes", "markup"),
    ("reference_definitions", "markup"),
    ("math", "markup"),
    ("html", "markup"),
    ("numbers", "numbers"),
    ("glossary", "terminology"),
    ("term_drift", "inconsistency"),
    ("review_markers", "other"),
    ("pairing", "other"),
];

/// The note of a QA finding: category [`QA_CATEGORY`], `priority` 1 (`error`), 5 (`warning`)
/// or 9 (`info`, and any other severity word), text `"{severity} {check}: {message}"`. The
/// writer also turns it into an ITS `locQualityIssue` ([`its_issue`]).
pub fn qa_note(severity: &str, check: &str, message: &str) -> Note {
    Note {
        priority: match severity {
            "error" => 1,
            "warning" => 5,
            _ => 9,
        },
        category: QA_CATEGORY.into(),
        text: format!("{severity} {check}: {message}"),
    }
}

/// The ITS 2.0 Localization Quality Issue of a [`qa_note`]: (`locQualityIssueType` from
/// [`ITS_ISSUE_TYPES`], `locQualityIssueComment` = the finding's message,
/// `locQualityIssueSeverity`). ITS severity is 0–100 (higher is worse); booktr writes 100 for
/// an error (priority 1–2), 50 for a warning (3–6), 10 for info (7–10). `None` for a note of
/// another category.
pub fn its_issue(note: &Note) -> Option<(&'static str, String, u8)> {
    if note.category != QA_CATEGORY {
        return None;
    }
    let (head, message) = note.text.split_once(": ").unwrap_or(("", &note.text));
    let check = head.rsplit(' ').next().unwrap_or("");
    let kind = ITS_ISSUE_TYPES
        .iter()
        .find(|(c, _)| *c == check)
        .map_or("uncategorized", |(_, t)| t);
    let severity = match note.priority {
        0..=2 => 100,
        3..=6 => 50,
        _ => 10,
    };
    Some((kind, message.to_string(), severity))
}

/// An `xml:id` (an NCName, unique in the document) for the ITS issues of unit `unit` of file
/// `file`: `lqi-{file}-{unit}`, characters outside `[A-Za-z0-9._-]` as `_`.
fn its_id(file: &str, unit: &str) -> String {
    format!("lqi-{file}-{unit}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A note on a unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// 1 (most important) to 10.
    pub priority: u8,
    pub category: String,
    pub text: String,
}

/// A unit to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub id: String,
    pub source: String,
    pub target: Option<String>,
    /// False for units copied unchanged (`translate="no"`).
    pub translate: bool,
    /// Segment state: `initial`, `translated`, `reviewed` or `final`.
    pub state: &'static str,
    pub notes: Vec<Note>,
}

/// A `<file>` to write: one chapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// NMTOKEN id (the chapter key).
    pub id: String,
    /// The chapter's path.
    pub original: String,
    pub units: Vec<Unit>,
}

/// Native code ids of one unit, shared by source and target: the same code gets the same id
/// on both sides, so CAT tools can check that the target keeps the source's codes.
#[derive(Default)]
struct Codes {
    /// native text → data id.
    data: BTreeMap<String, String>,
    /// Data in order of first use: (id, native text).
    order: Vec<(String, String)>,
    next_code: usize,
    /// Codes of the source: (kind, native start, native end, id, segment), for reuse by the
    /// target.
    source_codes: Vec<(u8, String, String, String, usize)>,
    used: Vec<bool>,
    /// The segment being written (0-based): a target code takes the id of a source code of
    /// the same segment first.
    seg: usize,
}

impl Codes {
    fn data_ref(&mut self, native: &str) -> String {
        if let Some(id) = self.data.get(native) {
            return id.clone();
        }
        let id = format!("d{}", self.order.len() + 1);
        self.data.insert(native.to_string(), id.clone());
        self.order.push((id.clone(), native.to_string()));
        id
    }

    /// The id of a code: on the source side a new one; on the target side the id of the first
    /// unused source code with the same native text, else a new one.
    fn code_id(&mut self, target: bool, kind: u8, start: &str, end: &str) -> String {
        if target {
            for same_segment in [true, false] {
                for (k, c) in self.source_codes.iter().enumerate() {
                    if !self.used[k]
                        && (!same_segment || c.4 == self.seg)
                        && c.0 == kind
                        && c.1 == start
                        && c.2 == end
                    {
                        self.used[k] = true;
                        return c.3.clone();
                    }
                }
            }
        }
        self.next_code += 1;
        let id = self.next_code.to_string();
        if !target {
            self.source_codes.push((
                kind,
                start.to_string(),
                end.to_string(),
                id.clone(),
                self.seg,
            ));
            self.used.push(false);
        }
        id
    }
}

/// Text content with characters XML cannot carry as `<cp>`.
fn text_xml(s: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    for c in s.chars() {
        if xml::is_xml_char(c) {
            run.push(c);
        } else {
            out.push_str(&xml::escape_text(&run));
            run.clear();
            out.push_str(&format!("<cp hex=\"{:04X}\"/>", c as u32));
        }
    }
    out.push_str(&xml::escape_text(&run));
    out
}

/// A short one-line rendering of native code for the `disp` attribute (what CAT tools show).
fn disp(native: &str) -> String {
    let one: String = native.split_whitespace().collect::<Vec<_>>().join(" ");
    let short: String = one.chars().take(40).collect();
    let short = if short.len() < one.len() {
        format!("{short}…")
    } else {
        short
    };
    quick_xml::escape::escape(xml::attr_value(&short)).into_owned()
}

fn pieces_xml(pieces: &[Piece], codes: &mut Codes, target: bool, out: &mut String) {
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(&text_xml(t)),
            Piece::Ph(native) => {
                let id = codes.code_id(target, 0, native, "");
                let d = codes.data_ref(native);
                out.push_str(&format!(
                    "<ph id=\"{id}\" dataRef=\"{d}\" disp=\"{}\"/>",
                    disp(native)
                ));
            }
            Piece::Pc { start, end, inner } => {
                let id = codes.code_id(target, 1, start, end);
                let ds = codes.data_ref(start);
                let de = codes.data_ref(end);
                out.push_str(&format!(
                    "<pc id=\"{id}\" dataRefStart=\"{ds}\" dataRefEnd=\"{de}\" dispStart=\"{}\" dispEnd=\"{}\">",
                    disp(start),
                    disp(end)
                ));
                pieces_xml(inner, codes, target, out);
                out.push_str("</pc>");
            }
        }
    }
}

/// [`pieces_xml`] of the part of `pieces` (starting at byte `*pos` of their text) that lies in
/// `range`: text cut at the range's ends, codes whole (segment cuts never fall inside a code,
/// see [`super::segments`]). Advances `*pos` past the pieces.
fn pieces_xml_in(
    pieces: &[Piece],
    pos: &mut usize,
    range: &std::ops::Range<usize>,
    codes: &mut Codes,
    target: bool,
    out: &mut String,
) {
    for p in pieces {
        let (a, b) = (*pos, *pos + segments::piece_len(p));
        *pos = b;
        if b <= range.start || a >= range.end {
            continue;
        }
        match p {
            Piece::Text(t) => {
                out.push_str(&text_xml(&t[range.start.max(a) - a..range.end.min(b) - a]));
            }
            _ if a >= range.start && b <= range.end => {
                pieces_xml(std::slice::from_ref(p), codes, target, out)
            }
            // A code across a cut: [`segments::align`] never makes one.
            _ => {}
        }
    }
}

/// The byte where the trailing whitespace of `text[range]` starts (the range's end when it
/// has none), when that whitespace may move to an `<ignorable>`: not all of the range, and
/// not inside an inline code.
fn trailing_ws(text: &str, pieces: &[Piece], range: &std::ops::Range<usize>) -> Option<usize> {
    let core = text[range.clone()].trim_end().len();
    if core == 0 {
        return None;
    }
    let at = range.start + core;
    let mut pos = 0;
    for p in pieces {
        let len = segments::piece_len(p);
        if !matches!(p, Piece::Text(_)) && pos < at && at < pos + len {
            return None;
        }
        pos += len;
    }
    Some(at)
}

/// Writes an XLIFF 2.0 document for `files`, `src_lang` → `trg_lang` (BCP 47 codes).
pub fn write(src_lang: &str, trg_lang: &str, files: &[File]) -> String {
    write_marked(src_lang, trg_lang, files, false)
}

/// [`write`], with the rehearsal mark on every `<file>` when `rehearsal` is true: Metadata
/// module `<mda:metadata><mda:metaGroup category="booktr"><mda:meta
/// type="x-booktr-rehearsal">true</mda:meta>…` (XLIFF 2.0 §5.9, allowed on `<file>` before its
/// `<notes>`) and a file-level `<note category="booktr:rehearsal">` that CAT tools show.
pub fn write_marked(src_lang: &str, trg_lang: &str, files: &[File], rehearsal: bool) -> String {
    let mut w = xml::writer();
    let mut root = vec![
        ("xmlns", NS),
        ("version", "2.0"),
        ("srcLang", src_lang),
        ("trgLang", trg_lang),
    ];
    if rehearsal {
        root.insert(1, ("xmlns:mda", super::rehearsal::MDA_NS));
    }
    let has_issues = files
        .iter()
        .flat_map(|f| &f.units)
        .flat_map(|u| &u.notes)
        .any(|n| its_issue(n).is_some());
    if has_issues {
        root.insert(1, ("xmlns:its", ITS_NS));
        root.push(("its:version", "2.0"));
    }
    xml::open(&mut w, "xliff", &root);
    for f in files {
        xml::open(
            &mut w,
            "file",
            &[
                ("id", &f.id),
                ("original", &f.original),
                ("xml:space", "preserve"),
            ],
        );
        if rehearsal {
            write_rehearsal_mark(&mut w);
        }
        for u in &f.units {
            write_unit(&mut w, f, u, src_lang, trg_lang);
        }
        xml::close(&mut w, "file");
    }
    xml::close(&mut w, "xliff");
    xml::finish(w)
}

/// The rehearsal mark of a `<file>` (see [`write_marked`]).
fn write_rehearsal_mark(w: &mut quick_xml::writer::Writer<Vec<u8>>) {
    xml::open(w, "mda:metadata", &[]);
    xml::open(w, "mda:metaGroup", &[("category", "booktr")]);
    xml::leaf(w, "mda:meta", &[("type", super::rehearsal::MARK)], "true");
    xml::close(w, "mda:metaGroup");
    xml::close(w, "mda:metadata");
    xml::open(w, "notes", &[]);
    xml::leaf(
        w,
        "note",
        &[("category", "booktr:rehearsal"), ("priority", "1")],
        super::rehearsal::NOTE,
    );
    xml::close(w, "notes");
}

/// One segment's source and target XML, and the whitespace moved to an `<ignorable>` after it
/// (source, and target when it differs).
struct SegmentXml {
    source: String,
    target: Option<String>,
    ignorable: Option<(String, Option<String>)>,
}

/// One `<unit>`: its QA issues, notes, original data and segments.
fn write_unit(
    w: &mut quick_xml::writer::Writer<Vec<u8>>,
    f: &File,
    u: &Unit,
    src_lang: &str,
    trg_lang: &str,
) {
    let mut attrs = vec![("id", u.id.as_str())];
    if !u.translate {
        attrs.push(("translate", "no"));
    }
    xml::open(w, "unit", &attrs);
    // QA findings as ITS 2.0 standoff Localization Quality Issues (an extension element,
    // allowed first in <unit>), referred to by an <mrk type="its:lqi"> around the first
    // segment's target.
    let issues: Vec<_> = u.notes.iter().filter_map(its_issue).collect();
    let lqi_id = its_id(&f.id, &u.id);
    write_issues(w, &issues, &lqi_id);
    write_notes(w, u);
    let mut codes = Codes::default();
    let parts = segments_xml(u, src_lang, trg_lang, &mut codes);
    write_original_data(w, &codes);
    write_segments(w, u, parts, issues.is_empty(), &lqi_id);
    xml::close(w, "unit");
}

/// The unit's QA issues as ITS standoff markup with id `lqi_id`.
fn write_issues(
    w: &mut quick_xml::writer::Writer<Vec<u8>>,
    issues: &[(&'static str, String, u8)],
    lqi_id: &str,
) {
    if !issues.is_empty() {
        xml::open(w, "its:locQualityIssues", &[("xml:id", lqi_id)]);
        for (kind, comment, severity) in issues {
            xml::open(
                w,
                "its:locQualityIssue",
                &[
                    ("locQualityIssueType", kind),
                    ("locQualityIssueComment", comment),
                    ("locQualityIssueSeverity", &severity.to_string()),
                ],
            );
            xml::close(w, "its:locQualityIssue");
        }
        xml::close(w, "its:locQualityIssues");
    }
}

/// The unit's notes, applying to the target.
fn write_notes(w: &mut quick_xml::writer::Writer<Vec<u8>>, u: &Unit) {
    if !u.notes.is_empty() {
        xml::open(w, "notes", &[]);
        for n in &u.notes {
            let p = n.priority.clamp(1, 10).to_string();
            xml::leaf(
                w,
                "note",
                &[
                    ("category", &n.category),
                    ("priority", &p),
                    ("appliesTo", "target"),
                ],
                &n.text,
            );
        }
        xml::close(w, "notes");
    }
}

/// The unit's segments (aligned by [`segments::align`]) as XML, with the inline codes
/// collected in `codes`.
fn segments_xml(u: &Unit, src_lang: &str, trg_lang: &str, codes: &mut Codes) -> Vec<SegmentXml> {
    let src_pieces = inline::split(&u.source);
    let trg_pieces = u.target.as_deref().map(inline::split);
    let segs = segments::align(&u.source, u.target.as_deref(), src_lang, trg_lang);
    let mut parts = Vec::new();
    for (k, g) in segs.iter().enumerate() {
        codes.seg = k;
        let (mut src_range, mut trg_range) = (g.source.clone(), g.target.clone());
        // The whitespace between two segments goes to an <ignorable>; the last
        // segment keeps its own.
        let mut ignorable = None;
        if k + 1 < segs.len()
            && let Some(sa) = trailing_ws(&u.source, &src_pieces, &src_range)
        {
            let s_ws = u.source[sa..src_range.end].to_string();
            match (u.target.as_deref(), &trg_pieces, &trg_range) {
                (None, _, _) if !s_ws.is_empty() => {
                    ignorable = Some((s_ws, None));
                    src_range.end = sa;
                }
                (Some(t), Some(tp), Some(tr)) => {
                    if let Some(ta) = trailing_ws(t, tp, tr)
                        && (sa < src_range.end || ta < tr.end)
                    {
                        let t_ws = t[ta..tr.end].to_string();
                        let t_ws = (t_ws != s_ws).then_some(t_ws);
                        ignorable = Some((s_ws, t_ws));
                        src_range.end = sa;
                        trg_range = Some(tr.start..ta);
                    }
                }
                _ => {}
            }
        }
        let mut source = String::new();
        pieces_xml_in(&src_pieces, &mut 0, &src_range, codes, false, &mut source);
        let target = trg_pieces.as_ref().zip(trg_range.as_ref()).map(|(tp, tr)| {
            let mut s = String::new();
            pieces_xml_in(tp, &mut 0, tr, codes, true, &mut s);
            s
        });
        parts.push(SegmentXml {
            source,
            target,
            ignorable,
        });
    }
    parts
}

/// The native text of the unit's inline codes.
fn write_original_data(w: &mut quick_xml::writer::Writer<Vec<u8>>, codes: &Codes) {
    if !codes.order.is_empty() {
        xml::open(w, "originalData", &[]);
        for (id, native) in &codes.order {
            xml::open(w, "data", &[("id", id)]);
            xml::raw(w, &text_xml(native));
            xml::close(w, "data");
        }
        xml::close(w, "originalData");
    }
}

/// The `<segment>`s and `<ignorable>`s; unless `marked`, the first target is wrapped in the
/// `<mrk>` that refers to the QA issues `lqi_id`.
fn write_segments(
    w: &mut quick_xml::writer::Writer<Vec<u8>>,
    u: &Unit,
    parts: Vec<SegmentXml>,
    marked: bool,
    lqi_id: &str,
) {
    let mut marked = marked;
    for SegmentXml {
        source,
        target,
        ignorable,
    } in parts
    {
        let target = target.map(|t| {
            if marked {
                return t;
            }
            marked = true;
            format!(
                "<mrk id=\"lqi1\" type=\"its:lqi\" its:locQualityIssuesRef=\"#{lqi_id}\">{t}</mrk>"
            )
        });
        xml::open(w, "segment", &[("state", u.state)]);
        xml::open(w, "source", &[]);
        xml::raw(w, &source);
        xml::close(w, "source");
        if let Some(t) = target {
            xml::open(w, "target", &[]);
            xml::raw(w, &t);
            xml::close(w, "target");
        }
        xml::close(w, "segment");
        if let Some((ws, t_ws)) = ignorable {
            xml::open(w, "ignorable", &[]);
            xml::open(w, "source", &[]);
            xml::raw(w, &text_xml(&ws));
            xml::close(w, "source");
            if let Some(t) = t_ws {
                xml::open(w, "target", &[]);
                xml::raw(w, &text_xml(&t));
                xml::close(w, "target");
            }
            xml::close(w, "ignorable");
        }
    }
}

/// A unit read from an XLIFF document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadUnit {
    /// The unit's `id`.
    pub id: String,
    /// The `id` of its `<file>`.
    pub file: String,
    /// False for `translate="no"` units.
    pub translate: bool,
    /// The source text, codes put back.
    pub source: String,
    /// The target text, codes put back; `None` when a segment has no target.
    pub target: Option<String>,
    /// Line of the `<unit>` element.
    pub line: u64,
}

/// Reads every unit of an XLIFF 2.x document.
///
/// Errors name the file and line: malformed XML, not XLIFF 2.x (XLIFF 1.2 is refused with a
/// remedy), a unit without id, an inline code referring to data the unit does not have, a
/// `<cp>` with a bad code point.
pub fn read(text: &str, display: &str) -> Result<Vec<ReadUnit>, FileError> {
    let nodes = xml::parse(text, display)?;
    let line = |pos: usize| Some(xml::line_of(text, pos));
    let Some(root) = nodes.iter().find(|n| matches!(n, Node::Start { .. })) else {
        return Err(FileError::new(display, None, "is empty"));
    };
    let version = root.attr("version").unwrap_or("");
    if !root.is_start("xliff") || !version.starts_with('2') {
        return Err(FileError::new(
            display,
            Some(1),
            format!(
                "is not an XLIFF 2 document (root `{}`, version `{version}`); export XLIFF 2.0 from your CAT tool, or re-export with `booktr export --format xliff` and work on that file",
                match root {
                    Node::Start { name, .. } => name.as_str(),
                    _ => "",
                }
            ),
        ));
    }
    let mut units = Vec::new();
    let mut file_id = String::new();
    let mut i = 0;
    while i < nodes.len() {
        match &nodes[i] {
            Node::Start { name, .. } if name == "file" => {
                file_id = nodes[i].attr("id").unwrap_or("").to_string();
                i += 1;
            }
            Node::Start { name, pos, .. } if name == "unit" => {
                let end = xml::skip(&nodes, i);
                let id = nodes[i].attr("id").unwrap_or("").to_string();
                if id.is_empty() {
                    return Err(FileError::new(
                        display,
                        line(*pos),
                        "a <unit> has no id; units must keep the ids booktr wrote",
                    ));
                }
                let translate = nodes[i].attr("translate") != Some("no");
                let unit = read_unit(&nodes[i + 1..end - 1], display, text)?;
                units.push(ReadUnit {
                    id,
                    file: file_id.clone(),
                    translate,
                    source: unit.0,
                    target: unit.1,
                    line: xml::line_of(text, *pos),
                });
                i = end;
            }
            _ => i += 1,
        }
    }
    Ok(units)
}

/// Source and target of one unit's content nodes.
fn read_unit(
    nodes: &[Node],
    display: &str,
    text: &str,
) -> Result<(String, Option<String>), FileError> {
    // originalData first (it may come after segments in a document written by another tool).
    let mut data: BTreeMap<String, String> = BTreeMap::new();
    let mut i = 0;
    while i < nodes.len() {
        if nodes[i].is_start("data") {
            let id = nodes[i].attr("id").unwrap_or("").to_string();
            let end = xml::skip(nodes, i);
            let content = inline_text(&nodes[i + 1..end - 1], &BTreeMap::new(), display, text)?;
            data.insert(id, content);
            i = end;
        } else {
            i += 1;
        }
    }
    let mut source = String::new();
    let mut target = String::new();
    let mut complete = true;
    let mut i = 0;
    while i < nodes.len() {
        if nodes[i].is_start("segment") || nodes[i].is_start("ignorable") {
            let ignorable = nodes[i].is_start("ignorable");
            let end = xml::skip(nodes, i);
            let mut src = None;
            let mut tgt = None;
            let mut j = i + 1;
            while j < end {
                if nodes[j].is_start("source") || nodes[j].is_start("target") {
                    let e = xml::skip(nodes, j);
                    let content = inline_text(&nodes[j + 1..e - 1], &data, display, text)?;
                    if nodes[j].is_start("source") {
                        src = Some(content);
                    } else {
                        tgt = Some(content);
                    }
                    j = e;
                } else {
                    j += 1;
                }
            }
            let src = src.unwrap_or_default();
            match tgt {
                Some(t) => target.push_str(&t),
                None if ignorable => target.push_str(&src),
                None => complete = false,
            }
            source.push_str(&src);
            i = end;
        } else {
            i += 1;
        }
    }
    Ok((source, complete.then_some(target)))
}

/// The text of inline content: text, codes replaced by their native data, `<cp>` decoded,
/// annotations dropped with their content kept.
fn inline_text(
    nodes: &[Node],
    data: &BTreeMap<String, String>,
    display: &str,
    text: &str,
) -> Result<String, FileError> {
    let mut out = String::new();
    let mut pc_ends: Vec<String> = Vec::new();
    let lookup = |n: &Node, key: &str| -> Result<String, FileError> {
        let pos = match n {
            Node::Start { pos, .. } => *pos,
            _ => 0,
        };
        let Some(r) = n.attr(key) else {
            return Err(FileError::new(
                display,
                Some(xml::line_of(text, pos)),
                format!(
                    "an inline code has no `{key}`; keep the codes booktr wrote (they carry the Markdown)"
                ),
            ));
        };
        data.get(r).cloned().ok_or_else(|| {
            FileError::new(
                display,
                Some(xml::line_of(text, pos)),
                format!("an inline code refers to data `{r}` that its unit does not have"),
            )
        })
    };
    for n in nodes {
        match n {
            Node::Text(t) => out.push_str(t),
            Node::Start { name, pos, .. } => match name.as_str() {
                "ph" | "sc" | "ec" => out.push_str(&lookup(n, "dataRef")?),
                "pc" => {
                    out.push_str(&lookup(n, "dataRefStart")?);
                    pc_ends.push(lookup(n, "dataRefEnd")?);
                }
                "cp" => {
                    let hex = n.attr("hex").unwrap_or("");
                    let c = u32::from_str_radix(hex, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| {
                            FileError::new(
                                display,
                                Some(xml::line_of(text, *pos)),
                                format!("<cp hex=\"{hex}\"> is not a code point"),
                            )
                        })?;
                    out.push(c);
                }
                _ => {}
            },
            Node::End { name } if name == "pc" => {
                if let Some(e) = pc_ends.pop() {
                    out.push_str(&e);
                }
            }
            Node::End { .. } => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn doc(source: &str, target: Option<&str>) -> String {
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
                    state: "translated",
                    notes: vec![Note {
                        priority: 1,
                        category: "booktr:qa".into(),
                        text: "error code_blocks: <missing> & \"quoted\"".into(),
                    }],
                }],
            }],
        )
    }

    #[test]
    fn codes_are_placeholders_shared_by_source_and_target() {
        let src = "Call `f()` and read [the docs](https://x.org).\n";
        let tgt = "阅读[文档](https://x.org)并调用 `f()`。\n";
        let d = doc(src, Some(tgt));
        assert!(d.contains("<ph id=\"1\" dataRef=\"d1\""), "{d}");
        assert!(
            d.contains("<pc id=\"2\" dataRefStart=\"d2\" dataRefEnd=\"d3\""),
            "{d}"
        );
        // The target reuses the source's ids for the same codes, in its own order.
        let target_xml = &d[d.find("<target>").unwrap()..];
        assert!(
            target_xml.find("<pc id=\"2\"").unwrap() < target_xml.find("<ph id=\"1\"").unwrap()
        );
        // Native code stays in originalData (and the informative `disp` attributes): the
        // target's text content is prose only.
        let target_xml = &target_xml[..target_xml.find("</target>").unwrap() + "</target>".len()];
        let text: String = xml::parse(target_xml, "t")
            .unwrap()
            .into_iter()
            .filter_map(|n| match n {
                Node::Text(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(text, "阅读文档并调用 。\n");
        let units = read(&d, "x.xlf").unwrap();
        assert_eq!(units[0].source, src);
        assert_eq!(units[0].target.as_deref(), Some(tgt));
        assert_eq!(
            (units[0].id.as_str(), units[0].file.as_str()),
            ("ch1-000", "ch1")
        );
    }

    #[test]
    fn resegmented_units_and_sc_ec_codes_are_joined() {
        let d = r#"<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.1" srcLang="en" trgLang="zh">
<file id="f"><unit id="u1"><originalData><data id="a">`x`</data></originalData>
<segment><source>One <ph id="1" dataRef="a"/>.</source><target>一<mrk id="m" type="comment" value="c">个</mrk><sc id="1" dataRef="a"/>。</target></segment>
<ignorable><source> </source></ignorable>
<segment><source>Two.</source><target>二。</target></segment>
</unit><unit id="u2"><segment><source>Three.</source></segment></unit></file></xliff>"#;
        let u = read(d, "x.xlf").unwrap();
        assert_eq!(u[0].source, "One `x`. Two.");
        assert_eq!(u[0].target.as_deref(), Some("一个`x`。 二。"));
        assert_eq!(u[1].target, None);
    }

    #[test]
    fn bad_documents_name_file_and_line() {
        let e = read("<xliff version=\"1.2\"><file/></xliff>", "old.xlf").unwrap_err();
        assert!(e.to_string().contains("XLIFF 2"), "{e}");
        let e = read(
            "<xliff version=\"2.0\">\n<file id=\"f\">\n<unit id=\"u\"><segment><source><ph id=\"1\" dataRef=\"zz\"/></source></segment></unit></file></xliff>",
            "x.xlf",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.to_string().contains("zz"), "{e}");
        let e = read("<xliff version=\"2.0\">\n<file id=\"f\">\n<unit>", "x.xlf").unwrap_err();
        assert!(e.line.is_some(), "{e}");
    }

    #[test]
    fn qa_findings_are_its_localization_quality_issues() {
        let d = doc("One. Two.\n", Some("一。二。\n"));
        assert!(
            d.contains("xmlns:its=\"http://www.w3.org/2005/11/its\"")
                && d.contains("its:version=\"2.0\""),
            "{d}"
        );
        assert!(
            d.contains("<its:locQualityIssues xml:id=\"lqi-ch1-ch1-000\">"),
            "{d}"
        );
        assert!(
            d.contains("<its:locQualityIssue locQualityIssueType=\"markup\" locQualityIssueComment=\"&lt;missing&gt; &amp; &quot;quoted&quot;\" locQualityIssueSeverity=\"100\">"),
            "{d}"
        );
        // Referred to from the first segment's target only.
        assert_eq!(d.matches("its:locQualityIssuesRef").count(), 1, "{d}");
        assert!(
            d.contains("<target><mrk id=\"lqi1\" type=\"its:lqi\" its:locQualityIssuesRef=\"#lqi-ch1-ch1-000\">一。</mrk></target>"),
            "{d}"
        );
        // The annotation does not change what is read back.
        assert_eq!(
            read(&d, "x.xlf").unwrap()[0].target.as_deref(),
            Some("一。二。\n")
        );
        let n = |check: &str, sev: &str| its_issue(&qa_note(sev, check, "m")).unwrap();
        assert_eq!(
            n("glossary", "warning"),
            ("terminology", "m".to_string(), 50)
        );
        assert_eq!(n("untranslated", "error").0, "untranslated");
        assert_eq!(
            n("no_such_check", "info"),
            ("uncategorized", "m".to_string(), 10)
        );
        let other = Note {
            priority: 1,
            category: "x".into(),
            text: "error links: m".into(),
        };
        assert_eq!(its_issue(&other), None);
        // Without QA notes, no ITS at all.
        let plain = write(
            "en",
            "zh",
            &[File {
                id: "f".into(),
                original: "f.md".into(),
                units: vec![Unit {
                    id: "u".into(),
                    source: "A.".into(),
                    target: Some("甲。".into()),
                    translate: true,
                    state: "translated",
                    notes: vec![],
                }],
            }],
        );
        assert!(!plain.contains("its:"), "{plain}");
    }

    #[test]
    fn sentences_are_segments_with_placeholders_and_ignorable_spaces() {
        let src = "An **agent** calls `f()`. It reads [the docs](u), e.g. Fig. 3.\n\nShort para.\n";
        let tgt = "**智能体**调用 `f()`。它阅读[文档](u)，例如图 3。\n\n短段落。\n";
        let d = doc(src, Some(tgt));
        assert_eq!(d.matches("<segment ").count(), 3, "{d}");
        // The whitespace between segments is ignorable; the last segment keeps its own.
        assert_eq!(d.matches("<ignorable>").count(), 2, "{d}");
        assert!(
            d.contains("<source> </source>") && d.contains("<target></target>"),
            "{d}"
        );
        assert!(d.contains("<source>\n\n</source>"), "{d}");
        // Emphasis is a tag pair, not raw asterisks, on both sides with the same id.
        assert!(!d.contains("**agent"), "{d}");
        assert!(
            d.contains("<pc id=\"1\" dataRefStart=\"d1\" dataRefEnd=\"d1\" dispStart=\"**\" dispEnd=\"**\">agent</pc>"),
            "{d}"
        );
        assert!(
            d.contains("\"#lqi-ch1-ch1-000\"><pc id=\"1\" dataRefStart=\"d1\" dataRefEnd=\"d1\""),
            "{d}"
        );
        let u = read(&d, "x.xlf").unwrap();
        assert_eq!(u[0].source, src);
        assert_eq!(u[0].target.as_deref(), Some(tgt));
        // Without a target, the source's sentences are the segments.
        let d = doc(src, None);
        assert_eq!(d.matches("<segment ").count(), 3, "{d}");
        assert_eq!(read(&d, "x.xlf").unwrap()[0].source, src);
        // Sentences that do not align 1:1: one segment for the block.
        let d = doc("One. Two.\n", Some("一二。\n"));
        assert_eq!(d.matches("<segment ").count(), 1, "{d}");
    }

    proptest! {
        /// Sentence-rich Markdown (abbreviations, CJK stops, codes around full stops, lists,
        /// CRLF) comes back byte for byte, and the document is stable.
        #[test]
        fn segmented_write_read_is_lossless(
            src in proptest::collection::vec(prop_oneof![
                Just("One. "), Just("Two? "), Just("e.g. Three "), Just("Fig. 3. "), Just("**A. B** "),
                Just("\n\n"), Just("- item. X\n"), Just("1. A. B\n"), Just("`c. D` "), Just("[a. B](u). "),
                Just("\r\n"), Just("  "), Just("Z..."), Just("\n```\nQ. R.\n```\n"),
            ], 0..16),
            tgt in proptest::collection::vec(prop_oneof![
                Just("一。"), Just("二？"), Just("**甲。乙**"), Just("\n\n"), Just("- 项。X\n"), Just("`c. D`"),
                Just("[甲。](u)。"), Just("\r\n"), Just(" "), Just("One. "), Just("Two! "),
            ], 0..16),
        ) {
            let (src, tgt) = (src.concat(), tgt.concat());
            let d = doc(&src, Some(&tgt));
            let u = read(&d, "x.xlf").unwrap();
            prop_assert_eq!(&u[0].source, &src);
            prop_assert_eq!(u[0].target.as_deref(), Some(tgt.as_str()));
            prop_assert_eq!(doc(&u[0].source, u[0].target.as_deref()), d);
        }

        /// A CAT tool's edit of one segment's target maps back to its unit, and only that
        /// sentence of the unit's target changes.
        #[test]
        fn an_edited_segment_changes_only_its_span(
            parts in proptest::collection::vec(("[a-z]{1,8}", prop_oneof![
                Just(""), Just(" `x`"), Just(" **b**"), Just(" [l](u)"), Just(" <br>"),
            ]), 1..7),
            pick in any::<proptest::sample::Index>(),
        ) {
            let n = parts.len();
            let src: Vec<String> = parts
                .iter()
                .enumerate()
                .map(|(i, (w, c))| format!("Sentence{i}{c} w{w}."))
                .collect();
            let mut tgt: Vec<String> = parts
                .iter()
                .enumerate()
                .map(|(i, (w, c))| format!("句子{i}{c}{w}。"))
                .collect();
            let src = format!("{}\n", src.join(" "));
            tgt[n - 1].push('\n');
            let d = doc(&src, Some(&tgt.concat()));
            prop_assert_eq!(d.matches("<segment ").count(), n);
            let k = pick.index(n);
            // Replace the content of the k-th <target> as a CAT tool would.
            let mut at = 0;
            for _ in 0..=k {
                at = d[at..].find("<segment ").unwrap() + at + 1;
            }
            at = d[at..].find("<target>").unwrap() + at + "<target>".len();
            let end = d[at..].find("</target>").unwrap() + at;
            let edited = format!("{}EDITED &amp; done{}", &d[..at], &d[end..]);
            let u = read(&edited, "x.xlf").unwrap();
            prop_assert_eq!(&u[0].id, "ch1-000");
            prop_assert_eq!(&u[0].source, &src);
            tgt[k] = "EDITED & done".into();
            prop_assert_eq!(u[0].target.clone(), Some(tgt.concat()));
        }
    }

    proptest! {
        /// Any source and target, Markdown or not, control characters and CRs included, come
        /// back byte for byte.
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
            let d = doc(&src, Some(&tgt));
            let u = read(&d, "x.xlf").unwrap();
            prop_assert_eq!(&u[0].source, &src);
            prop_assert_eq!(u[0].target.as_deref(), Some(tgt.as_str()));
            // And writing what was read gives the same document.
            prop_assert_eq!(doc(&u[0].source, u[0].target.as_deref()), d);
        }
    }
}
