//! A text's block outline, as the `structure` check aligns it:
//! each paragraph, list item (with its depth and paragraphs), heading, code block, table,
//! thematic break and HTML block, with its quote and list context, its prose and its anchors.
//! Built from the parse events of [`crate::qa::Doc::parse`] ([`OutlineBuilder`]), so each text
//! is parsed once.

use pulldown_cmark::{Alignment, BlockQuoteKind, Event, LinkType, Tag, TagEnd};

/// What kind of block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Paragraph,
    ListItem,
    Heading,
    Code,
    Table,
    Rule,
    Html,
}

impl Kind {
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Kind::Paragraph => "paragraph",
            Kind::ListItem => "list item",
            Kind::Heading => "heading",
            Kind::Code => "code block",
            Kind::Table => "table",
            Kind::Rule => "thematic break",
            Kind::Html => "HTML block",
        }
    }
}

/// One block of a text's outline, in document order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Block {
    /// `None` only while building.
    pub kind: Option<Kind>,
    /// Blockquote nesting (0 outside quotes).
    pub quote_depth: usize,
    /// List nesting of a list item (1 for a top-level item), 0 for other blocks.
    pub list_depth: usize,
    /// A list item of an ordered list.
    pub ordered: bool,
    /// Paragraphs of a list item (a tight item with text counts 1; an empty item 0).
    pub paras: usize,
    /// GFM callout kind of the innermost blockquote (`NOTE`, `TIP`, …), if any.
    pub callout: Option<&'static str>,
    /// A table's alignment row as `L`, `C`, `R`, `-` per column.
    pub align: String,
    /// Plain text of the block (its own text; not that of nested blocks), for excerpts and
    /// lengths.
    pub text: String,
    /// List items enclosing a block that is not itself a list item (a code block indented
    /// under its item counts 1); 0 outside lists and for list items.
    pub in_item: usize,
    /// For the first item of an ordered list, the number the list starts at.
    pub list_start: Option<u64>,
    /// The label of the footnote definition the block is in, if any.
    pub footnote: Option<String>,
    /// Bytes of the block in the parsed text (CRLF read as LF, see [`crate::qa::Doc::parse`]).
    pub range: std::ops::Range<usize>,
    /// The block's anchors ([`anchors`]), hashed, sorted and deduplicated.
    pub anchors: Vec<u64>,
    /// The block's own prose: its text without inline code and autolinks (the numbers a
    /// reader reads, [`crate::qa::unit::numbers`]).
    pub prose: String,
    /// The contents of the block's own inline code spans, in order.
    pub code: Vec<String>,
}

