//! The book brief cut to what one unit's prompt needs, so the per-unit overhead stays flat
//! whatever the length of the book.
//!
//! The brief on disk ([`super::brief`], `brief.md` on the editor's desk) keeps its format:
//! audience, register, conventions and one synopsis per chapter. Sending all of it with every
//! unit made the prompt of each unit grow with the book (one synopsis per chapter: 21 KB for a
//! 110-chapter book), so the cost of a book grew with its square. [`BriefParts::split`] reads
//! the brief once into
//!
//! - the **book part**: every section but the chapter synopses (audience, register and tone,
//!   conventions, and any section an editor added), at most [`BOOK_PART_MAX_CHARS`]; it goes
//!   into the stable prefix (the system message) of every Translation request;
//! - one **synopsis per chapter**, at most [`SYNOPSIS_MAX_CHARS`] each; a unit's request carries
//!   only its own chapter's, at the start of its glossary message (after the stable prefix, and
//!   the same for every unit of the chapter, so a provider's prefix cache still reaches it).
//!
//! So the brief's share of a translation prompt is bounded by
//! `BOOK_PART_MAX_CHARS + SYNOPSIS_MAX_CHARS` characters whatever the book's length. This file
//! only parses and cuts; which prompt carries what is [`super::translation`]'s business, and
//! the cache of the split is the campaign's.
//!
//! How synopses are found: the synopses section is the first heading whose text mentions a
//! synopsis, a summary or starts with "chapter" (the brief request asks for `## Chapter
//! synopses`); its items are its top-level list items, its sub-sections (a sub-heading and what
//! follows it) and its loose paragraphs. An item belongs to the chapter whose key it names
//! (`chapter01`, as the brief request's outline labels chapters), else to the chapter whose
//! title it contains (the longest such title), else, when there are exactly as many items as
//! chapters, to the chapter at its position. An item no chapter takes (an editor's note
//! appended to the synopses, a synopsis naming no chapter) stays in the book part, so nothing
//! of the brief is lost from the prompts; the bound on the book part still holds.

use std::collections::HashMap;
use std::ops::Range;

use pulldown_cmark::{Event, Tag, TagEnd};

use crate::book::{Chapter, markdown};

/// Most characters of the brief's book part (everything but the synopses) put in a prompt.
/// The brief request asks for at most 500 words in all (about 3,000 characters of English);
/// 4,000 leaves room for an editor's additions and still bounds the prefix whatever is
/// written. A longer book part is cut (with `…`) and [`BriefParts::book_truncated`] says so.
pub const BOOK_PART_MAX_CHARS: usize = 4_000;

/// Most characters of one chapter's synopsis put in a prompt. The brief request asks for one
/// or two sentences per chapter (the rehearsal brief writes about 200 characters).
pub const SYNOPSIS_MAX_CHARS: usize = 600;

/// Expected tokens of a brief's book part, for estimates made before the brief exists: the
/// about 150 tokens of audience, register and conventions of [`super::brief::expected_tokens`].
pub const EXPECTED_BOOK_TOKENS: usize = 150;

/// Expected tokens of one chapter's synopsis, for estimates made before the brief exists: the
/// 40 per chapter of [`super::brief::expected_tokens`].
pub const EXPECTED_SYNOPSIS_TOKENS: usize = 40;

/// Titles shorter than this (in characters) are not matched against synopsis items: a title
/// such as "AI" would match almost any line.
const MIN_TITLE_CHARS: usize = 4;

/// One chapter as the split sees it: its key and its title (first heading, may be empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChapterRef {
    /// The chapter key ([`Chapter::key`]).
    pub key: String,
    /// The text of the chapter's first heading, trimmed; empty when it has none.
    pub title: String,
}

impl ChapterRef {
    /// The key and title of `ch` (the title from the first heading of any level).
    pub fn of(ch: &Chapter) -> ChapterRef {
        ChapterRef {
            key: ch.key.clone(),
            title: first_heading(&ch.text),
        }
    }
}

/// The brief, split for prompts (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BriefParts {
    /// Every section but the synopses (with the synopsis items no chapter took), trimmed, at
    /// most [`BOOK_PART_MAX_CHARS`] characters.
    pub book: String,
    /// Whether [`BriefParts::book`] was cut to [`BOOK_PART_MAX_CHARS`].
    pub book_truncated: bool,
    /// The synopsis of each chapter, in the order of the chapters given to
    /// [`BriefParts::split`], on one line and at most [`SYNOPSIS_MAX_CHARS`] characters;
    /// `None` where the brief has none that can be told to belong to it.
    pub synopses: Vec<Option<String>>,
}

