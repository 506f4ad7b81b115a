//! Inline codes: the parts of a unit's Markdown that a translator must not touch, cut out as
//! placeholders for CAT tools (XLIFF `<ph>` and `<pc>`), and put back byte for byte.
//!
//! [`split`] parses the unit with booktr's pulldown-cmark options and turns into a standalone
//! placeholder ([`Piece::Ph`]): code spans, code blocks, HTML blocks and inline HTML, math,
//! footnote references, front matter and autolinks. A link or image becomes a paired code
//! ([`Piece::Pc`]) around its translatable text: `[` or `![` before it, `](target "title")`
//! (or `][ref]`, `]`) after it. Emphasis, strong emphasis and strikethrough become paired codes
//! too (`*`/`_`, `**`/`__`, `~`/`~~` around their text), so a CAT tool shows a tag pair instead
//! of raw asterisks. Everything else (prose, and the Markdown punctuation of headings, lists
//! and tables) stays text. [`join`] concatenates the pieces again;
//! `join(split(s)) == s` for every string (property-tested below).

use std::ops::Range;

use pulldown_cmark::{Event, LinkType, Tag};

use crate::book::markdown;

/// A piece of a unit's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Translatable text (Markdown punctuation included).
    Text(String),
    /// Native code kept as it is.
    Ph(String),
    /// Paired native codes around translatable content (a link's `[` and `](url)`).
    Pc {
        start: String,
        end: String,
        inner: Vec<Piece>,
    },
}

#[derive(Debug)]
enum Item {
    Ph(Range<usize>),
    Pc(Range<usize>, Range<usize>),
}

impl Item {
    fn range(&self) -> &Range<usize> {
        match self {
            Item::Ph(r) | Item::Pc(r, _) => r,
        }
    }
}

/// Cuts `text` into pieces (see the module docs). Lossless: [`join`] gives `text` back.
pub fn split(text: &str) -> Vec<Piece> {
    let (bom, _) = markdown::split_bom(text);
    let events: Vec<(Event, Range<usize>)> = markdown::parser(text)
        .into_offset_iter()
        .map(|(e, r)| (e, r.start + bom..r.end + bom))
        .collect();
    let mut items = Vec::new();
    for (i, (event, range)) in events.iter().enumerate() {
        let r = range.clone();
        match event {
            Event::Code(_)
            | Event::InlineHtml(_)
            | Event::Html(_)
            | Event::InlineMath(_)
            | Event::DisplayMath(_)
            | Event::FootnoteReference(_) => items.push(Item::Ph(r)),
            Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::MetadataBlock(_)) => {
                items.push(Item::Ph(r))
            }
            Event::Start(Tag::Link {
                link_type: LinkType::Autolink | LinkType::Email,
                ..
            }) => items.push(Item::Ph(r)),
            Event::Start(tag @ (Tag::Emphasis | Tag::Strong | Tag::Strikethrough)) => {
                // The delimiter run: one or two `*`, `_` or `~` on each side, the same bytes at
                // both ends; otherwise (an unusual source range) the markup stays text.
                let n = match tag {
                    Tag::Emphasis => 1,
                    Tag::Strong => 2,
                    _ => text[r.clone()]
                        .chars()
                        .take_while(|&c| c == '~')
                        .count()
                        .min(2),
                };
                let well_formed = n > 0
                    && r.end >= r.start + 2 * n
                    && text.get(r.start..r.start + n).is_some_and(|d| {
                        d.chars().all(|c| matches!(c, '*' | '_' | '~'))
                            && text.get(r.end - n..r.end) == Some(d)
                    });
                if well_formed {
                    items.push(Item::Pc(r.clone(), r.start + n..r.end - n));
                }
            }
            Event::Start(tag @ (Tag::Link { .. } | Tag::Image { .. })) => {
                let open = if matches!(tag, Tag::Image { .. }) {
                    "!["
                } else {
                    "["
                };
                // The inner content ends where the last event inside the link ends.
                let inner_start = r.start + open.len();
                let inner_end = events[i + 1..]
                    .iter()
                    .take_while(|(_, er)| er.start >= r.start && er.end <= r.end && er != &r)
                    .map(|(_, er)| er.end)
                    .max()
                    .unwrap_or(inner_start)
                    .max(inner_start);
                let well_formed = text.get(r.start..inner_start) == Some(open)
                    && text
                        .get(inner_end..r.end)
                        .is_some_and(|t| t.starts_with(']'));
                items.push(if well_formed {
                    Item::Pc(r, inner_start..inner_end)
                } else {
                    Item::Ph(r)
                });
            }
            _ => {}
        }
    }
    let mut idx = 0;
    build(text, &items, &mut idx, 0..text.len())
}

