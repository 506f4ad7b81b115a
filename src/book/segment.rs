//! Cutting a chapter into translation units.
//!
//! A unit is a byte range of the chapter. Cuts happen only at the start of a top-level Markdown
//! block as reported by pulldown-cmark's source offsets, so a unit never splits a fenced or
//! indented code block, table, list, block quote, HTML block, footnote definition or front
//! matter. Two more rules keep cuts out of constructs that span several top-level blocks:
//!
//! - `$$` display math: no cut while an odd number of `$$` delimiters has been seen in prose
//!   blocks (an author's `$$` block with a blank line inside parses as several paragraphs);
//! - HTML containers: no cut while an HTML block has opened a container element (`<div>`,
//!   `<details>`, `<table>`, …) that a later HTML block has not closed yet (CommonMark ends an
//!   HTML block at a blank line, so `<div>\n\ntext\n\n</div>` is three top-level blocks).
//!
//! Both are heuristics over stray delimiters too, so a lock ends at a heading (a level-1/2
//! heading for HTML) or after [`MAX_LOCKED_BLOCKS`] blocks.
//!
//! Blocks are packed into units of at most `max_unit_chars` characters (Unicode scalar values).
//! A single block (or group of blocks that cannot be cut) longer than the limit becomes a unit
//! of its own and is never cut. Besides the size limit, cuts are *content-defined*, as in
//! content-defined chunking (LBFS, Muthitacharoen et al., SOSP 2001): a heading starts a new
//! unit once the current one holds a third of the limit, and so does an "anchor" block (one
//! whose sha256 starts with a byte below 32, i.e. one block in eight) once it holds half. Cut
//! points therefore depend on the text around them rather than on everything before them, so
//! editing one paragraph changes one unit, and the units after it keep their boundaries (and
//! their stored translations). Front matter is always a
//! unit of its own and is not translated. The bytes between blocks (blank lines, link reference
//! definitions) belong to the unit before them, and a leading BOM to the first unit, so the
//! units of a chapter joined in order are the chapter, byte for byte.

use std::ops::Range;

use pulldown_cmark::{Event, Tag, TagEnd};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::markdown;

/// What a unit holds, which decides whether it is sent to the Translation agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    /// Has prose to translate.
    Prose,
    /// Only code, HTML, math, rules or blank text: copied to the output unchanged, no model call.
    Verbatim,
    /// YAML (`---`) or TOML (`+++`) front matter: copied unchanged, no model call.
    FrontMatter,
}

impl UnitKind {
    /// Whether units of this kind go to the Translation agent.
    pub fn needs_translation(self) -> bool {
        self == UnitKind::Prose
    }
}

/// A translation unit: a byte range of one chapter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    /// `<chapter key>-<index, 3+ digits>`, e.g. `chapter01-007`. Unique within a campaign.
    pub id: String,
    /// Key of the chapter the unit belongs to.
    pub chapter: String,
    /// 0-based position within the chapter.
    pub index: usize,
    /// Byte range within the chapter text (including any BOM).
    pub range: Range<usize>,
    /// Whether it is translated or copied.
    pub kind: UnitKind,
    /// Hex sha256 of the unit's bytes.
    pub sha256: String,
    /// Length in characters (Unicode scalar values).
    pub chars: usize,
}

impl Unit {
    /// The unit's source text, sliced from its chapter.
    pub fn text<'a>(&self, chapter_text: &'a str) -> &'a str {
        &chapter_text[self.range.clone()]
    }
}

/// The default unit size limit in characters (12,000 characters is about 3,000
/// English tokens, which leaves room for the prompt prefix and the answer in a 32k budget).
pub const DEFAULT_MAX_UNIT_CHARS: usize = 12_000;

/// Coarse type of a top-level block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Heading,
    FrontMatter,
    /// Code blocks, HTML blocks, rules and blocks with no prose text.
    Verbatim,
    /// Anything with prose text (paragraphs, lists, tables, quotes, footnotes…).
    Prose,
}

