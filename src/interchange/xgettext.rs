//! The gettext messages of a Markdown text as `mdbook-xgettext` (mdbook-i18n-helpers 0.4.0, the
//! release on crates.io) extracts them, so that a PO catalog booktr writes is one `mdbook-gettext` can translate a
//! book with, and one an mdBook project's existing catalog can be merged with.
//!
//! What a message is, following mdbook-i18n-helpers' documented grouping:
//! - the text of a paragraph, of a heading (without its `#` marks), of a tight list item and of
//!   a table cell; HTML blocks are not messages (inline HTML is part of its message);
//! - written back as Markdown by `pulldown-cmark-to-cmark` (the renderer mdbook-i18n-helpers
//!   uses) with its options: `_` for emphasis, `**` for strong, `-` for list items, soft line
//!   breaks as spaces, and reference and shortcut links written inline;
//! - `<!-- i18n:skip -->` leaves the next message out, and `<!-- i18n:comment … -->` gives it an
//!   extracted comment (0.4.0 knows no other directive).
//!
//! One deliberate difference: code blocks are never messages here. mdbook-xgettext extracts the
//! string literals and comments of a code block (through syntect's grammars); booktr never
//! translates code, so a catalog from booktr leaves those messages out and `mdbook-gettext`
//! keeps the code as it is.
//!
//! The parser options are mdbook-i18n-helpers' (`new_cmark_parser`), not booktr's own
//! ([`crate::book::markdown::options`]): a message is only found by `mdbook-gettext` when it is
//! byte for byte the one its own parser makes. Hand-rolled (the grouping) because
//! mdbook-i18n-helpers as a library would bring mdBook, syntect and chrono into booktr's build
//! for about 150 lines; the Markdown writer is the same library it uses.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

use pulldown_cmark::{BrokenLink, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};
use pulldown_cmark_to_cmark::{
    Options as CmarkOptions, State, calculate_code_block_token_count, cmark_resume_with_options,
};

/// The block a message's text sits in. A source and a target pair message for message only
/// when their places agree, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Paragraph,
    Heading,
    ListItem,
    TableCell,
    Other,
}

/// One message of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// The message as mdbook-xgettext writes it (normalised Markdown, see the module doc).
    pub msgid: String,
    /// The bytes of the text it was made from, trailing whitespace excluded: what an edited
    /// `msgstr` replaces.
    pub range: Range<usize>,
    pub place: Place,
    /// `<!-- i18n:comment … -->` texts for this message, joined by spaces (empty if none).
    pub comment: String,
}

/// How the links of a chapter are read:
/// - its link reference definitions (`[label]: url "title"`), so that a reference link in one
///   translation unit resolves, as it does when mdbook-xgettext reads the whole chapter, when its
///   definition is in another unit (labels matched as CommonMark matches them: case-folded,
///   inner whitespace collapsed);
/// - whether the chapter is an mdBook's `SUMMARY.md`, whose messages are its titles without
///   their links (mdbook-xgettext strips them, and `mdbook-gettext` looks chapter names up so).
#[derive(Debug, Clone, Default)]
pub struct Links {
    defs: HashMap<String, (String, String)>,
    strip: bool,
}

impl Links {
    /// The links of an mdBook's `SUMMARY.md`: messages are the titles, links left out.
    pub fn summary(chapter: &str) -> Links {
        Links {
            strip: true,
            ..Links::of(chapter)
        }
    }

    /// The definitions of `chapter` (a whole Markdown file).
    pub fn of(chapter: &str) -> Links {
        let parser = Parser::new_ext(chapter, parser_options());
        let defs = parser
            .reference_definitions()
            .iter()
            .map(|(label, def)| {
                (
                    normalise_label(label),
                    (
                        def.dest.to_string(),
                        def.title.as_deref().unwrap_or("").to_string(),
                    ),
                )
            })
            .collect();
        Links { defs, strip: false }
    }

    fn resolve(&self, label: &str) -> Option<(CowStr<'static>, CowStr<'static>)> {
        self.defs
            .get(&normalise_label(label))
            .map(|(d, t)| (d.clone().into(), t.clone().into()))
    }
}