impl BriefParts {
    /// Splits `brief` (Markdown) for a book of `chapters` (in book order). Never fails: a brief
    /// without a recognisable synopses section is all book part (cut to the bound).
    pub fn split(brief: &str, chapters: &[ChapterRef]) -> BriefParts {
        let text = markdown::split_bom(brief).1;
        let blocks = top_level_blocks(text);
        let (book_text, synopses) = match synopsis_section(&blocks, text.len()) {
            Some((range, level)) => {
                let items = section_items(text, &blocks, &range, level);
                let (synopses, taken) = assign(&items, chapters);
                // What no chapter took stays in the book part where it was written (an
                // editor's note at the end of the brief, synopses that name no chapter), so
                // nothing of the brief is lost from the prompts; the rest leaves it.
                let cut: Vec<Range<usize>> = if taken.iter().all(|&t| t) {
                    vec![range]
                } else {
                    items
                        .iter()
                        .zip(&taken)
                        .filter(|(_, t)| **t)
                        .map(|(i, _)| i.range.clone())
                        .collect()
                };
                (without(text, &cut), synopses)
            }
            None => (text.to_string(), vec![None; chapters.len()]),
        };
        let book_text = book_text.trim();
        let book = crate::util::excerpt(book_text, BOOK_PART_MAX_CHARS);
        let book_truncated = book.len() != book_text.len();
        BriefParts {
            book,
            book_truncated,
            synopses,
        }
    }

    /// The synopsis of chapter number `index` (0-based, book order), if the brief has one.
    pub fn synopsis(&self, index: usize) -> Option<&str> {
        self.synopses.get(index).and_then(|s| s.as_deref())
    }
}

/// The text of the first heading of `text` (trimmed), or empty.
pub fn first_heading(text: &str) -> String {
    let mut in_heading = false;
    let mut title = String::new();
    for ev in markdown::parser(text) {
        match ev {
            Event::Start(Tag::Heading { .. }) => in_heading = true,
            Event::End(TagEnd::Heading(_)) => break,
            Event::Text(t) | Event::Code(t) if in_heading => title.push_str(&t),
            _ => {}
        }
    }
    title.trim().to_string()
}

/// A top-level block of the brief.
#[derive(Debug)]
enum Block {
    /// A heading: its level, text and byte range.
    Heading {
        level: usize,
        text: String,
        range: Range<usize>,
    },
    /// A list: the byte ranges of its items.
    List { items: Vec<Range<usize>> },
    /// Any other block (paragraph, quote, code…): its byte range.
    Other { range: Range<usize> },
}

impl Block {
    fn start(&self) -> usize {
        match self {
            Block::Heading { range, .. } | Block::Other { range } => range.start,
            Block::List { items } => items.first().map_or(0, |r| r.start),
        }
    }
}

/// The top-level blocks of `text` in order, from pulldown-cmark's offsets (so headings inside
/// code blocks or quotes are not taken for sections).
fn top_level_blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut heading: Option<(usize, String, usize)> = None;
    let mut list_items: Vec<Range<usize>> = Vec::new();
    for (ev, range) in markdown::parser(text).into_offset_iter() {
        match ev {
            Event::Start(tag) => {
                match (&tag, depth) {
                    (Tag::Heading { level, .. }, 0) => {
                        heading = Some((*level as usize, String::new(), range.start))
                    }
                    (Tag::Item, 1) => list_items.push(range.clone()),
                    (Tag::List(_), 0) => list_items.clear(),
                    _ => {}
                }
                depth += 1;
            }
            Event::End(tag) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    match tag {
                        TagEnd::Heading(_) => {
                            if let Some((level, t, start)) = heading.take() {
                                out.push(Block::Heading {
                                    level,
                                    text: t.trim().to_string(),
                                    range: start..range.end,
                                });
                            }
                        }
                        TagEnd::List(_) => out.push(Block::List {
                            items: std::mem::take(&mut list_items),
                        }),
                        _ => out.push(Block::Other { range }),
                    }
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, h, _)) = heading.as_mut() {
                    h.push_str(&t);
                } else if depth == 0 {
                    out.push(Block::Other { range });
                }
            }
            _ if depth == 0 => out.push(Block::Other { range }),
            _ => {}
        }
    }
    out
}