/// A top-level block found by pulldown-cmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Byte range in the chapter text (including any BOM offset).
    pub range: Range<usize>,
    pub kind: BlockKind,
    /// False when cutting right before this block would split a `$$` math span or an HTML
    /// container (see the module docs).
    pub cut_before: bool,
    /// A unit of its own, cut on both sides: the opening and closing lines of a MyST directive
    /// whose body is translated ([`myst_directive_blocks`]), so that the body's units parse as
    /// the Markdown they are and not as the inside of a code fence.
    pub isolated: bool,
}

/// The blocks of a MyST directive in a backtick fence at `range` of `text` whose body is
/// Markdown ([`super::syntax::myst_markdown_body`], `info` its fence's info string): the opening line with
/// its options (`:class: tip` lines, or a `---` YAML block) as an isolated verbatim block, the
/// body's own top-level blocks (nested directives split the same way), and the closing fence
/// as an isolated verbatim block. `None` for any other fence, or one without a closing line.
fn myst_directive_blocks(
    text: &str,
    range: Range<usize>,
    info: &str,
    cut_before: bool,
) -> Option<Vec<Block>> {
    let name = info.trim().strip_prefix('{')?.split('}').next()?;
    if !super::syntax::myst_markdown_body(name) {
        return None;
    }
    let block = &text[range.clone()];
    let open_end = block.find('\n')? + 1;
    let fence: String = block
        .trim_start()
        .chars()
        .take_while(|c| *c == '`')
        .collect();
    // The closing line: the last line, a run of at least as many backquotes.
    let trimmed = block.trim_end_matches(['\n', '\r']);
    let close_start = trimmed.rfind('\n').map_or(0, |i| i + 1);
    let close = trimmed[close_start..].trim();
    if close_start < open_end || !close.starts_with(&fence) || !close.trim_matches('`').is_empty() {
        return None;
    }
    // Options: `:key: value` lines, or a `---` … `---` block, right after the opening line.
    let mut body_start = open_end;
    let rest = &block[open_end..close_start];
    if let Some(yaml) = rest.strip_prefix("---") {
        if let Some(end) = yaml.find("\n---") {
            let after = 3 + end + 4;
            body_start += rest[after..]
                .find('\n')
                .map_or(rest.len(), |i| after + i + 1);
        }
    } else {
        for line in rest.split_inclusive('\n') {
            let t = line.trim();
            let is_option = t.starts_with(':') && t[1..].contains(':') && {
                let key = t[1..].split(':').next().unwrap_or("");
                !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
            };
            if !is_option {
                break;
            }
            body_start += line.len();
        }
    }
    let base = range.start;
    let mut out = vec![Block {
        range: base..base + body_start,
        kind: BlockKind::Verbatim,
        cut_before,
        isolated: true,
    }];
    let body = &block[body_start..close_start];
    out.extend(top_level_blocks(body).into_iter().map(|b| Block {
        range: base + body_start + b.range.start..base + body_start + b.range.end,
        ..b
    }));
    if let Some(first) = out.get_mut(1) {
        first.cut_before = true;
    }
    out.push(Block {
        range: base + close_start..range.end,
        kind: BlockKind::Verbatim,
        cut_before: true,
        isolated: true,
    });
    Some(out)
}

/// Most consecutive blocks a `$$` or HTML-container lock may hold together (a real display
/// formula or `<details>` section spans a few blocks; a stray delimiter must not glue a whole
/// chapter into one unit).
pub const MAX_LOCKED_BLOCKS: usize = 12;

/// HTML elements that commonly wrap Markdown content across blank lines.
const HTML_CONTAINERS: &[&str] = &[
    "div",
    "p",
    "details",
    "table",
    "figure",
    "section",
    "article",
    "aside",
    "blockquote",
    "ul",
    "ol",
    "dl",
    "pre",
    "center",
    "picture",
    "video",
    "audio",
    "nav",
    "header",
    "footer",
    "main",
];