/// The words of `text` that a translation into any language keeps as written: those with an
/// ASCII digit (`2025`, `GPT-4o`, `234ms`) or a capital after their first letter (`OpenAI`,
/// `MoE`, `API`, `Thinker-Talker`). Names, versions and numbers, which tell two blocks of a
/// source and its translation apart where their lengths do not.
pub fn anchors(text: &str) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    let mut out: Vec<u64> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+')))
        .map(|w| w.trim_matches(['.', '-', '+', '_']))
        .filter(|w| {
            w.chars().any(|c| c.is_ascii_digit())
                || w.chars().skip(1).any(|c| c.is_ascii_uppercase())
        })
        .map(|w| {
            let mut h = rustc_hash::FxHasher::default();
            w.hash(&mut h);
            h.finish()
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

impl Block {
    /// Non-whitespace characters of the block's own text.
    pub fn chars(&self) -> usize {
        self.text.chars().filter(|c| !c.is_whitespace()).count()
    }

    pub(crate) fn kind(&self) -> Kind {
        self.kind.unwrap_or(Kind::Paragraph)
    }
}

/// Builds the outline from the parse events (fed by [`crate::qa::Doc::parse`]).
#[derive(Debug, Default)]
pub(crate) struct OutlineBuilder {
    blocks: Vec<Block>,
    /// Indices of open blocks (innermost last).
    open: Vec<usize>,
    /// Open lists: ordered or not.
    lists: Vec<bool>,
    quotes: Vec<Option<&'static str>>,
    /// Paragraph starts swallowed by an open list item.
    in_item_para: Vec<bool>,
    /// Open list items.
    items: usize,
    /// The start number of an ordered list whose first item is still to come.
    fresh_start: Option<u64>,
    /// Labels of the open footnote definitions.
    footnotes: Vec<String>,
    /// Open autolinks and email links (their text is a URL, not prose).
    autolinks: usize,
}

impl OutlineBuilder {
    fn push(&mut self, kind: Kind, range: &std::ops::Range<usize>) {
        self.blocks.push(Block {
            kind: Some(kind),
            quote_depth: self.quotes.len(),
            callout: self.quotes.last().copied().flatten(),
            in_item: if kind == Kind::ListItem {
                0
            } else {
                self.items
            },
            footnote: self.footnotes.last().cloned(),
            range: range.clone(),
            ..Block::default()
        });
        self.open.push(self.blocks.len() - 1);
    }

    fn top_is_item(&self) -> bool {
        self.open
            .last()
            .is_some_and(|&i| self.blocks[i].kind == Some(Kind::ListItem))
    }

    /// Feeds one event with its byte range in the parsed text.
    pub(crate) fn event(&mut self, ev: &Event<'_>, range: &std::ops::Range<usize>) {
        match ev {
            Event::Start(Tag::Paragraph) => {
                if self.top_is_item() {
                    let i = *self.open.last().expect("item");
                    self.blocks[i].paras += 1;
                    self.in_item_para.push(true);
                } else {
                    self.in_item_para.push(false);
                    self.push(Kind::Paragraph, range);
                }
            }
            Event::End(TagEnd::Paragraph) => {
                let own_block = self.in_item_para.pop() == Some(false);
                if own_block {
                    self.open.pop();
                }
            }
            Event::Start(Tag::List(start)) => {
                self.lists.push(start.is_some());
                self.fresh_start = *start;
            }
            Event::End(TagEnd::List(_)) => {
                self.lists.pop();
            }
            Event::Start(Tag::Item) => {
                self.push(Kind::ListItem, range);
                let b = self.blocks.last_mut().expect("pushed");
                b.list_depth = self.lists.len();
                b.ordered = self.lists.last().copied().unwrap_or(false);
                b.list_start = self.fresh_start.take();
                self.items += 1;
            }
            Event::Start(Tag::FootnoteDefinition(label)) => self.footnotes.push(label.to_string()),
            Event::End(TagEnd::FootnoteDefinition) => {
                self.footnotes.pop();
            }
            Event::End(TagEnd::Item) => {
                self.items = self.items.saturating_sub(1);
                if let Some(i) = self.open.pop() {
                    let b = &mut self.blocks[i];
                    if b.paras == 0 && b.chars() > 0 {
                        b.paras = 1;
                    }
                }
            }
            Event::Start(Tag::BlockQuote(kind)) => self.quotes.push(kind.map(callout_name)),
            Event::End(TagEnd::BlockQuote(_)) => {
                self.quotes.pop();
            }
            Event::Start(Tag::Heading { .. }) => self.push(Kind::Heading, range),
            Event::Start(Tag::CodeBlock(_)) => self.push(Kind::Code, range),
            Event::Start(Tag::HtmlBlock) => self.push(Kind::Html, range),
            Event::Start(Tag::Table(aligns)) => {
                self.push(Kind::Table, range);
                let b = self.blocks.last_mut().expect("pushed");
                b.align = aligns
                    .iter()
                    .map(|a| match a {
                        Alignment::None => '-',
                        Alignment::Left => 'L',
                        Alignment::Center => 'C',
                        Alignment::Right => 'R',
                    })
                    .collect();
            }
            Event::End(
                TagEnd::Heading(_) | TagEnd::CodeBlock | TagEnd::HtmlBlock | TagEnd::Table,
            ) => {
                self.open.pop();
            }
            Event::Rule => {
                self.push(Kind::Rule, range);
                self.open.pop();
            }
            Event::Start(Tag::Link {
                link_type: LinkType::Autolink | LinkType::Email,
                ..
            }) => self.autolinks += 1,
            Event::End(TagEnd::Link) if self.autolinks > 0 => self.autolinks -= 1,
            Event::Text(t) | Event::Code(t) => {
                if let Some(&i) = self.open.last()
                    && !matches!(self.blocks[i].kind, Some(Kind::Code | Kind::Html))
                {
                    let b = &mut self.blocks[i];
                    b.text.push_str(t);
                    b.text.push(' ');
                    if matches!(ev, Event::Code(_)) {
                        b.code.push(t.to_string());
                    } else if self.autolinks == 0 {
                        b.prose.push_str(t);
                        b.prose.push(' ');
                    }
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(&i) = self.open.last() {
                    self.blocks[i].text.push(' ');
                }
            }
            _ => {}
        }
    }

    /// The outline.
    pub(crate) fn finish(mut self) -> Vec<Block> {
        for b in &mut self.blocks {
            b.anchors = anchors(&b.text);
        }
        self.blocks
    }
}

fn callout_name(k: BlockQuoteKind) -> &'static str {
    match k {
        BlockQuoteKind::Note => "NOTE",
        BlockQuoteKind::Tip => "TIP",
        BlockQuoteKind::Important => "IMPORTANT",
        BlockQuoteKind::Warning => "WARNING",
        BlockQuoteKind::Caution => "CAUTION",
    }
}