fn normalise_label(label: &str) -> String {
    label
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// mdbook-i18n-helpers 0.4.0's parser options: tables, old-style footnotes, strikethrough, task
/// lists, heading attributes. No definition lists and no GFM alerts: `Term` / `: Definition`
/// is one paragraph to it, so one message here.
fn parser_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_OLD_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// The messages of `text` (a chapter or one translation unit of it), in order. Reference links
/// whose definition is not in `text` are looked up in `links`. A leading BOM is skipped.
pub fn extract(text: &str, links: &Links) -> Vec<Extracted> {
    let bom = text.len() - text.trim_start_matches('\u{feff}').len();
    let body = &text[bom..];
    let events = events(body, links);
    let mut out = Vec::new();
    let mut state: Option<State<'_>> = None;
    for g in groups(&events) {
        let slice = &events[g.events.clone()];
        let (rendered, next) = render(slice, state.take());
        state = next;
        if !g.translate || rendered.trim().is_empty() {
            continue;
        }
        // The text is where the paragraph's inline events are: a paragraph's own range also
        // covers the link markup a summary's message leaves out.
        let inline = slice.iter().filter(|(e, _)| {
            !matches!(
                e,
                Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph)
            )
        });
        let start = inline.clone().map(|(_, r)| r.start).min().unwrap_or(0);
        let end = inline.map(|(_, r)| r.end).max().unwrap_or(start);
        let end = start + body[start..end].trim_end().len();
        out.push(Extracted {
            msgid: rendered,
            range: start + bom..end + bom,
            place: g.place,
            comment: g.comment,
        });
    }
    out
}

/// Parse events with byte ranges, made the way mdbook-i18n-helpers makes them: soft breaks are
/// spaces, and reference, collapsed and shortcut links and images are inline ones.
fn events<'a>(text: &'a str, links: &Links) -> Vec<(Event<'a>, Range<usize>)> {
    let resolve = |broken: BrokenLink<'a>| links.resolve(&broken.reference);
    let inline = |t: LinkType| match t {
        LinkType::Reference
        | LinkType::Collapsed
        | LinkType::Shortcut
        | LinkType::ReferenceUnknown
        | LinkType::CollapsedUnknown
        | LinkType::ShortcutUnknown => LinkType::Inline,
        other => other,
    };
    Parser::new_with_broken_link_callback(text, parser_options(), Some(resolve))
        .into_offset_iter()
        .filter(|(e, _)| {
            !links.strip || !matches!(e, Event::Start(Tag::Link { .. }) | Event::End(TagEnd::Link))
        })
        .map(|(e, r)| {
            let e = match e {
                Event::SoftBreak => Event::Text(" ".into()),
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }) => Event::Start(Tag::Link {
                    link_type: inline(link_type),
                    dest_url,
                    title,
                    id,
                }),
                Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    id,
                }) => Event::Start(Tag::Image {
                    link_type: inline(link_type),
                    dest_url,
                    title,
                    id,
                }),
                e => e,
            };
            (e, r)
        })
        .collect()
}

/// A run of events that is one message (`translate`) or structure between messages.
struct Group {
    events: Range<usize>,
    translate: bool,
    place: Place,
    comment: String,
}

/// An `i18n:` (or `mdbook-xgettext:`) directive in an HTML comment.
enum Directive {
    Skip,
    Comment(String),
}

/// The directive of an HTML comment, read as mdbook-i18n-helpers 0.4.0 reads it: the first word
/// after the prefix (`skip-start` is `skip`), and a comment's text after one delimiter.
fn directive(html: &str) -> Option<Directive> {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"<!-{2,}\s*(?:i18n|mdbook-xgettext)\s*:(?<command>.*[^-])-{2,}>")
            .expect("a valid pattern")
    });
    let command = re.captures(html.trim())?.name("command")?.as_str().trim();
    let delimiter = |c: char| c.is_whitespace() || c == ':' || c == '-';
    match command.split(delimiter).next() {
        Some("skip") => Some(Directive::Skip),
        Some("comment") => {
            let at = (command.find("comment")? + "comment".len() + 1).min(command.len());
            // The one delimiter skipped may be a multi-byte space: step to a char boundary.
            let at = (at..=command.len())
                .find(|&i| command.is_char_boundary(i))
                .unwrap_or(command.len());
            Some(Directive::Comment(command[at..].trim().to_string()))
        }
        _ => None,
    }
}