/// Net count of opened minus closed [`HTML_CONTAINERS`] tags in `html` (case-insensitive).
/// This is a counting heuristic, not an HTML parser: a full parser would not help, because
/// the question is only whether a container is still open at a block boundary.
fn html_container_balance(html: &str) -> i64 {
    let lower = html.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut balance = 0i64;
    let mut i = 0;
    while let Some(pos) = lower[i..].find('<') {
        let start = i + pos + 1;
        i = start;
        let closing = bytes.get(start) == Some(&b'/');
        let name_start = if closing { start + 1 } else { start };
        let name_end = lower[name_start..]
            .find(|c: char| !c.is_ascii_alphanumeric())
            .map_or(lower.len(), |e| name_start + e);
        let name = &lower[name_start..name_end];
        if !HTML_CONTAINERS.contains(&name) {
            continue;
        }
        let tag_end = lower[name_end..]
            .find('>')
            .map_or(lower.len(), |e| name_end + e);
        let self_closing = lower[..tag_end].ends_with('/');
        if closing {
            balance -= 1;
        } else if !self_closing {
            balance += 1;
        }
    }
    balance
}

/// Byte spans of display math written with `$$` on lines of their own (outside code, HTML and
/// front matter) that contain a blank line: CommonMark splits such a formula into several
/// paragraphs, and no cut may fall between them. Delimiter lines pair up in order; an unpaired
/// last one opens nothing.
fn display_math_spans(text: &str, events: &[(Event, Range<usize>)]) -> Vec<Range<usize>> {
    let verbatim: Vec<&Range<usize>> = events
        .iter()
        .filter(|(e, _)| {
            matches!(
                e,
                Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::MetadataBlock(_))
            )
        })
        .map(|(_, r)| r)
        .collect();
    let mut delimiters = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start_matches(markdown::BOM).trim() == "$$"
            && !verbatim
                .iter()
                .any(|r| r.start < pos + line.len() && pos < r.end)
        {
            delimiters.push((pos, pos + line.len()));
        }
        pos += line.len();
    }
    delimiters
        .chunks_exact(2)
        .map(|p| p[0].0..p[1].1)
        .filter(|r| text[r.clone()].contains("\n\n") || text[r.clone()].contains("\n\r\n"))
        .collect()
}

