//! One parse of a text into the spans [`super::repair`] compares and restores, each with its
//! byte range in the text (BOM included): top-level blocks, inline code, math, link and image
//! destinations, footnote labels, HTML tags and comments, headings, code blocks, callout and
//! admonition markers. Offsets come from pulldown-cmark's `into_offset_iter()` with booktr's
//! parser options ([`crate::book::markdown::parser`]), so a span here is the same span QA's
//! [`crate::qa::Doc`] sees; this module only adds where it sits.
//!
//! It does not decide anything: pairing and restoring live in the parent module.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Tag, TagEnd};

use crate::book::markdown;

/// A top-level block: its kind (a short name such as `paragraph`, `heading`, `code`) and its
/// byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TopBlock {
    pub kind: &'static str,
    pub range: Range<usize>,
}

/// What kind of inline span (compared as multisets per scope).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum InlineKind {
    Code,
    Math,
    Url,
    Footnote,
    Tag,
    Comment,
    /// A reference link's label: the label of `[text][label]`, or the whole `[label][]` or
    /// `[label]` (their text is the label); keyed by the label as CommonMark matches it.
    RefLabel,
}

/// One inline span: the bytes at `range` are what is replaced; `key` is what is compared
/// (equal to those bytes except for HTML tags, compared with their translatable attribute
/// values blanked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inline {
    pub kind: InlineKind,
    pub range: Range<usize>,
    pub key: String,
    /// Index of the top-level block the span starts in; `usize::MAX` outside any (link
    /// reference definitions).
    pub block: usize,
}

/// A heading: level, `{#id}`, byte range, and whether it is written ATX-style (`#`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeadingSpan {
    pub level: u8,
    pub id: Option<String>,
    pub range: Range<usize>,
    pub atx: bool,
}

/// A code block: fenced or indented, info string, body (the concatenated text events) and
/// byte range of the whole block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodeSpan {
    pub fenced: bool,
    pub info: String,
    pub body: String,
    pub range: Range<usize>,
}

/// Everything of one text, in document order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Spans {
    pub top: Vec<TopBlock>,
    pub inline: Vec<Inline>,
    pub headings: Vec<HeadingSpan>,
    pub code: Vec<CodeSpan>,
    /// Display math (`$$…$$`), raw bytes at each range.
    pub display_math: Vec<Range<usize>>,
    /// Callout and admonition markers: the marker as QA's `structure::markers` names it, and
    /// the range of its bytes.
    pub markers: Vec<(String, Range<usize>)>,
    /// For each block of QA's outline (`qa::Doc::blocks`, same order), the index of the
    /// top-level block it sits in (mirrors the outline builder's rules for what is a block).
    pub outline_top: Vec<usize>,
}

/// The state of [`Spans::parse`]'s walk over the events.
#[derive(Default)]
struct Walk {
    /// Nesting depth of the current event (0: top level).
    depth: usize,
    /// The code block being read.
    code: Option<CodeSpan>,
    in_html_block: bool,
    /// Mirror of QA's outline builder: open outline blocks (`true` for a list item) and
    /// paragraphs swallowed by an item.
    open: Vec<bool>,
    item_para: Vec<bool>,
}

impl Walk {
    /// Top-level blocks.
    fn top_level(&mut self, s: &mut Spans, ev: &Event<'_>, r: &Range<usize>) {
        match ev {
            Event::Start(tag) => {
                if self.depth == 0 {
                    s.top.push(TopBlock {
                        kind: top_kind(tag),
                        range: r.clone(),
                    });
                }
                self.depth += 1;
            }
            Event::End(_) => self.depth = self.depth.saturating_sub(1),
            Event::Rule if self.depth == 0 => s.top.push(TopBlock {
                kind: "rule",
                range: r.clone(),
            }),
            _ => {}
        }
    }

    /// QA's outline blocks, each with the top-level block it sits in.
    fn outline(&mut self, s: &mut Spans, ev: &Event<'_>, block: usize) {
        let open = &mut self.open;
        let mut outline_push = |open: &mut Vec<bool>, item: bool| {
            open.push(item);
            s.outline_top.push(block);
        };
        match ev {
            Event::Start(Tag::Paragraph) => {
                if open.last() == Some(&true) {
                    self.item_para.push(true);
                } else {
                    self.item_para.push(false);
                    outline_push(open, false);
                }
            }
            Event::End(TagEnd::Paragraph) if self.item_para.pop() == Some(false) => {
                open.pop();
            }
            Event::Start(Tag::Item) => outline_push(open, true),
            Event::Start(
                Tag::Heading { .. } | Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::Table(_),
            ) => outline_push(open, false),
            Event::End(
                TagEnd::Item
                | TagEnd::Heading(_)
                | TagEnd::CodeBlock
                | TagEnd::HtmlBlock
                | TagEnd::Table,
            ) => {
                open.pop();
            }
            Event::Rule => s.outline_top.push(block),
            _ => {}
        }
    }