/// Splits events into messages and the structure between them, the way mdbook-i18n-helpers
/// 0.4.0's `group_events` does: a paragraph (with its start and end) is one group; inline
/// events and inline HTML outside a paragraph start a message; an HTML block and any other block
/// event end one. Code blocks are never messages (see the module doc).
fn groups(events: &[(Event<'_>, Range<usize>)]) -> Vec<Group> {
    #[derive(Default)]
    struct Ctx {
        skip_next: bool,
        comments: Vec<String>,
    }
    let mut out: Vec<Group> = Vec::new();
    let mut ctx = Ctx::default();
    // (start index, translating?) of the open group, its place, and the open block tags.
    let mut open = (0usize, false);
    let mut open_place = Place::Other;
    let mut stack: Vec<Place> = Vec::new();
    let place_at = |i: usize, stack: &[Place]| match &events[i].0 {
        Event::Start(Tag::Paragraph) => Place::Paragraph,
        _ => stack.last().copied().unwrap_or(Place::Other),
    };
    // Ends the open group just before `end`.
    let close = |out: &mut Vec<Group>, ctx: &mut Ctx, open: (usize, bool), place, end: usize| {
        if open.0 >= end {
            return;
        }
        let slice = &events[open.0..end];
        let code = matches!(
            (slice.first(), slice.last()),
            (
                Some((Event::Start(Tag::CodeBlock(_)), _)),
                Some((Event::End(TagEnd::CodeBlock), _))
            )
        );
        let skipped = open.1 && ctx.skip_next;
        if skipped {
            ctx.skip_next = false;
        }
        let translate = open.1 && !skipped && !code;
        let comment = if translate {
            std::mem::take(&mut ctx.comments).join(" ")
        } else {
            String::new()
        };
        out.push(Group {
            events: open.0..end,
            translate,
            place,
            comment,
        });
    };
    for (i, (event, _)) in events.iter().enumerate() {
        match event {
            Event::Start(Tag::Paragraph | Tag::CodeBlock(_)) => {
                close(&mut out, &mut ctx, open, open_place, i);
                open = (i, true);
                open_place = place_at(i, &stack);
            }
            Event::End(TagEnd::Paragraph | TagEnd::CodeBlock) => {
                close(&mut out, &mut ctx, open, open_place, i + 1);
                open = (i + 1, false);
            }
            Event::Start(
                Tag::Emphasis
                | Tag::Strong
                | Tag::Strikethrough
                | Tag::Link { .. }
                | Tag::Image { .. },
            )
            | Event::End(
                TagEnd::Emphasis
                | TagEnd::Strong
                | TagEnd::Strikethrough
                | TagEnd::Link
                | TagEnd::Image,
            )
            | Event::Text(_)
            | Event::Code(_)
            | Event::FootnoteReference(_)
            | Event::SoftBreak
            | Event::HardBreak => {
                if !open.1 {
                    close(&mut out, &mut ctx, open, open_place, i);
                    open = (i, true);
                    open_place = place_at(i, &stack);
                }
            }
            Event::Html(s) | Event::InlineHtml(s) => match directive(s) {
                Some(d) => {
                    // A directive ends the message it is in, and what follows starts a new one.
                    if open.1 {
                        close(&mut out, &mut ctx, open, open_place, i);
                        open = (i, true);
                        open_place = place_at(i, &stack);
                    }
                    match d {
                        Directive::Skip => ctx.skip_next = true,
                        Directive::Comment(c) => ctx.comments.push(c),
                    }
                }
                // Inline HTML is text of a message; an HTML block ends one.
                None => {
                    let inline = matches!(event, Event::InlineHtml(_));
                    if inline != open.1 {
                        close(&mut out, &mut ctx, open, open_place, i);
                        open = (i, inline);
                        open_place = place_at(i, &stack);
                    }
                }
            },
            _ => {
                if open.1 {
                    close(&mut out, &mut ctx, open, open_place, i);
                    open = (i, false);
                }
            }
        }
        // The block a later message starts in.
        match event {
            Event::Start(tag) => stack.push(match tag {
                Tag::Heading { .. } => Place::Heading,
                Tag::Item => Place::ListItem,
                Tag::TableCell => Place::TableCell,
                Tag::Paragraph => Place::Paragraph,
                _ => Place::Other,
            }),
            Event::End(_) => {
                stack.pop();
            }
            _ => {}
        }
    }
    // The last group: translated even after a skip directive, with no code-block test and no
    // comment, as in mdbook-i18n-helpers 0.4.0.
    if open.0 < events.len() {
        out.push(Group {
            events: open.0..events.len(),
            translate: open.1,
            place: open_place,
            comment: String::new(),
        });
    }
    out
}

/// Renders a group as Markdown with mdbook-i18n-helpers' writer options, and the writer state
/// after it (the state carries table and code-block context to the next group). Block-quote and
/// list padding and leading newlines are left out of the message. A group the writer refuses
/// is rendered empty (mdbook-xgettext would fail on it) and the state starts again.
fn render<'a>(
    group: &[(Event<'a>, Range<usize>)],
    state: Option<State<'a>>,
) -> (String, Option<State<'a>>) {
    let events = group.iter().map(|(e, _)| e);
    let options = CmarkOptions {
        code_block_token_count: calculate_code_block_token_count(events.clone()).unwrap_or(3),
        list_token: '-',
        emphasis_token: '_',
        strong_token: "**",
        ..CmarkOptions::default()
    };
    let mut scratch = String::new();
    let Ok(next) =
        cmark_resume_with_options(events.clone(), &mut scratch, state.clone(), options.clone())
    else {
        return (String::new(), None);
    };
    let bare = state.map(|mut s| {
        s.newlines_before_start = 0;
        s.padding.clear();
        s
    });
    let mut out = String::new();
    if cmark_resume_with_options(events, &mut out, bare, options).is_err() {
        return (String::new(), Some(next));
    }
    (out.trim_start_matches('\n').to_string(), Some(next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(text: &str) -> Vec<String> {
        extract(text, &Links::default())
            .into_iter()
            .map(|m| m.msgid)
            .collect()
    }

    #[test]
    fn messages_as_mdbook_xgettext_writes_them() {
        assert_eq!(ids("# A heading"), ["A heading"]);
        assert_eq!(ids("Hello *world!*"), ["Hello _world!_"]);
        assert_eq!(
            ids("1. First item\n2. Second item\n"),
            ["First item", "Second item"]
        );
        assert_eq!(
            ids(
                "> *   Hello, this is a\n>     list in a quote.\n>\n>     This is the second\n>     paragraph.\n"
            ),
            [
                "Hello, this is a list in a quote.",
                "This is the second paragraph."
            ]
        );
        assert_eq!(
            ids("| A | B |\n|---|---|\n| *x* | `y` |\n"),
            ["A", "B", "_x_", "`y`"]
        );
        // Code blocks are not messages; the paragraphs around them are.
        assert_eq!(
            ids("Before.\n\n```rust\nlet s = \"hi\"; // c\n```\n\nAfter __strong__.\n"),
            ["Before.", "After **strong**."]
        );
    }

    #[test]
    fn reference_links_resolve_from_the_chapter() {
        let chapter = "See [the docs][d].\n\n[d]: https://example.com \"Docs\"\n";
        let links = Links::of(chapter);
        let unit = "See [the docs][d].\n";
        let in_unit: Vec<String> = extract(unit, &links).into_iter().map(|m| m.msgid).collect();
        assert_eq!(in_unit, ids(chapter));
        assert_eq!(in_unit, ["See [the docs](https://example.com \"Docs\")."]);
        // Without the chapter's definitions the brackets are text.
        assert_ne!(ids(unit), in_unit);
    }

    #[test]
    fn summary_titles_without_their_links() {
        let summary = "# Summary\n\n[Intro](intro.md)\n\n- [Building *Agents*](ch1/index.md)\n    - [Draft]()\n";
        let m = extract(summary, &Links::summary(summary));
        let got: Vec<(&str, &str)> = m
            .iter()
            .map(|m| (m.msgid.as_str(), &summary[m.range.clone()]))
            .collect();
        assert_eq!(
            got,
            [
                ("Summary", "Summary"),
                ("Intro", "Intro"),
                ("Building _Agents_", "Building *Agents*"),
                ("Draft", "Draft")
            ]
        );
    }

    #[test]
    fn directives_skip_and_comment() {
        let text = "<!-- i18n:skip -->\nSkipped.\n\n<!-- i18n:comment Say it kindly -->\nKept.\n\nA <!-- i18n:skip --> b.\n\nC.\n";
        let m = extract(text, &Links::default());
        let got: Vec<(&str, &str)> = m
            .iter()
            .map(|m| (m.msgid.as_str(), m.comment.as_str()))
            .collect();
        // Inline, the directive ends "A " and skips the rest of its paragraph (the real
        // mdbook-xgettext 0.4.0 gives these same four messages, trailing space included).
        assert_eq!(got, [("Kept.", "Say it kindly"), ("A ", ""), ("C.", "")]);
    }

    /// A new user's catalog from the real mdbook-xgettext 0.4.0 left every unit with an HTML
    /// block or a definition list untranslated on import: booktr had made messages of HTML
    /// blocks and split `Term` / `: Definition` in two (the options of an unreleased version).
    #[test]
    fn html_blocks_and_definition_lists_as_mdbook_xgettext_0_4_0_makes_them() {
        let text = "Before.\n\n<div class=\"warning\">\n\nInside div.\n\n</div>\n\n<details>\n<summary>Click me</summary>\nHidden text.\n</details>\n\nTerm\n: Definition of the term.\n\n> [!NOTE]\n> An alert.\n";
        assert_eq!(
            ids(text),
            [
                "Before.",
                "Inside div.",
                "Term : Definition of the term.",
                "\\[!NOTE\\] An alert."
            ]
        );
    }

    #[test]
    fn ranges_cover_the_message_text_only() {
        let text = "## Title {#t}\n\nA *b*\nc.\n\n- one\n- two `x`\n";
        let m = extract(text, &Links::default());
        let spans: Vec<(&str, &str, Place)> = m
            .iter()
            .map(|m| (m.msgid.as_str(), &text[m.range.clone()], m.place))
            .collect();
        assert_eq!(
            spans,
            [
                ("Title", "Title", Place::Heading),
                ("A _b_ c.", "A *b*\nc.", Place::Paragraph),
                ("one", "one", Place::ListItem),
                ("two `x`", "two `x`", Place::ListItem),
            ]
        );
    }
}