/// Lists the top-level blocks of `text` in order, with their kinds and whether a cut is allowed
/// before each.
///
/// A block's range starts at the beginning of its first line: pulldown-cmark reports block
/// starts after leading indentation, and a cut there would leave the indentation (which can
/// make a line indented code) at the end of the previous unit. The `$$` parity only counts
/// `$$` in the prose text of a block (never in inline or block code), and the HTML container
/// balance only in HTML blocks, with comments removed.
pub fn top_level_blocks(text: &str) -> Vec<Block> {
    let (bom, _) = markdown::split_bom(text);
    let mut blocks: Vec<Block> = Vec::new();
    let mut depth = 0usize;
    // State of the current top-level block.
    let mut in_code_or_html = 0usize;
    let mut has_prose = false;
    let mut html = String::new();
    let mut current: Option<(Range<usize>, BlockKind, bool)> = None;
    // The info string of the current top-level block when it is a fenced code block.
    let mut fence_info = String::new();
    let mut math_open = false;
    let mut html_open = 0i64;
    let mut pending_cut_allowed = true;
    let mut locked_blocks = 0usize;
    let line_start = |pos: usize, floor: usize| -> usize {
        let start = text[..pos].rfind('\n').map_or(0, |n| n + 1);
        start.max(floor).min(pos)
    };

    let events: Vec<(Event, Range<usize>)> = markdown::parser(text)
        .into_offset_iter()
        .map(|(e, r)| (e, r.start + bom..r.end + bom))
        .collect();
    let math_spans = display_math_spans(text, &events);
    let in_math = |pos: usize| math_spans.iter().any(|m| m.start < pos && pos < m.end);
    for (event, range) in events {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    // A lock from a stray `$$` or an unclosed container must not swallow the
                    // rest of the chapter: a heading ends a math lock, a level-1/2 heading ends
                    // an HTML lock, and either ends after MAX_LOCKED_BLOCKS blocks.
                    let level = match &tag {
                        Tag::Heading { level, .. } => Some(*level as u8),
                        _ => None,
                    };
                    let start_line = line_start(
                        range.start,
                        blocks.last().map_or(bom, |b| b.range.end.min(range.start)),
                    );
                    math_open = in_math(start_line);
                    if math_open && (level.is_some() || locked_blocks >= MAX_LOCKED_BLOCKS) {
                        math_open = false;
                    }
                    if html_open > 0
                        && (level.is_some_and(|l| l <= 2) || locked_blocks >= MAX_LOCKED_BLOCKS)
                    {
                        html_open = 0;
                    }
                    pending_cut_allowed = !math_open && html_open == 0;
                    locked_blocks = if pending_cut_allowed {
                        0
                    } else {
                        locked_blocks + 1
                    };
                    let kind = match &tag {
                        Tag::Heading { .. } => BlockKind::Heading,
                        Tag::MetadataBlock(_) => BlockKind::FrontMatter,
                        Tag::CodeBlock(_) | Tag::HtmlBlock => BlockKind::Verbatim,
                        _ => BlockKind::Prose,
                    };
                    let floor = blocks.last().map_or(bom, |b| b.range.end.min(range.start));
                    let start = line_start(range.start, floor);
                    current = Some((start..range.end, kind, matches!(tag, Tag::HtmlBlock)));
                    fence_info = match &tag {
                        Tag::CodeBlock(pulldown_cmark::CodeBlockKind::Fenced(info)) => {
                            info.to_string()
                        }
                        _ => String::new(),
                    };
                    has_prose = false;
                    html.clear();
                }
                if matches!(
                    tag,
                    Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::MetadataBlock(_)
                ) {
                    in_code_or_html += 1;
                }
                depth += 1;
            }
            Event::End(tag) => {
                depth = depth.saturating_sub(1);
                if matches!(
                    tag,
                    TagEnd::CodeBlock | TagEnd::HtmlBlock | TagEnd::MetadataBlock(_)
                ) {
                    in_code_or_html = in_code_or_html.saturating_sub(1);
                }
                if depth == 0
                    && let Some((range, kind, is_html)) = current.take()
                {
                    let kind = match kind {
                        BlockKind::Prose if !has_prose => BlockKind::Verbatim,
                        k => k,
                    };
                    if let Some(parts) = (!fence_info.is_empty())
                        .then(|| {
                            myst_directive_blocks(
                                text,
                                range.clone(),
                                &fence_info,
                                pending_cut_allowed,
                            )
                        })
                        .flatten()
                    {
                        blocks.extend(parts);
                        continue;
                    }
                    blocks.push(Block {
                        range,
                        kind,
                        cut_before: pending_cut_allowed,
                        isolated: false,
                    });
                    // Containers opened by this HTML block forbid the next cuts.
                    if is_html {
                        html_open = (html_open
                            + html_container_balance(&markdown::strip_html_comments(&html)))
                        .max(0);
                    }
                }
            }
            Event::Html(h) if in_code_or_html > 0 => html.push_str(&h),
            Event::Text(t) if in_code_or_html == 0 && t.chars().any(|c| c.is_alphanumeric()) => {
                has_prose = true;
            }
            Event::Rule if depth == 0 => {
                // A thematic break: a block of its own.
                let floor = blocks.last().map_or(bom, |b| b.range.end.min(range.start));
                blocks.push(Block {
                    range: line_start(range.start, floor)..range.end,
                    kind: BlockKind::Verbatim,
                    cut_before: !math_open && html_open == 0,
                    isolated: false,
                });
            }
            _ => {}
        }
    }
    blocks
}