/// How surely a heading names the synopses section: 2 when it mentions a synopsis, 1 for a
/// summary or a heading that starts with "chapter", 0 otherwise.
fn synopsis_heading_rank(text: &str) -> u8 {
    let t = text.to_lowercase();
    if t.contains("synops") {
        2
    } else if t.contains("summar") || t.trim_start().starts_with("chapter") {
        1
    } else {
        0
    }
}

/// The synopses section: (byte range from its heading's start to the next heading of the same
/// or a higher level, its heading level). The first heading of the highest rank
/// ([`synopsis_heading_rank`]) names it.
fn synopsis_section(blocks: &[Block], len: usize) -> Option<(Range<usize>, usize)> {
    let (i, level, start) = [2u8, 1].into_iter().find_map(|rank| {
        blocks.iter().enumerate().find_map(|(i, b)| match b {
            Block::Heading { level, text, range } if synopsis_heading_rank(text) == rank => {
                Some((i, *level, range.start))
            }
            _ => None,
        })
    })?;
    let end = blocks[i + 1..]
        .iter()
        .find_map(|b| match b {
            Block::Heading {
                level: l, range, ..
            } if *l <= level => Some(range.start),
            _ => None,
        })
        .unwrap_or(len);
    Some((start..end, level))
}

/// One synopsis item: its text on one line and its byte range in the brief.
#[derive(Debug)]
struct Item {
    text: String,
    range: Range<usize>,
}

/// The synopsis items of the section `range` (whose heading has `level`), each on one line.
fn section_items(text: &str, blocks: &[Block], range: &Range<usize>, level: usize) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    // A sub-section (sub-heading and what follows) is one item.
    let mut group: Option<Item> = None;
    let inside = blocks
        .iter()
        .filter(|b| b.start() >= range.start && b.start() < range.end);
    let add = |group: &mut Option<Item>, items: &mut Vec<Item>, one: String, r: &Range<usize>| {
        match group.as_mut() {
            Some(g) => {
                g.text.push(' ');
                g.text.push_str(&one);
                g.range.end = r.end;
            }
            None => items.push(Item {
                text: one,
                range: r.clone(),
            }),
        }
    };
    for b in inside {
        match b {
            Block::Heading { level: l, .. } if *l <= level => {}
            Block::Heading {
                text: t, range: r, ..
            } => {
                if let Some(g) = group.take() {
                    items.push(g);
                }
                group = Some(Item {
                    text: format!("{t}:"),
                    range: r.clone(),
                });
            }
            Block::List { items: lis } => {
                for r in lis {
                    add(
                        &mut group,
                        &mut items,
                        one_line(strip_marker(&text[r.clone()])),
                        r,
                    );
                }
            }
            Block::Other { range: r } => {
                let one = one_line(&text[r.clone()]);
                if !one.is_empty() {
                    add(&mut group, &mut items, one, r);
                }
            }
        }
    }
    if let Some(g) = group {
        items.push(g);
    }
    // A thematic break or an empty block is no synopsis.
    items.retain(|i| i.text.chars().any(char::is_alphanumeric));
    items
}

/// `text` without the byte ranges `cut` (in order, not overlapping), with the runs of blank
/// lines left where they were cut down to one.
fn without(text: &str, cut: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for r in cut {
        out.push_str(&text[at..r.start]);
        at = r.end;
        // One line break of the cut block's own stays; the blank lines after it go.
        while out.ends_with("\n\n") {
            out.pop();
        }
        let rest = &text[at..];
        at += rest.len() - rest.trim_start_matches(['\n', '\r']).len();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.is_empty() && at < text.len() {
            out.push('\n');
        }
    }
    out.push_str(&text[at..]);
    out
}