fn build(text: &str, items: &[Item], idx: &mut usize, span: Range<usize>) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut pos = span.start;
    let push_text = |out: &mut Vec<Piece>, s: &str| {
        if !s.is_empty() {
            out.push(Piece::Text(s.to_string()));
        }
    };
    while let Some(item) = items.get(*idx) {
        let r = item.range();
        if r.start >= span.end {
            break;
        }
        *idx += 1;
        // Inside a placeholder already taken, or not nested in this span: leave it.
        if r.start < pos || r.end > span.end || r.start >= r.end {
            continue;
        }
        push_text(&mut out, &text[pos..r.start]);
        match item {
            Item::Ph(r) => out.push(Piece::Ph(text[r.clone()].to_string())),
            Item::Pc(r, inner) => {
                let inner_pieces = build(text, items, idx, inner.clone());
                out.push(Piece::Pc {
                    start: text[r.start..inner.start].to_string(),
                    end: text[inner.end..r.end].to_string(),
                    inner: inner_pieces,
                });
            }
        }
        pos = r.end;
    }
    push_text(&mut out, &text[pos..span.end]);
    out
}

/// The text of `pieces`, codes included.
pub fn join(pieces: &[Piece]) -> String {
    let mut s = String::new();
    join_into(pieces, &mut s);
    s
}

fn join_into(pieces: &[Piece], s: &mut String) {
    for p in pieces {
        match p {
            Piece::Text(t) | Piece::Ph(t) => s.push_str(t),
            Piece::Pc { start, end, inner } => {
                s.push_str(start);
                join_into(inner, s);
                s.push_str(end);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn codes_links_and_html_are_placeholders() {
        let s = "Call `read_file` on [the **docs**](https://x.org \"t\") <br> and ![a fig](f.png), see [^1] and $x^2$.\n\n```py\nprint(1)\n```\n";
        let p = split(s);
        assert_eq!(join(&p), s);
        assert!(p.contains(&Piece::Ph("`read_file`".into())));
        assert!(p.contains(&Piece::Ph("<br>".into())));
        assert!(p.contains(&Piece::Ph("$x^2$".into())));
        // The block's range ends after the closing fence; its line break stays text.
        assert!(
            p.contains(&Piece::Ph("```py\nprint(1)\n```".into())),
            "{p:?}"
        );
        let link = p
            .iter()
            .find_map(|x| match x {
                Piece::Pc { start, end, inner } if start == "[" => Some((end, inner)),
                _ => None,
            })
            .unwrap();
        assert_eq!(link.0, "](https://x.org \"t\")");
        assert_eq!(join(link.1), "the **docs**");
        assert!(p.iter().any(
            |x| matches!(x, Piece::Pc { start, end, .. } if start == "![" && end == "](f.png)")
        ));
    }

    #[test]
    fn emphasis_is_a_tag_pair_around_its_text() {
        let s = "Use **the `Agent`** and *one* ~~old~~ __way__ 2*3.\n";
        let p = split(s);
        assert_eq!(join(&p), s);
        let pairs: Vec<(&str, &str, String)> = p
            .iter()
            .filter_map(|x| match x {
                Piece::Pc { start, end, inner } => {
                    Some((start.as_str(), end.as_str(), join(inner)))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("**", "**", "the `Agent`".to_string()),
                ("*", "*", "one".to_string()),
                ("~~", "~~", "old".to_string()),
                ("__", "__", "way".to_string()),
            ]
        );
        // Code nested in emphasis stays a placeholder inside the pair.
        let Piece::Pc { inner, .. } = &p[1] else {
            panic!("{p:?}")
        };
        assert_eq!(inner[1], Piece::Ph("`Agent`".into()));
        assert_eq!(p.last(), Some(&Piece::Text(" 2*3.\n".into())));
    }

    #[test]
    fn nested_code_in_link_text() {
        let s = "See [`Agent` docs][ref].\n\n[ref]: https://x\n";
        let p = split(s);
        assert_eq!(join(&p), s);
        let Some(Piece::Pc { inner, end, .. }) = p.iter().find(|x| matches!(x, Piece::Pc { .. }))
        else {
            panic!("{p:?}")
        };
        assert_eq!(end, "][ref]");
        assert_eq!(inner[0], Piece::Ph("`Agent`".into()));
    }

    proptest! {
        #[test]
        fn split_is_lossless_on_any_string(s in "\\PC{0,200}") {
            prop_assert_eq!(join(&split(&s)), s);
        }

        #[test]
        fn split_is_lossless_on_markdown(parts in proptest::collection::vec(prop_oneof![
            Just("`code`"), Just("[link](http://a.b \"t\")"), Just("![img](x.png)"), Just("<span>"),
            Just("</span>"), Just("**bold**"), Just("$m$"), Just("[^1]"), Just("\n\n```\ncode\n```\n"),
            Just("<http://auto.link>"), Just("\n> quote [x]("), Just(") "), Just("\r\n"), Just("\u{feff}"),
            Just("# H {#id}\n"), Just("| a | b |\n|---|---|\n| `c` | [d](e) |\n"), Just("text "), Just("]"),
            Just("\u{1}"), Just("&amp; <"), Just("\n\n<div>\n\nx\n\n</div>\n"), Just("- [ ] task\n"),
        ], 0..24)) {
            let s: String = parts.concat();
            prop_assert_eq!(join(&split(&s)), s);
        }
    }
}