/// Cuts `text` (one chapter whose key is `chapter`) into translation units of at most
/// `max_unit_chars` characters, as described in the module docs.
///
/// Guarantees: the units' ranges are contiguous, start at 0, end at `text.len()`, and lie on
/// `char` boundaries; an empty `text` gives no unit. `max_unit_chars` of 0 is treated as 1.
pub fn segment(chapter: &str, text: &str, max_unit_chars: usize) -> Vec<Unit> {
    segment_with(chapter, text, max_unit_chars, false)
}

/// [`segment`] for an MDX chapter: each ESM or JSX block ([`super::mdx::is_protected_block`])
/// is a verbatim unit of its own, so it is copied byte for byte and never sent to the model.
/// Same guarantees as [`segment`].
pub fn segment_mdx(chapter: &str, text: &str, max_unit_chars: usize) -> Vec<Unit> {
    segment_with(chapter, text, max_unit_chars, true)
}

fn segment_with(chapter: &str, text: &str, max_unit_chars: usize, mdx: bool) -> Vec<Unit> {
    let max = max_unit_chars.max(1);
    let mut blocks = top_level_blocks(text);
    // MDX: a protected block is cut out on both sides (a lock never glues it to prose).
    let mut isolated: Vec<bool> = blocks.iter().map(|b| b.isolated).collect();
    for i in 1..blocks.len() {
        if isolated[i - 1] || isolated[i] {
            blocks[i].cut_before = true;
        }
    }
    if mdx {
        for (i, b) in blocks.iter_mut().enumerate() {
            if super::mdx::is_protected_block(&text[b.range.clone()]) {
                b.kind = BlockKind::Verbatim;
                b.cut_before = true;
                isolated[i] = true;
            }
        }
        for i in 1..blocks.len() {
            if isolated[i - 1] {
                blocks[i].cut_before = true;
            }
        }
    }

    // Atomic groups: runs of blocks between allowed cuts. Each is (start, kind summary).
    struct Group {
        start: usize,
        heading: bool,
        front_matter: bool,
        prose: bool,
        isolated: bool,
    }
    let mut groups: Vec<Group> = Vec::new();
    for (bi, block) in blocks.iter().enumerate() {
        let is_fm = block.kind == BlockKind::FrontMatter;
        let prose = matches!(block.kind, BlockKind::Prose | BlockKind::Heading);
        match groups.last_mut() {
            Some(g) if !block.cut_before => {
                g.prose |= prose;
                g.front_matter &= is_fm;
            }
            _ => groups.push(Group {
                start: block.range.start,
                heading: block.kind == BlockKind::Heading,
                front_matter: is_fm,
                prose,
                isolated: isolated[bi],
            }),
        }
    }
    if groups.is_empty() {
        if text.is_empty() {
            return Vec::new();
        }
        groups.push(Group {
            start: 0,
            heading: false,
            front_matter: false,
            prose: false,
            isolated: false,
        });
    }
    groups[0].start = 0;

    // Pack groups into units.
    let mut units: Vec<Unit> = Vec::new();
    let mut cur_start = 0usize;
    let mut cur_chars = 0usize;
    let mut cur_prose = false;
    let mut cur_fm = false;
    let mut cur_iso = false;
    let mut cur_len = 0usize; // groups in the current unit
    let push_unit = |start: usize, end: usize, prose: bool, fm: bool, units: &mut Vec<Unit>| {
        let slice = &text[start..end];
        let index = units.len();
        units.push(Unit {
            id: unit_id(chapter, index),
            chapter: chapter.to_string(),
            index,
            range: start..end,
            kind: if fm {
                UnitKind::FrontMatter
            } else if prose {
                UnitKind::Prose
            } else {
                UnitKind::Verbatim
            },
            sha256: hex::encode(Sha256::digest(slice.as_bytes())),
            chars: slice.chars().count(),
        });
    };
    for (i, g) in groups.iter().enumerate() {
        let end = groups.get(i + 1).map_or(text.len(), |n| n.start);
        let chars = text[g.start..end].chars().count();
        let anchor = Sha256::digest(&text.as_bytes()[g.start..end])[0] < 32;
        let boundary = cur_len > 0
            && (cur_fm
                || g.front_matter
                || cur_iso
                || g.isolated
                || cur_chars + chars > max
                || (g.heading && cur_chars * 3 >= max)
                || (anchor && cur_chars * 2 >= max));
        if boundary {
            push_unit(cur_start, g.start, cur_prose, cur_fm, &mut units);
            cur_start = g.start;
            cur_chars = 0;
            cur_prose = false;
            cur_len = 0;
        }
        if cur_len == 0 {
            cur_fm = g.front_matter;
            cur_iso = g.isolated;
        }
        cur_chars += chars;
        cur_prose |= g.prose;
        cur_len += 1;
    }
    push_unit(cur_start, text.len(), cur_prose, cur_fm, &mut units);
    units
}