/// A list item's text without its marker (`- `, `* `, `+ `, `1. `, `1) `).
fn strip_marker(item: &str) -> &str {
    let t = item.trim_start();
    if let Some(r) = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .or_else(|| t.strip_prefix("+ "))
    {
        return r;
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0
        && let Some(r) = t[digits..]
            .strip_prefix(". ")
            .or_else(|| t[digits..].strip_prefix(") "))
    {
        return r;
    }
    t
}

/// `text` on one line: runs of whitespace become one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `c` can be part of a chapter key (see [`crate::book::chapter::chapter_key`]).
fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// The synopsis of each chapter (see the module docs for the matching rules), and for each
/// item whether a chapter took it.
fn assign(items: &[Item], chapters: &[ChapterRef]) -> (Vec<Option<String>>, Vec<bool>) {
    let mut out: Vec<Option<String>> = vec![None; chapters.len()];
    let mut taken = vec![false; items.len()];
    if items.is_empty() {
        return (out, taken);
    }
    let by_key: HashMap<&str, usize> = chapters
        .iter()
        .enumerate()
        .map(|(i, c)| (c.key.as_str(), i))
        .collect();
    let titles: Vec<(usize, String)> = chapters
        .iter()
        .enumerate()
        .filter(|(_, c)| c.title.chars().count() >= MIN_TITLE_CHARS)
        .map(|(i, c)| (i, c.title.to_lowercase()))
        .collect();
    let positional = items.len() == chapters.len();
    for (n, item) in items.iter().enumerate() {
        let item = &item.text;
        // A key named in the item: the first whole token (key characters, a trailing full stop
        // allowed) that is a chapter's key.
        let by_token = item
            .split(|c: char| !is_key_char(c))
            .filter(|t| !t.is_empty())
            .find_map(|t| {
                by_key
                    .get(t)
                    .or_else(|| by_key.get(t.trim_end_matches('.')))
                    .copied()
            });
        let chapter = by_token
            .or_else(|| {
                let lower = item.to_lowercase();
                titles
                    .iter()
                    .filter(|(_, t)| lower.contains(t.as_str()))
                    .max_by_key(|(_, t)| t.len())
                    .map(|(i, _)| *i)
            })
            .or(positional.then_some(n));
        if let Some(i) = chapter
            && out[i].is_none()
        {
            out[i] = Some(crate::util::excerpt(item, SYNOPSIS_MAX_CHARS));
            taken[n] = true;
        }
    }
    (out, taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(n: usize) -> Vec<ChapterRef> {
        (1..=n)
            .map(|i| ChapterRef {
                key: format!("chapter{i:03}"),
                title: format!("Topic number {i}"),
            })
            .collect()
    }

    /// A brief in the shape the brief request asks for (and the rehearsal brief writes).
    fn brief_of(n: usize) -> String {
        let synopses: Vec<String> = (1..=n)
            .map(|i| format!("- `chapter{i:03}`: Topic number {i}. This chapter explains subject {i} in one or two sentences for the translator."))
            .collect();
        format!(
            "## Audience\nSoftware engineers.\n\n## Register and tone\nNeutral and precise.\n\n## Conventions\n- Keep the English term in parentheses on first use.\n\n## Chapter synopses\n{}\n",
            synopses.join("\n")
        )
    }

    #[test]
    fn the_book_part_keeps_every_section_but_the_synopses() {
        let p = BriefParts::split(&brief_of(3), &refs(3));
        assert!(p.book.starts_with("## Audience\nSoftware engineers."));
        assert!(
            p.book
                .contains("## Register and tone\nNeutral and precise.")
        );
        assert!(p.book.contains("- Keep the English term in parentheses"));
        assert!(!p.book.contains("synopses") && !p.book.contains("chapter002"));
        assert!(!p.book_truncated);
        assert_eq!(
            p.synopsis(1),
            Some(
                "`chapter002`: Topic number 2. This chapter explains subject 2 in one or two sentences for the translator."
            )
        );
        assert_eq!(p.synopses.iter().flatten().count(), 3);
    }

    #[test]
    fn a_section_after_the_synopses_stays_in_the_book_part() {
        let b = "## Audience\nEngineers.\n\n## Chapter synopses\n1. Intro: what agents are.\n2. Loops: how they run.\n\n## Terms\nKeep `API`.\n";
        let chapters = vec![
            ChapterRef {
                key: "intro".into(),
                title: "Introduction".into(),
            },
            ChapterRef {
                key: "loops".into(),
                title: "Loops".into(),
            },
        ];
        let p = BriefParts::split(b, &chapters);
        assert_eq!(p.book, "## Audience\nEngineers.\n\n## Terms\nKeep `API`.");
        // Keys match case-sensitively, so "Intro" is not `intro`: the item is the first of as
        // many items as chapters, and position decides; "Loops" contains the title.
        assert_eq!(p.synopsis(0), Some("Intro: what agents are."));
        assert_eq!(p.synopsis(1), Some("Loops: how they run."));
    }

    #[test]
    fn synopses_as_sub_sections_are_matched_by_title() {
        let b = "# Brief\n\n## Audience\nEngineers.\n\n## Chapter summaries\n\n### The Agent Loop\nHow an agent decides.\n\nIt repeats.\n\n### Tools and Memory\nWhat agents use.\n";
        let chapters = vec![
            ChapterRef {
                key: "c1".into(),
                title: "Tools and memory".into(),
            },
            ChapterRef {
                key: "c2".into(),
                title: "Preface".into(),
            },
            ChapterRef {
                key: "c3".into(),
                title: "The agent loop".into(),
            },
        ];
        let p = BriefParts::split(b, &chapters);
        assert_eq!(
            p.synopsis(2),
            Some("The Agent Loop: How an agent decides. It repeats.")
        );
        assert_eq!(p.synopsis(0), Some("Tools and Memory: What agents use."));
        assert_eq!(p.synopsis(1), None);
        assert_eq!(p.book, "# Brief\n\n## Audience\nEngineers.");
    }

    #[test]
    fn a_brief_without_synopses_is_all_book_part_and_cut_to_the_bound() {
        let long = format!("Notes for translators.\n\n{}", "word ".repeat(2000));
        let p = BriefParts::split(&long, &refs(2));
        assert!(p.book.starts_with("Notes for translators."));
        assert!(p.book_truncated);
        assert_eq!(p.book.chars().count(), BOOK_PART_MAX_CHARS + 1);
        assert_eq!(p.synopses, vec![None, None]);
        let short = BriefParts::split("Engineers.\n", &refs(1));
        assert_eq!(
            (short.book.as_str(), short.book_truncated),
            ("Engineers.", false)
        );
    }

    #[test]
    fn headings_in_code_blocks_are_not_sections_and_long_synopses_are_cut() {
        let b = format!(
            "## Conventions\n```\n## Chapter synopses\n```\n\n## Synopses\n- `chapter001`: {}\n",
            "long ".repeat(400)
        );
        let p = BriefParts::split(&b, &refs(1));
        assert!(
            p.book.contains("```\n## Chapter synopses\n```"),
            "{}",
            p.book
        );
        let s = p.synopsis(0).unwrap();
        assert!(s.starts_with("`chapter001`: long"));
        assert_eq!(s.chars().count(), SYNOPSIS_MAX_CHARS + 1);
    }

    #[test]
    fn a_key_inside_a_longer_key_is_not_matched() {
        let chapters = vec![
            ChapterRef {
                key: "chapter01".into(),
                title: String::new(),
            },
            ChapterRef {
                key: "b1-chapter01".into(),
                title: String::new(),
            },
            ChapterRef {
                key: "x".into(),
                title: String::new(),
            },
        ];
        let b = "## Chapter synopses\n- `b1-chapter01`: second.\n- chapter01. first.\n";
        let p = BriefParts::split(b, &chapters);
        assert_eq!(p.synopsis(0), Some("chapter01. first."));
        assert_eq!(p.synopsis(1), Some("`b1-chapter01`: second."));
        assert_eq!(p.synopsis(2), None);
    }

    #[test]
    fn what_no_chapter_takes_stays_in_the_book_part() {
        let b = format!("{}\nEDITOR-NOTE: keep sentences short.\n", brief_of(2));
        let p = BriefParts::split(&b, &refs(2));
        assert_eq!(p.synopses.iter().flatten().count(), 2);
        assert!(
            p.book
                .ends_with("## Chapter synopses\n\nEDITOR-NOTE: keep sentences short."),
            "{}",
            p.book
        );
        assert!(!p.book.contains("chapter001") && !p.book.contains("\n\n\n"));
        // Nothing matched: the section stays whole.
        let none = BriefParts::split(
            "## Audience\nAll.\n\n## Synopses\n- One.\n- Two.\n",
            &refs(3),
        );
        assert_eq!(
            none.book,
            "## Audience\nAll.\n\n## Synopses\n- One.\n- Two."
        );
        assert_eq!(none.synopses, vec![None, None, None]);
    }

    #[test]
    fn first_heading_reads_the_title() {
        assert_eq!(
            first_heading("Intro text.\n\n# The `Agent` Loop\n\n## Next\n"),
            "The Agent Loop"
        );
        assert_eq!(first_heading("No heading.\n"), "");
    }
}