    /// Code blocks, markup, inline code and math, footnotes, link destinations and headings.
    fn content(&mut self, s: &mut Spans, text: &str, ev: Event<'_>, r: Range<usize>, block: usize) {
        match ev {
            Event::Start(Tag::CodeBlock(kind)) => {
                let (fenced, info) = match kind {
                    CodeBlockKind::Fenced(i) => (true, i.to_string()),
                    CodeBlockKind::Indented => (false, String::new()),
                };
                self.code = Some(CodeSpan {
                    fenced,
                    info,
                    body: String::new(),
                    range: r,
                });
            }
            Event::Text(t) if self.code.is_some() => {
                if let Some(c) = self.code.as_mut() {
                    c.body.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => s.code.extend(self.code.take().map(|mut c| {
                c.body = lf(&c.body);
                c
            })),
            Event::Start(Tag::HtmlBlock) => {
                self.in_html_block = true;
                s.push_markup(text, r, block);
            }
            Event::End(TagEnd::HtmlBlock) => self.in_html_block = false,
            Event::Html(_) | Event::InlineHtml(_) if !self.in_html_block => {
                s.push_markup(text, r, block)
            }
            Event::Code(_) => s.push(InlineKind::Code, text, r, block),
            Event::InlineMath(_) => s.push(InlineKind::Math, text, r, block),
            Event::DisplayMath(_) => s.display_math.push(r),
            Event::FootnoteReference(label) => {
                let at = r.start + 2;
                if text.get(r.start..at) == Some("[^")
                    && text.get(at..at + label.len()) == Some(&*label)
                {
                    s.push(InlineKind::Footnote, text, at..at + label.len(), block);
                }
            }
            Event::Start(Tag::FootnoteDefinition(label)) => {
                let at = r.start + 2;
                if text.get(r.start..at) == Some("[^")
                    && text.get(at..at + label.len()) == Some(&*label)
                {
                    s.push(InlineKind::Footnote, text, at..at + label.len(), block);
                }
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            })
            | Event::Start(Tag::Image {
                link_type,
                dest_url,
                ..
            }) => {
                if let Some(d) = dest_range(text, &r, link_type, &dest_url) {
                    s.push(InlineKind::Url, text, d, block);
                }
            }
            Event::Start(Tag::Heading { level, id, .. }) => {
                let atx = text[r.clone()].trim_start_matches(' ').starts_with('#');
                s.headings.push(HeadingSpan {
                    level: level as u8,
                    id: id.map(|i| i.to_string()),
                    range: r,
                    atx,
                });
            }
            _ => {}
        }
    }
}

fn top_kind(tag: &Tag<'_>) -> &'static str {
    match tag {
        Tag::Paragraph => "paragraph",
        Tag::Heading { .. } => "heading",
        Tag::BlockQuote(_) => "blockquote",
        Tag::CodeBlock(_) => "code",
        Tag::HtmlBlock => "html",
        Tag::List(Some(_)) => "ordered_list",
        Tag::List(None) => "list",
        Tag::FootnoteDefinition(_) => "footnote_definition",
        Tag::Table(_) => "table",
        Tag::MetadataBlock(_) => "front_matter",
        Tag::DefinitionList => "definition_list",
        _ => "other",
    }
}

impl Spans {
    /// Parses `text`: one walk over the Markdown events (top-level blocks, QA's outline, code,
    /// markup and inline spans), then the spans the events do not give (reference
    /// definitions' destinations, footnote references defined elsewhere, reference labels).
    pub(crate) fn parse(text: &str) -> Spans {
        let (bom, _) = markdown::split_bom(text);
        let mut s = Spans::default();
        let mut walk = Walk::default();
        let mut iter = markdown::parser(text).into_offset_iter();
        for (ev, r) in iter.by_ref() {
            let r = r.start + bom..r.end + bom;
            walk.top_level(&mut s, &ev, &r);
            let block = s.top.len().saturating_sub(1);
            walk.outline(&mut s, &ev, block);
            walk.content(&mut s, text, ev, r, block);
        }
        for (_, def) in iter.reference_definitions().iter() {
            s.definition_url(text, def.span.start + bom..def.span.end + bom, &def.dest);
        }
        s.loose_footnotes(text);
        s.reference_labels(text);
        s.inline.sort_by_key(|i| i.range.start);
        s.markers = crate::qa::unit::structure::marker_spans(text);
        s
    }

    /// The destination `dest` of a reference definition (`[x]: url`, bytes `span` of
    /// `text`), as a URL span outside any top-level block.
    fn definition_url(&mut self, text: &str, span: Range<usize>, dest: &str) {
        let s = self;
        let raw = &text[span.clone()];
        if let Some(colon) = raw.find("]:") {
            let after = colon + 2;
            let ws = raw[after..].len() - raw[after..].trim_start().len();
            let mut at = after + ws;
            if raw[at..].starts_with('<') {
                at += 1;
            }
            if raw[at..].starts_with(dest) {
                let start = span.start + at;
                s.push(InlineKind::Url, text, start..start + dest.len(), usize::MAX);
            }
        }
    }

    /// Footnote references whose definition sits in another unit stay text: found in the
    /// prose.
    fn loose_footnotes(&mut self, text: &str) {
        let s = self;
        for pr in markdown::prose_ranges(text) {
            let slice = &text[pr.clone()];
            let mut from = 0;
            while let Some(i) = slice[from..].find("[^").map(|i| i + from) {
                from = i + 2;
                let rest = &slice[i + 2..];
                let end = rest.find(|c: char| c == ']' || c == '[' || c.is_whitespace());
                let Some(e) = end.filter(|&e| e > 0 && rest[e..].starts_with(']')) else {
                    continue;
                };
                if rest[e + 1..].starts_with([':', '：']) {
                    continue;
                }
                let start = pr.start + i + 2;
                let block = s
                    .top
                    .iter()
                    .rposition(|b| b.range.start <= start)
                    .unwrap_or(0);
                s.push(InlineKind::Footnote, text, start..start + e, block);
            }
        }
    }

    /// Reference labels, defined in the unit or not (a unit's links often use definitions at
    /// the chapter's end). A shortcut `[x]` whose definition is elsewhere is left out: it may
    /// be bracketed text, and restoring a "label" there would make one.
    fn reference_labels(&mut self, text: &str) {
        let s = self;
        for l in markdown::reference_links(text) {
            if l.form == markdown::RefForm::Shortcut && !l.defined {
                continue;
            }
            let range = match l.form {
                markdown::RefForm::Full => l.label.clone(),
                _ => l.range.clone(),
            };
            let block = s
                .top
                .iter()
                .rposition(|b| b.range.start <= range.start)
                .unwrap_or(0);
            s.inline.push(Inline {
                kind: InlineKind::RefLabel,
                key: markdown::label_key(&text[l.label.clone()]),
                range,
                block,
            });
        }
    }

    fn push(&mut self, kind: InlineKind, text: &str, range: Range<usize>, block: usize) {
        self.inline.push(Inline {
            kind,
            key: lf(&text[range.clone()]),
            range,
            block,
        });
    }

    /// Adds the tags and comments inside `range` (an HTML block or one inline HTML event).
    fn push_markup(&mut self, text: &str, range: Range<usize>, block: usize) {
        for r in crate::qa::unit::math_html::markup_ranges(&text[range.clone()]) {
            let r = range.start + r.start..range.start + r.end;
            let raw = &text[r.clone()];
            let (kind, key) = if raw.starts_with("<!--") {
                (InlineKind::Comment, lf(raw))
            } else {
                (
                    InlineKind::Tag,
                    lf(&crate::qa::unit::math_html::blank_translatable_attrs(raw)),
                )
            };
            self.inline.push(Inline {
                kind,
                range: r,
                key,
                block,
            });
        }
    }
}

/// `s` with CRLF line endings as LF: QA parses texts so, and a line ending is never a fault.
pub(crate) fn lf(s: &str) -> String {
    s.replace("\r\n", "\n")
}

/// The byte range of a link's or image's destination inside `text`, when it is written there
/// (inline links and autolinks) and its bytes equal the parsed destination; `None` for
/// reference links (their destination sits in the definition) and escaped destinations.
fn dest_range(text: &str, r: &Range<usize>, lt: LinkType, dest: &str) -> Option<Range<usize>> {
    let raw = &text[r.clone()];
    match lt {
        LinkType::Autolink | LinkType::Email => {
            let inner = raw.strip_prefix('<')?.strip_suffix('>')?;
            (inner == dest).then(|| r.start + 1..r.end - 1)
        }
        LinkType::Inline => {
            // The destination follows the last `](` whose tail starts with it.
            let mut search = raw.len();
            while let Some(p) = raw[..search].rfind("](") {
                let after = p + 2;
                let ws = raw[after..].len() - raw[after..].trim_start().len();
                let mut at = after + ws;
                if raw[at..].starts_with('<') {
                    at += 1;
                }
                if raw[at..].starts_with(dest) {
                    return Some(r.start + at..r.start + at + dest.len());
                }
                search = p;
            }
            None
        }
        _ => None,
    }
}