/// The id of unit `index` of chapter `chapter`: `<chapter>-<index:03>`.
pub fn unit_id(chapter: &str, index: usize) -> String {
    format!("{chapter}-{index:03}")
}

/// Joins units' texts in order. With the units of [`segment`] this returns the chapter.
pub fn join<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    texts.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<'a>(units: &[Unit], text: &'a str) -> Vec<&'a str> {
        units.iter().map(|u| u.text(text)).collect()
    }

    #[test]
    fn empty_chapter_has_no_units() {
        assert!(segment("c", "", 100).is_empty());
    }

    #[test]
    fn whitespace_only_chapter_is_one_verbatim_unit() {
        let units = segment("c", "\n\n  \n", 100);
        assert_eq!(units.len(), 1);
        assert_eq!(units[0].kind, UnitKind::Verbatim);
    }

    #[test]
    fn packs_paragraphs_under_limit_and_joins_exactly() {
        let text = "# A\n\npara one.\n\npara two.\n\n## B\n\npara three.\n";
        let units = segment("c", text, 20);
        assert_eq!(join(texts(&units, text)), text);
        assert!(units.len() > 1);
        for u in &units {
            assert!(u.chars <= 20 || u.text(text).trim_end().lines().count() == 1);
        }
        assert_eq!(units[0].id, "c-000");
    }

    #[test]
    fn never_cuts_inside_fenced_code() {
        let code = "```rust\nfn main() {}\n\n\nfn other() {}\n```\n";
        let text = format!("Intro.\n\n{code}\nAfter.\n");
        let units = segment("c", &text, 5);
        let code_start = text.find("```").unwrap();
        let code_end = code_start + code.len();
        for u in &units {
            assert!(
                !(u.range.start > code_start && u.range.start < code_end),
                "cut inside code at {}",
                u.range.start
            );
        }
        assert_eq!(join(texts(&units, &text)), text);
    }

    #[test]
    fn oversized_block_is_its_own_unit() {
        let big = "word ".repeat(100);
        let text = format!("small\n\n{big}\n\nsmall again\n");
        let units = segment("c", &text, 50);
        assert_eq!(units.len(), 3);
        assert!(units[1].chars > 50);
        assert_eq!(join(texts(&units, &text)), text);
    }

    #[test]
    fn front_matter_is_its_own_untranslated_unit_even_with_bom() {
        let text = "\u{feff}---\ntitle: X\n---\n\n# Heading\n\nText.\n";
        let units = segment("c", text, 1000);
        assert_eq!(units[0].kind, UnitKind::FrontMatter);
        assert!(units[0].text(text).starts_with('\u{feff}'));
        assert_eq!(units[1].kind, UnitKind::Prose);
        assert_eq!(join(texts(&units, text)), text);
    }

    #[test]
    fn a_myst_directive_with_a_markdown_body_is_cut_at_its_fence_lines() {
        let text = "# Title\n\n```{note}\n:class: tip\nRead **this** first.\n\n- one\n```\n\n````{tab-set}\n```{tab-item} A\nTab text.\n```\n````\n\n```{code-cell} python\nprint(1)\n```\n";
        let units = segment("c", text, 10_000);
        let got: Vec<(&str, UnitKind)> = units
            .iter()
            .map(|u| (&text[u.range.clone()], u.kind))
            .collect();
        assert_eq!(
            got,
            [
                ("# Title\n\n", UnitKind::Prose),
                ("```{note}\n:class: tip\n", UnitKind::Verbatim),
                ("Read **this** first.\n\n- one\n", UnitKind::Prose),
                ("```\n\n", UnitKind::Verbatim),
                ("````{tab-set}\n", UnitKind::Verbatim),
                ("```{tab-item} A\n", UnitKind::Verbatim),
                ("Tab text.\n", UnitKind::Prose),
                ("```\n", UnitKind::Verbatim),
                ("````\n\n", UnitKind::Verbatim),
                ("```{code-cell} python\nprint(1)\n```\n", UnitKind::Verbatim),
            ]
        );
        assert_eq!(join(units.iter().map(|u| u.text(text))), text);
    }

    #[test]
    fn code_only_unit_is_verbatim() {
        let text = "```\ncode\n```\n";
        let units = segment("c", text, 1000);
        assert_eq!(units.len(), 1);
        assert_eq!(units[0].kind, UnitKind::Verbatim);
    }

    #[test]
    fn html_container_is_not_cut() {
        let text = "<div class=\"note\">\n\nInside text.\n\n</div>\n\nOutside.\n";
        let units = segment("c", text, 5);
        let inner = text.find("Inside").unwrap();
        assert!(units.iter().all(|u| u.range.start != inner));
        assert_eq!(join(texts(&units, text)), text);
    }

    #[test]
    fn display_math_with_blank_line_is_not_cut() {
        let text = "$$\na = b\n\nc = d\n$$\n\nNext.\n";
        let units = segment("c", text, 3);
        let inner = text.find("c = d").unwrap();
        assert!(units.iter().all(|u| u.range.start != inner));
        assert_eq!(join(texts(&units, text)), text);
    }

    #[test]
    fn heading_starts_a_unit_when_half_full() {
        let text = format!("{}\n\n# Next\n\nbody\n", "x".repeat(60));
        let units = segment("c", &text, 100);
        assert_eq!(units.len(), 2);
        assert!(units[1].text(&text).starts_with("# Next"));
    }

    #[test]
    fn an_edit_changes_only_nearby_units() {
        let para = |i: usize| {
            format!(
                "Paragraph {i} says something about agents, tools and the context window, at some length to fill the unit.\n\n"
            )
        };
        let doc: String = (0..60).map(para).collect();
        let edited = doc.replace("Paragraph 20 says", "Paragraph 20 now says rather more");
        let a: std::collections::HashSet<String> = segment("c", &doc, 1000)
            .iter()
            .map(|u| u.sha256.clone())
            .collect();
        let b = segment("c", &edited, 1000);
        let changed = b.iter().filter(|u| !a.contains(&u.sha256)).count();
        assert!(b.len() >= 6, "{} units", b.len());
        assert!(changed <= 3, "{changed} of {} units changed", b.len());
    }

    #[test]
    fn crlf_is_kept() {
        let text = "# T\r\n\r\nOne.\r\n\r\nTwo.\r\n";
        let units = segment("c", text, 6);
        assert_eq!(join(texts(&units, text)), text);
        assert!(units.iter().all(|u| !u.text(text).starts_with('\n')));
    }

    #[test]
    fn html_balance_counts_containers_only() {
        assert_eq!(html_container_balance("<div><p>x</p>"), 1);
        assert_eq!(html_container_balance("</div>"), -1);
        assert_eq!(
            html_container_balance("<details><summary>s</summary></details>"),
            0
        );
        assert_eq!(html_container_balance("<br/><img src=x>"), 0);
    }
}

/// The byte offset at which to cut `text` in two for a model that cannot translate it in one
/// answer: the allowed cut between top-level blocks (see the module docs) closest to the
/// middle by characters. `None` when `text` is a single block (or one uncuttable group).
pub fn split_in_two(text: &str) -> Option<usize> {
    let half = text.chars().count() / 2;
    top_level_blocks(text)
        .iter()
        .skip(1)
        .filter(|b| b.cut_before)
        .map(|b| b.range.start)
        .min_by_key(|&pos| text[..pos].chars().count().abs_diff(half))
}

#[cfg(test)]
mod split_tests {
    use super::*;

    #[test]
    fn splits_at_the_block_nearest_the_middle() {
        let text = "# A\n\none two three\n\nfour five six\n\nseven eight nine\n\nten\n";
        let cut = split_in_two(text).unwrap();
        assert!(
            text[cut..].starts_with("four") || text[cut..].starts_with("seven"),
            "{}",
            &text[cut..]
        );
        assert_eq!(format!("{}{}", &text[..cut], &text[cut..]), text);
        assert_eq!(split_in_two("```\nonly code\n\n\nstill code\n```\n"), None);
    }
}

/// The part of a translation cut mid-reply that can be kept: `(source_end, target_end,
/// blocks)`, where `cut_translation[..target_end]` is the translation of `source[..source_end]`,
/// both ending on a top-level block boundary after `blocks` blocks.
///
/// The translation's last block is taken as incomplete (the reply stopped inside it) and left
/// out. The kept blocks must have the kinds of the source's first blocks, one for one (a
/// heading for a heading, prose for prose, verbatim for verbatim), and the source must allow a
/// cut after them ([`Block::cut_before`]). `None` when not even one block can be kept. When
/// every source block is matched (the reply went on past the source), the whole source is
/// covered: `source_end == source.len()`.
pub fn kept_prefix(source: &str, cut_translation: &str) -> Option<(usize, usize, usize)> {
    let sb = top_level_blocks(source);
    let tb = top_level_blocks(cut_translation);
    let complete = tb.len().saturating_sub(1);
    let mut m = sb
        .iter()
        .zip(&tb[..complete])
        .take_while(|(s, t)| s.kind == t.kind)
        .count();
    // Back off to a block the source may be cut before.
    while m > 0 && m < sb.len() && !sb[m].cut_before {
        m -= 1;
    }
    if m == 0 {
        return None;
    }
    let source_end = sb.get(m).map_or(source.len(), |b| b.range.start);
    let target_end = tb[m].range.start;
    Some((source_end, target_end, m))
}

#[cfg(test)]
mod kept_prefix_tests {
    use super::*;

    #[test]
    fn the_complete_blocks_of_a_cut_reply_are_kept() {
        let source = "# Tools\n\nAn agent calls a tool.\n\n```py\ncall()\n```\n\nThe model reads the result.\n\nThen it decides.\n";
        let cut = "# 工具\n\n智能体调用工具。\n\n```py\ncall()\n```\n\n模型读取";
        let (s, t, k) = kept_prefix(source, cut).expect("kept");
        assert_eq!(k, 3);
        assert!(
            source[s..].starts_with("The model reads"),
            "{}",
            &source[s..]
        );
        assert_eq!(
            &cut[..t],
            "# 工具\n\n智能体调用工具。\n\n```py\ncall()\n```\n\n"
        );
        // Cut inside the first block: nothing to keep.
        assert_eq!(kept_prefix(source, "# 工"), None);
        // A reply whose blocks do not follow the source's kinds keeps only the matching ones.
        let odd = "# 工具\n\n```py\ncall()\n```\n\n智能体调用工具。\n\n模型";
        assert_eq!(kept_prefix(source, odd).map(|k| k.2), Some(1));
    }
}
